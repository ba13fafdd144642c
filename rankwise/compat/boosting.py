"""What the LightGBM and XGBoost metrics share: measures, conventions and one
:class:`~rankwise.compat.candidates.Candidates` per evaluation data set, built on the first
round and found again by content on every later round, so that a round costs one sort of
the new scores and the measures.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..conventions import Conventions, resolve
from ..io.arrays import array_numbers, group_sizes
from .candidates import Candidates, check_measures

#: evaluation data sets remembered per metric (training set, validation sets)
CACHE_SIZE = 8


class RankingMetric:
    """Measures of fixed candidate lists, for a boosting library's evaluation callback."""

    def __init__(self, measures: Sequence[Any], conventions: Conventions | str | None,
                 overrides: dict[str, Any]) -> None:
        self.measures = check_measures(measures, conventions)
        self.conventions = resolve(conventions, **overrides)
        self.names = [str(m) for m in self.measures]
        self._cache: OrderedDict[tuple, tuple[np.ndarray, np.ndarray, Candidates]] = OrderedDict()

    def __repr__(self) -> str:
        changed = self.conventions.differences()
        return (f"{type(self).__name__}({', '.join(map(repr, self.names))}"
                + (f", conventions={changed}" if changed else "") + ")")

    def candidates(self, labels: Any, sizes: Any, weighted: bool = False) -> Candidates:
        """The candidates of a data set (labels and query sizes), built once; a data set with
        weights gets a warning then (the measures' mean is over queries, unweighted)."""
        # checked as Candidates checks them (a cast to int64 cut sizes of 2.5 to 2 and read
        # "3" as 3, one to float64 read labels "2" as 2)
        labels = np.ascontiguousarray(array_numbers(labels, "labels", "labels", booleans=True)
                                      .reshape(-1))
        sizes = np.ascontiguousarray(group_sizes(np.asarray(sizes).reshape(-1), len(labels)))
        key = (len(labels), hash(labels.tobytes()), hash(sizes.tobytes()))
        hit = self._cache.get(key)
        if hit is not None and np.array_equal(hit[0], labels) and np.array_equal(hit[1], sizes):
            self._cache.move_to_end(key)
            return hit[2]
        built = Candidates(labels, group=sizes, conventions=self.conventions)
        if weighted:
            import warnings

            warnings.warn("the evaluation data has weights, which rankwise's metrics do not use: "
                          "their values are unweighted means over queries", stacklevel=4)
        self._cache[key] = (labels.copy(), sizes.copy(), built)
        while len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return built

    def values(self, labels: Any, scores: Any, sizes: Any,
               weighted: bool = False) -> list[tuple[str, float]]:
        """``[(name, aggregate), ...]`` of every measure on these scores."""
        means = self.candidates(labels, sizes, weighted).means(scores, self.measures)
        return [(name, means[name]) for name in self.names]

    def higher_is_better(self) -> list[bool]:
        return [m.spec.higher_is_better for m in self.measures]


def sizes_from_offsets(offsets: Any, n: int) -> np.ndarray:
    """Query sizes from offsets ``[0, ..., n]`` (XGBoost's ``group_ptr``); one query when none."""
    offsets = np.asarray(offsets, dtype=np.int64)
    if offsets.size < 2:
        return np.array([n], dtype=np.int64)
    return np.diff(offsets)
