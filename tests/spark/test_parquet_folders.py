"""Parquet folders read by the Spark engine from the files the in-memory reader reads: those of
plain sub-folders at any depth, ``key=value`` folder names giving columns (ids as the names'
text), files skipped for their names counted in the diagnostics, and the same refusals."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

import rankwise
from rankwise import cli
from rankwise.spark.commands import evaluate_from_args
from tests.helpers import parquet_folder
from tests.spark.test_io_cli import spark_args

MEASURES = ["AP", "P@5", "nDCG@10"]
RUN = pa.table({"query": ["q1", "q1", "q2", "q3", "q3"], "doc": ["a", "b", "c", "e", "f"],
                "score": [2.0, 1.0, 1.0, 3.0, 1.0]})
QRELS = pa.table({"query": ["q1", "q1", "q2", "q3"], "doc": ["a", "b", "c", "f"],
                  "relevance": [1, 2, 1, 1]})


def _both(qrels: str, run: str) -> tuple[dict, dict]:
    """The JSON of ``rankwise evaluate QRELS RUN -q`` from each engine."""
    argv = ["evaluate", qrels, run, "-m", *MEASURES, "-q", "-f", "json"]
    memory = rankwise.evaluate(qrels, {"sys": run}, MEASURES, per_query=True)
    args = spark_args(argv)
    spark = evaluate_from_args(args, cli._conventions(args))
    got, want = json.loads(cli.render(spark, "json", True)), json.loads(memory.to_json())
    for whole in (got, want):
        (system,) = whole["systems"].values()
        whole["systems"] = system  # the run's name: the folder's either way
        system.pop("name", None)
        system["aggregates"] = {m: round(v, 12) for m, v in system["aggregates"].items()}
    return got, want


def test_plain_sub_folders_and_skipped_files_as_in_memory(spark, tmp_path):
    """Spark's own reader read only the files of the folder and of its key=value sub-folders
    (here 2 of the run's 5 rows) and counted no skipped file; now it reads the files the
    in-memory reader reads and both count the skipped ones holding rows."""
    run = parquet_folder(tmp_path / "run", {
        "part-0.parquet": RUN.slice(0, 2), "sub/part-1.parquet": RUN.slice(2, 1),
        "a/b/part-2.parquet": RUN.slice(3), "_part-9.parquet": RUN,
        "_temporary/0/part-3.parquet": RUN, "_SUCCESS": b""})
    qrels = parquet_folder(tmp_path / "qrels", {
        "part-0.parquet": QRELS.slice(0, 3), "more/part-1.parquet": QRELS.slice(3),
        ".old.parquet": QRELS})
    got, want = _both(qrels, run)
    assert got == want
    diagnostics = got["systems"]["diagnostics"]
    assert (diagnostics["run_rows"], diagnostics["run_files_skipped"],
            diagnostics["qrels_files_skipped"]) == (5, 2, 1)
    assert diagnostics["examples"]["qrels_files_skipped"] == [".old.parquet (4 rows)"]


def test_key_value_folders_give_ids_as_their_text(spark, tmp_path):
    """query=007 is the query '007' in memory; Spark's reader took it for the number 7, so
    the run's queries matched no judgment. Values given by folder names are numbers."""
    run = parquet_folder(tmp_path / "run", {
        "query=007/part-0.parquet": RUN.slice(0, 2).drop(["query"]),
        "query=12/x/part-0.parquet": RUN.slice(2, 1).drop(["query"])})
    qrels = parquet_folder(tmp_path / "qrels", {
        f"relevance={grade}/part-0.parquet": pa.table({"query": [q], "doc": [d]})
        for grade, q, d in ((1, "007", "a"), (2, "007", "b"), (1, "12", "c"))})
    got, want = _both(qrels, run)
    assert got == want
    assert got["systems"]["diagnostics"]["queries_evaluated"] == 2


def test_a_folder_refused_as_in_memory(spark, tmp_path):
    """A column both in a file and in its folder's name, and a folder with no file to read,
    are refused with the in-memory reader's words (Spark read the folder's value, or failed
    with its own message)."""
    qrels = parquet_folder(tmp_path / "qrels", {"part-0.parquet": QRELS})
    for name, files in {"twice": {"query=q1/a.parquet": RUN},
                        "empty": {"_SUCCESS": b"", "_a.parquet": RUN}}.items():
        run = parquet_folder(tmp_path / name, files)
        with pytest.raises(rankwise.InputError) as memory:
            rankwise.evaluate(qrels, run, MEASURES)
        args = spark_args(["evaluate", qrels, run, "-m", *MEASURES])
        with pytest.raises(rankwise.InputError) as error:
            evaluate_from_args(args, cli._conventions(args))
        assert (error.value.reason, error.value.source) == (memory.value.reason,
                                                            memory.value.source)


@pytest.mark.parametrize("conventions", [{"duplicates": "first"}, {"duplicates": "last"},
                                         {"ties": "input_order"}])
def test_a_folder_rows_in_the_order_of_its_files(spark, tmp_path, conventions):
    """Spark reads a folder's largest files first: a doc given in a small file and again in
    a larger one after it (by path) was kept from the wrong file."""
    from rankwise import spark as rs

    small = pa.table({"query": ["q1"], "doc": ["x"], "score": [1.0]})
    large = pa.table({"query": ["q1"] * 3, "doc": ["x", "y", "z"], "score": [5.0, 1.0, 1.0]})
    if "ties" in conventions:  # every doc tied, each once
        small = pa.table({"query": ["q1"], "doc": ["w"], "score": [1.0]})
        large = large.set_column(2, "score", pa.array([1.0] * 3))
    run = parquet_folder(tmp_path / "run", {"a.parquet": small, "b.parquet": large})
    qrels = pa.table({"query": ["q1", "q1"], "doc": ["x", "z"], "relevance": [1, 1]})
    path = parquet_folder(tmp_path / "qrels", {"q.parquet": qrels})
    memory = rankwise.evaluate(path, {"sys": run}, MEASURES, per_query=True, **conventions)
    df, _ = rs.read_run(spark, run)
    result = rs.evaluate({"sys": df}, rs.read_qrels(spark, path), MEASURES, per_query=True,
                         **conventions).collect()
    for m in MEASURES:
        assert result.systems["sys"].values[m].tolist() == memory.systems["sys"].values[m].tolist()
    assert result.systems["sys"].diagnostics == memory.systems["sys"].diagnostics


#: A Hadoop checksum file (header "crc\0", 512 bytes per checksum) whose checksum fits no data.
STALE_CRC = b"crc\x00\x00\x00\x02\x00" + b"\x12\x34\x56\x78" * 4


def test_a_stale_crc_checksum_file_is_ignored_as_in_memory(spark, tmp_path):
    """Hadoop verified the .crc file beside a local file it reads: a stale one (the file
    rewritten by another tool) failed the evaluation with a Java traceback (ChecksumException)
    in a Parquet folder, a Parquet file and a TREC file alike; the in-memory reader ignores
    .crc files and reads the data, and so does Spark now."""
    run = parquet_folder(tmp_path / "run", {"part-0.parquet": RUN,
                                            ".part-0.parquet.crc": STALE_CRC})
    parquet_folder(tmp_path / "q", {"qrels.parquet": QRELS, ".qrels.parquet.crc": STALE_CRC})
    qrels = str(tmp_path / "q" / "qrels.parquet")
    got, want = _both(qrels, run)
    assert got == want
    text = tmp_path / "run.txt"
    text.write_text("".join(f"{q} Q0 {d} 1 {s} sys\n"
                            for q, d, s in zip(*RUN.to_pydict().values())))
    (tmp_path / ".run.txt.crc").write_bytes(STALE_CRC)
    got, want = _both(qrels, str(text))
    assert got == want
