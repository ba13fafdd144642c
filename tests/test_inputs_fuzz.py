"""Differential fuzz test of the input forms: the same judgments and run give the same Result
whatever their form, and the same broken data is refused by every form alike.

Seeded random small collections (a few queries, ties, unjudged documents, negative grades,
queries on one side only, identical duplicate judgments, documents twice in a run under a
convention that keeps one, rank columns that contradict the scores; odd ids: Unicode (blanks
other than space and tab, control characters and NEL included), long, numeric-looking strings
such as "007", integer doc ids small, huge and negative as int32, int64 and uint64, on both
sides or one; integer ids beyond 64 bits; integer query ids; float64, float32 and integer
scores, grades as integers or floats) are written as TREC text, the reference, and as every
other form: Parquet (one file, several row groups, plain and dictionary-encoded strings,
large_string, a folder of several files, a folder whose files hold a column as different types:
integer and float scores or grades, float32 and float64, int32, int64 and uint64 ids, string
and large_string ids), Arrow tables (one or several chunks, an empty one among them;
dictionary-encoded ids, large_string and string_view columns; ids beyond 64 bits as
decimal128(38, 0)), pandas DataFrames (object, str, string[pyarrow], categorical and nullable
columns; ids beyond 64 bits as Python integers or Decimals), polars DataFrames (string and
categorical columns; ids beyond 64 bits as Int128 and Decimal) and dict-of-dicts (ids beyond 64
bits as integer keys). Each form is evaluated with ``rankwise.evaluate`` as judgments and run,
now and then beside another form or TREC text, and a Parquet run also with ``evaluate_stream``
(one row a batch, a few, or the whole file), under trec_eval's conventions or others (ties in
input order, which checks that every form keeps the rows' order; a duplicate kept). Each must
give the reference's ``Result.to_json()`` byte for byte. Integer doc ids need no exception:
they are keyed as integers but give the numbers and output of their decimal strings, ties
broken on those strings (README.md, "Python"). A dict holds no rank column: its reference is
the TREC text with no integer in the rank field, which is then not read; a dict cannot hold a
pair given twice, and is left out then.

The second part breaks one thing at a time (a missing id; an empty id, which a TREC file cannot
hold; a null, NaN or infinite score or grade; a missing column; float, boolean or nested id
columns; boolean, nested or string value columns; a row of another kind in a column; an empty
table; a document twice in a run or judged twice with different grades; a Parquet folder whose
files disagree) and gives the broken data in every form that can hold it, the other side as
TREC text: each must raise an InputError whose reason matches the break's pattern, naming its
own source (the file, the folder's file that disagrees, ``run DataFrame``, ``qrels dict``...)
and the broken row (frames, Parquet: 0-based), line (TREC text) or key (dicts), and no other
exception.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rankwise
from rankwise.errors import InputError
from rankwise.stream import evaluate_stream

pl = pytest.importorskip("polars")
pytestmark = pytest.mark.slow

SEED = 20240611
COLLECTIONS = 24
BROKEN_COLLECTIONS = 12
MEASURES = ["P@3", "AP", "nDCG@5", "RR", "Rprec", "Bpref", "ERR@5", "Judged@3", "NumRelRet"]
#: Conventions a collection is evaluated under: trec_eval's; ties in input order (every form
#: must keep the rows' order) with judged queries the run lacks scored 0; a threshold of 2
#: with the first of a document's rows kept (one given twice: the row order again).
CONVENTIONS = [{}, {"ties": "input_order", "missing_queries": "zero"},
               {"relevance_threshold": 2, "duplicates": "first"}]

STRING_IDS = ["d1", "007", "7", "-3", "1e3", "0x1F", "nan", "None", "True", "é", "日本語",
              "Ω≈ç", "\U0001f600", "a\u200bb", "ש", "x" * 300, "D" * 9, "12345678", "0", "00",
              "-0", "+1", "1.0", "q1", "a\u00a0b", "\u3000x", "x\x1fy", "y\x85"]
QUERY_STRINGS = ["q1", "007", "7", "-1", "é", "日本", "y" * 200, "1e5", "0", "Q"]
INT_IDS = {"int64": [0, 1, 7, 9, 10, 11, 98, 105, -1, -7, -(1 << 63), (1 << 63) - 1, 1 << 40,
                     (1 << 62) + 3],
           "int32": [0, 3, 7, 9, 10, 100, -5, -(1 << 31), (1 << 31) - 1],
           "uint64": [0, 2, 9, 10, (1 << 64) - 1, 1 << 63, (1 << 63) + 5],
           "bigint": [0, 5, 10, -3, 1 << 64, (1 << 70) + 1, -(1 << 65), 10 ** 30, -(10 ** 37),
                      (1 << 63) + 5]}
#: Scores to draw from (few values: many ties), per score type.
SCORES = {"float64": [[0.0, 1.0, 2.0, 3.0], [-2.5, 0.5, 0.5000001, 7.25], [-0.0, 0.0, 1.0],
                      [1e300, -1e300, 5e-324, 1.0]],
          "float32": [[0.0, 1.0, 2.0, 3.0], [-2.5, 0.5, 0.5000001, 7.25], [3e38, -1e-40, 1.0]],
          "int64": [[0, 1, 2], [-(1 << 53), 5, 1 << 53]]}
GRADES = [[-1, 0, 1, 2, 3], [0, 1], [-5, 0, 7, 100]]


# ------------------------------------------------------------------ random collections

@dataclass
class Collection:
    """Judgments (query, doc, grade) and a run (query, doc, rank, score), the ids as their
    typed values, and the types each form stores them as."""

    qrels: list[tuple[Any, Any, int]]
    run: list[tuple[Any, Any, int, float]]
    query_type: str  # "string", "int64", "uint64" or "bigint" (beyond 64 bits)
    doc_types: dict[str, str]  # per side: "string", "int64", "int32", "uint64" or "bigint"
    score_type: str  # "float64", "float32" or "int64"
    grade_type: str  # "int64", "int8", "float64" or "float32"
    conventions: dict = field(default_factory=dict)

    def holds_twice(self, side: str) -> bool:
        """Whether a (query, doc) pair is given twice (a dict cannot hold that side)."""
        rows = self.qrels if side == "qrels" else self.run
        return len({row[:2] for row in rows}) < len(rows)


def draw_collection(rng: random.Random) -> Collection:
    """A small random collection with ties, unjudged documents, negative grades, queries on
    one side only, odd ids, identical duplicate judgments and (where the conventions keep one)
    documents twice in the run; see the module's docstring."""
    query_type = rng.choice(["string", "string", "int64", "uint64", "bigint"])
    doc_type = rng.choice(["string", "string", "int64", "int32", "uint64", "bigint"])
    doc_types = {"qrels": doc_type, "run": doc_type}
    if doc_type != "string" and rng.random() < 0.5:  # integers on one side only
        doc_types[rng.choice(["qrels", "run"])] = "string"
    pool = INT_IDS[doc_type] + list(range(12, 40)) if doc_type != "string" else STRING_IDS

    def doc(side: str, d: Any) -> Any:
        return str(d) if doc_types[side] == "string" else d

    queries = rng.sample(QUERY_STRINGS if query_type == "string" else INT_IDS[query_type],
                         rng.randint(1, 5))
    score_type = rng.choice(["float64", "float64", "float32", "int64"])
    scores = rng.choice(SCORES[score_type])
    as_score = {"float64": float, "float32": lambda v: float(np.float32(v)), "int64": int}
    grades = rng.choice(GRADES)
    grade_type = rng.choice(["int64", "int8", "float64", "float32"])
    conventions = rng.choice(CONVENTIONS)
    qrels, run = [], []
    for i, query in enumerate(queries):
        docs = rng.sample(pool, rng.randint(1, min(8, len(pool))))
        side = "both" if i == 0 else rng.choice(["both", "both", "qrels", "run"])
        if side != "run":
            judged = [(query, doc("qrels", d), rng.choice(grades)) for d in docs
                      if rng.random() < 0.6] or [(query, doc("qrels", docs[0]), 1)]
            if rng.random() < 0.2:  # an identical duplicate judgment (dropped, counted)
                judged.insert(rng.randint(0, len(judged)), rng.choice(judged))
            qrels += judged
        if side != "qrels":
            scored = [(doc("run", d), as_score[score_type](rng.choice(scores))) for d in docs
                      if rng.random() < 0.8] or [(doc("run", docs[-1]), 1)]
            if conventions.get("duplicates", "error") != "error" and rng.random() < 0.3:
                again = (rng.choice(scored)[0], as_score[score_type](rng.choice(scores)))
                scored.insert(rng.randint(0, len(scored)), again)
            if rng.random() < 0.7:  # in score order, else as drawn (ranks then contradict)
                scored.sort(key=lambda row: -row[1])
            run += [(query, d, rank, s) for rank, (d, s) in enumerate(scored, 1)]
    return Collection(qrels, run, query_type, doc_types, score_type, grade_type, conventions)


# ------------------------------------------------------------------ the forms

def trec_text(c: Collection, side: str, folder: Path, ranked: bool = True,
              name: str = "") -> str:
    """The side as a TREC file (the reference); ``ranked=False`` writes no integer in the
    rank field, which is then not read (the reference of a form without a rank column)."""
    path = folder / f"{name}{side}{'' if ranked else '-unranked'}.txt"
    if side == "qrels":
        path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in c.qrels), encoding="utf-8")
    else:
        path.write_text("".join(f"{q} Q0 {d} {r if ranked else '-'} {s!r} sys\n"
                                for q, d, r, s in c.run), encoding="utf-8")
    return str(path)


def columns(c: Collection, side: str) -> dict[str, list]:
    """The side's columns as Python lists (ids as their typed values)."""
    if side == "qrels":
        query, doc, grade = zip(*c.qrels)
        return {"query": list(query), "doc": list(doc), "relevance": list(grade)}
    query, doc, rank, score = zip(*c.run)
    return {"query": list(query), "doc": list(doc), "rank": list(rank), "score": list(score)}


#: The Arrow type of integer ids beyond 64 bits.
BIGINT = pa.decimal128(38, 0)


def arrow_table(c: Collection, side: str) -> pa.Table:
    """The side as an Arrow table of the collection's types (ids beyond 64 bits as
    decimal128(38, 0))."""
    types = {"query": {"string": pa.string(), "int64": pa.int64(),
                       "uint64": pa.uint64(), "bigint": BIGINT}[c.query_type],
             "doc": {"string": pa.string(), "int64": pa.int64(), "int32": pa.int32(),
                     "uint64": pa.uint64(), "bigint": BIGINT}[c.doc_types[side]],
             "relevance": {"int64": pa.int64(), "int8": pa.int8(), "float64": pa.float64(),
                           "float32": pa.float32()}[c.grade_type],
             "rank": pa.int32(),
             "score": {"float64": pa.float64(), "float32": pa.float32(),
                       "int64": pa.int64()}[c.score_type]}
    return pa.table({name: pa.array(values, types[name])
                     for name, values in columns(c, side).items()})


def strings_as(table: pa.Table, kind: Callable[[pa.ChunkedArray], Any]) -> pa.Table:
    """The table with every string column replaced by ``kind(column)``."""
    for i, name in enumerate(table.column_names):
        if pa.types.is_string(table.column(i).type):
            table = table.set_column(i, name, kind(table.column(i)))
    return table


def dictionary_ids(table: pa.Table) -> pa.Table:
    """The table with its id columns of strings or integers dictionary-encoded."""
    for i, name in enumerate(table.column_names):
        kind = table.column(i).type
        if name in ("query", "doc") and (pa.types.is_string(kind) or pa.types.is_integer(kind)):
            table = table.set_column(i, name, table.column(i).dictionary_encode())
    return table


def chunked(table: pa.Table, rng: random.Random) -> pa.Table:
    """The table cut into several chunks at random rows, an empty one among them."""
    cuts = sorted({0, table.num_rows, *(rng.randint(0, table.num_rows) for _ in range(3))})
    batches = [b for a, z in zip(cuts, cuts[1:]) for b in table.slice(a, z - a).to_batches()]
    batches.insert(rng.randint(0, len(batches)),
                   pa.RecordBatch.from_pylist([], schema=table.schema))
    return pa.Table.from_batches(batches, table.schema)


def parquet_file(table: pa.Table, folder: Path, name: str, **options) -> str:
    """The table as one Parquet file, written with pyarrow's ``options``."""
    path = folder / f"{name}.parquet"
    pq.write_table(table, path, **options)
    return str(path)


def parquet_folder(table: pa.Table, folder: Path, name: str, rng: random.Random) -> str:
    """The table as a folder of Parquet files cut at random rows (not at query bounds)."""
    path = folder / name
    path.mkdir()
    cuts = sorted({0, table.num_rows, *(rng.randint(0, table.num_rows) for _ in range(2))})
    for i, (a, z) in enumerate(zip(cuts, cuts[1:] or [0])):  # an empty table: one file
        pq.write_table(table.slice(a, z - a), path / f"part-{i:02d}.parquet")
    return str(path)


#: Types a folder's file may hold a column as, by the kind of the column's type: each file
#: holds it as one of them that holds its values exactly (see :func:`mixed_folder`).
OTHER_TYPES = {"integer": [pa.int64(), pa.int32(), pa.uint64(), pa.float64(), pa.float32()],
               "floating": [pa.float64(), pa.float32(), pa.int64(), pa.int32()],
               "string": [pa.string(), pa.large_string()]}


def holds(values: pa.ChunkedArray, kind: pa.DataType) -> bool:
    """Whether Arrow type ``kind`` holds ``values`` exactly (NaN as NaN)."""
    try:
        back = values.cast(kind).cast(values.type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False
    same = [a == b or a != a and b != b for a, b in zip(values.to_pylist(), back.to_pylist())]
    return all(same)


def mixed_folder(table: pa.Table, folder: Path, name: str, rng: random.Random) -> str:
    """The table as a folder of Parquet files cut at random rows, each file holding each
    column as a type drawn among those that hold its values (an integer score column as
    float32 in one file, int64 in another; int64 doc ids as uint64 here, int32 there...; a
    rank column as integers but uint64, with which it would be read as floats, not read)."""
    path = folder / name
    path.mkdir()
    cuts = sorted({0, table.num_rows, *(rng.randint(0, table.num_rows) for _ in range(3))})
    for i, (a, z) in enumerate(zip(cuts, cuts[1:] or [0])):
        part = table.slice(a, z - a)
        for column in part.column_names:
            values = part.column(column)
            kind = next((k for k, test in (("integer", pa.types.is_integer),
                                           ("floating", pa.types.is_floating),
                                           ("string", pa.types.is_string))
                         if test(values.type)), None)
            if kind is None or not len(values):
                continue
            integers = column in ("query", "doc", "rank")  # float ids are no ids, nor ranks
            if integers and kind == "floating":
                continue
            choices = [t for t in OTHER_TYPES[kind] if holds(values, t) and not (
                integers and pa.types.is_floating(t) or column == "rank" and t == pa.uint64())]
            part = with_column(part, column, values.cast(rng.choice(choices)))
        pq.write_table(part, path / f"part-{i:02d}.parquet")
    return str(path)


#: pandas' nullable dtypes of Arrow types (``kind="nullable"`` in :func:`pandas_frame`).
NULLABLE = {pa.string(): pd.StringDtype(), pa.int64(): pd.Int64Dtype(),
            pa.int32(): pd.Int32Dtype(), pa.int8(): pd.Int8Dtype(), pa.uint64(): pd.UInt64Dtype(),
            pa.float64(): pd.Float64Dtype(), pa.float32(): pd.Float32Dtype(),
            pa.bool_(): pd.BooleanDtype()}


def pandas_frame(table: pa.Table, kind: str) -> pd.DataFrame:
    """The table as pandas: string columns of dtype ``kind`` ("str", pandas' default;
    "string[pyarrow]"; "category"), or with ``kind="object"`` the id columns as Python objects
    (integers beyond int64 included, those beyond 64 bits too: a decimal column's as Python
    integers), or with ``kind="nullable"`` pandas' nullable dtypes; other columns as pandas
    makes them of Arrow (a decimal column: Decimal objects)."""
    frame = {}
    for name in table.column_names:
        column = table.column(name)
        if kind == "nullable":
            frame[name] = column.to_pandas(types_mapper=NULLABLE.get)
        elif kind == "object" and name in ("query", "doc"):
            integers = pa.types.is_decimal(column.type)
            frame[name] = pd.Series([int(v) if integers and v is not None else v
                                     for v in column.to_pylist()], dtype=object)
        elif pa.types.is_string(column.type):
            frame[name] = pd.Series(column.to_pylist(), dtype=kind)
        else:
            frame[name] = column.to_pandas()
    return pd.DataFrame(frame)


def polars_frame(table: pa.Table, categorical: bool) -> Any:
    """The table as polars, string columns categorical when asked; else decimal columns (ids
    beyond 64 bits) as Int128."""
    frame = pl.from_arrow(table)
    if categorical:
        return frame.with_columns(pl.col(pl.String).cast(pl.Categorical))
    if not hasattr(pl, "Int128"):  # (polars 1.0 has none: decimal columns as they are)
        return frame
    return frame.with_columns(pl.col(pl.Decimal).cast(pl.Int128))


def nested(c: Collection, side: str) -> dict:
    """The side as ``{query: {doc: value}}`` (grades as ints or floats, float32 scores as
    numpy's float32)."""
    out: dict = {}
    if side == "qrels":
        grade = int if c.grade_type.startswith("int") else float
        for q, d, g in c.qrels:
            out.setdefault(q, {})[d] = grade(g)
    else:
        score = {"float64": float, "float32": np.float32, "int64": int}[c.score_type]
        for q, d, _, s in c.run:
            out.setdefault(q, {})[d] = score(s)
    return out


def table_forms(table: pa.Table, folder: Path, rng: random.Random) -> dict[str, Any]:
    """The table in every form made of an Arrow table: name -> what ``rankwise.evaluate``
    takes (a Parquet form is its path)."""
    folder.mkdir()
    return {
        "parquet": parquet_file(table, folder, "one"),
        "parquet-row-groups": parquet_file(table, folder, "groups", row_group_size=2),
        "parquet-plain-strings": parquet_file(table, folder, "plain", use_dictionary=False),
        "parquet-large-string": parquet_file(strings_as(table, lambda s: s.cast(
            pa.large_string())), folder, "large"),
        "parquet-folder": parquet_folder(table, folder, "parts", rng),
        "parquet-folder-mixed-types": mixed_folder(table, folder, "mixed", rng),
        "arrow": table,
        "arrow-chunks": chunked(table, rng),
        "arrow-dictionary": chunked(dictionary_ids(table), rng),
        "arrow-large-string": strings_as(table, lambda s: s.cast(pa.large_string())),
        **({"arrow-string-view": strings_as(table, lambda s: s.cast(pa.string_view()))}
           if hasattr(pa, "string_view") else {}),  # (pyarrow 16 on)
        "pandas-object": pandas_frame(table, "object"),
        "pandas-str": pandas_frame(table, "str"),
        "pandas-string-pyarrow": pandas_frame(table, "string[pyarrow]"),
        "pandas-category": pandas_frame(table, "category"),
        "pandas-nullable": pandas_frame(table, "nullable"),
        "polars": polars_frame(table, False),
        "polars-categorical": polars_frame(table, True),
        "polars-lazy": polars_frame(table, False).lazy(),
        "arrow-record-batch": record_batch(table),
    }


def record_batch(table: pa.Table) -> pa.RecordBatch:
    """The table as one Arrow RecordBatch (an empty one: of no rows)."""
    batches = table.combine_chunks().to_batches()
    return batches[0] if batches else pa.RecordBatch.from_pylist([], schema=table.schema)


def forms(c: Collection, side: str, folder: Path, rng: random.Random) -> dict[str, Any]:
    """The side in every form but TREC text: name -> what ``rankwise.evaluate`` takes."""
    out = table_forms(arrow_table(c, side), folder / side, rng)
    if not c.holds_twice(side):  # no rank column: compared with a reference without one
        out["dict"] = nested(c, side)
    return out


# ------------------------------------------------------------------ part 1: the same numbers

def outcome(evaluate: Callable[[], Any]) -> str:
    """The Result's JSON, or the InputError's reason (any other exception propagates)."""
    try:
        return evaluate().to_json()
    except InputError as error:
        return f"InputError: {error.reason}"


def differences(c: Collection, folder: Path, rng: random.Random, counts: Counter
                ) -> list[tuple[str, str]]:
    """Every form of ``c`` evaluated against the TREC text's Result (``counts`` counts the
    outcomes): the forms whose outcome differs, and where. Each form is evaluated as
    judgments and run, now and then beside judgments of another form or a TREC run; a
    Parquet run also streamed (one row a batch, five, or the whole file)."""
    qrels_text = trec_text(c, "qrels", folder)
    run_text = {ranked: trec_text(c, "run", folder, ranked) for ranked in (True, False)}

    def evaluate(qrels: Any, run: Any, chunk_bytes: int | None = None) -> str:
        if chunk_bytes is None:
            return outcome(lambda: rankwise.evaluate(qrels, {"sys": run}, MEASURES,
                                                     per_query=True, **c.conventions))
        return outcome(lambda: evaluate_stream(qrels, {"sys": run}, MEASURES, per_query=True,
                                               chunk_bytes=chunk_bytes, **c.conventions))

    expected = {ranked: evaluate(qrels_text, run_text[ranked]) for ranked in (True, False)}
    counts["refused" if expected[True].startswith("InputError") else "evaluated"] += 1
    found = []
    qrels_forms, run_forms = forms(c, "qrels", folder, rng), forms(c, "run", folder, rng)
    qrels_forms["trec"] = qrels_text
    for name, run in run_forms.items():
        ranked = name != "dict"  # the reference with a rank column or without
        tried = {"both": (qrels_forms.get(name, qrels_text), run)}
        if rng.random() < 0.3:
            other = rng.choice(sorted(qrels_forms))
            tried[f"judgments {other}"] = (qrels_forms[other], run)
        if rng.random() < 0.3:
            tried["run trec"] = (tried["both"][0], run_text[ranked])
        if name.startswith("parquet"):
            chunk_bytes = rng.choice([40, 200, 1 << 20])
            tried[f"streamed, chunk_bytes={chunk_bytes}"] = (*tried["both"], chunk_bytes)
            counts["streamed"] += 1
        for what, args in tried.items():
            got = evaluate(*args)
            counts["compared"] += 1
            if got != expected[ranked]:
                found.append((f"{name} ({what})", first_difference(expected[ranked], got)))
        counts["forms"] += 1
    return found


def features(c: Collection) -> dict[str, bool]:
    """What the fuzz test means to cover, and whether the collection holds it."""
    judged = {(q, str(d)) for q, d, _ in c.qrels}
    ranked, judged_queries = {q for q, *_ in c.run}, {q for q, *_ in c.qrels}
    return {
        "integer doc ids": "string" not in c.doc_types.values(),
        "integer doc ids on one side": len(set(c.doc_types.values())) == 2,
        "integer query ids": c.query_type != "string",
        "ids beyond 64 bits": "bigint" in (c.query_type, *c.doc_types.values()),
        "float32 scores": c.score_type == "float32",
        "integer scores": c.score_type == "int64",
        "float grades": c.grade_type.startswith("float"),
        "negative grades": any(g < 0 for *_, g in c.qrels),
        "unjudged documents": any((q, str(d)) not in judged for q, d, *_ in c.run),
        "ties": len({(q, s) for q, *_, s in c.run}) < len(c.run),
        "queries only judged": bool(judged_queries - ranked),
        "queries only ranked": bool(ranked - judged_queries),
        "ranks contradicting scores": any(a[0] == b[0] and b[3] > a[3]
                                          for a, b in zip(c.run, c.run[1:])),
        "identical duplicate judgments": c.holds_twice("qrels"),
        "documents twice in a run": c.holds_twice("run"),
        "ties in input order": c.conventions.get("ties") == "input_order",
    }


def first_difference(expected: str, got: str) -> str:
    """Where two outcomes (JSON, or an error's reason) first differ."""
    if not (expected.startswith("{") and got.startswith("{")):
        return got[:300]

    def walk(a: Any, b: Any, path: str) -> str | None:
        if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
            return next(filter(None, (walk(a[k], b[k], f"{path}/{k}") for k in a)), None)
        return None if a == b else f"{path}: {str(a)[:100]} != {str(b)[:100]}"

    return walk(json.loads(expected), json.loads(got), "") or "?"


def test_every_form_gives_the_result_of_trec_text(tmp_path):
    """Each random collection gives, in every form, the Result of its TREC text."""
    rng = random.Random(SEED)
    counts: Counter = Counter()
    failures = []
    for i in range(COLLECTIONS):
        c = draw_collection(rng)
        covered = features(c)
        counts.update(name for name, holds in covered.items() if holds)
        folder = tmp_path / f"c{i}"
        folder.mkdir()
        failures += [(i, name, where) for name, where in differences(c, folder, rng, counts)]
    assert not failures, failures
    # not vacuous: every reference evaluated, many comparisons, everything drawn a few times
    assert counts["evaluated"] == COLLECTIONS and counts["compared"] >= 25 * COLLECTIONS, counts
    assert counts["streamed"] >= 4 * COLLECTIONS and counts["forms"] >= 17 * COLLECTIONS, counts
    assert all(counts[name] >= 3 for name in covered), counts


# ------------------------------------------------------------------ part 2: the same refusals

@dataclass
class Broken:
    """One side of a collection broken one way, in the forms that can hold it: ``family``, a
    pattern every form's reason must match; ``row``, the broken row (0-based), which frames
    and Parquet must name as the row and TREC text as the line (None: the column is broken);
    ``key``, where a dict must say it is."""

    name: str
    side: str
    family: str
    table: pa.Table | None  # None: no Arrow table holds it (only ``extra`` forms do)
    row: int | None = None
    text: pa.Table | None = None  # what TREC text holds of it, when it can
    nested: dict | None = None  # None: no dict holds it
    key: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # more forms, by name
    column_level: frozenset[str] = frozenset()  # forms that cannot name the row
    parts: tuple[pa.Table, ...] = ()  # files of a folder (whose second is named)

    def forms(self, folder: Path, rng: random.Random) -> dict[str, Any]:
        out = dict(self.extra)
        if self.table is not None:
            out.update(table_forms(self.table, folder / "forms", rng))
        if self.text is not None:
            out["trec"] = broken_text(self.text, self.side, folder)
        if self.nested is not None:
            out["dict"] = self.nested
        if self.parts:
            for i, part in enumerate(self.parts):
                pq.write_table(part, folder / f"part-{i}.parquet")
            out["parquet-folder-parts"] = str(folder)
        return out

    def source(self, name: str, form: Any) -> str:
        """The source the error of form ``name`` must name: the path (a folder's file that
        disagrees with the first), or the in-memory object's description."""
        if self.parts:
            return str(Path(form) / "part-1.parquet")
        if isinstance(form, str):
            return form
        return f"{self.side} {'dict' if name == 'dict' else type(form).__name__}"


def as_text(value: Any, side: str) -> str:
    """A grade or score as a TREC file writes it: as Python writes it ('nan', 'inf', 'x'),
    integral grades as integers."""
    if side == "qrels" and isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def broken_text(table: pa.Table, side: str, folder: Path) -> str:
    """A table as TREC text (its values written by :func:`as_text`)."""
    rows = table.to_pylist()
    path = folder / f"broken-{side}.txt"
    if side == "qrels":
        lines = [f"{r['query']} 0 {r['doc']} {as_text(r['relevance'], side)}\n" for r in rows]
    else:
        lines = [f"{r['query']} Q0 {r['doc']} {r['rank']} {as_text(r['score'], side)} sys\n"
                 for r in rows]
    path.write_text("".join(lines), encoding="utf-8")
    return str(path)


def value_column(side: str) -> str:
    return "relevance" if side == "qrels" else "score"


def hashable(value: Any) -> Any:
    """A value as a dict key: a list as a tuple, a Decimal (an id beyond 64 bits) as its
    integer."""
    if isinstance(value, Decimal):
        return int(value)
    return tuple(value) if isinstance(value, list) else value


def dict_of(rows: list[dict], side: str) -> dict | None:
    """``{query: {doc: value}}`` of rows as they are (lists as tuples in keys); None when a
    (query, doc) pair is given twice (an identical duplicate judgment, which a dict cannot
    hold)."""
    out: dict = {}
    for row in rows:
        docs = out.setdefault(hashable(row["query"]), {})
        if hashable(row["doc"]) in docs:
            return None
        docs[hashable(row["doc"])] = row[value_column(side)]
    return out


def key_of(rows: list[dict], row: int, broken: str) -> str:
    """Where a dict's error is, as :class:`InputError` shows it: the query key (``broken``
    "query"), or the query and doc keys (the doc key as given when it is the one broken)."""
    query, doc = hashable(rows[row]["query"]), hashable(rows[row]["doc"])
    if broken == "query":
        return repr(query)
    return f"{str(query)!r}/{(doc if broken == 'doc' else str(doc))!r}"


def with_column(table: pa.Table, name: str, values: Any) -> pa.Table:
    return table.set_column(table.column_names.index(name), name, values)


def break_missing_id(table: pa.Table, side: str, rng: random.Random) -> Broken:
    name, row = rng.choice(["query", "doc"]), rng.randrange(table.num_rows)
    values = table.column(name).to_pylist()
    values[row] = None
    broken = with_column(table, name, pa.array(values, table.column(name).type))
    rows = broken.to_pylist()
    return Broken(f"missing {name} id", side, f"^missing {name} id$", broken, row,
                  nested=dict_of(rows, side), key=key_of(rows, row, name))


def break_empty_id(table: pa.Table, side: str, rng: random.Random) -> Broken:
    """An empty query or doc id (the column as strings), which a TREC file cannot hold: its
    line has a field less."""
    name, row = rng.choice(["query", "doc"]), rng.randrange(table.num_rows)
    values = [str(v) for v in table.column(name).to_pylist()]
    values[row] = ""
    broken = with_column(table, name, pa.array(values))
    rows = broken.to_pylist()
    return Broken(f"empty {name} id", side, f"^empty {name} id|^expected [46] fields", broken,
                  row, text=broken, nested=dict_of(rows, side), key=key_of(rows, row, name))


def break_value(value: float | None) -> Callable[[pa.Table, str, random.Random], Broken]:
    """A null, NaN or infinite score or grade in one row."""
    def make(table: pa.Table, side: str, rng: random.Random) -> Broken:
        name, row = value_column(side), rng.randrange(table.num_rows)
        values = [float(v) for v in table.column(name).to_pylist()]
        values[row] = value
        broken = with_column(table, name, pa.array(values, pa.float64()))
        what = "relevance grade" if side == "qrels" else "score"
        family = f"^{what} must be a finite number"
        if side == "qrels":  # a file's grades are integers
            family += "|^expected an integer relevance grade"
        rows = broken.to_pylist()
        return Broken(f"{value} {what}", side, family, broken, row,
                      text=None if value is None else broken, nested=dict_of(rows, side),
                      key=key_of(rows, row, "value"))
    return make


def break_missing_column(table: pa.Table, side: str, rng: random.Random) -> Broken:
    name = rng.choice(["query", "doc", value_column(side)])
    return Broken(f"no column {name}", side, f"has no column '{name}'", table.drop([name]))


def break_id_kind(kind: str) -> Callable[[pa.Table, str, random.Random], Broken]:
    """An id column of floats, booleans or lists (of the ids' strings)."""
    def make(table: pa.Table, side: str, rng: random.Random) -> Broken:
        name = rng.choice(["query", "doc"])
        ids = table.column(name).to_pylist()
        values = {"float": lambda: pa.array([i + 0.5 for i in range(len(ids))]),
                  "bool": lambda: pa.array([i % 2 == 0 for i in range(len(ids))]),
                  "nested": lambda: pa.array([[str(v)] for v in ids])}[kind]()
        broken = with_column(table, name, values)
        rows = broken.to_pylist()
        return Broken(f"{kind} {name} ids", side, f"^{name} ids must be strings or integers",
                      broken, nested=dict_of(rows, side), key=key_of(rows, 0, name))
    return make


def break_value_kind(kind: str) -> Callable[[pa.Table, str, random.Random], Broken]:
    """A score or grade column of booleans, lists or numbers written as strings."""
    def make(table: pa.Table, side: str, rng: random.Random) -> Broken:
        name = value_column(side)
        numbers = table.column(name).to_pylist()
        values = {"bool": lambda: pa.array([v > 0 for v in numbers]),
                  "nested": lambda: pa.array([[float(v)] for v in numbers]),
                  "string": lambda: pa.array([str(v) for v in numbers])}[kind]()
        broken = with_column(table, name, values)
        rows = broken.to_pylist()
        what = "relevance" if side == "qrels" else "score"
        return Broken(f"{kind} {name}s", side, f"^{what} must be a number|^expected a number",
                      broken, nested=dict_of(rows, side), key=key_of(rows, 0, "value"))
    return make


def break_mixed_kinds(table: pa.Table, side: str, rng: random.Random) -> Broken | None:
    """One row of another kind (a string among numbers, a number among strings) in an id or
    value column: pandas' object columns, polars' Object columns, dicts (values) and TREC
    text (a value that is not a number) hold that; Arrow, and so Parquet, cannot."""
    if table.num_rows < 2:
        return None
    name = rng.choice(["query", "doc", value_column(side)])
    row = rng.randrange(1, table.num_rows)  # the first row sets the column's kind
    values = table.column(name).to_pylist()
    values[row] = 7 if isinstance(values[row], str) else "x"
    frame = pandas_frame(table, "object")
    frame[name] = pd.Series(values, dtype=object)
    polars_object = pl.from_arrow(table).with_columns(pl.Series(name, values, dtype=pl.Object))
    extra = {"pandas-object": frame, "polars-object": polars_object}
    family = "one kind of value|polars Object column"
    if name in ("query", "doc"):  # a dict has no column types: 7 and "x" are both ids
        return Broken(f"mixed {name} ids", side, family, None, row, extra=extra,
                      column_level=frozenset({"polars-object"}))
    rows = [dict(r, **{name: v}) for r, v in zip(table.to_pylist(), values)]
    return Broken(f"mixed {name}s", side, family + "|^expected a number"
                  "|^expected an integer relevance grade", None, row,
                  text=with_column(table, name, pa.array([as_text(v, side) for v in values])),
                  nested=dict_of(rows, side), key=key_of(rows, row, "value"), extra=extra,
                  column_level=frozenset({"polars-object"}))


def break_empty(table: pa.Table, side: str, rng: random.Random) -> Broken:
    """No row at all (pandas' untyped columns of an empty frame too)."""
    untyped = pd.DataFrame({name: [] for name in table.column_names})
    return Broken("empty", side, "nothing ranked|no judgments|empty file$",
                  table.slice(0, 0), text=table.slice(0, 0), nested={},
                  extra={"pandas-untyped": untyped})


def break_twice(table: pa.Table, side: str, rng: random.Random) -> Broken:
    """A run's (query, doc) pair twice, or a pair judged twice with different grades: the
    row after it repeats it (the run stays grouped by query)."""
    row = rng.randrange(table.num_rows)
    rows = table.to_pylist()
    again = dict(rows[row])
    again[value_column(side)] += 1
    rows.insert(row + 1, again)
    broken = pa.Table.from_pylist(rows, schema=table.schema)
    family = "judged twice" if side == "qrels" else "appears twice"
    return Broken(f"twice in {side}", side, family, broken, row + 1, text=broken)


def break_folder(table: pa.Table, side: str, rng: random.Random) -> Broken | None:
    """A folder of two Parquet files whose second holds another kind of value in a column
    (strings for integer ids and back, booleans or strings for numbers) or lacks it."""
    if table.num_rows < 2:
        return None
    name = rng.choice(["query", "doc", value_column(side)])
    cut = rng.randrange(1, table.num_rows)
    values = table.column(name).slice(cut).to_pylist()
    if name == value_column(side):
        other = rng.choice([pa.array([v > 0 for v in values]), pa.array(map(str, values))])
    elif isinstance(values[0], str):
        other = pa.array(range(len(values)))
    else:
        other = pa.array(map(str, values))
    second = table.slice(cut)
    second = rng.choice([with_column(second, name, other), second.drop([name])])
    return Broken(f"folder of other {name} values", side, "the files of a folder must hold",
                  None, parts=(table.slice(0, cut), second))


BREAKS = {"missing id": break_missing_id, "empty id": break_empty_id,
          "null value": break_value(None),
          "NaN value": break_value(math.nan), "infinite value": break_value(math.inf),
          "-infinite value": break_value(-math.inf), "missing column": break_missing_column,
          "float ids": break_id_kind("float"), "bool ids": break_id_kind("bool"),
          "nested ids": break_id_kind("nested"), "bool values": break_value_kind("bool"),
          "nested values": break_value_kind("nested"),
          "string values": break_value_kind("string"), "mixed kinds": break_mixed_kinds,
          "empty": break_empty, "twice": break_twice, "folder": break_folder}


def place_of(broken: Broken, name: str) -> tuple[Any, str] | None:
    """(line, unit) the error of form ``name`` must give; None where nothing is named."""
    if name == "dict":
        return None if broken.key is None else (broken.key, "key")
    if broken.row is None or name in broken.column_level:
        return None
    return (broken.row + 1, "line") if name == "trec" else (broken.row, "row")


def refusal(broken: Broken, name: str, form: Any, evaluate: Callable[[], Any]) -> str | None:
    """None when ``evaluate`` raises the InputError ``broken`` expects of ``form``, else what
    went wrong (any other exception included)."""
    try:
        evaluate()
        return "accepted"
    except InputError as error:
        place = place_of(broken, name)
        if not re.search(broken.family, error.reason):
            return f"reason: {error}"
        if error.source != broken.source(name, form):
            return f"source: {error}"
        if place is not None and (error.line, error.unit) != place:
            return f"not {place}: {error}"
        return None
    except Exception as error:  # every other exception is a failure
        return f"{type(error).__name__}: {error}"


def test_every_form_refuses_broken_data_alike(tmp_path):
    """Each break of a random collection, in every form that can hold it, evaluated with the
    other side as TREC text (a Parquet run also streamed), is refused with an InputError of
    the break's reason family naming the form's own source and place."""
    rng = random.Random(SEED + 1)
    refused: Counter = Counter()
    failures = []
    for i in range(BROKEN_COLLECTIONS):
        c = draw_collection(rng)
        while c.holds_twice("run"):  # a document twice is a break of its own
            c = draw_collection(rng)
        text = {side: trec_text(c, side, tmp_path, name=f"c{i}-") for side in ("qrels", "run")}
        for kind, make in BREAKS.items():
            side = rng.choice(["qrels", "run"])
            broken = make(arrow_table(c, side), side, rng)
            if broken is None:
                continue
            folder = tmp_path / f"c{i}-{kind}"
            folder.mkdir()
            for name, form in broken.forms(folder, rng).items():
                qrels, run = (form, text["run"]) if side == "qrels" else (text["qrels"], form)
                calls = {name: lambda: rankwise.evaluate(qrels, {"sys": run}, ["AP", "P@5"])}
                if side == "run" and name.startswith("parquet"):
                    calls[f"{name} streamed"] = lambda: evaluate_stream(
                        qrels, {"sys": run}, ["AP", "P@5"], chunk_bytes=rng.choice([40, 4000]))
                for label, call in calls.items():
                    problem = refusal(broken, name, form, call)
                    if problem is None:
                        refused[kind] += 1
                        refused[label] += 1
                    else:
                        failures.append((i, broken.name, label, problem[:300]))
    assert not failures, failures
    # not vacuous: every break refused in many forms, every form refusing many breaks
    assert all(refused[kind] >= 10 for kind in BREAKS), refused
    forms_seen = [label for label in refused if label not in BREAKS]
    assert len(forms_seen) >= 25 and all(refused[label] >= 4 for label in forms_seen), refused
    assert refused["trec"] >= 30 and refused["dict"] >= 40, refused
    assert sum(refused[kind] for kind in BREAKS) >= 2000, refused
