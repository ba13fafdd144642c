"""Every public function given an argument of the wrong kind (None, numbers, booleans, bytes,
arrays, frames, generators, nested values that are no numbers...) either takes it or raises
InputError (MeasureError for measures) naming what it expected: never an AttributeError,
TypeError, IndexError or OverflowError from inside numpy, pandas or pyarrow, and never a
write to a file descriptor (``open(True)`` is standard output)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import rankwise
from rankwise import InputError

QRELS = {"1": {"10": 1, "11": 0, "12": 2}, "2": {"20": 1}}
RUN = {"1": {"10": 0.9, "12": 0.8, "13": 0.7}, "2": {"20": 0.3, "21": 0.4}}


def odd_values() -> list:
    """Arguments of every wrong kind (made afresh: a generator is used up once read)."""
    return [None, 5, -1, 0, 1.5, math.nan, math.inf, True, "", "x", b"x", 10 ** 400,
            np.int64(3), pd.NA, object(), [], {}, [None], [5], ["x"], {1, 2}, ("AP", 5),
            {"1": None}, {"1": {"10": None}}, {"1": {"10": [1]}}, {"1": {None: 1}}, {"a": 5},
            np.array([]), np.array([[1]]), pd.Series([1]), pd.DataFrame(),
            pd.DataFrame({"query": [1]}), pl.DataFrame(), pa.table({}),
            pa.table({"query": ["1"], "doc": ["10"], "score": [None]}), (x for x in [])]


def write_run_to(path) -> None:
    """write_run to ``path``, but for the empty name: open("") raises Python's own
    FileNotFoundError, as for any name that cannot be opened."""
    if not (isinstance(path, str) and not path):
        rankwise.write_run(RUN, path)


CALLS = {
    "evaluate qrels": lambda v, _: rankwise.evaluate(v, RUN, ["AP"]),
    "evaluate run": lambda v, _: rankwise.evaluate(QRELS, v, ["AP"]),
    "evaluate measures": lambda v, _: rankwise.evaluate(QRELS, RUN, v),
    "evaluate conventions": lambda v, _: rankwise.evaluate(QRELS, RUN, ["AP"], conventions=v),
    "evaluate query column": lambda v, _: rankwise.evaluate(
        QRELS, pd.DataFrame({"query": ["1"], "doc": ["10"], "score": [1.0]}), ["AP"], query=v),
    "to_qrels": lambda v, _: rankwise.to_qrels(v),
    "to_run": lambda v, _: rankwise.to_run(v),
    "to_run name": lambda v, _: rankwise.to_run(RUN, name=v),
    "Run.from_columns name": lambda v, _: rankwise.evaluate(QRELS, rankwise.Run.from_columns(
        ["1"], ["10"], [1.0], name=v), ["AP"]).to_markdown(),
    "from_arrays y_true": lambda v, _: rankwise.from_arrays(v, [0.5]),
    "from_arrays y_score": lambda v, _: rankwise.from_arrays([1], v),
    "from_arrays group": lambda v, _: rankwise.from_arrays([1, 0], [0.5, 0.2], group=v),
    "from_arrays query": lambda v, _: rankwise.from_arrays([1, 0], [0.5, 0.2], query=v),
    "read_run": lambda v, _: rankwise.read_run(v),
    "write_run": lambda v, tmp: rankwise.write_run(v, tmp / "out.run"),
    "write_run path": lambda v, _: write_run_to(v),
    "write_qrels": lambda v, tmp: rankwise.write_qrels(v, tmp / "out.qrels"),
    "parse_measure": lambda v, _: rankwise.parse_measure(v),
    "parse_measures": lambda v, _: rankwise.parse_measures(v),
    "Conventions gain": lambda v, _: rankwise.Conventions(gain=v),
    "Conventions ties": lambda v, _: rankwise.Conventions(ties=v),
    "Conventions family_overrides": lambda v, _: rankwise.Conventions(family_overrides=v),
    "compare seed": lambda v, _: rankwise.compare(QRELS, {"a": RUN, "b": RUN}, ["AP"], seed=v),
    "compare runs": lambda v, _: rankwise.compare(QRELS, v, ["AP"]),
    "explain query": lambda v, _: rankwise.explain(QRELS, RUN, v, "AP"),
    "explain measure": lambda v, _: rankwise.explain(QRELS, RUN, "1", v),
    "standardize zscores": lambda v, _: rankwise.standardize(
        rankwise.evaluate(QRELS, RUN, ["AP"], per_query=True), v),
    "standardize missing": lambda v, _: rankwise.standardize(
        rankwise.evaluate(QRELS, RUN, ["AP"], per_query=True), {"1": {"map": (0.5, 0.1)}}, v),
    "evaluate_judgment_groups qrels": lambda v, _: rankwise.evaluate_judgment_groups(v, RUN),
    "evaluate_judgment_groups run": lambda v, _: rankwise.evaluate_judgment_groups(
        {"a": QRELS}, v),
    "evaluate_preferences prefs": lambda v, _: rankwise.evaluate_preferences(v, RUN),
    "evaluate_preferences run": lambda v, tmp: rankwise.evaluate_preferences(
        _prefs_file(tmp), v),
}


def _prefs_file(tmp):
    """A small preference file (qid jg jsg docid rel_level)."""
    path = tmp / "prefs"
    path.write_text("1 a s 10 2\n1 a s 11 1\n1 a s 12 0\n")
    return path


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS)
def test_an_argument_of_the_wrong_kind_is_taken_or_refused_as_input(call, tmp_path, capfd,
                                                                    monkeypatch):
    monkeypatch.chdir(tmp_path)  # a name such as "x" is written there
    for value in odd_values():
        try:
            call(value, tmp_path)
        except InputError:
            pass
    print("standard output still open")
    assert capfd.readouterr().out.endswith("standard output still open\n")


def learning_calls(library: str) -> dict:
    """The calls of one learning library's helpers (imported only when the test runs)."""
    if library == "torch":
        import torch

        import rankwise.torch as rt

        p, t, i = torch.tensor([0.9, 0.8, 0.1]), torch.tensor([1, 0, 1]), torch.tensor([0, 0, 1])
        return {"preds": lambda v: rt.evaluate(v, t, i, ["AP"]),
                "measures": lambda v: rt.evaluate(p, t, i, v),
                "ignore_index": lambda v: rt.evaluate(p, t, i, ["AP"], ignore_index=v),
                "k": lambda v: rt.ndcg(p, t, i, k=v),
                "RetrievalMetric": lambda v: rt.RetrievalMetric(v)}
    y, s, g = np.array([1, 0, 1]), np.array([0.9, 0.8, 0.1]), np.array([0, 0, 1])
    if library == "sklearn":
        import rankwise.sklearn as rs

        return {"measure": lambda v: rs.make_scorer(v), "group": lambda v: rs.make_scorer(
                    "AP", group=v), "y_true": lambda v: rs.make_scorer("AP").score(v, s, g),
                "y_score": lambda v: rs.make_scorer("AP").score(y, v, g),
                "groups": lambda v: rs.make_scorer("AP").score(y, s, v),
                "sample_weight": lambda v: rs.make_scorer("AP").score(y, s, g, sample_weight=v)}
    pytest.importorskip(library)
    boosting = __import__(f"rankwise.{library}", fromlist=["metric"])
    return {"measure": lambda v: boosting.metric(v),
            "labels": lambda v: boosting.metric("AP")(*((v, s, None, [2, 1]) if library ==
                                                        "lightgbm" else (v, s))),
            "scores": lambda v: boosting.metric("AP")(*((y, v, None, [2, 1]) if library ==
                                                        "lightgbm" else (y, v)))}


@pytest.mark.parametrize("library", ["torch", "sklearn", "lightgbm", "xgboost"])
def test_the_learning_helpers_take_or_refuse_arguments_of_the_wrong_kind(library):
    """As above for rankwise.torch, .sklearn, .lightgbm and .xgboost (ignore_index=10**400
    escaped as OverflowError, make_scorer(group=1.0) as TypeError when the scorer ran)."""
    pytest.importorskip("torch" if library == "torch" else "sklearn")
    for call in learning_calls(library).values():
        for value in odd_values():
            try:
                call(value)
            except InputError:
                pass
