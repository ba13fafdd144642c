"""Recommender inputs: every accepted form gives the same numbers, the relevance and
imputation policies, training-item exclusion (counted), bad input, and the fast path of
rankwise.recsys.engine against the engine's own ranking pass (the in-memory engine)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankwise
import rankwise.recsys as rs
from rankwise import Conventions, InputError
from rankwise.api import _summarise
from rankwise.measures import parse_measures
from rankwise.recsys import engine, inputs

ACCURACY = ["HR@3", "P@3", "R@5", "F1@3", "RR", "AP@5", "nDCG@5", "nDCG", "RWRR@5", "ARHR@3",
            "Rprec", "Bpref"]
LISTS = {"u1": [3, 1, 2, 7], "u2": [5, 4, 1, 0], "u3": [2, 6, 3, 1]}
TEST = pd.DataFrame({"user": ["u1", "u1", "u2", "u3", "u3", "u4"],
                     "item": [1, 7, 9, 6, 3, 2], "rating": [5.0, 2.0, 4.0, 4.0, 3.0, 5.0]})


def lists_frame() -> pd.DataFrame:
    rows = [(u, i, float(10 - r)) for u, items in LISTS.items() for r, i in enumerate(items)]
    return pd.DataFrame(rows, columns=["user", "item", "score"]).sample(frac=1.0, random_state=3)


def reference() -> dict:
    return rs.evaluate(LISTS, TEST, ACCURACY).per_user()


@pytest.mark.parametrize("form", ["frame", "rank", "order", "polars", "arrow", "nested", "array",
                                  "run", "strings"])
def test_every_input_form_gives_the_same_values(form):
    frame = lists_frame()
    if form == "frame":
        recs = frame
    elif form == "rank":
        recs = frame.assign(pos=11 - frame["score"]).drop(columns="score")
        got = rs.evaluate(recs, TEST, ACCURACY, rank="pos").per_user()
        assert got == reference()
        return
    elif form == "order":
        recs = frame.sort_values("score", ascending=False).drop(columns="score")
        got = rs.evaluate(recs, TEST, ACCURACY, score=None).per_user()
        assert got == reference()
        return
    elif form == "polars":
        recs = pl.from_pandas(frame)
    elif form == "arrow":
        recs = pa.Table.from_pandas(frame, preserve_index=False)
    elif form == "nested":
        recs = {u: {i: float(10 - r) for r, i in enumerate(items)} for u, items in LISTS.items()}
    elif form == "array":
        recs = np.array(list(LISTS.values()))
        got = rs.evaluate(recs, TEST, ACCURACY, users=list(LISTS)).per_user()
        assert got == reference()
        return
    elif form == "run":
        recs = rankwise.to_run(frame.astype({"item": str}), query="user", doc="item")
    else:  # string item ids in the test data, integer ids in the lists
        got = rs.evaluate(lists_frame(), TEST.astype({"item": str}), ACCURACY).per_user()
        assert got == reference()
        return
    assert rs.evaluate(recs, TEST, ACCURACY).per_user() == reference()


def test_users_with_only_a_list_or_only_test_data_are_counted():
    result = rs.evaluate(LISTS, TEST[TEST.user != "u2"], ["P@3", "Coverage@3"])
    d = result.diagnostics["recs"]
    assert d["queries_only_in_run"] == 1 and d["queries_only_in_qrels"] == 1  # u2, u4
    per_user = result.per_user()
    assert math.isnan(per_user["u2"]["P@3"])  # a list, no test data: no accuracy value
    assert "u4" not in per_user  # ignored, as trec_eval (missing_queries="ignore")
    zero = rs.evaluate(LISTS, TEST[TEST.user != "u2"], ["P@3"], missing_queries="zero")
    assert zero.per_user()["u4"]["P@3"] == 0.0


def test_relevance_policies():
    recs = {"u": ["a", "b", "c"]}
    test = {"u": {"a": 2.0, "b": 5.0, "c": 4.0}}  # mean 11/3
    threshold = rs.evaluate(recs, test, ["P@3", "nDCG@3"], threshold=4)
    assert threshold.mean("P@3") == pytest.approx(2 / 3)
    graded = rs.evaluate(recs, test, ["P@3", "DCG@3"], relevance="graded", threshold=5)
    assert graded.mean("P@3") == pytest.approx(1 / 3)  # only b reaches 5
    assert graded.mean("DCG@3") == pytest.approx(2 + 5 / math.log2(3) + 4 / 2)
    centered = rs.evaluate(recs, test, ["P@3", "DCG@3"], relevance="centered")
    assert centered.mean("P@3") == pytest.approx(2 / 3)  # b and c are above the mean
    assert centered.mean("DCG@3") == pytest.approx((5 - 11 / 3) / math.log2(3) + (4 - 11 / 3) / 2)
    implicit = rs.evaluate(recs, {"u": ["a", "c"]}, ["P@3"])  # no ratings: all relevant
    assert implicit.mean("P@3") == pytest.approx(2 / 3)


def test_training_items_excluded_or_reported():
    train = pd.DataFrame({"user": ["u1", "u1", "u2"], "item": [3, 2, 5]})
    kept = rs.evaluate(LISTS, TEST, ["RR", "P@3"], train=train)
    assert kept.inputs["recs"]["recommended_seen_in_training"] == 3
    assert kept.inputs["recs"]["training_items_excluded"] == 0
    assert "exclude_train=True" in kept.recsys_warnings["recs"][0]
    dropped = rs.evaluate(LISTS, TEST, ["RR", "P@3"], train=train, exclude_train=True)
    assert dropped.inputs["recs"]["training_items_excluded"] == 3
    assert dropped.inputs["recs"]["users_recommended_seen_items"] == 2
    # u1's list [3, 1, 2, 7] becomes [1, 7]: item 1 (rated 5) moves to rank 1
    assert dropped.per_user()["u1"]["RR"] == 1.0
    assert kept.per_user()["u1"]["RR"] == 0.5
    assert "recs" not in dropped.recsys_warnings


def test_ties_follow_the_conventions_in_accuracy_and_beyond_measures():
    recs = pd.DataFrame({"user": ["u"] * 3, "item": ["a", "b", "c"], "score": [1.0, 1.0, 1.0]})
    test = {"u": ["a"]}
    train = pd.DataFrame({"user": ["v", "v"], "item": ["c", "c"]})
    desc = rs.evaluate(recs, test, ["RR", "ARP@1"], train=train)
    assert desc.per_user()["u"]["RR"] == 1 / 3  # trec_eval: c, b, a
    assert desc.per_user()["u"]["ARP@1"] == 2.0  # the same order: c first
    asc = rs.evaluate(recs, test, ["RR", "ARP@1"], train=train, ties="docid_asc")
    assert asc.per_user()["u"]["RR"] == 1.0 and asc.per_user()["u"]["ARP@1"] == 0.0
    expected = rs.evaluate(recs, test, ["RR"], ties="expected")
    assert expected.mean("RR") == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)


def test_result_round_trips_and_tables():
    train = pd.DataFrame({"user": ["u9"] * 8 + ["u8"], "item": list(range(8)) + [1]})
    result = rs.evaluate({"a": LISTS, "b": {u: v[::-1] for u, v in LISTS.items()}}, TEST,
                         ["nDCG@3", "Novelty@3", "Coverage@3"], train=train)
    again = rs.RecsysResult.from_json(result.to_json())
    assert again.to_json() == result.to_json()
    assert again.mean("Coverage@3", "a") == result.mean("Coverage@3", "a")
    frame = result.to_frame()
    assert list(frame.columns) == ["system", "query", "nDCG@3", "Novelty@3", "Coverage@3"]
    assert "Recommender settings" in result.to_markdown()
    assert result.accuracy_result().measures == ["nDCG@3"]
    assert "ndcg_cut_3" in result.to_trec()
    tests = result.compare_beyond(["Novelty@3"], test="t")
    assert tests[0]["users"] == 3 and tests[0]["system"] == "a"


def test_bad_input_speaks_the_users_language():
    with pytest.raises(InputError, match="no item column 'item_id'"):
        rs.evaluate(lists_frame(), TEST, ["P@3"], item="item_id")
    twice = pd.concat([TEST, TEST.assign(rating=1.0).iloc[:1]])
    with pytest.raises(InputError, match="rated twice with different ratings"):
        rs.evaluate(LISTS, twice, ["P@3"])
    with pytest.raises(InputError, match="needs the training interactions"):
        rs.evaluate(LISTS, TEST, ["Novelty@3"])
    with pytest.raises(InputError, match="exclude_train needs"):
        rs.evaluate(LISTS, TEST, ["P@3"], exclude_train=True)
    with pytest.raises(InputError, match="needs ratings"):
        rs.evaluate(LISTS, {"u1": [1]}, ["P@3"], impute="user_mean")
    with pytest.raises(InputError, match="item features"):
        rs.evaluate(LISTS, TEST, ["ILD@3"])
    with pytest.raises(InputError, match="relevance must be one of"):
        rs.evaluate(LISTS, TEST, ["P@3"], relevance="stars")
    with pytest.raises(InputError, match="ILD has no parameter 'kind'"):
        rs.evaluate(LISTS, TEST, ["ILD(kind=x)@3"])
    with pytest.raises(InputError, match="a user has two recommendation lists"):
        rs.evaluate(np.array([[1, 2], [3, 4]]), TEST, ["P@1"], users=["u1", "u1"])
    with pytest.raises(InputError, match="appears twice"):  # the engine's duplicates rule
        rs.evaluate({"u1": [1, 1, 2]}, TEST, ["P@3"])
    ok = rs.evaluate({"u1": [1, 1, 2]}, TEST, ["P@3"], duplicates="first")
    assert ok.diagnostics["recs"]["run_duplicates_dropped"] == 1
    duplicates = pd.concat([TEST, TEST.iloc[:2]])
    assert rs.evaluate(LISTS, duplicates, ["P@3"]).inputs["recs"]["test_duplicates_dropped"] == 2


# ---------------------------------------------------------------------------- fast path


@st.composite
def collections(draw):
    n_users = draw(st.integers(1, 6))
    n_items = draw(st.integers(2, 12))
    recs, test = {}, []
    for u in range(n_users):
        if draw(st.booleans()) or u == 0:
            k = draw(st.integers(1, n_items))
            items = draw(st.permutations(range(n_items)))[:k]
            scores = draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, 4.0]), min_size=k,
                                   max_size=k))
            recs[f"u{u}"] = dict(zip((f"i{i}" for i in items), scores))
        for i in draw(st.sets(st.integers(0, n_items + 2), max_size=5)):
            test.append((f"u{u}", f"i{i}", float(draw(st.integers(1, 5)))))
    if not test:
        test.append(("u0", "i0", 5.0))
    return recs, pd.DataFrame(test, columns=["user", "item", "rating"])


CONVENTIONS = st.builds(
    Conventions, ties=st.sampled_from(["docid_desc", "docid_asc", "input_order", "expected"]),
    missing_queries=st.sampled_from(["ignore", "zero"]), max_depth=st.sampled_from([None, 2]),
    ap_denominator=st.sampled_from(["relevant", "min_relevant_cutoff"]),
    short_lists=st.sampled_from(["cutoff", "length"]), ideal=st.sampled_from(["judgments",
                                                                              "retrieved"]),
    score_precision=st.sampled_from(["float64", "float32"]),
    nonpositive_scores=st.sampled_from(["ranked", "nonrelevant"]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections(), CONVENTIONS, st.sampled_from(inputs.RELEVANCE_POLICIES),
       st.sampled_from(inputs.IMPUTATION_POLICIES))
def test_fast_path_equals_the_engine(data, conv, relevance, impute):
    """The ranked lists built from integer codes give exactly what the engine's own ranking
    pass gives from the same lists written out as a Run and Qrels."""
    recs, test = data
    raw = inputs.read_recommendations(recs)
    prep = inputs.prepare(raw, inputs.read_interactions(test, "test"), relevance=relevance,
                          threshold=4, impute=impute, conventions=conv)
    conv = conv.with_options(relevance_threshold=prep.relevance_threshold)
    measures = parse_measures(ACCURACY)
    try:
        slow = _summarise("x", engine.ranked_lists(prep, conv, force_engine=True), measures, True)
    except InputError:  # no user in common: both refuse
        with pytest.raises(InputError, match="no user in common"):
            engine.ranked_lists(prep, conv)
        return
    fast = _summarise("x", engine.ranked_lists(prep, conv), measures, True)
    assert list(fast.query_ids) == list(slow.query_ids)
    for m in fast.values:
        assert np.allclose(fast.values[m], slow.values[m], rtol=1e-12, atol=1e-12,
                           equal_nan=True), m
    for key in ("queries_evaluated", "queries_only_in_run", "queries_only_in_qrels",
                "rows_evaluated", "unjudged_retrieved", "queries_without_relevant"):
        assert fast.diagnostics[key] == slow.diagnostics[key], key


def test_fast_path_is_taken_and_the_engine_when_needed():
    raw = inputs.read_recommendations(LISTS)
    prep = inputs.prepare(raw, inputs.read_interactions(TEST, "test"))
    assert not engine.needs_engine(prep, Conventions())
    assert engine.needs_engine(prep, Conventions(unjudged="remove"))


def test_integer_user_and_item_ids_in_frames_and_arrays():
    recs = np.array([[3, 1, 2], [5, 4, 1]])
    test = pd.DataFrame({"user": [0, 1, 1, 7], "item": [1, 4, 9, 3]})
    result = rs.evaluate(recs, test, ["RR", "P@3"])
    assert result.per_user()["0"]["RR"] == 0.5 and result.per_user()["1"]["RR"] == 0.5
    assert result.diagnostics["recs"]["queries_only_in_qrels"] == 1  # user 7
    same = rs.evaluate({"0": ["3", "1", "2"], "1": ["5", "4", "1"]},
                       test.astype(str), ["RR", "P@3"])
    assert same.per_user() == result.per_user()
