"""Paired two-system tests on per-query values.

Every test takes the two systems' per-query values ``x`` and ``y`` (aligned on the same
queries), works on the differences ``d = x - y`` and returns a :class:`PairedTest`: the test
statistic, the two-sided p-value, the mean difference with its confidence interval, Cohen's
d for paired samples and the win/tie/loss counts. Pairs with a NaN on either side are dropped
and counted (``dropped``). A difference within the rounding allowance of its two values
(:func:`~rankwise.stats.tolerance.relative_tolerance`: ``1e-9 (|x_q| + |y_q|)``) is a tie, in
the win/tie/loss counts and in the sign and signed-rank tests.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, NamedTuple

import numpy as np

from ..errors import InputError
from ..plain import plain
from .intervals import bootstrap_interval, t_interval
from .resampling import bootstrap_moments, sign_flip_exceedances
from .scaling import power_of_two_scale, scaled
from .tolerance import relative_tolerance

#: The tests :func:`paired_test` knows, by name.
PAIRED_TESTS = ("t", "wilcoxon", "sign", "randomization", "bootstrap")
#: Largest number of non-zero differences for which Wilcoxon's p-value is exact (with or
#: without ties); above it, the tie-corrected normal approximation. The exact distribution of
#: 200 differences takes about 3 ms, of 300 about 30 ms, of 1,000 about a second.
WILCOXON_EXACT_MAX_N = 200


@dataclass
class PairedTest:
    """The outcome of one paired test of ``x`` against ``y`` (differences ``x - y``).

    Attributes
    ----------
    test : str
        ``"t"``, ``"wilcoxon"``, ``"sign"``, ``"randomization"`` or ``"bootstrap"``.
    statistic : float
        t; Wilcoxon's T = min(W+, W-); the number of wins; the mean difference; the
        studentized mean of the bootstrap test.
    p_value : float
        Two-sided.
    n : int
        Pairs used. ``dropped``: pairs left out because a value was NaN.
    mean_difference, ci_low, ci_high, confidence : float
        Mean of ``x - y`` and its confidence interval (t-based; percentile bootstrap for the
        bootstrap test).
    effect_size : float
        Cohen's d for paired samples, ``d_z = mean(d) / sd(d)`` (Cohen 1988, eq. 2.3.5).
    wins, ties, losses : int
        Queries where ``x > y``, ``x == y``, ``x < y`` (``rankwise.compare`` counts them in
        the measure's direction: a win is a lower value for a lower-is-better measure).
    details : dict
        Test-specific settings (``permutations``, ``exact``, ``method``, ...).
    """

    test: str
    statistic: float
    p_value: float
    n: int
    mean_difference: float
    ci_low: float
    ci_high: float
    confidence: float
    effect_size: float
    wins: int
    ties: int
    losses: int
    dropped: int = 0
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The fields as plain Python values (NaN and infinities as None, as JSON needs)."""
        return {k: plain(v) for k, v in asdict(self).items()}


class Differences(NamedTuple):
    """The paired differences ``x - y`` over the pairs where both values are defined, in
    units of ``scale``: ``d = x / scale - y / scale``.

    ``scale`` is a power of two (:func:`~rankwise.stats.scaling.power_of_two_scale` of the
    values) that brings the largest ``|x_q|``, ``|y_q|`` into [1, 2), so that neither the
    differences of values near 1e308 nor the squares of values near 1e-308 leave float64's
    range; ``d * scale`` is ``x - y`` bit for bit wherever that is finite. ``dropped``
    counts the pairs left out because a value was NaN. ``allowance`` is, per pair, the
    rounding allowance of its difference (in the same units), ``relative_tolerance`` of
    ``x_q`` and ``y_q``: ``1e-9 (|x_q| + |y_q|)``. A difference within it counts as 0, and
    two ``|d|`` within the sum of their allowances as equal (``0.6 - 0.2`` is
    ``0.39999999999999997``, ``0.8 - 0.4`` is ``0.4``, and ``0.3 - (0.1 + 0.2)`` is
    ``-5.6e-17``).
    """

    d: np.ndarray
    dropped: int
    allowance: np.ndarray
    scale: float = 1.0


def paired_differences(x: Any, y: Any) -> Differences:
    """``x - y`` over the pairs where both are defined, how many pairs were dropped, and the
    rounding allowance of each difference, all in units of a power of two (``scale``).

    >>> diffs = paired_differences([0.3, 1.0, np.nan], [0.1 + 0.2, 0.5, 0.2])
    >>> diffs.d.tolist(), diffs.dropped   # 0.3 - (0.1 + 0.2): rounding, within 6e-10
    ([-5.551115123125783e-17, 0.5], 1)
    >>> big = paired_differences([1e308], [-1e308])   # 2e308 is beyond float64
    >>> big.d.tolist(), big.scale == 2.0 ** 1023
    ([2.2250738585072014], True)
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise InputError("paired values must be two 1-D arrays of the same length",
                         source="paired test", value=f"{x.shape} and {y.shape}")
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    scale = power_of_two_scale(np.concatenate([x, y]))
    if scale != 1.0:
        x, y = x / scale, y / scale
    return Differences(x - y, int((~keep).sum()), relative_tolerance(np.stack([x, y]), axis=0),
                       scale)


def cohens_d(d: np.ndarray) -> float:
    """Cohen's d for paired samples: ``mean(d) / sd(d)`` (sd with ddof=1).

    NaN with fewer than two pairs; 0 when every difference is 0; +-inf when the differences
    are all equal and not 0. Computed on the differences divided by a power of two
    (:func:`~rankwise.stats.scaling.scaled`), so it is finite for any finite differences.

    >>> cohens_d(np.array([1.0, 2.0, 3.0]))
    2.0
    """
    if len(d) < 2:
        return float("nan")
    d = scaled(d)[0]
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd == 0:
        return 0.0 if mean == 0 else math.copysign(math.inf, mean)
    return mean / sd


def win_tie_loss(d: np.ndarray, allowance: float | np.ndarray = 0.0) -> tuple[int, int, int]:
    """Counts of positive, zero and negative differences; a difference within ``allowance``
    (per difference, as :attr:`Differences.allowance`) counts as zero.

    >>> win_tie_loss(np.array([0.5, 0.0, -0.1, 0.2]))
    (2, 1, 1)
    >>> win_tie_loss(np.array([-5.6e-17, 0.1]), np.array([6e-10, 3e-10]))
    (1, 1, 0)
    """
    return (int((d > allowance).sum()), int((np.abs(d) <= allowance).sum()),
            int((d < -allowance).sum()))


def _result(test: str, diffs: Differences, statistic: float, p: float, confidence: float,
            interval: tuple[float, float] | None = None, **details: Any) -> PairedTest:
    """The outcome; ``interval`` is in units of ``diffs.scale``, as the differences are."""
    d, scale = diffs.d, diffs.scale
    low, high = interval if interval is not None else t_interval(d, confidence)
    wins, ties, losses = win_tie_loss(d, diffs.allowance)
    return PairedTest(test, float(statistic), float(p), len(d),
                      float(d.mean()) * scale if len(d) else float("nan"), low * scale,
                      high * scale, confidence, cohens_d(d), wins, ties, losses, diffs.dropped,
                      details)


def paired_t_test(x: Any, y: Any, confidence: float = 0.95) -> PairedTest:
    """Student's paired t-test.

    ``t = mean(d) / (sd(d) / sqrt(n))`` with ``n - 1`` degrees of freedom; p = 2 P(T >= |t|)
    (Student 1908; Smucker, Allan & Carterette 2007 for its use on IR measures). When every
    difference is equal, t is 0 (all zero, p = 1) or infinite (p = 0).

    Examples
    --------
    >>> r = paired_t_test([0.5, 0.7, 0.9], [0.4, 0.5, 0.6])
    >>> round(r.statistic, 4), round(r.p_value, 4)
    (3.4641, 0.0742)
    """
    from scipy import stats

    diffs = paired_differences(x, y)
    d = diffs.d
    n = len(d)
    if n < 2:
        return _result("t", diffs, float("nan"), float("nan"), confidence)
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd == 0:
        t = 0.0 if mean == 0 else math.copysign(math.inf, mean)
    else:
        t = mean / (sd / math.sqrt(n))
    p = 1.0 if t == 0 else float(2 * stats.t.sf(abs(t), n - 1))
    return _result("t", diffs, t, p, confidence, df=n - 1)


def wilcoxon_test(x: Any, y: Any, confidence: float = 0.95) -> PairedTest:
    """Wilcoxon's signed-rank test (Wilcoxon 1945), exact with or without ties.

    Zero differences are dropped first (Wilcoxon's ``zero_method="wilcox"``), the ``m``
    others ranked by ``|d|`` (ties get their mean rank); a difference within its rounding
    allowance is zero, and sorted ``|d|`` closer than the sum of their allowances are tied
    (:class:`Differences`), so the ranks do not depend on float noise nor the p-value on the
    units of the values. ``W+`` and ``W-`` are the sums of the ranks of the positive and the
    negative differences and ``T = min(W+, W-)``. Under the null hypothesis each rank carries
    either sign with probability 1/2, so with ``m <= 200`` (:data:`WILCOXON_EXACT_MAX_N`) the
    p-value is exact: ``p = min(1, 2 P(W+ <= T))`` over the ``2**m`` sign vectors of the
    observed mid-ranks (the null distribution conditional on the ranks, which handles ties
    exactly: Lehmann 1975, *Nonparametrics: Statistical Methods Based on Ranks*, ch. 3),
    counted by :func:`signed_rank_cdf`. Without ties it is the classic exact distribution
    (:func:`scipy.stats.wilcoxon`, ``method="exact"``). Above 200, the normal approximation
    ``z = (T - m(m+1)/4) / sqrt(m(m+1)(2m+1)/24 - Σ(t³ - t)/48)`` over the tie groups of
    sizes t, ``p = 2 Φ(z)``, without continuity correction.
    ``details["method"]`` says which (``"exact"`` or ``"asymptotic"``). p = 1 when every
    difference is zero.

    Examples
    --------
    >>> r = wilcoxon_test([0.5, 0.7, 0.9, 0.3], [0.4, 0.5, 0.6, 0.35])
    >>> r.statistic, r.p_value, r.details["method"]
    (1.0, 0.25, 'exact')
    >>> wilcoxon_test([0.2] * 5, [0.0] * 5).p_value   # five tied wins: 2 of 32 sign vectors
    0.0625
    """
    diffs = paired_differences(x, y)
    beyond = np.abs(diffs.d) > diffs.allowance
    nonzero = diffs.d[beyond]
    if len(nonzero) == 0:
        return _result("wilcoxon", diffs, 0.0, 1.0, confidence, method="exact")
    doubled, sizes = _doubled_mid_ranks(np.abs(nonzero), diffs.allowance[beyond])
    w_plus = int(doubled[nonzero > 0].sum())
    t2 = min(w_plus, int(doubled.sum()) - w_plus)  # 2T, an integer
    if len(nonzero) <= WILCOXON_EXACT_MAX_N:
        method, p = "exact", min(1.0, 2.0 * signed_rank_cdf(doubled, t2))
    else:
        method, p = "asymptotic", _signed_rank_normal_p(t2 / 2, len(nonzero), sizes)
    return _result("wilcoxon", diffs, t2 / 2, p, confidence, method=method)


def _doubled_mid_ranks(a: np.ndarray, allowance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Twice the mid-ranks of ``a`` (integers: a tie group over ranks i..j gets ``i + j``),
    in the order of ``a``, and the sizes of the tie groups. Sorted, two neighbours closer
    than the sum of their rounding allowances are in one tie group."""
    order = np.argsort(a, kind="stable")
    near = allowance[order][1:] + allowance[order][:-1]
    starts = np.flatnonzero(np.r_[True, np.diff(a[order]) > near])
    sizes = np.diff(np.r_[starts, len(a)])
    doubled = np.empty(len(a), dtype=np.int64)
    doubled[order] = np.repeat(2 * starts + 1 + sizes, sizes)  # (starts + 1) + (starts + sizes)
    return doubled, sizes


def signed_rank_cdf(doubled: np.ndarray, t2: int) -> float:
    """``P(W <= t2)`` for ``W = Σ_i s_i r_i`` with independent ``s_i`` in {0, 1}, each 1 with
    probability 1/2: the null distribution of twice ``W+`` when ``r`` are twice the ranks.

    A dynamic programme over the sums 0..t2 (integers), one rank at a time:
    ``P_i(w) = (P_{i-1}(w) + P_{i-1}(w - r_i)) / 2`` (the generating function
    ``Π_i (1 + z^{r_i}) / 2`` expanded up to ``z^t2``), in ``O(m t2)`` operations.
    Probabilities are multiples of ``2**-m``, exact in float64 while the counts stay below
    ``2**53``.

    >>> signed_rank_cdf(np.array([2, 4, 6]), 2)   # ranks 1, 2, 3: W+ in {0, 1} for 2 of 8
    0.25
    """
    pmf = np.zeros(t2 + 1)
    pmf[0] = 1.0
    for r in doubled[doubled <= t2]:
        pmf[r:] = pmf[r:] + pmf[:-r]
        pmf *= 0.5
    return float(pmf.sum()) * 0.5 ** int((doubled > t2).sum())


def _signed_rank_normal_p(t: float, m: int, sizes: np.ndarray) -> float:
    """Two-sided p of T by the normal approximation with the tie-corrected variance."""
    from scipy import stats

    mean = m * (m + 1) / 4
    ties = float((sizes.astype(np.float64) ** 3 - sizes).sum())
    var = (m * (m + 1) * (2 * m + 1) - ties / 2) / 24
    return min(1.0, float(2 * stats.norm.cdf((t - mean) / math.sqrt(var))))


def sign_test(x: Any, y: Any, confidence: float = 0.95) -> PairedTest:
    """The sign test: wins among the non-tied pairs against Binomial(wins + losses, 1/2).

    Exact two-sided binomial p-value (:func:`scipy.stats.binomtest`); ties are left out
    (Conover 1999, *Practical Nonparametric Statistics*, §3.4). The statistic is the number
    of wins; p = 1 when every pair is tied.

    Examples
    --------
    >>> sign_test([1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 0]).p_value
    0.0625
    """
    from scipy import stats

    diffs = paired_differences(x, y)
    wins, _, losses = win_tie_loss(diffs.d, diffs.allowance)
    p = 1.0 if wins + losses == 0 else stats.binomtest(wins, wins + losses, 0.5).pvalue
    return _result("sign", diffs, wins, p, confidence)


def randomization_test(x: Any, y: Any, confidence: float = 0.95, permutations: int = 10_000,
                       seed: int | np.random.Generator | None = 0, exact: bool | None = None,
                       chunk_rows: int | None = None) -> PairedTest:
    """Fisher's randomization (sign-flip) test of the mean difference.

    Under the null hypothesis the labels of each pair are exchangeable, so each difference is
    ``+d_i`` or ``-d_i`` with equal probability. With ``S = sum(s_i d_i)`` over sign vectors s,
    the two-sided p-value is the share of sign vectors with ``|S| >= |sum(d)|`` (Fisher 1935;
    Smucker, Allan & Carterette 2007, CIKM). When at most 20 differences are non-zero (or
    ``exact=True``) all ``2**n`` vectors are enumerated and p is that exact fraction;
    otherwise ``permutations`` random vectors are drawn and ``p = (count + 1) /
    (permutations + 1)``, which counts the observed vector and is never 0 (Phipson & Smyth
    2010). A difference within its rounding allowance is 0 here, as a tie is in the other
    tests (five differences of ``0.1 + 0.2 - 0.3`` gave p = 2/32). The statistic is the mean
    difference.

    Examples
    --------
    >>> r = randomization_test([0.5, 0.7, 0.9, 0.3], [0.4, 0.5, 0.6, 0.35])
    >>> r.p_value, r.details["exact"]   # 4 of the 16 sign vectors reach |sum| = 0.55
    (0.25, True)
    """
    diffs = paired_differences(x, y)
    d = diffs.d
    rng = np.random.default_rng(seed)
    flipped = np.where(np.abs(d) <= diffs.allowance, 0.0, d)
    count, total, was_exact = sign_flip_exceedances(flipped, permutations, rng, exact,
                                                    chunk_rows)
    p = count / total if was_exact else (count + 1) / (total + 1)
    mean = float(d.mean()) * diffs.scale if len(d) else float("nan")
    return _result("randomization", diffs, mean, p, confidence, exact=was_exact,
                   permutations=total)


def bootstrap_test(x: Any, y: Any, confidence: float = 0.95, resamples: int = 10_000,
                   seed: int | np.random.Generator | None = 0,
                   chunk_rows: int | None = None) -> PairedTest:
    """The paired bootstrap test of the mean difference (studentized, shifted to the null).

    ``t = mean(d) / (sd(d) / sqrt(n))``; each resample ``d*`` (n draws with replacement)
    gives ``t* = (mean(d*) - mean(d)) / (sd(d*) / sqrt(n))``, the bootstrap distribution of t
    under the null hypothesis; ``p = (#{|t*| >= |t|} + 1) / (resamples + 1)`` (Efron &
    Tibshirani 1993, Algorithm 16.2; Sakai 2006, SIGIR, "Evaluating evaluation metrics based
    on the bootstrap"). The interval is the percentile interval of ``mean(d*)``.

    Examples
    --------
    >>> r = bootstrap_test([0.5, 0.7, 0.9, 0.3, 0.6], [0.4, 0.5, 0.6, 0.35, 0.1], resamples=999)
    >>> r.test, 0 < r.p_value < 1, r.ci_low < r.mean_difference < r.ci_high
    ('bootstrap', True, True)
    """
    diffs = paired_differences(x, y)
    d = diffs.d
    n = len(d)
    if n < 2:
        return _result("bootstrap", diffs, float("nan"), float("nan"), confidence,
                       resamples=resamples)
    rng = np.random.default_rng(seed)
    means, sds = bootstrap_moments(d, resamples, rng, chunk_rows)
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    t_obs = _studentize(np.array([mean]), np.array([sd]), 0.0, n)[0]
    t_star = _studentize(means, sds, mean, n)
    threshold = abs(t_obs) - relative_tolerance(np.array([t_obs])) if math.isfinite(t_obs) \
        else math.inf
    reached = np.abs(t_star) >= threshold
    p = (int(reached.sum()) + 1) / (resamples + 1)
    interval = bootstrap_interval(means, confidence)
    return _result("bootstrap", diffs, t_obs, min(p, 1.0), confidence, interval,
                   resamples=resamples, ci="percentile")


def _studentize(means: np.ndarray, sds: np.ndarray, center: float, n: int) -> np.ndarray:
    """``(means - center) / (sds / sqrt(n))``, with 0/0 as 0 and x/0 as +-inf."""
    shifted = means - center
    with np.errstate(divide="ignore", invalid="ignore"):
        t = shifted / (sds / math.sqrt(n))
    return np.where(sds > 0, t, np.where(shifted == 0, 0.0, np.copysign(np.inf, shifted)))


_TESTS: dict[str, Callable[..., PairedTest]] = {
    "t": paired_t_test, "wilcoxon": wilcoxon_test, "sign": sign_test,
    "randomization": randomization_test, "bootstrap": bootstrap_test,
}


def paired_test(test: str, x: Any, y: Any, confidence: float = 0.95, permutations: int = 10_000,
                seed: int | np.random.Generator | None = 0) -> PairedTest:
    """Run the paired test named ``test`` (one of :data:`PAIRED_TESTS`).

    ``permutations`` is the number of random sign vectors (randomization) or resamples
    (bootstrap); ``seed`` seeds both.

    >>> paired_test("sign", [1, 1, 0], [0, 0, 0]).wins
    2
    """
    if test not in _TESTS:
        raise InputError(f"unknown paired test: expected one of {', '.join(PAIRED_TESTS)}",
                         source="test", value=str(test))
    if test == "randomization":
        return randomization_test(x, y, confidence, permutations, seed)
    if test == "bootstrap":
        return bootstrap_test(x, y, confidence, permutations, seed)
    return _TESTS[test](x, y, confidence)


