"""Every output format gives back the ids it was given: random ids made of the characters
that are markup somewhere (Markdown, CSV, HTML, TREC's tabs) go through each writer and are
read back by a parser of that format (markdown-it, the csv module, the JSON reader, a split
on tabs), with the values unchanged; ids with whitespace and line breaks too, beside values
left undefined (NaN) by ``no_relevant``: JSON gives back every value, id, convention and
diagnostic, CSV and DataFrames every value, Markdown every id in its cell (its whitespace as
one space), trec_eval's lines three fields each (whitespace escaped, backslashes doubled, the escaped
form read back to the id), and the comparison's
LaTeX every name in its cell with its special characters escaped."""

from __future__ import annotations

import csv
import html
import io
import math
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

import rankwise
from rankwise.compare import compare_result

#: letters, digits and the punctuation some output format gives a meaning to
ALPHABET = "ab1_*`|[]()~<>&\\\"',#!{}:;=+-.%$^/é問"
IDS = st.text(ALPHABET, min_size=1, max_size=8)
SETTINGS = settings(max_examples=25, deadline=None)
MEASURES = ["P@1", "nDCG(gain={1:3,2:9})@2"]


def _result(systems: list[str], queries: list[str]) -> rankwise.Result:
    qrels = {q: {"d1": 1, "d2": 2} for q in queries}
    runs = {s: {q: {"d1": 1.0 + i + j, "d2": 2.0} for j, q in enumerate(queries)}
            for i, s in enumerate(systems)}
    return rankwise.evaluate(qrels, runs, MEASURES, per_query=True)


def _table_cells(markdown: str) -> list[list[str]]:
    rendered = MarkdownIt("commonmark").enable("table").render(markdown)
    return [[html.unescape(cell) for cell in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row,
                                                          re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", rendered, re.S)]


names = st.lists(IDS, min_size=2, max_size=3, unique=True)


@SETTINGS
@given(systems=names, queries=names)
def test_every_format_gives_the_ids_back(systems, queries):
    result = _result(systems, queries)
    # Markdown, read by a Markdown parser
    rows = _table_cells(result.to_markdown(per_query=True))
    assert rows[0] == ["system", *MEASURES]
    assert [row[0] for row in rows[1:1 + len(systems)]] == systems
    assert {(row[0], row[1]) for row in rows if len(row) == 2 + len(MEASURES)
            and row[:2] != ["system", "query"]} == {(s, q) for s in systems for q in queries}
    # CSV, read by the csv module, at full precision
    read = list(csv.reader(io.StringIO(result.to_csv(per_query=True))))
    assert read[0] == ["system", "query", *MEASURES]
    by_pair = {(r[0], r[1]): [float(v) for v in r[2:]] for r in read[1:]}
    for s in systems:
        for q, values in result.per_query(s).items():
            assert by_pair[(s, q)] == [values[m] for m in MEASURES]
    # JSON, read back whole
    assert rankwise.Result.from_json(result.to_json()).to_json() == result.to_json()
    # trec_eval's lines, split on tabs
    lines = [line.split("\t") for line in result.to_trec(per_query=True).splitlines()]
    assert {line[1] for line in lines} == set(queries) | {"all"}
    assert [line[2] for line in lines if line[0].strip() == "runid"] == systems


#: ids with whitespace too: spaces, tabs, line breaks (and Unicode's, which trec_eval
#: reads as part of an id, as str.split and str.splitlines do not)
SPACED_IDS = st.text(ALPHABET + " \t\n\r\x0b\x0c\x85\u2028\xa0", min_size=1, max_size=6)
spaced = st.lists(SPACED_IDS, min_size=2, max_size=3, unique=True)


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _flat(text: str) -> str:
    """What Markdown shows of an id: its whitespace runs as one space (HTML does the same)."""
    return " ".join(text.split())


@SETTINGS
@given(systems=spaced, queries=spaced, no_relevant=st.sampled_from(["zero", "nan", "skip"]))
def test_ids_with_whitespace_and_undefined_values_survive(systems, queries, no_relevant):
    # the last query has no relevant document: NaN under no_relevant='nan' and 'skip'
    qrels = {q: {"d1": 1, "d2": 2} for q in queries[:-1]} | {queries[-1]: {"d1": 0}}
    runs = {s: {q: {"d1": 1.0 + i + j, "d2": 2.0} for j, q in enumerate(queries)}
            for i, s in enumerate(systems)}
    result = rankwise.evaluate(qrels, runs, MEASURES + ["AP", "NumRet"], per_query=True,
                               no_relevant=no_relevant)
    measures = result.measures
    # JSON: values, ids, conventions, diagnostics and undefined counts come back
    back = rankwise.Result.from_json(result.to_json())
    assert back.conventions == result.conventions and list(back.systems) == systems
    for s in systems:
        assert back.diagnostics[s] == result.diagnostics[s]
        assert back.systems[s].undefined == result.systems[s].undefined
        assert all(_same(back.mean(m, s), result.mean(m, s)) for m in measures)
        got, want = back.per_query(s), result.per_query(s)
        assert list(got) == list(want) and all(_same(got[q][m], want[q][m])
                                               for q in want for m in measures)
    # CSV at full precision, NaN as nan
    read = list(csv.reader(io.StringIO(result.to_csv(per_query=True))))
    by_pair = {(r[0], r[1]): [float(v) for v in r[2:]] for r in read[1:]}
    frame = result.to_frame()
    by_row = {(r["system"], r["query"]): [r[m] for m in measures]
              for r in frame.to_dict("records")}
    for s in systems:
        for q, values in result.per_query(s).items():
            assert all(map(_same, by_pair[(s, q)], [values[m] for m in measures]))
            assert all(map(_same, by_row[(s, q)], [values[m] for m in measures]))
    # Markdown: every id in its own cell, its whitespace shown as single spaces
    rows = _table_cells(result.to_markdown(per_query=True))
    assert [row[0] for row in rows[1:1 + len(systems)]] == [_flat(s) for s in systems]
    assert {(row[0], row[1]) for row in rows if len(row) == 2 + len(measures)
            and row[:2] != ["system", "query"]} == {(_flat(s), _flat(q)) for s in systems
                                                     for q in queries}
    # trec_eval's lines: three tab-separated fields each, an id with whitespace escaped
    lines = [line.split("\t") for line in result.to_trec(per_query=True).split("\n")[:-1]]
    assert {len(line) for line in lines} == {3}
    written = [line[2] for line in lines if line[0].strip() == "runid"]
    first = lines[:lines.index(next(x for x in lines if x[0].strip() == "runid"))]
    written += list(dict.fromkeys(line[1] for line in first))  # the first system's queries
    for name, field in zip(systems + list(result.per_query(systems[0])), written, strict=True):
        assert field == name if not TREC_SEPARATORS.search(name) else (
            not TREC_SEPARATORS.search(field) and _trec_unescaped(field) == name)


#: what trec_eval splits its lines at (C's isspace) and cannot hold in a string (NUL)
TREC_SEPARATORS = re.compile("[ \t\n\v\f\r\0]")


def _trec_unescaped(field: str) -> str:
    """An id printed escaped in trec_eval's lines, read back: a backslash starts an escape."""
    escapes = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}
    return re.sub(r"\\(x[0-9a-f]{2}|.)", lambda m: escapes.get(m.group(1)) or
                  chr(int(m.group(1)[1:], 16)), field)


@SETTINGS
@given(systems=names)
def test_the_comparison_gives_the_ids_back(systems):
    comparison = compare_result(_result(systems, ["q1", "q2", "q3"]), test="t")
    rows = _table_cells(comparison.to_markdown())
    means = [row for row in rows if len(row) == 1 + len(MEASURES) and row[0] != "system"]
    assert [row[0].split(" ", 1)[1] for row in means] == systems
    tests = [row for row in rows if len(row) == 11 and row[0] != "measure"]
    assert {(row[1], row[2]) for row in tests} == {
        (a, b) for i, a in enumerate(systems) for b in systems[i + 1:]}
    read = list(csv.reader(io.StringIO(comparison.to_csv())))
    assert {(r[1], r[2]) for r in read[1:]} == {(t["system"], t["other"])
                                                 for t in comparison.tests}


@SETTINGS
@given(systems=spaced)
def test_the_comparison_in_latex_keeps_every_name_in_its_cell(systems):
    comparison = compare_result(_result(systems, ["q1", "q2", "q3"]), test="t")
    lines = comparison.to_latex().splitlines()
    end = lines.index(r"\end{tabular}")
    rows = lines[4:end - 1]  # after the header and its rules, before the closing rule
    assert len(rows) == len(systems)
    for row, name in zip(rows, systems):
        # one unescaped & per measure: a name's own & is \&, its line breaks a space
        assert len(re.findall(r"(?<!\\)&", row)) == len(MEASURES) and row.endswith(r" \\")
        shown = row.split(") ", 1)[1].rsplit(" & ", len(MEASURES))[0]
        # (an empty group breaks a ligature: "-{}-" is two hyphens, not a dash)
        assert not re.search(r"--|``|''|,,|[!?]`", shown)
        shown = re.sub(r"(?<=[-`',!?])\{\}(?=[-`',])", "", shown)
        assert not re.search(r"(?<!\\)[%$#_{}]", shown.replace(r"\textbackslash{}", "")
                             .replace(r"\textasciitilde{}", "").replace(r"\^{}", "")
                             .replace(r"\textless{}", "").replace(r"\textgreater{}", "")
                             .replace(r"\textbar{}", ""))
    assert all(line.startswith("% ") for line in lines[end + 1:])
    assert len(lines) == end + 5 + len(comparison.warnings)  # legend, test, warnings, ...
