"""The HTML report as a person sees it: opened in headless Chromium, it renders without a
console error and without a single network request, draws every chart, sorts the per-query
table, drills down into a query's ranked lists (checked against the engine), toggles systems,
and shows hostile ids as text. Screenshots are saved next to the report."""

from __future__ import annotations

import numpy as np
import pytest

from rankwise.cli import main
from rankwise.messages import isolated
from rankwise.plain import percent
from rankwise.report.data import collect
from rankwise.report.html import read_payload, stored_values, write_html
from tests.helpers import write
from tests.report.collection import make_collection
from tests.report.pages import backwards


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    qrels, runs = make_collection(queries=45, systems=3, depth=30)
    data = collect(qrels, runs, ["nDCG@10", "AP", "RR", "P@5"], test="t")
    path = write_html(data, tmp_path_factory.mktemp("report") / "report.html")
    return data, path


def _canvas_ink(page, selector: str) -> int:
    """Non-white pixels of a canvas."""
    return page.evaluate("""sel => {
        const c = document.querySelector(sel);
        const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < px.length; i += 4) {
            if (px[i] < 250 || px[i + 1] < 250 || px[i + 2] < 250) n++;
        }
        return n;
    }""", selector)


def _column(page, index: int) -> list[str]:
    return page.eval_on_selector_all(
        "#perquery tbody tr", f"rows => rows.map(r => r.children[{index}].textContent)")


def test_renders_offline_without_errors(written, open_report, tmp_path):
    data, path = written
    visit = open_report(path)
    assert visit.page.evaluate("document.body.dataset.ready") == "true"
    assert visit.console_errors == []
    assert visit.other_requests == []  # only the file itself: no CDN, font, image or fetch
    assert visit.dialogs == []
    page = visit.page
    # summary: one row per system, one cell per measure, the baseline's markers
    assert page.locator("table.summary tr").count() == 1 + len(data.systems)
    assert page.locator("table.summary th").count() == 1 + len(data.measures)
    markers = page.eval_on_selector_all("sup.mark", "e => e.map(x => x.textContent)")
    expected = [data.summary[m][s]["markers"] for s in data.systems for m in data.measures]
    assert markers == [m for m in expected if m]
    # metric@K: three charts with one drawn line per system
    for section in ("#curves-body", "#pr-body", "#dist-body"):
        paths = page.eval_on_selector_all(f"{section} svg.chart path.series",
                                          "e => e.map(p => p.getAttribute('d').length)")
        assert paths and all(length > 20 for length in paths), section
    assert page.locator("#curves-body svg.chart").count() == 3
    assert page.locator("#curves-body svg.chart path.series").count() == 3 * len(data.systems)
    # precision-recall: the overlay and one panel per system with its faint per-query curves
    assert page.locator("#pr-body svg.chart").count() == 1 + len(data.systems)
    assert page.locator("#pr-body path.faint").count() == len(data.systems)
    assert page.locator("#dist-body g.box").count() == len(data.systems)
    assert _canvas_ink(page, "#scatter-canvas") > 500
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 50_000
    print(f"screenshot: {shot}")


def test_per_query_table_sorts(written, open_report):
    data, path = written
    page = open_report(path).page
    system, baseline = page.evaluate(
        "[document.querySelector('#pair-a').selectedOptions[0].textContent,"
        " document.querySelector('#pair-b').selectedOptions[0].textContent]")
    a, b = system.split(" ", 1)[1], baseline.split(" ", 1)[1]
    queries, va, vb = data.paired(data.measures[0], a, b)
    diff = va - vb
    # default: the largest wins first
    shown = [float(x) for x in _column(page, 3)]
    assert shown == sorted(shown, reverse=True)
    assert shown[0] == pytest.approx(diff.max(), abs=1e-4)
    assert len(shown) == min(20, len(queries))
    # the difference header toggles to ascending: the largest losses first
    page.click("#perquery th[data-key=diff] button")
    assert page.get_attribute("#perquery th[data-key=diff]", "aria-sort") == "ascending"
    shown = [float(x) for x in _column(page, 3)]
    assert shown == sorted(shown) and shown[0] == pytest.approx(diff.min(), abs=1e-4)
    # by query id, ascending, then descending
    page.click("#perquery th[data-key=id] button")
    ids = _column(page, 0)
    assert ids == sorted(str(q) for q in queries)[:len(ids)]
    page.click("#perquery th[data-key=id] button")
    assert _column(page, 0) == sorted((str(q) for q in queries), reverse=True)[:len(ids)]
    # by the system's value, descending first
    page.click("#perquery th[data-key=a] button")
    values = [float(x) for x in _column(page, 1)]
    assert values == sorted(values, reverse=True)
    assert values[0] == pytest.approx(va.max(), abs=1e-4)
    # paging and filtering
    page.click("#page-next")
    assert page.locator("#perquery tbody tr").count() == min(20, len(queries) - 20)
    page.fill("#table-filter", str(queries[3]))
    assert _column(page, 0) == [str(queries[3])]
    # the "largest losses" button
    page.fill("#table-filter", "")
    page.click("#show-losses")
    assert float(_column(page, 3)[0]) == pytest.approx(diff.min(), abs=1e-4)


def test_drill_down_shows_the_engines_ranked_lists(written, open_report):
    from rankwise.core.judgments import index_judgments
    from rankwise.core.ranked import rank
    from rankwise.io import to_qrels, to_run

    qrels, runs = make_collection(queries=45, systems=3, depth=30)
    data, path = written
    page = open_report(path).page
    page.click("#perquery tbody tr:nth-child(2)")
    query = page.text_content("#drill-body h3 code")
    index = index_judgments(to_qrels(qrels))
    tables = page.locator("#drill-body .lists > div")
    assert tables.count() == len(data.systems)
    for i, name in enumerate(runs):
        lists = rank(index, to_run(runs[name], name=name))
        q = list(lists.query_ids).index(query)
        rows = slice(lists.offsets[q], min(lists.offsets[q] + data.depth, lists.offsets[q + 1]))
        docs = lists.docs.take(lists.run_row[rows]).to_pylist()
        grades = ["\u2013" if np.isnan(g) else f"{g:g}" for g in lists.grade[rows]]
        cells = tables.nth(i).locator("tr").evaluate_all(
            "rows => rows.slice(1).map(r => [r.children[1].textContent,"
            " r.children[2].textContent])")
        assert cells == [list(pair) for pair in zip(docs, grades)], name
    # typing a query id shows it
    page.fill("#drill-input", str(data.result.systems["sys0"].query_ids[5]))
    page.press("#drill-input", "Enter")
    assert page.text_content("#drill-body h3 code") == str(data.result.systems["sys0"].query_ids[5])
    page.fill("#drill-input", "no such query")
    page.press("#drill-input", "Enter")
    assert "no query" in page.text_content("#drill-message")


def test_system_toggles_hide_and_show_series(written, open_report):
    data, path = written
    page = open_report(path).page
    before = page.locator("#curves-body path.series").count()
    page.uncheck("input[data-system='1']")
    assert page.locator("#curves-body path.series").count() == before - 3
    assert page.locator("#pr-body svg.chart").count() == len(data.systems)
    page.check("input[data-system='1']")
    assert page.locator("#curves-body path.series").count() == before


def test_hostile_ids_render_as_text(tmp_path, open_report):
    evil_query = "<script>window.__pwned = 1</script>\"'q"
    evil_doc = "</script><img src=x onerror=\"window.__pwned=2\">"
    qrels = {evil_query: {evil_doc: 2, "plain": 0}, "q'2\"": {"a": 1, evil_doc: 0}}
    runs = {"<b onmouseover=alert(1)>sys</b>": {evil_query: {evil_doc: 2.0, "plain": 1.0},
                                               "q'2\"": {"a": 1.0, evil_doc: 0.5}},
            "other\"><svg onload=alert(1)>": {evil_query: {"plain": 2.0, evil_doc: 1.0},
                                               "q'2\"": {evil_doc: 1.0, "a": 0.5}}}
    data = collect(qrels, runs, ["nDCG@10", "AP"], test="t",
                   title="</title><script>window.__pwned=3</script>")
    path = write_html(data, tmp_path / "evil.html")
    text = path.read_text()
    assert "<script>window.__pwned" not in text and "onerror=" not in text
    visit = open_report(path)
    page = visit.page
    assert visit.console_errors == [] and visit.other_requests == [] and visit.dialogs == []
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("document.title") == "</title><script>window.__pwned=3</script>"
    assert page.locator("script").count() == 2  # the data block and the page's own script
    assert page.locator("img").count() == 0 and page.locator("b").count() == 0
    page.fill("#drill-input", evil_query)
    page.press("#drill-input", "Enter")
    assert page.text_content("#drill-body h3 code") == evil_query
    docs = page.eval_on_selector_all("#drill-body td.doc", "e => e.map(x => x.textContent)")
    assert evil_doc in docs
    assert evil_query in _column(page, 0)
    labels = page.eval_on_selector_all("#toggles label", "e => e.map(x => x.textContent)")
    assert labels == [f"a {list(runs)[0]}", f"b {list(runs)[1]}"]


def test_one_system_and_uncompressed_data(tmp_path, open_report):
    qrels, runs = make_collection(queries=12, systems=1, depth=10)
    data = collect(qrels, runs, ["AP", "nDCG@5"])
    assert data.comparison is None
    for compress in (True, False):
        path = write_html(data, tmp_path / f"one-{compress}.html", compress=compress)
        visit = open_report(path)
        assert visit.console_errors == [] and visit.other_requests == []
        assert visit.page.locator("table.summary tr").count() == 2
        assert "no test" in visit.page.text_content("#summary-body")


def test_hover_shows_values(written, open_report):
    data, path = written
    page = open_report(path).page
    chart = page.locator("#curves-body .chartbox").first
    chart.locator("rect").hover(position={"x": 1, "y": 40})
    tip = chart.locator(".tooltip")
    assert tip.is_visible()
    text = tip.text_content()
    assert text.startswith("K = 1") and all(name in text for name in data.systems)
    first = data.systems["sys0"].curves["nDCG"][0]
    assert f"sys0: {first:.4f}" in text
    canvas = page.locator("#scatter-canvas")
    box = canvas.bounding_box()
    # move across the canvas until the tooltip names a query
    for step in range(40, 400, 6):
        canvas.hover(position={"x": step, "y": 440 - step})
        tip = page.locator("#scatter-body .tooltip")
        if tip.is_visible():
            assert tip.text_content().startswith("q")
            break
    else:
        raise AssertionError(f"no point found on the scatter ({box})")


def _classes(page, selector: str) -> list[str]:
    return page.eval_on_selector_all(selector, "e => e.map(x => x.className)")


def test_lower_is_better_measures_count_a_lower_value_as_a_win(tmp_path, open_report):
    qrels, runs = make_collection(queries=45, systems=2, depth=30)
    data = collect(qrels, runs, ["MAE", "nDCG@10"], test="t", max_k=5)
    path = write_html(data, tmp_path / "mae.html")
    header, _ = read_payload(path.read_text())
    assert [m["higherIsBetter"] for m in header["measures"]] == [False, True]
    page = open_report(path).page
    _, va, vb = data.paired("MAE", "sys1", "sys0")
    diff = va - vb
    assert (diff < 0).any() and (diff > 0).any()
    # MAE first: "largest wins of sys1" is its lowest error against sys0, the most negative
    shown = [float(x) for x in _column(page, 3)]
    assert shown == sorted(shown) and shown[0] == pytest.approx(diff.min(), abs=1e-4)
    assert page.get_attribute("#perquery th[data-key=diff]", "aria-sort") == "ascending"
    assert _classes(page, "#perquery tbody td:nth-child(4)") == [
        "win" if x < 0 else "loss" if x > 0 else "" for x in shown]
    status = page.text_content("#table-body .controls span")
    assert f"{(diff < 0).sum()} wins, {(diff > 0).sum()} losses" in status
    caption = page.text_content("#scatter-caption")
    assert f"sys1 better on {(diff < 0).sum()}, sys0 better on {(diff > 0).sum()}" in caption
    assert "(lower MAE is better)" in caption
    page.click("#show-losses")
    assert float(_column(page, 3)[0]) == pytest.approx(diff.max(), abs=1e-4)
    assert page.get_attribute("#perquery th[data-key=diff]", "aria-sort") == "descending"
    page.click("#show-wins")
    assert float(_column(page, 3)[0]) == pytest.approx(diff.min(), abs=1e-4)
    # the difference header toggles from the order shown
    page.click("#perquery th[data-key=diff] button")
    assert page.get_attribute("#perquery th[data-key=diff]", "aria-sort") == "descending"
    # nDCG@10 keeps higher as better
    page.select_option("#pair-measure", "nDCG@10")
    _, na, nb = data.paired("nDCG@10", "sys1", "sys0")
    page.click("#show-wins")
    assert float(_column(page, 3)[0]) == pytest.approx((na - nb).max(), abs=1e-4)
    # the tests table colours each difference by its measure's direction
    rows = page.eval_on_selector_all(
        "#tests tr", "rows => rows.slice(1).map(r => [r.children[0].textContent,"
        " r.children[3].textContent, r.children[3].className])")
    assert [r[0] for r in rows] == ["MAE", "nDCG@10"]
    for measure, text, cls in rows:
        sign = -1 if measure == "MAE" else 1
        assert cls == ("win" if sign * float(text) > 0 else "loss"), measure


def test_one_system_shows_the_confidence_level_used(tmp_path, open_report):
    qrels = write(tmp_path, "qrels.txt", "q1 0 a 1\nq1 0 b 0\nq2 0 c 1\nq2 0 d 0\nq3 0 e 1\n")
    run = write(tmp_path, "a.run", "q1 Q0 a 1 2 A\nq1 Q0 b 2 1 A\nq2 Q0 d 1 2 A\n"
                "q2 Q0 c 2 1 A\nq3 Q0 x 1 1 A\nq3 Q0 e 2 0 A\n")
    out = tmp_path / "one.html"
    assert main(["report", qrels, run, "-m", "AP", "--confidence", "0.9", "-o", str(out)]) == 0
    header, _ = read_payload(out.read_text())
    assert header["confidence"] == 0.9
    text = open_report(out).page.text_content("#summary-body")
    assert "90% t confidence intervals" in text and "95%" not in text
    second = write(tmp_path, "b.run", "q1 Q0 b 1 2 B\nq1 Q0 a 2 1 B\nq2 Q0 c 1 2 B\n")
    assert main(["report", qrels, run, second, "-m", "AP", "--confidence", "0.975", "--test",
                 "t", "-o", str(out)]) == 0
    text = open_report(out).page.text_content("#summary-body")
    assert "97.5% confidence interval of the mean" in text


def test_tests_table_counts_a_lower_error_as_a_win(tmp_path, open_report):
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1, "d": 0}, "q3": {"e": 1}}
    runs = {"close": {"q1": {"a": 2.0, "b": 0.5}, "q2": {"c": 1.0, "d": 0.0}, "q3": {"e": 1.0}},
            "far": {"q1": {"a": 0.0, "b": 3.0}, "q2": {"c": 4.0, "d": 2.0}, "q3": {"e": 1.0}}}
    data = collect(qrels, runs, ["MAE", "P@1"], baseline="far", test="t")
    (mae, _) = [r["test"] for r in data.comparison.tests]
    assert (mae.wins, mae.ties, mae.losses) == (2, 1, 0)  # compare: a lower error wins
    page = open_report(write_html(data, tmp_path / "mae.html")).page
    rows = page.eval_on_selector_all(
        "#tests tr", "rows => rows.slice(1).map(r => r.children[8].textContent)")
    assert rows[0] == "2/1/0"  # the lower error of 'close' wins on two queries, ties on one


def test_sorting_by_query_id_follows_code_points(tmp_path, open_report):
    ids = ["\U0001d54f", "\uff21", "a", "\U0001f600b", "\ufffd"]  # astral and high BMP chars
    qrels = {q: {"d": 1} for q in ids}
    runs = {"x": {q: {"d": 1.0} for q in ids}, "y": {q: {"d": 1.0, "e": 2.0} for q in ids}}
    data = collect(qrels, runs, ["AP"], test="t", max_k=2)
    page = open_report(write_html(data, tmp_path / "ids.html")).page
    page.click("#perquery th[data-key=id] button")
    assert _column(page, 0) == sorted(ids) == list(data.result.systems["x"].query_ids)
    page.click("#perquery th[data-key=id] button")
    assert _column(page, 0) == sorted(ids, reverse=True)


def test_values_of_a_wide_range_are_shown_exactly(tmp_path, open_report):
    qrels = {f"q{i}": {"d0": 1, "d1": 0} for i in range(3)}
    runs = {"x": {f"q{i}": {f"d{j}": 1.0 for j in range(i + 1)} for i in range(3)},
            "y": {f"q{i}": {f"d{j}": 1.0 for j in range(2 * i + 7)} for i in range(3)}}
    data = collect(qrels, runs, ["NumRet", "AP"], test="t", max_k=2)  # NumRet 1 to 11
    header, arrays = read_payload(write_html(data, tmp_path / "counts.html").read_text())
    assert stored_values(header, arrays, "NumRet").tolist() == [[1, 2, 3], [7, 9, 11]]
    page = open_report(tmp_path / "counts.html").page
    rows = page.eval_on_selector_all(
        "#perquery tbody tr", "rows => rows.map(r => Array.from(r.children, c => c.textContent))")
    assert sorted(rows) == [["q0", "7.0000", "1.0000", "+6.0000"],
                            ["q1", "9.0000", "2.0000", "+7.0000"],
                            ["q2", "11.0000", "3.0000", "+8.0000"]]
    page.fill("#drill-input", "q1")
    page.press("#drill-input", "Enter")
    cells = page.eval_on_selector_all("#drill-body .scroll table tr:nth-child(2) td",
                                      "e => e.map(x => x.textContent)")
    assert cells == ["NumRet", "2.0000", "9.0000"]


def test_a_difference_finer_than_the_stored_codes_still_counts(tmp_path, open_report):
    # y swaps x's relevant document at rank 1000 with the non-relevant one at 999: AP gains
    # 1e-6 out of 300 relevant documents, below the 16-bit codes' step of 1.5e-5
    qrels = {"q1": {f"r{i}": 1 for i in range(300)}, "q2": {"a": 1}}
    ranked = [f"r{i}" for i in range(299)] + [f"n{i}" for i in range(700)] + ["r299"]
    swapped = ranked[:998] + ["r299", "n699"]
    runs = {"x": {"q1": {d: 1000.0 - i for i, d in enumerate(ranked)}, "q2": {"a": 1.0}},
            "y": {"q1": {d: 1000.0 - i for i, d in enumerate(swapped)}, "q2": {"a": 1.0}}}
    data = collect(qrels, runs, ["AP"], test="t", max_k=2)
    test = data.comparison.tests[0]["test"]
    assert (test.wins, test.ties, test.losses) == (1, 1, 0)
    page = open_report(write_html(data, tmp_path / "near.html")).page
    assert "y better on 1, x better on 0, equal on 1" in page.text_content("#scatter-caption")
    assert page.text_content("#table-body .controls span").endswith(
        "1 wins, 0 losses, 2 rows shown")
    assert _classes(page, "#perquery tbody td:nth-child(4)") == ["win", ""]
    assert page.eval_on_selector_all("#tests tr", "r => r[1].children[8].textContent") == "1/1/0"


def test_a_right_to_left_override_in_a_name_stays_inside_it(tmp_path, open_report):
    names = ["x\u202e", "y"]  # U+202E lays out what follows right to left
    qrels = {f"q{i}": {"a": 1, "b": 0} for i in range(6)}
    runs = {n: {f"q{j}": {"a": float((i + j) % 2), "b": 0.5} for j in range(6)}
            for i, n in enumerate(names)}
    data = collect(qrels, runs, ["AP"], test="t", max_k=2)
    page = open_report(write_html(data, tmp_path / "bidi.html")).page
    page.fill("#drill-input", "q\u202e")
    page.press("#drill-input", "Enter")
    words = [" (baseline)", " better on ", " on AP: ", " queries. Written", " in this report"]
    assert backwards(page, words) == []
    assert page.text_content("#scatter-caption").startswith(
        "AP per query: 6 queries evaluated by both; y better on 3, x\u202e better on 3")
    assert page.text_content("h1") == (
        "rankwise report: \u2068x\u202e\u2069, \u2068y\u2069 on qrels dict")



def _bidi_report(tmp_path, names: list[str], query: str):
    """Six shared queries and ``query``, judged but missing from the second run (so the
    comparison warns, naming both), the judgments in a file named after ``query``."""
    queries = [f"q{i}" for i in range(6)] + [query]
    qrels = write(tmp_path, f"qrels{query}.txt",
                  "".join(f"{q} 0 a 1\n{q} 0 b 0\n" for q in queries))
    runs = {n: {q: {"a": float((i + j) % 2), "b": 0.5} for j, q in enumerate(queries)
                if not (i == 1 and q == query)} for i, n in enumerate(names)}
    data = collect(qrels, runs, ["AP"], test="t", max_k=2)
    return data, write_html(data, tmp_path / "bidi.html")


#: the page's own words after an id: in the header, the summary's legend and test, a warning of
#: the comparison, the drill-down's message, a precision-recall chart's title
AFTER_IDS = [". Runs: ", " = ", ". Brackets: ", ", correction holm", " (missing for ",
             "); missing_queries=", " in this report", ": mean and ", " (baseline)",
             " better on ", " queries. Written"]

_COPIED = """selector => {
    const range = document.createRange();
    range.selectNodeContents(document.querySelector(selector));
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    return getSelection().toString();
}"""


def test_ids_in_the_comparisons_messages_stay_inside_them(tmp_path, open_report):
    data, path = _bidi_report(tmp_path, ["x\u202e", "y\u202e"], "q\u202e")
    page = open_report(path).page
    page.fill("#drill-input", "r\u202e")
    page.press("#drill-input", "Enter")
    assert backwards(page, AFTER_IDS) == []
    left_out = data.comparison.warnings[0]
    assert left_out.startswith("1 queries are not evaluated for every system")
    shown = page.locator("#diagnostics-body .check.warning").first
    assert shown.text_content() == "warning" + left_out
    assert shown.locator("bdi").all_text_contents() == ["q\u202e", "y\u202e"]
    legend = "#summary-body p.small"
    assert page.locator(legend).locator("bdi").all_text_contents() == [
        "x\u202e", "y\u202e", "x\u202e"]  # a = x, b = y; against baseline x
    # copied, the ids are themselves: no character added around them
    assert page.evaluate(_COPIED, legend) == (
        f"Markers: {data.comparison.legend()}. Brackets: 95% confidence interval of the mean. "
        f"{data.comparison.describe()}.")
    assert page.locator("#perquery th bdi").all_text_contents() == ["y\u202e", "x\u202e"]


def test_an_ids_own_isolates_and_paragraph_breaks_stay_inside_it(tmp_path, open_report):
    # a closing U+2069 would end the isolate around the id early, an opening U+2067 without
    # its U+2069 would take that isolate's end for its own, and U+2029 ends the paragraph:
    # each let the override after it, or the right-to-left letter, reach past the id
    data, path = _bidi_report(tmp_path, ["x\u2069\u202e", "y\u2067\u05e9"], "q\u2029\u202e")
    page = open_report(path).page
    page.fill("#drill-input", "r\u2069\u202e")
    page.press("#drill-input", "Enter")
    between_names = "\u2069, \u2068"  # in the default title, where only a string fits
    assert backwards(page, AFTER_IDS + [between_names]) == []
    assert page.text_content("#diagnostics-body .check.warning") == (
        "warning" + data.comparison.warnings[0])


_PR_TITLES = """() => Array.from(document.querySelectorAll('#pr-body svg.chart')).slice(1).map(svg => {
    const text = svg.querySelector('text.title');
    const hint = svg.querySelector('g.title > title');
    return {shown: text.textContent, width: text.getComputedTextLength(),
            room: svg.viewBox.baseVal.width - Number(text.getAttribute('x')),
            label: svg.getAttribute('aria-label'), hint: hint ? hint.textContent : null};
})"""




def test_long_run_names_are_shortened_in_the_precision_recall_titles(tmp_path, open_report):
    long = "runs/2026-11/bm25+rm3.k1=0.9.b=0.4.fb_docs=10.fb_terms=20/final.trec"
    rtl = "\u05de\u05e2\u05e8-\u2067\u202e" + "\u05d0" * 60  # leaves an isolate open
    names = ["bm25", long, rtl, "\U0001f469\u200d\U0001f52c" * 40]
    queries = [f"q{i}" for i in range(4)]
    qrels = {q: {"a": 1, "b": 0, "c": 1} for q in queries}
    runs = {n: {q: {"a": float((i + j) % 3), "b": 1.0, "c": 0.5} for j, q in enumerate(queries)}
            for i, n in enumerate(names)}
    data = collect(qrels, runs, ["AP"], test="t", max_k=3)
    visit = open_report(write_html(data, tmp_path / "long.html"))
    page = visit.page
    assert visit.console_errors == []
    titles = page.evaluate(_PR_TITLES)
    assert len(titles) == len(names)
    for i, (name, title) in enumerate(zip(names, titles)):
        def drawn(shown_name: str) -> str:
            return f"{data.systems[name].label} {isolated(shown_name)}: mean and 4 queries"
        assert title["label"] == drawn(name)  # the whole title for a screen reader
        assert title["width"] <= title["room"]
        if i == 0:  # a short name is drawn whole
            assert title["shown"] == drawn(name) and title["hint"] is None
            continue
        assert title["hint"] == drawn(name)  # and on hover
        # the name's longest start that fits, with an ellipsis, its isolates closed
        kept = [name[:n] for n in range(1, len(name)) if title["shown"] == drawn(name[:n] + "\u2026")]
        assert len(kept) == 1, title["shown"]
        if name == names[3]:  # never between an emoji's parts
            assert len(kept[0]) % 3 == 0
        if name == rtl:
            assert "\u2067" in kept[0]
    assert backwards(page, [": mean and "]) == []


def test_the_confidence_level_shows_every_digit_it_has(tmp_path, open_report):
    # 0.99999 read "100%" (4 significant digits); a level that is not 1 never reads 100%
    qrels, runs = make_collection(queries=8, systems=2, depth=5)
    for systems, where in ((runs, "confidence interval of the mean"),
                           (dict(list(runs.items())[:1]), "t confidence intervals")):
        data = collect(qrels, systems, ["AP"], test="t", confidence=0.99999, max_k=2)
        page = open_report(write_html(data, tmp_path / f"c{len(systems)}.html")).page
        assert f"99.999% {where}" in page.text_content("#summary-body")
    shares = [0.99999, 0.9999999999999999, 0.95, 0.975, 0.57, 1e-7, 5e-324, 0.0, 1.0, 12.5,
              0.123456789, 1e21]
    assert page.evaluate("xs => xs.map(percent)", shares) == [percent(x) for x in shares]


_AXIS_LABELS = """() => {
    const drawn = [], fill = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
        drawn.push({text, width: this.measureText(text).width});
        return fill.call(this, text, ...rest);
    };
    renderScatter();
    CanvasRenderingContext2D.prototype.fillText = fill;
    return drawn.filter(d => /^[ab] /.test(d.text));
}"""


def test_long_names_and_ids_stay_inside_the_page(tmp_path, open_report):
    # a 205-character run name ran past the page (the check boxes, the legends, the system
    # menus, the drill-down's headings), over the summary's numbers, and out of the scatter
    long, query, doc = "runs/" + "x" * 200, "q" + "Q" * 200, "d" * 200
    qrels = {f"q{i}": {"a": 1, "b": 0} for i in range(6)}
    qrels[query] = {"a": 1, doc: 1}
    runs = {n: {q: {"a": float((i + j) % 2), "b": 0.5, doc: 0.25} for j, q in enumerate(qrels)}
            for i, n in enumerate([long, "short"])}
    data = collect(qrels, runs, ["AP"], test="t", max_k=2)
    visit = open_report(write_html(data, tmp_path / "long.html"), width=1280)
    page = visit.page
    page.fill("#drill-input", query)
    page.press("#drill-input", "Enter")
    assert visit.console_errors == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    name, number = page.eval_on_selector_all(
        "table.summary tr:nth-child(2) td", "e => e.slice(0, 2).map(c => c.getBoundingClientRect())")
    name_text = page.locator("table.summary tr:nth-child(2) td bdi").bounding_box()
    assert name_text["x"] + name_text["width"] <= number["x"] + 0.5 and name["right"] <= number["x"] + 0.5
    labels = page.evaluate(_AXIS_LABELS)
    assert [d["text"] for d in labels] == ["b \u2068short\u2069", "a \u2068" + long[:len(
        labels[1]["text"]) - 5] + "\u2026\u2069"]  # the baseline, shortened, on the y axis
    assert all(d["width"] <= 440 - 46 - 10 for d in labels)


_OUTSIDE = """() => Array.from(document.querySelectorAll('svg.chart')).flatMap(svg => {
    const W = svg.viewBox.baseVal.width, H = svg.viewBox.baseVal.height, out = [];
    for (const p of svg.querySelectorAll('path.series')) {
        const xy = p.getAttribute('d').match(/-?[0-9.]+/g).map(Number);
        for (let i = 0; i < xy.length; i += 2) {
            if (xy[i] < 0 || xy[i] > W || xy[i + 1] < 0 || xy[i + 1] > H) out.push(p.getAttribute('d'));
        }
    }
    for (const c of svg.querySelectorAll('g.box circle')) {
        if (c.cx.baseVal.value < 52 || c.cx.baseVal.value > W) out.push(c.outerHTML);
    }
    return out;
})"""


def test_negative_values_are_drawn_and_shown_as_they_are(tmp_path, open_report):
    # a gain map with a negative gain makes nDCG negative: the page showed -2.3691 as 0.0000,
    # drew the box plots left of their axis and the nDCG@K curve below its chart
    from tests.report.test_data import NEGATIVE_GAINS, NEGATIVE_QRELS, NEGATIVE_RUNS

    data = collect(NEGATIVE_QRELS, NEGATIVE_RUNS, ["nDCG@3"], test="t", max_k=3,
                   gain=NEGATIVE_GAINS)
    visit = open_report(write_html(data, tmp_path / "negative.html"))
    page = visit.page
    assert visit.console_errors == []
    assert sorted(_column(page, 2)) == ["-2.3691", "-2.3691", "0.0000"]  # x, the baseline
    assert page.evaluate(_OUTSIDE) == []


def test_values_that_differ_by_rounding_only_do_not_hang_the_page(tmp_path, open_report):
    # MAE 0.3 and 0.1 + 0.2 (one ulp apart) made the distribution's axis a few ulps wide: its
    # ticks were added up in steps below the values' precision, and the page never finished
    qrels = {"q1": {"a": 0}, "q2": {"a": 0}}
    runs = {"x": {q: {"a": 0.1 + 0.2} for q in qrels}, "y": {q: {"a": 0.3} for q in qrels}}
    data = collect(qrels, runs, ["MAE"], test="t", max_k=2)
    visit = open_report(write_html(data, tmp_path / "ulp.html"))
    assert visit.console_errors == []
    assert visit.page.locator("#dist-body g.box").count() == 2
    ticks = visit.page.evaluate("niceTicks(0.3, 0.1 + 0.2, 5)")
    assert 1 <= len(ticks) <= 7


def test_without_scripts_the_page_says_why_it_is_empty(written, browser):
    # with scripts off (a mail client's viewer, a hardened browser) the page was blank but
    # for its headings
    _, path = written
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(path.resolve().as_uri())
    assert "allow scripts for this file" in page.inner_text("#head")
    context.close()
    page = browser.new_page()
    page.goto(path.resolve().as_uri())
    page.wait_for_function("document.body.dataset.ready")
    assert "allow scripts" not in page.inner_text("#head")
    page.close()


_A_POINT = """() => {
    const r = pairs(S.measure)[0], [lo, hi] = range(S.measure), size = 440, pad = 46;
    const at = v => (v - lo) / (hi - lo) * (size - pad - 10);
    const box = document.querySelector('#scatter-canvas').getBoundingClientRect();
    return {same: pairs(S.measure).filter(o => o.a === r.a && o.b === r.b).map(o => o.id),
            x: (pad + at(r.a)) * box.width / size, y: (size - pad - at(r.b)) * box.width / size,
            width: box.width};
}"""


def test_a_narrow_window_scales_the_charts_to_fit(written, open_report):
    # on a phone (400 pixels) the charts, drawn 460 to 520 pixels wide, and the scatter's
    # 440-pixel canvas ran past the page: they now scale down, and the scatter's points are
    # found where they are drawn
    _, path = written
    page = open_report(path, width=400).page
    assert page.evaluate("document.documentElement.scrollWidth") <= 400
    point = page.evaluate(_A_POINT)
    assert point["width"] < 400
    page.locator("#scatter-canvas").hover(position={"x": point["x"], "y": point["y"]})
    tip = page.locator("#scatter-body .tooltip")
    assert tip.is_visible() and tip.locator("b").text_content() in point["same"]
    page.locator("#scatter-canvas").click(position={"x": point["x"], "y": point["y"]})
    assert page.text_content("#drill-body h3 code") in point["same"]
