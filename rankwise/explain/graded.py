"""Graded families, rank by rank: DCG, nDCG, IDCG, CG, ERR and RWRR."""

from __future__ import annotations

from typing import Any

from ..measures.graded import check_exp_gain
from ..measures.registry import undefined_value
from .context import Context, Kind, Ranking, Rows, gain_of, log, number, shortest


def graded_steps(c: Context, ranking: Ranking) -> Rows:
    """One row per rank. DCG family: gain / log_base(rank + 1), summed. ERR: R_i =
    (2^g − 1) / 2^g_max (g clipped to [0, g_max]), reach_i = Π_{j<i} (1 − R_j), contribution
    R_i · reach_i / rank (Chapelle et al. 2009). RWRR: gain / rank, summed."""
    rows, running, reach = [], 0.0, 1.0
    top = _g_max(c) if c.kind == "ERR" else None  # only ERR reads 2^g_max
    jarvelin = c.conv.discount == "jarvelin"
    base = "2" if c.base == 2 else shortest(c.base)
    label = f"max(1, log{base} r)" if jarvelin else f"log{base}(1+r)"
    for i in range(ranking.depth):
        rank, g = i + 1, ranking.grades[i]
        row: dict[str, Any] = {"rank": rank, "doc": ranking.docs[i], "grade": g}
        if c.kind == "ERR":
            clipped = min(g, top) if g > 0 else 0.0
            stop = (2.0 ** clipped - 1.0) / 2.0 ** top
            row.update(stop=stop, reach=reach, contribution=stop * reach / rank)
            reach *= 1.0 - stop
        elif c.kind == "RWRR":
            gain = gain_of(g, c.gain)
            row.update(gain=gain, contribution=gain / rank)
        else:
            gain = gain_of(g, c.gain)
            row.update(gain=gain, discount=discount(c, rank), discount_label=label)
            row["contribution"] = gain / row["discount"]
        running += row["contribution"]
        row["running"] = running
        rows.append(row)
    return rows


def discount(c: Context, rank: int) -> float:
    """The DCG discount of a rank: log_b(rank + 1), or max(1, log_b rank) (Järvelin); 1 for CG."""
    if c.kind == "CG":
        return 1.0
    return max(1.0, log(rank, c.base)) if c.conv.discount == "jarvelin" else log(rank + 1, c.base)


def by_gain(c: Context, pool: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """The graded ideal: the judged documents with a positive gain, largest gain first (ERR:
    those with a positive grade, by grade)."""
    if c.kind == "ERR":
        return [(d, g) for d, g in pool if g > 0]
    ranked = sorted(pool, key=lambda item: -gain_of(item[1], c.gain))
    return [(d, g) for d, g in ranked if gain_of(g, c.gain) > 0]


def _g_max(c: Context) -> float:
    """ERR's top grade (the parameter, or the judgments' highest)."""
    top = c.max_grade if c.params.get("max_grade") is None else float(c.params["max_grade"])
    check_exp_gain(top)
    return top


def _finish(c: Context, steps: Rows, ideal: Rows, ranking: Ranking) -> tuple[float, list[str]]:
    name, k, kind = str(c.measure), c.cutoff, c.kind
    total = steps[-1]["running"] if steps else 0.0
    if kind in ("DCG", "CG", "ERR", "RWRR"):
        label = {"DCG": "Σ gain / discount", "CG": "Σ gain", "ERR": "Σ R_i · reach_i / rank",
                 "RWRR": "Σ gain / rank"}
        return total, [f"{name} = {label[kind]} = {number(total)}"]
    idcg = ideal[-1]["running"] if ideal else 0.0
    if kind == "IDCG":
        return idcg, [f"{name} = DCG of the ideal ranking = {number(idcg)}"]
    at = f"@{k}" if k is not None else ""
    if idcg > 0:
        value = total / idcg
        return value, [f"DCG{at} = {number(total)}; IDCG{at} = {number(idcg)} (the ideal "
                       "ranking's DCG)", f"{name} = DCG{at} / IDCG{at} = {number(total)} / "
                       f"{number(idcg)} = {number(value)}"]
    policy = c.conv.idcg_zero
    value = undefined_value(policy)
    return value, [f"IDCG{at} = 0 (no judged document with a positive gain): {name} = "
                   f"{number(value)} (idcg_zero='{policy}')"]


def _err_notes(c: Context) -> list[str]:
    return [f"g_max = {shortest(_g_max(c))}, the largest grade in the judgments "
            "(ERR(max_grade=G) sets it)"]


_DCG = ["rank", "doc", "grade", "gain", "discount", "contribution", "running"]
_OPTIONS: dict[str, Any] = {"unjudged": "they gain 0", "counts_missed": False}
KINDS = {
    "nDCG": Kind(_DCG, graded_steps, _finish, by_gain, **_OPTIONS),
    "DCG": Kind(_DCG, graded_steps, _finish, by_gain, **_OPTIONS),
    "IDCG": Kind(_DCG, graded_steps, _finish, by_gain, **_OPTIONS),
    "CG": Kind(["rank", "doc", "grade", "gain", "contribution", "running"], graded_steps,
               _finish, by_gain, **_OPTIONS),
    "ERR": Kind(["rank", "doc", "grade", "stop", "reach", "contribution", "running"],
                graded_steps, _finish, by_gain, notes=_err_notes, **_OPTIONS),
    "RWRR": Kind(["rank", "doc", "grade", "gain", "contribution", "running"], graded_steps,
                 _finish, by_gain, **_OPTIONS),
}
FAMILIES = {"nDCG": "nDCG", "DCG": "DCG", "IDCG": "IDCG", "CG": "CG", "ERR": "ERR",
            "RWRR": "RWRR"}
