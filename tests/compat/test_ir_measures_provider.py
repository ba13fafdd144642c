"""The rankwise provider for ir_measures against ir_measures' default pipeline (which sends
most measures to pytrec_eval, RR@k to msmarco, exponential nDCG@k and ERR@k to gdeval):
registered through ir_measures' own registry, per-query values equal for every measure both
compute, on dict, DataFrame and named-tuple inputs, through iter_calc, calc_aggregate,
evaluator and, for wrapped measures, through ir_measures' module functions and PyTerrier.
The reference values come through ``tests.peers.ir_measures_pipeline``, which keeps nDCG with
custom gains apart (ir_measures otherwise computes plain nDCG with those gains under some
PYTHONHASHSEED values).
"""

from __future__ import annotations

import math
import random
import shutil

import pytest

ir_measures = pytest.importorskip("ir_measures")

from ir_measures import (  # noqa: E402
    AP,
    ERR,
    RR,
    Bpref,
    IPrec,
    Judged,
    NumQ,
    NumRel,
    NumRelRet,
    NumRet,
    P,
    R,
    Rprec,
    SetAP,
    SetF,
    SetP,
    SetR,
    Success,
    infAP,
    nDCG,
)

import rankwise  # noqa: E402
from rankwise.compat import ir_measures as rw  # noqa: E402
from tests.peers import ir_measures_pipeline as pipeline  # noqa: E402
from tests.peers.generate import make_collection  # noqa: E402

# every measure both compute, with parameters; NumRet is checked apart (see below)
MEASURES = [
    P@5, P(rel=2)@10, P(judged_only=True)@10, R@100, R(rel=2)@20, RR, RR(rel=2), RR@10,
    RR(rel=2)@5, AP, AP@100, AP(rel=2), AP(judged_only=True), nDCG, nDCG@10,
    nDCG(judged_only=True)@10, nDCG(gains={0: 0, 1: 1, 2: 5, 3: 10})@10, Rprec, Rprec(rel=2),
    Bpref, Bpref(rel=2), NumRelRet, NumRet(rel=2), NumQ, NumRel, SetAP, SetF, SetF(beta=0.5),
    SetP, SetP(relative=True), SetR, SetR(rel=2), Success@1, Success@10, IPrec@0.0, IPrec@0.2,
    IPrec@0.5, IPrec(rel=2)@0.7, IPrec(judged_only=True)@0.0, infAP, infAP(rel=2), Judged@1,
    Judged@10, Judged@200, Judged,
]


def collection(seed: int, num_queries: int = 150):
    """Generated judgments and run; a third of the queries get scores nudged by 1e-9, which
    tie in float32 (pytrec_eval) and not in float64 (msmarco)."""
    coll = make_collection(seed, num_queries=num_queries)
    rng = random.Random(seed)
    run = {q: dict(v) for q, v in coll.run.items()}
    for q in rng.sample(sorted(run), len(run) // 3):
        for d in list(run[q])[::2]:
            run[q][d] += 1e-9
    return coll.qrels, run


def per_query(metrics) -> dict:
    out = {}
    for metric in metrics:
        key = (metric.query_id, str(metric.measure))
        assert key not in out, f"{key} reported twice"
        out[key] = metric.value
    return out


def assert_same(expected: dict, got: dict) -> None:
    assert set(got) == set(expected)
    bad = [(k, expected[k], got[k]) for k in expected
           if not (math.isclose(expected[k], got[k], abs_tol=1e-6)
                   or math.isnan(expected[k]) and math.isnan(got[k]))]
    assert not bad, f"{len(bad)} differ, first {bad[:5]} (query/measure, ir_measures, rankwise)"


def test_registered_in_ir_measures_registry():
    assert ir_measures.providers.registry["rankwise"] is rw.provider
    assert isinstance(rw.provider, ir_measures.providers.Provider)
    assert rw.provider.is_available()
    assert all(rw.provider.supports(m) for m in MEASURES)
    for other in (ir_measures.RBP, nDCG(dcg="exp-log2", gains={1: 2})@10):
        assert not rw.provider.supports(other)
    with pytest.raises(ValueError, match="Unsupported measures"):
        ir_measures.providers.FallbackProvider([rw.provider]).evaluator([ir_measures.RBP], {})


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_iter_calc_equals_default_pipeline(seed):
    qrels, run = collection(seed)
    expected = per_query(pipeline.iter_calc(MEASURES, qrels, run))
    got = per_query(rw.provider.iter_calc(MEASURES, qrels, run))
    assert len(got) > 5_000
    assert_same(expected, got)


def test_calc_aggregate_equals_default_pipeline_including_missing_queries():
    qrels, run = collection(3)
    assert set(qrels) - set(run)  # judged queries absent from the run count 0 in both
    expected = pipeline.calc_aggregate(MEASURES, qrels, run)
    got = rw.provider.calc_aggregate(MEASURES, qrels, run)
    assert set(got) == set(expected)
    for measure, value in expected.items():
        assert got[measure] == pytest.approx(value, abs=1e-9, nan_ok=True), measure


def test_judged_counts_negative_grades_as_unjudged_and_empty_rankings_as_zero():
    # ir_measures' judged provider counts a document judged -1 as judged, and divides by zero
    # on an empty ranking; rankwise follows trec_eval's unj (documented differences)
    qrels = {"q": {"a": -1, "b": 1}, "q2": {"x": 1}}
    run = {"q": {"a": 2.0, "b": 1.0, "c": 0.5}}
    assert per_query(ir_measures.iter_calc([Judged@3], qrels, run))[("q", "Judged@3")] == 2 / 3
    assert per_query(rw.provider.iter_calc([Judged@3], qrels, run))[("q", "Judged@3")] == 1 / 3
    with pytest.raises(ZeroDivisionError):
        list(ir_measures.iter_calc([Judged@3], qrels, {**run, "q2": {}}))
    assert per_query(rw.provider.iter_calc([Judged@3], qrels, {**run, "q2": {}}))[
        ("q2", "Judged@3")] == 0.0


def test_num_ret_when_no_measure_drops_unjudged_documents():
    # ir_measures' pytrec_eval provider computes NumRet in whichever pytrec_eval call it set
    # up first: next to a judged_only measure, NumRet sometimes counts judged documents only
    # (it depends on set order); alone with plain measures it is num_ret
    qrels, run = collection(4)
    measures = [NumRet, NumRelRet, AP, P@10]
    assert_same(per_query(ir_measures.iter_calc(measures, qrels, run)),
                per_query(rw.provider.iter_calc(measures, qrels, run)))


def test_dataframe_and_named_tuple_inputs():
    pd = pytest.importorskip("pandas")
    qrels, run = collection(5, num_queries=60)
    qrels_frame = pd.DataFrame([(q, d, g) for q, v in qrels.items() for d, g in v.items()],
                               columns=["query_id", "doc_id", "relevance"])
    run_frame = pd.DataFrame([(q, d, s) for q, v in run.items() for d, s in v.items()],
                             columns=["query_id", "doc_id", "score"])
    qrels_tuples = [ir_measures.Qrel(*row) for row in qrels_frame.itertuples(index=False)]
    run_tuples = [ir_measures.ScoredDoc(*row) for row in run_frame.itertuples(index=False)]
    expected = per_query(pipeline.iter_calc(MEASURES, qrels, run))
    for q, r in [(qrels_frame, run_frame), (qrels_tuples, run_tuples), (qrels, run_frame)]:
        assert_same(expected, per_query(rw.provider.iter_calc(MEASURES, q, r)))


def test_one_evaluator_for_several_runs():
    qrels, run = collection(6, num_queries=80)
    other = {q: dict(list(v.items())[::2]) for q, v in run.items()}
    theirs = pipeline.Evaluator(MEASURES, qrels)
    mine = rw.provider.evaluator(MEASURES, qrels)
    for r in (run, other, run):
        assert_same(per_query(theirs.iter_calc(r)), per_query(mine.iter_calc(r)))
        assert mine.calc_aggregate(r) == pytest.approx(theirs.calc_aggregate(r), abs=1e-9,
                                                       nan_ok=True)


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval needs perl")
def test_exponential_ndcg_and_err_as_gdeval():
    # gdeval takes numeric query ids, grades up to 4, and prints 5 decimals
    coll = make_collection(7, num_queries=80)
    rename = {q: str(i) for i, q in enumerate(sorted(set(coll.qrels) | set(coll.run)))}
    qrels = {rename[q]: v for q, v in coll.qrels.items()}
    run = {rename[q]: v for q, v in coll.run.items()}
    measures = [nDCG(dcg="exp-log2")@10, nDCG(dcg="exp-log2")@20, ERR@10, ERR@20]
    expected = per_query(ir_measures.iter_calc(measures, qrels, run))
    got = per_query(rw.provider.iter_calc(measures, qrels, run))
    assert set(got) == set(expected)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=5.1e-6), key


def test_rr_at_k_breaks_ties_as_msmarco_unless_told_otherwise():
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 1.0, "b": 1.0}}  # msmarco: doc id ascending (a first); trec_eval: b first
    assert ir_measures.calc_aggregate([RR@10], qrels, run)[RR@10] == 1.0
    assert rw.provider.calc_aggregate([RR@10], qrels, run)[RR@10] == 1.0
    trec = rw.RankwiseProvider(conventions="trec_eval")
    assert trec.calc_aggregate([RR@10, RR], qrels, run) == {RR@10: 0.5, RR: 0.5}
    assert rankwise.evaluate(qrels, run, ["RR@10"]).mean("RR@10") == 0.5


def test_wrapped_measures_run_on_rankwise_through_ir_measures_functions():
    qrels, run = collection(8, num_queries=80)
    wrapped = rw.on_rankwise(*MEASURES)
    assert [str(m) for m in wrapped] == [str(m) for m in MEASURES]
    assert_same(per_query(pipeline.iter_calc(MEASURES, qrels, run)),
                per_query(ir_measures.iter_calc(wrapped, qrels, run)))
    assert ir_measures.calc_aggregate(wrapped, qrels, run) == pytest.approx(
        pipeline.calc_aggregate(MEASURES, qrels, run), abs=1e-9, nan_ok=True)
    # proof that rankwise computed them: a provider with trec_eval's tie order changes RR@10
    tie_qrels, tie_run = {"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}}
    (trec_rr,) = rw.on_rankwise("RR@10", provider=rw.RankwiseProvider(conventions="trec_eval"))
    assert ir_measures.calc_aggregate([trec_rr], tie_qrels, tie_run)[RR@10] == 0.5
    assert ir_measures.calc_aggregate([RR@10], tie_qrels, tie_run)[RR@10] == 1.0


def test_wrapped_measures_in_pyterrier_experiment():
    pt = pytest.importorskip("pyterrier")
    pd = pytest.importorskip("pandas")
    qrels, run = collection(9, num_queries=60)
    topics = pd.DataFrame({"qid": sorted(qrels), "query": "x"})
    frame = pd.DataFrame([(q, d, s) for q, v in run.items() for d, s in v.items()],
                         columns=["qid", "docno", "score"])
    frame["rank"] = frame.groupby("qid")["score"].rank(ascending=False, method="first") - 1
    other = frame[frame["rank"] < 10].copy()
    judged = pd.DataFrame([(q, d, g) for q, v in qrels.items() for d, g in v.items()],
                          columns=["qid", "docno", "label"])
    measures = [nDCG@10, AP, RR@10, P@5, R@100]
    kwargs = {"names": ["full", "top10"]}
    for perquery in (False, True):
        theirs = pt.Experiment([frame, other], topics, judged, eval_metrics=measures,
                               perquery=perquery, **kwargs)
        mine = pt.Experiment([frame, other], topics, judged,
                             eval_metrics=rw.on_rankwise(*measures), perquery=perquery, **kwargs)
        # PyTerrier orders the columns as ir_measures happens to yield them (set order)
        assert sorted(mine.columns) == sorted(theirs.columns)
        order = ["name", "qid", "measure"] if perquery else ["name"]
        mine = mine[list(theirs.columns)].sort_values(order).reset_index(drop=True)
        theirs = theirs.sort_values(order).reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, theirs, check_exact=False, atol=1e-9)
    assert not pt.java.started()  # no Java was needed
