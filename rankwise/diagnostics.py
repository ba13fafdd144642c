"""Diagnostics of one evaluation: conditions under which a number is legal but probably not
what the user meant, or where it rests on something the user should know.

Every check runs on the ranked lists of one system (:class:`~rankwise.core.lists.RankedLists`)
and returns a :class:`Check`: a ``warning`` (printed by the command line and kept in
``Result`` warnings), a ``note`` (shown with ``--diagnostics`` and in the HTML report) or
``ok`` (checked, nothing found). The checks:

``binary_judgments``
    graded measures on 0/1 judgments reduce to binary gains;
``threshold_above_grades``
    a relevance threshold above every judged grade makes nothing relevant;
``short_lists``
    lists shorter than a measure's cutoff K (P@K, F1@K, RelP@K count the missing ranks as
    non-relevant: a warning; for other measures a note);
``ties_at_cutoff``
    documents with equal scores on both sides of a cutoff K: which of them count depends on
    the tie order (a warning when the tied documents differ in grade, so the value changes);
``no_relevant`` and ``idcg_zero``
    queries without a relevant document, or whose ideal DCG is 0: they score 0 (trec_eval)
    and pull the mean down;
``judged_at_k``
    unjudged documents in the top K, as Judged@K (ir_measures: judged documents in the top
    min(K, list length) over min(K, list length), averaged over queries that retrieved
    something); unjudged documents count as non-relevant, so the values are lower bounds;
``one_side``
    queries only in the run (ignored) or only in the judgments (ignored, or scored 0);
``different_cutoffs``
    one measure at several cutoffs (nDCG@5 and nDCG@10 are different measures);
``exp_gain_levels``
    exponential gain 2^g − 1 (or ERR's (2^g − 1) / 2^g_max) on grades above 4: the highest
    grades dominate (Shin 2025, the third founding article: "with the exponential NDCG,
    having too many levels can create extreme difference in relevance");
``carried_by_few``
    half of a mean's total comes from at most 5% of the queries (Shin 2025's MRR example:
    "a small number queries ... can significantly outweigh multiple queries"); a note, since
    a skewed distribution is legal for one system (:func:`rankwise.compare` warns when a
    *difference* between systems rests on a handful of queries).
``tie_sensitivity``
    a reported mean would change under another order of tied documents: the best and worst
    orders (McSherry & Najork 2008's bounds) are evaluated on the queries whose tie groups mix
    grades; a warning under an ordering tie policy, a note under expected / optimistic /
    pessimistic (skipped above ``TIE_CHECK_MAX_ROWS`` documents; a measure one of whose
    extreme orders gives a value beyond float64 gets a note that it was not checked, the
    evaluation standing).

Warnings depend on the ranked lists only, never on the per-query values, so every engine
(in memory, streamed, Spark) finds the same ones; the per-query values only add notes.
Many small runs are checked together: each check reads their lists stacked once and gives
every run (a part, :class:`rankwise.parts.Parts`) the checks it gets alone.

References: Buckley & Voorhees (2004), "Retrieval evaluation with incomplete information",
SIGIR (unjudged documents); McSherry & Najork (2008), "Computing information retrieval
performance measures efficiently in the presence of tied scores", ECIR (ties); trec_eval 10
(queries without relevant documents, ``-c``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Mapping, Sequence

import numpy as np

from .errors import InputError
from .parts import Parts

SHORT_LIST_FAMILIES = ("P", "F1", "RelP")
#: Families whose value at cutoff K depends on which documents are in the top K.
RANK_CUTOFF_FAMILIES = ("P", "Hits", "R", "F1", "Success", "RR", "AP", "nDCG", "DCG", "CG", "ERR",
                        "RelP")
#: Families with an exponential gain (always, or with ``gain=exp``).
EXP_GAIN_FAMILIES = ("nDCG", "DCG", "IDCG", "CG")
#: Largest grade of the usual 0-4 scale; above it exponential gains explode.
LARGEST_USUAL_GRADE = 4
#: Judged@K below this (with judged non-relevant documents in the judgments) is a warning.
JUDGED_WARNING = 0.5
#: A mean is "carried by a few queries" when this share of the queries makes half its total.
CARRIED_SHARE = 0.05
#: ... and there are at least this many queries.
CARRIED_MIN_QUERIES = 20
#: The tie-order check evaluates the best and worst orders: skipped above this many documents.
TIE_CHECK_MAX_ROWS = 2_000_000
EXAMPLES = 5
SEVERITIES = ("warning", "note", "ok")


@dataclass(frozen=True)
class Check:
    """The outcome of one diagnostic check on one system.

    Attributes
    ----------
    code : str
        Which check (see the module docstring).
    severity : str
        ``"warning"``, ``"note"`` or ``"ok"`` (checked, nothing found).
    message : str
        One or two sentences for a person.
    measures : tuple of str
        The measures it concerns (empty: the evaluation as a whole).
    queries : int
        How many queries are affected.
    total : int
        Queries evaluated.
    examples : tuple of str
        Up to five affected query ids.
    value : float or None
        A number the check measured (Judged@K, the share of queries carrying a mean, ...).
    """

    code: str
    severity: str
    message: str
    measures: tuple[str, ...] = ()
    queries: int = 0
    total: int = 0
    examples: tuple[str, ...] = ()
    value: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain values (for JSON), keyed by field name in field order."""
        value = self.value
        return {"code": self.code, "severity": self.severity, "message": self.message,
                "measures": list(self.measures), "queries": self.queries, "total": self.total,
                "examples": list(self.examples),
                "value": None if value is None or not math.isfinite(value) else value}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Check":
        """Rebuild from :meth:`to_dict`."""
        return cls(data["code"], data["severity"], data["message"], tuple(data.get("measures", ())),
                   int(data.get("queries", 0)), int(data.get("total", 0)),
                   tuple(data.get("examples", ())), data.get("value"))


def pitfall_warnings(lists, measures) -> list[str]:
    """The warnings for one evaluated system (``lists``: its RankedLists)."""
    return [c.message for c in run_checks(lists, measures) if c.severity == "warning"]


def run_checks(lists, measures, values: dict[str, np.ndarray] | None = None,
               bounds: TieBounds | None = None, facts: RowFacts | None = None) -> list[Check]:
    """Every check on one system, in a fixed order; see the module docstring.

    Parameters
    ----------
    lists : RankedLists
        The system's ranked lists.
    measures : sequence of Measure
        The measures evaluated.
    values : dict, optional
        ``{str(measure): per-query values}`` in the order of ``lists.query_ids``; without
        them the ``carried_by_few`` check is skipped.
    bounds : TieBounds, optional
        The tie-order check's bounds when already computed (:func:`tie_order_bounds`); by
        default computed here.
    facts : RowFacts, optional
        What the checks read from the ranked rows, when already gathered; by default read
        from ``lists``.

    Returns
    -------
    list of Check

    Examples
    --------
    >>> from rankwise.core import index_judgments, rank
    >>> from rankwise.io import to_qrels, to_run
    >>> from rankwise.measures import parse_measures
    >>> qrels = to_qrels({"q1": {"a": 1, "b": 0}, "q2": {"c": 2}})
    >>> run = to_run({"q1": {"a": 1.0, "b": 1.0}, "q2": {"c": 3.0, "x": 2.0}})
    >>> checks = run_checks(rank(index_judgments(qrels), run), parse_measures(["P@1"]))
    >>> [c.code for c in checks if c.severity == "warning"]
    ['ties_at_cutoff']
    """
    measures = list(measures)
    return combine_checks(lists, measures, values, list_checks(lists, measures, facts),
                          bounds)[0]


def value_free_checks(lists, measures, parts: Parts | None = None,
                      diagnostics: Sequence[Any] | None = None
                      ) -> tuple[dict[str, list[list[Check]]], TieBounds | None]:
    """What the checks work out without the per-query values, so that it can run while the
    measures are computed: the checks of :func:`list_checks` and the tie-order check's
    bounds (:func:`tie_order_bounds`; None where every system is over TIE_CHECK_MAX_ROWS
    documents). ``parts`` and ``diagnostics``: as for list_checks; the systems stacked in
    ``lists`` (:func:`~rankwise.core.lists.stack_lists`) each get the checks they get
    alone, message for message, when :func:`combine_checks` finishes them."""
    measures = list(measures)
    parts = parts or Parts.whole(lists)
    listed = list_checks(lists, measures, parts=parts, diagnostics=diagnostics)
    if all(rows > TIE_CHECK_MAX_ROWS for rows in parts.rows):
        return listed, None
    return listed, tie_order_bounds(lists, measures, {str(m) for m in measures})


def list_checks(lists, measures, facts: RowFacts | None = None, parts: Parts | None = None,
                diagnostics: Sequence[Any] | None = None) -> dict[str, list[list[Check]]]:
    """The checks that read the ranked lists only, not the per-query values (so they can run
    while the measures are computed), by check code, each a list per system (``parts``: the
    systems stacked in ``lists``, by default one; ``diagnostics``: each system's, by default
    ``lists``'; ``facts``: as for run_checks)."""
    measures = list(measures)
    facts = facts or RowFacts(lists)
    parts = parts or Parts.whole(lists)
    return {"binary_judgments": _binary_judgments(lists, measures, parts),
            "threshold_above_grades": _threshold_above_grades(lists, measures, parts),
            "short_lists": _short_lists(lists, measures, parts),
            "ties_at_cutoff": _ties_at_cutoff(lists, measures, facts, parts),
            "judged_at_k": _judged_at_k(lists, measures, facts, parts),
            "one_side": _one_side(diagnostics or [lists.diagnostics], parts),
            "different_cutoffs": _different_cutoffs(measures, parts),
            "exp_gain_levels": _exp_gain_levels(lists, measures, parts)}


#: The order of the checks :func:`run_checks` gives (and the Spark engine merges).
CHECK_ORDER = ("binary_judgments", "threshold_above_grades", "short_lists", "ties_at_cutoff",
               "no_relevant", "idcg_zero", "judged_at_k", "one_side", "different_cutoffs",
               "exp_gain_levels", "carried_by_few", "tie_sensitivity")


def combine_checks(lists, measures, values: dict[str, np.ndarray] | None,
                   listed: dict[str, list[list[Check]]], bounds: TieBounds | None = None,
                   parts: Parts | None = None) -> list[list[Check]]:
    """Every system's checks in :func:`run_checks`' order, from the :func:`list_checks`
    already done (``listed``) and the checks that read the values (``bounds`` and
    ``parts``: as for run_checks and list_checks)."""
    measures = list(measures)
    parts = parts or Parts.whole(lists)
    sections = {**listed, "no_relevant": _no_relevant(lists, measures, values, parts),
                "idcg_zero": _idcg_zero(lists, measures, values, parts)}
    if values is not None:
        sections["carried_by_few"] = _carried_by_few(lists, measures, values, parts)
        sections["tie_sensitivity"] = _tie_sensitivity(lists, measures, values, bounds, parts)
    ordered = [sections[code] for code in CHECK_ORDER if code in sections]
    return [[check for section in ordered for check in section[i]] for i in range(len(parts))]


# ---------------------------------------------------------------------------- the checks


def _binary_judgments(lists, measures, parts: Parts) -> list[list[Check]]:
    graded = [str(m) for m in measures if m.spec.graded]
    if not graded:
        return [[] for _ in parts.sizes]
    if not set(lists.levels.tolist()) <= {0.0, 1.0}:
        return [[Check("binary_judgments", "ok", "graded measures run on graded judgments",
                       tuple(graded))] for _ in parts.sizes]
    verb, pronoun = ("uses", "it reduces") if len(graded) == 1 else ("use", "they reduce")
    return [[Check("binary_judgments", "warning",
                   f"{', '.join(graded)} {verb} graded relevance, but every judgment is 0 or 1: "
                   f"{pronoun} to binary gains", tuple(graded))] for _ in parts.sizes]


def _threshold_above_grades(lists, measures, parts: Parts) -> list[list[Check]]:
    by_threshold: dict[float, list[str]] = {}
    for m in measures:
        if "rel" in m.spec.params:
            threshold = _threshold(lists, m)
            if not isinstance(threshold, str) and threshold > lists.max_grade:  # str: graded
                by_threshold.setdefault(float(threshold), []).append(str(m))
    return [[Check("threshold_above_grades", "warning",
                   f"relevance threshold {t:g} is above every judged grade (the largest is "
                   f"{lists.max_grade:g}): no document is relevant for {', '.join(names)}",
                   tuple(names), total, total)
             for t, names in by_threshold.items()] for total in parts.sizes]


def _short_lists(lists, measures, parts: Parts) -> list[list[Check]]:
    ranked = [m for m in measures if _rank_cutoff(m)]
    if not ranked:
        return [[] for _ in parts.sizes]
    short: dict[int, tuple[list[int], list[tuple[str, ...]]]] = {}  # per cutoff, per system
    for m in ranked:
        if m.cutoff not in short:
            mask = lists.num_retrieved < m.cutoff
            counts = parts.counts(mask)
            short[m.cutoff] = (counts, parts.examples(mask, lists.query_ids, EXAMPLES)
                               if any(counts) else [()] * len(counts))
    out = []
    for i, total in enumerate(parts.sizes):
        found: list[Check] = []
        noted: dict[int, list[str]] = {}
        for m in ranked:
            count = short[m.cutoff][0][i]
            if m.family in SHORT_LIST_FAMILIES and count:
                found.append(Check(
                    "short_lists", "warning",
                    f"{m}: {count} of {total} queries retrieved fewer than {m.cutoff} "
                    "documents; the missing ranks count as non-relevant", (str(m),), count,
                    total, short[m.cutoff][1][i]))
            elif count:
                noted.setdefault(m.cutoff, []).append(str(m))
        for cutoff, names in noted.items():
            count = short[cutoff][0][i]
            found.append(Check(
                "short_lists", "note",
                f"{', '.join(names)}: {count} of {total} queries retrieved fewer than "
                f"{cutoff} documents (the missing ranks add nothing)", tuple(names), count,
                total, short[cutoff][1][i]))
        if not found:
            found.append(Check("short_lists", "ok",
                               "every list is at least as long as each cutoff", total=total))
        out.append(found)
    return out


def tie_cutoff_groups(measures, conventions) -> dict[tuple[int, str], list[str]]:
    """The measures the ``ties_at_cutoff`` check speaks of, by (cutoff K, tie policy): a
    family may override the policy."""
    groups: dict[tuple[int, str], list[str]] = {}
    for m in measures:
        if _rank_cutoff(m) and m.family in RANK_CUTOFF_FAMILIES:
            groups.setdefault((int(m.cutoff), conventions.for_family(m.family).ties),
                              []).append(str(m))
    return groups


def _ties_at_cutoff(lists, measures, facts: RowFacts, parts: Parts) -> list[list[Check]]:
    """Queries whose documents at ranks K and K+1 have equal scores, per cutoff K (and per tie
    policy, which a family may override)."""
    out: list[list[Check]] = [[] for _ in parts.sizes]
    for (cutoff, ties), names in tie_cutoff_groups(measures, lists.conventions).items():
        straddle, change = facts.straddling(cutoff)
        straddling, changing = parts.counts(straddle), parts.counts(change)
        examples = {}
        for i, (n, n_change, total) in enumerate(zip(straddling, changing, parts.sizes)):
            if n == 0:
                out[i].append(Check("ties_at_cutoff", "ok", f"no tie straddles rank {cutoff}",
                                    tuple(names), 0, total))
                continue
            text = (f"{', '.join(names)}: ties straddle rank {cutoff} in {n} of {total} "
                    "queries (equal scores on both sides of the cutoff)")
            if not n_change:
                severity = "note"
                text += ", but the tied documents have equal grades: the values do not " \
                        f"depend on the tie order (ties={ties})"
            elif ties in ORDERING_TIES:
                severity = "warning"
                text += (f"; in {n_change} of them the tied documents differ in grade, so the "
                         f"value depends on the tie order (ties={ties})")
            else:
                severity = "note"
                text += (f"; in {n_change} of them the tied documents differ in grade: the "
                         f"values are the {_TIE_VALUE[ties]} over the orders of the tied "
                         f"documents (ties={ties})")
            shown = bool(n_change)
            if shown not in examples:
                examples[shown] = parts.examples(change if shown else straddle,
                                                 lists.query_ids, EXAMPLES)
            out[i].append(Check("ties_at_cutoff", severity, text, tuple(names), n_change or n,
                                total, examples[shown][i]))
    return out


def ties_straddling(lists, cutoff: int) -> tuple[np.ndarray, np.ndarray]:
    """The queries whose documents at ranks K and K+1 have equal scores (K = ``cutoff``),
    and for each whether that tie group mixes grades (the value then depends on the tie
    order)."""
    long_enough = np.flatnonzero(lists.num_retrieved > cutoff)
    at_k = lists.offsets[long_enough] + cutoff - 1
    straddle = lists.score[at_k] == lists.score[at_k + 1]  # both rows of one query
    return long_enough[straddle], _tie_mixes_grades(lists, at_k[straddle])


def straddling_masks(lists, cutoff: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`ties_straddling` as two masks over the queries: a tie straddles rank K, and
    that tie's documents differ in grade."""
    queries, changes = ties_straddling(lists, cutoff)
    straddle = np.zeros(lists.num_queries, dtype=bool)
    change = np.zeros(lists.num_queries, dtype=bool)
    straddle[queries] = True
    change[queries] = changes
    return straddle, change


def _tie_mixes_grades(lists, rows: np.ndarray) -> np.ndarray:
    """Per row: does the tie group holding it mix grades (unjudged counted as -1)? Only the
    groups asked about are read (binary searches of their queries' scores find their rows:
    numbering every row's tie group cost 0.12 s at 10M rows, in a check that reads a few
    thousand)."""
    from .core.segments import tie_group_extents

    if len(rows) == 0:
        return np.zeros(0, dtype=bool)
    first, size = tie_group_extents(lists.score, lists.offsets, rows)
    starts = np.zeros(len(rows), dtype=np.int64)
    np.cumsum(size[:-1], out=starts[1:])
    members = np.repeat(first - starts, size) + np.arange(int(size.sum()))
    grade = lists.grade[members]
    grade = np.where(grade >= 0, grade, -1.0)  # unjudged and negative alike
    return np.minimum.reduceat(grade, starts) != np.maximum.reduceat(grade, starts)


_TIE_VALUE = {"expected": "expected value", "optimistic": "best value",
              "pessimistic": "worst value"}
ORDERING_TIES = ("docid_desc", "docid_asc", "input_order")


def _no_relevant(lists, measures, values, parts: Parts) -> list[list[Check]]:
    groups: dict[tuple[float, str], list[str]] = {}
    for m in measures:
        if m.spec.undefined_when == "no_relevant" and m.spec.bounds is not None:
            params, conv = _params(lists, m)
            groups.setdefault((float(params["rel"]), conv.no_relevant), []).append(str(m))
    out: list[list[Check]] = [[] for _ in parts.sizes]
    for (threshold, policy), names in groups.items():
        where = " among the retrieved (ideal='retrieved')" \
            if lists.conventions.ideal == "retrieved" else ""
        found = _undefined_queries(
            "no_relevant", lists, parts, values, names, lists.num_relevant(threshold) == 0,
            policy, f"every query has a document of grade >= {threshold:g}{where}",
            f"have no relevant document (grade >= {threshold:g}){where}: {', '.join(names)} "
            f"{_UNDEFINED[policy]} (no_relevant='{policy}')")
        for mine, check in zip(out, found):
            mine.append(check)
    return out


def _undefined_queries(code: str, lists, parts: Parts, values, names: list[str],
                       flagged: np.ndarray, policy: str, ok: str, what: str) -> list[Check]:
    """Per system, one check on the queries where ``names`` are undefined (``flagged``): ok
    when it has none, else a note ("N of M queries ``what``") and, where they score 0, the
    means over its other queries."""
    counts = parts.counts(flagged)
    if any(counts):
        examples = parts.examples(flagged, lists.query_ids, EXAMPLES)
        without = _means_without(names, values, flagged, parts) if policy == "zero" \
            else [""] * len(parts)
    return [Check(code, "ok", ok, tuple(names), 0, total) if count == 0 else
            Check(code, "note", f"{count} of {total} queries {what}{without[i]}", tuple(names),
                  count, total, examples[i])
            for i, (count, total) in enumerate(zip(counts, parts.sizes))]


_UNDEFINED = {"zero": "score 0 on them and they count in the mean (trec_eval)",
              "skip": "leave them out of the mean",
              "nan": "have no value on them, so their means are undefined (NaN)",
              "one": "score 1 on them and they count in the mean (torchmetrics 'pos')"}


def _idcg_zero(lists, measures, values, parts: Parts) -> list[list[Check]]:
    from .measures.graded import gains

    groups: dict[tuple[Any, str], list[str]] = {}
    for m in measures:
        if m.spec.undefined_when == "idcg_zero":
            params, conv = _params(lists, m)
            groups.setdefault((params["gain"], conv.idcg_zero), []).append(str(m))
    out: list[list[Check]] = [[] for _ in parts.sizes]
    for (gain, policy), names in groups.items():
        positive = gains(lists.levels, gain) > 0
        found = _undefined_queries(
            "idcg_zero", lists, parts, values, names,
            lists.ideal_level_counts[:, positive].sum(axis=1) == 0, policy,
            "every query has an ideal DCG above 0",
            f"have an ideal DCG of 0 (no judged document with a positive gain): "
            f"{', '.join(names)} {_UNDEFINED[policy]} (idcg_zero='{policy}')")
        for mine, check in zip(out, found):
            mine.append(check)
    return out


def judged_at(lists, cutoff: int | None) -> np.ndarray:
    """Judged@K per query: judged documents (grade >= 0) in the top min(K, length), over
    min(K, length); NaN for queries that retrieved nothing (ir_measures' ``Judged@K``).

    >>> from rankwise.core import index_judgments, rank
    >>> from rankwise.io import to_qrels, to_run
    >>> lists = rank(index_judgments(to_qrels({"q": {"a": 1, "c": 0}})),
    ...              to_run({"q": {"a": 3.0, "b": 2.0, "c": 1.0}}))
    >>> judged_at(lists, 2).tolist(), judged_at(lists, None).tolist()
    ([0.5], [0.6666666666666666])
    """
    from .measures.judged import judged_within

    found = judged_within(lists, cutoff)
    depth = lists.num_retrieved if cutoff is None else np.minimum(lists.num_retrieved, cutoff)
    out = np.full(lists.num_queries, np.nan)
    np.divide(found, depth, out=out, where=depth > 0)
    return out


def judged_groups(measures) -> dict[int | None, list[str]]:
    """The measures the ``judged_at_k`` check speaks of, by cutoff (None: whole lists)."""
    by_cutoff: dict[int | None, list[str]] = {}
    for m in measures:
        if m.spec.order_based and m.spec.bounds is not None and m.family != "Bpref" \
                and m.family != "gm_bpref" and (m.cutoff is None or _rank_cutoff(m)):
            by_cutoff.setdefault(m.cutoff, []).append(str(m))
    return by_cutoff


def _judged_at_k(lists, measures, facts: RowFacts, parts: Parts) -> list[list[Check]]:
    by_cutoff = judged_groups(measures)
    if not by_cutoff:
        return [[] for _ in parts.sizes]
    nonrelevant = lists.num_judged_nonrelevant(lists.conventions.relevance_threshold) > 0
    pooled = [count > 0 for count in parts.counts(nonrelevant)]
    out: list[list[Check]] = [[] for _ in parts.sizes]
    for cutoff, names in by_cutoff.items():
        judged = facts.judged(cutoff)
        means = parts.means(judged)  # NaN when no query retrieved anything
        incomplete = judged < 1  # (False where undefined)
        counts = parts.counts(incomplete)
        examples = parts.examples(incomplete, lists.query_ids, EXAMPLES) if any(counts) \
            else None
        label = f"Judged@{cutoff}" if cutoff is not None else "Judged (whole lists)"
        for i, (count, total, mean) in enumerate(zip(counts, parts.sizes, means)):
            if count == 0:
                out[i].append(Check("judged_at_k", "ok", f"{label} = 1: every retrieved "
                                    "document in the top ranks is judged", tuple(names), 0,
                                    total, value=None if math.isnan(mean) else mean))
                continue
            severity = "warning" if pooled[i] and mean < JUDGED_WARNING else "note"
            text = (f"{', '.join(names)}: {label} = {mean:.3f}: {count} of {total} "
                    f"queries have unjudged documents in the top "
                    f"{cutoff if cutoff is not None else 'ranks'}, and unjudged documents count "
                    "as non-relevant, so the values are lower bounds")
            if not pooled[i]:
                text += " (the judgments hold no judged non-relevant document: unjudged " \
                        "means not relevant by design)"
            elif severity == "warning":
                text += "; with fewer than half of the top documents judged, compare systems " \
                        "with Bpref or unjudged='remove' (trec_eval -J), or judge more"
            out[i].append(Check("judged_at_k", severity, text, tuple(names), count, total,
                                examples[i], mean))
    return out


def _one_side(diagnostics: Sequence[Any], parts: Parts) -> list[list[Check]]:
    """Queries on one side only, from each system's diagnostics."""
    return [_one_side_of(d, total) for d, total in zip(diagnostics, parts.sizes)]


def _one_side_of(d, total: int) -> list[Check]:
    out = []
    if d.queries_only_in_run:
        scored = d.queries_only_in_run_scored
        out.append(Check(
            "one_side", "note",
            f"{d.queries_only_in_run} queries are in the run but not in the judgments and "
            + (f"{scored} of them are evaluated as queries without judgments "
               "(run_only_queries='zero')" if scored else "are ignored (trec_eval)"),
            queries=d.queries_only_in_run, total=total,
            examples=tuple(d.examples.get("queries_only_in_run", ())[:EXAMPLES])))
    if d.queries_only_in_qrels:
        scored = d.queries_only_in_qrels_scored_zero
        text = (f"{d.queries_only_in_qrels} judged queries are not in the run and "
                + ("score 0 in every measure (missing_queries='zero', trec_eval -c)" if scored
                   else "are ignored (trec_eval's default): means are over the "
                   f"{total} queries the run answered; missing_queries='zero' "
                   "(trec_eval -c) counts them as 0"))
        out.append(Check("one_side", "note", text, queries=d.queries_only_in_qrels,
                         total=total,
                         examples=tuple(d.examples.get("queries_only_in_qrels", ())[:EXAMPLES])))
    if not out:
        out.append(Check("one_side", "ok", "the run and the judgments have the same queries",
                         total=total))
    return out


def _different_cutoffs(measures, parts: Parts) -> list[list[Check]]:
    checks = [Check("different_cutoffs", "note", text)
              for text in _cutoff_notes(tuple(str(m) for m in measures))]
    return [checks for _ in parts.sizes]


@lru_cache(maxsize=64)
def _cutoff_notes(names: tuple[str, ...]) -> tuple[str, ...]:
    """The same measures give the same notes: worked out once (many runs, one measure list)."""
    from .stats.pitfalls import cutoff_warnings

    return tuple(cutoff_warnings(names))


def _exp_gain_levels(lists, measures, parts: Parts) -> list[list[Check]]:
    """The same for every system (their judgments are the same). ERR with its own
    ``max_grade`` clips the grades to it: the judgments' largest grade does not concern it."""
    exp = [str(m) for m in measures
           if (m.family in EXP_GAIN_FAMILIES and _params(lists, m)[0].get("gain") == "exp")
           or (m.family == "ERR" and _params(lists, m)[0].get("max_grade") is None)]
    if not exp:
        return [[] for _ in parts.sizes]
    positive = lists.levels[lists.levels > 0]
    top = lists.max_grade
    from .measures.graded import check_exp_gain

    check_exp_gain(top)  # (the measures raise the same error)
    if top <= LARGEST_USUAL_GRADE:
        checks = [Check("exp_gain_levels", "ok", f"exponential gain on grades up to {top:g}",
                        tuple(exp))]
        return [checks for _ in parts.sizes]
    second = positive[-2] if len(positive) > 1 else 0.0
    gain_top, gain_second = 2.0 ** top - 1, 2.0 ** second - 1
    ratio = f"{gain_top / gain_second:.0f}× a grade-{second:g} one" if second > 1 else ""
    checks = [Check("exp_gain_levels", "warning",
                    f"{', '.join(exp)}: exponential gain 2^g - 1 on grades up to {top:g} "
                    f"({len(positive)} positive levels): a grade-{top:g} document gains "
                    f"{gain_top:g}, {ratio + ' and ' if ratio else ''}{gain_top:.0f}× a grade-1 "
                    "one, so the highest grades decide the value almost alone; use linear gain "
                    "or fewer grade levels", tuple(exp), value=float(top))]
    return [checks for _ in parts.sizes]


def _carried_by_few(lists, measures, values, parts: Parts) -> list[list[Check]]:
    """Is a mean carried by a few queries? Half of its total comes from the top k of its n
    queries; a note when k / n <= CARRIED_SHARE. One pass over every measure's values per
    size of system (a systems x measures x queries block: many small runs check a few queries
    per measure)."""
    names = [str(m) for m in measures
             if m.spec.aggregate == "mean" and m.spec.bounds is not None and str(m) in values]
    out: list[list[Check]] = [[] for _ in parts.sizes]
    if not names:
        return out
    table = np.array([values[name] for name in names])
    for size, which, queries in parts.by_size():
        # system x measure x query, each row contiguous (summed pairwise, as alone)
        block = np.ascontiguousarray(table[:, queries].transpose(1, 0, 2))
        defined = ~np.isnan(block)
        filled = np.where(defined, block, 0.0)
        counts = defined.sum(axis=2).tolist()
        totals = filled.sum(axis=2)
        negative = (filled < 0).any(axis=2).tolist()
        ordered = -np.sort(-filled, axis=2)  # largest first, the undefined (0) among the last
        running = np.cumsum(ordered, axis=2)
        tops = ((running < (totals / 2 - 1e-12 * totals)[:, :, None]).sum(axis=2) + 1).tolist()
        totals = totals.tolist()
        for p, (part, start) in enumerate(zip(which, queries[:, 0].tolist())):
            for i, name in enumerate(names):
                n, total, k = counts[p][i], totals[p][i], tops[p][i]
                if n < CARRIED_MIN_QUERIES or total <= 0 or negative[p][i]:
                    continue
                share = k / n
                if share > CARRIED_SHARE:
                    out[part].append(Check(
                        "carried_by_few", "ok", f"{name}: half of the total comes from {k} of "
                        f"{n} queries ({share:.0%})", (name,), k, size, value=share))
                    continue
                rest = (total - float(ordered[p, i, :k].sum())) / (n - k) if n > k \
                    else float("nan")
                top = np.argsort(-values[name][start:start + size],
                                 kind="stable")[:min(k, EXAMPLES)]
                out[part].append(Check(
                    "carried_by_few", "note",
                    f"{name}: half of the total comes from {k} of {n} queries ({share:.1%}); "
                    f"the other {n - k} average {rest:.4f}, against a mean of {total / n:.4f}: "
                    "the mean is carried by a few queries, look at the per-query distribution",
                    (name,), k, size, tuple(lists.query_ids[start + top].tolist()), share))
    return out


class RowFacts:
    """What the checks read from the ranked rows rather than from per-query counts: per
    query, whether a tie straddles rank K and mixes grades (:func:`straddling_masks`), and
    Judged@K (:func:`judged_at`). Each is computed once, when first asked for (the lists of
    many systems stacked: once for all of them, each fact a function of its query's rows
    alone). The streaming engine gathers the same facts chunk by chunk and answers the same
    calls.
    """

    def __init__(self, lists) -> None:
        self._lists = lists
        self._cache: dict = {}

    def straddling(self, cutoff: int) -> tuple[np.ndarray, np.ndarray]:
        """Per query: a tie straddles rank ``cutoff``; and its documents differ in grade."""
        key = ("straddling", cutoff)
        if key not in self._cache:
            self._cache[key] = straddling_masks(self._lists, cutoff)
        return self._cache[key]

    def judged(self, cutoff: int | None) -> np.ndarray:
        """Per query: Judged@``cutoff`` (None: the whole list)."""
        key = ("judged", cutoff)
        if key not in self._cache:
            self._cache[key] = judged_at(self._lists, cutoff)
        return self._cache[key]


@dataclass(frozen=True)
class TieBounds:
    """What the tie-order check computes before it compares means: the queries whose tie
    groups mix grades (``mixed``, per query) and, per candidate measure, its values on those
    queries with every tie group ordered best first and worst first; ``beyond`` names the
    measures one of whose orders gives a value beyond float64 (the reason, as refused)."""

    mixed: np.ndarray
    bounds: dict[str, tuple[np.ndarray, np.ndarray]]
    beyond: dict[str, str] = field(default_factory=dict)


def _tie_candidates(measures, values) -> list:
    """The measures whose mean the tie order can change (order-based, averaged as a mean,
    named in ``values``: the values by name, or the names alone)."""
    return [m for m in measures if m.spec.order_based and not m.spec.tie_invariant
            and m.spec.aggregate == "mean" and str(m) in values]


def tie_order_bounds(lists, measures, values) -> TieBounds:
    """The tie-order check's bounds (:class:`TieBounds`) for ``lists``, for the measures
    named in ``values`` (the values by name, or the names alone: the bounds do not read
    them); per query they depend on that query's rows only, so those of stacked lists
    (``stack_lists``) are each system's own."""
    from .core.ranked import THREAD_MIN_ROWS
    from .measures.expected import tie_bound

    candidates = _tie_candidates(measures, values)
    mixed = lists.queries_with_mixed_ties() if candidates else \
        np.zeros(lists.num_queries, dtype=bool)
    if not mixed.any():
        return TieBounds(mixed, {})
    subset = lists.select_queries(np.flatnonzero(mixed))
    subset.tied_groups  # found once for both orders

    def side(best_first: bool) -> list[np.ndarray | InputError]:
        return [_bound_or_refusal(m, subset, best_first, tie_bound) for m in candidates]

    if subset.num_rows < THREAD_MIN_ROWS:
        best, worst = side(True), side(False)
    else:  # the two orders side by side: separate lists, numpy releases the interpreter lock
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=1) as pool:
            pending = pool.submit(side, False)
            best = side(True)
            worst = pending.result()
    refused = {str(m): (b if isinstance(b, InputError) else w).reason
               for m, b, w in zip(candidates, best, worst)
               if isinstance(b, InputError) or isinstance(w, InputError)}
    return TieBounds(mixed, {str(m): (b, w) for m, b, w in zip(candidates, best, worst)
                             if str(m) not in refused}, refused)


def _bound_or_refusal(measure, lists, best_first: bool, tie_bound) -> np.ndarray | InputError:
    """The measure's values under one extreme order of the ties, or the InputError refusing
    them (a value beyond float64 under that order, which the reported order need not reach:
    the evaluation stands, the check says it could not look)."""
    try:
        return tie_bound(measure, lists, best_first)
    except InputError as refusal:
        return refusal


def _tie_sensitivity(lists, measures, values, bounds: TieBounds | None,
                     parts: Parts) -> list[list[Check]]:
    """Would a reported mean change under another order of the tied documents? The best and
    worst orders (tie groups by grade) are evaluated on the queries where a tie group mixes
    grades; a warning names the range when the tie policy is an order, a note otherwise."""
    candidates = _tie_candidates(measures, values)
    out: list[list[Check]] = [[] for _ in parts.sizes]
    if not candidates:
        return out
    too_large = [rows > TIE_CHECK_MAX_ROWS for rows in parts.rows]
    for i, rows in enumerate(parts.rows):
        if too_large[i]:
            out[i].append(Check(
                "tie_sensitivity", "ok", f"not checked on {rows} documents (the limit is "
                f"{TIE_CHECK_MAX_ROWS}); ties='optimistic' / 'pessimistic' give the range, "
                "ties='expected' the order-free value"))
    if all(too_large):
        return out
    if bounds is None:
        bounds = tie_order_bounds(lists, measures, values)
    refused = [m for m in candidates if str(m) in bounds.beyond]
    candidates = [m for m in candidates if str(m) not in bounds.beyond]
    mixed = bounds.mixed
    within = parts.within(mixed)  # each system's queries among the mixed ones
    mixed_queries = np.flatnonzero(mixed)
    names = [str(m) for m in candidates]
    changes = []  # per candidate that changes somewhere: its counts, means and examples
    if len(mixed_queries) and names:
        best = np.array([bounds.bounds[name][0] for name in names])
        worst = np.array([bounds.bounds[name][1] for name in names])
        differs = best != worst  # (NaN against NaN counts as a change, as before)
        for j in np.flatnonzero(differs.any(axis=1)).tolist():
            m, name = candidates[j], names[j]
            skip = m.skips_undefined(lists.conventions)
            reported = values[name]
            bound_means = []
            for bound in (best[j], worst[j]):
                full = reported.copy()
                full[mixed] = bound
                bound_means.append(parts.means(full, skip))
            shown = np.zeros(len(mixed), dtype=bool)
            shown[mixed_queries[differs[j]]] = True
            changes.append((m, name, within.counts(differs[j]), parts.means(reported, skip),
                            bound_means, parts.examples(shown, lists.query_ids, EXAMPLES)))
    for i, (mixed_count, total) in enumerate(zip(parts.counts(mixed), parts.sizes)):
        if too_large[i]:
            continue
        if not mixed_count:
            out[i].append(Check("tie_sensitivity", "ok", "no tie group mixes grades: no value "
                                "depends on the order of tied documents", tuple(names)))
            continue
        out[i] += [Check("tie_sensitivity", "note", f"{m}: not checked: under the best or "
                         f"worst order of tied documents, {bounds.beyond[str(m)]}", (str(m),))
                   for m in refused]
        for m, name, changed, means, (best_means, worst_means), examples in changes:
            if not changed[i]:  # the order of the ties does not change this measure
                continue
            low, high = min(best_means[i], worst_means[i]), max(best_means[i], worst_means[i])
            if not high - low > 1e-12 * max(1.0, abs(high)):
                continue
            ties = m.conventions(lists).ties
            digits = _distinguishing_digits(low, high)
            # a range between the best and worst orders that rounds to one value at trec_eval's
            # 4 decimals is a note: no printed mean would change
            material = digits == 4 or not m.spec.grade_monotone
            severity = "warning" if ties in ORDERING_TIES and material else "note"
            # where ordering ties by grade is not the best and worst order, the two grade
            # orders give values within the range, not its ends
            span = f"from {low:.{digits}f} to {high:.{digits}f}" if m.spec.grade_monotone \
                else f"from {low:.{digits}f} or lower to {high:.{digits}f} or higher"
            out[i].append(Check(
                "tie_sensitivity", severity,
                f"{name}: the mean {means[i]:.{digits}f} (ties={ties}) would lie anywhere "
                f"{span} under another order of tied documents ({changed[i]} of {total} "
                "queries with ties of different grades that change it); ties='expected' "
                "gives the order-free value", (name,), changed[i], total, examples[i],
                high - low))
    return out


# ---------------------------------------------------------------------------- helpers


def _distinguishing_digits(low: float, high: float) -> int:
    """The decimals (4, trec_eval's, or more, up to 12) at which ``low`` and ``high`` print
    differently, so that a range never reads "from 0.1785 to 0.1785".

    >>> _distinguishing_digits(0.75, 1.0), _distinguishing_digits(0.17851, 0.17853)
    (4, 5)
    """
    digits = 4
    while digits < 12 and f"{low:.{digits}f}" == f"{high:.{digits}f}":
        digits += 1
    return digits


def _threshold(lists, measure) -> float:
    return _params(lists, measure)[0]["rel"]


def _params(lists, measure) -> tuple[Mapping[str, Any], Any]:
    """A measure's parameters as it computes them (None defaults taken from the conventions,
    its family's overrides applied), and those conventions."""
    return _filled_params(measure, lists.conventions)


@lru_cache(maxsize=256)
def _filled_params(measure, conventions) -> tuple[Mapping[str, Any], Any]:
    """:func:`_params`, worked out once per measure and conventions (every system's checks
    ask for every measure's: 1,000 small runs, thousands of times)."""
    conv = conventions.for_family(measure.family)
    params = dict(measure.spec.params)
    params.update(dict(measure.params))
    for name, default in (("rel", conv.relevance_threshold), ("gain", conv.gain_name),
                          ("base", conv.discount_base)):
        if name in params and params[name] is None:
            params[name] = default
    return MappingProxyType(params), conv


def _rank_cutoff(measure) -> bool:
    return measure.cutoff is not None and measure.spec.cutoff_type is int


def _means_without(names: Sequence[str], values, excluded: np.ndarray,
                   parts: Parts) -> list[str]:
    """Per system, its measures' means over its queries not ``excluded`` (for the notes)."""
    others = ~excluded
    if values is None:
        return [""] * len(parts)
    within = parts.within(others)
    names = [name for name in names if name in values]
    means = [within.means(values[name][others]) for name in names]
    out = []
    for i, count in enumerate(within.sizes):
        shown = [f"{name} {column[i]:.4f}" for name, column in zip(names, means)
                 if count and not math.isnan(column[i])]  # (NaN: no other query has a value)
        out.append(f"; the mean over the other queries: {', '.join(shown)}" if shown else "")
    return out


# ---------------------------------------------------------------------------- presentation


def checks_of(system) -> list[Check]:
    """The checks kept in a ``SystemResult`` (its ``checks``, when the evaluation kept them),
    else its warnings as warning checks."""
    kept = getattr(system, "checks", None)
    if kept:
        return [c if isinstance(c, Check) else Check.from_dict(c) for c in kept]
    return [Check("warning", "warning", w) for w in system.warnings]


def summary_line(system, hint: bool = True) -> str:
    """The one line the command line prints per system: the counts of what was ignored,
    unjudged, tied or removed, and how many warnings and notes the checks found (with
    ``hint``, where to see them)."""
    from dataclasses import fields

    from .core.lists import Diagnostics

    known = {f.name for f in fields(Diagnostics)}  # (z-scores add a count of their own)
    line = Diagnostics(**{k: v for k, v in system.diagnostics.items() if k in known}).summary()
    checks = checks_of(system)
    warnings = sum(c.severity == "warning" for c in checks)
    notes = sum(c.severity == "note" for c in checks)
    if warnings or notes:
        parts = [f"{warnings} warning{'s' * (warnings != 1)}"] if warnings else []
        parts += [f"{notes} note{'s' * (notes != 1)}"] if notes else []
        line += f"; {', '.join(parts)}" + (" (--diagnostics for details)" if hint else "")
    return line


#: Every count of :class:`~rankwise.core.lists.Diagnostics`, explained.
COUNT_LABELS = {
    "run_rows": "rows in the run",
    "run_duplicates_dropped": "duplicate documents dropped from the run",
    "run_queries": "queries in the run",
    "qrels_rows": "judgments",
    "qrels_queries": "judged queries",
    "queries_evaluated": "queries evaluated",
    "queries_only_in_run": "queries only in the run (ignored)",
    "queries_only_in_qrels": "judged queries missing from the run",
    "queries_only_in_qrels_scored_zero": "of which scored 0 (missing_queries='zero')",
    "queries_without_relevant": "queries without a relevant document",
    "rows_evaluated": "documents evaluated",
    "rows_in_run_only_queries": "documents of queries only in the run",
    "rows_beyond_depth": "documents beyond max_depth",
    "rows_unjudged_removed": "unjudged documents removed (unjudged='remove')",
    "unjudged_retrieved": "unjudged documents retrieved",
    "tied_rows": "documents in score ties",
    "queries_rank_contradicts_score": "queries whose rank column contradicts the scores",
    "qrels_duplicates_dropped": "duplicate judgments dropped",
    "negative_grades": "negative grades (treated as unjudged)",
    "queries_empty_in_run": "queries given with no document (evaluated as empty lists)",
    "queries_only_in_run_scored": "of the queries only in the run, evaluated (run_only_queries='zero')",
    "qrels_queries_without_judgments": "queries given with no judgment (ignored)",
    "run_files_skipped": "Parquet files of the run skipped (name starting with _ or .)",
    "qrels_files_skipped": "Parquet files of the judgments skipped (name starting with _ or .)",
    "zscores_missing": "per-query values without a z-score reference (rankwise.standardize)",
}


def details(result) -> str:
    """Everything the diagnostics know about a :class:`~rankwise.Result`, as text: every count
    with its examples, then every check (warnings, notes, and what was checked and found in
    order), per system. What ``rankwise evaluate --diagnostics`` prints."""
    lines = [f"conventions: {result.describe_conventions()}"]
    for name, system in result.systems.items():
        lines += ["", f"== {name}"]
        counts = system.diagnostics
        width = max(len(v) for v in COUNT_LABELS.values())
        for key, label in COUNT_LABELS.items():
            if key in counts:
                lines.append(f"  {label:<{width}}  {counts[key]}")
        for key, shown in (counts.get("examples") or {}).items():
            if shown:
                lines.append(f"  e.g. {COUNT_LABELS.get(key, key)}: {', '.join(map(str, shown))}")
        checks = checks_of(system)
        for severity in SEVERITIES:
            for c in (c for c in checks if c.severity == severity):
                example = f" (e.g. {', '.join(c.examples)})" if c.examples else ""
                lines.append(f"  {severity}: [{c.code}] {c.message}{example}")
        if not checks:
            lines.append("  no warnings")
    return "\n".join(lines) + "\n"
