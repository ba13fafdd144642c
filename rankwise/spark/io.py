"""Judgments and runs as Spark DataFrames: TREC text (plain or ``.gz``) or Parquet, from any
path Spark reads (local, HDFS, S3, ...).

TREC text is accepted as :mod:`rankwise.io.trec` accepts it (and trec_eval 10): fields
separated by any mix of spaces and tabs, CRLF line ends, blank lines and ``#`` comment lines
skipped, text after a run's sixth field ignored (unless a quote in its first three fields
shows an id with spaces quoted as in CSV), a rank column that does not hold integers
dropped. Parsing happens in Spark's JVM (no Python per line); a line that cannot be parsed is
kept, marked with the reason, and raises :class:`~rankwise.errors.InputError` (naming the file,
the reason and the line's text) when the evaluation reaches it: the first such line of the
first file the in-memory reader would refuse. Spark does not number lines, so the message
quotes the line instead of giving its number.

Parquet files hold the columns ``query``, ``doc``, ``score`` (and optionally ``rank``) for
runs, ``query``, ``doc``, ``relevance`` for judgments (ids as strings or integers). A local
folder is read from the files the in-memory reader reads (those of its sub-folders at any
depth, skipping names that start with ``_`` or ``.``: :func:`rankwise.io.parquet.folder_files`),
``key=value`` folder names giving columns as they give them there (ids as the names' text,
other values as numbers); :func:`skipped_files` names the skipped files holding rows, which
:func:`rankwise.spark.evaluate` counts in the diagnostics. Other paths (HDFS, S3, ...) are
read by Spark's own reader.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ..errors import InputError
from ..io.parquet import (
    folder_listing,
    folder_rows,
    folder_values,
    is_parquet_path,
    run_file_name,
)
from ..io.trec import FLOAT_TEXT, INTEGER_TEXT, QRELS_FIELDS, READ_FIELDS, RUN_FIELDS

#: Column a reader fills, on lines it refuses, with ``order reason \x00 text``: ``order``, one
#: of the digits below, ranks a file's problems as the in-memory reader meets them (the whole
#: file unreadable, a NUL byte anywhere, a run's quoted id anywhere, a line that does not
#: parse, a score that is not finite), so that the engine reports the first of them (the
#: lowest order, then the first row); ``text`` is the line or field.
BAD_COLUMN = "_rankwise_bad"
UNREADABLE, NUL_BYTE, QUOTED_ID, BAD_LINE, NOT_FINITE = "0", "1", "2", "3", "4"
RUN_SCHEMA = "query string, doc string, score double, rank bigint"
QRELS_SCHEMA = "query string, doc string, relevance double"
#: A line holding a NUL byte, comment or not: the in-memory reader refuses the file.
NOT_TEXT = "not a text file (contains NUL bytes)"
QUOTED = "ids cannot contain spaces in a TREC file (quoted ids are not part of the format)"
FORMATS = ("auto", "trec", "parquet")
#: Hadoop options of every read: local files through Hadoop's raw local file system, which
#: does not verify the ``.crc`` checksum file Hadoop keeps beside a file it wrote, as the
#: in-memory reader (pyarrow) ignores it: a stale one (the file rewritten by another tool)
#: failed the read inside Hadoop. For these reads only (a file system not from the cache);
#: other schemes (HDFS, S3) are not concerned.
UNVERIFIED = {"fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem",
              "fs.file.impl.disable.cache": "true"}


def read_run(spark, path: str, name: str | None = None, format: str = "auto",
             columns: Mapping[str, str] | None = None):
    """A run as a DataFrame (``query``, ``doc``, ``score``, ``rank``) and its name.

    The name is ``name``, else the tag of the first line of a TREC file, else the file name.
    ``columns``: a Parquet run's own names of those columns (``{"query": "user", ...}``).

    Returns
    -------
    (DataFrame, str)
    """
    if _format(path, format) == "parquet":
        return _named(_parquet(spark, path, columns, ("query", "doc", "score", "rank")),
                      columns, path, "run"), name or run_file_name(path)
    unreadable = _unreadable(spark, path)
    if unreadable is not None:
        return _refused(spark, RUN_SCHEMA, unreadable), name or run_file_name(path)
    from pyspark.sql import functions as F

    fields, line = _fields()
    n = F.size(fields)
    score_text, rank_text = F.get(fields, 4), F.get(fields, 3)
    # the in-memory reader's syntax (Java's would also read 2.0f, 3D or 0x1p3; and neither
    # +nan nor -nan, which it reads as NaN)
    score = F.when(score_text.rlike(_whole(FLOAT_TEXT)),
                   F.when(score_text.rlike(_whole("(?i)[+-]?nan")), F.lit(float("nan")))
                   .otherwise(score_text.try_cast("double")))
    qrels_like = (n == 4) & (F.get(fields, 1) != "Q0") & \
        F.get(fields, 3).rlike(_whole(INTEGER_TEXT))
    wrong_count = F.concat(F.lit(f"expected 6 fields '{' '.join(RUN_FIELDS)}', got "),
                           n.cast("string"),
                           F.when(qrels_like, F.lit("; this looks like a qrels file passed as "
                                                    "a run")).otherwise(F.lit("")))
    # an id with spaces quoted as in CSV: a quote in the first three fields, more than six
    # fields (spaces and tabs split them, as in the parse)
    quoted = (n > 6) & line.rlike('^(?:[^ \t]+[ \t]+){0,2}[^ \t]*"')
    bad = (F.when(line.contains("\x00"), _problem(NUL_BYTE, F.lit(NOT_TEXT), line))
           .when(quoted, _problem(QUOTED_ID, F.lit(QUOTED), line))
           .when(_not_utf8(line, fields, READ_FIELDS["run"], n >= 6),
                 _problem(BAD_LINE, F.lit(NOT_UTF8), line))
           .when(n < 6, _problem(BAD_LINE, wrong_count, line))
           .when(score.isNull(), _problem(BAD_LINE, F.lit(
               "expected a number for the score in field 'score'"), score_text))
           .when(F.isnan(score) | (F.abs(score) == float("inf")), _problem(
               NOT_FINITE, F.lit("score must be a finite number (NaN and null are missing "
                                 "values)"), score_text)))
    # a 64-bit integer, as the in-memory reader reads ranks (it drops the column otherwise)
    rank = F.when(rank_text.rlike(_whole(INTEGER_TEXT)), rank_text.try_cast("bigint"))
    df = _data_lines(spark, path).select(
        F.get(fields, 0).alias("query"), F.get(fields, 2).alias("doc"), score.alias("score"),
        rank.alias("rank"), bad.alias(BAD_COLUMN))
    return df, name or _run_tag(spark, path) or run_file_name(path)


def read_qrels(spark, path: str, format: str = "auto", columns: Mapping[str, str] | None = None):
    """Judgments as a DataFrame (``query``, ``doc``, ``relevance``; ``columns``: a Parquet
    file's own names of them)."""
    if _format(path, format) == "parquet":
        return _named(_parquet(spark, path, columns, ("query", "doc", "relevance")),
                      columns, path, "qrels")
    unreadable = _unreadable(spark, path)
    if unreadable is not None:
        return _refused(spark, QRELS_SCHEMA, unreadable)
    from pyspark.sql import functions as F

    fields, line = _fields()
    n = F.size(fields)
    grade_text = F.get(fields, 3)
    grade = F.when(grade_text.rlike(_whole(INTEGER_TEXT)), grade_text.try_cast("long"))
    wrong_count = F.concat(F.lit(f"expected 4 fields '{' '.join(QRELS_FIELDS)}', got "),
                           n.cast("string"),
                           F.when(n == 6, F.lit("; this looks like a run file passed as qrels"))
                           .otherwise(F.lit("")))
    bad = (F.when(line.contains("\x00"), _problem(NUL_BYTE, F.lit(NOT_TEXT), line))
           .when(_not_utf8(line, fields, READ_FIELDS["qrels"], n == 4),
                 _problem(BAD_LINE, F.lit(NOT_UTF8), line))
           .when(n != 4, _problem(BAD_LINE, wrong_count, line))
           .when(grade.isNull(), _problem(BAD_LINE, F.lit(
               "expected an integer relevance grade in field 'rel'"), grade_text)))
    return _data_lines(spark, path).select(
        F.get(fields, 0).alias("query"), F.get(fields, 2).alias("doc"),
        grade.cast("double").alias("relevance"), bad.alias(BAD_COLUMN))


#: Column of a local Parquet folder's rows: each row's position in the folder's rows, files
#: in the order of their paths (as the in-memory reader reads them); the engine's input order.
ORDER_COLUMN = "_rankwise_order"


def _parquet(spark, path: str, columns: Mapping[str, str] | None, ours: tuple[str, ...]):
    """Parquet data as a DataFrame: any path as Spark reads it, but a local folder from the
    files the in-memory reader reads, each in its own folder (Spark then reads no
    ``key=value`` folder name: its reading takes ``query=007`` for the number 7, and refuses
    plain folders beside partition folders), with the columns ``key=value`` folder names
    give (:func:`rankwise.io.parquet.folder_values`: the ids, the first two of ``ours``, as
    text, the other values as numbers) and each row's place in the folder's rows
    (:data:`ORDER_COLUMN`; Spark reads the largest files first)."""
    if not os.path.isdir(path):
        return _reader(spark).parquet(path)
    import numpy as np
    import pyarrow as pa
    from pyspark.sql import functions as F

    files, _ = folder_listing(path)
    theirs = tuple((columns or {}).get(c, c) for c in ours)
    given = folder_values(path, files, theirs, theirs[:2])
    df = _reader(spark).parquet(*files)
    meta, rows = F.col("_metadata"), folder_rows(files)
    # each row's file (none where no file holds rows: the engine then says the input is empty)
    file = _file_positions(df, files)[meta.file_path] if rows.any() else F.lit(None).cast("int")
    added = {ORDER_COLUMN: _element((np.cumsum(rows) - rows).tolist(), file)
             + meta.row_index}
    for name, (values, of_file) in given.items():
        value = _element(values.to_pylist(), _element(of_file.tolist(), file))
        added[name] = value if name in theirs[:2] else value.cast(
            "bigint" if pa.types.is_integer(values.type) else "double")
    return df.withColumns(added)


def _file_positions(df, files: list[str]):
    """A map column from the paths Spark gives a DataFrame's files (``_metadata.file_path``,
    URIs: one small job) to their positions in ``files``."""
    from pyspark.sql import functions as F

    position = {os.path.abspath(f): i for i, f in enumerate(files)}
    uris = [r[0] for r in df.select("_metadata.file_path").distinct().collect()]
    return F.create_map(*[F.lit(x) for uri in uris
                          for x in (uri, position[os.path.abspath(_local_path(uri))])])


def _element(values: list, index):
    """The element of the literal list ``values`` at the 0-based ``index`` (a column)."""
    from pyspark.sql import functions as F

    return F.element_at(F.array(*[F.lit(v) for v in values]), index + 1)


def skipped_files(path: str, format: str = "auto") -> tuple[str, ...]:
    """The files of a local Parquet folder that :func:`read_run` and :func:`read_qrels` skip
    for their names though they hold rows, as ``path (N rows)`` (relative to the folder),
    as the in-memory reader counts them (``run_files_skipped``, ``qrels_files_skipped``);
    none for a file, TREC text or a path only Spark reads. Pass them to
    :func:`rankwise.spark.evaluate` (``qrels_skipped_files``, ``run_skipped_files``)."""
    if not os.path.isdir(path) or _format(path, format) != "parquet":
        return ()
    return folder_listing(path)[1]


def _named(df, columns: Mapping[str, str] | None, path: str, what: str):
    """A Parquet frame with its own column names (``columns``: ours to theirs) renamed to
    rankwise's; an InputError naming the file when one is not there."""
    renames = {}
    for ours, theirs in (columns or {}).items():
        if theirs not in df.columns:
            raise InputError(f"{what} Parquet data has no column {theirs!r} (columns: "
                             f"{', '.join(df.columns)}); name its {ours} column "
                             f"(--{ours}-column on the command line)", source=str(path),
                             value=theirs)
        if theirs != ours:
            renames[theirs] = ours
    return df.withColumnsRenamed(renames) if renames else df


#: Spark's text reader puts U+FFFD in place of bytes that are not UTF-8. The in-memory reader
#: refuses such bytes in the fields it reads (ids, rank, score or grade) and in a line of the
#: wrong number of fields, and skips them elsewhere (Q0 or iter, the tag, text after it): a
#: line holding U+FFFD there is refused too (a U+FFFD written as such with it).
NOT_UTF8 = "not valid UTF-8 text (or a U+FFFD replacement character)"


def _not_utf8(line, fields, read: tuple[int, ...], right_count):
    """Whether a line is refused as not UTF-8 text (``read``: the fields the reader reads;
    ``right_count``: whether the line has a row's number of fields)."""
    from pyspark.sql import functions as F

    in_read = F.concat_ws(" ", *[F.get(fields, i) for i in read]).contains("\ufffd")
    return line.contains("\ufffd") & (~right_count | in_read)


def problem_error(bad: str, source: str) -> InputError:
    """The InputError of a bad column's text (``order reason \\x00 text``)."""
    reason, _, text = bad[1:].partition("\x00")
    return InputError(reason, source=source, value=text or None)


def no_lines_error(df, kind: str, source: str) -> InputError:
    """The in-memory reader's error for a TREC ``kind`` file ("run", "qrels") without a data
    line (``df``: what :func:`read_run` or :func:`read_qrels` made of it): "empty file" where
    it holds nothing but blanks, else that it holds only blank or comment lines (one small
    Spark job, reading it until its first non-blank character)."""
    from pyspark.sql import functions as F

    text = _reader(df.sparkSession).text(df.inputFiles())
    if text.where(F.col("value").rlike(r"\S")).limit(1).count():
        return InputError(f"no {kind} lines: the file holds only blank or comment lines",
                          source=source)
    return InputError("empty file", source=source)


def _reader(spark):
    """Spark's reader, with the :data:`UNVERIFIED` options."""
    return spark.read.options(**UNVERIFIED)


def _unreadable(spark, path: str) -> str | None:
    """Why Spark cannot read ``path`` as the in-memory reader reads it: it does not exist,
    or its name says otherwise than its content about gzip (Spark takes the compression from
    the name, the in-memory reader from the first bytes). None where it can, or cannot tell
    (a folder, several files, a session without a JVM)."""
    from contextlib import closing

    try:
        jvm = spark._jvm
        conf = jvm.org.apache.hadoop.conf.Configuration(spark._jsc.hadoopConfiguration())
    except AttributeError:  # Spark Connect
        return None
    for key, value in UNVERIFIED.items():
        conf.set(key, value)
    pattern = jvm.org.apache.hadoop.fs.Path(path)
    files = pattern.getFileSystem(conf).globStatus(pattern)
    if not files:
        return "file not found"
    if len(files) != 1 or not files[0].isFile():
        return None
    found = files[0].getPath()
    with closing(found.getFileSystem(conf).open(found)) as stream:
        gzipped = stream.read() == 0x1F and stream.read() == 0x8B
    if gzipped == found.getName().endswith(".gz"):
        return None
    how = "gzip-compressed, but its name does not end in .gz" if gzipped else \
        "not gzip-compressed, but its name ends in .gz"
    return f"{how}: Spark takes the compression from the file's name (rename it)"


def _refused(spark, schema: str, reason: str):
    """A reader's frame of ``schema`` whose one row refuses the whole file for ``reason``."""
    columns = schema.count(",") + 1
    return spark.createDataFrame([(None,) * columns + (f"{UNREADABLE}{reason}\x00",)],
                                 f"{schema}, {BAD_COLUMN} string")


_READ_FAILURE = re.compile(r"Encountered error while reading file (\S+?)\.?\s")
_CAUSE = re.compile(r"Caused by: [\w.$]+: ([^\n]*)")


@contextmanager
def read_failures(sources: Sequence[str]) -> Iterator[None]:
    """Spark's failure to read a file (a corrupt or truncated gzip file) as the InputError
    that names it: as in ``sources`` where one of them is that file, else by its path."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001  (Py4JJavaError: a JVM exception)
        failed = _READ_FAILURE.search(str(exc))
        if failed is None:
            raise
        causes = _CAUSE.findall(str(exc))
        cause = causes[-1].strip() if causes else "unreadable"
        uri = failed.group(1)
        source = next((s for s in sources if _same_file(s, uri)), _local_path(uri))
        what = "corrupt or truncated gzip file" if uri.endswith(".gz") else "cannot read file"
        raise InputError(f"{what} ({cause})", source=source) from None


def _same_file(source: str, uri: str) -> bool:
    return source == uri or os.path.abspath(source) == _local_path(uri)


def _local_path(uri: str) -> str:
    """A file URI's path (``file:///tmp/run.gz``: ``/tmp/run.gz``); any other URI as it is."""
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def _problem(order: str, reason, text):
    """The bad column's text of a problem (``reason``, ``text``: columns)."""
    from pyspark.sql import functions as F

    return F.concat(F.lit(order), reason, F.lit("\x00"), text)


def _whole(pattern: str) -> str:
    """A Java regular expression matching all of a text as ``pattern`` (``\\z``: Java's ``$``
    also matches before a last U+0085, U+2028 or U+2029, which are line terminators to it)."""
    return f"^(?:{pattern})\\z"


def _fields():
    """The columns of a data line: its fields (array of strings) and its trimmed text."""
    from pyspark.sql import functions as F

    line = F.col("line")
    return F.split(line, r"[ \t]+"), line


def _data_lines(spark, path: str):
    """The file's lines, trimmed, without blank and comment lines (column ``line``); those
    with a NUL byte kept, to be refused."""
    from pyspark.sql import functions as F

    text = _reader(spark).text(path)
    line = F.regexp_replace(F.col("value"), r"^[ \t\r]+|[ \t\r]+\z", "")
    data = (F.col("line") != "") & ~F.col("line").startswith("#")
    return text.select(line.alias("line")).where(data | F.col("line").contains("\x00"))


def _run_tag(spark, path: str) -> str | None:
    """The tag (sixth field) of the run's first data line (a small Spark job); None where
    there is none or it cannot be read (the evaluation reports why, in its turn)."""
    from pyspark.sql import functions as F

    try:
        with read_failures([path]):
            first = _data_lines(spark, path).limit(1).select(F.split("line", r"[ \t]+")).first()
    except InputError:
        return None
    if first is None or len(first[0]) < 6:
        return None
    return first[0][5]


def _format(path: str, format: str) -> str:
    from ..errors import InputError

    if format not in FORMATS:
        raise InputError(f"input format must be one of {', '.join(FORMATS)}", source=str(path),
                         value=str(format))
    if format != "auto":
        return format
    return "parquet" if is_parquet_path(path) else "trec"


def columns_of(df) -> dict[str, Any]:
    """``{column: Spark data type}`` of a DataFrame."""
    return {f.name: f.dataType for f in df.schema.fields}
