"""The ``ranx`` profile against ranx itself, query by query.

ranx is called as its users call it: ``evaluate(Qrels(qrels), Run(run), metrics,
return_mean=False, make_comparable=True)``. ``make_comparable`` drops queries only in the run
and gives judged queries missing from the run an empty ranking (0), which is
``missing_queries="zero"``; without it ranx refuses differing query sets.

How ranx orders tied documents (data_structures/common.py ``sort_dict_by_value``): numba's
``np.argsort`` of the negated scores, a quicksort that switches to insertion sort below 16
elements (numba/misc/quicksort.py, ``SMALL_QUICKSORT = 15``). So a Run keeps the row order of
tied documents in lists of up to 15 documents (``ties="input_order"``); longer lists get the
quicksort's order, which no tie convention reproduces, and plain dicts given to ``evaluate``
are sorted ascending and reversed (``utils.descending_sort``), which reverses the row order.
The tests check each case: exact equality where an order is defined, and rankwise's
pessimistic / optimistic bounds where it is not.

ranx's bpref (metrics/bpref.py) is wrong in three ways, and the profile deliberately gives
trec_eval's bpref instead (they agree wherever ranx's kernel is defined; the bug tests below
fail once ranx changes):

* a query without relevant judgments divides by ``n_rels = 0``: ZeroDivisionError inside the
  ``prange`` loop of ``_bpref_parallel``, swallowed, and every later query of that thread's
  chunk keeps its initial 0, so the values depend on the thread count and on the query order;
* a query without judged non-relevant documents divides by ``min(n_rels, n_non_rels) = 0``:
  NaN, where trec_eval gives the share of relevant documents retrieved;
* grade -1 ("not judged" for trec_eval) counts as judged non-relevant.

And ``evaluate`` on plain dicts pairs the i-th ranking with the i-th judgments, whatever their
query ids (test_plain_dicts_pair_queries_by_position); ``Qrels`` and ``Run`` sort both by id.
Slow-marked tests compile every ranx metric (numba, about a minute of CPU on a cold cache).
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

ranx = pytest.importorskip("ranx")

from ranx import Qrels, Run  # noqa: E402
from ranx.metrics import interpolated_precision_at_recall  # noqa: E402

import rankwise  # noqa: E402
from rankwise.conventions import profile  # noqa: E402
from tests.peers.profile_compare import (  # noqa: E402
    assert_same, assert_within_tie_bounds, mismatches, rankwise_values)
from tests.peers.profile_data import make_profile_data  # noqa: E402

#: ranx's metric names (ranx.metrics.metric_switch), with and without @k, given to rankwise
#: as they are: what is tested is the profile's own translation (Profile.measure_names)
RANX_NAMES = [
    "precision", "precision@5", "precision@10", "recall", "recall@10", "f1", "f1@10",
    "hits", "hits@5", "hit_rate", "hit_rate@5", "mrr", "mrr@3", "map", "map@10", "ndcg",
    "ndcg@10", "ndcg_burges", "ndcg_burges@10", "dcg", "dcg@10", "dcg_burges",
    "dcg_burges@10", "r-precision", "r-precision@3", "bpref", "ndcg@0", "precision@0",
]
#: ranx's relevance levels (the -lN suffix: grades below N are not relevant and gain 0) on
#: every metric that takes one: all of them (bpref where its kernel is defined; rbp binary,
#: see test_rbp_is_binary_rbp_with_ranx_persistence)
LEVELLED = [f"{name}-l{level}" for name in RANX_NAMES if name != "bpref" for level in (0, 2, 3)]
# ranx metric -> the name rankwise is given under the profile: ranx's own
MEASURES = {name: name for name in RANX_NAMES + LEVELLED}
#: the names whose meaning depends on the cutoff being there (the whole list without it)
WHOLE_LIST = ["precision", "recall", "f1", "hit_rate", "hits", "hits@5"]
# a few kernels for the tests outside the slow mark (each ranx metric compiles on first use)
CORE = ["precision@5", "map", "mrr", "ndcg@10"]
# where ranx's bpref kernel is undefined (see the module docstring)
BPREF_BREAKERS = ("x-no-relevant", "x-no-nonrelevant")


def ranx_values(data, metrics, threads: int = 0) -> dict[str, dict[str, float]]:
    qrels, run = Qrels(data.qrels), Run(data.run)
    scores = ranx.evaluate(qrels, run, list(metrics), return_mean=False, make_comparable=True,
                           threads=threads)
    if len(metrics) == 1:
        scores = {metrics[0]: scores}
    return {q: {m: float(scores[m][i]) for m in metrics} for i, q in enumerate(run.run.keys())}


def ours(data, metrics, **overrides):
    return rankwise_values(data.qrels, data.run, {m: MEASURES.get(m, m) for m in metrics}, "ranx",
                           **overrides)


def ranx_means(data, metrics) -> dict[str, float]:
    """ranx's means over the queries (return_mean=True), as its users read them."""
    scores = ranx.evaluate(Qrels(data.qrels), Run(data.run), list(metrics),
                           make_comparable=True)
    return {metrics[0]: scores} if len(metrics) == 1 else scores


def our_means(data, metrics) -> dict[str, float]:
    """rankwise.evaluate's aggregates under the profile, given ranx's names."""
    result = rankwise.evaluate(data.qrels, data.run, [MEASURES[m] for m in metrics],
                               conventions="ranx")
    names = profile("ranx").measure_names([MEASURES[m] for m in metrics])
    return {m: result.aggregates["run"][str(rankwise.parse_measure(n))]
            for m, n in zip(metrics, names)}


@pytest.mark.parametrize("seed", [10, 11])
def test_names_without_a_cutoff_read_the_whole_list(seed):
    """ranx's precision, recall, f1, hit_rate and hits without @k are computed over the
    whole list (and hits@k is the hits in the top k): the profile's translation of ranx's
    own names gives ranx's values per query and ranx's means (hits averaged, not summed)."""
    data = make_profile_data(seed, max_depth=15).without(*BPREF_BREAKERS)
    theirs = ranx_values(data, WHOLE_LIST)
    assert_same(ours(data, WHOLE_LIST), theirs, 1e-9, f"seed {seed}")
    means = ranx_means(data, WHOLE_LIST)
    for name, value in our_means(data, WHOLE_LIST).items():
        assert value == pytest.approx(float(means[name]), rel=1e-12, abs=1e-12), name


@pytest.mark.parametrize("seed, ties", [(14, True), (15, False)])
def test_relevance_level_suffixes(seed, ties):
    """ranx's -lN (metrics/common.py ``clean_qrels``: judgments below grade N dropped) is
    rel=N: for the binary metrics grades from N on are relevant (N = 0: grade 0 too), and for
    ndcg and dcg (burges too) the grades below N gain 0 while those above keep their gain."""
    data = make_profile_data(seed, max_depth=15, ties=ties).without(*BPREF_BREAKERS)
    metrics = [f"{name}-l{level}" for name in CORE + ["ndcg_burges@10", "dcg@10", "hits"]
               for level in (0, 2, 3)]
    assert_same(ours(data, metrics), ranx_values(data, metrics), 1e-9, f"seed {seed}")
    # bpref-l2 where ranx's kernel is defined: relevant (>= 2) and non-relevant judgments
    defined = data.only(lambda q: len({g >= 2 for g in data.qrels.get(q, {}).values()}) == 2)
    assert_same(ours(defined, ["bpref-l2"]), ranx_values(defined, ["bpref-l2"]), 1e-9, "bpref")


def test_relevance_level_suffix_names():
    names = ["map-l2", "ndcg_burges@10-l3", "precision-l0", "hits@5-l2", "rbp.95-l0", "rbp@8-l2"]
    assert profile("ranx").measure_names(names) == [
        "AP(rel=2)", "nDCG(gain=exp,rel=3)@10", "SetP(rel=0)", "Hits(rel=2)@5",
        "RBP(p=0.95,rel=1)", "RBP(rel=2)"]
    for name in ("map-l1.5", "map-l-1", "ndcg@10-l"):  # ranx itself fails on int("1.5")
        with pytest.raises(rankwise.MeasureError, match="whole number of 0 or more"):
            rankwise.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, [name], conventions="ranx")


@pytest.mark.slow
def test_means_of_every_name():
    data = make_profile_data(12, ties=False).without(*BPREF_BREAKERS)
    metrics = list(MEASURES)
    means = ranx_means(data, metrics)
    for name, value in our_means(data, metrics).items():
        assert value == pytest.approx(float(means[name]), rel=1e-12, abs=1e-12), name


def binary(data):
    """The same collection with every relevant grade 1."""
    return replace(data, qrels={q: {d: min(g, 1) for d, g in docs.items()}
                                for q, docs in data.qrels.items()})


def test_rbp_is_binary_rbp_with_ranx_persistence():
    """ranx's rbp.95 and rbp@95 are RBP with p = 0.95 (not a cutoff of 95). ranx weights a
    relevant document by its grade, where its docstring says r_i is 0 or 1: the profile
    gives binary RBP (rel=1), ranx's value on 0/1 judgments."""
    data = binary(make_profile_data(13, max_depth=15))
    names = {name: name for name in ("rbp.95", "rbp@8", "rbp.5", "rbp.95-l0", "rbp.5-l2")}
    theirs = ranx_values(data, list(names))
    assert_same(rankwise_values(data.qrels, data.run, names, "ranx"), theirs, 1e-12, "rbp")
    graded = make_profile_data(13, max_depth=15)
    differing = mismatches(rankwise_values(graded.qrels, graded.run, names, "ranx"),
                           ranx_values(graded, list(names)), 1e-9)
    assert differing and all(theirs_value > ours_value
                             for _, _, ours_value, theirs_value in differing)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_tie_free_every_measure(seed):
    data = make_profile_data(seed, ties=False)
    metrics = [m for m in MEASURES if m != "bpref"]
    theirs = ranx_values(data, metrics)
    assert set(theirs) == set(data.qrels)  # missing_queries="zero"; x-run-only dropped
    assert_same(ours(data, metrics), theirs, 1e-9, f"seed {seed}")
    # bpref on every query where ranx's kernel is defined
    fine = data.without(*BPREF_BREAKERS)
    assert_same(ours(fine, ["bpref"]), ranx_values(fine, ["bpref"]), 1e-9, "bpref")


@pytest.mark.parametrize("seed, metrics", [
    (3, CORE + ["bpref"]), pytest.param(4, list(MEASURES), marks=pytest.mark.slow)])
def test_tied_lists_up_to_15_documents_keep_the_row_order(seed, metrics):
    data = make_profile_data(seed, max_depth=15).without(*BPREF_BREAKERS)
    assert_same(ours(data, metrics), ranx_values(data, metrics), 1e-9, f"seed {seed}")


def test_row_order_of_tied_documents_changes_ranx_and_input_order_follows():
    data = make_profile_data(5, max_depth=15).without(*BPREF_BREAKERS)
    rng = random.Random(5)
    shuffled = {}
    for qid, docs in data.run.items():
        rows = list(docs.items())
        rng.shuffle(rows)
        shuffled[qid] = dict(rows)
    other = data.with_run(shuffled)
    metrics = CORE
    before, after = ranx_values(data, metrics), ranx_values(other, metrics)
    assert mismatches(before, after, 1e-12), "expected the row order to change ranx's values"
    assert_same(ours(data, metrics), before, 1e-9, "rows as generated")
    assert_same(ours(other, metrics), after, 1e-9, "rows shuffled")
    # trec_eval's order does not depend on the rows
    reference = {m: MEASURES[m] for m in metrics}
    assert rankwise_values(data.qrels, data.run, reference, "trec_eval") == \
        rankwise_values(other.qrels, other.run, reference, "trec_eval")


def dict_values(qrels: dict, run: dict, metrics) -> dict[str, dict[str, float]]:
    """ranx.evaluate on plain dicts: the i-th query of the run is scored against the i-th query
    of the judgments (see test_plain_dicts_pair_queries_by_position)."""
    scores = ranx.evaluate(qrels, run, list(metrics), return_mean=False)
    return {q: {m: float(scores[m][i]) for m in metrics} for i, q in enumerate(run)}


@pytest.mark.slow
def test_dicts_given_to_evaluate_reverse_the_row_order_of_ties():
    data = make_profile_data(6, max_depth=15).without(*BPREF_BREAKERS)
    shared = [q for q in data.qrels if data.run.get(q)]
    qrels = {q: data.qrels[q] for q in shared}
    run = {q: data.run[q] for q in shared}  # in the judgments' query order
    metrics = CORE
    theirs = dict_values(qrels, run, metrics)
    reversed_rows = {q: dict(reversed(list(d.items()))) for q, d in run.items()}
    assert_same(rankwise_values(qrels, reversed_rows, {m: MEASURES[m] for m in metrics}, "ranx"),
                theirs, 1e-9, "dict input, rows reversed")
    as_given = rankwise_values(qrels, run, {m: MEASURES[m] for m in metrics}, "ranx")
    assert mismatches(as_given, theirs, 1e-9), "expected ties where the order matters"


@pytest.mark.slow
def test_plain_dicts_pair_queries_by_position():
    # a ranx bug: evaluate() checks that the two dicts have the same query ids (as sets) but
    # then pairs the i-th ranking with the i-th judgments (utils.python_dict_to_typed_list
    # keeps each dict's own order); a Run and Qrels sort both by query id
    qrels = {"a": {"d1": 1}, "b": {"d2": 1}}
    run = {"b": {"d2": 1.0, "d3": 0.5}, "a": {"d1": 1.0, "d4": 0.5}}
    assert list(ranx.evaluate(qrels, run, "mrr", return_mean=False)) == [0.0, 0.0]
    assert list(ranx.evaluate(Qrels(qrels), Run(run), "mrr", return_mean=False)) == [1.0, 1.0]
    assert rankwise_values(qrels, run, {"mrr": "mrr"}, "ranx") == {"a": {"mrr": 1.0},
                                                                   "b": {"mrr": 1.0}}


def test_longer_tied_lists_get_the_quicksort_order():
    data = make_profile_data(7).without(*BPREF_BREAKERS)
    metrics = CORE + ["bpref"]
    theirs = ranx_values(data, metrics)
    # not the row order (lists of 16 documents and more) ...
    long_lists = {q for q, d in data.run.items() if len(d) > 15}
    differing = {q for q, *_ in mismatches(ours(data, metrics), theirs, 1e-9)}
    assert differing and differing <= long_lists
    # ... but one of the orders of the tied documents
    assert_within_tie_bounds(data.qrels, data.run, {m: MEASURES[m] for m in metrics}, "ranx",
                             theirs, 1e-9)


@pytest.mark.slow
def test_interpolated_precision_uses_trec_eval_9_rounding():
    data = make_profile_data(8, ties=False)
    qrels, run = Qrels(data.qrels), Run(data.run)
    run.make_comparable(qrels)
    table = interpolated_precision_at_recall(qrels.to_typed_list(), run.to_typed_list())
    levels = {f"{p / 10:.1f}": f"IPrec@{p / 10}" for p in range(11)}
    theirs = {q: dict(zip(levels, map(float, row))) for q, row in zip(run.run.keys(), table)}
    assert_same(rankwise_values(data.qrels, data.run, levels, "ranx"), theirs, 1e-9, "IPrec")
    reference = rankwise_values(data.qrels, data.run, levels, "trec_eval", missing_queries="zero")
    assert mismatches(reference, theirs, 1e-9), "trec_eval 10's rounding differs somewhere"


class TestBprefBug:
    """ranx's bpref bugs, pinned: each test fails once ranx fixes one (then update the profile's
    notes and docs/conventions.md)."""

    def test_a_query_without_relevant_judgments_zeroes_the_rest_of_its_chunk(self):
        import numba

        data = make_profile_data(0, ties=False).without("x-no-nonrelevant")
        threads = numba.get_num_threads()
        try:  # one thread: one chunk, so every query after x-no-relevant keeps 0
            theirs = ranx_values(data, ["bpref"], threads=1)
        finally:
            numba.set_num_threads(threads)
        mine = ours(data, ["bpref"])
        order = list(theirs)
        after = order[order.index("x-no-relevant") + 1:]
        assert all(theirs[q]["bpref"] == 0.0 for q in after)
        assert any(mine[q]["bpref"] > 0 for q in after)
        before = {q: theirs[q] for q in order[:order.index("x-no-relevant")]}
        assert_same({q: mine[q] for q in before}, before, 1e-9, "bpref before the error")

    def test_no_judged_nonrelevant_document_gives_nan(self):
        data = make_profile_data(0, num_queries=12).only(
            lambda q: q.startswith("q") or q == "x-no-nonrelevant")
        theirs = ranx_values(data, ["bpref"])
        assert np.isnan(theirs["x-no-nonrelevant"]["bpref"])
        assert ours(data, ["bpref"])["x-no-nonrelevant"]["bpref"] == 1.0  # trec_eval: 2 of 2

    def test_a_small_evaluation_leaves_numba_on_one_thread(self):
        # evaluate() calls numba.set_num_threads(1) for fewer than 10 queries and never
        # restores it: later evaluations in the process run on one thread (one bpref chunk)
        import numba

        threads = numba.get_num_threads()
        data = make_profile_data(0, num_queries=3, edges=False)
        try:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
            ranx_values(data, ["map"])
            assert numba.get_num_threads() == 1
        finally:
            numba.set_num_threads(threads)

    def test_grade_minus_one_counts_as_judged_nonrelevant(self):
        data = make_profile_data(9, ties=False, negative_grades=True).without(*BPREF_BREAKERS)
        theirs = ranx_values(data, ["bpref"])
        differing = mismatches(ours(data, ["bpref"]), theirs, 1e-9)
        assert differing
        for qid, _, _, _ in differing:
            assert -1 in data.qrels[qid].values()
