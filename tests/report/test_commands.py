"""The ``report`` command and the demo's HTML report."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankwise.cli import main
from rankwise.demo import run_demo
from rankwise.report.html import read_payload
from tests.helpers import write

QRELS = "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq2 0 d 1\nq2 0 e 0\nq3 0 f 1\n"
RUN_A = "q1 Q0 a 1 3 A\nq1 Q0 b 2 2 A\nq1 Q0 c 3 1 A\nq2 Q0 d 1 2 A\nq2 Q0 e 2 1 A\n"
RUN_B = "q1 Q0 b 1 3 B\nq1 Q0 c 2 2 B\nq1 Q0 a 3 1 B\nq2 Q0 e 1 2 B\nq2 Q0 x 2 1 B\nq3 Q0 f 1 1 B\n"


def files(tmp_path):
    return (write(tmp_path, "qrels.txt", QRELS), write(tmp_path, "a.run", RUN_A),
            write(tmp_path, "b.run", RUN_B))


def test_report_command(tmp_path, capsys):
    qrels, a, b = files(tmp_path)
    out = tmp_path / "out" / "r.html"
    assert main(["report", qrels, a, b, "-o", str(out), "-m", "AP", "nDCG@3", "--baseline",
                 b, "--test", "t", "--max-k", "5", "--drill-depth", "2", "--title", "T",
                 "-l", "2"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(f"report written to {out} (")
    assert "rankwise: a.run: 2 queries evaluated" in captured.err
    header, arrays = read_payload(out.read_text())
    assert header["title"] == "T" and header["baseline"] == "b.run"
    assert [m["name"] for m in header["measures"]] == ["AP", "nDCG@3"]
    assert header["drill"]["depth"] == 2 and header["curves"]["k"] == 5
    assert header["conventions"]["relevance_threshold"] == 2
    assert [s["name"] for s in header["systems"]] == ["a.run", "b.run"]


def test_report_command_refuses_bad_input(tmp_path, capsys):
    qrels, a, b = files(tmp_path)
    assert main(["report", qrels, a, b, "--baseline", "nope", "-o",
                 str(tmp_path / "x.html")]) == 2
    assert "--baseline must name one of the runs" in capsys.readouterr().err
    bad = write(tmp_path, "bad.run", "q1 Q0 a 1\n")
    assert main(["report", qrels, bad, "-o", str(tmp_path / "y.html")]) == 2
    assert "bad.run:1:" in capsys.readouterr().err
    assert not (tmp_path / "y.html").exists()


@pytest.mark.parametrize("command, option, value", [
    ("report", "--max-k", "100000000000"), ("report", "--drill-depth", "100000000000"),
    ("report", "--seed", "-1"), ("plot", "--dpi", "100000"), ("plot", "--max-k", "10001"),
    ("plot", "--seed", "-1")])
def test_sizes_beyond_memory_and_negative_seeds_are_usage_errors(tmp_path, capsys, command,
                                                                 option, value):
    # --max-k 10^11 asked numpy for 745 GiB; a negative seed ended in numpy's ValueError
    qrels, a, b = files(tmp_path)
    with pytest.raises(SystemExit) as info:
        main([command, qrels, a, b, "-o", str(tmp_path / "out"), option, value])
    assert info.value.code == 2
    assert f"argument {option}: expected " in capsys.readouterr().err


def test_demo_writes_the_html_report(tmp_path):
    text = run_demo(tmp_path / "demo")
    path = tmp_path / "demo" / "report.html"
    assert f"HTML report (open it in a browser; it works offline): {path}" in text
    header, _ = read_payload(path.read_text())
    assert [s["name"] for s in header["systems"]] == ["strong", "medium", "random"]
    assert header["baseline"] == "strong" and len(header["queries"]) == 50


def test_a_run_file_whose_name_is_not_utf8(tmp_path, monkeypatch):
    # a file name's byte that is not UTF-8 reaches the run's name as a lone surrogate (as
    # os.fsdecode decodes it): writing the page's <title> ended in a UnicodeEncodeError
    import io
    import os
    import sys

    monkeypatch.setattr(sys, "stderr", io.StringIO())  # sys.stderr writes it backslashed
    qrels, a, b = files(tmp_path)
    odd = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"name\xff.run"))
    with open(odd, "w") as f:
        f.write(RUN_B)
    out = tmp_path / "odd.html"
    assert main(["report", qrels, a, odd, "-o", str(out), "-m", "AP", "--test", "t"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "<title>rankwise report: \u2068a.run\u2069, \u2068name\ufffd.run\u2069 on " in text
    header, _ = read_payload(text)
    assert [s["name"] for s in header["systems"]] == ["a.run", "name\udcff.run"]


@pytest.mark.parametrize("option, value, message", [
    ("--test", "nope", "unknown test"), ("--correction", "nope", "unknown correction"),
    ("--alpha", "2", "alpha must be strictly between 0 and 1")])
def test_statistics_options_are_checked_with_one_run_and_before_evaluating(
        tmp_path, capsys, monkeypatch, option, value, message):
    # with one run the report wrote a page under '--test nope' (no test runs then); with more,
    # the typo was found only after every run had been evaluated
    import rankwise.report.data as report_data

    qrels, a, b = files(tmp_path)
    out = tmp_path / "x.html"
    assert main(["report", qrels, a, "-o", str(out), option, value]) == 2
    assert message in capsys.readouterr().err and not out.exists()
    monkeypatch.setattr(report_data, "_system", None)  # evaluating a run would fail
    assert main(["report", qrels, a, b, "-o", str(out), option, value]) == 2
    assert message in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize("command", ["report", "plot"])
def test_an_output_below_a_file_or_empty_is_refused_clearly(tmp_path, capsys, command):
    # '-o a.run/x.html' said "a.run: cannot write (File exists)" after the whole evaluation,
    # and '-o ""' said ": is a directory"
    qrels, a, b = files(tmp_path)
    assert main([command, qrels, a, "-o", f"{a}/x"]) == 2
    assert f"rankwise: error: {a}: is a file; expected a folder to hold x" in capsys.readouterr().err
    assert main([command, qrels, a, "-o", ""]) == 2
    assert "--output: no " in capsys.readouterr().err


def test_an_output_that_is_one_of_the_inputs_is_refused(tmp_path, capsys):
    # '-o a.run' read the run, then wrote the report over it: the run was lost
    qrels, a, b = files(tmp_path)
    for target in (a, qrels, str(tmp_path / "." / "b.run")):
        assert main(["report", qrels, a, b, "-o", target, "-m", "AP"]) == 2
        assert f"{target}: is one of the inputs" in capsys.readouterr().err
    assert (tmp_path / "a.run").read_text() == RUN_A and (tmp_path / "qrels.txt").read_text() == QRELS
    assert (tmp_path / "b.run").read_text() == RUN_B
    from rankwise.errors import InputError
    from rankwise.report import report

    with pytest.raises(InputError, match="is one of the inputs"):
        report(qrels, {"a": a, "b": b}, b, ["AP"])
    assert (tmp_path / "b.run").read_text() == RUN_B


@pytest.mark.parametrize("command", ["report", "plot"])
def test_an_output_folder_that_cannot_be_written_is_refused_first(tmp_path, capsys,
                                                                   monkeypatch, command):
    # 'Permission denied' came only after every run had been evaluated (os.access is faked:
    # root may write anywhere)
    import os

    import rankwise.report.data as report_data

    qrels, a, b = files(tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **k: Path(p) != locked and real(p, mode))
    monkeypatch.setattr(report_data, "_system", None)  # evaluating a run would fail
    assert main([command, qrels, a, b, "-o", str(locked / "new" / "x")]) == 2
    assert f"rankwise: error: {locked}: cannot write (Permission denied)" in capsys.readouterr().err
