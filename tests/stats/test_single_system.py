"""Uncertainty of one system, risk against a baseline, rank agreement, power."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
from scipy import stats

from rankwise.errors import InputError
from rankwise.stats import (bootstrap_mean_interval, describe, expected_rbo, kendall_tau,
                            mean_interval, minimum_detectable_effect, rbo, t_interval, trisk,
                            urisk)


def test_t_interval_matches_scipy():
    x = np.random.default_rng(0).random(40)
    low, high = t_interval(x, 0.9)
    ref = stats.t.interval(0.9, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    assert (low, high) == pytest.approx(ref, rel=1e-12)
    assert mean_interval(x, "t", 0.9) == (low, high)


def test_bootstrap_interval_covers_and_is_seeded():
    x = np.random.default_rng(1).random(200)
    low, high = bootstrap_mean_interval(x, resamples=4000, seed=3)
    t_low, t_high = t_interval(x)
    assert low == pytest.approx(t_low, abs=0.01) and high == pytest.approx(t_high, abs=0.01)
    assert bootstrap_mean_interval(x, resamples=4000, seed=3) == (low, high)
    assert mean_interval(x, "bootstrap", resamples=4000, seed=3) == (low, high)
    ref = stats.bootstrap((x,), np.mean, n_resamples=4000, method="percentile", random_state=0)
    assert low == pytest.approx(ref.confidence_interval.low, abs=0.01)


def test_describe():
    s = describe([0.0, 0.0, 0.5, 1.0, np.nan], upper_bound=1.0)
    assert s["n"] == 4 and s["undefined"] == 1
    assert s["share_zero"] == 0.5 and s["share_perfect"] == 0.25
    assert s["median"] == 0.25 and s["max"] == 1.0
    assert describe([3.0, 4.0], upper_bound=None)["share_perfect"] is None


def test_urisk_trisk_by_hand():
    run = np.array([0.5, 0.2, 0.9, 0.4])
    base = np.array([0.3, 0.4, 0.6, 0.4])
    # d = 0.2, -0.2, 0.3, 0; alpha = 5: z = 0.2, -1.2, 0.3, 0
    z = np.array([0.2, -1.2, 0.3, 0.0])
    assert urisk(run, base, alpha=5) == pytest.approx(z.mean())
    assert trisk(run, base, alpha=5) == pytest.approx(z.mean() / (z.std(ddof=1) / 2))
    assert urisk(run, base, alpha=0) == pytest.approx((run - base).mean())
    assert trisk(run, base, alpha=0) == pytest.approx(stats.ttest_rel(run, base).statistic)


@pytest.mark.parametrize("seed", range(4))
def test_kendall_tau_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    a = np.round(rng.random(15), 1)  # with ties: tau-b
    b = np.round(a + rng.normal(0, 0.2, 15), 1)
    assert kendall_tau(a, b) == pytest.approx(stats.kendalltau(a, b).statistic, rel=1e-12)


def slow_rbo_ext(s, l, p):
    """Webber et al. (2010) eq. 32, term by term, from the sets of each prefix."""
    if len(s) > len(l):
        s, l = l, s
    ns, nl = len(s), len(l)
    x = [len(set(s[:d]) & set(l[:d])) for d in range(1, nl + 1)]
    total = sum(x[d - 1] / d * p ** d for d in range(1, nl + 1))
    total += sum(x[ns - 1] * (d - ns) / (ns * d) * p ** d for d in range(ns + 1, nl + 1))
    return (1 - p) / p * total + ((x[nl - 1] - x[ns - 1]) / nl + x[ns - 1] / ns) * p ** nl


def test_rbo():
    a = list("abcdefg")
    assert rbo(a, a) == pytest.approx(1.0)
    assert rbo(a, list("hijk")) == 0.0
    assert rbo(a[:3], a) == pytest.approx(1.0)  # a prefix agrees with everything it shows
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = list(rng.permutation(list("abcdefghij"))[:7])
        y = list(rng.permutation(list("abcdefghijkl")))
        assert rbo(x, y, 0.8) == pytest.approx(slow_rbo_ext(x, y, 0.8), rel=1e-12)
        assert rbo(x, y, 0.8) == pytest.approx(rbo(y, x, 0.8))
    # equal lengths: eq. 30, (1-p)/p sum X_d/d p^d + X_k/k p^k; swap of the top two, p = 0.9
    assert rbo(list("abc"), list("bac")) == pytest.approx(0.1 * (0.9 + 0.81) + 0.729)


def tie_breakings(scores):
    """Every ordering of the items (indices) by score, highest first, ties in every order."""
    values = sorted(set(scores), reverse=True)
    groups = [[i for i, v in enumerate(scores) if v == value] for value in values]
    for parts in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [i for part in parts for i in part]


def brute_force_expected_rbo(a, b, p):
    """Mean of eq. 32 over every tie-breaking of a and of b, each pair equally likely."""
    values = [slow_rbo_ext(x, y, p) for x in tie_breakings(a) for y in tie_breakings(b)]
    return sum(values) / len(values)


@pytest.mark.parametrize("a,b", [
    ([0.5, 0.5, 0.25], [0.6667, 0.75, 0.5]),  # two systems tied on the first measure
    ([0.3, 0.2, 0.1, 0.0], [0.0, 0.1, 0.2, 0.3]),  # no ties: plain RBO
    ([1, 1, 1, 0, 0], [2, 1, 1, 1, 0]),
    ([0.4, 0.4, 0.4, 0.4], [0.1, 0.2, 0.3, 0.4]),  # all tied
    ([3, 1, 2, 2, 1, 3, 0], [1, 1, 2, 0, 0, 1, 2]),
])
@pytest.mark.parametrize("p", [0.9, 0.5])
def test_expected_rbo_is_the_mean_over_every_tie_breaking(a, b, p):
    assert expected_rbo(a, b, p) == pytest.approx(brute_force_expected_rbo(a, b, p), rel=1e-12)
    # it depends on the scores only: the same items listed in any order give the same value
    rng = np.random.default_rng(len(a))
    for _ in range(3):
        order = rng.permutation(len(a))
        assert expected_rbo(np.take(a, order), np.take(b, order), p) == pytest.approx(
            expected_rbo(a, b, p), rel=1e-14)


def test_expected_rbo_without_ties_is_rbo_of_the_orderings():
    a, b = np.array([0.9, 0.1, 0.5, 0.3]), np.array([0.2, 0.4, 0.8, 0.1])
    order = list(np.argsort(-a)), list(np.argsort(-b))
    assert expected_rbo(a, b) == pytest.approx(rbo(*order), rel=1e-14)
    assert expected_rbo(a, a) == pytest.approx(1.0)


def test_minimum_detectable_effect():
    n = 25
    expected = (stats.t.ppf(0.975, n - 1) + stats.t.ppf(0.8, n - 1)) / math.sqrt(n)
    assert minimum_detectable_effect(n) == pytest.approx(expected)
    assert minimum_detectable_effect(100) < minimum_detectable_effect(25)
    assert minimum_detectable_effect(1) == math.inf


@pytest.mark.parametrize("alpha, power, fragment", [
    (0.05, 1.5, "power must be a number strictly between alpha (0.05) and 1"),
    (0.05, 0.05, "power must be"), (0.05, True, "power must be"),
    (0.0, 0.8, "alpha must be strictly between 0 and 1"), (math.nan, 0.8, "alpha must be"),
])
def test_minimum_detectable_effect_checks_its_level_and_power(alpha, power, fragment):
    """As compare checks them: a power of 1.5 gave NaN, 0 or 1 an infinity."""
    with pytest.raises(InputError, match=re.escape(fragment)):
        minimum_detectable_effect(25, alpha=alpha, power=power)
