"""Expected values over tied orderings (``ties="expected"``) against brute force.

The reference enumerates every ordering of the tied documents of each query (every permutation
of every tie group), evaluates each ordering with the measure's own family function, and
averages. rankwise's closed forms and exact methods must agree to 1e-12 for every order-based
family, with and without cutoffs, under non-default conventions; the optimistic and pessimistic
orders must bound the expected value; tie-free runs must not depend on the tie policy; and
nDCG / DCG must equal scikit-learn's tie-averaged ``ndcg_score`` / ``dcg_score``.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankwise
from rankwise.conventions import resolve
from rankwise.core.lists import RankedLists
from rankwise.core.ranked import rank
from rankwise.errors import MeasureError
from rankwise.io.frames import to_qrels, to_run
from rankwise.measures import FAMILIES, parse_measure
from rankwise.measures import expected as expected_module
from rankwise.measures.expected import straddling_ties, tie_bounds
from rankwise.measures.registry import make_measure

TOLERANCE = 1e-12
SETTINGS = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
THOROUGH = settings(SETTINGS, max_examples=30)


def order_based_families() -> list[str]:
    return [name for name, spec in FAMILIES.items()
            if spec.order_based and not spec.tie_invariant]


def measures_to_check() -> list:
    """Every order-based family, with and without cutoffs, and a few parameters."""
    out = []
    for name in order_based_families():
        spec = FAMILIES[name]
        if spec.cutoff_type is float:
            out += [make_measure(name, level) for level in (0.0, 0.2, 0.5, 0.7, 1.0)]
            continue
        if spec.cutoff in ("none", "optional"):
            out.append(make_measure(name))
        if spec.cutoff in ("required", "optional"):
            out += [make_measure(name, k) for k in (1, 2, 3, 5, 8)]
    out += [parse_measure(text) for text in (
        "P(rel=2)@3", "AP(rel=2)", "RR(rel=3)@4", "nDCG(gain=exp)@3", "nDCG(gain={1:1,2:5,3:4})",
        "DCG(base=10)@4", "ERR(max_grade=2)", "ERR(max_grade=5)@3",
        "Bpref(rel=2)", "IPrec(rel=2)@0.5", *(["RWRR(gain=exp)@4"] if "RWRR" in FAMILIES else []),
        "nDCG(rel=2)@3", "DCG(gain=exp,rel=2)",  # gains from grade 2 on (ranx's -l2)
        # a gain map with a negative gain (grade 0), as trec_eval's ndcg.0=-1 takes it
        "nDCG(gain={0:-1,1:2,3:1})", "DCG(gain={0:-1,2:4})@3", "G(gain={0:-1,1:3})",
        "Rndcg(gain={0:-1,1:3})", "ndcg_rel(gain={0:0.5,2:4})")]
    return out


MEASURES = measures_to_check()
# ordering a tie by grade (by gain, for a gain map) is the best (worst) order where a higher
# grade (gain) is never worse
MONOTONE = [m for m in MEASURES if m.spec.grade_monotone]

CONVENTIONS = {
    "trec_eval": {},
    "denominators": {"ap_denominator": "min_relevant_cutoff", "short_lists": "length",
                     "recall_denominator": "min_relevant_cutoff", "ideal": "retrieved",
                     "gain": {1: 1, 2: 3, 3: 7}},
    "retrieved": {"ap_denominator": "relevant_retrieved", "nonpositive_scores": "nonrelevant",
                  "gain": "exponential", "unjudged": "remove"},
    "strict": {"ap_denominator": "cutoff", "relevance_threshold": 2, "no_relevant": "nan",
               "idcg_zero": "nan", "recall_levels": "trec_eval9", "discount_base": 10.0},
}


@st.composite
def tied_lists(draw, max_queries: int = 3, max_docs: int = 7):
    """Judgments and a run whose scores take 2-3 values (ties everywhere): grades -1 to 3, some
    unjudged documents, some judged documents not retrieved, some queries without relevant."""
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, max_queries))):
        values = draw(st.lists(st.sampled_from([2.0, 1.0, 0.0, -1.0]), min_size=2, max_size=3,
                               unique=True))
        docs = [f"d{i}" for i in range(draw(st.integers(1, max_docs)))]
        run[f"q{q}"] = {d: draw(st.sampled_from(values)) for d in docs}
        grades = {}
        for d in docs + ["x0", "x1"]:
            grade = draw(st.sampled_from([None, -1, 0, 0, 1, 2, 3]))
            if grade is not None:
                grades[d] = grade
        if not grades or draw(st.integers(0, 4)) == 0:  # now and then nothing relevant
            grades = {d: 0 for d in docs[:2]}
        qrels[f"q{q}"] = grades
    return qrels, run


def all_orderings(lists: RankedLists) -> tuple[RankedLists, np.ndarray]:
    """One query per ordering of the tied documents of each query (every permutation of
    every tie group), and the original query of each."""
    rows, lengths, source = [], [], []
    group = lists.tie_group
    for q in range(lists.num_queries):
        lo, hi = int(lists.offsets[q]), int(lists.offsets[q + 1])
        blocks, start = [], lo
        for i in range(lo + 1, hi + 1):
            if i == hi or group[i] != group[i - 1]:
                blocks.append(list(itertools.permutations(range(start, i))))
                start = i
        for choice in itertools.product(*blocks):
            rows.extend(r for block in choice for r in block)
            lengths.append(hi - lo)
            source.append(q)
    rows = np.asarray(rows, dtype=np.int64)
    source = np.asarray(source, dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    expanded = RankedLists(
        query_ids=np.array([f"{lists.query_ids[q]}#{i}" for i, q in enumerate(source)],
                           dtype=object),
        offsets=offsets, grade=lists.grade[rows], score=lists.score[rows],
        run_row=lists.run_row[rows], docs=lists.docs, levels=lists.levels,
        level_counts=lists.level_counts[source],
        conventions=lists.conventions.with_options(ties="input_order"),
        diagnostics=lists.diagnostics)
    return expanded, source


def family_values(measure, lists: RankedLists) -> np.ndarray:
    """``measure.compute(lists)`` under an ordering tie policy: the family function with the
    parameters filled from the conventions, as floats, then the no_relevant / idcg_zero policy.
    (The cast guards against families that return integers when nothing is summed.)"""
    conv = measure.conventions(lists)
    lists = lists.with_conventions(conv)
    params = {**measure.spec.params, **dict(measure.params)}
    for name, default in (("rel", conv.relevance_threshold), ("gain", conv.gain_name),
                          ("base", conv.discount_base)):
        if name in params and params[name] is None:
            params[name] = default
    values = np.asarray(measure.spec.compute(lists, measure.cutoff, **params), dtype=np.float64)
    return measure._undefined(lists, values, params)


def brute_force(qrels, run, measures, **conventions) -> dict[str, dict[str, float]]:
    """Per query and measure: the mean over every ordering of the tied documents."""
    conv = resolve(None, **conventions).with_options(ties="docid_desc")
    lists = rank(to_qrels(qrels), to_run(run), conv)
    expanded, source = all_orderings(lists)
    out: dict[str, dict[str, float]] = {str(q): {} for q in lists.query_ids}
    for m in measures:
        values = family_values(m, expanded)
        for i, q in enumerate(lists.query_ids):  # exactly rounded means (math.fsum)
            mine = values[source == i]
            out[str(q)][str(m)] = math.fsum(mine) / len(mine)
    return out


def per_query(qrels, run, measures, **conventions) -> dict[str, dict[str, float]]:
    return rankwise.evaluate(qrels, run, measures, per_query=True, **conventions).per_query()


def close(a: float, b: float, tolerance: float = TOLERANCE) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance)


def assert_all_close(got, want, context=""):
    for q, row in want.items():
        for name, value in row.items():
            assert close(got[q][name], value), (context, q, name, got[q][name], value)


# ---------------------------------------------------------------------------- brute force


def test_every_order_based_family_has_an_exact_method():
    missing = [n for n in order_based_families() if n not in expected_module.EXPECTED]
    assert not missing


@pytest.mark.parametrize("name", list(CONVENTIONS))
@THOROUGH
@given(data=tied_lists())
def test_expected_equals_the_mean_over_every_ordering(name, data):
    qrels, run = data
    conventions = CONVENTIONS[name]
    got = per_query(qrels, run, MEASURES, ties="expected", **conventions)
    assert_all_close(got, brute_force(qrels, run, MEASURES, **conventions), name)


def test_a_worked_example_end_to_end():
    """Brute force through the public API: every ordering written as a run of its own."""
    qrels = {"q": {"a": 2, "b": 0, "c": 1, "x": 3}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.5, "e": 0.5}}
    names = ["P@2", "RR", "AP", "AP@2", "nDCG@2", "ERR", "IPrec@0.5", "11pt_avg", "Bpref",
             "Success@1", "Rprec", "F1@2", "11pt_avg(levels={0.2,0.5,0.8})"]
    orderings = [a + b for a in itertools.permutations("abc") for b in itertools.permutations("de")]
    total = dict.fromkeys(names, 0.0)
    for order in orderings:
        one = {"q": {d: float(len(order) - i) for i, d in enumerate(order)}}
        for name, value in per_query(qrels, one, names)["q"].items():
            total[name] += value / len(orderings)
    got = per_query(qrels, run, names, ties="expected")["q"]
    for name in names:
        assert close(got[name], total[name]), (name, got[name], total[name])


def test_no_sampling_the_same_value_every_time():
    qrels = {"q": {f"d{i}": i % 3 for i in range(40)}}
    run = {"q": {f"d{i}": float(i // 10) for i in range(40)}}
    first = per_query(qrels, run, MEASURES, ties="expected")
    assert per_query(qrels, run, MEASURES, ties="expected") == first


# ---------------------------------------------------------------------------- bounds


@SETTINGS
@given(data=tied_lists())
def test_optimistic_and_pessimistic_bound_the_expected_value(data):
    qrels, run = data
    expected = per_query(qrels, run, MONOTONE, ties="expected")
    best = per_query(qrels, run, MONOTONE, ties="optimistic")
    worst = per_query(qrels, run, MONOTONE, ties="pessimistic")
    conv = resolve(None, ties="docid_desc")
    lists = rank(to_qrels(qrels), to_run(run), conv)
    for m in MONOTONE:
        optimistic, pessimistic = tie_bounds(m, lists)
        sign = 1.0 if m.spec.higher_is_better else -1.0  # optimistic is the best value
        for i, q in enumerate(lists.query_ids):
            name, e = str(m), expected[q][str(m)]
            assert close(optimistic[i], best[q][name]), (q, name)
            assert close(pessimistic[i], worst[q][name]), (q, name)
            if not math.isnan(e):
                assert sign * best[q][name] >= sign * e - TOLERANCE and \
                    sign * e >= sign * worst[q][name] - TOLERANCE, \
                    (q, name, best[q][name], e, worst[q][name])


@SETTINGS
@given(data=tied_lists())
def test_bounds_are_the_best_and_worst_orderings(data):
    """Ordering each tie by grade reaches the maximum and the minimum over all orderings."""
    qrels, run = data
    conv = resolve(None, ties="docid_desc")
    lists = rank(to_qrels(qrels), to_run(run), conv)
    expanded, source = all_orderings(lists)
    for m in MONOTONE:
        values = family_values(m, expanded)
        high, low = tie_bounds(m, lists)
        if not m.spec.higher_is_better:  # the optimistic order gives the lowest value
            high, low = low, high
        for q in range(lists.num_queries):
            mine = values[source == q]
            assert close(high[q], float(np.max(mine))), (str(m), q)
            assert close(low[q], float(np.min(mine))), (str(m), q)


@SETTINGS
@given(data=tied_lists())
def test_tie_free_runs_do_not_depend_on_the_tie_policy(data):
    qrels, run = data
    distinct = {q: {d: float(len(docs) - i) for i, d in enumerate(sorted(docs))}
                for q, docs in run.items()}
    reference = per_query(qrels, distinct, MEASURES)
    for policy in ("expected", "optimistic", "pessimistic", "input_order", "docid_asc"):
        assert_all_close(per_query(qrels, distinct, MEASURES, ties=policy), reference, policy)


@pytest.mark.parametrize("how", ["conventions", "measure", "family_override"])
def test_optimistic_orders_a_tie_by_gain_under_a_gain_map(how):
    """Under a gain map that does not grow with the grade (grade 2 gains 5, grade 3 gains 2)
    the optimistic order once put grade 3 first: nDCG's worst order, not its best."""
    qrels = {"q": {"a": 3, "b": 2, "c": 1, "d": 0}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 1.0}}
    gain = {1: 1, 2: 5, 3: 2, 0: -1}  # grade 0 below the unjudged document's 0
    name, options = {"conventions": ("nDCG", {"gain": gain}),
                     "measure": ("nDCG(gain={0:-1,1:1,2:5,3:2})", {}),
                     "family_override": ("nDCG", {"gain": gain, "family_overrides": (
                         ("nDCG", "ties", "optimistic"), ("DCG", "ties", "pessimistic"))})}[how]
    orders = [dict(zip(order, (5.0, 4.0, 3.0, 2.0, 1.0))) for order in
              itertools.permutations("abcde")]
    values = [per_query(qrels, {"q": one}, [name], **options)["q"][name] for one in orders]
    ties = {} if how == "family_override" else {"ties": "optimistic"}
    assert per_query(qrels, run, [name], **ties, **options)["q"][name] == \
        pytest.approx(max(values), abs=1e-15)
    if how != "family_override":
        worst = per_query(qrels, run, [name], ties="pessimistic", **options)["q"][name]
        assert worst == pytest.approx(min(values), abs=1e-15)
    else:  # DCG under a pessimistic override: the order of the smallest DCG
        dcg = [per_query(qrels, {"q": one}, ["DCG"], gain=gain)["q"]["DCG"] for one in orders]
        assert per_query(qrels, run, ["DCG"], **options)["q"]["DCG"] == \
            pytest.approx(min(dcg), abs=1e-15)

def test_tie_bounds_of_a_tie_invariant_measure_are_its_value():
    lists = rank(to_qrels({"q": {"a": 1, "b": 0}}), to_run({"q": {"a": 1.0, "b": 1.0}}))
    high, low = tie_bounds(parse_measure("NumRelRet"), lists)
    assert high.tolist() == low.tolist() == [1.0]


def test_tie_bounds_with_given_parameters():
    lists = rank(to_qrels({"q": {"a": 2, "b": 1}}), to_run({"q": {"a": 1.0, "b": 1.0, "c": 1.0}}))
    high, low = tie_bounds(parse_measure("P@1"), lists, {"rel": 2})
    assert (high.tolist(), low.tolist()) == ([1.0], [0.0])


# ---------------------------------------------------------------------------- scikit-learn


@SETTINGS
@given(data=tied_lists(max_docs=7), k=st.sampled_from([None, 1, 3]))
def test_sklearn_tie_averaged_ndcg_and_dcg(data, k):
    from sklearn.metrics import dcg_score, ndcg_score

    qrels, run = data
    names = ["nDCG", "DCG"] if k is None else [f"nDCG@{k}", f"DCG@{k}"]
    got = per_query(qrels, run, names, ties="expected", ideal="retrieved")
    assert per_query(qrels, run, names, conventions="sklearn") == got  # the profile
    for q, docs in run.items():
        if len(docs) < 2:  # scikit-learn needs two documents
            continue
        truth = np.array([[max(qrels[q].get(d, 0), 0) for d in docs]], dtype=float)
        score = np.array([list(docs.values())])
        assert close(got[q][names[0]], ndcg_score(truth, score, k=k, ignore_ties=False)), q
        assert close(got[q][names[1]], dcg_score(truth, score, k=k, ignore_ties=False)), q


# ---------------------------------------------------------------------------- diagnostics


def test_straddling_ties_counts_queries_whose_tie_crosses_k_with_mixed_grades():
    qrels = {"a": {"1": 1}, "b": {"1": 1, "2": 1}, "c": {"1": 1}}
    run = {"a": {"1": 2.0, "2": 2.0, "3": 1.0},  # tie at ranks 1-2, grades 1 and unjudged
           "b": {"1": 2.0, "2": 2.0, "3": 1.0},  # tie at ranks 1-2, equal grades
           "c": {"1": 3.0, "2": 2.0, "3": 2.0}}  # tie at ranks 2-3
    lists = rank(to_qrels(qrels), to_run(run))
    assert straddling_ties(lists, 1) == 1  # a only
    assert straddling_ties(lists, 2) == 0  # c's tie (ranks 2-3) has equal grades
    assert straddling_ties(lists, 3) == 0
    assert straddling_ties(lists, None) == 0


def test_an_order_based_family_without_a_method_is_refused(monkeypatch):
    from rankwise.measures.registry import Family

    toy = Family("Toy", lambda lists, cutoff: lists.num_retrieved * 1.0, "a toy")
    monkeypatch.setitem(FAMILIES, "Toy", toy)
    with pytest.raises(MeasureError, match="not available for Toy"):
        rankwise.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, [make_measure("Toy")],
                          ties="expected")


def test_too_much_work_is_refused_not_approximated(monkeypatch):
    monkeypatch.setattr(expected_module.numerics, "WORK_LIMIT", 10.0)
    qrels = {"q": {f"d{i}": int(i % 5 == 0) for i in range(60)}}
    run = {"q": {f"d{i}": 1.0 for i in range(60)}}
    with pytest.raises(MeasureError, match="would take about"):
        rankwise.evaluate(qrels, run, ["11pt_avg"], ties="expected")


# ---------------------------------------------------------------------------- scale


def test_large_tie_groups_with_few_relevant_are_fast():
    """10 queries: 200 untied documents, then a tie group of 3,000 holding 3 relevant ones."""
    rng = np.random.default_rng(7)
    qrels, run = {}, {}
    for q in range(10):
        docs = [f"d{i}" for i in range(3200)]
        relevant = list(rng.choice(200, size=2, replace=False)) + \
            list(200 + rng.choice(3000, size=3, replace=False))
        qrels[f"q{q}"] = {docs[i]: int(rng.integers(1, 4)) for i in relevant}
        run[f"q{q}"] = {d: (float(3200 - i) if i < 200 else 0.0) for i, d in enumerate(docs)}
    names = [str(m) for m in MONOTONE if not isinstance(m.cutoff, int) or m.cutoff > 3]
    names += ["P@1000", "AP@1000", "nDCG@1000", "ERR@1000", "Success@1000", "RR@1000"]
    start = time.process_time()
    got = rankwise.evaluate(qrels, run, names, ties="expected")
    elapsed = time.process_time() - start
    best = rankwise.evaluate(qrels, run, names, ties="optimistic")
    worst = rankwise.evaluate(qrels, run, names, ties="pessimistic")
    for name in names:
        assert worst.mean(name) - 1e-12 <= got.mean(name) <= best.mean(name) + 1e-12, name
    assert elapsed < 30, elapsed
