"""Graded-relevance measures: CG, DCG, IDCG, nDCG (trec_eval semantics) and ERR.

Gain (parameter ``gain``): ``linear`` (the grade, trec_eval and scikit-learn), ``exp``
(2^grade − 1, Burges et al. 2005; the seed articles' "industrial" DCG) or a map
``{grade: gain}`` (trec_eval ``ndcg.1=3,2=9``; unmapped grades keep gain = grade).
Unjudged documents and negative grades gain 0. Discount: 1/log_base(rank + 1), base 2.
The ideal ranking is built from all judgments of the query (trec_eval), never from the
retrieved list only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.segments import discounts, rank_within
from ..errors import InputError
from .registry import EXP_GAIN_MAX_GRADE, family

GAIN = {"gain": None, "base": None}  # None: the conventions' gain and discount_base
#: DCG and nDCG also take ``rel``: the grades below it gain 0 (0: every positive grade gains)
GAIN_FROM = {**GAIN, "rel": 0}

#: A query whose largest |gain| lies outside [2^-SAFE, 2^SAFE] has its ratios (nDCG,
#: ndcg_rel, Rndcg) computed with its gains scaled by a power of two: below 2^900 no sum of
#: gains times discounts can overflow (2^31 documents, discounts up to 2^10, and the
#: expected values' products of counts), above 2^-900 no gain times a discount is subnormal.
GAIN_SAFE_EXPONENT = 900
_LARGEST = np.finfo(np.float64).max
_SMALLEST = np.finfo(np.float64).smallest_subnormal


@dataclass(frozen=True)
class ScaledGain:
    """The gain ``gain`` (``"linear"``, ``"exp"`` or a map's pairs) times 2^-``exponent``,
    which a query whose gains are too large or too small for float64 sums is computed with:
    an exact rescaling (a power of two), so a ratio of two sums is unchanged. A gain that the
    scaling takes below the smallest float keeps its sign (5e-324: it still counts as
    gaining, in N+), one that it takes above the largest float (a grade of another query)
    stays the largest float."""

    gain: Any
    exponent: int


def unscaled(gain):
    """The gain a :class:`ScaledGain` scales (``gain`` itself for the others)."""
    return gain.gain if isinstance(gain, ScaledGain) else gain


def check_exp_gain(top: float) -> None:
    """Raise :class:`~rankwise.InputError` when the grade ``top`` is too large for an
    exponential gain (2^g − 1, and ERR's 2^g_max, overflow float64 above grade 1023)."""
    if top > EXP_GAIN_MAX_GRADE:
        raise InputError(f"grade {top:g} is too large for exponential gain (2^g - 1 overflows "
                         f"above grade {EXP_GAIN_MAX_GRADE}): use linear gain, a gain map or "
                         "smaller grades", source="judgments")


def gains(grades: np.ndarray, gain) -> np.ndarray:
    """Gain of each grade; NaN (unjudged) and negative grades gain 0."""
    if isinstance(gain, ScaledGain):
        raw = gains(grades, gain.gain)
        with np.errstate(over="ignore"):  # another query's grade: the largest float
            scaled = np.clip(np.ldexp(raw, -gain.exponent), -_LARGEST, _LARGEST)
        lost = (scaled == 0) & (raw != 0)
        scaled[lost] = np.copysign(_SMALLEST, raw[lost])
        return scaled
    g = np.where(grades >= 0, grades, 0.0)  # NaN >= 0 is False
    if gain == "linear":
        return g
    if gain == "exp":
        check_exp_gain(float(g.max(initial=0.0)))
        return np.exp2(g) - 1.0
    mapped = g.copy()
    for grade, value in gain:
        mapped[grades == grade] = value
    return mapped


def gain_from(levels: np.ndarray, gain, rel: float):
    """``gain`` with the grades below ``rel`` gaining 0 (ranx's ``-l``: ``ndcg@10-l2``), as a
    gain map of the grade ``levels`` (every judged grade there is); ``gain`` itself when
    ``rel`` is 0 (no grade below it gains anything).

    >>> from rankwise import evaluate
    >>> run = {"q": {"a": 3, "b": 2, "c": 1}}
    >>> qrels = {"q": {"a": 1, "b": 0, "c": 2}}
    >>> round(evaluate(qrels, run, ["nDCG(rel=2)"]).mean("nDCG(rel=2)"), 4)  # 2/log2(4) / 2
    0.5
    """
    if not rel > 0:
        return gain
    levels = np.unique(levels[levels >= 0])
    level_gain = np.zeros(len(levels))
    kept = levels >= rel
    level_gain[kept] = gains(levels[kept], gain)
    return tuple(zip(levels.tolist(), level_gain.tolist()))


def dcg_at(lists, cutoff, gain, base: float) -> np.ndarray:
    """Σ_{rank i <= K} gain(grade_i) / log_base(i + 1), per query (K: a number, one per query,
    or None for the whole list)."""
    row_gain, position, segment = _gaining_rows(lists, cutoff, gain)
    if len(row_gain) == 0:
        return np.zeros(lists.num_queries)
    weight = row_gain * discounts(int(position.max()) + 1, base,
                                  lists.conventions.discount)[position]
    return np.bincount(segment, weights=weight, minlength=lists.num_queries)


def _gaining_rows(lists, cutoff: int | None, gain
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The gains, ranks (0-based) and queries of the rows ranked within the cutoff whose gain
    is not 0 (judged rows only: unjudged documents gain nothing), in row order. Those of the
    whole lists are found once per gain and kept with the lists (a report's nDCG@1..100
    curves of two 100k-query runs asked for them 202 times: 6.9 s -> 1.0 s under a
    profiler), then cut at each cutoff."""
    cache = lists.__dict__.setdefault("_gaining", {})
    if gain not in cache:
        rows = lists.judged_rows
        row_gain = gains(lists.grade[rows], gain)
        nonzero = row_gain != 0
        rows = rows[nonzero]
        segment = lists.segment_of(rows)
        cache[gain] = row_gain[nonzero], lists.position_of(rows, segment), segment
    found = cache[gain]
    if cutoff is None:
        return found
    within = found[1] < (cutoff[found[2]] if isinstance(cutoff, np.ndarray) else cutoff)
    return tuple(column[within] for column in found)


def ideal_dcg_at(lists, cutoff, gain, base: float) -> np.ndarray:
    """DCG of the ideal ranking of all the query's judgments, per query: within ``cutoff`` (a
    number, one per query, or None for all).

    The ideal ranking's gaining rows (grades by gain descending, each as many times as the
    query has judgments of it, cut at K) are summed as :func:`dcg_at` sums a run's, row by
    row in rank order (``np.bincount``): a ranking in the ideal order has nDCG exactly 1, as
    in trec_eval, where a sum from prefix sums of the discounts was off by an ulp or two.
    """
    by_gain, level_gain = levels_by_gain(lists, gain)
    size = lists.num_queries
    if len(by_gain) == 0 or size == 0:
        return np.zeros(size)
    counts = lists.ideal_level_counts[:, by_gain]
    if cutoff is not None:
        cumulative = np.minimum(np.cumsum(counts, axis=1),
                                cutoff if np.ndim(cutoff) == 0 else np.asarray(cutoff)[:, None])
        counts = np.diff(cumulative, axis=1, prepend=0)
    per_query = counts.sum(axis=1)
    total = int(per_query.sum())
    if total == 0:
        return np.zeros(size)
    row_gain = np.repeat(np.tile(level_gain, size), counts.ravel())
    query = np.repeat(np.arange(size, dtype=np.int32), per_query)
    position = np.arange(total, dtype=np.int64)
    position -= np.repeat(np.cumsum(per_query) - per_query, per_query)
    weight = row_gain * discounts(int(per_query.max()), base, lists.conventions.discount)[position]
    return np.bincount(query, weights=weight, minlength=size)


def ideal_dcg_of(lists, queries: np.ndarray, depth, gain, base: float) -> np.ndarray:
    """:func:`ideal_dcg_at` for each of ``queries`` (repeated as needed), within ``depth``: a
    number, or one per element of ``queries``; for the measures that ask for it at many
    depths of one query (each relevant document's rank).

    With grades sorted by gain (descending, positive gains only) and C_j the cumulative count
    of judgments down to the j-th grade, IDCG@K = Σ_j gain_j · (S[min(C_j, K)] − S[min(C_{j-1}, K)])
    where S[k] is the sum of the first k discounts: no row per rank (the value may differ
    from :func:`ideal_dcg_at`'s in the last bits).
    """
    by_gain, level_gain = levels_by_gain(lists, gain)
    size = len(queries)
    if len(by_gain) == 0 or size == 0:
        return np.zeros(size)
    counts = lists.ideal_level_counts[queries]
    cumulative = np.cumsum(counts[:, by_gain], axis=1)
    if depth is not None:
        cumulative = np.minimum(cumulative, depth if np.ndim(depth) == 0 else
                                np.asarray(depth)[:, None])
    longest = int(cumulative[:, -1].max())
    prefix = np.concatenate(([0.0], np.cumsum(discounts(longest, base,
                                                         lists.conventions.discount))))
    upper = prefix[cumulative]
    ideal = np.zeros(size)
    below = np.zeros(size)
    for j, gain_j in enumerate(level_gain):  # a few grades: same sum order per query
        ideal += gain_j * (upper[:, j] - below)
        below = upper[:, j]
    return ideal


def levels_by_gain(lists, gain) -> tuple[np.ndarray, np.ndarray]:
    """The judged grade levels with a positive gain, by gain descending (ties: by grade), and
    their gains."""
    level_gain = gains(lists.levels, gain)
    by_gain = np.argsort(-level_gain, kind="stable")
    by_gain = by_gain[level_gain[by_gain] > 0]
    return by_gain, level_gain[by_gain]


def _level_gains(lists, gain) -> np.ndarray:
    """The gain of every judged grade level; exponential gain: 0 for the levels above grade
    1023 (whatever reads them refuses them)."""
    levels = lists.levels
    if unscaled(gain) == "exp":
        levels = np.where(levels <= EXP_GAIN_MAX_GRADE, levels, 0.0)
    return gains(levels, gain)


def largest_gains(lists, gain) -> tuple[np.ndarray, np.ndarray]:
    """Per query, the largest |gain| and the largest positive gain (0 for none) among its
    judgments: those the ideal ranks, which hold every judged row it retrieved."""
    level_gain = _level_gains(lists, gain)
    if lists.num_queries == 0 or len(level_gain) == 0:
        return np.zeros(lists.num_queries), np.zeros(lists.num_queries)
    present = lists.ideal_level_counts > 0
    return (np.max(np.where(present, np.abs(level_gain), 0.0), axis=1),
            np.max(np.where(present, level_gain, 0.0), axis=1))


def with_gains_scaled(measure, lists, params: dict[str, Any], compute) -> np.ndarray:
    """``compute(lists, params)`` (one value per query), where a query's gains would
    overflow a sum (or, for a ratio, lose digits to subnormal numbers) computed with its
    gains scaled by 2^-e, a power of two: exact, and a ratio of two sums is unchanged.

    Which queries and which e: :func:`rescue_exponents`, from the gains the measure uses
    (DCG's and nDCG's grades below ``rel`` gaining 0: a grade below it decides nothing); the
    value scaled back and checked: :func:`unscale`. A sum (``gain_scaling="proportional"``:
    DCG, IDCG, CG, RWRR) is computed as usual first, a ratio (``"invariant"``: nDCG,
    ndcg_rel, Rndcg) is computed scaled where one look at the grade levels finds a gain
    outside 2^±900 (none does: the usual case). A query whose gains are in range is computed
    as without this function, bit for bit; the others in groups of one exponent each (a few
    hundred at most)."""
    gain = params["gain"]
    used = gain_from(lists.levels, gain, params["rel"]) if measure.spec.params == GAIN_FROM \
        else gain
    high = 2.0 ** GAIN_SAFE_EXPONENT
    if measure.spec.gain_scaling == "proportional":
        with np.errstate(over="ignore", invalid="ignore"):
            values = compute(lists, params)
        if np.isfinite(values).all():
            return values
        largest, positive = largest_gains(lists, used)
        rescue, exponent = rescue_exponents("proportional", largest, positive, values)
    else:
        level_gain = np.abs(_level_gains(lists, used))
        level_gain = level_gain[level_gain > 0]
        if len(level_gain) == 0 or (level_gain.max() <= high and level_gain.min() >= 1 / high):
            return compute(lists, params)
        largest, positive = largest_gains(lists, used)
        rescue, exponent = rescue_exponents("invariant", largest, positive)
        if not rescue.any():
            return compute(lists, params)
        values = np.empty(lists.num_queries)
        values[~rescue] = _on(lists, np.flatnonzero(~rescue), params, compute)
    for e in np.unique(exponent[rescue]):
        queries = np.flatnonzero(rescue & (exponent == e))
        scaled_gain = {**params, "gain": ScaledGain(gain, int(e))}
        with np.errstate(over="ignore", invalid="ignore"):
            scaled = _on(lists, queries, scaled_gain, compute)
        values[queries] = unscale(measure, lists.query_ids[queries], scaled, int(e),
                                  largest[queries], positive[queries])
    return values


def rescue_exponents(scaling: str, largest: np.ndarray, positive: np.ndarray,
                     values: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Which queries a measure computes with its gains scaled, and the binary exponent e of
    each (every gain times 2^-e), from each query's largest |gain| and largest positive gain
    (0 for none) among its judgments (:func:`largest_gains`).

    A sum (``scaling="proportional"``) is rescued where its plain ``values`` are not finite
    (inf, or NaN from inf − inf), e that of its largest |gain|; a ratio (``"invariant"``)
    where its largest |gain| lies outside [2^-900, 2^900], e that of its largest positive
    gain, the ideal's (else of its largest |gain|).

    >>> rescue, e = rescue_exponents("invariant", np.array([1e300, 3.0]), np.array([1e300, 3.0]))
    >>> rescue.tolist(), int(e[0])
    ([True, False], 997)
    """
    if scaling == "proportional":
        return ~np.isfinite(values), np.frexp(largest)[1]
    high = 2.0 ** GAIN_SAFE_EXPONENT
    rescue = (largest > high) | ((largest > 0) & (largest < 1 / high))
    return rescue, np.frexp(np.where(positive > 0, positive, largest))[1]


def unscale(measure, query_ids: np.ndarray, scaled: np.ndarray, exponent: int,
            largest: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """The values of queries computed with their gains times 2^-``exponent``: a sum times
    2^exponent, a ratio as it is. Raise :class:`~rankwise.InputError` where one is beyond
    float64 (a sum beyond 1.8e308; a ratio beyond it: negative gains some 2^1000 times
    larger than the positive ones; NaN, a ratio's ideal DCG of 0, only where no gain is
    positive). ``query_ids``, ``largest`` and ``positive`` (:func:`largest_gains`) are
    those of the queries, one each."""
    if measure.spec.gain_scaling == "proportional":
        _check_in_range(measure, query_ids, scaled, exponent, largest)
        return np.ldexp(scaled, exponent)
    _check_in_range(measure, query_ids, np.where(positive > 0, scaled, 0.0), 0, largest)
    return scaled


def _on(lists, queries: np.ndarray, params: dict[str, Any], compute) -> np.ndarray:
    """``compute`` on the lists of ``queries`` only (ascending query indices)."""
    if len(queries) == lists.num_queries:
        return compute(lists, params)
    return compute(lists.select_queries(queries), params)


def _check_in_range(measure, query_ids: np.ndarray, scaled: np.ndarray, exponent: int,
                    largest: np.ndarray) -> None:
    """Raise :class:`~rankwise.InputError` where ``scaled`` · 2^exponent (each query's value)
    is not finite: beyond the largest float64."""
    with np.errstate(over="ignore"):
        beyond = np.flatnonzero(~np.isfinite(np.ldexp(scaled, exponent)))
    if len(beyond) == 0:
        return
    q = beyond[0]
    size = abs(scaled[q])
    about = " is"
    if np.isfinite(size) and size > 0:
        at = math.log10(size) + exponent * math.log10(2.0)
        sign = "-" if scaled[q] < 0 else ""
        about = f" is about {sign}{10 ** (at % 1):.2f}e+{int(at // 1)},"
    more = f" (and {len(beyond) - 1} more queries)" if len(beyond) > 1 else ""
    raise InputError(f"{measure} of query {query_ids[q]!r}{more}{about} beyond the "
                     f"largest float64 (1.8e+308): its gains are too large (the largest "
                     f"{largest[q]:.4g}); use smaller gains, or a ratio such as nDCG, which is "
                     "computed whatever their size (unless negative gains outweigh the "
                     "positive ones beyond float64)", source="judgments")


def _ratio(dcg: np.ndarray, ideal: np.ndarray) -> np.ndarray:
    """DCG / IDCG, NaN where IDCG = 0 (the ``idcg_zero`` convention decides what it becomes)."""
    out = np.full(len(dcg), np.nan)
    np.divide(dcg, ideal, out=out, where=ideal > 0)
    return out


@family("nDCG", "Normalised DCG: DCG / ideal DCG from all judgments, 0 when the ideal is 0 "
        "(trec_eval m_ndcg.c; with @K m_ndcg_cut.c); grades below rel gain 0.", cutoff="optional",
        params=GAIN_FROM, graded=True,
        undefined_when="idcg_zero", gain_scaling="invariant",
        trec_name="ndcg", trec_cutoff_name="ndcg_cut_{cutoff}")
def ndcg(lists, cutoff: int | None, gain, base: float, rel: float) -> np.ndarray:
    """nDCG@K = DCG@K / IDCG@K (Järvelin & Kekäläinen 2002), the grades below ``rel`` gaining
    0 in both (:func:`gain_from`).

    >>> from rankwise import evaluate
    >>> run = {"q": {"a": .1, "b": .2, "c": .3, "d": 4, "e": 70}}
    >>> qrels = {"q": {"a": 10, "b": 0, "c": 0, "d": 1, "e": 5}}
    >>> round(evaluate(qrels, run, ["nDCG"]).mean("nDCG"), 4)
    0.6957
    >>> round(evaluate(qrels, run, ["nDCG(gain=exp)"]).mean("nDCG(gain=exp)"), 4)
    0.4097
    """
    gain = gain_from(lists.levels, gain, rel)
    return _ratio(dcg_at(lists, cutoff, gain, base), ideal_dcg_at(lists, cutoff, gain, base))


@family("DCG", "Discounted cumulative gain Σ gain / log2(rank + 1); grades below rel gain 0.",
        cutoff="optional", params=GAIN_FROM, graded=True, bounds=None, undefined_when=None,
        gain_scaling="proportional")
def dcg(lists, cutoff: int | None, gain, base: float, rel: float) -> np.ndarray:
    """DCG@K = Σ_{i<=K} gain_i / log_base(i + 1), the grades below ``rel`` gaining 0."""
    return dcg_at(lists, cutoff, gain_from(lists.levels, gain, rel), base)


@family("IDCG", "Ideal DCG: the DCG of the best ordering of all judged documents.",
        cutoff="optional", params=GAIN, graded=True, bounds=None, tie_invariant=True,
        gain_scaling="proportional")
def idcg(lists, cutoff: int | None, gain, base: float) -> np.ndarray:
    """IDCG@K, from all judgments of the query."""
    return ideal_dcg_at(lists, cutoff, gain, base)


@family("CG", "Cumulative gain: Σ gain over the top K (no discount).", cutoff="optional",
        params={"gain": None}, graded=True, bounds=None, gain_scaling="proportional")
def cumulative_gain(lists, cutoff: int | None, gain) -> np.ndarray:
    """CG@K = Σ_{i<=K} gain_i."""
    row_gain, _, segment = _gaining_rows(lists, cutoff, gain)
    return np.bincount(segment, weights=row_gain, minlength=lists.num_queries)


@family("ERR", "Expected reciprocal rank (cascade model), R_i = (2^g − 1) / 2^g_max with g_max "
        "the largest grade in the judgments unless given (Chapelle et al. 2009).",
        cutoff="optional", params={"max_grade": None}, graded=True)
def err(lists, cutoff: int | None, max_grade: float | None) -> np.ndarray:
    """ERR@K = Σ_{r<=K} (1/r) · R_r · Π_{i<r} (1 − R_i).

    >>> from rankwise import evaluate
    >>> run = {"q": {"a": 3, "b": 2, "c": 1}}
    >>> round(evaluate({"q": {"a": 2, "b": 3, "c": 0}}, run, ["ERR"]).mean("ERR"), 3)
    0.648
    """
    top = lists.max_grade if max_grade is None else float(max_grade)
    check_exp_gain(top)
    grade = np.minimum(np.where(lists.grade > 0, lists.grade, 0.0), top)
    rows = np.flatnonzero(grade > 0)
    position = lists.position_of(rows)
    if cutoff is not None:
        within = position < cutoff
        rows, position = rows[within], position[within]
    if len(rows) == 0:
        return np.zeros(lists.num_queries)
    stop = (np.exp2(grade[rows]) - 1.0) / np.exp2(top)
    segment = lists.segment_of(rows)
    # walk the k-th gaining document of every query at once: exact, per query, no logs
    kth = rank_within(segment)
    by_kth = np.argsort(kth, kind="stable")
    bounds = np.searchsorted(kth[by_kth], np.arange(1, int(kth.max()) + 2))
    still_looking = np.ones(lists.num_queries)
    out = np.zeros(lists.num_queries)
    for k in range(len(bounds) - 1):
        at = by_kth[bounds[k]:bounds[k + 1]]
        q = segment[at]
        out[q] += stop[at] * still_looking[q] / (position[at] + 1.0)
        still_looking[q] *= 1.0 - stop[at]
    return out
