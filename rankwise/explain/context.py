"""What every family's steps read: the measure's parameters resolved under the conventions,
the query's R and N, the ranking being walked, and how a kind of family is explained."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..measures.graded import ScaledGain, check_exp_gain, gains
from ..plain import shortest_number as shortest  # (for the explain modules)

Rows = list[dict[str, Any]]


@dataclass
class Context:
    """One measure on one query, its parameters resolved."""

    measure: Any  # the parsed Measure
    kind: str
    cutoff: int | None  # a rank cutoff (None: the whole list)
    rel: float  # relevance threshold
    gain: Any
    base: float
    num_rel: int  # R: judged documents with grade >= rel
    num_nonrel: int  # N: judged documents below rel
    conv: Any  # the family's conventions
    max_grade: float  # the largest judged grade in all the judgments (ERR's g_max)
    top_grade: float  # the query's largest judged grade, at least 1 (graded RBP's scale)
    params: dict[str, Any]
    pool: list[tuple[str, float]]  # the judged (doc, grade) pairs the ideal is made of
    query: str = ""  # the query's id (for the messages of refusals)


@dataclass
class Ranking:
    """A ranked list walked rank by rank: the run's, or the ideal one."""

    docs: list[str]
    grades: list[float]  # NaN: unjudged
    relevant: list[bool]
    depth: int  # ranks walked: the list, or its top K
    scores: list[float] | None = None  # None for an ideal ranking

    @property
    def length(self) -> int:
        return len(self.docs)


@dataclass(frozen=True)
class Kind:
    """How a kind of family is explained: its columns, one row per rank (``steps``), the final
    value and the lines that show it (``finish``), and the ideal ranking's order (``ideal``:
    from the query's judged (doc, grade) pairs, best first; None where there is none)."""

    columns: list[str]
    steps: Callable[[Context, Ranking], Rows]
    finish: Callable[[Context, Rows, Rows, Ranking], tuple[float, list[str]]]
    ideal: Callable[[Context, list[tuple[str, float]]], list[tuple[str, float]]] | None
    shown_by: str = "contribution"  # the table ends at the last row where this is true
    unjudged: str | None = "they count as non-relevant"  # the note on unjudged documents
    counts_missed: bool = True  # whether relevant documents never retrieved count (in R)
    rank_cutoff: bool = True  # whether @K is a rank (RprecMult's and IPrec's are not)
    notes: Callable[[Context], list[str]] | None = None  # the kind's own notes
    elided: str = "nothing further contributes"  # what the rows not shown are
    ideal_title: str = "ideal ranking (the judged documents, best first)"


def divide(a: float, b: float) -> float:
    """a / b, 0 when b is 0 (trec_eval's convention for an empty denominator)."""
    return a / b if b else 0.0


def number(x: float, digits: int = 4) -> str:
    """A value as the formulas and the tables print it: ``digits`` fixed decimals, NaN spelt
    out, and in scientific notation where fixed decimals would show a value that is not 0 as
    0 (a gain of 1e-200 as 0.0000) or need more than 15 digits before the point.

    >>> number(0.84276), number(float("nan")), number(3e-200), number(-2e-5), number(1e300)
    ('0.8428', 'NaN', '3.0000e-200', '-2.0000e-05', '1.0000e+300')
    """
    if isinstance(x, float) and math.isnan(x):
        return "NaN"
    fixed = f"{x:.{digits}f}"
    if x != 0 and math.isfinite(x) and (float(fixed) == 0 or abs(x) >= 1e15):
        return f"{x:.{digits}e}"
    return fixed


def within(c: Context) -> str:
    """'in the top K' or 'retrieved'."""
    return f"in the top {c.cutoff}" if c.cutoff is not None else "retrieved"


def gain_of(grade: float, gain) -> float:
    """linear: the grade; exp: 2^grade − 1; a map: its value for the grade (else the grade);
    a :class:`~rankwise.measures.graded.ScaledGain`: the engine's scaled gain. Unjudged (NaN)
    and negative grades gain 0."""
    if not grade >= 0:
        return 0.0
    if isinstance(gain, ScaledGain):
        return float(gains(np.array([grade], dtype=np.float64), gain)[0])
    if isinstance(gain, tuple):
        for mapped_grade, value in gain:
            if grade == mapped_grade:
                return float(value)
    if gain == "exp":
        check_exp_gain(grade)
        return 2.0 ** grade - 1.0
    return float(grade)


def log(x: float, base: float) -> float:
    return math.log2(x) if base == 2 else math.log(x) / math.log(base)


def by_threshold(c: Context, pool: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """The binary ideal: relevant documents first, each group by grade, then by doc id."""
    return sorted(pool, key=lambda item: (not item[1] >= c.rel, -item[1], item[0]))


def by_grade(c: Context, pool: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Every judged document by grade, best first (ties by doc id)."""
    return sorted(pool, key=lambda item: (-item[1], item[0]))
