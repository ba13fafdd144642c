"""Rating-prediction error: the run's scores read as predicted grades.

Only retrieved documents with a judgment (grade >= 0) count; a query with none has no value
(NaN), is left out of the mean and counted in the result's ``undefined`` counts.
"""

from __future__ import annotations

import numpy as np

from .registry import family


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
    rows, error, counts = _errors(lists)
    return _mean_per_query(lists, np.abs(error), rows, counts)


@family("RMSE", "Root mean squared error between run scores and judged grades (judged "
        "documents only).", bounds=None, order_based=False, higher_is_better=False)
def root_mean_squared_error(lists, cutoff: None) -> np.ndarray:
    """RMSE = sqrt((1/n) Σ (score − grade)²) over the query's judged retrieved documents."""
    rows, error, counts = _errors(lists)
    return np.sqrt(_mean_per_query(lists, error * error, rows, counts))
