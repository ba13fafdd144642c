"""Working in the range of float64: values divided by a power of two before their moments.

Per-query values can come near float64's limits (a DCG under a huge gain map, a sum): the
difference of 1e308 and -1e308, a sum of such values or the squares of 1e200 overflow, and
the squares of 1e-170 underflow to 0, so a mean, a standard deviation or a t statistic came
out inf, NaN or infinite where a finite answer exists. Every statistic therefore works on
the values divided by :func:`power_of_two_scale`, whose largest magnitude lies in [1, 2):
dividing and multiplying by a power of two are exact, so values of ordinary size give the
same numbers bit for bit, and the result is multiplied back into the values' units at the
end. A result beyond the float64 range (a mean of 1.7e308 and 1.7e308 minus -1.7e308 ...)
has no float64 value: it is ``inf``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def power_of_two_scale(values: Any) -> float:
    """``2**e`` such that the largest finite ``|value|`` divided by it lies in [1, 2); 1.0
    when no finite value is non-zero.

    >>> power_of_two_scale([0.25, -3.0]), power_of_two_scale([1e308]) == 2.0 ** 1023
    (2.0, True)
    >>> power_of_two_scale([0.0]), power_of_two_scale([5e-324]) == 5e-324
    (1.0, True)
    """
    a = np.abs(np.asarray(values, dtype=np.float64))
    top = float(a.max()) if a.size else 0.0
    if not math.isfinite(top):  # an inf or NaN among them: the largest finite value
        finite = a[np.isfinite(a)]
        top = float(finite.max()) if finite.size else 0.0
    if top == 0:
        return 1.0
    return math.ldexp(1.0, math.frexp(top)[1] - 1)


def scaled(values: Any) -> tuple[np.ndarray, float]:
    """``values / scale`` and ``scale`` (:func:`power_of_two_scale`): exact wherever the
    quotient is a normal float.

    >>> scaled(np.array([1e308, -1e308]))[0].round(4).tolist()
    [1.1125, -1.1125]
    """
    x = np.asarray(values, dtype=np.float64)
    scale = power_of_two_scale(x)
    return (x / scale if scale != 1.0 else x), scale


def mean_and_sd(values: Any) -> tuple[float, float]:
    """The mean and the standard deviation (ddof = 1) of ``values`` without overflow or
    underflow in the sums and squares: computed on :func:`scaled` values and multiplied back
    (``inf`` only where the result itself is beyond the float64 range). NaN for the mean of
    no value and the deviation of fewer than two.

    >>> mean_and_sd([1e308, 1.5e308, 1.7e308])   # numpy: inf and nan, with warnings
    (1.4e+308, 3.605551275463989e+307)
    >>> mean_and_sd([1e-308, 2e-308, 4e-308])    # numpy: sd 0 (the squares underflow)
    (2.3333333333333335e-308, 1.527525231651947e-308)
    """
    x, scale = scaled(values)
    n = len(x)
    mean = float(x.mean()) * scale if n else math.nan
    sd = float(x.std(ddof=1)) * scale if n > 1 else math.nan
    return mean, sd


def unscaled(values: np.ndarray, scale: float) -> np.ndarray:
    """``values * scale``, back in the values' units: ``±inf`` where that is beyond the
    float64 range (a difference of 1e308 and -1e308), without a numpy overflow warning.

    >>> unscaled(np.array([1.5, 2.5]), 2.0 ** 1023).tolist()
    [1.348269851146737e+308, inf]
    """
    with np.errstate(over="ignore"):
        return values * scale
