"""The engine's internals: fingerprint keys, their exact fallback, chunked columns, order."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import rankwise
from rankwise.core import keys
from rankwise.io import trec
from tests.helpers import write

IDS = ["", "a", "ab", "abcdefgh", "abcdefghi", "abcdefghé", "x" * 40, "d12345678901234567"]


def test_fingerprint_of_an_id_does_not_depend_on_its_neighbours():
    together = keys.fingerprints(pa.array(IDS * 2))
    for i, text in enumerate(IDS):
        alone = keys.fingerprints(pa.array([text]))[0]
        assert together[i] == together[i + len(IDS)] == alone
        assert keys.fingerprints(pa.array(["z" * 30, text]).slice(1))[0] == alone
    assert len(set(together.tolist())) == len(IDS)
    chunked = pa.chunked_array([IDS[:3], IDS[3:]])
    assert np.array_equal(keys.fingerprints(chunked), together[:len(IDS)])


QRELS = "".join(f"q{q} 0 d{d} {(q * d) % 4}\n" for q in range(30) for d in range(0, 40, 3))
RUN = "".join(f"q{q} Q0 d{d} {d} {round(1 - d / 50, 1)} run\n" for q in range(32) for d in range(35))
MEASURES = ["AP", "nDCG@10", "P@5", "Bpref", "RR", "NumRelRet", "ERR@10"]


def _values(tmp_path):
    return rankwise.evaluate(write(tmp_path, "qrels", QRELS), write(tmp_path, "run", RUN),
                             MEASURES, per_query=True).per_query()


def _colliding(words: bool):
    """Every id gets the same fingerprint (every key collides); with or without the exact
    words of short ids, which verify matches in place of the strings."""
    real = keys.fingerprints_and_words

    def fake(strings):
        return np.zeros(len(strings), np.uint64), real(strings)[1] if words else None
    return fake


@pytest.mark.parametrize("words", [True, False])
def test_colliding_fingerprints_fall_back_to_exact_keys(tmp_path, monkeypatch, words):
    expected = _values(tmp_path)
    for side in ("judgments", "join"):  # both sides' fingerprints collide
        monkeypatch.setattr(f"rankwise.core.{side}.fingerprints_and_words", _colliding(words))
    assert _values(tmp_path) == expected


@pytest.mark.parametrize("words", [True, False])
def test_duplicates_are_found_on_the_exact_path_too(tmp_path, monkeypatch, words):
    for side in ("judgments", "join"):  # both sides' fingerprints collide
        monkeypatch.setattr(f"rankwise.core.{side}.fingerprints_and_words", _colliding(words))
    run = RUN + "q3 Q0 d4 99 0.01 run\n"
    with pytest.raises(rankwise.InputError, match="'d4' appears twice for query 'q3'"):
        rankwise.evaluate(write(tmp_path, "qrels", QRELS), write(tmp_path, "run", run), ["AP"])


def test_short_id_words_are_exact_or_absent():
    import pyarrow as pa

    fp, words = keys.fingerprints_and_words(pa.array(["d1", "abcdefgh", "", "é€"]))
    assert words is not None and len(set(words.tolist())) == 4
    assert np.array_equal(fp, keys.fingerprints(pa.array(["d1", "abcdefgh", "", "é€"])))
    assert keys.fingerprints_and_words(pa.array(["d1", "abcdefghi"]))[1] is None  # 9 bytes
    assert keys.fingerprints_and_words(pa.array(["d1", "a\x00"]))[1] is None  # a NUL byte
    long_fp = keys.fingerprints(pa.array(["d1", "abcdefghi"]))
    assert long_fp[0] == fp[0]  # a short id's fingerprint does not depend on its neighbours


def test_files_read_in_many_chunks_give_the_same_numbers(tmp_path, monkeypatch):
    expected = _values(tmp_path)
    monkeypatch.setattr(trec, "MIN_BLOCK", 256)  # many Arrow chunks per column
    monkeypatch.setattr(trec, "PARSE_BLOCKS", 1 << 20)
    run = rankwise.read_run(write(tmp_path, "run", RUN))
    assert run.docs.num_chunks > 10
    assert _values(tmp_path) == expected


def test_many_run_only_queries_widen_the_key_layout(tmp_path):
    """More run-only queries than judged ones need one more bit for query codes."""
    extra = "".join(f"x{q} Q0 d1 1 1.0 run\n" for q in range(40))
    qrels, run = write(tmp_path, "qrels", QRELS), write(tmp_path, "run", RUN + extra)
    result = rankwise.evaluate(qrels, run, MEASURES, per_query=True)
    assert result.per_query() == _values(tmp_path)
    assert result.diagnostics["run"]["queries_only_in_run"] == 42


def test_fingerprints_do_not_depend_on_the_slice_size(monkeypatch):
    """Ids are fingerprinted slice by slice: any slice size gives the same fingerprints and
    words, ids at the end of the data buffer (read from its zero-padded tail) included."""
    rng = np.random.default_rng(5)
    for alphabet_max in (5, 20):  # short ids (words) and a mix with long ones (no words)
        ids = ["".join(rng.choice(list("abcdé0123"), int(rng.integers(0, alphabet_max))))
               for _ in range(500)]
        strings = pa.chunked_array([ids[:137], ids[137:]])
        whole = keys.fingerprints_and_words(strings)
        assert (whole[1] is None) == (alphabet_max == 20)
        for size in (1, 3, 64):
            monkeypatch.setattr(keys, "FINGERPRINT_BLOCK_ROWS", size)
            fp, words = keys.fingerprints_and_words(strings)
            assert np.array_equal(fp, whole[0])
            assert (words is None) == (whole[1] is None)
            if words is not None:
                assert np.array_equal(words, whole[1])
        assert [keys.fingerprints(pa.array([text]))[0] for text in ids[-5:]] == \
            whole[0][-5:].tolist()


def test_take_from_a_chunked_array_is_arrows_take():
    """Chunked columns are taken from chunk by chunk (Arrow's own take joins every chunk
    first): the same values in the order asked for, whatever the rows; Arrow's answer where
    it must give one (no rows, a row out of range, dictionary chunks)."""
    from rankwise.core.arrow import take

    rng = np.random.default_rng(5)
    for case in range(200):
        n = int(rng.integers(1, 50))
        values = [f"id{i}" * int(rng.integers(0, 4)) for i in range(n)]
        cuts = np.sort(rng.integers(0, n + 1, int(rng.integers(1, 5))))
        column = pa.chunked_array([pa.array(values[a:b], pa.string()) for a, b in
                                   zip(np.r_[0, cuts], np.r_[cuts, n])], type=pa.string())
        rows = rng.integers(0, n, int(rng.integers(1, 60)))
        if case % 3 == 0:
            rows = np.sort(rows)
        taken = take(column, rows)
        assert taken.type == pa.string()
        chunk_of_row = np.searchsorted(np.cumsum([len(c) for c in column.chunks]), rows,
                                       side="right")
        in_chunk_order = bool(np.all(np.diff(chunk_of_row) >= 0))  # ascending rows are
        assert taken.num_chunks == (len(set(chunk_of_row)) if in_chunk_order else 1)
        assert taken.to_pylist() == [values[i] for i in rows]
        assert take(column, rows).equals(column.take(pa.array(rows)))
    column = pa.chunked_array([["a", "b"], ["c"]])
    assert take(column, np.zeros(0, dtype=np.int64)).to_pylist() == []
    with pytest.raises(IndexError):
        take(column, np.array([0, 3]))
    encoded = pa.chunked_array([pa.array(["x", "y"]).dictionary_encode(),
                                pa.array(["y", "z"]).dictionary_encode()])
    assert take(encoded, np.array([3, 0, 2])).to_pylist() == ["z", "x", "y"]


def test_a_query_given_empty_without_judgments_under_run_only_queries_zero():
    """run_only_queries="zero" evaluates run queries without judgments as queries without
    relevant documents; one given with no document (q9) was counted as only in the run but
    left out (2 queries evaluated, AP 0.5). It is an empty ranking: 0, as q8."""
    qrels, run = {"q1": {"a": 1}}, {"q1": {"a": 1.0}, "q8": {"b": 1.0}, "q9": {}}
    result = rankwise.evaluate(qrels, run, ["AP", "P@5"], per_query=True,
                               run_only_queries="zero")
    assert result.per_query() == {"q1": {"AP": 1.0, "P@5": 0.2}, "q8": {"AP": 0.0, "P@5": 0.0},
                                  "q9": {"AP": 0.0, "P@5": 0.0}}
    d = result.diagnostics["run"]
    assert (d["queries_evaluated"], d["queries_only_in_run"], d["queries_only_in_run_scored"],
            d["queries_empty_in_run"], d["queries_without_relevant"]) == (3, 2, 2, 1, 2)
    ignored = rankwise.evaluate(qrels, run, ["AP"], per_query=True).diagnostics["run"]
    assert (ignored["queries_evaluated"], ignored["queries_only_in_run"],
            ignored["queries_only_in_run_scored"], ignored["queries_empty_in_run"]) == (1, 2, 0, 0)
