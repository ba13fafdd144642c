"""Conventions: every choice that changes a number, decided in one place.

A frozen :class:`Conventions` value travels with every evaluation and is written into every
result. The default reproduces trec_eval 10 (``trec_eval -q``). Named profiles
(:data:`PROFILES`) bundle the choices of a peer library; :func:`resolve` turns a profile name,
a ``Conventions`` or ``None`` plus keyword overrides into the value an evaluation uses.
docs/conventions.md describes every field's effect on every measure.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

#: The largest depth or cutoff taken (ranks are counted in 32 bits and beyond).
LONGEST_LIST = (1 << 31) - 1

#: Every field with a fixed set of choices, the choices in order (the first is trec_eval's).
CHOICES: dict[str, tuple[str, ...]] = {
    # documents with equal scores within one query
    "ties": ("docid_desc", "docid_asc", "input_order", "expected", "optimistic", "pessimistic"),
    # queries judged but absent from the run
    "missing_queries": ("ignore", "zero"),
    # queries in the run without any judgment
    "run_only_queries": ("ignore", "zero"),
    # retrieved documents without a judgment
    "unjudged": ("nonrelevant", "remove"),
    # a (query, doc) pair more than once in a run
    "duplicates": ("error", "first", "last", "max"),
    # denominator of AP (and AP@K)
    "ap_denominator": ("relevant", "min_relevant_cutoff", "cutoff", "relevant_retrieved"),
    # P@K on a list shorter than K
    "short_lists": ("cutoff", "length"),
    # denominator of R@K
    "recall_denominator": ("relevant", "min_relevant_cutoff"),
    # value of a binary measure on a query without relevant judgments
    "no_relevant": ("zero", "nan", "skip", "one"),
    # where the relevant documents and the ideal ranking come from
    "ideal": ("judgments", "retrieved"),
    # value of nDCG when the ideal DCG is 0
    "idcg_zero": ("zero", "nan", "skip", "one"),
    # precision the run's scores are compared in
    "score_precision": ("float64", "float32"),
    # documents scored <= 0
    "nonpositive_scores": ("ranked", "nonrelevant"),
    # how a recall level p becomes a number of relevant documents (interpolated precision)
    "recall_levels": ("nearest", "trec_eval9"),
    # DCG discount of rank r: 1/log_b(r + 1), or Järvelin & Kekäläinen's 1/max(1, log_b(r))
    "discount": ("rank_plus_one", "jarvelin"),
}
GAIN_NAMES = ("linear", "exponential")


@dataclass(frozen=True)
class Conventions:
    """The evaluation conventions (defaults: trec_eval 10).

    Attributes
    ----------
    gain
        Gain of a grade in DCG-family measures: ``"linear"`` (the grade; trec_eval, scikit-learn),
        ``"exponential"`` (2^grade − 1; Burges et al. 2005, LightGBM) or a map ``{grade: gain}``
        (unmapped grades keep gain = grade). A measure's own ``gain=`` parameter wins.
    discount_base
        DCG discount 1 / log_base(rank + 1); nDCG does not depend on it, DCG does.
    relevance_threshold
        A judged grade ``>= relevance_threshold`` counts as relevant for binary measures
        (trec_eval ``-l``). A measure's own ``rel=`` parameter wins.
    ties
        Documents with equal scores in one query: ordered by doc id ``"docid_desc"`` (trec_eval,
        byte strings) or ``"docid_asc"``, kept in ``"input_order"``, or not ordered at all:
        ``"expected"`` gives each measure's exact expected value over all orderings of the tied
        documents (McSherry & Najork, ECIR 2008), ``"optimistic"`` / ``"pessimistic"`` its value
        with the better / worse judged documents first within each tie (by grade; by gain
        for a measure with a gain map).
        With ``max_depth``, the list is cut first (in trec_eval's order for ``"expected"``):
        a tie group straddling the depth keeps the documents trec_eval keeps.
    missing_queries
        Queries in the judgments but not in the run: ``"ignore"`` (trec_eval) or ``"zero"``
        (empty rankings, counted in the mean: trec_eval ``-c``).
    run_only_queries
        Queries in the run without any judgment: ``"ignore"`` (trec_eval, every peer but
        LensKit) or ``"zero"`` (evaluated as queries without relevant documents, so the
        ``no_relevant`` policy gives their values: LensKit's summary).
    max_depth
        Only the first ``max_depth`` documents of each ranking count (trec_eval ``-M``).
    unjudged
        Retrieved documents without a judgment (or with a negative grade): ``"nonrelevant"``
        (trec_eval) or ``"remove"`` (dropped, the ranking condensed: trec_eval ``-J``).
    duplicates
        A (query, doc) pair more than once in a run: ``"error"`` (trec_eval), or keep the
        ``"first"``, the ``"last"`` (pytrec_eval and ranx with dicts) or the ``"max"``-scored row.
    ap_denominator
        AP = Σ precision at relevant ranks / D with D = ``"relevant"`` (R, trec_eval),
        ``"min_relevant_cutoff"`` (min(R, K): RecBole, Spark MAP@K), ``"cutoff"`` (K) or
        ``"relevant_retrieved"`` (relevant documents in the list: scikit-learn, torchmetrics).
    short_lists
        P@K on a list shorter than K: divide by ``"cutoff"`` K (trec_eval) or by the list
        ``"length"`` (torchmetrics ``adaptive_k``).
    recall_denominator
        R@K = hits / ``"relevant"`` R (trec_eval) or / ``"min_relevant_cutoff"`` min(R, K).
    no_relevant
        Binary measures on a query without relevant judgments: ``"zero"`` (trec_eval),
        ``"nan"`` (undefined; the mean is NaN), ``"skip"`` (left out of the mean, counted) or
        ``"one"`` (torchmetrics' ``empty_target_action="pos"``).
    ideal
        Relevant documents (R) and the ideal ranking come from all ``"judgments"`` (trec_eval) or
        only from the ``"retrieved"`` list (scikit-learn, torchmetrics).
    idcg_zero
        nDCG when the ideal DCG is 0: ``"zero"`` (trec_eval), ``"nan"``, ``"skip"`` or ``"one"``
        (LightGBM, XGBoost).
    score_precision
        Scores are compared as ``"float64"`` or rounded to ``"float32"`` first (pytrec_eval,
        torchmetrics), which can create ties.
    nonpositive_scores
        Documents scored <= 0 are ``"ranked"`` as usual, or count as ``"nonrelevant"``
        (torchmetrics' P, R, AP, RR, Success).
    recall_levels
        Interpolated precision at recall p looks at the ⌊p·R⌉-th relevant document
        (``"nearest"``, trec_eval 10) or the (long)(p·R + 0.9)-th (``"trec_eval9"``:
        pytrec_eval, ranx).
    discount
        DCG discount of rank r: ``"rank_plus_one"`` 1/log_b(r + 1) (trec_eval, Burges et al.)
        or ``"jarvelin"`` 1/max(1, log_b(r)) (Järvelin & Kekäläinen 2002: ranks up to b are
        not discounted; LensKit's default nDCG).
    family_overrides
        Per-measure-family exceptions, ``((family, field, value), ...)``: a peer that averages
        ties in nDCG but not in P@K is ``ties="input_order"`` plus ``(("nDCG", "ties",
        "expected"),)``. Only the fields measures read may be overridden (not the ranking
        itself: ties may change to expected/optimistic/pessimistic only). Each value is
        checked as the field's own; a family name that names no family is refused (by
        :func:`resolve`).
    """

    gain: Any = "linear"
    discount_base: float = 2.0
    relevance_threshold: float = 1
    ties: str = "docid_desc"
    missing_queries: str = "ignore"
    run_only_queries: str = "ignore"
    max_depth: int | None = None
    unjudged: str = "nonrelevant"
    duplicates: str = "error"
    ap_denominator: str = "relevant"
    short_lists: str = "cutoff"
    recall_denominator: str = "relevant"
    no_relevant: str = "zero"
    ideal: str = "judgments"
    idcg_zero: str = "zero"
    score_precision: str = "float64"
    nonpositive_scores: str = "ranked"
    recall_levels: str = "nearest"
    discount: str = "rank_plus_one"
    family_overrides: tuple = field(default=())

    def __post_init__(self) -> None:
        for name, choices in CHOICES.items():
            _check_choice(name, getattr(self, name), choices)
        object.__setattr__(self, "gain", _normalise_gain(self.gain))
        for name in ("max_depth", "relevance_threshold", "discount_base"):
            object.__setattr__(self, name, _plain_number(getattr(self, name)))
        if self.max_depth is not None and (isinstance(self.max_depth, bool)
                                           or not isinstance(self.max_depth, int)
                                           or not 1 <= self.max_depth <= LONGEST_LIST):
            _fail(f"max_depth must be a positive integer of at most {LONGEST_LIST} or None",
                  self.max_depth)
        if not _finite_number(self.relevance_threshold):
            _fail("relevance_threshold must be a finite number", self.relevance_threshold)
        if self.relevance_threshold < 0:
            _fail("relevance_threshold must be 0 or more (grades below 0 mark documents "
                  "judged but not pooled, unjudged for every measure)", self.relevance_threshold)
        if not _finite_number(self.discount_base) or not self.discount_base > 1:
            _fail("discount_base must be a finite number greater than 1", self.discount_base)
        object.__setattr__(self, "family_overrides", _check_overrides(self.family_overrides))

    def with_options(self, **changes: Any) -> "Conventions":
        """A copy with some fields changed (``None`` values are ignored)."""
        unknown = set(changes) - {f.name for f in fields(self)}
        if unknown:
            _fail(f"unknown convention {sorted(unknown)[0]!r} (conventions: "
                  f"{', '.join(f.name for f in fields(self))})", sorted(unknown)[0])
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def for_family(self, family: str) -> "Conventions":
        """The conventions one measure family computes under (with its overrides applied)."""
        changes = {name: value for fam, name, value in self.family_overrides if fam == family}
        return replace(self, family_overrides=(), **changes) if changes else self

    @property
    def gain_name(self) -> Any:
        """The gain as measures spell it: ``"linear"``, ``"exp"`` or a tuple of pairs."""
        return "exp" if self.gain == "exponential" else self.gain

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict of JSON types (for JSON and reports)."""
        out = asdict(self)
        if isinstance(self.gain, tuple):
            out["gain"] = {_number_text(k): v for k, v in self.gain}
        out["family_overrides"] = [
            [fam, name, {_number_text(k): v for k, v in value} if isinstance(value, tuple)
             else value] for fam, name, value in self.family_overrides]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Conventions":
        """Rebuild from :meth:`to_dict` output."""
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in names}
        if "family_overrides" in values:
            values["family_overrides"] = tuple(tuple(o) for o in values["family_overrides"])
        return cls(**values)

    def differences(self, other: "Conventions | None" = None) -> dict[str, Any]:
        """The fields that differ from ``other`` (default: trec_eval's), as in :meth:`to_dict`."""
        mine, theirs = self.to_dict(), (other or Conventions()).to_dict()
        return {k: v for k, v in mine.items() if theirs[k] != v}

    def describe(self) -> str:
        """One line: ``gain=linear, discount_base=2.0, ...`` (every field)."""
        return ", ".join(f"{k}={_show(v)}" for k, v in self.to_dict().items()
                         if k != "family_overrides" or v)


def _normalise_gain(gain: Any) -> Any:
    if isinstance(gain, str):
        if gain in ("exp", "exponential"):
            return "exponential"
        if gain == "linear":
            return gain
        _fail("gain must be linear, exponential or a map {grade: gain}", gain)
    pairs = gain.items() if isinstance(gain, dict) else gain
    try:
        normalised = tuple(sorted((float(k), float(v)) for k, v in pairs))
    except OverflowError:  # an integer beyond every float
        _fail("a gain map's grades and gains must be finite numbers", gain)
    except (TypeError, ValueError):
        _fail("gain must be linear, exponential or a map {grade: gain}", gain)
    if not all(math.isfinite(k) and math.isfinite(v) for k, v in normalised):
        _fail("a gain map's grades and gains must be finite numbers", gain)
    if normalised and normalised[0][0] < 0:
        _fail("a gain map's grades must be 0 or more (unjudged documents and negative grades "
              "gain 0)", gain)
    return normalised


def _plain_number(value: Any) -> Any:
    """numpy's scalars (``np.int64(5)``, ``np.float32(2)``) as Python's int and float, which
    the checks below and the JSON output take; booleans and anything else as they are."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and not isinstance(value, float):
        return float(value)
    return value


def _finite_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer beyond every float
        return False


def _check_overrides(overrides: Any) -> tuple:
    allowed = {"ties": ("expected", "optimistic", "pessimistic")}
    if isinstance(overrides, (str, bytes)) or not isinstance(overrides, Iterable):
        _fail("family_overrides are (family, field, value) triples", overrides)
    out = []
    for item in overrides:
        try:
            fam, name, value = item
        except (TypeError, ValueError):
            _fail("family_overrides are (family, field, value) triples", item)
        if name in CHOICES and name not in ("missing_queries", "unjudged", "duplicates",
                                            "score_precision"):
            if name in allowed and value not in allowed[name]:
                _fail(f"a family may override ties only with {', '.join(allowed[name])}", item)
            _check_choice(name, value, CHOICES[name])
        elif name in ("gain", "discount_base", "relevance_threshold"):
            value = getattr(Conventions(**{name: value}), name)  # checked as the field itself
        else:
            _fail(f"{name} cannot be overridden per family", item)
        out.append((str(fam), str(name), value))
    return tuple(out)


def _check_override_families(conv: Conventions) -> None:
    """Refuse an override naming no measure family (it would change nothing, silently)."""
    from .measures import FAMILIES  # here: the measures import this module

    for fam, _, _ in conv.family_overrides:
        if fam not in FAMILIES:
            import difflib

            close = [name for name in FAMILIES if name.lower() == fam.lower()] \
                or difflib.get_close_matches(fam, FAMILIES, n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            _fail(f"family_overrides names an unknown measure family{hint}; families: "
                  f"{', '.join(FAMILIES)}", fam)


def _check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if not isinstance(value, str) or value not in choices:  # (an array's == is no answer)
        _fail(f"{name} must be one of {', '.join(choices)}", value)


def _fail(message: str, value: Any) -> None:
    from .errors import InputError

    raise InputError(message, source="conventions", value=str(value))


def _number_text(x: float) -> str:
    """A grade as a map key (to_dict): ``1`` for 1.0."""
    return str(int(x)) if float(x).is_integer() else str(x)


def _show(value: Any) -> str:
    if isinstance(value, dict):
        from .plain import shortest_number

        return "{" + ",".join(f"{k}:{shortest_number(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return ";".join(":".join(_show(x) for x in o) for o in value)
    return str(value)


@dataclass(frozen=True)
class Profile:
    """A named bundle of conventions reproducing one peer library, with its measure names."""

    name: str
    peer: str  # the library and version it was checked against
    conventions: Conventions
    aliases: tuple[tuple[str, str], ...] = ()  # peer's measure name -> rankwise measure name
    notes: str = ""  # where the peer differs beyond conventions (its bugs, measures it lacks)
    #: the peer writes a relevance level after its names: ranx's ``map-l2`` is ``AP(rel=2)``
    level_suffix: str | None = None

    def measure_names(self, measures: Any) -> Any:
        """``measures`` with the peer's own names (``ndcg_score@10``) turned into rankwise's.

        An alias is looked up for the whole name first, then as a pattern, then for the part
        before ``@``: ``"recall": "SetR"`` maps ``recall`` alone; a key with ``{k}`` is a
        pattern whose target takes the matched text (``"recall@{k}": "R@{k}"`` maps
        ``recall@10`` to ``R@10``, ``"rbp.{k}": "RBP(p=0.{k})"``); otherwise a key names the
        part before ``@`` (``"mrr": "RR"`` maps ``mrr`` and ``mrr@10``). Names without an
        alias, and anything but a string, are passed on as given. With a ``level_suffix``
        (ranx's ``-l``), a name ending in it and an integer N is the name without it, with
        the parameter ``rel=N``: documents below grade N are not relevant, and gain 0.

        >>> profile("ranx").measure_names(["recall", "recall@10", "mrr@10", "P@5"])
        ['SetR', 'R@10', 'RR@10', 'P@5']
        >>> profile("ranx").measure_names(["map-l2", "ndcg_burges@10-l2", "rbp.95-l3"])
        ['AP(rel=2)', 'nDCG(gain=exp,rel=2)@10', 'RBP(p=0.95,rel=3)']
        """
        if not self.aliases or not isinstance(measures, (str, list, tuple)):
            return measures
        exact, patterns = _alias_tables(self.aliases)

        def one(name: Any) -> Any:
            if not isinstance(name, str):
                return name
            level = None
            if self.level_suffix is not None:
                name, level = _level_of(name, self.level_suffix)
            mapped = mapped_name(name)
            return mapped if level is None else _with_rel(mapped, level)

        def mapped_name(name: str) -> str:
            if name in exact:
                return exact[name]
            for pattern, target in patterns:
                match = pattern.fullmatch(name)
                if match:
                    return target.replace("{k}", match["k"])
            head, at, tail = name.partition("@")
            return exact.get(head, head) + at + tail

        return one(measures) if isinstance(measures, str) else [one(m) for m in measures]


def _level_of(name: str, suffix: str) -> tuple[str, int | None]:
    """``name`` without a trailing relevance level (``map-l2``: ``map``, 2), or ``name`` and
    None when it has none. ranx reads ``int()`` of what follows ``-l``: anything but a whole
    number of 0 or more is refused (a negative level would make unjudged grades relevant)."""
    import re

    match = re.fullmatch(rf"(?P<name>.+?){re.escape(suffix)}(?P<level>.*)", name)
    if match is None:
        return name, None
    if not re.fullmatch(r"[0-9]+", match["level"]):
        from .errors import MeasureError

        raise MeasureError(f"the relevance level after {suffix} must be a whole number of 0 "
                           f"or more, e.g. {match['name']}{suffix}2", source="measure",
                           value=name)
    return match["name"], int(match["level"])


def _with_rel(name: str, level: int) -> str:
    """The measure ``name`` with its parameter ``rel`` set to ``level``, as rankwise names it
    (``AP`` -> ``AP(rel=2)``; ``RBP(p=0.95,rel=1)`` -> ``RBP(p=0.95,rel=2)``). RBP's level is 1
    at least: ranx's rbp weighs each document by its grade, so at level 0 a grade-0 document
    adds nothing, as at level 1 (the profile's binary RBP, equal to ranx's on 0/1 grades)."""
    from .measures.parse import parse_measure
    from .measures.registry import make_measure

    measure = parse_measure(name)
    if measure.family == "RBP":  # ranx weighs a document by its grade: grade 0 adds nothing
        level = max(level, 1)
    params = {**dict(measure.params), "rel": level}
    return str(make_measure(measure.family, measure.cutoff, params, text=name))


def _alias_tables(aliases: tuple[tuple[str, str], ...]) -> tuple[dict[str, str], list]:
    """A profile's aliases as a table of whole names and a list of compiled patterns (the
    keys with ``{k}``, in order)."""
    import re

    exact = {key: target for key, target in aliases if "{k}" not in key}
    patterns = [(re.compile(re.escape(key).replace(re.escape("{k}"), "(?P<k>.+)", 1)), target)
                for key, target in aliases if "{k}" in key]
    return exact, patterns


def _profile(name: str, peer: str, notes: str = "", aliases: dict[str, str] | None = None,
             level_suffix: str | None = None, **conventions: Any) -> Profile:
    return Profile(name, peer, Conventions(**conventions), tuple((aliases or {}).items()), notes,
                   level_suffix)


#: ranx's metric names (ranx/metrics/__init__.py ``metric_switch``) as ranx reads them. Without
#: ``@k`` (or with ``@0``) a ranx metric reads the whole list: ``precision``, ``recall``, ``f1``,
#: ``hit_rate`` and ``hits`` alone are set measures, not trec_eval's cutoff families;
#: ``r-precision`` and ``bpref`` ignore a k; ``rbp`` takes its persistence after a dot or an
#: at sign (``rbp.95``: p = 0.95). ``hits`` is averaged over queries (Hits), where trec_eval's
#: ``num_rel_ret`` (NumRelRet) is summed.
_RANX_WHOLE_LIST = {"precision": "SetP", "recall": "SetR", "f1": "SetF", "hit_rate": "Success",
                    "hits": "Hits", "map": "AP", "mrr": "RR", "ndcg": "nDCG", "dcg": "DCG",
                    "ndcg_burges": "nDCG(gain=exp)", "dcg_burges": "DCG(gain=exp)",
                    "r-precision": "Rprec", "bpref": "Bpref"}
RANX_ALIASES = {
    **_RANX_WHOLE_LIST,
    **{f"{name}@0": target for name, target in _RANX_WHOLE_LIST.items()},
    "precision@{k}": "P@{k}", "recall@{k}": "R@{k}", "f1@{k}": "F1@{k}",
    "hit_rate@{k}": "Success@{k}", "hits@{k}": "Hits@{k}",
    "r-precision@{k}": "Rprec", "bpref@{k}": "Bpref",
    "rbp.{k}": "RBP(p=0.{k},rel=1)", "rbp@{k}": "RBP(p=0.{k},rel=1)",
}  # the other names with @k (map@10, ndcg_burges@10) map the part before the @

#: The named profiles, each checked against the real package in tests/peers.
PROFILES: dict[str, Profile] = {p.name: p for p in (
    _profile("trec_eval", "trec_eval 10.0", "The reference: every default is trec_eval's."),
    _profile("pytrec_eval", "pytrec_eval-terrier 0.5.11 (trec_eval 9.0.8 inside)",
             "Run scores are stored as float32, so scores that differ only beyond float32 tie; "
             "interpolated precision (and 11pt_avg) uses trec_eval 9's recall-level rounding; a "
             "duplicated document in a dict run keeps the last score. Differs beyond "
             "conventions: a query given as an empty dict ({qid: {}}) is an empty ranking for "
             "both, but pytrec_eval gives it NaN for iprec_at_recall_0.00 and 11pt_avg (0/0) "
             "where rankwise gives 0.",
             score_precision="float32", recall_levels="trec_eval9", duplicates="last"),
    _profile("ir_measures", "ir-measures 0.4.3 (default provider pipeline)",
             "As pytrec_eval (the provider of every measure but RR@k, ERR@k and "
             "nDCG(dcg=exp-log2)@k), and iter_calc and calc_aggregate give every judged query "
             "missing from the run the value 0. ERR is gdeval's: R = (2^g - 1) / 2^4. Differs "
             "beyond conventions: RR@k comes from the msmarco provider (ties by doc id "
             "ascending, float64 scores), ERR@k from gdeval (float64 scores); NumQ and NumRel "
             "are 0 for a missing query; an empty-dict query gets NaN for IPrec@0.0, so its "
             "calc_aggregate is NaN. Judged@k (its own provider) divides by the documents "
             "ranked within k, breaks ties by doc id ascending and counts a judgment of grade "
             "-1 as judged.",
             aliases={"ERR": "ERR(max_grade=4)", "nDCG(dcg=exp-log2)": "nDCG(gain=exp)",
                      "nDCG(dcg='exp-log2')": "nDCG(gain=exp)", "SetP(relative=True)": "SetRelP",
                      "SetP(relative=True,rel={k})": "SetRelP(rel={k})",
                      "SetP(rel={k},relative=True)": "SetRelP(rel={k})",
                      "NumRet(rel=1)": "NumRelRet", "NumRet(rel={k})": "NumRelRet(rel={k})"},
             score_precision="float32", recall_levels="trec_eval9", duplicates="last",
             missing_queries="zero", family_overrides=(("Judged", "short_lists", "length"),)),
    _profile("ranx", "ranx 0.3.21",
             "Ties keep the run's row order: ranx sorts by score alone, with numba's quicksort, "
             "which keeps the row order of a Run for lists of up to 15 documents (dicts given "
             "to evaluate() reverse it, and are paired query by query in dict order, not by "
             "id; longer lists get the quicksort's own order, which no convention "
             "reproduces). evaluate(make_comparable=True) scores judged queries "
             "missing from the run 0 (without it ranx refuses differing query sets); "
             "interpolated precision uses trec_eval 9's rounding. ranx's bpref is wrong: a "
             "query without relevant judgments raises ZeroDivisionError inside its parallel "
             "kernel, which leaves every later query of that thread's chunk at 0 (the values "
             "depend on the thread count), a query without judged non-relevant documents gets "
             "NaN, and grade -1 counts as judged non-relevant. The profile deliberately gives "
             "trec_eval's bpref, which equals ranx's wherever ranx's kernel is defined. "
             "ranx's rbp weights a relevant document by its grade (its documentation says 1): "
             "the profile's rbp is binary, ranx's on 0/1 judgments. Names without @k "
             "(precision, recall, f1, hit_rate, hits) read the whole list, as in ranx; hits "
             "is averaged over queries (Hits). A name's -lN suffix (ndcg@10-l2, map-l2) is "
             "its rel=N: grades below N are not relevant and gain 0 (graded gains above keep "
             "their grade).",
             aliases=RANX_ALIASES, level_suffix="-l",
             ties="input_order", recall_levels="trec_eval9", duplicates="last",
             missing_queries="zero"),
    _profile("sklearn", "scikit-learn 1.9 ndcg_score / dcg_score",
             "ndcg_score and dcg_score average over tied scores (ignore_ties=False), build the "
             "ideal DCG from the given candidates only and use the grades as linear gains "
             "(dcg_score's log_base is discount_base). With ignore_ties=True ties follow "
             "numpy's unstable argsort, reversed: use a tie policy that matches your data. "
             "ndcg_score refuses lists of one document and negative grades (dcg_score takes "
             "negative grades as negative gains; rankwise gives them gain 0).",
             aliases={"ndcg_score": "nDCG", "dcg_score": "DCG"},
             ties="expected", ideal="retrieved"),
    _profile("torchmetrics", "torchmetrics 1.9.0 retrieval metrics",
             "Scores are float32; a document scored <= 0 is never relevant for P, R, AP and RR "
             "(but is for hit rate, R-precision and nDCG); R and the ideal DCG come from the "
             "given list; nDCG averages over ties. The other measures order ties with "
             "torch.topk / torch.argsort, whose order of equal scores is unspecified (not the "
             "input order): the profile keeps the input order, so tied lists can differ there. "
             "empty_target_action='neg' is no_relevant='zero', 'pos' is 'one', 'skip' is "
             "'skip'. Without top_k (a name without @k) precision, recall and hit rate read "
             "the whole list: SetP, SetR and Success.",
             aliases={"retrieval_normalized_dcg": "nDCG", "retrieval_precision": "SetP",
                      "retrieval_precision@{k}": "P@{k}", "retrieval_recall": "SetR",
                      "retrieval_recall@{k}": "R@{k}", "retrieval_average_precision": "AP",
                      "retrieval_reciprocal_rank": "RR", "retrieval_hit_rate": "Success",
                      "retrieval_r_precision": "Rprec"},
             ties="input_order", ideal="retrieved", ap_denominator="relevant_retrieved",
             score_precision="float32", nonpositive_scores="nonrelevant",
             family_overrides=(("nDCG", "ties", "expected"),
                               ("Success", "nonpositive_scores", "ranked"),
                               ("Rprec", "nonpositive_scores", "ranked"))),
    _profile("recbole", "RecBole 1.2.1 (recbole.evaluator.metrics)",
             "MAP@K divides by min(R, K); every other accuracy measure (Hit, MRR, Recall, NDCG, "
             "Precision) is trec_eval's on the top K with binary relevance. Its ShannonEntropy "
             "is in nats divided by the number of distinct items (rankwise.recsys Entropy is in "
             "bits, undivided). Checked per user in tests/recsys/test_peers.py.",
             aliases={"hit": "Success", "mrr": "RR", "map": "AP", "recall": "R", "ndcg": "nDCG",
                      "precision": "P"},
             ap_denominator="min_relevant_cutoff"),
    _profile("lenskit", "LensKit 2025.8.1 (lenskit.metrics)",
             "Precision divides by the list length when it is shorter than K, recall and AP by "
             "min(R, K); the default nDCG discount is 1/log2(max(rank, 2)) (Jarvelin's: ranks 1 "
             "and 2 undiscounted; LogRankWeight(offset=1) is discount='rank_plus_one'). Users "
             "with a list but no test data count as 0 in its summary (run_only_queries='zero' "
             "with rankwise.evaluate). Differs beyond conventions: its AP on a list shorter "
             "than K divides by min(R, |list|).",
             aliases={"hit": "Success", "recip_rank": "RR", "precision": "P", "recall": "R",
                      "ndcg": "nDCG", "average_precision": "AP"},
             ap_denominator="min_relevant_cutoff", short_lists="length",
             recall_denominator="min_relevant_cutoff", discount="jarvelin"),
    _profile("ms_recommenders", "Microsoft recommenders 1.2.1 (python_evaluation)",
             "map_at_k divides by min(R, K) (map, without the cutoff, by R: use AP); "
             "precision_at_k divides by K, recall_at_k by R, ndcg_at_k with relevancy "
             "'binary' / 'raw' / 'exp' is nDCG with linear or exponential gain. Its ndcg_at_k "
             "mean counts test-only users as 0, its other functions leave them out.",
             aliases={"precision_at_k": "P", "recall_at_k": "R", "map_at_k": "AP",
                      "ndcg_at_k": "nDCG"},
             ap_denominator="min_relevant_cutoff"),
    _profile("lightgbm", "LightGBM 4 ranking metrics (ndcg@k, map@k)",
             "Exponential gain, ties in the order of the data set's rows, MAP@K over min(R, K), "
             "the ideal from the query's candidates, and a query without a relevant candidate "
             "scores 1 (for nDCG and MAP). rankwise.lightgbm.metric evaluates under this "
             "profile's choices when asked to match the library.",
             ties="input_order", gain="exponential", ap_denominator="min_relevant_cutoff",
             ideal="retrieved", no_relevant="one", idcg_zero="one"),
    _profile("xgboost", "XGBoost 2-3 ranking metrics (ndcg@k, map@k)",
             "As LightGBM: exponential gain, row-order ties, MAP@K over min(R, K), candidates-only "
             "ideal, 1 for a query without a relevant candidate. Its ndcg and map without @k stop "
             "at rank 32 (rankwise nDCG@32, AP@32); custom metrics are stored as 6-digit text.",
             ties="input_order", gain="exponential", ap_denominator="min_relevant_cutoff",
             ideal="retrieved", no_relevant="one", idcg_zero="one"),
    _profile("spark", "Apache Spark 4 RankingMetrics / RankingEvaluator (pyspark.mllib, ml)",
             "Predictions in the given order (no ties), every label relevant for P, R and MAP "
             "whatever its value, MAP@K over min(labels, K), nDCG with gain 2^rel - 1 (1 per "
             "label without relevance values) and discount 1/ln(i + 2), users with labels but "
             "no prediction and users with predictions but no label both count 0. Spark's bug: "
             "its ideal DCG takes the labels in the order given, not sorted by relevance, so "
             "with unsorted labels its nDCG is not normalised (a perfect ranking can score above "
             "1); the profile builds the true ideal, equal to Spark's when labels are sorted by "
             "relevance. An item predicted twice counts twice in Spark (rankwise: duplicates).",
             aliases={"precisionAt": "P", "recallAt": "R", "meanAveragePrecision": "AP",
                      "meanAveragePrecisionAt": "AP", "ndcgAt": "nDCG", "precisionAtK": "P",
                      "recallAtK": "R", "meanAveragePrecisionAtK": "AP", "ndcgAtK": "nDCG"},
             gain="exponential", discount_base=2.718281828459045, relevance_threshold=0,
             ties="input_order", missing_queries="zero", run_only_queries="zero",
             ap_denominator="min_relevant_cutoff"),
)}


def resolve(conventions: "Conventions | str | None" = None, **overrides: Any) -> Conventions:
    """The conventions an evaluation uses: a profile name, a ``Conventions`` or ``None``
    (trec_eval), with keyword overrides on top (``None`` values ignored).

    >>> resolve("pytrec_eval").score_precision
    'float32'
    >>> resolve(None, relevance_threshold=2).relevance_threshold
    2
    """
    if conventions is None:
        base = Conventions()
    elif isinstance(conventions, Conventions):
        base = conventions
    elif isinstance(conventions, str):
        base = profile(conventions).conventions
    elif type(conventions).__name__ == "Conventions" and hasattr(conventions, "to_dict"):
        base = Conventions.from_dict(conventions.to_dict())  # the class of a re-imported module
    else:
        _fail("conventions must be a Conventions value or a profile name "
              f"({', '.join(PROFILES)})", conventions)
    conv = base.with_options(**overrides)
    _check_override_families(conv)
    return conv


def profile(name: str) -> Profile:
    """The profile called ``name``; an unknown name lists the known ones."""
    if name not in PROFILES:
        import difflib

        close = difflib.get_close_matches(name, PROFILES, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        _fail(f"unknown profile{hint}; profiles: {', '.join(PROFILES)}", name)
    return PROFILES[name]


#: trec_eval 10 defaults.
TREC_EVAL = Conventions()
