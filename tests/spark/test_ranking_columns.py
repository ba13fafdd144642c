"""``rankwise.spark.evaluate_ranking_columns``: data in RankingEvaluator's array layout
evaluated where it lies (no explode, no shuffle) gives exactly what ``evaluate`` gives on
``from_ranking_columns`` of the same DataFrame: every value per query, the diagnostics and
the warnings; nulls inside the arrays are reported the same way."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rankwise import InputError
from rankwise import spark as rs
from rankwise.spark.arrays import from_ranking_columns

MEASURES = ["P@5", "R@10", "AP", "AP@10", "nDCG@10", "nDCG", "RR", "Rprec", "Bpref", "ERR@10",
            "Success@3", "NumQ", "NumRet", "NumRelRet"]
TYPES = {"long": ("array<bigint>", int), "double": ("array<double>", float),
         "string": ("array<string>", lambda x: f"i{x}")}


def _rows(seed: int, item, n: int = 80):
    """Per user: an id, predictions (0 to 25 items; a duplicate in some; null or empty
    arrays for a few), labels (0 to 12 items, some predicted) and relevance values (-1 to 3)."""
    rng = np.random.default_rng(seed)
    out = []
    for u in range(n):
        items = rng.permutation(50)
        pred = [item(int(x)) for x in items[:int(rng.integers(0, 26))]]
        labels = [item(int(x)) for x in rng.choice(items[:35], int(rng.integers(0, 13)),
                                                     replace=False)]
        rel = [float(r) for r in rng.integers(-1, 4, len(labels))]
        if u % 17 == 3:
            pred = None
        if u % 19 == 5:
            labels, rel = None, None
        if u % 23 == 7 and pred:
            pred = pred + [pred[0]]  # predicted twice
        out.append((f"u{u}", pred, labels, rel))
    return out


def _frame(spark, rows, kind: str):
    schema = f"user string, prediction {TYPES[kind][0]}, label {TYPES[kind][0]}, " \
             "rel array<double>"
    return spark.createDataFrame(rows, schema)


def _both(df, measures, partitions=1, **options):
    """The in-memory engine's result on the collected ``from_ranking_columns`` frames and the
    array layout's (one partition: one chunk, so the warnings' figures and examples too are
    those of one pass), as JSON, the array layout's SparkResult, and the values per query of
    ``evaluate`` on the same frames in Spark."""
    import rankwise

    relevance, query = options.pop("relevance", None), options.pop("query", None)
    run, qrels = from_ranking_columns(df, relevance=relevance, query=query)
    in_memory = rankwise.evaluate(rankwise.to_qrels(qrels.toPandas()),
                                  rankwise.to_run(run.toPandas()), measures, per_query=True,
                                  **options)
    long = rs.evaluate(run, qrels, measures, per_query=True, **options).collect()
    arrays = rs.evaluate_ranking_columns(df, measures, per_query=True, relevance=relevance,
                                         query=query, partitions=partitions, **options)
    got = json.loads(arrays.collect().to_json())
    assert got["systems"]["run"]["per_query"] == \
        json.loads(long.to_json())["systems"]["run"]["per_query"]
    expected = json.loads(in_memory.to_json())
    for m in measures:  # numpy's pairwise sums in memory: the last bits may differ
        assert arrays.mean(m) == pytest.approx(in_memory.mean(m), rel=1e-12, abs=1e-15)
    for result in (expected, got):
        del result["systems"]["run"]["aggregates"]
    return expected, got, arrays


@pytest.mark.parametrize("kind", list(TYPES))
@pytest.mark.parametrize("options", [
    dict(duplicates="first", relevance="rel", query="user"),
    dict(conventions="spark", duplicates="first", relevance="rel", query="user"),
    dict(duplicates="max", missing_queries="zero", run_only_queries="zero", query="user"),
    dict(duplicates="last", ties="expected", unjudged="remove", relevance="rel"),
], ids=["default", "spark", "binary", "row ids as queries"])
def test_same_as_the_long_layout(spark, kind, options):
    df = _frame(spark, _rows(3, TYPES[kind][1]), kind).repartition(3, "user")  # deterministic
    expected, arrays, result = _both(df, MEASURES, **options)
    assert arrays == expected
    assert result.worker_seconds["partitions"] == 1


def test_small_input_is_one_partition(spark, tmp_path):
    _frame(spark, _rows(4, int), "long").repartition(3, "user").write.parquet(str(tmp_path / "arrays"))
    df = spark.read.parquet(str(tmp_path / "arrays"))  # Spark knows its size: small
    expected, arrays, result = _both(df, MEASURES, partitions=None, relevance="rel",
                                     query="user", duplicates="first")
    assert arrays == expected and result.worker_seconds["partitions"] == 1


def test_several_partitions_and_chunks(spark):
    df = _frame(spark, _rows(5, int), "long")
    run, qrels = from_ranking_columns(df, relevance="rel", query="user")
    long = rs.evaluate(run, qrels, MEASURES, duplicates="first", partitions=1)
    arrays = rs.evaluate_ranking_columns(df, MEASURES, relevance="rel", query="user",
                                         duplicates="first", partitions=3, chunk_rows=40)
    assert arrays.worker_seconds["partitions"] == 3
    for m in MEASURES:
        assert arrays.mean(m) == pytest.approx(long.mean(m), rel=1e-12, abs=1e-15)
    assert arrays.diagnostics["run"] == long.diagnostics["run"]


def test_nulls_in_the_arrays_are_reported(spark):
    schema = "user string, prediction array<bigint>, label array<bigint>, rel array<double>"
    for row, what, side in ((("u1", [1, None, 2], [1], [1.0]), "a doc id", "run"),
                            (("u1", [1, 2], [1, 2], [1.0]), "a score or grade", "qrels")):
        df = spark.createDataFrame([row, ("u2", [3], [3], [2.0])], schema)
        run, qrels = from_ranking_columns(df, relevance="rel", query="user")
        with pytest.raises(InputError) as long:
            rs.evaluate(run, qrels, ["AP"])
        with pytest.raises(InputError) as arrays:
            rs.evaluate_ranking_columns(df, ["AP"], relevance="rel", query="user")
        assert what in str(long.value) and arrays.value.reason == long.value.reason
        assert (long.value.source, arrays.value.source) == (f"{side} DataFrame",
                                                            "ranking DataFrame")


def test_bad_columns_are_named(spark):
    df = spark.createDataFrame([("u1", [1], 2)], "user string, prediction array<bigint>, "
                                                 "label bigint")
    with pytest.raises(InputError, match="'label' must be an array of ids"):
        rs.evaluate_ranking_columns(df, ["AP"])
    with pytest.raises(InputError, match="no column 'labels'"):
        rs.evaluate_ranking_columns(df, ["AP"], label="labels")
    with pytest.raises(InputError, match="no column 'rel'"):
        rs.evaluate_ranking_columns(df, ["AP"], label="prediction", relevance="rel")
    with pytest.raises(InputError, match="'label' must hold strings or integers"):
        rs.evaluate_ranking_columns(df.selectExpr("prediction", "array(label) AS l",
                                                  "array(1.5) AS label"),
                                    ["AP"], label="l", query="label")
