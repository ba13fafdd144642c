"""The one pass cut into blocks: the join works block by block of whole queries, and tie
groups are ordered by one packed integer sort; both must give exactly what the single-block
pass and a plain lexicographic sort give."""

from __future__ import annotations

import numpy as np
import pytest

import rankwise
import rankwise.core.ranked as ranked
from rankwise.core import join, judgments, segments
from rankwise.core.lists import Diagnostics, RankedLists, stack_lists, ties_by_grade
from rankwise.core.order import sort_within_groups, tie_group_rows
from rankwise.errors import InputError

MEASURES = ["P@5", "R@20", "AP", "nDCG@10", "nDCG", "RR", "Rprec", "Bpref", "ERR@10", "NumRet",
            "NumRelRet"]


def _collection(seed: int, grouped: bool = True, duplicates: int = 0):
    """(qrels rows, run rows): 300 queries, tied scores, unjudged documents, one-sided queries,
    optionally shuffled (queries in several pieces) and with repeated (query, doc) rows."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(300):
        docs = rng.choice(400, size=int(rng.integers(1, 40)), replace=False)
        if q % 17 != 3:  # some queries only in the run
            for d in docs[: len(docs) // 2 + 1]:
                qrels.append((f"q{q}", f"d{d}", int(rng.integers(0, 4))))
        if q % 19 != 5:  # some only in the judgments
            for rank, d in enumerate(docs):
                run.append((f"q{q}", f"d{d}", float(rng.integers(0, 6))))  # many ties
    run.sort(key=lambda r: (r[0], -r[2]))
    for i in rng.choice(len(run), size=duplicates, replace=False):
        run.append(run[i])
    if not grouped:
        rng.shuffle(run)
    return qrels, run


def _frames(qrels, run):
    import pandas as pd

    return (pd.DataFrame(qrels, columns=["query", "doc", "relevance"]),
            pd.DataFrame(run, columns=["query", "doc", "score"]))


def _per_query(qrels, run, **conventions):
    result = rankwise.evaluate(qrels, run, MEASURES, per_query=True, **conventions)
    system = next(iter(result.systems.values()))
    return result.per_query(), system.diagnostics


@pytest.mark.parametrize("grouped", [True, False])
@pytest.mark.parametrize("duplicates", [0, 25])
@pytest.mark.parametrize("threads", [1, 3])
def test_blocks_give_the_single_block_values(monkeypatch, grouped, duplicates, threads):
    qrels, run = _frames(*_collection(1, grouped, duplicates))
    conventions = {"duplicates": "first"} if duplicates else {}
    whole = _per_query(qrels, run, **conventions)
    monkeypatch.setattr(join, "JOIN_BLOCK_ROWS", 37)  # many blocks, cut between queries
    monkeypatch.setattr(join, "JOIN_THREADS", threads)  # joined side by side or in turn
    blocks = _per_query(qrels, run, **conventions)
    assert blocks == whole
    assert whole[1]["run_duplicates_dropped"] == duplicates


def test_blocks_cut_only_between_queries():
    codes = np.repeat(np.array([4, 0, 2, 1, 3]), [5, 1, 7, 2, 9])
    blocks = segments.query_blocks(codes, 4)
    assert blocks[0][0] == 0 and blocks[-1][1] == len(codes)
    starts = {0, 5, 6, 13, 15, len(codes)}
    assert all(a in starts and b in starts for a, b in blocks)
    assert segments.query_blocks(np.array([0, 0, 1, 1, 0, 0]), 2) == [(0, 6)]  # q0 in two pieces


def test_a_duplicate_is_found_in_any_block(monkeypatch):
    qrels, run = _frames(*_collection(2, True, 1))
    monkeypatch.setattr(join, "JOIN_BLOCK_ROWS", 50)
    with pytest.raises(InputError, match="appears twice"):
        rankwise.evaluate(qrels, run, ["P@5"])


@pytest.mark.parametrize("block", [1, 7, 100, 1 << 12, 1 << 20])
def test_packedsort_within_groups_is_lexsort(monkeypatch, block):
    """Sorted in one pass or block by block of whole groups (groups larger than a block,
    one group, single rows): the permutation of one lexsort by (group, key)."""
    from rankwise.core import order

    monkeypatch.setattr(order, "SORT_BLOCK_ROWS", block)
    rng = np.random.default_rng(3)
    for group in (np.sort(rng.integers(0, 300, 5000)), np.zeros(500, dtype=np.int64),
                  np.arange(700), np.repeat(np.arange(4), [1, 900, 3, 2000])):
        n = len(group)
        for key in (rng.integers(0, 2**63, n, dtype=np.uint64),
                    rng.integers(0, 4, n).astype(np.uint64)):  # equal keys keep input order
            assert np.array_equal(sort_within_groups(group, key), np.lexsort((key, group)))


def test_sorting_only_the_tied_rows_is_lexsort():
    """Tie groups re-ordered by grade touch only the rows of groups of two or more rows: the
    same permutation as one lexsort by (group, key), singletons and empty lists included;
    and the queries with a tie group mixing keys are those whose groups' keys differ."""
    rng = np.random.default_rng(5)
    for trial in range(300):
        n = int(rng.integers(0, 80))
        score = rng.integers(0, 5 if trial % 3 else 1000, n).astype(float)
        offsets = np.unique(np.r_[0, rng.integers(0, n + 1, 4), n])
        group = segments.tie_groups(score, offsets)
        grade = rng.integers(-2, 4, n).astype(float)
        grade[rng.random(n) < 0.3] = np.nan  # unjudged: grade -1 in the order
        key = np.where(grade >= 0, grade, -1.0)
        rows, numbers = tie_group_rows(score, offsets)
        sizes = np.bincount(group, minlength=len(group) and group[-1] + 1)
        assert np.array_equal(rows, np.flatnonzero(sizes[group] > 1))
        assert np.array_equal(np.diff(numbers) > 0, np.diff(group[rows]) > 0)
        for best_first in (True, False):
            perm = np.arange(n)
            tied, source = ties_by_grade(score, offsets, grade, best_first)
            again = ties_by_grade(score, offsets, grade, best_first, (rows, numbers))
            assert np.array_equal(again[0], tied) and np.array_equal(again[1], source)
            perm[tied] = source
            want = np.lexsort((-key if best_first else key, group))
            assert np.array_equal(perm, want), (trial, best_first)
        lists = RankedLists(np.arange(len(offsets) - 1).astype(str).astype(object),
                            offsets, grade, score, np.arange(n), None, np.zeros(0),
                            np.zeros((len(offsets) - 1, 0)), rankwise.Conventions(),
                            Diagnostics())
        for best_first in (True, False):  # the lists re-ordered: every column moved alike
            moved = lists.with_ties_by_grade(best_first)
            perm = moved.run_row
            assert np.array_equal(np.sort(perm), np.arange(n))
            assert np.array_equal(moved.grade, grade[perm], equal_nan=True)
            assert np.array_equal(moved.score, score[perm])
        for by in (None, grade >= 1):
            values = key if by is None else by.astype(float)
            mixed = np.zeros(len(offsets) - 1, dtype=bool)
            for g in np.unique(group):
                first = np.flatnonzero(group == g)[0]
                if np.ptp(values[group == g]) > 0:
                    mixed[np.searchsorted(offsets, first, "right") - 1] = True
            assert np.array_equal(lists.queries_with_mixed_ties(by), mixed), trial


def test_blockwise_sort_by_query_then_score_is_lexsort(monkeypatch):
    """Runs not in ranked order are sorted block by block of whole queries (a padded table
    where the lists are of similar length, else small blocks): the same permutation as one
    lexsort (ties in input order, -0.0 equal to 0.0), whether the queries are in one piece
    each, in code order or not, or scattered, their lists of one length or not."""
    from rankwise.core import order

    rng = np.random.default_rng(4)
    paths = set()
    real = order.by_score_padded
    monkeypatch.setattr(order, "by_score_padded",
                        lambda c, s: paths.add(real(c, s) is None) or real(c, s))
    for trial in range(400):
        nq = int(rng.integers(1, 30))
        qc = rng.integers(0, nq, int(rng.integers(1, 300))).astype(np.int32)
        if trial % 4 == 1:
            qc = np.sort(qc)
        elif trial % 4 == 2:
            qc = np.repeat(rng.permutation(nq), rng.integers(1, 20, nq)).astype(np.int32)
        elif trial % 4 == 3:  # every list of one length (learning-to-rank candidates)
            qc = np.repeat(rng.permutation(nq), int(rng.integers(1, 20))).astype(np.int32)
        score = rng.choice([0.0, -0.0, 1.5, 2.0, -3.0, 1e300], len(qc))
        monkeypatch.setattr(order, "SORT_BLOCK_ROWS", int(rng.integers(1, 50)))
        monkeypatch.setattr(order, "PADDED_BLOCK_ROWS", int(rng.integers(1, 400)))
        starts = np.flatnonzero(np.r_[True, qc[1:] != qc[:-1]])
        grouped = len(np.unique(qc[starts])) == len(starts)
        assert np.array_equal(order._by_query_then_score(qc, score, grouped),
                              np.lexsort((-score, qc)))
    assert paths == {True, False}  # both ways taken


def test_checks_alongside_the_measures_give_the_same_result(monkeypatch):
    """On large lists the checks that need no values (and the tie-order check's bounds) run
    in a second thread while the measures are computed: the values, checks and warnings are
    those of one thread."""
    import rankwise.api as api

    qrels, run = _frames(*_collection(3))
    one_thread = rankwise.evaluate(qrels, run, MEASURES, per_query=True)
    monkeypatch.setattr(api, "THREAD_MIN_ROWS", 0)
    alongside = rankwise.evaluate(qrels, run, MEASURES, per_query=True)
    assert alongside.per_query() == one_thread.per_query()
    assert alongside.to_json() == one_thread.to_json()
    assert {c["code"] for c in next(iter(alongside.systems.values())).checks} >= {
        "binary_judgments", "ties_at_cutoff", "no_relevant", "judged_at_k", "carried_by_few",
        "tie_sensitivity"}


def test_tie_order_bounds_side_by_side_equal_one_after_the_other(monkeypatch):
    """On large lists the best and worst tie orders are evaluated in two threads: the bounds
    are those of one thread, and the tie-order check's messages with them."""
    from rankwise.core.ranked import rank
    from rankwise.diagnostics import tie_order_bounds
    from rankwise.io.frames import to_qrels, to_run
    from rankwise.measures import parse_measures

    qrels, run = _frames(*_collection(4))
    lists = rank(to_qrels(qrels), to_run(run))
    parsed = list(parse_measures(MEASURES))
    values = {str(m): m.compute(lists) for m in parsed}
    in_turn = tie_order_bounds(lists, parsed, values)
    report = rankwise.evaluate(qrels, run, MEASURES, ties="input_order").to_json()
    monkeypatch.setattr(ranked, "THREAD_MIN_ROWS", 0)
    side_by_side = tie_order_bounds(rank(to_qrels(qrels), to_run(run)), parsed, values)
    assert rankwise.evaluate(qrels, run, MEASURES, ties="input_order").to_json() == report
    assert "would lie anywhere from" in report
    assert in_turn.mixed.any() and set(in_turn.bounds) == set(side_by_side.bounds)
    assert {"AP", "nDCG@10", "RR"} <= set(in_turn.bounds)
    for name, (best, worst) in in_turn.bounds.items():
        np.testing.assert_array_equal(side_by_side.bounds[name][0], best)
        np.testing.assert_array_equal(side_by_side.bounds[name][1], worst)
        assert (best != worst).any()


def test_several_run_files_read_side_by_side_keep_their_order_and_first_error(tmp_path):
    """Run files are read two at a time: names and results follow the given order, and the
    first bad file in that order is the one reported."""
    from tests.helpers import write

    qrels = write(tmp_path, "qrels", "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n")
    runs = {f"r{i}": write(tmp_path, f"run{i}", f"q1 Q0 a 1 {i} t{i}\nq1 Q0 b 2 3.5 t{i}\n"
                           "q2 Q0 c 1 1.0 t\n") for i in range(6)}
    result = rankwise.evaluate(qrels, runs, ["RR"])
    assert list(result.systems) == list(runs)
    assert [s.aggregates["RR"] for s in result.systems.values()] == [
        rankwise.evaluate(qrels, path, ["RR"]).mean("RR") for path in runs.values()]
    assert len({s.aggregates["RR"] for s in result.systems.values()}) > 1
    listed = rankwise.evaluate(qrels, list(runs.values()), ["RR"])
    assert list(listed.systems) == ["t0", "t1", "t2", "t3", "t4", "t5"]
    bad = dict(runs)
    bad["r2"] = write(tmp_path, "bad2", "q1 Q0 a 1 high t\n")
    bad["r4"] = write(tmp_path, "bad4", "q1 Q0 a 1\n")
    with pytest.raises(InputError, match="bad2"):
        rankwise.evaluate(qrels, bad, ["RR"])


@pytest.mark.parametrize("kind", ["small integers", "fractions", "large"])
def test_grade_levels_counted_block_by_block(monkeypatch, kind):
    """Per query, the judgments at each grade level: counted block by block (any block size)
    or with one unique pass for other grades; negative grades are not levels."""
    rng = np.random.default_rng(6)
    grades = rng.integers(-1, 4, 500).astype(np.float64)
    if kind == "fractions":
        grades[::7] += 0.5
    elif kind == "large":
        grades[::11] = 5000.0
    query = rng.integers(0, 40, 500).astype(np.int32)
    levels = np.unique(grades[grades >= 0])
    expected = np.array([[np.sum((query == q) & (grades == g)) for g in levels]
                         for q in range(40)])
    for size in (7, 64, 1 << 22):
        monkeypatch.setattr(judgments, "LEVEL_BLOCK_ROWS", size)
        got_levels, counts = judgments.level_counts(40, grades, query)
        assert np.array_equal(got_levels, levels) and np.array_equal(counts, expected)
    assert judgments.level_counts(3, np.array([-1.0]), np.array([0]))[1].shape == (3, 0)


@pytest.mark.parametrize("conventions", [
    {}, {"missing_queries": "zero"}, {"ties": "expected"}, {"unjudged": "remove"},
    {"max_depth": 7, "relevance_threshold": 2}, {"no_relevant": "skip", "idcg_zero": "nan"}])
def test_small_runs_evaluated_together_as_each_alone(monkeypatch, conventions):
    """Small runs are ranked one by one and their lists stacked, each measure (and the
    tie-order check's bounds) and each check made once for all (``parts.Parts``): every
    system's values, diagnostics, checks and warnings are those of evaluating it alone,
    whatever the batches."""
    import json

    import rankwise.api as api

    qrels, rows = _collection(4)
    rng = np.random.default_rng(4)
    runs = {}
    for i in range(9):  # different subsets: queries and documents vary across systems
        keep = rng.random(len(rows)) < (0.3 + 0.07 * i)
        runs[f"s{i}"] = _frames(qrels, [r for r, k in zip(rows, keep) if k])[1]
    runs["no ties"] = _frames(qrels, [(q, d, s + 1e-3 * n) for n, (q, d, s) in
                                      enumerate(rows)])[1]
    runs["empty"] = {"q1": {}}  # one query given with no document: no row at all
    qrels = _frames(qrels, rows)[0]
    measures = MEASURES + ["gm_map", "IPrec@0.5", "Success@10", "RR@10", "AP@10"]
    alone = {name: json.loads(rankwise.evaluate(qrels, run, measures, per_query=True,
                                                **conventions).to_json())["systems"]["run"]
             for name, run in runs.items()}
    batches = []
    real = api._stacked_values
    monkeypatch.setattr(api, "_stacked_values",
                        lambda ranked, parsed: batches.append(len(ranked.lists))
                            or real(ranked, parsed))
    for max_rows, stack_rows, beside in [(1 << 17, 1 << 20, False), (4000, 6000, False),
                                         (1 << 17, 1 << 20, True)]:
        monkeypatch.setattr(api, "STACK_RUN_MAX_ROWS", max_rows)
        monkeypatch.setattr(api, "STACK_ROWS", stack_rows)
        # the checks' value-free part beside the measures, as on large stacks
        monkeypatch.setattr(api, "THREAD_MIN_ROWS", 0 if beside else ranked.THREAD_MIN_ROWS)
        together = json.loads(rankwise.evaluate(qrels, runs, measures, per_query=True,
                                                **conventions).to_json())["systems"]
        assert list(together) == list(runs)
        for name in runs:
            assert together[name] == alone[name], name
    assert batches[0] == batches[-1] == len(runs)  # first and last: every run in one batch
    assert len(batches) > 3 and max(batches[1:-1]) < len(runs)  # then several, some alone
    assert any(c["code"] == "tie_sensitivity" and c["severity"] == "warning"
               for c in alone["s3"]["checks"]) or conventions.get("ties") == "expected"


def test_lists_of_other_judgments_or_conventions_are_not_stacked():
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0, "b": 0.5}}
    lists = ranked.rank(rankwise.to_qrels(qrels), rankwise.to_run(run))
    stacked = stack_lists([lists, lists])
    assert stacked.num_queries == 2 and np.array_equal(stacked.offsets, [0, 2, 4])
    graded = ranked.rank(rankwise.to_qrels({"q": {"a": 2}}), rankwise.to_run(run))
    with pytest.raises(ValueError, match="cannot be stacked"):
        stack_lists([lists, graded])
    with pytest.raises(ValueError, match="cannot be stacked"):
        stack_lists([lists, lists.with_conventions(
            lists.conventions.with_options(relevance_threshold=2))])


@pytest.mark.parametrize("rows", [10, 1 << 17])
def test_run_files_are_read_a_bounded_number_ahead(monkeypatch, rows):
    """Runs are read ahead of the evaluation (two when small, one after a large run) and
    yielded in order; stopping early leaves the rest unread."""
    import threading

    import rankwise.api as api

    started, lock = [], threading.Lock()

    class FakeRun:
        def __init__(self, source):
            self.source = source

        def __len__(self):
            return rows

    def fake_to_run(source, name=None, *columns):
        with lock:
            started.append(source)
        return FakeRun(source)

    monkeypatch.setattr(api, "to_run", fake_to_run)
    ahead = api.READ_AHEAD if rows < api.STACK_RUN_MAX_ROWS else 1
    reader = api._read_runs(list(range(20)), [None] * 20, [False] * 20)
    for i, run in enumerate(reader):
        assert run.source == i
        with lock:
            assert len(started) <= i + 1 + api.READ_AHEAD
        if i == 5:
            break
    reader.close()
    assert len(started) <= 6 + ahead
    assert sorted(started) == list(range(len(started)))


@pytest.mark.parametrize("size, expected", [(100, 7), (3000, 4)])
def test_small_run_files_are_read_ahead_within_a_byte_budget(monkeypatch, tmp_path, size,
                                                             expected):
    """Small run files are read ahead while the files ahead hold at most READ_AHEAD_BYTES
    (and at most READ_AHEAD_MAX reading units), so that a batch is read while the one before
    is evaluated; never fewer than READ_AHEAD."""
    import threading
    import time

    import rankwise.api as api

    started, lock = [], threading.Lock()
    paths = []
    for i in range(12):
        path = tmp_path / f"run{i}.txt"
        path.write_bytes(b"x" * size)
        paths.append(str(path))

    class FakeRun:
        def __init__(self, source):
            self.source = source

        def __len__(self):
            return 10

    def fake_to_run(source, name=None, *columns):
        with lock:
            started.append(source)
        return FakeRun(source)

    monkeypatch.setattr(api, "to_run", fake_to_run)
    monkeypatch.setattr(api, "READ_AHEAD_MAX", 6)
    monkeypatch.setattr(api, "READ_AHEAD_BYTES", 10_000)
    monkeypatch.setattr(api, "GROUP_FILE_BYTES", 0)  # each file a unit of its own
    reader = api._read_runs(paths, [None] * 12, [False] * 12)
    assert next(reader).source == paths[0]
    for _ in range(200):  # the reads ahead finish in the two threads
        with lock:
            if len(started) >= expected:
                break
        time.sleep(0.005)
    time.sleep(0.05)
    with lock:
        assert len(started) == expected  # the first, and those it let be read ahead
    assert [run.source for run in reader] == paths[1:]


@pytest.mark.parametrize("seed", range(8))
def test_tie_group_extents_are_those_of_the_numbered_groups(seed):
    """The binary searches find each asked row's tie group as numbering every row's group
    does: groups at the edges of a query, a whole query tied, one-row queries, empty
    queries, -0.0 beside 0.0."""
    from rankwise.core.segments import tie_group_extents, tie_groups

    rng = np.random.default_rng(seed)
    lengths = rng.choice([0, 1, 2, 5, 40], size=60)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    levels = rng.choice([1, 3, 30], size=len(lengths))
    values = np.concatenate([-np.sort(-rng.integers(0, k, size=n).astype(float))
                             for k, n in zip(levels, lengths)])
    values[values == 0] = rng.choice([0.0, -0.0], size=int((values == 0).sum()))
    rows = rng.choice(len(values), size=min(len(values), 50), replace=False)
    group = tie_groups(values, offsets)
    first, size = tie_group_extents(values, offsets, rows)
    assert first.tolist() == np.searchsorted(group, group[rows], side="left").tolist()
    assert (first + size).tolist() == np.searchsorted(group, group[rows], side="right").tolist()


@pytest.mark.parametrize("seed", range(6))
def test_segment_of_rows_is_the_segment_column_at_those_rows(seed):
    """The segments of some rows, found from the offsets without a column for every row,
    are the column's at those rows: ascending rows (with repeats), rows in any order, none;
    empty segments anywhere (first, last, in runs)."""
    rng = np.random.default_rng(seed)
    lengths = rng.choice([0, 0, 1, 3, 17], size=50)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    n = int(offsets[-1])
    column = segments.segment_ids(offsets)
    ascending = np.sort(rng.choice(n, size=n // 3))  # repeats included
    for rows in (ascending, rng.permutation(ascending), np.flatnonzero(rng.random(n) < 0.5),
                 np.arange(n), np.zeros(0, dtype=np.int64)):
        assert segments.segment_of(offsets, rows).tolist() == column[rows].tolist()


@pytest.mark.parametrize("seed", range(6))
def test_rows_within_a_cutoff_are_counted_as_their_ranks_say(seed):
    """Counted from the offsets by binary searches, the rows among each segment's first K
    are those whose rank is below K: cutoffs 1, beyond every segment, one per segment, none;
    empty segments and rows."""
    rng = np.random.default_rng(seed)
    lengths = rng.choice([0, 0, 1, 3, 17], size=50)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    column, rank = segments.segment_ids(offsets), segments.positions(offsets)
    for rows in (np.flatnonzero(rng.random(int(offsets[-1])) < 0.4), np.zeros(0, np.int64)):
        for cutoff in (1, 2, 5, 40, None, rng.integers(0, 20, size=len(lengths))):
            within = rows if cutoff is None else rows[rank[rows] < (
                cutoff[column[rows]] if isinstance(cutoff, np.ndarray) else cutoff)]
            expected = np.bincount(column[within], minlength=len(lengths))
            assert segments.count_within(offsets, rows, cutoff).tolist() == expected.tolist()


@pytest.mark.parametrize("conventions", [{}, {"ties": "expected"}, {"ideal": "retrieved"},
                                         {"unjudged": "remove", "max_depth": 7}])
def test_measures_read_the_same_rows_with_or_without_the_full_columns(conventions):
    """Every measure and check finds its rows' queries and ranks from the offsets unless the
    lists already hold a column of every row's (then it reads that): both ways give the
    same values, bit for bit."""
    from rankwise.conventions import resolve
    from rankwise.core.judgments import index_judgments
    from rankwise.core.ranked import rank
    from rankwise.diagnostics import run_checks
    from rankwise.io import to_qrels, to_run
    from rankwise.measures import parse_measures

    qrels, run = _frames(*_collection(4))
    index, conv = index_judgments(to_qrels(qrels)), resolve(**conventions)
    measures = parse_measures(MEASURES + ["MAE", "RWRR@10", "ARHR@5", "NumNonRelJudgedRet",
                                          "IPrec@0.5", "Success@3"])
    if conv.ties == "expected":
        measures = [m for m in measures if str(m) not in ("MAE", "IPrec@0.5")]
    plain, with_columns = rank(index, to_run(run), conv), rank(index, to_run(run), conv)
    assert len(with_columns.segment) == len(with_columns.position) == with_columns.num_rows
    found = []
    for lists in (plain, with_columns):
        values = {str(m): m.compute(lists) for m in measures}
        found.append((values, [(c.code, c.message) for c in run_checks(lists, measures, values)]))
    assert "segment" not in plain.__dict__ and "position" not in plain.__dict__
    (values, checks), (column_values, column_checks) = found
    for name, value in values.items():
        np.testing.assert_array_equal(value, column_values[name], err_msg=name)
    assert checks == column_checks


@pytest.mark.parametrize("block", [1, 5, 1 << 16])
@pytest.mark.parametrize("descending", [True, False])
def test_tied_rows_ordered_by_doc_id_bytes_short_and_long(monkeypatch, block, descending):
    """Tied rows are ordered by their doc ids' bytes (strcmp, as trec_eval): ids of at most 8
    bytes by their prefixes, longer ones by Arrow block by block of whole groups; both give
    the order of sorting (group, bytes) in Python, UTF-8 and shared prefixes included."""
    import pyarrow as pa

    from rankwise.core import order

    monkeypatch.setattr(order, "ARROW_SORT_BLOCK_ROWS", block)
    rng = np.random.default_rng(block + descending)
    for alphabet, length in (("ab1é", 4), ("ab1é", 12), ("xyz", 30)):
        n = 400
        ids = ["clueweb12-" * (length > 8) + "".join(rng.choice(list(alphabet), size=int(
            rng.integers(1, length)))) for _ in range(n)]
        group = np.sort(rng.integers(0, 60, n))
        tied = np.r_[group[1:] == group[:-1]]
        in_group = order._in_tie_group(tied)
        order_rows = rng.permutation(n).astype(np.int64)  # the rows, by score already
        got = order_rows.copy()
        order._order_ties(got, tied, in_group, pa.array(ids), descending)
        positions = np.flatnonzero(in_group)  # by bytes, ties in input order either way
        ranked = sorted(positions, key=lambda p: ids[order_rows[p]].encode(),
                        reverse=descending)
        want = order_rows.copy()
        for g in np.unique(group[positions]):
            at = [p for p in positions if group[p] == g]
            want[at] = [order_rows[p] for p in ranked if group[p] == g]
        assert got.tolist() == want.tolist()
