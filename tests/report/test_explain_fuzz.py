"""``explain`` against the engine on random collections: every family with varied parameters
(cutoffs, rel=, gain maps with negative gains, RBP's p, ERR's max_grade, recall levels) under
random combinations of every convention field and under each profile, on collections with
ties, unjudged documents, negative grades, empty rankings, queries only in the judgments or
only in the run, and queries without relevant documents; and runs with duplicated documents
under each ``duplicates`` policy. The value an explanation ends with must be
:func:`rankwise.evaluate`'s for that query, for every query evaluate reports.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import rankwise
from rankwise.conventions import CHOICES, PROFILES, Conventions
from rankwise.errors import InputError
from rankwise.explain import explain, explain_many
from tests.compat.fuzz_collections import collection
from tests.report.test_explain import MEASURES as WORKED_MEASURES
from tests.report.test_explain import _collection

#: the worked examples' measures, and parameters they leave out
MEASURES = WORKED_MEASURES + [
    "SetF(beta=0.5)", "RBP(p=0.95)", "RBP(p=0.5)@3", "RBP(rel=1)", "ERR(max_grade=1)",
    "nDCG(rel=2)", "DCG(gain=exp,rel=2)@3", "IDCG(gain={0:-1,1:2})", "CG(gain=exp)",
    "CG(gain={0:-2,2:1})", "nDCG(base=3)@4", "RprecMult@2", "IPrec@1", "IPrec@0",
    "RWRR(gain={0:-1,1:1})", "DCG(gain={0:-1,1:2})", "nDCG(gain={0:-0.5})@5", "Hits(rel=2)",
    "RR(rel=2)@2", "Bpref(rel=2)", "NumRel(rel=2)", "binG(rel=2)",
    "Utility(rel_ret=2,nonrel_missed=1)", "Judged@1", "Unjudged@1", "ndcg_rel(gain={0:-1,1:3})",
    "G(gain={1:5})", "Rndcg(rel=2)", "RBPResid(p=0.95)", "ARHR(rel=2)", "F1(rel=2)@3",
    "RelP(rel=2)@2", "SetRelP"]

#: each field's values explain can show (every one but ties='expected', which it refuses)
FIELDS = {name: [v for v in values if v != "expected"] for name, values in CHOICES.items()
          if name != "duplicates"}  # dict runs hold no duplicate
FIELDS.update(max_depth=[None, 1, 3, 7], relevance_threshold=[1, 2, 0, 0.5],
              discount_base=[2.0, 10.0, math.e],
              gain=["linear", "exponential", {0: -1, 1: 2, 3: 4}, {1: 0.5}])
OVERRIDES = (("nDCG", "ties", "optimistic"), ("AP", "relevance_threshold", 2),
             ("P", "ties", "pessimistic"), ("ERR", "ties", "optimistic"))


def _conventions(seed: int) -> Conventions:
    """A random combination of convention values; every fifth seed a profile."""
    rng = np.random.default_rng(1000 + seed)
    if seed % 5 == 0:
        base = list(PROFILES.values())[seed // 5 % len(PROFILES)].conventions
        kept = tuple(o for o in base.family_overrides if o[2] != "expected")
        return base.with_options(family_overrides=kept, ties="optimistic"
                                 if base.ties == "expected" else base.ties)
    chosen = {name: values[int(rng.integers(len(values)))] for name, values in FIELDS.items()
              if rng.random() < 0.35}
    if rng.random() < 0.2:
        chosen["family_overrides"] = OVERRIDES
    return Conventions(**chosen)


def _same(got: float, want: float) -> bool:
    return (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, rel=1e-9,
                                                                           abs=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_random_collections_and_conventions(seed):
    qrels, run = collection(seed) if seed % 2 else _collection(seed)
    conv = _conventions(seed)
    try:
        expected = rankwise.evaluate(qrels, run, MEASURES, conv, per_query=True).per_query()
    except InputError:  # no judgment, or nothing ranked, at all: explain refuses too
        with pytest.raises(InputError):
            explain(qrels, run, next(iter(run or qrels)), "AP", conv)
        return
    for query, values in expected.items():
        for e in explain_many(qrels, run, query, MEASURES, conv):
            assert _same(e.value, values[e.measure]), (query, e.measure, conv.differences())
            assert e.to_text() and e.to_markdown() and e.to_json()


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8, 60))
def test_more_random_collections_and_conventions(seed):
    test_random_collections_and_conventions(seed)


def test_a_query_given_no_document_is_an_empty_ranking():
    # {qid: {}}: the run holds the query with no document; evaluate scores it (0 for AP, P,
    # nDCG) without missing_queries='zero', and explain walks the same empty list
    qrels = {"q": {"a": 1, "b": 0}, "p": {"a": 1}}
    run = {"q": {}, "p": {"a": 1.0}}
    expected = rankwise.evaluate(qrels, run, ["AP", "P@5", "nDCG", "NumRet"],
                                 per_query=True).per_query()["q"]
    for measure, value in expected.items():
        e = explain(qrels, run, "q", measure)
        assert e.value == value and not e.rows
        assert "no document: an empty ranking" in e.to_text()


@pytest.mark.parametrize("duplicates", ["first", "last", "max"])
def test_duplicated_documents_as_evaluate_keeps_them(duplicates):
    # a frame run with each query's documents drawn with repetition, tied scores
    import pandas as pd

    rng = np.random.default_rng(5)
    rows = [(f"q{q}", f"d{int(rng.integers(8))}", float(rng.integers(0, 4)))
            for q in range(5) for _ in range(12)]
    run = pd.DataFrame(rows, columns=["query", "doc", "score"])
    qrels = {f"q{q}": {f"d{i}": int(rng.integers(0, 3)) for i in range(6)} for q in range(5)}
    for extra in ({}, {"ties": "input_order"}, {"max_depth": 3}, {"unjudged": "remove"}):
        conv = Conventions(duplicates=duplicates, **extra)
        expected = rankwise.evaluate(qrels, run, WORKED_MEASURES, conv, per_query=True)
        for query, values in expected.per_query().items():
            for e in explain_many(qrels, run, query, WORKED_MEASURES, conv):
                assert _same(e.value, values[e.measure]), (query, e.measure, extra)


def test_a_query_given_no_document_nor_judgment_is_refused_as_such():
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0}, "p": {}}
    assert "p" not in rankwise.evaluate(qrels, run, ["AP"], per_query=True).per_query()
    with pytest.raises(InputError, match="no judgments and the run gives it no document"):
        explain(qrels, run, "p", "AP", run_only_queries="zero")


EDGE_MEASURES = ["RMSE", "MAE", "G(gain=exp)", "Utility(rel_ret=1e308,nonrel_ret=-1e308)",
                 "Utility(rel_ret=1.5e308)", "nDCG(gain=exp)", "CG(gain={1:1e308,2:1e308})",
                 "nDCG(gain={1:1e308})", "ERR", "RBP(p=0.999999)", "DCG(base=1.0000001)"]


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("measure", EDGE_MEASURES)
def test_values_at_the_edges_of_float64_as_evaluate_gives_them(measure):
    # scores near 1e308 and a grade of 1023 (gain 2^1023 - 1): explain's sums overflowed
    # (MAE and RMSE were inf, Utility NaN where evaluate scales them) or G's discount raised
    # ValueError where evaluate refuses the judgments with a message
    qrels = {"q": {"a": 1, "b": 0, "c": 1023, "d": 2}}
    run = {"q": {"a": 1e308, "b": -1e308, "c": 0.0, "e": 5e-324}}
    try:
        want = rankwise.evaluate(qrels, run, [measure], per_query=True).per_query()["q"]
    except InputError as refused:
        with pytest.raises(InputError, match=re.escape(str(refused))):
            explain(qrels, run, "q", measure)
        return
    e = explain(qrels, run, "q", measure)
    assert _same(e.value, want[e.measure]) and math.isfinite(e.value)
    scaled = ("RMSE", "MAE", EDGE_MEASURES[3], "nDCG(gain=exp)", "nDCG(gain={1:1e308})")
    assert ("scaled" in e.to_text()) == (measure in scaled)  # as evaluate scales them


def test_grades_above_1023_with_linear_gains():
    # ERR's check of 2^g_max ran for every graded family: nDCG, DCG and RWRR of linear
    # grades above 1023 (counts as grades) were refused where evaluate computes them
    qrels, run = {"q": {"a": 2000, "b": 5, "c": 0}}, {"q": {"a": 1.0, "b": 2.0, "c": 3.0}}
    measures = ["nDCG", "DCG@2", "RWRR", "CG", "IDCG", "ERR(max_grade=5)"]
    want = rankwise.evaluate(qrels, run, measures, per_query=True).per_query()["q"]
    for e in explain_many(qrels, run, "q", measures):
        assert _same(e.value, want[e.measure]), e.measure
    with pytest.raises(InputError, match="grade 2000 is too large for exponential gain"):
        rankwise.evaluate(qrels, run, ["ERR"])
    with pytest.raises(InputError, match="grade 2000 is too large for exponential gain"):
        explain(qrels, run, "q", "ERR")


#: gain maps beyond 2^±900 (sums that overflow, gains that scaled down or up are subnormal,
#: negative gains as large as the positive ones, both ends in one query)
EDGE_GAINS = ["{1:1e300,2:1e308,3:1.7e308}", "{0:-1e308,1:1e308,3:1e300}",
              "{1:1e-310,2:5e-324,3:1e-300}", "{1:1e300,2:1e-300}", "{0:-1e-320,1:1e-315}",
              "{1:2e-308,2:1e-320,7:1e308}"]
EDGE_GAIN_FAMILIES = ["nDCG", "nDCG@3", "nDCG(rel=2)", "DCG@4", "DCG(rel=2)", "IDCG@3", "CG",
                      "RWRR@4", "ndcg_rel", "Rndcg"]


def _with_gain(measure: str, gain: str) -> str:
    name, _, cutoff = measure.partition("@")
    if "(" in name:
        name = name[:-1] + f",gain={gain})"
    else:
        name += f"(gain={gain})"
    return name + (f"@{cutoff}" if cutoff else "")


def _refused_queries_dropped(qrels, run, measure, conv) -> dict:
    """evaluate's per-query values of ``measure``, the queries it refuses (one at a time, the
    first it names) dropped after checking that explain refuses them with its message."""
    while True:
        try:
            return rankwise.evaluate(qrels, run, [measure], conv, per_query=True).per_query()
        except InputError as refused:
            query = re.search(r"of query '([^']*)'", str(refused)).group(1)
            message = re.sub(r" \(and \d+ more queries\)", "", str(refused))
            with pytest.raises(InputError, match=re.escape(message)):
                explain(qrels, run, query, measure, conv)
            qrels = {q: v for q, v in qrels.items() if q != query}
            run = {q: v for q, v in run.items() if q != query}


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("seed", [0, 1, *(pytest.param(s, marks=pytest.mark.slow)
                                          for s in range(2, 8))])
def test_gain_maps_beyond_two_to_the_900_as_evaluate_scales_them(seed):
    # explain summed such gains as they are: nDCG, ndcg_rel and Rndcg NaN (inf / inf) or off
    # in the fourth digit (subnormal gains), DCG, IDCG, CG and RWRR inf where evaluate scales
    # the gains by a power of two (and refuses a sum beyond float64)
    qrels, run = _collection(seed)
    # ties broken: the tie-order check evaluates each tie's best and worst orders too, whose
    # sums can lie beyond float64 where the conventions' order's do not
    run = {q: {d: s + 1e-3 * i for i, (d, s) in enumerate(docs.items())}
           for q, docs in run.items()}
    conv = _conventions(seed)
    expected: dict[str, dict[str, float]] = {}  # query -> measure -> value
    for gain in EDGE_GAINS:
        for measure in [_with_gain(m, gain) for m in EDGE_GAIN_FAMILIES]:
            for query, values in _refused_queries_dropped(qrels, run, measure, conv).items():
                expected.setdefault(query, {}).update(values)
    for query, values in expected.items():
        for e in explain_many(qrels, run, query, list(values), conv):
            assert _same(e.value, values[e.measure]), (query, e.measure, conv.differences())
            assert e.to_text() and e.to_json()


def test_scaled_gains_are_shown_and_said():
    # the rows are the computation: they show the gains scaled by 2^-e, and lines say so
    qrels = {"q": {"a": 1, "b": 2, "c": 0}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    e = explain(qrels, run, "q", "nDCG(gain={1:1e308,2:1.5e308})")
    want = rankwise.evaluate(qrels, run, [e.measure]).mean(e.measure)
    assert e.value == pytest.approx(want, rel=1e-12) and math.isfinite(e.value)
    assert [r["gain"] for r in e.rows] == [math.ldexp(1e308, -1024), math.ldexp(1.5e308, -1024),
                                           0.0]
    assert "scaled by 2^-1024" in e.to_text() and "the scaling cancels" in e.to_text()
    e = explain(qrels, run, "q", "DCG(gain={1:1.5e308,2:1.5e308,0:-1.5e308})")
    want = rankwise.evaluate(qrels, run, [e.measure]).mean(e.measure)
    assert e.value == pytest.approx(want, rel=1e-12) and math.isfinite(e.value)
    assert "DCG(gain={0:-1.5e+308,1:1.5e+308,2:1.5e+308}) = 2^1024 × " in e.to_text()
