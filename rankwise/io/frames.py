"""Judgments and runs from in-memory objects: pandas/polars DataFrames, Arrow tables and
dict-of-dicts ``{qid: {docid: value}}`` (the form pytrec_eval and ranx take).

Column names are configurable; defaults ``query``, ``doc``, ``score`` (runs) and
``relevance`` (judgments). Integer query ids become their decimal strings; integer doc ids
stay integers, joined as they are and shown as their decimal strings; ids are never hashed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import InputError
from .nested import nested_columns
from .parquet import is_parquet_path, rank_values, read_parquet_qrels, read_parquet_run
from .tables import (Qrels, Run, as_double, check_finite_scores, check_grades, is_integer,
                     is_missing, is_number, is_number_value, not_unicode, python_integers)
from .trec import read_qrels, read_run


#: A run frame's optional column of ranks, read as a TREC file's rank field and a Parquet
#: run's ``rank`` column are: only to report queries whose ranks contradict their scores.
RANK_COLUMN = "rank"


def to_qrels(obj: Any, query: str = "query", doc: str = "doc",
             relevance: str = "relevance") -> Qrels:
    """Judgments from a path (TREC text, or Parquet: see :mod:`.parquet`), a DataFrame/Arrow
    table, a dict-of-dicts or a :class:`Qrels`."""
    query, doc, relevance = column_names(query=query, doc=doc, relevance=relevance)
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        if is_parquet_path(obj):
            return read_parquet_qrels(obj, query, doc, relevance)
        return read_qrels(obj)
    if isinstance(obj, Mapping):
        columns = nested_columns(obj)
        if columns is not None:  # plain str ids and numbers: no per-value Python loop
            qrels = check_grades(Qrels(*columns[:3], "qrels dict", None, "key", columns[3]))
            empty = _empty_queries(obj)
        else:
            q, d, v, empty = _from_nested(obj, "qrels dict")
            qrels = Qrels.from_columns(q, d, v, source="qrels dict", row_unit="key")
        return replace(qrels, empty_queries=tuple(empty)) if empty else qrels
    columns = _columns(obj, (query, doc, relevance), "qrels")
    if columns is None:
        raise InputError("expected a qrels file path, a DataFrame, an Arrow table or a "
                         "{query: {doc: grade}} dict", source="qrels", value=type(obj).__name__)
    return Qrels.from_columns(*columns, source=f"qrels {type(obj).__name__}")


def to_run(obj: Any, name: str | None = None, query: str = "query", doc: str = "doc",
           score: str = "score") -> Run:
    """A run from a path (TREC text, or Parquet: see :mod:`.parquet`), a DataFrame/Arrow
    table (with an optional ``rank`` column, see RANK_COLUMN), a dict-of-dicts or a
    :class:`Run`. A ``name`` that is not a string is named by its string, as the names of
    ``{name: run}`` are (an integer name made the result's tables fail)."""
    name = None if name is None else str(name)
    query, doc, score = column_names(query=query, doc=doc, score=score)
    if isinstance(obj, Run):
        return obj if name is None or name == obj.name else _renamed(obj, name)
    if isinstance(obj, (str, os.PathLike)):
        if is_parquet_path(obj):
            return read_parquet_run(obj, name, query, doc, score)
        return read_run(obj, name=name)
    if isinstance(obj, Mapping):
        columns = nested_columns(obj)
        if columns is not None:  # plain str ids and numbers: no per-value Python loop
            run = Run(*columns[:3], "run dict", None, "key", columns[3], name or "run")
            check_finite_scores(run)
            empty = _empty_queries(obj)
        else:
            q, d, v, empty = _from_nested(obj, "run dict")
            run = Run.from_columns(q, d, v, name=name or "run", source="run dict",
                                   row_unit="key")
        return replace(run, empty_queries=tuple(empty)) if empty else run
    names = (query, doc, score)
    columns = _columns(obj, names, "run", () if RANK_COLUMN in names else (RANK_COLUMN,))
    if columns is None:
        raise InputError("expected a run file path, a DataFrame, an Arrow table or a "
                         "{query: {doc: score}} dict", source="run", value=type(obj).__name__)
    run = Run.from_columns(*columns[:3], name=name or "run", source=f"run {type(obj).__name__}")
    ranks = rank_values(columns[3]) if len(columns) > 3 else None
    return run if ranks is None else replace(run, rank=ranks)


def column_names(**names: Any) -> tuple[str, ...]:
    """The column names given as ``query=``, ``doc=``, ... as strings (a pandas label that
    is not one, as ``read_csv(header=None)``'s 0 or a MultiIndex's tuple, by its string);
    anything else raises :class:`InputError` naming the argument (an array or a frame given
    as a name escaped as pandas' "truth value ... is ambiguous")."""
    for argument, name in names.items():
        if isinstance(name, (bool, np.bool_)) or not isinstance(name, (str, int, np.integer,
                                                                        tuple)):
            raise InputError(f"{argument}= must be a column name (a string)", source="columns",
                             value=f"{type(name).__name__} {name!r}"[:80])
    return tuple(map(str, names.values()))


def is_nested_run(obj: Any) -> bool:
    """True for ``{qid: {docid: score}}`` (one run), False for ``{name: run}`` (several)."""
    for value in obj.values():
        if not isinstance(value, Mapping):
            return False
        for inner in value.values():
            return not isinstance(inner, Mapping)
    return True


def _renamed(run: Run, name: str) -> Run:
    from dataclasses import replace

    return replace(run, name=name)


def _empty_queries(obj: Mapping) -> list[str]:
    return [str(qid) for qid, inner in obj.items() if not inner]


def _from_nested(obj: Mapping, source: str
                 ) -> tuple[list[str], list[str], list[Any], list[str]]:
    """Flat query, doc and value columns, and the queries given with no document. Ids are
    strings or integers (as their decimal strings), values numbers; a None value is a missing
    one, refused as NaN is."""
    queries: list[str] = []
    docs: list[str] = []
    values: list[Any] = []
    _distinct_ids(obj, "query", source, "")
    for qid, inner in obj.items():
        if not isinstance(inner, Mapping):
            raise InputError("expected {query: {doc: value}}; this query maps to a "
                             f"{type(inner).__name__}", source=source, line=qid, unit="key",
                             value=repr(inner)[:80])
        _check_key(qid, "query", source, repr(qid))
        if not ID_TYPES.issuperset(map(type, inner)) or "" in inner:
            for doc in inner:
                _check_key(doc, "doc", source, f"{str(qid)!r}/{doc!r}")
        _distinct_ids(inner, "doc", source, f"{str(qid)!r}/")
        queries.extend([str(qid)] * len(inner))
        docs.extend(map(str, inner.keys()))
        values.extend(inner.values())
    empty = _empty_queries(obj)
    if PLAIN_VALUES.issuperset(map(type, values)):  # no value to look at: one C-level pass
        return queries, docs, values, empty
    for i, v in enumerate(values):
        if type(v) not in PLAIN_VALUES and not is_number_value(v):
            if not is_missing(v):
                raise InputError("expected a number", source=source,
                                 line=f"{queries[i]!r}/{docs[i]!r}", unit="key", value=repr(v))
            values[i] = None  # pandas' NA or NaT: missing, as None is
    return queries, docs, values, empty


#: The types of dict values read as numbers (None: missing) without a closer look.
PLAIN_VALUES = frozenset({int, float, type(None)})


#: The types of dict keys read as ids without a closer look.
ID_TYPES = frozenset({str, int})


def _distinct_ids(keys: Mapping, what: str, source: str, prefix: str) -> None:
    """Raise where two keys of a dict are one id: the integer 1 and the string "1" (ids are
    read as strings), which would merge two queries, or two documents, into one."""
    if len(set(map(type, keys))) < 2 or len(set(map(str, keys))) == len(keys):
        return
    first: dict[str, Any] = {}
    for key in keys:
        if str(key) in first:  # a string and an integer (equal integers are one dict key)
            texts = [f"the string {k!r}" if isinstance(k, str) else f"the integer {k}"
                     for k in (first[str(key)], key)]
            raise InputError(f"two {what} ids read as one: {texts[0]} and {texts[1]} (ids are "
                             "read as strings); give each a distinct id", source=source,
                             line=f"{prefix}{key!r}" if isinstance(key, str) else
                             f"{prefix}{key}", unit="key")
        first[str(key)] = key


def _check_key(key: Any, what: str, source: str, location: str) -> None:
    """Raise unless a dict key is an id: a non-empty string or an integer (a boolean is not
    one, and None or NaN is a missing id), as a frame's id column must hold."""
    if isinstance(key, str) and not key:
        raise InputError(f"empty {what} id: an id must hold at least one character, as in a "
                         "TREC file", source=source, line=location, unit="key")
    if isinstance(key, (str, int, np.integer)) and not isinstance(key, (bool, np.bool_)):
        return
    if key is None or key != key:
        raise InputError(f"missing {what} id", source=source, line=location, unit="key")
    raise InputError(f"{what} ids must be strings or integers", source=source, line=location,
                     unit="key", value=type(key).__name__)


def _columns(obj: Any, names: tuple[str, str, str], what: str, optional: tuple[str, ...] = ()):
    """Three columns of a pandas/polars DataFrame or Arrow table, as Arrow arrays, then those
    of ``optional`` it has; None if the object is none of these."""
    source = f"{what} {type(obj).__name__}"
    available, column = table_columns(obj, source)
    if column is None:
        return None
    names, optional = tuple(map(str, names)), tuple(map(str, optional))  # pandas' 0, 1, ...
    missing = [c for c in names if c not in available]
    if missing:
        raise InputError(f"{what} frame has no column {missing[0]!r} (columns: "
                         f"{', '.join(available)}); {_index_hint(obj, missing[0])}"
                         f"{COLUMN_HINTS[what]}", source=source)
    return tuple(column(c) for c in (*names, *(c for c in optional if c in available)))


#: How to name a frame's columns: a run's with ``query=``, ``doc=``, ``score=`` (of
#: ``to_run`` and ``evaluate``), judgments' with ``to_qrels`` only (``evaluate``'s names are
#: the runs').
COLUMN_HINTS = {"run": "name the columns with query=, doc= and score=",
                "qrels": "name the columns with rankwise.to_qrels(qrels, query=..., doc=..., "
                         "relevance=...)"}


def _index_hint(obj: Any, name: str) -> str:
    """A hint where ``name`` is a level of a pandas frame's index, which is not read (as
    ``set_index`` and ``groupby`` make them)."""
    levels = getattr(getattr(obj, "index", None), "names", None) or ()
    if name not in [str(level) for level in levels if level is not None]:
        return ""
    return (f"{name!r} is the frame's index, which is not read: reset_index() makes it a "
            "column; ")


def table_columns(obj: Any, source: str
                  ) -> tuple[list[str] | None, Callable[[str], Any] | None]:
    """The column names of a pandas/polars DataFrame (a polars LazyFrame collected), an
    Arrow table or record batch (a pandas label that is not a string, as
    ``read_csv(header=None)`` makes, by its string), and a function giving one column as
    Arrow (an Arrow table's as the chunked array it holds); (None, None) for anything else.
    A column Arrow cannot type (strings mixed with numbers, objects) or a name that more
    than one column has raises :class:`InputError` naming it and ``source``."""
    import sys

    if "pandas" in sys.modules and isinstance(obj, sys.modules["pandas"].DataFrame):
        labels = {str(c): c for c in obj.columns}  # a name two columns have is refused below
        names, get = [str(c) for c in obj.columns], \
            lambda c: _pandas_column(obj[labels[c]], c, source)
    elif "polars" in sys.modules and isinstance(obj, sys.modules["polars"].DataFrame):
        names, get = list(obj.columns), lambda c: _polars_column(obj[c], c, source)
    elif "polars" in sys.modules and isinstance(obj, sys.modules["polars"].LazyFrame):
        return table_columns(_collected(obj, source), source)
    elif "pyarrow" in sys.modules and isinstance(obj, (sys.modules["pyarrow"].Table,
                                                       sys.modules["pyarrow"].RecordBatch)):
        names, get = obj.schema.names, obj.column
    else:
        return None, None

    def column(name: str):
        import pyarrow as pa

        if names.count(name) > 1:
            raise InputError(f"{names.count(name)} columns are named {name!r}: the column to "
                             "read must be the only one of its name", source=source)
        try:
            return get(name)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise InputError(f"column {name!r} must hold one kind of value (all strings or "
                             f"all numbers): {exc}", source=source) from None
        except pa.ArrowException as exc:  # a type Arrow has no conversion for (complex)
            raise InputError(f"column {name!r} is of a type rankwise cannot read: {exc}",
                             source=source) from None

    return names, column


def _collected(frame: Any, source: str):
    """A polars LazyFrame collected, once (a plan may not give its rows again alike); a plan
    that fails (a file it scans is missing, a cast fails) raises :class:`InputError` saying
    why."""
    import polars as pl

    try:
        return frame.collect()
    except (pl.exceptions.PolarsError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"the LazyFrame's plan failed: {first}", source=source) from None


def _pandas_column(series: Any, name: str, source: str):
    """A pandas column as Arrow. An object column Arrow cannot convert is read as a dict's
    keys and values are: Python integers beyond int64 as uint64 where they all fit one (as a
    numpy uint64 column reads), else as a decimal column of scale 0 (ids: their decimal
    strings; values: numbers, see :func:`~.tables.python_integers`); integers and floats
    together (``[2**63, 1.5]``) as float64, as pandas itself makes such a list. Raises
    InputError naming the row where an object column goes from strings to numbers or back,
    or holds an integer of more than 76 digits."""
    import pyarrow as pa

    try:
        return pa.Array.from_pandas(series)
    except UnicodeEncodeError:
        raise not_unicode(series.tolist(), source, f"column {name!r}: a value") from None
    except (OverflowError, pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        values = series.tolist()
        missing = series.isna().tolist()
        strings = [(i, isinstance(v, str)) for i, (v, gone) in enumerate(zip(values, missing))
                   if not gone]
        row = next((i for i, string in strings if string != strings[0][1]), None)
        if row is not None:
            raise InputError(f"column {name!r} must hold one kind of value (all strings or "
                             f"all numbers): {exc}", source=source, line=row, unit="row",
                             value=repr(values[row])) from None
        present = [v for v, gone in zip(values, missing) if not gone]
        if not all(map(is_number, present)):
            raise
        values = [None if gone else v for v, gone in zip(values, missing)]
        if not all(map(is_integer, present)):
            return pa.array([None if v is None else as_double(v) for v in values], pa.float64())
        values = [None if v is None else int(v) for v in values]
        if all(0 <= v < 1 << 64 for v in present):
            return pa.array(values, pa.uint64())
        return python_integers(values, source, f"column {name!r}")


#: polars' integer types wider than Arrow's (polars' Arrow export fails on them).
WIDE_POLARS_INTEGERS = ("Int128", "UInt128")


def _polars_column(series: Any, name: str, source: str):
    """A polars column as Arrow; an Object column (Python objects) is refused: Arrow would
    hold the objects' addresses. An Int128 or UInt128 column, which Arrow has no type for, is
    read as a decimal column of scale 0 (ids: their decimal strings; values: numbers), as
    an object column of Python integers is."""
    if str(series.dtype) == "Object":
        raise InputError(f"column {name!r} is of a type rankwise cannot read: a polars Object "
                         "column holds Python objects; give ids as strings or integers",
                         source=source)
    if str(series.dtype) in WIDE_POLARS_INTEGERS:
        import polars as pl

        try:  # up to 38 digits: on the buffers
            return series.cast(pl.Decimal(38, 0)).to_arrow()
        except pl.exceptions.PolarsError:
            return python_integers(series.to_list(), source, f"column {name!r}")
    return series.to_arrow()
