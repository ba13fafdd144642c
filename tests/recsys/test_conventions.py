"""Every field of :class:`rankwise.Conventions` means in ``rankwise.recsys.evaluate`` what it
means in ``rankwise.evaluate``: the same values, the same users evaluated and the same
diagnostics, on the fast path and on the engine's own ranking pass, on the same data."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import rankwise
import rankwise.recsys as rs
from rankwise import InputError
from rankwise.conventions import CHOICES
from rankwise.recsys import engine

MEASURES = ["Success@3", "P@3", "R@5", "F1@3", "RR", "AP", "AP@5", "nDCG@5", "nDCG", "DCG@5",
            "Rprec", "Bpref", "IPrec@0.5", "ERR@5", "RWRR@5"]

#: Diagnostics both evaluations count.
COUNTS = ("queries_evaluated", "queries_only_in_run", "queries_only_in_run_scored",
          "queries_only_in_qrels", "queries_only_in_qrels_scored_zero", "queries_empty_in_run",
          "queries_without_relevant", "run_queries", "run_rows", "rows_evaluated",
          "rows_in_run_only_queries", "rows_beyond_depth", "rows_unjudged_removed",
          "unjudged_retrieved", "run_duplicates_dropped", "qrels_queries", "qrels_rows",
          "tied_rows")

#: Scores in {item: score} dicts: ties, scores at and below 0, a run-only user (u4), a user
#: given an empty list (u3), a test-only user (u5), a user without relevant items (u6).
RECS = {"u1": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0, "e": 0.0},
        "u2": {"c": 1.0, "a": 1.0, "f": -1.0},
        "u3": {},
        "u4": {"a": 2.0, "b": 1.0, "c": 0.5},
        "u6": {"a": 1.0, "b": 0.5}}
#: Grades 0 to 3 as ratings (relevance="graded", threshold=1: the grades as they are).
TEST = {"u1": {"b": 2.0, "d": 1.0, "g": 3.0, "e": 0.0},
        "u2": {"a": 1.0, "f": 3.0},
        "u3": {"a": 1.0},
        "u5": {"a": 2.0},
        "u6": {"a": 0.0}}


def _choices() -> list[tuple[str, object]]:
    """Every choice of every field with a fixed set of them, and values of the others."""
    out = [(name, choice) for name, choices in CHOICES.items() for choice in choices
           if name != "duplicates"]  # {item: score} dicts hold no duplicate (test below)
    out += [("gain", "exponential"), ("gain", {1: 5.0}), ("discount_base", 10.0),
            ("max_depth", 2), ("family_overrides", (("nDCG", "ties", "expected"),
                                                    ("P", "relevance_threshold", 2)))]
    return out


def _recsys(recs, test, options: dict, path: str, monkeypatch, measures=MEASURES):
    """rankwise.recsys.evaluate on the fast path, or through the engine's ranking pass."""
    if path == "engine":
        monkeypatch.setattr(engine, "needs_engine", lambda prep, conv: True)
    return rs.evaluate(recs, test, measures, relevance="graded", threshold=1, **options)


def _accuracy_users(result) -> dict:
    """The per-user accuracy values of the users that have some (the others were not
    evaluated: users with a list and no test data, under run_only_queries="ignore")."""
    return {u: v for u, v in result.per_user().items()
            if not all(math.isnan(v[m]) for m in result.accuracy_measures)}


def _assert_same(core, result) -> None:
    """Same users, per-user values, means and diagnostic counts."""
    expected, got = core.per_query(), _accuracy_users(result)
    assert sorted(got) == sorted(expected)
    for user, values in expected.items():
        for m, value in values.items():
            assert got[user][m] == pytest.approx(value, nan_ok=True, rel=1e-12), (user, m)
    for m in core.measures:
        assert result.mean(m) == pytest.approx(core.mean(m), nan_ok=True, rel=1e-12), m
    d, core_d = result.diagnostics["recs"], core.diagnostics["run"]
    for key in COUNTS:
        assert d[key] == core_d[key], key


@pytest.mark.parametrize("path", ["fast", "engine"])
@pytest.mark.parametrize("name, choice", _choices(), ids=str)
def test_every_convention_as_in_rankwise_evaluate(name, choice, path, monkeypatch):
    """run_only_queries="zero" was ignored on the fast path (u4 left out, not scored 0), and
    under max_depth the rows of users only in the recommendations were counted after the
    cut (rankwise.evaluate counts them as given, and cuts only the evaluated lists)."""
    core = rankwise.evaluate(TEST, RECS, MEASURES, per_query=True, **{name: choice})
    for beyond in ([], ["Coverage@3"]):  # accuracy alone, and merged with a beyond measure
        result = _recsys(RECS, TEST, {name: choice}, path, monkeypatch, MEASURES + beyond)
        _assert_same(core, result)


@pytest.mark.parametrize("path", ["fast", "engine"])
@pytest.mark.parametrize("options", [
    {"ties": "optimistic", "max_depth": 2}, {"ties": "pessimistic", "max_depth": 2},
    {"ties": "optimistic", "max_depth": 3, "unjudged": "remove"},
    {"run_only_queries": "zero", "missing_queries": "zero", "max_depth": 2,
     "no_relevant": "skip", "idcg_zero": "nan"},
    {"run_only_queries": "zero", "ties": "expected", "ideal": "retrieved", "max_depth": 3},
    {"run_only_queries": "zero", "score_precision": "float32", "ties": "docid_asc",
     "nonpositive_scores": "nonrelevant", "short_lists": "length"}], ids=str)
def test_conventions_together_as_in_rankwise_evaluate(options, path, monkeypatch):
    """The depth cut came before the tie groups were ordered by grade (u1 kept the unjudged c
    at rank 2, tied with the relevant b, under ties="optimistic")."""
    core = rankwise.evaluate(TEST, RECS, MEASURES, per_query=True, **options)
    _assert_same(core, _recsys(RECS, TEST, options, path, monkeypatch))


@pytest.mark.parametrize("path", ["fast", "engine"])
def test_users_only_in_the_recommendations_score_0_under_run_only_queries_zero(path,
                                                                               monkeypatch):
    """HR@K was 1.0 (u5 left out) where rankwise.evaluate gives 0.5 (u5 counted as 0)."""
    recs, test = {"u2": ["c"], "u5": ["a"]}, {"u2": ["c"]}
    core = rankwise.evaluate({"u2": {"c": 1}}, {"u2": {"c": 1.0}, "u5": {"a": 1.0}},
                             ["Success@3", "nDCG@3"], per_query=True, run_only_queries="zero")
    if path == "engine":
        monkeypatch.setattr(engine, "needs_engine", lambda prep, conv: True)
    result = rs.evaluate(recs, test, ["HR@3", "nDCG@3"], run_only_queries="zero")
    assert result.mean("HR@3") == core.mean("Success@3") == 0.5
    assert result.per_user()["u5"] == {"Success@3": 0.0, "nDCG@3": 0.0}
    d = result.diagnostics["recs"]
    assert d["queries_only_in_run"] == d["queries_only_in_run_scored"] == 1
    assert d["queries_evaluated"] == 2 and d["queries_without_relevant"] == 1
    ignored = rs.evaluate(recs, test, ["HR@3"])  # the default: left out, counted
    assert ignored.mean("HR@3") == 1.0 and "u5" not in _accuracy_users(ignored)
    d = ignored.diagnostics["recs"]
    assert d["queries_only_in_run"] == 1 and d["queries_only_in_run_scored"] == 0


def _frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """A frame of recommendations repeating items (b twice for u1, with different scores,
    the lower one first; a twice for u2, beyond rank 2), its rows in no particular order."""
    recs = pd.DataFrame({"user": ["u1", "u2", "u1", "u1", "u2", "u2", "u1", "u2"],
                         "item": ["b", "c", "a", "b", "a", "d", "c", "a"],
                         "score": [1.0, 5.0, 3.0, 4.0, 1.0, 4.0, 2.0, 0.5]})
    test = pd.DataFrame({"user": ["u1", "u1", "u2"], "item": ["b", "c", "a"],
                         "rating": [1.0, 1.0, 1.0]})
    return recs, test


@pytest.mark.parametrize("path", ["fast", "engine"])
@pytest.mark.parametrize("policy", ["first", "last", "max"])
@pytest.mark.parametrize("depth", [None, 2])
def test_repeated_items_are_kept_as_the_duplicates_convention_says(policy, depth, path,
                                                                   monkeypatch):
    """"first" and "last" kept the copy ranked first or last where rankwise.evaluate keeps the
    first or last row of the input; the depth cut came before the duplicates were dropped."""
    recs, test = _frames()
    core = rankwise.evaluate(test.rename(columns={"user": "query", "item": "doc",
                                                  "rating": "relevance"}),
                             recs.rename(columns={"user": "query", "item": "doc"}), MEASURES,
                             per_query=True, duplicates=policy, max_depth=depth)
    result = _recsys(recs, test, {"duplicates": policy, "max_depth": depth}, path, monkeypatch)
    _assert_same(core, result)
    assert result.diagnostics["recs"]["run_duplicates_dropped"] == 2


@pytest.mark.parametrize("depth", [None, 2])
def test_a_repeated_item_is_refused_by_default_naming_the_input_row(depth):
    """Beyond max_depth the repeated item went unnoticed; the row named was the row of the
    ranked lists, not of the input."""
    recs, test = _frames()
    with pytest.raises(InputError, match=r"^recommendations DataFrame, row 3: item 'b' appears "
                                         r"twice for user 'u1' \(first at row 0; keep one with "
                                         r"the duplicates convention, e.g. duplicates='first'\)"):
        rs.evaluate(recs, test, ["HR@2"], max_depth=depth)
    with pytest.raises(InputError, match=r"^recommendations dict, key 'u1'\[2\]: item '1' "
                                         r"appears twice for user 'u1' \(first at key "
                                         r"'u1'\[0\];"):
        rs.evaluate({"u1": [1, 2, 1]}, {"u1": [1]}, ["HR@2"], max_depth=depth)


@pytest.mark.parametrize("repeats", [["a"], ["a", "c"]])
def test_repeats_are_counted_on_the_lists_left_after_excluding_training_items(repeats):
    """The lists rankwise.evaluate would be given are those without the training items: a
    repeated training item is excluded (every copy), not a dropped duplicate."""
    items = ["a", "b", "a", "c"] + (["c"] if "c" in repeats else [])
    result = rs.evaluate({"u1": items}, {"u1": ["c"]}, ["RR"], train={"u1": ["a"]},
                         exclude_train=True, duplicates="first")
    assert result.inputs["recs"]["training_items_excluded"] == 2
    assert result.diagnostics["recs"]["run_duplicates_dropped"] == len(repeats) - 1
    assert result.mean("RR") == 0.5  # [b, c]


def test_relevance_threshold_is_refused_as_relevance_and_threshold_set_it():
    """relevance_threshold=2 was silently replaced by the policy's threshold (P@2 1.0 where
    rankwise.evaluate gives 0.5); relevance="graded", threshold=2 is that convention."""
    recs, test = {"u1": {"a": 3.0, "b": 2.0}}, {"u1": {"a": 1.0, "b": 2.0}}
    with pytest.raises(InputError, match=r"^relevance_threshold: rankwise.recsys.evaluate sets "
                                         r"the relevance threshold from relevance= and "
                                         r"threshold="):
        rs.evaluate(recs, test, ["P@2"], relevance="graded", relevance_threshold=2)
    core = rankwise.evaluate(test, recs, ["P@2"], relevance_threshold=2)
    graded = rs.evaluate(recs, test, ["P@2"], relevance="graded", threshold=2)
    assert graded.mean("P@2") == core.mean("P@2") == 0.5
    assert graded.conventions.relevance_threshold == 2


@pytest.mark.parametrize("path", ["fast", "engine"])
def test_a_test_user_given_no_item_is_counted_as_the_core_counts_it(path, monkeypatch):
    """``{user: []}`` in the test data is a user with no judgment: the core counts such a
    query as ``qrels_queries_without_judgments`` (and ignores it); it was counted nowhere."""
    test = {"u1": [], "u2": ["c"], "u3": []}
    recs = {"u1": ["a"], "u2": ["c", "a"]}
    core = rankwise.evaluate({"u1": {}, "u2": {"c": 1}, "u3": {}},
                             {"u1": {"a": 2.0}, "u2": {"c": 2.0, "a": 1.0}}, ["Success@3"])
    if path == "engine":
        monkeypatch.setattr(engine, "needs_engine", lambda prep, conv: True)
    result = rs.evaluate(recs, test, ["HR@3"])
    got = result.diagnostics["recs"]
    assert got["qrels_queries_without_judgments"] == 2 == \
        core.diagnostics["run"]["qrels_queries_without_judgments"]
    assert result.mean("HR@3") == core.mean("Success@3") == 1.0
    assert result.inputs["recs"]["test_users_without_items"] == 2


@pytest.mark.parametrize("path", ["fast", "engine"])
@pytest.mark.parametrize("run_only", ["ignore", "zero"])
def test_a_user_given_an_empty_list_without_test_data(run_only, path, monkeypatch):
    """Under run_only_queries="zero" a user given an empty list and no test data (u7) is
    evaluated as an empty ranking without relevant items, as rankwise.evaluate evaluates
    such a query; both left it out, though counted as only in the recommendations."""
    recs = {**RECS, "u7": {}}
    core = rankwise.evaluate(TEST, recs, MEASURES, per_query=True, run_only_queries=run_only)
    result = _recsys(recs, TEST, {"run_only_queries": run_only}, path, monkeypatch)
    _assert_same(core, result)
    assert ("u7" in _accuracy_users(result)) == (run_only == "zero")
