"""Exact sums of float64 values that combine across partitions in any order.

Every finite double is ``m · 2**e`` with an integer mantissa ``|m| < 2**53``. The exact sum of
many doubles is therefore an integer times a power of two, ``N · 2**E``, and two such sums add
exactly: partitions of any size and number give the same ``(N, E)``. The mean is then
rounded once, ``round(N · 2**E / n)``: the correctly rounded mean of the values, whatever the
partitioning (a mean of per-partition means, or a float sum of per-partition float sums,
depends on the partitioning and loses digits).

The per-partition work is vectorised: ``numpy.frexp`` splits every value, the mantissas are
cut into a 27-bit high and a 26-bit low half, and both halves are summed per exponent with
``numpy.bincount``, whose float64 accumulators stay exact below 2**53 (at most 2**25 values
per call). Only the few distinct exponents are then combined as Python integers.

Reference: the representation is that of Shewchuk (1997), "Adaptive precision floating-point
arithmetic and fast robust geometric predicates" (exact sums as integers scaled by powers of
two); Python's ``math.fsum`` rounds the same exact sum.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

#: An exact sum: the integer N and the exponent E of N · 2**E.
ExactSum = tuple[int, int]

ZERO: ExactSum = (0, 0)
_BLOCK = 1 << 25  # values per bincount call: 2**25 · 2**27 < 2**53, float sums stay exact
_LOW_BITS = 26


def exact_sum(values: np.ndarray) -> ExactSum:
    """The exact sum of finite float64 values as ``(N, E)``, meaning ``N · 2**E``.

    Parameters
    ----------
    values : array of float64
        Finite values (NaN and infinities raise ``ValueError``).

    Returns
    -------
    tuple of int
        ``(N, E)``.

    Examples
    --------
    >>> import numpy as np
    >>> total = exact_sum(np.array([0.1, 0.2, 0.3]))
    >>> to_float(total) == math.fsum([0.1, 0.2, 0.3])
    True
    >>> exact_sum(np.array([1e16, 1.0, -1e16]))
    (1, 0)
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    if len(v) == 0:
        return ZERO
    if not np.isfinite(v).all():
        raise ValueError("exact_sum needs finite values")
    fraction, exponent = np.frexp(v)  # v = fraction · 2**exponent, 0.5 <= |fraction| < 1
    # v = m · 2**(exponent - 53) with the integer m = fraction · 2**53 = high · 2**26 + low
    high = np.floor(np.ldexp(fraction, 53 - _LOW_BITS))  # |high| <= 2**27, exact
    low = np.ldexp(fraction, 53) - np.ldexp(high, _LOW_BITS)  # 0 <= low < 2**26, exact
    low_exponent = int(exponent.min()) - 53
    bucket = exponent - exponent.min()
    total = 0
    for start in range(0, len(v), _BLOCK):
        part = slice(start, start + _BLOCK)
        highs = np.bincount(bucket[part], weights=high[part])
        lows = np.bincount(bucket[part], weights=low[part])
        for b in np.flatnonzero((highs != 0) | (lows != 0)).tolist():
            total += ((int(highs[b]) << _LOW_BITS) + int(lows[b])) << b
    return _normal(total, low_exponent)


def add(a: ExactSum, b: ExactSum) -> ExactSum:
    """``a + b``, exactly.

    >>> add(exact_sum(np.array([0.5])), exact_sum(np.array([0.25])))
    (3, -2)
    """
    (na, ea), (nb, eb) = a, b
    e = min(ea, eb)
    return _normal((na << (ea - e)) + (nb << (eb - e)), e)


def to_float(total: ExactSum) -> float:
    """The exact sum rounded once to the nearest double (what ``math.fsum`` returns)."""
    return float(_fraction(total))


def mean(total: ExactSum, count: int) -> float:
    """``total / count`` rounded once to the nearest double (NaN when ``count`` is 0).

    >>> mean(exact_sum(np.array([0.1, 0.2, 0.4])), 3) == float(
    ...     (Fraction(0.1) + Fraction(0.2) + Fraction(0.4)) / 3)
    True
    """
    if count == 0:
        return math.nan
    return float(_fraction(total) / count)


def to_json(total: ExactSum) -> list[int]:
    """A JSON-friendly form (Python's json writes integers of any size exactly)."""
    return [int(total[0]), int(total[1])]


def from_json(data: list[int]) -> ExactSum:
    """Inverse of :func:`to_json`."""
    return int(data[0]), int(data[1])


def _fraction(total: ExactSum) -> Fraction:
    n, e = total
    return Fraction(n * (1 << e)) if e >= 0 else Fraction(n, 1 << -e)


def _normal(n: int, e: int) -> ExactSum:
    """Strip trailing zero bits of ``n`` so that equal sums have one representation."""
    if n == 0:
        return ZERO
    zeros = (n & -n).bit_length() - 1
    return n >> zeros, e + zeros
