"""Power of a paired comparison: the minimum detectable effect for a number of queries."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import InputError


def is_number(value: Any) -> bool:
    """Whether ``value`` is a real number (int or float, numpy's too), not a bool nor a string.

    >>> is_number(0.5), is_number(np.float32(2)), is_number(True), is_number("0.5")
    (True, True, False, False)
    """
    return isinstance(value, (int, float, np.integer, np.floating)) \
        and not isinstance(value, (bool, np.bool_))


def check_alpha_and_power(alpha: Any, power: Any = None) -> None:
    """Refuse a level outside (0, 1), or a power (where given) outside (alpha, 1): a test at
    level alpha has power alpha against no effect at all, so no effect is detected "with
    power" alpha or less (and the minimum detectable effect turns negative or NaN)."""
    if not is_number(alpha) or not 0 < alpha < 1:
        raise InputError("alpha must be strictly between 0 and 1", source="alpha",
                         value=repr(alpha))
    if power is not None and (not is_number(power) or not alpha < power < 1):
        raise InputError(f"power must be a number strictly between alpha ({alpha:g}) and 1",
                         source="power", value=repr(power))


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

    check_alpha_and_power(alpha, power)
    if n < 2:
        return math.inf
    return float((stats.t.ppf(1 - alpha / 2, n - 1) + stats.t.ppf(power, n - 1)) / math.sqrt(n))
