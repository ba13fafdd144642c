"""Segment primitives: operations on a flat array cut into consecutive segments by offsets.

A segmented array is a flat array plus ``offsets`` (length Q+1); segment q is
``values[offsets[q]:offsets[q+1]]``. These helpers replace per-query Python loops.
"""

from __future__ import annotations

import numpy as np


def starts_of_runs(values: np.ndarray) -> np.ndarray:
    """Indices where a new run of equal consecutive values begins (always includes 0)."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    change = np.empty(len(values), dtype=bool)
    change[0] = True
    np.not_equal(values[1:], values[:-1], out=change[1:])
    return np.flatnonzero(change)


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending: ``np.unique(values)`` without its first call's import of
    ``numpy.ma`` (8 ms, a few percent of a small evaluation)."""
    ordered = np.sort(values)
    return ordered[starts_of_runs(ordered)]


def segment_ids(offsets: np.ndarray) -> np.ndarray:
    """The segment index of every element: ``[0, 0, 1, 1, 1, ...]``."""
    return np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets))


def segment_of(offsets: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The segment of each element of ``rows``: ``segment_ids(offsets)[rows]`` without the
    array of every element's segment. Ascending rows (``np.flatnonzero``'s, the usual) take
    one binary search per segment and a repeat; others one search per row.

    >>> offsets = np.array([0, 2, 2, 5])
    >>> segment_of(offsets, np.array([1, 2, 4])).tolist()
    [0, 2, 2]
    >>> segment_of(offsets, np.array([4, 0])).tolist()
    [2, 0]
    """
    rows = np.asarray(rows)
    if len(rows) > 1 and not (rows[1:] >= rows[:-1]).all():
        return np.searchsorted(offsets, rows, side="right") - 1
    counts = np.diff(np.searchsorted(rows, offsets))
    return np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), counts)


def count_within(offsets: np.ndarray, rows: np.ndarray,
                 cutoff: int | np.ndarray | None = None) -> np.ndarray:
    """Per segment, how many of ``rows`` (ascending element indices) lie among its first
    ``cutoff`` elements (a number, one per segment, or all of them when None): two binary
    searches per segment, no pass over the rows.

    >>> count_within(np.array([0, 3, 3, 7]), np.array([0, 2, 4, 5, 6]), 2).tolist()
    [1, 0, 1]
    >>> offsets, rows = np.array([0, 3, 3, 7]), np.array([0, 2, 4, 5, 6])
    >>> count_within(offsets, rows).tolist()
    [2, 0, 3]
    >>> count_within(offsets, rows, np.array([3, 1, 0])).tolist()  # one cutoff per segment
    [2, 0, 0]
    """
    starts = offsets[:-1]
    ends = offsets[1:] if cutoff is None else np.minimum(starts + cutoff, offsets[1:])
    return np.searchsorted(rows, ends) - np.searchsorted(rows, starts)


def positions(offsets: np.ndarray) -> np.ndarray:
    """0-based position of every element within its segment."""
    n = int(offsets[-1])
    lengths = np.diff(offsets)
    return np.arange(n, dtype=np.int64) - np.repeat(offsets[:-1], lengths)


def tie_groups(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Group number of every element: consecutive equal ``values`` within one segment share one.

    >>> tie_groups(np.array([3., 3., 2., 2., 2.]), np.array([0, 3, 5])).tolist()
    [0, 0, 1, 2, 2]
    """
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    new = np.ones(len(values), dtype=bool)
    np.logical_not(tied_neighbours(values, offsets), out=new[1:])
    return np.cumsum(new) - 1


def tied_neighbours(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``out[i]``: elements i and i + 1 are equal and in one segment (n - 1 of them), as
    :func:`tie_groups` puts them in one group.

    >>> tied_neighbours(np.array([3., 3., 2., 2., 2.]), np.array([0, 3, 5])).tolist()
    [True, False, False, True]
    """
    tied = values[1:] == values[:-1]
    starts = offsets[1:-1]
    tied[starts[(starts > 0) & (starts < len(values))] - 1] = False
    return tied


def tie_group_extents(values: np.ndarray, offsets: np.ndarray, rows: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """First element and size of the tie group (:func:`tie_groups`) holding each of ``rows``,
    where ``values`` do not increase within a segment (ranked scores): the group is the
    segment's elements equal to the row's value, found by binary searches of its segment
    (all rows searched at once), without numbering every element.

    >>> values, offsets = np.array([3., 3., 2., 2., 2.]), np.array([0, 3, 5])
    >>> [a.tolist() for a in tie_group_extents(values, offsets, np.array([1, 2, 4]))]
    [[0, 2, 3], [2, 1, 2]]
    """
    rows = np.asarray(rows, dtype=np.int64)
    segment = segment_of(offsets, rows)
    value = values[rows]
    first = _first_where(offsets[segment], rows, lambda at, i: values[at] <= value[i])
    stop = _first_where(rows + 1, offsets[segment + 1], lambda at, i: values[at] < value[i])
    return first, stop - first


def _first_where(lo: np.ndarray, hi: np.ndarray, holds) -> np.ndarray:
    """Per element i, the first index in ``[lo[i], hi[i])`` where ``holds(index, i)`` (False
    then True over each range), else ``hi[i]``: binary searches side by side."""
    lo, hi = lo.astype(np.int64), hi.astype(np.int64)
    active = np.flatnonzero(lo < hi)
    while len(active):
        mid = (lo[active] + hi[active]) // 2
        yes = holds(mid, active)
        hi[active[yes]] = mid[yes]
        lo[active[~yes]] = mid[~yes] + 1
        active = active[lo[active] < hi[active]]
    return lo


def rank_within(segment: np.ndarray) -> np.ndarray:
    """1-based occurrence number of each element among equal, consecutive ``segment`` ids.

    ``segment`` must be sorted (non-decreasing); e.g. the k-th relevant hit of a query.
    """
    n = len(segment)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = starts_of_runs(segment)
    first = np.repeat(starts, np.diff(np.append(starts, n)))
    return np.arange(n, dtype=np.int64) - first + 1


def segmented_cumsum(values: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """Running sums of ``values`` restarting at each new ``segment`` id (sorted ids), each built
    from the segment's own values only (:func:`segmented_scan`): no running total over all
    segments to subtract, whose rounding would grow with the segments before.

    >>> segmented_cumsum(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 0, 1, 1])).tolist()
    [1.0, 3.0, 3.0, 7.0]
    """
    return segmented_scan(values, segment, np.add)


def segmented_scan(values: np.ndarray, segment: np.ndarray, operation) -> np.ndarray:
    """The inclusive scan of ``values`` by the ufunc ``operation`` (``np.add``,
    ``np.multiply``), restarting at each new ``segment`` id (sorted ids): a doubling scan,
    log2(longest segment) vectorised steps; the order of the operations depends on each
    element's place in its segment only."""
    out = values.astype(np.float64)
    n = len(out)
    if n == 0:
        return out
    first = np.searchsorted(segment, segment)  # the segment's first element
    step, longest = 1, int((np.arange(n) - first).max()) + 1
    while step < longest:
        reach = np.arange(step, n) - step >= first[step:]
        updated = out.copy()
        updated[step:][reach] = operation(updated[step:][reach], out[:-step][reach])
        out = updated
        step *= 2
    return out


def reverse_cummax(values: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """``max(values[j] for j >= i in the same segment)``, exactly, for sorted ``segment``.

    Values are replaced by their integer rank so the per-segment offset trick is exact.
    """
    n = len(values)
    if n == 0:
        return values.copy()
    sorted_values, rank = np.unique(values, return_inverse=True)
    span = len(sorted_values) + 1
    # reversed, the segments appear in descending id order: give later ones larger offsets
    keyed = rank[::-1].astype(np.int64) + (segment[-1] - segment[::-1]).astype(np.int64) * span
    best = np.maximum.accumulate(keyed) - (segment[-1] - segment[::-1]).astype(np.int64) * span
    return sorted_values[best[::-1]]


def discounts(length: int, base: float = 2.0, rule: str = "rank_plus_one") -> np.ndarray:
    """``1 / log_base(rank + 1)`` for ranks 1..length, or with ``rule="jarvelin"``
    ``1 / max(1, log_base(rank))`` (Järvelin & Kekäläinen 2002).

    >>> discounts(3, rule="jarvelin").tolist() == [1.0, 1.0, 1 / np.log2(3)]
    True
    """
    if rule == "jarvelin":
        ranks = np.arange(1, length + 1, dtype=np.float64)
        logs = np.log2(ranks) if base == 2.0 else np.log(ranks) / np.log(base)
        return 1.0 / np.maximum(logs, 1.0)
    ranks_plus_one = np.arange(2, length + 2, dtype=np.float64)
    if base == 2.0:
        return 1.0 / np.log2(ranks_plus_one)
    return np.log(base) / np.log(ranks_plus_one)


def query_blocks(query_code: np.ndarray, size: int) -> list[tuple[int, int]]:
    """Row ranges of about ``size`` rows that hold whole queries: cut where a query starts,
    when every query's rows are consecutive; else one range."""
    n = len(query_code)
    if n <= size:
        return [(0, n)]
    starts = np.flatnonzero(query_code[1:] != query_code[:-1]) + 1
    if len(starts) == 0:
        return [(0, n)]
    heads = query_code[np.append(0, starts)]
    if len(distinct(heads)) != len(heads):
        return [(0, n)]  # a query in several pieces
    cuts = distinct(starts[np.minimum(np.searchsorted(starts, np.arange(size, n, size)),
                                      len(starts) - 1)])
    bounds = [0, *cuts.tolist(), n]
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
