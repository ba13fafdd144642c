"""Many systems at once: two-way ANOVA blocked by query, Tukey's HSD, the randomized Tukey
HSD test, and the groups of systems that are not significantly different.

``scores`` is always a ``(systems, queries)`` matrix of per-query values without NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from .resampling import CHUNK_ELEMENTS
from .scaling import scaled, unscaled
from .tolerance import relative_tolerance


@dataclass
class Anova:
    """Two-way ANOVA without interaction, systems x queries (one value per cell).

    Attributes: sums of squares, degrees of freedom and mean squares of systems, queries and
    error, the F statistic and p-value of the system effect, and ``root_ms_error``,
    ``sqrt(MS_err)`` in the units of the values (finite where the squares of values near
    1e308 are not: the sums of squares are then ``inf``, while F, p and Tukey's tests are
    computed on the values divided by a power of two and stay exact).
    """

    ss_system: float
    ss_query: float
    ss_error: float
    df_system: int
    df_query: int
    df_error: int
    ms_error: float
    f_system: float
    p_system: float
    root_ms_error: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in self.__dict__.items()}


def _matrix(scores: Any, min_queries: int = 2) -> np.ndarray:
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] < 2 or s.shape[1] < min_queries or np.isnan(s).any():
        raise InputError("scores must be a (systems, queries) matrix without NaN, at least "
                         f"2 systems x {min_queries} queries", source="scores",
                         value=str(s.shape))
    return s


def anova_blocked(scores: Any) -> Anova:
    """Two-way ANOVA of ``y_sq = mu + system_s + query_q + e_sq`` (queries as blocks).

    With k systems, n queries, grand mean ``m`` and system and query means ``m_s``, ``m_q``:
    ``SS_sys = n Σ_s (m_s - m)²``, ``SS_query = k Σ_q (m_q - m)²``,
    ``SS_err = Σ (y_sq - m_s - m_q + m)²``; ``F = (SS_sys/(k-1)) / (SS_err/((k-1)(n-1)))``
    (Montgomery, *Design and Analysis of Experiments*, randomized complete block design;
    Carterette 2012, TOIS 30(1), §3). Same numbers as statsmodels' ``anova_lm`` of
    ``ols("y ~ C(system) + C(query)")``. The effects and residuals come from
    :func:`_additive_fit`, not from ``SS_total - SS_sys - SS_query``, which cancels when the
    query effects dwarf the error (query sd 1e5, error sd 1e-5: SS_err came out 0).

    >>> a = anova_blocked([[1.0, 2.0, 3.0], [2.0, 3.0, 4.5]])
    >>> a.df_system, a.df_error, round(a.f_system, 4)   # two systems: F = t² of the paired t-test
    (1, 2, 49.0)
    """
    from scipy import stats

    s, scale = scaled(_matrix(scores))  # squares of values near 1e308 stay finite
    k, n = s.shape
    system, query, residuals = _additive_fit(s)
    ss_system = n * float(((system - system.mean()) ** 2).sum())
    ss_query = k * float(((query - query.mean()) ** 2).sum())
    ss_error = float((residuals ** 2).sum())
    df_system, df_query, df_error = k - 1, n - 1, (k - 1) * (n - 1)
    ms_error = ss_error / df_error
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.float64(ss_system / df_system) / np.float64(ms_error)
    p = float(stats.f.sf(f, df_system, df_error)) if np.isfinite(f) else (0.0 if f > 0 else 1.0)
    # squares back in the values' units: inf beyond float64; times scale twice, as scale²
    # alone can be inf and 0 * inf is NaN
    squares = [v * scale * scale for v in (ss_system, ss_query, ss_error, ms_error)]
    return Anova(*squares[:3], df_system, df_query, df_error, squares[3],
                 float(f) if not np.isnan(f) else 0.0, p, math.sqrt(ms_error) * scale)


def _additive_fit(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """System effects, query effects (up to a constant each) and residuals of
    ``y_sq = mu + system_s + query_q + e_sq``: each query's mean is taken out, then each
    system's mean of what is left, twice. In exact arithmetic the second pass changes
    nothing; in floating point it removes what rounding of the large query means left in the
    first, so residuals far smaller than the query effects keep their digits (the sums of
    squares agree with exact rational arithmetic to about 1e-15 with query effects 1e12
    times the residuals)."""
    residuals = s.copy()
    system = np.zeros(s.shape[0])
    query = np.zeros(s.shape[1])
    for _ in range(2):
        column = residuals.mean(axis=0)
        residuals -= column[None, :]
        query += column
        row = residuals.mean(axis=1)
        residuals -= row[:, None]
        system += row
    return system, query, residuals


def pairs(k: int) -> np.ndarray:
    """All pairs ``(i, j)`` with ``i < j`` of ``k`` systems, as a ``(k(k-1)/2, 2)`` array."""
    i, j = np.triu_indices(k, 1)
    return np.column_stack([i, j])


def tukey_hsd(scores: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, Anova]:
    """Tukey's honestly significant difference test on the blocked design.

    For systems i, j: ``q = |mean_i - mean_j| / sqrt(MS_err / n)`` with MS_err from
    :func:`anova_blocked`; the p-value is ``P(Q >= q)`` for the studentized range
    distribution with k means and ``(k-1)(n-1)`` degrees of freedom (Tukey 1949; Carterette
    2012, §3.2). The p-values already control the family-wise error over all pairs.

    Returns ``(pairs, mean differences (i - j), p-values, anova)``.

    >>> _, diff, p, _ = tukey_hsd([[1.0, 2.0, 3.0, 4.0], [1.5, 2.0, 3.5, 4.0], [3.0, 4.0, 5.0, 6.1]])
    >>> diff.round(3).tolist(), bool(p[0] > 0.05), bool(p[1] < 0.05)
    ([-0.25, -2.025, -1.775], True, True)
    """
    from scipy import stats

    anova = anova_blocked(scores)
    s, scale = scaled(_matrix(scores))  # the means of values near 1e308 stay finite
    k, n = s.shape
    idx = pairs(k)
    means = s.mean(axis=1)
    diff = means[idx[:, 0]] - means[idx[:, 1]]
    se = anova.root_ms_error / scale / math.sqrt(n)  # in units of scale, as diff
    if se == 0:
        p = np.where(diff == 0, 1.0, 0.0)
    else:
        p = stats.studentized_range.sf(np.abs(diff) / se, k, anova.df_error)
    return idx, unscaled(diff, scale), np.minimum(np.asarray(p, dtype=np.float64), 1.0), anova


def randomized_tukey_hsd(scores: Any, permutations: int = 10_000,
                         seed: int | np.random.Generator | None = 0,
                         chunk_rows: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The randomized Tukey HSD test (Carterette 2012, TOIS 30(1), Algorithm 1).

    Under the null hypothesis that all systems are equivalent, the k scores of each query are
    exchangeable across systems. Each of ``permutations`` trials shuffles every query's
    scores across the systems independently and records ``max_s mean_s - min_s mean_s``, the
    range of the system means. The p-value of pair (i, j) is
    ``(#{range* >= |mean_i - mean_j|} + 1) / (permutations + 1)``: comparing every pair with
    the distribution of the largest difference controls the family-wise error.

    Returns ``(pairs, mean differences (i - j), p-values)``. Vectorised over trials in chunks;
    the result does not depend on ``chunk_rows``. With one query every shuffle has the
    observed range, which no pair's difference exceeds: every p-value is 1.

    >>> idx, diff, p = randomized_tukey_hsd([[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]], 999)
    >>> round(float(p[0]), 2)   # only 2 of the 16 shuffle patterns reach the observed range: 0.125
    0.12
    """
    s, scale = scaled(_matrix(scores, min_queries=1))  # means of values near 1e308 stay finite
    k, n = s.shape
    rng = np.random.default_rng(seed)
    idx = pairs(k)
    means = s.mean(axis=1)
    diff = means[idx[:, 0]] - means[idx[:, 1]]
    threshold = np.abs(diff) - relative_tolerance(s) / n
    by_query = np.ascontiguousarray(s.T)  # (n, k)
    rows = chunk_rows or max(1, CHUNK_ELEMENTS // (n * k))
    counts = np.zeros(len(idx), dtype=np.int64)
    for start in range(0, permutations, rows):
        size = min(rows, permutations - start)
        order = np.argsort(rng.random((size, n, k)), axis=2)
        shuffled = np.take_along_axis(np.broadcast_to(by_query, (size, n, k)), order, axis=2)
        m = shuffled.mean(axis=1)  # (size, k)
        spread = m.max(axis=1) - m.min(axis=1)
        counts += (spread[:, None] >= threshold[None, :]).sum(axis=0)
    return idx, unscaled(diff, scale), (counts + 1) / (permutations + 1)


def groups(means: Any, significant: np.ndarray) -> list[str]:
    """Letters of the groups of systems whose means are not significantly different.

    Systems are ordered by mean (highest first); a group is a maximal run of consecutive
    systems in that order of which no two differ significantly; groups get letters a, b, ...
    from the top, and each system lists the letters of all groups it belongs to (the "lines"
    or compact letter display of Tukey's test). ``significant`` is a symmetric boolean
    ``(k, k)`` matrix.

    >>> groups([0.5, 0.4, 0.1], np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0]], dtype=bool))
    ['a', 'a', 'b']
    >>> groups([0.5, 0.4, 0.3], np.array([[0, 0, 1], [0, 0, 0], [1, 0, 0]], dtype=bool))
    ['a', 'ab', 'b']
    """
    m = np.asarray(means, dtype=np.float64)
    k = len(m)
    order = np.argsort(-m, kind="stable")
    sig = np.asarray(significant, dtype=bool)[np.ix_(order, order)]
    runs: list[tuple[int, int]] = []
    end = 0
    for start in range(k):
        end = max(end, start)
        while end + 1 < k and not sig[start:end + 2, start:end + 2].any():
            end += 1
        if not runs or end > runs[-1][1]:
            runs.append((start, end))
    letters: list[list[str]] = [[] for _ in range(k)]
    for g, (start, end) in enumerate(runs):
        for pos in range(start, end + 1):
            letters[order[pos]].append(letter(g))
    return [joined_labels(own, len(runs)) for own in letters]


def joined_labels(labels: Sequence[str], count: int) -> str:
    """Labels (of :func:`letter`) as one string: run together while there are at most 26
    labels (``count``), every one a single letter (``"bc"``); separated by commas beyond
    (``"b,aa,ab"``), where ``"aab"`` could be a and ab, or aa and b.

    >>> joined_labels(["b", "c"], 3), joined_labels(["b", "aa", "ab"], 28)
    ('bc', 'b,aa,ab')
    """
    return ("," if count > 26 else "").join(labels)


def letter(g: int) -> str:
    """The ``g``-th label (0-based): a, b, ..., z, aa, ab, ...

    >>> letter(0), letter(25), letter(26)
    ('a', 'z', 'aa')
    """
    text = ""
    g += 1
    while g:
        g, r = divmod(g - 1, 26)
        text = chr(ord("a") + r) + text
    return text
