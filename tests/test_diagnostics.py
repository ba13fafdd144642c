"""Pitfall warnings travel with the result and are printed by the CLI."""

from __future__ import annotations

import rankwise
from rankwise.cli import main
from tests.helpers import write

BINARY_QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
RUN = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0, "d": 0.5}}


def warnings(qrels, measures, **conventions):
    result = rankwise.evaluate(qrels, RUN, measures, **conventions)
    return result.systems["run"].warnings


def test_graded_measure_on_binary_judgments():
    assert warnings(BINARY_QRELS, ["nDCG@10", "AP"]) == [
        "nDCG@10 uses graded relevance, but every judgment is 0 or 1: it reduces to binary gains"]
    assert warnings({"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}, ["nDCG@10"]) == []


def test_threshold_above_every_grade():
    got = warnings(BINARY_QRELS, ["P@1", "AP", "P(rel=1)@1"], relevance_threshold=2)
    assert got == ["relevance threshold 2 is above every judged grade (the largest is 1): "
                   "no document is relevant for P@1, AP"]


def test_lists_shorter_than_the_cutoff():
    assert warnings(BINARY_QRELS, ["P@2", "P@3", "R@3"]) == [
        "P@3: 2 of 2 queries retrieved fewer than 3 documents; the missing ranks count as "
        "non-relevant"]


def test_warnings_in_json_and_on_the_command_line(tmp_path, capsys):
    result = rankwise.evaluate(BINARY_QRELS, RUN, ["nDCG"])
    again = rankwise.Result.from_json(result.to_json())
    assert again.systems["run"].warnings == result.systems["run"].warnings
    qrels = write(tmp_path, "qrels", "q1 0 a 1\nq1 0 b 0\n")
    run = write(tmp_path, "run", "q1 Q0 a 1 2 sys\nq1 Q0 b 2 1 sys\n")
    assert main(["evaluate", qrels, run, "-m", "nDCG@5", "P@5"]) == 0
    err = capsys.readouterr().err
    assert "rankwise: warning: sys: nDCG@5 uses graded relevance" in err
    assert "rankwise: warning: sys: P@5: 1 of 1 queries retrieved fewer than 5" in err
