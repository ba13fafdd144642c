"""Pitfall checks for comparisons: measures at different cutoffs, too few queries, and a
difference in means carried by a handful of queries."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..messages import Message, as_id, message
from ..plain import percent
from .power import minimum_detectable_effect
from ..plain import decimal_text

#: Below this many queries a paired test is weak (Buckley & Voorhees 2000; Sanderson & Zobel 2005).
FEW_QUERIES = 25


def cutoff_warnings(measures: Sequence[str]) -> list[str]:
    """One warning per measure compared at several cutoffs (nDCG@5 and nDCG@10, ...).

    Values of one measure at different cutoffs are different measures (other documents count,
    the normalisation changes): systems must be compared at the same cutoff.

    >>> cutoff_warnings(["nDCG@5", "nDCG@10", "AP"])  # doctest: +ELLIPSIS
    ['nDCG at different cutoffs (nDCG@5, nDCG@10): ...']
    """
    from ..measures import parse_measure

    by_family: dict[tuple, list[str]] = {}
    for name in measures:
        m = parse_measure(name)
        by_family.setdefault((m.family, m.params), []).append(str(m))
    return [f"{names[0].split('@')[0]} at different cutoffs ({', '.join(names)}): each is a "
            "different measure; compare systems at the same cutoff, never a value at one "
            "cutoff with a value at another"
            for names in by_family.values() if len(names) > 1]


def few_queries_warning(n: int, alpha: float, power: float,
                        sd_of_differences: dict[str, float]) -> str | None:
    """A warning when fewer than :data:`FEW_QUERIES` queries are compared, with the minimum
    detectable effect at ``power`` (Cohen's d_z, and in each measure's units from the median
    standard deviation of the paired differences); None otherwise.

    >>> few_queries_warning(10, 0.05, 0.8, {"AP": 0.1})  # doctest: +ELLIPSIS
    "only 10 queries: ... Cohen's d >= 0.99 (minimum detectable mean difference AP: 0.0995)..."
    >>> few_queries_warning(1, 0.05, 0.8, {"AP": float("nan")})
    'only 1 query: a paired t-test needs at least 2 to detect any effect; use at least 25 queries'
    """
    if n >= FEW_QUERIES:
        return None
    queries = f"only {n} quer{'y' if n == 1 else 'ies'}"
    if n < 2:  # d_min is infinite: no t-test at all
        return (f"{queries}: a paired t-test needs at least 2 to detect any effect; use at "
                f"least {FEW_QUERIES} queries")
    d_min = minimum_detectable_effect(n, alpha, power)
    units = "; ".join(f"{m}: {decimal_text(d_min * sd)}" for m, sd in sd_of_differences.items()
                      if math.isfinite(sd) and math.isfinite(d_min))
    return (f"{queries}: tests are weak; at alpha={alpha:g} a paired t-test has "
            f"{percent(power)} power only for effects of Cohen's d >= {d_min:.2f}"
            + (f" (minimum detectable mean difference {units})" if units else "")
            + f"; use at least {FEW_QUERIES} queries")


def undefined_test_warning(measure: str, test: str, name: str, n: int) -> str:
    """Why ``test`` (called ``name``) has no p-value on ``n`` compared queries (fewer than 2).

    >>> undefined_test_warning("AP", "t", "paired t-test", 1)  # doctest: +ELLIPSIS
    'AP: the paired t-test is undefined with 1 compared query (it divides by the standard...'
    """
    if n == 0:
        reason = "there is no paired difference to test"
    elif test == "tukey":
        reason = "its error variance has (k - 1)(n - 1) = 0 degrees of freedom"
    else:
        reason = ("it divides by the standard deviation of the differences, which one "
                  "difference does not have")
    return (f"{measure}: the {name} is undefined with {n} compared "
            f"quer{'y' if n == 1 else 'ies'} ({reason}): its p-values are NaN and no "
            "difference is marked significant")


def queries_carrying_difference(d: np.ndarray) -> int:
    """How few queries carry a difference in means: the smallest number of queries whose
    removal leaves the leading system no longer ahead (mean difference <= 0).

    ``d`` are the per-query differences (leader minus other, NaN-free). Removing the queries
    with the largest differences first is optimal. 0 when the mean difference is not positive
    beyond float rounding (equal means summed in another order differ in the last bits).

    >>> queries_carrying_difference(np.array([0.5, -0.2333, 0.5, -0.2667]))   # seed MRR example
    1
    >>> queries_carrying_difference(np.array([0.0, 0.8]) - np.array([0.2, 0.6]))  # equal means
    0
    """
    total = float(d.sum())
    if total <= _slack(d):
        return 0
    gains = np.sort(d[d > 0])[::-1]
    return int(np.searchsorted(np.cumsum(gains), total - _slack(d), side="left") + 1)


def _slack(d: np.ndarray) -> float:
    """Float rounding allowance for sums of ``d``."""
    return 1e-12 * max(1.0, float(np.abs(d).sum()))


def carried_by_few_warning(measure: str, leader: str, other: str, d: np.ndarray,
                           scale: float = 1.0,
                           allowance: float | np.ndarray = 0.0) -> Message | None:
    """A warning when ``leader``'s higher mean rests on a handful of queries: removing at most
    ``max(1, 5% of n)`` of them erases its lead (the third seed article's MRR example: A's
    first relevant ranks 2, 3, 2, 3 give MRR 0.4167, B's 1, 10, 1, 15 give 0.5417, yet A is the
    more consistent system and B's lead comes from two queries where A is at rank 2).
    ``d * scale`` are the differences (``scale``: a power of two, as in
    :class:`~rankwise.stats.paired.Differences`, so that differences near 1e308 stay finite)
    and ``allowance`` their rounding allowances: the wins and losses it names are those of
    :func:`~rankwise.stats.paired.win_tie_loss`, as in the tests' W/T/L.

    >>> d = np.array([1 - 1/2, 1/10 - 1/3, 1 - 1/2, 1/15 - 1/3])
    >>> carried_by_few_warning("RR", "B", "A", d)  # doctest: +ELLIPSIS
    'RR: B is ahead of A (mean difference 0.1250) only because of 1 of 4 queries...'
    """
    n = len(d)
    k = queries_carrying_difference(d)
    if k == 0 or k > max(1, math.floor(0.05 * n)):
        return None
    from .paired import win_tie_loss

    wins, _, losses = win_tie_loss(d, allowance)
    return message(f"{measure}: ", as_id(leader), " is ahead of ", as_id(other),
                   f" (mean difference {decimal_text(float(d.mean()) * scale)}) only because "
                   f"of {k} of {n} queries: "
                   "without them it is not ahead (", as_id(leader), f" wins {wins}, loses "
                   f"{losses}); look at the per-query distribution, not only the mean")
