"""The :class:`Explanation` of one measure on one query, and its text, Markdown and JSON forms."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from ..plain import check_digits, one_line, plain
from .context import number, shortest

#: Column key -> header, in display order.
HEADERS = {"rank": "rank", "doc": "doc", "grade": "grade", "score": "score",
           "relevant": "relevant", "hits": "hits", "precision": "P@rank", "recall": "recall",
           "interpolated": "best P from here", "gain": "gain", "gain_so_far": "gain so far",
           "ideal_cost": "ideal cost", "discount": "discount", "dcg": "DCG@rank",
           "ideal_dcg": "IDCG@min(rank, N+)", "stop": "R_i", "reach": "reach",
           "nonrel_above": "nonrel above", "weight": "(1-p)p^(r-1)", "judged": "judged",
           "judged_so_far": "judged so far", "judged_nonrel": "judged nonrel so far",
           "pooled_above": "pooled above", "not_relevant_above": "not relevant above",
           "error": "score - grade", "contribution": "contribution", "running": "running sum"}
#: Columns shown as whole numbers.
COUNTS = ("rank", "hits", "relevant", "nonrel_above", "judged", "judged_so_far",
          "judged_nonrel", "pooled_above", "not_relevant_above")


@dataclass
class Explanation:
    """The worked computation of one measure on one query.

    Attributes
    ----------
    measure, query, system : str
        What was explained.
    columns : list of str
        Keys of each step, in display order (see :data:`HEADERS`).
    rows : list of dict
        One step per rank considered (the whole list, or its top K).
    ideal_rows : list of dict
        The same steps on the ideal ranking (judged documents, best first; empty where the
        measure has none, as for the counts and the rating errors).
    value : float
        The final value, computed from ``rows`` (NaN where the conventions leave it undefined).
    ideal_value : float
        The value of the ideal ranking (what a perfect system would score; NaN where the
        measure has no ideal ranking).
    formula : list of str
        The last lines of the computation, e.g. ``nDCG@5 = DCG@5 / IDCG@5 = 0.8428``.
    notes : list of str
        What the reader should know: relevant documents never retrieved, unjudged documents,
        ties, short lists, and the conventions that decided a number.
    shown : int
        How many rows the text table shows (the rest contribute nothing).
    elided : str
        What the line that stands for the rows not shown says of them.
    ideal_title : str
        The heading of the ideal ranking's table.
    """

    measure: str
    query: str
    system: str
    columns: list[str]
    rows: list[dict[str, Any]]
    ideal_rows: list[dict[str, Any]]
    value: float
    ideal_value: float
    formula: list[str]
    notes: list[str] = field(default_factory=list)
    shown: int = 0
    ideal_shown: int = 0
    conventions: Any = None
    elided: str = "nothing further contributes"
    ideal_title: str = "ideal ranking (the judged documents, best first)"

    def to_text(self, digits: int = 4, all_rows: bool = False) -> str:
        """Aligned plain text: the steps, the ideal list, the final value, the notes."""
        lines = [f"{self.measure} of query {self.query!r} in run {self.system!r}", ""]
        lines += _aligned(self._table(self.rows, self.shown, digits, all_rows))
        lines += self._elided(self.rows, self.shown, all_rows)
        if self.ideal_rows:
            lines += ["", f"{self.ideal_title}:"]
            lines += _aligned(self._table(self.ideal_rows, self.ideal_shown, digits, all_rows))
            lines += self._elided(self.ideal_rows, self.ideal_shown, all_rows)
        lines += ["", *self.formula]
        lines += [f"note: {n}" for n in self.notes]
        if self.conventions is not None:
            lines.append(_conventions_line(self.conventions))
        return "\n".join(lines) + "\n"

    def to_markdown(self, digits: int = 4, all_rows: bool = False) -> str:
        """The same as Markdown tables (ids escaped: they show as text, never as markup)."""
        from ..plain import markdown_text as _md

        def table(rows: list[dict[str, Any]], shown: int) -> list[str]:
            cells = self._table(rows, shown, digits, all_rows)
            out = ["| " + " | ".join(_md(c) for c in cells[0]) + " |",
                   "|" + "|".join("---" if k == "doc" else "---:" for k in self.columns) + "|"]
            return out + ["| " + " | ".join(_md(c) for c in r) + " |" for r in cells[1:]]

        lines = [f"**{_md(self.measure)}** of query {_md(self.query)} in run "
                 f"{_md(self.system)}", "", *table(self.rows, self.shown)]
        lines += [_md(x) for x in self._elided(self.rows, self.shown, all_rows)]
        if self.ideal_rows:
            lines += ["", f"{self.ideal_title[0].upper()}{self.ideal_title[1:]}:", "",
                      *table(self.ideal_rows, self.ideal_shown)]
            lines += [_md(x) for x in self._elided(self.ideal_rows, self.ideal_shown, all_rows)]
        lines += [""] + [f"- {_md(f)}" for f in self.formula]
        lines += [f"- Note: {_md(n)}" for n in self.notes]
        if self.conventions is not None:
            line = _md(_conventions_line(self.conventions))
            lines += ["", line[0].upper() + line[1:]]
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """Plain values (NaN as None)."""
        return plain({"measure": self.measure, "query": self.query, "system": self.system,
                       "columns": self.columns, "rows": self.rows, "ideal_rows": self.ideal_rows,
                       "value": self.value, "ideal_value": self.ideal_value,
                       "formula": self.formula, "notes": self.notes,
                       "conventions": None if self.conventions is None
                       else self.conventions.to_dict()})

    def to_json(self, indent: int | None = None) -> str:
        """:meth:`to_dict` as JSON."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def _table(self, rows, shown: int, digits: int, all_rows: bool) -> list[list[str]]:
        check_digits(digits)
        head = [HEADERS[k] for k in self.columns]
        if self.columns and "discount" in self.columns and rows:
            head[self.columns.index("discount")] = rows[0].get("discount_label", "discount")
        body = rows if all_rows else rows[:shown]
        return [head, *([_cell(k, r.get(k), digits) for k in self.columns] for r in body)]

    def _elided(self, rows, shown: int, all_rows: bool) -> list[str]:
        if all_rows or shown >= len(rows):
            return []
        first, last = rows[shown]["rank"], rows[-1]["rank"]
        span = f"rank {first}" if first == last else f"ranks {first}-{last}"
        return [f"... {span} ({len(rows) - shown} documents): {self.elided} "
                "(all_rows / --all-rows shows them)"]


def _conventions_line(conv) -> str:
    changed = conv.differences()
    if not changed:
        return "conventions: trec_eval's (every default)"
    shown = ", ".join(f"{k}={v}" for k, v in changed.items())
    return f"conventions: {shown} (the others trec_eval's)"


def _cell(key: str, value: Any, digits: int) -> str:
    """A table cell: grades and scores as given (the run's order and ties stay visible), whole
    gains whole, the rest with ``digits`` decimals (:func:`.context.number`)."""
    if value is None:
        return ""
    if key == "grade":
        if not value >= 0:
            return "-" if math.isnan(value) else f"{shortest(value)} (unjudged)"
        return shortest(value)
    if key in COUNTS:
        return str(int(value))
    if key == "doc":
        return one_line(str(value))
    if key == "score" or (key in ("gain", "gain_so_far", "ideal_cost")
                          and float(value).is_integer()):
        return shortest(value)
    return number(value, digits)


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.rjust(w) if i != 1 else c.ljust(w) for i, (c, w) in
                      enumerate(zip(r, widths))).rstrip() for r in rows]
