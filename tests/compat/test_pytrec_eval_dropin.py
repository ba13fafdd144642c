"""rankwise.compat.pytrec_eval against the real pytrec_eval: same keys, key order, queries,
query order and values (to 1e-6, NaN where pytrec_eval gives NaN) for every measure spelling,
on generated collections with ties, grades, unjudged documents, negative grades, one-sided
queries, run queries with an empty ranking, judged queries with no judgment left, and scores
that only tie in float32.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys

import pytest

real = pytest.importorskip("pytrec_eval")

from rankwise import InputError  # noqa: E402
from rankwise.compat import pytrec_eval as ours  # noqa: E402
from tests.peers.generate import make_collection  # noqa: E402

EVERY_MEASURE = sorted(ours.supported_measures)


def tricky(seed: int, negative: bool = False, num_queries: int = 200, empty: int = 0):
    """A generated collection, with the run's keys shuffled, ``empty`` rankings emptied, a judged
    query left without judgments, and some scores nudged by 1e-9 (distinct in float64, tied in
    float32)."""
    coll = make_collection(seed, num_queries=num_queries, negative_grades=negative)
    rng = random.Random(seed)
    keys = list(coll.run)
    rng.shuffle(keys)
    run = {q: dict(coll.run[q]) for q in keys}
    judged_in_run = [q for q in keys if q in coll.qrels]
    for q in judged_in_run[:empty]:
        run[q] = {}  # judged, in the run, nothing ranked
    for q in judged_in_run[empty:40]:
        docs = list(run[q])
        for d in docs[::3]:
            run[q][d] += 1e-9  # ties in float32 only
    qrels = {q: dict(v) for q, v in coll.qrels.items()}
    qrels[judged_in_run[-1]] = {}  # pytrec_eval drops queries without judgments
    return qrels, run


def assert_same(expected: dict, got: dict) -> int:
    """Same queries in the same order, same keys in the same order, same values."""
    assert list(got) == list(expected), "queries or their order differ"
    checked = 0
    for qid, theirs in expected.items():
        mine = got[qid]
        assert list(mine) == list(theirs), (qid, list(mine), list(theirs))
        for key, value in theirs.items():
            if math.isnan(value):
                assert math.isnan(mine[key]), (qid, key, mine[key])
            else:
                assert mine[key] == pytest.approx(value, abs=1e-6), (qid, key, mine[key], value)
            checked += 1
    return checked


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("level,judged_only", [(1, False), (2, False), (1, True), (2, True)])
def test_every_measure_every_query(seed, level, judged_only):
    qrels, run = tricky(seed)
    expected = real.RelevanceEvaluator(qrels, EVERY_MEASURE, relevance_level=level,
                                       judged_docs_only_flag=judged_only).evaluate(run)
    got = ours.RelevanceEvaluator(qrels, EVERY_MEASURE, relevance_level=level,
                                  judged_docs_only_flag=judged_only).evaluate(run)
    assert assert_same(expected, got) > 10_000


def pytrec_eval_elsewhere(calls: list[tuple]) -> list[dict]:
    """pytrec_eval's results for ``[(qrels, run, measures, relevance_level, judged_only)]``,
    computed in a child process.

    pytrec_eval 0.5.11 corrupts memory on a run holding a judged query with an empty dict:
    with two or more measures (e.g. Rprec and bpref, or recall and gm_bpref) the interpreter
    dies with a segmentation fault, one measure at a time works. Those comparisons run one
    measure per evaluator, in a child process, so that a crash cannot take the test session
    down with it.
    """
    code = ("import json, sys, pytrec_eval\n"
            "out = [pytrec_eval.RelevanceEvaluator(q, m, relevance_level=l, "
            "judged_docs_only_flag=j).evaluate(r) for q, r, m, l, j in json.load(sys.stdin)]\n"
            "json.dump(out, sys.stdout)")
    child = subprocess.run([sys.executable, "-c", code], input=json.dumps(calls), text=True,
                           capture_output=True, timeout=120)
    if child.returncode != 0:
        pytest.skip(f"pytrec_eval itself failed (exit status {child.returncode}): "
                    f"{child.stderr[-300:]}")
    return json.loads(child.stdout)


def merge(per_measure: list[dict], order: list[str]) -> dict:
    """One result per measure -> one dict per query, keys in ``order`` (trec_eval's order is
    checked by the tests that ask for several measures at once)."""
    merged: dict = {}
    for result in per_measure:
        for qid, values in result.items():
            merged.setdefault(qid, {}).update(values)
    return {q: {k: v[k] for k in sorted(v, key=order.index)} for q, v in merged.items()}


def empty_ranking_values(evaluator, r: int) -> dict:
    """What trec_eval 9's arithmetic gives a judged query with nothing ranked and R relevant:
    0 for every measure except num_q (1), num_rel (R), the logs of the floored geometric
    means, and NaN (0/0) for 11pt_avg and the recall levels asking for 0 relevant documents."""
    out = {}
    for key in evaluator.measures:
        if key == "num_q":
            out[key] = 1.0
        elif key == "num_rel":
            out[key] = float(r)
        elif key in ("gm_map", "gm_bpref"):
            out[key] = math.log(1e-5)
        elif key == "11pt_avg":
            out[key] = math.nan
        elif key.startswith("iprec_at_recall_"):
            out[key] = math.nan if int(float(key[16:]) * r + 0.9) == 0 else 0.0
        else:
            out[key] = 0.0
    return out


@pytest.mark.parametrize("judged_only", [False, True])
def test_judged_queries_with_empty_rankings(judged_only):
    qrels, run = tricky(1, empty=5, num_queries=120)
    evaluator = ours.RelevanceEvaluator(qrels, EVERY_MEASURE, judged_docs_only_flag=judged_only)
    expected = merge(pytrec_eval_elsewhere(
        [(qrels, run, [m], 1, judged_only) for m in EVERY_MEASURE]), evaluator.measures)
    got = evaluator.evaluate(run)
    assert sum(not run[q] for q in got) == 5
    assert assert_same_but_empty(expected, got, evaluator, qrels, run) > 5_000


def assert_same_but_empty(expected: dict, got: dict, evaluator, qrels: dict, run: dict,
                          level: int = 1) -> int:
    """:func:`assert_same`, except for judged queries whose ranking is an empty dict.

    pytrec_eval reports those queries (checked: same queries, same keys) but its values
    for them are not a reference: they read memory that was never written (runid came out
    as 6.9e-310), depend on the measures computed before them in the same call (num_rel is
    R with one set of measures and 0 with another; 11pt_avg NaN next to iprec_at_recall and
    0 alone), and some pairs of measures crash the interpreter. rankwise gives them trec_eval
    9's arithmetic for an empty ranking.
    """
    expected = {q: dict(v) for q, v in expected.items()}
    for qid in got:
        if run[qid]:
            continue
        r = sum(g >= level for g in qrels[qid].values())
        assert_same({qid: empty_ranking_values(evaluator, r)}, {qid: got[qid]})
        assert list(expected[qid]) == list(got[qid])
        expected[qid] = got[qid]
    return assert_same(expected, got)


def test_negative_grades_and_reuse_of_one_evaluator():
    qrels, run = tricky(7, negative=True)
    theirs = real.RelevanceEvaluator(qrels, EVERY_MEASURE)
    mine = ours.RelevanceEvaluator(qrels, EVERY_MEASURE)
    assert_same(theirs.evaluate(run), mine.evaluate(run))
    other = {q: dict(list(v.items())[:5]) for q, v in run.items()}  # a second, shorter run
    assert_same(theirs.evaluate(other), mine.evaluate(other))
    assert_same(theirs.evaluate(run), mine.evaluate(run))


def test_float32_ties_as_pytrec_eval():
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 0.1 + 1e-9, "b": 0.1}}
    expected = real.RelevanceEvaluator(qrels, {"recip_rank", "bpref"}).evaluate(run)
    assert expected["q"]["recip_rank"] == 0.5  # a float32 tie, b first (doc id descending)
    assert ours.RelevanceEvaluator(qrels, {"recip_rank", "bpref"}).evaluate(run) == expected


SPELLINGS = [
    ["P.10"], ["P_10"], ["ndcg_cut.10"], ["map"], ["map_cut.100"], ["recall.100"],
    ["recip_rank"], ["Rprec"], ["bpref"], ["ndcg"], ["set_F"], ["iprec_at_recall"], ["success"],
    ["P"], ["ndcg_cut"], ["map_cut"], ["recall"], ["relative_P"], ["P.5,10", "P_20"],
    ["P", "P_20"], ["P.10,5,10"], ["P_5x"], ["P.00005"], ["map_cut.1000,5"], ["success.2,1"],
    ["iprec_at_recall.0.25,0.1"], ["set_F.0.5"], ["set_F.2,0.5"], ["official"],
    ["official", "P_3"], ["map.5"], ["gm_map"], ["gm_bpref"], ["11pt_avg"], ["num_q", "runid"],
    ["11pt_avg.0.2,0.5,0.8"], ["11pt_avg.0.8,0.2,0.2"], ["11pt_avg.0.05", "iprec_at_recall"],
    ["relstring", "num_ret"], ["ndcg_cut.3", "ndcg_cut_10", "ndcg"], ("map", "P_10"),
]


@pytest.mark.parametrize("measures", SPELLINGS, ids=["|".join(m) for m in SPELLINGS])
def test_measure_spellings(measures):
    qrels, run = tricky(3, num_queries=60)
    expected = real.RelevanceEvaluator(qrels, measures).evaluate(run)
    got = ours.RelevanceEvaluator(qrels, measures).evaluate(run)
    assert_same(expected, got)
    assert ours.RelevanceEvaluator(qrels, measures).measures == list(next(iter(expected.values())))


@pytest.mark.parametrize("name", ["mapp", "P_x", "ndcg@10", "nDCG@10", "precision"])
def test_names_pytrec_eval_refuses_are_refused(name):
    with pytest.raises(ValueError, match="unsupported measure"):
        real.RelevanceEvaluator({"q": {"d": 1}}, [name])
    with pytest.raises(ValueError, match="unsupported measure") as info:
        ours.RelevanceEvaluator({"q": {"d": 1}}, [name])
    assert name in str(info.value)


def test_unsupported_names_suggest_the_closest_supported_ones():
    with pytest.raises(ValueError, match=r"unsupported measure mapp .*closest supported: map"):
        ours.RelevanceEvaluator({"q": {"d": 1}}, ["mapp"])
    with pytest.raises(ValueError, match=r"ndcg_cutt.*closest supported: ndcg_cut"):
        ours.RelevanceEvaluator({"q": {"d": 1}}, ["ndcg_cutt"])


def test_every_trec_eval_measure_and_nickname_is_computed():
    """Every measure pytrec_eval has, and its nicknames official, set and all_trec, are
    computed, with their keys, in their order, and their values (the preference and
    judgment-group nicknames need inputs rankwise does not read)."""
    assert set(ours.supported_nicknames) == {"official", "set", "all_trec"}
    for name, members in ours.supported_nicknames.items():
        assert members == set(real.supported_nicknames[name])
    qrels, run = tricky(4, negative=True, num_queries=60)
    expected = real.RelevanceEvaluator(qrels, {"all_trec"}).evaluate(run)
    got = ours.RelevanceEvaluator(qrels, {"all_trec"}).evaluate(run)
    assert assert_same(expected, got) > 4000  # about 50 judged queries x 95 keys


@pytest.mark.parametrize("name", ["P_0", "ndcg.1", "success.0", "iprec_at_recall.1.5"])
def test_names_that_crash_pytrec_eval_raise_instead(name):
    # pytrec_eval hands these to trec_eval, which reports an error and the interpreter dies
    # with a segmentation fault: the real package is not called here
    with pytest.raises(ValueError):
        ours.RelevanceEvaluator({"q": {"d": 1}}, [name])


def test_one_string_instead_of_a_collection_is_explained():
    with pytest.raises(ValueError, match="collection of names"):
        ours.RelevanceEvaluator({"q": {"d": 1}}, "map")


def test_the_module_docstring_says_what_is_refused():
    doc = ours.__doc__
    refused = doc[doc.index("These measure names raise"):]
    for name in ("infAP", "Rprec_mult", "utility", "binG", "G", "ndcg_rel", "Rndcg", "set",
                 "all_trec"):  # computed, as every pytrec_eval measure and these nicknames
        assert f"``{name}``" not in refused or name == "utility", name  # with coefficients
        assert ours.RelevanceEvaluator({"q": {"d": 1}}, [name]).evaluate({"q": {"d": 1.0}})
    for name in ("prefs", "all_prefs", "qrels_jg"):  # pytrec_eval's other nicknames
        assert f"``{name}``" in refused and name in real.supported_nicknames
        with pytest.raises(ValueError, match="unsupported measure"):
            ours.RelevanceEvaluator({"q": {"d": 1}}, [name])
    for name, spelled in (("set_F.0", "set_F``"), ("utility.2,-1,0,0", "utility``")):
        assert spelled in refused
        with pytest.raises(ValueError):
            ours.RelevanceEvaluator({"q": {"d": 1}}, [name])


def test_supported_measures_are_pytrec_eval_names():
    assert ours.supported_measures <= set(real.supported_measures)
    assert set(real.supported_measures) == ours.supported_measures
    assert ours.supported_nicknames["official"] == set(real.supported_nicknames["official"])
    assert ours.supported_nicknames["set"] == set(real.supported_nicknames["set"])


def test_edge_runs():
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}}
    measures = ["map", "iprec_at_recall", "11pt_avg", "num_rel", "gm_map", "P_5"]
    runs = [{}, {"zz": {"a": 1.0}}, {"q1": {}}, {"q2": {}, "q1": {}}, {"q1": {}, "zz": {"x": 1}},
            {"q2": {"zz": 1.0}, "q1": {}}]
    # all measures in one evaluator, as users call it (this set does not crash pytrec_eval)
    expected = pytrec_eval_elsewhere([(qrels, run, measures, 1, False) for run in runs])
    evaluator = ours.RelevanceEvaluator(qrels, measures)
    for theirs, run in zip(expected, runs):
        assert_same_but_empty(theirs, evaluator.evaluate(run), evaluator, qrels, run)
    # every ranked document unjudged and removed (-J): NaN interpolated precision as pytrec_eval
    run = {"q1": {"x": 1.0, "y": 0.5}, "q2": {"c": 1.0}}
    expected = real.RelevanceEvaluator(qrels, measures, judged_docs_only_flag=True).evaluate(run)
    got = ours.RelevanceEvaluator(qrels, measures, judged_docs_only_flag=True).evaluate(run)
    assert math.isnan(got["q1"]["iprec_at_recall_0.00"]) and math.isnan(got["q1"]["11pt_avg"])
    assert_same(expected, got)


def test_eleven_point_average_at_given_levels_on_empty_rankings():
    """11pt_avg at given levels on rankings emptied by judged_docs_only_flag: NaN where one of
    its levels asks for no relevant document, (long)(p·R + 0.9) = 0, as trec_eval 9's 0/0."""
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2, "d": 1, "e": 1, "f": 1, "g": 1, "h": 1}}
    run = {"q1": {"x": 1.0, "y": 0.5}, "q2": {"z": 1.0}}
    for measures in (["11pt_avg.0.05"], ["11pt_avg.0.2,0.5"], ["11pt_avg.0.01,0.5"]):
        expected = real.RelevanceEvaluator(qrels, measures,
                                           judged_docs_only_flag=True).evaluate(run)
        got = ours.RelevanceEvaluator(qrels, measures, judged_docs_only_flag=True).evaluate(run)
        assert_same(expected, got)
    assert math.isnan(got["q1"]["11pt_avg"]) and math.isnan(got["q2"]["11pt_avg"])


def test_utility_coefficients_are_refused_with_the_way_around():
    # pytrec_eval sorts and de-duplicates them: utility.2,1,0,0 reaches trec_eval as 0,1,2,
    # which it rejects, and every value is 0
    qrels, run = {"q": {"a": 1, "b": 0}}, {"q": {"a": 2.0, "b": 1.0, "c": 0.5}}
    assert real.RelevanceEvaluator(qrels, ["utility.2,1,0,0"]).evaluate(run) == {
        "q": {"utility": 0.0}}
    with pytest.raises(ValueError, match=r"sorted and de-duplicated.*rankwise.evaluate"):
        ours.RelevanceEvaluator(qrels, ["utility.2,1,0,0"])
    assert ours.RelevanceEvaluator(qrels, ["utility"]).evaluate(run) == \
        real.RelevanceEvaluator(qrels, ["utility"]).evaluate(run)


def test_bad_runs_name_the_key():
    evaluator = ours.RelevanceEvaluator({"q": {"d": 1}}, {"map"})
    with pytest.raises(InputError, match=r"'q'/'d'.*expected a number"):
        evaluator.evaluate({"q": {"d": "high"}})
    with pytest.raises(InputError, match="finite"):
        evaluator.evaluate({"q": {"d": float("nan")}})
    with pytest.raises(InputError, match="expected a run"):
        evaluator.evaluate([("q", "d", 1.0)])


def test_integer_ids_are_read_as_their_strings():
    got = ours.RelevanceEvaluator({1: {2: 1}}, {"map"}).evaluate({1: {2: 0.5, 3: 0.9}})
    assert got == {1: {"map": 0.5}}


def test_parse_qrel_and_parse_run_as_pytrec_eval(tmp_path):
    qrels, run = tricky(4, num_queries=40)
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, v in qrels.items()
                                  for d, g in v.items()))
    run_path.write_text("".join(f"{q} Q0 {d} {i + 1} {s!r} tag\n" for q, v in run.items()
                                for i, (d, s) in enumerate(v.items())))
    for parse in ("parse_qrel", "parse_run"):
        path = qrels_path if parse == "parse_qrel" else run_path
        with open(path) as f:
            expected = getattr(real, parse)(f)
        with open(path) as f:
            got = getattr(ours, parse)(f)
        assert got == expected and list(got) == list(expected)
        assert all(list(got[q]) == list(expected[q]) for q in got)


def test_parse_errors_name_the_line(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq1 Q0 d1 3 0.5 t\n")
    with open(path) as f, pytest.raises(InputError,
                                        match=r"run.txt:3: .*'d1' appears twice .*line 1"):
        ours.parse_run(f)
    with pytest.raises(InputError, match=r"qrels lines:2: expected 4 fields"):
        ours.parse_qrel(["q1 0 d1 1", "q1 0 d2"])
    with pytest.raises(InputError, match=r"qrels lines:1: expected a number as the integer grade"):
        ours.parse_qrel(["q1 0 d1 high"])


def test_compute_aggregated_measure_as_pytrec_eval():
    for measure, values in [("map", [0.1, 0.5]), ("num_ret", [3.0, 4.0]), ("gm_map", [-1.0, -2.0])]:
        assert ours.compute_aggregated_measure(measure, values) == pytest.approx(
            real.compute_aggregated_measure(measure, values))


# ------------------------------------------------------------------- a BEIR-style evaluation


def beir_style_evaluate(pytrec_eval, qrels, results, k_values):
    """The evaluation code of a typical BEIR-style retrieval benchmark, written against the
    pytrec_eval module it is given (only the import differs between the two calls)."""
    ndcg, _map, recall, precision = {}, {}, {}, {}
    for k in k_values:
        ndcg[f"NDCG@{k}"] = 0.0
        _map[f"MAP@{k}"] = 0.0
        recall[f"Recall@{k}"] = 0.0
        precision[f"P@{k}"] = 0.0
    map_string = "map_cut." + ",".join(str(k) for k in k_values)
    ndcg_string = "ndcg_cut." + ",".join(str(k) for k in k_values)
    recall_string = "recall." + ",".join(str(k) for k in k_values)
    precision_string = "P." + ",".join(str(k) for k in k_values)
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {map_string, ndcg_string, recall_string, precision_string})
    scores = evaluator.evaluate(results)
    for query_id in scores.keys():
        for k in k_values:
            ndcg[f"NDCG@{k}"] += scores[query_id]["ndcg_cut_" + str(k)]
            _map[f"MAP@{k}"] += scores[query_id]["map_cut_" + str(k)]
            recall[f"Recall@{k}"] += scores[query_id]["recall_" + str(k)]
            precision[f"P@{k}"] += scores[query_id]["P_" + str(k)]
    for k in k_values:
        ndcg[f"NDCG@{k}"] = round(ndcg[f"NDCG@{k}"] / len(scores), 5)
        _map[f"MAP@{k}"] = round(_map[f"MAP@{k}"] / len(scores), 5)
        recall[f"Recall@{k}"] = round(recall[f"Recall@{k}"] / len(scores), 5)
        precision[f"P@{k}"] = round(precision[f"P@{k}"] / len(scores), 5)
    return ndcg, _map, recall, precision, scores


def test_beir_style_snippet_with_only_the_import_changed():
    qrels, run = tricky(5)
    k_values = [1, 3, 5, 10, 100, 1000]
    theirs = beir_style_evaluate(real, qrels, run, k_values)
    mine = beir_style_evaluate(ours, qrels, run, k_values)
    assert mine[:4] == theirs[:4]  # every rounded mean, exactly
    assert_same(theirs[4], mine[4])  # and every per-query number
