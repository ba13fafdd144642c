"""The ``pytrec_eval`` profile against pytrec_eval-terrier itself, query by query.

pytrec_eval embeds trec_eval 9 and keeps run scores in float32; the profile is trec_eval 10's
conventions with ``score_precision="float32"`` and ``recall_levels="trec_eval9"``. Every
measure of ``test_pytrec_eval.py`` plus ``iprec_at_recall`` at all eleven levels and
``11pt_avg`` (which differ from trec_eval 10 by design and must match under the profile) is
compared to 1e-9 on the shared data of ``profile_data.py``: tied scores included, since
pytrec_eval breaks ties by doc id descending as trec_eval does, and the float32 pair included.

A query given as an empty dict (``{qid: {}}``) is evaluated by both as an empty ranking (0
for every measure); pytrec_eval gives NaN for ``iprec_at_recall_0.00`` there (0/0 retrieved)
and so for ``11pt_avg``, where rankwise gives 0, as for every other measure.
"""

from __future__ import annotations

import math

import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")

from tests.peers.profile_compare import assert_same, mismatches, rankwise_values  # noqa: E402
from tests.peers.profile_data import make_profile_data  # noqa: E402
from tests.peers.test_pytrec_eval import PYTREC_MEASURES, TREC_NAMES  # noqa: E402

LEVELS = [f"iprec_at_recall_{p / 10:.2f}" for p in range(11)]
NAMES = list(dict.fromkeys(TREC_NAMES + LEVELS + ["11pt_avg"]))
ASKED = PYTREC_MEASURES | {"11pt_avg"}
# (seed, negative grades, relevance level, judged documents only)
CASES = [(0, False, 1, False), (1, True, 1, False), (2, False, 2, False), (3, False, 1, True),
         (4, True, 2, True)]


def pytrec_values(data, relevance_level: int = 1, judged_only: bool = False) -> dict:
    evaluator = pytrec_eval.RelevanceEvaluator(data.qrels, ASKED, relevance_level=relevance_level,
                                               judged_docs_only_flag=judged_only)
    return {qid: {n: v[n] for n in NAMES} for qid, v in evaluator.evaluate(data.run).items()}


def ours(data, relevance_level: int = 1, judged_only: bool = False) -> dict:
    return rankwise_values(data.qrels, data.run, {n: n for n in NAMES}, "pytrec_eval",
                           relevance_threshold=relevance_level,
                           unjudged="remove" if judged_only else "nonrelevant")


@pytest.mark.parametrize("seed, negative, level, judged_only", CASES,
                         ids=[f"seed{c[0]}-neg{int(c[1])}-l{c[2]}-J{int(c[3])}" for c in CASES])
def test_every_measure_every_query(seed, negative, level, judged_only):
    data = make_profile_data(seed, negative_grades=negative)
    theirs = pytrec_values(data, level, judged_only)
    empty = theirs["x-empty-run"]  # 0/0 is NaN in pytrec_eval, 0 in rankwise (module docstring)
    assert math.isnan(empty[LEVELS[0]]) and math.isnan(empty["11pt_avg"]), empty
    assert all(v == 0 for k, v in empty.items() if k not in ("num_rel", LEVELS[0], "11pt_avg"))
    empty[LEVELS[0]] = empty["11pt_avg"] = 0.0
    if judged_only:
        # -J empties lists of unjudged documents only: trec_eval's 0/0 again (see
        # test_pytrec_eval.py); rankwise gives 0 there, as for every other measure
        for qid, values in theirs.items():
            for name in LEVELS + ["11pt_avg"]:
                if math.isnan(values[name]):
                    assert values["num_ret"] == 0, (qid, name)
                    values[name] = 0.0
    mine = ours(data, level, judged_only)
    assert assert_same(mine, theirs, 1e-9, f"seed {seed}") == len(theirs) * len(NAMES)


def test_empty_dict_query_is_evaluated_as_an_empty_ranking_by_both():
    data = make_profile_data(0, num_queries=3)
    theirs = pytrec_values(data)["x-empty-run"]
    assert theirs["num_ret"] == 0 and theirs["map"] == 0 and math.isnan(theirs[LEVELS[0]])
    mine = ours(data)["x-empty-run"]
    assert mine["num_ret"] == 0 and mine["map"] == 0 and mine[LEVELS[0]] == 0


def test_float32_scores_tie_as_in_pytrec_eval():
    # 2^24 + 1 > 2^24 in float64, equal in float32: the non-relevant 'b' then comes first
    # (doc id descending), so RR is 0.5 and bpref 0, where trec_eval 10 gives 1.0 and 0.5
    data = make_profile_data(0, num_queries=2).only(lambda q: q == "x-float32")
    names = {"recip_rank": "RR", "bpref": "Bpref", "P_1": "P@1"}
    theirs = pytrec_eval.RelevanceEvaluator(data.qrels, set(names)).evaluate(data.run)
    mine = rankwise_values(data.qrels, data.run, names, "pytrec_eval")
    reference = rankwise_values(data.qrels, data.run, names, "trec_eval")
    assert theirs["x-float32"] == mine["x-float32"] == {"recip_rank": 0.5, "bpref": 0.0,
                                                        "P_1": 0.0}
    assert reference["x-float32"] == {"recip_rank": 1.0, "bpref": 0.5, "P_1": 1.0}


def test_profile_differs_from_trec_eval_10_only_where_documented():
    # the profile is needed, and only for two things: without it the middle recall levels
    # (trec_eval 9 rounding) differ, and so does the float32 query; nothing else does
    data = make_profile_data(1).without("x-empty-run")
    reference = rankwise_values(data.qrels, data.run, {n: n for n in NAMES}, "trec_eval")
    differing = {(q, n) for q, n, _, _ in mismatches(reference, pytrec_values(data), 1e-9)}
    by_rounding = set(LEVELS[1:10]) | {"11pt_avg"}
    assert {(q, n) for q, n in differing if q != "x-float32" and n not in by_rounding} == set()
    assert any(q == "x-float32" for q, _ in differing)
    assert any(n in by_rounding for q, n in differing if q != "x-float32")
