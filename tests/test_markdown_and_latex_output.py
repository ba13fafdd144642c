"""The Markdown and LaTeX outputs show ids and measure names as themselves: rendered by a real
Markdown parser (GitHub-flavoured tables), every cell holds the id it was given, whatever
markup characters the id holds; LaTeX escapes what it would typeset otherwise."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest
from markdown_it import MarkdownIt

import rankwise
from rankwise.compare import compare_result
from rankwise.plain import markdown_text
from rankwise.stats.pitfalls import queries_carrying_difference

#: ids a user may well have: pipes and commas in file names, brackets, emphasis marks,
#: backslashes before a pipe, HTML
ODD = ["x|y.run", "[x](http://e.com)", "a\\|b", "*r*2_", "~~s~~", "<b>&amp;", "`c`"]


def _cells(markdown: str) -> list[list[str]]:
    """The rows of the Markdown's tables, as the text of their cells."""
    rendered = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(markdown)
    rows = re.findall(r"<tr>(.*?)</tr>", rendered, flags=re.S)
    return [[html.unescape(c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)]
            for row in rows]


def _prose(markdown: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", MarkdownIt("commonmark").enable(
        "strikethrough").render(markdown)))


@pytest.mark.parametrize("text", ODD)
def test_markdown_text_renders_as_itself(text):
    assert _prose(markdown_text(text)).strip() == text


def _result():
    qrels = {q: {"d1": 1, "d2": 0} for q in ODD}
    runs = {name: {q: {"d1": 1.0 + i, "d2": 2.0 - i} for i, q in enumerate(ODD)}
            for name in ODD[:3]}
    return rankwise.evaluate(qrels, runs, ["P@1", "nDCG(gain={1:3})@2"], per_query=True)


def test_result_markdown_keeps_every_id_in_its_cell():
    result = _result()
    rows = _cells(result.to_markdown(per_query=True))
    assert rows[0] == ["system", "P@1", "nDCG(gain={1:3})@2"]
    assert [row[0] for row in rows[1:4]] == ODD[:3]
    per_query = [row for row in rows if len(row) == 4 and row[0] != "system"]
    assert {(row[0], row[1]) for row in per_query} == {(s, q) for s in ODD[:3] for q in ODD}


def test_comparison_markdown_keeps_every_id_in_its_cell():
    comparison = compare_result(_result(), test="t")
    rows = _cells(comparison.to_markdown())
    means = [row for row in rows if len(row) == 3 and row[0] != "system"]
    assert [row[0].split(" ", 1)[1] for row in means] == ODD[:3]
    tests = [row for row in rows if len(row) == 11 and row[0] != "measure"]
    assert {(row[1], row[2]) for row in tests} == {(a, b) for i, a in enumerate(ODD[:3])
                                                   for b in ODD[i + 1:3]}
    assert all(len(row) in (3, 11) for row in rows)  # no cell split by an id


def test_latex_escapes_what_it_would_typeset_otherwise():
    runs = {name: {"q1": {"d1": 1.0, "d2": 2.0 + i}, "q2": {"d1": 2.0}}
            for i, name in enumerate(["x|y.run", "<b>.run"])}
    result = rankwise.evaluate({"q1": {"d1": 1}, "q2": {"d1": 1}}, runs, ["P@1"], per_query=True)
    latex = compare_result(result, test="t").to_latex()
    assert r"x\textbar{}y.run" in latex and r"\textless{}b\textgreater{}" in latex
    assert "|" not in latex.replace(r"\textbar{}", "")


def test_latex_typesets_two_hyphens_and_two_quotes_as_themselves():
    # "--" in a run name was typeset as an en dash, "''" as a closing double quote
    runs = {name: {"q1": {"d1": 1.0, "d2": 2.0 + i}, "q2": {"d1": 2.0}}
            for i, name in enumerate(["bm25--rm3", "''q'' ,,x !`"])}
    result = rankwise.evaluate({"q1": {"d1": 1}, "q2": {"d1": 1}}, runs, ["P@1"], per_query=True)
    for latex in (result.to_latex(), compare_result(result, test="t").to_latex()):
        assert r"bm25-{}-rm3" in latex and r"'{}'q'{}' ,{},x !{}`" in latex
        assert "--" not in latex and "''" not in latex


def test_latex_keeps_line_breaks_of_ids_out_of_its_lines():
    # a run named with a blank line ended the paragraph inside its table cell, and the
    # legend's "%" comment ended at the line break, the rest typeset below the table
    runs = {name: {"q1": {"d1": 1.0, "d2": 2.0 + i}, "q2": {"d1": 2.0}}
            for i, name in enumerate(["go\n\nod", "b\ta\r\nd\u2028e"])}
    result = rankwise.evaluate({"q1": {"d1": 1}, "q2": {"d1": 1}}, runs, ["P@1"], per_query=True)
    comparison = compare_result(result, test="t")
    latex = comparison.to_latex()
    lines = latex.splitlines()
    end = lines.index(r"\end{tabular}")
    assert all(line.endswith(r" \\") or line.startswith("\\") for line in lines[:end + 1])
    # the legend, the test, each warning, the precision and the conventions
    assert all(line.startswith("% ") for line in lines[end + 1:])
    assert len(lines) == end + 5 + len(comparison.warnings)
    assert "(a) go od & " in latex and "(b) b a d e & " in latex


def test_result_latex_has_every_value_and_id_escaped():
    qrels = {"q_1": {"d1": 1, "d2": 0}, "q$2\n\nx": {"d1": 0}}
    runs = {"bm25&x%": {"q_1": {"d1": 2.0, "d2": 1.0}, "q$2\n\nx": {"d1": 1.0}},
            "b|c": {"q_1": {"d1": 1.0, "d2": 2.0}}}
    result = rankwise.evaluate(qrels, runs, ["P@1", "nDCG(gain={1:3})@2", "NumRet"],
                               per_query=True, no_relevant="nan")
    lines = result.to_latex(per_query=True).splitlines()
    assert lines[:3] == [r"\begin{tabular}{lrrr}", r"\hline",
                         r"System & P@1 & nDCG(gain=\{1:3\})@2 & NumRet \\"]
    assert r"bm25\&x\% & nan & 0.5000 & 3 \\" in lines  # NaN: q$2 has no relevant document
    assert r"b\textbar{}c & 0.0000 & 0.6309 & 2 \\" in lines
    assert r"bm25\&x\% & q\$2 x & nan & 0.0000 & 1 \\" in lines  # its blank line: a space
    assert lines.count(r"\end{tabular}") == 2 and lines[lines.index(r"\end{tabular}") + 1] == ""
    assert lines[-1].startswith("% conventions: ") and r"no\_relevant=nan" in lines[-1]
    assert r"\begin{tabular}" not in result.to_latex().split(r"\end{tabular}")[1]


def test_evaluate_writes_latex_from_the_command_line(tmp_path, capsys):
    from rankwise.cli import main
    from tests.helpers import write

    qrels = write(tmp_path, "qrels.txt", "q1 0 a 1\nq1 0 b 0\n")
    run = write(tmp_path, "run.txt", "q1 Q0 a 1 2 my_run\nq1 Q0 b 2 1 my_run\n")
    assert main(["evaluate", qrels, run, "-m", "P@1", "AP", "-f", "latex"]) == 0
    out = capsys.readouterr().out
    assert r"System & P@1 & AP \\" in out and r"my\_run & 1.0000 & 1.0000 \\" in out


def test_text_tables_keep_each_row_on_one_line():
    # run names holding a line break split their row of the aligned tables in two
    qrels = {f"q{i}": {"d1": 1, "d2": 0} for i in range(6)}
    runs = {"go\nod": {q: {"d1": 2.0, "d2": 1.0} for q in qrels},
            "b\tad": {q: {"d1": 1.0, "d2": 2.0} for q in qrels}}
    result = rankwise.evaluate(qrels, runs, ["P@1"], per_query=True)
    assert result.to_table().splitlines()[2:] == ["go\\nod  1.0000", "b\\tad   0.0000"]
    text = compare_result(result).to_table().splitlines()
    assert text[3:5] == ["a go\\nod  1.0000^b", "b b\\tad     0.0000"]
    assert any(line.startswith("P@1      go\\nod  b\\tad  +1.0000") for line in text)
    # the other formats keep the names themselves
    assert list(rankwise.Result.from_json(result.to_json()).systems) == list(runs)


def test_the_legend_names_only_systems_of_the_comparison():
    result = rankwise.evaluate({"q": {"d": 1}}, {"A": {"q": {"d": 1.0}}, "B": {"q": {"d": 2.0}}},
                               ["P@1"], per_query=True)
    legend = compare_result(result, test="t").legend()
    assert legend.startswith("x^b: significantly better than system b (a = A, b = B)")


def test_no_lead_is_reported_when_the_means_are_equal():
    """0.0 + 0.8 and 0.2 + 0.6 are equal sums, but their difference summed query by query is
    5.6e-17, not 0: no system leads, so no query carries a lead."""
    assert queries_carrying_difference(np.array([0.0, 0.8]) - np.array([0.2, 0.6])) == 0


def test_markdown_and_latex_say_how_their_values_are_rounded():
    # 0.99996 printed 1.0000 with nothing saying that the table rounds (CSV has every digit)
    result = rankwise.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@1", "NumRet"])
    result.systems["run"].aggregates["P@1"] = 0.99996
    markdown = result.to_markdown().splitlines()
    assert "| run | 1.0000 | 1 |" in markdown
    assert "Values rounded to 4 decimals, counts whole (CSV and JSON hold every digit)." in \
        markdown
    assert "Values rounded to 1 decimal," in result.to_markdown(digits=1)
    latex = result.to_latex(digits=2).splitlines()
    assert r"run & 1.00 & 1 \\" in latex
    assert "% Values rounded to 2 decimals, counts whole (CSV and JSON hold every digit)" in latex
    assert "0.99996" in result.to_csv()


def test_huge_values_and_gains_print_in_scientific_notation():
    """A DCG of 1e300 printed with 301 digits in the tables, and a gain of 2^1018 with 307
    in the conventions line; trec_eval's format keeps its fixed notation."""
    result = rankwise.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}},
                               ["DCG(gain={1:1e300})", "num_ret"],
                               gain={1: 2.0 ** 1018})
    table = result.to_table()
    assert "1.0000e+300" in table and table.splitlines()[-1].split()[-1] == "1"
    assert "| run | 1.0000e+300 | 1 |" in result.to_markdown()
    assert "gain={1:2.8088955232223686e+306}" in result.conventions.describe()
    assert "run & 1.0000e+300 & 1" in result.to_latex()
    assert f"\t{1e300:.4f}\n" in result.to_trec()  # as trec_eval's %6.4f prints it
