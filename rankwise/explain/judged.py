"""Judged@K and Unjudged@K, rank by rank: how much of the top K has a judgment."""

from __future__ import annotations

from .context import Context, Kind, Ranking, Rows, by_grade, divide, number, within


def judged_steps(c: Context, ranking: Ranking) -> Rows:
    """One row per rank: whether the document is judged (grade >= 0), and how many are so far."""
    rows, judged = [], 0
    for i in range(ranking.depth):
        g = ranking.grades[i]
        judged += g >= 0
        rows.append({"rank": i + 1, "doc": ranking.docs[i], "grade": g, "judged": int(g >= 0),
                     "judged_so_far": judged})
    return rows


def _finish(c: Context, steps: Rows, ideal: Rows, ranking: Ranking) -> tuple[float, list[str]]:
    name, k, n = str(c.measure), c.cutoff, ranking.length
    judged = steps[-1]["judged_so_far"] if steps else 0
    denominator = n if k is None else k if c.conv.short_lists == "cutoff" else min(k, n)
    why = "the list length" if k is None else "K" if c.conv.short_lists == "cutoff" else \
        "min(K, list length)"
    counted, what = (judged, "judged") if c.measure.family == "Judged" else \
        (ranking.depth - judged, "unjudged")
    value = divide(counted, denominator)
    return value, [f"{name} = {what} {within(c)} / {why} = {counted} / {denominator} = "
                   f"{number(value)}"]


KINDS = {"Judged": Kind(["rank", "doc", "grade", "judged", "judged_so_far"], judged_steps,
                        _finish, by_grade, shown_by="judged", unjudged=None,
                        counts_missed=False)}
FAMILIES = {"Judged": "Judged", "Unjudged": "Judged"}
