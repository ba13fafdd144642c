"""Judgments and runs from Parquet files (a ``.parquet``/``.pq`` file, or a folder of them as
Spark and pandas write them).

Runs hold the columns ``query``, ``doc``, ``score`` and optionally ``rank``; judgments
``query``, ``doc``, ``relevance`` (names configurable; ids as strings or integers: integer
query ids become their decimal strings, integer doc ids stay integers, see
:mod:`rankwise.io.tables`). Only these columns are read; a file's row groups are read in
ranges side by side, one thread per core Arrow uses.

A folder's files are those of its sub-folders too, at any depth (partitioned output), in the
order of their paths, as pyarrow reads a folder; files and sub-folders whose names start with
``_`` or ``.`` are skipped, as pyarrow and Spark skip them (``_SUCCESS``, ``.crc`` checksums,
``_temporary``), and those of them that are Parquet files holding rows (other than the
summary files ``_metadata`` and ``_common_metadata``) are counted in the diagnostics
(``run_files_skipped``, ``qrels_files_skipped``), never dropped unsaid (see
:func:`folder_files`). A sub-folder named ``key=value`` (Hive partitioning, as Spark's
``partitionBy`` writes it) gives the column ``key`` whose name is a column read, for every row
of its files (see :func:`_folder_values`); other keys are not read.
A folder's files must hold each column as one kind of value (strings, integers, numbers...);
where they hold one kind as different types (integer and float scores, int32 and int64 ids),
each file is read as it is and its columns cast to one type (see ``_same_kinds``).
Errors name the file and the row (0-based, in file order), as for in-memory tables.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePath, PurePosixPath
from typing import Any

import numpy as np

from ..errors import InputError
from .tables import Qrels, Run

PARQUET_SUFFIXES = (".parquet", ".pq")
#: A folder's files and sub-folders whose names start with these are skipped (pyarrow's rule,
#: and Spark's: ``_SUCCESS``, ``_temporary``, ``.part-0.parquet.crc``).
SKIPPED_PREFIXES = ("_", ".")
#: Summary files beside the data (the footers of the other files), skipped unreported.
SUMMARY_FILES = ("_metadata", "_common_metadata")
#: The folder name Hive and Spark write for a null partition value (``key=__HIVE_...``).
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


def is_parquet_path(path: Any) -> bool:
    """Whether a path names Parquet data: a file ending in .parquet or .pq, or a folder
    holding such files, in it or in its sub-folders (skipped ones too), or holding no file
    that would be read (empty, or only ``_SUCCESS`` and the like): the reader then says
    that the folder holds no Parquet files, and which were skipped."""
    if not isinstance(path, (str, os.PathLike)):
        return False
    text = str(path).rstrip("/")
    if text.lower().endswith(PARQUET_SUFFIXES):
        return True
    if not os.path.isdir(text):
        return False
    files = folder_files(text)
    return not files.data or any(f.lower().endswith(PARQUET_SUFFIXES)
                                 for f in (*files.data, *files.skipped))


@dataclass(frozen=True)
class FolderFiles:
    """The files of a folder and of its sub-folders (symbolic links followed, as pyarrow
    follows them; each real folder once), in the order of their paths, as pyarrow orders
    them: those read, and those skipped because their name or a sub-folder's (below the
    folder) starts with ``_`` or ``.``."""

    data: list[str]
    skipped: list[str]


def folder_files(folder: str) -> FolderFiles:
    """The files a folder of Parquet data is read from, and those skipped (see
    :class:`FolderFiles`)."""
    data, skipped, seen = [], [], set()
    for root, folders, names in os.walk(folder, followlinks=True):
        real = os.path.realpath(root)
        if real in seen:  # a link back up: a cycle
            folders[:] = []
            continue
        seen.add(real)
        for name in names:
            path = os.path.join(root, name)
            parts = PurePath(os.path.relpath(path, folder)).parts
            (skipped if any(p.startswith(SKIPPED_PREFIXES) for p in parts) else data).append(path)
    return FolderFiles(sorted(data), sorted(skipped))


def parquet_files(path: str | os.PathLike[str]) -> list[str]:
    """The Parquet files a path is read from: itself, or a folder's files (see
    :func:`folder_files`); none where there is nothing (the reader then says why)."""
    source = str(path)
    if os.path.isfile(source):
        return [source]
    return folder_files(source).data if os.path.isdir(source) else []


def read_parquet_qrels(path: str | os.PathLike[str], query: str = "query", doc: str = "doc",
                       relevance: str = "relevance") -> Qrels:
    """Judgments from Parquet: columns ``query``, ``doc``, ``relevance``."""
    from dataclasses import replace

    layout = parquet_layout(path, (query, doc, relevance), (), "qrels", "relevance=")
    table = _read(path, layout)
    qrels = Qrels.from_columns(table.column(query), table.column(doc),
                               table.column(relevance), source=str(path))
    return replace(qrels, skipped_files=layout.skipped) if layout.skipped else qrels


def read_parquet_run(path: str | os.PathLike[str], name: str | None = None,
                     query: str = "query", doc: str = "doc", score: str = "score",
                     rank: str = "rank") -> Run:
    """A run from Parquet: columns ``query``, ``doc``, ``score``, and ``rank`` where present
    (integers; used only to report queries whose ranks contradict their scores, as the TREC
    reader does). The run is named ``name``, else after the file."""
    from dataclasses import replace

    layout = parquet_layout(path, (query, doc, score), (rank,), "run", "score=")
    table = _read(path, layout)
    run = Run.from_columns(table.column(query), table.column(doc), table.column(score),
                           name=name or run_file_name(path), source=str(path))
    ranks = rank_values(table.column(rank)) if rank in layout.columns else None
    return replace(run, rank=run.rank if ranks is None else ranks,
                   skipped_files=layout.skipped)


def run_file_name(path: str | os.PathLike[str]) -> str:
    """A run's default name when nothing inside names it: its file (or folder) name."""
    return PurePosixPath(str(path).rstrip("/")).name or str(path)


def parquet_rows(path: str | os.PathLike[str]) -> int:
    """The rows of Parquet data from the files' metadata, without reading them (a folder: the
    files it is read from, see :func:`parquet_files`); a file that cannot be read counts 0
    (the reader then says why)."""
    return sum(_footer_rows(f) for f in parquet_files(path))


def _footer_rows(file: str) -> int:
    """The rows of a Parquet file, from its footer; 0 when it is not one."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_metadata(file).num_rows
    except (pa.ArrowException, OSError, UnicodeEncodeError):  # (a name that is not UTF-8)
        return 0


@dataclass(frozen=True)
class ParquetLayout:
    """How Parquet data is read (see :func:`parquet_layout`).

    Attributes
    ----------
    columns : list of str
        The columns read: the needed ones, then the optional ones present.
    files : list of str
        The Parquet files, in the order read.
    promoted : dict
        The type each column of a folder is read as where its files hold different types of
        it (see ``_same_kinds``); the folder is then read file by file.
    given : dict
        The columns that ``key=value`` folder names give (see :func:`_folder_values`): per
        column, its distinct values (an Arrow array) and each file's value (int32 indices).
    rows : tuple of int
        Each file's rows, where folder names give columns (to give each row its file's).
    skipped : tuple of str
        The folder's Parquet files holding rows skipped for their names, as ``path (N rows)``
        (relative to the folder).
    """

    columns: list[str]
    files: list[str]
    promoted: dict[str, Any]
    given: dict[str, tuple[Any, np.ndarray]]
    rows: tuple[int, ...]
    skipped: tuple[str, ...]

    @property
    def file_columns(self) -> list[str]:
        """The columns read from the files (not given by folder names)."""
        return [c for c in self.columns if c not in self.given]


def parquet_layout(path, needed: tuple[str, ...], optional: tuple[str, ...], what: str,
                   hint: str) -> ParquetLayout:
    """How to read Parquet data: the columns (the needed ones, an InputError naming the file
    and the columns it has when one is missing, and the optional ones present), the files
    (a folder without any: an InputError saying which were skipped), the type each column
    of a folder is read as where its files hold different types of it, the columns folder
    names give, and the skipped files holding rows. Every file of a folder must hold the
    columns, each with one kind of value (``_same_kinds``)."""
    source = str(path)
    if not os.path.exists(source):
        raise InputError("file not found", source=source)
    if os.path.isfile(source):
        files, skipped, given = [source], (), {}
    else:
        files, skipped = folder_listing(source)
        given = _folder_values(source, files, (*needed, *optional), needed[:2])
    _names_in_utf8(files)
    schema = _schema(files[0])
    _not_given_twice(files[0], schema, given)
    available = [*schema.names, *given]
    missing = [c for c in needed if c not in available]
    if missing:
        # (judgments' columns are named by to_qrels alone: evaluate's query= and doc= name
        # the runs' columns, and it takes no relevance=)
        how = "rankwise.to_qrels(path, query=..., doc=..., relevance=...)" if what == "qrels" \
            else f"query=, doc= and {hint}"
        raise InputError(f"{what} Parquet data has no column {missing[0]!r} (columns: "
                         f"{', '.join(available)}); name the columns with {how} (on the "
                         f"command line: --query-column, --doc-column, "
                         f"--{hint.rstrip('=')}-column)", source=source)
    columns = [*needed, *(c for c in optional if c in available)]
    twice = next((c for c in columns if schema.names.count(c) > 1), None)
    if twice is not None:
        raise InputError(f"{schema.names.count(twice)} columns are named {twice!r}: the column "
                         "to read must be the only one of its name", source=files[0])
    in_files = [c for c in columns if c not in given]
    promoted = _same_kinds(files, in_files, needed, given) if len(files) > 1 else {}
    rows = tuple(_footer_rows(f) for f in files) if given else ()
    return ParquetLayout(columns, files, promoted, given, rows, skipped)


def _names_in_utf8(files: list[str]) -> None:
    """An InputError naming the first file whose name is not UTF-8 (``os.fsdecode`` of other
    bytes): pyarrow opens Parquet files by their names in UTF-8 only."""
    for file in files:
        try:
            file.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError("the file name is not UTF-8, and Parquet files are opened by "
                             "their names in UTF-8: rename the file (TREC text files may "
                             "have any name)", source=file) from None


def folder_listing(folder: str) -> tuple[list[str], tuple[str, ...]]:
    """The files a folder of Parquet data is read from (see :func:`folder_files`) and the
    skipped ones holding rows, as ``path (N rows)`` (see :func:`_skipped_data`); an
    InputError naming those when the folder has no file to read."""
    listing = folder_files(folder)
    files, skipped = listing.data, _skipped_data(folder, listing.skipped)
    if not files:
        named = f": {', '.join(skipped)}" if skipped else ""
        raise InputError("no Parquet files in the folder (files and folders whose names "
                         f"start with _ or . are skipped, as pyarrow and Spark skip "
                         f"them{named})", source=folder)
    return files, skipped


def folder_values(folder: str, files: list[str], wanted: tuple[str, ...],
                  ids: tuple[str, ...]) -> dict[str, tuple[Any, np.ndarray]]:
    """The columns of ``wanted`` that the files' ``key=value`` folder names give, as
    :func:`_folder_values` gives them (ids, ``ids``, as the names' text; other values as
    numbers), refused as the in-memory reader refuses them, and where a file holds such a
    column too (see :func:`_not_given_twice`)."""
    given = _folder_values(folder, files, wanted, ids)
    if given:
        for file in files:
            _not_given_twice(file, _schema(file), given)
    return given


def folder_rows(files: list[str]) -> np.ndarray:
    """Each file's rows, from its footer (see :func:`parquet_rows`), as int64."""
    return np.array([_footer_rows(f) for f in files], dtype=np.int64)


def _skipped_data(folder: str, skipped: list[str]) -> tuple[str, ...]:
    """The skipped files (see :func:`folder_files`) that are Parquet files holding rows,
    other than summary files, as ``path (N rows)`` relative to the folder."""
    out = []
    for file in skipped:
        rows = 0 if os.path.basename(file) in SUMMARY_FILES else _footer_rows(file)
        if rows:
            out.append(f"{os.path.relpath(file, folder)} ({rows} row{'s' * (rows != 1)})")
    return tuple(out)


def _folder_keys(folder: str, file: str) -> dict[str, str]:
    """The ``key=value`` folder names between ``folder`` and ``file``, as {key: value}, keys
    and values URL-decoded as Hive and Spark encode them (``%3D`` for ``=``)."""
    from urllib.parse import unquote

    keys: dict[str, str] = {}
    for part in PurePath(os.path.relpath(os.path.dirname(file), folder)).parts:
        key, equals, value = part.partition("=")
        key, value = unquote(key), unquote(value)
        if equals and keys.setdefault(key, value) != value:
            raise InputError(f"the folder names give {key!r} twice ({key}={keys[key]} and "
                             f"{key}={value})", source=file)
    return keys


def _folder_values(folder: str, files: list[str], wanted: tuple[str, ...],
                   ids: tuple[str, ...]) -> dict[str, tuple[Any, np.ndarray]]:
    """The columns of ``wanted`` that the files' ``key=value`` folder names give (Hive
    partitioning): per column, its distinct values and each file's (see
    :class:`ParquetLayout`). Ids (``ids``) are the names' text; scores, grades and ranks
    numbers (integers where all are, else floats). Every file must then lie in such a folder
    (an InputError naming the first that does not), none holding the column itself (see
    :func:`_not_given_twice`); a value that is not a number, or Hive's null, is refused
    naming its folder."""
    import pyarrow as pa

    keys = [_folder_keys(folder, f) for f in files]
    given = {}
    for column in wanted:
        texts = [k.get(column) for k in keys]
        if all(t is None for t in texts):
            continue
        if None in texts:
            other = files[next(i for i, t in enumerate(texts) if t is not None)]
            raise InputError(f"not in a {column}=... folder, as {other} is: the files of a "
                             f"folder must all give the column {column!r} in their folder "
                             "names, or all hold it", source=files[texts.index(None)])
        first: dict[str, int] = {}  # each distinct value: the first file it is given to
        for i, text in enumerate(texts):
            first.setdefault(text, i)
        values = [_folder_value(t, column, column in ids, files[i]) for t, i in first.items()]
        position = {t: n for n, t in enumerate(first)}
        given[column] = (pa.array(values, pa.string() if column in ids else None),
                         np.array([position[t] for t in texts], dtype=np.int32))
    return given


def _folder_value(text: str, column: str, is_id: bool, file: str) -> str | int | float:
    """A value a folder name ``column=text`` gives: the text for ids, else the number it
    writes; an InputError naming the file's folder for Hive's null or a value that is not
    a number."""
    where = os.path.dirname(file)
    if text == HIVE_NULL:
        raise InputError(f"missing {column} (the folder name {column}={HIVE_NULL} is Hive's "
                         "null)", source=where)
    if is_id:
        return text
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    raise InputError(f"{column} must be a number (in the folder name {column}={text})",
                     source=where)


def _not_given_twice(file: str, schema, given: dict) -> None:
    """Raise where a file holds a column its folder names give too."""
    for column in given:
        if column in schema.names:
            raise InputError(f"column {column!r} is in the file and in its folder's name "
                             f"({column}=...): give it in one place only", source=file)


def _schema(file: str):
    """The Arrow schema of one Parquet file; an InputError naming it when unreadable."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(file)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"cannot read as Parquet ({exc})", source=file) from None


def _same_kinds(files: list[str], columns: list[str], needed: tuple[str, ...],
                given: dict[str, Any]) -> dict[str, Any]:
    """Raise naming the file where a folder's file lacks a needed column (of ``columns``,
    those read from the files), holds another kind of value in a column than the first file
    (strings, integers, floats; any other type by name; for scores, grades and ranks,
    integers and floats are both numbers), or holds a column its folder names give
    (``given``).

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
        _not_given_twice(file, schema, given)
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


def _read(path, layout: ParquetLayout):
    """The columns of ``layout``, the query ids read as Parquet stores them, dictionary-encoded
    (a string column is; the queries are then encoded from the dictionary indices, without
    making a string per row). A folder whose files hold different types of a column
    (``layout.promoted``) is read file by file, see :func:`_read_files`; the columns its
    folder names give are added to its rows, see :func:`with_given`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    query, columns = layout.columns[0], layout.file_columns
    try:
        if os.path.isfile(str(path)):
            return _read_file(str(path), columns, query)
        if layout.promoted:
            table = _read_files(layout.files, columns, query, layout.promoted)
        else:  # the files as listed (their folder names read here, not as pyarrow reads them)
            table = pq.read_table(layout.files, columns=columns, memory_map=True,
                                  read_dictionary=[query] if query in columns else None,
                                  partitioning=None)
        if not layout.given:
            return table
        return with_given(table, layout, np.repeat(
            np.arange(len(layout.files), dtype=np.int32), layout.rows))
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"cannot read as Parquet ({exc})", source=str(path)) from None


def with_given(data, layout: ParquetLayout, files: np.ndarray):
    """A table (or record batch) of a folder's rows in the order of ``layout.columns``, with
    the columns their folder names give (``layout.given``; ``files``: the file of each row,
    its position in ``layout.files``): the query ids dictionary-encoded, as a file's are
    read, the others as plain columns."""
    import pyarrow as pa

    out = []
    for name in layout.columns:
        if name not in layout.given:
            out.append(data.column(name))
            continue
        values, of_file = layout.given[name]
        column = pa.DictionaryArray.from_arrays(pa.array(of_file[files]), values)
        out.append(column if name == layout.columns[0] else column.dictionary_decode())
    kind = pa.Table if isinstance(data, pa.Table) else pa.RecordBatch
    return kind.from_arrays(out, names=layout.columns)


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


def parquet_batches(layout: ParquetLayout, batch_rows: int) -> Iterator[Any]:
    """The record batches of Parquet data (a file, or a folder's files in order) of about
    ``batch_rows`` rows, read as :func:`parquet_layout` says. A folder whose files hold
    different types of a column is read file by file, each batch's columns read as
    :func:`promote` makes them; the columns folder names give are added to each batch (each
    batch is of one file)."""
    import pyarrow.dataset as ds

    columns, promoted = layout.file_columns, layout.promoted
    if promoted:
        batches = (promote(batch, columns, promoted)
                   for file in layout.files
                   for batch in ds.dataset(file, format="parquet").to_batches(
                       columns=[c for c in columns if c in _schema(file).names],
                       batch_size=batch_rows))
    else:
        batches = ds.dataset(layout.files, format="parquet").to_batches(
            columns=columns, batch_size=batch_rows)
    if not layout.given:
        yield from batches
        return
    file, left = 0, layout.rows[0]
    for batch in batches:
        while batch.num_rows and not left:  # the next file that holds rows
            file += 1
            left = layout.rows[file]
        left -= batch.num_rows
        yield with_given(batch, layout, np.full(batch.num_rows, file, dtype=np.int32))


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
    # a nested column (a list of ids: refused once read) has no dictionary to read it as;
    # nor has a query column that folder names give
    dictionary = [query] if query in columns and not pa.types.is_nested(
        opened.schema_arrow.field(query).type) else None

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
