"""Corrections against statsmodels; ANOVA and Tukey HSD against statsmodels; randomized Tukey
HSD against a slow loop; groups."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from statsmodels.formula.api import ols
from statsmodels.sandbox.stats.multicomp import tukeyhsd as sm_tukeyhsd
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.multitest import multipletests

from rankwise.stats import adjust_p_values, anova_blocked, groups, randomized_tukey_hsd, tukey_hsd

METHODS = {"bonferroni": "bonferroni", "holm": "holm", "bh": "fdr_bh"}


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("ours,theirs", METHODS.items())
def test_corrections_match_statsmodels(seed, ours, theirs):
    rng = np.random.default_rng(seed)
    p = rng.random(12) ** 3
    p[:2] = p[2]  # ties
    adjusted = adjust_p_values(p, ours)
    assert adjusted == pytest.approx(multipletests(p, method=theirs)[1], abs=1e-14)
    assert (adjusted <= 1).all() and (adjusted >= p).all()
    order = np.argsort(p)
    assert (np.diff(adjusted[order]) >= -1e-15).all()  # monotone in the raw p-values


def test_corrections_skip_nan_and_none():
    p = np.array([0.01, np.nan, 0.02])
    assert np.isnan(adjust_p_values(p, "holm")[1])
    assert adjust_p_values(p, "bonferroni")[[0, 2]].tolist() == [0.02, 0.04]
    assert np.array_equal(adjust_p_values(p, "none"), p, equal_nan=True)
    with pytest.raises(Exception, match="unknown correction"):
        adjust_p_values(p, "sidak")


def scores(k=4, n=30, seed=0):
    rng = np.random.default_rng(seed)
    topic = rng.random(n)
    effect = np.linspace(0, 0.08, k)
    return np.clip(topic[None, :] + effect[:, None] + rng.normal(0, 0.1, (k, n)), 0, 1)


def frame(s):
    k, n = s.shape
    return pd.DataFrame({"y": s.ravel(), "system": np.repeat(np.arange(k), n).astype(str),
                         "query": np.tile(np.arange(n), k).astype(str)})


@pytest.mark.parametrize("seed", [0, 1])
def test_anova_matches_statsmodels(seed):
    s = scores(seed=seed)
    ours = anova_blocked(s)
    table = anova_lm(ols("y ~ C(system) + C(query)", data=frame(s)).fit())
    assert ours.ss_system == pytest.approx(table.loc["C(system)", "sum_sq"], rel=1e-9)
    assert ours.ss_query == pytest.approx(table.loc["C(query)", "sum_sq"], rel=1e-9)
    assert ours.ss_error == pytest.approx(table.loc["Residual", "sum_sq"], rel=1e-9)
    assert ours.df_error == table.loc["Residual", "df"]
    assert ours.f_system == pytest.approx(table.loc["C(system)", "F"], rel=1e-9)
    assert ours.p_system == pytest.approx(table.loc["C(system)", "PR(>F)"], rel=1e-8)


def exact_blocked_sums_of_squares(s):
    """SS_sys and SS_err of the blocked design in rational arithmetic on the float inputs:
    no rounding at all."""
    k, n = s.shape
    y = [[Fraction(float(v)) for v in row] for row in s]
    system = [sum(row) / n for row in y]
    query = [sum(y[i][j] for i in range(k)) / k for j in range(n)]
    grand = sum(system) / k
    ss_system = n * sum((m - grand) ** 2 for m in system)
    ss_error = sum((y[i][j] - system[i] - query[j] + grand) ** 2
                   for i in range(k) for j in range(n))
    return float(ss_system), float(ss_error)


@pytest.mark.parametrize("query_sd,error_sd", [(1e4, 1e-4), (1e5, 1e-5)])
def test_anova_when_query_effects_dwarf_the_error(query_sd, error_sd):
    # SS_err as SS_total - SS_sys - SS_query cancelled: here 0 for 9e-7 and for 1e-8 (F
    # infinite, every Tukey p-value 0); the residuals computed directly do not
    from scipy import stats

    rng = np.random.default_rng(int(query_sd))
    k, n = 4, 30
    s = (rng.normal(0, query_sd, n)[None, :] + np.arange(k)[:, None] * error_sd * 0.5
         + rng.normal(0, error_sd, (k, n)))
    ours = anova_blocked(s)
    ss_system, ss_error = exact_blocked_sums_of_squares(s)
    assert ours.ss_error == pytest.approx(ss_error, rel=1e-12)
    assert ours.ss_system == pytest.approx(ss_system, rel=1e-12)
    assert ours.f_system == pytest.approx(ss_system / (k - 1) / (ss_error / ((k - 1) * (n - 1))),
                                          rel=1e-12)
    # statsmodels' least squares carry rounding of their own here (about 1e-7 in SS_err and
    # 3e-6 in F at query sd 1e5, 1e-9 at 1e4)
    table = anova_lm(ols("y ~ C(system) + C(query)", data=frame(s)).fit())
    assert ours.ss_error == pytest.approx(table.loc["Residual", "sum_sq"], rel=1e-5)
    assert ours.f_system == pytest.approx(table.loc["C(system)", "F"], rel=1e-5)
    assert ours.p_system == pytest.approx(table.loc["C(system)", "PR(>F)"], rel=1e-4)
    _, diff, p, _ = tukey_hsd(s)
    se = np.sqrt(ss_error / ((k - 1) * (n - 1)) / n)
    assert p == pytest.approx(stats.studentized_range.sf(np.abs(diff) / se, k, (k - 1) * (n - 1)),
                              rel=1e-6)
    assert 0 < p.max() < 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tukey_matches_statsmodels(seed):
    s = scores(k=5, n=25, seed=seed)
    k, n = s.shape
    idx, diff, p, anova = tukey_hsd(s)
    # statsmodels' Tukey HSD with the blocked design's error variance and degrees of freedom
    (i1, i2), _, meandiffs, std_pairs, _, _, df_total, _, pvalues = sm_tukeyhsd(
        s.mean(axis=1), n, anova.ms_error, df=anova.df_error / k)
    assert df_total == anova.df_error
    assert np.array_equal(idx[:, 0], i1) and np.array_equal(idx[:, 1], i2)
    assert -diff == pytest.approx(meandiffs, rel=1e-12)  # statsmodels: mean_j - mean_i
    assert np.sqrt(anova.ms_error / n) == pytest.approx(std_pairs[0], rel=1e-12)
    # statsmodels' p-values come from an approximation of the studentized range (psturng,
    # floored at 0.001)
    assert np.maximum(p, 0.001) == pytest.approx(pvalues, abs=0.005)


def test_two_systems_tukey_is_the_paired_t_test():
    from scipy import stats

    s = scores(k=2, n=20, seed=3)
    _, _, p, anova = tukey_hsd(s)
    assert p[0] == pytest.approx(stats.ttest_rel(s[0], s[1]).pvalue, rel=1e-6)
    assert anova.f_system == pytest.approx(stats.ttest_rel(s[0], s[1]).statistic ** 2)


def slow_randomized_tukey(s, permutations, seed):
    rng = np.random.default_rng(seed)
    k, n = s.shape
    means = s.mean(axis=1)
    counts = {}
    spreads = []
    for _ in range(permutations):
        keys = rng.random((n, k))  # one row of random keys per query
        shuffled = np.empty((k, n))
        for q in range(n):
            shuffled[:, q] = s[np.argsort(keys[q]), q]
        m = shuffled.mean(axis=1)
        spreads.append(m.max() - m.min())
    out = []
    for i in range(k):
        for j in range(i + 1, k):
            hits = sum(sp >= abs(means[i] - means[j]) - 1e-9 for sp in spreads)
            out.append((hits + 1) / (permutations + 1))
    return np.array(out), counts


def test_randomized_tukey_equals_slow_loop_and_chunks():
    s = scores(k=4, n=12, seed=4)
    idx, diff, p = randomized_tukey_hsd(s, 400, seed=9)
    slow, _ = slow_randomized_tukey(s, 400, 9)
    assert np.array_equal(p, slow)
    for rows in (1, 13, 400):
        assert np.array_equal(randomized_tukey_hsd(s, 400, seed=9, chunk_rows=rows)[2], p)


def test_randomized_tukey_with_one_query_gives_p_one():
    # every shuffle of one query's scores has the observed range, which no difference exceeds
    idx, diff, p = randomized_tukey_hsd([[0.2], [0.9], [0.5]], 200, seed=1)
    assert diff.tolist() == pytest.approx([-0.7, -0.3, 0.4]) and p.tolist() == [1.0] * 3
    with pytest.raises(Exception, match="2 systems x 2 queries"):
        tukey_hsd([[0.2], [0.9]])  # no error variance: Tukey's HSD needs two queries


def test_randomized_tukey_does_not_depend_on_the_units():
    s = scores(k=3, n=15, seed=6)
    p = randomized_tukey_hsd(s, 300, seed=2)[2]
    assert p.min() < 0.5
    for scale in (1e-10, 1e6):
        assert np.array_equal(randomized_tukey_hsd(s * scale, 300, seed=2)[2], p)


def test_randomized_tukey_close_to_tukey():
    s = scores(k=4, n=50, seed=5)
    _, _, p_rand = randomized_tukey_hsd(s, 5000, seed=1)
    _, _, p_tukey, _ = tukey_hsd(s)
    # Carterette 2012: close to Tukey's HSD on normal-ish data, and ordered the same way
    assert np.abs(p_rand - p_tukey).max() < 0.1
    assert np.array_equal(np.argsort(p_rand), np.argsort(p_tukey))


def test_groups():
    sig = np.zeros((4, 4), dtype=bool)
    assert groups([0.4, 0.3, 0.2, 0.1], sig) == ["a"] * 4
    sig[0, 3] = sig[3, 0] = True
    assert groups([0.4, 0.3, 0.2, 0.1], sig) == ["a", "ab", "ab", "b"]
    full = ~np.eye(3, dtype=bool)
    assert groups([0.1, 0.3, 0.2], full) == ["c", "a", "b"]
    # 28 systems, each different from all but its neighbours: 27 groups of two, so system
    # 26 is in groups z and aa, written "z,aa" ("zaa" could be z and aa, or za and a)
    far = np.abs(np.subtract.outer(np.arange(28), np.arange(28))) >= 2
    letters = groups(-np.arange(28.0), far)
    assert letters[:2] == ["a", "a,b"] and letters[26:] == ["z,aa", "aa"]


def test_undefined_p_values_stay_nan_and_do_not_count():
    # docs/statistics.md: NaN is not counted in m (statsmodels counts it for holm and
    # bonferroni and gives NaN everywhere for fdr_bh); the defined ones are corrected as a
    # family of their own
    p = np.array([0.01, np.nan, 0.04, 0.03])
    for ours, theirs in (("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")):
        adjusted = adjust_p_values(p, ours)
        assert np.isnan(adjusted[1])
        assert adjusted[[0, 2, 3]] == pytest.approx(multipletests(p[[0, 2, 3]], method=theirs)[1])
