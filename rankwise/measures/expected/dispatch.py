"""Which method gives the expected value of each family, and the call that runs it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...errors import MeasureError
from .groups import TieGroups

#: family name -> function(lists, groups, cutoff, **params) giving the expected value per query
EXPECTED: dict[str, Callable[..., np.ndarray]] = {}


def expected_for(*names: str) -> Callable:
    """Register the expected-value method of the families ``names``."""

    def register(method: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
        for name in names:
            EXPECTED[name] = method
        return method

    return register


def expected_value(measure, lists, params: dict[str, Any]) -> np.ndarray:
    """The exact expected value of ``measure`` per query over all orderings of tied documents.

    Parameters
    ----------
    measure : Measure
        An order-based measure (``measure.spec.order_based`` and not ``tie_invariant``).
    lists : RankedLists
        Ranked lists under the measure's conventions (``Measure.compute`` passes them); the
        order of rows within a tie group does not matter.
    params : dict
        The measure's parameters, filled from the conventions (``rel``, ``gain``, ``base``...).

    Returns
    -------
    numpy.ndarray
        One float per query (nDCG: NaN where the ideal DCG is 0, as the family gives).

    Raises
    ------
    MeasureError
        For a family without an expected-value method, or an input whose exact value would
        take more than :data:`WORK_LIMIT` steps.
    """
    method = EXPECTED.get(measure.family)
    if method is None:
        raise MeasureError(f"ties='expected' is not available for {measure.family} (no exact "
                           "expected value over tie orders is implemented for it); use "
                           "ties='optimistic', 'pessimistic' or an ordering policy",
                           source="measure", value=str(measure))
    return method(lists, TieGroups.of(lists), measure.cutoff, **params)
