"""Differential tests: rankwise against pytrec_eval (trec_eval's C code), query by query.

Random collections (see ``generate.py``) with graded judgments, ties, unjudged documents,
queries without relevant documents, queries only in the run or only in the judgments and
lists shorter than the cutoffs are evaluated by both; every shared measure must agree to
1e-6 on every query, and both must evaluate the same set of queries (pytrec_eval evaluates
the queries present in both the judgments and the run, rankwise's default).

Left out on purpose:

* ``iprec_at_recall`` at levels other than 0.0, 0.5 and 1.0: pytrec_eval embeds trec_eval 9,
  which finds the rank for recall level p as ``(long)(p * R + 0.9)``; trec_eval 10 (which
  rankwise reproduces) rounds, ``lround(p * R)``. The two agree exactly when p * R is an
  integer or half an integer for every R, i.e. for p in {0, 0.5, 1}; at 0.1 .. 0.4 and
  0.6 .. 0.9 they differ by design for many R (e.g. p = 0.2, R = 6: p * R = 1.2, trec_eval 9
  takes (long) 2.1 = 2 relevant documents, trec_eval 10 lround(1.2) = 1).
* ``11pt_avg``: the mean over the eleven levels, so it inherits the same difference.

Both are still checked, by ``test_iprec_all_levels_under_trec_eval_9_rounding``: for a query
with R relevant documents, trec_eval 9's level p means k = (long)(p * R + 0.9) relevant
documents, which is rankwise's level k / R; so pytrec_eval's value at p must equal rankwise's
IPrec@(k / R), at every level.

One documented divergence is accepted: with ``judged_docs_only_flag`` (trec_eval ``-J``) a
query whose retrieved documents are all unjudged is left with an empty ranking, and
trec_eval's m_iprec_at_recall.c starts from ``num_rel_ret / num_ret`` = 0/0, so pytrec_eval
reports NaN for every recall level whose cutoff is 0 relevant documents (level 0.0 always,
every level when R = 0). rankwise reports 0 there (nothing retrieved, no precision), which is
what every other measure does for an empty ranking; the test checks exactly that.
"""

from __future__ import annotations

import math

import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")

import rankwise  # noqa: E402
from tests.peers.generate import make_collection  # noqa: E402

# trec_eval names as pytrec_eval reports them; rankwise parses the same names
TREC_NAMES = [
    "P_5", "P_10", "P_20", "recall_10", "recall_100", "map", "map_cut_10", "map_cut_100",
    "ndcg", "ndcg_cut_10", "ndcg_cut_20", "recip_rank", "Rprec", "bpref",
    "success_1", "success_5", "success_10", "set_P", "set_recall", "set_F",
    "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret",
    "relative_P_5", "relative_P_100", "set_relative_P", "set_map",
    "iprec_at_recall_0.00", "iprec_at_recall_0.50", "iprec_at_recall_1.00",
]
# what pytrec_eval is asked for (families with their cutoffs)
PYTREC_MEASURES = {
    "P.5,10,20", "recall.10,100", "map", "map_cut.10,100", "ndcg", "ndcg_cut.10,20",
    "recip_rank", "Rprec", "bpref", "success.1,5,10", "set_P", "set_recall", "set_F",
    "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "relative_P.5,100",
    "set_relative_P", "set_map", "iprec_at_recall",
}
SEEDS = [0, 1, 2, 3, 4]


def compare(collection, relevance_level: int = 1, judged_only: bool = False) -> int:
    """Evaluate with both; assert identical query sets and values; return #queries compared."""
    evaluator = pytrec_eval.RelevanceEvaluator(collection.qrels, PYTREC_MEASURES,
                                               relevance_level=relevance_level,
                                               judged_docs_only_flag=judged_only)
    expected = evaluator.evaluate(collection.run)
    conventions = rankwise.Conventions(relevance_threshold=relevance_level,
                                       unjudged="remove" if judged_only else "nonrelevant")
    result = rankwise.evaluate(collection.qrels, collection.run, TREC_NAMES,
                               conventions=conventions, per_query=True)
    got = result.per_query()

    assert set(got) == set(expected), (
        f"evaluated queries differ: only rankwise {sorted(set(got) - set(expected))[:5]}, "
        f"only pytrec_eval {sorted(set(expected) - set(got))[:5]}")
    canonical = {name: str(rankwise.parse_measure(name)) for name in TREC_NAMES}
    mismatches = []
    for qid, theirs in expected.items():
        for name in TREC_NAMES:
            ours = got[qid][canonical[name]]
            if math.isnan(theirs[name]) and name.startswith("iprec"):
                # see the module docstring: an empty list after -J gives 0/0 in trec_eval
                assert theirs["num_ret"] == 0 and ours == 0.0, (qid, name, ours)
                continue
            if not math.isclose(ours, theirs[name], rel_tol=0, abs_tol=1e-6):
                mismatches.append((qid, name, ours, theirs[name]))
    assert not mismatches, (f"seed {collection.seed}: {len(mismatches)} mismatches, first: "
                            f"{mismatches[:5]} (query, measure, rankwise, pytrec_eval)")
    return len(expected)


@pytest.fixture(scope="module", params=SEEDS, ids=[f"seed{s}" for s in SEEDS])
def collection(request):
    return make_collection(request.param)


def test_default_conventions(collection):
    assert collection.shared_queries  # sanity: the generator made overlapping inputs
    assert set(collection.run) - set(collection.qrels), "no query only in the run"
    assert set(collection.qrels) - set(collection.run), "no query only in the judgments"
    assert compare(collection) == len(collection.shared_queries)


def test_relevance_level_2(collection):
    # trec_eval -l 2 == rankwise relevance_threshold=2 (nDCG keeps the grades as gains)
    compare(collection, relevance_level=2)


def test_judged_docs_only(collection):
    # trec_eval -J == rankwise unjudged="remove": unjudged documents dropped, list condensed
    compare(collection, judged_only=True)


def test_judged_docs_only_relevance_level_2(collection):
    compare(collection, relevance_level=2, judged_only=True)


@pytest.mark.parametrize("seed", [10, 11])
def test_negative_grades(seed):
    # grade -1 in the judgments: in the pool but not judged; trec_eval counts such a document
    # neither as relevant nor as judged non-relevant (bpref), gains 0 for nDCG
    coll = make_collection(seed, num_queries=150, negative_grades=True)
    compare(coll)
    compare(coll, judged_only=True)


def test_diagnostics_count_what_pytrec_eval_silently_drops():
    coll = make_collection(0)
    result = rankwise.evaluate(coll.qrels, coll.run, ["P_10"])
    diag = result.diagnostics["run"]
    assert diag["queries_only_in_run"] == len(set(coll.run) - set(coll.qrels))
    assert diag["queries_only_in_qrels"] == len(set(coll.qrels) - set(coll.run))
    assert diag["queries_evaluated"] == len(coll.shared_queries)
    unjudged = sum(1 for q in coll.shared_queries for d in coll.run[q] if d not in coll.qrels[q])
    assert diag["unjudged_retrieved"] == unjudged


def test_missing_queries_zero_matches_trec_eval_c():
    # trec_eval -c: judged queries absent from the run count with every measure 0; pytrec_eval
    # has no -c, so the expected mean is pytrec_eval's sum over the shared queries divided by
    # the number of judged queries
    coll = make_collection(3)
    expected = pytrec_eval.RelevanceEvaluator(coll.qrels, {"map", "ndcg_cut.10", "P.10"}).evaluate(
        coll.run)
    result = rankwise.evaluate(coll.qrels, coll.run, ["map", "ndcg_cut_10", "P_10"],
                               missing_queries="zero", per_query=True)
    per_query = result.per_query()
    assert set(per_query) == set(coll.qrels)
    for ours, theirs in [("AP", "map"), ("nDCG@10", "ndcg_cut_10"), ("P@10", "P_10")]:
        total = sum(v[theirs] for v in expected.values())
        assert result.mean(ours) == pytest.approx(total / len(coll.qrels), abs=1e-9)
        for qid in set(coll.qrels) - set(coll.run):
            assert per_query[qid][ours] == 0.0


@pytest.mark.parametrize("seed", [0, 1])
def test_iprec_all_levels_under_trec_eval_9_rounding(seed):
    coll = make_collection(seed)
    levels = [i / 10 for i in range(11)]
    expected = pytrec_eval.RelevanceEvaluator(
        coll.qrels, {"iprec_at_recall", "11pt_avg", "num_rel"}).evaluate(coll.run)
    by_r: dict[int, list[str]] = {}
    for qid, values in expected.items():
        by_r.setdefault(int(values["num_rel"]), []).append(qid)
    checked = 0
    for r, queries in by_r.items():
        qrels = {q: coll.qrels[q] for q in queries}
        run = {q: coll.run[q] for q in queries}
        # the number of relevant documents trec_eval 9 asks for at each level, as a rankwise level
        wanted = {p: min(int(p * r + 0.9), r) for p in levels}
        asked = sorted(set(wanted.values()))
        result = rankwise.evaluate(qrels, run, [f"IPrec@{k / r if r else 0.0!r}" for k in asked],
                                   per_query=True)
        name = dict(zip(asked, result.measures))
        got = result.per_query()
        for qid in queries:
            trec9 = [got[qid][name[wanted[p]]] for p in levels]
            for p, value in zip(levels, trec9):
                assert value == pytest.approx(expected[qid][f"iprec_at_recall_{p:.2f}"], abs=1e-6), \
                    (qid, p, r)
            assert sum(trec9) / 11 == pytest.approx(expected[qid]["11pt_avg"], abs=1e-6)
            checked += 1
    assert checked == len(expected)


def test_pytrec_eval_reads_scores_in_single_precision():
    # why generate.py rounds scores to 0.01: scores 1e-9 apart tie in pytrec_eval (float32)
    # but not in rankwise (float64), so the two would rank them differently
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 0.1 + 1e-9, "b": 0.1}}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)["q"]["recip_rank"]
    ours = rankwise.evaluate(qrels, run, ["RR"]).mean("RR")
    assert theirs == 0.5  # tie, broken by doc id descending: b first
    assert ours == 1.0  # a scores higher
