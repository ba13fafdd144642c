"""A drop-in replacement for pytrec_eval: change the import, keep the code.

.. code-block:: python

    from rankwise.compat import pytrec_eval          # was: import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10", "P.5,10"})
    scores = evaluator.evaluate(run)                 # {qid: {"map": ..., "ndcg_cut_10": ...}}

What stays the same as pytrec_eval 0.5 (trec_eval 9 inside), checked against the real package
on generated data with ties, grades, unjudged documents and one-sided queries:

* measure names and their spellings (``P.10``, ``P_10``, ``P.5,10``, bare families ``P``,
  ``ndcg_cut``, ... expanding to trec_eval's default cutoffs, the nickname ``official``), and
  pytrec_eval's way of merging them (a bare family asked for together with explicit cutoffs
  gives only those cutoffs; ``set_F.b1,b2`` uses the first beta in string order);
* the output: one dict per query, queries in the order of the run's keys, only queries
  judged (with at least one judgment) and present in the run, including run queries with an
  empty ranking; keys in trec_eval's measure order, cutoffs ascending;
* the values: scores compared as float32 (conventions profile ``pytrec_eval``), trec_eval 9's
  recall-level rounding for ``iprec_at_recall``, per-query ``gm_map``/``gm_bpref`` as
  ``log(max(value, 1e-5))``, ``runid`` and ``relstring`` as 0.0, and NaN for
  ``iprec_at_recall`` levels asking for 0 relevant documents (and ``11pt_avg``) on an empty
  ranking, as trec_eval 9's 0/0 gives;
* ``relevance_level`` (trec_eval ``-l``) and ``judged_docs_only_flag`` (``-J``).

Every measure of pytrec_eval (:data:`supported_measures` holds the same names) and the
nicknames ``official``, ``set`` and ``all_trec`` are computed, with pytrec_eval's values.

What differs, on purpose: bad input raises :class:`rankwise.InputError` (a ``ValueError``)
naming the query and document instead of pytrec_eval's ``TypeError`` or bare
``AssertionError``; integer ids and float grades are accepted (as their strings and values),
booleans as scores or grades are not. ``relevance_level=0`` (refused by pytrec_eval) is
trec_eval's ``-l0``; a negative level is refused. A query judged only with negative grades,
which trec_eval cannot size its grade table for (pytrec_eval reports zeros or crashes), is a
query without relevant documents.
These measure names raise ``ValueError`` (a :class:`rankwise.MeasureError`):

* parameters pytrec_eval would pass to trec_eval malformed, which crash the interpreter there
  or give values that mean nothing: a cutoff below 1 (``P_0``), a recall level above 1, a
  ``set_F`` beta <= 0, ``ndcg`` with parameters (``ndcg.1``; its gain pairs ``ndcg.1=3,2=9``
  cannot reach trec_eval through pytrec_eval) and ``utility`` with coefficients (pytrec_eval
  sorts and de-duplicates them); the two last name the ``rankwise.evaluate`` spelling that
  computes them;
* names that are not pytrec_eval measures, and the nicknames ``prefs``, ``all_prefs`` and
  ``qrels_jg`` (preference and judgment-group measures, which read inputs rankwise does not
  take): ``"unsupported measure ..."``, naming the closest supported names;
* one string instead of a collection of names.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["RelevanceEvaluator", "compute_aggregated_measure", "parse_qrel", "parse_run",
           "supported_measures", "supported_nicknames"]

#: trec_eval 9's measures in the order pytrec_eval reports them, and their families here.
_TREC_ORDER: tuple[tuple[str, str], ...] = (
    ("runid", "const"), ("num_q", "NumQ"), ("num_ret", "NumRet"), ("num_rel", "NumRel"),
    ("num_rel_ret", "NumRelRet"), ("map", "AP"), ("gm_map", "AP"), ("Rprec", "Rprec"),
    ("bpref", "Bpref"), ("recip_rank", "RR"), ("iprec_at_recall", "IPrec"), ("P", "P"),
    ("relstring", "const"), ("recall", "R"), ("infAP", "infAP"), ("gm_bpref", "Bpref"),
    ("Rprec_mult", "RprecMult"), ("utility", "Utility"), ("11pt_avg", "11pt_avg"), ("binG", "binG"),
    ("G", "G"), ("ndcg", "nDCG"), ("ndcg_rel", "ndcg_rel"), ("Rndcg", "Rndcg"),
    ("ndcg_cut", "nDCG"),
    ("map_cut", "AP"), ("relative_P", "RelP"), ("success", "Success"), ("set_P", "SetP"),
    ("set_relative_P", "SetRelP"), ("set_recall", "SetR"), ("set_map", "SetAP"),
    ("set_F", "SetF"), ("num_nonrel_judged_ret", "NumNonRelJudgedRet"),
)
_FAMILY = dict(_TREC_ORDER)
_POSITION = {name: i for i, (name, _) in enumerate(_TREC_ORDER)}
_CUTOFF_DEFAULTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
#: families whose parameters are rank cutoffs, with trec_eval's defaults
_CUTOFFS: dict[str, tuple[float, ...]] = {
    "P": _CUTOFF_DEFAULTS, "recall": _CUTOFF_DEFAULTS, "ndcg_cut": _CUTOFF_DEFAULTS,
    "map_cut": _CUTOFF_DEFAULTS, "relative_P": _CUTOFF_DEFAULTS, "success": (1, 5, 10),
}
_LEVELS = tuple(i / 10 for i in range(11))  # iprec_at_recall's default recall levels
_MULTIPLES = tuple(i / 5 for i in range(1, 11))  # Rprec_mult's default multiples of R
_LOG_FLOOR = 1e-5  # trec_eval's floor before the log of gm_map and gm_bpref (MIN_GEO_MEAN)

#: pytrec_eval's measure names (families), every one of which rankwise computes.
supported_measures: frozenset[str] = frozenset(n for n, _ in _TREC_ORDER)

_NICKNAMES: dict[str, frozenset[str]] = {
    "official": frozenset({"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map",
                           "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P"}),
    "set": frozenset({"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility",
                      "set_P", "set_relative_P", "set_recall", "set_map", "set_F"}),
    "all_trec": frozenset(n for n, _ in _TREC_ORDER),
}
#: pytrec_eval's nicknames for sets of measures (its preference and judgment-group ones
#: read inputs rankwise does not take).
supported_nicknames: dict[str, frozenset[str]] = dict(_NICKNAMES)

# pytrec_eval's pattern for "family.params" / "family_params": numbers separated by commas
_PARAMS = r"{}[._]([0-9]+(?:\.[0-9]+)?(?:,[0-9]+(?:\.[0-9]+)?)*)"


@dataclass(frozen=True)
class _Column:
    """One output key: its measure (or constant) and how rankwise's value becomes pytrec_eval's."""

    key: str
    measure: Any  # a rankwise Measure, or None for runid / relstring (always 0.0)
    kind: str  # "plain", "log" (gm_*), "iprec", "11pt", "const", "count"
    levels: tuple[float, ...] = ()  # recall levels of an iprec or 11pt column


class RelevanceEvaluator:
    """Evaluate runs against judgments, as ``pytrec_eval.RelevanceEvaluator`` does.

    Parameters
    ----------
    query_relevance : mapping
        ``{query: {doc: grade}}``. Queries with no judgment are ignored (as pytrec_eval does).
    measures : iterable of str
        pytrec_eval measure names: ``"map"``, ``"P_10"``, ``"ndcg_cut.10,20"``, ``"P"`` (all
        default cutoffs), ``"official"``, ... (see :data:`supported_measures`).
    relevance_level : int
        Grades ``>= relevance_level`` are relevant (trec_eval ``-l``).
    judged_docs_only_flag : bool
        Drop unjudged documents from the rankings before evaluating (trec_eval ``-J``).

    Examples
    --------
    >>> from rankwise.compat import pytrec_eval
    >>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    >>> evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P_1", "ndcg"})
    >>> run = {"q1": {"d1": 0.5, "d2": 0.9}, "q2": {"d3": 1.0}, "q9": {"x": 1.0}}
    >>> scores = evaluator.evaluate(run)
    >>> scores["q1"]
    {'map': 0.5, 'P_1': 0.0, 'ndcg': 0.6309297535714575}
    >>> list(scores)  # judged queries of the run, in the run's order
    ['q1', 'q2']
    """

    def __init__(self, query_relevance: Mapping[str, Mapping[str, int]], measures: Iterable[str],
                 relevance_level: int = 1, judged_docs_only_flag: bool = False) -> None:
        from ..conventions import resolve
        from ..core.judgments import index_judgments
        from ._nested import nested_qrels

        self._columns = _plan(measures)
        self.relevance_level = relevance_level = _relevance_level(relevance_level)
        self.judged_docs_only_flag = _flag(judged_docs_only_flag)
        self._conventions = resolve("pytrec_eval", relevance_threshold=relevance_level,
                                    unjudged="remove" if judged_docs_only_flag else "nonrelevant")
        self._qrels = nested_qrels(query_relevance)
        self._judged = frozenset(self._qrels.query_ids())
        self._index = index_judgments(self._qrels) if len(self._qrels) else None

    @property
    def measures(self) -> list[str]:
        """The output keys, in the order every query's dict holds them."""
        return [c.key for c in self._columns]

    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
        """Per-query values ``{query: {measure: value}}`` of one run ``{query: {doc: score}}``.

        Queries are those of the run (in its order) that have judgments; a judged query with
        an empty ranking gets the values of an empty ranking.
        """
        from ..core.memory import large_arrays
        from ._nested import nested_run

        if not isinstance(scores, Mapping):
            from ..errors import InputError

            raise InputError("expected a run {query: {doc: score}}", source="run",
                             value=type(scores).__name__)
        # pytrec_eval wants string ids; others are accepted and looked up as their strings
        wanted = [q for q in scores if (q if type(q) is str else str(q)) in self._judged]
        if not wanted:
            return {}
        run = nested_run(scores)
        empty = len(wanted) > len(set(run.query_ids()) & self._judged)
        conventions = self._conventions.with_options(missing_queries="zero") if empty else \
            self._conventions
        with large_arrays():
            lists = self._rank(run, conventions)
            table = self._table(lists)
        where = {q: i for i, q in enumerate(lists.query_ids.tolist())}
        keys = self.measures
        rows = table.tolist()
        return {q: dict(zip(keys, rows[where[q if type(q) is str else str(q)]])) for q in wanted}

    def _rank(self, run, conventions):
        from ..core.judgments import index_judgments
        from ..core.ranked import rank
        from ..io.tables import Qrels, Run

        if len(run) and self._index is not None and set(run.query_ids()) & self._judged:
            return rank(self._index, run, conventions)
        # no judged query has a ranked document: evaluate them as empty rankings next to one
        # placeholder query (the engine needs one query in common), then drop it
        placeholder = "\x00placeholder"
        qrels = self._qrels
        judged = Qrels.from_columns(
            qrels.query_dict.take(_arrow_indices(qrels.query_code)).to_pylist() + [placeholder],
            qrels.docs.to_pylist() + ["d"], np.append(qrels.grade, 0.0), source="qrels dict")
        one = Run.from_columns([placeholder], ["d"], [1.0], source="run dict")
        lists = rank(index_judgments(judged), one, conventions)
        keep = lists.query_ids != placeholder
        return _subset_queries(lists, keep)

    def _table(self, lists) -> np.ndarray:
        """Queries × output keys, as pytrec_eval reports them."""
        table = np.empty((lists.num_queries, len(self._columns)))
        computed: dict[Any, np.ndarray] = {}
        for j, column in enumerate(self._columns):
            if column.kind == "const":
                table[:, j] = 0.0
                continue
            if column.measure not in computed:
                computed[column.measure] = column.measure.compute(lists)
            values = computed[column.measure]
            if column.kind == "log":
                values = np.log(np.maximum(values, _LOG_FLOOR))
            elif column.kind in ("iprec", "11pt"):
                values = empty_ranking_nan(lists, values, column.levels,
                                           lists.conventions.relevance_threshold)
            table[:, j] = values
        return table


def _relevance_level(value: Any) -> float:
    """An integer as pytrec_eval takes it (``int``, ``bool``, NumPy integers), or a finite
    float (compared with float grades), 0 or more; otherwise :class:`~rankwise.InputError`.
    pytrec_eval refuses 0 (trec_eval ``-l0``: every judged grade relevant), which is kept."""
    import operator

    from ..errors import InputError

    try:
        level: float = operator.index(value)
    except TypeError:
        if not (isinstance(value, (float, np.floating)) and np.isfinite(value)):
            raise InputError("relevance_level must be an integer (grades >= it are relevant)",
                             source="relevance_level", value=repr(value)) from None
        level = float(value)
    if level < 0:  # negative grades mean "unjudged": a negative level would count them
        raise InputError("relevance_level must be 0 or more (grades >= it are relevant; "
                         "negative grades are unjudged)", source="relevance_level",
                         value=repr(value))
    return level


def _flag(value: Any) -> bool:
    """``judged_docs_only_flag``: a bool or an integer, as pytrec_eval takes it (a string such
    as ``"False"`` would otherwise read as true)."""
    import operator

    from ..errors import InputError

    try:
        return bool(operator.index(value))
    except TypeError:
        raise InputError("judged_docs_only_flag must be True or False",
                         source="judged_docs_only_flag", value=repr(value)) from None


def empty_ranking_nan(lists, values: np.ndarray, levels: tuple[float, ...],
                      threshold: float) -> np.ndarray:
    """Interpolated precision as trec_eval 9 leaves it on an empty ranking: it starts from
    precision = num_rel_ret / num_ret = 0/0, so a value that reads a recall level asking for
    no relevant document, (long)(p·R + 0.9) = 0, is NaN (level 0 always, every level when
    R = 0): IPrec at its level, 11pt_avg when any of its levels does.
    """
    empty = lists.num_retrieved == 0
    if not empty.any():
        return values
    values = values.copy()
    relevant = lists.num_relevant(threshold)
    asks_none = np.zeros(lists.num_queries, dtype=bool)
    for level in levels:
        asks_none |= np.floor(level * relevant + 0.9) == 0
    values[empty & asks_none] = np.nan
    return values


def _subset_queries(lists, keep: np.ndarray):
    """The RankedLists of the kept queries only (used when every kept query is empty)."""
    from dataclasses import replace

    lengths = np.diff(lists.offsets)
    rows = np.repeat(keep, lengths)
    offsets = np.zeros(int(keep.sum()) + 1, dtype=np.int64)
    np.cumsum(lengths[keep], out=offsets[1:])
    return replace(lists, query_ids=lists.query_ids[keep], offsets=offsets,
                   grade=lists.grade[rows], score=lists.score[rows], run_row=lists.run_row[rows],
                   level_counts=lists.level_counts[keep])


def _arrow_indices(values: np.ndarray):
    from ..core.arrow import indices

    return indices(values)


# ------------------------------------------------------------------------------ measure names


def _plan(measures: Iterable[str]) -> list[_Column]:
    """pytrec_eval's measure strings -> the output columns, in pytrec_eval's order."""
    if isinstance(measures, (str, bytes)):
        raise _error(f"measures must be a collection of names such as {{{measures!r}}}, "
                     "not one string", measures)
    families: dict[str, list[str]] = {}
    for name in _expand_nicknames(measures):
        if name in _FAMILY:
            families.setdefault(name, [])
            continue
        base, params = _split(name)
        families.setdefault(base, []).extend(params)
    columns: list[_Column] = []
    for base in sorted(families, key=_POSITION.__getitem__):
        columns += _family_columns(base, families[base])
    return columns


def _expand_nicknames(measures: Iterable[str]) -> list[str]:
    out: list[str] = []
    for name in measures:
        if not isinstance(name, str):
            raise _error(f"a measure name must be a string, got {type(name).__name__}", name)
        if name in _NICKNAMES:
            out += sorted(_NICKNAMES[name])
        else:
            out.append(name)
    return out


def _split(name: str) -> tuple[str, list[str]]:
    """``"P_5"`` -> ("P", ["5"]); pytrec_eval matches the family name followed by "." or "_"
    and numbers at the start of the string (anything after them is ignored)."""
    for base, _ in _TREC_ORDER:
        match = re.match(_PARAMS.format(re.escape(base)), name)
        if match:
            return base, match.group(1).split(",")
    raise _unsupported(name)


def _family_columns(base: str, params: list[str]) -> list[_Column]:
    from ..measures.registry import make_measure

    family = _FAMILY[base]
    if base in _CUTOFFS:
        cutoffs = sorted({_cutoff(p, base) for p in params}) if params else _CUTOFFS[base]
        return [_Column(f"{base}_{k}", make_measure(family, k), "plain") for k in cutoffs]
    if base == "iprec_at_recall":
        levels = sorted({_level(p, base) for p in params}) if params else _LEVELS
        return [_Column(f"{base}_{p:.2f}", make_measure(family, p), "iprec", (p,)) for p in levels]
    if base == "Rprec_mult":
        multiples = sorted({float(p) for p in params}) if params else _MULTIPLES
        return [_Column(f"{base}_{m:.2f}", make_measure(family, m), "plain") for m in multiples]
    if base == "set_F":
        beta = float(min(params)) if params else 1.0  # the first in string order, as trec_eval
        if beta <= 0:
            raise _error(f"set_F needs a positive beta, got {beta:g}")
        return [_Column(base, make_measure(family, None, {"beta": beta}), "plain")]
    if base == "11pt_avg":  # pytrec_eval sorts and de-duplicates the levels, as the cutoffs
        levels = tuple(sorted({_level(p, base) for p in params})) if params else _LEVELS
        return [_Column(base, make_measure(family, None, {"levels": levels}), "11pt", levels)]
    if base == "utility" and params:
        raise _error("utility's four coefficients reach trec_eval sorted and de-duplicated by "
                     "pytrec_eval (utility.2,1,0,0 as 0,1,2: an error, and 0 for every query); "
                     "use rankwise.evaluate(qrels, run, ['utility.2,-1,0,0'])", base)
    if base == "ndcg" and params:
        raise _error("ndcg takes gain pairs (ndcg.1=3,2=9) that pytrec_eval cannot pass to "
                     "trec_eval; use rankwise.evaluate(qrels, run, ['ndcg.1=3,2=9'])", base)
    if family == "const":
        return [_Column(base, None, "const")]
    kind = "log" if base in ("gm_map", "gm_bpref") else "plain"
    return [_Column(base, make_measure(family), kind)]  # other parameters: ignored by trec_eval


def _cutoff(text: str, base: str) -> int:
    value = int(float(text)) if "." in text else int(text)  # trec_eval reads it with atol
    if value < 1:
        raise _error(f"{base} needs cutoffs of at least 1, got {text}")
    return value


def _level(text: str, base: str) -> float:
    value = float(text)
    if value > 1.0:
        raise _error(f"{base} needs recall levels between 0 and 1, got {text}")
    return value


def _unsupported(name: str) -> ValueError:
    pool = sorted(supported_measures) + sorted(supported_nicknames)
    stem = re.split(r"[._@(]", name, maxsplit=1)[0]
    close = difflib.get_close_matches(name, pool, n=4, cutoff=0.5) or \
        difflib.get_close_matches(stem, pool, n=4, cutoff=0.5)
    hint = f"; closest supported: {', '.join(close)}" if close else \
        "; rankwise.compat.pytrec_eval.supported_measures lists them"
    return _error(f"unsupported measure {name} (not a pytrec_eval measure){hint}")


def _error(message: str, value: Any = None) -> ValueError:
    """A :class:`~rankwise.MeasureError` (a ``ValueError``, as pytrec_eval raises)."""
    from ..errors import MeasureError

    return MeasureError(message, value=None if value is None else str(value))


# ------------------------------------------------------------------------------ files and means


def parse_run(f_run: Iterable[str]) -> dict[str, dict[str, float]]:
    """``{query: {doc: score}}`` from the lines of a TREC run (``qid Q0 doc rank score tag``).

    A document listed twice for one query raises :class:`~rankwise.InputError` naming both lines.
    As pytrec_eval's, the result is a ``collections.defaultdict(dict)``.

    >>> run = parse_run(["q1 Q0 d1 1 2.5 bm25", "q1 Q0 d2 2 1.5 bm25"])
    >>> dict(run), run["q9"]
    ({'q1': {'d1': 2.5, 'd2': 1.5}}, {})
    """
    return _parse_lines(f_run, 6, "run", lambda fields: float(fields[4]))


def parse_qrel(f_qrel: Iterable[str]) -> dict[str, dict[str, int]]:
    """``{query: {doc: grade}}`` from the lines of a TREC qrels file (``qid 0 doc grade``).

    >>> dict(parse_qrel(["q1 0 d1 2", "q1 0 d2 0"]))
    {'q1': {'d1': 2, 'd2': 0}}
    """
    return _parse_lines(f_qrel, 4, "qrels", lambda fields: int(fields[3]))


def _parse_lines(lines: Iterable[str], width: int, what: str,
                 value: Callable[[list[str]], Any]) -> dict[str, dict[str, Any]]:
    from ..errors import InputError

    source = getattr(lines, "name", f"{what} lines")
    # a defaultdict, as pytrec_eval returns: reading a query absent from the file gives {}
    out: defaultdict[str, dict[str, Any]] = defaultdict(dict)
    first_line: dict[tuple[str, str], int] = {}
    expected = "'qid Q0 docid rank score tag'" if what == "run" else "'qid iter docid grade'"
    for number, line in enumerate(lines, start=1):
        if isinstance(line, bytes):
            line = line.decode()
        fields = line.split()
        if not fields:
            continue
        if len(fields) != width:
            raise InputError(f"expected {width} fields {expected}, got {len(fields)}",
                             source=source, line=number, value=line.strip())
        try:
            parsed = value(fields)
        except ValueError:
            kind = "score" if what == "run" else "integer grade"
            raise InputError(f"expected a number as the {kind}", source=source, line=number,
                             value=line.strip()) from None
        qid, doc = fields[0], fields[2]
        docs = out[qid]
        if doc in docs:
            raise InputError(f"document {doc!r} appears twice for query {qid!r} (first at line "
                             f"{first_line[(qid, doc)]})", source=source, line=number, value=doc)
        first_line[(qid, doc)] = number
        docs[doc] = parsed
    return out


def compute_aggregated_measure(measure: str, values: Iterable[float]) -> float:
    """Aggregate per-query values as pytrec_eval does: sums for ``num_*`` measures,
    ``exp(mean)`` for the logs of ``gm_*``, the mean otherwise.

    >>> compute_aggregated_measure("map", [0.5, 1.0]), compute_aggregated_measure("num_ret", [3, 4])
    (0.75, 7.0)
    """
    values = np.asarray(list(values), dtype=np.float64)
    if measure.startswith("num_"):
        return float(values.sum())
    if measure.startswith("gm_"):
        return float(np.exp(values.sum() / len(values)))
    return float(values.mean())
