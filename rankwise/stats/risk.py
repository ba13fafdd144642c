"""Risk-sensitive comparison against a baseline: URisk and TRisk."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .paired import paired_differences


def _risk_weighted(x: Any, baseline: Any, alpha: float) -> tuple[np.ndarray, float]:
    """The risk-weighted differences ``z_q`` in units of a power of two, and that power
    (:class:`~rankwise.stats.paired.Differences`: values near 1e308 do not overflow)."""
    diffs = paired_differences(x, baseline)
    d = diffs.d
    return np.where(d < 0, (1 + alpha) * d, d), diffs.scale


def urisk(x: Any, baseline: Any, alpha: float = 1.0) -> float:
    """URisk: the mean difference from the baseline with losses weighted ``1 + alpha``.

    ``URisk = (1/n) [Σ_{d_q > 0} d_q + (1 + alpha) Σ_{d_q < 0} d_q]``, ``d_q = x_q - b_q``
    (Wang, Bennett & Collins-Thompson 2012, SIGIR, "Robust ranking models via risk-sensitive
    optimization"; the TREC 2013-14 Web track risk measure). Higher is better; ``alpha = 0``
    is the plain mean difference. Pairs with a NaN are skipped.

    >>> urisk([0.5, 0.2], [0.3, 0.4], alpha=1.0)   # (0.2 + 2 * -0.2) / 2
    -0.1
    """
    z, scale = _risk_weighted(x, baseline, alpha)
    return float(z.mean()) * scale if len(z) else float("nan")


def trisk(x: Any, baseline: Any, alpha: float = 1.0) -> float:
    """TRisk: URisk divided by its standard error, a t-like score.

    ``TRisk = URisk / (sd(z) / sqrt(n))`` with ``z_q = d_q`` for wins and ``(1 + alpha) d_q``
    for losses (Dinçer, Macdonald & Ounis 2014, SIGIR, "Hypothesis testing for the
    risk-sensitive evaluation of retrieval systems"). ``TRisk < -2``: significantly riskier
    than the baseline; ``> 2``: significantly less risky.

    >>> round(trisk([0.5, 0.6, 0.7], [0.4, 0.4, 0.4], alpha=1.0), 4)
    3.4641
    """
    z, _ = _risk_weighted(x, baseline, alpha)  # TRisk does not depend on the units
    if len(z) < 2:
        return float("nan")
    sd = float(z.std(ddof=1))
    mean = float(z.mean())
    if sd == 0:
        return 0.0 if mean == 0 else math.copysign(math.inf, mean)
    return mean / (sd / math.sqrt(len(z)))
