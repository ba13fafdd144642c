"""The allowance for floating-point rounding under which two computed numbers count as equal.

Per-query values are floats: a difference that is mathematically 0 can come out as 1e-17,
and two mathematically equal differences (``0.6 - 0.2`` and ``0.8 - 0.4``) can differ in
their last bit. Every test that compares computed numbers for equality (sums of flipped
differences, studentized statistics, ranges of shuffled means, zero and tied differences)
allows the same relative error, so that its result depends on neither this noise nor the
units of the values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Relative rounding allowance: far above float64 rounding (about 1e-16 per operation), far
#: below any difference between values that matters.
RELATIVE_TOLERANCE = 1e-9


def relative_tolerance(values: Any, axis: int | None = None) -> Any:
    """The allowance for rounding of a number computed from ``values``:
    ``RELATIVE_TOLERANCE * sum(|values|)`` (along ``axis``: one allowance per slice),
    relative to their scale so that a comparison does not depend on their units; 0 (exact
    comparisons) when every value is 0.

    >>> relative_tolerance(np.array([0.5, -1.5])), relative_tolerance(np.zeros(3))
    (2e-09, 0.0)
    >>> relative_tolerance(np.array([[0.5, 2.0], [-1.5, 0.0]]), axis=0).tolist()
    [2e-09, 2e-09]
    """
    total = np.abs(values).sum(axis=axis)
    return RELATIVE_TOLERANCE * (float(total) if axis is None else total)
