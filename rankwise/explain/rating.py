"""Rating-prediction error, rank by rank: the run's scores read as predicted grades, over the
judged documents retrieved (MAE, RMSE)."""

from __future__ import annotations

import math

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
        value = total / judged
        return value, [f"{name} = Σ |score − grade| / judged retrieved = {number(total)} / "
                       f"{judged} = {number(value)}"]
    value = math.sqrt(total / judged)
    return value, [f"{name} = sqrt(Σ (score − grade)² / judged retrieved) = sqrt({number(total)}"
                   f" / {judged}) = {number(value)}"]


_COLUMNS = ["rank", "doc", "grade", "score", "error", "contribution", "running"]
_OPTIONS = {"shown_by": "judged", "unjudged": "they have no error and are left out",
            "counts_missed": False, "elided": "no further judged document"}
KINDS = {"MAE": Kind(_COLUMNS, error_steps, _finish, None, **_OPTIONS),
         "RMSE": Kind(_COLUMNS, error_steps, _finish, None, **_OPTIONS)}
FAMILIES = {"MAE": "MAE", "RMSE": "RMSE"}
