"""rankwise.spark.evaluate and compare in Spark local mode against the in-memory engine.

Generated collections (tests/peers/generate.py): graded judgments with negative grades,
ties, unjudged documents, queries on one side only, short lists, two runs. Every measure's
per-query values must be bit-identical to ``rankwise.evaluate``'s, diagnostics (counts and
examples) equal, aggregates the correctly rounded means of the same values and within 1e-12
of the in-memory aggregates.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import rankwise
from rankwise import spark as rs
from rankwise.conventions import resolve
from tests.spark.frames import collection_frames
from tests.spark.test_partition import MEASURES


def same_as_memory(result, memory):
    collected = result.collect()
    assert collected.measures == memory.measures
    for name, mem in memory.systems.items():
        got = collected.systems[name]
        np.testing.assert_array_equal(got.query_ids, mem.query_ids)
        for m in memory.measures:
            np.testing.assert_array_equal(got.values[m], mem.values[m], err_msg=m)
            if math.isnan(mem.aggregates[m]):
                assert math.isnan(got.aggregates[m])
            else:
                assert got.aggregates[m] == pytest.approx(mem.aggregates[m], rel=1e-12), m
        assert got.diagnostics == mem.diagnostics
        assert got.undefined == mem.undefined
    return collected


@pytest.fixture(scope="module")
def data():
    run, qrels = collection_frames(11, num_queries=50, negative_grades=True)
    other = run.assign(score=np.round(10 - run["score"], 2))
    return run, other, qrels


def test_every_measure_per_query_as_in_memory(spark, data):
    run, other, qrels = data
    result = rs.evaluate({"a": spark.createDataFrame(run), "b": spark.createDataFrame(other)},
                         spark.createDataFrame(qrels), MEASURES, per_query=True, partitions=3)
    memory = rankwise.evaluate(qrels, {"a": run, "b": other}, MEASURES, per_query=True)
    same_as_memory(result, memory)
    assert result.per_query_frame.columns == ["system", "query", *memory.measures]
    assert result.conventions == memory.conventions
    result.unpersist()


@pytest.mark.parametrize("conventions", [
    resolve(None, missing_queries="zero", max_depth=8, unjudged="remove", relevance_threshold=2),
    resolve(None, ties="input_order", duplicates="first", gain="exponential"),
    resolve("ir_measures"),
])
def test_conventions_as_in_memory(spark, data, conventions):
    run, _, qrels = data
    if conventions.duplicates != "error":  # repeated rows: which one is kept follows row order
        run = pd.concat([run, run.iloc[::7].assign(score=1.5)], ignore_index=True)
    measures = ["P@5", "AP", "nDCG@10", "RR", "Bpref", "ERR@5", "NumRet", "IPrec@0.5"]
    result = rs.evaluate(spark.createDataFrame(run), spark.createDataFrame(qrels), measures,
                         conventions, per_query=True, chunk_rows=50)
    same_as_memory(result, rankwise.evaluate(qrels, run, measures, conventions, per_query=True))
    result.unpersist()


def test_integer_ids_and_renamed_columns(spark):
    run = pd.DataFrame({"user": [1, 1, 1, 2, 2, 3], "item": [10, 11, 12, 10, 13, 9],
                        "pred": [0.9, 0.5, 0.5, 0.2, 0.7, 0.1]})
    qrels = pd.DataFrame({"user": [1, 1, 2, 4], "item": [11, 12, 13, 1], "rating": [1, 2, 1, 1]})
    result = rs.evaluate(spark.createDataFrame(run), spark.createDataFrame(qrels),
                         ["P@2", "nDCG@3", "RR"], query="user", doc="item", score="pred",
                         relevance="rating", per_query=True)
    memory = rankwise.evaluate(rankwise.to_qrels(qrels, "user", "item", "rating"),
                               rankwise.to_run(run, None, "user", "item", "pred"),
                               ["P@2", "nDCG@3", "RR"], per_query=True)
    same_as_memory(result, memory)
    result.unpersist()


def test_per_query_table_written_as_parquet(spark, data, tmp_path):
    run, _, qrels = data
    measures = ["P(rel=2)@5", "IPrec@0.5", "nDCG@10"]
    path = str(tmp_path / "per_query")
    result = rs.evaluate(spark.createDataFrame(run), spark.createDataFrame(qrels), measures,
                         per_query=True, per_query_path=path)
    back = pd.read_parquet(path).sort_values("query").reset_index(drop=True)
    memory = rankwise.evaluate(qrels, run, measures, per_query=True).to_frame()
    memory = memory.sort_values("query").reset_index(drop=True)
    pd.testing.assert_frame_equal(back[memory.columns], memory, check_exact=True)
    assert result.per_query_frame.count() == len(memory)


def test_aggregates_without_per_query_values(spark, data):
    run, _, qrels = data
    result = rs.evaluate(spark.createDataFrame(run), spark.createDataFrame(qrels),
                         ["AP", "gm_map", "NumRel"], partitions=5)
    memory = rankwise.evaluate(qrels, run, ["AP", "gm_map", "NumRel"])
    for m in memory.measures:
        assert result.mean(m) == pytest.approx(memory.mean(m), rel=1e-12)
    assert result.per_query_frame is None
    assert rankwise.Result.from_json(result.to_json()).aggregates == result.aggregates
    with pytest.raises(ValueError, match="per_query=True"):
        result.collect()


def test_bad_input_raises_input_error(spark, data):
    run, _, qrels = data
    run_df, qrels_df = spark.createDataFrame(run), spark.createDataFrame(qrels)
    with pytest.raises(rankwise.InputError, match="no column 'score'"):
        rs.evaluate(run_df.withColumnRenamed("score", "s"), qrels_df, ["P@5"])
    with pytest.raises(rankwise.InputError, match="must hold numbers"):
        rs.evaluate(run_df.withColumn("score", run_df["doc"]), qrels_df, ["P@5"])
    with pytest.raises(rankwise.InputError, match="no query in common"):
        from pyspark.sql import functions as F

        rs.evaluate(run_df.withColumn("query", F.concat(F.lit("x"), "query")), qrels_df, ["P@5"])
    twice = spark.createDataFrame(pd.concat([run, run.iloc[[4]]], ignore_index=True))
    with pytest.raises(rankwise.InputError, match="appears twice for query"):
        rs.evaluate(twice, qrels_df, ["P@5"])
    with pytest.raises(rankwise.InputError, match="expected a Spark DataFrame"):
        rs.evaluate(run, qrels_df, ["P@5"])
    no_doc = run.astype({"doc": object})
    no_doc.loc[3, "doc"] = None
    with pytest.raises(rankwise.InputError, match="has no value where a doc id is expected"):
        rs.evaluate(spark.createDataFrame(no_doc), qrels_df, ["P@5"])


def test_compare_runs_the_same_tests(spark, data):
    run, other, qrels = data
    runs = {"a": run, "b": other}
    frames = {k: spark.createDataFrame(v) for k, v in runs.items()}
    ours = rs.compare(frames, spark.createDataFrame(qrels), ["nDCG@10", "AP"], test="t")
    memory = rankwise.compare(qrels, runs, ["nDCG@10", "AP"], test="t")
    assert [t["test"].p_value for t in ours.tests] == pytest.approx(
        [t["test"].p_value for t in memory.tests], rel=1e-9)
    assert ours.to_table() == memory.to_table()
    options = {"interval": "bootstrap", "power": 0.9, "risk_alpha": 2.0, "baseline": "a"}
    ours = rs.compare(frames, spark.createDataFrame(qrels), ["AP"], test="t", **options)
    assert ours.to_json() == rankwise.compare(qrels, runs, ["AP"], test="t", **options).to_json()


def test_check_examples_in_input_order(spark):
    """A chunk's queries were listed in Spark's order (the grouping's, by query id), so the
    checks named ['q1', 'q2', 'q3'] where the in-memory engine names the queries in input
    order, ['q3', 'q1', 'q2']."""
    run = pd.DataFrame({"query": ["q3", "q3", "q1", "q1", "q2"], "doc": list("efabc"),
                        "score": [3.0, 1.0, 2.0, 1.0, 1.0]})
    qrels = pd.DataFrame({"query": ["q3", "q1", "q1", "q2"], "doc": list("fabc"),
                          "relevance": [1, 1, 2, 1]})
    memory = rankwise.evaluate(qrels, {"sys": run}, ["P@5", "AP"])
    for partitions in (1, None):
        result = rs.evaluate({"sys": spark.createDataFrame(run)}, spark.createDataFrame(qrels),
                             ["P@5", "AP"], partitions=partitions)
        assert result.systems["sys"].checks == memory.systems["sys"].checks
        assert [c["examples"] for c in result.systems["sys"].checks
                if c["code"] == "short_lists"] == [["q3", "q1", "q2"]]


def test_checks_of_the_judged_grades_read_all_the_judgments(spark):
    """With several chunks, a chunk judged 0/1 only warned that every judgment is 0 or 1 and
    that the threshold 2 is above every judged grade, and exp_gain_levels counted only the
    chunk's positive levels, where the whole judgments (and the in-memory engine) do not."""
    qrels = pd.DataFrame({"query": ["q1", "q1", "q2", "q2", "q3", "q4", "q4"],
                          "doc": list("abcdefg"), "relevance": [1, 0, 1, 0, 1, 2, 6]})
    run = qrels.drop(columns="relevance").assign(score=[2.0, 1, 2, 1, 1, 2, 1])
    measures = ["nDCG@10", "P(rel=2)@5", "nDCG(gain=exp)@5", "ERR@5"]
    memory = rankwise.evaluate(qrels, run, measures, per_query=True)
    result = rs.evaluate(spark.createDataFrame(run), spark.createDataFrame(qrels), measures,
                         per_query=True, partitions=2, chunk_rows=2)
    same_as_memory(result, memory)
    codes = ("binary_judgments", "threshold_above_grades", "exp_gain_levels")
    assert [c for c in result.systems["run"].checks if c["code"] in codes] == \
        [c for c in memory.systems["run"].checks if c["code"] in codes]
    assert result.systems["run"].warnings == memory.systems["run"].warnings
    result.unpersist()


def test_one_side_notes_in_the_in_memory_order(spark):
    """The note on queries only in the run comes before the one on queries only in the
    judgments, as in memory, also where the first chunk holds only the latter (the notes
    came in the chunks' order)."""
    qrels = pd.DataFrame({"query": ["a", "m", "m"], "doc": ["x", "y", "z"],
                          "relevance": [1, 1, 0]})
    run = pd.DataFrame({"query": ["m", "m", "z"], "doc": ["y", "z", "w"],
                        "score": [2.0, 1.0, 1.0]})
    memory = rankwise.evaluate(qrels, run, ["P@2"]).systems["run"]
    result = rs.evaluate(spark.createDataFrame(run), spark.createDataFrame(qrels), ["P@2"],
                         partitions=1, chunk_rows=1).systems["run"]
    assert [c for c in result.checks if c["code"] == "one_side"] == \
        [c for c in memory.checks if c["code"] == "one_side"]
    assert result.checks == memory.checks


def test_an_empty_run_is_named_as_in_memory(spark):
    """An empty run (the first of two, the other without a judged query) was reported as
    having no query in common with the judgments ("run queries such as 'None'"); empty
    judgments too were worded otherwise than in memory."""
    qrels = pd.DataFrame({"query": ["q1", "q1"], "doc": ["a", "b"], "relevance": [1, 0]})
    run = pd.DataFrame({"query": ["q1"], "doc": ["a"], "score": [1.0]})
    other = run.assign(query="x")

    def frame(df, value="score double"):
        return spark.createDataFrame(df, f"query string, doc string, {value}")

    with pytest.raises(rankwise.InputError) as memory:
        rankwise.evaluate(qrels, run.iloc[:0], ["P@5"])
    with pytest.raises(rankwise.InputError) as error:
        rs.evaluate(frame(run.iloc[:0]), frame(qrels, "relevance long"), ["P@5"])
    assert str(error.value) == str(memory.value) == \
        "run DataFrame: nothing ranked: the run holds no rows"
    with pytest.raises(rankwise.InputError, match=r"^run DataFrame 'a': nothing ranked: the "
                                                  r"run holds no rows$"):
        rs.evaluate({"a": frame(run.iloc[:0]), "b": frame(other)},
                    frame(qrels, "relevance long"), ["P@5"])
    with pytest.raises(rankwise.InputError) as memory:
        rankwise.evaluate(qrels.iloc[:0], run, ["P@5"])
    with pytest.raises(rankwise.InputError) as error:
        rs.evaluate(frame(run), frame(qrels.iloc[:0], "relevance long"), ["P@5"])
    assert str(error.value) == str(memory.value) == \
        "qrels DataFrame: no judgments: the judgments hold no rows"
