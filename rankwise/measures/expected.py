"""Exact expected values of ranking measures over all orderings of tied documents.

With ``ties="expected"`` every order-based measure is the exact mean of its value over all
orderings of the documents that share a score (McSherry & Najork, "Computing Information
Retrieval Performance Measures Efficiently in the Presence of Tied Scores", ECIR 2008), each
tie group ordered uniformly at random and independently of the others. Nothing is sampled:
every family has a closed form or an exact vectorised method, below.

Notation: the rows of a query are cut into tie groups (consecutive rows with equal scores). A
group starts at 0-based position ``s``, holds ``n`` documents of which ``r`` are relevant
(hits, as ``lists.hits`` defines them), and ``H`` hits are ranked above it; ``m`` is the number
of its positions within the cutoff K, ``clip(K - s, 0, n)``. A position ``j`` (1-based) of a
group holds a hit with probability ``r / n``.

* **Linear measures** (P, R, F1, RelP, Rprec, RprecMult, CG, DCG, nDCG, RWRR, ARHR, RBP,
  RBPResid, Judged, Unjudged): the expected value at a position is the group's mean, so
  E[hits@K] = Σ_groups r·m/n and E[DCG@K] = Σ_positions mean gain of the group / log_b(rank + 1).
  F1 = 2·hits / (P's + R's denominator) is linear in the hits too.
* **Success@K** = 1 − P(no hit above K): only the group straddling K is random, and it has no
  hit in its first m positions with probability C(n−r, m) / C(n, m).
* **RR**: the first hit lies in the first group with r > 0, at its j-th position with
  probability C(n−j, r−1) / C(n, r).
* **AP**: given a hit at position j of its group, the expected number of hits before it in the
  group is (r−1)(j−1)/(n−1), so E[Σ precision at hits] is a sum over positions. With the
  denominator ``relevant_retrieved`` and a cutoff, the number Z of hits of the straddling group
  within K is hypergeometric and the ratio is averaged exactly over its values.
* **infAP**: a hit's term depends on the hits, judged non-relevant and unjudged documents above
  it; within its group it takes a uniform position t, and the documents of the group above it
  are a uniform t-subset of the others (a multivariate hypergeometric draw). The term is linear
  in the number of documents without a judgment among them, so given the hits a and judged
  non-relevant b above it that number is replaced by its mean; (t, a, b) are summed exactly
  (about n·r·b/2 terms for a group of n documents with r hits and b judged non-relevant).
* **binG**: a hit at position t of its group has a hypergeometric number of the group's other
  hits above it; the term 1/log2(2 + documents not relevant above) is averaged over both.
* **G**: a gaining document's term depends on the sum of the gains above it. Outside its group
  that sum is fixed; inside, the documents above it are a uniform subset of the group's others,
  so the term is averaged over every count of each distinct gain among them (a multivariate
  hypergeometric draw): the product of (count + 1) over the group's distinct gains, per
  gaining document's gain.
* **Bpref**: a hit's rank among the b judged non-relevant documents of its own group is uniform
  on 0..b (only their relative order matters), so min(n_r, R) is averaged in closed form.
* **ERR** (cascade): the product of (1 − R_i) over earlier groups does not depend on their
  order; inside a group, the ℓ-th gaining document (gain > 0) of a random order is a uniformly
  random one of the a gaining documents with the ℓ−1 before it a uniform subset (their mean
  stopping products are elementary symmetric means, by dynamic programming over the documents),
  and its position is the ℓ-th order statistic of a uniform a-subset of the n positions.
* **IPrec / 11pt_avg**: interpolated precision at recall level p is the maximum of k/rank_k
  over hits k >= t. The k-th hit's group is fixed; within a group the maximum X_g depends only
  on the positions of its hits, independent across groups, so P(max < v) = Π_g P(X_g < v).
  P(X_g < v) is the probability that the order statistics of a uniform r-subset clear lower
  bounds, computed exactly by a recursion over the last violated bound (O(r²) per value).
  E[max] sums P(max >= v) over the values v the maximum can take above its sure lower bound.

Probabilities of hypergeometric type are ratios of binomial coefficients: exact (correctly
rounded) ones for groups of up to 64 documents; beyond, logs of short products where one side
of C(n, k) is at most 32 (relative error a few units of the last place) and log-factorials
(``math.lgamma``, relative error about 1e-16 · ln n!) otherwise.
Cost: linear in the number of rows for every family but ERR (rows × gaining documents of the
group, for the tie groups with several gaining documents) and IPrec / 11pt_avg (per level, the
values the maximum can take times r²/2 for each tie group with r > 1 hits: about n·r³/2 for a
group of n documents; fast for thousands of documents with a few hits). An input that would
need more than :data:`WORK_LIMIT` steps raises :class:`~rankwise.errors.MeasureError`; nothing
is approximated.

:func:`tie_bounds` gives the optimistic and pessimistic values (tie groups ordered by grade,
best or worst first) and :func:`straddling_ties` counts the queries whose value at a cutoff
can depend on the order of tied documents.

Examples
--------
Two documents tied at the top, one of them relevant: P@1 is 1/2 and RR is (1 + 1/2) / 2.

>>> from rankwise import evaluate
>>> qrels = {"q": {"a": 1, "b": 0}}
>>> run = {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}
>>> result = evaluate(qrels, run, ["P@1", "RR", "AP"], ties="expected")
>>> result.mean("P@1"), result.mean("RR"), result.mean("AP")
(0.5, 0.75, 0.75)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..core.segments import discounts, rank_within, segmented_cumsum, segmented_scan
from ..errors import MeasureError
from .binary import _safe_divide, ap_denominator, judged_nonrelevant, multiple_of_r
from .curves import _relevant_needed
from .graded import _ratio, gains, ideal_dcg_at, ideal_dcg_of
from .inferred import outside_pool, precision_terms
from .judged import ranks_counted
from .ndcg_averages import gaining_judged, rank_average
from .normalized_gain import cost_of_ideal, total_judged_gain
from .rbp import relevance_of_rows

#: Most elementary steps one expected value may take before a MeasureError (about a minute).
WORK_LIMIT = 5e8
_CHUNK = 1 << 22  # matrix cells held at once in the interpolated-precision recursion

#: family name -> function(lists, groups, cutoff, **params) giving the expected value per query
EXPECTED: dict[str, Callable[..., np.ndarray]] = {}


def expected_for(*names: str) -> Callable:
    """Register the expected-value method of the families ``names``."""

    def register(method: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
        for name in names:
            EXPECTED[name] = method
        return method

    return register


def expected_value(measure, lists, params: dict[str, Any]) -> np.ndarray:
    """The exact expected value of ``measure`` per query over all orderings of tied documents.

    Parameters
    ----------
    measure : Measure
        An order-based measure (``measure.spec.order_based`` and not ``tie_invariant``).
    lists : RankedLists
        Ranked lists under the measure's conventions (``Measure.compute`` passes them); the
        order of rows within a tie group does not matter.
    params : dict
        The measure's parameters, filled from the conventions (``rel``, ``gain``, ``base``...).

    Returns
    -------
    numpy.ndarray
        One float per query (nDCG: NaN where the ideal DCG is 0, as the family gives).

    Raises
    ------
    MeasureError
        For a family without an expected-value method, or an input whose exact value would
        take more than :data:`WORK_LIMIT` steps.
    """
    method = EXPECTED.get(measure.family)
    if method is None:
        raise MeasureError(f"ties='expected' is not available for {measure.family} (no exact "
                           "expected value over tie orders is implemented for it); use "
                           "ties='optimistic', 'pessimistic' or an ordering policy",
                           source="measure", value=str(measure))
    return method(lists, TieGroups.of(lists), measure.cutoff, **params)


# ---------------------------------------------------------------------------- tie groups


@dataclass(frozen=True)
class TieGroups:
    """The tie groups of ranked lists: rows of one query with equal scores, consecutive."""

    start: np.ndarray  # first row of every group
    size: np.ndarray  # n: documents in every group
    query: np.ndarray  # query of every group (non-decreasing)
    position: np.ndarray  # s: 0-based rank of every group's first document
    of_row: np.ndarray  # group of every row
    index: np.ndarray  # 0-based index of every row within its group
    num_queries: int

    @classmethod
    def of(cls, lists) -> TieGroups:
        """The tie groups of ``lists``, found once and kept with them (every measure asks:
        nine measures at 10M rows found them nine times, 1.1 s)."""
        cache = lists.__dict__
        if "_tie_groups" not in cache:
            of_row = lists.tie_group
            n = len(of_row)
            if n:
                start = np.flatnonzero(np.diff(of_row, prepend=-1))
            else:
                start = np.zeros(0, dtype=np.int64)
            size = np.diff(np.append(start, n))
            query = lists.segment_of(start)
            cache["_tie_groups"] = cls(start, size, query, lists.position_of(start, query),
                                       of_row, np.arange(n) - start[of_row], lists.num_queries)
        return cache["_tie_groups"]

    @property
    def num_groups(self) -> int:
        return len(self.start)

    def count(self, rows: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Per group, the number of ``rows`` in it (or the sum of their ``weights``)."""
        if weights is None:
            return np.bincount(self.of_row[rows], minlength=self.num_groups)
        return _total(self.of_row[rows], weights, self.num_groups)

    def before(self, per_group: np.ndarray) -> np.ndarray:
        """Per group, the sum of ``per_group`` over the earlier groups of its query. Counts
        (integers) subtract running totals over all queries, exactly; fractions are summed
        within the query, so that the rounding does not depend on the queries before (nor on
        how the queries are split into chunks)."""
        if self.num_groups == 0:
            return per_group.copy()
        if per_group.dtype.kind == "f":
            inclusive = segmented_cumsum(per_group, self.query)
            out = np.zeros(self.num_groups)
            later = self.query[1:] == self.query[:-1]
            out[1:][later] = inclusive[:-1][later]
            return out
        total = np.cumsum(per_group) - per_group
        return total - total[self._first_of_query]

    @functools.cached_property
    def _first_of_query(self) -> np.ndarray:
        """Per group, the first group of its query (one search per query, not per group)."""
        return np.searchsorted(self.query, np.arange(self.num_queries))[self.query]

    def within(self, cutoff) -> np.ndarray:
        """m: positions of every group ranked within ``cutoff`` (a number, one per query, or
        None for all)."""
        if cutoff is None:
            return self.size.copy()
        k = cutoff[self.query] if isinstance(cutoff, np.ndarray) else cutoff
        return np.clip(k - self.position, 0, self.size)

    def per_query(self, values: np.ndarray, groups: np.ndarray | None = None) -> np.ndarray:
        """Sum of per-group ``values`` (of ``groups``, default all) per query."""
        query = self.query if groups is None else self.query[groups]
        return _total(query, values, self.num_queries)


# ---------------------------------------------------------------------------- numerics

_LOG_FACTORIALS = np.zeros(1)
_SMALL = 64  # binomials of n <= 64 from an exact table (correctly rounded), larger ones by logs
_CHOOSE = np.array([[float(math.comb(n, k)) for k in range(_SMALL + 1)]
                    for n in range(_SMALL + 1)])


def _log_factorials(top: int) -> np.ndarray:
    """ln(i!) for i = 0..top (at least), from ``math.lgamma``; grown when a larger group needs
    it, then kept."""
    global _LOG_FACTORIALS
    if top >= len(_LOG_FACTORIALS):
        _LOG_FACTORIALS = np.array([math.lgamma(i + 1.0) for i in range(max(top + 1, 256))])
    return _LOG_FACTORIALS


def _log_choose(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """ln C(n, k) elementwise for integers; -inf where k < 0 or k > n.

    With k' = min(k, n − k) <= 32 (the usual case: few hits in a large group) it is the log of
    Π_{u<k'} (n − u)/(u + 1), accurate to a few units of the last place; otherwise
    ln n! − ln k! − ln (n−k)! from the table, whose absolute error is about 1e-16 · ln n!.
    """
    n, k = np.broadcast_arrays(np.asarray(n, dtype=np.int64), np.asarray(k, dtype=np.int64))
    valid = (k >= 0) & (k <= n)
    out = np.full(n.shape, -np.inf)
    short = np.minimum(k, n - k)
    few = valid & (short <= 32)
    if few.any():
        nf, sf = n[few].astype(np.float64), short[few]
        product = np.ones(len(sf))
        for u in range(int(sf.max())):
            product = np.where(u < sf, product * ((nf - u) / (u + 1.0)), product)
        out[few] = np.log(product)
    many = valid & ~few
    if many.any():
        table = _log_factorials(int(n[many].max()))
        nm, km = n[many], k[many]
        out[many] = table[nm] - table[km] - table[nm - km]
    return out


def _log_choose_table(top: int, width: int) -> np.ndarray:
    """ln C(a, i) for a = 0..top, i = 0..width (-inf where i > a), each a sum of i logs:
    absolute error below about 1e-16 · i · ln a."""
    a = np.arange(top + 1, dtype=np.float64)
    table = np.full((top + 1, width + 1), -np.inf)
    table[:, 0] = 0.0
    for i in range(1, width + 1):
        ok = a >= i
        table[ok, i] = table[ok, i - 1] + np.log((a[ok] - i + 1) / i)
    return table


def _choose_ratio(numerator: list[tuple[Any, Any]], denominator: tuple[Any, Any]) -> np.ndarray:
    """Π_i C(n_i, k_i) / C(n, k) elementwise (broadcast), 0 where a numerator binomial is 0 or
    the denominator is 0 (callers never need that case).

    Binomials of n <= 64 come from an exact table (relative error a few units of the last
    place); larger ones from :func:`_log_choose`.
    """
    terms = [tuple(np.asarray(x, dtype=np.int64) for x in pair) for pair in numerator]
    den_n, den_k = (np.asarray(x, dtype=np.int64) for x in denominator)
    shape = np.broadcast_shapes(den_n.shape, den_k.shape, *(x.shape for t in terms for x in t))
    small = np.broadcast_to(den_n <= _SMALL, shape).copy()
    for n, _ in terms:
        small &= n <= _SMALL
    out = np.zeros(shape)
    if small.any():
        value = np.ones(shape)
        for n, k in terms:
            value = value * _table_choose(n, k)
        below = np.broadcast_to(_table_choose(den_n, den_k), shape)
        ok = small & (below > 0)
        out[ok] = value[ok] / below[ok]
    if not small.all():
        big = ~small
        logs = np.zeros(int(big.sum()))
        for n, k in terms:
            logs += _log_choose(np.broadcast_to(n, shape)[big], np.broadcast_to(k, shape)[big])
        log_below = _log_choose(np.broadcast_to(den_n, shape)[big],
                                np.broadcast_to(den_k, shape)[big])
        ok = np.isfinite(logs) & np.isfinite(log_below)
        value = np.zeros(len(logs))
        value[ok] = np.exp(logs[ok] - log_below[ok])
        out[big] = value
    return out


def _table_choose(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """C(n, k) from the exact table where n <= 64 (0 where k is out of range or n too big)."""
    valid = (k >= 0) & (k <= n) & (n <= _SMALL)
    return np.where(valid, _CHOOSE[np.clip(n, 0, _SMALL), np.clip(k, 0, _SMALL)], 0.0)


def _total(index: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """Σ weights per index value 0..size−1, as floats (also when nothing is summed)."""
    return np.bincount(index, weights=weights, minlength=size).astype(np.float64, copy=False)


def _ragged(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For items with ``counts``: the item of every element and its 0-based index in it."""
    counts = np.asarray(counts, dtype=np.int64)
    item = np.repeat(np.arange(len(counts)), counts)
    first = np.cumsum(counts) - counts
    return item, np.arange(int(counts.sum())) - first[item]


def _exclusive_cumprod(values: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """Π values[j] over the earlier j of the same (sorted) segment: the segment's inclusive
    product scan (:func:`~rankwise.core.segments.segmented_scan`), shifted by one."""
    n = len(values)
    if n == 0:
        return values.astype(np.float64)
    first = np.searchsorted(segment, segment)
    inclusive = segmented_scan(values, segment, np.multiply)
    out = np.ones(n)
    later = np.arange(n) > first
    out[later] = inclusive[np.flatnonzero(later) - 1]
    return out


def _size_buckets(sizes: np.ndarray) -> list[np.ndarray]:
    """Indices of ``sizes`` (>= 1) grouped by size (by the power of two above it when there are
    many sizes), so that padding to the largest size of a bucket at most doubles the work."""
    if len(sizes) == 0:
        return []
    distinct = np.unique(sizes)
    if len(distinct) <= 16:
        bucket = np.searchsorted(distinct, sizes)
    else:
        bucket = np.ceil(np.log2(np.maximum(sizes, 1))).astype(np.int64)
    order = np.argsort(bucket, kind="stable")
    cuts = np.flatnonzero(np.diff(bucket[order])) + 1
    return np.split(order, cuts)


def _check_work(steps: float, what: str) -> None:
    if steps > WORK_LIMIT:
        raise MeasureError(f"the exact expected value of {what} over tie orders would take about "
                           f"{steps:.1e} steps (tie groups too large with too many relevant "
                           "documents); use ties='optimistic'/'pessimistic' for bounds or an "
                           "ordering policy", source="measure", value="ties=expected")


# ---------------------------------------------------------------------------- binary measures


def _hits_per_group(lists, groups: TieGroups, rel: float):
    hits = lists.hits(rel)
    return hits, groups.count(hits.rows)


def expected_hits(lists, groups: TieGroups, rel: float, cutoff) -> np.ndarray:
    """E[relevant documents within the cutoff] per query: Σ_groups r·m/n."""
    _, r = _hits_per_group(lists, groups, rel)
    return groups.per_query(r * groups.within(cutoff) / np.maximum(groups.size, 1))


@expected_for("P")
def precision(lists, groups: TieGroups, cutoff: int, rel: float) -> np.ndarray:
    """E[P@K] = E[hits@K] / K (or / min(length, K) under ``short_lists="length"``)."""
    hits = expected_hits(lists, groups, rel, cutoff)
    if lists.conventions.short_lists == "length":
        return _safe_divide(hits, np.minimum(lists.num_retrieved, cutoff))
    return hits / cutoff


@expected_for("R")
def recall(lists, groups: TieGroups, cutoff: int, rel: float) -> np.ndarray:
    """E[R@K] = E[hits@K] / R (or / min(R, K) under ``recall_denominator``)."""
    num_rel = lists.num_relevant(rel)
    if lists.conventions.recall_denominator == "min_relevant_cutoff":
        num_rel = np.minimum(num_rel, cutoff)
    return _safe_divide(expected_hits(lists, groups, rel, cutoff), num_rel)


@expected_for("F1")
def f1(lists, groups: TieGroups, cutoff: int, rel: float) -> np.ndarray:
    """E[F1@K]: with P = h/a and R = h/b, F1 = 2h/(a + b) is linear in h, so the F1 of the
    expected P and R is the expected F1."""
    p, r = precision(lists, groups, cutoff, rel), recall(lists, groups, cutoff, rel)
    return _safe_divide(2.0 * p * r, p + r)


@expected_for("RelP")
def relative_precision(lists, groups: TieGroups, cutoff: int, rel: float) -> np.ndarray:
    """E[relative_P@K] = E[hits@K] / min(K, R)."""
    return _safe_divide(expected_hits(lists, groups, rel, cutoff),
                        np.minimum(cutoff, lists.num_relevant(rel)))


@expected_for("Rprec")
def r_precision(lists, groups: TieGroups, cutoff: None, rel: float) -> np.ndarray:
    """E[Rprec] = E[hits@R] / R, the cutoff R of each query fixed."""
    num_rel = lists.num_relevant(rel)
    return _safe_divide(expected_hits(lists, groups, rel, num_rel), num_rel)


@expected_for("RprecMult")
def r_precision_multiple(lists, groups: TieGroups, cutoff: float, rel: float) -> np.ndarray:
    """E[Rprec_mult_m] = E[hits@c] / c, the depth c = floor(m·R + 0.9) of each query fixed."""
    depth = multiple_of_r(lists, cutoff, rel)
    return _safe_divide(expected_hits(lists, groups, rel, depth), depth)


def _straddling(groups: TieGroups, r: np.ndarray, cutoff: int) -> np.ndarray:
    """Groups with a hit that have positions both within and beyond the cutoff."""
    m = groups.within(cutoff)
    return np.flatnonzero((m > 0) & (m < groups.size) & (r > 0))


@expected_for("Success")
def success(lists, groups: TieGroups, cutoff: int, rel: float) -> np.ndarray:
    """E[Success@K] = 1 − P(no hit within K) = 1 − [no hit in the groups fully within K] ·
    C(n−r, m) / C(n, m) for the group straddling K."""
    _, r = _hits_per_group(lists, groups, rel)
    m = groups.within(cutoff)
    full = groups.per_query(r * (m == groups.size)) > 0
    out = full.astype(np.float64)
    g = _straddling(groups, r, cutoff)
    n, k, mg = groups.size[g], r[g], m[g]
    no_hit = _choose_ratio([(n - mg, k)], (n, k))  # = C(n−r, m) / C(n, m)
    q = groups.query[g]
    out[q] = np.where(full[q], 1.0, 1.0 - no_hit)
    return out


@expected_for("RR")
def reciprocal_rank(lists, groups: TieGroups, cutoff: int | None, rel: float) -> np.ndarray:
    """E[RR@K] = Σ_j P(first hit at position j of the first group with a hit) / (s + j),
    P = C(n−j, r−1) / C(n, r), over s + j <= K."""
    _, r = _hits_per_group(lists, groups, rel)
    with_hit = np.flatnonzero(r > 0)
    first = with_hit[np.diff(groups.query[with_hit], prepend=-1) != 0]
    s, n, k = groups.position[first], groups.size[first], r[first]
    last = n - k + 1  # the first hit is no lower than position n − r + 1
    if cutoff is not None:
        last = np.clip(np.minimum(last, cutoff - s), 0, None)
    item, j = _ragged(last)
    j = j + 1
    n_i, k_i, s_i = n[item], k[item], s[item]
    p = _choose_ratio([(n_i - j, k_i - 1)], (n_i, k_i))
    return groups.per_query(p / (s_i + j), first[item])


def _ap_terms(lists, groups: TieGroups, r: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """E[hit at the row · its hit number] / rank for ``rows``: (r/n)(H + 1 + (r−1)(j−1)/(n−1))
    / (s + j) with j the row's 1-based position in its group."""
    g = groups.of_row[rows]
    n, k = groups.size[g].astype(np.float64), r[g]
    before = groups.before(r)[g]
    j = groups.index[rows] + 1.0
    inside = np.where(n > 1, (k - 1) * (j - 1) / np.maximum(n - 1, 1), 0.0)
    return (k / n) * (before + 1 + inside) / (lists.position_of(rows) + 1.0)


def _rows_of_groups(groups: TieGroups, chosen: np.ndarray, cutoff) -> np.ndarray:
    """Rows of the ``chosen`` groups (boolean per group) ranked within the cutoff."""
    take = np.where(chosen, groups.within(cutoff), 0)
    item, index = _ragged(take)
    return groups.start[item] + index


@expected_for("AP")
def average_precision(lists, groups: TieGroups, cutoff: int | None, rel: float) -> np.ndarray:
    """E[AP@K] = E[Σ_{hits within K} P@rank] / D for every ``ap_denominator`` rule; under
    ``relevant_retrieved`` with a cutoff the denominator H + Z is random and the ratio is
    averaged over the hypergeometric Z of the group straddling K."""
    _, r = _hits_per_group(lists, groups, rel)
    rows = _rows_of_groups(groups, r > 0, cutoff)
    total = _total(lists.segment_of(rows), _ap_terms(lists, groups, r, rows), lists.num_queries)
    if lists.conventions.ap_denominator != "relevant_retrieved":
        return _safe_divide(total, ap_denominator(lists, cutoff, rel))
    hits_within = groups.per_query(r * groups.within(cutoff) / np.maximum(groups.size, 1))
    out = _safe_divide(total, hits_within)
    if cutoff is None:
        return out
    g = _straddling(groups, r, cutoff)
    if len(g) == 0:
        return out
    q = groups.query[g]
    s, n, k, m = groups.position[g], groups.size[g], r[g], groups.within(cutoff)[g]
    before = groups.before(r)[g].astype(np.float64)
    # the straddling group's own share of the expected numerator, and the rest
    is_straddling = np.zeros(groups.num_groups, dtype=bool)
    is_straddling[g] = True
    straddle_rows = _rows_of_groups(groups, is_straddling, cutoff)
    own = _total(lists.segment_of(straddle_rows), _ap_terms(lists, groups, r, straddle_rows),
                 lists.num_queries)[q]
    rest = total[q] - own
    # given Z = z hits among its first m positions: E[numerator] = rest + (z/m)(H+1)A
    #   + z(z−1)/(m(m−1)) B, A = Σ_{j<=m} 1/(s+j), B = Σ_{j<=m} (j−1)/(s+j)
    item, j = _ragged(m)
    rank = s[item] + j + 1.0
    a = _total(item, 1.0 / rank, len(g))
    b = _total(item, j / rank, len(g))
    value = np.zeros(len(g))
    for z in range(int(np.minimum(k, m).max()) + 1):
        pz = _choose_ratio([(m, z), (n - m, k - z)], (n, k))  # hypergeometric, by symmetry
        numerator = rest + (z / m) * (before + 1) * a
        if z > 1:
            numerator = numerator + z * (z - 1) / np.maximum(m * (m - 1), 1) * b
        hits = before + z
        value += np.where(hits > 0, pz * numerator / np.maximum(hits, 1), 0.0)
    out[q] = value
    return out


@expected_for("gm_map")
def geometric_map(lists, groups: TieGroups, cutoff: None, rel: float) -> np.ndarray:
    """Per query E[AP]; averaged geometrically by the registry."""
    return average_precision(lists, groups, None, rel)


@expected_for("Bpref")
def bpref(lists, groups: TieGroups, cutoff: None, rel: float) -> np.ndarray:
    """E[bpref] = (1/R) Σ_hits (1 − E[min(n_r, R)] / min(N, R)), n_r = B + U with B the judged
    non-relevant documents of earlier groups and U uniform on 0..b (b: those of its group):
    E[min(B + U, R)] = (S(B + b) − S(B − 1)) / (b + 1), S(x) = Σ_{t=0}^{x} min(t, R)."""
    hits = lists.hits(rel)
    num_rel = lists.num_relevant(rel)
    denominator = np.minimum(lists.num_judged_nonrelevant(rel), num_rel)
    b = groups.count(np.flatnonzero(judged_nonrelevant(lists, rel)))
    above = groups.before(b)
    g = groups.of_row[hits.rows]
    big_r = num_rel[hits.segment].astype(np.float64)
    bg, ag = b[g].astype(np.float64), above[g].astype(np.float64)

    def summed_min(x: np.ndarray) -> np.ndarray:
        return np.where(x <= big_r, x * (x + 1) / 2, big_r * (big_r + 1) / 2 + (x - big_r) * big_r)

    mean_min = (summed_min(ag + bg) - summed_min(ag - 1)) / (bg + 1)
    d = denominator[hits.segment]
    share = 1.0 - _safe_divide(mean_min, d)
    return _safe_divide(_total(hits.segment, share, lists.num_queries), num_rel)


@expected_for("infAP")
def inferred_ap(lists, groups: TieGroups, cutoff: None, rel: float) -> np.ndarray:
    """E[infAP]: for each group with r > 0 hits, r/n · Σ_t Σ_(a,b) P(a, b | t) · term, where
    a hit at the group's position t has a of the r − 1 other hits, b of its B judged
    non-relevant and t − a − b of its other documents above it (their share without a
    judgment, C/(C + D), gives the mean number outside the pool)."""
    _, r = _hits_per_group(lists, groups, rel)
    nonrel = groups.count(np.flatnonzero(judged_nonrelevant(lists, rel)))
    outside = groups.count(np.flatnonzero(outside_pool(lists)))
    hits_before, nonrel_before = groups.before(r), groups.before(nonrel)
    outside_before = groups.before(outside)
    chosen = np.flatnonzero(r > 0)
    n, b_all = groups.size[chosen], nonrel[chosen]
    _check_work(float(np.sum(n * r[chosen] * (b_all + 1))), "infAP")
    # (group, t): every position of every chosen group
    g, t = _ragged(n)
    hits_left, nonrel_left = r[chosen][g] - 1, b_all[g]  # besides the hit itself
    rest = n[g] - 1 - hits_left - nonrel_left  # the group's documents neither
    # (group, t, a): a of the other hits above, 0..min(r − 1, t)
    k, a = _ragged(np.minimum(hits_left, t) + 1)
    g, t, nonrel_left, rest = g[k], t[k], nonrel_left[k], rest[k]
    # (group, t, a, b): b judged non-relevant above, the t − a − b others from the rest
    low = np.maximum(0, t - a - rest)
    high = np.minimum(nonrel_left, t - a)
    k, b = _ragged(np.maximum(high - low + 1, 0))
    g, t, a, b, rest = g[k], t[k], a[k], b + low[k], rest[k]
    group = chosen[g]
    probability = _choose_ratio([(r[group] - 1, a), (nonrel[group], b), (rest, t - a - b)],
                                (groups.size[group] - 1, t))
    share_outside = _safe_divide(outside[group].astype(np.float64), rest.astype(np.float64))
    position = groups.position[group] + t
    pooled = position - outside_before[group] - (t - a - b) * share_outside
    term = precision_terms(position, pooled, hits_before[group] + a, nonrel_before[group] + b)
    weight = r[group] / groups.size[group] * probability * term
    return _safe_divide(groups.per_query(weight, group), lists.num_relevant(rel))


@expected_for("binG")
def binary_g(lists, groups: TieGroups, cutoff: None, rel: float) -> np.ndarray:
    """E[binG]: a hit at its group's position t has a hypergeometric number a of the group's
    other r − 1 hits above it, so r/n · Σ_t Σ_a P(a | t) / log2(2 + m + t − a), m the
    documents not relevant ranked above the group."""
    _, r = _hits_per_group(lists, groups, rel)
    not_relevant_before = groups.position - groups.before(r)
    chosen = np.flatnonzero(r > 0)
    n = groups.size[chosen]
    _check_work(float(np.sum(n * r[chosen])), "binG")
    g, t = _ragged(n)
    k, a = _ragged(np.minimum(r[chosen][g] - 1, t) + 1)
    group, t = chosen[g[k]], t[k]
    size = groups.size[group]
    probability = _choose_ratio([(r[group] - 1, a), (size - r[group], t - a)], (size - 1, t))
    weight = r[group] / size * probability / np.log2(2.0 + not_relevant_before[group] + t - a)
    return _safe_divide(groups.per_query(weight, group), lists.num_relevant(rel))


@expected_for("gm_bpref")
def geometric_bpref(lists, groups: TieGroups, cutoff: None, rel: float) -> np.ndarray:
    """Per query E[bpref]; averaged geometrically by the registry."""
    return bpref(lists, groups, None, rel)


@expected_for("ARHR")
def average_reciprocal_hit_rank(lists, groups: TieGroups, cutoff: int | None,
                                rel: float) -> np.ndarray:
    """E[ARHR@K] = Σ_{positions within K} (r/n of the group) / rank."""
    _, r = _hits_per_group(lists, groups, rel)
    return _positional_sum(lists, groups, r / np.maximum(groups.size, 1), cutoff,
                           lambda rank: 1.0 / rank)


@expected_for("Judged")
def judged(lists, groups: TieGroups, cutoff: int | None) -> np.ndarray:
    """E[Judged@K] = Σ_groups (judged in the group)·m/n over the denominator (fixed)."""
    return _safe_divide(_expected_judged(lists, groups, cutoff), ranks_counted(lists, cutoff))


@expected_for("Unjudged")
def unjudged(lists, groups: TieGroups, cutoff: int) -> np.ndarray:
    """E[unj_K] = (min(K, length) − E[judged within K]) over the denominator (fixed)."""
    ranked = np.minimum(lists.num_retrieved, cutoff).astype(np.float64)
    return _safe_divide(ranked - _expected_judged(lists, groups, cutoff),
                        ranks_counted(lists, cutoff))


def _expected_judged(lists, groups: TieGroups, cutoff) -> np.ndarray:
    judged_rows = groups.count(lists.judged_rows)
    return groups.per_query(judged_rows * groups.within(cutoff) / np.maximum(groups.size, 1))


@expected_for("RBP")
def rank_biased_precision(lists, groups: TieGroups, cutoff: int | None, p: float,
                          rel) -> np.ndarray:
    """E[RBP@K] = (1 − p) Σ_{ranks i <= K} p^(i−1) · mean r of the group at i."""
    rows = lists.judged_rows
    value = relevance_of_rows(lists, rows, lists.segment_of(rows), rel)
    mean = groups.count(rows, value) / np.maximum(groups.size, 1)
    return _positional_sum(lists, groups, mean, cutoff,
                           lambda rank: (1.0 - p) * np.power(p, rank - 1.0))


@expected_for("RBPResid")
def rbp_residual(lists, groups: TieGroups, cutoff: None, p: float) -> np.ndarray:
    """E[rbp_resid] = p^n + (1 − p) Σ_{ranks i} p^(i−1) · (unjudged share of the group at i),
    0 where the list holds no unjudged document (which no order changes)."""
    unjudged = np.flatnonzero(~(lists.grade >= 0))
    share = groups.count(unjudged) / np.maximum(groups.size, 1)
    total = _positional_sum(lists, groups, share, None,
                            lambda rank: (1.0 - p) * np.power(p, rank - 1.0))
    has_unjudged = np.bincount(lists.segment_of(unjudged), minlength=lists.num_queries) > 0
    return np.where(has_unjudged, np.power(p, lists.num_retrieved) + total, 0.0)


@expected_for("Rndcg")
def rank_averaged_ndcg(lists, groups: TieGroups, cutoff: None, gain, base: float,
                       rel: float) -> np.ndarray:
    """E[Rndcg]: its ranks and their count do not depend on the order, so it is the mean of
    E[DCG@C] / IDCG@C (the ideal is fixed)."""
    return rank_average(lists, gain, base,
                        lambda depth: expected_dcg(lists, groups, depth, gain, base))


@expected_for("ndcg_rel")
def ndcg_at_relevant(lists, groups: TieGroups, cutoff: None, gain, base: float) -> np.ndarray:
    """E[ndcg_rel]. A gaining document at position t of its group (s its first position, n its
    size, a its gaining documents, G their gains) has above it the DCG of the earlier groups
    (its mean, by linearity) and, in the group, the others' gains: each of the t positions
    above holds (G − g)/(n − 1) on average. Summed over the group's gaining documents and
    the n positions: Σ_t (a·DCG_before + (a − 1)·G/(n − 1)·(D[s+t] − D[s]) + G·d[s+t]) / n
    over IDCG@min(s+t+1, N+), D the running sum of the discounts d."""
    row_gain = gains(lists.grade, gain)
    total_gain = groups.count(np.arange(lists.num_rows), row_gain)
    gaining = groups.count(np.flatnonzero(row_gain > 0))
    longest = int(lists.num_retrieved.max()) if lists.num_queries else 0
    discount = discounts(longest, base, lists.conventions.discount)
    running = np.concatenate(([0.0], np.cumsum(discount)))
    start, size = groups.position, groups.size
    before = groups.before(total_gain / np.maximum(size, 1) *
                           (running[start + size] - running[start]))
    chosen = np.flatnonzero(gaining > 0)
    g, t = _ragged(size[chosen])
    group = chosen[g]
    a, n, first = gaining[group], size[group], start[group]
    position = first + t
    others = (a - 1) * total_gain[group] / np.maximum(n - 1, 1) * (running[position] -
                                                                     running[first])
    above = a * before[group] + others + total_gain[group] * discount[position]
    num_gaining = gaining_judged(lists, gain)
    query = groups.query[group]
    ideal = ideal_dcg_of(lists, query, np.minimum(position + 1, num_gaining[query]), gain, base)
    at_relevant = groups.per_query(above / n / ideal, group)
    missed = num_gaining - groups.per_query(gaining.astype(np.float64))
    whole = _safe_divide(expected_dcg(lists, groups, None, gain, base),
                         ideal_dcg_at(lists, None, gain, base))
    return _ratio(at_relevant + missed * whole, num_gaining.astype(np.float64))


@expected_for("G")
def normalized_gain(lists, groups: TieGroups, cutoff: None, gain) -> np.ndarray:
    """E[G]: for each gain value v of a group's documents and each composition k of the other
    documents above one of them (k_l of the group's c'_l others with the l-th gain value,
    c'_l = c_l − [l = v]), probability Π C(c'_l, k_l) / C(n − 1, Σk) / n, at position
    t = Σk with S = (gain of the earlier groups) + v + Σ k_l·value_l above and including it."""
    row_gain = gains(lists.grade, gain)
    chosen = np.flatnonzero(groups.count(np.flatnonzero(row_gain != 0)) > 0)
    if len(chosen) == 0:
        return _ratio(np.zeros(lists.num_queries), total_judged_gain(lists, gain))
    before = groups.before(groups.count(np.arange(lists.num_rows), row_gain))
    item, index = _ragged(groups.size[chosen])
    rows = groups.start[chosen][item] + index
    values, value_of_row = np.unique(row_gain[rows], return_inverse=True)
    counts = np.zeros((len(chosen), len(values)), dtype=np.int64)
    np.add.at(counts, (item, value_of_row), 1)
    # (group, v): every gain value v != 0 held by the group, for one of its documents
    pair_group, pair_value = np.nonzero((counts > 0) & (values != 0)[None, :])
    others = counts[pair_group].copy()
    others[np.arange(len(pair_group)), pair_value] -= 1
    radix = others + 1
    sizes = np.prod(radix, axis=1)
    _check_work(float(sizes.sum()) * len(values), "G")
    # (group, v, k): every composition of the others above it, k_l in 0..c'_l
    pair, index = _ragged(sizes)
    k = np.empty((len(pair), len(values)), dtype=np.int64)
    stride = np.ones(len(pair), dtype=np.int64)
    for column in range(len(values)):
        k[:, column] = index // stride % radix[pair, column]
        stride = stride * radix[pair, column]
    above = k.sum(axis=1)
    group = chosen[pair_group[pair]]
    n = groups.size[group]
    probability = _choose_ratio([(others[pair, col], k[:, col]) for col in range(len(values))],
                                (n - 1, above))
    value = values[pair_value[pair]]
    so_far = before[group] + value + k @ values
    cost = cost_of_ideal(lists, groups.query[group], groups.position[group] + above + 1, gain)
    term = value / np.log2(2.0 + cost - so_far)
    holding = counts[pair_group[pair], pair_value[pair]]
    weight = holding / n * probability * term
    return _ratio(groups.per_query(weight, group), total_judged_gain(lists, gain))


# ---------------------------------------------------------------------------- graded measures


def _positional_sum(lists, groups: TieGroups, mean: np.ndarray, cutoff,
                    weight: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Σ over positions within the cutoff of the group's mean value · weight(rank)."""
    rows = _rows_of_groups(groups, mean != 0, cutoff)
    segment = lists.segment_of(rows)
    rank = lists.position_of(rows, segment) + 1
    values = mean[groups.of_row[rows]] * weight(rank)
    return _total(segment, values, lists.num_queries)


def _mean_gain(lists, groups: TieGroups, gain) -> np.ndarray:
    """Mean gain of every group (unjudged documents gain 0)."""
    return groups.count(np.arange(lists.num_rows), gains(lists.grade, gain)) / \
        np.maximum(groups.size, 1)


def expected_dcg(lists, groups: TieGroups, cutoff, gain, base: float) -> np.ndarray:
    """E[DCG@K] = Σ_{ranks i <= K} mean gain of the group at i / log_base(i + 1)."""
    longest = int(lists.num_retrieved.max()) if lists.num_queries else 0
    table = np.concatenate(([0.0], discounts(longest, base, lists.conventions.discount)))
    return _positional_sum(lists, groups, _mean_gain(lists, groups, gain), cutoff,
                           lambda rank: table[rank])


@expected_for("DCG")
def dcg(lists, groups: TieGroups, cutoff: int | None, gain, base: float) -> np.ndarray:
    """E[DCG@K]: each tie group's gains averaged over its positions (as scikit-learn's
    ``dcg_score`` with ``ignore_ties=False``)."""
    return expected_dcg(lists, groups, cutoff, gain, base)


@expected_for("nDCG")
def ndcg(lists, groups: TieGroups, cutoff: int | None, gain, base: float) -> np.ndarray:
    """E[nDCG@K] = E[DCG@K] / IDCG@K (the ideal does not depend on the order); NaN where
    IDCG = 0, which the ``idcg_zero`` convention then decides."""
    return _ratio(expected_dcg(lists, groups, cutoff, gain, base),
                  ideal_dcg_at(lists, cutoff, gain, base))


@expected_for("CG")
def cumulative_gain(lists, groups: TieGroups, cutoff: int | None, gain) -> np.ndarray:
    """E[CG@K] = Σ_groups mean gain · m."""
    return groups.per_query(_mean_gain(lists, groups, gain) * groups.within(cutoff))


@expected_for("RWRR")
def relevance_weighted_rr(lists, groups: TieGroups, cutoff: int | None, gain) -> np.ndarray:
    """E[RWRR@K] = Σ_{ranks i <= K} mean gain of the group at i / i."""
    return _positional_sum(lists, groups, _mean_gain(lists, groups, gain), cutoff,
                           lambda rank: 1.0 / rank)


@expected_for("ERR")
def err(lists, groups: TieGroups, cutoff: int | None, max_grade: float | None) -> np.ndarray:
    """E[ERR@K] = Σ_groups P_g · E[C_g]: P_g = Π (1 − R_i) over the documents of earlier groups
    (order-free), and within a group with a gaining documents (R > 0) of stop probabilities
    R = 1 − y, E[C_g] = Σ_ℓ (ē_{ℓ−1} − ē_ℓ) · E[1/(s + P_ℓ); P_ℓ <= m], where ē_q is the mean of
    Π y over the q-subsets of its gaining documents and P_ℓ the ℓ-th smallest of a uniform
    a-subset of its n positions: P(P_ℓ = j) = C(j−1, ℓ−1) C(n−j, a−ℓ) / C(n, a)."""
    top = lists.max_grade if max_grade is None else float(max_grade)
    grade = np.minimum(np.where(lists.grade > 0, lists.grade, 0.0), top)
    stop = (np.exp2(grade) - 1.0) / np.exp2(top)
    out = np.zeros(lists.num_queries)
    if groups.num_groups == 0:
        return out
    gaining = np.flatnonzero(stop > 0)
    y = 1.0 - stop
    survive = np.multiply.reduceat(y, groups.start)  # Π (1 − R) over each group
    reach = _exclusive_cumprod(survive, groups.query)  # P_g
    a = groups.count(gaining)
    m = groups.within(cutoff)
    chosen = np.flatnonzero((a > 0) & (m > 0))
    _check_work(float(np.sum(m[chosen] * a[chosen].astype(np.float64))), "ERR")
    gaining_group = groups.of_row[gaining]
    gaining_index = rank_within(gaining_group)  # 1-based among the group's gaining documents
    for bucket in _size_buckets(a[chosen]):
        g = chosen[bucket]
        width = int(a[g].max())
        slot = np.full(groups.num_groups, -1)
        slot[g] = np.arange(len(g))
        # ē_q by dynamic programming over the gaining documents, u = 1..a
        mine = slot[gaining_group] >= 0
        rows, at, index = gaining[mine], slot[gaining_group[mine]], gaining_index[mine]
        ebar = np.zeros((len(g), width + 1))
        ebar[:, 0] = 1.0
        order = np.argsort(index, kind="stable")
        cuts = np.searchsorted(index[order], np.arange(1, width + 2))
        for u in range(1, width + 1):
            take = order[cuts[u - 1]:cuts[u]]
            si, yu = at[take], y[rows[take]]
            q = np.arange(1, u + 1)
            previous = ebar[si, :u + 1]
            ebar[si, 1:u + 1] = ((u - q) / u) * previous[:, 1:] + \
                (q / u) * yu[:, None] * previous[:, :u]
        # D_ℓ = Σ_{j <= m} P(P_ℓ = j) / (s + j)
        item, j = _ragged(m[g])
        j = j + 1
        n_i, a_i = groups.size[g][item], a[g][item]
        rank = groups.position[g][item] + j
        share = np.zeros(len(g))
        for ell in range(1, width + 1):
            p = _choose_ratio([(j - 1, ell - 1), (n_i - j, a_i - ell)], (n_i, a_i))
            d = _total(item, p / rank, len(g))
            share += (ebar[:, ell - 1] - ebar[:, ell]) * d
        out += groups.per_query(reach[g] * share, g)
    return out


# -------------------------------------------------------------------- interpolated precision


def interpolated_precision(lists, groups: TieGroups, levels: tuple[float, ...],
                           rel: float) -> np.ndarray:
    """E[IPrec@p] per query and level (queries × levels), the levels computed together."""
    hits, r = _hits_per_group(lists, groups, rel)
    num_rel = lists.num_relevant(rel)
    num_rel_ret = np.bincount(hits.segment, minlength=lists.num_queries)
    needed = np.stack([_relevant_needed(level, num_rel, lists.conventions.recall_levels)
                       for level in levels], axis=1).reshape(lists.num_queries, len(levels))
    defined = (num_rel_ret[:, None] > 0) & (needed <= num_rel_ret[:, None])
    return _expected_best_precision(groups, r, groups.before(r), np.maximum(needed, 1), defined)


def _expected_best_precision(groups: TieGroups, r: np.ndarray, before: np.ndarray,
                             t: np.ndarray, defined: np.ndarray) -> np.ndarray:
    """E[max_{k >= t} k / rank_k] per query and level (t, defined: queries × levels; 0 where
    not defined).

    Every group holding a hit k >= t contributes X_g = max_{ℓ >= ℓ0} (H + ℓ)/(s + P_ℓ), with
    ℓ0 = max(1, t − H) and P_ℓ the ℓ-th smallest position of its r hits. X_g is fixed when
    r = n; otherwise it lies between (H + r)/(s + n) (hits last) and (H + r)/(s + r) (hits
    first). With L the largest sure value, E[max] = L + Σ_i (v_i − v_{i−1}) (1 − Π_g P(X_g <
    v_i)) over the values v_i > L that some X_g can take (v_0 = L).
    """
    num_queries, num_levels = t.shape
    out = np.zeros((num_queries, num_levels))
    g = np.flatnonzero(r > 0)
    s, n, k, h, q = groups.position[g], groups.size[g], r[g], before[g], groups.query[g]
    fixed = k == n
    low_num, low_den = h + k, np.where(fixed, s + k, s + n)  # each group's surest value
    # per level: the groups holding a hit k >= t, L per query (an exact fraction), and the
    # random groups whose best case (H + r)/(s + r) beats L
    sure_num = np.zeros((num_queries, num_levels), dtype=np.int64)
    sure_den = np.ones((num_queries, num_levels), dtype=np.int64)
    live = np.zeros((len(g), num_levels), dtype=bool)
    for level in range(num_levels):
        holds = defined[q, level] & (h + k >= t[q, level])
        at = np.flatnonzero(holds)
        if len(at) == 0:
            continue
        by_value = at[np.lexsort((low_num[at] / low_den[at], q[at]))]
        last = by_value[np.append(q[by_value][1:] != q[by_value][:-1], True)]
        sure_num[q[last], level], sure_den[q[last], level] = low_num[last], low_den[last]
        out[q[last], level] = low_num[last] / low_den[last]
        live[:, level] = holds & ~fixed & \
            ((h + k) * sure_den[q, level] > (s + k) * sure_num[q, level])
    chosen = np.flatnonzero(live.any(axis=1))
    if len(chosen) == 0:
        return out
    g, s, n, k, h, q, live = g[chosen], s[chosen], n[chosen], k[chosen], h[chosen], \
        q[chosen], live[chosen]
    first_l = np.maximum(1, t[q] - h[:, None])  # ℓ0 per group and level
    lowest = np.where(live, sure_num[q] / sure_den[q], np.inf).argmin(axis=1)
    item, num, den = _support_above(s, n, k, h, np.where(live, first_l, k[:, None]).min(axis=1),
                                    sure_num[q, lowest], sure_den[q, lowest])
    below = _probability_below(s[item], n[item], k[item], h[item], first_l[item], num, den)
    value = num / den
    _, rank_of = np.unique(value, return_inverse=True)
    rank_of = rank_of.ravel()
    span = int(rank_of.max()) + 2
    for level in range(num_levels):
        keep = live[item, level] & (num * sure_den[q[item], level] > den * sure_num[q[item], level])
        if keep.any():
            out[:, level] += _expected_gain_above(
                item[keep], rank_of[keep], value[keep], below[keep, level], q, span,
                sure_num[:, level] / sure_den[:, level])
    return out


def _expected_gain_above(item, rank_of, value, below, group_query, span, sure) -> np.ndarray:
    """Σ_i (v_i − v_{i−1}) (1 − Π_g P(X_g < v_i)) per query, over the union of the values of
    its groups (``item``: the group of each point, sorted by group then value)."""
    num_queries = len(sure)
    query_of = group_query[item]
    by_query = np.lexsort((value, query_of))
    keep = np.ones(len(by_query), dtype=bool)
    keep[1:] = (query_of[by_query][1:] != query_of[by_query][:-1]) | \
        (rank_of[by_query][1:] != rank_of[by_query][:-1])
    union = by_query[keep]  # one point per (query, value), sorted by query then value
    union_query, union_rank, union_value = query_of[union], rank_of[union], value[union]
    union_first = np.searchsorted(union_query, np.arange(num_queries))
    union_count = np.bincount(union_query, minlength=num_queries)
    # every group at every value of its query: P(X_g < v) is a step function, equal to its
    # value at the group's smallest own point >= v (1 beyond its largest)
    groups_here = np.unique(item)
    cross_count = union_count[group_query[groups_here]]
    _check_work(float(cross_count.sum()), "IPrec")
    cross_group, cross_index = _ragged(cross_count)
    cross_union = union_first[group_query[groups_here]][cross_group] + cross_index
    own_key = item * span + rank_of  # sorted: by group, then by value within a group
    key = groups_here[cross_group] * span + union_rank[cross_union]
    at = np.searchsorted(own_key, key)
    inside = at < len(own_key)
    inside[inside] = own_key[at[inside]] // span == groups_here[cross_group[inside]]
    factor = np.ones(len(key))
    factor[inside] = below[at[inside]]
    product = np.ones(len(union))
    np.multiply.at(product, cross_union, factor)
    previous = np.where(np.arange(len(union)) == union_first[union_query], sure[union_query],
                        np.roll(union_value, 1))
    return _total(union_query, (union_value - previous) * (1.0 - product), num_queries)


def _support_above(s, n, k, h, first_l, sure_num, sure_den):
    """The values (H + ℓ)/(s + j) > L a random group's X_g can take, ℓ0 <= ℓ <= r,
    ℓ <= j <= n − r + ℓ, each once per group: (group item, numerator, denominator), sorted by
    group then value."""
    pair_group, pair_offset = _ragged(k - first_l + 1)
    ell = first_l[pair_group] + pair_offset
    num = h[pair_group] + ell
    # (s + j) · L_num < num · L_den  <=>  s + j <= (num · L_den − 1) // L_num
    top = np.minimum(n[pair_group] - k[pair_group] + ell,
                     (num * sure_den[pair_group] - 1) // sure_num[pair_group] - s[pair_group])
    count = np.maximum(top - ell + 1, 0)
    _check_work(float(count.sum()) * (float(np.max(k)) ** 2 / 2 + 8), "IPrec")
    point_pair, point_offset = _ragged(count)
    item = pair_group[point_pair]
    numerator = num[point_pair]
    denominator = s[item] + ell[point_pair] + point_offset
    divisor = np.gcd(numerator, denominator)
    numerator, denominator = numerator // divisor, denominator // divisor
    order = np.lexsort((numerator / denominator, item))
    item, numerator, denominator = item[order], numerator[order], denominator[order]
    new = np.ones(len(item), dtype=bool)
    new[1:] = (item[1:] != item[:-1]) | (numerator[1:] != numerator[:-1]) | \
        (denominator[1:] != denominator[:-1])
    return item[new], numerator[new], denominator[new]


def _probability_below(s, n, k, h, first_l, num, den) -> np.ndarray:
    """P(X_g < num/den) for each point and level (``first_l``: ℓ0 per point and level).

    X_g < v holds when the hits' order statistics clear the lower bounds P_ℓ >= c_ℓ =
    ⌊(H + ℓ)·den/num⌋ − s + 1 for ℓ >= ℓ0; c_ℓ − ℓ does not decrease (v <= 1), so
    c'_ℓ = max(ℓ, c_ℓ) are strictly increasing and the same for every ℓ0 <= ℓ. Let τ_ℓ be the
    probability that a uniform (r−ℓ)-subset of the positions c'_{ℓ+1}..n clears c'_{ℓ+1..r};
    partitioning by the last violated bound,

        τ_ℓ = 1 − Σ_{i>=2} C(A_i, i) C(N_{ℓ+i}, r−ℓ−i) / C(N_ℓ, r−ℓ) · τ_{ℓ+i},
        P(X_g >= v) = Σ_{ℓ >= ℓ0} C(min(c'_ℓ − 1, n), ℓ) C(N_ℓ, r−ℓ) τ_ℓ / C(n, r),

    with A_i = min(c'_{ℓ+i} − 1, n) − c'_{ℓ+1} + 1 and N_ℓ = n − c'_{ℓ+1} + 1; every term is
    the probability of a disjoint event, so rounding errors stay absolute and small.
    """
    out = np.zeros(first_l.shape)
    for bucket in _size_buckets(k):
        width = int(k[bucket].max())
        for part in np.array_split(bucket, -(-len(bucket) * width // _CHUNK)):
            out[part] = _below_bucket(s[part], n[part], k[part], h[part], first_l[part],
                                      num[part], den[part])
    return out


def _below_bucket(s, n, k, h, first_l, num, den) -> np.ndarray:
    width = int(k.max())
    lowest = first_l.min(axis=1)
    choose = _log_choose_table(int(n.max()), width)
    ell = np.arange(1, width + 1)
    bound = (h[:, None] + ell) * den[:, None] // num[:, None] - s[:, None] + 1
    bound = np.where(ell >= lowest[:, None], bound, ell)
    # c'_ℓ = ℓ + max_{i<=ℓ} (c_i − i): strictly increasing; past n + 1 nothing changes
    tight = ell + np.maximum.accumulate(np.maximum(bound - ell, 0), axis=1)
    tight = np.minimum(tight, n[:, None] + 1)
    room = n[:, None] - tight + 1  # column ℓ: N_ℓ = n − c'_{ℓ+1} + 1, ℓ = 0..width−1
    tau = np.ones((len(num), width + 1))
    for start in range(width - 1, int(lowest.min()) - 1, -1):
        size = k - start  # elements of the suffix
        live = np.flatnonzero((size >= 1) & (lowest <= start))
        value = (room[live, start] >= size[live]).astype(np.float64)
        if width - start >= 2 and len(live):
            # only the cells that can be non-zero
            i = np.arange(2, width - start + 1)
            a_count = np.minimum(tight[live][:, start + i - 1] - 1, n[live][:, None]) \
                - tight[live, start][:, None] + 1
            rest = size[live][:, None] - i
            after = room[live][:, np.minimum(start + i, width - 1)]
            after = np.where((start + i < width) & (rest > 0), after, 0)
            at, col = np.nonzero((a_count >= i) & (rest >= 0) & (after >= rest)
                                 & (value[:, None] > 0))
            if len(at):
                point = live[at]
                # C(A, i) C(B, rest) / C(N, size), every binomial valid by the mask
                i_c = i[col]
                log_cell = choose[a_count[at, col], i_c] + choose[after[at, col], rest[at, col]] \
                    - choose[room[point, start], size[point]]
                value -= _total(at, np.exp(log_cell) * tau[point, start + i_c], len(live))
        tau[live, start] = np.clip(value, 0.0, 1.0)
    # P(last violated bound is ℓ) for ℓ = 1..r, then P(X_g >= v) for every ℓ0 by suffix sums
    below_bound = np.minimum(tight - 1, n[:, None])  # min(c'_ℓ − 1, n), column ℓ − 1
    after = np.where(ell < k[:, None], room[:, np.minimum(ell, width - 1)], 0)
    last = _choose_ratio([(below_bound, ell), (after, k[:, None] - ell)], (n[:, None], k[:, None]))
    last = np.where(ell <= k[:, None], last * tau[:, 1:], 0.0)
    at_least = np.cumsum(last[:, ::-1], axis=1)[:, ::-1]  # column ℓ − 1: Σ over ℓ' >= ℓ
    above = np.take_along_axis(at_least, np.minimum(first_l, width) - 1, axis=1)
    return np.clip(1.0 - above, 0.0, 1.0)


@expected_for("IPrec")
def iprec(lists, groups: TieGroups, cutoff: float, rel: float) -> np.ndarray:
    """E[IPrec@p] = E[max_{k >= t} k / rank_k], t = ⌊p·R⌉ (at least 1)."""
    return interpolated_precision(lists, groups, (cutoff,), rel)[:, 0]


@expected_for("11pt_avg")
def eleven_point_average(lists, groups: TieGroups, cutoff: None, rel: float,
                         levels: tuple[float, ...]) -> np.ndarray:
    """E[11pt_avg] = mean of E[IPrec@p] over its levels (p = 0, 0.1, ..., 1 by default)."""
    return interpolated_precision(lists, groups, levels, rel).mean(axis=1)


# ---------------------------------------------------------------------------- bounds and checks


def reorder_ties(lists, best_first: bool, conventions: Any = None):
    """The same lists (a new RankedLists, caches cleared) with every tie group ordered by
    grade, best (or worst) first, unjudged documents ranked as grade −1, stable otherwise; under
    ``conventions`` when given."""
    cache = lists.__dict__.setdefault("_ties_by_grade", {})  # shared by every measure
    if best_first not in cache:
        cache[best_first] = lists.with_ties_by_grade(best_first)
    if conventions is None:
        return cache[best_first]
    key = (best_first, conventions)  # one view per conventions: its cached columns shared
    if key not in cache:
        cache[key] = cache[best_first].with_conventions(conventions)
    return cache[key]


def tie_bounds(measure, lists, params: dict[str, Any] | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """Per query, the value of ``measure`` with every tie group ordered best first
    (optimistic) and worst first (pessimistic), from the same ``lists``.

    Parameters
    ----------
    measure : Measure
    lists : RankedLists
        Any tie policy; the rows are re-ordered by grade within each tie group. (The ranking
        pass orders ties before cutting lists at ``max_depth``; here only the rows kept are
        re-ordered, so with a depth limit the two can differ on the tie cut by the depth.)
    params : dict, optional
        The measure's filled parameters; by default filled from the conventions as
        ``Measure.compute`` does. The ``no_relevant`` / ``idcg_zero`` policies apply.

    Returns
    -------
    (optimistic, pessimistic) : tuple of numpy.ndarray
        For measures where higher is better, optimistic >= expected >= pessimistic.

    Examples
    --------
    >>> from rankwise.core.ranked import rank
    >>> from rankwise.io.frames import to_qrels, to_run
    >>> from rankwise.measures import parse_measure
    >>> lists = rank(to_qrels({"q": {"a": 1}}), to_run({"q": {"a": 1.0, "b": 1.0}}))
    >>> best, worst = tie_bounds(parse_measure("RR"), lists)
    >>> float(best[0]), float(worst[0])
    (1.0, 0.5)
    """
    spec = measure.spec
    if not spec.order_based or spec.tie_invariant:
        values = measure.compute(lists)
        return values, values.copy()
    return (tie_bound(measure, lists, True, params), tie_bound(measure, lists, False, params))


def tie_bound(measure, lists, best_first: bool, params: dict[str, Any] | None = None
              ) -> np.ndarray:
    """One side of :func:`tie_bounds`: per query, the value of ``measure`` with every tie
    group ordered best first (``best_first``, optimistic) or worst first (pessimistic)."""
    spec = measure.spec
    if not spec.order_based or spec.tie_invariant:
        return measure.compute(lists)
    policy = "optimistic" if best_first else "pessimistic"
    bound = reorder_ties(lists, best_first, _with_ties(measure.conventions(lists), policy))
    if params is None:
        return measure.compute(bound)
    values = np.asarray(spec.compute(bound, measure.cutoff, **params), dtype=np.float64)
    return measure._undefined(bound, values, params)


@functools.lru_cache(maxsize=64)
def _with_ties(conventions, policy: str):
    """``conventions`` with another tie policy (made once per pair: every measure asks)."""
    return replace(conventions, ties=policy)


def straddling_ties(lists, cutoff: int | None) -> int:
    """Queries with a tie group holding ranks both within and beyond ``cutoff`` (a position
    < K and one >= K) and documents of at least two different grades (unjudged counting as
    one more grade): those whose value at K can depend on the order of tied documents.

    >>> from rankwise.core.ranked import rank
    >>> from rankwise.io.frames import to_qrels, to_run
    >>> lists = rank(to_qrels({"q": {"a": 1}}), to_run({"q": {"a": 1.0, "b": 1.0, "c": 1.0}}))
    >>> straddling_ties(lists, 1), straddling_ties(lists, 3)
    (1, 0)
    """
    if cutoff is None or lists.num_rows == 0:
        return 0
    groups = TieGroups.of(lists)
    grade = np.where(lists.grade >= 0, lists.grade, -1.0)
    mixed = np.minimum.reduceat(grade, groups.start) != np.maximum.reduceat(grade, groups.start)
    across = (groups.position < cutoff) & (groups.position + groups.size > cutoff)
    return int(np.unique(groups.query[across & mixed]).size)
