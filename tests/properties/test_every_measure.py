"""Invariance tests applied to every registered measure, as scikit-learn's test_common.py does
for its metrics: a measure added to the registry is covered here without a new test.

Each family is instantiated with its defaults (a cutoff of 3 where one is needed or allowed,
recall level 0.5 for interpolated precision) and checked for: its documented range, the
ideal ordering scoring at least as much as any other ordering of the same list, independence
from row order and from consistent renaming, queries evaluated apart equal to together, a
non-relevant document added below the cutoff changing no @K value, and monotonicity when a
more relevant document moves up.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankwise
from rankwise.measures import FAMILIES, Measure

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOLERANCE = 1e-12


def instances() -> list[Measure]:
    """Every family, with and without a cutoff where both are allowed."""
    out = []
    for name, spec in FAMILIES.items():
        params = {"max_grade": 3} if "max_grade" in spec.params else {}
        if spec.cutoff_type is float:
            out.append(rankwise.measures.registry.make_measure(name, 0.5, params))
            continue
        if spec.cutoff in ("none", "optional"):
            out.append(rankwise.measures.registry.make_measure(name, None, params))
        if spec.cutoff in ("required", "optional"):
            out.append(rankwise.measures.registry.make_measure(name, 3, params))
    return out


MEASURES = instances()
BY_NAME = {str(m): m for m in MEASURES}
ORDERED = [m for m in MEASURES if m.spec.order_based]
IDS = [str(m) for m in MEASURES]


@st.composite
def lists(draw, max_queries: int = 4):
    """Judgments and a run with distinct scores: grades 0-3, unjudged docs, short lists."""
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, max_queries))):
        docs = [f"d{i}" for i in range(draw(st.integers(1, 9)))]
        grades = {d: draw(st.integers(0, 3)) for d in docs if draw(st.booleans()) or d == "d0"}
        qrels[f"q{q}"] = grades
        order = draw(st.permutations(docs))
        run[f"q{q}"] = {d: float(len(order) - i) for i, d in enumerate(order)}
    return qrels, run


def values(qrels, run, measures=MEASURES):
    return rankwise.evaluate(qrels, run, measures, per_query=True).per_query()


def better_or_equal(name: str, a: float, b: float) -> bool:
    """a is at least as good as b for the measure ``name`` (lower is better for some)."""
    if BY_NAME[name].spec.higher_is_better:
        return a >= b - TOLERANCE
    return a <= b + TOLERANCE


def close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def test_every_family_is_covered():
    assert {m.family for m in MEASURES} == set(FAMILIES)


@SETTINGS
@given(lists())
def test_values_lie_in_the_documented_range(data):
    for row in values(*data).values():
        for name, value in row.items():
            bounds = BY_NAME[name].spec.bounds
            if bounds is not None and not math.isnan(value):
                assert bounds[0] - TOLERANCE <= value <= bounds[1] + TOLERANCE, (name, value)


@SETTINGS
@given(lists(), st.randoms(use_true_random=False))
def test_the_ideal_ordering_scores_at_least_any_other(data, rnd):
    qrels, run = data
    ideal, shuffled = {}, {}
    for q, docs in run.items():
        best = sorted(docs, key=lambda d: (-qrels[q].get(d, -1), d))
        ideal[q] = {d: float(len(best) - i) for i, d in enumerate(best)}
        other = list(docs)
        rnd.shuffle(other)
        shuffled[q] = {d: float(len(other) - i) for i, d in enumerate(other)}
    best_values, other_values = values(qrels, ideal, ORDERED), values(qrels, shuffled, ORDERED)
    for q, row in best_values.items():
        for name, value in row.items():
            assert better_or_equal(name, value, other_values[q][name]), \
                (q, name, value, other_values[q][name])


@SETTINGS
@given(lists(), st.randoms(use_true_random=False))
def test_row_order_and_renaming_change_nothing(data, rnd):
    qrels, run = data
    expected = values(qrels, run)
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    rnd.shuffle(rows)
    shuffled = {}
    for q, d, s in rows:
        shuffled.setdefault(q, {})[d] = s
    assert values(qrels, shuffled) == expected
    # an order-preserving renaming of docs, any renaming of queries
    rename_doc = {f"d{i}": f"doc-{i:03d}-é" for i in range(10)}
    rename_query = {q: f"topic {q}" for q in run}
    renamed_qrels = {rename_query[q]: {rename_doc[d]: g for d, g in docs.items()}
                     for q, docs in qrels.items()}
    renamed_run = {rename_query[q]: {rename_doc[d]: s for d, s in docs.items()}
                   for q, docs in run.items()}
    got = values(renamed_qrels, renamed_run)
    assert {q: got[rename_query[q]] for q in expected} == expected


@SETTINGS
@given(lists())
def test_queries_apart_equal_queries_together(data):
    qrels, run = data
    together = values(qrels, run)
    for q in run:
        assert values({q: qrels[q]}, {q: run[q]})[q] == together[q]


@SETTINGS
@given(lists())
def test_a_document_added_below_the_cutoff_changes_no_cutoff_measure(data):
    qrels, run = data
    at_k = [m for m in MEASURES if isinstance(m.cutoff, int)]
    longer = {q: {**docs, "zz-extra": min(docs.values()) - 1.0} for q, docs in run.items()}
    before, after = values(qrels, run, at_k), values(qrels, longer, at_k)
    for q, docs in run.items():
        if len(docs) >= 3:  # the added document is at rank 4 or lower: beyond every cutoff 3
            assert after[q] == before[q], q


@SETTINGS
@given(lists(), st.data())
def test_moving_a_more_relevant_document_up_never_lowers_a_value(data, draw):
    qrels, run = data
    q = draw.draw(st.sampled_from(sorted(run)))
    order = sorted(run[q], key=lambda d: -run[q][d])
    pairs = [i for i in range(len(order) - 1)
             if qrels[q].get(order[i + 1], -1) > qrels[q].get(order[i], -1)]
    if not pairs:
        return
    i = draw.draw(st.sampled_from(pairs))
    swapped = dict(run[q])
    swapped[order[i]], swapped[order[i + 1]] = run[q][order[i + 1]], run[q][order[i]]
    before = values(qrels, run, ORDERED)[q]
    after = values(qrels, {**run, q: swapped}, ORDERED)[q]
    for name in before:
        assert better_or_equal(name, after[name], before[name]), (name, before[name], after[name])


def test_a_perfect_ranking_scores_one_where_the_maximum_is_one():
    qrels = {"q": {"a": 3, "b": 2, "c": 1, "d": 0}}
    run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    row = values(qrels, run)["q"]
    for name in ["AP", "RR", "nDCG", "nDCG@3", "Rprec", "Bpref", "SetR", "IPrec@0.5", "11pt_avg",
                 "P@3", "RelP@3", "Success@3", "gm_map", "gm_bpref", "SetRelP", "R@3", "AP@3"]:
        assert row[name] == pytest.approx(1.0), name


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(["q1", "q2", "q3"]), st.sampled_from("abcdef"),
                          st.sampled_from([0.5, 1.0, 2.0])), min_size=1, max_size=25),
       st.dictionaries(st.sampled_from(["q1", "q2", "q4"]),
                       st.dictionaries(st.sampled_from("abcdefg"), st.integers(-1, 3), min_size=1),
                       min_size=1),
       st.sampled_from(["first", "last", "max"]), st.sampled_from([None, 2]),
       st.sampled_from(["nonrelevant", "remove"]), st.sampled_from(["ignore", "zero"]))
def test_diagnostic_counts_add_up_to_the_input(rows, qrels, duplicates, depth, unjudged, missing):
    import pandas as pd

    rows = [("q1", "a", 1.0), *rows]  # q1 is always in both: the inputs overlap
    run = pd.DataFrame(rows, columns=["query", "doc", "score"])
    qrels = {**qrels, "q1": qrels.get("q1", {"a": 1})}
    result = rankwise.evaluate(qrels, run, ["NumRet"], duplicates=duplicates, max_depth=depth,
                               unjudged=unjudged, missing_queries=missing)
    d = result.diagnostics["run"]
    assert d["run_rows"] == len(rows)
    assert d["run_rows"] == (d["rows_evaluated"] + d["rows_beyond_depth"] + d["rows_unjudged_removed"]
                             + d["rows_in_run_only_queries"] + d["run_duplicates_dropped"])
    assert d["rows_evaluated"] == result.mean("NumRet")
    assert d["run_queries"] == d["queries_evaluated"] - d["queries_only_in_qrels_scored_zero"] \
        + d["queries_only_in_run"]
    assert d["qrels_queries"] == d["queries_evaluated"] - d["queries_only_in_qrels_scored_zero"] \
        + d["queries_only_in_qrels"]
