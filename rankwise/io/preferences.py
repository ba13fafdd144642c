"""Readers of preference judgments, as trec_eval's ``-R prefs`` and ``-R qrels_prefs`` read
them (get_prefs.c, get_qrels_prefs.c).

A prefs file has lines ``qid jg jsg docid rel_level``: within one judgment sub-group (jsg)
of one judgment group (jg, an assessor's information need), every document is preferred to
every document with a lower rel_level; rel_level 0 means not relevant. ``-R qrels_prefs``
reads a qrels file ``qid iter docid rel`` so, its iter field the judgment group and one
sub-group for all its lines.

Fields are separated by any mix of spaces and tabs; blank lines and lines whose first
non-blank character is ``#`` are skipped; plain text or gzip. A rel_level must be a finite
number >= 0 (trec_eval's format; it reads a field that is no number as 0, and its two ways
of holding a judgment group treat a negative level differently). A document given twice in
one sub-group is refused, naming both lines (trec_eval counts its preferences twice, or
stops, as the levels agree or not).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .trec import text_fields

PREFS_FIELDS = "qid jg jsg docid rel_level"
QRELS_PREFS_FIELDS = "qid iter docid rel"
#: the one judgment sub-group of a qrels file read as preferences (get_qrels_prefs.c)
QRELS_SUBGROUP = "0"


@dataclass(frozen=True)
class Preferences:
    """Preference judgments, one row per line: the query, judgment group, sub-group and
    document (arrays of str), the rel_level (float64) and the line (or entry) each came
    from."""

    query: np.ndarray
    group: np.ndarray
    subgroup: np.ndarray
    doc: np.ndarray
    level: np.ndarray
    source: str
    lines: np.ndarray
    unit: str = "line"

    def __len__(self) -> int:
        return len(self.level)

    def where(self, row: int) -> dict:
        """``source``, ``line`` and ``unit`` of an :class:`InputError` about ``row``."""
        return {"source": self.source, "line": int(self.lines[row]), "unit": self.unit}


def read_preferences(source, judgments_format: str = "prefs") -> Preferences:
    """Preference judgments from a file (``prefs``: ``qid jg jsg docid rel_level``;
    ``qrels_prefs``: a qrels file ``qid iter docid rel``) or a mapping (``prefs``:
    ``{query: {jg: {jsg: {doc: level}}}}``; ``qrels_prefs``: ``{query: {doc: grade}}``,
    one judgment group ``"0"``).

    Examples
    --------
    >>> from rankwise.io.preferences import read_preferences
    >>> p = read_preferences({"q1": {"alice": {"s1": {"d1": 2, "d2": 1}}}})
    >>> p.doc.tolist(), p.level.tolist(), p.group.tolist()
    (['d1', 'd2'], [2.0, 1.0], ['alice', 'alice'])
    >>> read_preferences({"q1": {"d1": 1, "d2": 0}}, "qrels_prefs").subgroup.tolist()
    ['0', '0']
    """
    if judgments_format not in ("prefs", "qrels_prefs"):
        raise ValueError("judgments_format: expected 'prefs' or 'qrels_prefs', got "
                         f"{judgments_format!r}")
    if isinstance(source, Preferences):
        return source
    if isinstance(source, (str, os.PathLike)):
        prefs = _read_file(str(source), judgments_format)
    elif isinstance(source, Mapping) and source:
        prefs = _from_mapping(source, judgments_format)
    else:
        expected = "{query: {jg: {jsg: {doc: level}}}}" if judgments_format == "prefs" \
            else "{query: {doc: grade}}"
        raise InputError(f"expected a {judgments_format} file or a mapping {expected}, got "
                         f"{type(source).__name__}"
                         + (" (empty)" if isinstance(source, Mapping) else ""),
                         source="preferences")
    _check_duplicates(prefs)
    return prefs


def _read_file(name: str, judgments_format: str) -> Preferences:
    wanted = PREFS_FIELDS if judgments_format == "prefs" else QRELS_PREFS_FIELDS
    count = len(wanted.split())
    rows, lines = [], []
    for number, text in text_fields(name):
        if len(text) != count:
            hint = "; this looks like a run file" if len(text) == 6 else \
                "; this looks like a qrels file (-R qrels_prefs reads one)" \
                if len(text) == 4 and judgments_format == "prefs" else \
                "; this looks like a prefs file (-R prefs reads one)" \
                if len(text) == 5 else ""
            raise InputError(f"expected {count} fields '{wanted}', got {len(text)}{hint}",
                             source=name, line=number, value=" ".join(text))
        if judgments_format == "qrels_prefs":
            text.insert(2, QRELS_SUBGROUP)
        text[4] = _level(text[4], name, number, "line")
        rows.append(text)
        lines.append(number)
    if not rows:
        raise InputError(f"no {judgments_format} lines: the file holds only blank or comment "
                         "lines", source=name)
    return _columns(rows, name, lines, "line")


def _level(text, source: str, line, unit: str) -> float:
    """A rel_level: a finite number >= 0, else the InputError naming it."""
    try:
        value = float(text) if not isinstance(text, (bool, bytes)) else math.nan
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise InputError("expected a rel_level, a finite number >= 0 (0: not relevant)",
                         source=source, line=line, value=str(text), unit=unit)
    return value


def _from_mapping(source: Mapping, judgments_format: str) -> Preferences:
    where = f"{judgments_format} dict"
    rows, keys = [], []

    def nested(value, path: str) -> Mapping:
        if not isinstance(value, Mapping):
            raise InputError("expected a mapping", source=where, value=f"{path}: {value!r}",
                             unit="key")
        return value

    for q, by_group in source.items():
        if judgments_format == "qrels_prefs":
            by_group = {"0": {QRELS_SUBGROUP: by_group}}
        for g, by_subgroup in nested(by_group, repr(q)).items():
            for s, levels in nested(by_subgroup, f"{q!r}/{g!r}").items():
                for d, level in nested(levels, f"{q!r}/{g!r}/{s!r}").items():
                    key = f"{q!r}/{d!r}" if judgments_format == "qrels_prefs" \
                        else f"{q!r}/{g!r}/{s!r}/{d!r}"
                    rows.append([str(q), str(g), str(s), str(d),
                                 _level(level, where, key, "key")])
                    keys.append(key)
    if not rows:
        raise InputError("no preferences given", source=where)
    return _columns(rows, where, keys, "key")


def _columns(rows: list[list], source: str, lines: list, unit: str) -> Preferences:
    query, group, subgroup, doc, level = zip(*rows)
    return Preferences(*(np.array(c, dtype=object) for c in (query, group, subgroup, doc)),
                       np.array(level, dtype=np.float64), source,
                       np.array(lines, dtype=object), unit)


def _check_duplicates(prefs: Preferences) -> None:
    """A document twice in one judgment sub-group: refused, naming both lines."""
    seen: dict[tuple, int] = {}
    for row, key in enumerate(zip(prefs.query, prefs.group, prefs.subgroup, prefs.doc)):
        first = seen.setdefault(key, row)
        if first != row:
            q, g, s, d = key
            at = f" (first on {prefs.unit} {prefs.lines[first]})" if prefs.unit == "line" \
                else ""
            raise InputError(f"document {d!r} given twice in judgment sub-group {s!r} of "
                             f"group {g!r}, query {q!r}{at}", **prefs.where(row))
