"""Binary-relevance measures with trec_eval 10 semantics.

A document is relevant when its judged grade is >= ``rel`` (default: the conventions'
relevance threshold, trec_eval ``-l``). Every function returns one value per query of the
:class:`~rankwise.core.RankedLists`; work is done on the relevant retrieved rows only.
Reference for each: the trec_eval source file named in its docstring.
"""

from __future__ import annotations

import numpy as np

from ..conventions import LONGEST_LIST
from ..core.segments import count_within
from ..errors import InputError
from .registry import family

REL = {"rel": None}


def _safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0 (trec_eval's convention)."""
    out = np.zeros(len(numerator), dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def judged_nonrelevant(lists, rel: float) -> np.ndarray:
    """Per row: judged with a grade below the threshold (0 <= grade < rel)."""
    return (lists.grade >= 0) & (lists.grade < rel)


def rows_above(lists, mask: np.ndarray, rows: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """For each of ``rows`` (of queries ``segment``), the rows of its query ranked above it
    where ``mask`` holds: one running count over all rows, read at each row and at its query's
    first row."""
    seen = np.cumsum(mask, dtype=np.int32 if len(mask) < 1 << 31 else None)
    starts = lists.offsets[segment]
    return seen[rows] - mask[rows] - (seen[starts] - mask[starts])


def hits_at(lists, cutoff: int | None, rel: float) -> np.ndarray:
    """Number of relevant documents in the top ``cutoff`` of each query."""
    return count_within(lists.offsets, lists.hits(rel).rows, cutoff).astype(np.float64)


@family("P", "Precision at K: relevant in the top K / K (short lists padded with non-relevant; "
        "trec_eval m_P.c).", cutoff="required", params=REL, trec_cutoff_name="P_{cutoff}")
def precision(lists, cutoff: int, rel: float) -> np.ndarray:
    """P@K = |relevant in top K| / K.

    >>> from rankwise import evaluate
    >>> evaluate({"q": {"a": 1, "c": 1}}, {"q": {"a": 3, "b": 2, "c": 1}}, ["P@2"]).mean("P@2")
    0.5
    """
    hits = hits_at(lists, cutoff, rel)
    if lists.conventions.short_lists == "length":
        return _safe_divide(hits, np.minimum(lists.num_retrieved, cutoff))
    return hits / cutoff


@family("R", "Recall at K: relevant in the top K / all relevant (trec_eval m_recall.c).",
        cutoff="required", params=REL, trec_cutoff_name="recall_{cutoff}")
def recall(lists, cutoff: int, rel: float) -> np.ndarray:
    """R@K = |relevant in top K| / R (or / min(R, K): ``recall_denominator``), 0 when R = 0."""
    num_rel = lists.num_relevant(rel)
    if lists.conventions.recall_denominator == "min_relevant_cutoff":
        num_rel = np.minimum(num_rel, cutoff)
    return _safe_divide(hits_at(lists, cutoff, rel), num_rel)


@family("F1", "F1 at K: harmonic mean of P@K and R@K (0 when both are 0).", cutoff="required",
        params=REL)
def f1(lists, cutoff: int, rel: float) -> np.ndarray:
    """F1@K = 2 · P@K · R@K / (P@K + R@K) (= 2 · hits / (K + R) under trec_eval conventions)."""
    p, r = precision(lists, cutoff, rel), recall(lists, cutoff, rel)
    return _safe_divide(2.0 * p * r, p + r)


@family("Success", "Success at K (hit rate): 1 if a relevant document is in the top K, or "
        "without K anywhere in the list (trec_eval m_success.c; ranx hit_rate, torchmetrics "
        "RetrievalHitRate without top_k).", cutoff="optional", params=REL,
        trec_cutoff_name="success_{cutoff}")
def success(lists, cutoff: int | None, rel: float) -> np.ndarray:
    """Success@K = 1 if any relevant document is ranked within K (without K: retrieved at
    all), else 0.

    >>> from rankwise import evaluate
    >>> run = {"q": {"a": 3, "b": 2, "c": 1}}
    >>> result = evaluate({"q": {"c": 1}}, run, ["Success@2", "Success"])
    >>> result.mean("Success@2"), result.mean("Success")
    (0.0, 1.0)
    """
    return (hits_at(lists, cutoff, rel) > 0).astype(np.float64)


@family("Hits", "Hits at K: relevant documents in the top K (without K: all retrieved), "
        "averaged over queries (ranx hits; NumRelRet, trec_eval's num_rel_ret, is the same "
        "count without K, summed).", cutoff="optional", params=REL, bounds=None,
        undefined_when=None)
def hits(lists, cutoff: int | None, rel: float) -> np.ndarray:
    """Hits@K = |relevant in the top K| (= K · P@K); the aggregate is the mean over queries.

    >>> from rankwise import evaluate
    >>> qrels = {"q1": {"a": 1, "c": 1}, "q2": {"d": 1}}
    >>> run = {"q1": {"a": 3, "b": 2, "c": 1}, "q2": {"d": 1}}
    >>> result = evaluate(qrels, run, ["Hits@2", "Hits", "NumRelRet"])
    >>> result.mean("Hits@2"), result.mean("Hits"), result.mean("NumRelRet")
    (1.0, 1.5, 3.0)
    """
    return hits_at(lists, cutoff, rel)


@family("RR", "Reciprocal rank of the first relevant document, optionally within K "
        "(trec_eval m_recip_rank.c).", cutoff="optional", params=REL, trec_name="recip_rank")
def reciprocal_rank(lists, cutoff: int | None, rel: float) -> np.ndarray:
    """RR = 1 / rank of the first relevant document (0 if none within the cutoff)."""
    hits = lists.hits(rel)
    first = (hits.kth == 1) & hits.within(cutoff)
    return np.bincount(hits.segment[first], weights=1.0 / (hits.position[first] + 1),
                       minlength=lists.num_queries)


@family("AP", "Average precision: mean of the precision at each relevant document, over all R "
        "relevant; with @K only ranks within K count (trec_eval m_map.c, m_map_cut.c).",
        cutoff="optional", params=REL, trec_name="map", trec_cutoff_name="map_cut_{cutoff}")
def average_precision(lists, cutoff: int | None, rel: float) -> np.ndarray:
    """AP = (1/R) · Σ_{relevant d retrieved, rank(d) <= K} P@rank(d).

    >>> from rankwise import evaluate
    >>> run = {"q": {"d1": 5, "d2": 4, "d3": 3, "d4": 2, "d5": 1}}
    >>> round(evaluate({"q": {"d1": 1, "d3": 1, "d5": 1}}, run, ["AP"]).mean("AP"), 3)
    0.756
    """
    hits = lists.hits(rel)
    mask = hits.within(cutoff)
    total = np.bincount(hits.segment[mask], weights=hits.kth[mask] / (hits.position[mask] + 1.0),
                        minlength=lists.num_queries)
    return _safe_divide(total, ap_denominator(lists, cutoff, rel))


def ap_denominator(lists, cutoff: int | None, rel: float) -> np.ndarray:
    """AP's denominator under the ``ap_denominator`` convention: R, min(R, K), K (the list
    length without a cutoff), or the relevant documents retrieved (within K)."""
    rule = lists.conventions.ap_denominator
    if rule == "relevant_retrieved":
        return hits_at(lists, cutoff, rel)
    num_rel = lists.num_relevant(rel)
    if rule == "relevant" or cutoff is None and rule == "min_relevant_cutoff":
        return num_rel
    if rule == "min_relevant_cutoff":
        return np.minimum(num_rel, cutoff)
    return np.full(lists.num_queries, cutoff) if cutoff is not None else lists.num_retrieved


@family("gm_map", "Geometric mean of AP over queries (each AP floored at 1e-5; trec_eval "
        "m_gm_map.c). Per query it is AP.", params=REL, aggregate="gmean", trec_name="gm_map",
        per_query_in_trec=False)
def geometric_map(lists, cutoff: None, rel: float) -> np.ndarray:
    """Per query AP; averaged as exp(mean(log(max(AP, 1e-5))))."""
    return average_precision(lists, None, rel)


@family("Rprec", "R-precision: precision after R documents, R = number of relevant "
        "(trec_eval m_Rprec.c).", params=REL, trec_name="Rprec")
def r_precision(lists, cutoff: None, rel: float) -> np.ndarray:
    """Rprec = |relevant in top R| / R (0 when R = 0)."""
    num_rel = lists.num_relevant(rel)
    return _safe_divide(count_within(lists.offsets, lists.hits(rel).rows, num_rel), num_rel)


@family("RprecMult", "Precision at m·R documents: the top floor(m·R + 0.9), 0 when that is 0 "
        "(trec_eval m_Rprec_mult.c).", cutoff="required", cutoff_type=float,
        cutoff_name="multiple of R", cutoff_max=LONGEST_LIST, params=REL,
        trec_cutoff_name="Rprec_mult_{cutoff}")
def r_precision_multiple(lists, cutoff: float, rel: float) -> np.ndarray:
    """Rprec_mult_m = |relevant in the top c| / c, c = floor(m·R + 0.9) (trec_eval's rounding);
    m = 1 is R-precision.

    >>> from rankwise import evaluate
    >>> run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}   # R = 2: c = floor(3.9) = 3
    >>> evaluate({"q": {"a": 1, "c": 1}}, run, ["Rprec_mult_1.50"]).mean("RprecMult@1.5")
    0.6666666666666666
    """
    depth = multiple_of_r(lists, cutoff, rel)
    return _safe_divide(count_within(lists.offsets, lists.hits(rel).rows, depth), depth)


def multiple_of_r(lists, multiple: float, rel: float) -> np.ndarray:
    """floor(m·R + 0.9) per query: the depth of Rprec_mult_m (as m_Rprec_mult.c rounds)."""
    return np.floor(multiple * lists.num_relevant(rel) + 0.9).astype(np.int64)


@family("Bpref", "Binary preference: for each relevant retrieved document, the share of the "
        "first R judged non-relevant documents ranked below it (trec_eval m_bpref.c).",
        params=REL, trec_name="bpref")
def bpref(lists, cutoff: None, rel: float) -> np.ndarray:
    """bpref = (1/R) Σ_r (1 − min(n_r, R) / min(N, R)), n_r = judged non-relevant above r.

    Unjudged documents (and negative grades) are skipped; N counts judged non-relevant.
    """
    hits = lists.hits(rel)
    num_rel = lists.num_relevant(rel)
    num_nonrel = lists.num_judged_nonrelevant(rel)
    nonrel_above = rows_above(lists, judged_nonrelevant(lists, rel), hits.rows, hits.segment)
    r = num_rel[hits.segment]
    denominator = np.minimum(num_nonrel, num_rel)[hits.segment]
    share = np.ones(len(hits.rows))
    penalised = nonrel_above > 0
    share[penalised] -= np.minimum(nonrel_above, r)[penalised] / denominator[penalised]
    return _safe_divide(np.bincount(hits.segment, weights=share, minlength=lists.num_queries),
                        num_rel)


@family("NumQ", "Number of queries evaluated.", aggregate="sum", bounds=None, trec_name="num_q",
        per_query_in_trec=False, tie_invariant=True)
def num_q(lists, cutoff: None) -> np.ndarray:
    """1 per query; summed over queries."""
    return np.ones(lists.num_queries)


@family("NumRet", "Number of documents retrieved (after -M and -J).", aggregate="sum", bounds=None,
        trec_name="num_ret", tie_invariant=True)
def num_ret(lists, cutoff: None) -> np.ndarray:
    """Length of each ranked list."""
    return lists.num_retrieved.astype(np.float64)


@family("NumRel", "Number of relevant judged documents (R).", params=REL, aggregate="sum", bounds=None,
        trec_name="num_rel", tie_invariant=True)
def num_rel(lists, cutoff: None, rel: float) -> np.ndarray:
    """R per query."""
    return lists.num_relevant(rel).astype(np.float64)


@family("NumRelRet", "Number of relevant documents retrieved.", params=REL, aggregate="sum", bounds=None,
        trec_name="num_rel_ret", tie_invariant=True)
def num_rel_ret(lists, cutoff: None, rel: float) -> np.ndarray:
    """|relevant ∩ retrieved| per query."""
    return hits_at(lists, None, rel)


@family("SetP", "Set precision: relevant retrieved / retrieved (trec_eval m_set_P.c).",
        params=REL, trec_name="set_P", tie_invariant=True)
def set_precision(lists, cutoff: None, rel: float) -> np.ndarray:
    """set_P = |relevant ∩ retrieved| / |retrieved|."""
    return _safe_divide(hits_at(lists, None, rel), lists.num_retrieved)


@family("SetR", "Set recall: relevant retrieved / relevant (trec_eval m_set_recall.c).",
        params=REL, trec_name="set_recall", tie_invariant=True)
def set_recall(lists, cutoff: None, rel: float) -> np.ndarray:
    """set_recall = |relevant ∩ retrieved| / R."""
    return _safe_divide(hits_at(lists, None, rel), lists.num_relevant(rel))


@family("SetF", "Set F-measure (beta = relative weight of recall; trec_eval m_set_F.c).",
        params={"rel": None, "beta": 1.0}, trec_name="set_F", tie_invariant=True)
def set_f(lists, cutoff: None, rel: float, beta: float) -> np.ndarray:
    """set_F = (β+1)·P·R / (β·P + R) with set precision P and set recall R (0 if no hit)."""
    p = set_precision(lists, None, rel)
    r = set_recall(lists, None, rel)
    return _safe_divide((beta + 1.0) * p * r, beta * p + r)


@family("RelP", "Relative precision at K: relevant in the top K / min(K, R), 0 when R = 0 "
        "(trec_eval m_rel_P.c).", cutoff="required", params=REL,
        trec_cutoff_name="relative_P_{cutoff}")
def relative_precision(lists, cutoff: int, rel: float) -> np.ndarray:
    """relative_P@K = |relevant in top K| / min(K, R): P@K against the best possible."""
    return _safe_divide(hits_at(lists, cutoff, rel), np.minimum(cutoff, lists.num_relevant(rel)))


@family("SetRelP", "Relative set precision: relevant retrieved / min(retrieved, R) "
        "(trec_eval m_set_rel_P.c).", params=REL, trec_name="set_relative_P", tie_invariant=True)
def set_relative_precision(lists, cutoff: None, rel: float) -> np.ndarray:
    """set_relative_P = |relevant ∩ retrieved| / min(|retrieved|, R)."""
    return _safe_divide(hits_at(lists, None, rel),
                        np.minimum(lists.num_retrieved, lists.num_relevant(rel)))


@family("SetAP", "Set average precision: set precision × set recall (trec_eval m_set_map.c).",
        params=REL, trec_name="set_map", tie_invariant=True)
def set_average_precision(lists, cutoff: None, rel: float) -> np.ndarray:
    """set_map = |relevant ∩ retrieved|² / (|retrieved| · R)."""
    hits = hits_at(lists, None, rel)
    return _safe_divide(hits * hits, lists.num_retrieved * lists.num_relevant(rel))


@family("binG", "Binary G: the mean over the R relevant of 1 / log2(2 + documents not "
        "relevant ranked above each relevant one retrieved) (trec_eval m_binG.c).", params=REL,
        trec_name="binG")
def binary_g(lists, cutoff: None, rel: float) -> np.ndarray:
    """binG = (1/R) Σ_{relevant retrieved} 1 / log2(2 + n), n the documents ranked above it that
    are not relevant (judged or not): 1 for a relevant document that only relevant ones precede.

    >>> from rankwise import evaluate
    >>> run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}     # (1 + 1 / log2(3)) / 2
    >>> round(evaluate({"q": {"a": 1, "c": 1}}, run, ["binG"]).mean("binG"), 6)
    0.815465
    """
    hits = lists.hits(rel)
    not_relevant_above = hits.position - (hits.kth - 1)
    gain = 1.0 / np.log2(2.0 + not_relevant_above)
    return _safe_divide(np.bincount(hits.segment, weights=gain, minlength=lists.num_queries),
                        lists.num_relevant(rel))


#: trec_eval's default utility coefficients (m_utility.c: 1, -1, 0, 0) and collection size
UTILITY = {"rel": None, "rel_ret": 1.0, "nonrel_ret": -1.0, "rel_missed": 0.0,
           "nonrel_missed": 0.0, "docs": 0}


@family("Utility", "Set utility: a weighted count of the relevant and non-relevant documents "
        "retrieved and missed, 1·rel_ret − 1·nonrel_ret by default (trec_eval m_utility.c).",
        params=UTILITY, trec_name="utility", tie_invariant=True, bounds=None,
        undefined_when=None)
def utility(lists, cutoff: None, rel: float, rel_ret: float, nonrel_ret: float,
            rel_missed: float, nonrel_missed: float, docs: float) -> np.ndarray:
    """utility = rel_ret·a + nonrel_ret·b + rel_missed·c + nonrel_missed·d over the contingency
    table of one query: a relevant retrieved, b other retrieved, c relevant not retrieved and
    d = docs + a − retrieved − R (``docs``: documents in the collection, trec_eval ``-N``).

    >>> from rankwise import evaluate
    >>> run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    >>> evaluate({"q": {"a": 1, "d": 1}}, run, ["utility"]).mean("Utility")   # 1 − 2
    -1.0
    """
    found = hits_at(lists, None, rel)
    retrieved = lists.num_retrieved.astype(np.float64)
    num_rel = lists.num_relevant(rel).astype(np.float64)
    counts = (found, retrieved - found, num_rel - found, docs + found - retrieved - num_rel)
    weights = (rel_ret, nonrel_ret, rel_missed, nonrel_missed)
    with np.errstate(over="ignore", invalid="ignore"):
        value = (weights[0] * counts[0] + weights[1] * counts[1] + weights[2] * counts[2]
                 + weights[3] * counts[3])
    overflowed = np.flatnonzero(~np.isfinite(value))
    if len(overflowed):
        value[overflowed] = scaled_utility(lists.query_ids[overflowed], weights,
                                           [c[overflowed] for c in counts])
    return value


def scaled_utility(query_ids, weights: tuple[float, ...], counts: list[np.ndarray]
                   ) -> np.ndarray:
    """Utility of the queries ``query_ids`` whose weighted sum overflowed: the weights scaled
    by 2^-E (E the exponent of the largest), each query's counts by 2^-F (F that of its
    largest), the sum scaled back by 2^(E+F), exactly; a value beyond float64 raises
    :class:`~rankwise.InputError`."""
    w = np.array(weights, dtype=np.float64)
    c = np.column_stack(counts)
    e = int(np.frexp(np.abs(w).max())[1])
    f = np.frexp(np.abs(c).max(axis=1))[1]
    w = np.ldexp(w, -e)
    c = np.ldexp(c, -f[:, None])
    with np.errstate(over="ignore", invalid="ignore"):
        value = np.ldexp(w[0] * c[:, 0] + w[1] * c[:, 1] + w[2] * c[:, 2] + w[3] * c[:, 3],
                         e + f)
    beyond = np.flatnonzero(~np.isfinite(value))
    if len(beyond):
        more = f" (and {len(beyond) - 1} more queries)" if len(beyond) > 1 else ""
        raise InputError(f"Utility of query {query_ids[beyond[0]]!r}{more} is beyond the largest "
                         "float64 (1.8e+308): its weights (rel_ret, nonrel_ret, rel_missed, "
                         f"nonrel_missed = {', '.join(f'{x:g}' for x in weights)}) times its "
                         "document counts are too large; use smaller weights",
                         source="measure")
    return value


@family("NumNonRelJudgedRet", "Number of judged non-relevant documents retrieved "
        "(trec_eval m_num_nonrel_judged_ret.c).", params=REL, aggregate="sum", bounds=None,
        trec_name="num_nonrel_judged_ret", tie_invariant=True)
def num_nonrel_judged_ret(lists, cutoff: None, rel: float) -> np.ndarray:
    """|{retrieved d : 0 <= grade(d) < rel}| per query."""
    judged_nonrel = np.flatnonzero(judged_nonrelevant(lists, rel))
    counts = np.bincount(lists.segment_of(judged_nonrel), minlength=lists.num_queries)
    return counts.astype(np.float64)


@family("gm_bpref", "Geometric mean of Bpref over queries (each floored at 1e-5; trec_eval "
        "m_gm_bpref.c). Per query it is Bpref.", params=REL, aggregate="gmean",
        trec_name="gm_bpref", per_query_in_trec=False)
def geometric_bpref(lists, cutoff: None, rel: float) -> np.ndarray:
    """Per query Bpref; averaged as exp(mean(log(max(bpref, 1e-5))))."""
    return bpref(lists, None, rel)
