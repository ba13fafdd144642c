"""Interpolated precision at recall levels and the 11-point average (trec_eval 10's
iprec_at_recall and 11pt_avg), rank by rank: precision, recall and the best precision at
this rank or below, read at the rank where each level's relevant documents are reached."""

from __future__ import annotations

import math

from .binary import binary_steps
from .context import Context, Kind, Ranking, Rows, by_threshold, divide, number, shortest


def curve_steps(c: Context, ranking: Ranking) -> Rows:
    """One row per rank: hits, P@rank, recall = hits / R, and the interpolated precision
    max_{rank' >= rank} P@rank' (one pass from the bottom)."""
    rows = binary_steps(c, ranking)
    best = 0.0
    for row in reversed(rows):
        best = max(best, row["precision"])
        row.update(recall=divide(row["hits"], c.num_rel), interpolated=best)
        del row["contribution"], row["running"]
    return rows


def _finish(c: Context, steps: Rows, ideal: Rows, ranking: Ranking) -> tuple[float, list[str]]:
    levels = c.params["levels"] if c.kind == "11pt_avg" else (float(c.measure.cutoff),)
    shift = 0.9 if c.conv.recall_levels == "trec_eval9" else 0.5
    rounding = "floor(p·R + 0.9)" if shift == 0.9 else "round(p·R)"
    hits = steps[-1]["hits"] if steps else 0
    hit_rows = [row for row in steps if row["relevant"]]
    values, lines = [], [f"R = {c.num_rel}; recall p needs {rounding} relevant documents "
                         f"(at least 1); {hits} relevant retrieved"]
    for level in levels:
        needed = math.floor(level * c.num_rel + shift)
        if hits > 0 and needed <= hits:
            row = hit_rows[max(needed, 1) - 1]
            values.append(row["interpolated"])
            lines.append(f"recall {shortest(level)}: {max(needed, 1)} relevant, reached at rank "
                         f"{row['rank']}: best P@rank from there = {number(values[-1])}")
        else:
            values.append(0.0)
            lines.append(f"recall {shortest(level)}: {needed} relevant, never reached: 0")
    if c.kind == "11pt_avg":
        value = sum(values) / len(values)
        lines.append(f"{c.measure} = Σ of the {len(values)} / {len(values)} = "
                     f"{number(sum(values))} / {len(values)} = {number(value)}")
        return value, lines
    lines.append(f"{c.measure} = {number(values[0])}")
    return values[0], lines


_COLUMNS = ["rank", "doc", "grade", "relevant", "hits", "precision", "recall", "interpolated"]
_OPTIONS = {"shown_by": "relevant", "rank_cutoff": False,
            "elided": "no further relevant document"}
KINDS = {"IPrec": Kind(_COLUMNS, curve_steps, _finish, by_threshold, **_OPTIONS),
         "11pt_avg": Kind(_COLUMNS, curve_steps, _finish, by_threshold, **_OPTIONS)}
FAMILIES = {"IPrec": "IPrec", "11pt_avg": "11pt_avg"}
