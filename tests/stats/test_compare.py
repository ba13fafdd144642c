"""rankwise.compare and ``rankwise compare``: the table, markers, warnings, formats, CLI."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

import rankwise
from rankwise.compare import compare_result
from rankwise.plain import latex_text, markdown_text
from tests.helpers import write


def collection(n=30, seed=0, strengths=(1.0, 0.6, 0.0)):
    """qrels and runs of len(strengths) systems over n queries (dicts)."""
    rng = np.random.default_rng(seed)
    qrels, runs = {}, {f"s{i}": {} for i in range(len(strengths))}
    for q in range(n):
        grades = rng.choice(3, size=20, p=[0.7, 0.2, 0.1])
        qrels[f"q{q:02d}"] = {f"d{d}": int(g) for d, g in enumerate(grades)}
        for i, strength in enumerate(strengths):
            score = strength * grades + rng.normal(size=20)
            runs[f"s{i}"][f"q{q:02d}"] = {f"d{d}": float(s) for d, s in enumerate(score)}
    return qrels, runs


def first_relevant(ranks):
    """The third seed article's MRR example: one relevant document per query at these ranks."""
    fillers = [f"n{j:02d}" for j in range(14)]
    qrels = {f"u{i}": {"hit": 1, **{d: 0 for d in fillers}} for i in range(len(ranks["A"]))}
    runs = {}
    for system, first in ranks.items():
        runs[system] = {f"u{i}": {d: float(100 - k) for k, d in enumerate(fillers[:r - 1] + ["hit"])}
                        for i, r in enumerate(first)}
    return qrels, runs


def test_all_pairs_randomization_table():
    qrels, runs = collection()
    c = rankwise.compare(qrels, runs, ["nDCG@10", "AP"])
    assert c.systems == ["s0", "s1", "s2"] and c.labels == {"s0": "a", "s1": "b", "s2": "c"}
    assert len(c.tests) == 6 and {r["test"].test for r in c.tests} == {"randomization"}
    assert c.summary["nDCG@10"]["s0"]["markers"] == "bc"
    assert c.summary["nDCG@10"]["s2"]["markers"] == ""
    # Holm over the three pairs of one measure
    raw = np.array([r["test"].p_value for r in c.tests if r["measure"] == "AP"])
    adj = [r["p_value_corrected"] for r in c.tests if r["measure"] == "AP"]
    from statsmodels.stats.multitest import multipletests

    assert adj == pytest.approx(multipletests(raw, method="holm")[1])
    table = c.to_table()
    assert "0.7" in table and "^bc" in table and "conventions:" in table
    means = rankwise.evaluate(qrels, runs, ["AP"]).aggregates
    assert c.summary["AP"]["s1"]["mean"] == pytest.approx(means["s1"]["AP"])


def test_same_seed_same_numbers():
    qrels, runs = collection(n=40, seed=1, strengths=(0.5, 0.45))
    a = rankwise.compare(qrels, runs, ["AP"], test="bootstrap", seed=5, permutations=2000)
    b = rankwise.compare(qrels, runs, ["AP"], test="bootstrap", seed=5, permutations=2000)
    assert a.to_json() == b.to_json()
    assert json.loads(a.to_json())["settings"]["seed"] == 5


@pytest.mark.parametrize("test", ["t", "wilcoxon", "sign"])
def test_paired_tests_match_scipy_through_compare(test):
    qrels, runs = collection(n=30, seed=2, strengths=(0.5, 0.3))
    c = rankwise.compare(qrels, runs, ["nDCG@10"], baseline="s1", test=test)
    result = rankwise.evaluate(qrels, runs, ["nDCG@10"], per_query=True)
    x, y = (result.systems[s].values["nDCG@10"] for s in ("s0", "s1"))
    nonzero = (x - y)[x != y]  # Wilcoxon: exact (at most 200 non-zero differences, no ties)
    assert len(nonzero) <= 50 and len(np.unique(np.abs(nonzero))) == len(nonzero)
    ref = {"t": lambda: stats.ttest_rel(x, y).pvalue,
           "wilcoxon": lambda: stats.wilcoxon(nonzero, method="exact").pvalue,
           "sign": lambda: stats.binomtest(int((x > y).sum()), int((x != y).sum())).pvalue}[test]()
    (row,) = c.tests
    assert (row["system"], row["other"]) == ("s0", "s1")
    assert row["test"].p_value == pytest.approx(ref, rel=1e-10)
    assert row["p_value_corrected"] == pytest.approx(ref, rel=1e-10)  # one test: unchanged
    assert set(c.risk["nDCG@10"]["s0"]) == {"urisk", "trisk"}


def test_wilcoxon_through_compare_is_exact_on_few_tied_queries():
    # five queries, A one relevant document ahead of B in the top 5 of each: five tied
    # differences of +0.2; the smallest p-value the signed-rank test can give is 2/2**5
    # (the normal approximation gave 0.0253 and called it significant)
    qrels = {f"q{i}": {"r0": 1, "r1": 1, "n0": 0, "n1": 0, "n2": 0, "n3": 0} for i in range(5)}
    ranked = {"A": ["r0", "r1", "n0", "n1", "n2", "n3"], "B": ["r0", "n0", "n1", "n2", "n3", "r1"]}
    runs = {name: {q: {d: float(6 - k) for k, d in enumerate(docs)} for q in qrels}
            for name, docs in ranked.items()}
    c = rankwise.compare(qrels, runs, ["P@5"], test="wilcoxon", baseline="B")
    (row,) = c.tests
    ref = stats.permutation_test((np.full(5, 0.2),), lambda d: stats.rankdata(abs(d))[d > 0].sum(),
                                 permutation_type="samples", n_resamples=np.inf).pvalue
    assert row["test"].p_value == pytest.approx(ref, rel=1e-12) and ref == pytest.approx(0.0625)
    assert row["test"].details["method"] == "exact" and not row["significant"]


def test_wilcoxon_through_compare_does_not_rank_float_noise():
    # P@5 with these hits gives differences (in fifths) 2, 2, 1, 4, 3, 1, 4, -2; as floats the
    # first two are 0.39999999999999997 and 0.4, which once took different ranks (T = 4.5,
    # p = 0.0703) where the hit counts tie (T = 4, p = 0.0547)
    hits = {"A": [3, 4, 1, 5, 5, 2, 5, 0], "B": [1, 2, 0, 1, 2, 1, 1, 2]}
    qrels = {f"q{i}": {**{f"r{j}": 1 for j in range(5)}, **{f"n{j}": 0 for j in range(5)}}
             for i in range(8)}
    runs = {name: {f"q{i}": {d: float(10 - k) for k, d in enumerate(
                [f"r{j}" for j in range(h)] + [f"n{j}" for j in range(5 - h)])}
                   for i, h in enumerate(counts)} for name, counts in hits.items()}
    (row,) = rankwise.compare(qrels, runs, ["P@5"], test="wilcoxon", baseline="B").tests
    exact = np.subtract(hits["A"], hits["B"])
    ref = stats.permutation_test((exact,), lambda d: stats.rankdata(abs(d))[d > 0].sum(),
                                 permutation_type="samples", n_resamples=np.inf).pvalue
    assert row["test"].statistic == 4.0
    assert row["test"].p_value == pytest.approx(ref, rel=1e-12)


def raw_p(c, measure, a, b):
    """The uncorrected p-value of the pair {a, b} on measure, whichever way round it was tested."""
    (row,) = [r for r in c.tests if r["measure"] == measure and {r["system"], r["other"]} == {a, b}]
    return row["test"].p_value


@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
@pytest.mark.parametrize("systems,measures", [
    (("s0", "s1"), ("nDCG@10", "AP")),  # another measure
    (("s0", "s2", "s1"), ("AP",)),  # a third system
    (("s1", "s0"), ("AP",)),  # the other order
    (("s2", "s1", "s0"), ("RR", "AP")),  # all three
], ids=["measure-added", "system-added", "reordered", "all"])
def test_random_streams_depend_on_the_names_not_on_other_measures_or_systems(
        test, systems, measures):
    # the stream of a test is keyed by the measure and the pair's names: adding a measure or
    # a system, or reordering the systems, leaves a pair's p-value and a system's interval
    qrels, runs = collection(n=40, seed=8, strengths=(0.5, 0.45, 0.4))

    def run(names, measures):
        return rankwise.compare(qrels, {s: runs[s] for s in names}, list(measures), test=test,
                                permutations=2000, interval="bootstrap", seed=3)

    alone = run(("s0", "s1"), ("AP",))
    p, low = raw_p(alone, "AP", "s0", "s1"), alone.summary["AP"]["s0"]["ci_low"]
    assert 0.001 < p < 1 and not alone.tests[0]["test"].details.get("exact")
    other = run(systems, measures)
    assert raw_p(other, "AP", "s0", "s1") == p
    assert other.summary["AP"]["s0"]["ci_low"] == low


def test_randomized_tukey_stream_does_not_depend_on_other_measures_or_the_order():
    qrels, runs = collection(n=30, seed=9, strengths=(0.5, 0.45, 0.4))
    reordered = {name: runs[name] for name in ("s2", "s0", "s1")}
    c = rankwise.compare(qrels, runs, ["AP"], test="randomized-tukey", permutations=500)
    other = rankwise.compare(qrels, reordered, ["RR", "AP"], test="randomized-tukey",
                             permutations=500)
    for a, b in (("s0", "s1"), ("s0", "s2"), ("s1", "s2")):
        assert raw_p(other, "AP", a, b) == raw_p(c, "AP", a, b)


@pytest.mark.parametrize("test", ["tukey", "randomized-tukey"])
def test_tukey_groups(test):
    qrels, runs = collection(n=30, seed=3, strengths=(1.0, 0.95, 0.0))
    c = rankwise.compare(qrels, runs, ["AP"], test=test, permutations=2000)
    groups = c.groups["AP"]
    assert groups["s0"] == groups["s1"] != groups["s2"]
    assert all(r["p_value_corrected"] is None for r in c.tests)
    if test == "tukey":
        assert c.anova["AP"].p_system < 0.05


@pytest.mark.parametrize("test,p", [("randomization", 1.0), ("sign", 1.0), ("wilcoxon", 1.0),
                                    ("randomized-tukey", 1.0), ("t", None), ("bootstrap", None),
                                    ("tukey", None)])
def test_one_query_runs_the_requested_test(test, p):
    # with one compared query a test is run as asked: its value where it has one (p = 1),
    # NaN with a warning saying why where it has none; never another test in its place
    from rankwise.compare import _TEST_NAMES

    qrels = {"q1": {"rel": 1}}
    runs = {"A": {"q1": {"rel": 2.0, "x": 1.0}}, "B": {"q1": {"x": 2.0, "rel": 1.0}},
            "C": {"q1": {"x": 3.0, "y": 2.0, "rel": 1.0}}}
    c = rankwise.compare(qrels, runs, ["RR"], test=test, permutations=200)
    assert c.describe().startswith(_TEST_NAMES[test]) and c.n_queries == {"RR": 1}
    assert len(c.tests) == 3 and {r["test"].test for r in c.tests} == {test}
    undefined = [w for w in c.warnings if "undefined with 1 compared query" in w]
    for row in c.tests:
        assert not row["significant"] and row["test"].n == 1
        if p is None:
            assert math.isnan(row["test"].p_value)
        else:
            assert row["test"].p_value == p
    if p is None:
        (text,) = undefined
        assert text.startswith(f"RR: the {_TEST_NAMES[test]} is undefined with 1 compared query")
        assert ("standard deviation" in text or "degrees of freedom" in text)
        assert "p-values are NaN" in text
    else:
        assert not undefined
    # undefined numbers print as nan, without a sign ('+nan' read as a direction), and the
    # few-queries warning says that no effect is detectable (it read "Cohen's d >= inf")
    for text in (c.to_table(), c.to_markdown(), c.to_latex()):
        assert "+nan" not in text and "-nan" not in text
    assert "only 1 query: a paired t-test needs at least 2 to detect any effect; use at least 25 "\
           "queries" in c.warnings
    assert not any("d >= inf" in w for w in c.warnings)


def test_carried_by_few_counts_wins_and_losses_as_the_tests_do():
    # 0.3 - (0.1 + 0.2) is rounding, a tie in every test's W/T/L: the warning counted it as
    # a loss ("wins 1, loses 3" beside a W/T/L of 1/1/2)
    from rankwise.stats import paired_test
    from rankwise.stats.paired import paired_differences
    from rankwise.stats.pitfalls import carried_by_few_warning

    x, y = [0.6, 0.3, 0.2, 0.3], [0.1, 0.1 + 0.2, 0.3, 0.4]
    diffs = paired_differences(x, y)
    text = carried_by_few_warning("P@5", "A", "B", diffs.d, diffs.scale, diffs.allowance)
    outcome = paired_test("t", x, y)
    assert (outcome.wins, outcome.ties, outcome.losses) == (1, 1, 2)
    assert "(mean difference 0.0750) only because of 1 of 4 queries" in text
    assert "A wins 1, loses 2)" in text


def test_seed_article_mrr_example_warnings():
    # 002_e6944b62997f94eb.txt: first relevant at 2, 3, 2, 3 (A) -> MRR 0.4167 and 1, 10, 1, 15
    # (B) -> 0.5417: B's lead comes from two queries; A is the more consistent system.
    qrels, runs = first_relevant({"A": [2, 3, 2, 3], "B": [1, 10, 1, 15]})
    c = rankwise.compare(qrels, runs, ["RR"], baseline="A")
    assert round(c.summary["RR"]["A"]["mean"], 4) == 0.4167
    assert round(c.summary["RR"]["B"]["mean"], 4) == 0.5417
    text = "\n".join(c.warnings)
    assert "RR: B is ahead of A (mean difference 0.1250) only because of 1 of 4 queries" in text
    assert "B wins 2, loses 2" in text
    assert "only 4 queries" in text and "Cohen's d >=" in text  # minimum detectable effect
    (row,) = c.tests
    assert (row["test"].wins, row["test"].ties, row["test"].losses) == (2, 0, 2)
    # exact: 12 of the 16 sign flips of (0.5, -0.233, 0.5, -0.267) reach |sum| = 0.5
    assert row["test"].p_value == 0.75 and row["test"].details["exact"]


def test_header_says_when_the_randomization_test_was_exact():
    # 5 queries: all 2**5 sign vectors are enumerated, no permutation is drawn
    qrels, runs = first_relevant({"A": [2, 3, 2, 3, 1], "B": [1, 10, 1, 15, 2]})
    c = rankwise.compare(qrels, runs, ["RR"])
    assert c.tests[0]["test"].details == {"exact": True, "permutations": 32}
    assert c.describe().endswith("95% intervals (t), exact (32 sign vectors)")
    assert c.to_table().splitlines()[0] == f"comparison: {c.describe()}"
    assert "exact (32 sign vectors)." in c.to_markdown()
    assert "exact (32 sign vectors)" in c.to_latex()
    assert not any("permutations" in text for text in (c.to_table(), c.to_markdown(),
                                                       c.to_latex()))
    boot = rankwise.compare(qrels, runs, ["RR"], interval="bootstrap", permutations=500)
    assert boot.describe().endswith("exact (32 sign vectors), 500 bootstrap resamples, seed 0")
    # P@1: A finds it first in all 30 queries, B in none (Monte Carlo); P@2: 18 of them differ
    qrels, runs = first_relevant({"A": [1] * 30, "B": [2] * 12 + [3] * 18})
    mixed = rankwise.compare(qrels, runs, ["P@1", "P@2"], permutations=1000)
    exact = {r["measure"]: r["test"].details["exact"] for r in mixed.tests}
    assert exact == {"P@1": False, "P@2": True}
    assert mixed.describe().endswith("exact for 1 of 2 tests (262144 sign vectors), "
                                     "1000 permutations for the others, seed 0")


@pytest.mark.parametrize("confidence,label", [(0.999, "99.9%"), (0.975, "97.5%"), (0.95, "95%"),
                                              (0.9, "90%"), (0.9999, "99.99%")])
def test_confidence_level_is_shown_as_given(confidence, label):
    # the level was rounded to a whole percent: 0.999 was labelled 100%, 0.975 98%
    qrels, runs = collection(n=30, seed=1, strengths=(1.0, 0.6))
    c = rankwise.compare(qrels, runs, ["AP"], test="t", confidence=confidence)
    assert f", {label} intervals (t)" in c.describe()
    assert c._test_header()[4] == f"{label} CI"
    table = c.to_table()
    assert table.splitlines()[0] == f"comparison: {c.describe()}" and f"{label} CI" in table
    markdown = c.to_markdown()
    assert f"{label} intervals" in markdown and f"| {label} CI |" in markdown
    assert f"{label} intervals".replace("%", r"\%") in c.to_latex()


def test_few_queries_warning_shows_the_power_as_given():
    from rankwise.stats.pitfalls import few_queries_warning

    text = few_queries_warning(10, 0.05, 0.875, {})
    assert "has 87.5% power" in text
    d = (stats.t.ppf(0.975, 9) + stats.t.ppf(0.875, 9)) / math.sqrt(10)
    assert f"Cohen's d >= {d:.2f}" in text


def test_rank_agreement_does_not_depend_on_the_order_of_the_runs():
    # A and B tie on P@1 (0.5 each), B is ahead of A on RR, C last on both: RBO was 0.9 when
    # A was given first and 1.0 when B was; it is now the mean over both orderings of the tie
    qrels = {f"q{i}": {"rel": 1, "x": 0, "y": 0} for i in range(4)}

    def run(first):  # the rank of the relevant document in each query
        ranked = [["x", "y"][:r - 1] + ["rel"] + ["x", "y"][r - 1:] for r in first]
        return {f"q{i}": {d: float(10 - k) for k, d in enumerate(docs)}
                for i, docs in enumerate(ranked)}

    runs = {"A": run([1, 1, 3, 3]), "B": run([1, 1, 2, 2]), "C": run([1, 3, 3, 3])}
    seen = set()
    for names in itertools.permutations(runs):
        c = rankwise.compare(qrels, {n: runs[n] for n in names}, ["P@1", "RR"], test="t")
        (agreement,) = c.agreement
        seen.add((round(agreement["kendall_tau"], 12), round(agreement["rbo"], 12)))
    (tau, value), = seen
    assert tau == pytest.approx(stats.kendalltau([0.5, 0.5, 0.25], [2 / 3, 0.75, 0.5]).statistic)
    # the orderings (A, B, C) and (B, A, C) against (B, A, C): RBO 0.9 and 1, equally likely
    assert value == pytest.approx((0.1 / 0.9 * (0.81 + 0.729) + 0.729 + 1.0) / 2)


def test_cutoff_and_missing_query_and_nan_warnings():
    qrels, runs = collection(n=30, seed=4, strengths=(0.8, 0.2))
    del runs["s1"]["q03"]
    c = rankwise.compare(qrels, runs, ["nDCG@5", "nDCG@10"])
    text = "\n".join(c.warnings)
    assert "nDCG at different cutoffs (nDCG@5, nDCG@10)" in text
    assert "1 queries are not evaluated for every system" in text and "q03 (missing for s1)" in text
    assert c.n_queries == {"nDCG@5": 29, "nDCG@10": 29}
    zero = rankwise.compare(qrels, runs, ["nDCG@10"], missing_queries="zero")
    assert zero.n_queries == {"nDCG@10": 30}
    assert not any("not evaluated" in w for w in zero.warnings)
    # MAE: queries without a rating are undefined (NaN) and left out, counted
    rq = {"u1": {"a": 4.0}, "u2": {"b": 3.0}, "u3": {"c": 5.0}}
    r1 = {"u1": {"a": 3.5}, "u2": {"x": 1.0}, "u3": {"c": 4.0}}
    r2 = {"u1": {"a": 2.0}, "u2": {"b": 1.0}, "u3": {"c": 3.0}}
    m = rankwise.compare(rq, {"r1": r1, "r2": r2}, ["MAE"], test="t")
    assert m.n_queries == {"MAE": 2}
    assert any("MAE: 1 queries have no value" in w and "u2" in w for w in m.warnings)
    assert m.summary["MAE"]["r1"]["mean"] == pytest.approx(0.75)


def test_dropped_counts_the_queries_left_out_for_a_nan_value():
    # u2: r1 ranks no rated item, so its MAE is undefined (NaN); the query is left out of every
    # test of MAE, so that all pairs are tested on the same queries, and counted in each
    rq = {"u1": {"a": 4.0}, "u2": {"b": 3.0}, "u3": {"c": 5.0}, "u4": {"d": 2.0}}
    r1 = {"u1": {"a": 3.5}, "u2": {"x": 1.0}, "u3": {"c": 4.0}, "u4": {"d": 2.5}}
    r2 = {"u1": {"a": 2.0}, "u2": {"b": 1.0}, "u3": {"c": 3.0}, "u4": {"d": 1.0}}
    r3 = {"u1": {"a": 1.0}, "u2": {"b": 2.0}, "u3": {"c": 2.0}, "u4": {"d": 4.0}}
    c = rankwise.compare(rq, {"r1": r1, "r2": r2, "r3": r3}, ["MAE", "P@1"], test="t")
    counts = {(r["measure"], r["system"], r["other"]): (r["test"].n, r["test"].dropped)
              for r in c.tests}
    assert counts == {("MAE", "r1", "r2"): (3, 1), ("MAE", "r1", "r3"): (3, 1),
                      ("MAE", "r2", "r3"): (3, 1), ("P@1", "r1", "r2"): (4, 0),
                      ("P@1", "r1", "r3"): (4, 0), ("P@1", "r2", "r3"): (4, 0)}
    assert {t["dropped"] for t in json.loads(c.to_json())["tests"] if t["measure"] == "MAE"} == {1}


@pytest.mark.parametrize("test", ["sign", "t", "tukey"])
def test_wins_follow_the_measures_direction(test):
    # MAE per user, r1 against r2: 0.5/2.0, 1.0/2.0, 1.0/3.0 (r1 better), 0.5/0.5 (tie),
    # 2.0/1.0 (r1 worse): a win is a lower error, 3 wins, 1 tie, 1 loss
    rq = {f"u{i}": {"a": 4.0} for i in range(5)}
    r1 = {f"u{i}": {"a": 4.0 - e} for i, e in enumerate([0.5, 1.0, 1.0, 0.5, 2.0])}
    r2 = {f"u{i}": {"a": 4.0 - e} for i, e in enumerate([2.0, 2.0, 3.0, 0.5, 1.0])}
    c = rankwise.compare(rq, {"r1": r1, "r2": r2}, ["MAE", "P@1"], test=test)
    mae = next(r["test"] for r in c.tests if r["measure"] == "MAE")
    assert (mae.wins, mae.ties, mae.losses) == (3, 1, 1)
    assert mae.mean_difference == pytest.approx(-0.7)  # still r1 - r2, raw
    if test == "sign":
        assert mae.statistic == 3
        assert mae.p_value == pytest.approx(stats.binomtest(3, 4).pvalue)
    p1 = next(r["test"] for r in c.tests if r["measure"] == "P@1")
    assert (p1.wins, p1.ties, p1.losses) == (0, 5, 0)
    assert "3/1/1" in c.to_table()
    row = next(r for r in csv.DictReader(io.StringIO(c.to_csv())) if r["measure"] == "MAE")
    assert (row["wins"], row["ties"], row["losses"]) == ("3", "1", "1")


def test_queries_differing_by_a_trailing_nul_stay_apart():
    # numpy's fixed-width strings drop a trailing NUL: 'q' and 'q\x00' were one query
    qrels = {"q": {"a": 1}, "q\x00": {"b": 1}}
    runs = {"x": {"q": {"a": 1.0}, "q\x00": {"a": 1.0}},
            "y": {"q": {"b": 1.0}, "q\x00": {"b": 1.0}}}
    (row,) = rankwise.compare(qrels, runs, ["AP"], test="t").tests
    t = row["test"]
    assert (t.n, t.wins, t.ties, t.losses, t.mean_difference) == (2, 1, 0, 1, 0.0)


def test_formats():
    qrels, runs = collection(n=30, seed=5)
    c = rankwise.compare(qrels, runs, ["AP", "RR"], baseline="s2", permutations=1000)
    data = json.loads(c.to_json())
    assert {t["system"] for t in data["tests"]} == {"s0", "s1"}
    assert all("p_value" in t and "p_value_corrected" in t for t in data["tests"])
    assert data["summary"]["AP"]["s0"]["markers"] == "c"
    assert data["agreement"][0]["measures"] == ["AP", "RR"]
    latex = c.to_latex()
    assert r"\begin{tabular}" in latex and "$^{c}$" in latex and r"\textbf{" in latex
    assert "<sup>c</sup>" in c.to_markdown()
    rows = list(csv.reader(io.StringIO(c.to_csv())))
    assert rows[0][:7] == ["measure", "system", "other", "test", "statistic", "p_value",
                           "p_value_corrected"]
    assert len(rows) == 5 and {len(r) for r in rows} == {len(rows[0])}
    assert compare_result(rankwise.evaluate(qrels, runs, ["AP", "RR"], per_query=True),
                          baseline="s2", permutations=1000, measures=["AP"]).measures == ["AP"]


def test_markers_beyond_26_systems_are_separated():
    # 28 systems with RR 1 on every query but c and ab (the 3rd and 28th), RR 0.5: each of
    # the others is better than c and ab, and its marker reads "c,ab" in every format (run
    # together, "c" + "ab" sorted letter by letter read "abc": a, b and c)
    qrels = {f"q{i}": {"hit": 1, "miss": 0} for i in range(12)}
    first = {q: {"hit": 2.0, "miss": 1.0} for q in qrels}
    second = {q: {"hit": 1.0, "miss": 2.0} for q in qrels}
    runs = {f"s{i:02d}": second if i in (2, 27) else first for i in range(28)}
    c = rankwise.compare(qrels, runs, ["RR"], test="randomization", correction="none")
    assert (c.labels["s02"], c.labels["s27"]) == ("c", "ab")
    assert c.summary["RR"]["s00"]["markers"] == "c,ab" and c.summary["RR"]["s02"]["markers"] == ""
    assert "x^b,c: significantly better than system b and system c" in c.legend()
    assert "1.0000^c,ab" in c.to_table()
    assert "1.0000<sup>c,ab</sup>" in c.to_markdown()
    assert "1.0000$^{c,ab}$" in c.to_latex()
    assert json.loads(c.to_json())["summary"]["RR"]["s26"]["markers"] == "c,ab"
    few = rankwise.compare(qrels, {"a": first, "b": first, "c": second}, ["RR"],
                           test="randomization", correction="none")
    assert few.summary["RR"]["a"]["markers"] == "c" and "x^bc:" in few.legend()


CSV_COLUMNS = ["measure", "system", "other", "test", "statistic", "p_value", "p_value_corrected",
               "mean_difference", "ci_low", "ci_high", "effect_size", "wins", "ties", "losses",
               "n", "significant"]


def test_csv_carries_the_settings():
    # the settings other formats print in their header are columns after the unchanged ones
    qrels, runs = collection(n=30, seed=5)
    c = rankwise.compare(qrels, runs, ["AP"], baseline="s2", correction="bonferroni",
                         permutations=1000, seed=7, confidence=0.9)
    rows = list(csv.DictReader(io.StringIO(c.to_csv())))
    assert list(rows[0]) == [*CSV_COLUMNS, "correction", "alpha", "confidence", "seed",
                             "permutations", "exact"]
    for row, test in zip(rows, c.tests):
        assert float(row["p_value_corrected"]) == test["p_value_corrected"]
        assert (row["correction"], row["alpha"], row["confidence"], row["seed"]) == (
            "bonferroni", "0.05", "0.9", "7")
        assert (row["permutations"], row["exact"]) == ("1000", "false")
    qrels, runs = first_relevant({"A": [2, 3, 2, 3, 1], "B": [1, 10, 1, 15, 2]})
    (row,) = csv.DictReader(io.StringIO(rankwise.compare(qrels, runs, ["RR"]).to_csv()))
    assert (row["correction"], row["permutations"], row["exact"]) == ("holm", "32", "true")
    (row,) = csv.DictReader(io.StringIO(rankwise.compare(qrels, runs, ["RR"], test="wilcoxon",
                                                         correction="none").to_csv()))
    # three differences of +-0.5 tie: Wilcoxon's exact null distribution of the mid-ranks
    assert (row["correction"], row["permutations"], row["exact"]) == ("none", "", "true")
    # above 200 non-zero differences: the normal approximation
    qrels, runs = first_relevant({"A": [1] * 201, "B": [2] * 201})
    (row,) = csv.DictReader(io.StringIO(rankwise.compare(qrels, runs, ["RR"], test="wilcoxon",
                                                         correction="none").to_csv()))
    assert (row["permutations"], row["exact"]) == ("", "false")


def test_bad_arguments():
    qrels, runs = collection(n=5, seed=6)
    for kwargs, message in [({"test": "anova"}, "unknown test"),
                            ({"correction": "sidak"}, "unknown correction"),
                            ({"baseline": "nope"}, "baseline"), ({"alpha": 2}, "alpha"),
                            ({"seed": -1}, "seed must be"), ({"seed": 1.5}, "seed must be")]:
        with pytest.raises(rankwise.InputError, match=message):
            rankwise.compare(qrels, runs, ["AP"], **kwargs)
    # refused before the runs are evaluated: confidence "0.9" and risk_alpha "1" were a
    # TypeError traceback, 1.5 refused only after every run was evaluated, and risk_alpha NaN
    # gave TRisk inf
    result = rankwise.evaluate(qrels, runs, ["AP"], per_query=True)
    for kwargs, message in [({"confidence": "0.9"}, "confidence must be"),
                            ({"confidence": 1.5}, "confidence must be"),
                            ({"interval": "x"}, "interval must be"),
                            ({"risk_alpha": "1", "baseline": "s0"}, "risk_alpha must be"),
                            ({"risk_alpha": math.nan, "baseline": "s0"}, "risk_alpha must be")]:
        with pytest.raises(rankwise.InputError, match=message):
            compare_result(result, **kwargs)
        with pytest.raises(rankwise.InputError, match=message):
            rankwise.compare(qrels, "not a run", ["AP"], **kwargs)  # before reading the runs
    # power: 1.5 gave "150% power ... d >= nan", 0 and 1 "d >= -inf" and "d >= inf"; at or
    # below alpha, a test has that power against no effect at all
    result = rankwise.evaluate(qrels, runs, ["AP"], per_query=True)
    for power in (1.5, 1, 1.0, 0, -0.2, 0.05, 0.01, float("nan"), "0.8", True):
        for call in (lambda: rankwise.compare(qrels, runs, ["AP"], power=power),
                     lambda: compare_result(result, power=power)):
            with pytest.raises(rankwise.InputError) as caught:
                call()
            assert str(caught.value) == ("power: power must be a number strictly between "
                                         f"alpha (0.05) and 1 (got {repr(power)!r})")
    with pytest.raises(rankwise.InputError, match=r"between alpha \(0.1\) and 1"):
        rankwise.compare(qrels, runs, ["AP"], alpha=0.1, power=0.1)
    few = rankwise.compare(qrels, runs, ["AP"], alpha=0.1, power=0.11, test="t")
    d = (stats.t.ppf(0.95, 4) + stats.t.ppf(0.11, 4)) / math.sqrt(5)
    assert any(f"has 11% power only for effects of Cohen's d >= {d:.2f}" in w for w in few.warnings)
    with pytest.raises(rankwise.InputError, match="at least two systems"):
        rankwise.compare(qrels, runs["s0"], ["AP"])


def trec_files(tmp_path):
    qrels, runs = collection(n=30, seed=7)
    qrels_text = "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())
    paths = [write(tmp_path, "qrels.txt", qrels_text)]
    for name, run in runs.items():
        lines = []
        for q, docs in run.items():
            ranked = sorted(docs.items(), key=lambda kv: -kv[1])
            lines += [f"{q} Q0 {d} {r} {s:.6f} {name}\n" for r, (d, s) in enumerate(ranked, 1)]
        paths.append(write(tmp_path, f"{name}.run", "".join(lines)))
    return paths


def cli(*args):
    return subprocess.run([sys.executable, "-m", "rankwise", "compare", *args],
                          capture_output=True, text=True)


def test_cli_compare_json_and_latex(tmp_path):
    qrels, *runs = trec_files(tmp_path)
    out = cli(qrels, *runs, "-m", "nDCG@10", "AP", "--baseline", "s2.run", "--test", "t",
              "--correction", "bonferroni", "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["settings"]["baseline"] == "s2.run" and len(data["tests"]) == 4
    for t in data["tests"]:
        assert 0 <= t["p_value"] <= t["p_value_corrected"] <= 1
    table = cli(qrels, *runs, "-m", "AP", "--test", "t", "--correction", "bh", "--format", "csv")
    assert table.returncode == 0, table.stderr
    rows = list(csv.DictReader(io.StringIO(table.stdout)))
    assert len(rows) == 3 and list(rows[0])[:len(CSV_COLUMNS)] == CSV_COLUMNS
    assert {(r["test"], r["correction"], r["seed"], r["permutations"]) for r in rows} == {
        ("t", "bh", "0", "")}
    latex = cli(qrels, *runs, "-m", "AP", "--permutations", "500", "--format", "latex")
    assert latex.returncode == 0 and "$^{bc}$" in latex.stdout
    table = cli(qrels, *runs, "-m", "AP", "--test", "randomized-tukey", "--permutations", "500")
    assert table.returncode == 0 and "groups" in table.stdout


def test_cli_bad_test_is_one_line_exit_2(tmp_path):
    qrels, *runs = trec_files(tmp_path)
    out = cli(qrels, *runs, "--test", "z-test")
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0
    assert "unknown test" in out.stderr and "'z-test'" in out.stderr
    bad = cli(qrels, *runs, "--baseline", "other.run")
    assert bad.returncode == 2 and "--baseline must name one of the runs" in bad.stderr


def test_markdown_and_latex_state_their_precision_conventions_and_warnings():
    """Every form of a comparison reports the conventions beside its numbers and says how it
    rounded them (the LaTeX table had neither, nor its warnings)."""
    qrels, runs = collection(n=3)  # few queries: a warning
    c = rankwise.compare(qrels, runs, ["nDCG@10"], test="t")
    assert c.warnings
    markdown, latex = c.to_markdown(digits=3), c.to_latex(digits=3)
    sentence = ("Means, differences and intervals rounded to 3 decimals, statistics to 3, "
                "p-values to 4, effect sizes to 2 (CSV and JSON hold every digit)")
    assert sentence + "." in markdown and "% " + sentence in latex.splitlines()
    assert f"Conventions: {markdown_text(c.conventions.describe())}" in markdown
    conventions = [line for line in latex.splitlines() if line.startswith("% conventions: ")]
    assert conventions == ["% conventions: " + latex_text(
        c.conventions.describe())]
    assert [line for line in latex.splitlines() if line.startswith("% warning: ")] == [
        "% warning: " + latex_text(w) for w in c.warnings]
    assert f"{c.summary['nDCG@10']['s0']['mean']:.3f}" in latex
    for write_out in (c.to_table, c.to_markdown, c.to_latex):
        with pytest.raises(ValueError, match="digits must be a whole number"):
            write_out(digits=-1)
