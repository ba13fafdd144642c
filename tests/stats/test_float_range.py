"""Per-query values near float64's limits (1e308, 1e-308, subnormals): every statistic is
the one of the same values in ordinary units, with no numpy warning (docs/statistics.md,
"Values near the limits of float64")."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from rankwise.stats import (anova_blocked, bootstrap_mean_interval, cohens_d, describe,
                            expected_rbo, kendall_tau, paired_test, randomized_tukey_hsd,
                            t_interval, trisk, tukey_hsd, urisk)
from rankwise.stats.paired import PAIRED_TESTS

#: Powers of two: multiplying by them is exact, so the results must be exactly the ordinary
#: ones in the other units. 2**1022: the differences (up to 3 * 2**1022) and the sums of the
#: values overflow; 2**-1000: their squares underflow to 0.
HUGE, TINY = 2.0 ** 1022, 2.0 ** -1000


@pytest.fixture(autouse=True)
def numpy_warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def sample(n=12, seed=4):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.5, 1.5, n)
    return x, np.clip(x - 0.4 + rng.normal(0, 0.6, n), -1.5, 1.5)


@pytest.mark.parametrize("factor", [HUGE, TINY])
@pytest.mark.parametrize("test", PAIRED_TESTS)
def test_paired_tests_do_not_depend_on_units(test, factor):
    x, y = sample()
    ordinary = paired_test(test, x, y, permutations=500, seed=3)
    scaled = paired_test(test, x * factor, y * factor, permutations=500, seed=3)
    for name in ("p_value", "effect_size", "wins", "ties", "losses", "n"):
        assert getattr(scaled, name) == getattr(ordinary, name), name
    if test in ("randomization",):  # the statistic is the mean difference
        assert scaled.statistic == ordinary.statistic * factor
    else:
        assert scaled.statistic == ordinary.statistic
    for name in ("mean_difference", "ci_low", "ci_high"):
        assert scaled.__dict__[name] == ordinary.__dict__[name] * factor, name


def test_t_test_near_the_largest_float_matches_scipy_in_ordinary_units():
    x, y = sample(30, 8)
    ours = paired_test("t", x * HUGE, y * HUGE)
    ref = stats.ttest_rel(x, y)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    d = x - y
    assert ours.effect_size == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
    assert math.isfinite(ours.ci_low) and math.isfinite(ours.ci_high)


def test_subnormal_values_are_tested_as_the_integers_they_are_multiples_of():
    unit = 5e-324  # the smallest subnormal: x and y are exact multiples of it
    x, y = np.array([3.0, 9.0, 4.0, 12.0, 7.0]), np.array([1.0, 2.0, 5.0, 3.0, 1.0])
    ours = paired_test("t", x * unit, y * unit)
    ref = stats.ttest_rel(x, y)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    assert ours.mean_difference == 4.6 * unit  # 23 units / 5, rounded to a whole unit


def test_differences_beyond_float64_are_wins_not_ties():
    # 1e308 - (-1e308) is beyond float64: it was inf, its rounding allowance inf, and the
    # query counted as a tie; Cohen's d was NaN
    r = paired_test("t", [1e308, 1.5e308, 1.7e308, 0.9e308], [-1e308, 0.5e308, -1.7e308, 1e307])
    assert (r.wins, r.ties, r.losses) == (4, 0, 0)
    d = np.array([2.0, 1.0, 3.4, 0.8])  # the differences in units of 1e308
    assert r.statistic == pytest.approx(stats.ttest_1samp(d, 0).statistic, rel=1e-12)
    assert r.effect_size == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
    assert r.mean_difference == math.inf  # 1.8e308: beyond float64, no finite value
    assert r.ci_low == pytest.approx(stats.ttest_1samp(d, 0).confidence_interval().low * 1e308)


def test_all_equal_differences_of_huge_values():
    r = paired_test("t", [1e308] * 5, [0.0] * 5)
    assert (r.statistic, r.p_value, r.mean_difference, r.effect_size) == (math.inf, 0.0, 1e308,
                                                                          math.inf)
    assert (r.ci_low, r.ci_high) == (1e308, 1e308)
    assert paired_test("bootstrap", [1e308] * 5, [0.0] * 5, permutations=99).p_value == 0.01


@pytest.mark.parametrize("factor", [HUGE, TINY])
def test_one_system_summaries_do_not_depend_on_units(factor):
    x, _ = sample(20, 5)
    assert t_interval(x * factor) == tuple(v * factor for v in t_interval(x))
    assert bootstrap_mean_interval(x * factor, resamples=300) == tuple(
        v * factor for v in bootstrap_mean_interval(x, resamples=300))
    ordinary, scaled = describe(x, None), describe(x * factor, None)
    for key in ("mean", "sd", "min", "p10", "p25", "median", "p75", "p90", "max"):
        assert scaled[key] == ordinary[key] * factor, key
    assert cohens_d((x - 0.2) * factor) == cohens_d(x - 0.2)


@pytest.mark.parametrize("factor", [HUGE, TINY])
def test_risk_does_not_depend_on_units(factor):
    x, y = sample(15, 6)
    assert urisk(x * factor, y * factor) == urisk(x, y) * factor
    assert trisk(x * factor, y * factor) == trisk(x, y)


@pytest.mark.parametrize("factor", [HUGE, TINY])
def test_many_system_tests_do_not_depend_on_units(factor):
    rng = np.random.default_rng(7)
    s = rng.uniform(-1.5, 1.5, (3, 10)) + np.array([[0.0], [0.3], [0.9]])
    s = np.clip(s, -1.5, 1.5)
    ordinary, scaled = anova_blocked(s), anova_blocked(s * factor)
    assert (scaled.f_system, scaled.p_system) == (ordinary.f_system, ordinary.p_system)
    assert scaled.root_ms_error == ordinary.root_ms_error * factor
    assert scaled.ms_error == (math.inf if factor == HUGE else 0.0)  # beyond float64 / below it
    _, diff, p, _ = tukey_hsd(s)
    _, diff_scaled, p_scaled, _ = tukey_hsd(s * factor)
    assert np.array_equal(p_scaled, p) and np.array_equal(diff_scaled, diff * factor)
    _, diff, p = randomized_tukey_hsd(s, 300, seed=2)
    _, diff_scaled, p_scaled = randomized_tukey_hsd(s * factor, 300, seed=2)
    assert np.array_equal(p_scaled, p) and np.array_equal(diff_scaled, diff * factor)


def test_agreement_of_means_near_the_largest_float():
    a, b = np.array([1.7e308, -1.7e308, 0.0]), np.array([1.0, 3.0, 2.0])
    assert kendall_tau(a, b) == stats.kendalltau(a, b).statistic
    assert expected_rbo(a, b) == expected_rbo([3.0, 1.0, 2.0], b)


@pytest.mark.parametrize("test", ["t", "wilcoxon", "randomization", "bootstrap", "tukey",
                                  "randomized-tukey"])
def test_compare_of_dcg_under_a_huge_gain_map_is_the_ordinary_comparison_in_other_units(test):
    # DCG is linear in the gains: under {1: 2**1018, 2: 2**1020} every per-query value is
    # 2**1018 times the one under {1: 1, 2: 4}, and the sums of 8 such values overflow
    from rankwise import compare

    rng = np.random.default_rng(1)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(6)} for i in range(8)}
    runs = {name: {q: {d: float(rng.random()) for d in docs} for q, docs in qrels.items()}
            for name in "abc"}
    kwargs = {"measures": ["DCG@5"], "test": test, "permutations": 300, "baseline": None}
    ordinary = compare(qrels, runs, gain={1: 1, 2: 4}, **kwargs)
    huge = compare(qrels, runs, gain={1: 2.0 ** 1018, 2: 2.0 ** 1020}, **kwargs)
    for mine, theirs in zip(huge.tests, ordinary.tests):
        a, b = mine["test"], theirs["test"]
        assert (a.p_value, a.effect_size, mine["significant"]) == (
            b.p_value, b.effect_size, theirs["significant"])
        assert (a.mean_difference, a.ci_low, a.ci_high) == pytest.approx(
            (b.mean_difference * 2.0 ** 1018, b.ci_low * 2.0 ** 1018, b.ci_high * 2.0 ** 1018),
            rel=1e-12)
    for system in "abc":
        mine, theirs = huge.summary["DCG@5"][system], ordinary.summary["DCG@5"][system]
        assert (mine["mean"], mine["sd"]) == pytest.approx(
            (theirs["mean"] * 2.0 ** 1018, theirs["sd"] * 2.0 ** 1018), rel=1e-12)
    assert huge.groups == ordinary.groups
    table = huge.to_table().split("\nconventions:")[0]  # (the gain map is printed in full)
    assert "e+307" in table and len(max(table.splitlines(), key=len)) < 250  # not 308 digits
    for text in (huge.to_markdown(), huge.to_latex(), huge.to_csv(), huge.to_json()):
        assert text
