"""Judgments and runs from Parquet files (a ``.parquet``/``.pq`` file, or a folder of them as
Spark and pandas write them).

Runs hold the columns ``query``, ``doc``, ``score`` and optionally ``rank``; judgments
``query``, ``doc``, ``relevance`` (names configurable; ids as strings or integers: integer
query ids become their decimal strings, integer doc ids stay integers, see
:mod:`rankwise.io.tables`). Only these columns are read; a file's row groups are read in
ranges side by side, one thread per core Arrow uses.
A folder's files must hold each column as one kind of value (strings, integers, numbers...);
where they hold one kind as different types (integer and float scores, int32 and int64 ids),
each file is read as it is and its columns cast to one type (see ``_same_kinds``).
Errors name the file and the row (0-based, in file order), as for in-memory tables.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

import numpy as np

from ..errors import InputError
from .tables import Qrels, Run

PARQUET_SUFFIXES = (".parquet", ".pq")


def is_parquet_path(path: Any) -> bool:
    """Whether a path names Parquet data: a file ending in .parquet or .pq, or a folder
    holding such files."""
    if not isinstance(path, (str, os.PathLike)):
        return False
    text = str(path).rstrip("/")
    if text.lower().endswith(PARQUET_SUFFIXES):
        return True
    return os.path.isdir(text) and any(name.lower().endswith(PARQUET_SUFFIXES)
                                       for name in os.listdir(text))


def read_parquet_qrels(path: str | os.PathLike[str], query: str = "query", doc: str = "doc",
                       relevance: str = "relevance") -> Qrels:
    """Judgments from Parquet: columns ``query``, ``doc``, ``relevance``."""
    columns, files, promoted = parquet_layout(path, (query, doc, relevance), (), "qrels",
                                               "relevance=")
    table = _read(path, columns, query, files, promoted)
    return Qrels.from_columns(table.column(query), table.column(doc), table.column(relevance),
                              source=str(path))


def read_parquet_run(path: str | os.PathLike[str], name: str | None = None,
                     query: str = "query", doc: str = "doc", score: str = "score",
                     rank: str = "rank") -> Run:
    """A run from Parquet: columns ``query``, ``doc``, ``score``, and ``rank`` where present
    (integers; used only to report queries whose ranks contradict their scores, as the TREC
    reader does). The run is named ``name``, else after the file."""
    from dataclasses import replace

    columns, files, promoted = parquet_layout(path, (query, doc, score), (rank,), "run",
                                               "score=")
    table = _read(path, columns, query, files, promoted)
    run = Run.from_columns(table.column(query), table.column(doc), table.column(score),
                           name=name or run_file_name(path), source=str(path))
    ranks = rank_values(table.column(rank)) if rank in columns else None
    return run if ranks is None else replace(run, rank=ranks)


def run_file_name(path: str | os.PathLike[str]) -> str:
    """A run's default name when nothing inside names it: its file (or folder) name."""
    return PurePosixPath(str(path).rstrip("/")).name or str(path)


def parquet_rows(path: str | os.PathLike[str]) -> int:
    """The rows of Parquet data from the files' metadata, without reading them (a folder: its
    own Parquet files); 0 when they cannot be read (the reader then says why)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = str(path)
    files = [source] if os.path.isfile(source) else \
        [os.path.join(source, f) for f in sorted(os.listdir(source))
         if f.lower().endswith(PARQUET_SUFFIXES)] if os.path.isdir(source) else []
    try:
        return sum(pq.read_metadata(f).num_rows for f in files)
    except (pa.ArrowException, OSError):
        return 0


def parquet_layout(path, needed: tuple[str, ...], optional: tuple[str, ...], what: str,
                   hint: str) -> tuple[list[str], list[str], dict[str, Any]]:
    """(the columns to read: the needed ones, an InputError naming the file and the columns
    it has when one is missing, and the optional ones present; the Parquet files; the type
    each column of a folder is read as where its files hold different types of it). Every
    file of a folder must hold the columns, each with one kind of value (``_same_kinds``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = str(path)
    if not os.path.exists(source):
        raise InputError("file not found", source=source)
    files = [source]
    try:
        if os.path.isfile(source):
            schema = pq.read_schema(source)
        else:
            dataset = pq.ParquetDataset(source)
            schema, files = dataset.schema, dataset.files
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"cannot read as Parquet ({exc})", source=source) from None
    available = list(schema.names)
    missing = [c for c in needed if c not in available]
    if missing:
        raise InputError(f"{what} Parquet data has no column {missing[0]!r} (columns: "
                         f"{', '.join(available)}); name the columns with query=, doc= and "
                         f"{hint} (on the command line: --query-column, --doc-column, "
                         f"--{hint.rstrip('=')}-column)", source=source)
    columns = [*needed, *(c for c in optional if c in available)]
    promoted = _same_kinds(files, columns, needed) if len(files) > 1 else {}
    return columns, files, promoted


def _schema(file: str):
    """The Arrow schema of one Parquet file; an InputError naming it when unreadable."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(file)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"cannot read as Parquet ({exc})", source=file) from None


def _same_kinds(files: list[str], columns: list[str], needed: tuple[str, ...]
                ) -> dict[str, Any]:
    """Raise naming the file where a folder's file lacks a needed column or holds another
    kind of value in a column than the first file (strings, integers, floats; any other type
    by name; for scores, grades and ranks, integers and floats are both numbers).

    Return, where the files hold different types of one kind in a column, the type each
    column is read as there: scores and grades as float64, as one file's are read (int64 ones
    beyond 2^53 rounded as numpy rounds them), integer ids as int64 (as their decimal strings
    beside uint64 or decimal ones), string ids as strings, a rank column of integers as int64
    (beside uint64 or floats as float64: then not read, as one file's floats are not); and a
    column some files lack as its type. Return none where only string types differ: the
    folder is then read as one dataset, which reads any string type as the first file's, and
    fills a column a file lacks with nulls.

    Read as the first file's schema, the other files' columns were cast to it: a float score
    beside integers was refused with Arrow's message, an int64 id beside int32 ones too
    when beyond int32, float64 scores beside float32 ones lost their precision silently
    (ties that are not), and a score of 1.5 beside decimal(5, 0) ones was read as 2."""
    first = _schema(files[0])
    ids = needed[:2]
    kinds = {c: _kind(first.field(c).type, c in ids) for c in columns}
    types = {c: {first.field(c).type} for c in columns}
    lacking = set()
    for file in files[1:]:
        schema = _schema(file)
        for c in columns:
            if c not in schema.names:
                if c in needed:
                    raise InputError(f"no column {c!r} (columns: {', '.join(schema.names)}), "
                                     f"which {files[0]} has: the files of a folder must hold "
                                     "the same columns", source=file)
                lacking.add(c)
                continue
            kind = _kind(schema.field(c).type, c in ids)
            if kind != kinds[c]:
                raise InputError(f"column {c!r} holds {kind} here but {kinds[c]} in "
                                 f"{files[0]}: the files of a folder must hold the same "
                                 "kinds of values", source=file)
            types[c].add(schema.field(c).type)
    differ = [c for c in columns if len(types[c]) > 1]
    if all(kinds[c] == "strings" for c in differ):
        return {}  # read as one dataset (which reads any string type as the first file's)
    return {c: _promoted(types[c], kinds[c], c in ids, c in needed) if c in differ
            else next(iter(types[c])) for c in (*differ, *lacking)}


def _decoded(arrow_type):
    """A column's type, dictionary-encoded or not (a folder's files may differ in that)."""
    import pyarrow as pa

    return arrow_type.value_type if pa.types.is_dictionary(arrow_type) else arrow_type


def _promoted(types: set, kind: str, ids: bool, needed: bool):
    """The one type the columns of ``types`` (of one kind) are read as; see _same_kinds."""
    import pyarrow as pa

    types = {_decoded(t) for t in types}
    if kind == "strings":
        return pa.string()
    if ids and kind == "integers":
        wide = any(pa.types.is_uint64(t) or pa.types.is_decimal(t) for t in types)
        return pa.string() if wide else pa.int64()
    if not needed and all(pa.types.is_integer(t) and not pa.types.is_uint64(t) for t in types):
        return pa.int64()  # a rank column
    return pa.float64()


def _kind(arrow_type, ids: bool) -> str:
    """What a column of ``arrow_type`` holds, as far as reading it goes: strings (of any
    Arrow string type, dictionary-encoded or not), integers (for ids, decimals of scale 0
    too), floats (for ids; for values, integers, floats and decimals are numbers), or the
    type itself."""
    import pyarrow as pa

    from .tables import is_string_type, is_whole_decimal

    arrow_type = _decoded(arrow_type)
    if is_string_type(arrow_type):
        return "strings"
    if pa.types.is_integer(arrow_type) or ids and is_whole_decimal(arrow_type):
        return "integers" if ids else "numbers"
    if pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type):
        return "floats" if ids else "numbers"
    return str(arrow_type)


def _read(path, columns: list[str], query: str, files: list[str] | None = None,
          promoted: dict[str, Any] | None = None):
    """The columns, the query ids read as Parquet stores them, dictionary-encoded (a string
    column is; the queries are then encoded from the dictionary indices, without making a
    string per row). A folder whose files hold different types of a column (``promoted``:
    the type each such column is read as) is read file by file, see :func:`_read_files`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        if os.path.isfile(str(path)):
            return _read_file(str(path), columns, query)
        if promoted:
            return _read_files(files, columns, query, promoted)
        return pq.read_table(str(path), columns=columns, memory_map=True,
                             read_dictionary=[query])
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"cannot read as Parquet ({exc})", source=str(path)) from None


def _read_files(files: list[str], columns: list[str], query: str, promoted: dict[str, Any]):
    """A folder's files read one by one (side by side, each as :func:`_read_file` reads
    one), each file's columns of ``promoted`` cast to their type there (see
    :func:`promote`), then joined in file order.

    Arrow's dataset would cast every file to one schema with its safe cast, which refuses an
    int64 score beyond 2^53 beside float ones (a file of them alone is read, rounded)."""
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow as pa

    def read(file: str):
        present = [c for c in columns if c in _schema(file).names]
        return promote(_read_file(file, present, query), columns, promoted)

    with ThreadPoolExecutor(max_workers=min(pa.cpu_count(), len(files))) as pool:
        return pa.concat_tables(pool.map(read, files))


def promote(table, columns: list[str], promoted: dict[str, Any]):
    """A table (or record batch) of one file of a folder with its columns of ``promoted``
    cast to their type, and a column it lacks (an optional one) as nulls, in the order of
    ``columns``. Integers become floats as numpy makes them (rounded beyond 2^53, not
    refused as Arrow's safe cast refuses them); the other casts are safe ones (int32 to
    int64, integers to their decimal strings, any string type to strings)."""
    import pyarrow as pa

    from ..core.arrow import compute, compute_options

    out = []
    for name in columns:
        if name not in table.column_names:
            out.append(pa.nulls(table.num_rows, promoted.get(name, pa.null())))
            continue
        values = table.column(name)
        target = promoted.get(name)
        if target is not None and values.type != target:
            if pa.types.is_dictionary(values.type):
                values = compute("cast", values, options=compute_options(
                    "Cast", values.type.value_type))
            values = compute("cast", values, options=compute_options(
                "Cast", target, allow_float_truncate=pa.types.is_floating(target)))
        out.append(values)
    kind = pa.Table if isinstance(table, pa.Table) else pa.RecordBatch
    return kind.from_arrays(out, names=columns)


def parquet_batches(path, columns: list[str], files: list[str], promoted: dict[str, Any],
                    batch_rows: int) -> Iterator[Any]:
    """The record batches of Parquet data (a file, or a folder's files in order) of about
    ``batch_rows`` rows, with the ``columns``, ``files`` and ``promoted`` types of
    :func:`parquet_layout`. A folder whose files hold different types of a column is read
    file by file, each batch's columns read as :func:`promote` makes them."""
    import pyarrow.dataset as ds

    if not promoted:
        yield from ds.dataset(str(path), format="parquet").to_batches(columns=columns,
                                                                      batch_size=batch_rows)
        return
    for file in files:
        present = [c for c in columns if c in _schema(file).names]
        for batch in ds.dataset(file, format="parquet").to_batches(columns=present,
                                                                   batch_size=batch_rows):
            yield promote(batch, columns, promoted)


def _read_file(path: str, columns: list[str], query: str):
    """One Parquet file, its row groups split into contiguous ranges read side by side, one
    thread each (in file order).

    ``pq.read_table`` does the same through pyarrow's dataset layer, whose import also imports
    pandas where it is installed (about 0.3 s); this reads the 100k run's ten row groups in
    0.40 s against its 0.58 s.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    opened = pq.ParquetFile(path, memory_map=True)
    groups = opened.metadata.num_row_groups
    # a nested column (a list of ids: refused once read) has no dictionary to read it as
    dictionary = None if pa.types.is_nested(opened.schema_arrow.field(query).type) else [query]

    def open_file():
        return pq.ParquetFile(path, memory_map=True, read_dictionary=dictionary)

    workers = min(pa.cpu_count(), groups)  # Arrow's own thread count (pa.set_cpu_count)
    if workers <= 1:
        return open_file().read(columns=columns)
    bounds = np.linspace(0, groups, workers + 1).astype(int)

    def read_range(i: int):
        return open_file().read_row_groups(range(bounds[i], bounds[i + 1]), columns=columns,
                                           use_threads=False)

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return pa.concat_tables(pool.map(read_range, range(workers)))


def rank_values(column) -> np.ndarray | None:
    """A rank column (Arrow) of integers without nulls as int32, or int64 where a rank is
    beyond 32 bits; else None (the column is then ignored, as the TREC reader ignores a rank
    column that is not all 64-bit integers)."""
    import pyarrow as pa

    from ..core.arrow import to_numpy

    if not pa.types.is_integer(column.type) or column.null_count:
        return None
    if pa.types.is_uint64(column.type) and len(column) and \
            to_numpy(column, np.uint64).max() > np.iinfo(np.int64).max:
        return None
    values = to_numpy(column, np.int64)
    if len(values) and (values.min() < np.iinfo(np.int32).min
                        or values.max() > np.iinfo(np.int32).max):
        return values
    return values.astype(np.int32)
