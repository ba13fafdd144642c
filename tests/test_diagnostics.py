"""Diagnostics: every check on hand-made lists (what it finds, and that it finds nothing where
there is nothing), Judged@K against ir_measures' own Judged, the warnings in the Result, the
JSON and on the command line, and the text of ``--diagnostics``."""

from __future__ import annotations

import re

import numpy as np
import pytest

import rankwise
from rankwise.cli import main
from rankwise.core.judgments import index_judgments
from rankwise.core.ranked import rank
from rankwise.diagnostics import (Check, details, judged_at, pitfall_warnings, run_checks,
                                  summary_line)
from rankwise.io import to_qrels, to_run
from rankwise.measures import parse_measures
from tests.helpers import write

BINARY_QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
RUN = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0, "d": 0.5}}


def warnings(qrels, measures, **conventions):
    result = rankwise.evaluate(qrels, RUN, measures, **conventions)
    return result.systems["run"].warnings


def checks(qrels, run, measures, values=None, **conventions):
    conv = rankwise.conventions.resolve(None, **conventions)
    lists = rank(index_judgments(to_qrels(qrels)), to_run(run), conv)
    parsed = parse_measures(measures)
    if values is True:
        values = {str(m): m.compute(lists) for m in parsed}
    return run_checks(lists, parsed, values)


def by_code(found, code, severity=None):
    return [c for c in found if c.code == code and (severity is None or c.severity == severity)]


# ---------------------------------------------------------------------------- the first three


def test_graded_measure_on_binary_judgments():
    assert warnings(BINARY_QRELS, ["nDCG@10", "AP"]) == [
        "nDCG@10 uses graded relevance, but every judgment is 0 or 1: it reduces to binary gains"]
    assert warnings({"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}, ["nDCG@10"]) == []


def test_threshold_above_every_grade():
    got = warnings(BINARY_QRELS, ["P@1", "AP", "P(rel=1)@1"], relevance_threshold=2)
    assert got == ["relevance threshold 2 is above every judged grade (the largest is 1): "
                   "no document is relevant for P@1, AP"]


def test_lists_shorter_than_the_cutoff():
    assert warnings(BINARY_QRELS, ["P@2", "P@3", "R@3"]) == [
        "P@3: 2 of 2 queries retrieved fewer than 3 documents; the missing ranks count as "
        "non-relevant"]
    notes = by_code(checks(BINARY_QRELS, RUN, ["R@3", "nDCG@3"]), "short_lists")
    assert [(c.severity, c.queries, c.examples) for c in notes] == [("note", 2, ("q1", "q2"))]
    assert notes[0].message.startswith("R@3, nDCG@3: 2 of 2 queries retrieved fewer than 3")
    assert by_code(checks(BINARY_QRELS, RUN, ["P@2"]), "short_lists")[0].severity == "ok"


# ---------------------------------------------------------------------------- ties at a cutoff


def test_ties_straddling_a_cutoff():
    qrels = {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"x": 1, "y": 1}, "q3": {"m": 1}}
    run = {"q1": {"a": 3.0, "b": 2.0, "c": 2.0},  # b, c tie across rank 2, grades differ
           "q2": {"x": 5.0, "y": 5.0},  # tie across rank 1, same grade
           "q3": {"m": 1.0, "n": 0.5}}
    found = checks(qrels, run, ["P@2", "nDCG@2", "P@1"])
    (at2,) = by_code(found, "ties_at_cutoff")[:1]
    assert at2.severity == "warning" and at2.queries == 1 and at2.examples == ("q1",)
    assert at2.message.startswith("P@2, nDCG@2: ties straddle rank 2 in 1 of 3 queries")
    assert "depends on the tie order (ties=docid_desc)" in at2.message
    (at1,) = by_code(found, "ties_at_cutoff")[1:]
    assert at1.severity == "note" and at1.examples == ("q2",)
    assert "do not depend on the tie order" in at1.message
    # the value really does change with the tie order, as the warning says
    asc = rankwise.evaluate(qrels, run, ["P@2"], per_query=True, ties="docid_asc")
    desc = rankwise.evaluate(qrels, run, ["P@2"], per_query=True)
    assert asc.per_query()["q1"] != desc.per_query()["q1"]
    # averaging over the tied orders is a note, not a warning
    expected = by_code(checks(qrels, run, ["P@2"], ties="optimistic"), "ties_at_cutoff")
    assert expected[0].severity == "note" and "best value" in expected[0].message
    assert by_code(checks(qrels, run, ["P@3"]), "ties_at_cutoff")[0].severity == "ok"


# ---------------------------------------------------------------------------- no relevant, IDCG = 0


def test_queries_without_relevant_documents():
    qrels = {"q1": {"a": 1}, "q2": {"b": 0}, "q3": {"c": 2}}
    run = {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q3": {"x": 1.0, "c": 0.5}}
    (note,) = by_code(checks(qrels, run, ["AP", "P@1"], values=True), "no_relevant")
    assert note.severity == "note" and note.queries == 1 and note.examples == ("q2",)
    assert "they count in the mean (trec_eval)" in note.message
    assert "the mean over the other queries: AP 0.7500, P@1 0.5000" in note.message
    (skip,) = by_code(checks(qrels, run, ["AP"], no_relevant="skip"), "no_relevant")
    assert "leave them out of the mean (no_relevant='skip')" in skip.message
    (two,) = by_code(checks(qrels, run, ["AP(rel=2)"]), "no_relevant")
    assert two.queries == 2 and "grade >= 2" in two.message
    (idcg,) = by_code(checks(qrels, run, ["nDCG@5"]), "idcg_zero")
    assert idcg.queries == 1 and "ideal DCG of 0" in idcg.message
    assert by_code(checks({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["nDCG"]), "idcg_zero")[0] \
        .severity == "ok"


# ---------------------------------------------------------------------------- Judged@K


def test_judged_at_k_equals_ir_measures():
    ir_measures = pytest.importorskip("ir_measures")
    rng = np.random.default_rng(4)
    qrels, run = {}, {}
    for q in range(30):
        docs = [f"d{i}" for i in range(25)]
        qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in docs if rng.random() < 0.4}
        qrels[f"q{q}"].setdefault("d0", 1)
        run[f"q{q}"] = {d: float(rng.random()) for d in docs[:int(rng.integers(3, 25))]}
    lists = rank(index_judgments(to_qrels(qrels)), to_run(run))
    for cutoff in (1, 5, 10, 20):
        ours = dict(zip(lists.query_ids, judged_at(lists, cutoff)))
        theirs = {m.query_id: m.value for m in ir_measures.iter_calc(
            [ir_measures.Judged @ cutoff], qrels, run)}
        assert ours == pytest.approx(theirs, abs=1e-12), cutoff


def test_judged_at_k_warns_only_for_pooled_judgments():
    pooled = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1, "d": 0}}
    run = {"q1": {"x": 3.0, "y": 2.0, "a": 1.0}, "q2": {"z": 3.0, "w": 2.0, "c": 1.0}}
    (found,) = by_code(checks(pooled, run, ["P@3", "nDCG@3"]), "judged_at_k")
    assert found.severity == "warning" and found.value == pytest.approx(1 / 3)
    assert "Judged@3 = 0.333" in found.message and "Bpref" in found.message
    positives_only = {"q1": {"a": 1}, "q2": {"c": 1}}
    (note,) = by_code(checks(positives_only, run, ["P@3"]), "judged_at_k")
    assert note.severity == "note" and "not relevant by design" in note.message
    assert by_code(checks(pooled, run, ["Bpref"]), "judged_at_k") == []
    assert by_code(checks(pooled, {"q1": {"a": 1.0}, "q2": {"c": 1.0}}, ["AP"]),
                   "judged_at_k")[0].severity == "ok"


def test_judged_at_k_averages_only_queries_that_retrieved_something():
    # q2 is judged but not in the run: missing_queries='zero' gives it an empty list, whose
    # Judged@K is undefined (NaN), so the mean is q1's alone (and the example is q1)
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1, "d": 0}}
    run = {"q1": {"x": 3.0, "a": 2.0, "b": 1.0}}
    (found,) = by_code(checks(qrels, run, ["P@3"], missing_queries="zero"), "judged_at_k")
    assert found.value == pytest.approx(2 / 3) and found.queries == 1
    assert found.examples == ("q1",) and "Judged@3 = 0.667" in found.message
    (ok,) = by_code(checks(qrels, {"q1": {"a": 1.0}}, ["P@3"], missing_queries="zero"),
                    "judged_at_k")
    assert ok.severity == "ok" and ok.value == 1.0
    (none,) = by_code(checks({"q1": {"a": 1}}, {"q1": {}}, ["P@3"]), "judged_at_k")
    assert none.severity == "ok" and none.value is None  # no query retrieved anything


def test_means_in_the_checks_skip_undefined_values_as_numpy_does():
    from rankwise.api import _undefined_counts
    from rankwise.diagnostics import _means_without
    from rankwise.parts import Parts
    from rankwise.results import aggregate

    def mean_of_defined(values):  # as the checks take it: the mean over the queries with one
        mean = aggregate(values, "mean")
        return None if np.isnan(mean) else mean

    rng = np.random.default_rng(7)
    for n in (1, 7, 8, 50, 300):
        values = rng.random(n)
        assert mean_of_defined(values) == values.mean()  # bit for bit
        values[rng.random(n) < 0.3] = np.nan
        defined = values[~np.isnan(values)]
        assert mean_of_defined(values) == (defined.mean() if len(defined) else None)
    assert mean_of_defined(np.array([np.nan])) is None
    values = {"A": np.array([np.nan, 0.5, 1.0, 0.25]), "B": np.array([0.0, 0.1, 0.9, 0.3])}
    one = Parts([0, 4])
    (text,) = _means_without(["A", "B"], values, np.array([False, False, True, False]), one)
    assert text == "; the mean over the other queries: A 0.3750, B 0.1333"
    assert _means_without(["A"], values, np.ones(4, dtype=bool), one) == [""]
    two = Parts([0, 2, 4])  # each system's own queries
    assert _means_without(["A", "B"], values, np.array([False, True, False, False]), two) == \
        ["; the mean over the other queries: B 0.0000",
         "; the mean over the other queries: A 0.6250, B 0.6000"]
    with np.errstate(invalid="ignore"):  # inf - inf: a NaN sum without a NaN value
        assert _undefined_counts({"A": values["A"], "B": values["B"],
                                  "C": np.array([np.inf, -np.inf])}) == {"A": 1}


# ---------------------------------------------------------------------------- one side, cutoffs


def test_queries_on_one_side():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    run = {"q1": {"a": 1.0}, "q9": {"a": 1.0}}
    found = by_code(checks(qrels, run, ["AP"]), "one_side")
    assert [(c.queries, c.examples) for c in found] == [(1, ("q9",)), (2, ("q2", "q3"))]
    assert "ignored (trec_eval's default)" in found[1].message
    zero = by_code(checks(qrels, run, ["AP"], missing_queries="zero"), "one_side")
    assert "score 0 in every measure" in zero[1].message
    assert "are ignored (trec_eval)" in found[0].message
    scored = by_code(checks(qrels, run, ["AP"], run_only_queries="zero"), "one_side")
    assert "1 of them are evaluated as queries without judgments" in scored[0].message


def test_measures_at_different_cutoffs():
    (note,) = by_code(checks(BINARY_QRELS, RUN, ["nDCG@5", "nDCG@10", "AP"]),
                      "different_cutoffs")
    assert note.severity == "note" and note.message.startswith(
        "nDCG at different cutoffs (nDCG@5, nDCG@10)")


# ---------------------------------------------------------------------------- exponential gain


def test_exponential_gain_on_many_grade_levels():
    # the third founding article's example: grades [10, 0, 0, 1, 5], exponential gain
    qrels, run = rankwise.from_arrays([10, 0, 0, 1, 5], [0.1, 0.2, 0.3, 4, 70])
    (warning,) = by_code(checks(qrels, run, ["nDCG(gain=exp)", "ERR@5", "nDCG"]),
                         "exp_gain_levels")
    assert warning.severity == "warning" and warning.measures == ("nDCG(gain=exp)", "ERR@5")
    assert "grade-10 document gains 1023, 33× a grade-5 one and 1023× a grade-1 one" \
        in warning.message
    assert by_code(checks(qrels, run, ["nDCG", "nDCG@3"]), "exp_gain_levels") == []
    assert by_code(checks(qrels, run, ["nDCG"], gain="exponential"), "exp_gain_levels")[0] \
        .severity == "warning"
    small = checks(*rankwise.from_arrays([3, 0, 1], [3, 2, 1]), ["nDCG(gain=exp)"])
    assert by_code(small, "exp_gain_levels")[0].severity == "ok"


def test_err_with_its_own_max_grade_takes_grades_above_1023():
    # ERR(max_grade=5) clips the grades to 5, but the check refused the evaluation for the
    # judgments' grade 2000 (2^2000 overflows); ERR without it still refuses, naming the grade
    qrels, run = {"q": {"a": 2000, "b": 5, "c": 0}}, {"q": {"a": 1.0, "b": 2.0, "c": 3.0}}
    r = 31 / 32  # (2^5 - 1) / 2^5 for b (5) and a (2000, clipped to 5), below c (0)
    result = rankwise.evaluate(qrels, run, ["ERR(max_grade=5)", "nDCG"])
    assert result.mean("ERR(max_grade=5)") == pytest.approx(r / 2 + r / 3 * (1 - r))
    with pytest.raises(rankwise.InputError, match="grade 2000 is too large for exponential"):
        rankwise.evaluate(qrels, run, ["ERR"])


# ---------------------------------------------------------------------------- carried by few


def test_mean_carried_by_a_few_queries():
    # 40 queries: two find the relevant document at rank 1, the others at rank 50
    qrels = {f"u{i}": {"hit": 1} for i in range(40)}
    run = {f"u{i}": {"hit": 1.0, **{f"n{j}": 2.0 + j for j in range(0 if i < 2 else 49)}}
           for i in range(40)}
    found = checks(qrels, run, ["RR", "P@50"], values=True)
    (rr,) = by_code(found, "carried_by_few", "note")
    assert rr.measures == ("RR",) and rr.queries == 2 and set(rr.examples) == {"u0", "u1"}
    assert rr.message.startswith("RR: half of the total comes from 2 of 40 queries (5.0%)")
    assert "the mean is carried by a few queries" in rr.message
    (p,) = by_code(found, "carried_by_few", "ok")
    assert p.measures == ("P@50",)
    assert by_code(checks(qrels, run, ["RR"]), "carried_by_few") == []  # needs the values
    # warnings never depend on the values: every engine finds the same
    lists = rank(index_judgments(to_qrels(qrels)), to_run(run))
    parsed = parse_measures(["RR", "P@50"])
    values = {str(m): m.compute(lists) for m in parsed}
    with_values = [c.message for c in run_checks(lists, parsed, values) if c.severity == "warning"]
    assert with_values == pitfall_warnings(lists, parsed)


def _carried_one_by_one(values: np.ndarray) -> tuple[int, int, float] | None:
    """The check's definition, one measure at a time: (k, n, share), None when not checked."""
    v = values[~np.isnan(values)]
    n, total = len(v), float(v.sum())
    if n < 20 or total <= 0 or (v < 0).any():
        return None
    ordered = np.sort(v)[::-1]
    k = int(np.searchsorted(np.cumsum(ordered), total / 2 - 1e-12 * total) + 1)
    return k, n, k / n


@pytest.mark.parametrize("seed", range(6))
def test_carried_by_few_checks_every_measure_as_one_by_one(seed):
    """The check reads every measure's values in one table: each measure gets what it gets
    alone (undefined values, negative values, too few queries, all zero, a few large)."""
    from rankwise.diagnostics import _carried_by_few
    from rankwise.parts import Parts

    rng = np.random.default_rng(seed)
    queries = int(rng.choice([5, 19, 20, 40, 300]))
    lists = rank(index_judgments(to_qrels({f"q{i}": {"d": 1} for i in range(queries)})),
                 to_run({f"q{i}": {"d": 1.0} for i in range(queries)}))
    measures = parse_measures(["P@1", "P@2", "P@3", "P@4", "P@5", "P@6", "P@7"])
    skewed = np.where(rng.random(queries) < 0.03, 100.0, rng.random(queries) * 0.01)
    columns = [rng.random(queries), skewed, np.zeros(queries), rng.random(queries) - 0.1,
               np.where(rng.random(queries) < 0.5, np.nan, rng.random(queries)),
               np.full(queries, np.nan), np.where(rng.random(queries) < 0.9, 0.0, 1.0)]
    values = {str(m): c for m, c in zip(measures, columns)}
    found = {c.measures[0]: c for c in _carried_by_few(lists, measures, values,
                                                        Parts.whole(lists))[0]}
    for name, column in values.items():
        want = _carried_one_by_one(column)
        if want is None:
            assert name not in found
            continue
        check = found[name]
        k, n, share = want
        assert (check.queries, check.total, check.value) == (k, queries, share)
        assert check.severity == ("note" if share <= 0.05 else "ok")
        assert f"comes from {k} of {n} queries" in check.message


# ---------------------------------------------------------------------------- presentation


def test_checks_round_trip_and_every_check_is_reported():
    found = checks(BINARY_QRELS, RUN, ["P@1", "nDCG@5", "AP"], values=True)
    assert [Check.from_dict(c.to_dict()) for c in found] == found
    fields = list(Check.__dataclass_fields__)  # every field, in field order (the JSON's)
    assert all(list(c.to_dict()) == fields for c in found)
    assert Check("x", "ok", "m", value=float("inf")).to_dict()["value"] is None
    codes = {c.code for c in found}
    assert codes == {"binary_judgments", "tie_sensitivity", "short_lists", "ties_at_cutoff", "no_relevant",
                     "idcg_zero", "judged_at_k", "one_side"}


def test_details_and_summary_line():
    result = rankwise.evaluate(BINARY_QRELS, RUN, ["nDCG", "P@3"])
    system = result.systems["run"]
    line = summary_line(system)
    assert line.startswith("2 queries evaluated; 1 unjudged docs retrieved")
    assert "2 warnings" in line and line.endswith("(--diagnostics for details)")
    text = details(result)
    assert "== run" in text and "queries evaluated" in text
    assert "warning: [" in text and "] nDCG uses graded relevance" in text


def test_warnings_in_json_and_on_the_command_line(tmp_path, capsys):
    result = rankwise.evaluate(BINARY_QRELS, RUN, ["nDCG"])
    again = rankwise.Result.from_json(result.to_json())
    assert again.systems["run"].warnings == result.systems["run"].warnings
    qrels = write(tmp_path, "qrels", "q1 0 a 1\nq1 0 b 0\n")
    run = write(tmp_path, "run", "q1 Q0 a 1 2 sys\nq1 Q0 b 2 1 sys\n")
    assert main(["evaluate", qrels, run, "-m", "nDCG@5", "P@5"]) == 0
    err = capsys.readouterr().err
    assert "rankwise: warning: sys: nDCG@5 uses graded relevance" in err
    assert "rankwise: warning: sys: P@5: 1 of 1 queries retrieved fewer than 5" in err


def test_details_read_checks_kept_in_the_result():
    # what the evaluation keeps once the checks travel in the Result (SystemResult.checks)
    result = rankwise.evaluate(BINARY_QRELS, RUN, ["nDCG", "P@3"])
    system = result.systems["run"]
    system.checks = [c.to_dict() for c in checks(BINARY_QRELS, RUN, ["nDCG", "P@3"])]
    assert summary_line(system).endswith("2 warnings, 2 notes (--diagnostics for details)")
    text = details(result)
    assert "warning: [binary_judgments] nDCG uses graded relevance" in text
    assert "note: [judged_at_k] P@3: Judged@3 = 0.750" in text
    assert "ok: [ties_at_cutoff] no tie straddles rank 3" in text
    assert text.index("warning:") < text.index("note:") < text.index("ok:")


def test_tie_sensitivity_warns_with_the_range_of_the_mean():
    import rankwise

    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}
    run = {"q1": {"a": 1.0, "b": 1.0}, "q2": {"c": 2.0, "x": 1.0}}
    result = rankwise.evaluate(qrels, run, ["RR", "NumRet"])
    # q1: RR 0.5 (b before a, doc ids descending) or 1.0; q2: RR 1
    warning = [w for w in result.systems["run"].warnings if w.startswith("RR: the mean")]
    assert warning == ["RR: the mean 0.7500 (ties=docid_desc) would lie anywhere from 0.7500 "
                       "to 1.0000 under another order of tied documents (1 of 2 queries with ties "
                       "of different grades that change it); ties='expected' gives the "
                       "order-free value"]
    expected = rankwise.evaluate(qrels, run, ["RR"], ties="expected")
    assert expected.mean("RR") == 0.875
    assert not [w for w in expected.systems["run"].warnings if "order of tied" in w]
    notes = [c for c in expected.systems["run"].checks if c["code"] == "tie_sensitivity"]
    assert notes[0]["severity"] == "note"
    tie_free = rankwise.evaluate(qrels, {"q1": {"a": 2.0, "b": 1.0}, "q2": run["q2"]}, ["RR"])
    assert not [c for c in tie_free.systems["run"].checks
                if c["code"] == "tie_sensitivity" and c["severity"] != "ok"]


def test_tie_sensitivity_below_four_decimals_is_a_note_printed_with_the_digits_that_differ():
    """A range that rounds to one value at 4 decimals (trec_eval's test data: AP from 0.17854
    to 0.17855) would print as "from 0.1785 to 0.1785": it is a note, with the digits that
    tell its ends apart."""
    import rankwise

    qrels = {f"q{i}": {"a": 1, "b": 0, **{f"r{j}": 1 for j in range(400)}} for i in range(3)}
    run = {q: {"a": 1.0, "b": 1.0, **{f"r{j}": 2.0 - j / 1000 for j in range(400)}}
           for q in qrels}
    checks = [c for c in rankwise.evaluate(qrels, run, ["AP"]).systems["run"].checks
              if c["code"] == "tie_sensitivity"]
    assert [c["severity"] for c in checks] == ["note"]
    low, high = re.search(r"from (\S+) to (\S+) under", checks[0]["message"]).groups()
    assert low != high and len(low) > len("0.0000")


def test_check_order_names_every_check_in_run_checks_order():
    """diagnostics.CHECK_ORDER (which the Spark engine's merged checks follow) is the order
    run_checks gives its checks in."""
    from rankwise.diagnostics import CHECK_ORDER

    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}, "q3": {"z": 1}}
    run = {"q1": {"a": 1.0, "b": 1.0}, "q2": {"c": 3.0, "x": 2.0}, "q4": {"y": 1.0}}
    codes = [c["code"] for c in rankwise.evaluate(qrels, run, ["P@5", "nDCG", "ERR@3", "AP",
                                                               "AP@2"]).systems["run"].checks]
    assert set(codes) <= set(CHECK_ORDER) and len(set(codes)) >= 8
    assert codes == sorted(codes, key=CHECK_ORDER.index)


def test_tie_check_that_cannot_evaluate_an_extreme_order_leaves_the_evaluation_standing():
    """The worst order of the ties would give a DCG beyond float64 where the reported order
    does not: the evaluation stands (it was refused by the check) and the check says it
    could not look."""
    qrels = {"q": {"d0": 0, "d4": 0, "d8": 0, "d1": 1}}
    run = {"q": {"d0": 5.0, "d4": 3.0, "d8": 3.0, "u1": 3.0, "u2": 4.0}}
    measure = "DCG(gain={0:-1e308,1:1e308})@4"
    result = rankwise.evaluate(qrels, run, [measure, "P@4"])
    # d0, u2, then u1, d8 (ties by doc id, descending): grade-0 gains at ranks 1 and 4
    assert result.mean(measure) == pytest.approx(-1e308 - 1e308 / np.log2(5))
    checks = [c for c in next(iter(result.systems.values())).checks
              if c["code"] == "tie_sensitivity"]
    notes = [c for c in checks if c["severity"] == "note"]
    assert len(notes) == 1 and notes[0]["measures"] == [str(rankwise.parse_measure(measure))]
    assert "not checked: under the best or worst order" in notes[0]["message"]
    assert "beyond the largest float64" in notes[0]["message"]
