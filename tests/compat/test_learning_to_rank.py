"""Learning-to-rank adapters against the libraries themselves: the scikit-learn scorer in
cross_val_score / GridSearchCV with GroupKFold (and against ndcg_score), the LightGBM and
XGBoost metrics round by round against their own ndcg@k / map@k under the conventions where
they coincide, and what differs where they do not (queries without a relevant candidate).
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import rankwise
from rankwise import InputError
from rankwise.compat.candidates import Candidates

# LightGBM's and XGBoost's ndcg@k / map@k, as rankwise conventions
BOOSTING = {"gain": "exponential", "ties": "input_order", "ap_denominator": "min_relevant_cutoff"}


def ltr_data(seed: int, queries: int, relevant_everywhere: bool, binary: bool = False):
    """Features, graded labels 0..3 (or 0/1) correlated with the first feature, query sizes."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 40, size=queries)
    n = int(sizes.sum())
    X = rng.normal(size=(n, 5))
    y = np.clip(np.round(X[:, 0] + 0.8 * rng.normal(size=n)), 0, 3)
    if binary:
        y = (y >= 2).astype(float)
    if relevant_everywhere:
        starts = np.cumsum(sizes) - sizes
        for start, size in zip(starts, sizes):
            if y[start:start + size].max() == 0:
                y[start] = 1.0
    return X, y, sizes


# ------------------------------------------------------------------------------ scikit-learn


def test_scorer_in_cross_val_score_and_grid_search_three_ways():
    pd = pytest.importorskip("pandas")
    sklearn = pytest.importorskip("sklearn")
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GridSearchCV, GroupKFold, cross_val_score

    import rankwise.sklearn as rs

    X, y, sizes = ltr_data(0, 60, relevant_everywhere=False)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    frame = pd.DataFrame(X, columns=list("abcde"))
    by_rows = cross_val_score(Ridge(), frame, y, groups=qid, cv=GroupKFold(4),
                              scoring=rs.make_scorer("nDCG@10", group=qid))
    by_series = cross_val_score(Ridge(), frame, y, groups=qid, cv=GroupKFold(4),
                                scoring=rs.make_scorer("nDCG@10", group=pd.Series(qid)))
    # the expected value of each fold, computed by hand from the same folds
    expected = []
    for train, test in GroupKFold(4).split(X, y, qid):
        model = Ridge().fit(X[train], y[train])
        qrels, run = rankwise.from_arrays(y[test], model.predict(X[test]), query=qid[test])
        expected.append(rankwise.evaluate(qrels, run, ["nDCG@10"]).mean("nDCG@10"))
    assert by_rows == pytest.approx(expected, abs=1e-12)
    assert by_series == pytest.approx(expected, abs=1e-12)

    with_column = frame.assign(qid=qid)
    scores = cross_val_score(Ridge(), with_column, y, groups=qid, cv=GroupKFold(4),
                             scoring=rs.make_scorer("AP", group="qid"))
    assert len(scores) == 4 and np.all((0 <= scores) & (scores <= 1))

    search = GridSearchCV(Ridge(), {"alpha": [0.1, 100.0]}, cv=GroupKFold(3),
                          scoring=rs.make_scorer("nDCG@10", group=qid)).fit(frame, y, groups=qid)
    assert search.best_score_ == pytest.approx(max(search.cv_results_["mean_test_score"]))

    with sklearn.config_context(enable_metadata_routing=True):
        routed = cross_val_score(Ridge(), X, y, params={"groups": qid}, cv=GroupKFold(4),
                                 scoring=rs.make_scorer("nDCG@10"))
        assert routed == pytest.approx(expected, abs=1e-12)
        search = GridSearchCV(Ridge(), {"alpha": [0.1, 100.0]}, cv=GroupKFold(3),
                              scoring=rs.make_scorer("nDCG@10")).fit(X, y, groups=qid)
        assert search.best_params_ in ({"alpha": 0.1}, {"alpha": 100.0})


def test_scorer_explains_where_the_queries_are_missing():
    pytest.importorskip("sklearn")
    from sklearn.linear_model import Ridge

    import rankwise.sklearn as rs

    X, y, sizes = ltr_data(1, 10, relevant_everywhere=False)
    model = Ridge().fit(X, y)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    with pytest.raises(InputError, match="metadata routing"):
        rs.make_scorer("nDCG@10")(model, X, y)
    with pytest.raises(InputError, match="does not say which"):
        rs.make_scorer("nDCG@10", group=qid)(model, X, y)
    with pytest.raises(InputError, match="X has no column 7"):
        rs.make_scorer("nDCG@10", group=7)(model, X, y)
    with pytest.raises(InputError, match="names a column"):
        rs.make_scorer("nDCG@10", group="qid")(model, X, y)


def test_scorer_refuses_a_group_and_sample_weights_of_the_wrong_kind():
    """group=True picked column 1 of X by numpy's boolean indexing ('query has 10 ids for 5
    rows'), group=1.0 escaped as TypeError when the scorer was called, and sample weights
    that are not numbers as numpy's ValueError."""
    pytest.importorskip("sklearn")
    import rankwise.sklearn as rs

    for group, kind in ((True, "bool True"), (1.0, "float 1.0")):
        with pytest.raises(InputError, match=rf"^group: group must be a column name, a column "
                                             rf"position, .* \(got '{kind}'\)"):
            rs.make_scorer("nDCG@10", group=group)
    y, scores, groups = [2, 0, 1], [0.3, 0.2, 0.1], [0, 0, 1]
    with pytest.raises(InputError, match=r"^sample_weight, row 1: sample weight must be a "
                                         r"number \(got \"'x'\"\)"):
        rs.make_scorer("nDCG@10").score(y, scores, groups, sample_weight=[1.0, "x", 1.0])


def test_scorer_equals_ndcg_score_under_the_sklearn_profile():
    pytest.importorskip("sklearn")
    from sklearn.metrics import ndcg_score

    import rankwise.sklearn as rs

    rng = np.random.default_rng(2)
    y_true = rng.integers(0, 4, size=(40, 15))
    y_score = np.round(rng.random((40, 15)), 1)  # ties, averaged by ndcg_score
    groups = np.repeat(np.arange(40), 15)
    for k in (None, 3, 10):
        name = "nDCG" if k is None else f"nDCG@{k}"
        got = rs.make_scorer(name, conventions="sklearn").score(y_true.ravel(), y_score.ravel(),
                                                                 groups)
        assert got == pytest.approx(ndcg_score(y_true, y_score, k=k), abs=1e-12)


def test_error_measures_are_negated_as_scikit_learn_scorers_are():
    import rankwise.sklearn as rs

    scorer = rs.make_scorer("RMSE")
    assert scorer.score([1.0, 2.0], [1.0, 4.0], groups=[0, 0]) == pytest.approx(-np.sqrt(2))


# ------------------------------------------------------------------------------ LightGBM


def test_lightgbm_metric_equals_lightgbm_ndcg_and_map_every_round():
    lgb = pytest.importorskip("lightgbm")
    import rankwise.lightgbm

    X, y, sizes = ltr_data(3, 200, relevant_everywhere=False)
    Xv, yv, sizes_v = ltr_data(4, 150, relevant_everywhere=True)
    train = lgb.Dataset(X, y, group=sizes)
    valid = lgb.Dataset(Xv, yv, group=sizes_v, reference=train)
    measures = ["nDCG@1", "nDCG@5", "nDCG@10", "AP@5", "AP@10"]
    metric = rankwise.lightgbm.metric(*measures, **BOOSTING)
    record: dict = {}
    lgb.train({"objective": "lambdarank", "metric": ["ndcg", "map"], "eval_at": [1, 5, 10],
               "verbose": -1, "num_leaves": 7, "min_data_in_leaf": 5, "num_threads": 1},
              train, 25, valid_sets=[valid], valid_names=["valid"], feval=metric,
              callbacks=[lgb.record_evaluation(record)])
    ours, theirs = record["valid"], record["valid"]
    for mine, lightgbm_name in zip(measures, ["ndcg@1", "ndcg@5", "ndcg@10", "map@5", "map@10"]):
        assert ours[mine] == pytest.approx(theirs[lightgbm_name], abs=1e-12), mine
    assert len(metric._cache) == 1  # the validation set was read once, not every round


def test_lightgbm_counts_queries_without_relevant_candidates_as_one():
    lgb = pytest.importorskip("lightgbm")
    import rankwise.lightgbm

    X, y, sizes = ltr_data(5, 150, relevant_everywhere=False)
    data = lgb.Dataset(X, y, group=sizes)
    record: dict = {}
    booster = lgb.train({"objective": "lambdarank", "metric": ["ndcg"], "eval_at": [10],
                         "verbose": -1, "num_leaves": 7, "num_threads": 1}, data, 5,
                        valid_sets=[data], valid_names=["train"],
                        feval=rankwise.lightgbm.metric("nDCG@10", **BOOSTING),
                        callbacks=[lgb.record_evaluation(record)])
    candidates = Candidates(y, group=sizes, **BOOSTING)
    per_query = candidates.values(booster.predict(X), ["nDCG@10"])["nDCG@10"]
    no_relevant = candidates.values(np.zeros(len(y)), ["NumRel"])["NumRel"] == 0
    assert no_relevant.sum() >= 5
    assert np.all(per_query[no_relevant] == 0.0)  # rankwise (idcg_zero="zero")
    as_lightgbm = np.where(no_relevant, 1.0, per_query).mean()
    assert record["train"]["ndcg@10"][-1] == pytest.approx(as_lightgbm, abs=1e-12)
    assert record["train"]["nDCG@10"][-1] == pytest.approx(per_query.mean(), abs=1e-12)


@pytest.mark.parametrize("library", ["lightgbm", "xgboost"])
def test_the_boosting_profiles_reproduce_the_libraries_with_queries_without_relevant(library):
    X, y, sizes = ltr_data(8, 150, relevant_everywhere=False)
    measures = ["nDCG@5", "nDCG@10", "AP@5", "AP@10"]
    record: dict = {}
    if library == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        import rankwise.lightgbm

        data = lgb.Dataset(X, y, group=sizes)
        lgb.train({"objective": "lambdarank", "metric": ["ndcg", "map"], "eval_at": [5, 10],
                   "verbose": -1, "num_leaves": 7, "num_threads": 1}, data, 5,
                  valid_sets=[data], valid_names=["train"],
                  feval=rankwise.lightgbm.metric(*measures, conventions="lightgbm"),
                  callbacks=[lgb.record_evaluation(record)])
        theirs = {m: record["train"][m.lower().replace("ap@", "map@")] for m in measures}
        tolerance = 1e-12
    else:
        xgb = pytest.importorskip("xgboost")
        import rankwise.xgboost

        X, y, sizes = ltr_data(8, 150, relevant_everywhere=False, binary=True)  # map: 0/1 only
        data = xgb.DMatrix(X, y)
        data.set_group(sizes)
        xgb.train({"objective": "rank:ndcg", "eval_metric": ["ndcg@5", "ndcg@10", "map@5",
                                                             "map@10"], "nthread": 1,
                   "max_depth": 3, "disable_default_eval_metric": 1}, data, 5,
                  evals=[(data, "train")], evals_result=record,
                  custom_metric=rankwise.xgboost.metric(*measures, conventions="xgboost"))
        theirs = {m: record["train"][m.lower().replace("ap@", "map@")] for m in measures}
        tolerance = 1e-6  # XGBoost keeps custom metrics as 6-digit text
    for m in measures:
        ours = record["train"][m]
        assert ours == pytest.approx(theirs[m], abs=tolerance), (library, m)


def test_lightgbm_scikit_learn_api_and_early_stopping():
    lgb = pytest.importorskip("lightgbm")
    import rankwise.lightgbm

    X, y, sizes = ltr_data(6, 150, relevant_everywhere=True)
    Xv, yv, sizes_v = ltr_data(7, 100, relevant_everywhere=True)
    ranker = lgb.LGBMRanker(n_estimators=200, num_leaves=7, verbose=-1, metric="ndcg",
                            n_jobs=1)
    # LightGBM 4.7 takes eval_X/eval_y and deprecates eval_set; older ones take eval_set only
    validation = {"eval_X": (Xv,), "eval_y": (yv,)} \
        if "eval_X" in inspect.signature(ranker.fit).parameters else {"eval_set": [(Xv, yv)]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.filterwarnings("error", category=FutureWarning, module="lightgbm")  # deprecated
        ranker.fit(X, y, group=sizes, **validation, eval_group=[sizes_v], eval_at=[10],
                   eval_metric=rankwise.lightgbm.metric("nDCG@10", **BOOSTING),
                   callbacks=[lgb.early_stopping(10, first_metric_only=False, verbose=False)])
    result = ranker.evals_result_["valid_0"]
    assert result["nDCG@10"] == pytest.approx(result["ndcg@10"], abs=1e-12)
    assert ranker.best_iteration_ < 200


def test_lightgbm_metric_needs_groups():
    lgb = pytest.importorskip("lightgbm")
    import rankwise.lightgbm

    data = lgb.Dataset(np.zeros((4, 1)), [1, 0, 0, 1], params={"verbose": -1}).construct()
    with pytest.raises(InputError, match="no query groups"):
        rankwise.lightgbm.metric("nDCG@10")(np.zeros(4), data)


@pytest.mark.parametrize("group, labels, message", [
    ([3.9, 2.0], [2, 0, 1, 0, 1], r"^group: group must be a 1-D array of non-negative query "
                                  r"sizes \(got '\[3.9 2. \]'\)"),
    (["3", "2"], [2, 0, 1, 0, 1], r"^group: group must be a 1-D array of non-negative query"),
    ([3, 2], ["2", "0", "1", "0", "1"], r"^labels: labels must be numbers \(got an array of <U1"),
], ids=["fractional sizes", "sizes as text", "labels as text"])
def test_boosting_metrics_check_sizes_and_labels_as_from_arrays(group, labels, message):
    """The metrics cast the sizes to int64 and the labels to float64 before checking them:
    sizes [3.9, 2.0] (5.9 rows) were evaluated as [3, 2], "3" as 3, labels "2" as 2, and a
    NaN size escaped as numpy's ValueError."""
    pytest.importorskip("lightgbm")
    import rankwise.lightgbm

    scores = np.array([0.9, 0.8, 0.1, 0.4, 0.5])
    with pytest.raises(InputError, match=message):
        rankwise.lightgbm.metric("nDCG@10")(labels, scores, None, group)


# ------------------------------------------------------------------------------ XGBoost


@pytest.mark.parametrize("binary", [False, True], ids=["graded", "binary"])
def test_xgboost_metric_equals_xgboost_ndcg_and_map_every_round(binary):
    xgb = pytest.importorskip("xgboost")
    import rankwise.xgboost

    X, y, sizes = ltr_data(8, 200, relevant_everywhere=False, binary=binary)
    Xv, yv, sizes_v = ltr_data(9, 150, relevant_everywhere=True, binary=binary)
    train, valid = xgb.DMatrix(X, y), xgb.DMatrix(Xv, yv)
    train.set_group(sizes)
    valid.set_group(sizes_v)
    pairs = [("ndcg@5", "nDCG@5"), ("ndcg@10", "nDCG@10"), ("ndcg", "nDCG@32")]
    if binary:  # XGBoost's map needs 0/1 labels
        pairs += [("map@5", "AP@5"), ("map@10", "AP@10"), ("map", "AP@32")]
    metric = rankwise.xgboost.metric(*[ours for _, ours in pairs], **BOOSTING)
    record: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xgb.train({"objective": "rank:ndcg", "eval_metric": [t for t, _ in pairs],
                   "max_depth": 3, "nthread": 1}, train, 20, evals=[(valid, "valid")],
                  custom_metric=metric,
                  evals_result=record, verbose_eval=False)
    for theirs, ours in pairs:
        # XGBoost records custom metrics as text with 6 significant digits
        assert record["valid"][ours] == pytest.approx(record["valid"][theirs], abs=6e-7), ours
    assert len(metric._cache) == 1


def test_xgboost_minus_variants_count_queries_without_relevant_as_rankwise_does():
    xgb = pytest.importorskip("xgboost")
    import rankwise.xgboost

    X, y, sizes = ltr_data(10, 150, relevant_everywhere=False)
    data = xgb.DMatrix(X, y)
    data.set_group(sizes)
    record: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xgb.train({"objective": "rank:ndcg", "eval_metric": ["ndcg@10", "ndcg@10-"],
                   "nthread": 1}, data, 5,
                  evals=[(data, "train")], custom_metric=rankwise.xgboost.metric(
                      "nDCG@10", **BOOSTING), evals_result=record, verbose_eval=False)
    result = record["train"]
    assert result["nDCG@10"] == pytest.approx(result["ndcg@10-"], abs=6e-7)
    assert result["ndcg@10"][-1] > result["ndcg@10-"][-1]  # XGBoost's default counts them 1


def test_xgboost_ranker_calls_it_per_query():
    import rankwise.xgboost

    metric = rankwise.xgboost.metric("nDCG@2")
    value = metric(np.array([2.0, 0.0, 1.0]), np.array([0.9, 0.8, 0.1]))
    assert value == pytest.approx(Candidates([2, 0, 1], group=[3]).means(
        [0.9, 0.8, 0.1], ["nDCG@2"])["nDCG@2"])
    assert metric.__name__ == "nDCG@2"


def test_example_trains_with_early_stopping_on_a_rankwise_metric():
    pytest.importorskip("lightgbm")
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "lightgbm_early_stopping.py"
    spec = importlib.util.spec_from_file_location("lightgbm_early_stopping", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    best_iteration, best_score, history = example.main(queries=300, seed=0, verbose=False)
    assert 1 <= best_iteration < len(history)
    assert best_score == pytest.approx(max(history)) == pytest.approx(history[best_iteration - 1])


def test_weights_are_not_used_and_the_metrics_say_so():
    lgb = pytest.importorskip("lightgbm")
    xgb = pytest.importorskip("xgboost")
    import rankwise.lightgbm
    import rankwise.xgboost

    X, y, sizes = ltr_data(11, 10, relevant_everywhere=True)
    weights = np.linspace(0.5, 2.0, len(y))  # LightGBM drops weights that are all 1
    lgb_data = lgb.Dataset(X, y, group=sizes, weight=weights, params={"verbose": -1}).construct()
    with pytest.warns(UserWarning, match="weights"):
        rankwise.lightgbm.metric("nDCG@10")(X[:, 0], lgb_data)
    xgb_data = xgb.DMatrix(X, y, weight=np.linspace(0.5, 2.0, len(sizes)))
    xgb_data.set_group(sizes)
    with pytest.warns(UserWarning, match="weights"):
        rankwise.xgboost.metric("nDCG@10")(X[:, 0], xgb_data)
