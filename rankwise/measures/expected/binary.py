"""Expected values of the binary measures over tie orders: P, Hits, R, F1, RelP, Rprec,
RprecMult, Success, RR, AP, Bpref, infAP, binG, Judged and Unjudged."""

from __future__ import annotations

import numpy as np

from ..binary import _safe_divide, ap_denominator, judged_nonrelevant, multiple_of_r
from ..inferred import outside_pool, precision_terms
from ..judged import ranks_counted
from .dispatch import expected_for
from .groups import TieGroups
from .numerics import check_work, choose_ratio, ragged, sum_by


def hits_per_group(lists, groups: TieGroups, rel: float):
    hits = lists.hits(rel)
    return hits, groups.count(hits.rows)


def expected_hits(lists, groups: TieGroups, rel: float, cutoff) -> np.ndarray:
    """E[relevant documents within the cutoff] per query: Σ_groups r·m/n."""
    _, r = hits_per_group(lists, groups, rel)
    return groups.per_query(r * groups.within(cutoff) / np.maximum(groups.size, 1))


@expected_for("P")
def precision(lists, groups: TieGroups, cutoff: int, rel: float) -> np.ndarray:
    """E[P@K] = E[hits@K] / K (or / min(length, K) under ``short_lists="length"``)."""
    hits = expected_hits(lists, groups, rel, cutoff)
    if lists.conventions.short_lists == "length":
        return _safe_divide(hits, np.minimum(lists.num_retrieved, cutoff))
    return hits / cutoff


@expected_for("Hits")
def hits(lists, groups: TieGroups, cutoff: int | None, rel: float) -> np.ndarray:
    """E[Hits@K] = E[hits@K] (without K every relevant retrieved document: no tie matters)."""
    return expected_hits(lists, groups, rel, cutoff)


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
    _, r = hits_per_group(lists, groups, rel)
    m = groups.within(cutoff)
    full = groups.per_query(r * (m == groups.size)) > 0
    out = full.astype(np.float64)
    g = _straddling(groups, r, cutoff)
    n, k, mg = groups.size[g], r[g], m[g]
    no_hit = choose_ratio([(n - mg, k)], (n, k))  # = C(n−r, m) / C(n, m)
    q = groups.query[g]
    out[q] = np.where(full[q], 1.0, 1.0 - no_hit)
    return out


@expected_for("RR")
def reciprocal_rank(lists, groups: TieGroups, cutoff: int | None, rel: float) -> np.ndarray:
    """E[RR@K] = Σ_j P(first hit at position j of the first group with a hit) / (s + j),
    P = C(n−j, r−1) / C(n, r), over s + j <= K."""
    _, r = hits_per_group(lists, groups, rel)
    with_hit = np.flatnonzero(r > 0)
    first = with_hit[np.diff(groups.query[with_hit], prepend=-1) != 0]
    s, n, k = groups.position[first], groups.size[first], r[first]
    last = n - k + 1  # the first hit is no lower than position n − r + 1
    if cutoff is not None:
        last = np.clip(np.minimum(last, cutoff - s), 0, None)
    item, j = ragged(last)
    j = j + 1
    n_i, k_i, s_i = n[item], k[item], s[item]
    p = choose_ratio([(n_i - j, k_i - 1)], (n_i, k_i))
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


def rows_of_groups(groups: TieGroups, chosen: np.ndarray, cutoff) -> np.ndarray:
    """Rows of the ``chosen`` groups (boolean per group) ranked within the cutoff."""
    take = np.where(chosen, groups.within(cutoff), 0)
    item, index = ragged(take)
    return groups.start[item] + index


@expected_for("AP")
def average_precision(lists, groups: TieGroups, cutoff: int | None, rel: float) -> np.ndarray:
    """E[AP@K] = E[Σ_{hits within K} P@rank] / D for every ``ap_denominator`` rule; under
    ``relevant_retrieved`` with a cutoff the denominator H + Z is random and the ratio is
    averaged over the hypergeometric Z of the group straddling K."""
    _, r = hits_per_group(lists, groups, rel)
    rows = rows_of_groups(groups, r > 0, cutoff)
    total = sum_by(lists.segment_of(rows), _ap_terms(lists, groups, r, rows), lists.num_queries)
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
    straddle_rows = rows_of_groups(groups, is_straddling, cutoff)
    own = sum_by(lists.segment_of(straddle_rows), _ap_terms(lists, groups, r, straddle_rows),
                 lists.num_queries)[q]
    rest = total[q] - own
    # given Z = z hits among its first m positions: E[numerator] = rest + (z/m)(H+1)A
    #   + z(z−1)/(m(m−1)) B, A = Σ_{j<=m} 1/(s+j), B = Σ_{j<=m} (j−1)/(s+j)
    item, j = ragged(m)
    rank = s[item] + j + 1.0
    a = sum_by(item, 1.0 / rank, len(g))
    b = sum_by(item, j / rank, len(g))
    value = np.zeros(len(g))
    for z in range(int(np.minimum(k, m).max()) + 1):
        pz = choose_ratio([(m, z), (n - m, k - z)], (n, k))  # hypergeometric, by symmetry
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
    return _safe_divide(sum_by(hits.segment, share, lists.num_queries), num_rel)


@expected_for("infAP")
def inferred_ap(lists, groups: TieGroups, cutoff: None, rel: float) -> np.ndarray:
    """E[infAP]: for each group with r > 0 hits, r/n · Σ_t Σ_(a,b) P(a, b | t) · term, where
    a hit at the group's position t has a of the r − 1 other hits, b of its B judged
    non-relevant and t − a − b of its other documents above it (their share without a
    judgment, C/(C + D), gives the mean number outside the pool)."""
    _, r = hits_per_group(lists, groups, rel)
    nonrel = groups.count(np.flatnonzero(judged_nonrelevant(lists, rel)))
    outside = groups.count(np.flatnonzero(outside_pool(lists)))
    hits_before, nonrel_before = groups.before(r), groups.before(nonrel)
    outside_before = groups.before(outside)
    chosen = np.flatnonzero(r > 0)
    n, b_all = groups.size[chosen], nonrel[chosen]
    check_work(float(np.sum(n * r[chosen] * (b_all + 1))), "infAP")
    # (group, t): every position of every chosen group
    g, t = ragged(n)
    hits_left, nonrel_left = r[chosen][g] - 1, b_all[g]  # besides the hit itself
    rest = n[g] - 1 - hits_left - nonrel_left  # the group's documents neither
    # (group, t, a): a of the other hits above, 0..min(r − 1, t)
    k, a = ragged(np.minimum(hits_left, t) + 1)
    g, t, nonrel_left, rest = g[k], t[k], nonrel_left[k], rest[k]
    # (group, t, a, b): b judged non-relevant above, the t − a − b others from the rest
    low = np.maximum(0, t - a - rest)
    high = np.minimum(nonrel_left, t - a)
    k, b = ragged(np.maximum(high - low + 1, 0))
    g, t, a, b, rest = g[k], t[k], a[k], b + low[k], rest[k]
    group = chosen[g]
    probability = choose_ratio([(r[group] - 1, a), (nonrel[group], b), (rest, t - a - b)],
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
    _, r = hits_per_group(lists, groups, rel)
    not_relevant_before = groups.position - groups.before(r)
    chosen = np.flatnonzero(r > 0)
    n = groups.size[chosen]
    check_work(float(np.sum(n * r[chosen])), "binG")
    g, t = ragged(n)
    k, a = ragged(np.minimum(r[chosen][g] - 1, t) + 1)
    group, t = chosen[g[k]], t[k]
    size = groups.size[group]
    probability = choose_ratio([(r[group] - 1, a), (size - r[group], t - a)], (size - 1, t))
    weight = r[group] / size * probability / np.log2(2.0 + not_relevant_before[group] + t - a)
    return _safe_divide(groups.per_query(weight, group), lists.num_relevant(rel))


@expected_for("gm_bpref")
def geometric_bpref(lists, groups: TieGroups, cutoff: None, rel: float) -> np.ndarray:
    """Per query E[bpref]; averaged geometrically by the registry."""
    return bpref(lists, groups, None, rel)


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
