"""``explain``: the founding articles' worked tables, reproduced row by row, and the final
value of every family equal to :func:`rankwise.evaluate` on the same query, under every
convention that changes a number.

The articles are the five seed articles of ``tests/test_seed_examples.py`` (000 MRR vs MAP vs
NDCG, 001 why MAP and MRR fail for search, 002 ranking metrics pitfalls, 003 evaluating
recommendation systems, 004 ranking evaluation metrics for recommender systems); the comments
give the article's printed numbers next to the ones asserted.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import rankwise
from rankwise.cli import main
from rankwise.conventions import Conventions
from rankwise.errors import InputError
from rankwise.explain import FAMILIES, explain, explain_many
from tests.helpers import write


def ranking(labels, query="q"):
    """qrels and run for one query whose list, top first, has the given grades."""
    docs = [f"d{i:03d}" for i in range(len(labels))]
    return ({query: dict(zip(docs, labels))},
            {query: {d: float(len(labels) - i) for i, d in enumerate(docs)}})


def checked(qrels, run, query, measure, **conventions):
    """The explanation, after checking its value against evaluate's for that query."""
    e = explain(qrels, run, query, measure, **conventions)
    value = rankwise.evaluate(qrels, run, [measure], per_query=True,
                              **conventions).per_query()[query][str(rankwise.parse_measure(measure))]
    assert e.value == pytest.approx(value, rel=1e-12, abs=1e-15) or (
        math.isnan(e.value) and math.isnan(value))
    return e


def column(e, key, rows=None):
    return [r[key] for r in (rows if rows is not None else e.rows)]


# ---------------------------------------------------------------------------- 001


def test_ap_table_r_n_r_n_r():
    # 001: "@1: Precision = 1/1 = 1.0, @3: 2/3 ≈ 0.667, @5: 3/5 = 0.6; AP = (1/3)(1.0 + 0.667
    # + 0.6) = 0.756"
    e = checked(*ranking([1, 0, 1, 0, 1]), "q", "AP")
    assert column(e, "relevant") == [1, 0, 1, 0, 1]
    assert [round(r["precision"], 3) for r in e.rows if r["relevant"]] == [1.0, 0.667, 0.6]
    assert [round(c, 3) for c in column(e, "contribution")] == [1.0, 0, 0.667, 0, 0.6]
    assert round(e.rows[-1]["running"], 3) == 2.267
    assert round(e.value, 3) == 0.756
    assert "/ R = 2.2667 / 3 = 0.7556" in e.formula[0]
    assert e.ideal_value == 1.0
    text = e.to_text()
    assert "P@rank" in text and "0.6667" in text and "AP = " in text


@pytest.mark.parametrize("rank, shown", [(1, 1.0), (3, 0.33), (30, 0.033)])
def test_ap_decay_table(rank, shown):
    # 001, "MAP decays linearly": one relevant item at rank 1, 3, 30 -> AP 1.0, 0.33, 0.033
    e = checked(*ranking([0] * (rank - 1) + [1]), "q", "AP")
    assert round(e.value, 2 if rank < 30 else 3) == shown
    assert e.rows[-1]["precision"] == pytest.approx(1 / rank)


def test_err_example_1():
    # 001, Example 1: grades 2 3 0, l_m = 3: R1 = 3/8, R2 = 7/8, R3 = 0, ERR = 0.648. The
    # reach column shows the (1 - R_i) factors the article's last line drops.
    e = checked(*ranking([2, 3, 0]), "q", "ERR")
    assert column(e, "stop") == [3 / 8, 7 / 8, 0.0]
    assert column(e, "reach") == pytest.approx([1.0, 5 / 8, 5 / 8 * 1 / 8])
    assert column(e, "contribution") == pytest.approx([3 / 8, 7 / 16 * 5 / 8, 0.0])
    assert round(e.value, 3) == 0.648
    assert any("g_max = 3" in n for n in e.notes)


def test_err_example_2():
    # 001, Example 2: [8, 4, 4, 4, 4] vs [4, 4, 4, 4, 8]: R(4) = 0.0586, R(8) = 0.9961; ERR
    # ≈ 0.99 and ≈ 0.27; the grade-8 item contributes 0.9961 at rank 1 and 0.1565 at rank 5.
    qrels = {"first": {f"f{i}": g for i, g in enumerate([8, 4, 4, 4, 4])},
             "last": {f"l{i}": g for i, g in enumerate([4, 4, 4, 4, 8])}}
    run = {"first": {f"f{i}": 5.0 - i for i in range(5)},
           "last": {f"l{i}": 5.0 - i for i in range(5)}}
    first, last = checked(qrels, run, "first", "ERR"), checked(qrels, run, "last", "ERR")
    assert round(first.rows[0]["stop"], 4) == 0.9961 and round(first.rows[1]["stop"], 4) == 0.0586
    assert round(first.rows[0]["contribution"], 4) == 0.9961
    assert round(last.rows[4]["contribution"], 4) == 0.1565
    assert math.floor(first.value * 100) / 100 == 0.99 and round(last.value, 2) == 0.27
    assert first.rows[0]["contribution"] / last.rows[4]["contribution"] == pytest.approx(6.3659,
                                                                                         abs=1e-4)


def test_ndcg_exponential_table_a_and_b():
    # 001, "Perfect vs slightly worse ordering", gain 2^l - 1, discount log2(1 + r):
    # | rank | gain | discount | A contrib | B contrib |: 7 / 1.00 / 7.00 / 3.00; 3 / 1.58 / 1.89
    # / 4.42; 1 / 2.00 / 0.50 / 0.50. DCG(A) = 9.39 = IDCG, DCG(B) = 7.92, nDCG(B) = 0.84 (B as
    # in the table: grades 2 3 1; the text's "2 1 3" gives 0.7592, see test_seed_examples).
    a = checked(*ranking([3, 2, 1]), "q", "nDCG(gain=exp)@3")
    b = checked(*ranking([2, 3, 1]), "q", "nDCG(gain=exp)@3")
    assert column(a, "gain") == [7.0, 3.0, 1.0]
    assert [round(d, 2) for d in column(a, "discount")] == [1.0, 1.58, 2.0]
    assert [round(c, 2) for c in column(a, "contribution")] == [7.0, 1.89, 0.5]
    assert [round(c, 2) for c in column(b, "contribution")] == [3.0, 4.42, 0.5]
    assert round(a.rows[-1]["running"], 2) == 9.39 and round(b.rows[-1]["running"], 2) == 7.92
    assert round(b.ideal_rows[-1]["running"], 2) == 9.39
    assert column(b, "gain", b.ideal_rows) == [7.0, 3.0, 1.0]
    assert a.value == pytest.approx(1.0) and round(b.value, 2) == 0.84
    assert round(checked(*ranking([2, 1, 3]), "q", "nDCG(gain=exp)@3").value, 4) == 0.7592
    assert "log2(1+r)" in b.to_text()


@pytest.mark.parametrize("rank, linear, log", [(1, 1.00, 1.00), (2, 0.50, 0.63), (5, 0.20, 0.39),
                                               (10, 0.10, 0.29), (50, 0.02, 0.18)])
def test_reciprocal_vs_logarithmic_discount(rank, linear, log):
    # 001: "Linear (1/r)" vs "Logarithmic (1 / log2(1 + r))"
    qrels, run = ranking([0] * (rank - 1) + [1])
    rr = checked(qrels, run, "q", "RR")
    dcg = checked(qrels, run, "q", "DCG@50")
    assert round(rr.value, 2) == linear
    assert round(1 / dcg.rows[rank - 1]["discount"], 2) == log
    assert round(dcg.value, 2) == log


# ---------------------------------------------------------------------------- 002


@pytest.mark.parametrize("system, ranks, mrr", [("A", [2, 3, 2, 3], 0.4167),
                                                ("B", [1, 10, 1, 15], 0.5417)])
def test_mrr_of_systems_a_and_b(system, ranks, mrr):
    # 002: first relevant at 2, 3, 2, 3 (A) and 1, 10, 1, 15 (B): MRR 0.4167 and 0.5417
    values = []
    for i, rank in enumerate(ranks):
        qrels, run = ranking([0] * (rank - 1) + [1], f"u{i}")
        e = checked(qrels, run, f"u{i}", "RR")
        first = [r["rank"] for r in e.rows if r["contribution"] > 0]
        assert first == [rank] and e.formula[0].endswith(f"1 / {rank} = {1 / rank:.4f}")
        values.append(e.value)
    assert round(float(np.mean(values)), 4) == mrr


def test_ndcg_linear_and_exponential_gain():
    # 002: y_true [10, 0, 0, 1, 5], scores [0.1, 0.2, 0.3, 4, 70]: 0.6957 linear, 0.4097 exp
    qrels, run = rankwise.from_arrays([10, 0, 0, 1, 5], [0.1, 0.2, 0.3, 4, 70])
    lin, exp = checked(qrels, run, "0", "nDCG"), checked(qrels, run, "0", "nDCG(gain=exp)")
    assert column(lin, "grade") == [5, 1, 0, 0, 10]
    assert column(lin, "grade", lin.ideal_rows) == [10, 5, 1]
    assert column(exp, "gain") == [31, 1, 0, 0, 1023]
    assert round(lin.value, 4) == 0.6957 and round(exp.value, 4) == 0.4097
    # the conventions' gain does the same as the measure's parameter
    assert checked(qrels, run, "0", "nDCG", gain="exponential").value == exp.value


# ---------------------------------------------------------------------------- 003

FEED_A = {"nike": 3.0, "adidas": 2.0, "apple": 1.0}
FEED_B = {"apple": 3.0, "adidas": 2.0, "nike": 1.0}


def feeds(judgments):
    return {"A": judgments, "B": judgments}, {"A": FEED_A, "B": FEED_B}


def test_map_and_mrr_of_feeds():
    # 003: A: mAP = (precision@2 + precision@3) / 2 = (1/2 + 2/3) / 2 = 0.58; B = 1; MRR 0.5, 1
    qrels, run = feeds({"apple": 1, "adidas": 1, "nike": 0})
    a, b = checked(qrels, run, "A", "AP"), checked(qrels, run, "B", "AP")
    assert [r["precision"] for r in a.rows if r["relevant"]] == pytest.approx([1 / 2, 2 / 3])
    assert round(a.value, 2) == 0.58 and b.value == 1.0
    assert checked(qrels, run, "A", "RR").value == 0.5
    assert checked(qrels, run, "B", "RR").value == 1.0


def test_binary_and_graded_ndcg_of_feeds_base_10():
    # 003, log base 10: IDCG = 5.417, DCG(A) = 3.756 (both truncated), nDCG(A) = 0.693;
    # graded (apple 1, adidas 5, nike 3): IDCG = 24.55, DCG(A) = 22.104 (22.106), DCG(B) =
    # 18.78, nDCG 0.9 and 0.764 (0.765)
    qrels, run = feeds({"apple": 1, "adidas": 1, "nike": 0})
    a = checked(qrels, run, "A", "DCG(base=10)")
    assert math.floor(a.value * 1000) / 1000 == 3.756
    assert math.floor(a.ideal_rows[-1]["running"] * 1000) / 1000 == 5.417
    assert "log10(1+r)" in a.to_text()
    assert round(checked(qrels, run, "A", "nDCG", discount_base=10.0).value, 3) == 0.693
    qrels, run = feeds({"apple": 1, "adidas": 5, "nike": 3})
    a, b = checked(qrels, run, "A", "DCG(base=10)"), checked(qrels, run, "B", "DCG(base=10)")
    assert column(a, "grade") == [3, 5, 1] and column(b, "grade") == [1, 5, 3]
    assert round(a.value, 3) == 22.106 and round(b.value, 2) == 18.78
    assert math.floor(checked(qrels, run, "A", "IDCG(base=10)").value * 100) / 100 == 24.55
    assert round(checked(qrels, run, "A", "nDCG").value, 1) == 0.9
    assert round(checked(qrels, run, "B", "nDCG").value, 3) == 0.765


def test_precision_recall_rprec_of_feeds():
    # 003: P@k and R@k are "equivalent for both lists"; R-precision is not (1/2 vs 1)
    qrels, run = feeds({"apple": 1, "adidas": 1, "nike": 0})
    for feed in "AB":
        assert checked(qrels, run, feed, "P@3").value == pytest.approx(2 / 3)
        assert checked(qrels, run, feed, "R@3").value == 1.0
    assert checked(qrels, run, "A", "Rprec").value == 0.5
    assert checked(qrels, run, "B", "Rprec").value == 1.0


# ---------------------------------------------------------------------------- 000 and 004


def test_cg_dcg_idcg_ndcg_table():
    # 004's formulas on grades 3 2 3 0 1 2: CG(6) = 11, DCG(6) = 6.861, IDCG(6) = 7.141,
    # nDCG(6) = 0.961
    qrels, run = ranking([3, 2, 3, 0, 1, 2])
    cg = checked(qrels, run, "q", "CG@6")
    assert column(cg, "running") == [3, 5, 8, 8, 9, 11]
    dcg = checked(qrels, run, "q", "DCG@6")
    assert round(dcg.value, 3) == 6.861
    assert column(dcg, "grade", dcg.ideal_rows) == [3, 3, 2, 2, 1]
    assert round(checked(qrels, run, "q", "IDCG@6").value, 3) == 7.141
    assert round(checked(qrels, run, "q", "nDCG@6").value, 3) == 0.961


def test_precision_at_n_of_a_short_list():
    # 000: Precision@N is the share of the top N that is good: 2 good items returned, P@5 = 2/5
    qrels, run = {"q": {"a": 1, "b": 1, "c": 1}}, {"q": {"a": 2.0, "b": 1.0}}
    e = checked(qrels, run, "q", "P@5")
    assert e.value == 0.4 and "2 / 5" in e.formula[0]
    assert any("fewer than 5" in n and "divides by K" in n for n in e.notes)
    assert checked(qrels, run, "q", "P@5", short_lists="length").value == 1.0
    assert checked(qrels, run, "q", "R@5").value == pytest.approx(2 / 3)


def test_hit_ratio_and_bpref():
    # 004: HR@L is 1 if the correct answer is in the top L. bpref (trec_eval m_bpref.c): each
    # relevant retrieved item scores 1 - (judged non-relevant above it) / min(R, N)
    qrels, run = ranking([0, 0, 1])
    assert checked(qrels, run, "q", "Success@2").value == 0.0
    assert checked(qrels, run, "q", "Success@3").value == 1.0
    qrels, run = ranking([1, 0, 1, 0, 1])
    qrels["q"]["unjudged-not"] = 0
    e = checked(qrels, run, "q", "Bpref")
    assert column(e, "nonrel_above") == [0, 0, 1, 1, 2]
    assert [round(c, 4) for c in column(e, "contribution")] == [1.0, 0, 0.6667, 0, 0.3333]


# ---------------------------------------------------------------------------- every family


def _collection(seed: int):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(14):
        docs = [f"d{i}" for i in range(int(rng.integers(1, 14)))]
        qrels[f"q{q}"] = {d: int(rng.choice([-1, 0, 0, 1, 2, 3, 7],
                                           p=[.05, .35, .2, .2, .1, .05, .05]))
                          for d in docs if rng.random() < .7} or {"z": 0}
        if q == 0:
            continue  # judged, not in the run
        retrieved = [d for d in docs + ["u1", "u2", "u3"] if rng.random() < .8] or ["x"]
        run[f"q{q}"] = {d: float(rng.integers(-2, 6)) for d in retrieved}  # ties, scores <= 0
    run["only-in-run"] = {"a": 1.0}
    return qrels, run


MEASURES = ["P@1", "P@5", "Hits", "Hits@3", "Success", "R@3", "F1@4", "Success@2", "RelP@3",
            "Rprec", "RR", "RR@3", "AP", "AP@4", "gm_map", "Bpref", "gm_bpref", "nDCG", "nDCG@3",
            "nDCG(gain=exp)@5", "DCG@4",
            "IDCG@3", "CG@3", "ERR", "ERR@3", "P(rel=2)@3", "AP(rel=2)", "ERR(max_grade=3)@4",
            "nDCG(gain={1:2,2:5})@4", "DCG(base=10)@3", "RBP", "RBP(p=0.5,rel=2)@4", "rbp",
            "Judged@3", "Judged", "Unjudged@5", "infAP", "infAP(rel=2)", "binG", "RprecMult@0.6",
            "Rprec_mult_1.80", "ARHR", "ARHR@3", "RWRR@4", "RWRR(gain=exp)", "RBPResid",
            "rbp_resid", "RBPResid(p=0.5)", "SetP", "SetR", "SetRelP", "set_map", "SetF",
            "set_F.0.5", "SetP(rel=2)", "utility", "utility.2,-1,-0.5,0.25", "Utility(docs=50)",
            "NumQ", "NumRet", "NumRel", "num_rel_ret", "NumNonRelJudgedRet",
            "NumRelRet(rel=2)", "MAE", "RMSE", "IPrec@0.3", "iprec_at_recall_0.00",
            "IPrec(rel=2)@1", "11pt_avg", "11pt_avg.0.2,0.5,0.8", "G", "G.1=3,2=9",
            "G(gain=exp)", "ndcg_rel",
            "ndcg_rel(gain=exp)", "Rndcg", "Rndcg.1=3,2=3,3=5", "ndcg_rel.0=-1,1=3,3=1",
            "ndcg_rel.0=-2", "Rndcg.0=-1,1=3", "G.0=-1,1=3", "nDCG(gain={0:-1,1:3})"]
CONVENTIONS = [{}, {"ties": "docid_asc"}, {"ties": "input_order"}, {"ties": "optimistic"},
               {"ties": "pessimistic"}, {"max_depth": 3}, {"unjudged": "remove"},
               {"relevance_threshold": 2}, {"ap_denominator": "min_relevant_cutoff"},
               {"ap_denominator": "cutoff"}, {"ap_denominator": "relevant_retrieved"},
               {"short_lists": "length"}, {"recall_denominator": "min_relevant_cutoff"},
               {"no_relevant": "nan"}, {"no_relevant": "skip"}, {"ideal": "retrieved"},
               {"no_relevant": "one"}, {"idcg_zero": "one"}, {"idcg_zero": "nan"},
               {"gain": "exponential"}, {"discount_base": 10.0},
               {"nonpositive_scores": "nonrelevant"}, {"missing_queries": "zero"},
               {"score_precision": "float32"}, {"duplicates": "first"},
               {"family_overrides": (("nDCG", "ties", "optimistic"),
                                     ("AP", "relevance_threshold", 2),
                                     ("P", "ties", "pessimistic"))}]


def test_every_family_is_covered():
    from rankwise.measures.registry import FAMILIES as REGISTERED

    assert set(FAMILIES) == set(REGISTERED)
    assert {rankwise.parse_measure(m).family for m in MEASURES} == set(FAMILIES)


@pytest.mark.parametrize("conventions", CONVENTIONS, ids=lambda c: ",".join(
    f"{k}={v}" for k, v in c.items()) or "trec_eval")
def test_equals_evaluate_for_every_family(conventions):
    qrels, run = _collection(11)
    conv = Conventions(**conventions)
    expected = rankwise.evaluate(qrels, run, MEASURES, conv, per_query=True).per_query()
    assert ("q0" in expected) == (conventions.get("missing_queries") == "zero")
    for query, values in expected.items():
        for e in explain_many(qrels, run, query, MEASURES, conv):
            got, want = e.value, values[e.measure]
            assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(
                want, rel=1e-12, abs=1e-15), (query, e.measure)


def test_the_other_families_worked_by_hand():
    # one query: a (1), u (unjudged), c (2), b (0), v (unjudged); x (1) is never retrieved
    qrels = {"q": {"a": 1, "b": 0, "c": 2, "x": 1}}
    run = {"q": {"a": 5.0, "u": 4.0, "c": 3.0, "b": 2.0, "v": 1.0}}
    value = {m: checked(qrels, run, "q", m) for m in (
        "ARHR", "RWRR@3", "RBPResid(p=0.5)", "SetF", "utility.2,-1,-0.5,0.25", "NumRet",
        "NumNonRelJudgedRet", "MAE", "RMSE", "IPrec@0.5", "11pt_avg", "G", "ndcg_rel", "Rndcg")}
    assert value["ARHR"].value == pytest.approx(1 + 1 / 3)
    assert value["RWRR@3"].value == pytest.approx(1 + 2 / 3)
    e = value["RBPResid(p=0.5)"]  # unjudged at ranks 2 and 5, and the tail 0.5^5
    assert column(e, "contribution") == [0, 0.25, 0, 0, 0.5 * 0.5 ** 4]
    assert e.value == pytest.approx(0.25 + 0.03125 + 0.03125)
    assert value["SetF"].value == pytest.approx(2 * 0.4 * (2 / 3) / (0.4 + 2 / 3))
    e = value["utility.2,-1,-0.5,0.25"]  # h = 2, n = 5, R = 3, docs = 0
    assert e.value == pytest.approx(2 * 2 - 3 - 0.5 * 1 + 0.25 * (0 + 2 - 5 - 3))
    assert "2·h − 1·(n − h) − 0.5·(R − h) + 0.25·(docs + h − n − R)" in e.formula[-1]
    assert value["NumRet"].value == 5 and not value["NumRet"].ideal_rows
    assert column(value["NumNonRelJudgedRet"], "judged_nonrel") == [0, 0, 0, 1, 1]
    assert column(value["MAE"], "error") == [4.0, None, 1.0, 2.0, None]
    assert value["MAE"].value == pytest.approx(7 / 3)
    assert value["RMSE"].value == pytest.approx(math.sqrt((16 + 1 + 4) / 3))
    e = value["11pt_avg"]  # recall 0-0.4: 1 relevant (P 1); 0.5-0.8: 2 (P 2/3); 0.9, 1: none
    assert column(e, "interpolated") == pytest.approx([1, 2 / 3, 2 / 3, 0.5, 0.4])
    assert e.value == pytest.approx((5 + 4 * 2 / 3) / 11)
    assert value["IPrec@0.5"].value == pytest.approx(2 / 3)
    e = value["G"]  # cost: the ideal's gains 2, 1, 1, then 1 a rank
    assert column(e, "ideal_cost") == [2, 3, 4, 5, 6]
    assert column(e, "gain_so_far") == [1, 1, 3, 3, 3]
    assert e.value == pytest.approx((1 / math.log2(3) + 2 / math.log2(3)) / 4)
    assert e.ideal_value == pytest.approx(1.0)
    ndcg = {k: 1 / (2 + 1 / math.log2(3)) if k == 2 else 2 / (2 + 1 / math.log2(3) + 0.5)
            for k in (2, 3)}
    whole = ndcg[3]  # the list's DCG is 1 + 2/2, the ideal's 2 + 1/log2(3) + 1/2
    e = value["ndcg_rel"]  # nDCG at a (rank 1: 1/2) and c (rank 3), x at the whole list's
    assert e.value == pytest.approx((0.5 + ndcg[3] + whole) / 3)
    e = value["Rndcg"]  # the ideal's gain changes after ranks 1 and 3; 5 > N+ + 1 = 4
    assert e.value == pytest.approx((0.5 + ndcg[3] + whole) / 3)
    assert [line.split(":")[0] for line in e.formula[:3]] == [
        "the ideal's gain changes after rank 1", "the ideal's gain changes after rank 3",
        "the list (5) is longer than N+ + 1 = 4"]
    # a long list: set measures end the table at the last hit, the counts show every rank
    qrels, run = ranking([1] + [0] * 14)
    text = checked(qrels, run, "q", "SetP").to_text()
    assert "ranks 11-15 (5 documents): no further relevant document" in text
    assert checked(qrels, run, "q", "NumRet").shown == 15


# ---------------------------------------------------------------------------- errors and output


def test_refusals_name_the_problem():
    qrels, run = _collection(3)
    with pytest.raises(InputError, match="not in the run.*missing_queries='zero'"):
        explain(qrels, run, "q0", "AP")
    assert explain(qrels, run, "q0", "AP", missing_queries="zero").value == 0.0
    with pytest.raises(InputError, match="no judgments"):
        explain(qrels, run, "only-in-run", "AP")
    with pytest.raises(InputError, match="not found.*closest: q1"):
        explain(qrels, run, "q1x", "AP")
    with pytest.raises(InputError, match="one run"):
        explain(qrels, {"a": run, "b": run}, "q1", "AP")
    with pytest.raises(InputError, match="ties='expected'"):
        explain(qrels, run, "q1", "AP", ties="expected")
    # torchmetrics' nDCG averages ties through a family override, which ties= leaves as it is
    with pytest.raises(InputError, match="family_overrides give nDCG ties='expected'.*ties= "
                                         "does not change"):
        explain(qrels, run, "q1", "nDCG", "torchmetrics", ties="optimistic")
    assert explain(qrels, run, "q1", "AP", "torchmetrics").value == rankwise.evaluate(
        qrels, run, ["AP"], "torchmetrics", per_query=True).per_query()["q1"]["AP"]
    with pytest.raises(rankwise.MeasureError):
        explain(qrels, run, "q1", "nDCG@x")
    with pytest.raises(rankwise.MeasureError, match="several measures"):
        explain(qrels, run, "q1", "P.5,10")
    assert [e.measure for e in explain_many(qrels, run, "q1", "P.5,10")] == ["P@5", "P@10"]


def test_no_relevant_and_idcg_zero_policies_are_explained():
    qrels, run = {"q": {"a": 0}}, {"q": {"a": 1.0, "b": 0.5}}
    e = checked(qrels, run, "q", "AP", no_relevant="skip")
    assert math.isnan(e.value) and "no_relevant='skip'" in e.formula[-1]
    e = checked(qrels, run, "q", "nDCG@2", idcg_zero="nan")
    assert math.isnan(e.value) and "IDCG@2 = 0" in e.formula[0]
    assert json.loads(e.to_json())["value"] is None


def test_text_markdown_and_json_outputs():
    qrels, run = {"q|*_": {"<b>x</b>": 1, "y": 0}}, {"q|*_": {"<b>x</b>": 2.0, "y": 1.0, "z": 0.5}}
    e = checked(qrels, run, "q|*_", "AP")
    md = e.to_markdown()
    assert "&lt;b&gt;x&lt;/b&gt;" in md and "<b>" not in md and "q\\|\\*\\_" in md
    data = json.loads(e.to_json())
    assert data["value"] == 1.0 and data["rows"][0]["doc"] == "<b>x</b>"
    assert data["conventions"]["ties"] == "docid_desc"
    assert "conventions: trec_eval's (every default)" in e.to_text()
    assert "ap_denominator=cutoff (the others trec_eval's)" in explain(
        qrels, run, "q|*_", "AP", ap_denominator="cutoff").to_text()
    # rows that contribute nothing are summarised, or all shown on request
    long_qrels, long_run = ranking([1] + [0] * 40)
    text = explain(long_qrels, long_run, "q", "AP").to_text()
    assert "ranks 11-41 (31 documents): nothing further contributes" in text
    assert "nothing further" not in explain(long_qrels, long_run, "q", "AP").to_text(
        all_rows=True)


def test_doc_ids_with_line_breaks_keep_their_row():
    # a doc id holding a line break split its row of the text table in two
    qrels, run = {"q": {"a\nb": 1, "c\td": 0}}, {"q": {"a\nb": 2.0, "c\td": 1.0, "é": 0.5}}
    e = checked(qrels, run, "q", "AP")
    table = e.to_text().splitlines()[2:6]
    assert [line.split()[1] for line in table] == ["doc", "a\\nb", "c\\td", "é"]
    assert column(e, "doc") == ["a\nb", "c\td", "é"]  # the rows and JSON hold the ids
    assert json.loads(e.to_json())["rows"][0]["doc"] == "a\nb"


def test_command_line(tmp_path, capsys):
    qrels = write(tmp_path, "qrels.txt", "q1 0 a 3\nq1 0 b 2\nq1 0 c 1\nq1 0 x 0\n")
    run = write(tmp_path, "run.txt", "q1 Q0 b 1 3 s\nq1 Q0 a 2 2 s\nq1 Q0 c 3 1 s\n")
    assert main(["explain", qrels, run, "--query", "q1", "-m", "ndcg_cut_3", "--gain",
                 "exponential"]) == 0
    out = capsys.readouterr().out
    assert "nDCG@3 of query 'q1' in run 's'" in out  # the run's tag
    assert "nDCG@3 = DCG@3 / IDCG@3 = 7.9165 / 9.3928 = 0.8428" in out
    assert "gain=exponential" in out
    assert main(["explain", qrels, run, "--query", "q1", "-m", "AP", "-f", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == 1.0
    assert main(["explain", qrels, run, "--query", "q1", "-m", "P@2", "-f", "markdown"]) == 0
    assert "| rank | doc |" in capsys.readouterr().out
    assert main(["explain", qrels, run, "--query", "q1", "-m", "AP", "RR"]) == 0
    out = capsys.readouterr().out
    assert "AP of query 'q1'" in out and "RR of query 'q1'" in out
    assert main(["explain", qrels, run, "--query", "q9", "-m", "AP"]) == 2
    assert "query not found" in capsys.readouterr().err


def test_values_that_fixed_decimals_would_show_as_0_or_as_300_digits():
    # gains of 1e-200 printed 0.0000 in every cell and "DCG / IDCG = 0.0000 / 0.0000 = 0.7967";
    # gains of 1e200 a 201-digit number in every cell
    qrels, run = {"q": {"a": 1, "b": 2, "c": 0}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    text = explain(qrels, run, "q", "nDCG(gain={1:1e-200,2:3e-200})").to_text()
    assert "= 2.8928e-200 / 3.6309e-200 = 0.7967" in text
    assert "1.0000e-200     1.0000   1.0000e-200  1.0000e-200" in text
    text = explain(qrels, run, "q", "DCG(gain={1:1e200,2:3e200})").to_text()
    assert "= Σ gain / discount = 2.8928e+200" in text and max(map(len, text.split())) < 40
    assert "  0.0000  " in text  # a contribution of 0 is 0.0000


def test_grades_scores_and_parameters_print_as_given():
    # ':g' kept 6 digits: a grade of 1234567 showed as 1.23457e+06, RBP's p = 0.9999999 as 1
    qrels = {"q": {"a": 1234567, "b": 1234568, "c": 0}}
    run = {"q": {"a": 1234567.0, "b": 7654321.0, "c": 0.123456789}}
    text = explain(qrels, run, "q", "nDCG").to_text()
    assert " 1234567 " in text and " 1234568 " in text and "e+06" not in text
    assert "p = 0.9999999," in explain(qrels, run, "q", "RBP(p=0.9999999)").to_text()
    assert "score" not in text
    rows = explain(qrels, run, "q", "MAE").to_text()
    assert " 7654321 " in rows and " 0.123456789 " in rows
