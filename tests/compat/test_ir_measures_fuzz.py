"""Seeded differential fuzz: the rankwise provider for ir_measures against ir_measures' own
default pipeline (pytrec_eval for most measures, msmarco for RR@k, its judged provider for
Judged@k, gdeval for ERR@k and exponential nDCG@k) on the small random collections of
``tests/compat/fuzz_collections.py``: number-like, non-ASCII, empty and blank ids, ties,
negative, extreme and float32-only-tied scores, one-sided queries, empty dicts.

The rankwise provider gets the collection as dicts, as pandas DataFrames, as lists of
``Qrel`` / ``ScoredDoc`` and as one-shot iterators of them; ir_measures gets the dicts.
Per-query values (``iter_calc``, exact to 1e-12) and means (``calc_aggregate``, which counts
judged queries missing from the run as 0) are compared, with the same set of
(query, measure) pairs.

Inputs ir_measures cannot compute are changed before it sees them, as in
test_pytrec_eval_fuzz.py (judged empty rankings left out, a grade-0 judgment of an
unretrieved document added to queries judged only negatively). Documented differences
(docs/switching/ir_measures.md) are asserted instead of compared: Judged@k counts a
document judged with a negative grade as unjudged (ir_measures' Judged is compared on the
judgments without negative grades), and NumRet is compared without judged_only measures
beside it.
"""

from __future__ import annotations

import math
import shutil

import pytest

ir_measures = pytest.importorskip("ir_measures")
pd = pytest.importorskip("pandas")

from ir_measures import (  # noqa: E402
    AP,
    ERR,
    RR,
    Bpref,
    IPrec,
    Judged,
    NumQ,
    NumRel,
    NumRelRet,
    NumRet,
    P,
    R,
    Rprec,
    SetAP,
    SetF,
    SetP,
    SetR,
    Success,
    infAP,
    nDCG,
)

from rankwise import InputError  # noqa: E402
from rankwise.compat import ir_measures as rw  # noqa: E402
from tests.compat.fuzz_collections import as_pytrec_eval_can_take_it, collection  # noqa: E402
from tests.peers import ir_measures_pipeline as pipeline  # noqa: E402

MEASURES = [
    nDCG, nDCG@5, nDCG@10, nDCG(gains={0: 0, 1: 2, 2: 5, 3: 9, 4: 12})@5,
    nDCG(gains={1: 3, 2: 1}), P@3,
    P(rel=2)@5, R@5, R(rel=2)@10, AP, AP@5, AP(rel=2), RR, RR(rel=2), RR@3, RR(rel=2)@10,
    Bpref, Bpref(rel=2), SetP, SetP(rel=2), SetP(relative=True), SetR, SetF, SetF(beta=0.5),
    SetAP, Rprec, Rprec(rel=2), infAP, Success@1, Success@5, IPrec@0.0, IPrec@0.3,
    IPrec(rel=2)@0.5, NumRelRet, NumRel, NumQ, nDCG(judged_only=True)@5,
    AP(judged_only=True), P(judged_only=True)@5, RR(judged_only=True),
]
JUDGED = [Judged@1, Judged@3, Judged@10]
COUNTS = [NumRet, NumRet(rel=2), AP]  # NumRet beside no judged_only measure


def per_query(metrics) -> dict:
    out = {}
    for metric in metrics:
        key = (metric.query_id, str(metric.measure))
        assert key not in out, key
        out[key] = metric.value
    return out


def without_negative_grades(qrels: dict) -> dict:
    """The judgments of grade >= 0 (a query judged only negatively keeps an empty dict, which
    ir_measures' Judged reports as 0, as rankwise reports it)."""
    return {q: {d: g for d, g in v.items() if g >= 0} for q, v in qrels.items()}


def reference(qrels: dict, run: dict) -> tuple[dict, dict]:
    """ir_measures' per-query values and means for MEASURES, JUDGED and COUNTS, from the
    input as it can take it; Judged on the judgments without negative grades (rankwise's
    documented reading) and 0 for a query judged only negatively."""
    theirs_qrels, theirs_run = as_pytrec_eval_can_take_it(qrels, run)
    values = per_query(pipeline.iter_calc(MEASURES, theirs_qrels, theirs_run))
    values.update(per_query(ir_measures.iter_calc(COUNTS[:2], theirs_qrels, theirs_run)))
    means = pipeline.calc_aggregate(MEASURES, theirs_qrels, theirs_run)
    means.update(ir_measures.calc_aggregate(COUNTS[:2], theirs_qrels, theirs_run))
    positive = without_negative_grades(qrels)
    values.update(per_query(ir_measures.iter_calc(JUDGED, positive, theirs_run)))
    means.update(ir_measures.calc_aggregate(JUDGED, positive, theirs_run))
    return values, means


def frames(qrels: dict, run: dict):
    qrels_frame = pd.DataFrame([(q, d, g) for q, v in qrels.items() for d, g in v.items()],
                               columns=["query_id", "doc_id", "relevance"])
    run_frame = pd.DataFrame([(q, d, s) for q, v in run.items() for d, s in v.items()],
                             columns=["query_id", "doc_id", "score"])
    return qrels_frame, run_frame


def tuples(qrels: dict, run: dict):
    return ([ir_measures.Qrel(q, d, g) for q, v in qrels.items() for d, g in v.items()],
            [ir_measures.ScoredDoc(q, d, s) for q, v in run.items() for d, s in v.items()])


def usable(seed: int):
    """The collection, without judged empty rankings (ir_measures cannot compute them), or
    None when no judged query is left in the run."""
    qrels, run = collection(seed)
    run = {q: v for q, v in run.items() if v or not qrels.get(q)}
    if not any(qrels.get(q) for q in run):
        return None
    return qrels, run


def assert_same(expected: dict, got: dict, context) -> int:
    assert set(got) == set(expected), (context, sorted(set(got) ^ set(expected))[:4])
    for key, value in expected.items():
        assert math.isclose(got[key], value, abs_tol=1e-12) or \
            math.isnan(value) and math.isnan(got[key]), (context, key, value, got[key])
    return len(expected)


def compare(seeds, forms=("dicts", "frames", "tuples", "iterators")) -> int:
    compared = 0
    every = MEASURES + JUDGED + COUNTS[:2]
    for seed in seeds:
        case = usable(seed)
        if case is None:
            continue
        qrels, run = case
        values, means = reference(qrels, run)
        for form in forms:
            if form == "dicts":
                mine_qrels, mine_run = qrels, run
            elif form == "frames":
                mine_qrels, mine_run = frames(qrels, run)
            else:
                mine_qrels, mine_run = tuples(qrels, run)
            if form == "iterators":
                got = {}
                for group in (MEASURES, JUDGED, COUNTS[:2]):
                    q, r = tuples(qrels, run)
                    got.update(per_query(rw.provider.iter_calc(group, iter(q), iter(r))))
            else:
                got = per_query(rw.provider.iter_calc(MEASURES + JUDGED, mine_qrels, mine_run))
                got.update(per_query(rw.provider.iter_calc(COUNTS, mine_qrels, mine_run)))
                got = {k: v for k, v in got.items() if k[1] != "AP" or k in values}
            expected = values
            if form != "dicts":  # a query judged with an empty dict has no row or tuple
                expected = {k: v for k, v in values.items() if qrels.get(k[0]) != {}}
            compared += assert_same(expected, got, (seed, form))
            if form == "dicts":
                mine = rw.provider.calc_aggregate(every, mine_qrels, mine_run)
                for measure in every:
                    assert mine[measure] == pytest.approx(means[measure], abs=1e-12,
                                                          nan_ok=True), (seed, measure)
    return compared


def test_random_collections():
    assert compare(range(60)) > 20_000


@pytest.mark.slow
def test_random_collections_many():
    assert compare(range(60, 400)) > 100_000


def test_one_shot_iterators_of_judgments_lose_nothing():
    """Regression: the provider predicted the type of the judgments with one converter (which
    peeks at the first item of an iterator) and read them with another, which no longer saw
    that item: the first judgment was dropped (AP 0.33 instead of 0.58 here)."""
    qrels = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"x": 1}}
    run = {"q1": {"a": 0.5, "b": 0.9, "c": 0.1}, "q2": {"x": 0.3, "y": 0.7}}
    expected = per_query(ir_measures.iter_calc([AP, P@1], qrels, run))
    assert expected[("q1", "AP")] == pytest.approx(7 / 12)
    for _ in range(2):
        judged, ranked = tuples(qrels, run)
        assert per_query(rw.provider.iter_calc([AP, P@1], iter(judged), iter(ranked))) == \
            expected
        assert per_query(rw.provider.evaluator([AP, P@1], iter(judged)).iter_calc(
            iter(ranked))) == expected


def test_documents_listed_twice_in_a_run_frame_keep_the_last_score():
    """Regression: the Judged group ranked without ``duplicates="last"`` and raised where
    ir_measures (which turns the frame into dicts) keeps the last score, as the provider
    does for every other measure."""
    qrels = pd.DataFrame([("q", "a", 1), ("q", "b", 0)],
                         columns=["query_id", "doc_id", "relevance"])
    run = pd.DataFrame([("q", "a", 0.1), ("q", "b", 0.5), ("q", "c", 0.3), ("q", "a", 0.9)],
                       columns=["query_id", "doc_id", "score"])
    measures = [AP, RR@10, P@1, NumRet, Judged@2, Judged@5]
    expected = per_query(ir_measures.iter_calc(measures, qrels, run))
    assert expected[("q", "P@1")] == 1.0 and expected[("q", "Judged@2")] == 1.0
    assert per_query(rw.provider.iter_calc(measures, qrels, run)) == pytest.approx(expected)


def test_gain_maps_with_negative_grades_are_refused():
    # ir_measures re-grades the judgments with the map, so a document judged -1 (unjudged for
    # trec_eval and rankwise) gains 5 here; rankwise refuses a map of a negative grade
    # (docs/conformance.md, "Gain maps with negative grades")
    qrels, run = {"q": {"a": 1, "c": -1}}, {"q": {"a": 1.0, "b": 2.0, "c": 3.0}}
    measure = nDCG(gains={-1: 5, 1: 1})
    assert ir_measures.calc_aggregate([measure], qrels, run)[measure] == pytest.approx(0.97675,
                                                                                      abs=1e-5)
    with pytest.raises(ValueError, match="0 or more"):
        rw.provider.calc_aggregate([measure], qrels, run)


def test_documents_judged_twice_with_different_grades_are_refused():
    # ir_measures keeps one of the two grades (which one depends on the provider); rankwise
    # refuses the contradiction (docs/switching/ir_measures.md)
    qrels = pd.DataFrame([("q", "a", 1), ("q", "b", 0), ("q", "a", 0)],
                         columns=["query_id", "doc_id", "relevance"])
    run = {"q": {"a": 0.9, "b": 0.5}}
    theirs = per_query(ir_measures.iter_calc([AP, RR@10], qrels, run))
    assert theirs == {("q", "AP"): 0.0, ("q", "RR@10"): 1.0}
    with pytest.raises(InputError, match="judged twice"):
        list(rw.provider.iter_calc([AP], qrels, run))


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval needs perl")
def test_random_collections_gdeval_measures():
    """ERR@k and nDCG(dcg='exp-log2')@k (gdeval.pl, which takes numeric query ids only and
    doc ids without white space, grades up to 4 and prints 5 decimals)."""
    measures = [ERR@5, ERR@20, nDCG(dcg="exp-log2")@5, nDCG(dcg="exp-log2")@20]
    compared = 0
    for seed in range(400, 425):
        case = usable(seed)
        if case is None:
            continue
        qrels, run = case
        qrels, run = as_pytrec_eval_can_take_it(qrels, run)
        rename = {q: str(i) for i, q in enumerate(sorted(set(qrels) | set(run)))}
        plain = str.isprintable  # "", " ", "a b", "a\tb", no-break space: left out
        qrels = {rename[q]: {d: g for d, g in v.items() if d.split() == [d] and plain(d)}
                 for q, v in qrels.items() if v}
        run = {rename[q]: {d: x for d, x in v.items() if d.split() == [d] and plain(d)}
               for q, v in run.items()}
        qrels = {q: v for q, v in qrels.items() if v}
        run = {q: v for q, v in run.items() if v}
        if not set(qrels) & set(run):
            continue
        expected = per_query(ir_measures.iter_calc(measures, qrels, run))
        got = per_query(rw.provider.iter_calc(measures, qrels, run))
        assert set(got) == set(expected), seed
        for key, value in expected.items():
            assert got[key] == pytest.approx(value, abs=5.1e-6), (seed, key)
        compared += len(expected)
    assert compared > 150
