"""Rating-prediction error: the run's scores read as predicted grades.

Only retrieved documents with a judgment (grade >= 0) count; a query with none has no value
(NaN), is left out of the mean and counted in the result's ``undefined`` counts.

Errors of any finite size: a query whose sum of errors (MAE) or of squared errors (RMSE)
overflows float64 (an error beyond about 1.3e154 squares to infinity) is computed again from
its errors scaled by the largest, ``m · sqrt(mean((e / m)²))``, and one whose RMSE is below
2^-500 (whose squares may have underflowed) too; an error beyond float64 itself (a score of
1e308 against a grade of -1e308 in rating data) is halved first, exactly. Every other query is
computed as the plain formula does, bit for bit. A value beyond the largest float64 raises
:class:`~rankwise.InputError` (infinite scores and grades are refused when read).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..errors import InputError
from .registry import family

#: An RMSE below this may have lost squares to underflow (the square of 2^-511 is subnormal):
#: its query is computed again from scaled errors.
TINY_RMS = 2.0 ** -500


def _errors(lists) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = np.flatnonzero(lists.grade >= 0)
    counts = np.bincount(lists.segment_of(rows), minlength=lists.num_queries).astype(np.float64)
    return rows, lists.score[rows] - lists.grade[rows], counts


def _mean_per_query(lists, values: np.ndarray, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    total = np.bincount(lists.segment_of(rows), weights=values, minlength=lists.num_queries)
    out = np.full(lists.num_queries, np.nan)
    np.divide(total, counts, out=out, where=counts > 0)
    return out


@family("MAE", "Mean absolute error between run scores and judged grades (judged documents "
        "only).", bounds=None, order_based=False, higher_is_better=False)
def mean_absolute_error(lists, cutoff: None) -> np.ndarray:
    """MAE = (1/n) Σ |score − grade| over the query's judged retrieved documents.

    >>> from rankwise import evaluate
    >>> round(evaluate({"u": {"i": 4.5, "j": 2}}, {"u": {"i": 4.3, "j": 1.2}}, ["MAE"]).mean("MAE"), 6)
    0.5
    """
    with np.errstate(over="ignore", invalid="ignore"):
        rows, error, counts = _errors(lists)
        values = _mean_per_query(lists, np.abs(error), rows, counts)
    return _rescued_trec(lists, values, rows, counts, squared=False)


@family("RMSE", "Root mean squared error between run scores and judged grades (judged "
        "documents only).", bounds=None, order_based=False, higher_is_better=False)
def root_mean_squared_error(lists, cutoff: None) -> np.ndarray:
    """RMSE = sqrt((1/n) Σ (score − grade)²) over the query's judged retrieved documents.

    >>> from rankwise import evaluate
    >>> evaluate({"q": {"a": 0, "b": 0}}, {"q": {"a": 1e200, "b": -1e200}}, ["RMSE"]).mean("RMSE")
    1e+200
    """
    with np.errstate(over="ignore", invalid="ignore"):
        rows, error, counts = _errors(lists)
        values = np.sqrt(_mean_per_query(lists, error * error, rows, counts))
    return _rescued_trec(lists, values, rows, counts, squared=True)


def _rescued_trec(lists, values: np.ndarray, rows: np.ndarray, counts: np.ndarray,
                  squared: bool) -> np.ndarray:
    return rescued_error_means(values, counts, lambda: lists.segment_of(rows),
                               lambda: (lists.score[rows], lists.grade[rows]), squared,
                               "RMSE" if squared else "MAE",
                               lambda q: f"query {lists.query_ids[q]!r}", "run")


def rescued_error_means(values: np.ndarray, counts: np.ndarray,
                        segment: Callable[[], np.ndarray],
                        pairs: Callable[[], tuple[np.ndarray, np.ndarray]], squared: bool,
                        name: str, label: Callable[[int], str], source: str,
                        truth: str = "grades") -> np.ndarray:
    """``values`` (per segment: the plain mean |e| or sqrt(mean e²), NaN without a row) with
    the segments whose plain value overflowed (inf or NaN with rows) or, for RMSE, may have
    underflowed (below :data:`TINY_RMS`) computed again from scaled errors.

    ``segment()`` gives the segment of every counted row and ``pairs()`` its (predicted,
    actual) values, both asked for only when a segment needs it (the usual case costs one
    pass over ``values``). The rows of one segment are scaled by the largest |error| m:
    ``m · sqrt(mean((e / m)²))`` or ``m · mean(|e| / m)``; a segment with an error beyond
    float64 has its predicted and actual values halved (exact), its value doubled. Raises
    :class:`~rankwise.InputError` naming ``label(segment)`` when a value is beyond float64
    (its scores and ``truth`` too far apart).
    """
    suspect = ~(values < np.inf)  # NaN or inf
    if squared:
        suspect |= values < TINY_RMS
    suspect &= counts > 0
    if not suspect.any():
        return values
    every = segment()
    rows = suspect[every]
    seg = every[rows]
    predicted, actual = (column[rows] for column in pairs())
    infinite = np.flatnonzero(np.isinf(predicted) | np.isinf(actual))
    if len(infinite):  # a true infinity (a float32 score beyond 3.4e38): no finite value
        raise InputError(f"{name} of {label(seg[infinite[0]])} is infinite: a score is "
                         "infinite (score_precision='float32' makes a score beyond 3.4e+38 "
                         "infinite)", source=source)
    with np.errstate(over="ignore"):
        error = predicted - actual
    halved = np.zeros(len(values), dtype=bool)
    halved[seg[~np.isfinite(error)]] = True
    half = halved[seg]
    error[half] = predicted[half] / 2 - actual[half] / 2
    error = np.abs(error)
    largest = np.zeros(len(values))
    np.maximum.at(largest, seg, error)
    scaled = np.zeros(len(error))
    np.divide(error, largest[seg], out=scaled, where=largest[seg] > 0)
    mean = np.bincount(seg, weights=scaled * scaled if squared else scaled,
                       minlength=len(values)) / np.maximum(counts, 1)
    factor = np.sqrt(mean) if squared else mean
    with np.errstate(over="ignore"):
        rescued = largest * factor * np.where(halved, 2.0, 1.0)
    beyond = np.flatnonzero(suspect & ~np.isfinite(rescued))
    if len(beyond):
        q = beyond[0]
        about = math.log10(largest[q]) + math.log10(factor[q]) + halved[q] * math.log10(2.0)
        more = f" (and {len(beyond) - 1} more)" if len(beyond) > 1 else ""
        raise InputError(f"{name} of {label(q)}{more} is about {10 ** (about % 1):.2f}e+"
                         f"{int(about // 1)}, beyond the largest float64 (1.8e+308): its "
                         f"scores and {truth} differ by more than a float64 can hold",
                         source=source)
    out = values.copy()
    out[suspect] = rescued[suspect]
    return out
