"""Parquet paths: the same numbers, diagnostics and warnings as the same data in TREC text,
from the API and the CLI, in one pass and streamed; a folder of Parquet files (its
sub-folders, Hive partition folders, files skipped for their names counted); the rank
column; clear errors naming the file for missing columns, unreadable files, missing ids, bad
scores, a folder without a file to read and (streamed) a run not grouped by query."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rankwise
from rankwise.errors import InputError
from rankwise.io.parquet import is_parquet_path
from tests.helpers import memory_short, parquet_folder, spy

MEASURES = ["P@5", "R@20", "AP", "nDCG@10", "nDCG", "RR", "Rprec", "Bpref", "ERR@10", "NumRet"]


def _collection(seed: int = 0):
    """Judgments and a run (rank column included) with ties, grades, unjudged documents,
    one-sided queries and integer-like ids."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(120):
        docs = rng.choice(300, size=int(rng.integers(1, 30)), replace=False)
        if q % 13 != 4:
            qrels += [(f"q{q}", f"d{d}", int(rng.integers(0, 4))) for d in docs[::2]]
        if q % 11 != 6:
            scores = sorted(rng.integers(0, 8, len(docs)).astype(float), reverse=True)
            run += [(f"q{q}", f"d{d}", i + 1, s) for i, (d, s) in enumerate(zip(docs, scores))]
    return qrels, run


def _write(tmp_path, qrels, run):
    """The data as TREC text and as Parquet; returns (qrels txt, run txt, qrels pq, run pq)."""
    q_txt, r_txt = tmp_path / "qrels.txt", tmp_path / "run.txt"
    q_txt.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels))
    r_txt.write_text("".join(f"{q} Q0 {d} {r} {s} sys\n" for q, d, r, s in run))
    q_pq, r_pq = tmp_path / "qrels.parquet", tmp_path / "sys.parquet"
    pq.write_table(pa.table({"query": [q for q, _, _ in qrels], "doc": [d for _, d, _ in qrels],
                             "relevance": [g for _, _, g in qrels]}), q_pq)
    pq.write_table(pa.table({"query": [r[0] for r in run], "doc": [r[1] for r in run],
                             "rank": [r[2] for r in run], "score": [r[3] for r in run]}),
                   r_pq, row_group_size=500)  # several row groups: chunked columns
    return str(q_txt), str(r_txt), str(q_pq), str(r_pq)


def _system(result):
    data = json.loads(result.to_json())["systems"]
    (system,) = data.values()
    return system


def test_parquet_paths_give_what_the_same_text_gives(tmp_path):
    q_txt, r_txt, q_pq, r_pq = _write(tmp_path, *_collection())
    text = rankwise.evaluate(q_txt, r_txt, MEASURES, per_query=True)
    parquet = rankwise.evaluate(q_pq, r_pq, MEASURES, per_query=True)
    assert list(parquet.systems) == ["sys.parquet"]  # named after the file
    assert _system(parquet) == _system(text)
    assert _system(parquet)["diagnostics"]["queries_only_in_run"] > 0
    mixed = rankwise.evaluate(q_txt, {"text": r_txt, "parquet": r_pq}, MEASURES)
    assert mixed.systems["text"].aggregates == mixed.systems["parquet"].aggregates


def test_a_folder_of_parquet_files_and_integer_ids(tmp_path):
    qrels = pa.table({"query": [1, 1, 2], "doc": [10, 11, 20], "relevance": [1, 0, 2]})
    folder = tmp_path / "run"
    folder.mkdir()
    pq.write_table(pa.table({"query": [1, 1], "doc": [11, 10], "score": [2.0, 1.0]}),
                   folder / "part-0.parquet")
    pq.write_table(pa.table({"query": [2], "doc": [20], "score": [5.0]}),
                   folder / "part-1.parquet")
    pq.write_table(qrels, tmp_path / "qrels.pq")
    assert is_parquet_path(folder) and is_parquet_path(tmp_path / "qrels.pq")
    assert not is_parquet_path(tmp_path / "qrels.txt")
    result = rankwise.evaluate(str(tmp_path / "qrels.pq"), str(folder), ["RR", "P@1"],
                               per_query=True)
    assert result.per_query() == {"1": {"RR": 0.5, "P@1": 0.0}, "2": {"RR": 1.0, "P@1": 1.0}}


def test_rank_column_contradicting_the_scores_is_reported(tmp_path):
    pq.write_table(pa.table({"query": ["q"], "doc": ["a"], "relevance": [1]}),
                   tmp_path / "qrels.parquet")
    pq.write_table(pa.table({"query": ["q", "q"], "doc": ["a", "b"], "rank": [2, 1],
                             "score": [3.0, 1.0]}), tmp_path / "run.parquet")
    result = rankwise.evaluate(str(tmp_path / "qrels.parquet"), str(tmp_path / "run.parquet"),
                               ["RR"])
    assert result.mean("RR") == 1.0  # ordered by score, as trec_eval does
    assert next(iter(result.systems.values())).diagnostics[
        "queries_rank_contradicts_score"] == 1


def test_other_column_names_through_to_run_and_to_qrels(tmp_path):
    pq.write_table(pa.table({"qid": ["q"], "docno": ["a"], "label": [1]}), tmp_path / "q.parquet")
    pq.write_table(pa.table({"qid": ["q"], "docno": ["a"], "sim": [0.5]}), tmp_path / "r.parquet")
    qrels = rankwise.to_qrels(str(tmp_path / "q.parquet"), query="qid", doc="docno",
                              relevance="label")
    run = rankwise.to_run(str(tmp_path / "r.parquet"), query="qid", doc="docno", score="sim")
    assert rankwise.evaluate(qrels, run, ["P@1"]).mean("P@1") == 1.0


@pytest.mark.parametrize("table, message", [
    ({"query": ["q"], "docid": ["a"], "score": [1.0]},
     "run Parquet data has no column 'doc' (columns: query, docid, score)"),
    ({"query": ["q", None], "doc": ["a", "b"], "score": [1.0, 2.0]}, "missing query id"),
    ({"query": ["q", "q"], "doc": ["a", "b"], "score": [1.0, float("nan")]},
     "score must be a finite number"),
    ({"query": [["q"], ["q"]], "doc": ["a", "b"], "score": [1.0, 2.0]},  # was a KeyError
     "query ids must be strings or integers (got 'list<element: string>')"),
])
def test_bad_parquet_runs_name_the_file(tmp_path, table, message):
    pq.write_table(pa.table({"query": ["q"], "doc": ["a"], "relevance": [1]}),
                   tmp_path / "qrels.parquet")
    pq.write_table(pa.table(table), tmp_path / "bad.parquet")
    with pytest.raises(InputError, match=re.escape(message)) as error:
        rankwise.evaluate(str(tmp_path / "qrels.parquet"), str(tmp_path / "bad.parquet"), ["AP"])
    assert error.value.source == str(tmp_path / "bad.parquet")


@pytest.mark.parametrize("doc, second, message", [
    ("a", {"doc": ["b"], "score": [True]}, "column 'score' holds bool here but numbers in "),
    ("a", {"doc": ["b"], "score": ["1.5"]}, "column 'score' holds strings here but numbers in"),
    ("a", {"doc": ["b"]}, "no column 'score' (columns: query, doc), which "),
    (1, {"doc": [2.0], "score": [1.0]}, "column 'doc' holds floats here but integers in "),
], ids=["bool", "string", "missing", "float ids"])
def test_the_files_of_a_parquet_folder_must_agree(tmp_path, doc, second, message):
    """A folder is read as its first file's schema: another file's booleans and numbers
    written as text were taken as numbers, its integral float ids as integers, a column it
    lacks as nulls (refused as missing scores at its first row)."""
    from rankwise.stream import evaluate_stream

    folder = tmp_path / "run"
    folder.mkdir()
    pq.write_table(pa.table({"query": ["q1"], "doc": [doc], "score": [2.0]}),
                   folder / "part-0.parquet")
    pq.write_table(pa.table({"query": ["q2"], **second}), folder / "part-1.parquet")
    for evaluate in (rankwise.evaluate, evaluate_stream):
        with pytest.raises(InputError, match=re.escape(message)) as error:
            evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, str(folder), ["AP"])
        assert error.value.source == str(folder / "part-1.parquet")


def test_unreadable_and_missing_parquet_files(tmp_path):
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="cannot read as Parquet"):
        rankwise.to_run(str(tmp_path / "broken.parquet"))
    with pytest.raises(InputError, match="file not found"):
        rankwise.to_qrels(str(tmp_path / "absent.parquet"))


@pytest.mark.parametrize("chunk_bytes", [200, 4000, 1 << 20])
def test_a_parquet_run_streams_to_the_in_memory_result(tmp_path, chunk_bytes):
    """Chunks of whole queries from Parquet batches (which cut queries anywhere): the same
    JSON as one pass, for a file of several row groups and for a folder of files."""
    from rankwise.stream import evaluate_stream

    _, _, q_pq, r_pq = _write(tmp_path, *_collection(1))
    folder = tmp_path / "parts"
    folder.mkdir()
    table = pq.read_table(r_pq)
    for i, start in enumerate(range(0, table.num_rows, 700)):
        pq.write_table(table.slice(start, 700), folder / f"part-{i:02d}.parquet")
    for run in (r_pq, str(folder)):
        expected = rankwise.evaluate(q_pq, run, MEASURES, per_query=True).to_json()
        assert evaluate_stream(q_pq, run, MEASURES, per_query=True,
                               chunk_bytes=chunk_bytes).to_json() == expected


def test_a_parquet_run_with_its_own_column_names_streams(tmp_path):
    """Recommender output keeps (user, item, score): the streamed run's columns are named as
    ``to_run`` names them, with the same result as in memory; a wrong name is an error naming
    the file, the columns it has and the parameters."""
    from rankwise.stream import evaluate_stream

    _, _, q_pq, r_pq = _write(tmp_path, *_collection(3))
    renamed = str(tmp_path / "renamed.parquet")
    pq.write_table(pq.read_table(r_pq).rename_columns(["user", "item", "rank", "value"]),
                   renamed, row_group_size=300)
    names = {"query": "user", "doc": "item", "score": "value"}
    expected = rankwise.evaluate(q_pq, {"sys": rankwise.to_run(renamed, **names)}, MEASURES,
                                 per_query=True).to_json()
    streamed = evaluate_stream(q_pq, {"sys": renamed}, MEASURES, per_query=True,
                               chunk_bytes=2000, **names)
    assert streamed.to_json() == expected
    assert streamed.systems["sys"].diagnostics["queries_rank_contradicts_score"] == \
        json.loads(expected)["systems"]["sys"]["diagnostics"]["queries_rank_contradicts_score"]
    with pytest.raises(InputError, match=r"no column 'query' \(columns: user, item, rank, "
                                         r"value\); name the columns with query=") as error:
        evaluate_stream(q_pq, renamed, ["AP"])
    assert error.value.source == renamed


def test_evaluate_takes_the_run_column_names(tmp_path, monkeypatch):
    """rankwise.evaluate names a run's columns as to_run does (Parquet paths, Arrow tables,
    several runs read ahead) with the numbers of the default names, and streams a renamed
    Parquet run too large for one pass with the same JSON; a wrong name is the error that
    names the file, its columns and the parameters."""
    from rankwise import stream

    _, _, q_pq, r_pq = _write(tmp_path, *_collection(4))
    renamed = str(tmp_path / "renamed.parquet")
    table = pq.read_table(r_pq).rename_columns(["user", "item", "rank", "value"])
    pq.write_table(table, renamed, row_group_size=300)
    names = {"query": "user", "doc": "item", "score": "value"}
    expected = rankwise.evaluate(q_pq, {"sys": rankwise.to_run(renamed, **names)}, MEASURES,
                                 per_query=True).to_json()
    for run in (renamed, table):
        got = rankwise.evaluate(q_pq, {"sys": run}, MEASURES, per_query=True, **names)
        assert got.to_json() == rankwise.evaluate(
            q_pq, {"sys": rankwise.to_run(run, **names)}, MEASURES, per_query=True).to_json()
        assert got.aggregates == rankwise.evaluate(q_pq, {"sys": r_pq}, MEASURES).aggregates
    both = rankwise.evaluate(q_pq, {"sys": renamed, "again": renamed}, MEASURES, **names)
    assert both.systems["sys"].aggregates == both.systems["again"].aggregates
    with pytest.raises(InputError, match=r"no column 'query' \(columns: user, item, rank, "
                                         r"value\); name the columns with query="):
        rankwise.evaluate(q_pq, renamed, ["AP"])
    memory_short(monkeypatch)
    monkeypatch.setattr(stream, "DEFAULT_CHUNK_BYTES", 2000)
    streamed = spy(monkeypatch, stream, "evaluate_file")
    assert rankwise.evaluate(q_pq, {"sys": renamed}, MEASURES, per_query=True,
                             **names).to_json() == expected
    assert [call[-1] for call in streamed] == [("user", "item", "value")]


def test_cli_names_the_parquet_columns(tmp_path, capsys):
    """--query-column and its kin read (user, item, score) and (user, item, label) files in
    memory, streamed, in ``compare``, ``explain`` and ``report``, with the numbers of the same
    data under the default names; TREC text inputs beside them are unaffected."""
    from rankwise.cli import main

    q_txt, _, q_pq, r_pq = _write(tmp_path, *_collection(4))
    recs, held_out = str(tmp_path / "recs.parquet"), str(tmp_path / "held_out.parquet")
    pq.write_table(pq.read_table(r_pq).rename_columns(["user", "item", "rank", "value"]), recs)
    pq.write_table(pq.read_table(q_pq).rename_columns(["user", "item", "label"]), held_out)
    names = ["--query-column", "user", "--doc-column", "item", "--score-column", "value",
             "--relevance-column", "label"]

    def cli(*argv):
        assert main(list(argv)) == 0
        return capsys.readouterr().out

    expected = cli("evaluate", q_pq, r_pq, "-m", *MEASURES, "-q", "-f", "trec")
    renamed = expected.replace("\tsys.parquet", "\trecs.parquet")
    for stream in ([], ["--stream"]):
        assert cli("evaluate", held_out, recs, "-m", *MEASURES, "-q", "-f", "trec", *names,
                   *stream) == renamed
        assert cli("evaluate", q_txt, recs, "-m", *MEASURES, "-q", "-f", "trec", *names,
                   *stream) == renamed  # text judgments: no names to apply
    scores = pa.array(np.arange(len(_collection(4)[1])) % 7.0)
    pq.write_table(pq.read_table(recs).set_column(3, "value", scores), tmp_path / "two.parquet")
    pq.write_table(pq.read_table(r_pq).set_column(3, "score", scores), tmp_path / "two_.parquet")
    default = cli("compare", q_pq, r_pq, str(tmp_path / "two_.parquet"), "-m", "AP",
                  "--permutations", "200", "-f", "json")
    got = cli("compare", held_out, recs, str(tmp_path / "two.parquet"), "-m", "AP",
              "--permutations", "200", "-f", "json", *names)
    assert got.replace("recs.parquet", "sys.parquet").replace("two.parquet", "two_.parquet") \
        == default
    query = pq.read_table(q_pq).column("query")[0].as_py()
    explained = cli("explain", held_out, recs, "--query", query, "-m", "nDCG@5", "-f", "json",
                    *names)
    assert explained.replace('"recs.parquet"', '"sys.parquet"') == cli(
        "explain", q_pq, r_pq, "--query", query, "-m", "nDCG@5", "-f", "json")
    assert cli("report", held_out, recs, "-o", str(tmp_path / "r.html"), *names).startswith(
        "report written to")
    assert main(["evaluate", held_out, recs, "-m", "AP", *names[:4], *names[6:]]) == 2
    assert re.search(r"recs.parquet: run Parquet data has no column 'score' \(columns: user, "
                     r"item, rank, value\); .*on the command line: --query-column, "
                     r"--doc-column, --score-column", capsys.readouterr().err)


def test_a_parquet_run_not_grouped_by_query_is_refused_when_streamed(tmp_path):
    from rankwise.stream import evaluate_stream

    pq.write_table(pa.table({"query": ["a", "b"], "doc": ["x", "y"], "relevance": [1, 1]}),
                   tmp_path / "qrels.parquet")
    pq.write_table(pa.table({"query": ["a", "b", "a"], "doc": ["x", "y", "z"],
                             "score": [3.0, 2.0, 1.0]}), tmp_path / "run.parquet")
    with pytest.raises(InputError, match="grouped") as error:
        evaluate_stream(str(tmp_path / "qrels.parquet"), str(tmp_path / "run.parquet"), ["AP"],
                        chunk_bytes=40)
    assert error.value.source == str(tmp_path / "run.parquet")


def test_cli_reads_parquet_like_text(tmp_path):
    q_txt, r_txt, q_pq, r_pq = _write(tmp_path, *_collection(2))

    def cli(qrels, run):
        out = subprocess.run([sys.executable, "-m", "rankwise", "evaluate", qrels, run, "-m",
                              *MEASURES, "--per-query", "--format", "trec"],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return out.stdout

    # the run is named after its file (as with --engine spark), the text run after its tag
    assert cli(q_pq, r_pq).replace("\tsys.parquet", "\tsys") == cli(q_txt, r_txt)


def test_a_null_score_is_reported_at_the_same_row_streamed_or_not(tmp_path):
    from rankwise.stream import evaluate_stream

    pq.write_table(pa.table({"query": ["a", "b"], "doc": ["x", "y"], "relevance": [1, 1]}),
                   tmp_path / "qrels.parquet")
    pq.write_table(pa.table({"query": ["a", "a", "b"], "doc": ["x", "z", "y"],
                             "score": [3.0, None, 1.0]}), tmp_path / "run.parquet")
    qrels, run = str(tmp_path / "qrels.parquet"), str(tmp_path / "run.parquet")
    messages = []
    for evaluate in (lambda: rankwise.evaluate(qrels, run, ["AP"]),
                     lambda: evaluate_stream(qrels, run, ["AP"], chunk_bytes=40)):  # 1-row batches
        with pytest.raises(InputError, match="score must be a finite number") as error:
            evaluate()
        messages.append(str(error.value))
    assert messages[0] == messages[1] and "row 1" in messages[0]


@pytest.mark.parametrize("column", ["user", "item"])
def test_a_missing_id_is_reported_at_the_same_row_streamed_or_not(tmp_path, column):
    """Streamed, a missing id was named at its row within its batch (row 0 of a one-row
    batch) and after its column ('missing user id'), unlike in memory."""
    from rankwise.stream import evaluate_stream

    table = {"user": ["a", "a", "a", "b"], "item": ["x", "y", "z", "w"],
             "value": [3.0, 2.0, 1.0, 0.5]}
    table[column][3] = None
    path = str(tmp_path / "run.parquet")
    pq.write_table(pa.table(table), path)
    names = {"query": "user", "doc": "item", "score": "value"}
    messages = []
    for evaluate in (rankwise.evaluate, evaluate_stream):
        with pytest.raises(InputError) as error:
            evaluate({"a": {"x": 1}}, path, ["AP"], **names,
                     **({"chunk_bytes": 40} if evaluate is evaluate_stream else {}))
        messages.append(str(error.value))
    what = "query" if column == "user" else "doc"
    assert messages == [f"{path}, row 3: missing {what} id"] * 2


@pytest.mark.parametrize("doc, query, score", [
    (["a", "b", "c", "d", None], ["q", "q", "r", "s", "s"], [3.0, np.nan, 1.0, 1.0, 0.5]),
    (["a", None, "c", "d", "e"], ["q", "q", "r", None, "s"], [3.0, 2.0, 1.0, 1.0, 0.5]),
    (["a", "b", "c", "d", "e"], ["q", "q", "r", "s", None], [3.0, np.inf, 1.0, 1.0, 0.5]),
], ids=["score then doc id", "doc id then query id", "score then query id"])
def test_a_parquet_run_with_two_problems_reports_the_one_of_one_pass(tmp_path, doc, query,
                                                                      score):
    """One pass reads every query id, then every doc id, then every score, and checks the
    scores finite last; streamed batch by batch, the first problem of the file was raised."""
    from rankwise.stream import evaluate_stream

    path = str(tmp_path / "run.parquet")
    pq.write_table(pa.table({"query": query, "doc": doc, "score": score}), path)
    messages = []
    for chunk_bytes in (None, 40, 80):
        with pytest.raises(InputError) as error:
            if chunk_bytes is None:
                rankwise.evaluate({"q": {"a": 1}}, path, ["AP"])
            else:
                evaluate_stream({"q": {"a": 1}}, path, ["AP"], chunk_bytes=chunk_bytes)
        messages.append(str(error.value))
    assert messages[1:] == messages[:1] * 2


@pytest.mark.parametrize("cores", [1, 2, 3, 16])
def test_row_groups_read_side_by_side_keep_the_file_order(tmp_path, monkeypatch, cores):
    """A file's row groups are split into contiguous ranges, one thread each: the columns are
    pyarrow's own reading of the file, row for row, for any number of cores (more or fewer
    than the row groups)."""
    from rankwise.io import parquet

    qrels, run = _collection(seed=3)
    *_, r_pq = _write(tmp_path, qrels, run)  # row groups of 500 rows
    groups = pq.ParquetFile(r_pq).metadata.num_row_groups
    assert groups >= 3
    monkeypatch.setattr(pa, "cpu_count", lambda: cores)  # the threads the reader uses
    columns = ["query", "doc", "score", "rank"]
    table = parquet._read_file(r_pq, columns, "query")
    expected = pq.read_table(r_pq, columns=columns)
    assert table.num_rows == expected.num_rows == len(run)
    for name in columns:
        assert table.column(name).cast(expected.column(name).type).to_pylist() == \
            expected.column(name).to_pylist(), name


def _folder(tmp_path, name: str, *tables: pa.Table) -> str:
    folder = tmp_path / name
    folder.mkdir()
    for i, table in enumerate(tables):
        pq.write_table(table, folder / f"part-{i}.parquet")
    return str(folder)


#: Score columns of a folder's two files, and the scores read: the files held them as
#: different types, each refused with Arrow's cast message or (float32 and float64, decimal
#: and float) silently changed.
MIXED_SCORES = {
    "int64, float64": (pa.array([3, 2], pa.int64()), pa.array([1.5, 0.5])),
    "float64, int64": (pa.array([3.5, 2.0]), pa.array([1, 0], pa.int64())),
    "int64 beyond 2^53, float64": (pa.array([(1 << 60) + 1, 2]), pa.array([1.5, 0.5])),
    "float64, int64 beyond 2^53": (pa.array([1.5, 0.5]), pa.array([(1 << 60) + 1, 2])),
    "int8, int64": (pa.array([3, 2], pa.int8()), pa.array([300, 5])),
    "float32, float64": (pa.array([2.5, 1.5], pa.float32()),
                         pa.array([0.1234567891, 0.1234567892])),
    "decimal, float64": (pa.array([3, 2], pa.decimal128(5, 0)), pa.array([1.5, 0.5])),
}


@pytest.mark.parametrize("first, second", MIXED_SCORES.values(), ids=MIXED_SCORES)
def test_a_folder_whose_files_hold_scores_as_different_numbers_reads_them_all(tmp_path, first,
                                                                               second):
    """A folder was read as its first file's schema: the others' scores cast to it, which
    refused a float beside integers (Arrow's cast message) and rounded float64 scores beside
    float32 ones, a 1.5 beside decimal(5, 0) ones to 2. Each file's scores are now read as
    float64, as one file's are: the same numbers, in memory, streamed and on the command
    line, as the folder's rows in one float64 file."""
    from rankwise.stream import evaluate_stream

    queries, docs = [["q1", "q1"], ["q2", "q2"]], [["a", "b"], ["c", "d"]]
    folder = _folder(tmp_path, "run", *(pa.table({"query": q, "doc": d, "score": s})
                                        for q, d, s in zip(queries, docs, (first, second))))
    scores = [float(v) for v in first.to_pylist() + second.to_pylist()]
    one = tmp_path / "one.parquet"
    pq.write_table(pa.table({"query": sum(queries, []), "doc": sum(docs, []),
                             "score": scores}), one)
    assert rankwise.to_run(folder).score.tolist() == scores
    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"c": 0, "d": 1}}
    expected = rankwise.evaluate(qrels, {"sys": str(one)}, MEASURES, per_query=True).to_json()
    assert rankwise.evaluate(qrels, {"sys": folder}, MEASURES, per_query=True).to_json() == \
        expected
    for chunk_bytes in (40, 1 << 20):
        assert evaluate_stream(qrels, {"sys": folder}, MEASURES, per_query=True,
                               chunk_bytes=chunk_bytes).to_json() == expected


def test_a_folder_whose_files_hold_grades_as_integers_and_floats_reads_them_all(tmp_path):
    """Integer grades in one file, fractional ones in another: read as one file of either
    is (they were refused with Arrow's cast message)."""
    first = pa.table({"query": ["q1", "q1"], "doc": ["a", "b"],
                      "relevance": pa.array([2, 0], pa.int32())})
    second = pa.table({"query": ["q2", "q2"], "doc": ["c", "d"], "relevance": [0.5, 1.0]})
    folder = _folder(tmp_path, "qrels", first, second)
    assert rankwise.to_qrels(folder).grade.tolist() == [2.0, 0.0, 0.5, 1.0]
    one = _folder(tmp_path, "one", pa.concat_tables([first.cast(second.schema), second]))
    run = {"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 2.0, "d": 1.0}}
    assert rankwise.evaluate(folder, run, MEASURES).to_json() == \
        rankwise.evaluate(one, run, MEASURES).to_json()


@pytest.mark.parametrize("first, second, docs", [
    (pa.array([1, 2], pa.int32()), pa.array([1 << 40, 5]), [1, 2, 1 << 40, 5]),
    (pa.array([1, 2]), pa.array([(1 << 64) - 1, 5], pa.uint64()),
     ["1", "2", str((1 << 64) - 1), "5"]),
    (pa.array([1, 2]), pa.array([1 << 70, 5], pa.decimal128(38, 0)),
     ["1", "2", str(1 << 70), "5"]),
], ids=["int32, int64", "int64, uint64", "int64, decimal"])
def test_a_folder_whose_files_hold_integer_ids_as_different_types_reads_them(tmp_path, first,
                                                                           second, docs):
    """Integer doc ids of different types in a folder's files (refused with Arrow's cast
    message where the first file's type could not hold the others'): int64, or their
    decimal strings beside uint64 or decimal ones, as one file of each reads; with a
    string column of another string type and a score column of another number type, read
    file by file as well."""
    from rankwise.stream import evaluate_stream

    folder = _folder(
        tmp_path, "run",
        pa.table({"query": ["q1", "q1"], "doc": first, "score": pa.array([2, 1])}),
        pa.table({"query": pa.array(["q2", "q2"], pa.large_string()), "doc": second,
                  "score": [2.0, 1.0]}))
    run = rankwise.to_run(folder)
    assert run.docs.to_pylist() == docs and run.query_ids() == ["q1", "q2"]
    qrels = {"q1": {"2": 1}, "q2": {str(docs[3]): 1}}
    expected = rankwise.evaluate(qrels, {"sys": {"q1": {str(d): s for d, s in zip(
        docs[:2], (2.0, 1.0))}, "q2": {str(d): s for d, s in zip(docs[2:], (2.0, 1.0))}}},
        MEASURES, per_query=True)
    for got in (rankwise.evaluate(qrels, {"sys": folder}, MEASURES, per_query=True),
                evaluate_stream(qrels, {"sys": folder}, MEASURES, per_query=True,
                                chunk_bytes=40)):
        assert got.per_query() == expected.per_query()


def test_a_folder_of_mixed_score_types_keeps_the_rank_column(tmp_path):
    """Read file by file, a rank column (int32 here, int64 there) is still checked, and a
    file without one leaves it unread, as a folder read as one dataset does."""
    first = pa.table({"query": ["q1", "q1"], "doc": ["a", "b"], "score": pa.array([1, 2]),
                      "rank": pa.array([1, 2], pa.int32())})
    second = pa.table({"query": ["q2"], "doc": ["c"], "score": [0.5],
                       "rank": pa.array([1], pa.int64())})
    qrels = {"q1": {"a": 1}, "q2": {"c": 1}}
    result = rankwise.evaluate(qrels, _folder(tmp_path, "ranked", first, second), ["AP"])
    assert result.systems["ranked"].diagnostics["queries_rank_contradicts_score"] == 1
    assert rankwise.to_run(_folder(tmp_path, "unranked", first, second.drop(["rank"]))
                           ).rank is None


def test_cli_reads_a_folder_mixing_integer_and_float_scores(tmp_path):
    """``rankwise evaluate`` with such a folder, in one pass and streamed: the numbers of the
    same rows as TREC text (the command refused the folder with Arrow's cast message)."""
    folder = _folder(tmp_path, "sys",
                     pa.table({"query": ["q1", "q1"], "doc": ["a", "b"], "score": [3, 2]}),
                     pa.table({"query": ["q2", "q2"], "doc": ["c", "d"], "score": [1.5, 0.5]}))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 2\nq2 0 d 1\n")
    text = tmp_path / "sys.txt"
    text.write_text("q1 Q0 a 1 3 sys\nq1 Q0 b 2 2 sys\nq2 Q0 c 1 1.5 sys\nq2 Q0 d 2 0.5 sys\n")

    def cli(run, *options):
        out = subprocess.run([sys.executable, "-m", "rankwise", "evaluate", str(qrels), run,
                              "-m", *MEASURES, "--per-query", "--format", "trec", *options],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return out.stdout

    assert cli(folder) == cli(folder, "--stream") == cli(str(text))


@pytest.mark.parametrize("column", ["query", "doc"])
def test_an_empty_id_in_parquet_is_refused_at_its_row_streamed_or_not(tmp_path, column):
    """A Parquet file, like a frame, may hold an empty id, which a TREC file cannot: refused
    naming the file and the row, in one pass and streamed (it was read as an id)."""
    from rankwise.stream import evaluate_stream

    table = {"query": ["a", "a", "b", "b"], "doc": ["x", "y", "x", "z"],
             "score": [2.0, 1.0, 2.0, 1.0]}
    table[column][2] = ""
    run = tmp_path / "run.parquet"
    pq.write_table(pa.table(table), run, row_group_size=1)
    for evaluate in (rankwise.evaluate, evaluate_stream):
        with pytest.raises(InputError, match=f"^{re.escape(str(run))}, row 2: empty {column} "
                                             "id: an id must hold at least one character"):
            evaluate({"a": {"x": 1}}, str(run), ["AP"])


#: A run written as one file, and the judgments of its queries.
RUN = pa.table({"query": ["q1", "q1", "q2", "q3"], "doc": ["a", "b", "c", "d"],
                "score": [2.0, 1.0, 1.0, 1.0]})
QRELS = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}, "q3": {"e": 1}}


def _every_way(qrels, run, measures=MEASURES, monkeypatch=None) -> list[str]:
    """The JSON of the run (a path) evaluated in one pass, streamed in one-row batches and
    whole, and (with ``monkeypatch``) streamed by rankwise.evaluate itself."""
    from rankwise.stream import evaluate_stream

    got = [rankwise.evaluate(qrels, {"sys": run}, measures, per_query=True).to_json()]
    got += [evaluate_stream(qrels, {"sys": run}, measures, per_query=True,
                            chunk_bytes=chunk).to_json() for chunk in (40, 1 << 20)]
    if monkeypatch is not None:
        with monkeypatch.context() as patch:
            memory_short(patch)
            streamed = spy(patch, rankwise.stream, "evaluate_file")
            got.append(rankwise.evaluate(qrels, {"sys": run}, measures,
                                         per_query=True).to_json())
            assert streamed, "not streamed"
    return got


def test_a_folder_whose_files_are_all_in_sub_folders_is_read(tmp_path, monkeypatch, capsys):
    """Partitioned output (part1/a.parquet, part2/b.parquet, nothing at the top) was not
    taken for Parquet and went to the TREC reader ('is a directory, expected a file'), while
    a folder with one file at the top was read with its sub-folders: now recognised, its
    rows counted and read alike (in one pass, streamed, to_run, the command line), in the
    order of the files' paths, as pyarrow reads a folder."""
    from rankwise.cli import main
    from rankwise.io.parquet import folder_files, parquet_rows

    folder = parquet_folder(tmp_path / "nested", {"part1/a.parquet": RUN.slice(0, 2),
                                          "part2/deeper/b.parquet": RUN.slice(2, 1),
                                          "part3/c.parquet": RUN.slice(3)})
    one = parquet_folder(tmp_path / "one", {"run.parquet": RUN})
    assert is_parquet_path(folder) and parquet_rows(folder) == 4
    assert [f[len(folder) + 1:] for f in folder_files(folder).data] == [
        "part1/a.parquet", "part2/deeper/b.parquet", "part3/c.parquet"]
    assert rankwise.to_run(folder).query_ids() == ["q1", "q2", "q3"]
    assert set(_every_way(QRELS, folder, monkeypatch=monkeypatch)) == {
        rankwise.evaluate(QRELS, {"sys": one}, MEASURES, per_query=True).to_json()}
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 2\nq2 0 c 1\nq3 0 e 1\n")
    outputs = []
    for run in (folder, one):
        assert main(["evaluate", str(qrels), run, "-m", "AP", "-q", "-f", "trec"]) == 0
        outputs.append(capsys.readouterr().out.replace("\tnested", "\tone"))
    assert outputs[0] == outputs[1]


def test_hive_partition_folders_give_the_columns_they_name(tmp_path, monkeypatch):
    """Spark's ``partitionBy("query")`` writes run/query=q1/part-0.parquet without a query
    column: the folder names give it, URL-decoded as Spark encodes them, for every row of
    their files (a run's ids, the judgments' grades as numbers); a key naming no column read
    (date=...) is not read. Such a folder was refused as 'is a directory', or read without
    the column."""
    run = RUN.append_column("rank", pa.array([1, 2, 1, 1]))
    folder = parquet_folder(tmp_path / "run", {
        "date=2024-01-01/query=q1/part-0.parquet": run.slice(0, 1).drop(["query"]),
        "date=2024-01-01/query=q1/part-1.parquet": run.slice(1, 1).drop(["query"]),
        "date=2024-01-02/query=q%3D2/part-0.parquet": run.slice(2, 1).drop(["query"]),
        "date=2024-01-02/query=q3/part-0.parquet": run.slice(3).drop(["query"]).set_column(
            1, "score", pa.array([1])),  # integer scores: the files read one by one
        "date=2024-01-02/query=q4/part-0.parquet": run.slice(0, 0).drop(["query"])})
    assert rankwise.to_run(folder).query_ids() == ["q1", "q=2", "q3"]
    qrels = {"q1": {"a": 1, "b": 2}, "q=2": {"c": 1}, "q3": {"e": 1}}
    one = parquet_folder(tmp_path / "one", {"run.parquet": run.set_column(
        0, "query", pa.array(["q1", "q1", "q=2", "q3"]))})
    expected = rankwise.evaluate(qrels, {"sys": one}, MEASURES, per_query=True).to_json()
    assert set(_every_way(qrels, folder, monkeypatch=monkeypatch)) == {expected}
    judged = parquet_folder(tmp_path / "qrels", {
        f"relevance={grade}/part-0.parquet": pa.table({"query": [q], "doc": [d]})
        for grade, q, d in ((1, "q1", "a"), (2, "q1", "b"), (0.5, "q2", "c"))})
    read = rankwise.to_qrels(judged)
    assert read.grade.tolist() == [0.5, 1.0, 2.0] and read.query_ids() == ["q2", "q1"]


@pytest.mark.parametrize("files, at, message", [
    ({"query=q1/a.parquet": RUN.slice(0, 2)}, "query=q1/a.parquet",
     "column 'query' is in the file and in its folder's name (query=...): give it in one "
     "place only"),
    ({"query=q1/a.parquet": RUN.slice(0, 2).drop(["query"]), "b.parquet": RUN.slice(2)},
     "b.parquet", "not in a query=... folder, as "),
    ({"query=q1/a.parquet": RUN.slice(0, 2).drop(["query"]),
      "query=q2/b.parquet": RUN.slice(2)}, "query=q2/b.parquet",
     "column 'query' is in the file and in its folder's name"),
    ({"query=__HIVE_DEFAULT_PARTITION__/a.parquet": RUN.drop(["query"])}, "query=__HIVE_"
     "DEFAULT_PARTITION__", "missing query (the folder name query=__HIVE_DEFAULT_PARTITION__ "
     "is Hive's null)"),
    ({"score=high/a.parquet": RUN.drop(["score"])}, "score=high",
     "score must be a number (in the folder name score=high)"),
    ({"query=a/query=b/a.parquet": RUN.drop(["query"])}, "query=a/query=b/a.parquet",
     "the folder names give 'query' twice (query=a and query=b)"),
], ids=["file and folder", "some files outside", "a later file holds it", "Hive null",
        "not a number", "twice"])
def test_hive_partition_folders_that_cannot_give_a_column_are_refused(tmp_path, files, at,
                                                                       message):
    """A column given both by a file and by its folder name, by the folder names of only
    some files, as Hive's null or a score that is no number is refused naming the file or
    the folder, in one pass and streamed (pyarrow's own reading refuses the first as
    'Unable to merge', Spark reads the folder's value in place of the file's)."""
    from rankwise.stream import evaluate_stream

    folder = parquet_folder(tmp_path / "run", files)
    for evaluate in (rankwise.evaluate, evaluate_stream):
        with pytest.raises(InputError, match=re.escape(message)) as error:
            evaluate(QRELS, folder, ["AP"])
        assert error.value.source == str(tmp_path / "run" / at)


def test_files_skipped_for_their_names_are_counted(tmp_path, monkeypatch, capsys):
    """Files and folders whose names start with _ or . are skipped, as pyarrow and Spark
    skip them, but those holding rows (_part-1.parquet, a _temporary attempt), unlike
    _SUCCESS, .crc checksums and the _metadata summary, are counted with examples in the
    diagnostics (in one pass, streamed, on the command line's summary line); their rows
    were left out without a word."""
    from rankwise.cli import main

    folder = parquet_folder(tmp_path / "run", {
        "part-0.parquet": RUN.slice(0, 3), "_part-1.parquet": RUN.slice(3),
        "_temporary/0/part-2.parquet": RUN, "_SUCCESS": b"", ".part-0.parquet.crc": b"crc",
        "sub/.hidden.parquet": RUN.slice(0, 0)})
    summary = pq.read_metadata(os.path.join(folder, "part-0.parquet"))  # it holds 3 rows
    summary.write_metadata_file(os.path.join(folder, "_metadata"))
    qrels_folder = parquet_folder(tmp_path / "qrels", {
        "part-0.parquet": pa.table({"query": ["q1", "q1", "q2", "q3"],
                                    "doc": ["a", "b", "c", "e"], "relevance": [1, 2, 1, 1]}),
        ".old.parquet": pa.table({"query": ["q9"], "doc": ["z"], "relevance": [1]})})
    assert is_parquet_path(folder) and rankwise.io.parquet.parquet_rows(folder) == 3
    results = _every_way(qrels_folder, folder, monkeypatch=monkeypatch)
    assert len(set(results)) == 1
    diagnostics = json.loads(results[0])["systems"]["sys"]["diagnostics"]
    assert (diagnostics["run_rows"], diagnostics["run_files_skipped"],
            diagnostics["qrels_files_skipped"]) == (3, 2, 1)
    assert diagnostics["examples"]["run_files_skipped"] == [
        "_part-1.parquet (1 row)", os.path.join("_temporary", "0", "part-2.parquet") + " (4 rows)"]
    assert diagnostics["examples"]["qrels_files_skipped"] == [".old.parquet (1 row)"]
    assert main(["evaluate", qrels_folder, folder, "-m", "AP"]) == 0
    assert "2 Parquet files of the run skipped (name starting with _ or .); 1 Parquet files " \
        "of the judgments skipped (name starting with _ or .)" in capsys.readouterr().err
    clean = rankwise.evaluate(QRELS, parquet_folder(tmp_path / "clean", {"a.parquet": RUN}), ["AP"])
    assert clean.diagnostics["clean"]["run_files_skipped"] == 0


@pytest.mark.parametrize("files, skipped", [
    ({"_part-0.parquet": RUN}, ": _part-0.parquet (4 rows))"),
    ({"_SUCCESS": b"", "_temporary/.keep": b""}, ")"),
    ({}, ")"),
], ids=["only _part-0.parquet", "only _SUCCESS", "empty"])
def test_a_folder_without_a_file_to_read_says_so(tmp_path, files, skipped):
    """A folder holding only files skipped for their names (or nothing) was refused as a
    run 'with no column query (columns: )', or as 'a directory, expected a file'."""
    from rankwise.stream import evaluate_stream

    folder = tmp_path / "run"
    folder.mkdir()
    parquet_folder(folder, files)
    expected = (f"{folder}: no Parquet files in the folder (files and folders whose names "
                f"start with _ or . are skipped, as pyarrow and Spark skip them{skipped}")
    for read in (rankwise.to_run, lambda path: rankwise.evaluate(QRELS, path, ["AP"]),
                 lambda path: evaluate_stream(QRELS, path, ["AP"])):
        with pytest.raises(InputError) as error:
            read(str(folder))
        assert str(error.value) == expected


def test_an_empty_parquet_run_says_nothing_was_ranked_streamed_or_not(tmp_path):
    """Streamed, an empty Parquet run said only 'no rows'."""
    from rankwise.stream import evaluate_stream

    path = str(tmp_path / "empty.parquet")
    pq.write_table(RUN.slice(0, 0), path)
    for evaluate in (rankwise.evaluate, evaluate_stream):
        with pytest.raises(InputError) as error:
            evaluate(QRELS, path, ["AP"])
        assert str(error.value) == f"{path}: nothing ranked: the run holds no rows"


@pytest.mark.parametrize("column", ["score", "doc"])
def test_a_column_to_read_that_two_columns_are_named_is_refused(tmp_path, capsys, column):
    """As a frame's: the in-memory read escaped as pyarrow's KeyError (the command line's
    exit status 1 and a traceback), the streamed one named pyarrow's schema error."""
    from rankwise.cli import main
    from rankwise.stream import evaluate_stream

    names = ["query", "doc", "score", column]
    table = pa.Table.from_arrays([pa.array(["q1"]), pa.array(["d1"]), pa.array([1.0]),
                                  pa.array([2.0] if column == "score" else ["d2"])], names=names)
    path = str(tmp_path / "run.parquet")
    pq.write_table(table, path)
    qrels = {"q1": {"d1": 1}}
    message = f"{path}: 2 columns are named {column!r}: the column to read must be the only " \
              "one of its name"
    for evaluate in (rankwise.evaluate, evaluate_stream):
        with pytest.raises(InputError) as info:
            evaluate(qrels, path, ["P@5"])
        assert str(info.value) == message
    qrels_file = tmp_path / "qrels.txt"
    qrels_file.write_text("q1 0 d1 1\n")
    for stream in ([], ["--stream"]):
        assert main(["evaluate", str(qrels_file), path, "-m", "P@5", *stream]) == 2
        assert capsys.readouterr().err == f"rankwise: error: {message}\n"


def test_parquet_judgments_missing_a_column_say_to_name_them_with_to_qrels(tmp_path):
    """evaluate's query= and doc= name the runs' columns and it takes no relevance=: the
    hint "name the columns with query=, doc= and relevance=" led nowhere for judgments."""
    pq.write_table(pa.table({"query": ["q"], "doc": ["a"], "label": [1]}), tmp_path / "q.parquet")
    with pytest.raises(InputError, match=r"qrels Parquet data has no column 'relevance' "
                                         r"\(columns: query, doc, label\); name the columns "
                                         r"with rankwise.to_qrels\(path, query=..., doc=..., "
                                         r"relevance=...\) \(on the command line"):
        rankwise.evaluate(str(tmp_path / "q.parquet"), {"q": {"a": 1.0}}, ["AP"])
