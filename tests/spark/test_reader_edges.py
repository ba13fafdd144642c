"""Edges of TREC text where the Spark readers once read otherwise than the in-memory readers,
each found by tests/spark/test_reader_fuzz.py: the file read by both readers, or evaluated by
both engines through the command line, must give the same rows, or an error naming the same
file and line (Spark quotes the line instead of numbering it: docs/spark.md, "Limits")."""

from __future__ import annotations

import gzip

import pytest

import rankwise
from rankwise import cli
from rankwise.io import trec
from rankwise.spark import io as spark_io
from rankwise.spark.commands import evaluate_from_args
from tests.helpers import write
from tests.spark.test_io_cli import spark_args

QRELS = "q1 0 d1 1\nq1 0 d2 0\n"
RUN = "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 1.0 sys\n"


def read_by_both(spark, path: str, kind: str):
    """The rows of a file as each reader reads it: (query, doc, score or grade) and, for a run,
    its ranks (None where the reader drops the rank column)."""
    if kind == "run":
        memory = trec.read_run(path)
        df, _ = spark_io.read_run(spark, path, name="x")
        spark_rows = df.collect()
    else:
        memory = trec.read_qrels(path)
        spark_rows = spark_io.read_qrels(spark, path).collect()
    queries = memory.query_dict.to_pylist()
    values = memory.score if kind == "run" else memory.grade
    memory_rows = list(zip([queries[c] for c in memory.query_code], memory.docs.to_pylist(),
                           values.tolist()))
    assert all(r[spark_io.BAD_COLUMN] is None for r in spark_rows)
    got = [tuple(r)[:3] for r in spark_rows]
    if kind == "run":
        ranks = [r["rank"] for r in spark_rows]
        memory_ranks = None if memory.rank is None else memory.rank.tolist()
        return (got, None if None in ranks else ranks), (memory_rows, memory_ranks)
    return got, memory_rows


def errors_of_both(tmp_path, qrels: str | bytes, run: str | bytes, run_name: str = "run.txt"):
    """The InputError of each engine on the same files (the command line's paths)."""
    paths = [write(tmp_path, "qrels.txt", qrels), write(tmp_path, run_name, run)]
    with pytest.raises(rankwise.InputError) as memory:
        rankwise.evaluate(*paths, ["P@5"])
    return memory.value, spark_error(paths)


def spark_error(paths: list[str]) -> rankwise.InputError:
    """The InputError of ``rankwise evaluate QRELS RUN --engine spark``."""
    args = spark_args(["evaluate", *paths, "-m", "P@5"])
    with pytest.raises(rankwise.InputError) as error:
        evaluate_from_args(args, cli._conventions(args))
    return error.value


def test_a_line_ending_in_a_unicode_line_separator(spark, tmp_path):
    """Java's ``$`` also matches before a last U+0085, U+2028 or U+2029: the blank before a
    field made of one of them was trimmed, and the line lost that field."""
    path = write(tmp_path, "run.txt", "q1 Q0 d1 1 2.0 \u2029\nq1 Q0 d2 2 1.0 \u0085\n")
    spark_rows, memory_rows = read_by_both(spark, path, "run")
    assert spark_rows == memory_rows
    memory, spark_error = errors_of_both(tmp_path, "q1 0 d1 1\nq1 0 d2 \u2028\n", RUN)
    assert memory.reason == spark_error.reason == \
        "expected an integer relevance grade in field 'rel'"
    assert memory.value == spark_error.value == "\u2028"


def result_of_both(tmp_path, qrels: str | bytes, run: str | bytes):
    """Each engine's result on the same files (the command line's paths)."""
    paths = [write(tmp_path, "qrels.txt", qrels), write(tmp_path, "run.txt", run)]
    args = spark_args(["evaluate", *paths, "-m", "P@5"])
    return rankwise.evaluate(*paths, ["P@5"]), evaluate_from_args(args, cli._conventions(args))


def test_a_rank_that_is_no_64_bit_integer_drops_the_rank_column(spark, tmp_path):
    """The in-memory reader reads ranks as 64-bit integers without a sign and drops the
    column otherwise; Spark kept such ranks, and counted the queries whose ranks contradict
    their scores. Ranks beyond 32 bits are kept by both (the in-memory reader once dropped
    them, which hid the contradictions)."""
    for rank, kept in [("+1", False), ("99999999999999999999", False), ("2147483648", True),
                       ("-2147483649", True)]:
        run = f"q1 Q0 d1 2 2.0 sys\nq1 Q0 d2 {rank} 1.0 sys\n"
        spark_rows, memory_rows = read_by_both(spark, write(tmp_path, "run.txt", run), "run")
        assert spark_rows == memory_rows and (memory_rows[1] is not None) == kept, rank
        memory, spark_result = result_of_both(tmp_path, QRELS, run)
        contradicts = int(kept and rank.startswith("-"))  # rank -2147483649 above rank 2
        assert spark_result.diagnostics["sys"]["queries_rank_contradicts_score"] == \
            memory.diagnostics["sys"]["queries_rank_contradicts_score"] == contradicts, rank


def test_bytes_not_utf8_outside_the_fields_read_are_skipped(spark, tmp_path):
    """The in-memory reader checks the text of the fields it reads: bytes that are not UTF-8
    in Q0 or iter, the tag or text after it are skipped; Spark refused the whole line."""
    run = write(tmp_path, "run.txt", b"q1 Q0\xff d1 1 2.0 sys\nq1 Q0 d2 2 1.0 s\xc3 x\xff\n")
    spark_rows, memory_rows = read_by_both(spark, run, "run")
    assert spark_rows == memory_rows
    qrels = write(tmp_path, "qrels.txt", b"q1 0\xed\xa0\x80 d1 1\n")
    assert read_by_both(spark, qrels, "qrels") == ([("q1", "d1", 1.0)],) * 2
    memory, spark_error = errors_of_both(tmp_path, QRELS, b"q1 Q0 d1 1 2.0 sys\nq1 Q0\xff 1.0\n")
    assert memory.reason.startswith("not valid UTF-8") and spark_error.reason.startswith(
        "not valid UTF-8") and spark_error.value == "q1 Q0\ufffd 1.0"


MANY_BAD = "".join(f"q{i} Q0 d1 1 {f'x{i}' if i % 3 else '1'} sys\n" for i in range(5, 44))


@pytest.mark.parametrize("qrels, run, blamed, value", [
    (QRELS, MANY_BAD, "run", "x5"),  # the first bad line of the file, not Spark's first
    # a file is read whole, the judgments first: a run's score that is not finite (read)
    # before the judgments' conflict (found when they are indexed), before the run's rows
    (QRELS + "q1 0 d1 0\n", "q1 Q0 d1 1 nan sys\n", "run", "nan"),
    ("# only a comment\n", MANY_BAD, "qrels", None),  # judgments without a row
])
def test_the_first_problem_of_the_input_is_reported(spark, tmp_path, qrels, run, blamed, value):
    """The in-memory engine reports the first problem it meets, reading the judgments, then
    the runs, each from its first line to its last; Spark reported the first it met in its
    grouping of the rows by query."""
    memory, spark_error = errors_of_both(tmp_path, qrels, run)
    assert memory.source == spark_error.source == str(tmp_path / f"{blamed}.txt")
    assert memory.value == spark_error.value == value


@pytest.mark.parametrize("qrels, run, blamed, line", [
    (QRELS, "q1 Q0 d1 1 2.0 sys\nq1 Q0 d\x002 2 1.0 sys\n", "run", "q1 Q0 d\x002 2 1.0 sys"),
    (QRELS + "# a comment \x00\n", RUN, "qrels", "# a comment \x00"),
    # before a line that does not parse, as the in-memory reader checks the whole text first
    (QRELS, "q1 Q0 d1 1 high sys\nq1 Q0 d2 2 1.0 sys\x00\n", "run", "q1 Q0 d2 2 1.0 sys\x00"),
])
def test_a_nul_byte_anywhere_is_refused(spark, tmp_path, qrels, run, blamed, line):
    """The in-memory reader refuses a file holding a NUL byte, in a comment line too; Spark
    read it into an id, or skipped the comment."""
    memory, spark_error = errors_of_both(tmp_path, qrels, run)
    assert memory.source == spark_error.source == str(tmp_path / f"{blamed}.txt")
    assert memory.reason == spark_error.reason == "not a text file (contains NUL bytes)"
    assert spark_error.value == line  # the line, where the in-memory error gives its number


def test_an_id_with_spaces_quoted_as_in_csv_is_refused(spark, tmp_path):
    """The in-memory reader refuses a run line with more than six fields and a quote in its
    first three (an id with spaces quoted as in CSV), before any line that does not parse;
    Spark read the quote into the doc id and the rest as text after the tag."""
    run = 'q1 Q0 d1 1 high sys\nq1 Q0 "doc two" 2 1.0 sys\n'
    memory, spark_error = errors_of_both(tmp_path, QRELS, run)
    assert memory.source == spark_error.source == str(tmp_path / "run.txt")
    assert memory.reason == spark_error.reason and "quoted ids" in memory.reason
    assert memory.value == spark_error.value == 'q1 Q0 "doc two" 2 1.0 sys'


TRUNCATED = gzip.compress(RUN.encode() * 50, mtime=0)[:-8]


@pytest.mark.parametrize("qrels, blamed", [(QRELS, "run.gz"), ("q1 0 d1 one\n", "qrels.txt")])
def test_a_truncated_gzip_file_is_named(spark, tmp_path, qrels, blamed):
    """Spark failed with a Java exception; now the error names the file, after the problems
    of the files read before it."""
    memory, spark_error = errors_of_both(tmp_path, qrels, TRUNCATED, "run.gz")
    assert memory.source == spark_error.source == str(tmp_path / blamed)
    if blamed == "run.gz":
        assert memory.reason.startswith("corrupt or truncated gzip file (")
        assert spark_error.reason.startswith("corrupt or truncated gzip file (")


@pytest.mark.parametrize("name, data, how", [
    ("run.gz", RUN.encode(), "not gzip-compressed, but its name ends in .gz"),
    ("run.txt", gzip.compress(RUN.encode(), mtime=0),  # the same bytes (and test id) in
     "gzip-compressed, but its name does not end in .gz"),  # every test process
    ("missing.txt", None, "file not found"),
])
def test_a_file_spark_cannot_read_as_named_is_refused(spark, tmp_path, name, data, how):
    """Spark takes the compression from a file's name (docs/spark.md): a text file named .gz
    failed with a Java exception, and gzip named otherwise was read as text and refused for
    its bytes; a missing file failed with Spark's own exception."""
    run = write(tmp_path, name, data) if data is not None else str(tmp_path / name)
    error = spark_error([write(tmp_path, "qrels.txt", QRELS), run])
    assert error.source == run and error.reason.startswith(how)


def test_a_run_without_a_judged_query_before_its_duplicates(spark, tmp_path):
    """The in-memory engine looks for a query in common before it joins the run (where it
    finds a document ranked twice); Spark reported the duplicate."""
    memory, spark_error = errors_of_both(tmp_path, QRELS, "x1 Q0 d1 1 2 sys\nx1 Q0 d1 2 1 sys\n")
    assert memory.source == spark_error.source == str(tmp_path / "run.txt")
    assert memory.reason == spark_error.reason == (
        f"no query in common with the judgments in {tmp_path / 'qrels.txt'} (run queries such "
        "as 'x1', judged queries such as 'q1')")


def test_a_quoted_id_is_told_by_the_fields_the_parse_splits(spark, tmp_path):
    """A line is refused as holding a quoted id where it has more than six fields split on
    spaces and tabs, as the parse splits them, and a quote in its first three: Unicode spaces
    split nothing. The in-memory reader once split such a line as Python splits words, on its
    careful path only (a blank line sent the file there): a tag holding U+00A0 was refused
    beside a blank line and read without one."""
    for text in ('q1 Q0 d"q 1 2.0 sys\u00a0x\n', 'q1 Q0 d"q 1 2.0 sys\u00a0x\n\n'):
        path = write(tmp_path, "run.txt", text)
        spark_rows, memory_rows = read_by_both(spark, path, "run")
        assert spark_rows == memory_rows and memory_rows[0] == [("q1", 'd"q', 2.0)]
    path = write(tmp_path, "run.txt", 'q1 Q0 d"q 1 2.0 sys \u0085\nq1 Q0 d2 2 1.0 sys\n')
    with pytest.raises(rankwise.InputError, match="quoted ids"):
        trec.read_run(path)
    (row, _) = spark_io.read_run(spark, path, name="x")[0].collect()
    assert row[spark_io.BAD_COLUMN].startswith("2ids cannot contain spaces")

@pytest.mark.parametrize("qrels, run, blamed, reason", [
    (QRELS, "", "run", "empty file"),
    (QRELS, " \t\n\n", "run", "empty file"),
    (QRELS, "# only a comment\n\n", "run",
     "no run lines: the file holds only blank or comment lines"),
    ("", RUN, "qrels", "empty file"),
    ("# only a comment\n", RUN, "qrels",
     "no qrels lines: the file holds only blank or comment lines"),
], ids=["empty-run", "blank-run", "comment-run", "empty-qrels", "comment-qrels"])
def test_a_file_without_a_data_line_as_in_memory(spark, tmp_path, qrels, run, blamed, reason):
    """Spark said "no run rows: the run is empty" (or "no judgments: the judgments are
    empty") where the in-memory reader tells an empty file from one of comments only."""
    memory, spark_error = errors_of_both(tmp_path, qrels, run)
    assert memory.source == spark_error.source == str(tmp_path / f"{blamed}.txt")
    assert memory.reason == spark_error.reason == reason


def test_an_empty_parquet_run_as_in_memory(spark, tmp_path):
    """An empty Parquet run was "no query in common with the judgments (run queries such as
    'None', ...)"; the in-memory engine says that nothing is ranked."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    run = str(tmp_path / "run.parquet")
    pq.write_table(pa.table({"query": pa.array([], pa.string()), "doc": pa.array([], pa.string()),
                             "score": pa.array([], pa.float64())}), run)
    paths = [write(tmp_path, "qrels.txt", QRELS), run]
    with pytest.raises(rankwise.InputError) as memory:
        rankwise.evaluate(*paths, ["P@5"])
    error = spark_error(paths)
    assert str(error) == str(memory.value) == f"{run}: nothing ranked: the run holds no rows"
