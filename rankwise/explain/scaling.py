"""Gains too large or too small for float64 sums, scaled as the engine scales them: the
graded families with ``gain_scaling`` (nDCG, DCG, IDCG, CG, RWRR, ndcg_rel, Rndcg) are walked
again with every gain times 2^-e where the engine does so
(:func:`rankwise.measures.graded.rescue_exponents`), and the value scaled back and checked
(:func:`rankwise.measures.graded.unscale`)."""

from __future__ import annotations

import math

import numpy as np

from ..measures.graded import gains, rescue_exponents, unscale
from .context import Context, shortest


def gain_exponent(c: Context, value: float) -> int | None:
    """The binary exponent e by which the engine scales this query's gains ``c.gain``, each
    times 2^-e; None where it computes them as they are: a sum (``proportional``) whose plain
    ``value`` is finite, a ratio whose largest |gain| among the judgments lies within
    2^±900."""
    scaling = c.measure.spec.gain_scaling
    if scaling is None or (scaling == "proportional" and math.isfinite(value)):
        return None
    largest, positive = _largest(c)
    rescue, exponent = rescue_exponents(scaling, largest, positive, np.array([value]))
    return int(exponent[0]) if rescue[0] else None


def unscaled(c: Context, exponent: int, value: float, ideal_value: float,
             formula: list[str]) -> tuple[float, float, list[str]]:
    """The value (and the ideal ranking's) of a walk with the gains of ``c`` times
    2^-``exponent``, as the engine gives it: a sum times 2^exponent, a ratio unchanged;
    refused as the engine refuses it beyond float64. ``formula`` gets the lines that say so."""
    largest, positive = _largest(c)
    got = float(unscale(c.measure, np.array([c.query], dtype=object), np.array([value]),
                        exponent, largest, positive)[0])
    lines = [f"(the gains are scaled by 2^{-exponent}, a power of two, exactly, as evaluate "
             f"scales them: their sums overflow float64 or lose digits to subnormal numbers "
             f"otherwise (the largest |gain| is {shortest(largest[0])}); the rows show the scaled "
             "gains)"]
    if c.measure.spec.gain_scaling == "proportional":
        with np.errstate(over="ignore"):
            ideal_value = float(np.ldexp(ideal_value, exponent))
        lines.append(f"{c.measure} = 2^{exponent} × {value:.6g} = {got:.6g}")
    else:
        lines.append("(a ratio of two sums of scaled gains: the scaling cancels)")
    return got, ideal_value, [*formula, *lines]


def _largest(c: Context) -> tuple[np.ndarray, np.ndarray]:
    """The query's largest |gain| and largest positive gain (0 for none) among the judged
    documents the ideal is made of, as :func:`rankwise.measures.graded.largest_gains`
    finds them."""
    pool = gains(np.array([g for _, g in c.pool], dtype=np.float64), c.gain)
    return (np.array([np.abs(pool).max(initial=0.0)]), np.array([pool.max(initial=0.0)]))
