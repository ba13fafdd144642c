"""Multiple-testing corrections: adjusted p-values for a family of tests."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError

#: Accepted names (aliases map to the canonical name).
CORRECTIONS = {"none": "none", "bonferroni": "bonferroni", "holm": "holm", "bh": "bh",
               "fdr_bh": "bh", "benjamini-hochberg": "bh"}


def adjust_p_values(p_values: Any, method: str = "holm") -> np.ndarray:
    """Adjusted p-values, monotone in the raw ones and capped at 1.

    With the m defined p-values sorted, ``p_(1) <= ... <= p_(m)``:

    * ``bonferroni``: ``min(1, m p_i)`` (controls the family-wise error rate);
    * ``holm`` (step-down, Holm 1979): ``max_{j<=i} min(1, (m - j + 1) p_(j))`` (family-wise);
    * ``bh`` (step-up, Benjamini & Hochberg 1995): ``min_{j>=i} min(1, m p_(j) / j)``
      (false discovery rate);
    * ``none``: the p-values unchanged.

    NaN p-values stay NaN and do not count in m. These are the values of
    ``statsmodels.stats.multitest.multipletests`` with ``bonferroni``, ``holm``, ``fdr_bh``.

    Examples
    --------
    >>> adjust_p_values([0.01, 0.04, 0.03], "holm").round(4).tolist()
    [0.03, 0.06, 0.06]
    >>> adjust_p_values([0.01, 0.04, 0.03], "bh").round(4).tolist()
    [0.03, 0.04, 0.04]
    """
    if method not in CORRECTIONS:
        raise InputError("unknown correction: expected one of none, bonferroni, holm, bh",
                         source="correction", value=str(method))
    method = CORRECTIONS[method]
    p = np.asarray(p_values, dtype=np.float64)
    out = p.copy()
    defined = np.flatnonzero(~np.isnan(p))
    m = len(defined)
    if method == "none" or m == 0:
        return out
    order = defined[np.argsort(p[defined], kind="stable")]
    ranked = p[order]
    if method == "bonferroni":
        adjusted = ranked * m
    elif method == "holm":
        adjusted = np.maximum.accumulate(ranked * (m - np.arange(m)))
    else:
        adjusted = np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1]
    out[order] = np.minimum(adjusted, 1.0)
    return out
