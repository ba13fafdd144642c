"""Seeded differential fuzz: the values rankwise.lightgbm and rankwise.xgboost report against
the libraries' own ``ndcg@k`` / ``map@k`` (under the ``lightgbm`` and ``xgboost``
profiles), against ``rankwise.evaluate`` on the same candidates (default conventions) and
against ``sklearn.metrics.ndcg_score`` (``sklearn`` profile), on random data sets.

Data sets: 1 to 29 queries of 1 to 24 candidates (one-candidate queries included), grades
0..4 or 0/1, a third of the queries without a relevant candidate, features rounded to one
decimal so that the trees' scores tie within most queries (the libraries keep tied rows in
input order; rankwise's default orders them by document id, the row's position in its query
compared as text, so "10" before "9").
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rankwise import InputError

CUTOFFS = (1, 3, 10)


def data_set(seed: int, binary: bool = False):
    rng = np.random.default_rng(seed)
    queries = int(rng.integers(1, 30))
    sizes = rng.integers(1, 25, size=queries)
    n = int(sizes.sum())
    X = np.round(rng.normal(size=(n, 3)), 1)
    y = rng.integers(0, 5, size=n).astype(float)
    y[np.repeat(rng.random(queries) < 0.3, sizes)] = 0
    if binary:
        y = (y >= 2).astype(float)
    return X, y, sizes


def test_lightgbm_builtin_metrics_every_round():
    lgb = pytest.importorskip("lightgbm")
    import rankwise.lightgbm

    measures = [f"nDCG@{k}" for k in CUTOFFS] + [f"AP@{k}" for k in CUTOFFS]
    for seed in range(25):
        X, y, sizes = data_set(seed)
        record: dict = {}
        data = lgb.Dataset(X, y, group=sizes, params={"verbose": -1})
        lgb.train({"objective": "lambdarank", "metric": ["ndcg", "map"], "eval_at": CUTOFFS,
                   "verbose": -1, "num_leaves": 4, "min_data_in_leaf": 1, "min_data_in_bin": 1,
                   "num_threads": 1}, data, 3, valid_sets=[data], valid_names=["t"],
                  feval=rankwise.lightgbm.metric(*measures, conventions="lightgbm"),
                  callbacks=[lgb.record_evaluation(record)])
        for name in measures:
            theirs = record["t"][name.lower().replace("ap@", "map@")]
            assert record["t"][name] == pytest.approx(theirs, abs=1e-12), (seed, name)


XGBOOST_NAMES = {"ndcg": "nDCG@32", "map": "AP@32"}


@pytest.mark.parametrize("binary", [False, True], ids=["graded", "binary"])
def test_xgboost_builtin_metrics_every_round(binary):
    xgb = pytest.importorskip("xgboost")
    import rankwise.xgboost

    theirs = [f"ndcg@{k}" for k in CUTOFFS] + ["ndcg"]
    if binary:  # XGBoost's map needs 0/1 labels
        theirs += [f"map@{k}" for k in CUTOFFS] + ["map"]
    ours = [XGBOOST_NAMES.get(t) or t.replace("ndcg", "nDCG").replace("map", "AP")
            for t in theirs]
    for seed in range(20):
        X, y, sizes = data_set(seed, binary)
        data = xgb.DMatrix(X, y)
        data.set_group(sizes)
        for minus in (False, True):  # ndcg@k- counts queries without a relevant candidate 0
            names = [f"{t}-" if minus else t for t in theirs]
            conventions = {"no_relevant": "zero", "idcg_zero": "zero"} if minus else {}
            record: dict = {}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                xgb.train({"objective": "rank:ndcg", "eval_metric": names, "max_depth": 2,
                           "nthread": 1, "disable_default_eval_metric": 1}, data, 3,
                          evals=[(data, "t")], evals_result=record, verbose_eval=False,
                          custom_metric=rankwise.xgboost.metric(*ours, conventions="xgboost",
                                                                **conventions))
            for their_name, our_name in zip(names, ours):
                # XGBoost records a custom metric as text with 6 significant digits
                assert record["t"][our_name] == pytest.approx(record["t"][their_name],
                                                              abs=6e-7), (seed, their_name)


def test_same_numbers_as_rankwise_evaluate_and_ndcg_score():
    """The metrics called as the libraries call them, on trees' tied scores: the numbers of
    ``rankwise.evaluate(*rankwise.from_arrays(...))`` under the same conventions, and
    ``ndcg_score`` under the ``sklearn`` profile (queries of equal length as 2-D arrays)."""
    lgb = pytest.importorskip("lightgbm")
    xgb = pytest.importorskip("xgboost")
    from sklearn.metrics import ndcg_score

    import rankwise.lightgbm
    import rankwise.xgboost

    measures = ["nDCG@3", "nDCG", "AP", "AP@5", "P@3", "RR", "R@5", "ERR@10", "Rprec"]
    conventions = [{}, {"ties": "docid_asc"}, {"gain": "exponential"},
                   {"ap_denominator": "min_relevant_cutoff"}, {"relevance_threshold": 2}]
    for seed in range(25):
        X, y, sizes = data_set(seed)
        scores = np.round(X[:, 0] * 0.5 + X[:, 1] * 0.5, 1)  # ties in most queries
        lgb_data = lgb.Dataset(X, y, group=sizes, params={"verbose": -1}).construct()
        xgb_data = xgb.DMatrix(X, y)
        xgb_data.set_group(sizes)
        qrels, run = rankwise.from_arrays(y, scores, group=sizes)
        for options in conventions:
            expected = rankwise.evaluate(qrels, run, measures, **options)
            by_lightgbm = rankwise.lightgbm.metric(*measures, **options)(scores, lgb_data)
            by_xgboost = rankwise.xgboost.metric(*measures, **options)(scores, xgb_data)
            for (name, value, _), (other, value2) in zip(by_lightgbm, by_xgboost):
                assert name == other
                assert value == pytest.approx(expected.mean(name), abs=1e-12,
                                              nan_ok=True), (seed, options, name)
                assert value2 == value, (seed, options, name)
        # queries of equal length, as scikit-learn's 2-D arrays
        rng = np.random.default_rng(seed)
        y2 = rng.integers(0, 4, size=(5, 6)).astype(float)
        s2 = np.round(rng.normal(size=(5, 6)), 1)
        same = lgb.Dataset(np.zeros((30, 1)), y2.ravel(), group=[6] * 5,
                           params={"verbose": -1}).construct()
        for k in (None, 3):
            name = "nDCG" if k is None else f"nDCG@{k}"
            ((_, value, _),) = rankwise.lightgbm.metric(name, conventions="sklearn")(
                s2.ravel(), same)
            assert value == pytest.approx(ndcg_score(y2, s2, k=k), abs=1e-12), (seed, k)


def test_xgb_ranker_weights_queries_by_their_size():
    """XGBRanker calls a callable eval_metric once per query and averages the values weighted
    by ``DMatrix.get_group()``, which holds the query sizes (XGBoost 3.x,
    xgboost/sklearn.py ``ltr_metric_decorator``): its number is the size-weighted mean, not the
    mean over queries that ``xgb.train(custom_metric=...)`` reports. Documented in
    docs/switching/lightgbm-xgboost.md."""
    xgb = pytest.importorskip("xgboost")
    import rankwise.xgboost
    from rankwise.compat.candidates import Candidates

    rng = np.random.default_rng(5)
    sizes = rng.integers(2, 25, size=20)  # XGBRanker gives one-candidate queries 1.0 itself
    X = np.round(rng.normal(size=(int(sizes.sum()), 3)), 1)
    y = rng.integers(0, 4, size=len(X)).astype(float)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    ranker = xgb.XGBRanker(n_estimators=2, max_depth=2, n_jobs=1,
                           eval_metric=rankwise.xgboost.metric("nDCG@5"))
    ranker.fit(X, y, qid=qid, eval_set=[(X, y)], eval_qid=[qid], verbose=False)
    reported = ranker.evals_result_["validation_0"]["nDCG@5"][-1]
    per_query = Candidates(y, group=sizes).values(ranker.predict(X, output_margin=True),
                                                  ["nDCG@5"])["nDCG@5"]
    assert reported == pytest.approx(np.average(per_query, weights=sizes), abs=6e-7)
    assert abs(reported - per_query.mean()) > 1e-4
    with pytest.raises(InputError, match="XGBRanker takes one"):
        rankwise.xgboost.metric("nDCG@5", "AP")(y[:4], X[:4, 0])
