"""The command line with ``--engine spark``: TREC text (plain, gzip, with comments, tabs, CRLF
and text after the tag) and Parquet read by Spark, and every output format compared with the
in-memory engine's output of ``rankwise evaluate`` on the same files.

``evaluate_from_args`` is called with the arguments the ``evaluate`` command parses plus the
engine options, then printed by the CLI's own ``render``: what ``rankwise evaluate --engine
spark`` prints once the command is wired to it.
"""

from __future__ import annotations

import argparse
import json

import pandas as pd
import pytest

import rankwise
from rankwise import cli
from rankwise.spark.commands import add_engine_options, evaluate_from_args
from tests.helpers import write
from tests.spark.frames import collection_frames

MEASURES = ["P@5", "AP", "nDCG@10", "RR", "Bpref", "NumRet", "gm_map", "IPrec@0.5"]


def trec_files(tmp_path):
    run, qrels = collection_frames(21, num_queries=50)
    other = run.assign(score=(10 - run["score"]).round(2))
    lines = ["# a comment line, then a blank one", ""]
    lines += [f"{q}\tQ0  {d} {i + 1} {s!r} bm25 extra text\r"
              for i, (q, d, s) in enumerate(run.itertuples(index=False))]
    paths = {"run": write(tmp_path, "bm25.run", "\n".join(lines) + "\n"),
             "other": write(tmp_path, "dense.run.gz", "".join(
                 f"{q} Q0 {d} 1 {s!r} dense\n" for q, d, s in other.itertuples(index=False)),
                 compress=True),
             "qrels": write(tmp_path, "qrels.txt", "".join(
                 f"{q} 0 {d} {g}\n" for q, d, g in qrels.itertuples(index=False)))}
    return paths


def spark_args(argv, engine=("--engine", "spark", "--spark-master", "local[2]")):
    args = cli._parser().parse_args(argv)
    extra = argparse.ArgumentParser()
    add_engine_options(extra)
    for key, value in vars(extra.parse_args(list(engine))).items():
        setattr(args, key, value)
    return args


@pytest.mark.parametrize("fmt, per_query", [("trec", True), ("table", False), ("json", True),
                                            ("csv", True), ("markdown", False)])
def test_every_output_format_as_in_memory(spark, tmp_path, capsys, fmt, per_query):
    paths = trec_files(tmp_path)
    argv = ["evaluate", paths["qrels"], paths["run"], paths["other"], "-m", *MEASURES,
            "-f", fmt, "-c", *(["-q"] if per_query else [])]
    assert cli.main(argv) == 0
    expected = capsys.readouterr().out
    args = spark_args(argv)
    result = evaluate_from_args(args, cli._conventions(args))
    got = cli.render(result, fmt, per_query)
    if fmt == "json":  # aggregates: see test_json_aggregates_within_1e12
        got, expected = json.loads(got), json.loads(expected)
        for whole in (got, expected):
            for system in whole["systems"].values():
                system.pop("aggregates")
    elif fmt == "csv":
        got_rows = [line.split(",") for line in got.splitlines()]
        want_rows = [line.split(",") for line in expected.splitlines()]
        assert [r[:2] for r in got_rows] == [r[:2] for r in want_rows]
        got = [r[2:] for r in got_rows[1:]]
        expected = [r[2:] for r in want_rows[1:]]  # per-query values: bit for bit
    assert got == expected


def test_json_aggregates_within_1e12(spark, tmp_path, capsys):
    paths = trec_files(tmp_path)
    argv = ["evaluate", paths["qrels"], paths["run"], "-m", *MEASURES, "-f", "json"]
    assert cli.main(argv) == 0
    expected = json.loads(capsys.readouterr().out)
    args = spark_args(argv)
    got = json.loads(cli.render(evaluate_from_args(args, cli._conventions(args)), "json", False))
    (name,) = expected["systems"]
    assert list(got["systems"]) == [name]  # the run's name is its tag, as in memory
    for m, v in expected["systems"][name]["aggregates"].items():
        assert got["systems"][name]["aggregates"][m] == pytest.approx(v, rel=1e-12)


def test_parquet_inputs_and_per_query_output(spark, tmp_path):
    run, qrels = collection_frames(22, num_queries=40)
    run.to_parquet(tmp_path / "run.parquet")
    qrels.to_parquet(tmp_path / "qrels.parquet")
    out = str(tmp_path / "per_query")
    argv = ["evaluate", str(tmp_path / "qrels.parquet"), str(tmp_path / "run.parquet"),
            "-m", *MEASURES]
    args = spark_args(argv, ("--engine", "spark", "--spark-per-query-output", out))
    result = evaluate_from_args(args, cli._conventions(args))
    memory = rankwise.evaluate(qrels, run, MEASURES)
    (name,) = result.systems
    assert name == "run.parquet"
    for m in memory.measures:
        assert result.mean(m) == pytest.approx(memory.mean(m), rel=1e-12)
    assert len(pd.read_parquet(out)) == memory.systems["run"].diagnostics["queries_evaluated"]


def test_parquet_inputs_with_their_own_column_names(spark, tmp_path):
    """Recommender output's (user, item, score) and (user, item, label): named with
    --query-column and its kin, the same numbers as the in-memory engine on the same files;
    a name the file does not have is an error naming the file and its columns."""
    from rankwise.errors import InputError

    run, qrels = collection_frames(23, num_queries=30)
    run.rename(columns={"query": "user", "doc": "item"}).to_parquet(tmp_path / "recs.parquet")
    qrels.rename(columns={"query": "user", "doc": "item", "relevance": "label"}).to_parquet(
        tmp_path / "held_out.parquet")
    argv = ["evaluate", str(tmp_path / "held_out.parquet"), str(tmp_path / "recs.parquet"),
            "-m", *MEASURES, "--query-column", "user", "--doc-column", "item",
            "--relevance-column", "label"]
    args = spark_args(argv)
    result = evaluate_from_args(args, cli._conventions(args))
    memory = rankwise.evaluate(qrels, run, MEASURES)
    for m in memory.measures:
        assert result.mean(m) == pytest.approx(memory.mean(m), rel=1e-12)
    args = spark_args(argv[:-2])  # the judgments' grade column left unnamed
    with pytest.raises(InputError, match=r"qrels Parquet data has no column 'relevance' "
                                         r"\(columns: user, item, label\); name its relevance "
                                         r"column \(--relevance-column") as error:
        evaluate_from_args(args, cli._conventions(args))
    assert error.value.source == str(tmp_path / "held_out.parquet")
    args = spark_args(argv + ["--score-column", "rating"])
    with pytest.raises(InputError, match=r"run Parquet data has no column 'rating' \(columns: "
                                         r"user, item, score\); name its score column "
                                         r"\(--score-column") as error:
        evaluate_from_args(args, cli._conventions(args))
    assert error.value.source == str(tmp_path / "recs.parquet")


@pytest.mark.parametrize("kind, text, message", [
    ("run", "q1 Q0 d1 1 0.5 tag\nq1 Q0 d2 0.4\n", ("expected 6 fields 'qid Q0 docid rank "
                                                   "score tag', got 4 (got 'q1 Q0 d2 0.4')")),
    ("run", "q1 Q0 d1 1 high tag\n", ("expected a number for the score in field 'score' "
                                      "(got 'high')")),
    ("qrels", "q1 0 d1 1\nq1 0 d2 1 x y\n", ("expected 4 fields 'qid iter docid rel', got 6; "
                                              "this looks like a run file passed as qrels "
                                              "(got 'q1 0 d2 1 x y')")),
    ("qrels", "q1 0 d1 one\n", "expected an integer relevance grade in field 'rel' (got 'one')"),
    ("run", b"q1 Q0 d1 1 0.5 tag\nq1 Q0 d\xff 2 0.4 tag\n",
     "not valid UTF-8 text (or a U+FFFD replacement character) (got 'q1 Q0 d\ufffd 2 0.4 tag')"),
    ("qrels", b"q1 0 d\xff 1\n", "not valid UTF-8 text (or a U+FFFD replacement character) "
                                "(got 'q1 0 d\ufffd 1')"),
    # numbers as the in-memory reader reads them, not as Java does (2.0f, 0x1p3, +1)
    ("run", "q1 Q0 d1 1 2.0f tag\n", "expected a number for the score in field 'score' "
                                      "(got '2.0f')"),
    ("qrels", "q1 0 d1 +1\n", "expected an integer relevance grade in field 'rel' (got '+1')"),
])
def test_bad_lines_name_the_file_and_the_line(spark, tmp_path, kind, text, message):
    good = {"run": "q1 Q0 d1 1 0.5 tag\n", "qrels": "q1 0 d1 1\n"}
    paths = {k: write(tmp_path, f"{k}.txt", text if k == kind else good[k]) for k in good}
    args = spark_args(["evaluate", paths["qrels"], paths["run"], "-m", "P@5"])
    with pytest.raises(rankwise.InputError) as caught:
        evaluate_from_args(args, cli._conventions(args))
    assert str(caught.value) == f"{paths[kind]}: {message}"


@pytest.mark.parametrize("column", ["query", "doc", "score"])
def test_a_null_names_the_file(spark, tmp_path, column):
    run = pd.DataFrame({"query": ["q1", "q1"], "doc": ["d1", "d2"], "score": [2.0, 1.0]})
    run[column] = run[column].astype(object)
    run.loc[1, column] = None
    path = str(tmp_path / "run.parquet")
    run.to_parquet(path)
    qrels = write(tmp_path, "qrels.txt", "q1 0 d1 1\n")
    args = spark_args(["evaluate", qrels, path, "-m", "P@1"])
    with pytest.raises(rankwise.InputError) as caught:
        evaluate_from_args(args, cli._conventions(args))
    assert caught.value.source == path and caught.value.value == "null"



def test_a_master_spark_cannot_start_on_is_one_error_line(spark, tmp_path):
    """``--spark-master bogus``: Spark's gateway exits, and the command says so in one line
    with exit status 2 (it ended in a PySparkRuntimeError traceback). A process of its own:
    a session already started here would be reused whatever the master."""
    import subprocess
    import sys

    qrels = write(tmp_path, "qrels.txt", "q1 0 a 1\n")
    run = write(tmp_path, "run.txt", "q1 Q0 a 1 1.0 t\n")
    done = subprocess.run([sys.executable, "-m", "rankwise", "evaluate", "--engine", "spark",
                           "--spark-master", "bogus", qrels, run, "-m", "map"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("rankwise: error: spark: Spark did not start with master 'bogus' (")
    assert "Traceback" not in done.stderr
