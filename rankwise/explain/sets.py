"""Set measures and counts: the retrieved list read as a set (trec_eval's set_P, set_recall,
set_F, set_map, set_relative_P, utility, num_q, num_ret, num_rel, num_rel_ret and
num_nonrel_judged_ret). Each row counts the relevant documents retrieved so far, and the
judged non-relevant ones."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import InputError
from ..measures.binary import scaled_utility
from .context import Context, Kind, Ranking, Rows, by_threshold, divide, number, shortest


def set_steps(c: Context, ranking: Ranking) -> Rows:
    """One row per rank: relevant (grade >= rel), hits so far, and judged non-relevant
    (0 <= grade < rel) so far."""
    rows, hits, judged_nonrel = [], 0, 0
    for i in range(ranking.depth):
        g, is_rel = ranking.grades[i], bool(ranking.relevant[i])
        hits += is_rel
        judged_nonrel += 0 <= g < c.rel
        rows.append({"rank": i + 1, "doc": ranking.docs[i], "grade": g, "relevant": int(is_rel),
                     "hits": hits, "judged_nonrel": judged_nonrel})
    return rows


def perfect_set(c: Context, pool: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """The ideal set: every relevant document and nothing else."""
    return [(d, g) for d, g in by_threshold(c, pool) if g >= c.rel]


def _finish(c: Context, steps: Rows, ideal: Rows, ranking: Ranking) -> tuple[float, list[str]]:
    name, kind, p = str(c.measure), c.kind, c.params
    h = steps[-1]["hits"] if steps else 0
    n, r = ranking.length, c.num_rel
    counts = f"relevant retrieved h = {h}, retrieved n = {n}, relevant R = {r}"
    if kind == "SetP":
        value = divide(h, n)
        return value, [f"{name} = h / n = {h} / {n} = {number(value)}"]
    if kind == "SetR":
        value = divide(h, r)
        return value, [f"{name} = h / R = {h} / {r} = {number(value)}"]
    if kind == "SetRelP":
        value = divide(h, min(n, r))
        return value, [f"{name} = h / min(n, R) = {h} / {min(n, r)} = {number(value)}"]
    if kind == "SetAP":
        value = divide(h * h, n * r)
        return value, [f"{name} = set precision × set recall = h² / (n·R) = {h * h} / {n * r} "
                       f"= {number(value)}"]
    if kind == "SetF":
        beta = float(p["beta"])
        precision, recall = divide(h, n), divide(h, r)
        value = divide((beta + 1.0) * precision * recall, beta * precision + recall)
        return value, [f"set P = h / n = {h} / {n} = {number(precision)}; set recall = h / R = "
                       f"{h} / {r} = {number(recall)}", f"{name} = (β + 1)·P·R / (β·P + R) = "
                       f"{number(value)} (β = {shortest(beta)})"]
    # Utility
    w = [float(p[key]) for key in ("rel_ret", "nonrel_ret", "rel_missed", "nonrel_missed")]
    docs = float(p["docs"])
    cells = [h, n - h, r - h, docs + h - n - r]
    value = sum(weight * count for weight, count in zip(w, cells))
    scaled = [] if math.isfinite(value) else [
        "(the weighted sum overflows float64: it is computed with the weights and the counts "
        "scaled by powers of two, exactly)"]
    if scaled:
        value = _scaled(c, w, cells, value, ranking.scores is None)
    terms = " ".join(f"{'−' if weight < 0 else '+'} {shortest(abs(weight))}·{what}"
                     for weight, what in zip(w, ("h", "(n − h)", "(R − h)", "(docs + h − n − R)")))
    return value, [counts, f"{name} = {terms.lstrip('+ ')} = {number(value)} (docs = "
                   f"{shortest(docs)}, the collection size)", *scaled]


def _scaled(c: Context, weights: list[float], cells: list[float], plain: float,
            ideal: bool) -> float:
    """Utility whose plain sum overflowed, scaled by powers of two, exactly, as the engine
    computes it (:func:`rankwise.measures.binary.scaled_utility`), which refuses a value
    beyond float64; the ideal set's value, which the engine never computes, is then shown as
    the plain sum gives it."""
    try:
        return float(scaled_utility(np.array([c.query], dtype=object), tuple(weights),
                                    [np.array([float(x)]) for x in cells])[0])
    except InputError:
        if ideal:
            return plain
        raise


def _count(c: Context, steps: Rows, ideal: Rows, ranking: Ranking) -> tuple[float, list[str]]:
    name, kind = str(c.measure), c.kind
    if kind == "NumQ":
        return 1.0, [f"{name} = 1 (this query; summed over the queries)"]
    if kind == "NumRel":
        return float(c.num_rel), [f"{name} = R, the judged documents with grade >= "
                                  f"{shortest(c.rel)} = {c.num_rel}"]
    last: dict[str, Any] = steps[-1] if steps else {"hits": 0, "judged_nonrel": 0}
    value, what = {"NumRet": (ranking.length, "documents retrieved"),
                   "NumRelRet": (last["hits"], "relevant documents retrieved"),
                   "NumNonRelJudgedRet": (last["judged_nonrel"], "judged non-relevant "
                                          "documents retrieved")}[kind]
    return float(value), [f"{name} = {what} = {value}"]


_SET = ["rank", "doc", "grade", "relevant", "hits"]
_SETS: dict[str, Any] = {"shown_by": "relevant",
                         "elided": "no further relevant document (they count as retrieved)",
                         "ideal_title": "ideal set (the relevant documents and nothing else)"}
_COUNTS: dict[str, Any] = {"shown_by": "rank", "counts_missed": False,
                           "unjudged": "they count as retrieved, neither relevant nor judged "
                           "non-relevant"}
KINDS = {
    **{kind: Kind(_SET, set_steps, _finish, perfect_set, **_SETS)
       for kind in ("SetP", "SetR", "SetRelP", "SetAP", "SetF", "Utility")},
    **{kind: Kind(_SET, set_steps, _count, None, **_COUNTS)
       for kind in ("NumQ", "NumRet", "NumRel", "NumRelRet")},
    "NumNonRelJudgedRet": Kind(_SET + ["judged_nonrel"], set_steps, _count, None, **_COUNTS),
}
FAMILIES = {kind: kind for kind in KINDS}
