"""Every output format gives back the ids it was given: random ids made of the characters
that are markup somewhere (Markdown, CSV, HTML, TREC's tabs) go through each writer and are
read back by a parser of that format (markdown-it, the csv module, the JSON reader, a split
on tabs), with the values unchanged."""

from __future__ import annotations

import csv
import html
import io
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
