"""Result: aggregates, per-query values, conventions and diagnostics of one evaluation,
with writers to tables, Markdown, LaTeX, CSV, JSON and trec_eval's own line format.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .conventions import Conventions
from .errors import InputError
from .plain import (SCIENTIFIC_FROM, check_digits, csv_field, decimal_text, latex_text, markdown_text,
                    one_line)

MIN_GEO_MEAN = 1e-5  # trec_eval's floor for geometric means


@dataclass
class SystemResult:
    """One run's numbers: the mean (or sum) of every measure, and its per-query values."""

    name: str
    aggregates: dict[str, float]
    diagnostics: dict[str, Any]
    query_ids: np.ndarray | None = None  # sorted query ids (per-query values kept)
    values: dict[str, np.ndarray] | None = None
    undefined: dict[str, int] = field(default_factory=dict)  # queries with no value, per measure
    trec_names: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # pitfalls (rankwise.diagnostics)
    checks: list[dict] = field(default_factory=list)  # every diagnostic check, as dicts


class Result:
    """What :func:`rankwise.evaluate` returns.

    Attributes
    ----------
    measures : list of str
        Canonical measure names, in the order asked for.
    systems : dict of str to SystemResult
        One entry per run, in the order given.
    conventions : Conventions
        The conventions every number was computed under.
    zscores : dict or None
        Set when the values are z-scores (:func:`rankwise.standardize`, trec_eval ``-Z``):
        ``{"reference": file, "missing": policy}``; the outputs then label each measure
        ``Z(name)`` (trec_eval's format: ``Zname``).
    """

    def __init__(self, measures: list[str], systems: dict[str, SystemResult],
                 conventions: Conventions, aggregate_kinds: dict[str, str],
                 zscores: dict[str, str] | None = None) -> None:
        self.measures = measures
        self.systems = systems
        self.conventions = conventions
        self.aggregate_kinds = aggregate_kinds
        self.zscores = zscores

    # ------------------------------------------------------------------ access

    def _system(self, system: str | None) -> SystemResult:
        if system is None:
            if len(self.systems) != 1:
                raise KeyError(f"several systems: name one of {list(self.systems)}")
            return next(iter(self.systems.values()))
        return self.systems[system]

    def mean(self, measure: str, system: str | None = None) -> float:
        """The aggregate of ``measure`` (a canonical name) for ``system`` (default: the only one)."""
        s = self._system(system)
        if measure in s.aggregates:  # (and the measures outside the registry: preferences)
            return s.aggregates[measure]
        named = [m for m, trec in s.trec_names.items() if trec == measure]
        if named:  # trec_eval's name of a measure evaluated
            return s.aggregates[named[0]]
        return s.aggregates[_canonical(measure)]

    @property
    def aggregates(self) -> dict[str, dict[str, float]]:
        """``{system: {measure: aggregate}}``."""
        return {name: dict(s.aggregates) for name, s in self.systems.items()}

    @property
    def diagnostics(self) -> dict[str, dict[str, Any]]:
        """``{system: counts}``: what was ignored, removed, unjudged or tied (see Diagnostics)."""
        return {name: dict(s.diagnostics) for name, s in self.systems.items()}

    def per_query(self, system: str | None = None) -> dict[str, dict[str, float]]:
        """``{query: {measure: value}}`` for one system (needs ``per_query=True``)."""
        s = self._system(system)
        if s.values is None:
            raise ValueError("per-query values were not kept: evaluate(..., per_query=True)")
        columns = [s.values[m].tolist() for m in self.measures]
        return {q: dict(zip(self.measures, row)) for q, row in zip(s.query_ids, zip(*columns))}

    def to_frame(self, backend: str = "pandas", per_query: bool = True):
        """A DataFrame: per query (``system, query, <measures>``) or aggregates (``system,
        <measures>``). ``backend``: ``"pandas"`` or ``"polars"``."""
        data: dict[str, list[Any]] = {"system": []}
        if per_query:
            data["query"] = []
        for m in self.measures:
            data[m] = []
        for name, s in self.systems.items():
            if per_query:
                if s.values is None:
                    raise ValueError("per-query values were not kept: evaluate(..., per_query=True)")
                data["system"] += [name] * len(s.query_ids)
                data["query"] += list(s.query_ids)
                for m in self.measures:
                    data[m] += s.values[m].tolist()
            else:
                data["system"].append(name)
                for m in self.measures:
                    data[m].append(s.aggregates[m])
        if backend == "polars":
            import polars as pl

            return pl.DataFrame(data)
        import pandas as pd

        return pd.DataFrame(data)

    # ------------------------------------------------------------------ text formats

    def to_markdown(self, digits: int = 4, per_query: bool = False) -> str:
        """The aggregates (and, with ``per_query``, every query's values) as Markdown tables,
        the precision and the conventions below. Values are rounded to ``digits`` decimals
        (0.99996 shows as 1.0000), counts shown whole, and a line says so; CSV and JSON hold
        every digit. Ids are escaped: they show as text, never as markup."""
        check_digits(digits)
        md = markdown_text
        head = "| system | " + " | ".join(map(md, self._labels())) + " |"
        rule = "|---|" + "---:|" * len(self.measures)
        rows = [f"| {md(name)} | " + " | ".join(self._fmt(m, s.aggregates[m], digits)
                                              for m in self.measures) + " |"
                for name, s in self.systems.items()]
        text = [head, rule, *rows, "", _precision(digits) + ".", "",
                f"Conventions: {md(self.describe_conventions())}"]
        if per_query:
            text += ["", "| system | query | " + " | ".join(map(md, self._labels())) + " |",
                     "|---|---|" + "---:|" * len(self.measures)]
            for name, s in self.systems.items():
                values = self._values(s)
                text += [f"| {md(name)} | {md(q)} | " + " | ".join(
                    self._fmt(m, values[m][i], digits) for m in self.measures) + " |"
                    for i, q in enumerate(s.query_ids)]
        return "\n".join(text)

    def to_latex(self, digits: int = 4, per_query: bool = False) -> str:
        """The aggregates (and, with ``per_query``, every query's values) as LaTeX ``tabular``
        environments, the precision and the conventions in comments below (values rounded to
        ``digits`` decimals, counts whole; CSV and JSON hold every digit). Ids and measure
        names are escaped: they are typeset as themselves (see
        :func:`rankwise.plain.latex_text`)."""
        check_digits(digits)
        tex = latex_text
        head = " & ".join(tex(m) for m in self._labels()) + r" \\"
        rows = [tex(name) + " & " + " & ".join(self._fmt(m, s.aggregates[m], digits)
                                               for m in self.measures) + r" \\"
                for name, s in self.systems.items()]
        lines = _tabular("l", len(self.measures), "System & " + head, rows)
        if per_query:
            rows = []
            for name, s in self.systems.items():
                values = self._values(s)
                rows += [f"{tex(name)} & {tex(q)} & " + " & ".join(
                    self._fmt(m, values[m][i], digits) for m in self.measures) + r" \\"
                    for i, q in enumerate(s.query_ids)]
            lines += ["", *_tabular("ll", len(self.measures), "System & Query & " + head, rows)]
        return "\n".join([*lines, "% " + _precision(digits),
                          "% conventions: " + tex(self.describe_conventions())]) + "\n"

    def to_table(self, digits: int = 4) -> str:
        """The aggregates as an aligned plain-text table, rounded to ``digits`` decimals,
        counts whole."""
        check_digits(digits)
        header = ["system", *self._labels()]
        body = [[one_line(name), *(self._fmt(m, s.aggregates[m], digits) for m in self.measures)]
                for name, s in self.systems.items()]
        widths = [max(len(str(r[i])) for r in [header, *body]) for i in range(len(header))]
        lines = ["  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                           for i, (c, w) in enumerate(zip(r, widths))) for r in [header, *body]]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def to_csv(self, per_query: bool = False) -> str:
        """CSV of the aggregates (or of the per-query values), full precision."""
        lines = []
        names = [csv_field(m) for m in self._labels()]  # nDCG(gain={1:3,2:9}) holds commas
        if per_query:
            lines.append(",".join(["system", "query", *names]))
            for name, s in self.systems.items():
                values = self._values(s)  # as Python floats, each measure in one call
                columns = [[repr(v) for v in values[m].tolist()] for m in self.measures]
                system = csv_field(name)
                for q, row in zip(s.query_ids.tolist(), zip(*columns)):
                    lines.append(",".join([system, csv_field(q), *row]))
        else:
            lines.append(",".join(["system", *names]))
            for name, s in self.systems.items():
                lines.append(",".join([csv_field(name),
                                       *(repr(s.aggregates[m]) for m in self.measures)]))
        return "\n".join(lines) + "\n"

    def to_trec(self, per_query: bool = False) -> str:
        r"""trec_eval's output format: ``measure<TAB>qid|all<TAB>value`` (4 decimals, counts as
        integers, measure names padded to 22), so it can be diffed with trec_eval's.

        An id that trec_eval can read (none of its field separators: space, tab, line feed,
        vertical tab, form feed, carriage return, nor NUL) is printed as it is, byte for byte
        as trec_eval prints it. One that holds such a character is printed with each of them
        escaped as Python writes it (``\t``, ``\n``, ``\r``, ``\x0b``, ``\x0c``, ``\x20`` for
        a space, ``\x00``) and each of its backslashes doubled (``\\``), every other character
        as it is (``é`` stays ``é``): such forms read back to one id each. An id printed as it
        is may itself hold a backslash (``a\tb``, with a backslash and a t, prints like the
        id a<TAB>b): where two ids of the output print alike (query ids, or run names), the
        output is refused with an :class:`~rankwise.InputError` naming them (CSV and JSON
        keep every id as it is)."""
        qids = _trec_ids([q for s in self.systems.values() for q in self._query_ids(s)]
                         if per_query else [], "query ids")
        names = _trec_ids(list(self.systems), "run names")
        lines = []
        for name, s in self.systems.items():
            if per_query:  # each measure's values formatted in one pass over a list
                values = self._values(s)
                printed = [m for m in self.measures if _printed_per_query(m)]
                labels = [self._trec_label(s, m) for m in printed]
                columns = [[_trec_value(v, self._counted(m)) for v in values[m].tolist()]
                           for m in printed]
                for q, row in zip(s.query_ids.tolist(), zip(*columns)):
                    qid = qids[q]
                    lines.extend(f"{label}\t{qid}\t{value}" for label, value in zip(labels, row))
            lines.append(f"{'runid':<22s}\tall\t{names[name]}")
            for m in self.measures:
                lines.append(_trec_line(self._trec_label(s, m), "all", s.aggregates[m],
                                        self._counted(m)))
        return "\n".join(lines) + "\n"

    def to_json(self, indent: int | None = None) -> str:
        """Everything, as JSON (NaN and infinities as null, which JSON has no number for, as
        in compare's JSON); :meth:`from_json` reads it back."""
        from . import __version__

        data = {
            "rankwise": __version__,
            "conventions": self.conventions.to_dict(),
            "measures": self.measures,
            "aggregate_kinds": self.aggregate_kinds,
            "zscores": self.zscores,
            "systems": {
                name: {
                    "aggregates": {m: _json_number(v) for m, v in s.aggregates.items()},
                    "diagnostics": s.diagnostics,
                    "undefined": s.undefined,
                    "trec_names": s.trec_names,
                    "warnings": s.warnings,
                    "checks": s.checks,
                    "per_query": None if s.values is None else {
                        "query_ids": list(s.query_ids),
                        "values": {m: _json_numbers(s.values[m]) for m in self.measures},
                    },
                }
                for name, s in self.systems.items()
            },
        }
        return json.dumps(data, indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> "Result":
        """Rebuild a Result written by :meth:`to_json`; raise
        :class:`~rankwise.InputError` naming what is missing from a JSON text that is not
        one (a comparison's, say)."""
        data = json.loads(text)
        missing = [k for k in _RESULT_KEYS if not isinstance(data, dict) or k not in data]
        if missing:
            raise InputError("not a Result's JSON (Result.to_json writes it): no "
                             + ", ".join(repr(k) for k in missing), source="Result JSON")
        systems = {}
        for name, s in data["systems"].items():
            per_query = s["per_query"]
            systems[name] = SystemResult(
                name=name,
                aggregates={m: _from_json_number(v) for m, v in s["aggregates"].items()},
                diagnostics=s["diagnostics"],
                query_ids=None if per_query is None else np.asarray(per_query["query_ids"],
                                                                    dtype=object),
                values=None if per_query is None else {
                    m: np.array(vals, dtype=np.float64)  # null -> NaN
                    for m, vals in per_query["values"].items()},
                undefined=s["undefined"], trec_names=s["trec_names"],
                warnings=s.get("warnings", []), checks=s.get("checks", []))
        return cls(data["measures"], systems, Conventions.from_dict(data["conventions"]),
                   data["aggregate_kinds"], data.get("zscores"))

    def __repr__(self) -> str:
        return f"Result(systems={list(self.systems)}, measures={self.measures})"

    @staticmethod
    def _values(system: SystemResult) -> dict[str, np.ndarray]:
        if system.values is None:
            raise ValueError("per-query values were not kept: evaluate(..., per_query=True)")
        return system.values

    @classmethod
    def _query_ids(cls, system: SystemResult) -> list[str]:
        cls._values(system)  # refuses a result without per-query values
        return system.query_ids.tolist()

    def _fmt(self, measure: str, value: float, digits: int) -> str:
        """A value of a table: counts whole, others with ``digits`` decimals; from 1e15 on
        in scientific notation (fixed notation wrote 1e300 with 301 digits)."""
        if self._counted(measure) and math.isfinite(value) and abs(value) < SCIENTIFIC_FROM:
            return str(int(round(value)))
        return decimal_text(value, digits)

    def _counted(self, measure: str) -> bool:
        """Whether ``measure``'s values are counts, printed as integers (not as z-scores)."""
        return self.aggregate_kinds[measure] == "sum" and self.zscores is None

    def _labels(self) -> list[str]:
        """The measures' names as the outputs head their columns: ``Z(name)`` for z-scores."""
        return self.measures if self.zscores is None else [f"Z({m})" for m in self.measures]

    def _trec_label(self, system: SystemResult, measure: str) -> str:
        """trec_eval's measure column: the name padded to 22, after a ``Z`` for z-scores."""
        return ("" if self.zscores is None else "Z") + f"{system.trec_names[measure]:<22s}"

    def describe_conventions(self) -> str:
        """The conventions line, saying what the values are z-scores against."""
        text = self.conventions.describe()
        if self.zscores is not None:
            text += (f"; values are z-scores against {self.zscores['reference']} (missing: "
                     f"{self.zscores['missing']})")
        return text


def aggregate(values: np.ndarray, kind: str, skip_undefined: bool = True,
              weights: np.ndarray | None = None) -> float:
    """Mean, sum, or trec_eval's geometric mean (values floored at 1e-5), over the queries
    with a value (``skip_undefined``), else NaN as soon as one query has none; with
    ``weights`` (one per query), the weighted mean or sum (``ndcg_score``'s sample_weight)."""
    if weights is not None:
        return _weighted(values, weights, kind, skip_undefined)
    # one pass when every value is defined (the usual case); np.add.reduce is ndarray.sum
    # without its Python wrapper (1,000 small runs aggregate some 20,000 arrays). A sum
    # beyond float64 (errors near 1e308) is taken apart below, without numpy's warning.
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.add.reduce(values)
        if np.isnan(total):
            undefined = np.isnan(values)
            if undefined.any():
                if not skip_undefined:
                    return float("nan")
                values = values[~undefined]
                total = np.add.reduce(values)
    if kind == "sum":
        return float(total)
    if len(values) == 0:
        return float("nan")
    if kind == "gmean":
        return float(np.exp(np.mean(np.log(np.maximum(values, MIN_GEO_MEAN)))))
    if not np.isfinite(total) and np.isfinite(values).all():  # the sum overflowed float64
        return float(np.add.reduce(values / len(values)))  # each value over the count first
    return float(total) / len(values)  # numpy's mean (the same sum over the count), bit for bit


def _weighted(values: np.ndarray, weights: np.ndarray, kind: str,
              skip_undefined: bool) -> float:
    """:func:`aggregate` with query weights."""
    undefined = np.isnan(values)
    if undefined.any():
        if not skip_undefined:
            return float("nan")
        values, weights = values[~undefined], weights[~undefined]
    if kind == "sum":
        return float(np.sum(weights * values))
    if not weights.sum() > 0:
        return float("nan")
    if kind == "gmean":
        return float(np.exp(np.average(np.log(np.maximum(values, MIN_GEO_MEAN)),
                                       weights=weights)))
    return float(np.average(values, weights=weights))


def _precision(digits: int) -> str:
    """The sentence that says how the values of a Markdown or LaTeX table were rounded."""
    return (f"Values rounded to {digits} decimal{'' if digits == 1 else 's'}, counts whole "
            "(CSV and JSON hold every digit)")


def _tabular(text_columns: str, measures: int, head: str, rows: list[str]) -> list[str]:
    """A LaTeX ``tabular``: text columns left-aligned, one right-aligned column per measure."""
    return [r"\begin{tabular}{" + text_columns + "r" * measures + "}", r"\hline", head,
            r"\hline", *rows, r"\hline", r"\end{tabular}"]


def _printed_per_query(measure: str) -> bool:
    """trec_eval prints some measures (num_q, gm_map) in the summary only; the measures
    outside the registry (preferences: rankwise.preferences) it prints per query."""
    from .measures import parse_measure
    from .preferences import PREFERENCE_MEASURES

    return measure in PREFERENCE_MEASURES or parse_measure(measure).spec.per_query_in_trec


def _canonical(measure: str) -> str:
    from .measures import parse_measure

    return str(parse_measure(measure))


def _trec_line(name: str, qid: str, value: float, integer: bool) -> str:
    return f"{name:<22s}\t{qid}\t{_trec_value(value, integer)}"


def _trec_value(value: float, integer: bool) -> str:
    """A value as trec_eval prints it: 4 decimals, counts as integers."""
    return str(int(round(value))) if integer and not math.isnan(value) else f"{value:.4f}"


#: What trec_eval cannot read inside an id (C's isspace, and NUL, which ends a C string),
#: as a printed id escapes it; a backslash is doubled there.
_TREC_ESCAPES = {" ": "\\x20", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\v": "\\x0b",
                 "\f": "\\x0c", "\0": "\\x00"}
_TREC_UNREADABLE = re.compile("[" + "".join(_TREC_ESCAPES) + "]")
_TREC_ESCAPED = re.compile("[\\\\" + "".join(_TREC_ESCAPES) + "]")


def _trec_id(text: str) -> str:
    r"""An id in trec_eval's whitespace-separated lines: as it is where trec_eval can read it,
    else with its whitespace and NUL escaped and its backslashes doubled (see
    :meth:`Result.to_trec`).

    >>> print(_trec_id("é1"), _trec_id("a\\b"), _trec_id("a b\tc\\d é"))
    é1 a\b a\x20b\tc\\d\x20é
    """
    if not _TREC_UNREADABLE.search(text):
        return text
    return _TREC_ESCAPED.sub(lambda found: _TREC_ESCAPES.get(found.group(), "\\\\"), text)


def _trec_ids(ids: list[str], what: str) -> dict[str, str]:
    """Each of ``ids`` as :func:`_trec_id` prints it; raise :class:`~rankwise.InputError` where
    two different ids print alike (one of them escaped, the other holding backslashes)."""
    printed = {i: _trec_id(i) for i in ids}
    if len(set(printed.values())) < len(printed):
        first: dict[str, str] = {}
        for original, shown in printed.items():
            if shown in first:
                raise InputError(
                    f"{what} {first[shown]!r} and {original!r} both print as {shown!r} in "
                    "trec_eval's format (an id holding whitespace or NUL is printed escaped, "
                    "one without them as it is): use CSV or JSON (--format csv, json), which "
                    "keep every id as it is",
                    source="trec output")
            first[shown] = original
    return printed


#: What :meth:`Result.to_json` always writes.
_RESULT_KEYS = ("conventions", "measures", "aggregate_kinds", "systems")


def _json_number(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _json_numbers(values: np.ndarray) -> list[float | None]:
    """Per-query values for JSON: Python floats, NaN and infinities as None (one conversion
    for the array)."""
    out = values.tolist()
    if not np.isfinite(values).all():
        out = [v if math.isfinite(v) else None for v in out]
    return out


def _from_json_number(value: float | None) -> float:
    return float("nan") if value is None else float(value)
