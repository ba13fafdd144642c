"""trec_eval 10's experimental graded measures, rank by rank: ``ndcg_rel`` and ``Rndcg``
(nDCG averaged over ranks, m_ndcg_rel.c and m_Rndcg.c) and ``G`` (normalized gain, m_G.c).
Gains as nDCG's; N+ is the number of judged documents with a positive gain."""

from __future__ import annotations

import math
from typing import Any

from ..measures.normalized_gain import MAX_TOTAL_GAIN, refuse_total_gain
from ..measures.registry import undefined_value
from .context import Context, Kind, Ranking, Rows, divide, gain_of, number, shortest
from .graded import by_gain, discount, graded_steps


def ideal_gains(c: Context) -> list[float]:
    """The ideal ranking's gains: the judged documents' positive gains, largest first."""
    return [gain_of(g, c.gain) for _, g in by_gain(c, c.pool)]


def ideal_dcg_prefix(c: Context) -> list[float]:
    """IDCG@k for k = 0 .. N+."""
    out = [0.0]
    for i, gain in enumerate(ideal_gains(c)):
        out.append(out[-1] + gain / discount(c, i + 1))
    return out


def ndcg_rel_steps(c: Context, ranking: Ranking) -> Rows:
    """One row per rank: the DCG so far, the ideal's IDCG@min(rank, N+), and, at a document
    with a positive gain, their ratio (nDCG at that rank), summed."""
    rows = graded_steps(c, ranking)
    prefix = ideal_dcg_prefix(c)
    running = 0.0
    for row in rows:
        ideal = prefix[min(row["rank"], len(prefix) - 1)]
        row.update(dcg=row["running"], ideal_dcg=ideal,
                   contribution=divide(row["running"], ideal) if row["gain"] > 0 else 0.0)
        running += row["contribution"]
        row["running"] = running
    return rows


def g_steps(c: Context, ranking: Ranking) -> Rows:
    """One row per rank: S(i), the gain retrieved down to rank i; cost(i), Σ over the ideal's
    first i ranks of max(gain, 1) (1 a rank beyond it); at a gaining document g / log2(2 +
    cost(i) − S(i)), summed (a negative gain of a gain map too, as in trec_eval). Judgments
    whose gains add up to more than G can use are refused, as the engine refuses them."""
    total = sum(abs(gain_of(g, c.gain)) for _, g in c.pool)
    if not total <= MAX_TOTAL_GAIN:
        refuse_total_gain(f"query {c.query!r}", total)
    costs = [max(gain, 1.0) for gain in ideal_gains(c)]
    rows, so_far, cost, running = [], 0.0, 0.0, 0.0
    for i in range(ranking.depth):
        g = ranking.grades[i]
        gain = gain_of(g, c.gain)
        so_far += gain
        cost += costs[i] if i < len(costs) else 1.0
        contribution = gain / math.log2(2.0 + cost - so_far) if gain != 0 else 0.0
        running += contribution
        rows.append({"rank": i + 1, "doc": ranking.docs[i], "grade": g, "gain": gain,
                     "gain_so_far": so_far, "ideal_cost": cost, "contribution": contribution,
                     "running": running})
    return rows


def _undefined(c: Context, why: str) -> tuple[float, list[str]]:
    policy = c.conv.idcg_zero
    value = undefined_value(policy)
    return value, [f"{why}: {c.measure} = {number(value)} (idcg_zero='{policy}')"]


def _finish(c: Context, steps: Rows, ideal: Rows, ranking: Ranking) -> tuple[float, list[str]]:
    name, gains = str(c.measure), ideal_gains(c)
    total = steps[-1]["running"] if steps else 0.0
    if c.kind == "G":
        judged_gain = sum(gains)
        if judged_gain == 0:
            return _undefined(c, "no judged document with a positive gain")
        value = total / judged_gain
        return value, [f"{name} = Σ g / log2(2 + cost − S) / the judgments' total gain = "
                       f"{number(total)} / {shortest(judged_gain)} = {number(value)}"]
    prefix = ideal_dcg_prefix(c)
    # the whole list's DCG: the last row's running DCG (no cutoff: every rank is a row)
    dcg = (steps[-1]["dcg"] if c.kind == "ndcg_rel" else steps[-1]["running"]) if steps else 0.0
    whole = divide(dcg, prefix[-1])
    if c.kind == "ndcg_rel":
        num_gaining = len(gains)
        if num_gaining == 0:
            return _undefined(c, "N+ = 0 (no judged document with a positive gain)")
        found = sum(1 for row in steps if row["gain"] > 0)
        summed = total + (num_gaining - found) * whole
        value = max(summed, 0.0) / num_gaining
        cut = " (a sum of 0 or less counts 0, as in trec_eval)" if summed <= 0 else ""
        return value, [f"nDCG of the whole list = {number(dcg)} / {number(prefix[-1])} = "
                       f"{number(whole)}", f"{name} = (Σ nDCG at the {found} gaining documents "
                       f"retrieved + {num_gaining - found} not retrieved × the whole list's "
                       f"nDCG) / N+ = ({number(total)} + {num_gaining - found} × "
                       f"{number(whole)}) / {num_gaining} = {number(value)}{cut}"]
    return _rank_average(c, steps, gains, prefix, whole, ranking.length)


def _rank_average(c: Context, steps: Rows, gains: list[float], prefix: list[float],
                  whole: float, n: int) -> tuple[float, list[str]]:
    """Rndcg: nDCG@C at each rank C where the ideal's gain changes (down to N+), and the whole
    list's nDCG when the list is longer than N+ + 1."""
    terms, lines = [], []
    for depth in range(1, len(gains) + 1):
        if depth < len(gains) and gains[depth - 1] == gains[depth]:
            continue
        dcg = steps[min(depth, len(steps)) - 1]["running"] if steps else 0.0
        terms.append(divide(dcg, prefix[depth]))
        lines.append(f"the ideal's gain changes after rank {depth}: nDCG@{depth} = "
                     f"{number(dcg)} / {number(prefix[depth])} = {number(terms[-1])}")
    if n > len(gains) + 1:
        terms.append(whole)
        lines.append(f"the list ({n}) is longer than N+ + 1 = {len(gains) + 1}: the whole "
                     f"list's nDCG = {number(whole)}")
    value = divide(sum(terms), len(terms))
    lines.append(f"{c.measure} = the mean of the {len(terms)} = {number(value)}")
    return value, lines


_DCG = ["rank", "doc", "grade", "gain", "discount", "contribution", "running"]
_OPTIONS: dict[str, Any] = {"unjudged": "they gain 0", "counts_missed": False}
KINDS = {
    "ndcg_rel": Kind(["rank", "doc", "grade", "gain", "discount", "dcg", "ideal_dcg",
                      "contribution", "running"], ndcg_rel_steps, _finish, by_gain,
                     **_OPTIONS),
    "Rndcg": Kind(_DCG, graded_steps, _finish, by_gain, **_OPTIONS),
    "G": Kind(["rank", "doc", "grade", "gain", "gain_so_far", "ideal_cost", "contribution",
               "running"], g_steps, _finish, by_gain, **_OPTIONS),
}
FAMILIES = {"ndcg_rel": "ndcg_rel", "Rndcg": "Rndcg", "G": "G"}
