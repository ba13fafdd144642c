"""The report shows exactly its data, whatever the names.

Seeded random collections (40, the same on every run) whose query ids, doc ids, run names and
titles are made of what means something in HTML, JavaScript, JSON, CSS, URLs or Unicode
(markup, escapes, template strings, NUL and other control characters, line separators,
combining marks, right-to-left marks and overrides, emoji and other astral characters,
300-character ids, ids that differ only in case, ids that look like numbers), measured with
measures of both directions, with cutoffs, with undefined (NaN) values and with ranges wider
than the 16-bit codes' precision, with one to four systems (sometimes two that differ by less
than a code's step) and one to 40 queries, are written as a report and opened in headless
Chromium (one page for every case).

The page must log no error, make no request, hold no element, handler, comment nor stray
text that an id made, show every run name, query id and doc id exactly as given and keep
their bidi characters inside them, count the queries, systems, wins, ties and losses that
:func:`rankwise.evaluate` and :func:`rankwise.compare` count, show every value to its 4
decimals (NaN as a dash), sort its per-query table into the right order by every column in
both directions, filter it by id, and drill down into every query. The figures of 8 sets of
such run names are written one file each, as well-formed SVG, with every name drawn as
given. About 40 s in all, hence marked slow.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter

import numpy as np
import pytest

import rankwise
from rankwise.core.judgments import index_judgments
from rankwise.core.ranked import rank
from rankwise.io import to_qrels, to_run
from rankwise.measures import parse_measure
from rankwise.messages import isolated
from rankwise.report.data import collect
from rankwise.report.html import read_payload, stored_values, write_html
from rankwise.stats.multi import letter
from tests.report.pages import backwards

pytestmark = pytest.mark.slow

#: collections opened in the browser, and sets of run names drawn as figures
CASES = 40
FIGURE_CASES = 8
#: pieces of ids that mean something to some part of the page or of a figure's file
FRAGMENTS = (
    "<", ">", "&", '"', "'", "</script>", "</title>", "<!--", "-->", "&amp;", "&lt;", "<b>",
    "</td>", "<img src=x onerror=alert(1)>", "\x00", "\\", "\\u2028", "\u2028", "\u2029",
    "${", "}", "`", "${x}", "#", "%", "%20", "?", "/", "..", ".", "e\u0301", "\u0301",
    "\u202e", "\u200f", "\u05e9\u05dc\u05d5\u05dd", "\u0639", "\U0001f600",
    "\U0001f469\u200d\U0001f467", "\U0001d54f", "\uff21", "\ufffd", "\ufb00", "$", "$$",
    "$x$", "_", "__proto__", "constructor", "NaN", "null", "undefined", "1e3", "007", "7",
    "-0", "0x1F", "Infinity", "|", "*", "=", "\u00df", "\u0130", "A", "a", "Q", "q",
)
#: single characters mixed with the fragments
CHARACTERS = "aAbB019<>&\"'\\/`$#%?{}_-.é\u2028\U0001d54f\uff21\x00\x01\x7f"
#: measures of both directions, with and without cutoffs, some often undefined
MEASURES = ("nDCG@5", "P@3", "AP", "RR", "R@10", "MAE", "RMSE", "Unjudged@3", "P(rel=2)@5",
            "DCG@5", "NumRet")
#: how far a value shown with 4 decimals may be from the exact one
SHOWN = 5e-5 + 1e-5
TAGS = {  # every element the page itself makes (tooltips' <b> only appear on hover)
    "html", "head", "meta", "title", "style", "body", "header", "nav", "div", "a", "span",
    "main", "section", "h1", "h2", "h3", "p", "footer", "script", "button", "canvas", "code",
    "details", "input", "label", "option", "select", "summary", "sup", "table", "tbody",
    "td", "th", "thead", "tr", "svg", "circle", "g", "line", "path", "rect", "text", "bdi",
    "noscript"}  # the notice for a browser that runs no script (its content is text there)
#: the page's own words that follow a name or an id in the same line of text
FOLLOWING = [" (baseline)", " better on ", " rows shown", " queries. Written", " in this report",
             " vs ", ", equal on "]


def odd_ids(rng: np.random.Generator, count: int) -> list[str]:
    """``count`` distinct ids of one to four fragments or odd characters; one in six is 300
    characters long, and every third one differs from the one before only in case."""
    ids: list[str] = []
    while len(ids) < count:
        pieces = [FRAGMENTS[rng.integers(len(FRAGMENTS))] if rng.random() < 0.7 else
                  "".join(CHARACTERS[i]
                          for i in rng.integers(len(CHARACTERS), size=rng.integers(1, 4)))
                  for _ in range(rng.integers(1, 5))]
        text = "".join(pieces)
        if rng.random() < 1 / 6:
            text = (text * 300)[:300]
        if len(ids) % 3 == 2 and ids[-1].swapcase() not in ids:
            text = ids[-1].swapcase()
        if text not in ids:
            ids.append(text)
    return ids


def make_case(seed: int) -> dict:
    """A collection: judgments (grades -1 to 3, some queries without a relevant document),
    runs by name (with tied scores, missing queries and queries nobody judged), measures,
    the no-relevant policy, the test, a title (12 fragments, or the default one naming the
    runs), the drill-down's depth and doc budget."""
    rng = np.random.default_rng(seed)
    queries = odd_ids(rng, int(rng.choice([1, 2, 6, 40])))
    systems = odd_ids(rng, int(rng.integers(1, 5)))
    docs = odd_ids(rng, 7)
    qrels, runs = {}, {name: {} for name in systems}
    for q in queries:
        if rng.random() < 0.9 or q == queries[0]:  # the others only in runs: not evaluated
            judged = rng.choice(len(docs), size=rng.integers(1, len(docs)), replace=False)
            top = rng.choice([0, 1, 3])  # 0: no relevant document (NaN under 'nan')
            qrels[q] = {docs[d]: int(rng.integers(-1 if rng.random() < 0.2 else 0, top + 1))
                        for d in judged}
        for name in systems:
            if rng.random() < 0.85 or q == queries[0]:
                shown = rng.choice(len(docs), size=rng.integers(1, 8), replace=False)
                runs[name][q] = {docs[d]: float(rng.integers(0, 7)) / 2 for d in shown}  # ties
    measures = [str(m) for m in rng.choice(MEASURES, size=rng.integers(1, 5), replace=False)]
    if len(systems) > 1 and rng.random() < 0.4:
        # the second run copies the first but on a query of 300 relevant documents, where it
        # swaps ranks 999 and 1000: their AP differs by 1e-6, below the 16-bit codes' step
        deep = "\u2026".join(queries)[:200] + "\u2026"
        ranked = [f"r{i}" for i in range(299)] + [f"n{i}" for i in range(700)] + ["r299"]
        qrels[deep] = {f"r{i}": 1 for i in range(300)}
        runs[systems[1]] = {q: dict(ranking) for q, ranking in runs[systems[0]].items()}
        runs[systems[0]][deep] = {d: 1000.0 - i for i, d in enumerate(ranked)}
        runs[systems[1]][deep] = {d: 1000.0 - i for i, d in
                                  enumerate(ranked[:998] + ["r299", "n699"])}
        measures = list(dict.fromkeys(["AP", *measures]))
    return {"qrels": qrels, "runs": runs, "measures": measures,
            "no_relevant": str(rng.choice(["zero", "nan", "skip"])),
            "test": str(rng.choice(["t", "sign"])),
            "title": "".join(FRAGMENTS[i] for i in rng.integers(len(FRAGMENTS), size=12))
            if rng.random() < 0.5 else None,
            "depth": int(rng.choice([20, 3])),
            "doc_budget": int(rng.choice([200_000, 200_000, 1, 100]))}


class Tab:
    """One browser page for every case, with the problems it logged since the last visit."""

    def __init__(self, page) -> None:
        self.page = page
        self.url = ""
        self.problems: list[str] = []
        page.on("console", lambda m: self.problems.append(f"{m.type}: {m.text}")
                if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        page.on("dialog", lambda d: (self.problems.append(f"dialog: {d.message}"), d.dismiss()))
        page.on("request", lambda r: self.problems.append(f"request: {r.url}")
                if r.url != self.url else None)

    def visit(self, path) -> None:
        self.problems.clear()
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)
        self.page.wait_for_function("document.body.dataset.ready", timeout=60_000)
        assert self.page.evaluate("document.body.dataset.ready") == "true"


@pytest.fixture(scope="module")
def tab(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield Tab(context.new_page())
    context.close()


def _texts(page, selector: str) -> list[str]:
    return page.eval_on_selector_all(selector, "e => e.map(x => x.textContent)")


# Everything the per-query table shows for one measure and pair of systems, in one call: its
# counts, every row (all pages) with the largest wins first, the ids in each order a click on
# a column header gives (twice per column: both directions), and the ids a filter keeps.
_PAIR = """([measure, a, b, needle]) => {
    const pick = (id, value) => {
        const select = document.getElementById(id);
        select.value = value;
        select.dispatchEvent(new Event('change'));
    };
    const rows = () => {
        const out = [];
        for (;;) {
            for (const tr of document.querySelectorAll('#perquery tbody tr')) {
                out.push(Array.from(tr.children, td => td.textContent));
            }
            const next = document.getElementById('page-next');
            if (next.disabled) return out;
            next.click();
        }
    };
    const filter = text => {
        const input = document.getElementById('table-filter');
        input.value = text;
        input.dispatchEvent(new Event('input'));
    };
    pick('pair-measure', measure);
    pick('pair-a', String(a));
    pick('pair-b', String(b));
    const shown = {status: document.querySelector('#table-body .controls span').textContent,
                   caption: document.getElementById('scatter-caption').textContent};
    document.getElementById('show-wins').click();
    shown.wins = rows();
    shown.sorts = [];
    for (const key of ['id', 'a', 'b', 'diff']) {
        for (let i = 0; i < 2; i++) {
            document.querySelector(`#perquery th[data-key=${key}] button`).click();
            const order = document.querySelector(`#perquery th[data-key=${key}]`)
                .getAttribute('aria-sort');
            shown.sorts.push([key, order, rows().map(r => r[0])]);
        }
    }
    filter(needle);
    shown.filtered = rows().map(r => r[0]);
    filter('');
    return shown;
}"""

_DRILL = """ids => ids.map(id => {
    const input = document.getElementById('drill-input');
    input.value = id;
    input.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'}));
    const code = document.querySelector('#drill-body h3 code');
    return {
        shown: code ? code.textContent : null,
        message: document.getElementById('drill-message').textContent,
        kept: !document.querySelector('#drill-body').textContent.includes('were not stored'),
        cells: Array.from(document.querySelectorAll('#drill-body .scroll table tr'),
                          tr => Array.from(tr.children, c => c.textContent)),
        docs: Array.from(document.querySelectorAll('#drill-body .lists > div'),
                         div => Array.from(div.querySelectorAll('td.doc'), td => td.textContent)),
    };
})"""

_MADE_ELEMENTS = """() => {
    const walker = document.createTreeWalker(document, NodeFilter.SHOW_COMMENT);
    let comments = 0;
    while (walker.nextNode()) comments += 1;
    const handlers = [];
    for (const e of document.querySelectorAll('*')) {
        for (const name of e.getAttributeNames()) {
            if (name.startsWith('on')) handlers.push(`${e.localName} ${name}`);
        }
    }
    const stray = Array.from(document.body.childNodes).filter(
        n => n.nodeType === Node.TEXT_NODE && n.textContent.trim()).map(n => n.textContent);
    return {tags: Array.from(document.querySelectorAll('*'), e => e.localName),
            head: Array.from(document.head.children, e => e.localName), comments, handlers, stray};
}"""


def _collapsed(text: str) -> str:
    return " ".join(re.split(r"[\x00-\x20\x7f]+", text)).strip()


def _number(text: str) -> float:
    return float("nan") if text == "\u2013" else float(text)


class Expected:
    """What rankwise itself computes for a case, to hold the page against."""

    def __init__(self, case: dict, measures: list[str]) -> None:
        overrides = {"no_relevant": case["no_relevant"]}
        self.case = case
        self.measures = measures
        self.result = rankwise.evaluate(case["qrels"], case["runs"], case["measures"],
                                        per_query=True, **overrides)
        self.names = list(case["runs"])
        self.labels = [f"{letter(i)} {name}" for i, name in enumerate(self.names)]
        self.comparison = None
        if len(self.names) > 1:
            self.comparison = rankwise.compare(case["qrels"], case["runs"], case["measures"],
                                               baseline=self.names[0], test=case["test"],
                                               permutations=200, **overrides)
        self.queries = sorted({str(q) for s in self.result.systems.values()
                               for q in s.query_ids})

    def values(self, measure: str, system: str) -> dict[str, float]:
        s = self.result.systems[system]
        return {str(q): float(v) for q, v in zip(s.query_ids, s.values[measure])}

    def pairs(self, measure: str, a: str, b: str) -> dict[str, tuple[float, float]]:
        """Queries both systems evaluated with a defined value: (value of a, value of b)."""
        va, vb = self.values(measure, a), self.values(measure, b)
        return {q: (va[q], vb[q]) for q in va if q in vb
                and not (np.isnan(va[q]) or np.isnan(vb[q]))}

    def sign(self, measure: str) -> int:
        return 1 if parse_measure(measure).spec.higher_is_better else -1

    def top_docs(self, system: str, depth: int) -> dict[str, list[str]]:
        """The first ``depth`` doc ids of each query, as the engine ranks the run."""
        lists = rank(index_judgments(to_qrels(self.case["qrels"])),
                     to_run(self.case["runs"][system], name=system), self.result.conventions)
        docs = lists.docs.take(lists.run_row).to_pylist()
        return {str(q): docs[lists.offsets[i]:min(lists.offsets[i] + depth,
                                                   lists.offsets[i + 1])]
                for i, q in enumerate(lists.query_ids)}


def _check_nothing_injected(page) -> None:
    made = page.evaluate(_MADE_ELEMENTS)
    assert set(made["tags"]) <= TAGS, set(made["tags"]) - TAGS
    assert Counter(made["tags"])["script"] == 2
    assert made["head"] == ["meta", "meta", "meta", "meta", "title", "style"]
    assert made["comments"] == 0 and made["handlers"] == [] and made["stray"] == []


def _check_names(page, expected: Expected) -> None:
    """Run names, measures, the title and the number of queries, wherever the page shows
    them as text."""
    labels = expected.labels
    assert _texts(page, "#toggles label") == labels
    baseline = [" (baseline)" if i == 0 and len(labels) > 1 else "" for i in range(len(labels))]
    assert _texts(page, "table.summary tr td:first-child") == [
        label + end for label, end in zip(labels, baseline)]
    assert _texts(page, "#pair-a option") == labels == _texts(page, "#pair-b option")
    assert _texts(page, "#diagnostics-body .card > h3")[:len(labels)] == labels
    runs = ", ".join(f"{letter(i)} = {name}" for i, name in enumerate(expected.names))
    assert f"Runs: {runs}. {len(expected.queries)} queries." in page.text_content("#head p")
    assert _texts(page, "table.summary tr:first-child th")[1:] == expected.measures
    assert _texts(page, "#pair-measure option") == expected.measures
    title = page.text_content("h1")
    if expected.case["title"] is not None:
        assert title == expected.case["title"]
    # the browser's tab title: whitespace collapsed, other control characters as spaces
    assert _collapsed(page.evaluate("document.title")) == _collapsed(title)


def _check_tests_table(page, expected: Expected) -> None:
    if expected.comparison is None:
        assert page.locator("#tests").count() == 0
        return
    rows = page.eval_on_selector_all(
        "#tests tr", "rows => rows.slice(1).map(r => Array.from(r.children, c => c.textContent))")
    tests = expected.comparison.tests
    assert len(rows) == len(tests)
    for row, t in zip(rows, tests):
        outcome = t["test"]  # compare counts a lower value as a win where lower is better
        wins, ties, losses = outcome.wins, outcome.ties, outcome.losses
        assert row[:3] == [t["measure"], t["system"], t["other"]]
        assert row[8] == f"{wins}/{ties}/{losses}", (t["measure"], t["system"], t["other"])


def _check_summary_counts(page, expected: Expected) -> None:
    titles = page.eval_on_selector_all(
        "table.summary tr", "rows => rows.slice(1).map(r => Array.from(r.children).slice(1)"
        ".map(c => c.getAttribute('title')))")
    for i, name in enumerate(expected.names):
        for j, measure in enumerate(expected.measures):
            own = sum(not np.isnan(v) for v in expected.values(measure, name).values())
            compared = (expected.comparison.summary[measure][name]["n"]
                        if expected.comparison else own)
            assert titles[i][j].startswith(
                f"mean of the {compared} queries compared; over its own {own} queries"), \
                (name, measure, titles[i][j])


def _check_pair(page, expected: Expected, header, arrays, measure: str, a: int, b: int) -> None:
    """The scatter's caption, the table's counts, every row and value, every order of the
    table (by the values the page holds, a difference the codes cannot hold by its exact
    sign) and its filter."""
    names = expected.names
    pairs = expected.pairs(measure, names[a], names[b])
    sign = expected.sign(measure)
    gains = [sign * (va - vb) for va, vb in pairs.values()]
    wins, losses = sum(g > 0 for g in gains), sum(g < 0 for g in gains)
    needle = sorted(pairs)[len(pairs) // 2] if pairs else "?"
    shown = page.evaluate(_PAIR, [measure, a, b, needle])
    where = (measure, names[a], names[b])
    assert shown["status"].endswith(f"{wins} wins, {losses} losses, {len(pairs)} rows shown"), \
        (where, shown["status"])
    assert (f"{len(pairs)} queries evaluated by both; {names[a]} better on {wins}, "
            f"{names[b]} better on {losses}, equal on {len(gains) - wins - losses}"
            ) in shown["caption"], (where, shown["caption"])
    # the values the page holds, as its script reads them, to order the rows by
    held = stored_values(header, arrays, measure)
    position = {q: i for i, q in enumerate(header["queries"])}
    by_key = {"a": lambda q: held[a, position[q]], "b": lambda q: held[b, position[q]],
              "diff": lambda q: held[a, position[q]] - held[b, position[q]]}
    side = {q: np.sign(va - vb) for q, (va, vb) in pairs.items()}  # exact, finer than codes
    assert [r[0] for r in shown["wins"]] == sorted(
        pairs, key=lambda q: (-sign * by_key["diff"](q), -sign * side[q], position[q])), where
    for query, value_a, value_b, diff in shown["wins"]:
        exact_a, exact_b = pairs[query]
        assert _number(value_a) == pytest.approx(exact_a, abs=SHOWN), (where, query)
        assert _number(value_b) == pytest.approx(exact_b, abs=SHOWN), (where, query)
        assert _number(diff) == pytest.approx(exact_a - exact_b, abs=SHOWN + 1e-5), where
    for key, order, ids in shown["sorts"]:
        direction = 1 if order == "ascending" else -1
        if key == "id":
            want = sorted(pairs, reverse=direction < 0)
        else:
            finer = side if key == "diff" else dict.fromkeys(pairs, 0)
            want = sorted(pairs, key=lambda q: (direction * by_key[key](q),
                                                direction * finer[q], position[q]))
        assert ids == want, (where, key, order)
    # ids start ascending, values descending (the largest first), and a second click turns
    assert [order for _, order, _ in shown["sorts"]] == (
        ["ascending", "descending"] + ["descending", "ascending"] * 3)
    assert sorted(shown["filtered"]) == sorted(q for q in pairs if needle.lower() in q.lower())


def _check_drill(page, expected: Expected, depth: int, stored: set[str]) -> None:
    """Every query typed into the drill-down: its id, every measure of every system (NaN as a
    dash) and, where the report kept them, the top ``depth`` doc ids as the engine ranks them."""
    shown = page.evaluate(_DRILL, expected.queries)
    ranked = [expected.top_docs(name, depth) for name in expected.names]
    for query, drill in zip(expected.queries, shown):
        assert drill["shown"] == query and drill["message"] == ""
        assert drill["kept"] == (query in stored)
        cells = drill["cells"]
        assert cells[0][1:] == expected.labels
        for row, measure in zip(cells[1:], expected.measures):
            assert row[0] == measure
            for text, name in zip(row[1:], expected.names):
                value = expected.values(measure, name).get(query)
                if value is None:
                    assert text == "not in run"
                elif np.isnan(value):
                    assert text == "\u2013", (query, name, measure)
                else:
                    assert _number(text) == pytest.approx(value, abs=SHOWN), (query, name)
        assert drill["docs"] == [docs.get(query, []) if query in stored else []
                                 for docs in ranked]
    missing = "".join(expected.queries) + "?"
    assert page.evaluate(_DRILL, [missing])[0]["message"].startswith("no query ")


@pytest.mark.parametrize("seed", range(CASES))
def test_the_page_shows_exactly_the_data(seed, tab, tmp_path):
    case = make_case(seed)
    data = collect(case["qrels"], case["runs"], case["measures"], test=case["test"],
                   permutations=200, max_k=4, no_relevant=case["no_relevant"],
                   title=case["title"], depth=case["depth"])
    path = write_html(data, tmp_path / "report.html", doc_budget=case["doc_budget"])
    expected = Expected(case, data.measures)
    header, arrays = read_payload(path.read_text(encoding="utf-8"))
    assert header["queries"] == expected.queries
    tab.visit(path)
    page = tab.page
    _check_nothing_injected(page)
    _check_names(page, expected)
    _check_tests_table(page, expected)
    _check_summary_counts(page, expected)
    shown = page.evaluate("[Number(document.querySelector('#pair-a').value),"
                          " Number(document.querySelector('#pair-b').value)]")
    ns = len(expected.names)
    assert shown == ([1, 0] if ns > 1 else [0, 0])
    for measure in expected.measures:
        for a, b in [shown] + ([[ns - 1, 1]] if ns > 2 else []):
            _check_pair(page, expected, header, arrays, measure, a, b)
    stored = {header["queries"][i] for i in arrays[header["drill"]["docs"]["queries"]]}
    fit = max(1, case["doc_budget"] // (ns * data.depth))
    assert len(stored) == min(fit, len(expected.queries))
    _check_drill(page, expected, data.depth, stored)
    assert backwards(page, FOLLOWING) == []  # no name's bidi characters reach past it
    _check_nothing_injected(page)
    assert tab.problems == []


def _svg_texts(path) -> list[str]:
    return ["".join(e.itertext()) for e in ET.parse(path).getroot().iter(
        "{http://www.w3.org/2000/svg}text")]


@pytest.mark.filterwarnings("ignore:Glyph .* missing from font")
@pytest.mark.parametrize("seed", range(FIGURE_CASES))
def test_every_figure_gets_its_own_file_and_shows_the_names(seed, tmp_path):
    pytest.importorskip("matplotlib")
    from rankwise import plot

    rng = np.random.default_rng(seed)
    systems = odd_ids(rng, 4)
    measure = str(rng.choice(MEASURES))
    queries = ["q1", "q2", "q3"]
    qrels = {q: {"a": 1, "b": 0, "c": 2} for q in queries}
    runs = {name: {q: {"a": float(i + j % 2), "b": 1.0, "c": float(j)}
                   for j, q in enumerate(queries)} for i, name in enumerate(systems)}
    data = collect(qrels, runs, [measure], test="t", max_k=3, pr_sample=2)
    paths = plot.save_figures(data, tmp_path, ["svg"], dpi=30)
    sizes = {"summary": 1, "at-k": 3, "pr": 1 + len(systems), "distribution": 1,
             "histogram": 1, "scatter": 1}  # the figures of each kind, in the order written
    assert len(paths) == len(set(paths)) == sum(sizes.values())
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)
    assert len({p.name.casefold() for p in paths}) == len(paths)
    assert all(len(p.name.encode()) <= 255 for p in paths)
    texts = [_svg_texts(p) for p in paths]  # each file parses as XML
    ends = np.cumsum(list(sizes.values()))
    by_kind = {kind: texts[end - size:end] for (kind, size), end in zip(sizes.items(), ends)}
    # names as drawn: only what XML cannot hold (control characters) is replaced, a long
    # name is drawn on several lines (one text each), none of its characters left out, and a
    # line that could reorder the text around it (bidi) is isolated
    clean = [re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f]", "\ufffd", name) for name in systems]
    lines = [plot._name_lines(name) for name in clean]
    assert ["".join(parts) for parts in lines] == [name.replace("\n", "") for name in clean]
    drawn = [plot._shown(name) for name in systems]
    assert drawn == ["\n".join(isolated(part) if plot._reorders(part) else part
                               for part in parts) for parts in lines]
    for shown in by_kind["at-k"] + by_kind["pr"][:1] + by_kind["histogram"]:
        assert _drawn_in_order(shown, drawn)  # the legend
    for name, own, shown in zip(drawn, systems, by_kind["pr"][1:]):
        assert _drawn_in_order(shown, [
            f"{name}: mean and {len(data.systems[own].pr_sample)} queries"])
    assert _drawn_in_order(by_kind["summary"][0],
                           [f"{letter(i)} {name}" for i, name in enumerate(drawn)])


def _drawn_in_order(texts: list[str], wanted: list[str]) -> bool:
    """Whether each of ``wanted`` (texts of one or more lines) is drawn as whole consecutive
    texts of ``texts`` (an SVG text a line), one after the other in this order."""
    joined = "\n" + "\n".join(texts) + "\n"
    at = 0
    for text in wanted:
        at = joined.find("\n" + text + "\n", at)
        if at < 0:
            return False
        at += 1 + len(text)
    return True
