"""Expected values of the graded and position-weighted measures over tie orders: DCG, nDCG,
CG, RWRR, ARHR, RBP and its residual, ndcg_rel, Rndcg, G and ERR."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...core.segments import discounts, rank_within
from ..binary import _safe_divide
from ..graded import (_ratio, check_exp_gain, gain_from, gains, ideal_dcg_at, ideal_dcg_of,
                      unscaled)
from ...errors import MeasureError
from ..ndcg_averages import gaining_judged, has_negative_gain, rank_average
from ..normalized_gain import check_total_gain, cost_of_ideal, total_judged_gain
from ..rbp import relevance_of_rows
from .binary import hits_per_group, rows_of_groups
from .dispatch import expected_for
from .groups import TieGroups
from .numerics import check_work, choose_ratio, exclusive_cumprod, ragged, size_buckets, sum_by


def positional_sum(lists, groups: TieGroups, mean: np.ndarray, cutoff,
                   weight: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Σ over positions within the cutoff of the group's mean value · weight(rank)."""
    rows = rows_of_groups(groups, mean != 0, cutoff)
    segment = lists.segment_of(rows)
    rank = lists.position_of(rows, segment) + 1
    values = mean[groups.of_row[rows]] * weight(rank)
    return sum_by(segment, values, lists.num_queries)


def mean_gain(lists, groups: TieGroups, gain) -> np.ndarray:
    """Mean gain of every group (unjudged documents gain 0)."""
    return groups.count(np.arange(lists.num_rows), gains(lists.grade, gain)) / \
        np.maximum(groups.size, 1)


def expected_dcg(lists, groups: TieGroups, cutoff, gain, base: float) -> np.ndarray:
    """E[DCG@K] = Σ_{ranks i <= K} mean gain of the group at i / log_base(i + 1)."""
    longest = int(lists.num_retrieved.max()) if lists.num_queries else 0
    table = np.concatenate(([0.0], discounts(longest, base, lists.conventions.discount)))
    return positional_sum(lists, groups, mean_gain(lists, groups, gain), cutoff,
                          lambda rank: table[rank])


@expected_for("DCG")
def dcg(lists, groups: TieGroups, cutoff: int | None, gain, base: float,
        rel: float) -> np.ndarray:
    """E[DCG@K]: each tie group's gains averaged over its positions (as scikit-learn's
    ``dcg_score`` with ``ignore_ties=False``)."""
    return expected_dcg(lists, groups, cutoff, gain_from(lists.levels, gain, rel), base)


@expected_for("nDCG")
def ndcg(lists, groups: TieGroups, cutoff: int | None, gain, base: float,
         rel: float) -> np.ndarray:
    """E[nDCG@K] = E[DCG@K] / IDCG@K (the ideal does not depend on the order); NaN where
    IDCG = 0, which the ``idcg_zero`` convention then decides."""
    gain = gain_from(lists.levels, gain, rel)
    return _ratio(expected_dcg(lists, groups, cutoff, gain, base),
                  ideal_dcg_at(lists, cutoff, gain, base))


@expected_for("CG")
def cumulative_gain(lists, groups: TieGroups, cutoff: int | None, gain) -> np.ndarray:
    """E[CG@K] = Σ_groups mean gain · m."""
    return groups.per_query(mean_gain(lists, groups, gain) * groups.within(cutoff))


@expected_for("RWRR")
def relevance_weighted_rr(lists, groups: TieGroups, cutoff: int | None, gain) -> np.ndarray:
    """E[RWRR@K] = Σ_{ranks i <= K} mean gain of the group at i / i."""
    return positional_sum(lists, groups, mean_gain(lists, groups, gain), cutoff,
                          lambda rank: 1.0 / rank)


@expected_for("ARHR")
def average_reciprocal_hit_rank(lists, groups: TieGroups, cutoff: int | None,
                                rel: float) -> np.ndarray:
    """E[ARHR@K] = Σ_{positions within K} (r/n of the group) / rank."""
    _, r = hits_per_group(lists, groups, rel)
    return positional_sum(lists, groups, r / np.maximum(groups.size, 1), cutoff,
                          lambda rank: 1.0 / rank)


@expected_for("RBP")
def rank_biased_precision(lists, groups: TieGroups, cutoff: int | None, p: float,
                          rel) -> np.ndarray:
    """E[RBP@K] = (1 − p) Σ_{ranks i <= K} p^(i−1) · mean r of the group at i."""
    rows = lists.judged_rows
    value = relevance_of_rows(lists, rows, lists.segment_of(rows), rel)
    mean = groups.count(rows, value) / np.maximum(groups.size, 1)
    return positional_sum(lists, groups, mean, cutoff,
                          lambda rank: (1.0 - p) * np.power(p, rank - 1.0))


@expected_for("RBPResid")
def rbp_residual(lists, groups: TieGroups, cutoff: None, p: float) -> np.ndarray:
    """E[rbp_resid] = p^n + (1 − p) Σ_{ranks i} p^(i−1) · (unjudged share of the group at i),
    0 where the list holds no unjudged document (which no order changes)."""
    unjudged = np.flatnonzero(~(lists.grade >= 0))
    share = groups.count(unjudged) / np.maximum(groups.size, 1)
    total = positional_sum(lists, groups, share, None,
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
    over IDCG@min(s+t+1, N+), D the running sum of the discounts d. Not for negative gains,
    whose per-order values are cut at 0 (the mean of the cut values is not the cut mean)."""
    if has_negative_gain(gain):
        raise MeasureError("ties='expected' is not available for ndcg_rel with negative gains "
                           "(each tie order's value is cut at 0)", source="measure",
                           value="ndcg_rel(gain={" + ",".join(
                               f"{g:g}:{v:g}" for g, v in unscaled(gain)) + "})")
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
    g, t = ragged(size[chosen])
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
    check_total_gain(lists, gain)
    row_gain = gains(lists.grade, gain)
    chosen = np.flatnonzero(groups.count(np.flatnonzero(row_gain != 0)) > 0)
    if len(chosen) == 0:
        return _ratio(np.zeros(lists.num_queries), total_judged_gain(lists, gain))
    before = groups.before(groups.count(np.arange(lists.num_rows), row_gain))
    item, index = ragged(groups.size[chosen])
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
    check_work(float(sizes.sum()) * len(values), "G")
    # (group, v, k): every composition of the others above it, k_l in 0..c'_l
    pair, index = ragged(sizes)
    k = np.empty((len(pair), len(values)), dtype=np.int64)
    stride = np.ones(len(pair), dtype=np.int64)
    for column in range(len(values)):
        k[:, column] = index // stride % radix[pair, column]
        stride = stride * radix[pair, column]
    above = k.sum(axis=1)
    group = chosen[pair_group[pair]]
    n = groups.size[group]
    probability = choose_ratio([(others[pair, col], k[:, col]) for col in range(len(values))],
                               (n - 1, above))
    value = values[pair_value[pair]]
    so_far = before[group] + value + k @ values
    cost = cost_of_ideal(lists, groups.query[group], groups.position[group] + above + 1, gain)
    term = value / np.log2(2.0 + cost - so_far)
    holding = counts[pair_group[pair], pair_value[pair]]
    weight = holding / n * probability * term
    return _ratio(groups.per_query(weight, group), total_judged_gain(lists, gain))


@expected_for("ERR")
def err(lists, groups: TieGroups, cutoff: int | None, max_grade: float | None) -> np.ndarray:
    """E[ERR@K] = Σ_groups P_g · E[C_g]: P_g = Π (1 − R_i) over the documents of earlier groups
    (order-free), and within a group with a gaining documents (R > 0) of stop probabilities
    R = 1 − y, E[C_g] = Σ_ℓ (ē_{ℓ−1} − ē_ℓ) · E[1/(s + P_ℓ); P_ℓ <= m], where ē_q is the mean of
    Π y over the q-subsets of its gaining documents and P_ℓ the ℓ-th smallest of a uniform
    a-subset of its n positions: P(P_ℓ = j) = C(j−1, ℓ−1) C(n−j, a−ℓ) / C(n, a)."""
    top = lists.max_grade if max_grade is None else float(max_grade)
    check_exp_gain(top)
    grade = np.minimum(np.where(lists.grade > 0, lists.grade, 0.0), top)
    stop = (np.exp2(grade) - 1.0) / np.exp2(top)
    out = np.zeros(lists.num_queries)
    if groups.num_groups == 0:
        return out
    gaining = np.flatnonzero(stop > 0)
    y = 1.0 - stop
    survive = np.multiply.reduceat(y, groups.start)  # Π (1 − R) over each group
    reach = exclusive_cumprod(survive, groups.query)  # P_g
    a = groups.count(gaining)
    m = groups.within(cutoff)
    chosen = np.flatnonzero((a > 0) & (m > 0))
    check_work(float(np.sum(m[chosen] * a[chosen].astype(np.float64))), "ERR")
    gaining_group = groups.of_row[gaining]
    gaining_index = rank_within(gaining_group)  # 1-based among the group's gaining documents
    for bucket in size_buckets(a[chosen]):
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
        item, j = ragged(m[g])
        j = j + 1
        n_i, a_i = groups.size[g][item], a[g][item]
        rank = groups.position[g][item] + j
        share = np.zeros(len(g))
        for ell in range(1, width + 1):
            p = choose_ratio([(j - 1, ell - 1), (n_i - j, a_i - ell)], (n_i, a_i))
            d = sum_by(item, p / rank, len(g))
            share += (ebar[:, ell - 1] - ebar[:, ell]) * d
        out += groups.per_query(reach[g] * share, g)
    return out
