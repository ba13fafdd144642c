"""Many small runs ranked as one table (``core.together.rank_together``) give each run the
lists ranking it alone gives, bit for bit, and the same errors; runs stacking cannot keep
apart are ranked alone."""

from __future__ import annotations

from concurrent.futures import Future

import numpy as np
import pytest

import rankwise
import rankwise.core.together as together
from rankwise.conventions import Conventions
from rankwise.core.judgments import index_judgments
from rankwise.core.lists import stack_lists
from rankwise.core.ranked import rank
from rankwise.errors import InputError


def _collection(seed: int, runs: int = 6):
    """Judgments and TREC run texts: tied scores, unjudged documents, queries on one side
    only, runs in and out of score order, one in several pieces, rank columns that
    contradict the scores."""
    rng = np.random.default_rng(seed)
    qrels, texts = [], []
    for q in range(40):
        if q % 7 != 3:  # some queries only in the runs
            for d in rng.choice(60, size=int(rng.integers(1, 15)), replace=False):
                qrels.append(f"q{q} 0 d{d} {int(rng.integers(-1, 4))}")
    for r in range(runs):
        lines = []
        for q in range(40):
            if (q + r) % 9 == 5:  # some judged queries missing from this run
                continue
            docs = rng.choice(80, size=int(rng.integers(1, 30)), replace=False)
            scores = np.sort(rng.integers(0, 8, len(docs)).astype(float))[::-1]  # ties
            for i, (d, s) in enumerate(zip(docs, scores)):
                rank_column = i + 1 if (q + r) % 5 else len(docs) - i  # some contradict
                lines.append(f"q{q} Q0 d{d} {rank_column} {s:g} run{r}")
        if r % 3 == 1:
            rng.shuffle(lines)  # out of order, queries in several pieces
        texts.append("\n".join(lines) + "\n")
    return "\n".join(qrels) + "\n", texts


def _files(tmp_path, qrels: str, texts: list[str]):
    (tmp_path / "qrels.txt").write_text(qrels)
    paths = []
    for i, text in enumerate(texts):
        paths.append(tmp_path / f"run{i}.txt")
        paths[-1].write_text(text)
    return rankwise.to_qrels(str(tmp_path / "qrels.txt")), \
        [rankwise.to_run(str(p)) for p in paths]


def _assert_same(got: together.Ranked, expected: list):
    """Each run's lists as ranking it alone gives them, and the stack as stack_lists makes it."""
    assert len(got.lists) == len(expected)
    _assert_same_lists([got.stacked], [stack_lists(expected)])
    _assert_same_lists(got.lists, expected)


def _assert_same_lists(got: list, expected: list):
    for a, b in zip(got, expected):
        assert a.query_ids.tolist() == b.query_ids.tolist()
        for name in ("offsets", "score", "run_row", "levels", "level_counts"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), name
        assert np.array_equal(a.grade, b.grade, equal_nan=True)
        assert a.conventions == b.conventions
        assert a.diagnostics.to_dict() == b.diagnostics.to_dict()


@pytest.fixture
def stacked_calls(monkeypatch):
    """How many runs each stacked pass ranked (None: it handed them back)."""
    calls = []
    real = together._rank_stacked

    def spy(judgments, runs, conv):
        out = real(judgments, runs, conv)
        calls.append(None if out is None else len(runs))
        return out

    monkeypatch.setattr(together, "_rank_stacked", spy)
    return calls


@pytest.mark.parametrize("conventions", [
    {}, {"missing_queries": "zero"}, {"run_only_queries": "zero"}, {"ties": "optimistic"},
    {"ties": "input_order"}, {"unjudged": "remove"}, {"max_depth": 5},
    {"score_precision": "float32"}, {"relevance_threshold": 2}])
def test_each_run_gets_the_lists_it_gets_alone(tmp_path, stacked_calls, conventions):
    qrels, runs = _files(tmp_path, *_collection(1))
    index = index_judgments(qrels)
    conv = Conventions().with_options(**conventions)
    _assert_same(together.rank_together(index, runs, conv), [rank(index, r, conv) for r in runs])
    assert stacked_calls == [len(runs)]
    diag = [r.diagnostics for r in together.rank_together(index, runs, conv).lists]
    assert any(d.queries_rank_contradicts_score for d in diag)
    assert any(d.tied_rows for d in diag) and any(d.queries_only_in_qrels for d in diag)


def test_a_future_index_and_many_rows_in_two_threads(tmp_path, monkeypatch, stacked_calls):
    qrels, runs = _files(tmp_path, *_collection(2))
    index = index_judgments(qrels)
    monkeypatch.setattr(together, "THREAD_MIN_ROWS", 10)  # the ordering in a second thread
    pending: Future = Future()
    pending.set_result(index)
    _assert_same(together.rank_together(pending, runs), [rank(index, r) for r in runs])
    assert stacked_calls == [len(runs)]


def test_runs_with_and_without_a_rank_column_are_stacked_apart(tmp_path, stacked_calls):
    qrels, runs = _files(tmp_path, *_collection(3))
    no_rank = [rankwise.to_run({q: dict(zip(d, s)) for q, d, s in _by_query(r)}) for r in runs[:3]]
    mixed = [runs[0], no_rank[0], runs[1], no_rank[1], runs[2], no_rank[2]]
    index = index_judgments(qrels)
    _assert_same(together.rank_together(index, mixed), [rank(index, r) for r in mixed])
    assert stacked_calls == [3, 3]


def _by_query(run):
    """(query, docs, scores) of every query of a Run."""
    docs = np.array(run.docs.to_pylist())
    for code, query in enumerate(run.query_dict.to_pylist()):
        rows = np.flatnonzero(run.query_code == code)
        yield query, docs[rows].tolist(), run.score[rows].tolist()


def test_runs_that_cannot_be_stacked_are_ranked_alone(tmp_path, stacked_calls):
    qrels, runs = _files(tmp_path, *_collection(4, runs=3))
    integer_ids = rankwise.to_run(
        __import__("pandas").DataFrame({"query": ["q1", "q1", "q2"], "doc": [1, 2, 3],
                                        "score": [2.0, 1.0, 1.0]}))
    empty_query = rankwise.to_run({"q1": {"d1": 1.0}, "q2": {}})
    some = [runs[0], integer_ids, runs[1], empty_query, runs[2]]
    index = index_judgments(qrels)
    _assert_same(together.rank_together(index, some), [rank(index, r) for r in some])
    assert stacked_calls == [3]


@pytest.mark.parametrize("duplicates", ["first", "last", "max"])
def test_a_run_holding_a_pair_twice_sends_the_batch_alone(tmp_path, stacked_calls,
                                                          duplicates):
    qrels_text, texts = _collection(5, runs=4)
    texts[2] += texts[2].splitlines()[3].replace(" run2", " run2") + "\n"  # a pair twice
    qrels, runs = _files(tmp_path, qrels_text, texts)
    index = index_judgments(qrels)
    conv = Conventions().with_options(duplicates=duplicates)
    _assert_same(together.rank_together(index, runs, conv),
                 [rank(index, r, conv) for r in runs])
    assert stacked_calls == [None]
    third = together.rank_together(index, runs, conv).lists[2]
    assert third.diagnostics.run_duplicates_dropped == 1


def test_the_first_error_in_order_is_raised(tmp_path):
    qrels_text, texts = _collection(6, runs=5)
    texts[1] = "zz1 Q0 d1 1 3.0 unjudged\n"  # no query in common with the judgments
    texts[3] += texts[3].splitlines()[0] + "\n"  # a pair twice
    qrels, runs = _files(tmp_path, qrels_text, texts)
    index = index_judgments(qrels)
    for some in (runs, runs[:3], runs[2:]):  # both errors, the first alone, the second
        with pytest.raises(InputError) as alone:
            [rank(index, r) for r in some]
        with pytest.raises(InputError) as stacked:
            together.rank_together(index, some)
        assert str(stacked.value) == str(alone.value)
    assert "no query in common" in str(pytest.raises(
        InputError, together.rank_together, index, runs[:3]).value)
    assert "appears twice" in str(pytest.raises(
        InputError, together.rank_together, index, runs[2:]).value)


def test_row_facts_of_stacked_lists_are_each_systems_own(tmp_path):
    """The checks' facts read from the rows (ties straddling a cutoff, Judged@K), computed
    once on many systems' lists stacked, are cut into each system's own."""
    from rankwise.diagnostics import RowFacts

    qrels, runs = _files(tmp_path, *_collection(7))
    lists = together.rank_together(index_judgments(qrels), runs).lists
    shared = RowFacts(stack_lists(lists))
    start = 0
    for one in lists:
        mine, part = RowFacts(one), slice(start, start + one.num_queries)
        for cutoff in (1, 3, 10):
            for a, b in zip(shared.straddling(cutoff), mine.straddling(cutoff)):
                assert np.array_equal(a[part], b)
        assert any(mine.straddling(3)[1])  # ties of mixed grades straddle rank 3 somewhere
        for cutoff in (None, 5):
            assert np.array_equal(shared.judged(cutoff)[part], mine.judged(cutoff),
                                  equal_nan=True)
        start += one.num_queries
    assert start == stack_lists(lists).num_queries


def test_absent_codes_are_each_parts_first_missing_codes():
    """The queries each run lacks (all of them, or the first few as examples), found for all
    the stacked runs at once, are those a set difference finds run by run."""
    from rankwise.core.ranked import _absent_codes
    from rankwise.parts import Parts

    rng = np.random.default_rng(11)
    for trial in range(200):
        size, parts = int(rng.integers(0, 30)), int(rng.integers(1, 6))
        seen = [rng.choice(size, int(rng.integers(0, size + 1)), replace=False)
                for _ in range(parts)]
        codes = np.concatenate([np.zeros(0, np.int64), *seen])
        part = np.repeat(np.arange(parts), [len(s) for s in seen])
        for limit in (None, 1, 5):
            got, got_part = _absent_codes(codes, part, parts, size, limit)
            for i, mine in enumerate(seen):
                want = sorted(set(range(size)) - set(mine.tolist()))[:limit]
                assert got[got_part == i].tolist() == want, (trial, limit)
        mask = rng.random(size) < 0.5
        bounds = np.unique(np.r_[0, rng.integers(0, size + 1, parts), size])
        want = [int((~mask[a:b]).sum()) for a, b in zip(bounds[:-1], bounds[1:])]
        assert Parts(bounds).counts(~mask) == want
