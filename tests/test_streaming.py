"""Streaming evaluation (rankwise.stream): chunk by chunk of whole queries, the same Result
as one in-memory pass, byte for byte; a clear error for runs not grouped by query; bounded
memory."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import rankwise
from rankwise.results import aggregate
from rankwise.stream import evaluate_stream
from tests.helpers import memory_short, spy, write

MEASURES = ["P@5", "P@10", "R@20", "AP", "AP@10", "nDCG@10", "nDCG", "RR", "Rprec", "Bpref",
            "gm_map", "Success@5", "ERR@10", "NumQ", "NumRelRet", "IPrec@0.2", "infAP", "rbp",
            "rbp_resid", "unj_5", "Judged@10", "binG", "utility", "Rprec_mult_0.60", "ndcg_rel",
            "Rndcg", "G"]
CHUNK_SIZES = [1, 300, 4096, 10 ** 9]  # one query per chunk ... everything in one chunk


def _write_collection(folder, seed: int = 3, queries: int = 60, sep: str = " ") -> tuple[str, str]:
    """A small seeded run and qrels: ties, unjudged and negative-grade documents, short lists,
    a stretch of run-only queries (whole chunks without a judged query), judged queries
    absent from the run (at the end of the qrels and in between), duplicate judgments."""
    rng = np.random.default_rng(seed)
    run_lines, qrels_lines = [], []
    for q in range(queries):
        qid = f"q{q:03d}"
        run_only = 20 <= q < 28 or q % 17 == 5
        in_run = q % 13 != 7
        depth = int(rng.integers(1, 30))
        docs = rng.choice(200, size=depth, replace=False)
        scores = np.sort(np.round(rng.uniform(0, 3, depth), 1))[::-1]
        if in_run:
            run_lines += [f"{qid}{sep}Q0{sep}d{d}{sep}{r + 1}{sep}{s:.1f}{sep}sys"
                          for r, (d, s) in enumerate(zip(docs, scores))]
        if not run_only:
            pool = np.union1d(docs[: depth // 2], rng.choice(200, size=8, replace=False))
            grades = rng.choice([-1, 0, 0, 1, 2, 3], size=len(pool))
            qrels_lines += [f"{qid} 0 d{d} {g}" for d, g in zip(pool, grades)]
            if q % 11 == 0 and len(pool):
                qrels_lines.append(f"{qid} 0 d{pool[0]} {grades[0]}")  # identical duplicate
    for extra in ("q900", "q901"):  # judged, never retrieved, at the end of the judgments
        qrels_lines += [f"{extra} 0 d1 1", f"{extra} 0 d2 0"]
    qrels_path, run_path = os.path.join(folder, "qrels.txt"), os.path.join(folder, "run.txt")
    with open(qrels_path, "w") as f:
        f.write("\n".join(qrels_lines) + "\n")
    with open(run_path, "w") as f:
        f.write("\n".join(run_lines) + "\n")
    return qrels_path, run_path


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    return _write_collection(tmp_path_factory.mktemp("stream"))


@pytest.mark.parametrize("chunk_bytes", CHUNK_SIZES)
def test_chunked_equals_one_pass_byte_for_byte(collection, chunk_bytes):
    qrels, run = collection
    one_pass = rankwise.evaluate(qrels, run, MEASURES, per_query=True).to_json()
    assert evaluate_stream(qrels, run, MEASURES, per_query=True,
                           chunk_bytes=chunk_bytes).to_json() == one_pass
    assert evaluate_stream(qrels, run, MEASURES, chunk_bytes=chunk_bytes).to_json() == \
        rankwise.evaluate(qrels, run, MEASURES).to_json()


@pytest.mark.parametrize("profile, overrides", [
    (None, {"missing_queries": "zero"}),
    (None, {"run_only_queries": "zero", "missing_queries": "zero"}),
    ("lenskit", {}),
    (None, {"max_depth": 7, "unjudged": "remove", "relevance_threshold": 2}),
    (None, {"ties": "expected", "no_relevant": "skip"}),
    (None, {"ties": "optimistic", "ideal": "retrieved"}),
    ("ranx", {}),
    ("ir_measures", {}),
    ("torchmetrics", {}),
])
@pytest.mark.parametrize("chunk_bytes", [1, 10 ** 9])
def test_chunked_equals_one_pass_under_conventions(collection, profile, overrides, chunk_bytes):
    qrels, run = collection
    measures = ["P@10", "AP", "nDCG@10", "RR", "R@20"]
    expected = rankwise.evaluate(qrels, run, measures, profile, per_query=True, **overrides)
    got = evaluate_stream(qrels, run, measures, profile, per_query=True,
                          chunk_bytes=chunk_bytes, **overrides)
    assert got.to_json() == expected.to_json()


def test_one_query_per_chunk_with_warnings_and_diagnostics(collection):
    qrels, run = collection
    expected = rankwise.evaluate(qrels, run, MEASURES, missing_queries="zero")
    got = evaluate_stream(qrels, run, MEASURES, missing_queries="zero", chunk_bytes=1)
    system = next(iter(got.systems.values()))
    assert system.warnings and system.warnings == next(iter(expected.systems.values())).warnings
    diag = system.diagnostics
    assert diag["queries_only_in_run"] > 0 and diag["queries_only_in_qrels_scored_zero"] > 0
    assert diag["qrels_duplicates_dropped"] > 0 and diag["negative_grades"] > 0
    assert diag == next(iter(expected.systems.values())).diagnostics


@pytest.mark.parametrize("text, expected", [
    (b"q1 Q0 a 1 1 s\nq1 Q0 b 2 0 s\nq2 Q0 a 1 1 s\n", 28),
    (b"q1 Q0 a 1 1 s\nq2 Q0 a 1 1 s\n# note\n\n  q2\tQ0 b 2 0 s\r\n", 14),
    (b"q1 Q0 a 1 1 s\n\n# q2 is next\nq2 Q0 a 1 1 s\n", 14),
    (b"q1 Q0 a 1 1 s\nq1 Q0 b 2 0 s\n", 0),  # one query: no cut
    (b"# only a comment\n\n", 0),
])
def test_text_blocks_are_cut_where_the_last_query_begins(text, expected):
    from rankwise.stream.readers import last_query_start

    assert last_query_start(text, len(text)) == expected
    # the lines of a carried query are not walked again: same cut from any line of it
    first = text.split(b" ", 1)[0]
    for known in range(len(text) + 1):
        carried = [line.split(None, 1)[0] for line in text[:known].split(b"\n")[:-1]
                   if line.strip() and not line.startswith(b"#")]
        if text[:known].endswith(b"\n") and set(carried) <= {first}:
            assert last_query_start(text, len(text), known) == expected, known


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("chunk_bytes", [1, 7, 40, 1000, 1 << 20])
def test_text_blocks_are_whole_queries_read_into_one_buffer(tmp_path, compressed, chunk_bytes):
    """The blocks (prefixes of one reused buffer) hold the file's text in order, each made of
    whole queries and numbered by its first line, whatever the read size: a query longer
    than many reads, a last line without a line break, gzip."""
    import gzip

    from rankwise.stream.readers import RunReader

    lines = [f"q{q} Q0 d{i} {i + 1} {100 - i} t" for q, n in ((1, 3), (2, 60), (3, 1), (4, 5))
             for i in range(n)]
    text = ("\n".join(lines)).encode()
    path = tmp_path / ("run.txt.gz" if compressed else "run.txt")
    path.write_bytes(gzip.compress(text) if compressed else text)
    blocks = [(bytes(text[:end]), line) for text, end, line in
              RunReader(str(path), chunk_bytes)._blocks()]  # copied: the buffer is reused
    assert b"".join(b for b, _ in blocks) == text + b"\n"
    first = 1
    for block, line in blocks:
        assert line == first and block.endswith(b"\n")
        first += block.count(b"\n")
    seen = [q for block, _ in blocks for q in dict.fromkeys(
        row.split()[0] for row in block.decode().splitlines())]
    assert seen == ["q1", "q2", "q3", "q4"]  # each query in one block, in file order
    assert len(blocks) >= 2  # the last query is carried to the end of the file


def test_a_small_file_is_read_into_a_buffer_of_its_size(tmp_path, monkeypatch):
    from rankwise.stream.readers import RunReader

    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 2 t\nq2 Q0 d1 1 2 t\n")
    reads = []
    real = RunReader._read_into
    monkeypatch.setattr(RunReader, "_read_into",
                        lambda self, handle, target: reads.append(len(target)) or
                        real(self, handle, target))
    assert len(list(RunReader(str(path), 64 << 20)._blocks())) == 2
    assert max(reads) <= path.stat().st_size + 1


def test_clean_text_is_never_parsed_slowly(collection, monkeypatch):
    """Blocks cut at query starts are parsed by pyarrow as they are (the last one too): the
    slow reader is for messy text only."""
    from rankwise.stream.readers import RunReader

    qrels, run = collection
    slow = spy(monkeypatch, RunReader, "_parse_slowly")
    for chunk_bytes in CHUNK_SIZES:
        evaluate_stream(qrels, run, ["AP"], chunk_bytes=chunk_bytes)
    assert not slow


def test_queries_in_any_order_and_lines_in_any_order_within_a_query(tmp_path, collection):
    qrels, run = collection
    lines = Path(run).read_text().splitlines()
    by_query: dict[str, list[str]] = {}
    for line in lines:
        by_query.setdefault(line.split()[0], []).append(line)
    rng = np.random.default_rng(0)
    shuffled = []
    for qid in rng.permutation(sorted(by_query)):
        block = by_query[qid]
        shuffled += [block[i] for i in rng.permutation(len(block))]
    path = tmp_path / "shuffled.txt"
    path.write_text("\n".join(shuffled) + "\n")
    for chunk_bytes in (1, 500, 10 ** 9):
        assert evaluate_stream(qrels, str(path), MEASURES, per_query=True,
                               chunk_bytes=chunk_bytes).to_json() == \
            rankwise.evaluate(qrels, str(path), MEASURES, per_query=True).to_json()


def test_gzip_messy_whitespace_comments_and_several_runs(tmp_path):
    qrels, run = _write_collection(tmp_path, seed=5, sep=" \t ")
    text = Path(run).read_text().splitlines()
    text.insert(40, "# a comment line")
    text.insert(100, "")
    messy = tmp_path / "messy.txt.gz"
    with gzip.open(messy, "wt") as f:
        f.write("\n".join(text) + "\r\n")
    runs = {"messy": str(messy), "plain": run}
    expected = rankwise.evaluate(qrels, runs, MEASURES, per_query=True).to_json()
    for chunk_bytes in (700, 10 ** 9):
        assert evaluate_stream(qrels, runs, MEASURES, per_query=True,
                               chunk_bytes=chunk_bytes).to_json() == expected


def test_shards_merge_exactly(collection, tmp_path):
    """Per-query values of disjoint shards of queries (as parallel or distributed workers
    would compute them) are those of one pass, and the aggregate of the merged values in
    run order is the one-pass aggregate, bit for bit."""
    qrels, run = collection
    lines = Path(run).read_text().splitlines()
    queries = list(dict.fromkeys(line.split()[0] for line in lines))
    shards = [set(queries[i::3]) for i in range(3)]
    whole = rankwise.evaluate(qrels, run, MEASURES, per_query=True)
    merged: dict[str, dict[str, float]] = {}
    for k, shard in enumerate(shards):
        path = tmp_path / f"shard{k}.txt"
        path.write_text("\n".join(line for line in lines if line.split()[0] in shard) + "\n")
        part = evaluate_stream(qrels, str(path), MEASURES, per_query=True, chunk_bytes=200)
        merged.update(part.per_query())
    assert merged == whole.per_query()
    in_run_order = [q for q in queries if q in merged]
    for m in MEASURES:
        measure = rankwise.parse_measure(m)
        values = np.array([merged[q][str(measure)] for q in in_run_order])
        assert aggregate(values, measure.spec.aggregate) == whole.mean(m)


def test_run_not_grouped_by_query_names_file_line_and_fix(tmp_path, collection):
    qrels, run = collection
    lines = Path(run).read_text().splitlines()
    moved = lines[0]  # a line of the first query, put after the others
    bad = tmp_path / "ungrouped.txt"
    bad.write_text("\n".join(lines[1:] + [moved]) + "\n")
    for chunk_bytes in (1, 10 ** 9):  # reappearing in a later chunk, and within one chunk
        with pytest.raises(rankwise.InputError) as caught:
            evaluate_stream(qrels, str(bad), ["AP"], chunk_bytes=chunk_bytes)
        error = caught.value
        assert error.source == str(bad) and error.line == len(lines)
        assert error.value == moved.split()[0]
        assert "sort the run by query" in str(error) and "in memory" in str(error)
    assert rankwise.evaluate(qrels, str(bad), ["AP"]).mean("AP") == \
        rankwise.evaluate(qrels, run, ["AP"]).mean("AP")


def test_bad_lines_report_the_files_own_line(tmp_path, collection):
    qrels, run = collection
    lines = Path(run).read_text().splitlines()
    for bad_line, message in ((f"{lines[150]}", "appears twice"),
                              ("q777 Q0 d1 1 nan sys", "finite"),
                              ("q777 Q0 d1 1", "expected 6 fields")):
        bad = tmp_path / "bad.txt"
        bad.write_text("\n".join(lines[:151] + [bad_line] + lines[151:]) + "\n")
        with pytest.raises(rankwise.InputError) as in_memory:
            rankwise.evaluate(qrels, str(bad), ["AP"])
        for chunk_bytes in (1, 2000, 10 ** 9):
            with pytest.raises(rankwise.InputError) as streamed:
                evaluate_stream(qrels, str(bad), ["AP"], chunk_bytes=chunk_bytes)
            assert str(streamed.value) == str(in_memory.value)
            assert message in str(streamed.value) and streamed.value.line == 152


def test_no_query_in_common_under_conventions_that_score_both_sides(tmp_path):
    """Under missing_queries="zero" with run_only_queries="zero" (the spark profile) a run
    without a judged query is evaluated, every query of either side scored, streamed or in
    one pass alike; under -c alone it is refused, as in one pass."""
    qrels = write(tmp_path, "qrels.txt", "1 0 3.0 1\n2 0 x 2\n")
    run = write(tmp_path, "run.txt", "0 Q0 1.0 1 0 t\n0 Q0 2.0 2 -1 t\n5 Q0 a 1 1 t\n")
    measures = ["P@3", "nDCG@3", "AP", "RR", "NumRet", "Judged@2", "RBPResid", "Hits"]
    in_memory = rankwise.evaluate(qrels, run, measures, conventions="spark", per_query=True)
    assert sorted(in_memory.per_query()) == ["0", "1", "2", "5"]
    assert in_memory.mean("P@3") == 0.0 and in_memory.mean("NumRet") == 3.0
    for chunk_bytes in (1, 20, 10 ** 9):
        streamed = evaluate_stream(qrels, run, measures, conventions="spark", per_query=True,
                                   chunk_bytes=chunk_bytes)
        assert streamed.to_json() == in_memory.to_json(), chunk_bytes
    with pytest.raises(rankwise.InputError) as refused:
        rankwise.evaluate(qrels, run, ["AP"], missing_queries="zero")
    assert "no query in common" in str(refused.value)
    for chunk_bytes in (1, 10 ** 9):
        with pytest.raises(rankwise.InputError) as streamed:
            evaluate_stream(qrels, run, ["AP"], missing_queries="zero", chunk_bytes=chunk_bytes)
        assert str(streamed.value) == str(refused.value)


@pytest.mark.parametrize("qrels_text, run_text, expected", [
    # a document twice in a chunk of queries not judged, and no judged query at all
    ("q1 0 d1 1\n", "x1 Q0 d1 1 1 t\nx1 Q0 d1 2 0.5 t\nx2 Q0 d2 1 1 t\n", "no query in common"),
    # a document twice in the first chunk, a bad line in the next
    ("q1 0 d1 1\nq2 0 d1 1\n", "q1 Q0 d1 1 1 t\nq1 Q0 d1 2 0.5 t\nq2 Q0 d2 1 1\n",
     "run.txt:3: expected 6 fields"),
    # conflicting judgments of the first chunk's query, a bad line in the next chunk
    ("q1 0 d1 1\nq1 0 d1 0\n", "q1 Q0 d1 1 1 t\nq3 Q0 d2 1 1\n", "run.txt:2: expected 6"),
    # a document twice in the first chunk, conflicting judgments of a query no chunk holds
    ("q1 0 d1 1\nq2 0 d1 1\nq2 0 d1 0\n", "q1 Q0 d1 1 1 t\nq1 Q0 d1 2 0.5 t\n",
     "qrels.txt:3: document 'd1' judged twice"),
], ids=["no-common-query", "bad-line-after-duplicate", "bad-line-after-conflict",
        "conflict-after-duplicate"])
def test_errors_come_in_the_order_of_one_pass(tmp_path, qrels_text, run_text, expected):
    """One pass reads the whole run, then checks the judgments, then that a query is shared,
    then ranks: a problem met evaluating a chunk is raised after those the rest of the run
    and the judgments hold, as in memory."""
    qrels, run = write(tmp_path, "qrels.txt", qrels_text), write(tmp_path, "run.txt", run_text)
    with pytest.raises(rankwise.InputError) as in_memory:
        rankwise.evaluate(qrels, run, ["AP"])
    assert expected in str(in_memory.value)
    for chunk_bytes in (1, 10 ** 9):
        with pytest.raises(rankwise.InputError) as streamed:
            evaluate_stream(qrels, run, ["AP"], chunk_bytes=chunk_bytes)
        assert str(streamed.value) == str(in_memory.value)


def test_empty_and_unrelated_runs(tmp_path, collection):
    qrels, run = collection
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    with pytest.raises(rankwise.InputError, match="empty file"):
        evaluate_stream(qrels, str(empty), ["AP"])
    comments = tmp_path / "comments.txt"
    comments.write_text("# nothing\n\n# here\n")
    with pytest.raises(rankwise.InputError, match="no run lines"):
        evaluate_stream(qrels, str(comments), ["AP"])
    other = tmp_path / "other.txt"
    other.write_text("zz1 Q0 d1 1 2.0 x\nzz2 Q0 d1 1 2.0 x\n")
    with pytest.raises(rankwise.InputError) as in_memory:
        rankwise.evaluate(qrels, str(other), ["AP"])
    with pytest.raises(rankwise.InputError) as streamed:
        evaluate_stream(qrels, str(other), ["AP"], chunk_bytes=1)
    assert str(streamed.value) == str(in_memory.value)
    with pytest.raises(rankwise.InputError, match="file not found"):
        evaluate_stream(qrels, str(tmp_path / "absent.txt"), ["AP"])
    with pytest.raises(rankwise.InputError, match="chunk_bytes"):
        evaluate_stream(qrels, run, ["AP"], chunk_bytes=0)


_PEAK = textwrap.dedent("""
    import sys
    import rankwise
    from rankwise.stream import evaluate_stream
    qrels, run, mode = sys.argv[1:4]
    if mode == "stream":
        mean = evaluate_stream(qrels, run, ["AP", "nDCG@10"], chunk_bytes=1 << 20).mean("AP")
    else:
        mean = rankwise.evaluate(qrels, run, ["AP", "nDCG@10"]).mean("AP")
    # VmHWM: the peak of this program's own memory (ru_maxrss would include the parent's at
    # the fork, which Linux carries over the exec)
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
    print(mean, peak)
""")


def _write_run(path: str, queries: int, depth: int = 100) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    q = np.repeat(np.arange(queries), depth)
    rank = np.tile(np.arange(1, depth + 1), queries)
    table = pa.table({
        "q": pa.array(np.char.add("q", q.astype(str))), "z": pa.array(np.full(len(q), "Q0")),
        "d": pa.array(np.char.add("d", ((q * 7919 + rank * 104729) % 1_000_003).astype(str))),
        "r": pa.array(rank), "s": pa.array(1000.0 - rank), "t": pa.array(np.full(len(q), "x"))})
    pacsv.write_csv(table, path, write_options=pacsv.WriteOptions(
        include_header=False, delimiter=" ", quoting_style="none"))


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmHWM (Linux)")
def test_bounded_memory(tmp_path):
    """Streamed in 1 MB chunks, a run three times longer takes the same peak memory (the
    in-memory evaluation's grows with the run), and the means are those of one pass."""
    queries = 4_000
    small, large = str(tmp_path / "small.txt"), str(tmp_path / "large.txt")
    _write_run(small, queries)
    _write_run(large, 3 * queries)
    qrels = tmp_path / "qrels.txt"  # two judgments for each query of the longer run
    qrels.write_text("".join(f"q{i} 0 d{(i * 7919 + 104729) % 1_000_003} 1\n"
                             f"q{i} 0 d{(i * 7919 + 3 * 104729) % 1_000_003} 2\n"
                             for i in range(3 * queries)))
    script = tmp_path / "peak.py"
    script.write_text(_PEAK)

    def peak(run: str, mode: str) -> tuple[float, float]:
        out = subprocess.run([sys.executable, str(script), str(qrels), run, mode], check=True,
                             capture_output=True, text=True).stdout.split()
        return float(out[0]), int(out[1]) / 1024  # MB

    results = {(run, mode): peak(run, mode) for run in (small, large)
               for mode in ("memory", "stream")}
    peaks = {key: mb for key, (_, mb) in results.items()}
    print("peak RSS MB:", {(os.path.basename(r), m): round(v) for (r, m), v in peaks.items()})
    for run in (small, large):
        assert results[(run, "stream")][0] == results[(run, "memory")][0]
    assert os.path.getsize(large) > 3 * 10e6
    grown_in_memory = peaks[(large, "memory")] - peaks[(small, "memory")]
    grown_streamed = peaks[(large, "stream")] - peaks[(small, "stream")]
    assert grown_in_memory > 60, peaks
    assert grown_streamed < 25, peaks
    assert peaks[(large, "stream")] < peaks[(large, "memory")], peaks


@pytest.mark.parametrize("grouped", [True, False])
@pytest.mark.parametrize("block_rows", [1, 7, 10 ** 9])
def test_judgments_checked_block_by_block(tmp_path, collection, monkeypatch, grouped,
                                          block_rows):
    """The first check of the judgments runs in blocks of whole queries: the same counts,
    levels and numbers as one index of them all, and the same error for a document judged
    twice with different grades, whether or not the judgments are grouped by query."""
    from rankwise.stream.judgments import Judgments

    qrels, run = collection
    lines = Path(qrels).read_text().splitlines()
    if not grouped:
        lines = [lines[i] for i in np.random.default_rng(5).permutation(len(lines))]
    path = tmp_path / "qrels.txt"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(Judgments, "CHECK_BLOCK_ROWS", block_rows)
    expected = rankwise.evaluate(str(path), run, MEASURES, per_query=True).to_json()
    assert evaluate_stream(str(path), run, MEASURES, per_query=True,
                           chunk_bytes=300).to_json() == expected
    conflicting = [lines[40].rsplit(" ", 1)[0] + " 7", lines[3].rsplit(" ", 1)[0] + " 9"]
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join(lines[:100] + conflicting + lines[100:]) + "\n")
    with pytest.raises(rankwise.InputError) as in_memory:
        rankwise.evaluate(str(bad), run, ["AP"])
    with pytest.raises(rankwise.InputError) as streamed:
        evaluate_stream(str(bad), run, ["AP"])
    assert "judged twice" in str(in_memory.value)
    assert str(streamed.value) == str(in_memory.value)


@pytest.mark.parametrize("conflicts", [("q900",), ("q033", "q900"), ("q900", "q002")])
@pytest.mark.parametrize("chunk_bytes", [1, 10 ** 9])
def test_conflicting_judgments_found_where_the_chunks_never_look(tmp_path, collection,
                                                                 conflicts, chunk_bytes):
    """The judgments are checked by the chunks' own indexes and, at the end, for the judged
    queries no chunk held (q033 and q900 are never retrieved): a document judged twice with
    different grades is the same error as in memory wherever it is, and with several
    conflicts the first in the judgments' query order is the one reported."""
    qrels, run = collection
    lines = Path(qrels).read_text().splitlines()
    for qid in conflicts:
        first = next(line for line in lines if line.startswith(qid + " "))
        lines.append(first.rsplit(" ", 1)[0] + " 5")
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(rankwise.InputError) as in_memory:
        rankwise.evaluate(str(bad), run, ["AP"])
    with pytest.raises(rankwise.InputError) as streamed:
        evaluate_stream(str(bad), {"a": run, "b": run}, ["AP"], chunk_bytes=chunk_bytes)
    assert "judged twice" in str(in_memory.value)
    assert str(streamed.value) == str(in_memory.value)


# ---------------------------------------------------------------------------- in memory, in blocks


def _one_pass_and_blocks(monkeypatch, evaluate, block_rows: int):
    """``evaluate()`` in one pass, then with every run evaluated in blocks of about
    ``block_rows`` rows (the row threshold lowered to 0)."""
    from rankwise import api, stream

    one_pass = evaluate()
    memory_short(monkeypatch)
    monkeypatch.setattr(stream, "BLOCK_ROWS", block_rows)
    calls = spy(monkeypatch, stream, "evaluate_in_blocks")
    indexed = spy(monkeypatch, api, "index_judgments")
    blocks = evaluate()
    assert calls, "the run was not evaluated in blocks"
    assert not indexed, "the judgments were indexed for a pass in memory that never came"
    return one_pass, blocks


@pytest.mark.parametrize("block_rows", [1, 50, 10 ** 9])
@pytest.mark.parametrize("overrides", [
    {}, {"missing_queries": "zero", "run_only_queries": "zero"},
    {"max_depth": 7, "unjudged": "remove", "relevance_threshold": 2},
    {"ties": "input_order", "duplicates": "first"}, {"ties": "expected"}])
def test_a_huge_run_in_memory_is_evaluated_in_blocks_byte_for_byte(
        collection, monkeypatch, block_rows, overrides):
    """Runs of BLOCKWISE_MIN_ROWS rows and more go through the streaming merge block by
    block (one query per block up to one block): the same JSON as one pass, for a run read
    from a TREC file (rank column, line numbers) and for a DataFrame with integer doc ids."""
    import pandas as pd

    qrels, run_path = collection
    run = rankwise.to_run(run_path)
    frame = pd.DataFrame({"query": np.asarray(run.query_dict)[run.query_code],
                          "doc": [int(d[1:]) for d in run.docs.to_pylist()],
                          "score": run.score})
    judged = rankwise.to_qrels(qrels)
    for given in (run, frame):
        one_pass, blocks = _one_pass_and_blocks(
            monkeypatch, lambda: rankwise.evaluate(judged, {"sys": given}, MEASURES,
                                                   per_query=True, **overrides), block_rows)
        assert blocks.to_json() == one_pass.to_json()
        monkeypatch.undo()


@pytest.mark.parametrize("qid", ["q002", "q900"])
def test_conflicting_judgments_with_a_run_in_blocks(tmp_path, collection, monkeypatch, qid):
    """A run in memory evaluated block by block raises the one pass's error for a document
    judged twice with different grades, whether a block holds the query (q002) or none
    does (q900, never retrieved)."""
    from rankwise import stream

    qrels, run_path = collection
    lines = Path(qrels).read_text().splitlines()
    first = next(line for line in lines if line.startswith(qid + " "))
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join(lines + [first.rsplit(" ", 1)[0] + " 5"]) + "\n")
    run = rankwise.to_run(run_path)
    with pytest.raises(rankwise.InputError) as one_pass:
        rankwise.evaluate(str(bad), run, ["AP"])
    memory_short(monkeypatch)
    monkeypatch.setattr(stream, "BLOCK_ROWS", 50)
    calls = spy(monkeypatch, stream, "evaluate_in_blocks")
    with pytest.raises(rankwise.InputError) as in_blocks:
        rankwise.evaluate(str(bad), run, ["AP"])
    assert calls and "judged twice" in str(one_pass.value)
    assert str(in_blocks.value) == str(one_pass.value)


def test_which_runs_are_evaluated_in_blocks(collection, monkeypatch):
    """Blocks only where one pass would need more than the memory left, or more than half of
    it for runs of BLOCKWISE_MIN_ROWS rows or more, with each query's rows together and no
    empty query; a run written otherwise takes the one pass (the same result either way)."""
    from rankwise import api
    from rankwise.core import memory

    monkeypatch.setattr(memory, "ALWAYS_FITS_BYTES", 0)
    _, run_path = collection
    run = rankwise.to_run(run_path)
    lines = open(run_path).read().splitlines()
    shuffled = rankwise.to_run(_frame_of(np.random.default_rng(0).permutation(lines)))
    with_empty = rankwise.to_run({"q000": {"d1": 1.0}, "q001": {}})
    monkeypatch.setattr(api, "BLOCKWISE_MIN_ROWS", 0)
    need = len(run) * api.ONE_PASS_BYTES_PER_ROW
    for available, expected in ((None, False), (2 * need, False), (2 * need - 2, True)):
        monkeypatch.setattr(memory, "available_bytes", lambda: available)
        assert api._in_blocks(run) is expected
    assert not api._in_blocks(shuffled) and not api._in_blocks(with_empty)
    monkeypatch.setattr(api, "BLOCKWISE_MIN_ROWS", len(run) + 1)  # only when it cannot fit
    for available, expected in ((2 * need - 2, False), (need, False), (need - 1, True)):
        monkeypatch.setattr(memory, "available_bytes", lambda: available)
        assert api._in_blocks(run) is expected
    monkeypatch.setattr(memory, "ALWAYS_FITS_BYTES", need)
    assert not api._in_blocks(run)


def _frame_of(lines):
    """TREC run lines as a DataFrame (query, doc, score)."""
    import pandas as pd

    fields = [line.split() for line in lines]
    return pd.DataFrame({"query": [f[0] for f in fields], "doc": [f[2] for f in fields],
                         "score": [float(f[4]) for f in fields]})


# ---------------------------------------------------------------------------- huge run files


def _streamed_from_file(monkeypatch, evaluate, chunk_bytes: int):
    """``evaluate()`` with every run file taken as too large for one pass (chunks of about
    ``chunk_bytes``): the result, how many files were streamed, and whether the judgments
    were indexed for a pass in memory."""
    from rankwise import api, stream

    memory_short(monkeypatch)
    monkeypatch.setattr(stream, "DEFAULT_CHUNK_BYTES", chunk_bytes)
    streamed = spy(monkeypatch, stream, "evaluate_file")
    indexed = spy(monkeypatch, api, "index_judgments")
    try:
        return evaluate(), len(streamed), bool(indexed)
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("chunk_bytes", [300, 10 ** 9])
@pytest.mark.parametrize("overrides", [
    {}, {"missing_queries": "zero", "run_only_queries": "zero"},
    {"max_depth": 7, "unjudged": "remove", "relevance_threshold": 2}, {"ties": "expected"}])
def test_a_run_file_too_large_for_one_pass_is_streamed_byte_for_byte(
        tmp_path, collection, monkeypatch, chunk_bytes, overrides):
    """rankwise.evaluate streams a run file too large for one pass from the file, chunk by
    chunk of whole queries (TREC text, gzip, Parquet; one run or several, next to a run in
    memory not grouped by query): the same JSON as one pass, and the judgments are indexed
    as a whole only for a run that needs it, once it comes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    qrels, run_path = collection
    gz = str(tmp_path / "run.txt.gz")
    with open(run_path, "rb") as src, gzip.open(gz, "wb") as out:
        out.write(src.read())
    run = rankwise.to_run(run_path)
    parquet = str(tmp_path / "run.parquet")
    pq.write_table(pa.table({"query": np.asarray(run.query_dict)[run.query_code],
                             "doc": run.docs, "score": run.score,
                             "rank": run.rank.astype(np.int64)}), parquet)
    lines = open(run_path).read().splitlines()
    frame = _frame_of(np.random.default_rng(2).permutation(lines)[:200])  # one pass: indexed
    cases = [(run_path, 1, False), (gz, 1, False), (parquet, 1, False),
             ({"a": run_path, "b": parquet}, 2, False), ([run_path, frame], 1, True)]
    for given, files, indexed in cases:
        def evaluate():
            return rankwise.evaluate(qrels, given, MEASURES, per_query=True, **overrides)
        streamed, calls, index_built = _streamed_from_file(monkeypatch, evaluate, chunk_bytes)
        assert streamed.to_json() == evaluate().to_json(), given
        assert (calls, index_built) == (files, indexed), given


def test_a_run_file_not_grouped_by_query_is_evaluated_whole(tmp_path, collection,
                                                              monkeypatch):
    """A huge run file whose queries are not grouped cannot be streamed: it is read whole
    and evaluated in one pass, with the same result as without the streaming attempt."""
    qrels, run_path = collection
    lines = open(run_path).read().splitlines()
    shuffled = tmp_path / "shuffled.txt"
    shuffled.write_text("\n".join(np.random.default_rng(1).permutation(lines)) + "\n")

    def evaluate():
        return rankwise.evaluate(qrels, [str(shuffled), run_path], MEASURES, per_query=True)
    streamed, calls, indexed = _streamed_from_file(monkeypatch, evaluate, 300)
    assert streamed.to_json() == evaluate().to_json()
    assert (calls, indexed) == (2, True)
    with pytest.raises(rankwise.stream.NotGroupedError, match="appears again"):
        evaluate_stream(qrels, str(shuffled), ["AP"])


def test_which_run_files_are_streamed(tmp_path, collection, monkeypatch):
    """A run file is streamed when one pass over it (its rows estimated without reading it;
    for text, at least what the memory check asks of its text) would need more than the
    memory left, or more than half of it from BLOCKWISE_MIN_ROWS rows on; files whose size
    on disk alone makes the need too small to check are ruled out unopened; anything else
    is read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rankwise import api
    from rankwise.core import memory
    from rankwise.io.parquet import parquet_rows
    from rankwise.io.trec import text_extent

    qrels, run_path = collection
    lines = open(run_path).read().splitlines()
    big = tmp_path / "big.txt"  # several times the 64 KiB the estimate reads
    big.write_text("\n".join(lines * 40) + "\n")
    gz = tmp_path / "big.txt.gz"
    gz.write_bytes(gzip.compress(big.read_bytes()))
    folder = tmp_path / "parts"
    folder.mkdir()
    for part in range(3):
        pq.write_table(pa.table({"query": ["q1"] * 5, "doc": list("abcde"),
                                 "score": [1.0] * 5}), folder / f"part-{part}.parquet")
    n, size = len(lines) * 40, os.path.getsize(big)
    for path in (big, gz):
        text, estimate = text_extent(path)
        assert text >= size and 0.9 * n <= estimate <= 1.1 * n
    assert text_extent(run_path) == (os.path.getsize(run_path), len(lines))  # read whole
    assert parquet_rows(folder) == 15 and parquet_rows(folder / "part-0.parquet") == 5
    assert text_extent(tmp_path / "missing.txt") == (0, 0)
    assert parquet_rows(tmp_path / "missing.parquet") == 0

    monkeypatch.setattr(memory, "ALWAYS_FITS_BYTES", 0)
    text, estimate = text_extent(big)
    need = max(estimate * api.ONE_PASS_BYTES_PER_ROW, text * memory.BYTES_PER_INPUT_BYTE)
    for floor, cases in ((0, ((None, False), (2 * need, False), (2 * need - 2, True))),
                         (n * 2, ((2 * need - 2, False), (need, False), (need - 1, True)))):
        monkeypatch.setattr(api, "BLOCKWISE_MIN_ROWS", floor)
        for available, expected in cases:
            monkeypatch.setattr(memory, "available_bytes", lambda: available)
            assert api._streams_from_file(str(big)) is expected, (floor, available)
    in_memory = rankwise.to_run(run_path)
    monkeypatch.setattr(memory, "available_bytes", lambda: 0)
    assert api._streams_from_file(folder) and api._streams_from_file(gz)
    assert not api._streams_from_file(in_memory)
    assert not api._streams_from_file(str(tmp_path / "missing.txt"))
    monkeypatch.setenv("RANKWISE_SKIP_MEMORY_CHECK", "1")  # for reading the judgments
    with pytest.raises(rankwise.InputError, match="file not found"):
        rankwise.evaluate(qrels, str(tmp_path / "missing.txt"), ["AP"])
    monkeypatch.setattr(memory, "ALWAYS_FITS_BYTES", size * api.ONE_PASS_BYTES_PER_ROW)
    opened = []
    monkeypatch.setattr("rankwise.io.trec._peek", lambda *a: opened.append(a) or b"")
    assert not api._streams_from_file(str(big)) and not opened


def test_a_run_that_is_not_a_file_says_what_streaming_reads():
    """An in-memory run given to evaluate_stream names both file kinds it reads (the message
    said TREC run files only, though Parquet is streamed too)."""
    with pytest.raises(rankwise.InputError, match=r"reads run files \(TREC text or Parquet\): "
                                                  r"expected a path \(got 'dict'\)"):
        evaluate_stream({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, ["AP"])
