"""The seed articles' worked examples that concern recommender evaluation, recomputed through
``rankwise.recsys.evaluate`` with recommender inputs (top-K lists, rating frames).

Articles: ``000_79ae75b38ba14a92.txt`` (MRR vs MAP vs NDCG: ratings >= 4 relevant, MAE and
RMSE, IDCG = 0, missing ratings imputed with the user's mean or median, lists shorter than K),
``003_5ecd33d7d41a7da0.txt`` (evaluating recommendation systems: mAP, MRR, NDCG with
purchases as gains) and ``004_979c15c855f3ba6e.txt`` (HR, RR(u) as a relevance-weighted sum
of reciprocal ranks, AP, NDCG). Slips in the articles are corrected in comments: the formulas
are trusted, not the printed arithmetic.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

import rankwise.recsys as rs

A = ["nike_sneakers", "adidas_shorts", "apple_watch"]
B = ["apple_watch", "adidas_shorts", "nike_sneakers"]


def users_ab():
    """The article's two feeds as two "users" with the same purchases (one system each)."""
    return {"A": {"user": A}, "B": {"user": B}}


# ---------------------------------------------------------------------------- 003


def test_003_map_mrr_ndcg_binary():
    # purchased: Apple watch and Adidas shorts
    test = {"user": ["apple_watch", "adidas_shorts"]}
    result = rs.evaluate(users_ab(), test, ["AP", "RR", "nDCG@3", "DCG@3", "IDCG@3"],
                         discount_base=10)
    # A: relevant at ranks 2 and 3: (1/2 + 2/3) / 2 = 0.5833 (printed 0.58); B: (1 + 1) / 2 = 1
    assert result.mean("AP", "A") == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert result.mean("AP", "B") == 1.0
    assert (result.mean("RR", "A"), result.mean("RR", "B")) == (0.5, 1.0)
    # the article's log is base 10: IDCG = 1/log(2) + 1/log(3) = 5.4178 (printed 5.417),
    # DCG_A = 1/log(3) + 1/log(4) = 3.7569 (printed 3.756), NDCG_A = 0.6934 (printed 0.693)
    assert result.mean("IDCG@3", "A") == pytest.approx(1 / math.log10(2) + 1 / math.log10(3))
    assert result.mean("DCG@3", "A") == pytest.approx(1 / math.log10(3) + 1 / math.log10(4))
    assert round(result.mean("nDCG@3", "A"), 3) == 0.693
    assert result.mean("nDCG@3", "B") == 1.0
    # NDCG is base-invariant: the same with log2
    assert rs.evaluate(users_ab(), test, ["nDCG@3"]).mean("nDCG@3", "A") == pytest.approx(
        result.mean("nDCG@3", "A"))


def test_003_ndcg_with_purchase_counts_as_gain():
    # "1x Apple watch, 5x Adidas shorts and 3x Nike sneakers": the counts are the gains
    test = {"user": {"apple_watch": 1, "adidas_shorts": 5, "nike_sneakers": 3}}
    result = rs.evaluate(users_ab(), test, ["nDCG@3", "DCG@3", "IDCG@3"], relevance="graded",
                         threshold=1, discount_base=10)
    l2, l3, l4 = math.log10(2), math.log10(3), math.log10(4)
    # IDCG = 5/log 2 + 3/log 3 + 1/log 4 = 24.558 (printed 24.55)
    assert result.mean("IDCG@3", "A") == pytest.approx(5 / l2 + 3 / l3 + 1 / l4)
    # slip: the article writes DCG_A = 3/log 2 + 5/log 3 + 1/log 4 = 22.104; it is 22.106
    assert result.mean("DCG@3", "A") == pytest.approx(3 / l2 + 5 / l3 + 1 / l4)
    assert round(result.mean("DCG@3", "A"), 3) == 22.106
    assert round(result.mean("nDCG@3", "A"), 2) == 0.90
    # slip: NDCG_B = 18.784 / 24.558 = 0.76488, printed 0.764; rounded it is 0.765
    assert result.mean("nDCG@3", "B") == pytest.approx((1 / l2 + 5 / l3 + 3 / l4)
                                                       / (5 / l2 + 3 / l3 + 1 / l4))
    assert round(result.mean("nDCG@3", "B"), 3) == 0.765


# ---------------------------------------------------------------------------- 004


def test_004_hit_ratio_is_the_share_of_users_with_a_hit():
    # HR = |U_hit^L| / |U_all|: two of three users have their held-out item in the top 2
    recs = {"u1": ["a", "b", "c"], "u2": ["c", "a", "b"], "u3": ["b", "c", "a"]}
    test = {"u1": ["b"], "u2": ["b"], "u3": ["b"]}
    result = rs.evaluate(recs, test, ["HR@2", "HR@3", "RR@3", "ARHR@3"])
    assert result.mean("HR@2") == pytest.approx(2 / 3)
    assert result.mean("HR@3") == 1.0  # "the larger L is, the higher hit ratio becomes"
    # leave-one-out (one held-out item per user): ARHR, the sum over hits, equals RR
    assert result.mean("ARHR@3") == result.mean("RR@3") == pytest.approx((1 / 2 + 1 / 3 + 1) / 3)


def test_004_rr_u_as_a_relevance_weighted_sum():
    # RR(u) = Σ_{i <= L} relevance_i / rank_i: relevances 3 (rank 1), 0, 2 (rank 3), 1 (rank 4)
    recs = {"u": ["a", "b", "c", "d"]}
    test = {"u": {"a": 3, "c": 2, "d": 1}}
    result = rs.evaluate(recs, test, ["RWRR@4", "RWRR@3", "RR"], relevance="graded",
                         threshold=1)
    assert result.mean("RWRR@4") == pytest.approx(3 / 1 + 2 / 3 + 1 / 4)
    assert result.mean("RWRR@3") == pytest.approx(3 + 2 / 3)
    # "for implicit data the relevance is 0 or 1": then it sums 1/rank over the hits
    binary = rs.evaluate(recs, {"u": ["a", "c", "d"]}, ["RWRR@4", "ARHR@4"])
    assert binary.mean("RWRR@4") == binary.mean("ARHR@4") == pytest.approx(1 + 1 / 3 + 1 / 4)
    # "only look at one top relevant item": the first hit alone is RR
    assert result.mean("RR") == 1.0


def test_004_ap_is_normalised_by_the_relevant_items():
    # slip: the article's AP = Σ_k p(k) rel(k) omits the normalisation its own text describes
    # ("average value of p(r) over the interval from 0 to 1"); with R = 3 relevant items at
    # ranks 1, 3 and 5: (1 + 2/3 + 3/5) / 3
    recs = {"u": ["a", "b", "c", "d", "e"]}
    result = rs.evaluate(recs, {"u": ["a", "c", "e"]}, ["AP"])
    assert result.mean("AP") == pytest.approx((1 + 2 / 3 + 3 / 5) / 3)


# ---------------------------------------------------------------------------- 000


def test_000_ratings_of_4_or_more_are_relevant():
    # "One option [is] to consider only ratings bigger than 4 as relevant" (>= 4 in the issue)
    recs = {"u": ["a", "b", "c", "d"]}
    test = {"u": {"a": 5.0, "b": 3.0, "c": 4.0, "d": 1.0}}
    result = rs.evaluate(recs, test, ["AP", "P@4", "nDCG@4"], relevance="threshold",
                         threshold=4)
    assert result.mean("P@4") == 0.5
    assert result.mean("AP") == pytest.approx((1 + 2 / 3) / 2)
    # graded: "Is a 1 star rating really the same as a 3 stars rating?" No: gains 5, 3, 4, 1
    graded = rs.evaluate(recs, test, ["nDCG@4"], relevance="graded", threshold=4)
    dcg = 5 + 3 / math.log2(3) + 4 / 2 + 1 / math.log2(5)
    ideal = 5 + 4 / math.log2(3) + 3 / 2 + 1 / math.log2(5)
    assert graded.mean("nDCG@4") == pytest.approx(dcg / ideal)


def test_000_mae_rmse_per_user_and_global():
    # "If a user rated an item with 4.5 ... if we predicted a rating of 1.2 or 4.3"
    predictions = pd.DataFrame({"user": ["u1", "u2", "u3", "u3"], "item": ["x", "x", "a", "b"],
                                "score": [1.2, 4.3, 1.2, 4.3]})
    test = {"u1": {"x": 4.5}, "u2": {"x": 4.5}, "u3": {"a": 4.5, "b": 4.5}}
    result = rs.evaluate(predictions, test, ["MAE", "RMSE", "GMAE", "GRMSE"])
    per_user = result.per_user()
    assert per_user["u1"]["MAE"] == pytest.approx(3.3)
    assert per_user["u2"]["MAE"] == pytest.approx(0.2)
    assert per_user["u3"]["MAE"] == pytest.approx(1.75)  # (3.3 + 0.2) / 2
    assert per_user["u3"]["RMSE"] == pytest.approx(math.sqrt((3.3 ** 2 + 0.2 ** 2) / 2))
    # global: every rating pooled, (3.3 + 0.2 + 3.3 + 0.2) / 4 = 1.75; per user then mean:
    # (3.3 + 0.2 + 1.75) / 3 = 1.75 as well here, but RMSE differs
    assert result.mean("GMAE") == pytest.approx(1.75)
    assert result.mean("GRMSE") == pytest.approx(math.sqrt(5.465))
    assert result.mean("RMSE") == pytest.approx((3.3 + 0.2 + math.sqrt(5.465)) / 3)


def test_000_idcg_zero_gives_ndcg_zero():
    # "the IDCG is equal to zero. This occurs when users have no relevant documents. A
    # strategy here is to set the NDCG to 0 as well." u2 rated everything below 4
    recs = {"u1": ["a", "b"], "u2": ["a", "b"]}
    test = {"u1": {"a": 5.0}, "u2": {"a": 2.0, "b": 3.0}}
    result = rs.evaluate(recs, test, ["nDCG@2"])
    assert result.per_user()["u2"]["nDCG@2"] == 0.0
    assert result.mean("nDCG@2") == 0.5
    # or leave such users out of the mean (conventions idcg_zero="skip")
    skipped = rs.evaluate(recs, test, ["nDCG@2"], idcg_zero="skip")
    assert skipped.mean("nDCG@2") == 1.0


def test_000_missing_ratings_imputed_with_the_user_mean_or_median():
    # "Setting the missing values to 0 would mark them as irrelevant items. Other calculated
    # value such as the mean/median rating for a user can also help." The user rated a: 5,
    # b: 4, c: 1 (mean 10/3, median 4); the list recommends a, x, b, y (x and y unrated)
    recs = {"u": ["a", "x", "b", "y"]}
    test = {"u": {"a": 5.0, "b": 4.0, "c": 1.0}}
    plain = rs.evaluate(recs, test, ["P@4", "nDCG@4"], relevance="graded", threshold=4)
    assert plain.mean("P@4") == 0.5  # x and y unjudged: not relevant
    mean = rs.evaluate(recs, test, ["P@4", "nDCG@4"], relevance="graded", threshold=4,
                       impute="user_mean")
    assert mean.inputs["recs"]["imputed_ratings"] == 2
    assert mean.mean("P@4") == 0.5  # 10/3 < 4: imputed, still not relevant
    # graded gains: a 5, x 10/3, b 4, y 10/3; ideal over all judgments 5, 4, 10/3, 10/3, 1
    m = 10 / 3
    dcg = 5 + m / math.log2(3) + 4 / 2 + m / math.log2(5)
    ideal = 5 + 4 / math.log2(3) + m / 2 + m / math.log2(5)
    assert mean.mean("nDCG@4") == pytest.approx(dcg / ideal)
    median = rs.evaluate(recs, test, ["P@4"], relevance="graded", threshold=4,
                         impute="user_median")
    assert median.mean("P@4") == 1.0  # the median 4 makes x and y relevant
    assert rs.evaluate(recs, test, ["P@4"], impute="user_median").mean("P@4") == 1.0


def test_000_short_lists_padding_changes_nothing():
    # "pad the smaller sets with minimum scores": padding a list with items that gain nothing
    test = {"u": {"a": 5.0, "b": 4.0, "c": 4.0}}
    short = rs.evaluate({"u": ["a", "z"]}, test, ["nDCG@5", "P@5"])
    padded = rs.evaluate({"u": ["a", "z", "p1", "p2", "p3"]}, test, ["nDCG@5", "P@5"])
    assert short.mean("nDCG@5") == padded.mean("nDCG@5")
    assert short.mean("P@5") == padded.mean("P@5") == 0.2
    # a 2-D array padded with -1: the padding is dropped, counted, and changes nothing
    import numpy as np

    array = rs.evaluate(np.array([[10, 99, -1, -1, -1]]), {0: [10, 11, 12]}, ["nDCG@5"],
                        pad=-1)
    assert array.inputs["recs"]["padding_dropped"] == 3
    assert array.mean("nDCG@5") == pytest.approx(1 / (1 + 1 / math.log2(3) + 1 / 2))
