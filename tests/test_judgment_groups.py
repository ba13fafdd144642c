"""Judgment groups (rankwise.evaluate_judgment_groups, trec_eval -R qrels_jg): trec_eval's
own output byte for byte, pytrec_eval per group averaged by hand, and the rules for queries
judged by some groups only."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

import rankwise
from rankwise.errors import InputError
from rankwise.judgment_groups import group_measure_names

DATA = Path(__file__).resolve().parent / "data" / "trec_eval"


def test_command_line_prints_trec_eval_qrels_jg_output_byte_for_byte():
    """``trec_eval -m qrels_jg -q -R qrels_jg qrels.123 results.test``: out.test.qrels_jg."""
    done = subprocess.run([sys.executable, "-m", "rankwise", "evaluate", "-R", "qrels_jg",
                           "-q", "-f", "trec", str(DATA / "qrels.123"),
                           str(DATA / "results.test")], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    expected = (DATA / "out.test.qrels_jg").read_text().splitlines()
    assert len(expected) == 82
    assert done.stdout.splitlines() == expected
    assert "3 queries evaluated" in done.stderr


def test_each_query_is_averaged_over_the_groups_that_judge_it():
    groups = {"a": {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}},
              "b": {"q1": {"d2": 1}}}  # q2 is judged by group a only
    run = {"q1": {"d1": 3.0, "d2": 2.0}, "q2": {"d4": 2.0, "d3": 1.0}, "q3": {"d5": 1.0}}
    result = rankwise.evaluate_judgment_groups(groups, run, ["RR", "P@1", "num_q"],
                                               per_query=True)
    per_query = result.per_query()
    assert per_query["q1"]["RR"] == (1.0 + 0.5) / 2 and per_query["q1"]["P@1"] == 0.5
    assert per_query["q2"]["RR"] == 0.5 and set(per_query) == {"q1", "q2"}
    assert result.mean("RR") == pytest.approx((0.75 + 0.5) / 2)
    assert result.mean("num_q") == 2
    system = next(iter(result.systems.values()))
    assert system.diagnostics["judgment_groups"] == 2
    assert system.diagnostics["queries_evaluated"] == 2
    assert system.diagnostics["run_rows"] == 5  # the run's rows once, not once per group
    assert system.diagnostics["queries_only_in_run"] == 1 + 2  # q3 in a; q2 and q3 in b
    assert system.trec_names == {"RR": "recip_rank_avgjg", "P@1": "P_avgjg_1",
                                 "NumQ": "num_q"}


def test_one_group_is_the_plain_evaluation():
    qrels = {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 1}}
    run = {"q1": {"d2": 2.0, "d1": 1.0, "d9": 0.5}, "q2": {"d3": 1.0}}
    measures = ["AP", "nDCG@2", "P@2", "Rprec", "num_ret"]
    plain = rankwise.evaluate(qrels, run, measures)
    grouped = rankwise.evaluate_judgment_groups({"only": qrels}, run, measures)
    assert grouped.aggregates == plain.aggregates


def test_trec_eval_names_read_as_the_measures_they_average():
    assert group_measure_names("qrels_jg") == ["num_q", "map", "P", "Rprec_mult"]
    assert group_measure_names(["map_avgjg", "P_avgjg.5,10", "P_avgjg_20", "AP"]) == \
        ["map", "P.5,10", "P_20", "AP"]
    result = rankwise.evaluate_judgment_groups({"g": {"q1": {"d1": 1}}}, {"q1": {"d1": 1.0}},
                                               ["Rprec_mult_avgjg.0.2", "ndcg_cut.10"])
    names = next(iter(result.systems.values())).trec_names
    assert names == {"RprecMult@0.2": "Rprec_mult_avgjg_0.20",
                     "nDCG@10": "ndcg_cut_avgjg_10"}


def _collection(seed: int):
    rng = random.Random(seed)
    groups = {}
    for g in ("g1", "g2", "g3"):
        groups[g] = {f"q{q}": {f"d{d}": rng.choice([0, 0, 1, 2]) for d in rng.sample(
            range(30), 12)} for q in range(8) if rng.random() < 0.8}
    run = {f"q{q}": {f"d{d}": float(rng.randint(0, 20)) for d in rng.sample(range(30), 15)}
           for q in range(9)}
    return groups, run


@pytest.mark.parametrize("seed", range(4))
def test_equals_pytrec_eval_per_group_averaged_by_hand(seed):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    groups, run = _collection(seed)
    result = rankwise.evaluate_judgment_groups(groups, run, ["map", "P_5", "ndcg_cut_10"],
                                               per_query=True)
    sums: dict[str, dict[str, float]] = {}
    counts: dict[str, int] = {}
    for qrels in groups.values():
        judged = {q: j for q, j in qrels.items() if q in run}
        values = pytrec_eval.RelevanceEvaluator(judged, {"map", "P.5", "ndcg_cut.10"}) \
            .evaluate({q: run[q] for q in judged})
        for q, measures in values.items():
            counts[q] = counts.get(q, 0) + 1
            for name, value in measures.items():
                sums.setdefault(q, {}).setdefault(name, 0.0)
                sums[q][name] += value
    got = result.per_query()
    assert set(got) == set(sums)
    for q in sums:
        assert got[q]["AP"] == pytest.approx(sums[q]["map"] / counts[q], abs=1e-12)
        assert got[q]["P@5"] == pytest.approx(sums[q]["P_5"] / counts[q], abs=1e-12)
        assert got[q]["nDCG@10"] == pytest.approx(sums[q]["ndcg_cut_10"] / counts[q],
                                                  abs=1e-12)


def test_bad_judgment_groups_are_refused(tmp_path):
    with pytest.raises(InputError, match="qrels: expected a qrels_jg file or a mapping"):
        rankwise.evaluate_judgment_groups({}, {"q1": {"d1": 1.0}})
    (tmp_path / "jg").write_text("q1 a d1 1\nq1 b d2\n")
    with pytest.raises(InputError, match=r"jg:2: expected 4 fields"):
        rankwise.evaluate_judgment_groups(tmp_path / "jg", {"q1": {"d1": 1.0}})


def test_command_line_refuses_judgment_groups_where_they_cannot_be_read(tmp_path):
    (tmp_path / "jg").write_text("q1 a d1 1\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 1.0 r\n")
    done = subprocess.run([sys.executable, "-m", "rankwise", "evaluate", "-R", "qrels_jg",
                           "--stream", str(tmp_path / "jg"), str(tmp_path / "run")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "-R/--judgments-format qrels_jg: not with --stream" in done.stderr
