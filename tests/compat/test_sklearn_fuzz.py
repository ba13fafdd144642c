"""Seeded differential fuzz: rankwise.sklearn's scorer against ``sklearn.metrics.ndcg_score``
and ``dcg_score`` on random 2-D arrays (one query per row, as scikit-learn takes them).

Inputs: 1 to 7 queries of 2 to 11 candidates, integer and fractional relevance, rows whose
relevance is all zero, scores rounded to 0 to 2 decimals (ties in most rows), ``k`` = all,
1, 3 and beyond the list length, ``sample_weight`` (one weight per query),
``ignore_ties`` and ``log_base``. The documented differences are asserted: negative
relevance (``ndcg_score`` refuses it, ``dcg_score`` takes it as a negative gain, rankwise as
unjudged, gain 0) and one-candidate lists (``ndcg_score`` refuses them).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.metrics import dcg_score, ndcg_score  # noqa: E402

import rankwise.sklearn as rs  # noqa: E402
from rankwise import InputError  # noqa: E402


def random_rows(seed: int, distinct: bool = False):
    """(relevance, scores, query weights, flat query ids) for 2-D arrays."""
    rng = np.random.default_rng(seed)
    queries, length = int(rng.integers(1, 8)), int(rng.integers(2, 12))
    y = rng.integers(0, 5, size=(queries, length)).astype(float)
    if rng.random() < 0.4:
        y[rng.integers(queries)] = 0  # no relevant candidate: nDCG 0 for both
    if rng.random() < 0.2:
        y *= 0.37  # fractional relevance
    if distinct:
        scores = rng.permutation(queries * length).reshape(queries, length) / 7.0 - 3.0
    else:
        scores = np.round(rng.normal(size=(queries, length)), int(rng.integers(0, 3)))
    weights = np.round(rng.random(queries) * 3, 2) + 0.01
    return y, scores, weights, np.repeat(np.arange(queries), length)


def rankwise_value(name, y, scores, groups, **kwargs):
    weights = kwargs.pop("sample_weight", None)
    scorer = rs.make_scorer(name, conventions=kwargs.pop("conventions", "sklearn"), **kwargs)
    if weights is not None:
        weights = np.repeat(weights, y.shape[1])
    return scorer.score(y.ravel(), scores.ravel(), groups, sample_weight=weights)


@pytest.mark.parametrize("k", [None, 1, 3, 20])
def test_ndcg_score_and_dcg_score_on_random_rows(k):
    checked = 0
    for seed in range(80):
        y, scores, weights, groups = random_rows(seed)
        suffix = "" if k is None else f"@{k}"
        for weighted in (None, weights):
            expected = ndcg_score(y, scores, k=k, sample_weight=weighted)
            got = rankwise_value(f"nDCG{suffix}", y, scores, groups, sample_weight=weighted)
            assert got == pytest.approx(expected, abs=1e-12), (seed, weighted)
            for base in (2, 10):
                expected = dcg_score(y, scores, k=k, log_base=base, sample_weight=weighted)
                got = rankwise_value(f"DCG{suffix}", y, scores, groups, discount_base=base,
                                     sample_weight=weighted)
                assert got == pytest.approx(expected, rel=1e-12, abs=1e-12), (seed, base)
            checked += 3
    assert checked == 480


@pytest.mark.parametrize("k", [None, 3])
def test_the_profiles_names_in_the_scorer(k):
    """make_scorer reads the sklearn profile's own names (ndcg_score, dcg_score), with
    scikit-learn's meaning, as rankwise.evaluate does."""
    suffix = "" if k is None else f"@{k}"
    for seed in range(20):
        y, scores, _, groups = random_rows(seed)
        for name, function in ((f"ndcg_score{suffix}", ndcg_score),
                               (f"dcg_score{suffix}", dcg_score)):
            scorer = rs.make_scorer(name, conventions="sklearn")
            assert str(scorer.measure) == name.replace("ndcg_score", "nDCG").replace(
                "dcg_score", "DCG")
            assert scorer.score(y.ravel(), scores.ravel(), groups) == pytest.approx(
                function(y, scores, k=k), rel=1e-12, abs=1e-12), (seed, name)


def test_ignore_ties_on_random_rows():
    """``ignore_ties=True``: on distinct scores every tie policy gives ndcg_score's value (the
    default conventions too: every candidate is judged, the ideal is built from them); on tied
    scores numpy's argsort, reversed, picks some order of the ties, so the value lies between
    rankwise's worst and best tie orders."""
    for seed in range(80):
        y, scores, _, groups = random_rows(seed, distinct=True)
        for k in (None, 3):
            name = "nDCG" if k is None else f"nDCG@{k}"
            expected = ndcg_score(y, scores, k=k, ignore_ties=True)
            for conventions in ("sklearn", None):
                got = rankwise_value(name, y, scores, groups, conventions=conventions)
                assert got == pytest.approx(expected, abs=1e-12), (seed, k, conventions)
        y, scores, _, groups = random_rows(seed)
        for row in range(len(y)):  # per query: the bounds hold query by query
            one = (y[row:row + 1], scores[row:row + 1], None, groups[:y.shape[1]])
            theirs = ndcg_score(*one[:2], k=3, ignore_ties=True)
            low, high = (rankwise_value("nDCG@3", *one[:2], one[3], ties=ties)
                         for ties in ("pessimistic", "optimistic"))
            assert low - 1e-12 <= theirs <= high + 1e-12, (seed, row)


def test_negative_relevance_differs_as_documented():
    # ndcg_score refuses negative relevance; dcg_score takes it as a negative gain; rankwise
    # reads a negative grade as unjudged (gain 0), as trec_eval does (docs/switching)
    for seed in range(40):
        rng = np.random.default_rng(seed)
        y = rng.integers(-2, 4, size=(3, 6)).astype(float)
        y[0, 0] = -1
        scores = rng.normal(size=(3, 6))
        groups = np.repeat(np.arange(3), 6)
        with pytest.raises(ValueError, match="negative"):
            ndcg_score(y, scores)
        assert rankwise_value("DCG", y, scores, groups) == pytest.approx(
            dcg_score(np.maximum(y, 0), scores), abs=1e-12)
        assert rankwise_value("nDCG", y, scores, groups) == pytest.approx(
            ndcg_score(np.maximum(y, 0), scores), abs=1e-12)


def test_one_candidate_lists_are_refused_by_ndcg_score_only():
    with pytest.raises(ValueError, match="more than 1 document"):
        ndcg_score([[1]], [[0.5]])
    assert rankwise_value("nDCG", np.array([[1.0]]), np.array([[0.5]]), [0]) == 1.0
    assert rankwise_value("nDCG", np.array([[0.0]]), np.array([[0.5]]), [0]) == 0.0


# ------------------------------------------------------------------------------ sample_weight


def ranking_problem():
    pd = pytest.importorskip("pandas")
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(7)
    X = rng.normal(size=(80, 3))
    y = np.clip(np.round(X[:, 1] + rng.normal(size=80)), 0, 3)
    qid = np.repeat(np.arange(8), 10)
    frame = pd.DataFrame(X, columns=list("abc"))
    return frame, y, qid, Ridge().fit(frame, y), pd


def test_sample_weight_weights_the_queries_as_ndcg_score_does():
    """Regression: the scorer took ``sample_weight`` (as scikit-learn passes it, e.g. in
    permutation_importance) and ignored it, giving the unweighted mean."""
    from sklearn.inspection import permutation_importance

    frame, y, qid, model, pd = ranking_problem()
    scorer = rs.make_scorer("nDCG@5", group=pd.Series(qid), conventions="sklearn")
    query_weights = np.arange(1.0, 9.0)
    weights = np.repeat(query_weights, 10)
    expected = ndcg_score(y.reshape(8, 10), model.predict(frame).reshape(8, 10), k=5,
                          sample_weight=query_weights)
    assert scorer(model, frame, y, sample_weight=weights) == pytest.approx(expected, abs=1e-12)
    assert scorer(model, frame, y) != pytest.approx(expected, abs=1e-6)
    plain, weighted = (permutation_importance(model, frame, y, scoring=scorer, n_repeats=2,
                                              random_state=0, sample_weight=w)
                       for w in (None, weights))
    assert not np.allclose(plain.importances_mean, weighted.importances_mean)
    with pytest.raises(InputError, match="same for every row of a query"):
        scorer(model, frame, y, sample_weight=np.arange(80.0))
    with pytest.raises(InputError, match="finite and non-negative"):
        scorer(model, frame, y, sample_weight=-weights)


def test_sample_weight_in_metadata_routing_as_scikit_learn_scorers():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GroupKFold, cross_val_score
    from sklearn.exceptions import UnsetMetadataPassedError

    frame, y, qid, _, _ = ranking_problem()
    X = np.c_[qid, frame.to_numpy()]
    weights = np.repeat(np.arange(1.0, 9.0), 10)
    params = {"groups": qid, "sample_weight": weights}
    with sklearn.config_context(enable_metadata_routing=True):
        model = Ridge().set_fit_request(sample_weight=True)
        with pytest.raises(UnsetMetadataPassedError):  # not requested: an error, not ignored
            cross_val_score(model, X, y, cv=GroupKFold(4), params=params,
                            scoring=rs.make_scorer("nDCG@5", group=0))
        scores = {}
        for request in (True, False):
            scorer = rs.make_scorer("nDCG@5", group=0).set_score_request(sample_weight=request)
            scores[request] = cross_val_score(model, X, y, cv=GroupKFold(4), params=params,
                                              scoring=scorer)
    expected = []
    for train, test in GroupKFold(4).split(X, y, qid):
        fitted = Ridge().fit(X[train], y[train], sample_weight=weights[train])
        scorer = rs.make_scorer("nDCG@5", group=0)
        expected.append([scorer(fitted, X[test], y[test]),
                         scorer(fitted, X[test], y[test], sample_weight=weights[test])])
    expected = np.array(expected)
    assert scores[False] == pytest.approx(expected[:, 0], abs=1e-12)
    assert scores[True] == pytest.approx(expected[:, 1], abs=1e-12)
