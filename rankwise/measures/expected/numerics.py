"""Binomial ratios (exact for small groups, by logs beyond), segmented sums and the work
limit shared by the expected values."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...core.segments import segmented_scan
from ...errors import MeasureError

#: Most elementary steps one expected value may take before a MeasureError (about a minute).
WORK_LIMIT = 5e8


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


def log_choose_table(top: int, width: int) -> np.ndarray:
    """ln C(a, i) for a = 0..top, i = 0..width (-inf where i > a), each a sum of i logs:
    absolute error below about 1e-16 · i · ln a."""
    a = np.arange(top + 1, dtype=np.float64)
    table = np.full((top + 1, width + 1), -np.inf)
    table[:, 0] = 0.0
    for i in range(1, width + 1):
        ok = a >= i
        table[ok, i] = table[ok, i - 1] + np.log((a[ok] - i + 1) / i)
    return table


def choose_ratio(numerator: list[tuple[Any, Any]], denominator: tuple[Any, Any]) -> np.ndarray:
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


def sum_by(index: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """Σ weights per index value 0..size−1, as floats (also when nothing is summed)."""
    return np.bincount(index, weights=weights, minlength=size).astype(np.float64, copy=False)


def ragged(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For items with ``counts``: the item of every element and its 0-based index in it."""
    counts = np.asarray(counts, dtype=np.int64)
    item = np.repeat(np.arange(len(counts)), counts)
    first = np.cumsum(counts) - counts
    return item, np.arange(int(counts.sum())) - first[item]


def exclusive_cumprod(values: np.ndarray, segment: np.ndarray) -> np.ndarray:
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


def size_buckets(sizes: np.ndarray) -> list[np.ndarray]:
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


def check_work(steps: float, what: str) -> None:
    if steps > WORK_LIMIT:
        raise MeasureError(f"the exact expected value of {what} over tie orders would take about "
                           f"{steps:.1e} steps (tie groups too large with too many relevant "
                           "documents); use ties='optimistic'/'pessimistic' for bounds or an "
                           "ordering policy", source="measure", value="ties=expected")
