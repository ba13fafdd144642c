"""Small run files read several at a time, as one text (``io.trec.read_runs``), give the runs
reading each alone gives, field by field; files that need more than the fast path are read
alone, and the first bad file raises its own error in its turn."""

from __future__ import annotations

import gzip

import numpy as np
import pyarrow as pa
import pytest

import rankwise
import rankwise.api as api
from rankwise.errors import InputError
from rankwise.io.tables import encode_queries, encode_queries_by_part
from rankwise.io.trec import read_run, read_runs


def _run_text(rng, run: int, queries: int = 12) -> str:
    """A run: queries out of order and in pieces, tied scores, a tag per run."""
    lines = []
    for q in rng.permutation(queries)[: int(rng.integers(1, queries + 1))]:
        docs = rng.choice(50, size=int(rng.integers(1, 20)), replace=False)
        for i, (d, s) in enumerate(zip(docs, np.sort(rng.integers(0, 9, len(docs)))[::-1])):
            lines.append(f"q{q} Q0 d{d} {i + 1} {s / 4:g} tag{run}")
    if run % 3 == 1:  # one query in several pieces
        rng.shuffle(lines)
    return "\n".join(lines) + "\n"


def _same_run(a, b) -> None:
    for name in ("query_code", "score", "rank"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
        assert getattr(a, name).dtype == getattr(b, name).dtype, name
    assert a.query_dict.to_pylist() == b.query_dict.to_pylist()
    assert a.docs.to_pylist() == b.docs.to_pylist()
    assert (a.source, a.row_lines, a.row_unit, a.name, a.empty_queries) == \
        (b.source, b.row_lines, b.row_unit, b.name, b.empty_queries)


def test_runs_read_together_are_those_read_alone(tmp_path):
    rng = np.random.default_rng(3)
    paths = []
    for i in range(9):
        text = _run_text(rng, i)
        if i == 2:
            text = text.rstrip("\n")  # no line end after the last line
        if i == 4:
            text = text.replace("\n", "\r\n")  # CRLF
        paths.append(tmp_path / f"run{i}.txt")
        paths[-1].write_text(text)
    names = [None, "named", None, None, None, None, "x", None, None]
    together = read_runs(paths, names)
    assert together is not None
    for path, name, run in zip(paths, names, together):
        _same_run(run, read_run(path, name))


@pytest.mark.parametrize("odd", ["blank line", "comment", "tabs", "bom", "gzip", "nan score",
                                 "bad line", "text rank", "empty", "missing", "cr line ends"])
def test_files_beyond_the_fast_path_are_left_to_reading_alone(tmp_path, odd):
    rng = np.random.default_rng(4)
    texts = [_run_text(rng, i).encode() for i in range(3)]
    middle = texts[1]
    lines = middle.split(b"\n")
    middle = {
        "blank line": b"\n".join(lines[:2] + [b""] + lines[2:]),
        "comment": b"# a comment\n" + middle,
        "tabs": middle.replace(b" ", b"\t", 3),
        "bom": b"\xef\xbb\xbf" + middle,
        "gzip": gzip.compress(middle),
        "nan score": middle.replace(lines[0], lines[0].rsplit(b" ", 2)[0] + b" nan tag1"),
        "bad line": middle + b"q1 Q0 d1\n",
        "text rank": middle.replace(lines[0], b"q1 Q0 d1 first 1.0 tag1"),
        "empty": b"",
        "missing": None,
        "cr line ends": middle.replace(b"\n", b"\r"),
    }[odd]
    paths = []
    for i, text in enumerate([texts[0], middle, texts[2]]):
        paths.append(tmp_path / f"run{i}.txt")
        if text is not None:
            paths[-1].write_bytes(text)
    assert read_runs(paths, [None] * 3) is None


def test_many_files_evaluate_as_read_one_by_one(tmp_path, monkeypatch):
    """An evaluation of many small files (read in groups) equals reading each alone."""
    rng = np.random.default_rng(5)
    (tmp_path / "qrels.txt").write_text("".join(
        f"q{q} 0 d{d} {int(rng.integers(0, 3))}\n" for q in range(12) for d in range(0, 50, 3)))
    runs = {}
    for i in range(40):
        runs[f"r{i}"] = str(tmp_path / f"run{i}.txt")
        text = _run_text(rng, i)
        if i == 17:  # one file off the fast path: its group is read file by file
            text = "# comment\n" + text
        (tmp_path / f"run{i}.txt").write_text(text)
    qrels = str(tmp_path / "qrels.txt")
    groups = []
    import rankwise.io.trec as trec

    reader = trec.read_runs
    monkeypatch.setattr(trec, "read_runs", lambda paths, names: groups.append(len(paths))
                        or reader(paths, names))
    monkeypatch.setattr(api, "GROUP_BYTES", 6000)
    grouped = rankwise.evaluate(qrels, runs, ["AP", "nDCG@10", "P@5"], per_query=True)
    monkeypatch.setattr(api, "GROUP_FILE_BYTES", 0)
    alone = rankwise.evaluate(qrels, runs, ["AP", "nDCG@10", "P@5"], per_query=True)
    assert grouped.to_json() == alone.to_json()
    assert len(groups) > 3 and max(groups) > 2


def test_the_first_bad_file_raises_its_own_error_in_its_turn(tmp_path, monkeypatch):
    rng = np.random.default_rng(6)
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    paths = []
    for i in range(8):
        paths.append(str(tmp_path / f"run{i}.txt"))
        text = _run_text(rng, i) if i not in (3, 5) else \
            "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2\n"  # line 2: four fields
        (tmp_path / f"run{i}.txt").write_text(text)
    monkeypatch.setattr(api, "GROUP_BYTES", 1 << 20)  # all eight in one group
    seen = []
    reader = api._read_runs(paths, [None] * 8, [False] * 8)
    with pytest.raises(InputError) as error:
        for run in reader:
            seen.append(run.source)
    assert seen == paths[:3]
    assert "run3.txt" in str(error.value) and ":2" in str(error.value)


def test_queries_encoded_by_part_as_each_part_alone():
    """Each part's codes and distinct ids (in order of first appearance) are those
    ``encode_queries`` gives the part alone: parts cutting a run of equal ids, one-row
    parts, chunked columns."""
    rng = np.random.default_rng(7)
    for trial in range(300):
        n = int(rng.integers(1, 60))
        values = [f"q{v}" for v in rng.integers(0, 6, n)]
        if trial % 2:  # long runs of equal ids
            values.sort()
        cuts = rng.integers(1, n, int(rng.integers(0, 4))) if n > 1 else []
        bounds = np.unique(np.r_[0, cuts, n]).astype(np.int64)
        ids = pa.chunked_array([values[: n // 2], values[n // 2:]], pa.string()) \
            if trial % 3 == 0 else pa.array(values, pa.string())
        codes, dictionaries = encode_queries_by_part(ids, bounds)
        assert len(dictionaries) == len(bounds) - 1
        for (start, stop), dictionary in zip(zip(bounds[:-1], bounds[1:]), dictionaries):
            want_codes, want_ids = encode_queries(ids.slice(start, stop - start))
            assert codes[start:stop].tolist() == want_codes.tolist()
            assert codes.dtype == want_codes.dtype
            assert dictionary.to_pylist() == want_ids.to_pylist()
