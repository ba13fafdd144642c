"""Rank-biased precision and its residual, rank by rank (Moffat & Zobel 2008)."""

from __future__ import annotations

from .context import Context, Kind, Ranking, Rows, by_grade, number, shortest


def rbp_steps(c: Context, ranking: Ranking) -> Rows:
    """One row per rank: r (1 when the grade is >= rel; graded: the grade over the query's
    largest judged grade, or 1), weight (1 − p)·p^(rank − 1), contribution r · weight, summed."""
    p, rel = float(c.params["p"]), c.params["rel"]
    rows, running = [], 0.0
    for i in range(ranking.depth):
        g = ranking.grades[i]
        r = (g / c.top_grade if g > 0 else 0.0) if isinstance(rel, str) else float(g >= rel)
        weight = (1.0 - p) * p ** i
        running += r * weight
        rows.append({"rank": i + 1, "doc": ranking.docs[i], "grade": g, "gain": r,
                     "weight": weight, "contribution": r * weight, "running": running})
    return rows


def residual_steps(c: Context, ranking: Ranking) -> Rows:
    """One row per rank: the weight (1 − p)·p^(rank − 1), counted when the document is
    unjudged (no grade >= 0): what RBP could still gain there."""
    p = float(c.params["p"])
    rows, running = [], 0.0
    for i in range(ranking.depth):
        g = ranking.grades[i]
        weight = (1.0 - p) * p ** i
        contribution = 0.0 if g >= 0 else weight
        running += contribution
        rows.append({"rank": i + 1, "doc": ranking.docs[i], "grade": g, "judged": int(g >= 0),
                     "weight": weight, "contribution": contribution, "running": running})
    return rows


def _finish(c: Context, steps: Rows, ideal: Rows, ranking: Ranking) -> tuple[float, list[str]]:
    name, k, p = str(c.measure), c.cutoff, float(c.params["p"])
    total = steps[-1]["running"] if steps else 0.0
    if c.kind == "RBP":
        rel = c.params["rel"]
        what = "r = 1 if grade >= " + f"{shortest(rel)}" if not isinstance(rel, str) else \
            "r = grade / the largest judged grade (when above 1)"
        return total, [f"{name} = Σ (1 − p)·p^(rank − 1)·r over the "
                       f"{'top ' + str(k) if k else 'list'} = {number(total)} (p = {shortest(p)}, "
                       f"{what})"]
    n = ranking.length
    if not any(not row["judged"] for row in steps):
        return 0.0, [f"{name} = 0: every retrieved document is judged (trec_eval gives the "
                     "residual only when one is not)"]
    value = p ** n + total
    return value, [f"{name} = p^n + Σ (1 − p)·p^(rank − 1) over the unjudged = {shortest(p)}^{n} + "
                   f"{number(total)} = {number(value)} (n = {n} retrieved: p^n is what the "
                   "ranks below the list could add)"]


KINDS = {
    "RBP": Kind(["rank", "doc", "grade", "gain", "weight", "contribution", "running"],
                rbp_steps, _finish, by_grade, counts_missed=False),
    "RBPResid": Kind(["rank", "doc", "grade", "judged", "weight", "contribution", "running"],
                     residual_steps, _finish, None, shown_by="rank", unjudged=None,
                     counts_missed=False),
}
FAMILIES = {"RBP": "RBP", "RBPResid": "RBPResid"}
