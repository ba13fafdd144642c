"""Reader of z-score reference files: ``qid measure mean stddev`` per line, as trec_eval's
``-Z`` reads them (get_zscores.c): the mean and standard deviation of one measure on one
query over a reference set of runs.

Fields are separated by any mix of spaces and tabs; blank lines and lines whose first
non-blank character is ``#`` are skipped, as in qrels files; plain text or gzip. trec_eval
reads a number that is none as 0 (``atof``) and takes either of two lines for one query and
measure; rankwise refuses both, naming the line.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .trec import text_fields

ZSCORE_FIELDS = "qid measure mean stddev"


@dataclass(frozen=True)
class ZScores:
    """Reference means and standard deviations: for each measure name, the queries (sorted,
    as an array of str) and their means and deviations, aligned."""

    source: str
    by_measure: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]

    def lookup(self, measure: str, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                np.ndarray]:
        """``(found, mean, stddev)`` for each of ``queries`` (str) under ``measure``: one
        binary search of the sorted reference queries; mean and stddev are NaN where not
        found."""
        nowhere = np.zeros(len(queries), bool), np.full(len(queries), np.nan), \
            np.full(len(queries), np.nan)
        if measure not in self.by_measure or len(queries) == 0:
            return nowhere
        ref_queries, means, stddevs = self.by_measure[measure]
        wanted = np.asarray(queries, dtype=str)
        at = np.minimum(np.searchsorted(ref_queries, wanted), len(ref_queries) - 1)
        found = ref_queries[at] == wanted
        return found, np.where(found, means[at], np.nan), np.where(found, stddevs[at], np.nan)


def read_zscores(source: str | os.PathLike[str] | Mapping | ZScores) -> ZScores:
    """The reference of a z-score file (``qid measure mean stddev``), of a mapping
    ``{query: {measure: (mean, stddev)}}``, or ``source`` itself if already read.

    Examples
    --------
    >>> from rankwise.io.zscores import read_zscores
    >>> z = read_zscores({"q1": {"map": (0.2, 0.1)}, "q2": {"map": (0.5, 0.0)}})
    >>> found, mean, sd = z.lookup("map", ["q1", "q3"])
    >>> found.tolist(), mean.tolist()[0], sd.tolist()[0]
    ([True, False], 0.2, 0.1)
    """
    if isinstance(source, ZScores):
        return source
    if isinstance(source, Mapping):
        rows = [(str(q), str(m), *_pair(q, m, pair)) for q, measures in source.items()
                for m, pair in _measures_of(q, measures).items()]
        return _reference("z-scores", rows, [None] * len(rows), "key")
    if not isinstance(source, (str, os.PathLike)):
        raise InputError(f"expected a file path or a mapping {{query: {{measure: (mean, "
                         f"stddev)}}}}, got {type(source).__name__}", source="zscores")
    return _read_file(str(source))


def _read_file(name: str) -> ZScores:
    rows, lines = [], []
    for number, text in text_fields(name):
        if len(text) != 4:
            raise InputError(f"expected 4 fields '{ZSCORE_FIELDS}', got {len(text)}",
                             source=name, line=number, value=" ".join(text))
        qid, measure, mean, stddev = text
        rows.append((qid, measure, _number(mean, "mean", name, number),
                     _number(stddev, "stddev", name, number)))
        lines.append(number)
    return _reference(name, rows, lines, "line")


def _number(text: str, field: str, source: str, line: int | None, unit: str = "line") -> float:
    """A finite float (a stddev also >= 0), else the InputError naming it."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value) or (field == "stddev" and value < 0):
        expected = "a finite number >= 0" if field == "stddev" else "a finite number"
        raise InputError(f"{field}: expected {expected}", source=source, line=line,
                         value=str(text), unit=unit)
    return value


def _measures_of(query, measures) -> Mapping:
    if not isinstance(measures, Mapping):
        raise InputError("expected {measure: (mean, stddev)} for each query", source="z-scores",
                         line=None, value=f"{query!r}: {measures!r}", unit="key")
    return measures


def _pair(query, measure, pair) -> tuple[float, float]:
    """``(mean, stddev)`` of one mapping entry, each a number (not text or a bool)."""
    where = f"{query!r}: {{{measure!r}: {pair!r}}}"
    if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2 \
            or any(isinstance(v, (str, bytes, bool)) for v in pair):
        raise InputError("expected (mean, stddev), two numbers", source="z-scores",
                         value=where, unit="key")
    return (_number(pair[0], "mean", "z-scores", None, "key"),
            _number(pair[1], "stddev", "z-scores", None, "key"))


def _reference(source: str, rows: list[tuple[str, str, float, float]],
               lines: list[int | None], unit: str) -> ZScores:
    """Rows grouped by measure, each group's queries sorted; a query and measure given twice
    is refused, naming both lines."""
    seen: dict[tuple[str, str], int | None] = {}
    grouped: dict[str, list[tuple[str, float, float]]] = {}
    for (qid, measure, mean, stddev), line in zip(rows, lines):
        if (qid, measure) in seen:
            first = seen[(qid, measure)]
            also = f" (first on line {first})" if first is not None else ""
            raise InputError(f"query {qid!r} and measure {measure!r} given twice{also}",
                             source=source, line=line, unit=unit)
        seen[(qid, measure)] = line
        grouped.setdefault(measure, []).append((qid, mean, stddev))
    if not rows:
        raise InputError("no z-score lines", source=source)
    by_measure = {}
    for measure, entries in grouped.items():
        queries = np.array([q for q, _, _ in entries], dtype=str)
        order = np.argsort(queries, kind="stable")
        by_measure[measure] = (queries[order],
                               np.array([m for _, m, _ in entries])[order],
                               np.array([s for _, _, s in entries])[order])
    return ZScores(source, by_measure)
