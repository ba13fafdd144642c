"""``explain`` on a query that is only in the run: refused by default (trec_eval evaluates
judged queries only), walked as a query without judgments under ``run_only_queries="zero"``
(LensKit's summary), its value equal to :func:`rankwise.evaluate`'s for that query, from the
API and from the command line.
"""

from __future__ import annotations

import json
import math

import pytest

import rankwise
from rankwise.cli import main
from rankwise.conventions import resolve
from rankwise.errors import InputError
from rankwise.explain import explain, explain_many
from tests.helpers import write

QRELS = {"q1": {"a": 2, "b": 0, "c": 1}}
RUN = {"q1": {"a": 3.0, "x": 2.0, "c": 1.0},
       "only": {"b": 4.0, "d": 3.0, "e": 3.0, "f": 0.5, "g": -1.0}}
MEASURES = ["P@1", "P@5", "R@3", "Success@2", "RR", "AP", "AP@3", "Rprec", "Bpref", "nDCG",
            "nDCG@3", "DCG@3", "ERR@3", "RBP", "RBPResid", "Judged@3", "infAP", "binG",
            "SetP", "SetF", "utility", "NumRet", "NumRel", "IPrec@0.5", "11pt_avg", "G",
            "ndcg_rel", "Rndcg", "ARHR", "RWRR@3", "MAE"]
CONVENTIONS = [{}, {"unjudged": "remove"}, {"no_relevant": "nan"}, {"no_relevant": "skip"},
               {"idcg_zero": "nan"}, {"short_lists": "length"}, {"max_depth": 2},
               {"ties": "docid_asc"}, {"ties": "optimistic"}, {"ideal": "retrieved"}]


def same(got: float, want: float) -> bool:
    return (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, abs=1e-15)


@pytest.mark.parametrize("overrides", CONVENTIONS, ids=lambda c: ",".join(
    f"{k}={v}" for k, v in c.items()) or "trec_eval")
def test_run_only_query_equals_evaluate(overrides):
    conv = resolve(None, run_only_queries="zero", **overrides)
    expected = rankwise.evaluate(QRELS, RUN, MEASURES, conv, per_query=True).per_query()
    assert "only" in expected
    for e in explain_many(QRELS, RUN, "only", MEASURES, conv):
        assert same(e.value, expected["only"][e.measure]), e.measure


def test_lenskit_profile():
    expected = rankwise.evaluate(QRELS, RUN, ["P@2", "R@2", "AP@2", "nDCG@2"], "lenskit",
                                 per_query=True, run_only_queries="zero").per_query()["only"]
    for measure, want in expected.items():
        e = explain(QRELS, RUN, "only", measure, "lenskit", run_only_queries="zero")
        assert same(e.value, want), measure


def test_every_document_is_unjudged_and_the_table_says_why():
    e = explain(QRELS, RUN, "only", "P@1", run_only_queries="zero")
    assert e.value == 0.0
    assert [r["doc"] for r in e.rows] == ["b"]
    assert "the query has no judgments" in e.to_text()


def test_refused_by_default_with_the_way_out():
    with pytest.raises(InputError, match="no judgments.*run_only_queries='zero'"):
        explain(QRELS, RUN, "only", "P@1")


def test_command_line_equals_evaluate(tmp_path, capsys):
    qrels = write(tmp_path, "qrels.txt", "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\n")
    run = write(tmp_path, "run.txt", "".join(
        f"{q} Q0 {d} {i + 1} {s} t\n" for q, docs in RUN.items()
        for i, (d, s) in enumerate(docs.items())))
    measures = ["P@1", "P@5", "RR", "AP", "nDCG@3", "ERR@3", "Bpref", "SetF"]
    assert main(["evaluate", qrels, run, "-m", *measures, "-q", "-f", "json",
                 "--run-only-queries", "zero"]) == 0
    per_query = json.loads(capsys.readouterr().out)["systems"]["t"]["per_query"]
    row = per_query["query_ids"].index("only")
    assert main(["explain", qrels, run, "--query", "only", "-m", *measures, "-f", "json",
                 "--run-only-queries", "zero"]) == 0
    explained = json.loads(capsys.readouterr().out)
    assert [e["measure"] for e in explained] == measures
    for e in explained:
        assert e["value"] == pytest.approx(per_query["values"][e["measure"]][row], abs=1e-15)
    assert main(["explain", qrels, run, "--query", "only", "-m", "P@1"]) == 2
    assert "run_only_queries='zero'" in capsys.readouterr().err
