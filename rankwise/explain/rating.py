"""Rating-prediction error, rank by rank: the run's scores read as predicted grades, over the
judged documents retrieved (MAE, RMSE)."""

from __future__ import annotations

import math

import numpy as np

from ..measures.rating import rescued_error_means
from .context import Context, Kind, Ranking, Rows, number


def error_steps(c: Context, ranking: Ranking) -> Rows:
    """One row per rank: score − grade for a judged document (grade >= 0), and |error| (MAE)
    or error² (RMSE) summed; unjudged documents have no error."""
    rows, running = [], 0.0
    for i in range(ranking.depth):
        g, score = ranking.grades[i], ranking.scores[i]
        row = {"rank": i + 1, "doc": ranking.docs[i], "grade": g, "score": score,
               "judged": int(g >= 0), "error": None, "contribution": None}
        if g >= 0:
            error = score - g
            row.update(error=error, contribution=abs(error) if c.kind == "MAE" else error * error)
            running += row["contribution"]
        row["running"] = running
        rows.append(row)
    return rows


def _finish(c: Context, steps: Rows, ideal: Rows, ranking: Ranking) -> tuple[float, list[str]]:
    name = str(c.measure)
    judged = sum(row["judged"] for row in steps)
    total = steps[-1]["running"] if steps else 0.0
    if judged == 0:
        return math.nan, [f"{name} is undefined: no judged document was retrieved (NaN, left "
                          "out of the mean)"]
    if c.kind == "MAE":
        value = _rescued(c, steps, total / judged, judged)
        return value, [f"{name} = Σ |score − grade| / judged retrieved = {number(total)} / "
                       f"{judged} = {number(value)}", *_scaled_note(total / judged, value)]
    plain = math.sqrt(total / judged)
    value = _rescued(c, steps, plain, judged)
    return value, [f"{name} = sqrt(Σ (score − grade)² / judged retrieved) = sqrt({number(total)}"
                   f" / {judged}) = {number(value)}", *_scaled_note(plain, value)]


def _rescued(c: Context, steps: Rows, plain: float, judged: int) -> float:
    """The plain value, or, where its sum overflowed (or RMSE's squares may have underflowed),
    the engine's value from the errors scaled by the largest
    (:func:`rankwise.measures.rating.rescued_error_means`)."""
    rows = [row for row in steps if row["judged"]]
    scores = np.array([row["score"] for row in rows])
    grades = np.array([row["grade"] for row in rows])
    return float(rescued_error_means(
        np.array([plain]), np.array([float(judged)]), lambda: np.zeros(len(rows), dtype=np.int64),
        lambda: (scores, grades), c.kind == "RMSE", c.kind, lambda _: f"query {c.query!r}",
        "run")[0])


def _scaled_note(plain: float, value: float) -> list[str]:
    if plain == value or (math.isnan(plain) and math.isnan(value)):
        return []
    return ["(the sums above overflow or underflow float64: the value is computed from the "
            "errors scaled by the largest, m · mean(|e| / m) or m · sqrt(mean((e / m)²)))"]


_COLUMNS = ["rank", "doc", "grade", "score", "error", "contribution", "running"]
_OPTIONS = {"shown_by": "judged", "unjudged": "they have no error and are left out",
            "counts_missed": False, "elided": "no further judged document"}
KINDS = {"MAE": Kind(_COLUMNS, error_steps, _finish, None, **_OPTIONS),
         "RMSE": Kind(_COLUMNS, error_steps, _finish, None, **_OPTIONS)}
FAMILIES = {"MAE": "MAE", "RMSE": "RMSE"}
