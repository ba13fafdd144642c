"""Paired tests against scipy, exact enumeration, slow loops and published worked examples."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from rankwise.stats import (bootstrap_test, cohens_d, paired_t_test, paired_test,
                            randomization_test, sign_test, wilcoxon_test, win_tie_loss)
from rankwise.stats.resampling import bootstrap_moments, sign_flip_exceedances


def sample(n, seed, shift=0.03, ties=False):
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    y = np.clip(x - shift + rng.normal(0, 0.15, n), 0, 1)
    if ties:
        x, y = np.round(x, 1), np.round(y, 1)
    return x, y


@pytest.mark.parametrize("n,seed", [(8, 1), (30, 2), (200, 3)])
def test_t_test_matches_scipy(n, seed):
    x, y = sample(n, seed)
    ours = paired_t_test(x, y)
    ref = stats.ttest_rel(x, y)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    low, high = ref.confidence_interval(0.95)
    assert (ours.ci_low, ours.ci_high) == pytest.approx((low, high), rel=1e-10)
    d = x - y
    assert ours.effect_size == pytest.approx(d.mean() / d.std(ddof=1))


def enumerated_wilcoxon_p(d):
    """Two-sided p-value of the signed-rank statistic over all ``2**m`` sign vectors of the
    mid-ranks (``scipy.stats.rankdata``) of the ``m`` non-zero ``|d|``: ``2 P(W+ <= T)``,
    ``T = min(W+, W-)``, capped at 1. Every vector is counted, none sampled: each half of the
    ranks is enumerated in full and the halves' sums are paired by sorting."""
    d = np.asarray(d, dtype=np.float64)
    d = d[d != 0]
    ranks = stats.rankdata(np.abs(d))  # mid-ranks: multiples of 1/2, summed exactly
    w_plus = ranks[d > 0].sum()
    t = min(w_plus, ranks.sum() - w_plus)

    def sums(r):  # W+ of every sign vector of the ranks r
        return ((np.arange(2 ** len(r))[:, None] >> np.arange(len(r))) & 1) @ r

    half = len(ranks) // 2
    left, right = sums(ranks[:half]), np.sort(sums(ranks[half:]))
    count = int(np.searchsorted(right, t - left + 0.25, side="right").sum())
    return min(1.0, 2 * count / 2 ** len(ranks))


def permutation_wilcoxon_p(d):
    """The same by scipy's own exact permutation test of W+ (every sign flip of d)."""
    d = np.asarray(d, dtype=np.float64)
    d = d[d != 0]

    def w_plus(v):
        return stats.rankdata(np.abs(v))[v > 0].sum()

    return stats.permutation_test((d,), w_plus, permutation_type="samples",
                                  n_resamples=np.inf, vectorized=False).pvalue


def tied_sample(m, seed, levels):
    """m non-zero differences drawn from a few values (ties) and both signs."""
    rng = np.random.default_rng(seed)
    return rng.choice(np.arange(1, levels + 1), size=m) / 10 * rng.choice([-1, 1], size=m,
                                                                          p=[0.3, 0.7])


@pytest.mark.parametrize("d", [[0.2] * 5, [0.2, 0.2, 0.4, 0.4, 0.6, 0.6], [0.1] * 3])
def test_wilcoxon_few_tied_differences_reach_only_attainable_p_values(d):
    # m differences of one sign: the smallest two-sided p-value the test can give is 2/2**m
    # (0.0625 for 5, where the normal approximation said 0.0253)
    r = wilcoxon_test(d, np.zeros(len(d)))
    assert r.details["method"] == "exact"
    assert r.p_value == 2 / 2 ** len(d)
    assert r.p_value == enumerated_wilcoxon_p(d)
    assert r.p_value == pytest.approx(permutation_wilcoxon_p(d), rel=1e-12)


@pytest.mark.parametrize("m,seed,levels", [(4, 0, 2), (7, 1, 3), (10, 2, 4), (12, 3, 3),
                                           (16, 4, 5), (23, 5, 6), (30, 6, 8), (34, 7, 3)])
def test_wilcoxon_exact_with_ties_equals_enumeration(m, seed, levels):
    # the exact null distribution conditional on the observed mid-ranks
    d = tied_sample(m, seed, levels)
    assert len(np.unique(np.abs(d))) < m  # ties
    r = wilcoxon_test(d, np.zeros(m))
    assert r.details["method"] == "exact"
    ranks = stats.rankdata(np.abs(d))
    assert r.statistic == min(ranks[d > 0].sum(), ranks[d < 0].sum())
    assert r.p_value == pytest.approx(enumerated_wilcoxon_p(d), rel=1e-12)
    if m <= 12:
        assert r.p_value == pytest.approx(permutation_wilcoxon_p(d), rel=1e-12)


@pytest.mark.parametrize("m", [1, 10, 40, 80, 200])
def test_wilcoxon_exact_without_ties_matches_scipy(m):
    d = np.random.default_rng(m).normal(0.1, 1, m)
    r = wilcoxon_test(d, np.zeros(m))
    ref = stats.wilcoxon(d, method="exact")
    assert r.details["method"] == "exact"
    assert r.statistic == ref.statistic
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-12)


@pytest.mark.parametrize("n,seed,ties", [(10, 1, False), (40, 2, False), (80, 3, False),
                                         (30, 4, True), (12, 5, True)])
def test_wilcoxon_on_measure_like_values(n, seed, ties):
    # values in [0, 1]; with ties: differences of values with one decimal (some zero)
    x, y = sample(n, seed)
    d = np.round(x - y, 1) if ties else x - y
    r = wilcoxon_test(d, np.zeros(n)) if ties else wilcoxon_test(x, y)
    assert r.details["method"] == "exact"
    if ties:
        assert r.p_value == pytest.approx(enumerated_wilcoxon_p(d), rel=1e-12)
    else:
        assert r.p_value == pytest.approx(stats.wilcoxon(d, method="exact").pvalue, rel=1e-12)


@pytest.mark.parametrize("m,levels", [(201, 5), (201, 400), (600, 10)])
def test_wilcoxon_above_the_exact_size_is_the_tie_corrected_normal_approximation(m, levels):
    d = tied_sample(m, m + levels, levels)
    r = wilcoxon_test(d, np.zeros(m))
    ref = stats.wilcoxon(d, method="asymptotic", correction=False)
    assert r.details["method"] == "asymptotic"
    assert r.statistic == ref.statistic
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-12)


def test_wilcoxon_zero_differences_are_dropped_before_choosing_the_method():
    # 15 non-zero differences without ties and 5 zeros: exact on the 15 (zero_method
    # "wilcox"; scipy's own choice counts the zeros and falls back to the normal approximation)
    d = np.array([0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -12, -13, 14, -15]) / 100
    y = np.full(20, 0.5)
    r = wilcoxon_test(y + d, y)
    nonzero = (y + d - y)[d != 0]
    exact = stats.wilcoxon(nonzero, method="exact")
    assert (r.statistic, r.p_value) == (exact.statistic, exact.pvalue)
    assert r.details["method"] == "exact" and r.n == 20 and r.ties == 5
    # ties among |d| and a zero: exact too, on the mid-ranks of the non-zero differences
    tied = np.array([0.1, 0.1, -0.2, 0.3, 0.0, 0.4])
    r = wilcoxon_test(tied, np.zeros(6))
    assert r.details["method"] == "exact" and r.ties == 1
    assert r.p_value == enumerated_wilcoxon_p(tied)
    assert r.p_value == pytest.approx(permutation_wilcoxon_p(tied), rel=1e-12)


def test_wilcoxon_worked_example():
    # The worked example of the Wikipedia article "Wilcoxon signed-rank test" (10 pairs):
    # x1 = 125 115 130 140 140 115 140 125 140 135, x2 = 110 122 125 120 140 124 123 137 135 145.
    # One zero difference is dropped (N_r = 9); |d| ranks 1.5 1.5 3 4 5 6 7 8 9;
    # signed-rank sum W = 9, so W+ = 27 and W- = 18, T = min = 18; not significant.
    x1 = [125, 115, 130, 140, 140, 115, 140, 125, 140, 135]
    x2 = [110, 122, 125, 120, 140, 124, 123, 137, 135, 145]
    r = wilcoxon_test(x1, x2)
    assert r.statistic == 18.0
    assert r.wins - r.losses == 5 - 4 and r.ties == 1
    assert r.p_value > 0.05
    assert r.details["method"] == "exact"  # two |d| of 5 tie: exact on the mid-ranks
    assert r.p_value == 324 / 512  # 162 of the 512 sign vectors have W+ <= 18
    assert r.p_value == enumerated_wilcoxon_p(np.subtract(x1, x2))
    assert r.p_value == pytest.approx(permutation_wilcoxon_p(np.subtract(x1, x2)), rel=1e-12)


def test_wilcoxon_float_noise_is_no_difference_in_rank():
    # P@5 values (hits / 5) of two systems: the differences 2/5 come out as
    # 0.6 - 0.2 = 0.39999999999999997 and 0.8 - 0.4 = 0.4; they tie, as the hit counts do
    hits_a = np.array([3, 4, 1, 5, 5, 2, 5, 0])
    hits_b = np.array([1, 2, 0, 1, 2, 1, 1, 2])
    x, y = hits_a / 5, hits_b / 5
    assert len(np.unique(np.abs(x - y))) == 5  # float noise: 0.4 twice, as two numbers
    exact = hits_a - hits_b  # 2, 2, 1, 4, 3, 1, 4, -2: |d| ties {1 x2, 2 x3, 4 x2}
    r = wilcoxon_test(x, y)
    ranks = stats.rankdata(np.abs(exact))
    assert r.statistic == ranks[exact < 0].sum() == 4.0  # not 4.5
    assert r.p_value == enumerated_wilcoxon_p(exact) == wilcoxon_test(hits_a, hits_b).p_value
    assert r.p_value == pytest.approx(permutation_wilcoxon_p(exact), rel=1e-12)
    # ... so the p-value does not depend on the units of the values
    for scale in (1e-10, 1e-3, 7.0, 1e6):
        assert wilcoxon_test(x * scale, y * scale).p_value == r.p_value


def test_zero_plus_float_noise_is_a_tie_for_the_sign_and_wilcoxon_tests():
    # 0.3 and 0.1 + 0.2 (0.30000000000000004) are one value: three ties, three wins
    x = np.array([0.3, 0.3, 0.3, 0.5, 0.6, 0.7])
    y = np.array([0.1 + 0.2] * 3 + [0.2, 0.1, 0.3])
    exact = np.array([0, 0, 0, 3, 5, 4]) / 10
    assert (x - y)[:3].tolist() == [-2 ** -54] * 3
    sign = sign_test(x, y)
    assert (sign.wins, sign.ties, sign.losses, sign.statistic) == (3, 3, 0, 3)
    assert sign.p_value == stats.binomtest(3, 3).pvalue == 0.25
    w = wilcoxon_test(x, y)
    assert (w.wins, w.ties, w.losses, w.statistic) == (3, 3, 0, 0.0)
    assert w.p_value == enumerated_wilcoxon_p(exact) == 0.25
    # the other tests count wins, ties and losses the same way
    assert (paired_t_test(x, y).ties, randomization_test(x, y).ties) == (3, 3)
    # a difference far above rounding is no tie, however small: 1e-12 between values of 1e-6
    assert sign_test([1e-6 + 1e-12, 0.5], [1e-6, 0.5]).wins == 1
    # the randomization test flips the differences beyond rounding only: the same p-value as
    # on the exact differences (the noise alone gave 2/2**3 for these three ties)
    assert randomization_test(x, y).p_value == randomization_test(exact, 0 * exact).p_value
    assert randomization_test(x[:3], y[:3]).p_value == 1.0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sign_test_matches_binomtest(seed):
    x, y = sample(25, seed, ties=True)
    ours = sign_test(x, y)
    wins, ties, losses = win_tie_loss(x - y)
    assert ours.p_value == pytest.approx(stats.binomtest(wins, wins + losses).pvalue, rel=1e-12)
    assert ours.statistic == wins and ours.ties == ties


def test_sign_test_worked_example():
    # Conover (1999): 9 of 10 pairs favour one side -> p = 2 * (1 + 10) / 1024 = 0.021484375
    assert sign_test([1] * 9 + [0], [0] * 9 + [1]).p_value == pytest.approx(22 / 1024)


def slow_exact_p(d):
    """Every sign vector, one by one."""
    observed = abs(sum(d))
    hits = 0
    for signs in itertools.product([1, -1], repeat=len(d)):
        if abs(sum(s * v for s, v in zip(signs, d))) >= observed - 1e-12:
            hits += 1
    return hits / 2 ** len(d)


@pytest.mark.parametrize("n,seed", [(1, 0), (5, 1), (9, 2), (12, 3)])
def test_randomization_exact_equals_slow_enumeration(n, seed):
    x, y = sample(n, seed, ties=True)
    ours = randomization_test(x, y)
    d = (x - y)[(x - y) != 0]
    assert ours.details["exact"]
    assert ours.p_value == pytest.approx(slow_exact_p(list(d)), abs=1e-15)


def test_randomization_textbook_example():
    # differences 1, 2, 3, 4: |sum| = 10 reached by all-plus and all-minus -> p = 2/16
    assert randomization_test([1, 2, 3, 4], [0, 0, 0, 0]).p_value == 0.125


def test_randomization_monte_carlo_equals_slow_loop():
    # the vectorised draws are exactly those of a one-vector-at-a-time loop on the same stream
    x, y = sample(70, 4)
    d = x - y
    ours = randomization_test(x, y, permutations=300, seed=7)
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(300):
        words = rng.bit_generator.random_raw(2)  # 70 signs need two 64-bit words
        signs = [-1 if (int(words[i // 64]) >> (i % 64)) & 1 else 1 for i in range(70)]
        if abs(sum(s * v for s, v in zip(signs, d))) >= abs(d.sum()) - 1e-9:
            hits += 1
    assert ours.p_value == (hits + 1) / 301
    assert not ours.details["exact"]


def test_randomization_monte_carlo_agrees_with_exact():
    x, y = sample(16, 5, shift=0.05)
    exact = randomization_test(x, y).p_value
    mc = randomization_test(x, y, permutations=40_000, exact=False, seed=3).p_value
    assert abs(mc - exact) < 4 * math.sqrt(exact * (1 - exact) / 40_000) + 1e-4


@pytest.mark.parametrize("rows", [1, 7, 64, 1000])
def test_randomization_independent_of_chunk_size(rows):
    x, y = sample(300, 6)
    d = x - y
    ref = sign_flip_exceedances(d, 2000, np.random.default_rng(11), exact=False)
    assert sign_flip_exceedances(d, 2000, np.random.default_rng(11), exact=False,
                                 chunk_rows=rows) == ref
    small = d[:14]
    assert sign_flip_exceedances(small, 0, None, chunk_rows=rows) == sign_flip_exceedances(
        small, 0, None)


@pytest.mark.parametrize("n", [1, 9, 49, 56, 57, 64, 65, 2047, 2048, 5000])
def test_flipped_sums_gathered_by_blocks_are_the_plain_gather_bit_for_bit(monkeypatch, n):
    """The byte tables are read a block of mask bytes at a time (for the CPU cache); each
    flipped sum is still the one sum of every byte's gathered value, bit for bit."""
    from rankwise.stats import resampling

    rng = np.random.default_rng(n)
    d = rng.normal(size=n) * 10.0 ** rng.integers(-3, 3, size=n)
    table = resampling._byte_tables(d)
    masks = rng.integers(0, 256, size=(37, table.shape[0]), dtype=np.uint8)
    plain = float(d.sum()) - 2.0 * table[np.arange(table.shape[0]), masks].sum(axis=1)
    for block in (1, 3, 256, 10_000):
        monkeypatch.setattr(resampling, "GATHER_BYTES", block)
        got = resampling._flipped_sums(masks, table, float(d.sum()))
        assert got.tobytes() == plain.tobytes()


@pytest.mark.parametrize("n,exact", [(12, True), (40, False)])
def test_randomization_p_value_does_not_depend_on_the_units(n, exact):
    # sign flips only compare sums of the same differences: scaling them changes nothing,
    # down to differences of 1e-11 (the tolerance for rounding is relative to their scale)
    d = np.random.default_rng(0).normal(0.3, 1, n)
    ref = randomization_test(d, np.zeros(n), permutations=2000, seed=4)
    assert ref.details["exact"] is exact and 0.01 < ref.p_value < 0.5
    for scale in (1e-6, 1e-9, 1e-10, 1e6):
        assert randomization_test(d * scale, np.zeros(n), permutations=2000,
                                  seed=4).p_value == ref.p_value


def test_randomization_large_is_vectorised():
    x, y = sample(10_000, 8, shift=0.002)
    r = randomization_test(x, y, permutations=20_000)
    assert 0 < r.p_value <= 1 and r.details["permutations"] == 20_000
    t = paired_t_test(x, y)
    assert abs(r.p_value - t.p_value) < 0.02  # large n: the two tests agree


def slow_bootstrap_p(d, resamples, seed):
    rng = np.random.default_rng(seed)
    n = len(d)
    t_obs = d.mean() / (d.std(ddof=1) / math.sqrt(n))
    hits = 0
    means = []
    for _ in range(resamples):
        s = d[rng.integers(0, n, size=n)]
        means.append(s.mean())
        sd = s.std(ddof=1)
        t = (s.mean() - d.mean()) / (sd / math.sqrt(n)) if sd > 0 else (
            0.0 if s.mean() == d.mean() else math.inf)
        hits += abs(t) >= abs(t_obs) - 1e-9 * abs(t_obs)
    return (hits + 1) / (resamples + 1), np.quantile(means, [0.025, 0.975])


def test_bootstrap_equals_slow_loop():
    x, y = sample(25, 9)
    ours = bootstrap_test(x, y, resamples=500, seed=5)
    p, (low, high) = slow_bootstrap_p(x - y, 500, 5)
    assert ours.p_value == p
    assert (ours.ci_low, ours.ci_high) == pytest.approx((low, high), rel=1e-12)


@pytest.mark.parametrize("rows", [1, 3, 100])
def test_bootstrap_independent_of_chunk_size(rows):
    d = sample(40, 10)[0]
    m1, s1 = bootstrap_moments(d, 250, np.random.default_rng(2))
    m2, s2 = bootstrap_moments(d, 250, np.random.default_rng(2), chunk_rows=rows)
    assert np.array_equal(m1, m2) and np.array_equal(s1, s2)


@pytest.mark.parametrize("n", [1, 2, 7, 40, 3000])
def test_bootstrap_moments_are_numpys_mean_and_std_bit_for_bit(n):
    """The moments worked out in the resampled block are numpy's mean and std(ddof=1) of the
    same draws, bit for bit; asked for the means alone, the same means."""
    x = np.random.default_rng(n).normal(size=n) * 10.0 ** np.random.default_rng(n).integers(
        -3, 4, size=n)
    rng = np.random.default_rng(4)
    draws = x[rng.integers(0, n, size=(60, n))]
    means, sds = bootstrap_moments(x, 60, np.random.default_rng(4), chunk_rows=7)
    assert means.tobytes() == draws.mean(axis=1).tobytes()
    assert sds.tobytes() == (draws.std(axis=1, ddof=1) if n > 1 else np.zeros(60)).tobytes()
    alone, none = bootstrap_moments(x, 60, np.random.default_rng(4), with_sd=False)
    assert none is None and alone.tobytes() == means.tobytes()


def test_same_seed_same_numbers_and_nan_pairs_dropped():
    x, y = sample(60, 11)
    x[[3, 9]] = np.nan
    for name in ("randomization", "bootstrap"):
        a = paired_test(name, x, y, seed=123)
        b = paired_test(name, x, y, seed=123)
        assert a.to_dict() == b.to_dict()
        assert a.n == 58 and a.dropped == 2


def test_one_pair():
    # one difference: the sign-flip, sign and signed-rank tests give p = 1 (both signs, or
    # the one win, are as likely under the null); the t and bootstrap tests divide by a
    # standard deviation one difference does not have
    r = randomization_test([1.0], [0.5])
    assert (r.p_value, r.details) == (1.0, {"exact": True, "permutations": 2})
    assert sign_test([1.0], [0.5]).p_value == 1.0
    w = wilcoxon_test([1.0], [0.5])
    assert (w.statistic, w.p_value, w.details["method"]) == (0.0, 1.0, "exact")
    for test in (paired_t_test([1.0], [0.5]), bootstrap_test([1.0], [0.5], resamples=99)):
        assert math.isnan(test.p_value) and math.isnan(test.statistic) and test.n == 1


def test_degenerate_inputs():
    same = [0.5, 0.2, 0.9]
    for name in ("t", "wilcoxon", "sign", "randomization"):
        r = paired_test(name, same, same)
        assert r.p_value == 1.0 and (r.wins, r.ties, r.losses) == (0, 3, 0)
    assert cohens_d(np.zeros(4)) == 0.0
    assert paired_t_test([1, 2, 3], [0, 1, 2]).p_value == 0.0  # constant non-zero difference
    with pytest.raises(Exception, match="unknown paired test"):
        paired_test("z", same, same)


@pytest.mark.filterwarnings("ignore:Precision loss occurred")  # scipy's, on equal differences
def test_equal_differences_as_documented_against_scipy():
    # docs/statistics.md, t-test: s_d = 0. scipy's ttest_rel: NaN for identical systems, inf
    # and p = 0 for equal non-zero differences
    x = np.array([0.5, 0.25, 0.75, 1.0])
    same = paired_t_test(x, x)
    assert (same.statistic, same.p_value, same.effect_size) == (0.0, 1.0, 0.0)
    shifted = paired_t_test(x, x - 0.25)  # exact in binary: every difference is 0.25
    ref = stats.ttest_rel(x, x - 0.25)
    assert (shifted.statistic, shifted.p_value) == (ref.statistic, ref.pvalue) == (math.inf, 0.0)
    assert shifted.effect_size == math.inf
    assert paired_test("bootstrap", x, x).p_value == 1.0
    assert paired_test("bootstrap", x, x - 0.25, permutations=99).p_value == 0.01
    assert paired_test("wilcoxon", x, x - 0.25).p_value == 0.125 == paired_test(
        "sign", x, x - 0.25).p_value
