"""What the report shows equals what rankwise computes elsewhere: the curves are the measures'
means, the summary is the comparison's, the embedded per-query values are the Result's
(within the stated quantisation), the drill-down holds the engine's ranked lists, and the
page holds nothing that could load from the network."""

from __future__ import annotations

import re

import numpy as np
import pytest

import rankwise
from rankwise.compare import compare_result
from rankwise.errors import InputError
from rankwise.report import report
from rankwise.report.data import RECALL_LEVELS, collect
from rankwise.report.html import (dequantise, quantise, read_payload, render_html, stored_values,
                                  write_html)
from tests.report.collection import make_collection

MEASURES = ["nDCG@10", "AP", "RR", "P@5"]


@pytest.fixture(scope="module")
def collection():
    return make_collection(queries=40, systems=3, depth=30)


@pytest.fixture(scope="module")
def data(collection):
    qrels, runs = collection
    return collect(qrels, runs, MEASURES, test="t", max_k=30)


@pytest.mark.parametrize("conventions", [{}, {"relevance_threshold": 2},
                                         {"short_lists": "length", "gain": "exponential"},
                                         {"no_relevant": "skip", "ideal": "retrieved"}])
def test_curves_are_the_measures_means(collection, conventions):
    qrels, runs = collection
    data = collect(qrels, runs, ["AP"], test="t", max_k=12, **conventions)
    ks = [1, 2, 5, 12]
    names = [f"{f}@{k}" for f in ("nDCG", "P", "R") for k in ks]
    names += [f"IPrec@{level}" for level in RECALL_LEVELS] + ["11pt_avg"]
    result = rankwise.evaluate(qrels, runs, names, **conventions)
    for name, s in data.systems.items():
        for family in ("nDCG", "P", "R"):
            got = s.curves[family][np.array(ks) - 1]
            want = [result.mean(f"{family}@{k}", name) for k in ks]
            assert got == pytest.approx(want, rel=1e-12, nan_ok=True), (name, family)
        want = [result.mean(f"IPrec@{level}", name) for level in RECALL_LEVELS]
        assert s.pr_mean == pytest.approx(want, rel=1e-12, nan_ok=True)
        if not conventions:
            assert s.pr_mean.mean() == pytest.approx(result.mean("11pt_avg", name))


def test_summary_is_the_comparisons(collection, data):
    qrels, runs = collection
    result = rankwise.evaluate(qrels, runs, MEASURES, per_query=True)
    comparison = compare_result(result, "sys0", "t")
    assert data.baseline == "sys0"
    for m in MEASURES:
        for name in runs:
            entry, want = data.summary[m][name], comparison.summary[m][name]
            assert entry["compared_mean"] == pytest.approx(want["mean"])
            assert (entry["ci_low"], entry["ci_high"]) == pytest.approx((want["ci_low"],
                                                                         want["ci_high"]))
            assert entry["markers"] == want["markers"]
            assert entry["aggregate"] == pytest.approx(result.mean(m, name))
    assert data.result.to_json() == result.to_json()


def test_payload_round_trip(collection, data):
    qrels, runs = collection
    header, arrays = read_payload(render_html(data))
    queries = header["queries"]
    assert queries == sorted({str(q) for s in data.systems.values() for q in s.query_ids})
    nq, ns = len(queries), len(runs)
    present = arrays[header["present"]].reshape(ns, nq)
    for i, (name, s) in enumerate(data.result.systems.items()):
        at = np.searchsorted(queries, s.query_ids.astype(str))
        assert present[i].sum() == len(at) and present[i, at].all()
        for m in MEASURES:
            v = header["values"][m]
            codes = arrays[v["block"]].reshape(ns, nq)[i, at]
            assert dequantise(codes, v["lo"], v["hi"]) == pytest.approx(
                s.values[m], abs=(v["hi"] - v["lo"]) / 131068 + 1e-12, nan_ok=True)
    assert header["summary"]["AP"]["sys1"]["markers"] == data.summary["AP"]["sys1"]["markers"]
    assert [s["name"] for s in header["systems"]] == list(runs)
    assert header["curves"]["k"] == 30 and len(header["curves"]["families"]["nDCG"][0]) == 30
    assert header["comparison"]["baseline"] == "sys0"
    assert len(header["comparison"]["tests"]) == 2 * len(MEASURES)


def test_drill_down_holds_the_ranked_lists(collection, data):
    from rankwise.core.judgments import index_judgments
    from rankwise.core.ranked import rank
    from rankwise.io import to_qrels, to_run

    qrels, runs = collection
    header, arrays = read_payload(render_html(data))
    queries, drill = header["queries"], header["drill"]
    nq, ns, depth = len(queries), len(runs), drill["depth"]
    grades = arrays[drill["grades"]].reshape(ns, nq, depth)
    docs = drill["docs"]
    chosen = arrays[docs["queries"]].tolist()
    assert chosen == list(range(nq))  # small: every query keeps its doc ids
    index = arrays[docs["index"]].reshape(len(chosen), ns, depth)
    judgments = index_judgments(to_qrels(qrels))
    for i, name in enumerate(runs):
        lists = rank(judgments, to_run(runs[name], name=name))
        for q, qid in enumerate(lists.query_ids):
            u = queries.index(qid)
            rows = np.arange(lists.offsets[q], min(lists.offsets[q] + depth, lists.offsets[q + 1]))
            want_docs = lists.docs.take(lists.run_row[rows]).to_pylist()
            got_docs = [docs["dict"][k] for k in index[u, i] if k != 4294967295]
            assert got_docs == want_docs
            want = ["-" if np.isnan(g) else g for g in lists.grade[rows]]
            got = [("-" if c == drill["unjudged"] else drill["levels"][c])
                   for c in grades[i, u] if c != drill["noDoc"]]
            assert got == want


def test_doc_budget_keeps_the_largest_differences(collection, data):
    header, arrays = read_payload(render_html(data, doc_budget=3 * 20 * 5))
    docs = header["drill"]["docs"]
    chosen = arrays[docs["queries"]]
    assert docs["stored"] == len(chosen) == 5
    queries = header["queries"]
    first = data.measures[0]
    spread = {}
    for q in queries:
        values = [dict(zip(s.query_ids, s.values[first])).get(q, np.nan)
                  for s in data.result.systems.values()]
        spread[q] = np.nanmax(np.abs(np.array(values) - values[0]))
    largest = sorted(queries, key=lambda q: -spread[q])[:5]
    assert sorted(queries[c] for c in chosen) == sorted(largest)


def test_quantisation():
    values = np.array([0.0, 1e-9, 0.123456789, 0.5, 1.0, np.nan])
    codes = quantise(values, 0.0, 1.0)
    back = dequantise(codes, 0.0, 1.0)
    assert back[[0, 3, 4]].tolist() == [0.0, 0.5, 1.0]
    assert np.isnan(back[5]) and codes[5] == 65535
    assert np.abs(back[:5] - values[:5]).max() <= 1 / 131068


def test_page_is_self_contained(data, tmp_path):
    text = render_html(data)
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert "connect-src 'none'" in text
    # no URL the browser could load: no src/href to anything but in-page anchors
    assert re.findall(r"(?:src|href)\s*=\s*(?![\"']?#)", text) == []
    assert len(re.findall(r"href=\"#", text)) == 7
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in text and "@import" not in text and "url(" not in text
    # the CSP hashes are those of the inline script and style
    import base64
    import hashlib

    from rankwise.report.assets import CSS, JS

    for body in (CSS, JS):
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in text
    assert text.count("<script") == 2


def test_python_entry_and_bad_arguments(collection, tmp_path):
    qrels, runs = collection
    path = report(qrels, runs, tmp_path / "sub" / "r.html", ["AP"], baseline="sys2", test="t",
                  max_k=5, title="<my & title>")
    text = path.read_text()
    assert "<title>&lt;my &amp; title&gt;</title>" in text
    header, _ = read_payload(text)
    assert header["baseline"] == "sys2" and header["title"] == "<my & title>"
    with pytest.raises(InputError, match="baseline is not one of the systems"):
        collect(qrels, runs, ["AP"], baseline="nope", test="t")
    with pytest.raises(InputError, match="max_k and depth must be positive"):
        collect(qrels, runs, ["AP"], max_k=0)
    with pytest.raises(rankwise.MeasureError):
        collect(qrels, runs, ["nope@3"])


def test_profile_names_and_conventions_travel(collection):
    qrels, runs = collection
    data = collect(qrels, {"a": runs["sys0"]}, ["ndcg_cut_5", "map"], "a", "pytrec_eval")
    assert data.measures == ["nDCG@5", "AP"] and data.comparison is None
    header, _ = read_payload(render_html(data))
    assert header["conventions"]["score_precision"] == "float32"
    assert header["conventionsChanged"]["recall_levels"] == "trec_eval9"


def test_checks_travel_with_each_system(collection, data):
    from rankwise.core.judgments import index_judgments
    from rankwise.core.ranked import rank
    from rankwise.diagnostics import run_checks
    from rankwise.io import to_qrels, to_run
    from rankwise.measures import parse_measures

    qrels, runs = collection
    lists = rank(index_judgments(to_qrels(qrels)), to_run(runs["sys2"], name="sys2"))
    header, _ = read_payload(render_html(data))
    got = header["systems"][2]["checks"]
    want = [dict(c.to_dict(), message=[c.message])  # a message as pieces: no id in it
            for c in run_checks(lists, parse_measures(MEASURES))]
    # the report also runs the checks that need the per-query values
    assert [c for c in got if c["code"] not in ("carried_by_few", "tie_sensitivity")] == want
    codes = {c["code"] for c in got}
    assert {"short_lists", "one_side", "judged_at_k"} <= codes


def test_write_html_times_itself(data, tmp_path):
    path = write_html(data, tmp_path / "r.html")
    assert path.exists() and data.timings["write"] > 0
    assert set(data.timings) >= {"evaluate", "compare", "write"}


def test_ids_that_differ_by_a_trailing_nul_stay_apart():
    qrels = {"q": {"a": 1}, "q\x00": {"b": 1}, "r": {"a": 1}}
    runs = {"x": {"q": {"a": 1.0}, "q\x00": {"a": 1.0}, "r": {"b": 1.0, "a": 0.5}},
            "y": {"q": {"b": 1.0}, "q\x00": {"b": 1.0}, "r": {"a": 1.0}}}
    data = collect(qrels, runs, ["AP"], max_k=2, test="t")
    header, arrays = read_payload(render_html(data))
    assert header["queries"] == ["q", "q\x00", "r"]
    assert stored_values(header, arrays, "AP").tolist() == [[1.0, 0.0, 0.5], [0.0, 1.0, 1.0]]
    queries, x, y = data.paired("AP", "x", "y")
    assert queries.tolist() == ["q", "q\x00", "r"] and x.tolist() == [1.0, 0.0, 0.5]
    assert arrays[header["pr"]["sample"][0]["queries"]].tolist() == [0, 1, 2]


def test_ranks_are_kept_where_codes_make_two_values_equal():
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}}
    runs = {"x": {"q1": {"a": 1.0}, "q2": {"a": 1.0}}, "y": {"q1": {"a": 1.0}, "q2": {"a": 1.0}},
            "z": {"q1": {"b": 1.0, "a": 0.5}, "q2": {"a": 1.0}}}
    data = collect(qrels, runs, ["AP", "MAE"], test="t", max_k=2)
    data.result.systems["y"].values["AP"][0] -= 1e-9  # below the codes' step of 1.5e-5
    header, arrays = read_payload(render_html(data))
    assert "ranks" not in header["values"]["MAE"]  # its codes keep every difference
    ranks = arrays[header["values"]["AP"]["ranks"]].reshape(3, 2)
    assert ranks.tolist() == [[2, 0], [1, 0], [0, 0]]  # x above y above z on q1, all equal on q2
    data.result.systems["y"].values["AP"][0] += 1e-9
    assert "ranks" not in read_payload(render_html(data))[0]["values"]["AP"]


#: judgments and runs where a gain map with a negative gain makes nDCG, G and Rndcg negative
NEGATIVE_QRELS = {"q1": {"a": 1, "b": 2, "c": 1}, "q2": {"a": 1}, "q3": {"a": 2, "b": 1}}
NEGATIVE_RUNS = {"x": {"q1": {"a": 3.0, "b": 2.0}, "q2": {"a": 1.0}, "q3": {"b": 2.0, "a": 1.0}},
                 "y": {"q1": {"b": 3.0}, "q2": {"a": 1.0}, "q3": {"a": 2.0}}}
NEGATIVE_GAINS = {0: 0.0, 1: -3.0, 2: 1.0}


def test_values_outside_a_measures_bounds_are_stored_as_they_are():
    # nDCG's bounds are [0, 1], but a negative gain makes it negative: the page stored the
    # per-query values clipped to the bounds (-2.3691 showed as 0.0000)
    data = collect(NEGATIVE_QRELS, NEGATIVE_RUNS, ["nDCG@3", "G", "Rndcg", "AP"], test="t",
                   max_k=3, gain=NEGATIVE_GAINS)
    header, arrays = read_payload(render_html(data))
    for m in data.measures:
        exact = np.array([data.result.systems[s].values[m] for s in data.systems])
        assert exact.min() < 0 or m == "AP"
        assert np.allclose(stored_values(header, arrays, m), exact, atol=1e-5, rtol=0), m
        assert header["values"][m]["lo"] == min(0.0, exact.min()), m
