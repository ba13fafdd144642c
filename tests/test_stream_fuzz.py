"""Differential fuzz test: the streamed run reader reads TREC text as the in-memory reader
does, and streamed evaluation gives the Result of one pass.

The seeded random pairs of qrels and run files of the Spark readers' fuzz test
(tests/spark/test_reader_fuzz.py: what real and broken files hold) go through three
comparisons:

1. every run file, read by ``rankwise.io.trec.read_run`` and by the streamed reader
   (:class:`~rankwise.stream.readers.RunReader`, each chunk checked as streamed evaluation
   checks it) at chunk sizes from one byte to more than the file: the same rows (query and
   doc ids, scores bit for bit, the rank column, the line of every row) and run name, or the
   same error (its class, the file, the line, the reason, the value);
2. every pair, evaluated by ``rankwise.evaluate`` and by ``evaluate_stream`` at one query
   per chunk and at the whole file in one read, under the pair's conventions: the same
   JSON, byte for byte, or the same error. A run whose queries are not grouped is refused
   by streaming, naming the first line where a query comes back (or as in memory, where one
   pass refuses a line before that one);
3. every pair, evaluated by ``rankwise.evaluate`` in one pass and streamed from the file
   (as it streams a run too large for memory, and evaluates in memory a run not grouped):
   the same JSON or the same error.

By design (docs/performance.md, "Streaming"): a gzip file cut short is refused when the
streamed reading reaches the cut, so a bad line before it is reported instead.
"""

from __future__ import annotations

import random
import re
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import rankwise
from rankwise.errors import InputError
from rankwise.io.trec import read_run
from rankwise.stream import NotGroupedError, evaluate_stream
from rankwise.stream.readers import RunReader, file_run_name
from tests.helpers import memory_short
from tests.spark.test_reader_fuzz import Pair, TrecFile, generate_pair, numbered_lines

pytestmark = pytest.mark.slow

#: A seed whose pairs hold errors that streaming once raised in another order than one pass
#: (see test_streaming.py, test_errors_come_in_the_order_of_one_pass).
SEED = 6
PAIRS = 200
#: Chunk sizes: a cut after every query, cuts within lines and among them, and the whole
#: file in one read (its last query is still carried over, a block of its own).
READ_CHUNKS = [1, 7, 64, 300, 1 << 20]
EVALUATION_CHUNKS = [1, 1 << 20]
MEASURES = ["P@5", "AP", "nDCG@10", "RR", "Rprec", "Bpref", "R@10", "NumRet", "NumRel",
            "Judged@10"]
BOM = b"\xef\xbb\xbf"


def text_of(data: bytes) -> bytes:
    """A file's text: decompressed (as far as a gzip file cut short goes), with its
    byte-order mark."""
    return zlib.decompressobj(31).decompress(data) if data[:2] == b"\x1f\x8b" else data


# ---------------------------------------------------------------------------- the corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> list[Pair]:
    """The generated pairs, written."""
    root = tmp_path_factory.mktemp("stream-fuzz")
    rng = random.Random(SEED)
    pairs = [generate_pair(rng, number) for number in range(PAIRS)]
    for pair in pairs:
        for f in (pair.qrels, pair.run):
            f.path = str(root / f.name)
            Path(f.path).write_bytes(f.data)
    return pairs


@pytest.fixture(scope="module")
def one_pass(corpus) -> dict[int, object]:
    """Each pair's outcome in one pass in memory, by pair number."""
    return {pair.number: evaluated(rankwise.evaluate, pair) for pair in corpus}


def test_the_corpus_covers_every_variation_of_run_files(corpus):
    """Every variation a run file can have is generated."""
    run_variations = {
        "separators", "edge-blanks", "crlf", "lone-cr", "no-final-newline", "blank-lines",
        "comments", "bom", "odd-ids", "odd-queries", "number-syntax", "odd-ranks", "odd-tags",
        "text-after-tag", "gzip", "bytes-in-unread-fields", "bytes-in-comments", "few-fields",
        "other-kind-line", "bad-number", "not-finite", "not-utf8", "nul", "quoted-id",
        "header", "other-control-between-fields", "doc-twice-in-run", "empty",
        "truncated-gzip", "no-common-query", "text-named-gz", "gzip-named-txt"}
    seen = {v for pair in corpus for v in pair.run.variations}
    assert seen == run_variations, sorted(seen ^ run_variations)


# ---------------------------------------------------------------------------- 1. the readers


def memory_rows(path: str) -> tuple | InputError:
    """The in-memory reader's rows of a run file: (queries, docs, scores, lines, ranks or
    None, run name); or its InputError."""
    try:
        run = read_run(path)
    except InputError as error:
        return error
    queries = run.query_dict.to_pylist()
    return ([queries[c] for c in run.query_code], run.docs.to_pylist(), run.score,
            run.lines_of(np.arange(len(run))), run.rank, run.name)


def streamed_rows(path: str, chunk_bytes: int) -> tuple | InputError:
    """The streamed reader's chunks of a run file joined, each checked as streamed evaluation
    checks it, as :func:`memory_rows` gives them (no rank column where a chunk has none,
    the run name of the streamed evaluation); or the InputError."""
    reader = RunReader(path, chunk_bytes)
    chunks = []
    try:
        for rows in reader:
            rows.to_run(path, "run")
            chunks.append(rows)
        if not chunks:
            raise reader.no_lines_error()
    except InputError as error:
        return error
    ranks = [rows.rank for rows in chunks]
    return ([q for rows in chunks for q in rows.qid.to_pylist()],
            [d for rows in chunks for d in rows.doc.to_pylist()],
            np.concatenate([rows.score for rows in chunks]),
            np.concatenate([rows.line for rows in chunks]),
            None if any(r is None for r in ranks) else np.concatenate(ranks),
            file_run_name(path))


def same_error(a: InputError, b: InputError) -> bool:
    return (type(a), a.source, a.line, a.reason, a.value, a.unit) == \
        (type(b), b.source, b.line, b.reason, b.value, b.unit)


def truncated_gzip_met_later(memory: InputError, streamed: InputError) -> bool:
    """A gzip file cut short, refused in memory before any line is read, and by streaming
    at a line read before the cut (docs/performance.md, "Streaming")."""
    return memory.reason.startswith("corrupt or truncated gzip file") and \
        streamed.source == memory.source and streamed.line is not None


def shown(outcome) -> str:
    if isinstance(outcome, InputError):
        return f"{type(outcome).__name__}({outcome})"[:300]
    return f"{len(outcome[0])} rows" if isinstance(outcome, tuple) else "a Result"


def error_difference(memory, streamed) -> str | None:
    """What differs where either refuses (None: the same error, or a gzip file cut short
    met later by streaming)."""
    if isinstance(memory, InputError) and isinstance(streamed, InputError) and (
            same_error(memory, streamed) or truncated_gzip_met_later(memory, streamed)):
        return None
    return f"in memory {shown(memory)}; streamed {shown(streamed)}"


def read_difference(memory, streamed) -> str | None:
    """What differs between two readings of a run file (None: nothing)."""
    if isinstance(memory, InputError) or isinstance(streamed, InputError):
        return error_difference(memory, streamed)
    for what, a, b in zip(("queries", "docs", "scores", "lines", "ranks", "name"),
                          memory, streamed):
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            same = a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
        else:
            same = type(a) is type(b) and (a is None or a == b)
        if not same:
            return f"{what}: in memory {a!r:.200}, streamed {b!r:.200}"
    return None


def test_the_streamed_reader_reads_every_run_file_as_in_memory(corpus):
    """Every run file, at chunk sizes from one byte to the whole file: the same rows, lines
    and run name, or the same error."""
    outcomes, mismatches = Counter(), []
    for f in (pair.run for pair in corpus):
        memory = memory_rows(f.path)
        outcome = "accepted" if not isinstance(memory, InputError) else \
            f"refused: {memory.reason.split(' (')[0][:40]}"
        for chunk_bytes in READ_CHUNKS:
            problem = read_difference(memory, streamed_rows(f.path, chunk_bytes))
            if problem:
                mismatches.append(f"{f.name} {sorted(f.variations)} chunk_bytes={chunk_bytes}: "
                                  f"{problem}")
        outcomes[outcome] += 1
    assert not mismatches, "\n".join(mismatches)
    refused = [k for k in outcomes if k.startswith("refused")]
    assert outcomes["accepted"] >= 100 and sum(outcomes[k] for k in refused) >= 30, outcomes
    assert len(refused) >= 8, outcomes  # refused for many reasons


# ---------------------------------------------------------------------------- 2. evaluation


def evaluated(evaluate, pair: Pair, **options):
    """The Result of ``evaluate`` on a pair under its conventions, or its InputError."""
    try:
        return evaluate(pair.qrels.path, pair.run.path, MEASURES, per_query=True,
                        **pair.conventions, **options)
    except InputError as error:
        return error


def reappearance(f: TrecFile) -> tuple[int, str] | None:
    """The first line where a query of a run comes back after other queries, and its id (the
    first field of its data lines, split as the in-memory reader splits them); None where
    the run is grouped by query."""
    ended: set[bytes] = set()
    last = None
    for number, line in enumerate(numbered_lines(text_of(f.data).removeprefix(BOM)), 1):
        line = line.strip(b" \t\r")
        if not line or line.startswith(b"#"):
            continue
        qid = re.split(rb"[ \t]+", line)[0]
        if qid != last:
            if qid in ended:
                return number, qid.decode("utf-8", "replace")
            ended.add(last)
            last = qid
    return None


def evaluation_difference(pair: Pair, memory, streamed) -> str | None:
    """What differs between the in-memory and the streamed outcome of a pair (None:
    nothing)."""
    back = reappearance(pair.run)
    if back is not None and isinstance(streamed, NotGroupedError):
        line_before = isinstance(memory, InputError) and memory.source == pair.run.path and \
            memory.line is not None and memory.line < back[0]
        if (streamed.line, streamed.value) == back and not line_before:
            return None
        return f"not grouped (line {back[0]}): in memory {shown(memory)}; " \
               f"streamed {shown(streamed)}"
    if back is not None and not isinstance(streamed, InputError):
        return f"not grouped (line {back[0]}), accepted by streaming"
    return result_difference(memory, streamed)


def result_difference(memory, streamed) -> str | None:
    """What differs between two outcomes of an evaluation (None: nothing)."""
    if isinstance(memory, InputError) or isinstance(streamed, InputError):
        return error_difference(memory, streamed)
    if memory.to_json() != streamed.to_json():
        return f"JSON: in memory {memory.to_json()}; streamed {streamed.to_json()}"
    return None


def compare_evaluations(corpus, one_pass, streamed_outcome, difference) -> Counter:
    """Each pair's outcome in one pass against ``streamed_outcome(pair)`` (a list of
    outcomes) by ``difference``: the outcome counts, asserting there is no other
    difference."""
    outcomes, mismatches = Counter(), []
    for pair in corpus:
        memory = one_pass[pair.number]
        outcome = "not grouped" if reappearance(pair.run) else \
            "accepted" if not isinstance(memory, InputError) else \
            "refused: the judgments" if memory.source == pair.qrels.path else "refused: the run"
        for label, streamed in streamed_outcome(pair):
            problem = difference(pair, memory, streamed)
            if problem:
                mismatches.append(f"pair {pair.number} {sorted(pair.qrels.variations)} "
                                  f"{sorted(pair.run.variations)} {label}: {problem[:1500]}")
        outcomes[outcome] += 1
    assert not mismatches, "\n".join(mismatches)
    return outcomes


def test_streamed_evaluation_gives_the_result_of_one_pass(corpus, one_pass):
    """Every pair, one query per chunk and the whole file in one read: the same JSON, or the
    same error; a run not grouped by query refused by streaming, naming where."""
    outcomes = compare_evaluations(corpus, one_pass, lambda pair: [
        (f"chunk_bytes={c}", evaluated(evaluate_stream, pair, chunk_bytes=c))
        for c in EVALUATION_CHUNKS], evaluation_difference)
    assert outcomes["accepted"] >= 50 and outcomes["not grouped"] >= 10, outcomes
    assert outcomes["refused: the judgments"] >= 35 and outcomes["refused: the run"] >= 18, \
        outcomes


def test_evaluate_streaming_a_file_gives_the_result_of_one_pass(corpus, one_pass,
                                                                 monkeypatch):
    """Every pair through ``rankwise.evaluate`` with each run taken as too large for one pass
    (streamed from the file, or read whole where it is not grouped): as in one pass."""
    from rankwise.stream import readers

    memory_short(monkeypatch)
    read = []
    real = readers.RunReader.__iter__
    monkeypatch.setattr(readers.RunReader, "__iter__",
                        lambda self: read.append(self.path) or real(self))
    outcomes = compare_evaluations(
        corpus, one_pass,
        lambda pair: [("streamed from the file", evaluated(rankwise.evaluate, pair))],
        lambda pair, memory, streamed: result_difference(memory, streamed))
    assert outcomes["accepted"] >= 50 and outcomes["not grouped"] >= 10, outcomes
    assert len(set(read)) >= 80, "the runs were not streamed"
