"""Edge inputs of rankwise.recsys.evaluate, each against a hand computation or against
rankwise.evaluate on the same lists: which users the per-user table holds, the checks a
result keeps, rating errors on lists without predicted ratings and what they leave out
(counted), ratings at the user's mean, measures that read relevance for users without test
data, items without features, and empty inputs."""

from __future__ import annotations

import math

import pytest

import rankwise
import rankwise.recsys as rs
from rankwise.errors import MeasureError

LISTS = {"u": ["a", "b"], "w": ["a", "c"], "x": []}
TEST = {"u": {"a": 5, "b": 1}, "v": {"b": 4}}  # w and x: a list, no test data; v: no list
TRAIN = {"u": ["c"], "w": ["b"], "z": ["a", "c"]}


@pytest.mark.parametrize("extra", [[], ["Coverage@2"], ["Gini@2", "Entropy@2"]])
def test_a_global_measure_adds_no_user_to_the_per_user_table(extra):
    result = rs.evaluate(LISTS, TEST, ["P@2", *extra])
    assert list(result.per_user()) == ["u"]
    assert list(result.to_frame()["query"]) == ["u"]


def test_a_per_user_measure_adds_every_user_with_a_list():
    result = rs.evaluate(LISTS, TEST, ["P@2", "ARP@2"], train=TRAIN)
    assert sorted(result.per_user()) == ["u", "w", "x"]
    assert math.isnan(result.per_user()["w"]["P@2"])  # a list, no test data: not evaluated
    assert result.not_evaluated == {"recs": ["w", "x"]}
    again = rs.RecsysResult.from_json(result.to_json())
    assert again.not_evaluated == result.not_evaluated


@pytest.mark.parametrize("extra", [[], ["ARP@2"], ["Coverage@2"]])
def test_accuracy_result_keeps_the_users_rankwise_evaluate_keeps(extra):
    """A user evaluated with NaN values (no_relevant="nan": w has no relevant item) stays, as
    in rankwise.evaluate's per_query; a user the accuracy measures did not evaluate goes."""
    test = {"u": {"a": 5}, "w": {"a": 1}}
    result = rs.evaluate(LISTS, test, ["P@2", *extra], train=TRAIN, no_relevant="nan")
    core = rankwise.evaluate({u: {i: int(r >= 4) for i, r in v.items()} for u, v in test.items()},
                             {u: {i: len(v) - r for r, i in enumerate(v)} for u, v in LISTS.items()},
                             ["P@2"], no_relevant="nan", per_query=True)
    accuracy = result.accuracy_result()
    assert list(accuracy.per_query()) == list(core.per_query()) == ["u", "w"]
    assert math.isnan(accuracy.per_query()["w"]["P@2"])
    assert accuracy.to_trec(per_query=True).splitlines()[:2] == \
        core.to_trec(per_query=True).splitlines()[:2]


@pytest.mark.parametrize("extra", [[], ["Coverage@5"], ["ARP@5"]])
def test_the_diagnostic_checks_are_kept_with_beyond_accuracy_measures(extra):
    result = rs.evaluate(LISTS, TEST, ["P@5", *extra], train=TRAIN)
    checks = result.systems["recs"].checks
    assert {c["code"] for c in checks} >= {"short_lists", "ties_at_cutoff", "no_relevant"}
    assert result.accuracy_result().systems["recs"].checks == checks
    assert '"short_lists"' in result.to_json()


@pytest.mark.parametrize("form", ["lists", "array", "rank", "order"])
@pytest.mark.parametrize("measure", ["MAE", "RMSE", "GMAE", "GRMSE"])
def test_rating_errors_need_predicted_ratings(form, measure):
    """Lists that give only an order have no predicted rating to compare: their scores
    (length − position, or −rank) would give MAE 2.0 for ratings 4 and 3 of [a, b]."""
    import numpy as np
    import pandas as pd

    frame = pd.DataFrame({"user": ["0", "0"], "item": ["1", "2"], "rank": [1, 2]})
    recs, options = {"lists": ({"0": ["1", "2"]}, {}), "array": (np.array([[1, 2]]), {}),
                     "rank": (frame, {"rank": "rank"}),
                     "order": (frame.drop(columns="rank"), {})}[form]
    with pytest.raises(MeasureError, match="needs predicted ratings.*score="):
        rs.evaluate(recs, {"0": {"1": 4, "2": 3}}, [measure], **options)
    scored = rs.evaluate({"0": {"1": 4.5, "2": 2.0}}, {"0": {"1": 4, "2": 3}}, [measure])
    assert scored.mean(measure) == pytest.approx(
        0.75 if "MAE" in measure else math.sqrt((0.25 + 1) / 2))


@pytest.mark.parametrize("rating", [0.1, 0.2, 0.8, 3.7, 4.1])
def test_equal_ratings_are_at_the_users_mean_not_above_it(rating):
    """Six (or seven) equal ratings: none is above the user's mean (relevance="centered":
    nothing relevant, as by hand), and the mean imputed is the rating itself, relevant
    under threshold=rating as the user's own ratings are. Summed in floating point, six
    ratings of 0.2 have the mean 0.19999999999999998, which 0.2 is above."""
    items = [f"i{j}" for j in range(7)]
    test = {"u": {i: rating for i in items[:6]}}
    centered = rs.evaluate({"u": items}, test, ["P@6", "nDCG@6"], relevance="centered")
    assert centered.per_user()["u"] == {"P@6": 0.0, "nDCG@6": 0.0}
    for impute in ("user_mean", "user_median"):
        imputed = rs.evaluate({"u": ["new", *items]}, test, ["P@1"], threshold=rating,
                              impute=impute)
        assert imputed.mean("P@1") == 1.0 and imputed.inputs["recs"]["imputed_ratings"] == 2


@pytest.mark.parametrize("measure", ["Serendipity(n=1)@2", "UnexpRel@2"])
def test_measures_reading_relevance_leave_out_users_without_test_data(measure):
    """w has a list and a training history but no test data: like P@2, the measure has no
    value for it (it scored 0 and halved the mean) unless run_only_queries="zero"."""
    recs = {"u": ["a", "b"], "w": ["a", "c"]}
    train = {"u": ["c"], "w": ["b"], "y": ["a"], "z": ["a", "c"]}
    result = rs.evaluate(recs, {"u": ["b"]}, ["P@2", measure], train=train)
    u = result.per_user()["u"][measure]
    assert u > 0 and math.isnan(result.per_user()["w"][measure])
    assert result.mean(measure) == u and result.systems["recs"].undefined[measure] == 1
    zero = rs.evaluate(recs, {"u": ["b"]}, ["P@2", measure], train=train,
                       run_only_queries="zero")
    assert zero.per_user()["w"] == {"P@2": 0.0, measure: 0.0}
    assert zero.mean(measure) == u / 2


def test_rating_errors_count_the_predictions_and_ratings_left_out():
    """u's prediction for d has no rating, nor w's for a (no test data); u's rating of c
    and v's of a have no prediction: MAE compares the two pairs it has, and says so."""
    recs = {"u": {"a": 4.5, "b": 2.0, "d": 3.0}, "w": {"a": 3.0}}
    test = {"u": {"a": 4.3, "b": 1.2, "c": 5.0}, "v": {"a": 1.0}}
    result = rs.evaluate(recs, test, ["MAE", "GRMSE"])
    assert result.mean("MAE") == pytest.approx((0.2 + 0.8) / 2)
    counts = result.inputs["recs"]
    assert counts["predictions_without_rating"] == 2 and counts["ratings_without_prediction"] == 2
    assert "predictions_without_rating" not in rs.evaluate(recs, test, ["P@2"]).inputs["recs"]


def test_recommended_items_without_features_are_counted():
    result = rs.evaluate({"u": ["a", "b", "d"], "w": ["d", "e"]}, {"u": ["a"]}, ["ILD@3"],
                         item_features={"a": [1.0, 0.0], "b": [0.0, 1.0]})
    assert result.inputs["recs"]["recommended_without_features"] == 3  # d twice, e
    assert result.per_user()["w"]["ILD@3"] == 1.0  # no features: similarity 0


@pytest.mark.parametrize("unjudged", ["nonrelevant", "remove"])  # fast path, engine
@pytest.mark.parametrize("recs, test, message", [
    ({}, {"u": ["a"]}, "recommendations dict: nothing ranked: the run holds no rows"),
    ({"u": ["a"]}, {}, "test dict: no judgments: the judgments hold no rows"),
    ({"u": ["a"]}, {"u": []}, "test dict: no judgments: the judgments hold no rows"),
    ("empty", "empty", "test DataFrame: no judgments: the judgments hold no rows"),
    ({"u": ["a"]}, "empty", "test DataFrame: no judgments: the judgments hold no rows"),
])
def test_an_empty_input_is_named_as_rankwise_evaluate_names_it(recs, test, message, unjudged):
    """Not 'no user in common ... (users with a list such as [] ...)', nor, for a frame
    without rows (pandas makes its columns float64), 'user ids must be strings or integers'."""
    import pandas as pd

    empty = pd.DataFrame({"user": [], "item": [], "score": []})
    recs, test = (empty if recs == "empty" else recs), (empty if test == "empty" else test)
    with pytest.raises(rankwise.InputError) as caught:
        rs.evaluate(recs, test, ["P@2"], unjudged=unjudged)
    assert str(caught.value) == message


@pytest.mark.parametrize("train", [{}, {"u": []}, "frame"])
def test_empty_training_data_is_refused(train):
    """Its popularity and catalogue would be empty: Coverage@2 was 2.0 (two items over a
    catalogue of none, counted as one)."""
    import pandas as pd

    train = pd.DataFrame({"user": [], "item": []}) if train == "frame" else train
    with pytest.raises(rankwise.InputError, match="no training interactions"):
        rs.evaluate({"u": ["a", "b"]}, {"u": ["a"]}, ["Coverage@2"], train=train)


def test_an_empty_catalogue_is_refused():
    with pytest.raises(rankwise.InputError, match="it names none"):
        rs.evaluate({"u": ["a", "b"]}, {"u": ["a"]}, ["Coverage@2"], catalog=[])
