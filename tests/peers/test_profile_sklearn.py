"""The ``sklearn`` profile against scikit-learn's ``ndcg_score`` and ``dcg_score``, query by
query (one call per list, as a 1 x n array).

scikit-learn sees lists only: ``y_true`` holds the grade of every candidate and ``y_score`` its
score, so the ideal DCG comes from the candidates (``ideal="retrieved"``), gains are the grades
(linear) and a query is whatever list it is given. rankwise gets the same arrays through
:func:`rankwise.from_arrays` (every candidate judged), and the same queries as judgments and a
run (unjudged documents are non-relevant, which gives the same numbers).

Ties (sklearn/metrics/_ranking.py): with ``ignore_ties=False`` (the default) both functions
average the gains of each group of tied scores over the group's discounts
(``_tie_averaged_dcg``), the expected value over all orders of the ties, which is
``ties="expected"``. With ``ignore_ties=True`` the order is ``np.argsort(y_score)[::-1]``:
numpy's unstable sort, reversed, which no tie convention reproduces; those values must lie
between rankwise's pessimistic and optimistic values.

scikit-learn refuses a list of one document (``ndcg_score``: "only meaningful when there is
more than 1 document"; ``dcg_score``: a 1 x 1 ``y_true`` is not a multilabel target) and
negative grades in ``ndcg_score``; rankwise evaluates both (a negative grade gains 0).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

sklearn_metrics = pytest.importorskip("sklearn.metrics")

import rankwise  # noqa: E402
from tests.peers.profile_compare import (  # noqa: E402
    assert_same, assert_within_tie_bounds, rankwise_values)
from tests.peers.profile_data import make_profile_data  # noqa: E402

ndcg_score, dcg_score = sklearn_metrics.ndcg_score, sklearn_metrics.dcg_score

#: ``ties="expected"`` is computed by rankwise.measures.expected (when it is there)
HAVE_EXPECTED = importlib.util.find_spec("rankwise.measures.expected") is not None

# key -> (function, keyword arguments, rankwise measure)
CALLS = {
    "ndcg": (ndcg_score, {}, "nDCG"),
    "ndcg k=5": (ndcg_score, {"k": 5}, "nDCG@5"),
    "ndcg k=20": (ndcg_score, {"k": 20}, "nDCG@20"),
    "dcg": (dcg_score, {}, "DCG"),
    "dcg k=5": (dcg_score, {"k": 5}, "DCG@5"),
    "dcg k=5 log_base=10": (dcg_score, {"k": 5, "log_base": 10}, "DCG(base=10)@5"),
}
IGNORING_TIES = {
    f"{key} ignore_ties": (function, {**kwargs, "ignore_ties": True}, name)
    for key, (function, kwargs, name) in CALLS.items()}
RANKWISE = {key: name for key, (_, _, name) in {**CALLS, **IGNORING_TIES}.items()}


def sklearn_values(data, calls) -> dict[str, dict[str, float]]:
    """Every list of at least two documents, one call per list and measure."""
    return {qid: {key: float(function([grades], [scores], **kwargs))
                  for key, (function, kwargs, _) in calls.items()}
            for qid, grades, scores in data.lists() if len(grades) >= 2}


def arrays(data):
    """The lists scikit-learn is given, as rankwise's (qrels, run)."""
    lists = [(q, g, s) for q, g, s in data.lists() if len(g) >= 2]
    query = np.concatenate([[q] * len(g) for q, g, _ in lists])
    return rankwise.from_arrays(np.concatenate([g for _, g, _ in lists]),
                                np.concatenate([s for _, _, s in lists]), query=query)


def profile(**overrides):
    """The profile; on tie-free data any tie policy is the profile's, so without the expected
    value (not there yet) the row order stands in for it."""
    if not HAVE_EXPECTED:
        overrides.setdefault("ties", "input_order")
    return rankwise.conventions.resolve("sklearn", **overrides)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tie_free_every_call(seed):
    data = make_profile_data(seed, ties=False)
    calls = {**CALLS, **IGNORING_TIES}
    theirs = sklearn_values(data, calls)
    qrels, run = arrays(data)
    assert_same(rankwise_values(qrels, run, RANKWISE, profile()), theirs, 1e-9, "arrays")
    # the same queries given as judgments and a run
    shared = {q: v for q, v in theirs.items() if q in data.qrels}
    mine = rankwise_values(data.qrels, data.run, RANKWISE, profile())
    assert_same({q: mine[q] for q in shared}, shared, 1e-9, "judgments and run")


@pytest.mark.skipif(not HAVE_EXPECTED, reason="ties='expected' not implemented yet")
@pytest.mark.parametrize("seed", [3, 4])
def test_tied_scores_are_averaged(seed):
    data = make_profile_data(seed)
    theirs = sklearn_values(data, CALLS)
    qrels, run = arrays(data)
    keys = {k: RANKWISE[k] for k in CALLS}
    assert_same(rankwise_values(qrels, run, keys, "sklearn"), theirs, 1e-9, "tied")
    # the float32 pair: no tie in float64, so 'a' (relevant) is first
    assert theirs["x-float32"]["ndcg"] == pytest.approx(
        (1 + 2 / np.log2(4)) / (2 + 1 / np.log2(3)), abs=1e-12)


@pytest.mark.parametrize("seed", [3, 4])
def test_ignore_ties_gives_one_order_of_the_ties(seed):
    data = make_profile_data(seed)
    theirs = sklearn_values(data, IGNORING_TIES)
    qrels, run = arrays(data)
    keys = {k: RANKWISE[k] for k in IGNORING_TIES}
    assert_within_tie_bounds(qrels, run, keys, profile(), theirs, 1e-9)


def test_one_row_per_query_as_a_2d_array():
    # scikit-learn's own layout: equal-length lists, one query per row, the mean over rows
    rng = np.random.default_rng(11)
    y_true = rng.integers(0, 4, size=(30, 12))
    y_score = rng.permutation(360).reshape(30, 12) / 7.0 - 10.0
    qrels, run = rankwise.from_arrays(y_true, y_score)
    result = rankwise.evaluate(qrels, run, ["nDCG@5", "DCG"], conventions=profile())
    assert result.mean("nDCG@5") == pytest.approx(ndcg_score(y_true, y_score, k=5), abs=1e-12)
    assert result.mean("DCG") == pytest.approx(dcg_score(y_true, y_score), abs=1e-9)


def test_what_scikit_learn_refuses_rankwise_evaluates():
    with pytest.raises(ValueError, match="more than 1 document"):
        ndcg_score([[2]], [[0.5]])
    with pytest.raises(ValueError):
        dcg_score([[2]], [[0.5]])
    with pytest.raises(ValueError, match="negative"):
        ndcg_score([[-1, 2]], [[0.5, 0.4]])
    qrels, run = rankwise.from_arrays([2, 1, 0, -1, 2], [0.5, 0.9, 0.4, 0.8, 0.1],
                                      group=np.array([1, 4]))
    values = rankwise_values(qrels, run, {"ndcg": "nDCG"}, profile())
    assert values["0"]["ndcg"] == 1.0
    # the grade -1 gains 0: the second list is [1, -1 -> 0, 0, 2] against the ideal [2, 1]
    expected = (1 + 2 / np.log2(5)) / (2 + 1 / np.log2(3))
    assert values["1"]["ndcg"] == pytest.approx(expected, abs=1e-12)
