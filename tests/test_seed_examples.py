"""Every worked example of the five seed articles, recomputed with rankwise.

The seed articles are ``000_79ae75b38ba14a92.txt`` (MRR vs MAP vs NDCG), ``001_0d788fe34f578034.txt``
(why MAP and MRR fail for search; ERR and NDCG), ``002_e6944b62997f94eb.txt`` (ranking metrics:
pitfalls), ``003_5ecd33d7d41a7da0.txt`` (evaluating recommendation systems: mAP, MRR, NDCG) and
``004_979c15c855f3ba6e.txt`` (ranking evaluation metrics for recommender systems).

Every expected number below was recomputed from the articles' formulas (the arithmetic is
written out next to it); where an article prints a different number or a wrong statement,
a comment says so and the test asserts the correct value.
"""

from __future__ import annotations

import math

import pytest

import rankwise


def single(qrels, run, measures, **conventions):
    """Per-query values of a one-system evaluation."""
    return rankwise.evaluate(qrels, run, measures, per_query=True, **conventions).per_query()


def ranking(labels, query="q"):
    """qrels and run for one query whose list, top first, has the given grades."""
    docs = [f"d{i:03d}" for i in range(len(labels))]
    qrels = {query: {d: g for d, g in zip(docs, labels)}}
    run = {query: {d: float(len(labels) - i) for i, d in enumerate(docs)}}
    return qrels, run


def first_relevant_at(rank, query="q"):
    """One relevant document at ``rank`` (1-based) below rank - 1 judged non-relevant ones."""
    return ranking([0] * (rank - 1) + [1], query)


def merge(*pairs):
    qrels, run = {}, {}
    for q, r in pairs:
        qrels.update(q)
        run.update(r)
    return qrels, run


# ---------------------------------------------------------------------------- 000_79ae75b38ba14a92.txt


def test_mae_rmse_rating_example():
    # 000_79ae75b38ba14a92.txt: "If a user rated an item with 4.5 these metrics tell us how
    # far-off are our predictions if we predicted a rating of 1.2 or 4.3" (no numbers given).
    # |4.5 - 1.2| = 3.3 and |4.5 - 4.3| = 0.2; one prediction each, so MAE = RMSE = error.
    qrels = {"u1": {"item": 4.5}, "u2": {"item": 4.5}}
    run = {"u1": {"item": 1.2}, "u2": {"item": 4.3}}
    values = single(qrels, run, ["MAE", "RMSE"])
    assert values["u1"]["MAE"] == pytest.approx(3.3)
    assert values["u1"]["RMSE"] == pytest.approx(3.3)
    assert values["u2"]["MAE"] == pytest.approx(0.2)
    assert values["u2"]["RMSE"] == pytest.approx(0.2)
    # both predictions for one user: MAE = (3.3 + 0.2) / 2 = 1.75,
    # RMSE = sqrt((3.3^2 + 0.2^2) / 2) = sqrt(5.465) = 2.33773...
    both = single({"u": {"a": 4.5, "b": 4.5}}, {"u": {"a": 1.2, "b": 4.3}}, ["MAE", "RMSE"])["u"]
    assert both["MAE"] == pytest.approx(1.75)
    assert both["RMSE"] == pytest.approx(math.sqrt(5.465))
    assert both["RMSE"] >= both["MAE"]  # RMSE weighs the large error more


def test_idcg_zero_gives_ndcg_zero():
    # 000_79ae75b38ba14a92.txt: "the user needs to manually handle the case where the IDCG is
    # equal to zero. This occurs when users have no relevant documents. A strategy here is to
    # set the NDCG to 0 as well." rankwise does exactly that (as trec_eval does).
    qrels, run = ranking([0, 0, 0])
    values = single(qrels, run, ["nDCG", "nDCG@2", "nDCG(gain=exp)", "IDCG", "DCG"])["q"]
    assert values == {"nDCG": 0.0, "nDCG@2": 0.0, "nDCG(gain=exp)": 0.0, "IDCG": 0.0, "DCG": 0.0}
    # the same for a user with no judged item at all among those retrieved
    values = single({"q": {"x": 0}}, {"q": {"a": 2.0, "b": 1.0}}, ["nDCG"])["q"]
    assert values["nDCG"] == 0.0


def test_ndcg_at_k_of_a_list_shorter_than_k():
    # 000_79ae75b38ba14a92.txt: "The size of the ranked list returned ... can be less than K.
    # To handle this we can consider fixed-size result sets and pad the smaller sets with
    # minimum scores." Padding adds gain 0, so it changes neither DCG@K nor nDCG@K.
    qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 3}}
    short = {"q": {"a": 3.0, "b": 2.0}}
    padded = {"q": {"a": 3.0, "b": 2.0, "p1": -1.0, "p2": -1.0, "p3": -1.0}}
    for m in ["nDCG@5", "DCG@5"]:
        assert single(qrels, short, [m])["q"][m] == pytest.approx(
            single(qrels, padded, [m])["q"][m])
    # and the ideal is not shortened to the list: IDCG@5 uses all four judged documents,
    # (3/1 + 2/log2(3) + 1/log2(4)), DCG@5 = 2/1 + 0 -> nDCG@5 = 2 / 4.76186 = 0.42000
    idcg = 3 + 2 / math.log2(3) + 1 / 2
    assert single(qrels, short, ["nDCG@5"])["q"]["nDCG@5"] == pytest.approx(2 / idcg)


def test_precision_at_n_of_a_list_shorter_than_n():
    # 000_79ae75b38ba14a92.txt: "The modified Precision@N metric is the percentage of the
    # 'top-n' items that are good." With 2 items returned (both good), P@5 = 2/5, not 2/2:
    # the missing positions count as not good (trec_eval).
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    values = single(qrels, run, ["P@5", "R@5", "F1@5", "SetP"])["q"]
    assert values["P@5"] == pytest.approx(2 / 5)
    assert values["R@5"] == pytest.approx(2 / 3)
    # F1@5 = 2 P R / (P + R) = 2 * 0.4 * 0.6667 / 1.0667 = 0.5
    assert values["F1@5"] == pytest.approx(2 * 0.4 * (2 / 3) / (0.4 + 2 / 3))
    assert values["SetP"] == 1.0  # set precision divides by what was retrieved


# ---------------------------------------------------------------------------- 001_0d788fe34f578034.txt


def test_ap_of_r_n_r_n_r():
    # 001_0d788fe34f578034.txt: 3 relevant items, ranking R N R N R:
    # AP = (1/1 + 2/3 + 3/5) / 3 = 2.26667 / 3 = 0.75556 -> 0.756 (as printed)
    qrels, run = ranking([1, 0, 1, 0, 1])
    values = single(qrels, run, ["AP", "P@1", "P@3", "P@5"])["q"]
    assert values["AP"] == pytest.approx((1 + 2 / 3 + 3 / 5) / 3)
    assert round(values["AP"], 3) == 0.756
    assert (values["P@1"], values["P@3"], values["P@5"]) == pytest.approx((1.0, 2 / 3, 3 / 5))


def test_ap_counts_unretrieved_relevant_items_in_the_denominator():
    # 001_0d788fe34f578034.txt: "If the system never retrieves an item or retrieves it beyond
    # the cutoff, the item contributes nothing to the numerator while still counting in the
    # denominator." A 4th relevant item that is never retrieved: AP = 2.26667 / 4 = 0.56667.
    qrels, run = ranking([1, 0, 1, 0, 1])
    qrels["q"]["never"] = 1
    assert single(qrels, run, ["AP"])["q"]["AP"] == pytest.approx((1 + 2 / 3 + 3 / 5) / 4)
    # beyond the cutoff: AP@3 of R N R N R = (1 + 2/3) / 3 = 0.55556
    qrels, run = ranking([1, 0, 1, 0, 1])
    assert single(qrels, run, ["AP@3"])["q"]["AP@3"] == pytest.approx((1 + 2 / 3) / 3)


def test_mrr_ignores_grades():
    # 001_0d788fe34f578034.txt: "Item: 1 2 3, Relevance: 3 1 0 ... MAP and MRR both ignore how
    # good the relevant item is": RR and AP are the same for grades 3 1 0 and 1 3 0.
    a = single(*ranking([3, 1, 0]), ["RR", "AP"])["q"]
    b = single(*ranking([1, 3, 0]), ["RR", "AP"])["q"]
    assert a == b == {"RR": 1.0, "AP": 1.0}


def test_mrr_is_not_an_average_rank():
    # Slip in 001_0d788fe34f578034.txt: "MRR is the average rank where the first relevant item
    # occurs" (and 003_5ecd33d7d41a7da0.txt: "MRR gives an indication of the average rank").
    # Its own formula is the mean of reciprocal ranks: first relevant at ranks 1 and 3 gives
    # MRR = (1 + 1/3) / 2 = 0.667, while the average rank is 2 (and 1 / 2 = 0.5). MRR is the
    # reciprocal of the harmonic mean of the ranks (002_e6944b62997f94eb.txt has this right).
    qrels, run = merge(first_relevant_at(1, "u1"), first_relevant_at(3, "u2"))
    mrr = rankwise.evaluate(qrels, run, ["RR"]).mean("RR")
    assert mrr == pytest.approx(2 / 3)
    assert mrr != pytest.approx(1 / 2)


@pytest.mark.parametrize("rank, expected", [(1, 1.0), (3, 1 / 3), (30, 1 / 30)])
def test_ap_decay_table(rank, expected):
    # 001_0d788fe34f578034.txt, "MAP Decays Linearly": a single relevant item at rank 1, 3, 30
    # gives AP 1.0, 0.33, 0.033 (the table is right). The heading is not: AP = 1/rank decays
    # hyperbolically (like RR), not linearly; a linear decay would be 1 - (rank - 1) * c.
    values = single(*first_relevant_at(rank), ["AP", "RR"])["q"]
    assert values["AP"] == pytest.approx(expected)
    assert values["AP"] == values["RR"]  # one relevant item: AP is its reciprocal rank
    assert round(values["AP"], 2 if rank < 30 else 3) == {1: 1.0, 3: 0.33, 30: 0.033}[rank]


def test_err_example_1():
    # 001_0d788fe34f578034.txt, Example 1: grades 2 3 0, maximum label 3,
    # R_i = (2^l - 1) / 2^3: R1 = 3/8, R2 = 7/8, R3 = 0.
    # ERR = R1 + (1/2)(1 - R1) R2 + (1/3)(1 - R1)(1 - R2) R3 = 0.375 + 0.2734375 = 0.6484375.
    # Slip in the article: its last line writes ERR = (1/1)R1 + (1/2)R2 + (1/3)R3, dropping the
    # (1 - R_i) factors of its own formula; taken literally that gives 0.375 + 0.4375 = 0.8125.
    # The printed result 0.648 is the correct one.
    qrels, run = ranking([2, 3, 0])
    values = single(qrels, run, ["ERR", "ERR(max_grade=3)", "RR"])["q"]
    assert values["ERR"] == pytest.approx(0.6484375)
    assert round(values["ERR"], 3) == 0.648
    assert values["ERR(max_grade=3)"] == pytest.approx(0.6484375)
    assert values["RR"] == 1.0  # "MRR says excellent ranking"


def test_err_example_2():
    # 001_0d788fe34f578034.txt, Example 2: grades [8, 4, 4, 4, 4] vs [4, 4, 4, 4, 8], max 8.
    # R(4) = 15/256 = 0.0586, R(8) = 255/256 = 0.9961 (table right).
    r4, r8 = 15 / 256, 255 / 256
    first = r8 + sum(r4 * (1 - r8) * (1 - r4) ** (k - 2) / k for k in range(2, 6))
    last = sum(r4 * (1 - r4) ** (k - 1) / k for k in range(1, 5)) + (1 - r4) ** 4 * r8 / 5
    qrels = {"first": {f"f{i}": g for i, g in enumerate([8, 4, 4, 4, 4])},
             "last": {f"l{i}": g for i, g in enumerate([4, 4, 4, 4, 8])}}
    run = {"first": {f"f{i}": 5.0 - i for i in range(5)},
           "last": {f"l{i}": 5.0 - i for i in range(5)}}
    values = single(qrels, run, ["ERR", "ERR(max_grade=8)"])
    assert values["first"]["ERR"] == pytest.approx(first)  # 0.99637
    assert values["last"]["ERR"] == pytest.approx(last)  # 0.27218
    # the article prints "≈ 0.99" for 0.99637 (truncated; rounded it is 1.00) and "≈ 0.27"
    assert math.floor(values["first"]["ERR"] * 100) / 100 == 0.99
    assert round(values["last"]["ERR"], 2) == 0.27
    # contribution of the grade-8 item: 0.9961 at rank 1, (1/5)(1 - R(4))^4 R(8) = 0.1565 at
    # rank 5; the drop factor is 6.366 (the printed 6.36x is 0.9961 / 0.1565 from the rounded
    # values; unrounded it is 6.3659, i.e. 6.37 to two decimals)
    at_five = (1 - r4) ** 4 * r8 / 5
    assert round(at_five, 4) == 0.1565
    assert r8 / at_five == pytest.approx(6.365928, abs=1e-6)
    assert values["last"]["ERR"] - sum(r4 * (1 - r4) ** (k - 1) / k for k in range(1, 5)) \
        == pytest.approx(at_five)


def test_ndcg_exponential_gain_rankings_a_and_b():
    # 001_0d788fe34f578034.txt, "Perfect vs Slightly Worse Ordering", gain 2^l - 1:
    # A = 3 2 1: DCG = 7/1 + 3/log2(3) + 1/2 = 9.3928 = IDCG -> nDCG(A) = 1.0 (right).
    # Slip: the text gives ranking B as "2 1 3", but its table computes B's contributions as
    # 3.00, 4.42, 0.50, i.e. gains 3, 7, 1 = ranking 2 3 1. For the 2 1 3 of the text:
    # DCG = 3 + 1/log2(3) + 7/2 = 7.1309 and nDCG = 0.7592, not 0.84.
    # For 2 3 1 (the table): DCG = 3 + 7/log2(3) + 1/2 = 7.9165 and nDCG = 0.8428 -> 0.84.
    qrels, run = merge(ranking([3, 2, 1], "A"), ranking([2, 1, 3], "B_text"),
                       ranking([2, 3, 1], "B_table"))
    values = single(qrels, run, ["nDCG(gain=exp)", "DCG(gain=exp)", "IDCG(gain=exp)"])
    log3 = math.log2(3)
    assert values["A"]["DCG(gain=exp)"] == pytest.approx(7 + 3 / log3 + 0.5)
    assert round(values["A"]["DCG(gain=exp)"], 2) == 9.39
    assert values["A"]["IDCG(gain=exp)"] == pytest.approx(values["A"]["DCG(gain=exp)"])
    assert values["A"]["nDCG(gain=exp)"] == pytest.approx(1.0)
    assert values["B_text"]["DCG(gain=exp)"] == pytest.approx(3 + 1 / log3 + 3.5)
    assert values["B_text"]["nDCG(gain=exp)"] == pytest.approx(0.7591919, abs=1e-6)
    assert round(values["B_table"]["DCG(gain=exp)"], 2) == 7.92
    assert round(values["B_table"]["nDCG(gain=exp)"], 2) == 0.84
    # the ranks' discounts in the table: log2(1 + r) = 1.00, 1.58, 2.00
    assert [round(math.log2(1 + r), 2) for r in (1, 2, 3)] == [1.0, 1.58, 2.0]


@pytest.mark.parametrize("rank, linear, log", [(1, 1.00, 1.00), (2, 0.50, 0.63), (5, 0.20, 0.39),
                                               (10, 0.10, 0.29), (50, 0.02, 0.18)])
def test_reciprocal_vs_logarithmic_discount_table(rank, linear, log):
    # 001_0d788fe34f578034.txt, "Linear (1/r)" vs "Logarithmic (1 / log2(1 + r))" (all right;
    # "linear" is the article's name for 1/r, which is hyperbolic). A single relevant item
    # (grade 1) at rank r: RR = 1/r and DCG@K = 1/log2(1 + r) for K >= r.
    values = single(*first_relevant_at(rank), ["RR", "DCG@50", "DCG", "nDCG"])["q"]
    assert values["RR"] == pytest.approx(1 / rank)
    assert values["DCG@50"] == pytest.approx(1 / math.log2(1 + rank))
    assert values["DCG"] == values["DCG@50"]
    assert values["nDCG"] == pytest.approx(values["DCG"])  # IDCG = 1 for one relevant item
    assert round(values["RR"], 2) == linear
    assert round(values["DCG@50"], 2) == log


# ---------------------------------------------------------------------------- 002_e6944b62997f94eb.txt


def test_mrr_systems_a_and_b():
    # 002_e6944b62997f94eb.txt: first relevant item at ranks 2, 3, 2, 3 (A) and 1, 10, 1, 15 (B)
    # MRR(A) = (1/2 + 1/3 + 1/2 + 1/3) / 4 = 0.41667; MRR(B) = (1 + 1/10 + 1 + 1/15) / 4 = 0.54167
    ranks = {"A": [2, 3, 2, 3], "B": [1, 10, 1, 15]}
    fillers = [f"n{j:02d}" for j in range(14)]  # judged non-relevant
    qrels = {f"u{i}": {"hit": 1, **{d: 0 for d in fillers}} for i in range(4)}
    runs = {}
    for system, first in ranks.items():
        runs[system] = {}
        for i, rank in enumerate(first):
            docs = fillers[:rank - 1] + ["hit"]
            runs[system][f"u{i}"] = {d: float(100 - k) for k, d in enumerate(docs)}
    result = rankwise.evaluate(qrels, runs, ["RR", "mrr", "recip_rank"])
    assert result.mean("RR", "A") == pytest.approx(5 / 12)
    assert result.mean("RR", "B") == pytest.approx(13 / 24)
    assert round(result.mean("RR", "A"), 4) == 0.4167
    assert round(result.mean("RR", "B"), 4) == 0.5417
    # "MRR is the inverse of the harmonic mean of ranks of the first relevant items" (right)
    for system, first in ranks.items():
        harmonic = len(first) / sum(1 / r for r in first)
        assert result.mean("RR", system) == pytest.approx(1 / harmonic)


def test_ndcg_linear_vs_exponential_gain():
    # 002_e6944b62997f94eb.txt: y_true = [10, 0, 0, 1, 5], scores = [0.1, 0.2, 0.3, 4, 70].
    # Ranked by score: grades 5, 1, 0, 0, 10.
    # linear: DCG = 5 + 1/log2(3) + 10/log2(6) = 9.49945, IDCG = 10 + 5/log2(3) + 1/2 = 13.65465,
    #   nDCG = 0.69569 -> 0.6957 (printed, also scikit-learn's value)
    # exp:    DCG = 31 + 1/log2(3) + 1023/log2(6) = 427.37, IDCG = 1023 + 31/log2(3) + 1/2
    #   = 1043.06, nDCG = 0.40974 -> 0.4097 (printed)
    qrels, run = rankwise.from_arrays([10, 0, 0, 1, 5], [0.1, 0.2, 0.3, 4, 70])
    result = rankwise.evaluate(qrels, run, ["nDCG", "nDCG(gain=exp)", "ndcg_burges"])
    lin = (5 + 1 / math.log2(3) + 10 / math.log2(6)) / (10 + 5 / math.log2(3) + 0.5)
    exp = (31 + 1 / math.log2(3) + 1023 / math.log2(6)) / (1023 + 31 / math.log2(3) + 0.5)
    assert result.mean("nDCG") == pytest.approx(lin)
    assert result.mean("nDCG(gain=exp)") == pytest.approx(exp)
    assert round(result.mean("nDCG"), 4) == 0.6957
    assert round(result.mean("nDCG(gain=exp)"), 4) == 0.4097
    # the same through 2-D arrays (scikit-learn's ndcg_score layout)
    qrels2, run2 = rankwise.from_arrays([[10, 0, 0, 1, 5]], [[0.1, 0.2, 0.3, 4, 70]])
    assert rankwise.evaluate(qrels2, run2, ["nDCG"]).mean("nDCG") == pytest.approx(lin)


def test_ndcg_at_different_k_are_different_numbers():
    # 002_e6944b62997f94eb.txt: "NDCG with different Ks are two fundamentally different cases"
    # -- on the same example, nDCG@1 = 5/10, nDCG@2 = (5 + 0.63093) / (10 + 3.15465) = 0.42806,
    # nDCG@5 = 0.69569: not even monotone in K.
    qrels, run = rankwise.from_arrays([10, 0, 0, 1, 5], [0.1, 0.2, 0.3, 4, 70])
    values = single(qrels, run, ["nDCG@1", "nDCG@2", "nDCG@5"])["0"]
    assert values["nDCG@1"] == pytest.approx(0.5)
    assert values["nDCG@2"] == pytest.approx((5 + 1 / math.log2(3)) / (10 + 5 / math.log2(3)))
    assert values["nDCG@2"] < values["nDCG@1"] < values["nDCG@5"]


# ---------------------------------------------------------------------------- 003_5ecd33d7d41a7da0.txt

# A = Nike sneakers, Adidas shorts, Apple Watch; B = Apple Watch, Adidas shorts, Nike sneakers
FEED_A = {"nike": 3.0, "adidas": 2.0, "apple": 1.0}
FEED_B = {"apple": 3.0, "adidas": 2.0, "nike": 1.0}


def feeds(judgments):
    qrels = {"A": judgments, "B": judgments}
    return qrels, {"A": FEED_A, "B": FEED_B}


def test_map_and_mrr_of_feeds_a_and_b():
    # 003_5ecd33d7d41a7da0.txt: purchased (relevant) = Apple watch, Adidas shorts.
    # A: relevant at 2, 3: AP = (1/2 + 2/3) / 2 = 0.58333 -> 0.58 (right); B: (1/1 + 2/2)/2 = 1.
    # MRR: A = 1/2 = 0.5, B = 1/1 = 1 (right).
    qrels, run = feeds({"apple": 1, "adidas": 1, "nike": 0})
    values = single(qrels, run, ["AP", "RR"])
    assert values["A"]["AP"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert round(values["A"]["AP"], 2) == 0.58
    assert values["B"]["AP"] == 1.0
    assert values["A"]["RR"] == 0.5
    assert values["B"]["RR"] == 1.0


def test_set_measures_of_feeds_a_and_b():
    # 003_5ecd33d7d41a7da0.txt: "[Precision@k, Recall@k and R-Precision] ... they're
    # equivalent for both lists". True for P@3 = 2/3 and R@3 = 1. Slip: not for R-precision:
    # R = 2, A's top 2 are Nike, Adidas -> Rprec = 1/2; B's top 2 are Apple, Adidas -> 1.
    qrels, run = feeds({"apple": 1, "adidas": 1, "nike": 0})
    values = single(qrels, run, ["P@3", "R@3", "Rprec", "P@2"])
    assert values["A"]["P@3"] == values["B"]["P@3"] == pytest.approx(2 / 3)
    assert values["A"]["R@3"] == values["B"]["R@3"] == 1.0
    assert values["A"]["Rprec"] == 0.5
    assert values["B"]["Rprec"] == 1.0


def test_binary_ndcg_of_feeds_a_and_b():
    # 003_5ecd33d7d41a7da0.txt, binary relevance, base-10 logs as printed:
    # IDCG = 1/log10(2) + 1/log10(3) = 5.41783 (printed 5.417: truncated; rounded 5.418)
    # DCG(A) = 1/log10(3) + 1/log10(4) = 3.75687 (printed 3.756: truncated; rounded 3.757)
    # nDCG(A) = 0.69343 -> 0.693 (right), nDCG(B) = 1 (right). The log base cancels in the
    # ratio, so rankwise's base-2 nDCG gives the same.
    # Slips: "NDCG@k = NDCG@k / IDCG@k" should read DCG@k / IDCG@k; and "As you can see,
    # Algorithm A has a higher NDCG@k" -- it is B (1.0 > 0.693), as the article's own intro
    # expects (relevant items at the top).
    qrels, run = feeds({"apple": 1, "adidas": 1, "nike": 0})
    values = single(qrels, run, ["nDCG", "DCG(base=10)", "IDCG(base=10)"])
    assert values["A"]["IDCG(base=10)"] == pytest.approx(1 / math.log10(2) + 1 / math.log10(3))
    assert values["A"]["DCG(base=10)"] == pytest.approx(1 / math.log10(3) + 1 / math.log10(4))
    assert values["B"]["DCG(base=10)"] == pytest.approx(values["B"]["IDCG(base=10)"])
    assert math.floor(values["A"]["IDCG(base=10)"] * 1000) / 1000 == 5.417
    assert math.floor(values["A"]["DCG(base=10)"] * 1000) / 1000 == 3.756
    assert round(values["A"]["nDCG"], 3) == 0.693
    assert values["B"]["nDCG"] == 1.0
    assert values["B"]["nDCG"] > values["A"]["nDCG"]


def test_graded_ndcg_of_feeds_a_and_b():
    # 003_5ecd33d7d41a7da0.txt, relevance Apple = 1, Adidas = 5, Nike = 3, linear gain, log10:
    # IDCG = 5/log10(2) + 3/log10(3) + 1/log10(4) = 24.55831 (printed 24.55: truncated)
    # DCG(A) = 3/log10(2) + 5/log10(3) + 1/log10(4) = 22.10626 (printed 22.104: slip in the
    #   third decimal)
    # DCG(B) = 1/log10(2) + 5/log10(3) + 3/log10(4) = 18.78434 (printed 18.78, right)
    # nDCG(A) = 0.90015 -> 0.9 (right); nDCG(B) = 0.76489 -> 0.765. Slip: printed 0.764, the
    # truncation of 0.76489 (even the article's rounded 18.78 / 24.55 = 0.76497 rounds to
    # 0.765).
    qrels, run = feeds({"apple": 1, "adidas": 5, "nike": 3})
    values = single(qrels, run, ["nDCG", "DCG(base=10)", "IDCG(base=10)"])
    idcg = 5 / math.log10(2) + 3 / math.log10(3) + 1 / math.log10(4)
    dcg_a = 3 / math.log10(2) + 5 / math.log10(3) + 1 / math.log10(4)
    dcg_b = 1 / math.log10(2) + 5 / math.log10(3) + 3 / math.log10(4)
    assert values["A"]["IDCG(base=10)"] == pytest.approx(idcg)
    assert values["A"]["DCG(base=10)"] == pytest.approx(dcg_a)
    assert values["B"]["DCG(base=10)"] == pytest.approx(dcg_b)
    assert round(values["A"]["DCG(base=10)"], 3) == 22.106  # not 22.104
    assert round(values["B"]["DCG(base=10)"], 2) == 18.78
    assert values["A"]["nDCG"] == pytest.approx(dcg_a / idcg)
    assert values["B"]["nDCG"] == pytest.approx(dcg_b / idcg)
    assert round(values["A"]["nDCG"], 1) == 0.9
    assert round(values["B"]["nDCG"], 3) == 0.765  # the article prints 0.764


def test_cumulative_gain_of_feeds_ignores_order():
    # 003_5ecd33d7d41a7da0.txt: CG is "the sum of relevant items among top k results ... the
    # numerator of Precision@k and Recall@k and doesn't take into account any ordering"
    qrels, run = feeds({"apple": 1, "adidas": 1, "nike": 0})
    values = single(qrels, run, ["CG@3", "CG@2", "P@2"])
    assert values["A"]["CG@3"] == values["B"]["CG@3"] == 2.0
    assert values["A"]["CG@2"] == values["A"]["P@2"] * 2 == 1.0
    assert values["B"]["CG@2"] == values["B"]["P@2"] * 2 == 2.0


# ---------------------------------------------------------------------------- 004_979c15c855f3ba6e.txt
# This article gives formulas but no worked numbers; the examples below apply its formulas to
# small lists computed by hand.


def test_hit_ratio():
    # 004_979c15c855f3ba6e.txt: HR = |U_hit^L| / |U_all|, the share of users whose correct
    # answer is in the top L. Four users, correct answer at ranks 1, 3, 6 and never:
    # HR@1 = 1/4, HR@5 = 2/4, HR@10 = 3/4 -- and "the larger L is, the higher hit ratio becomes"
    qrels, run = merge(first_relevant_at(1, "u1"), first_relevant_at(3, "u2"),
                       first_relevant_at(6, "u3"), ranking([0, 0], "u4"))
    qrels["u4"]["missing"] = 1
    result = rankwise.evaluate(qrels, run, ["Success@1", "hit_rate@5", "HR@10", "success_10"])
    assert result.mean("Success@1") == 0.25
    assert result.mean("Success@5") == 0.5
    assert result.mean("Success@10") == 0.75


def test_mrr_vs_arhr_sum():
    # 004_979c15c855f3ba6e.txt defines RR(u) = sum_{i <= L} relevance_i / rank_i (the "average
    # reciprocal hit ratio" variant) and then notes the simplification to the first relevant
    # item only. RR in rankwise (and trec_eval) is the latter: relevant at ranks 1 and 3 gives
    # RR = 1, whereas the sum form would give 1 + 1/3 = 1.333 (not even bounded by 1).
    qrels, run = ranking([1, 0, 1])
    assert single(qrels, run, ["RR"])["q"]["RR"] == 1.0


def test_precision_recall_at_k():
    # 004_979c15c855f3ba6e.txt: precision@k = relevant in top k / k; recall@k = relevant in top
    # k / all relevant. List R N R N N with 4 relevant in total (2 never retrieved):
    # P@3 = 2/3, R@3 = 2/4, P@5 = 2/5, R@5 = 2/4, F1@3 = 2 * (2/3)(1/2) / (2/3 + 1/2) = 4/7
    qrels, run = ranking([1, 0, 1, 0, 0])
    qrels["q"].update({"x1": 1, "x2": 1})
    values = single(qrels, run, ["P@3", "R@3", "P@5", "R@5", "F1@3", "SetP", "SetR", "Rprec"])["q"]
    assert values["P@3"] == pytest.approx(2 / 3)
    assert values["R@3"] == 0.5
    assert values["P@5"] == pytest.approx(2 / 5)
    assert values["R@5"] == 0.5
    assert values["F1@3"] == pytest.approx(4 / 7)
    assert values["SetP"] == pytest.approx(2 / 5)  # "precision" over all retrieved
    assert values["SetR"] == 0.5
    assert values["Rprec"] == 0.5  # R = 4: two relevant in the top 4


def test_ap_needs_the_one_over_r_normalisation():
    # 004_979c15c855f3ba6e.txt writes AP = sum_k p(k) rel(k), "the area under the
    # precision-recall curve". Slip: without dividing by the number of relevant items this is
    # not an average and not an area (R N R N R would score 1 + 2/3 + 3/5 = 2.267 > 1). The
    # average over relevant items gives 0.756 (see 001_0d788fe34f578034.txt).
    qrels, run = ranking([1, 0, 1, 0, 1])
    ap = single(qrels, run, ["AP"])["q"]["AP"]
    assert ap == pytest.approx((1 + 2 / 3 + 3 / 5) / 3)
    assert ap <= 1.0


def test_cg_dcg_idcg_ndcg():
    # 004_979c15c855f3ba6e.txt: gain = the relevance score (linear), CG(k) = sum_{i<=k} G_i,
    # DCG(k) = sum G_i / log2(i + 1), IDCG(k) = DCG of the ideal ordering, NDCG = DCG / IDCG.
    # List with grades 3 2 3 0 1 2 (a 0-3 scale):
    #   CG(6)  = 11
    #   DCG(6) = 3 + 2/1.58496 + 3/2 + 0 + 1/2.58496 + 2/2.80735 = 6.86113
    #   ideal 3 3 2 2 1 0: IDCG(6) = 3 + 3/1.58496 + 2/2 + 2/2.32193 + 1/2.58496 = 7.14056
    #   NDCG(6) = 0.96087
    # Slip: "By diving the gain by its rank" -- DCG divides by log2(rank + 1), not by the rank.
    grades = [3, 2, 3, 0, 1, 2]
    qrels, run = ranking(grades)
    values = single(qrels, run, ["CG@6", "DCG@6", "IDCG@6", "nDCG@6", "CG@2", "DCG@2"])["q"]
    disc = [1 / math.log2(i + 2) for i in range(6)]
    dcg = sum(g * d for g, d in zip(grades, disc))
    idcg = sum(g * d for g, d in zip(sorted(grades, reverse=True), disc))
    assert values["CG@6"] == 11
    assert values["DCG@6"] == pytest.approx(dcg)
    assert round(values["DCG@6"], 3) == 6.861
    assert values["IDCG@6"] == pytest.approx(idcg)
    assert round(values["IDCG@6"], 3) == 7.141
    assert values["nDCG@6"] == pytest.approx(dcg / idcg)
    assert round(values["nDCG@6"], 3) == 0.961
    # CG ignores order: swapping the first two items changes DCG but not CG
    swapped = single(*ranking([2, 3, 3, 0, 1, 2]), ["CG@2", "DCG@2"])["q"]
    assert swapped["CG@2"] == values["CG@2"] == 5
    assert swapped["DCG@2"] < values["DCG@2"]


def test_idcg_uses_all_judged_items_not_only_retrieved():
    # 004_979c15c855f3ba6e.txt: IDCG ranks "the items top down according their relevance up to
    # position k". With a highly relevant item that was not retrieved, the ideal includes it
    # (trec_eval): DCG@3 of 2 1 0 with an unretrieved 3 is 2 + 1/log2(3) = 2.63093, IDCG@3 =
    # 3 + 2/log2(3) + 1/2 = 4.76186, nDCG@3 = 0.55250 (not 1).
    qrels, run = ranking([2, 1, 0])
    qrels["q"]["unretrieved"] = 3
    values = single(qrels, run, ["nDCG@3", "IDCG@3"])["q"]
    assert values["IDCG@3"] == pytest.approx(3 + 2 / math.log2(3) + 0.5)
    assert values["nDCG@3"] == pytest.approx((2 + 1 / math.log2(3)) / (3 + 2 / math.log2(3) + 0.5))


def test_measure_names_across_dialects():
    # the articles' names for the same measures, in the three dialects rankwise reads
    assert rankwise.parse_measure("ndcg_cut_10") == rankwise.parse_measure("nDCG@10") \
        == rankwise.parse_measure("ndcg@10")
    assert rankwise.parse_measure("recip_rank") == rankwise.parse_measure("RR") \
        == rankwise.parse_measure("mrr")
    assert rankwise.parse_measure("map") == rankwise.parse_measure("AP")
    assert rankwise.parse_measure("hit_rate@10") == rankwise.parse_measure("Success@10") \
        == rankwise.parse_measure("success_10")
    assert rankwise.parse_measure("r-precision") == rankwise.parse_measure("Rprec")
    assert rankwise.parse_measure("ndcg_burges@10") == rankwise.parse_measure("nDCG(gain=exp)@10")
