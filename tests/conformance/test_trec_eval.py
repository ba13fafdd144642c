"""Conformance with trec_eval 10: every value of every measure rankwise implements.

The expected outputs were produced by trec_eval 10.0 (its own test suite, and a larger
generated collection); they and their inputs are copied into ``tests/data`` (NIST's notice in
``tests/data/trec_eval/LICENSE.md``). Each expected file is one test case: rankwise evaluates
the same inputs under the same flags and every printed line whose measure rankwise implements
is compared at trec_eval's 4 decimals (counts as integers), per query and for ``all``.
The number of lines compared per file is pinned, so a case cannot silently compare nothing.
"""

from __future__ import annotations

import gzip
import math
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import rankwise

DATA = Path(__file__).resolve().parent.parent / "data"

#: trec_eval measures rankwise does not implement (exact names, or name prefixes for families
#: printed with a parameter suffix). Lines of these measures are counted but not compared.
NOT_IMPLEMENTED = (
    "runid",  # the run tag, not a measure
    "relstring",
)
NOT_IMPLEMENTED_PREFIXES = (
    "relstring_",  # relstring.20
)

#: the "sum" measures trec_eval prints as integers
COUNTS = ("num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret")


@dataclass(frozen=True)
class Case:
    """One expected-output file and how trec_eval produced it."""

    expected: str  # under tests/data
    qrels: str
    run: str
    measures: tuple[str, ...]  # trec_eval's -m arguments that rankwise parses
    conventions: dict = field(default_factory=dict)
    per_query: bool = True  # -q
    compared: int = 0  # lines compared (pinned)
    unparsed: tuple[str, ...] = ()  # -m arguments rankwise rejects (asserted to raise)
    also_skipped: tuple[str, ...] = ()  # printed names that come from ``unparsed`` arguments
    label: str = ""  # test id suffix where one expected file serves two cases


MEAS_PARAMS = ("iprec_at_recall..10,.20,.25,.75,.50", "P.5,7,3", "recall.20,2000",
               "ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20", "success.2,5,20", "utility.2,-1,0,0",
               "Rprec_mult.5.0,0.2,0.35", "11pt_avg..25,.5,.75")

CASES = [
    Case("trec_eval/out.test", "trec_eval/qrels.test", "trec_eval/results.test", ("official",),
         per_query=False, compared=29),
    Case("trec_eval/out.test", "trec_eval/qrels.test.with-comments", "trec_eval/results.test",
         ("official",), per_query=False, compared=29, label="with-comments"),
    Case("trec_eval/out.comment.test", "trec_eval/qrels.comment.test.gz",
         "trec_eval/results.comment.test.gz", ("official",), per_query=False, compared=29),
    Case("trec_eval/out.test.a", "trec_eval/qrels.test", "trec_eval/results.test", ("all_trec",),
         per_query=False, compared=98),
    Case("trec_eval/out.test.aq", "trec_eval/qrels.test", "trec_eval/results.test",
         ("all_trec",), compared=383),
    Case("trec_eval/out.test.aqc", "trec_eval/qrels.test", "trec_eval/results.trunc",
         ("all_trec",), {"missing_queries": "zero"}, compared=383),
    Case("trec_eval/out.test.aqcM", "trec_eval/qrels.test", "trec_eval/results.trunc",
         ("all_trec",), {"missing_queries": "zero", "max_depth": 100}, compared=383),
    Case("trec_eval/out.test.aql", "trec_eval/qrels.rel_level", "trec_eval/results.test",
         ("all_trec",), {"relevance_threshold": 2}, compared=383, unparsed=("relstring.20",)),
    Case("trec_eval/out.test.meas_params", "trec_eval/qrels.test", "trec_eval/results.test",
         MEAS_PARAMS, compared=84, unparsed=("ndcg_cut.10,20,23.4",),
         also_skipped=("ndcg_cut_23",)),  # trec_eval truncates the cutoff 23.4 to 23
    Case("generated/out.all_trec.q.gz", "generated/qrels.inrun.txt.gz", "generated/run.txt.gz",
         ("all_trec",), compared=26983),
    # trec_eval 10 refuses judged queries without a ranking unless -c; rankwise ignores them
    # (as trec_eval 9 did), so the full qrels give the same output as qrels.inrun.txt
    Case("generated/out.all_trec.q.gz", "generated/qrels.txt.gz", "generated/run.txt.gz",
         ("all_trec",), compared=26983, label="full-qrels"),
    Case("generated/out.all_trec.qc.gz", "generated/qrels.txt.gz", "generated/run.txt.gz",
         ("all_trec",), {"missing_queries": "zero"}, compared=27933),
    Case("generated/out.all_trec.ql2.gz", "generated/qrels.inrun.txt.gz", "generated/run.txt.gz",
         ("all_trec",), {"relevance_threshold": 2}, compared=26983),
    Case("generated/out.all_trec.qJ.gz", "generated/qrels.inrun.txt.gz", "generated/run.txt.gz",
         ("all_trec",), {"unjudged": "remove"}, compared=26983),
    Case("generated/out.all_trec.qM50.gz", "generated/qrels.inrun.txt.gz", "generated/run.txt.gz",
         ("all_trec",), {"max_depth": 50}, compared=26983),
]


def case_id(case: Case) -> str:
    return Path(case.expected).name + (f"[{case.label}]" if case.label else "")


def read_text(path: Path) -> str:
    if path.suffix == ".gz":
        return gzip.decompress(path.read_bytes()).decode()
    return path.read_text()


def read_expected(path: Path) -> list[tuple[str, str, str]]:
    """``(measure, qid, value)`` per line of a trec_eval output file."""
    rows = []
    for line in read_text(path).splitlines():
        measure, qid, value = line.split("\t")
        rows.append((measure.strip(), qid, value))
    return rows


def not_implemented(name: str) -> bool:
    return name in NOT_IMPLEMENTED or name.startswith(NOT_IMPLEMENTED_PREFIXES)


def same_value(expected: str, actual: float, name: str) -> bool:
    """Equal at trec_eval's printed precision (counts exactly)."""
    if math.isnan(actual):
        return False
    if name in COUNTS:
        return actual == int(expected)
    if f"{actual:.4f}" == expected:
        return True
    return abs(actual - float(expected)) <= 5e-5 * (1 + 1e-9)  # rounding boundary, a few ulps


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_trec_eval_output(case: Case, tmp_path: Path) -> None:
    for argument in case.unparsed:
        with pytest.raises(rankwise.MeasureError):
            rankwise.parse_measures(argument)
    measures = [m for argument in case.measures for m in rankwise.parse_measures(argument)]
    trec_name = {str(m): m.trec_name() for m in measures}
    by_trec_name = {v: k for k, v in trec_name.items()}
    assert len(by_trec_name) == len(trec_name), "two measures print under one name"

    run = DATA / case.run
    result = rankwise.evaluate(DATA / case.qrels, run, measures,
                               conventions=rankwise.Conventions(**case.conventions),
                               per_query=True)
    per_query = result.per_query()
    expected = read_expected(DATA / case.expected)

    compared, mismatches = 0, []
    printed_names, printed_queries = set(), set()
    for name, qid, value in expected:
        if not_implemented(name) or name in case.also_skipped:
            continue
        assert name in by_trec_name, f"{name} is neither compared nor listed as not implemented"
        printed_names.add(name)
        canonical = by_trec_name[name]
        if qid == "all":
            actual = result.mean(canonical)
        else:
            printed_queries.add(qid)
            actual = per_query[qid][canonical]
        if not same_value(value, actual, name):
            mismatches.append(f"{name}\t{qid}\texpected {value}, rankwise {actual!r}")
        compared += 1

    assert not mismatches, f"{len(mismatches)} of {compared} differ:\n" + "\n".join(mismatches[:40])
    # every measure rankwise was asked for appears in trec_eval's output, and vice versa
    assert printed_names == set(by_trec_name)
    if case.per_query:  # the same queries were evaluated
        assert printed_queries == set(per_query)
    assert compared == case.compared


def test_trec_format_prints_trec_eval_lines_for_measure_parameters(capsys) -> None:
    """``-f trec`` with trec_eval's -m arguments prints trec_eval's own lines, names with their
    parameters as written and cutoffs in ascending order (out.test.meas_params, less the
    ndcg_cut 23.4 rankwise refuses), plus the runid line that names each run."""
    from rankwise.cli import main

    arguments = ("iprec_at_recall..10,.20,.25,.75,.50", "P.5,7,3", "recall.20,2000",
                 "Rprec_mult.5.0,0.2,0.35", "utility.2,-1,0,0", "11pt_avg..25,.5,.75",
                 "ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20", "success.2,5,20")  # trec_eval's order
    assert main(["evaluate", str(DATA / "trec_eval/qrels.test"),
                 str(DATA / "trec_eval/results.test"), "-q", "-f", "trec", "-m", *arguments]) == 0
    printed = [line for line in capsys.readouterr().out.splitlines()
               if not line.startswith("runid")]
    expected = [line for line in read_text(DATA / "trec_eval/out.test.meas_params").splitlines()
                if not line.startswith("ndcg_cut_23 ")]
    assert printed == expected


def test_run_lines_with_trailing_text() -> None:
    """trec_eval ignores text after the run tag (results.trunc: 'STANDARD more junk at')."""
    run = rankwise.read_run(DATA / "trec_eval/results.trunc")
    assert len(run) == len((DATA / "trec_eval/results.trunc").read_text().splitlines())


def test_queries_without_ranking_are_reported() -> None:
    """Judged queries missing from the run: ignored and counted by default, zeros with -c."""
    qrels, run = DATA / "generated/qrels.txt.gz", DATA / "generated/run.txt.gz"
    ignored = rankwise.evaluate(qrels, run, ["num_q"]).diagnostics["run1"]
    zero = rankwise.evaluate(qrels, run, ["num_q"], missing_queries="zero").diagnostics["run1"]
    assert (ignored["queries_only_in_qrels"], ignored["queries_only_in_qrels_scored_zero"]) == (10, 0)
    assert (ignored["queries_evaluated"], zero["queries_evaluated"]) == (283, 293)
    assert zero["queries_only_in_qrels_scored_zero"] == 10
    assert ignored["queries_only_in_run"] == 7


def test_not_implemented_list_is_accurate() -> None:
    """Every measure listed as not implemented is really rejected by the parser (implementing
    one should move it into the comparison)."""
    names = [n for n in NOT_IMPLEMENTED if n != "runid"]
    names += [p + "5" for p in NOT_IMPLEMENTED_PREFIXES] + ["relstring_20"]
    for name in names:
        with pytest.raises(rankwise.MeasureError):
            rankwise.parse_measure(name)


def test_all_trec_names_what_it_leaves_out() -> None:
    """The command line names the all_trec measures it does not compute: the list this test
    skips."""
    from rankwise.measures.parse import ALL_TREC_NOT_COMPUTED

    printed = {name for name, _, _ in read_expected(DATA / "trec_eval/out.test.aq")}
    skipped = {n for n in printed if not_implemented(n) and n != "runid"}
    assert skipped == set(ALL_TREC_NOT_COMPUTED)
    qrels, run = DATA / "trec_eval/qrels.test", DATA / "trec_eval/results.test"
    done = subprocess.run([sys.executable, "-m", "rankwise", "evaluate", str(qrels), str(run),
                           "-m", "all_trec"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "all_trec: trec_eval's " + ", ".join(ALL_TREC_NOT_COMPUTED) in done.stderr


def test_cli_trec_format_matches_trec_eval() -> None:
    """``rankwise evaluate -m official -q --format trec`` prints trec_eval's exact lines."""
    qrels, run = DATA / "trec_eval/qrels.test", DATA / "trec_eval/results.test"
    done = subprocess.run([sys.executable, "-m", "rankwise", "evaluate", str(qrels), str(run),
                           "-m", "official", "-q", "--format", "trec"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    official = {name for name, _, _ in read_expected(DATA / "trec_eval/out.test")}
    expected = [f"{name:<22s}\t{qid}\t{value}"
                for name, qid, value in read_expected(DATA / "trec_eval/out.test.aq")
                if name in official]
    printed = done.stdout.splitlines()
    assert len(expected) == 111
    assert printed == expected  # same lines, same order


@pytest.mark.parametrize("expected, flags, run", [
    ("out.test.a", (), "results.test"),
    ("out.test.aq", ("-q",), "results.test"),
    ("out.test.aqcM", ("-q", "-c", "-M100"), "results.trunc"),
    ("out.test.aqZ", ("-q", "-Z", str(DATA / "trec_eval/zscores_file")), "results.test"),
])
def test_cli_all_trec_prints_trec_eval_lines_in_its_order(expected: str, flags: tuple[str, ...],
                                                         run: str) -> None:
    """``-m all_trec --format trec`` prints trec_eval's lines byte for byte and in its order,
    less relstring (not computed), so the two outputs can be diffed."""
    qrels = DATA / "trec_eval/qrels.test"
    done = subprocess.run([sys.executable, "-m", "rankwise", "evaluate", "-m", "all_trec",
                           *flags, "-f", "trec", str(qrels), str(DATA / "trec_eval" / run)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = [line for line in read_text(DATA / "trec_eval" / expected).splitlines()
             if not line.startswith("relstring")]
    assert len(lines) >= 99  # every all_trec measure's 'all' line at least
    assert done.stdout.splitlines() == lines
