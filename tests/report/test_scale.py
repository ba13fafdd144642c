"""The report at the size the issue names: 10 systems x 10,000 queries (100 documents each,
about 10 million run rows). It must stay small and open fast: the written page is measured,
then opened in headless Chromium. Marked slow (about a minute on two cores)."""

from __future__ import annotations

import time

import pytest

from rankwise.report.data import collect
from rankwise.report.html import write_html
from tests.report.collection import make_collection

pytestmark = pytest.mark.slow


def test_ten_systems_by_ten_thousand_queries(tmp_path, open_report):
    qrels, runs = make_collection(queries=10_000, systems=10, depth=100, seed=1)
    start = time.perf_counter()
    data = collect(qrels, runs)
    collected = time.perf_counter() - start
    path = write_html(data, tmp_path / "big.html")
    size = path.stat().st_size
    print(f"10 x 10,000: evaluate {data.timings['evaluate']:.1f} s, compare "
          f"{data.timings['compare']:.1f} s, write {data.timings['write']:.2f} s, "
          f"{size / 1e6:.2f} MB")
    assert size < 8e6, size
    assert data.timings["write"] < 10
    assert collected < 600
    visit = open_report(path)
    report = visit.page.evaluate("window.rankwiseReport")
    print(f"rendered in {report['renderMs']:.0f} ms")
    assert report == {"renderMs": report["renderMs"], "queries": 10_000, "systems": 10}
    assert report["renderMs"] < 10_000
    assert visit.console_errors == [] and visit.other_requests == []
    assert visit.page.locator("#perquery tbody tr").count() == 20
    stored = visit.page.evaluate("document.querySelector('#drill-body').textContent")
    assert "Query" in stored
    visit.page.screenshot(path=str(tmp_path / "big.png"))
