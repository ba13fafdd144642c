"""An ir_measures provider that computes on rankwise (needs ``ir-measures``).

Importing this module registers the provider in ir_measures' own provider registry, under
the name ``rankwise``:

.. code-block:: python

    import ir_measures
    from ir_measures import AP, nDCG, RR
    import rankwise.compat.ir_measures                 # registers the provider

    provider = ir_measures.providers.registry["rankwise"]
    provider.calc_aggregate([nDCG@10, AP, RR@10], qrels, run)
    for metric in provider.iter_calc([nDCG@10], qrels, run): ...
    evaluator = provider.evaluator([nDCG@10, AP], qrels)   # judgments indexed once
    evaluator.calc_aggregate(run_a), evaluator.calc_aggregate(run_b)

``ir_measures.calc_aggregate`` and PyTerrier's ``pt.Experiment`` go through ir_measures'
fixed default pipeline; measures wrapped by :func:`on_rankwise` carry their own
implementation, which that pipeline honours (its ``runtime`` provider comes first), so

.. code-block:: python

    pt.Experiment([bm25, dense], topics, qrels, eval_metrics=on_rankwise(nDCG@10, AP, "RR@10"))

runs on rankwise, with the same column names (``nDCG@10``, ``AP``, ``RR@10``);
``on_rankwise(..., provider=RankwiseProvider(conventions="trec_eval"))`` picks the conventions.

By default the provider reproduces ir_measures' default pipeline measure by measure: the
measures that pipeline sends to pytrec_eval get the ``pytrec_eval`` conventions profile
(float32 scores, trec_eval 9's recall-level rounding, NaN interpolated precision on an empty
ranking), ``RR@k`` gets msmarco's (float64 scores, ties by doc id *ascending*),
``nDCG(dcg='exp-log2')@k`` and ``ERR@k`` get gdeval's (exponential gain, ERR with grades up
to 4), ``Judged@k`` ir_measures' own (float64 scores, ties by doc id ascending, the judged
share of the documents ranked within k). Two differences remain for Judged: a document
judged with a negative grade counts as judged there and as unjudged here (trec_eval's
``unj``), and a judged query with an empty ranking gets 0 here where ir_measures divides by
zero. Judged queries absent from the run count 0, as in ir_measures. Pass
``RankwiseProvider(conventions=...)`` (a :class:`~rankwise.Conventions` or a profile name) to
compute every measure under one set of conventions instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import ir_measures
from ir_measures import Metric, measures, providers
from ir_measures.providers.base import NOT_PROVIDED, Choices
from ir_measures.providers.base import Any as AnyValue

__all__ = ["RankwiseProvider", "on_rankwise", "provider"]

#: the conventions of the providers ir_measures' default pipeline sends each measure to
_PEER_CONVENTIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "pytrec_eval": ("pytrec_eval", {}),
    "msmarco": ("trec_eval", {"ties": "docid_asc", "duplicates": "last"}),
    "gdeval": ("trec_eval", {"duplicates": "last"}),
    # ir_measures' own Judged: float64 scores, ties by doc id ascending, the share of the
    # documents ranked within k (fewer in a short list); a document listed twice (DataFrame,
    # tuples) keeps its last score, as ir_measures' conversion to dicts keeps it
    "judged": ("trec_eval", {"ties": "docid_asc", "short_lists": "length",
                             "duplicates": "last"}),
}
_GDEVAL_MAX_GRADE = 4  # gdeval.pl's MAX_JUDGMENT: ERR's stopping probability is (2^g − 1) / 2^4


@dataclass(frozen=True)
class _Plan:
    """One ir_measures measure as rankwise computes it."""

    measure: Any  # the ir_measures measure
    rankwise: Any  # the rankwise Measure
    peer: str  # the provider ir_measures' default pipeline would use
    judged_only: bool
    iprec_level: float | None = None  # interpolated precision (NaN rule on empty rankings)


class RankwiseProvider(providers.Provider):
    """rankwise: trec_eval's measures, vectorised, with explicit conventions.

    Parameters
    ----------
    conventions : Conventions, profile name or None
        ``None`` (default): each measure as ir_measures' default pipeline computes it (see
        the module docstring). Otherwise every measure under these conventions; a measure's
        ``judged_only=True`` still removes unjudged documents, its ``rel`` still sets the
        relevance threshold.
    """

    NAME = "rankwise"
    SUPPORTED_MEASURES = [
        measures._P(cutoff=AnyValue(required=True), rel=AnyValue(), judged_only=AnyValue()),
        measures._R(cutoff=AnyValue(required=True), rel=AnyValue(), judged_only=AnyValue()),
        measures._RR(cutoff=AnyValue(), rel=AnyValue(), judged_only=AnyValue()),
        measures._Rprec(rel=AnyValue(), judged_only=AnyValue()),
        measures._AP(cutoff=AnyValue(), rel=AnyValue(), judged_only=AnyValue()),
        measures._nDCG(cutoff=AnyValue(), dcg=Choices("log2", "exp-log2"), gains=AnyValue(),
                       judged_only=AnyValue()),
        measures._ERR(cutoff=AnyValue()),
        measures._Bpref(rel=AnyValue()),
        measures._infAP(rel=AnyValue()),
        measures._NumRet(rel=AnyValue()),
        measures._NumQ(),
        measures._NumRel(rel=AnyValue()),
        measures._SetAP(rel=AnyValue(), judged_only=AnyValue()),
        measures._SetF(rel=AnyValue(), beta=AnyValue(), judged_only=AnyValue()),
        measures._SetP(rel=AnyValue(), relative=AnyValue(), judged_only=AnyValue()),
        measures._SetR(rel=AnyValue()),
        measures._Success(cutoff=AnyValue(required=True), rel=AnyValue(), judged_only=AnyValue()),
        measures._IPrec(recall=AnyValue(required=True), rel=AnyValue(), judged_only=AnyValue()),
        measures._Judged(cutoff=AnyValue()),
    ]

    def __init__(self, conventions: Any = None) -> None:
        super().__init__()
        self.conventions = conventions

    def supports(self, measure) -> bool:
        if not super().supports(measure):
            return False
        # exponential gain with a gain map is neither rankwise's nor any ir_measures provider's
        return not (measure.NAME == "nDCG" and measure["dcg"] == "exp-log2"
                    and measure["gains"] is not NOT_PROVIDED)

    def _evaluator(self, measures_: Iterable, qrels) -> RankwiseEvaluator:
        plans = [_plan(m) for m in measures_]
        unsupported = [p.measure for p in plans if p.rankwise is None]
        if unsupported:
            raise ValueError(f"unsupported measures {unsupported} (provider rankwise supports "
                             f"{', '.join(sorted({m.NAME for m in self.SUPPORTED_MEASURES}))})")
        return RankwiseEvaluator(plans, qrels, self.conventions)

    def install_instructions(self) -> str:
        return "pip install rankwise"


class RankwiseEvaluator(providers.Evaluator):
    """Judgments indexed once; each run is ranked once per set of conventions its measures
    need, and every measure of that set is read from the same ranked lists."""

    def __init__(self, plans: list[_Plan], qrels, conventions: Any) -> None:
        from ..core.judgments import index_judgments

        judged, qids = _qrels(qrels)
        super().__init__([p.measure for p in plans], qids)
        self._judged = judged
        self._index = index_judgments(judged) if len(judged) else None
        self._as_default_pipeline = conventions is None
        self._groups: dict[Any, list[_Plan]] = {}
        for plan in plans:
            self._groups.setdefault(_conventions(plan, conventions), []).append(plan)

    def _iter_calc(self, run) -> Iterator[Metric]:
        for qid, plan, value in self._values(run):
            yield Metric(query_id=qid, measure=plan.measure, value=value)

    def values(self, run) -> dict[Any, dict[str, float]]:
        """``{ir_measures measure: {query: value}}`` for the judged queries in ``run``
        (judged queries absent from it are left to the caller, as ir_measures does)."""
        out: dict[Any, dict[str, float]] = {}
        for qid, plan, value in self._values(run):
            out.setdefault(plan.measure, {})[qid] = value
        return out

    def _values(self, run) -> Iterator[tuple[str, _Plan, float]]:
        from ..core.memory import large_arrays
        from ..core.ranked import rank
        from .pytrec_eval import empty_ranking_nan

        ranked = _run(run)
        if self._index is None or not len(ranked) or \
                not set(ranked.query_ids()) & set(self._judged.query_ids()):
            return  # nothing to evaluate: every judged query gets ir_measures' default
        with large_arrays():
            for conventions, plans in self._groups.items():
                lists = rank(self._index, ranked, conventions)
                qids = lists.query_ids.tolist()
                for plan in plans:
                    values = plan.rankwise.compute(lists)
                    if self._as_default_pipeline and plan.peer == "pytrec_eval" and \
                            plan.rankwise.family == "IPrec":  # trec_eval 9's 0/0, as pytrec_eval
                        values = empty_ranking_nan(lists, values, (plan.iprec_level,),
                                                   dict(plan.rankwise.params)["rel"])
                    for qid, value in zip(qids, values.tolist()):
                        yield qid, plan, value


# ------------------------------------------------------------------------------ translation


def _plan(measure) -> _Plan:
    """How rankwise computes one ir_measures measure (``rankwise=None``: it does not)."""
    from ..measures.registry import make_measure

    name = measure.NAME
    params = measure.params

    def get(key: str, default: Any = None) -> Any:
        value = measure[key] if key in measure.SUPPORTED_PARAMS else NOT_PROVIDED
        return default if value is NOT_PROVIDED else value

    cutoff = get("cutoff")
    rel = get("rel", 1)
    judged_only = bool(get("judged_only", False))
    peer = "pytrec_eval"
    level = None
    simple = {"P": "P", "R": "R", "Rprec": "Rprec", "AP": "AP", "Bpref": "Bpref",
              "SetAP": "SetAP", "SetR": "SetR", "Success": "Success", "infAP": "infAP"}
    if name in simple:
        built = make_measure(simple[name], cutoff, {"rel": rel})
    elif name == "RR":
        built = make_measure("RR", cutoff, {"rel": rel})
        peer = "msmarco" if cutoff is not None and not judged_only else "pytrec_eval"
    elif name == "nDCG":
        gains = get("gains")
        if get("dcg", "log2") == "exp-log2":
            built = make_measure("nDCG", cutoff, {"gain": "exp"})
            peer = "gdeval"
        else:
            built = make_measure("nDCG", cutoff, {"gain": dict(gains)} if gains else {})
    elif name == "ERR":
        built = make_measure("ERR", cutoff, {"max_grade": _GDEVAL_MAX_GRADE})
        peer = "gdeval"
    elif name == "NumRet":
        built = make_measure("NumRet") if "rel" not in params else \
            make_measure("NumRelRet", None, {"rel": rel})
    elif name == "NumQ":
        built = make_measure("NumQ")
    elif name == "NumRel":
        built = make_measure("NumRel", None, {"rel": rel})
    elif name == "SetF":
        built = make_measure("SetF", None, {"rel": rel, "beta": float(get("beta", 1.0))})
    elif name == "SetP":
        built = make_measure("SetRelP" if get("relative", False) else "SetP", None, {"rel": rel})
    elif name == "Judged":
        built = make_measure("Judged", cutoff)
        peer = "judged"
    elif name == "IPrec":
        level = float(get("recall"))
        built = make_measure("IPrec", level, {"rel": rel})
    else:
        built = None
    return _Plan(measure, built, peer, judged_only, level)


def _conventions(plan: _Plan, conventions: Any):
    from ..conventions import resolve

    if conventions is None:
        profile, overrides = _PEER_CONVENTIONS[plan.peer]
        base = resolve(profile, **overrides)
    else:
        base = resolve(conventions)
    # judged queries absent from the run: ir_measures' Evaluator gives them the default (0)
    return base.with_options(missing_queries="ignore",
                             unjudged="remove" if plan.judged_only else "nonrelevant")


# ------------------------------------------------------------------------------ data


def _qrels(qrels):
    """(rankwise Qrels, the set of judged query ids as ir_measures counts them)."""
    from ..io import to_qrels
    from ..io.tables import Qrels
    from ._nested import nested_qrels

    # one converter: predicting the type of an iterator peeks at its first item, and the
    # converter keeps that item (a second converter on the same iterator would lose it)
    converter = ir_measures.util.QrelsConverter(qrels)
    kind, error = converter.predict_type()
    if kind == "dict_of_dict":
        return nested_qrels(qrels), set(qrels.keys())
    if kind == "pd_dataframe":
        judged = to_qrels(qrels, query="query_id", doc="doc_id", relevance="relevance")
        return judged, set(judged.query_ids())
    if kind == "namedtuple_iter":
        rows = list(converter.as_namedtuple_iter())
        judged = Qrels.from_columns([r.query_id for r in rows], [r.doc_id for r in rows],
                                    [r.relevance for r in rows], source="qrels tuples")
        return judged, set(judged.query_ids())
    raise ValueError(f"unknown qrels format: {error}")


def _run(run):
    """A rankwise Run from any run ir_measures accepts (dict, DataFrame, ScoredDoc tuples)."""
    from ..io import to_run
    from ..io.tables import Run
    from ._nested import nested_run

    converter = ir_measures.util.RunConverter(run)
    kind, error = converter.predict_type()
    if kind == "dict_of_dict":
        return nested_run(run)
    if kind == "pd_dataframe":
        return to_run(run, query="query_id", doc="doc_id", score="score")
    if kind == "namedtuple_iter":
        rows = list(converter.as_namedtuple_iter())
        return Run.from_columns([r.query_id for r in rows], [r.doc_id for r in rows],
                                [r.score for r in rows], source="run tuples")
    raise ValueError(f"unknown run format: {error}")


# ------------------------------------------------------------------------------ PyTerrier


def on_rankwise(*measures_: Any, provider: RankwiseProvider | None = None) -> list:
    """The given measures, computed by rankwise wherever ir_measures is asked for them.

    Each returned measure equals the one given (same name, same parameters, same column in
    PyTerrier's tables) and carries its own implementation, which ir_measures' default
    pipeline uses before any other provider: ``ir_measures.calc_aggregate``,
    ``ir_measures.iter_calc`` and ``pt.Experiment`` then compute it with the rankwise provider.
    Measures wrapped in one call share one ranking of each run.

    Parameters
    ----------
    *measures_ : ir_measures measures or their names (``"nDCG@10"``, ``"AP(rel=2)"``)
    provider : RankwiseProvider, optional
        The provider computing them (default: the registered one), e.g.
        ``RankwiseProvider(conventions="trec_eval")``.

    Examples
    --------
    >>> import ir_measures
    >>> ndcg, ap = on_rankwise("nDCG@10", ir_measures.AP)
    >>> str(ndcg), ndcg == ir_measures.nDCG@10
    ('nDCG@10', True)
    >>> qrels = {"q1": {"a": 1, "b": 0}}
    >>> run = {"q1": {"a": 0.2, "b": 0.9}}
    >>> means = ir_measures.calc_aggregate([ndcg, ap], qrels, run)
    >>> means[ir_measures.nDCG@10], means[ir_measures.AP]
    (0.6309297535714575, 0.5)
    """
    parsed = [ir_measures.parse_measure(m) if isinstance(m, str) else m for m in measures_]
    shared = _Shared(provider or _registered(), parsed)
    return [_routed(m, shared) for m in parsed]


class _Shared:
    """The rankwise evaluation behind a group of routed measures: one evaluator per qrels
    object, one set of values per (qrels, run) pair, kept for the last pair only."""

    def __init__(self, computing: RankwiseProvider, originals: list) -> None:
        self.provider = computing
        self.originals = originals
        self._qrels = self._evaluator = None
        self._key: tuple = ()
        self._values: dict = {}

    def values(self, measure, qrels, run) -> dict[str, float]:
        if self._qrels is not qrels:
            self._qrels = qrels
            self._evaluator = self.provider.evaluator(self.originals, qrels)
            self._key = ()
        if len(self._key) != 2 or self._key[0] is not qrels or self._key[1] is not run:
            self._key = (qrels, run)
            self._values = self._evaluator.values(run)
        return self._values.get(measure, {})


def _routed(measure, shared: _Shared):
    """A copy of ``measure`` whose ``runtime_impl`` computes it with rankwise."""
    original = measure

    class Routed(type(measure)):
        def runtime_impl(self, qrels, run):
            values = shared.values(original, qrels, run)
            for qid, value in values.items():
                yield Metric(query_id=qid, measure=self, value=value)

    Routed.__name__ = Routed.__qualname__ = f"{type(measure).__name__}OnRankwise"
    routed = Routed(**measure.params)
    routed.__name__ = measure.__name__
    if not shared.provider.supports(routed):
        raise ValueError(f"the rankwise provider does not support {measure}")
    return routed


def _registered() -> RankwiseProvider:
    return providers.registry["rankwise"]


#: The registered provider (``ir_measures.providers.registry["rankwise"]``).
provider: RankwiseProvider = providers.register(RankwiseProvider())
