"""Preference measures (rankwise.evaluate_preferences, trec_eval -R prefs and -R
qrels_prefs): trec_eval's own outputs byte for byte, trec_eval's outputs on generated
collections under -M and -c, small cases worked by hand from the definitions in trec_eval's
comments (get_prefs.c, form_prefs_counts.c, m_prefs_*.c), and the errors."""

from __future__ import annotations

import gzip
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

import rankwise
from rankwise.cli import main
from rankwise.errors import InputError, MeasureError
from rankwise.preferences import PREFERENCE_MEASURES, preference_measures

DATA = Path(__file__).resolve().parent / "data"
TREC_EVAL = DATA / "trec_eval"
GENERATED = DATA / "preferences"


@pytest.mark.parametrize("fmt, judgments, run, expected", [
    ("prefs", "prefs.test", "prefs.results.test", "out.test.prefs"),
    ("prefs", "prefs.comment.test", "prefs.results.test", "out.test.prefs"),
    ("qrels_prefs", "qrels.test", "results.test", "out.test.qrels_prefs"),
])
def test_command_line_prints_trec_eval_output_byte_for_byte(fmt, judgments, run, expected,
                                                            capsys):
    """``trec_eval -m all_prefs -q -R prefs prefs.test prefs.results.test`` (and with the
    file's comment lines) and ``trec_eval -m all_prefs -q -R qrels_prefs qrels.test
    results.test``, in trec_eval's order of words."""
    status = main(["evaluate", "-R", fmt, "-q", "-f", "trec", "-m", "all_prefs",
                   str(TREC_EVAL / judgments), str(TREC_EVAL / run)])
    out = capsys.readouterr()
    assert status == 0, out.err
    text = (TREC_EVAL / expected).read_text()
    assert len(text.splitlines()) == {"out.test.prefs": 352, "out.test.qrels_prefs": 58}[expected]
    assert out.out == text


def test_the_default_measures_are_all_prefs_in_a_process_of_its_own():
    done = subprocess.run([sys.executable, "-m", "rankwise", "evaluate", "-R", "prefs", "-q",
                           "-f", "trec", str(TREC_EVAL / "prefs.test"),
                           str(TREC_EVAL / "prefs.results.test")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (TREC_EVAL / "out.test.prefs").read_text()
    assert "24 queries evaluated" in done.stderr


def _expected() -> dict[tuple[str, str, str], list[tuple[str, str, str]]]:
    """trec_eval's lines for the generated collections, by (seed, format, flags)."""
    out: dict[tuple[str, str, str], list] = defaultdict(list)
    with gzip.open(GENERATED / "expected.tsv.gz", "rt") as handle:
        for line in handle:
            seed, fmt, flags, measure, query, value = line.rstrip("\n").split("\t")
            out[seed, fmt, flags].append((measure, query, value))
    return out


#: the judgments each flag set was evaluated with (tests/data/preferences/README.md)
CASES = {("prefs", ""): "prefs.inrun", ("prefs", "-M3"): "prefs.inrun",
         ("prefs", "-c"): "prefs", ("prefs", "-c -M2"): "prefs",
         ("qrels_prefs", ""): "qrels.inrun", ("qrels_prefs", "-M4"): "qrels.inrun",
         ("qrels_prefs", "-c"): "qrels"}


def test_generated_collections_match_trec_eval_under_depth_and_complete():
    expected = _expected()
    assert len(expected) == 16 * len(CASES)
    lines = 0
    for (seed, fmt, flags), want in sorted(expected.items()):
        conventions = {}
        for flag in flags.split():
            if flag == "-c":
                conventions["missing_queries"] = "zero"
            else:
                conventions["max_depth"] = int(flag[2:])
        folder = GENERATED / seed
        result = rankwise.evaluate_preferences(folder / CASES[fmt, flags], folder / "run",
                                               judgments_format=fmt, per_query=True,
                                               **conventions)
        got = [tuple(field.strip() for field in line.split("\t"))
               for line in result.to_trec(per_query=True).splitlines()]
        assert got == want, (seed, fmt, flags)
        lines += len(got)
    assert lines == 6034


def _one(prefs, run, measures=("all_prefs",), **kwargs) -> dict[str, float]:
    result = rankwise.evaluate_preferences(prefs, run, list(measures), **kwargs)
    return next(iter(result.aggregates.values()))


def _levels(**docs) -> dict:
    """One query, one judgment group, one sub-group."""
    return {"q": {"jg": {"s": docs}}}


def test_one_group_of_three_documents_by_hand():
    # d1 > d2 > d3 (d3 not relevant); the run ranks d2 above d1 and misses d3:
    # d1 > d2 retrieved, out of order; d1 > d3 and d2 > d3 implied, fulfilled
    values = _one(_levels(d1=2, d2=1, d3=0), {"q": {"d2": 3.0, "d1": 2.0, "u": 1.0}})
    assert values["NumQ"] == 1
    assert (values["NumPrefsPoss"], values["NumPrefsFul"], values["NumPrefsFulRet"]) == (3, 2, 0)
    assert values["PrefsSimp"] == values["PrefsPair"] == values["PrefsAvgJG"] == 2 / 3
    assert values["PrefsSimpRet"] == values["PrefsPairRet"] == values["PrefsAvgJGRet"] == 0
    assert values["PrefsSimpImp"] == values["PrefsPairImp"] == values["PrefsAvgJGImp"] == 2 / 3
    # R = 2 relevant, N = 1 nonrelevant: R - N = 1 fulfilled preference added per relevant
    # document retrieved (2), of R (R - N) = 2 possible: (2 + 2) / (3 + 2); among the
    # retrieved, R = 2 and N = 0: (0 + 2 * 2) / (1 + 2 * 2)
    assert values["PrefsAvgJGRnonrel"] == 4 / 5
    assert values["PrefsAvgJGRnonrelRet"] == 4 / 5


def test_two_groups_that_disagree_by_hand():
    prefs = {"q": {"a": {"s": {"d1": 2, "d2": 1, "d3": 0}}, "b": {"s": {"d3": 1, "d1": 0}}}}
    values = _one(prefs, {"q": {"d2": 3.0, "d1": 2.0}})
    # group b: d3 > d1, d1 retrieved and d3 not: possible, not fulfilled
    assert (values["NumPrefsPoss"], values["NumPrefsFul"]) == (4, 2)
    assert values["PrefsSimp"] == 2 / 4
    assert values["PrefsAvgJG"] == (2 / 3 + 0 / 1) / 2
    # pairs (d2, d1): 0 of 1; (d2, d3): 1 of 1; (d1, d3): 1 of 2 (a for, b against)
    assert values["PrefsPair"] == (0 + 1 + 1 / 2) / 3
    assert values["PrefsPairRet"] == 0  # the one retrieved pair, out of order


def test_sub_groups_add_transitive_preferences():
    # get_prefs.c: 1 > 2 in one sub-group and 2 > 3 in another give 1 > 3
    prefs = {"q": {"u": {"s1": {"d1": 2, "d2": 1}, "s2": {"d2": 3, "d3": 1}}}}
    values = _one(prefs, {"q": {"d1": 3.0, "d3": 2.0, "d2": 1.0}})
    assert values["NumPrefsPoss"] == 3
    assert values["PrefsSimp"] == 2 / 3  # d1 > d2 and d1 > d3 fulfilled, d2 > d3 not


@pytest.mark.parametrize("prefs, count", [
    # the examples of get_prefs.c's comment, with their numbers of preferences
    ({"q": {"u": {"s": {"1": 3, "2": 2, "3": 0, "4": 6, "5": 0, "6": 2}}}}, 13),
    # the comment says 5 (1>2, 1>3, 2>3, 4>1, 4>2, the duplicate 1>2 once), and leaves out
    # 4>3, which 4>1 and 1>3 give (transitivity, stated below it): trec_eval counts 6
    ({"q": {"u": {"s1": {"1": 3, "2": 2, "3": 1}, "s2": {"1": 2, "2": 1, "4": 3}}}}, 6),
    ({"q": {"u1": {"s": {"1": 3, "2": 2}},
            "u2": {"s1": {"1": 0, "3": 6, "4": 2}, "s2": {"1": 0, "2": 8}}}}, 5),
    ({"q": {"u": {"s1": {"1": 3, "2": 2, "3": 1}, "s2": {"2": 5, "4": 4}}}}, 5),
])
def test_trec_eval_comment_examples_count_their_preferences(prefs, count):
    assert _one(prefs, {"q": {"1": 1.0}}, ["prefs_num_prefs_poss"])["NumPrefsPoss"] == count


def test_fewer_relevant_than_nonrelevant_as_trec_eval_computes_it():
    # d1 relevant, d2 and d3 not (R = 1 < N = 2), ranked d1, d3, d2: the first nonrelevant
    # document (d3) is kept, and d1 > d3 is fulfilled: 1 / 1 where the group has several
    # sub-groups; with one, trec_eval also counts each nonrelevant document against d3
    # (d3, d2 after it: neither fulfilled): 1 / 3 (m_prefs_avgjg_Rnonrel.c, recalculate)
    run = {"q": {"d1": 3.0, "d3": 2.0, "d2": 1.0}}
    one = _one(_levels(d1=1, d2=0, d3=0), run)
    several = _one({"q": {"g": {"s1": {"d1": 1, "d3": 0}, "s2": {"d1": 1, "d2": 0}}}}, run)
    assert one["PrefsAvgJG"] == several["PrefsAvgJG"] == 1
    assert one["PrefsAvgJGRnonrel"] == one["PrefsAvgJGRnonrelRet"] == 1 / 3
    assert several["PrefsAvgJGRnonrel"] == several["PrefsAvgJGRnonrelRet"] == 1


def test_depth_ties_and_duplicates():
    prefs = _levels(d1=2, d2=1, d3=0)
    run = {"q": {"d2": 3.0, "d1": 2.0}}
    cut = _one(prefs, run, max_depth=1)  # only d2 retrieved: d2 > d3 implied, fulfilled
    assert (cut["NumPrefsPoss"], cut["NumPrefsFul"], cut["PrefsSimpRet"]) == (3, 1, 0)
    tied = {"q": {"d2": 1.0, "d1": 1.0}}  # ties by doc id ascending, as trec_eval here
    assert _one(prefs, tied)["PrefsSimpRet"] == 1
    assert _one(prefs, tied, ties="docid_desc")["PrefsSimpRet"] == 0
    with pytest.raises(InputError, match="ties: preferences"):
        _one(prefs, tied, ties="expected")
    rows = rankwise.Run.from_columns(["q", "q", "q"], ["d1", "d2", "d1"], [1.0, 2.0, 3.0])
    with pytest.raises(InputError, match="'d1' appears twice for query 'q'"):
        _one(prefs, rows)
    assert _one(prefs, rows, duplicates="first")["PrefsSimpRet"] == 0  # d2 (2.0) above d1
    assert _one(prefs, rows, duplicates="max")["PrefsSimpRet"] == 1  # d1 (3.0) first


def test_queries_on_one_side_and_complete():
    prefs = {"q1": {"g": {"s": {"d1": 1, "d2": 0}}}, "q2": {"g": {"s": {"d3": 1, "d4": 0}}}}
    run = {"q1": {"d1": 2.0, "d2": 1.0}, "q3": {"d5": 1.0}}
    result = rankwise.evaluate_preferences(prefs, run, "all_prefs", per_query=True)
    system = next(iter(result.systems.values()))
    assert list(system.query_ids) == ["q1"]
    assert system.diagnostics["queries_only_in_run"] == 1
    assert system.diagnostics["queries_only_in_qrels"] == 1
    complete = rankwise.evaluate_preferences(prefs, run, "all_prefs", per_query=True,
                                             missing_queries="zero")
    per_query = complete.per_query()
    assert set(per_query) == {"q1", "q2"}  # q2 on an empty ranking, as trec_eval -c
    assert per_query["q2"]["NumPrefsPoss"] == 1 and per_query["q2"]["PrefsSimp"] == 0
    assert complete.mean("NumQ") == 2 and complete.mean("prefs_simp") == 0.5


def test_every_run_row_is_counted():
    prefs = {"q1": {"g": {"s": {"d1": 1, "d2": 0, "d3": 2}}}}
    run = rankwise.Run.from_columns(["q1"] * 5 + ["q9"] * 2, ["d1", "d2", "u", "d1", "d3",
                                                             "d1", "d2"],
                                    [5.0, 4.0, 3.0, 2.0, 1.0, 1.0, 2.0])
    result = rankwise.evaluate_preferences(prefs, run, "prefs", max_depth=2,
                                           duplicates="first")
    counts = next(iter(result.systems.values())).diagnostics
    assert (counts["run_rows"], counts["run_duplicates_dropped"], counts["rows_evaluated"],
            counts["rows_beyond_depth"], counts["rows_in_run_only_queries"]) == (7, 1, 2, 2, 2)
    assert counts["unjudged_retrieved"] == 0 and counts["judgment_groups"] == 1
    assert result.mean("NumPrefsFulRet") == 1  # d1 above d2; d3 beyond the depth


def test_qrels_read_as_preferences():
    values = _one({"q": {"d1": 2, "d2": 1, "d3": 0}}, {"q": {"d2": 3.0, "d1": 2.0}},
                  judgments_format="qrels_prefs")
    assert values == _one(_levels(d1=2, d2=1, d3=0), {"q": {"d2": 3.0, "d1": 2.0}})


def test_measure_names():
    assert preference_measures("prefs") == ["NumQ", "NumPrefsPoss", "NumPrefsFul",
                                            "NumPrefsFulRet", "PrefsSimp", "PrefsPair",
                                            "PrefsAvgJG"]
    assert preference_measures(["all_prefs"])[1:] == list(PREFERENCE_MEASURES)
    result = rankwise.evaluate_preferences(_levels(d1=1, d2=0), {"q": {"d1": 1.0}},
                                           ["prefs_avgjg_Rnonrel_ret", "num_q"])
    assert next(iter(result.systems.values())).trec_names == {
        "PrefsAvgJGRnonrelRet": "prefs_avgjg_Rnonrel_ret", "NumQ": "num_q"}
    with pytest.raises(MeasureError, match="not a preference measure.*'map'"):
        preference_measures(["map"])
    with pytest.raises(MeasureError, match="a preference measure: it needs preference "
                                           "judgments, -R prefs or -R qrels_prefs"):
        rankwise.evaluate({"q": {"d1": 1}}, {"q": {"d1": 1.0}}, ["prefs_simp"])


@pytest.mark.parametrize("text, message", [
    ("q1 g s d1 1\nq1 g s d2\n", r"prefs:2: expected 5 fields 'qid jg jsg docid rel_level', "
                                 "got 4; this looks like a qrels file"),
    ("q1 g s d1 1\nq1 g s d2 high\n", r"prefs:2: expected a rel_level, a finite number >= 0"
                                      r".*'high'"),
    ("q1 g s d1 1\nq1 g s d2 -1\n", r"prefs:2: expected a rel_level.*'-1'"),
    ("q1 g s d1 1\n# note\nq1 g s d1 2\n", r"prefs:3: document 'd1' given twice in judgment "
                                           r"sub-group 's' of group 'g', query 'q1' \(first on "
                                           r"line 1\)"),
    ("q1 g s1 d1 1\nq1 g s1 d2 2\nq1 g s2 d1 0\nq1 g s2 d3 1\n",
     r"prefs:3: query 'q1', judgment group 'g': document 'd1' has rel_level 0 here and above "
     "0 in another sub-group"),
    ("q1 g s1 d1 2\nq1 g s1 d2 1\nq1 g s2 d2 2\nq1 g s2 d3 1\nq1 g s3 d3 2\nq1 g s3 d1 1\n",
     r"prefs:\d: query 'q1', judgment group 'g': inconsistent preferences"),
    ("# only a comment\n", r"prefs: no prefs lines"),
])
def test_bad_preference_files_are_refused_naming_the_line(tmp_path, text, message):
    (tmp_path / "prefs").write_text(text)
    with pytest.raises(InputError, match=message):
        rankwise.evaluate_preferences(tmp_path / "prefs", {"q1": {"d1": 1.0, "d2": 0.5}})


def test_bad_inputs_in_memory_are_refused():
    with pytest.raises(InputError, match="preferences: expected a prefs file or a mapping"):
        rankwise.evaluate_preferences({}, {"q": {"d": 1.0}})
    with pytest.raises(InputError, match="expected a mapping"):
        rankwise.evaluate_preferences({"q": {"g": ["d1"]}}, {"q": {"d": 1.0}})
    with pytest.raises(InputError, match="expected a rel_level"):
        rankwise.evaluate_preferences({"q": {"d1": "x"}}, {"q": {"d": 1.0}},
                                      judgments_format="qrels_prefs")
    (TREC_EVAL / "qrels.test").read_text()  # a qrels file given as prefs names its line
    with pytest.raises(InputError, match=r"qrels.test:1: expected 5 fields"):
        rankwise.evaluate_preferences(TREC_EVAL / "qrels.test", TREC_EVAL / "results.test")


def test_command_line_refuses_what_preferences_cannot_do(tmp_path, capsys):
    (tmp_path / "prefs").write_text("q1 g s d1 1\nq1 g s d2 0\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 1.0 r\n")
    for options, message in ((["-Z", str(tmp_path / "run")], "-Z/--zscores: not with -R prefs"),
                             (["--stream"], "-R/--judgments-format prefs: not with --stream")):
        with pytest.raises(SystemExit):
            main(["evaluate", "-R", "prefs", *options, str(tmp_path / "prefs"),
                  str(tmp_path / "run")])
        assert message in capsys.readouterr().err
    assert main(["evaluate", "-R", "prefs", "-m", "map", str(tmp_path / "prefs"),
                 str(tmp_path / "run")]) == 2
    assert "not a preference measure" in capsys.readouterr().err
    assert main(["evaluate", "-R", "prefs", "-M", "1", "-f", "csv", "-m", "prefs_simp",
                 "prefs_num_prefs_poss", str(tmp_path / "prefs"), str(tmp_path / "run")]) == 0
    assert capsys.readouterr().out == "system,PrefsSimp,NumPrefsPoss\nr,1.0,1.0\n"
