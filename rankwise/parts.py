"""Several systems' queries stacked in one table (part ``i`` holds the queries
``bounds[i]:bounds[i + 1]``), and what the diagnostic checks ask of each part: counts,
example query ids and means, each worked out for every part in a few numpy calls.

Many small runs evaluated together are checked this way: one pass over the stacked queries
per check instead of one per run (1,000 runs of 50 queries made 27,000 checks, each a
handful of numpy calls on 50 values). One system is one part.
"""

from __future__ import annotations

import math
from typing import Iterator, Sequence

import numpy as np

from .results import aggregate


class Parts:
    """The systems of stacked per-query arrays.

    Parameters
    ----------
    bounds : sequence of int
        ``[0, q_0, q_0 + q_1, ...]``: where each system's queries start and stop.
    rows : sequence of int, optional
        Each system's ranked rows (documents), for checks with a size limit.

    Examples
    --------
    >>> parts = Parts([0, 3, 5])
    >>> parts.counts(np.array([True, False, True, True, True]))
    [2, 2]
    >>> parts.means(np.array([1.0, 2.0, 3.0, 10.0, 20.0]))
    [2.0, 15.0]
    """

    def __init__(self, bounds: Sequence[int], rows: Sequence[int] | None = None) -> None:
        self.bounds = np.asarray(bounds, dtype=np.int64)
        self.sizes: list[int] = np.diff(self.bounds).tolist()
        self.rows = None if rows is None else list(rows)

    @classmethod
    def whole(cls, lists) -> "Parts":
        """One system: every query of ``lists``."""
        return cls([0, lists.num_queries], [lists.num_rows])

    def __len__(self) -> int:
        return len(self.sizes)

    def counts(self, mask: np.ndarray) -> list[int]:
        """Per part, how many of its queries ``mask`` (one bool per query) holds."""
        if len(self.sizes) == 1:
            return [int(np.count_nonzero(mask))]
        running = np.zeros(len(mask) + 1, dtype=np.int64)
        np.cumsum(mask, out=running[1:])
        return np.diff(running[self.bounds]).tolist()

    def examples(self, mask: np.ndarray, query_ids, limit: int) -> list[tuple[str, ...]]:
        """Per part, the ids of its first ``limit`` queries in ``mask``."""
        found = np.flatnonzero(mask)
        if len(self.sizes) == 1:
            return [tuple(str(q) for q in query_ids[found[:limit]])]
        at = np.searchsorted(found, self.bounds).tolist()
        chosen = [range(a, min(a + limit, b)) for a, b in zip(at[:-1], at[1:])]
        ids = [str(q) for q in query_ids[found[[i for r in chosen for i in r]]]]
        out, start = [], 0
        for r in chosen:
            out.append(tuple(ids[start:start + len(r)]))
            start += len(r)
        return out

    def by_size(self) -> Iterator[tuple[int, list[int], np.ndarray]]:
        """The parts of each non-zero size: the size, the parts' numbers and their queries'
        indices as a table (one row per part), to be read as one block."""
        sizes = np.asarray(self.sizes)
        for size in sorted(set(self.sizes) - {0}):
            which = np.flatnonzero(sizes == size)
            yield size, which.tolist(), self.bounds[which][:, None] + np.arange(size)

    def means(self, values: np.ndarray, skip_undefined: bool = True) -> list[float]:
        """Per part, ``aggregate(values[part], "mean", skip_undefined)`` bit for bit: the parts
        of one size are summed as the rows of one table (numpy sums each contiguous row
        pairwise, as it sums the part alone); a part with an undefined value again alone."""
        if len(self.sizes) == 1:
            return [aggregate(values, "mean", skip_undefined)]
        out = [math.nan] * len(self.sizes)
        for size, which, table in self.by_size():
            for i, row, total in zip(which, table, np.add.reduce(values[table], axis=1).tolist()):
                out[i] = total / size if math.isfinite(total) else aggregate(
                    values[row], "mean", skip_undefined)
        return out

    def within(self, mask: np.ndarray) -> "Parts":
        """The parts of ``values[mask]``: each part's queries in ``mask``, in order."""
        return Parts(np.concatenate(([0], np.cumsum(self.counts(mask)))))
