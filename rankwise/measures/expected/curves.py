"""Expected interpolated precision over tie orders (IPrec, 11pt_avg): the distribution of
the best precision at or below a hit, group by group."""

from __future__ import annotations

import numpy as np

from ..curves import _relevant_needed
from .binary import hits_per_group
from .dispatch import expected_for
from .groups import TieGroups
from .numerics import check_work, choose_ratio, log_choose_table, ragged, size_buckets, sum_by

_CHUNK = 1 << 22  # matrix cells held at once in the interpolated-precision recursion


def interpolated_precision(lists, groups: TieGroups, levels: tuple[float, ...],
                           rel: float) -> np.ndarray:
    """E[IPrec@p] per query and level (queries × levels), the levels computed together."""
    hits, r = hits_per_group(lists, groups, rel)
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
    check_work(float(cross_count.sum()), "IPrec")
    cross_group, cross_index = ragged(cross_count)
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
    return sum_by(union_query, (union_value - previous) * (1.0 - product), num_queries)


def _support_above(s, n, k, h, first_l, sure_num, sure_den):
    """The values (H + ℓ)/(s + j) > L a random group's X_g can take, ℓ0 <= ℓ <= r,
    ℓ <= j <= n − r + ℓ, each once per group: (group item, numerator, denominator), sorted by
    group then value."""
    pair_group, pair_offset = ragged(k - first_l + 1)
    ell = first_l[pair_group] + pair_offset
    num = h[pair_group] + ell
    # (s + j) · L_num < num · L_den  <=>  s + j <= (num · L_den − 1) // L_num
    top = np.minimum(n[pair_group] - k[pair_group] + ell,
                     (num * sure_den[pair_group] - 1) // sure_num[pair_group] - s[pair_group])
    count = np.maximum(top - ell + 1, 0)
    check_work(float(count.sum()) * (float(np.max(k)) ** 2 / 2 + 8), "IPrec")
    point_pair, point_offset = ragged(count)
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
    for bucket in size_buckets(k):
        width = int(k[bucket].max())
        for part in np.array_split(bucket, -(-len(bucket) * width // _CHUNK)):
            out[part] = _below_bucket(s[part], n[part], k[part], h[part], first_l[part],
                                      num[part], den[part])
    return out


def _below_bucket(s, n, k, h, first_l, num, den) -> np.ndarray:
    width = int(k.max())
    lowest = first_l.min(axis=1)
    choose = log_choose_table(int(n.max()), width)
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
                value -= sum_by(at, np.exp(log_cell) * tau[point, start + i_c], len(live))
        tau[live, start] = np.clip(value, 0.0, 1.0)
    # P(last violated bound is ℓ) for ℓ = 1..r, then P(X_g >= v) for every ℓ0 by suffix sums
    below_bound = np.minimum(tight - 1, n[:, None])  # min(c'_ℓ − 1, n), column ℓ − 1
    after = np.where(ell < k[:, None], room[:, np.minimum(ell, width - 1)], 0)
    last = choose_ratio([(below_bound, ell), (after, k[:, None] - ell)], (n[:, None], k[:, None]))
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
