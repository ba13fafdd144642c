"""Recommender inputs: every accepted form gives the same numbers, the relevance and
imputation policies, training-item exclusion (counted), bad input, and the fast path of
rankwise.recsys.engine against the engine's own ranking pass (the in-memory engine)."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import rankwise
import rankwise.recsys as rs
from rankwise import Conventions, InputError
from rankwise.api import _summarise
from rankwise.measures import parse_measures
from rankwise.recsys import columns, engine, inputs, matching, readers

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
    result = rs.evaluate(LISTS, TEST[TEST.user != "u2"], ["P@3", "Personalization@3"])
    d = result.diagnostics["recs"]
    assert d["queries_only_in_run"] == 1 and d["queries_only_in_qrels"] == 1  # u2, u4
    per_user = result.per_user()
    assert math.isnan(per_user["u2"]["P@3"])  # a list, no test data: no accuracy value
    assert "u4" not in per_user  # ignored, as trec_eval (missing_queries="ignore")
    zero = rs.evaluate(LISTS, TEST[TEST.user != "u2"], ["P@3", "Personalization@3"],
                       missing_queries="zero")
    assert zero.per_user()["u4"]["P@3"] == 0.0
    assert math.isnan(zero.per_user()["u4"]["Personalization@3"])  # no list


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
            k = draw(st.integers(0, n_items))  # 0: an empty list, evaluated as one
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
    missing_queries=st.sampled_from(["ignore", "zero"]),
    run_only_queries=st.sampled_from(["ignore", "zero"]),
    max_depth=st.sampled_from([None, 1, 2]),
    ap_denominator=st.sampled_from(["relevant", "min_relevant_cutoff"]),
    short_lists=st.sampled_from(["cutoff", "length"]),
    recall_denominator=st.sampled_from(["relevant", "min_relevant_cutoff"]),
    no_relevant=st.sampled_from(["zero", "nan", "skip", "one"]),
    idcg_zero=st.sampled_from(["zero", "nan", "skip", "one"]),
    ideal=st.sampled_from(["judgments", "retrieved"]),
    score_precision=st.sampled_from(["float64", "float32"]),
    nonpositive_scores=st.sampled_from(["ranked", "nonrelevant"]),
    duplicates=st.sampled_from(["first", "last", "max"]))

#: The diagnostics both paths count.
PATH_COUNTS = ("queries_evaluated", "queries_only_in_run", "queries_only_in_run_scored",
               "queries_only_in_qrels", "queries_only_in_qrels_scored_zero", "rows_evaluated",
               "unjudged_retrieved", "queries_without_relevant", "queries_empty_in_run",
               "run_queries", "run_rows", "rows_in_run_only_queries", "rows_beyond_depth",
               "run_duplicates_dropped", "tied_rows")


def _with_repeats(recs: dict, repeats: list[tuple[int, float]]) -> dict | pd.DataFrame:
    """``recs`` as a frame with a second row for some of the items (the ``(i, score)`` of
    ``repeats``: the i-th row again, with that score), or as they are without repeats."""
    rows = [(u, i, s) for u, items in recs.items() for i, s in items.items()]
    if not rows or not repeats:
        return recs
    rows += [(*rows[i % len(rows)][:2], score) for i, score in repeats]
    return pd.DataFrame(rows, columns=["user", "item", "score"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections(), CONVENTIONS, st.sampled_from(inputs.RELEVANCE_POLICIES),
       st.sampled_from(inputs.IMPUTATION_POLICIES),
       st.lists(st.tuples(st.integers(0, 50), st.sampled_from([0.5, 2.0, 5.0])), max_size=3))
@example(({"u0": {}}, pd.DataFrame({"user": ["u1"], "item": ["i0"], "rating": [1.0]})),
         Conventions(), "threshold", "nonrelevant", [])  # every list empty: nothing ranked
def test_fast_path_equals_the_engine(data, conv, relevance, impute, repeats):
    """The ranked lists built from integer codes give exactly what the engine's own ranking
    pass gives from the same lists written out as a Run and Qrels, under every convention
    (run_only_queries="zero" was ignored on the fast path), with the same diagnostics."""
    recs, test = data
    raw = readers.read_recommendations(_with_repeats(recs, repeats))
    prep = inputs.prepare(raw, readers.read_interactions(test, "test"), relevance=relevance,
                          threshold=4, impute=impute, conventions=conv)
    conv = conv.with_options(relevance_threshold=prep.relevance_threshold)
    measures = parse_measures(ACCURACY)
    try:
        slow = _summarise("x", engine.ranked_lists(prep, conv, force_engine=True), measures, True)
    except InputError as refused:  # both refuse: an empty side in the engine's words
        with pytest.raises(InputError) as fast_refused:
            engine.ranked_lists(prep, conv)
        if "no query in common" in str(refused):  # no user in common, in recommender words
            assert "no user in common" in str(fast_refused.value)
        else:  # (e.g. every list empty: "nothing ranked: the run holds no rows")
            assert str(fast_refused.value) == str(refused)
        return
    fast = _summarise("x", engine.ranked_lists(prep, conv), measures, True)
    assert list(fast.query_ids) == list(slow.query_ids)
    for m in fast.values:
        assert np.allclose(fast.values[m], slow.values[m], rtol=1e-12, atol=1e-12,
                           equal_nan=True), m
    for key in PATH_COUNTS:
        assert fast.diagnostics[key] == slow.diagnostics[key], key


def test_fast_path_is_taken_and_the_engine_when_needed():
    raw = readers.read_recommendations(LISTS)
    prep = inputs.prepare(raw, readers.read_interactions(TEST, "test"))
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


# ---------------------------------------------------------------------------- large-input paths


def _some_lists(seed: int, n_lists: int = 40, n_items: int = 30, fixed: int | None = None,
                repeats: bool = False) -> inputs.TopLists:
    rng = np.random.default_rng(seed)
    lengths = np.full(n_lists, fixed) if fixed else rng.integers(3, 12, n_lists)
    if not fixed:
        lengths[::10] = 0  # users without a list among them
    items = rng.integers(0, n_items, int(lengths.sum())) if repeats else np.concatenate(
        [rng.permutation(n_items)[:n] for n in lengths] or [np.zeros(0, np.int64)])
    offsets = np.zeros(n_lists + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return inputs.TopLists(None, offsets, items.astype(np.int64), np.zeros(len(items)), 0, "t")


def _same(a: dict, b: dict) -> bool:
    """Per-user values equal, NaN included."""
    return repr(sorted(a.items())) == repr(sorted(b.items()))


def _pairs_found(found) -> set:
    pair, rows, _ = found
    return set(zip(pair.tolist(), rows.tolist()))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("fixed", [None, 7])
@pytest.mark.parametrize("repeats", [False, True])
@pytest.mark.parametrize("block", [8, matching.MATCH_BLOCK])
def test_row_by_row_search_equals_one_sort_of_all_keys(seed, fixed, repeats, block,
                                                       monkeypatch):
    """The lists sorted row by row (items packed with their position into int32 or int64)
    find exactly the (pair, row) matches and repeated rows that one sort of every key finds,
    lists of one length or padded, items repeated in a list or not, in one block or many;
    items too large to pack go through that sort."""
    monkeypatch.setattr(matching, "MATCH_BLOCK", block)
    n_items = 30
    lists = _some_lists(seed, fixed=fixed, repeats=repeats)
    rng = np.random.default_rng(seed + 100)
    user = rng.integers(0, lists.num_lists + 5, 300)  # some users have no list
    item = rng.integers(0, n_items, 300)
    for users in (user, user % lists.num_lists):  # or all of them have one
        expected = matching.matches_by_keys(lists, users, item, n_items)
        assert expected[2] == 0 or repeats
        for catalogue in (n_items, 1 << 40):  # int32 packing, int64 packing
            assert matching.row_sorted(lists, catalogue)[0].dtype == \
                (np.int32 if catalogue == n_items else np.int64)
            got = matching.matches(lists, users, item, catalogue)
            assert _pairs_found(got) == _pairs_found(expected) and got[2] == expected[2]
    assert matching.row_sorted(lists, 1 << 60) is None  # does not fit: the sort of all keys
    member = matching.member(lists, user, item, n_items)
    keys = set(zip(user.tolist(), item.tolist()))
    assert member.tolist() == [(int(s), int(i)) in keys
                               for s, i in zip(lists.segment(), lists.items)]


def test_ragged_lists_are_not_padded(monkeypatch):
    monkeypatch.setattr(matching, "MATCH_BLOCK", 8)
    lengths = np.array([200] + [1] * 50)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    items = np.concatenate([np.arange(200), np.arange(50)]).astype(np.int64)
    lists = inputs.TopLists(None, offsets, items, np.zeros(len(items)), 0, "t")
    assert matching.row_sorted(lists, 301) is None  # 51 rows of 200 for 250 items
    got = matching.matches(lists, np.array([0, 1, 2, 0]), np.array([5, 0, 7, 300]), 301)
    assert _pairs_found(got) == {(0, 5), (1, 200)}


def test_grouped_and_ungrouped_ids_are_coded_alike():
    for ids in ([3, 3, 1, 1, 1, 7], [3, 1, 3, 7, 1], ["b", "b", "a"], ["b", "a", "b"], []):
        column = pa.array(ids, type=pa.string() if ids and isinstance(ids[0], str) else None)
        codes, distinct = columns.encode(column)
        encoded = column.dictionary_encode()
        assert codes.tolist() == encoded.indices.to_pylist()
        assert distinct.to_pylist() == encoded.dictionary.to_pylist()


def test_keys_sorted_a_block_of_users_at_a_time():
    rng = np.random.default_rng(5)
    user = np.repeat(np.arange(3000), rng.integers(1, 4, 3000))
    keys = user * 97 + rng.integers(0, 97, len(user))
    assert np.array_equal(inputs._sort_by_user(keys, user), np.sort(keys))
    shuffled = rng.permutation(len(user))
    assert np.array_equal(inputs._sort_by_user(keys[shuffled], user[shuffled]), np.sort(keys))


@pytest.mark.parametrize("order", ["grouped", "grouped_unsorted", "shuffled"])
@pytest.mark.parametrize("fixed", [True, False])
def test_frames_in_any_row_order_give_the_lists_best_first(order, fixed):
    """A frame's rows grouped by user and best first, grouped but not best first (lists of
    one length, or not) or in any order, with integer user ids: the same values as the
    same lists given as {user: {item: score}} (string ids)."""
    rng = np.random.default_rng(11)
    n_users, n_items = 60, 25
    lengths = np.full(n_users, 8) if fixed else rng.integers(1, 9, n_users)
    user = np.repeat(np.arange(n_users) * 3 + 1, lengths)  # ids not 0..n-1
    item = np.concatenate([rng.permutation(n_items)[:n] for n in lengths])
    score = rng.integers(0, 4, len(user)).astype(float)  # ties within lists
    frame = pd.DataFrame({"user": user, "item": item, "score": score})
    if order == "grouped":
        frame = frame.sort_values(["user", "score"], ascending=[True, False], kind="stable")
    elif order == "shuffled":
        frame = frame.sample(frac=1.0, random_state=2)
    test = pd.DataFrame({"user": rng.integers(0, n_users * 3 + 5, 400),
                         "item": rng.integers(0, n_items, 400)}).drop_duplicates()
    nested = {}
    for u, i, s in frame.itertuples(index=False):
        nested.setdefault(str(u), {})[str(i)] = s
    measures = ["RR", "P@3", "nDCG@5", "AP"]
    got = rs.evaluate(frame, test, measures, ties="input_order")
    want = rs.evaluate(nested, test.astype(str), measures, ties="input_order")
    assert _same(got.per_user(), want.per_user())
    assert got.diagnostics == want.diagnostics
    for ties in ("docid_desc", "docid_asc"):  # string and integer ids order alike here
        assert _same(rs.evaluate(frame, test, measures, ties=ties).per_user(),
                     rs.evaluate(nested, test.astype(str), measures, ties=ties).per_user())


def test_integer_user_ids_are_matched_as_numbers_or_strings_alike():
    recs = np.array([[3, 1, 2], [5, 4, 1], [0, 2, 3]])
    test = pd.DataFrame({"user": [2, 0, 1, 9, 9], "item": [3, 1, 4, 3, 0]})
    train = pd.DataFrame({"user": [11, 9, 2], "item": [0, 1, 2]})
    measures = ["RR", "P@3", "Novelty@3"]
    by_number = rs.evaluate(recs, test, measures, train=train, missing_queries="zero")
    as_strings = rs.evaluate(recs, test.astype(str), measures, train=train.astype(str),
                             missing_queries="zero", users=["0", "1", "2"])
    assert _same(by_number.per_user(), as_strings.per_user())
    assert by_number.inputs == as_strings.inputs
    frame = pd.DataFrame({"user": np.repeat([7, 3, 5], 3), "item": recs.ravel(),
                          "score": np.tile([3.0, 2.0, 1.0], 3)})
    relabel = {0: 7, 1: 3, 2: 5, 9: 9, 11: 11}
    test2, train2 = test.assign(user=test.user.map(relabel)), train.assign(
        user=train.user.map(relabel))
    shuffled = rs.evaluate(frame, test2, measures, train=train2, missing_queries="zero")
    assert _same({relabel[int(u)]: v for u, v in by_number.per_user().items()},
                 {int(u): v for u, v in shuffled.per_user().items()})


BIG = 2 ** 70  # beyond every 64-bit integer type


@pytest.mark.parametrize("form", ["dict", "list", "pandas-object", "arrow-decimal"])
def test_user_and_item_ids_beyond_64_bits_are_their_decimal_strings(form):
    """As on the TREC side: a dict keyed by 2**70 or a list of such items raised a bare
    OverflowError, a pandas object column of them was refused as 'decimal128(38, 0)'."""
    recs = {BIG: [BIG + 1, 5, BIG + 2]}
    test = {BIG: [BIG + 1, BIG + 2], 7: [5]}
    if form == "list":
        recs, test = {"u": [BIG + 1, 5]}, {"u": [BIG + 1]}
    elif form in ("pandas-object", "arrow-decimal"):
        rows = [(u, i, 3.0 - r) for u, items in recs.items() for r, i in enumerate(items)]
        held = [(u, i) for u, items in test.items() for i in items]
        if form == "pandas-object":
            recs = pd.DataFrame({"user": pd.Series([r[0] for r in rows], dtype=object),
                                 "item": pd.Series([r[1] for r in rows], dtype=object),
                                 "score": [r[2] for r in rows]})
            test = pd.DataFrame({"user": pd.Series([h[0] for h in held], dtype=object),
                                 "item": pd.Series([h[1] for h in held], dtype=object)})
        else:
            decimal = pa.decimal128(38, 0)
            recs = pa.table({"user": pa.array([r[0] for r in rows], decimal),
                             "item": pa.array([r[1] for r in rows], decimal),
                             "score": [r[2] for r in rows]})
            test = pa.table({"user": pa.array([h[0] for h in held], decimal),
                             "item": pa.array([h[1] for h in held], decimal)})
    as_text = ({str(u): [str(i) for i in items] for u, items in recs.items()}
               if isinstance(recs, dict) else None)
    got = rs.evaluate(recs, test, ["P@2", "nDCG@3", "HR@1"])
    if as_text is None:  # the frames: the dict form's values
        as_text = {str(BIG): [str(BIG + 1), "5", str(BIG + 2)]}
    expected_test = ({str(u): [str(i) for i in items] for u, items in test.items()}
                     if isinstance(test, dict) else
                     {str(BIG): [str(BIG + 1), str(BIG + 2)], "7": ["5"]})
    expected = rs.evaluate(as_text, expected_test, ["P@2", "nDCG@3", "HR@1"])
    assert got.aggregates["recs"] == expected.aggregates["recs"]
    assert got.aggregates["recs"]["P@2"] > 0


def test_item_ids_of_big_integers_and_strings_together_are_refused():
    with pytest.raises(InputError, match="item ids must be strings or integers, of one kind"):
        rs.evaluate({"u": [BIG, "x"]}, {"u": [BIG]}, ["P@2"])


# ---------------------------------------------------------------------------- empty lists, bad ids


EMPTY_TEST = {"u1": {"a": 5, "b": 3}, "u2": {"c": 4}}


def _empty_list_forms() -> dict:
    """u1 given an empty list, u2 the list [c], u3 (no test data) an empty list, in every
    recommendation form that can hold an empty list."""
    return {"lists": ({"u1": [], "u2": ["c"], "u3": []}, {}),
            "nested": ({"u1": {}, "u2": {"c": 1.0}, "u3": {}}, {}),
            "nested, empty as []": ({"u1": [], "u2": {"c": 1.0, "z": 2.0}, "u3": ()}, {}),
            "array": (np.array([["-", "-"], ["c", "-"], ["-", "-"]]),
                      {"users": ["u1", "u2", "u3"], "pad": "-"}),
            "run": (rankwise.to_run({"u1": {}, "u2": {"c": 1.0}, "u3": {}}), {}),
            "engine path": ({"u1": [], "u2": ["c"], "u3": []}, {"unjudged": "remove"})}


@pytest.mark.parametrize("form", list(_empty_list_forms()))
def test_an_empty_list_is_an_empty_ranking_as_in_rankwise_evaluate(form):
    """A user given no recommendation is scored 0 and counted (queries_empty_in_run), as
    rankwise.evaluate scores {qid: {}}: it was left out as if it had no list (HR 1.0, not 0.5)."""
    recs, options = _empty_list_forms()[form]
    if form == "nested, empty as []":  # u2's scores rank z first: [z, c]
        measures, core_run = ["HR@1", "HR@3", "nDCG@3"], {"u1": {}, "u2": {"c": 1.0, "z": 2.0}}
    else:
        measures, core_run = ["HR@1", "HR@3", "nDCG@3"], {"u1": {}, "u2": {"c": 1.0}}
    core_run["u3"] = {}
    core_options = {k: v for k, v in options.items() if k not in ("users", "pad")}
    core = rankwise.evaluate(EMPTY_TEST, core_run, [m.replace("HR", "Success") for m in measures],
                             per_query=True, **core_options)
    result = rs.evaluate(recs, EMPTY_TEST, measures, **options)
    for m in measures:
        assert result.mean(m) == core.mean(m.replace("HR", "Success")), m
    assert result.mean("HR@3") == 0.5
    assert result.per_user()["u1"]["Success@3"] == 0.0
    d, core_d = result.diagnostics["recs"], core.diagnostics["run"]
    for key in ("queries_empty_in_run", "queries_evaluated", "queries_only_in_run",
                "queries_only_in_qrels", "run_queries"):
        assert d[key] == core_d[key], key
    assert d["queries_empty_in_run"] == 1 and d["queries_only_in_qrels"] == 0
    assert result.inputs["recs"]["recommendation_users"] == 3


@pytest.mark.parametrize("emptied", ["u1", "u2"])
def test_a_list_emptied_by_excluding_training_items_is_an_empty_ranking(emptied):
    """It was left out as a user without a list; the last list emptied raised IndexError."""
    recs = {"u2": ["c", "z"], "u1": ["a", "b"]} if emptied == "u1" else \
        {"u1": ["b", "a"], "u2": ["z"]}
    result = rs.evaluate(recs, EMPTY_TEST, ["HR@3"], train={emptied: recs[emptied]},
                         exclude_train=True)
    assert result.per_user()[emptied]["Success@3"] == 0.0 and result.mean("HR@3") == 0.5
    assert result.diagnostics["recs"]["queries_empty_in_run"] == 1


def test_item_scores_and_plain_lists_are_not_mixed():
    with pytest.raises(InputError, match="key 'u2': mixes"):  # u1's scores were ignored
        rs.evaluate({"u1": {"b": 1.0, "a": 2.0}, "u2": ["c"]}, EMPTY_TEST, ["HR@1"])


@pytest.mark.parametrize("threshold", [math.nan, math.inf, -math.inf])
def test_a_threshold_that_is_not_a_finite_number_is_refused(threshold):
    """nan and inf made nothing relevant, -inf everything, and the printed conventions
    showed neither (the core conventions refuse the same relevance threshold)."""
    for relevance in inputs.RELEVANCE_POLICIES:
        with pytest.raises(InputError, match=r"^threshold: threshold must be a finite number "
                                             rf"\(got '{threshold}'\)$"):
            rs.evaluate({"u1": ["a", "b"]}, EMPTY_TEST, ["HR@2"], threshold=threshold,
                        relevance=relevance)


def test_a_threshold_may_be_a_numpy_number():
    for threshold in (np.int64(4), np.float32(4.0)):
        result = rs.evaluate({"u1": ["a", "b"]}, EMPTY_TEST, ["P@2"], threshold=threshold)
        assert result.mean("P@2") == 0.5 and '"threshold": 4' in result.to_json()
    with pytest.raises(InputError, match="threshold must be a number"):
        rs.evaluate({"u1": ["a"]}, EMPTY_TEST, ["P@2"], threshold="4")


MISSING = [None, math.nan, np.float64("nan"), pd.NA, pd.NaT]


@pytest.mark.parametrize("missing", MISSING, ids=repr)
def test_a_missing_item_or_user_id_in_a_dict_names_its_key(missing):
    """NaN (pandas' missing value) got pyarrow's 'Expected bytes, got a 'float' object', where
    None got 'row 1' (the row of every user's items together)."""
    shown = re.escape(repr(missing))
    cases = [({"u0": ["c"], "u1": ["a", missing]}, EMPTY_TEST,
              r"^recommendations dict, key 'u1'\[1\]: missing item id$"),
             ({"u0": ["c"], "u1": [1, missing]}, EMPTY_TEST,
              r"^recommendations dict, key 'u1'\[1\]: missing item id$"),
             ({"u1": {"a": 1.0, missing: 0.5}}, EMPTY_TEST,
              rf"^recommendations dict, key 'u1'/{shown}: missing item id$"),
             ({"u1": ["a"]}, {"u1": ["a", missing]},
              r"^test dict, key 'u1'\[1\]: missing item id$"),
             ({"u1": ["a"]}, {"u1": {"a": 5, missing: 3}},
              rf"^test dict, key 'u1'/{shown}: missing item id$"),
             ({missing: ["a"], "u1": ["a"]}, EMPTY_TEST,
              rf"^recommendations dict, key {shown}: missing user id$"),
             ({"u1": ["a"]}, {"u1": ["a"], missing: ["b"]},
              rf"^test dict, key {shown}: missing user id$"),
             (np.array([["a", "b"], ["c", missing]], dtype=object), {0: ["a"]},
              r"^recommendations array, row 1, column 1: missing item id$")]
    for recs, test, message in cases:
        with pytest.raises(InputError, match=message):
            rs.evaluate(recs, test, ["HR@2"])


def test_an_infinite_item_id_in_a_float_array_is_refused():
    with pytest.raises(InputError, match="item ids in a float array must be whole numbers"):
        rs.evaluate(np.array([[1.0, np.inf]]), {0: [1]}, ["HR@2"])
