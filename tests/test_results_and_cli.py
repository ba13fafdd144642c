"""Result formats (JSON round trip, frames, Markdown, trec) and the command line."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import subprocess
import sys

import pytest

import rankwise
from rankwise.cli import main
from tests.helpers import write

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d1 1\nq3 0 d5 1\n"
RUN_A = "q1 Q0 d1 1 3.0 A\nq1 Q0 d2 2 2.0 A\nq1 Q0 d3 3 1.0 A\nq2 Q0 d9 1 5 A\n"
RUN_B = "q1 Q0 d3 1 3.0 B\nq1 Q0 d1 2 2.0 B\nq2 Q0 d1 1 5 B\nq9 Q0 d1 1 5 B\n"


@pytest.fixture
def files(tmp_path):
    return (write(tmp_path, "qrels.txt", QRELS), write(tmp_path, "a.run", RUN_A),
            write(tmp_path, "b.run", RUN_B))


def test_json_round_trip(files):
    qrels, a, b = files
    result = rankwise.evaluate(qrels, {"A": a, "B": b}, ["AP", "nDCG@10", "NumRet", "MAE"],
                               rankwise.Conventions(missing_queries="zero"), per_query=True)
    again = rankwise.Result.from_json(result.to_json())
    assert again.to_json() == result.to_json()
    assert again.conventions == result.conventions
    assert str(again.per_query("B")) == str(result.per_query("B"))  # NaN-aware equality
    data = json.loads(result.to_json())
    assert data["conventions"]["missing_queries"] == "zero"
    assert data["systems"]["B"]["diagnostics"]["queries_only_in_run"] == 1


def test_undefined_values_are_counted_not_hidden(files):
    qrels, a, _ = files
    result = rankwise.evaluate(qrels, a, ["MAE"], per_query=True)
    assert result.systems["A"].undefined == {"MAE": 1}  # q2 retrieved nothing judged
    assert math.isnan(result.per_query()["q2"]["MAE"])


@pytest.mark.parametrize("seed", range(20))
def test_aggregate_is_numpys_mean_sum_and_geometric_mean_bit_for_bit(seed):
    import numpy as np

    from rankwise.results import aggregate

    rng = np.random.default_rng(seed)
    values = rng.random(int(rng.integers(1, 3000))) * 10.0 ** rng.integers(-6, 6)
    if seed % 2:
        values[rng.random(len(values)) < 0.3] = np.nan
    defined = values[~np.isnan(values)]
    expected = float(defined.mean()) if len(defined) else math.nan
    assert str(aggregate(values, "mean")) == str(expected)  # equal, NaN included
    assert aggregate(values, "sum") == float(defined.sum())
    assert str(aggregate(values, "gmean")) == str(
        float(np.exp(np.mean(np.log(np.maximum(defined, 1e-5))))) if len(defined) else math.nan)
    if len(defined) < len(values):  # undefined values not skipped: no mean
        assert math.isnan(aggregate(values, "mean", skip_undefined=False))
    else:
        assert aggregate(values, "mean", skip_undefined=False) == expected


def test_aggregate_of_infinities_and_no_values():
    import numpy as np

    from rankwise.results import aggregate

    with np.errstate(invalid="ignore"):
        assert math.isnan(aggregate(np.array([np.inf, -np.inf]), "mean", skip_undefined=False))
    assert aggregate(np.array([np.inf, 1.0]), "mean") == math.inf
    assert math.isnan(aggregate(np.array([np.nan]), "mean"))
    assert math.isnan(aggregate(np.zeros(0), "mean")) and aggregate(np.zeros(0), "sum") == 0.0


def test_frames(files):
    qrels, a, b = files
    result = rankwise.evaluate(qrels, [a, b], ["AP", "RR"], per_query=True)
    frame = result.to_frame()
    assert list(frame.columns) == ["system", "query", "AP", "RR"]
    assert len(frame) == 4
    assert result.to_frame("polars", per_query=False).shape == (2, 3)


def test_aggregates_only_without_per_query(files):
    qrels, a, _ = files
    result = rankwise.evaluate(qrels, a, ["AP"])
    with pytest.raises(ValueError, match="per_query=True"):
        result.per_query()


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "rankwise", *args], capture_output=True, text=True)


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "markdown", "trec"])
def test_cli_formats(files, fmt):
    qrels, a, b = files
    out = run_cli("evaluate", qrels, a, b, "-m", "P@2", "map", "--per-query", "--format", fmt)
    assert out.returncode == 0, out.stderr
    assert "P@2" in out.stdout or "P_2" in out.stdout
    assert "queries evaluated" in out.stderr


def test_cli_labels_every_run_it_is_given(files, tmp_path, capsys):
    """Runs are labelled by file name, by path where two share a name, and a path given
    twice is evaluated twice (labelled ``#2``), as rankwise.evaluate names its runs."""
    from rankwise.cli import run_labels

    qrels, a, b = files
    (tmp_path / "other").mkdir()
    other = write(tmp_path / "other", "a.run", RUN_B)
    assert run_labels([a, b, other]) == {a: a, "b.run": b, other: other}
    assert run_labels([a, b, a, a]) == {a: a, "b.run": b, f"{a}#2": a, f"{a}#3": a}
    assert main(["evaluate", qrels, a, b, a, "-m", "num_ret", "-f", "json"]) == 0
    systems = json.loads(capsys.readouterr().out)["systems"]
    assert list(systems) == [a, "b.run", f"{a}#2"]
    assert systems[a]["aggregates"] == systems[f"{a}#2"]["aggregates"]


def test_cli_trec_format_is_trec_evals(files):
    qrels, a, _ = files
    out = run_cli("evaluate", qrels, a, "-m", "P_2", "num_ret", "-q", "-f", "trec")
    lines = out.stdout.splitlines()
    assert "P_2                   \tq1\t0.5000" in lines
    assert "num_ret               \tall\t4" in lines
    assert "runid                 \tall\tA" in lines


def test_cli_trec_flags(files, capsys):
    qrels, a, _ = files
    assert main(["evaluate", qrels, a, "-m", "num_q", "P_2", "-c", "-f", "trec"]) == 0
    assert "num_q                 \tall\t3" in capsys.readouterr().out
    assert main(["evaluate", qrels, a, "-m", "num_ret", "-M", "1", "-f", "trec"]) == 0
    assert "num_ret               \tall\t2" in capsys.readouterr().out
    assert main(["evaluate", qrels, a, "-m", "num_ret", "-J", "-f", "trec"]) == 0
    assert "num_ret               \tall\t3" in capsys.readouterr().out
    assert main(["evaluate", qrels, a, "-m", "num_rel", "-l", "2", "-f", "trec"]) == 0
    assert "num_rel               \tall\t1" in capsys.readouterr().out
    for flag in (["-l", "2.0"], ["-l", "2e0"], ["--relevance-threshold", "1.5"]):
        assert main(["evaluate", qrels, a, "-m", "num_rel", *flag, "-f", "trec"]) == 0
        assert "num_rel               \tall\t1" in capsys.readouterr().out


def test_num_rel_all_is_the_sum_of_its_queries_under_c_and_l(tmp_path, capsys):
    """trec_eval's ``all`` line of num_rel under -c counts every judgment with a grade above
    0, whatever -l says (m_num_rel.c, te_calc_avg_num_rel): 3 here under -c -l 2 and -c -l 0,
    beside per-query lines of 1 + 1 and 3 + 1 (docs/conformance.md, "Differences"). rankwise
    prints the sum of its per-query lines."""
    qrels = write(tmp_path, "qrels", "q1 0 a 1\nq1 0 b 2\nq1 0 c 0\nq2 0 d 3\n")
    run = write(tmp_path, "run", "q1 Q0 a 1 3 s\nq1 Q0 b 2 2 s\nq1 Q0 c 3 1 s\n")
    for level, per_query in (("2", [1, 1]), ("0", [3, 1]), ("1", [2, 1])):
        assert main(["evaluate", qrels, run, "-m", "num_rel", "-c", "-l", level, "-q",
                     "-f", "trec"]) == 0
        lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
        values = {qid: int(value) for name, qid, value in lines if name.strip() == "num_rel"}
        assert values == {"q1": per_query[0], "q2": per_query[1], "all": sum(per_query)}


@pytest.mark.parametrize("args, fragment", [
    (["-m", "nDGC@10"], "unknown measure; closest: nDCG"),
    (["-m", "P@0"], "positive integer"),
])
def test_cli_bad_measure_exit_2(files, args, fragment):
    qrels, a, _ = files
    out = run_cli("evaluate", qrels, a, *args)
    assert out.returncode == 2
    assert fragment in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_cli_bad_file_exit_2(tmp_path, files):
    qrels, _, _ = files
    bad = write(tmp_path, "bad.run", "q1 Q0 d1 1 3.0 A\nq1 Q0 d2 oops\n")
    out = run_cli("evaluate", qrels, bad)
    assert out.returncode == 2
    assert out.stderr.strip() == (f"rankwise: error: {bad}:2: expected 6 fields 'qid Q0 docid "
                                  "rank score tag', got 4 (got 'q1 Q0 d2 oops')")


def test_cli_measures_lists_every_family():
    out = run_cli("measures")
    assert out.returncode == 0
    for family in rankwise.measures.FAMILIES:
        assert family in out.stdout


def test_cli_demo(tmp_path):
    out = run_cli("demo", "--output", str(tmp_path / "demo"))
    assert out.returncode == 0, out.stderr
    assert "strong" in out.stdout and "nDCG@10" in out.stdout
    report = (tmp_path / "demo" / "report.md").read_text()
    assert "| strong |" in report and "Conventions:" in report
    saved = rankwise.Result.from_json((tmp_path / "demo" / "result.json").read_text())
    assert list(saved.systems) == ["strong", "medium", "random"]


@pytest.mark.parametrize("before, expected", [
    ("", "0"),  # rankwise first: pyarrow's allocator commits on demand
    ("import os; os.environ['MIMALLOC_ARENA_EAGER_COMMIT'] = '1'", "1"),  # the user's choice
    ("import pyarrow", None),  # pyarrow already loaded: its allocator has read its options
])
def test_pyarrow_allocator_commits_on_demand_when_rankwise_comes_first(before, expected):
    """Importing rankwise before pyarrow sets mimalloc's arena commit option (read once, when
    pyarrow loads) unless it is set or pyarrow is already loaded; an evaluation then works
    as usual in that process."""
    code = (f"{before}\nimport os, rankwise\n"
            "print(os.environ.get('MIMALLOC_ARENA_EAGER_COMMIT'))\n"
            "print(rankwise.evaluate({'q': {'a': 1}}, {'q': {'a': 2.0, 'b': 1.0}}, ['AP'])"
            ".mean('AP'))")
    env = {k: v for k, v in os.environ.items() if k != "MIMALLOC_ARENA_EAGER_COMMIT"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env=env)
    assert done.stdout.split() == [str(expected), "1.0"]


def test_only_the_command_sets_the_allocator_for_good(tmp_path, monkeypatch, capsys):
    """``rankwise.evaluate`` changes glibc's thresholds only while it runs and restores them;
    the ``rankwise`` command (a process of its own) also keeps every thread on one malloc
    arena, a setting glibc cannot undo."""
    from rankwise import cli
    from rankwise.core import memory

    calls = []

    class Libc:
        def mallopt(self, param, value):
            calls.append((param, value))
            return 1

        def malloc_trim(self, pad):
            return 1

    monkeypatch.setattr(memory, "_glibc", lambda: Libc())
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 d1 1\n")
    run.write_text("q1 Q0 d1 1 1.0 sys\n")
    rankwise.evaluate(str(qrels), str(run), ["AP"])
    assert (memory._M_ARENA_MAX, 1) not in calls
    assert calls[-2:] == [(memory._M_MMAP_THRESHOLD, memory._GLIBC_DEFAULT_THRESHOLD),
                          (memory._M_TRIM_THRESHOLD, memory._GLIBC_DEFAULT_THRESHOLD)]
    calls.clear()
    monkeypatch.setattr(sys, "argv", ["rankwise", "evaluate", str(qrels), str(run)])
    assert cli.command() == 0
    assert calls[0] == (memory._M_ARENA_MAX, 1) and calls.count(calls[0]) == 1
    assert "map" in capsys.readouterr().out


def test_per_query_trec_and_csv_lines_are_formatted_value_by_value(files):
    """The per-query lines of --format trec and csv, formatted a measure at a time, are
    those of one value at a time: counts as integers, 4 decimals, NaN, odd ids and names."""
    import numpy as np

    from rankwise.plain import csv_field
    from rankwise.results import _trec_id, _trec_line

    qrels, a, b = files
    result = rankwise.evaluate(qrels, {"A": a, 'B, "b"': b},
                               ["nDCG(gain={1:5,2:1})@2", "num_ret", "P@2", "NumQ"],
                               per_query=True)
    system = result.systems["A"]
    system.query_ids[0] = "q 1\t{x}"  # whitespace and braces in a query id
    system.values["P@2"][1] = system.values[result.measures[1]][0] = np.nan  # undefined
    want_trec, want_csv = [], ["system,query," + ",".join(csv_field(m) for m in result.measures)]
    for name, s in result.systems.items():
        for i, q in enumerate(s.query_ids):
            want_trec += [_trec_line(s.trec_names[m], _trec_id(q), s.values[m][i],
                                     result.aggregate_kinds[m] == "sum")
                          for m in result.measures if m != "NumQ"]
            want_csv.append(",".join([csv_field(name), csv_field(q),
                                      *(repr(float(s.values[m][i])) for m in result.measures)]))
    trec = result.to_trec(per_query=True).splitlines()
    assert [line for line in trec if "\tall\t" not in line] == want_trec
    assert result.to_csv(per_query=True).splitlines() == want_csv
    # a CSV reader gets one column per measure back, gain maps' commas included
    for per_query in (True, False):
        rows = list(csv.reader(io.StringIO(result.to_csv(per_query=per_query))))
        assert rows[0][2 if per_query else 1:] == result.measures
        assert {len(row) for row in rows} == {len(rows[0])}


@pytest.mark.parametrize("order", [
    ["-m", "num_ret", "QRELS", "A"],  # trec_eval's: trec_eval -m num_ret qrels run
    ["-q", "-m", "map", "-m", "num_ret", "QRELS", "A"],  # one measure per -m, as trec_eval
    ["-m", "map", "num_ret", "QRELS", "A", "B"],  # several runs after the measures
    ["QRELS", "-m", "map", "num_ret", "A", "B"],  # the judgments before them
    ["-m", "map", "num_ret", "QRELS", "A", "B", "-f", "trec"],  # an option after the files
    ["--profile", "sklearn", "-m", "ndcg_score", "QRELS", "A"],  # the profile's names
])
def test_cli_files_after_the_measures(files, order, capsys):
    """The files may follow ``-m``, as trec_eval's command line has them (``-m`` takes every
    word up to the next option: they were read as measures and the command stopped for want
    of its files); they are the same command as with the files first."""
    qrels, a, b = files
    paths = {"QRELS": qrels, "A": a, "B": b}
    words = [paths.get(word, word) for word in order]
    files_first = [w for w in words if w in paths.values()]
    options = [w for w in words if w not in paths.values()]
    assert main(["evaluate", *files_first, *options]) == 0
    expected = capsys.readouterr().out
    assert main(["evaluate", *words]) == 0
    assert capsys.readouterr().out == expected


def test_cli_files_after_the_measures_say_what_is_wrong(files, capsys):
    """A missing file after ``-m`` is named as such; a misspelt measure with no file after it
    is still a usage error (it cannot be a file: the judgments are missing too)."""
    qrels, a, _ = files
    assert main(["evaluate", "-m", "map", "missing.txt", a]) == 2
    assert capsys.readouterr().err == "rankwise: error: missing.txt: file not found\n"
    with pytest.raises(SystemExit) as stop:
        main(["evaluate", "-m", "map", "mapp"])
    assert stop.value.code == 2
    assert "the following arguments are required: qrels, RUN" in capsys.readouterr().err


class FullDisk(io.StringIO):
    """Standard output on a full disk: every write fails, as on ``/dev/full``."""

    def write(self, text):
        raise OSError(28, "No space left on device")

    def flush(self):
        raise OSError(28, "No space left on device")


@pytest.mark.parametrize("command", [["evaluate", "QRELS", "A", "-m", "map"], ["profiles"],
                                     ["measures"]])
def test_cli_output_that_cannot_be_written_is_one_line(files, command, monkeypatch, capsys):
    """A full disk (or any failing write of standard output) is exit status 2 and one line,
    not a traceback."""
    qrels, a, _ = files
    monkeypatch.setattr(sys, "stdout", FullDisk())
    assert main([{"QRELS": qrels, "A": a}.get(word, word) for word in command]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "rankwise: error: standard output: cannot write (No space left on device)")


@pytest.mark.parametrize("options, message", [
    (["-c", "--missing-queries", "ignore"],
     "argument -c/--complete: sets --missing-queries zero, not ignore"),
    (["-J", "--unjudged", "nonrelevant"],
     "argument -J/--judged-only: sets --unjudged remove, not nonrelevant"),
    (["--spark-per-query-output", "per_query"],
     "argument --spark-per-query-output: only with --engine spark"),
    (["--spark-conf", "spark.driver.memory=8g"], "argument --spark-conf: only with --engine spark"),
    (["--engine", "spark", "--stream"], "argument --stream: not with --engine spark"),
    (["-l", "2", "--relevance-threshold", "1.5"],
     "argument --relevance-threshold: not allowed with argument -l"),
])
def test_cli_refuses_options_that_contradict_or_do_nothing(files, options, message, capsys,
                                                           tmp_path, monkeypatch):
    """Options that contradict each other, or that would be ignored, are a usage error: ``-c``
    overrode ``--missing-queries ignore`` without a word, and a Spark option without ``--engine
    spark`` was ignored (no per-query table written where one was asked for)."""
    qrels, a, _ = files
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(["evaluate", qrels, a, "-m", "map", *options])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err.splitlines()[-1]
    assert not (tmp_path / "per_query").exists()


def test_cli_trec_flags_agree_with_the_conventions_they_set(files, capsys):
    """``-c`` with ``--missing-queries zero`` (and ``-J`` with ``--unjudged remove``) say one
    thing twice: accepted."""
    qrels, a, _ = files
    assert main(["evaluate", qrels, a, "-m", "num_q", "-c", "--missing-queries", "zero",
                 "-J", "--unjudged", "remove", "-f", "trec"]) == 0
    assert "num_q                 \tall\t3\n" in capsys.readouterr().out


def test_cli_trec_eval_threshold_prints_as_in_python(files, capsys):
    """``-l 2`` is the threshold 2, as ``relevance_threshold=2`` in Python: the JSON and the
    conventions line are the same (they said 2.0)."""
    qrels, a, _ = files
    assert main(["evaluate", qrels, a, "-m", "map", "-l", "2", "-f", "json"]) == 0
    expected = rankwise.evaluate(qrels, a, ["map"], relevance_threshold=2)
    assert capsys.readouterr().out == expected.to_json(indent=2) + "\n"
    assert main(["evaluate", qrels, a, "-m", "map", "-l", "2"]) == 0
    assert "relevance_threshold=2," in capsys.readouterr().out


def test_cli_files_after_the_measures_of_every_command(files, capsys):
    """The files after ``-m`` are read so by every command that takes measures (here
    ``explain`` and ``compare``), as by ``evaluate``."""
    qrels, a, b = files
    for command, options, inputs in (("explain", ["-Q", "q1"], [qrels, a]),
                                     ("compare", ["--test", "t"], [qrels, a, b])):
        assert main([command, *inputs, *options, "-m", "AP", "RR"]) == 0
        expected = capsys.readouterr().out
        assert main([command, *options, "-m", "AP", "RR", *inputs]) == 0
        assert capsys.readouterr().out == expected


def test_trec_ids_print_as_trec_eval_prints_them_or_escaped_one_way_back():
    # backslashes were not doubled (the ids a<TAB>b and a\tb both printed a\tb), unicode_escape
    # printed é of an id with a space as \xe9, and an id holding a no-break space, which
    # trec_eval reads and prints as it is, was escaped
    ids = ["a\tb", "q\xa0n", "é x", "a\\b", "c\\ d", "n\x00", "v\x0bw\x0c", "日本\n"]
    qrels = {q: {"d": 1} for q in ids}
    result = rankwise.evaluate(qrels, {q: {"d": 1.0} for q in ids}, ["P@1"], per_query=True)
    printed = [line.split("\t")[1] for line in result.to_trec(per_query=True).splitlines()
               if line.startswith("P_1 ") and "\tall\t" not in line]
    assert printed == [r"a\tb", "a\\b", r"c\\\x20d", r"n\x00", "q\xa0n", r"v\x0bw\x0c",
                       r"é\x20x", r"日本\n"]  # in the order of the query ids


def test_trec_output_refuses_two_ids_that_print_alike(tmp_path, capsys):
    # a\<VT>b escapes to a\x0bb, which the id a\x0bb (a backslash, no whitespace) is as it is
    qrels = write(tmp_path, "q.txt", "a\vb 0 d1 1\na\\x0bb 0 d1 1\n")
    run = write(tmp_path, "r.txt", "a\vb Q0 d1 1 1.0 r\na\\x0bb Q0 d1 1 1.0 r\n")
    result = rankwise.evaluate(qrels, run, ["P@1"], per_query=True)
    with pytest.raises(rankwise.InputError, match=r"query ids .* both print as 'a\\\\x0bb'"):
        result.to_trec(per_query=True)
    assert result.to_trec().endswith("P_1                   \tall\t1.0000\n")  # no query id
    assert main(["evaluate", qrels, run, "-m", "P@1", "-q", "-f", "trec"]) == 2
    err = capsys.readouterr().err
    assert "both print as" in err and "--format csv, json" in err and "Traceback" not in err
    named = rankwise.evaluate(qrels, {"a\tb": run, "a\\tb": run}, ["P@1"])
    with pytest.raises(rankwise.InputError, match="run names"):
        named.to_trec()


def test_writers_refuse_digits_that_are_not_a_count_of_decimals_and_json_not_a_result(files):
    # digits=-1 raised Python's "Format specifier missing precision", 2.5 "Invalid format
    # specifier"; a comparison's JSON given to Result.from_json raised KeyError: 'systems'
    qrels, a, b = files
    result = rankwise.evaluate(qrels, {"A": a, "B": b}, ["AP"], per_query=True)
    for writer in (result.to_markdown, result.to_latex, result.to_table):
        for digits in (-1, 2.5, True):
            with pytest.raises(ValueError, match=r"digits must be a whole number of decimals"):
                writer(digits=digits)
    from rankwise.compare import compare_result

    with pytest.raises(rankwise.InputError, match=r"not a Result's JSON .*: no 'aggregate_kinds'"):
        rankwise.Result.from_json(compare_result(result, test="t").to_json())
    with pytest.raises(rankwise.InputError, match="no 'conventions'"):
        rankwise.Result.from_json("[1, 2]")
