"""The trec_eval 10 measures added to the foundation's (Judged@K and Unjudged@K, RBP and its
residual, infAP, binG, utility, Rprec_mult, ndcg_rel, Rndcg and G): worked examples computed by
hand, and their names in the three dialects. trec_eval 10's own values of all of them are
compared line by line in tests/conformance (grades -1..4 included), pytrec_eval's in
tests/compat (all but Judged, Unjudged and RBP, which trec_eval 9 lacks), ir_measures' Judged
in tests/peers/test_profile_ir_measures.py, and the exact expected values over tied orders
against every order in tests/properties/test_expected_ties.py."""

from __future__ import annotations

import math

import pytest

import rankwise

QRELS = {"q": {"a": 3, "b": 1, "c": 0, "e": -1, "f": 4}}
RUN = {"q": {"a": 6.0, "b": 5.0, "c": 4.0, "d": 3.0, "e": 2.0}}  # f (grade 4) not retrieved


def mean(measure: str, qrels=QRELS, run=RUN, **conventions) -> float:
    return rankwise.evaluate(qrels, run, [measure], **conventions).mean(measure)


def test_eleven_point_average_at_given_levels_by_hand():
    # relevant a (rank 1) and b (rank 2) of R = 3 (f not retrieved): recall levels need
    # round(p·3) hits: 0.2 -> 1 (best P from rank 1: 1), 0.5 -> 2 (1), 0.8 -> 2 (1), 1 -> 3 (0)
    assert mean("11pt_avg.0.2,0.5,0.8") == 1.0
    assert mean("11pt_avg(levels={0.2,0.5,0.8,1})") == 0.75
    # the mean of IPrec at the same levels, whatever order they are given in
    levels = [0.9, 0.1, 0.35, 0.35]
    iprec = [mean(f"IPrec(rel=3)@{p}") for p in levels]
    assert mean("11pt_avg(rel=3,levels={0.9,0.1,0.35,0.35})") == pytest.approx(sum(iprec) / 4)


def test_rbp_graded_divides_by_the_largest_judged_grade():
    # gains a 3/4, b 1/4, c 0, d unjudged, e grade -1: the largest grade judged is f's 4,
    # retrieved or not (trec_eval's m_rbp.c normalises over the query's grade levels)
    p = 0.5
    by_hand = (1 - p) * (3 / 4 + p * 1 / 4)
    assert mean("RBP(p=0.5)") == pytest.approx(by_hand, abs=1e-15)
    assert mean("RBP") == pytest.approx(0.2 * (3 / 4 + 0.8 / 4), abs=1e-15)  # p = 0.8


def test_rbp_grades_of_one_at_most_are_not_scaled():
    qrels = {"q": {"a": 1, "c": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    assert mean("RBP(p=0.5)", qrels, run) == pytest.approx(0.5 * (1 + 0.25), abs=1e-15)


def test_rbp_binary_and_cut():
    # rel=2: only a (3) and f (4) are relevant; f is not retrieved
    assert mean("RBP(p=0.5,rel=2)") == pytest.approx(0.5, abs=1e-15)
    assert mean("RBP(p=0.5,rel=1)") == pytest.approx(0.5 * (1 + 0.5), abs=1e-15)
    assert mean("RBP(p=0.5,rel=1)@1") == pytest.approx(0.5, abs=1e-15)
    # the cutoff drops b's contribution at rank 2 from the graded value
    assert mean("RBP(p=0.5)@1") == pytest.approx(0.5 * 3 / 4, abs=1e-15)


def test_rbp_of_a_query_without_relevant_documents_is_zero():
    qrels = {"q": {"a": 0}, "r": {"x": 1}}
    run = {"q": {"a": 1.0, "b": 0.5}, "r": {"x": 1.0}}
    values = rankwise.evaluate(qrels, run, ["RBP"], per_query=True).per_query()
    assert values["q"]["RBP"] == 0.0 and values["r"]["RBP"] == pytest.approx(0.2)


def test_unjudged_counts_missing_judgments_and_grade_minus_one():
    # top 5: a b c judged, d unjudged, e judged -1 (trec_eval's "not in the pool"): 2 of 5
    assert mean("unj_5") == pytest.approx(2 / 5)
    assert mean("unj_10") == pytest.approx(2 / 10)  # the short list is padded, not unjudged
    assert mean("Unjudged@10", short_lists="length") == pytest.approx(2 / 5)
    assert mean("Unjudged@3") == 0.0


def test_judged_at_k():
    assert mean("Judged@3") == 1.0
    assert mean("Judged@5") == pytest.approx(3 / 5)
    assert mean("Judged@10") == pytest.approx(3 / 10)
    assert mean("Judged@10", short_lists="length") == pytest.approx(3 / 5)
    assert mean("Judged") == pytest.approx(3 / 5)  # the whole list


def test_a_list_emptied_by_removing_unjudged_documents_scores_zero():
    qrels = {"q": {"a": 1, "x": 1}, "r": {"y": 1}}
    run = {"q": {"a": 1.0}, "r": {"z": 1.0}}  # r retrieves only an unjudged document
    values = rankwise.evaluate(qrels, run, ["Judged@5", "Judged", "unj_5", "RBP"],
                               unjudged="remove", per_query=True).per_query()
    assert values["r"] == {"Judged@5": 0.0, "Judged": 0.0, "Unjudged@5": 0.0, "RBP": 0.0}
    assert values["q"]["Judged"] == 1.0


def test_rbp_residual():
    # d (rank 4) and e (rank 5, grade -1) are unjudged: p^5 + (1 - p)(p^3 + p^4)
    p = 0.5
    assert mean("RBPResid(p=0.5)") == pytest.approx(p**5 + (1 - p) * (p**3 + p**4), abs=1e-15)
    # RBP plus the residual bounds the value every completion of the judgments could give
    full = {"q": {**QRELS["q"], "d": 4, "e": 4}}
    assert mean("RBP(p=0.5)", full) <= mean("RBP(p=0.5)") + mean("RBPResid(p=0.5)")


def test_rbp_residual_is_zero_without_unjudged_documents():
    # trec_eval's m_rbp_resid.c sets a value only when an unjudged document is retrieved
    qrels = {"q": {"a": 1, "b": 0}}
    assert mean("RBPResid(p=0.5)", qrels, {"q": {"a": 2.0, "b": 1.0}}) == 0.0


def test_inferred_ap_by_hand():
    # ranks: a (3, relevant), b (1, relevant), c (0), d (no judgment: outside the pool),
    # e (-1: pooled, not sampled); f (4) not retrieved: R = 3 with the threshold 1
    eps = 1e-5
    at_rank_2 = 1 / 2 + (1 / 2) * (1 / 1) * ((1 + eps) / (1 + 0 + 2 * eps))
    assert mean("infAP") == pytest.approx((1 + at_rank_2) / 3, abs=1e-15)
    # threshold 2: only a is relevant (b is judged non-relevant), R = 2 (a and f)
    assert mean("infAP(rel=2)") == pytest.approx(1 / 2, abs=1e-15)


def test_inferred_ap_counts_pooled_documents_above_a_relevant_one():
    # h2 at rank 4: above it h1, o (outside the pool: not counted) and u (pooled, unsampled)
    eps = 1e-5
    qrels = {"q": {"h1": 1, "h2": 1, "u": -1}}
    run = {"q": {"h1": 4.0, "o": 3.0, "u": 2.0, "h2": 1.0}}
    ratio = (1 + eps) / (1 + 2 * eps)
    term = 1 / 4 + (3 / 4) * (2 / 3) * ratio
    assert mean("infAP", qrels, run) == pytest.approx((1 + term) / 2, abs=1e-15)


def test_inferred_ap_is_not_monotone_in_the_order_of_a_tie():
    # h2 tied with u: u first gives h2 two pooled documents above it and a higher estimate,
    # so the grade orders are not infAP's best and worst (Family.grade_monotone)
    qrels = {"q": {"h1": 1, "h2": 1, "u": -1}}
    run = {"q": {"h1": 4.0, "o": 3.0, "u": 2.0, "h2": 2.0}}
    best_first = mean("infAP", qrels, run, ties="optimistic")  # h2 before u: term 2/3
    worst_first = mean("infAP", qrels, run, ties="pessimistic")  # u before h2: term 3/4
    assert worst_first > best_first
    expected = mean("infAP", qrels, run, ties="expected")
    assert expected == pytest.approx((best_first + worst_first) / 2, abs=1e-15)
    assert not rankwise.parse_measure("infAP").spec.grade_monotone


def test_normalized_gain_is_not_monotone_in_the_order_of_a_tie():
    # grades 3 and 2 tied after two 1s (ideal gains 3, 2, 1, 1; cost 3, 5, 6, 7): 3 first adds
    # 3/log2(2 + 6 - 5) + 2/log2(2 + 7 - 7), 2 first adds 2/log2(2 + 6 - 4) + 3/log2(2 + 7 - 7)
    qrels = {"q": {"a": 1, "b": 1, "c": 2, "d": 3}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0, "d": 1.0}}
    head = 1 / math.log2(4) + 1 / math.log2(5)
    best_first = mean("G", qrels, run, ties="optimistic")
    worst_first = mean("G", qrels, run, ties="pessimistic")
    assert best_first == pytest.approx((head + 3 / math.log2(3) + 2) / 7, abs=1e-15)
    assert worst_first == pytest.approx((head + 1 + 3) / 7, abs=1e-15) and worst_first > best_first
    assert not rankwise.parse_measure("G").spec.grade_monotone


def test_binary_g_by_hand():
    # a relevant at rank 1 (nothing above: 1 / log2 2), b relevant at rank 2 (a above is
    # relevant: 1 / log2 2); R = 3 (f not retrieved); threshold 2: a only, and R = 2
    assert mean("binG") == pytest.approx((1 + 1) / 3, abs=1e-15)
    assert mean("binG(rel=2)") == pytest.approx(1 / 2, abs=1e-15)
    qrels, run = {"q": {"b": 1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}  # two above b
    assert mean("binG", qrels, run) == pytest.approx(1 / math.log2(4), abs=1e-15)


def test_utility_by_hand():
    # retrieved 5, of them 2 relevant (a, b); R = 3 (f missed)
    assert mean("utility") == 2 - 3
    assert mean("utility.2,-1,0,0") == 2 * 2 - 3
    weights = "Utility(rel_ret=1,nonrel_ret=0,rel_missed=-2,nonrel_missed=0.5,docs=100)"
    assert mean(weights) == pytest.approx(2 - 2 * 1 + 0.5 * (100 + 2 - 5 - 3))


def test_precision_at_multiples_of_r_by_hand():
    # R = 3 (a, b, f); top 5: a b c d e with a, b relevant
    assert mean("RprecMult@1") == pytest.approx(2 / 3) == mean("Rprec")
    assert mean("Rprec_mult_0.20") == 1.0  # c = floor(0.6 + 0.9) = 1: a
    assert mean("Rprec_mult_0.40") == 1.0  # c = floor(2.1) = 2: a, b
    assert mean("Rprec_mult_2.00") == pytest.approx(2 / 6)  # c = 6 > the 5 retrieved
    assert mean("RprecMult@0.01") == 0.0  # c = floor(0.93) = 0


def test_ndcg_at_relevant_documents_by_hand():
    # gains: a 3, b 1, f 4 (not retrieved); N+ = 3; ranks a 1, b 2; ideal f, a, b
    d = [1 / math.log2(k + 1) for k in range(1, 6)]
    ideal = [4 * d[0], 4 * d[0] + 3 * d[1], 4 * d[0] + 3 * d[1] + 1 * d[2]]
    dcg = [3 * d[0], 3 * d[0] + 1 * d[1]]
    whole = dcg[1] / ideal[2]
    expected = (dcg[0] / ideal[0] + dcg[1] / ideal[1] + 1 * whole) / 3
    assert mean("ndcg_rel") == pytest.approx(expected, abs=1e-15)


def test_ndcg_at_relevant_documents_with_a_negative_gain():
    """trec_eval (m_ndcg_rel.c) averages over the documents with a positive gain only, counts
    the negative gains in the DCG, and stores the value only when the sum is positive."""
    qrels = {"q": {"d0": 0, "d2": 1, "d3": 2}}
    run = {"q": {"d0": 3.0, "d2": 2.0}}  # d0 (gain -1) first, d2 (gain 3) second; d3 missed
    d2 = 1 / math.log2(3)
    dcg, ideal = -1 + 3 * d2, 3 + 2 * d2  # the ideal of the positive gains: d2, d3
    assert mean("ndcg_rel.0=-1,1=3", qrels, run) == pytest.approx((2 * dcg / ideal) / 2)
    assert mean("ndcg_rel.0=-1", qrels, run) == 0.0  # the sum is negative (trec_eval: 0.0000)
    assert mean("ndcg.0=-1", qrels, run) == pytest.approx((-1 + d2) / (2 + d2))  # -0.1403
    with pytest.raises(rankwise.MeasureError, match="negative gains"):
        rankwise.evaluate(qrels, run, ["ndcg_rel.0=-1"], ties="expected")


def test_rank_averaged_ndcg_by_hand():
    # the ideal changes gain after rank 1 (f, 4), 2 (a, 3) and 3 (b, 1) = N+; the list has
    # 5 documents > N+ + 1, so the whole list's nDCG is added
    d = [1 / math.log2(k + 1) for k in range(1, 6)]
    ideal = [4 * d[0], 4 * d[0] + 3 * d[1], 4 * d[0] + 3 * d[1] + 1 * d[2]]
    dcg = [3 * d[0], 3 * d[0] + 1 * d[1], 3 * d[0] + 1 * d[1]]
    at = [dcg[i] / ideal[i] for i in range(3)] + [dcg[2] / ideal[2]]
    assert mean("Rndcg") == pytest.approx(sum(at) / 4, abs=1e-15)
    # a list of exactly N+ + 1 = 4 documents does not get the whole list's nDCG
    short = {"q": {k: v for k, v in RUN["q"].items() if k != "e"}}
    assert mean("Rndcg", QRELS, short) == pytest.approx(sum(at[:3]) / 3, abs=1e-15)
    assert mean("Rndcg(rel=5)") == 0.0  # no relevant document at threshold 5


def test_normalized_gain_by_hand():
    # gains a 3 (rank 1), b 1 (rank 2), f 4 not retrieved; the ideal: f 4, a 3, b 1 (total 8)
    # cost: 4, 4 + 3 = 7; gain so far: 3, 4
    expected = (3 / math.log2(2 + 4 - 3) + 1 / math.log2(2 + 7 - 4)) / 8
    assert mean("G") == pytest.approx(expected, abs=1e-15)
    # beyond the ideal list every rank costs 1: b at rank 3 after x and y (unjudged)
    qrels, run = {"q": {"a": 1, "b": 1}}, {"q": {"x": 3.0, "y": 2.0, "b": 1.0}}
    assert mean("G", qrels, run) == pytest.approx(1 / math.log2(2 + 3 - 1) / 2, abs=1e-15)


@pytest.mark.parametrize("text, canonical, trec", [
    ("G", "G", "G"),
    ("G.1=3,2=9", "G(gain={1:3,2:9})", "G_1=3,2=9"),
    ("ndcg_rel", "ndcg_rel", "ndcg_rel"),
    ("Rndcg", "Rndcg", "Rndcg"),
    ("ndcg_rel.1=3,2=9", "ndcg_rel(gain={1:3,2:9})", "ndcg_rel_1=3,2=9"),
    ("Rprec_mult_0.20", "RprecMult@0.2", "Rprec_mult_0.20"),
    ("RprecMult@5", "RprecMult@5", "Rprec_mult_5.00"),
    ("binG", "binG", "binG"),
    ("utility", "Utility", "utility"),
    ("utility.2,-1,0,0", "Utility(rel_ret=2)", "utility_2,-1,0,0"),
    ("infAP", "infAP", "infAP"),
    ("infap", "infAP", "infAP"),
    ("rbp_resid", "RBPResid(p=0.9)", "rbp_resid"),
    ("rbp_resid.p=0.5", "RBPResid(p=0.5)", "rbp_resid_p=0.5"),
    ("rbp", "RBP(p=0.9)", "rbp"),
    ("RBP(p=0.9)", "RBP(p=0.9)", "rbp"),
    ("rbp.p=0.95", "RBP(p=0.95)", "rbp_p=0.95"),
    ("RBP", "RBP", "RBP"),
    ("RBP(rel=2)@10", "RBP(rel=2)@10", "RBP(rel=2)@10"),
    ("unj_5", "Unjudged@5", "unj_5"),
    ("Unjudged@20", "Unjudged@20", "unj_20"),
    ("Judged@10", "Judged@10", "Judged@10"),
    ("judged@10", "Judged@10", "Judged@10"),
    ("11pt_avg.0.2,0.5,0.8", "11pt_avg(levels={0.2,0.5,0.8})", "11pt_avg_0.2,0.5,0.8"),
    ("11pt_avg..8,.2,.5", "11pt_avg(levels={0.2,0.5,0.8})", "11pt_avg_.8,.2,.5"),
    ("11pt_avg(levels={0.5})", "11pt_avg(levels={0.5})", "11pt_avg(levels={0.5})"),
    # trec_eval prints the parameters as written, the default levels too
    ("11pt_avg.0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1", "11pt_avg",
     "11pt_avg_0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1"),
])
def test_names(text, canonical, trec):
    measure = rankwise.parse_measure(text)
    assert (str(measure), measure.trec_name()) == (canonical, trec)


def test_trec_eval_sets():
    names = [str(m) for m in rankwise.parse_measures("unj")]
    assert names == ["Unjudged@5", "Unjudged@10", "Unjudged@20"]
    every = {str(m) for m in rankwise.parse_measures("all_trec")}
    assert {"RBP(p=0.9)", "RBPResid(p=0.9)", "infAP", "binG", "Utility", "RprecMult@0.2",
            "ndcg_rel", "Rndcg", "G", *names} <= every
    assert len([m for m in rankwise.parse_measures("Rprec_mult")]) == 10


@pytest.mark.parametrize("text", ["RBP(p=1)", "RBP(p=0)", "RBP(p=-0.5)", "Unjudged",
                                  "Judged(rel=1)", "RprecMult", "RprecMult@-1",
                                  "11pt_avg(levels={})", "11pt_avg(levels={1.5})",
                                  "11pt_avg.0.5,-0.1", "11pt_avg(levels=high)"])
def test_bad_parameters_are_refused(text):
    with pytest.raises(rankwise.MeasureError):
        rankwise.parse_measure(text)
