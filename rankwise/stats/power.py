"""Power of a paired comparison: the minimum detectable effect for a number of queries."""

from __future__ import annotations

import math


def minimum_detectable_effect(n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest standardized effect (Cohen's d_z) a two-sided paired t-test with ``n`` pairs
    detects with probability ``power`` at level ``alpha``.

    ``d_min = (t_{1-alpha/2, n-1} + t_{power, n-1}) / sqrt(n)``, the usual approximation that
    ignores the non-centrality of the t distribution under the alternative (Cohen 1988,
    *Statistical Power Analysis for the Behavioral Sciences*, ch. 2; Sakai 2016, SIGIR,
    "Topic set size design"). Multiply by the standard deviation of the per-query
    differences to get it in the measure's units. Infinite with fewer than two pairs.

    >>> round(minimum_detectable_effect(25), 3)
    0.584
    """
    from scipy import stats

    if n < 2:
        return math.inf
    return float((stats.t.ppf(1 - alpha / 2, n - 1) + stats.t.ppf(power, n - 1)) / math.sqrt(n))
