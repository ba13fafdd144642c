"""Write a :class:`~rankwise.report.data.ReportData` as one self-contained HTML file.

The page holds its style sheet, its script and its data inline and makes no network request:
a Content-Security-Policy allows only the page's own script and style (by their SHA-256) and
nothing else to load or connect. The data is a binary block, gzip-compressed and base64
encoded inside a ``<script type="application/octet-stream">`` element (never parsed as script,
and base64 cannot close the element): a JSON header followed by typed arrays.

Size: per-query values are stored as 16-bit codes over each measure's range (error at most
(hi − lo) / 131068, i.e. below 8e-6 for measures in [0, 1]) where the range is at most
:data:`CODED_RANGE`, and as 64-bit floats where codes would change the 4 decimals the page
shows (counts, DCG, MAE), with each system's rank on every query where codes make two
different values equal (wins and ties are counted exactly); means, intervals and tests are
computed before storing, exactly; the drill-down keeps the top ``depth`` grades of every query
and the document ids of as many queries as ``doc_budget`` allows (those with the largest
differences to the baseline first); each system's precision-recall sample is a fixed set of
queries.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import html
import json
import math
import re
import struct
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..messages import pieces
from ..plain import plain
from .assets import CSS, JS

MAGIC = b"RWR1"
NAN16 = 65535
NONE32 = 4294967295
#: Document ids kept for the drill-down when no budget is given (queries × systems × depth).
DOC_BUDGET = 200_000
#: Widest range of a measure stored as 16-bit codes: their error, at most 1/131068 of the
#: range, stays within 1e-5, below the 4 decimals the page shows; wider ones are stored exactly.
CODED_RANGE = 65534 * 2e-5
#: Narrowest range of a measure's values relative to their size: below it they differ by
#: rounding only (a few ulps) and are drawn as one value.
RESOLUTION = 1e-12


def write_html(data, output: str | Path, doc_budget: int = DOC_BUDGET,
               compress: bool = True) -> Path:
    """Write the report to ``output`` (its folder is created); return the path."""
    start = time.perf_counter()
    text = render_html(data, doc_budget, compress)
    path = Path(output)
    if path.parent != Path(""):
        path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    data.timings["write"] = time.perf_counter() - start
    return path


def render_html(data, doc_budget: int = DOC_BUDGET, compress: bool = True) -> str:
    """The report page as one string."""
    header, blocks = payload(data, doc_budget)
    packed = pack(header, blocks)
    encoded = base64.b64encode(gzip.compress(packed, 6, mtime=0) if compress else packed)
    lines = [encoded[i:i + 120].decode("ascii") for i in range(0, len(encoded), 120)]
    csp = ("default-src 'none'; script-src " + _hash(JS) + "; style-src " + _hash(CSS)
           + "; img-src 'none'; connect-src 'none'; font-src 'none'; base-uri 'none'; "
           "form-action 'none'")
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        "<meta name=\"generator\" content=\"rankwise\">\n",
        f"<title>{html.escape(_unicode(data.title))}</title>\n<style>{CSS}</style>\n</head>\n"
        "<body>\n",
        "<header id=\"head\"><noscript><p class=\"error\">This report draws its tables and "
        "charts with its own inline script, which this browser does not run: allow scripts "
        "for this file (it loads nothing and sends nothing), or open it in a browser that "
        "runs them.</p></noscript></header>\n",
        "<nav><div class=\"inner\"><a href=\"#summary\">summary</a><a href=\"#curves\">metric@K"
        "</a><a href=\"#pr\">precision-recall</a><a href=\"#dist\">distributions</a>"
        "<a href=\"#pair\">two systems</a><a href=\"#drill\">query drill-down</a>"
        "<a href=\"#diagnostics\">diagnostics</a><span class=\"toggles\" id=\"toggles\">"
        "</span></div></nav>\n<main>\n",
        _section("summary", "Summary", "Mean of every measure per system, its confidence "
                 "interval and significance markers against the baseline."),
        _section("curves", "Metric@K", "Mean nDCG@K, P@K and R@K for K = 1 to "
                 f"{data.max_k} (each point is that measure, under the same conventions)."),
        _section("pr", "Interpolated precision-recall", "trec_eval's interpolated "
                 "precision at recall 0, 0.1, ..., 1: the mean over queries, and (faint) the "
                 "curves of single queries behind it."),
        _section("dist", "Per-query distributions", ""),
        "<section id=\"pair\"><h2>Two systems, query by query</h2>"
        "<div class=\"controls\" id=\"pair-controls\"></div>"
        "<div id=\"scatter-body\"></div><h3>Largest wins and losses</h3>"
        "<div id=\"table-body\"></div></section>\n",
        _section("drill", "Query drill-down", "Click a row of the table or a point of the "
                 "scatter, or type a query id."),
        _section("diagnostics", "Diagnostics", "What was counted, ignored or suspicious, per "
                 "system."),
        "</main>\n<footer>Written by rankwise. This file is self-contained: it loads nothing and "
        "sends nothing. Per-query values are stored to within 0.00001 (those of a measure wider "
        "than 1.3, such as a count, exactly); means, intervals and tests were computed from the "
        "exact values.</footer>\n",
        "<script type=\"application/octet-stream\" id=\"rw-data\" data-encoding=\""
        f"{'gzip' if compress else 'none'}\">\n" + "\n".join(lines) + "\n</script>\n",
        f"<script>{JS}</script>\n</body>\n</html>\n",
    ])


#: A lone surrogate: a byte of a file name that is not UTF-8, decoded as ``os.fsdecode`` does.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _unicode(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD, so that the page can be written as UTF-8
    (the data block's JSON escapes them, and the browser shows them as U+FFFD too).

    >>> _unicode("run\\udcff.txt") == "run\\ufffd.txt"
    True
    """
    return _SURROGATE.sub("\ufffd", text)


def _section(anchor: str, title: str, intro: str) -> str:
    text = f"<p class=\"muted small\">{html.escape(intro)}</p>" if intro else ""
    return (f"<section id=\"{anchor}\"><h2>{html.escape(title)}</h2>{text}"
            f"<div id=\"{anchor}-body\"></div></section>\n")


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


# ---------------------------------------------------------------------------- the data block


class _Blocks:
    """Typed arrays appended to the binary block; each referenced by its index."""

    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []
        self.meta: list[dict[str, Any]] = []
        self.offset = 0

    def add(self, array: np.ndarray) -> int:
        array = np.ascontiguousarray(array)
        kind = {np.dtype("<u1"): "u8", np.dtype("<u2"): "u16", np.dtype("<u4"): "u32",
                np.dtype("<f8"): "f64"}[array.dtype.newbyteorder("<")]
        array = array.astype(array.dtype.newbyteorder("<"), copy=False)
        self.meta.append({"t": kind, "o": self.offset, "n": int(array.size)})
        self.arrays.append(array)
        self.offset += _padded(array.nbytes)
        return len(self.arrays) - 1


def _padded(n: int) -> int:
    return n + (-n) % 8


def pack(header: dict[str, Any], blocks: _Blocks) -> bytes:
    """``RWR1`` | header length (uint32, little-endian) | header JSON | padding | blocks."""
    header = dict(header, blocks=blocks.meta)
    text = json.dumps(header, allow_nan=False, separators=(",", ":")).encode("utf-8")
    parts = [MAGIC, struct.pack("<I", len(text)), text, b"\0" * ((-len(text)) % 8)]
    for array in blocks.arrays:
        raw = array.tobytes()
        parts += [raw, b"\0" * ((-len(raw)) % 8)]
    return b"".join(parts)


def unpack(packed: bytes) -> tuple[dict[str, Any], list[np.ndarray]]:
    """Read back what :func:`pack` wrote (for tests and tools)."""
    if packed[:4] != MAGIC:
        raise ValueError("not a rankwise report block")
    (length,) = struct.unpack("<I", packed[4:8])
    header = json.loads(packed[8:8 + length])
    base = 8 + _padded(length)
    types = {"u8": "<u1", "u16": "<u2", "u32": "<u4", "f64": "<f8"}
    arrays = [np.frombuffer(packed, dtype=types[b["t"]], count=b["n"], offset=base + b["o"])
              for b in header["blocks"]]
    return header, arrays


def read_payload(text: str) -> tuple[dict[str, Any], list[np.ndarray]]:
    """The header and arrays embedded in a written report page."""
    start = text.index('id="rw-data"')
    body = text[text.index(">", start) + 1:text.index("</script>", start)]
    raw = base64.b64decode("".join(body.split()))
    if 'data-encoding="gzip"' in text[start:start + 80]:
        raw = gzip.decompress(raw)
    return unpack(raw)


def quantise(values: np.ndarray, low: float, high: float) -> np.ndarray:
    """uint16 codes 0 .. 65534 over [low, high]; NaN as 65535.

    >>> quantise(np.array([0.0, 0.5, 1.0, np.nan]), 0.0, 1.0).tolist()
    [0, 32767, 65534, 65535]
    """
    out = np.full(values.shape, NAN16, dtype=np.uint16)
    defined = ~np.isnan(values)
    scaled = (np.clip(values[defined], low, high) - low) / (high - low) * 65534.0
    out[defined] = np.rint(scaled).astype(np.uint16)
    return out


def dequantise(codes: np.ndarray, low: float, high: float) -> np.ndarray:
    """The values :func:`quantise` codes stand for (NaN for 65535)."""
    out = low + codes.astype(np.float64) / 65534.0 * (high - low)
    out[codes == NAN16] = np.nan
    return out


def stored_values(header: dict[str, Any], arrays: list[np.ndarray], measure: str) -> np.ndarray:
    """The per-query values of ``measure`` as a written page holds them: (systems, queries),
    NaN where a value is undefined or the system lacks the query."""
    held = header["values"][measure]
    block = arrays[held["block"]]
    values = block if block.dtype == np.float64 else dequantise(block, held["lo"], held["hi"])
    return values.reshape(len(header["systems"]), len(header["queries"]))


def payload(data, doc_budget: int = DOC_BUDGET) -> tuple[dict[str, Any], _Blocks]:
    """The JSON header and the typed arrays of the page."""
    from .. import __version__
    from ..diagnostics import COUNT_LABELS, summary_line
    from ..measures import parse_measure
    from ..plain import text_ids

    blocks = _Blocks()
    names = list(data.systems)
    result = data.result
    ids = {name: text_ids(s.query_ids) for name, s in data.systems.items()}
    queries = np.unique(np.concatenate(list(ids.values())) if names else text_ids([]))
    nq, ns = len(queries), len(names)
    where = {name: np.searchsorted(queries, ids[name]) for name in names}
    present = np.zeros((ns, nq), dtype=np.uint8)
    relevant = np.zeros((ns, nq), dtype=np.uint32)
    for i, name in enumerate(names):
        present[i, where[name]] = 1
        relevant[i, where[name]] = np.minimum(data.systems[name].num_relevant, NONE32 - 1)
    values, measures = {}, []
    for m in data.measures:
        spec = parse_measure(m).spec
        full = np.full((ns, nq), np.nan)
        for i, name in enumerate(names):
            full[i, where[name]] = result.systems[name].values[m]
        low, high = value_range(full, spec.bounds)
        stored = quantise(full, low, high) if high - low <= CODED_RANGE else full
        values[m] = {"lo": low, "hi": high, "block": blocks.add(stored.ravel())}
        ranks = _finer_ranks(full, stored)
        if ranks is not None:
            values[m]["ranks"] = blocks.add(ranks.ravel())
        measures.append({"name": m, "bounds": list(spec.bounds) if spec.bounds else None,
                         "higherIsBetter": spec.higher_is_better, "aggregate": spec.aggregate,
                         "description": spec.description})
    header: dict[str, Any] = {
        "format": 1, "version": __version__, "title": data.title, "qrels": data.qrels_source,
        "conventions": data.conventions.to_dict(),
        "conventionsChanged": data.conventions.differences(),
        "baseline": data.baseline, "confidence": data.confidence, "queries": queries.tolist(),
        "measures": measures, "values": values,
        "present": blocks.add(present.ravel()), "relevant": blocks.add(relevant.ravel()),
        "summary": plain(data.summary),
        "comparison": _comparison(data.comparison),
        "countLabels": COUNT_LABELS,
        "systems": [{"name": name, "label": s.label,
                     "diagnostics": plain(result.systems[name].diagnostics),
                     "summaryLine": summary_line(_WithChecks(result.systems[name], s.checks),
                                                 hint=False),
                     "checks": [dict(c.to_dict(), message=pieces(c.message))
                                for c in s.checks]}
                    for name, s in data.systems.items()],
        "curves": {"k": data.max_k, "families": {
            family: [_rounded(s.curves[family]) for s in data.systems.values()]
            for family in next(iter(data.systems.values())).curves} if names else {}},
        "pr": {"levels": data.recall_levels.tolist(),
               "mean": [_rounded(s.pr_mean) for s in data.systems.values()],
               "sample": [{"n": int(len(s.pr_queries)),
                           "queries": blocks.add(np.searchsorted(
                               queries, text_ids(s.pr_queries)).astype(np.uint32)),
                           "values": blocks.add(quantise(s.pr_sample, 0.0, 1.0).ravel())}
                          for s in data.systems.values()]},
        "drill": _drill(data, queries, where, blocks, doc_budget),
    }
    return header, blocks


class _WithChecks:
    """A SystemResult seen with the report's checks (for the one-line summary)."""

    def __init__(self, system, checks) -> None:
        self.diagnostics = system.diagnostics
        self.warnings = system.warnings
        self.checks = checks


def _finer_ranks(full: np.ndarray, stored: np.ndarray) -> np.ndarray | None:
    """Where the 16-bit codes make two systems' different values of a query equal (they differ
    by less than a code's step), each system's rank among the systems on every query (equal
    values, equal ranks), so the page counts wins, ties and losses from the exact values as
    :func:`rankwise.compare` does; None where the codes keep every difference."""
    if stored.dtype == np.float64 or len(full) < 2:
        return None
    order = np.argsort(full, axis=0, kind="stable")
    values = np.take_along_axis(full, order, axis=0)
    codes = np.take_along_axis(stored, order, axis=0)
    rises = values[1:] != values[:-1]  # NaN, sorted last, rises too and is never compared
    if not (rises & (codes[1:] == codes[:-1]) & (codes[1:] != NAN16)).any():
        return None
    sorted_ranks = np.concatenate([np.zeros((1, full.shape[1]), dtype=np.int64),
                                   np.cumsum(rises, axis=0)])
    ranks = np.empty(full.shape, dtype=np.uint8 if len(full) <= 256 else np.uint16)
    np.put_along_axis(ranks, order, sorted_ranks, axis=0)
    return ranks


def value_range(values: np.ndarray, bounds: tuple[float, float] | None) -> tuple[float, float]:
    """The range a measure's values are stored and drawn over: its ``bounds`` (finite ones),
    widened to every finite value outside them (a gain map with negative gains makes nDCG
    negative), else the values' own range; never empty (a single value ``v`` spans
    ``[v, v + 1]``, and so do values that differ by rounding only, ``0.3`` and ``0.1 + 0.2``,
    as no axis resolves them; no value at all ``[0, 1]``).

    >>> value_range(np.array([0.2, np.nan]), (0.0, 1.0)), value_range(np.array([-2.5]), (0, 1))
    ((0.0, 1.0), (-2.5, 1.0))
    >>> value_range(np.array([3.0, 3.0]), None), value_range(np.array([]), None)
    ((3.0, 4.0), (0.0, 1.0))
    >>> value_range(np.array([0.3, 0.1 + 0.2]), None)
    (0.3, 1.3)
    """
    finite = values[np.isfinite(values)]
    ends = [float(finite.min()), float(finite.max())] if len(finite) else []
    if bounds is not None and all(math.isfinite(b) for b in bounds):
        ends += [float(bounds[0]), float(bounds[1])]
    if not ends:
        return 0.0, 1.0
    low, high = min(ends), max(ends)
    return (low, high) if high - low > RESOLUTION * max(abs(low), abs(high)) else \
        (low, low + 1.0)


def _drill(data, queries: np.ndarray, where: dict[str, np.ndarray], blocks: _Blocks,
           doc_budget: int) -> dict[str, Any]:
    """Grade codes of the top ranks of every (system, query), and the doc ids of the queries
    the budget allows."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..core.arrow import take, to_numpy
    from ..core.segments import positions

    names = list(data.systems)
    ns, nq, depth = len(names), len(queries), data.depth
    finite = [g[np.isfinite(g)] for g in (s.top_grades for s in data.systems.values())]
    levels = np.unique(np.concatenate(finite)) if finite else np.zeros(0)
    wide = len(levels) > 253
    dtype, no_doc, unjudged = (np.uint16, 65535, 65534) if wide else (np.uint8, 255, 254)
    codes = np.full((ns, nq, depth), no_doc, dtype=dtype)
    for i, s in enumerate(data.systems.values()):
        g = s.top_grades
        c = np.full(g.shape, no_doc, dtype=dtype)
        c[np.isnan(g)] = unjudged
        ok = np.isfinite(g)
        c[ok] = np.searchsorted(levels, g[ok]).astype(dtype)
        codes[i, where[names[i]]] = c
    chosen = _doc_queries(data, queries, where, doc_budget)
    index = np.full((len(chosen), ns, depth), NONE32, dtype=np.uint32)
    arrays, targets = [], []
    for i, (name, s) in enumerate(data.systems.items()):
        counts = (s.top_grades != -np.inf).sum(axis=1)  # NaN (unjudged) is a document
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        local = np.full(nq, -1, dtype=np.int64)
        local[where[name]] = np.arange(len(where[name]))
        q = local[chosen]
        rows = np.flatnonzero(q >= 0)
        count = counts[q[rows]]
        offsets = np.concatenate(([0], np.cumsum(count))).astype(np.int64)
        rank = positions(offsets)
        source = np.repeat(starts[q[rows]], count) + rank
        arrays.append(take(s.top_docs, source))
        targets.append((np.repeat(rows, count), i, rank))
    dictionary: list[str] = []
    if arrays and sum(len(a) for a in arrays):
        encoded = pc.dictionary_encode(pa.chunked_array(
            [a for part in arrays for a in (part.chunks if hasattr(part, "chunks") else [part])],
            type=pa.string()).combine_chunks())
        codes_flat = to_numpy(encoded.indices, np.int64)
        dictionary = encoded.dictionary.to_pylist()
        at = 0
        for (rows, i, rank) in targets:
            index[rows, i, rank] = codes_flat[at:at + len(rank)]
            at += len(rank)
    grade_threshold = data.conventions.relevance_threshold
    return {"depth": depth, "levels": [_grade(x) for x in levels.tolist()],
            "grades": blocks.add(codes.ravel()), "noDoc": no_doc, "unjudged": unjudged,
            "threshold": grade_threshold,
            "docs": {"queries": blocks.add(np.asarray(chosen, dtype=np.uint32)),
                     "dict": dictionary, "index": blocks.add(index.ravel()),
                     "stored": int(len(chosen)), "budget": int(doc_budget)}}


def _doc_queries(data, queries: np.ndarray, where: dict[str, np.ndarray],
                 doc_budget: int) -> np.ndarray:
    """The queries whose doc ids are kept: all when the budget allows, else those where some
    system differs most from the baseline on the first measure (or, with one system, scores
    lowest), in query order."""
    ns, nq = len(data.systems), len(queries)
    if nq == 0 or ns == 0 or doc_budget <= 0:
        return np.zeros(0, dtype=np.int64)
    fit = max(1, doc_budget // (ns * data.depth))
    if fit >= nq:
        return np.arange(nq)
    first = data.measures[0]
    full = np.full((ns, nq), np.nan)
    for i, name in enumerate(data.systems):
        full[i, where[name]] = data.result.systems[name].values[first]
    if data.baseline is not None:
        b = list(data.systems).index(data.baseline)
        priority = np.nanmax(np.abs(full - full[b]), axis=0, initial=0.0)
    else:
        priority = -np.nan_to_num(full[0], nan=np.inf)
    priority = np.nan_to_num(priority, nan=-np.inf)
    chosen = np.argsort(-priority, kind="stable")[:fit]
    return np.sort(chosen)


def _comparison(comparison) -> dict[str, Any] | None:
    if comparison is None:
        return None
    tests = [{"measure": r["measure"], "system": r["system"], "other": r["other"],
              **r["test"].to_dict(), "p_value_corrected": r["p_value_corrected"],
              "significant": r["significant"]} for r in comparison.tests]
    return plain({"describe": pieces(comparison.describe()),
                  "legend": pieces(comparison.legend()), "confidence": comparison.confidence,
                  "baseline": comparison.baseline, "tests": tests,
                  "warnings": [pieces(w) for w in comparison.warnings],
                  "labels": comparison.labels})


def _grade(x: float) -> float | int:
    return int(x) if float(x).is_integer() else float(x)


def _rounded(values: np.ndarray) -> list[float | None]:
    return [None if not math.isfinite(v) else round(float(v), 6) for v in values]


