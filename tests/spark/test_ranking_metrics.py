"""Spark's own RankingMetrics (pyspark.mllib) and RankingEvaluator (pyspark.ml), reproduced.

RankingMetrics (Spark 4.3, mllib/evaluation/RankingMetrics.scala) takes per user the
predicted items in rank order, the ground-truth items and optionally their relevance values:

* ``precisionAt(k)`` = |top k ∩ labels| / k (short lists still divide by k);
* ``recallAt(k)`` = |top k ∩ labels| / |labels|;
* ``meanAveragePrecision`` = Σ_{hits i} (hits up to i) / i over the whole list, / |labels|;
* ``meanAveragePrecisionAt(k)`` = the same within the top k, / min(|labels|, k);
* ``ndcgAt(k)``: DCG = Σ_{i<k} gain_i / ln(i + 2), gain 1 for a label (binary) or
  2^rel − 1 (with relevance values); the ideal DCG is the DCG of the label list *in the
  given order*, truncated at k; 0 when the ideal is 0.

pyspark 4.3's Python wrapper ``pyspark.mllib.evaluation.RankingMetrics`` drops the relevance
values (PythonMLLibAPI.newRankingMetrics keeps the first two columns only), so its ``ndcgAt``
is always binary; the relevance case is checked against the Scala class itself through its
Java entry point ``RankingMetrics.of`` (a test below shows the wrapper's behaviour).

Every label counts as relevant for P, R and MAP, whatever its relevance value; a user with
labels but no prediction scores 0 and counts in the mean; the mean is over users.

In rankwise's terms (the conventions below): relevance threshold 0 (every judged item is
relevant), exponential gain, natural-log discount (nDCG does not depend on the base), MAP@K
over min(R, K), users with labels but no prediction and users with predictions but no label
count as 0, input order (no ties: scores are -position). The ideal DCG from the labels *in the given order* is the ideal ranking only
when the labels come sorted by relevance, as generated here; rankwise always builds the true
ideal (see docs/spark.md for the differences rankwise does not reproduce).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rankwise import Conventions
from rankwise import spark as rs
from rankwise.conventions import PROFILES, resolve
from rankwise.spark.arrays import from_ranking_columns

SPARK = Conventions(gain="exponential", discount_base=math.e, relevance_threshold=0,
                    ties="input_order", missing_queries="zero", run_only_queries="zero",
                    ap_denominator="min_relevant_cutoff", short_lists="cutoff",
                    recall_denominator="relevant", no_relevant="zero", idcg_zero="zero")
CONVENTIONS = [pytest.param(SPARK, id="explicit")] + (
    [pytest.param(resolve("spark"), id="profile")] if "spark" in PROFILES else [])
KS = (1, 3, 10, 25)


def users(seed: int, n: int = 100):
    """Per user: predictions (distinct items, 0 to 30; none for about 10% of the users),
    labels (1 to 15 distinct items, about half of them predicted; none for about 5% of the
    users) sorted by relevance (1 to 4) descending."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        items = rng.permutation(60)
        pred = items[:int(rng.integers(0, 31))].tolist()
        if rng.random() < 0.1:
            pred = []
        pool = np.concatenate([items[:20], items[40:]])
        labels = rng.choice(pool, size=int(rng.integers(1, 16)), replace=False).tolist()
        if pred and rng.random() < 0.05:
            labels = []
        rel = rng.integers(1, 5, size=len(labels)).astype(float)
        order = np.argsort(-rel, kind="stable")
        out.append(([float(p) for p in pred], [float(labels[i]) for i in order],
                    [float(rel[i]) for i in order]))
    return out


def rankwise_means(spark, data, relevance: bool, conventions, measures):
    frame = spark.createDataFrame(data, "prediction array<double>, label array<double>, "
                                        "rel array<double>")
    run, qrels = from_ranking_columns(frame, relevance="rel" if relevance else None)
    means = rs.evaluate(run, qrels, measures, conventions).aggregates["run"]
    in_place = rs.evaluate_ranking_columns(frame, measures, conventions,
                                           relevance="rel" if relevance else None)
    assert in_place.aggregates["run"] == means  # the array layout evaluated where it lies
    return means


def scala_ranking_metrics(spark, rows):
    """The Scala RankingMetrics on (prediction, label[, relevance]) tuples, built through its
    Java entry point (Tuple2 or Tuple3 of java.util.List)."""
    from py4j.java_collections import ListConverter

    client = spark.sparkContext._gateway._gateway_client
    jvm = spark.sparkContext._jvm
    tuple_class = jvm.scala.Tuple3 if len(rows[0]) == 3 else jvm.scala.Tuple2
    tuples = [tuple_class(*(ListConverter().convert(list(map(float, x)), client) for x in row))
              for row in rows]
    jrdd = spark.sparkContext._jsc.parallelize(ListConverter().convert(tuples, client), 2)
    return jvm.org.apache.spark.mllib.evaluation.RankingMetrics.of(jrdd)


@pytest.mark.parametrize("conventions", CONVENTIONS)
@pytest.mark.parametrize("relevance", [False, True], ids=["binary", "relevance"])
def test_ranking_metrics(spark, conventions, relevance):
    from pyspark.mllib.evaluation import RankingMetrics

    data = users(1 if relevance else 2)
    if relevance:
        metrics = scala_ranking_metrics(spark, data)
    else:
        metrics = RankingMetrics(spark.sparkContext.parallelize([(p, l) for p, l, _ in data], 2))
    ours = rankwise_means(spark, data, relevance, conventions,
                          ["AP"] + [f"{m}@{k}" for k in KS for m in ("P", "R", "AP", "nDCG")])
    theirs_map = metrics.meanAveragePrecision() if relevance else metrics.meanAveragePrecision
    assert ours["AP"] == pytest.approx(theirs_map, rel=1e-12, abs=1e-15)
    for k in KS:
        assert ours[f"P@{k}"] == pytest.approx(metrics.precisionAt(k), rel=1e-12, abs=1e-15)
        assert ours[f"R@{k}"] == pytest.approx(metrics.recallAt(k), rel=1e-12, abs=1e-15)
        assert ours[f"AP@{k}"] == pytest.approx(metrics.meanAveragePrecisionAt(k), rel=1e-12,
                                                abs=1e-15)
        assert ours[f"nDCG@{k}"] == pytest.approx(metrics.ndcgAt(k), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("conventions", CONVENTIONS)
def test_ranking_evaluator(spark, conventions):
    from pyspark.ml.evaluation import RankingEvaluator

    data = users(3)
    frame = spark.createDataFrame([(p, l) for p, l, _ in data],
                                  "prediction array<double>, label array<double>")
    names = {"meanAveragePrecision": "AP", "meanAveragePrecisionAtK": "AP@5",
             "precisionAtK": "P@5", "recallAtK": "R@5", "ndcgAtK": "nDCG@5"}
    run, qrels = from_ranking_columns(frame)
    ours = rs.evaluate(run, qrels, list(names.values()), conventions).aggregates["run"]
    evaluator = RankingEvaluator(k=5)
    for metric, measure in names.items():
        theirs = evaluator.setMetricName(metric).evaluate(frame)
        assert ours[measure] == pytest.approx(theirs, rel=1e-12, abs=1e-15), metric


def test_label_order_matters_to_spark_only(spark):
    """Spark's ideal DCG follows the label order given: with labels not sorted by relevance
    a perfect ranking gets an nDCG above 1; rankwise's ideal is always the best ordering."""
    data = [([1.0, 2.0], [2.0, 1.0], [1.0, 3.0])]  # item 1 (grade 3) first: a perfect ranking
    spark_ndcg = scala_ranking_metrics(spark, data).ndcgAt(2)
    assert spark_ndcg == pytest.approx((7 / math.log(2) + 1 / math.log(3))
                                       / (1 / math.log(2) + 7 / math.log(3)), rel=1e-12)
    assert rankwise_means(spark, data, True, SPARK, ["nDCG@2"])["nDCG@2"] == 1.0


def test_pyspark_wrapper_ignores_relevance_values(spark):
    """pyspark's RankingMetrics with (prediction, label, relevance) rows gives the binary
    nDCG: the wrapper passes only the first two columns to the Scala class."""
    from pyspark.mllib.evaluation import RankingMetrics

    data = users(4, n=40)
    wrapper = RankingMetrics(spark.sparkContext.parallelize(data, 2)).ndcgAt(5)
    binary = rankwise_means(spark, data, False, SPARK, ["nDCG@5"])["nDCG@5"]
    graded = rankwise_means(spark, data, True, SPARK, ["nDCG@5"])["nDCG@5"]
    assert wrapper == pytest.approx(binary, rel=1e-12) and graded != pytest.approx(binary)


#: users with predictions but no labels and users with labels but no predictions, none with
#: both: Spark scores every one of them 0
ONE_SIDED = [([1.0, 2.0], [], []), ([], [3.0], [2.0]), ([4.0], [], []),
             ([], [5.0, 6.0], [1.0, 1.0])]


@pytest.mark.parametrize("conventions", CONVENTIONS)
def test_no_user_with_both_predictions_and_labels(spark, conventions):
    """Spark's RankingMetrics and RankingEvaluator score such input 0; under conventions that
    score both kinds of user (the profile) rankwise evaluates it as Spark does, in both
    layouts and in memory, instead of refusing it."""
    import rankwise
    from pyspark.ml.evaluation import RankingEvaluator
    from pyspark.mllib.evaluation import RankingMetrics

    measures = ["AP"] + [f"{m}@{k}" for k in (1, 3) for m in ("P", "R", "AP", "nDCG")]
    metrics = RankingMetrics(spark.sparkContext.parallelize([(p, l) for p, l, _ in ONE_SIDED], 2))
    theirs = {"AP": metrics.meanAveragePrecision}
    for k in (1, 3):
        theirs.update({f"P@{k}": metrics.precisionAt(k), f"R@{k}": metrics.recallAt(k),
                       f"AP@{k}": metrics.meanAveragePrecisionAt(k),
                       f"nDCG@{k}": metrics.ndcgAt(k)})
    frame = spark.createDataFrame([(p, l) for p, l, _ in ONE_SIDED],
                                  "prediction array<double>, label array<double>")
    evaluator = RankingEvaluator(k=3)
    for metric, measure in (("meanAveragePrecision", "AP"), ("precisionAtK", "P@3"),
                            ("recallAtK", "R@3"), ("ndcgAtK", "nDCG@3"),
                            ("meanAveragePrecisionAtK", "AP@3")):
        assert evaluator.setMetricName(metric).evaluate(frame) == theirs[measure] == 0.0
    ours = rankwise_means(spark, ONE_SIDED, False, conventions, measures)  # both layouts
    assert ours == theirs
    run, qrels = from_ranking_columns(frame)
    in_memory = rankwise.evaluate(rankwise.to_qrels(qrels.toPandas()),
                                  rankwise.to_run(run.toPandas()), measures, conventions,
                                  per_query=True)
    assert in_memory.aggregates["run"] == theirs
    assert len(in_memory.per_query()) == len(ONE_SIDED)  # every user counted, as Spark does


@pytest.mark.parametrize("options", [{}, {"missing_queries": "zero"},
                                     {"run_only_queries": "zero"}],
                         ids=["trec_eval", "-c", "run-only zero"])
def test_no_user_with_both_is_refused_where_one_side_would_not_count(spark, options):
    """Conventions that leave users with labels only, or with predictions only, out would
    evaluate one side alone: refused (almost always a mistake), in the terms of each layout,
    as the in-memory engine refuses it."""
    import rankwise
    from rankwise import InputError

    frame = spark.createDataFrame([(p, l) for p, l, _ in ONE_SIDED],
                                  "prediction array<double>, label array<double>")
    with pytest.raises(InputError, match="no row with both predictions and labels"):
        rs.evaluate_ranking_columns(frame, ["P@3"], **options)
    run, qrels = from_ranking_columns(frame)
    with pytest.raises(InputError, match="no query in common"):
        rs.evaluate(run, qrels, ["P@3"], **options)
    with pytest.raises(InputError, match="no query in common"):
        rankwise.evaluate(rankwise.to_qrels(qrels.toPandas()), rankwise.to_run(run.toPandas()),
                          ["P@3"], **options)
