"""Per-system counts, examples and means over stacked per-query arrays (rankwise.parts):
each the value of the system's own slice, means bit for bit as ``aggregate`` gives them."""

import math

import numpy as np
import pytest

from rankwise.parts import Parts
from rankwise.results import aggregate


def _random_parts(rng):
    sizes = rng.choice([0, 1, 7, 8, 50, 129, 300], size=int(rng.integers(1, 12)))
    if rng.random() < 0.5:  # many systems of one size, as many runs of one topic set
        sizes = np.full(int(rng.integers(1, 30)), int(rng.choice([3, 50, 200])))
    return Parts(np.concatenate(([0], np.cumsum(sizes)))), sizes


@pytest.mark.parametrize("seed", range(12))
def test_parts_give_each_systems_own_counts_examples_and_means(seed):
    rng = np.random.default_rng(seed)
    parts, sizes = _random_parts(rng)
    n = int(sizes.sum())
    values = rng.random(n) * 10.0 ** rng.uniform(-6, 6, n)
    values[rng.random(n) < 0.05] = np.nan
    mask = rng.random(n) < 0.2
    ids = np.array([f"q{i}" for i in range(n)], dtype=object)
    edges = parts.bounds.tolist()
    slices = [slice(a, b) for a, b in zip(edges[:-1], edges[1:])]
    assert parts.sizes == sizes.tolist() and len(parts) == len(sizes)
    assert parts.counts(mask) == [int(mask[s].sum()) for s in slices]
    assert parts.examples(mask, ids, 5) == [tuple(ids[s][mask[s]][:5]) for s in slices]
    for skip in (True, False):
        want = [aggregate(values[s], "mean", skip) for s in slices]
        assert list(map(str, parts.means(values, skip))) == list(map(str, want))
    within = parts.within(mask)
    assert within.sizes == [int(mask[s].sum()) for s in slices]
    assert list(map(str, within.means(values[mask]))) == \
        [str(aggregate(values[s][mask[s]], "mean")) for s in slices]


def test_one_part_is_the_whole_array():
    values = np.array([1.0, np.nan, 4.0])
    parts = Parts([0, 3], [12])
    assert parts.means(values) == [2.5] and math.isnan(parts.means(values, False)[0])
    assert parts.counts(np.array([True, False, True])) == [2] and parts.rows == [12]
    assert parts.examples(np.array([False, True, True]), np.array(["a", "b", "c"]), 1) == \
        [("b",)]


def test_means_of_one_size_are_not_a_running_sum():
    """Parts of one size are summed as rows of one table: numpy's pairwise sum, which a
    running sum (np.add.reduceat) is not, bit for bit."""
    rng = np.random.default_rng(3)
    values = rng.random(40 * 300) * 10.0 ** rng.uniform(-8, 8, 40 * 300)
    parts = Parts(np.arange(0, 40 * 300 + 1, 300))
    pairwise = [aggregate(values[i:i + 300], "mean") for i in range(0, 40 * 300, 300)]
    running = (np.add.reduceat(values, np.arange(0, 40 * 300, 300)) / 300).tolist()
    assert parts.means(values) == pairwise
    assert running != pairwise  # (so the test above can tell them apart)
