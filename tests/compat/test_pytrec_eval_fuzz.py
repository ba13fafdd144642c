"""Seeded differential fuzz: rankwise.compat.pytrec_eval against the real pytrec_eval on many
small random collections with awkward inputs.

Each collection has 1 to 7 queries whose ids look like numbers ("01", "1", "10", "-5"),
are non-ASCII ("é", "日本", "😀") or hold a space; doc ids from one or two pools: ``d0``..,
numbers, number-like strings ("007", "1.0", "1e3", "-1"), non-ASCII ids whose byte order
differs from their code point order, and " ", tab, no-break space (an empty id is refused,
see ``test_an_empty_id_is_refused``). Grades -2..3, 0/1 or
0..4; scores integral (heavy ties, negative), rounded normals, normals scaled by 1e-3..1e3, all
tied, extreme values (±0.0, ±1e-300, ±1e30, 5e-324) and values 1e-9 apart (tied in float32
only). Queries only in the run, only in the judgments, judged with an empty dict, and run
queries with an empty dict. Every pytrec_eval measure (``sorted(supported_measures)``) plus
families with explicit parameters, at relevance_level 1, 2 and 3, with and without
judged_docs_only_flag. Compared: the queries returned and their order, each query's keys
and their order, and every value (to 1e-12; NaN where pytrec_eval gives NaN).

Two inputs are not given to pytrec_eval as they are, because it cannot compute them:

* a judged query whose ranking is an empty dict: pytrec_eval reads memory it never wrote
  and some measure pairs crash the interpreter (docs/switching/pytrec_eval.md); those
  queries are compared in a child process (keys only), and rankwise's values are checked
  against trec_eval 9's arithmetic for an empty ranking;
* a query whose every judgment is negative: trec_eval (9 in pytrec_eval, and 10)
  sizes its grade table from the largest grade + 1 (form_res_rels.c, ``max_rel + 1``), which is
  0 or negative here; the first such query makes form_res_rels fail (pytrec_eval ignores the
  failure and reports num_ret 0 and zeros), a later one writes through a stale pointer
  (segmentation fault). Such a query has no relevant document, and a judgment of grade 0 for
  a document nobody retrieved changes no measure of it, so pytrec_eval is given that
  judgment as well and must then agree with rankwise on the unchanged input.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

real = pytest.importorskip("pytrec_eval")

from rankwise import InputError  # noqa: E402
from rankwise.compat import pytrec_eval as ours  # noqa: E402
from tests.compat.fuzz_collections import as_pytrec_eval_can_take_it, collection  # noqa: E402
from tests.compat.test_pytrec_eval_dropin import pytrec_eval_elsewhere  # noqa: E402

MEASURES = sorted(ours.supported_measures) + [
    "P.3", "ndcg_cut.5,10", "map_cut.2,7", "recall.3", "iprec_at_recall.0.33,0.66",
    "Rprec_mult.0.5,1.5", "success.2", "relative_P.4", "11pt_avg.0.2,0.5", "set_F.0.5",
]


def assert_same(expected: dict, got: dict, context) -> int:
    assert list(got) == list(expected), (context, "queries", list(expected), list(got))
    compared = 0
    for qid, theirs in expected.items():
        mine = got[qid]
        assert list(mine) == list(theirs), (context, qid, "keys")
        for key, value in theirs.items():
            if math.isnan(value):
                assert math.isnan(mine[key]), (context, qid, key, mine[key])
            else:
                assert abs(mine[key] - value) <= 1e-12, (context, qid, key, value, mine[key])
            compared += 1
    return compared


def compare(seeds) -> int:
    compared = 0
    for seed in seeds:
        qrels, run = collection(seed)
        their_qrels, their_run = as_pytrec_eval_can_take_it(qrels, run)
        mine_run = {q: v for q, v in run.items() if q in their_run}
        for level in (1, 2, 3):
            for judged_only in (False, True):
                expected = real.RelevanceEvaluator(
                    their_qrels, MEASURES, relevance_level=level,
                    judged_docs_only_flag=judged_only).evaluate(their_run)
                got = ours.RelevanceEvaluator(qrels, MEASURES, relevance_level=level,
                                              judged_docs_only_flag=judged_only).evaluate(
                    mine_run)
                compared += assert_same(expected, got, (seed, level, judged_only))
    return compared


def test_random_collections():
    assert compare(range(100)) > 50_000


@pytest.mark.slow
def test_random_collections_many():
    assert compare(range(100, 700)) > 300_000


def test_the_generator_covers_the_awkward_cases():
    seen = {"only run", "only qrels", "empty ranking", "no judgment", "all negative",
            "unicode", "numeric-looking", "all tied"}
    for seed in range(100):
        qrels, run = collection(seed)
        for q, v in run.items():
            seen.discard("only run" if q not in qrels else "")
            seen.discard("empty ranking" if not v and qrels.get(q) else "")
            seen.discard("all tied" if len(v) > 2 and len(set(v.values())) == 1 else "")
            seen.discard("unicode" if any(not d.isascii() for d in v) else "")
            seen.discard("numeric-looking" if any(d[:1].isdigit() for d in v) else "")
        for q, v in qrels.items():
            seen.discard("only qrels" if q not in run else "")
            seen.discard("no judgment" if not v else "")
            seen.discard("all negative" if v and max(v.values()) < 0 else "")
    assert not seen


def empty_ranking_value(key: str, r: int) -> float:
    """trec_eval 9's arithmetic for a judged query with nothing ranked and R relevant."""
    if key == "num_q":
        return 1.0
    if key == "num_rel":
        return float(r)
    if key in ("gm_map", "gm_bpref"):
        return math.log(1e-5)
    if key == "11pt_avg":
        return math.nan
    if key.startswith("iprec_at_recall_"):
        return math.nan if int(float(key[16:]) * r + 0.9) == 0 else 0.0
    return 0.0


def test_judged_queries_with_empty_rankings():
    cases, measures = [], ["map", "P_5", "ndcg_cut_10", "recip_rank", "num_rel"]
    for seed in range(200):
        qrels, run = collection(seed)
        empty = [q for q, v in run.items() if not v and qrels.get(q)]
        if empty and all(max(v.values()) >= 0 for v in qrels.values() if v):
            cases.append((seed, qrels, run, empty))
    assert len(cases) >= 10
    calls = [(qrels, run, [m], 1, False) for _, qrels, run, _ in cases for m in measures]
    theirs = iter(pytrec_eval_elsewhere(calls))
    for seed, qrels, run, empty in cases:
        got = ours.RelevanceEvaluator(qrels, measures).evaluate(run)
        for measure in measures:
            expected = next(theirs)
            assert list(got) == list(expected), (seed, measure)  # the same queries
        for qid in empty:
            r = sum(g >= 1 for g in qrels[qid].values())
            for key, value in got[qid].items():
                want = empty_ranking_value(key, r)
                assert value == want or math.isnan(value) and math.isnan(want), (seed, key)


def test_queries_judged_only_negatively():
    """pytrec_eval (trec_eval's form_res_rels) cannot size its grade table for them (see the
    module docstring): alone, it reports num_ret 0 for a query that retrieved two
    documents. rankwise evaluates them as queries without relevant documents."""
    code = ("import json, pytrec_eval\n"
            "e = pytrec_eval.RelevanceEvaluator({'q': {'a': -1}}, {'num_ret', 'map'})\n"
            "print(json.dumps(e.evaluate({'q': {'a': 1.0, 'b': 0.5}})))")
    child = subprocess.run([sys.executable, "-c", code], text=True, capture_output=True,
                           timeout=60)
    if child.returncode == 0:
        assert json.loads(child.stdout) == {"q": {"num_ret": 0.0, "map": 0.0}}
    mine = ours.RelevanceEvaluator({"q": {"a": -1}}, {"num_ret", "map", "num_rel"})
    assert mine.evaluate({"q": {"a": 1.0, "b": 0.5}}) == {
        "q": {"num_ret": 2.0, "num_rel": 0.0, "map": 0.0}}


def test_grades_too_large_for_trec_eval():
    """trec_eval allocates one counter per grade level up to the largest grade: a grade of
    2**40 makes the allocation fail and pytrec_eval reports values that do not follow from the
    input; rankwise reads it as any grade above the relevance level."""
    qrels = {"q": {"a": 2 ** 40, "b": 0}}
    run = {"q": {"a": 0.5, "b": 0.9, "c": 0.1}}
    measures = {"map", "P_1", "recip_rank", "num_rel_ret"}
    code = ("import json, pytrec_eval\n"
            f"e = pytrec_eval.RelevanceEvaluator({qrels!r}, {sorted(measures)!r})\n"
            f"print(json.dumps(e.evaluate({run!r})))")
    child = subprocess.run([sys.executable, "-c", code], text=True, capture_output=True,
                           timeout=60)
    usual = real.RelevanceEvaluator({"q": {"a": 3, "b": 0}}, measures).evaluate(run)
    assert usual == {"q": {"num_rel_ret": 1.0, "map": 0.5, "recip_rank": 0.5, "P_1": 0.0}}
    if child.returncode == 0:
        assert json.loads(child.stdout) != usual  # pytrec_eval's values are not usable
    assert ours.RelevanceEvaluator(qrels, measures).evaluate(run) == usual


def test_an_empty_id_is_refused():
    """pytrec_eval evaluates an empty doc or query id; rankwise refuses it in every form, as
    a TREC file cannot hold one (docs/switching/pytrec_eval.md)."""
    qrels, run = {"q": {"": 1, "a": 0}}, {"q": {"": 0.5, "a": 0.9}}
    assert real.RelevanceEvaluator(qrels, {"map"}).evaluate(run) == {"q": {"map": 0.5}}
    with pytest.raises(InputError, match="empty doc id"):
        ours.RelevanceEvaluator(qrels, {"map"}).evaluate(run)
    with pytest.raises(InputError, match="empty query id"):
        ours.RelevanceEvaluator({"": {"a": 1}}, {"map"})


@pytest.mark.parametrize("level", [1, True, np.int64(1), np.int32(2), 2, 3])
def test_relevance_level_takes_what_pytrec_eval_takes(level):
    """Regression: a NumPy integer level was refused ("relevance_threshold must be a finite
    number"), which pytrec_eval takes as an int."""
    qrels, run = collection(3)
    qrels, run = as_pytrec_eval_can_take_it(qrels, run)
    expected = real.RelevanceEvaluator(qrels, MEASURES, relevance_level=level).evaluate(run)
    got = ours.RelevanceEvaluator(qrels, MEASURES, relevance_level=level).evaluate(run)
    assert_same(expected, got, level)


def test_relevance_levels_pytrec_eval_refuses():
    qrels, run = {"q": {"a": 1, "b": 0, "c": 2}}, {"q": {"a": 0.5, "b": 0.9, "c": 0.1}}
    with pytest.raises(TypeError, match="positive"):
        real.RelevanceEvaluator(qrels, {"map"}, relevance_level=0)
    # level 0 is trec_eval's -l0: every judged grade relevant, kept as an extension
    assert ours.RelevanceEvaluator(qrels, {"map"}, relevance_level=0).evaluate(run) == {
        "q": {"map": 1.0}}
    # a negative level would count documents judged with a negative grade (unjudged) as
    # relevant but not in R, giving AP 2.0: refused
    for level in (-1, -0.5, "2", 1j):
        with pytest.raises(InputError, match="relevance_level"):
            ours.RelevanceEvaluator(qrels, {"map"}, relevance_level=level)


def test_judged_docs_only_flag_is_a_bool():
    """Regression: any truthy value turned -J on, so judged_docs_only_flag="False" removed
    the unjudged documents; pytrec_eval refuses it (TypeError)."""
    qrels, run = {"q": {"a": 1}}, {"q": {"x": 0.9, "a": 0.5}}
    with pytest.raises(TypeError):
        real.RelevanceEvaluator(qrels, {"P_1"}, judged_docs_only_flag="False")
    with pytest.raises(InputError, match="judged_docs_only_flag"):
        ours.RelevanceEvaluator(qrels, {"P_1"}, judged_docs_only_flag="False")
    for flag in (0, 1, False, True, np.int64(1)):
        expected = real.RelevanceEvaluator(qrels, {"P_1"},
                                           judged_docs_only_flag=flag).evaluate(run)
        assert ours.RelevanceEvaluator(qrels, {"P_1"},
                                       judged_docs_only_flag=flag).evaluate(run) == expected


def test_inputs_refused_on_purpose():
    # documented differences (docs/switching/pytrec_eval.md): NaN and infinite scores are
    # refused, booleans as scores or grades are refused (rankwise's readers ask for 0 and 1)
    qrels = {"q": {"a": 1, "b": 0}}
    evaluator = ours.RelevanceEvaluator(qrels, {"map"})
    for score in (math.nan, math.inf, -math.inf, True):
        with pytest.raises(InputError):
            evaluator.evaluate({"q": {"a": score, "b": 1.0}})
    assert real.RelevanceEvaluator(qrels, {"map"}).evaluate({"q": {"a": True, "b": False}})
    with pytest.raises(InputError):
        ours.RelevanceEvaluator({"q": {"a": True, "b": False}}, {"map"})


SCORE_TEXTS = ["1", "1.5", "-0", "+5", ".5", "5.", "1e-3", "-1E3", "1_0", "inf", "nan"]
GRADE_TEXTS = ["0", "1", "-1", "+2", "007", "1_0", "3"]
LINE_IDS = ["d1", "é", "日本", "01", "1", "-1", "x-y", "😀", "a,b", "#1"]


def random_lines(seed: int) -> tuple[list[str], list[str]]:
    """Run and qrels lines: non-ASCII and number-like ids, tabs and repeated blanks between
    fields, CRLF and missing line ends, scores and grades in every spelling Python reads."""
    rng = np.random.default_rng(seed)
    run, qrels, seen = [], [], set()
    for rank in range(1, int(rng.integers(1, 30)) + 1):
        qid = str(rng.choice(["q1", "1", "é", "01"]))
        doc = str(rng.choice(LINE_IDS)) + str(rng.integers(0, 5))
        if (qid, doc) in seen:
            continue
        seen.add((qid, doc))
        blank = str(rng.choice([" ", "\t", "  ", " \t "]))
        end = str(rng.choice(["\n", "\r\n", "", "  \n"]))
        run.append(blank.join([qid, "Q0", doc, str(rank), str(rng.choice(SCORE_TEXTS)),
                               "tag"]) + end)
        qrels.append(blank.join([qid, "0", doc, str(rng.choice(GRADE_TEXTS))]) + end)
    return run, qrels


def test_parse_run_and_parse_qrel_on_random_lines():
    for seed in range(200):
        run, qrels = random_lines(seed)
        for parse, lines in (("parse_run", run), ("parse_qrel", qrels)):
            expected, got = getattr(real, parse)(lines), getattr(ours, parse)(lines)
            assert repr(dict(got)) == repr(dict(expected)), (seed, parse)  # NaN, order
    # both split on any Unicode white space: an id holding a no-break space is two fields
    with pytest.raises(ValueError):
        real.parse_run(["q1 Q0 x\u00a0y 1 1.0 tag"])
    with pytest.raises(InputError, match="expected 6 fields"):
        ours.parse_run(["q1 Q0 x\u00a0y 1 1.0 tag"])


def test_parsed_dicts_are_defaultdicts_as_pytrec_eval_returns():
    """Regression: the parsers returned plain dicts, so code reading a query absent from
    the file (``run[qid]`` for every judged query) raised KeyError where pytrec_eval's
    ``defaultdict(dict)`` gives ``{}``."""
    run, qrels = random_lines(1)
    for parse, lines in (("parse_run", run), ("parse_qrel", qrels)):
        expected, got = getattr(real, parse)(lines), getattr(ours, parse)(lines)
        assert type(got) is type(expected) and got.default_factory is dict
        assert got["not in the file"] == expected["not in the file"] == {}


def test_compute_aggregated_measure_on_random_values():
    rng = np.random.default_rng(0)
    for measure in ("map", "P_10", "num_ret", "num_rel_ret", "gm_map", "gm_bpref", "ndcg"):
        for size in (1, 2, 7, 100):
            values = list(rng.normal(size=size) * 3)
            assert ours.compute_aggregated_measure(measure, values) == pytest.approx(
                real.compute_aggregated_measure(measure, values), rel=1e-12), (measure, size)
