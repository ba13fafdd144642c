"""The ``ir_measures`` profile against ir-measures itself (default provider pipeline), query by
query with ``iter_calc`` and in the mean with ``calc_aggregate``.

ir_measures hands each measure to the first provider that supports it. With the default
pipeline that is pytrec_eval (trec_eval 9, float32 scores) for every measure compared here
except three:

* ``RR@k`` goes to the msmarco provider, which orders ties by doc id *ascending* and compares
  scores in float64 (``sorted(key=(-score, docid))``, providers/msmarco_provider.py);
* ``ERR@k`` and ``nDCG(dcg='exp-log2')@k`` go to gdeval (bin/gdeval.pl, run with perl): ties
  by doc id descending, float64 scores, ERR's R = (2^g - 1) / 2^4 (``$MAX_JUDGMENT = 4``),
  values printed with 5 decimals, and numeric query ids only.

A profile has one tie order and one score precision for all measures, so the profile
reproduces the pytrec_eval-provided measures on every query (1e-9, tied data and the float32
pair included) and the other three on data where neither matters; on tied data they equal
rankwise with the provider's own order and precision, which the tests check too.

Beyond conventions: ``iter_calc`` fills a judged query missing from the run with each
measure's DEFAULT, which is 0 for NumQ and NumRel too (rankwise counts the query and its
relevant documents), and a query given as an empty dict reaches pytrec_eval, which returns NaN
for IPrec@0.0 (0/0 retrieved), so that ``calc_aggregate`` is NaN.
"""

from __future__ import annotations

import math

import pytest

ir_measures = pytest.importorskip("ir_measures")

from ir_measures import (  # noqa: E402
    AP, ERR, P, R, RR, Bpref, IPrec, Judged, NumQ, NumRel, NumRet, Rprec, SetAP, SetF, SetP,
    SetR, Success, nDCG)

import rankwise  # noqa: E402
from tests.peers import ir_measures_pipeline as pipeline  # noqa: E402
from tests.peers.profile_compare import assert_same, mismatches, rankwise_values  # noqa: E402
from tests.peers.profile_data import make_profile_data  # noqa: E402

# measures of the pytrec_eval provider: the peer's name is the rankwise name under the profile,
# except where noted
PYTREC = [P@5, P@10, P(rel=2)@5, R@10, R@100, R(rel=2)@10, AP, AP@10, AP(rel=2), nDCG, nDCG@10,
          nDCG@5, RR, RR(rel=2), Rprec, Rprec(rel=2), Bpref, Bpref(rel=2), Success@1, Success@10,
          NumQ, NumRet, NumRel, NumRet(rel=1), NumRet(rel=2), SetP, SetR, SetF, SetF(beta=0.5),
          SetAP, SetP(relative=True), SetP(relative=True, rel=2),
          nDCG(gains={0: 0, 1: 1, 2: 5, 3: 10}),
          nDCG(gains={0: 0, 1: 2, 2: 3, 3: 9})@5] + [IPrec@(p / 10) for p in range(11)]
MSMARCO = [RR@5, RR@10, RR(rel=2)@3]
GDEVAL = [ERR@5, ERR@10, nDCG(dcg="exp-log2")@10]
COUNTS_OF_THE_QUERY = {str(NumQ), str(NumRel)}  # 0 for a missing query in ir_measures


def names(measures) -> dict[str, str]:
    """Key (the peer's measure string) -> the name rankwise is given: the same string, read
    through the profile's measure names."""
    return {str(m): str(m) for m in measures}


def peer_values(measures, qrels, run) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for metric in pipeline.iter_calc(measures, qrels, run):
        out.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    return out


@pytest.fixture(scope="module", params=[0, 1, 2], ids=lambda s: f"seed{s}")
def data(request):
    return make_profile_data(request.param, negative_grades=request.param == 2)


def test_pytrec_eval_measures_every_query(data):
    measures = PYTREC
    theirs = peer_values(measures, data.qrels, data.run)
    # ir_measures scores judged queries missing from the run 0, as missing_queries="zero"
    assert set(theirs) == set(data.qrels)
    # the documented differences (module docstring), checked, then set aside
    empty = theirs["x-empty-run"]
    assert math.isnan(empty["IPrec@0.0"]) and empty["NumRel"] == 1 and empty["NumQ"] == 1
    empty["IPrec@0.0"] = 0.0
    missing = theirs["x-qrels-only"]
    assert missing["NumQ"] == 0 and missing["NumRel"] == 0
    missing["NumQ"], missing["NumRel"] = 1.0, 1.0
    ours = rankwise_values(data.qrels, data.run, names(measures), "ir_measures")
    assert assert_same(ours, theirs, 1e-9, f"seed {data.seed}") == len(theirs) * len(measures)


def test_calc_aggregate_is_the_mean(data):
    measures = PYTREC
    # the empty-dict query's NaN makes the IPrec@0.0 mean NaN (module docstring)
    assert math.isnan(ir_measures.calc_aggregate([IPrec@0.0], data.qrels, data.run)[IPrec@0.0])
    data = data.without("x-empty-run")
    theirs = {str(m): v for m, v in pipeline.calc_aggregate(measures, data.qrels,
                                                             data.run).items()}
    result = rankwise.evaluate(data.qrels, data.run, list(names(measures).values()),
                               conventions="ir_measures")
    means = dict(zip(names(measures), (result.mean(m) for m in result.measures)))
    assert len(result.measures) == len(measures)
    # NumQ and NumRel are sums; ir_measures adds 0 for the query missing from the run
    assert means.pop("NumQ") == theirs.pop("NumQ") + 1
    assert means.pop("NumRel") == theirs.pop("NumRel") + sum(
        g >= 1 for g in data.qrels["x-qrels-only"].values())
    bad = {k: (means[k], v) for k, v in theirs.items() if not math.isclose(means[k], v,
                                                                           abs_tol=1e-9)}
    assert not bad, bad


def test_judged_only_measures(data):
    # P(judged_only=True) etc. are trec_eval -J, i.e. unjudged="remove"
    measures = [P(judged_only=True)@5, AP(judged_only=True), nDCG(judged_only=True)@10,
                RR(judged_only=True), Success(judged_only=True)@5]
    data = data.without("x-empty-run")
    theirs = peer_values(measures, data.qrels, data.run)
    plain = {str(m): str(m).replace("(judged_only=True)", "") for m in measures}
    ours = rankwise_values(data.qrels, data.run, plain, "ir_measures", unjudged="remove")
    assert_same(ours, theirs, 1e-9, "judged_only")


def test_judged_provider(data):
    """Judged@k comes from ir_measures' own provider: judged documents in the top k over the
    documents ranked within k (the profile's short_lists="length" for Judged). It orders ties
    by doc id ascending in float64 and counts grade -1 as judged, so the data here has neither;
    a query with no document divides by zero there, so it is left out."""
    measures = [Judged@1, Judged@5, Judged@10, Judged@100, Judged]
    free = make_profile_data(data.seed, ties=False, float32_pair=False).without("x-empty-run")
    theirs = peer_values(measures, free.qrels, free.run)
    ours = rankwise_values(free.qrels, free.run, names(measures), "ir_measures")
    assert assert_same(ours, theirs, 1e-12, "Judged") == len(theirs) * len(measures)
    short = [q for q, docs in free.run.items() if q in free.qrels and 0 < len(docs) < 100]
    assert short, "the data must hold lists shorter than the largest cutoff"
    trec = rankwise_values(free.qrels, free.run, names(measures), "trec_eval",
                           missing_queries="zero")
    assert mismatches(trec, theirs, 1e-12), "trec_eval's convention divides by k"


def test_msmarco_rr_at_k(data):
    # tie-free and no float32 pair: the profile reproduces it
    free = make_profile_data(data.seed, ties=False, float32_pair=False,
                             negative_grades=data.seed == 2)
    assert_same(rankwise_values(free.qrels, free.run, names(MSMARCO), "ir_measures"),
                peer_values(MSMARCO, free.qrels, free.run), 1e-9, "RR@k tie-free")
    # tied data: the msmarco provider's own order (doc id ascending, float64)
    theirs = peer_values(MSMARCO, data.qrels, data.run)
    own = rankwise_values(data.qrels, data.run, names(MSMARCO), "ir_measures",
                          ties="docid_asc", score_precision="float64")
    assert_same(own, theirs, 1e-9, "RR@k as msmarco orders")
    profile = rankwise_values(data.qrels, data.run, names(MSMARCO), "ir_measures")
    assert mismatches(profile, theirs, 1e-9), "expected tied queries where the orders differ"


@pytest.mark.skipif(not ir_measures.gdeval.is_available(), reason="gdeval needs perl")
def test_gdeval_err_and_exp_ndcg(data):
    # gdeval.pl accepts numeric query ids only
    ids = {q: str(i + 1) for i, q in enumerate(sorted(set(data.qrels) | set(data.run)))}
    qrels = {ids[q]: d for q, d in data.qrels.items()}
    run = {ids[q]: d for q, d in data.run.items() if d}
    theirs = peer_values(GDEVAL, qrels, run)
    # the profile maps ERR to ERR(max_grade=4) and nDCG(dcg='exp-log2') to nDCG(gain=exp);
    # gdeval prints 5 decimals
    own = rankwise_values(qrels, run, names(GDEVAL), "ir_measures", score_precision="float64")
    assert_same(own, theirs, 5e-6 + 1e-12, "gdeval, float64 scores")
    profile = rankwise_values(qrels, run, names(GDEVAL), "ir_measures")
    assert {q for q, *_ in mismatches(profile, theirs, 5e-6 + 1e-12)} == {ids["x-float32"]}


def test_peer_measure_strings_are_accepted_by_the_profile():
    data = make_profile_data(5, num_queries=5)
    mapped = rankwise_values(data.qrels, data.run, {"a": "SetP(relative=True)",
                                                    "b": "NumRet(rel=1)", "c": "ERR@10"},
                             "ir_measures")
    direct = rankwise_values(data.qrels, data.run, {"a": "SetRelP", "b": "NumRelRet",
                                                    "c": "ERR(max_grade=4)@10"}, "trec_eval",
                             missing_queries="zero", score_precision="float32")
    assert mapped == direct
