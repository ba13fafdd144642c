"""The partition kernel and the driver's combination, without Spark: the rows a Spark shuffle
would hand each partition are built in pandas (tests/spark/frames.py), so every split of the
queries into partitions, record batches and chunks is checked against the in-memory engine
in milliseconds.

Reference: ``rankwise.evaluate`` on the same data. Per-query values must be bit-identical,
diagnostics (counts and examples) equal, aggregates equal to the correctly rounded mean of
the in-memory per-query values (bit for bit) and to the in-memory aggregates within 1e-12
(numpy's pairwise sum may differ from the exact one in the last bits).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import rankwise
from rankwise.conventions import resolve
from rankwise.measures import parse_measures
from rankwise.results import MIN_GEO_MEAN
from rankwise.spark import combine, exact
from rankwise.spark.partition import SUMMARY, Plan, chunks, evaluate_partition
from tests.spark.frames import collection_frames, shuffle

MEASURES = ["P@5", "P@10", "R@10", "AP", "AP@10", "nDCG", "nDCG@10", "nDCG(gain=exp)@5", "RR",
            "Rprec", "Bpref", "Success@3", "ERR@10", "gm_map", "gm_bpref", "IPrec@0.3",
            "11pt_avg", "SetF", "RelP@5", "NumQ", "NumRet", "NumRel", "NumRelRet",
            "NumNonRelJudgedRet", "MAE", "F1@5", "DCG@5", "CG@5", "RWRR@5", "RBP", "RBPResid",
            "infAP", "binG", "Utility", "RprecMult@0.6", "Judged@10", "Unjudged@5", "ndcg_rel",
            "Rndcg", "G"]


def simulate(runs, qrels, measures, conventions, partitions=3, batch_rows=17, chunk_rows=40):
    """The Spark engine's path with a pandas shuffle: (systems, per-query values)."""
    parsed = parse_measures(measures)
    grades = qrels["relevance"].to_numpy(np.float64)
    levels = tuple(np.unique(grades[grades >= 0]).tolist())  # as the driver finds them
    plan = Plan(tuple(parsed), conventions, tuple(runs),
                tuple(f"run {n}" for n in runs), "qrels", levels, True, chunk_rows)
    summaries, per_query = [], {name: {} for name in runs}
    for batches in shuffle(runs, qrels, partitions, batch_rows, plan.input_order):
        for batch in evaluate_partition(iter(batches), plan):
            if batch.column(SUMMARY)[0].is_valid:
                summaries.append(batch.column(SUMMARY)[0].as_py())
                continue
            for i, row in enumerate(batch.to_pylist()):
                per_query[row["system"]][row["query"]] = [row[f"m{j}"]
                                                          for j in range(len(parsed))]
    return combine.system_results(plan, combine.parse(summaries, plan)), per_query


def check_against_memory(runs, qrels, measures, conventions, **split):
    systems, per_query = simulate(runs, qrels, measures, conventions, **split)
    memory = rankwise.evaluate(qrels, runs, measures, conventions, per_query=True)
    for name, mem in memory.systems.items():
        got = systems[name]
        assert sorted(per_query[name]) == sorted(mem.query_ids.tolist())
        for j, m in enumerate(memory.measures):
            ours = np.array([per_query[name][q][j] for q in mem.query_ids])
            np.testing.assert_array_equal(ours, mem.values[m], err_msg=m)  # NaN == NaN here
            assert got.undefined.get(m, 0) == mem.undefined.get(m, 0)
            expected = mem.aggregates[m]
            if math.isnan(expected):
                assert math.isnan(got.aggregates[m]), m
                continue
            assert got.aggregates[m] == pytest.approx(expected, rel=1e-12, abs=1e-300), m
            kind = memory.aggregate_kinds[m]
            defined = mem.values[m][~np.isnan(mem.values[m])]
            if kind == "mean":
                assert got.aggregates[m] == exact.mean(exact.exact_sum(defined), len(defined))
            elif kind == "gmean":
                logs = np.log(np.maximum(defined, MIN_GEO_MEAN))
                assert got.aggregates[m] == math.exp(exact.mean(exact.exact_sum(logs), len(logs)))
            else:
                assert got.aggregates[m] == expected
        assert got.diagnostics == mem.diagnostics
        assert got.trec_names == mem.trec_names
        if split.get("partitions") == 1 and split.get("chunk_rows", 0) >= len(qrels) + sum(
                len(r) for r in runs.values()):  # one chunk: the checks word for word
            assert got.checks == mem.checks
            assert got.warnings == mem.warnings
    return systems, memory


@pytest.mark.parametrize("seed, split", [
    (1, {"partitions": 1, "batch_rows": 10_000, "chunk_rows": 1 << 20}),
    (1, {"partitions": 3, "batch_rows": 17, "chunk_rows": 200}),
    (2, {"partitions": 7, "batch_rows": 5, "chunk_rows": 1}),  # one query per chunk
])
def test_same_as_memory_default_conventions(seed, split):
    run, qrels = collection_frames(seed, num_queries=60)
    check_against_memory({"a": run, "b": run.assign(score=-run["score"])}, qrels, MEASURES,
                         resolve(None), **split)


@pytest.mark.parametrize("conventions", [
    resolve(None, missing_queries="zero", max_depth=7, relevance_threshold=2),
    resolve(None, unjudged="remove", ties="docid_asc"),
    resolve(None, ties="input_order", duplicates="first", no_relevant="skip"),
    resolve(None, ties="expected", duplicates="last", idcg_zero="nan", gain="exponential"),
    resolve(None, duplicates="max", ap_denominator="min_relevant_cutoff",
            recall_denominator="min_relevant_cutoff", short_lists="length"),
    resolve("pytrec_eval"), resolve("ranx"), resolve("sklearn"), resolve("torchmetrics"),
])
def test_same_as_memory_other_conventions(conventions):
    run, qrels = collection_frames(3, num_queries=60, negative_grades=True,
                                   duplicates=0 if conventions.duplicates == "error" else 25)
    check_against_memory({"r": run}, qrels, MEASURES, conventions, partitions=4, batch_rows=13,
                         chunk_rows=300)


def test_aggregates_do_not_depend_on_the_partitioning():
    run, qrels = collection_frames(4)
    results = [simulate({"r": run}, qrels, MEASURES, resolve(None), partitions=p, batch_rows=b,
                        chunk_rows=c)[0]["r"].aggregates
               for p, b, c in [(1, 10_000, 1 << 20), (2, 3, 7), (5, 64, 100), (11, 1, 1)]]
    assert all(r == results[0] for r in results[1:])  # bit for bit


def test_chunks_hold_whole_queries():
    import pyarrow as pa

    batches = [pa.RecordBatch.from_pydict({"q": ["a", "b"], "n0": [7, None], "n1": [None, 1]}),
               pa.RecordBatch.from_pydict({"q": ["c", "d", "e"], "n0": [1, 1, None],
                                           "n1": [None, 1, 1]})]
    got = [t.column("q").to_pylist() for t in chunks(batches, 2)]
    assert got == [["a"], ["b", "c"], ["d"], ["e"]]  # a query longer than a chunk is one chunk
    assert [len(t) for t in chunks(batches, 100)] == [5]


def test_partitions_without_a_shared_query_count_exactly():
    # every query on one side only, except one: most partitions hold no shared query
    run, qrels = collection_frames(5, num_queries=40)
    shared = min(set(run["query"]) & set(qrels["query"]))
    run = run[~run["query"].isin(qrels["query"]) | (run["query"] == shared)]
    for conventions in (resolve(None), resolve(None, missing_queries="zero")):
        systems, _ = check_against_memory({"r": run}, qrels, ["P@5", "AP", "NumQ"],
                                          conventions, partitions=9, batch_rows=4, chunk_rows=3)
        assert systems["r"].diagnostics["queries_only_in_run"] > 0


#: checks that describe a chunk rather than the whole (docs/spark.md): of a mean over its
#: queries
OF_CHUNK = ("carried_by_few", "tie_sensitivity", "judged_at_k")


def test_chunks_without_a_shared_query_are_checked_too():
    """A chunk in which no query is on both sides runs its checks like any other: its queries
    were left out of the merged checks ("2 of 2 queries retrieved fewer ..." where memory
    says 3 of 3, the one_side note for run-only queries missing), and a count that equals a
    chunk's total ("1 queries are in the run but not in the judgments") was taken for it."""
    run, qrels = collection_frames(5, num_queries=40)
    shared = min(set(run["query"]) & set(qrels["query"]))
    run = run[~run["query"].isin(qrels["query"]) | (run["query"] == shared)]
    for conventions in (resolve(None), resolve(None, missing_queries="zero"),
                        resolve(None, run_only_queries="zero")):
        systems, memory = check_against_memory({"r": run}, qrels, ["P@5", "AP", "NumQ"],
                                               conventions, partitions=9, batch_rows=4,
                                               chunk_rows=3)

        def counted(checks):
            return [(c["code"], c["severity"], c["queries"], c["total"],
                     c["message"] if c["code"] in ("one_side", "short_lists") else "")
                    for c in checks if c["code"] not in OF_CHUNK]

        # (messages with a mean over a chunk's queries differ by design: docs/spark.md)
        assert counted(systems["r"].checks) == counted(memory.systems["r"].checks)


def test_checks_match_with_one_chunk_and_add_up_with_several():
    run, qrels = collection_frames(6)
    qrels = qrels.assign(relevance=(qrels["relevance"] > 1).astype(int))  # binary judgments
    measures = ["P@50", "nDCG@10", "AP"]
    memory = rankwise.evaluate(qrels, run, measures).systems["run"]
    one, _ = simulate({"run": run}, qrels, measures, resolve(None), partitions=1,
                      batch_rows=10_000, chunk_rows=1 << 20)
    assert one["run"].checks == memory.checks and one["run"].warnings == memory.warnings
    several = simulate({"run": run}, qrels, measures, resolve(None), partitions=4,
                       batch_rows=50, chunk_rows=200)[0]["run"]
    # checks of a mean over all queries (rankwise/spark/checks.py): per chunk when several
    whole = ("carried_by_few", "tie_sensitivity", "judged_at_k")
    expected = {(c["code"], tuple(c["measures"])): c for c in memory.checks
                if c["code"] not in whole}
    merged = {(c["code"], tuple(c["measures"])): c for c in several.checks
              if c["code"] not in whole}
    assert set(merged) == set(expected)
    for key, check in expected.items():  # counts add up to the same numbers
        assert (merged[key]["severity"], merged[key]["queries"], merged[key]["total"]) == \
            (check["severity"], check["queries"], check["total"]), key
    assert "–" in merged[("no_relevant", ("P@50", "AP"))]["message"]  # means as ranges
    short = expected[("short_lists", ("P@50",))]
    assert merged[("short_lists", ("P@50",))]["message"] == short["message"]
    assert merged[("short_lists", ("P@50",))]["examples"] == short["examples"]
    assert merged[("binary_judgments", ("nDCG@10",))] == expected[("binary_judgments",
                                                                    ("nDCG@10",))]


def test_checks_of_the_judged_grades_read_all_the_judgments():
    """Each chunk's checks read the grade levels of its own judgments: a chunk judged 0/1
    only warned "every judgment is 0 or 1" and "relevance threshold 2 is above every judged
    grade (the largest is 1)", and exp_gain_levels counted the chunk's positive levels ("2
    positive levels" where the judgments hold 3), where the whole judgments do not."""
    qrels = pd.DataFrame({"query": ["q1", "q1", "q2", "q2", "q3", "q4", "q4"],
                          "doc": list("abcdefg"), "relevance": [1, 0, 1, 0, 1, 2, 6]})
    run = qrels.drop(columns="relevance").assign(score=[2.0, 1, 2, 1, 1, 2, 1])
    measures = ["nDCG@10", "P(rel=2)@5", "nDCG(gain=exp)@5", "ERR@5"]
    memory = rankwise.evaluate(qrels, run, measures).systems["run"]
    systems, _ = check_against_memory({"run": run}, qrels, measures, resolve(None),
                                      partitions=2, batch_rows=1, chunk_rows=2)
    codes = ("binary_judgments", "threshold_above_grades", "exp_gain_levels")
    assert [c for c in systems["run"].checks if c["code"] in codes] == \
        [c for c in memory.checks if c["code"] in codes]
    assert systems["run"].warnings == memory.warnings


def test_input_errors_reach_the_driver():
    run, qrels = collection_frames(7, num_queries=20)
    run = run.copy()
    run.loc[5, "score"] = float("inf")
    with pytest.raises(rankwise.InputError, match="score must be a finite number"):
        simulate({"r": run}, qrels, ["P@5"], resolve(None))
    dup = run.copy()
    dup.loc[5, "score"] = 1.0
    dup = pd.concat([dup, dup.iloc[[3]]], ignore_index=True)
    with pytest.raises(rankwise.InputError, match="appears twice"):
        simulate({"r": dup}, qrels, ["P@5"], resolve(None))


def test_summary_is_json_with_exact_sums():
    run, qrels = collection_frames(8, num_queries=10)
    parsed = parse_measures(["AP"])
    plan = Plan(tuple(parsed), resolve(None), ("r",), ("run",), "qrels")
    (batches,) = shuffle({"r": run}, qrels, 1, 1000)
    (batch,) = list(evaluate_partition(iter(batches), plan))
    summary = json.loads(batch.column(SUMMARY)[0].as_py())
    n, e = summary["systems"][0]["sums"][0]
    memory = rankwise.evaluate(qrels, run, ["AP"], per_query=True).systems["run"].values["AP"]
    assert exact.to_float((n, e)) == math.fsum(memory.tolist())


def _integer_docs(frame: pd.DataFrame, scale: int, offset: int) -> pd.DataFrame:
    """Doc ids "d<k>" as the integers k·scale + offset (their decimal strings order ties
    differently from the numbers: "98" > "102")."""
    return frame.assign(doc=frame["doc"].str[1:].astype(np.int64) * scale + offset)


@pytest.mark.parametrize("scale, offset", [
    (1, 0),  # small ids: keyed as they are
    (1 << 55, 7),  # too large for the keys' low bits: compared as strings instead
    (1, -60),  # negative ids too
])
@pytest.mark.parametrize("conventions", [
    resolve(None), resolve(None, ties="docid_asc", duplicates="max"),
    resolve(None, ties="input_order", duplicates="last", missing_queries="zero"),
])
def test_integer_doc_ids_as_in_memory(scale, offset, conventions):
    # Spark hands integer ids over as integers; the kernel keys them without strings
    run, qrels = collection_frames(9, num_queries=50, negative_grades=True,
                                   duplicates=0 if conventions.duplicates == "error" else 20)
    run, qrels = _integer_docs(run, scale, offset), _integer_docs(qrels, scale, offset)
    run["score"] = np.round(run["score"])  # many ties, ordered by the ids' strings
    check_against_memory({"r": run, "s": run.assign(score=-run["score"])}, qrels, MEASURES,
                         conventions, partitions=3, batch_rows=11, chunk_rows=150)


def test_an_ok_of_other_measures_is_kept_beside_a_finding():
    """With several chunks, ties_at_cutoff's "no tie straddles rank 3" (Success@3) was dropped
    because a chunk found a tie straddling rank 5 (P@5): an "ok" was dropped wherever its
    check found anything, where the in-memory engine keeps the ok of the other cutoff."""
    run = pd.DataFrame({"query": ["q1"] * 6 + ["q2"] * 2, "doc": list("abcdefgh"),
                        "score": [5.0, 4, 3, 2, 1, 1, 2, 1]})
    qrels = pd.DataFrame({"query": ["q1", "q1", "q2"], "doc": ["a", "e", "g"],
                          "relevance": [1, 1, 1]})
    measures = ["P@5", "Success@3"]
    memory = rankwise.evaluate(qrels, run, measures).systems["run"]
    systems, _ = check_against_memory({"run": run}, qrels, measures, resolve(None),
                                      partitions=1, batch_rows=1, chunk_rows=1)
    ties = [c for c in systems["run"].checks if c["code"] == "ties_at_cutoff"]
    assert ties == [c for c in memory.checks if c["code"] == "ties_at_cutoff"]
    assert [c["severity"] for c in ties] == ["warning", "ok"]


def test_checks_of_one_kind_in_the_in_memory_order():
    """short_lists' warning on P@5 came after its note on nDCG@10 where the first chunk's
    lists were long enough for P@5 only: the checks of one kind came in the order first met
    in the chunks, where the in-memory engine gives the warning first."""
    run = pd.DataFrame({"query": ["q1"] * 7 + ["q2"] * 3, "doc": list("abcdefghij"),
                        "score": [7.0, 6, 5, 4, 3, 2, 1, 3, 2, 1]})
    qrels = pd.DataFrame({"query": ["q1", "q2"], "doc": ["a", "h"], "relevance": [1, 1]})
    measures = ["P@5", "nDCG@10"]
    memory = rankwise.evaluate(qrels, run, measures).systems["run"]
    systems, _ = check_against_memory({"run": run}, qrels, measures, resolve(None),
                                      partitions=1, batch_rows=1, chunk_rows=1)
    assert [(c["code"], c["severity"], c["measures"]) for c in systems["run"].checks] == \
        [(c["code"], c["severity"], c["measures"]) for c in memory.checks]


@pytest.mark.parametrize("ties", ["docid_desc", "expected"])
def test_ties_at_cutoff_counts_every_straddling_query(ties):
    """A chunk whose tie at rank 5 mixes grades and one whose tie has equal grades: the
    merged warning said "ties straddle rank 5 in 1 of 2 queries" (the straddling queries of
    the first chunk only) where memory says 2 of 2, and under ties='expected' (notes either
    way) the two wordings were two checks."""
    run = pd.DataFrame({"query": ["q1"] * 6 + ["q2"] * 6, "doc": list("abcdefghijkl"),
                        "score": [6.0, 5, 4, 3, 1, 1] * 2})
    qrels = pd.DataFrame({"query": ["q1", "q2"], "doc": ["e", "g"], "relevance": [1, 1]})
    memory = rankwise.evaluate(qrels, run, ["P@5"], ties=ties).systems["run"]
    systems, _ = check_against_memory({"run": run}, qrels, ["P@5"], resolve(None, ties=ties),
                                      partitions=1, batch_rows=1, chunk_rows=1)
    merged = [c for c in systems["run"].checks if c["code"] == "ties_at_cutoff"]
    assert merged == [c for c in memory.checks if c["code"] == "ties_at_cutoff"]
    assert "in 2 of 2 queries" in merged[0]["message"]


def test_no_relevant_counts_the_chunks_without_other_queries():
    """A chunk in which every query lacks a relevant document words no_relevant without
    "the mean over the other queries": the two wordings were two notes ("1 of 3 queries"
    and "1 of 3 queries ...; the mean over the other queries"), where memory has one of 2 of
    3 queries, examples from both."""
    run = pd.DataFrame({"query": ["q1"] * 3 + ["q2"] + ["q3"] * 2, "doc": list("abcdef"),
                        "score": [3.0, 2, 1, 1, 2, 1]})
    qrels = pd.DataFrame({"query": ["q1", "q2", "q3"], "doc": ["a", "d", "e"],
                          "relevance": [0, 0, 1]})
    memory = rankwise.evaluate(qrels, run, ["P@5"]).systems["run"]
    systems, _ = check_against_memory({"run": run}, qrels, ["P@5"], resolve(None),
                                      partitions=1, batch_rows=1, chunk_rows=3)
    merged = [c for c in systems["run"].checks if c["code"] == "no_relevant"]
    assert merged == [c for c in memory.checks if c["code"] == "no_relevant"]
    assert merged[0]["queries"] == 2 and merged[0]["examples"] == ["q1", "q2"]
