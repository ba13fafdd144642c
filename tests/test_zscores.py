"""Z-scores (rankwise.standardize, trec_eval -Z): hand-computed values, trec_eval's rules for
a deviation of 0 and for missing references, the reader's errors, and the outputs' labels.
(trec_eval's own -Z output is diffed byte for byte in tests/conformance/test_trec_eval.py.)"""

from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys

import numpy as np
import pytest

import rankwise
from rankwise.errors import InputError
from rankwise.io.zscores import read_zscores
from rankwise.zscores import TREC_EVAL_MISSING

QRELS = {"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}, "q3": {"d4": 1}}
RUN = {"q1": {"d1": 3.0, "d9": 2.0, "d2": 1.0},  # RR 1, P@2 0.5, num_ret 3
       "q2": {"d8": 2.0, "d3": 1.0},  # RR 0.5, P@2 0.5, num_ret 2
       "q3": {"d7": 1.0}}  # RR 0, P@2 0, num_ret 1
MEASURES = ["RR", "P@2", "num_ret", "num_q"]


def result():
    return rankwise.evaluate(QRELS, RUN, MEASURES, per_query=True)


def reference(**overrides):
    ref = {q: {"recip_rank": (0.5, 0.25), "P_2": (0.25, 0.5), "num_ret": (2.0, 1.0)}
           for q in ("q1", "q2", "q3")}
    ref.update(overrides)
    return ref


def test_values_are_standardised_and_aggregated_as_the_measure_is():
    z = rankwise.standardize(result(), reference())
    per_query = z.per_query()
    assert [per_query[q]["RR"] for q in ("q1", "q2", "q3")] == [2.0, 0.0, -2.0]
    assert [per_query[q]["P@2"] for q in ("q1", "q2", "q3")] == [0.5, 0.5, -0.5]
    assert z.mean("RR") == 0.0 and z.mean("P@2") == pytest.approx(0.5 / 3)
    assert z.mean("num_ret") == 0.0  # a sum of z-scores: 1 + 0 - 1
    assert z.mean("num_q") == 3  # the number of queries is not converted
    assert z.systems[next(iter(z.systems))].diagnostics["zscores_missing"] == 0


def test_a_deviation_of_zero_gives_zero_at_the_mean_and_no_zscore_elsewhere():
    ref = reference(q1={"recip_rank": (1.0, 0.0), "P_2": (0.0, 0.0), "num_ret": (2.0, 1.0)})
    z = rankwise.standardize(result(), ref)
    assert z.per_query()["q1"]["RR"] == 0.0  # the value is the mean
    assert z.per_query()["q1"]["P@2"] == TREC_EVAL_MISSING  # 0.5 off a mean of 0 with sd 0
    undefined = rankwise.standardize(result(), ref, missing="undefined")
    assert math.isnan(undefined.per_query()["q1"]["P@2"])
    assert undefined.mean("P@2") == pytest.approx((0.5 - 0.5) / 2)  # q2 0.5, q3 -0.5
    assert undefined.systems[next(iter(undefined.systems))].undefined["P@2"] == 1


def test_missing_references_are_counted_warned_and_handled_as_asked():
    ref = reference()
    del ref["q3"]  # a query the reference lacks: no z-score for any of its values
    ref["q2"] = {"recip_rank": (0.5, 0.25)}  # a query lacking two measures
    z = rankwise.standardize(result(), ref)
    system = next(iter(z.systems.values()))
    assert system.diagnostics["zscores_missing"] == 5
    assert z.per_query()["q3"]["RR"] == TREC_EVAL_MISSING
    assert z.mean("RR") == pytest.approx((2.0 + 0.0 + TREC_EVAL_MISSING) / 3)
    check = [c for c in system.checks if c["code"] == "zscores_missing"][0]
    assert check["severity"] == "warning" and check["queries"] == 2
    assert check["examples"] == ["q2", "q3"] and check["measures"] == ["RR", "P@2", "NumRet"]
    assert "5 of 9 per-query values" in system.warnings[-1]
    left_out = rankwise.standardize(result(), ref, missing="undefined")
    assert left_out.mean("RR") == pytest.approx(1.0)  # q1 2, q2 0; q3 left out
    assert left_out.mean("num_ret") == 1.0  # the sum over q1 alone


def test_canonical_names_are_looked_up_when_the_trec_name_is_absent():
    ref = {q: {"RR": (0.5, 0.5), "P_2": (0.5, 1.0), "num_ret": (1.0, 1.0)}
           for q in ("q1", "q2", "q3")}
    z = rankwise.standardize(result(), ref)
    assert z.per_query()["q1"]["RR"] == 1.0


def test_undefined_values_stay_undefined():
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 0}}  # q2 has no relevant document
    run = {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}
    res = rankwise.evaluate(qrels, run, ["RR"], per_query=True, no_relevant="nan")
    z = rankwise.standardize(res, {"q1": {"recip_rank": (0.5, 0.5)},
                                   "q2": {"recip_rank": (0.5, 0.5)}})
    assert z.per_query()["q1"]["RR"] == 1.0 and math.isnan(z.per_query()["q2"]["RR"])
    assert math.isnan(z.mean("RR")) and math.isnan(res.mean("RR"))  # no_relevant="nan"
    skipped = rankwise.evaluate(qrels, run, ["RR"], per_query=True, no_relevant="skip")
    assert rankwise.standardize(skipped, {"q1": {"recip_rank": (0.5, 0.5)}},
                                missing="undefined").mean("RR") == 1.0
    assert next(iter(z.systems.values())).diagnostics["zscores_missing"] == 0


def test_standardize_refuses_what_it_cannot_do():
    with pytest.raises(ValueError, match="per_query=True"):
        rankwise.standardize(rankwise.evaluate(QRELS, RUN, ["RR"]), reference())
    z = rankwise.standardize(result(), reference())
    with pytest.raises(ValueError, match="z-scores already"):
        rankwise.standardize(z, reference())
    with pytest.raises(InputError, match="missing: expected one of"):
        rankwise.standardize(result(), reference(), missing="zero")
    with pytest.raises(InputError, match="zscores: expected a file path or a mapping"):
        rankwise.standardize(result(), 3)


def test_outputs_label_zscores_and_print_counts_as_decimals():
    z = rankwise.standardize(result(), reference())
    trec = z.to_trec(per_query=True).splitlines()
    assert "Znum_ret               \tq1\t1.0000" in trec  # trec_eval: Z, then the name in 22
    assert "Znum_q                 \tall\t3.0000" in trec
    assert trec[-5].startswith("runid ")  # the run's name is no measure
    assert z.to_markdown().splitlines()[0] == "| system | Z(RR) | Z(P@2) | Z(NumRet) | Z(NumQ) |"
    assert "values are z-scores against z-scores (missing: trec" in z.to_markdown()
    assert z.to_csv().splitlines()[0] == "system,Z(RR),Z(P@2),Z(NumRet),Z(NumQ)"
    assert z.to_table().splitlines()[0].split()[1:] == ["Z(RR)", "Z(P@2)", "Z(NumRet)",
                                                        "Z(NumQ)"]
    assert r"Z(P@2)" in z.to_latex() and "z-scores against" in z.to_latex()
    assert "0.0000" in z.to_table()  # num_ret's sum of z-scores, not an integer count


def test_json_round_trip_keeps_the_zscores():
    z = rankwise.standardize(result(), reference())
    back = rankwise.Result.from_json(z.to_json())
    assert back.zscores == {"reference": "z-scores", "missing": "trec_eval"}
    assert back.to_trec(per_query=True) == z.to_trec(per_query=True)
    assert json.loads(rankwise.evaluate(QRELS, RUN, ["RR"]).to_json())["zscores"] is None


def test_reader_reads_trec_eval_files(tmp_path):
    path = tmp_path / "z.gz"
    path.write_bytes(gzip.compress(b"# means of 3 runs\n\nq1 map 0.5 0.25\nq1\tP_10  0.3 0.1\n"
                                   b"q0 map 0.1 0.0\n"))
    z = read_zscores(path)
    assert z.source == str(path) and sorted(z.by_measure) == ["P_10", "map"]
    found, mean, sd = z.lookup("map", np.array(["q0", "q1", "q2"]))
    assert found.tolist() == [True, True, False]
    assert mean[:2].tolist() == [0.1, 0.5] and sd[:2].tolist() == [0.0, 0.25]


@pytest.mark.parametrize("text, message", [
    ("q1 map 0.5\n", r"z:1: expected 4 fields 'qid measure mean stddev', got 3"),
    ("q1 map 0.5 0.1 x\n", r"z:1: expected 4 fields"),
    ("q1 map abc 0.1\n", r"z:1: mean: expected a finite number"),
    ("\nq1 map 0.5 nan\n", r"z:2: stddev: expected a finite number >= 0"),
    ("q1 map 0.5 -0.1\n", r"z:1: stddev: expected a finite number >= 0"),
    ("q1 map 0.5 0.1\nq2 map 0.5 0.1\nq1 map 0.4 0.1\n",
     r"z:3: query 'q1' and measure 'map' given twice \(first on line 1\)"),
    ("# only a comment\n", r"z: no z-score lines"),
    ("", r"z: empty file"),
])
def test_reader_errors_name_the_file_and_line(tmp_path, monkeypatch, text, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "z").write_text(text)
    with pytest.raises(InputError, match=message):
        read_zscores("z")


@pytest.mark.parametrize("mapping, message", [
    ({"q1": {"map": (0.5,)}}, "expected \\(mean, stddev\\), two numbers"),
    ({"q1": {"map": ("0.5", 0.1)}}, "expected \\(mean, stddev\\), two numbers"),
    ({"q1": {"map": (0.5, -1.0)}}, "stddev: expected a finite number >= 0"),
    ({"q1": [("map", 0.5, 0.1)]}, "expected {measure: \\(mean, stddev\\)} for each query"),
    ({}, "no z-score lines"),
])
def test_mapping_errors(mapping, message):
    with pytest.raises(InputError, match=message):
        read_zscores(mapping)



def test_command_line_zscores_missing_needs_a_file(tmp_path):
    (tmp_path / "qrels").write_text("q1 0 d1 1\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 1.0 r\n")
    (tmp_path / "z").write_text("q1 recip_rank 0.5 0.5\n")
    base = [sys.executable, "-m", "rankwise", "evaluate", "-m", "RR", str(tmp_path / "qrels"),
            str(tmp_path / "run")]
    refused = subprocess.run([*base, "--zscores-missing", "undefined"], capture_output=True,
                             text=True, timeout=60)
    assert refused.returncode == 2
    assert "--zscores-missing: only with -Z/--zscores FILE" in refused.stderr
    done = subprocess.run([*base, "-Z", str(tmp_path / "z"), "--zscores-missing", "undefined",
                           "-f", "trec"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "Zrecip_rank            \tall\t1.0000"
    bad = subprocess.run([*base, "-Z", str(tmp_path / "nothere")], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and "nothere: file not found" in bad.stderr
