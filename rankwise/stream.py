"""Streaming evaluation: a TREC run larger than memory, read chunk by chunk of whole queries.

:func:`evaluate_stream` gives the same :class:`~rankwise.Result` as
:func:`rankwise.evaluate` (the same JSON, byte for byte) while holding only one chunk of the
run in memory at a time. It relies on what makes a TREC run streamable: each query's lines
are written together (the run is *grouped by query*, as ``trec_eval`` output and nearly every
retrieval system writes it). The order of queries does not matter, nor the order of lines
within a query.

How it works:

1. The judgments are read once and held whole, split by query, so that each chunk is
   joined with the judgments of its own queries only and the work per chunk grows with the
   chunk, not with all the judgments. They are checked as an in-memory evaluation checks
   them by the chunks' own indexes, and at the end for the judged queries no chunk held.
2. The run is read in blocks of about ``chunk_bytes`` of text, cut where the lines of the
   block's last query begin (those lines, which may continue in the next block, are carried
   over as text), and parsed by pyarrow (both cores) in a second thread while the previous
   chunk is evaluated, so every chunk holds whole queries. A Parquet run is read batch by
   batch, the rows of each batch's last query carried over to the next.
3. Each chunk goes through the same one pass as an in-memory evaluation
   (:func:`~rankwise.core.ranked.rank`) and every measure; per chunk, the per-query values,
   the diagnostics counts and the counts behind the warnings are kept, and the chunk is
   dropped.
4. At the end, judged queries that never appeared are counted (and scored 0 under
   ``missing_queries="zero"``), and everything is merged into one Result. Every per-query
   value depends on its own query only, so the merge is exact: the values are those of one
   pass, in the same order, and the aggregates are computed from them by the same function.

Memory: the judgments, one chunk (about four times ``chunk_bytes``) plus the next block
being parsed, and 8 bytes per query and measure (the per-query values, from which the
aggregates are computed exactly as in one pass: a running sum would round differently from
the one-pass mean; the query ids are kept only with ``per_query=True``). A run of any size
streams in this memory; the judgments are held whole.

The warnings that count queries (lists shorter than K, ties at a cutoff, unjudged documents
in the top K) are added up over the chunks from the same per-query tests as
:func:`rankwise.diagnostics.run_checks` and worded as it words them; the others depend on the
judgments only and are taken from the first chunk.

:func:`rankwise.evaluate` evaluates a run too large for one pass (one pass would need more
than the memory left, or for a huge run more than half of it) the same way: a run file
grouped by query is streamed from the file (:func:`evaluate_file`), a run it holds in memory
goes block by block of whole queries (:func:`evaluate_in_blocks`). Integer doc ids stay
integers chunk by chunk, as in one pass.

A query whose lines reappear after other queries raises :class:`NotGroupedError` (an
:class:`~rankwise.errors.InputError`) naming the file, the line and the fix (sort the run by
query, or evaluate it in memory).
"""

from __future__ import annotations

import gzip
import os
import re
import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from .conventions import Conventions, profile, resolve
from .core.arrow import (all_equal, compute, index_in, indices, string_array, take, to_arrow,
                         to_numpy)
from .core.keys import fingerprints
from .core.memory import large_arrays
from .core.ranked import (Diagnostics, RankedLists, index_judgments, judged_levels, rank,
                          stack_lists)
from .core.segments import distinct, starts_of_runs
from .diagnostics import (
    TIE_CHECK_MAX_ROWS,
    Check,
    _tie_candidates,
    judged_at,
    judged_groups,
    straddling_masks,
    tie_cutoff_groups,
)
from .errors import InputError
from .io.frames import to_qrels
from .io.parquet import is_parquet_path, run_file_name
from .io.tables import Run, check_finite_scores, encode_queries
from .io.trec import RUN_FIELDS, arrow_parse, run_column_types
from .measures import Measure, parse_measures
from .results import Result, SystemResult, aggregate

#: Default text per chunk: large enough that the fixed costs of a chunk (a pass over its
#: queries, the thread hand-over) stay small, small enough for a few hundred MB of memory.
DEFAULT_CHUNK_BYTES = 64 << 20
_GZIP_MAGIC = b"\x1f\x8b"
_DATA_LINE = re.compile(rb"(?m)^[ \t\r]*[^#\s]")
_NON_BLANK = re.compile(rb"\S")

#: Diagnostics counts that add up over chunks of whole queries (the others describe the
#: judgments, or the judged queries never seen, and are set once).
_ADDITIVE = ("run_rows", "run_duplicates_dropped", "run_queries", "queries_evaluated",
             "queries_only_in_run", "queries_only_in_run_scored", "queries_empty_in_run",
             "queries_without_relevant", "rows_evaluated", "rows_in_run_only_queries",
             "rows_beyond_depth", "rows_unjudged_removed", "unjudged_retrieved", "tied_rows",
             "queries_rank_contradicts_score")
_EXAMPLES = 5


def evaluate_stream(qrels: Any, run: Any, measures: str | Measure | Sequence[str | Measure],
                    conventions: Conventions | str | None = None, per_query: bool = False,
                    chunk_bytes: int = DEFAULT_CHUNK_BYTES, query: str = "query",
                    doc: str = "doc", score: str = "score", **convention_overrides: Any) -> Result:
    """Evaluate TREC run files chunk by chunk of whole queries, in bounded memory.

    The result is identical to ``rankwise.evaluate(qrels, run, measures, ...)``: the same
    aggregates, per-query values, diagnostics and warnings. Each run file must be grouped by
    query (all lines of a query together, as TREC runs are written); the queries may come in
    any order.

    Parameters
    ----------
    qrels : path, DataFrame, Arrow table, dict or Qrels
        The judgments, read into memory once (as :func:`rankwise.evaluate` takes them).
    run : path, or a list or ``{name: path}`` mapping of paths
        TREC run file(s), plain or gzip-compressed, or Parquet runs (a file or a folder of
        files); each is one system.
    measures : str, Measure or sequence of them
        Names in any dialect (``"nDCG@10"``, ``"ndcg_cut_10"``, ``"official"``).
    conventions : Conventions or profile name, optional
        As for :func:`rankwise.evaluate`; keyword overrides apply on top.
    per_query : bool
        Keep the per-query values and query ids (``Result.per_query()``).
    chunk_bytes : int
        About how much run text one chunk holds; peak memory grows with it (about four
        times, plus the judgments). A query longer than this is kept whole in its chunk.
    query, doc, score : str
        The column names of Parquet runs, as :func:`rankwise.to_run` takes them (TREC text
        has no names); name the judgments' columns with :func:`rankwise.to_qrels`.

    Returns
    -------
    Result

    Raises
    ------
    InputError
        For bad input, as :func:`rankwise.evaluate` does; and when a query's lines reappear
        after other queries (the run is not grouped by query), naming the line.

    Examples
    --------
    >>> import os, tempfile, rankwise
    >>> from rankwise.stream import evaluate_stream
    >>> folder = tempfile.mkdtemp()
    >>> run_path = os.path.join(folder, "run.txt")
    >>> _ = open(run_path, "w").write("q1 Q0 d1 1 0.9 bm25\\nq1 Q0 d2 2 0.8 bm25\\n"
    ...                               "q2 Q0 d4 1 0.5 bm25\\nq2 Q0 d3 2 0.4 bm25\\n")
    >>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    >>> result = evaluate_stream(qrels, run_path, ["P@1", "RR"], chunk_bytes=20)
    >>> result.mean("P@1"), result.mean("RR")
    (0.5, 0.75)
    >>> result.to_json() == rankwise.evaluate(qrels, run_path, ["P@1", "RR"]).to_json()
    True
    """
    conv = resolve(conventions, **convention_overrides)
    if isinstance(conventions, str):
        measures = profile(conventions).measure_names(measures)
    parsed = parse_measures(measures)
    if not isinstance(chunk_bytes, int) or isinstance(chunk_bytes, bool) or chunk_bytes < 1:
        raise InputError("chunk_bytes must be a positive number of bytes", source="chunk_bytes",
                         value=repr(chunk_bytes))
    runs = _run_paths(run)
    with large_arrays():
        judgments = _Judgments(to_qrels(qrels))
        systems = {}
        for name, path in runs:
            stream = _SystemStream(judgments, parsed, conv, per_query)
            systems[name] = stream.evaluate(path, name, chunk_bytes, (query, doc, score))
    return Result([str(m) for m in parsed], systems, conv,
                  {str(m): m.spec.aggregate for m in parsed})


def _run_paths(run: Any) -> list[tuple[str, str]]:
    """``[(name or None, path), ...]`` from a path, a list of paths or ``{name: path}``;
    names are made unique as :func:`rankwise.evaluate` makes them (``name#2``)."""
    if isinstance(run, (str, os.PathLike)):
        items = [(None, run)]
    elif isinstance(run, Mapping):
        items = [(str(name), path) for name, path in run.items()]
    elif isinstance(run, (list, tuple)):
        items = [(None, path) for path in run]
    else:
        raise InputError("streaming evaluation reads TREC run files: expected a path, a list "
                         "of paths or {name: path}; evaluate in-memory runs with "
                         "rankwise.evaluate", source="run", value=type(run).__name__)
    if not items:
        raise InputError("no run given", source="run")
    out: list[tuple[str | None, str]] = []
    for name, path in items:
        if not isinstance(path, (str, os.PathLike)):
            raise InputError("streaming evaluation reads TREC run files: expected a path",
                             source="run", value=type(path).__name__)
        out.append((run_name(path) if name is None else name, str(path)))
    seen: dict[str, int] = {}
    unique = []
    for name, path in out:
        if name in seen:
            seen[name] += 1
            name = f"{name}#{seen[name]}"
        else:
            seen[name] = 1
        unique.append((name, path))
    return unique


def run_name(path: str | os.PathLike[str]) -> str:
    """A run file's name as the in-memory readers give it (the TREC tag, or the Parquet file's
    name)."""
    return run_file_name(path) if is_parquet_path(path) else _run_name(str(path))


def evaluate_file(judgments: _Judgments, path: str, name: str, measures: list[Measure],
                  conv: Conventions, per_query: bool,
                  columns: tuple[str, str, str]) -> SystemResult:
    """One run file (TREC text, or Parquet with the query, doc and score ``columns``)
    evaluated as :func:`evaluate_stream` evaluates it, with the judgments of
    :func:`split_judgments`. Raises :class:`NotGroupedError` when the file is not grouped by
    query."""
    return _SystemStream(judgments, measures, conv, per_query).evaluate(
        str(path), name, DEFAULT_CHUNK_BYTES, columns)


# ---------------------------------------------------------------------------- one system


class _SystemStream:
    """Evaluates one run file chunk by chunk and merges the chunks into a SystemResult."""

    def __init__(self, judgments: _Judgments, measures: list[Measure], conv: Conventions,
                 per_query: bool) -> None:
        self.judgments = judgments
        self.qrels = judgments.qrels
        self.measures = measures
        self.conv = conv
        # chunks never score the judged queries they lack: that is decided once, at the end
        self.chunk_conv = replace(conv, missing_queries="ignore")
        self.per_query = per_query
        self.values: dict[str, list[np.ndarray]] = {str(m): [] for m in measures}
        self.counts = dict.fromkeys(_ADDITIVE, 0)
        self.contradiction_examples: list[str] = []
        self.run_only_examples: list[str] = []
        self.rank_column = True  # every chunk had an integer rank column
        self.facts = _QueryFacts(measures, conv)
        self.baseline: Diagnostics | None = None  # the stand-in query's own counts
        self.seen = _SeenQueries(self.qrels)

    # -------------------------------------------------------------- the chunks

    def evaluate(self, path: str, name: str, chunk_bytes: int,
                 columns: tuple[str, str, str]) -> SystemResult:
        """``columns``: the query, doc and score columns of a Parquet run."""
        reader = _ParquetRunReader(path, chunk_bytes, columns) if is_parquet_path(path) else \
            _RunReader(path, chunk_bytes)
        return self.evaluate_rows(reader, path, name, reader.no_lines_error)

    def evaluate_rows(self, parts: Iterable[_Rows], source: str, name: str,
                      no_rows: Callable[[], InputError]) -> SystemResult:
        """Every chunk of whole queries of ``parts``, merged (``no_rows()``: the error to
        raise when there is none)."""
        first_row = None
        for rows in parts:
            chunk = rows.to_run(source, name)
            if first_row is None:
                first_row = (chunk.query_dict[0].as_py(), chunk.docs[0].as_py())
            self._add(chunk, rows.rank is not None)
            del rows, chunk
        if first_row is None:
            raise no_rows()
        return self._finish(source, first_row, name)

    def _add(self, chunk: Run, has_rank: bool) -> None:
        codes = self.seen.add(chunk)
        judged = codes >= 0
        self.rank_column &= has_rank
        run_only = int((~judged).sum())
        stand_in = not judged.any()
        integer = integer_docs(chunk.docs)
        if stand_in:  # the engine needs a judged query: lend it one and take it away again
            chunk = _with_row(chunk, self._stand_in_run(chunk.rank is not None, integer))
        index = self.judgments.subset(np.sort(codes[judged]), run_only, strings=not integer)
        lists = rank(index, chunk, self.chunk_conv)
        keep = np.arange(lists.num_queries - 1 if stand_in else lists.num_queries)
        self._add_lists(lists, keep)
        diag = lists.diagnostics
        base = self._baseline() if stand_in else None
        for field_name in _ADDITIVE:
            self.counts[field_name] += getattr(diag, field_name) - (
                getattr(base, field_name) if base is not None else 0)
        _extend(self.contradiction_examples,
                diag.examples.get("queries_rank_contradicts_score", []))
        _extend(self.run_only_examples, diag.examples.get("queries_only_in_run", []))

    def _add_lists(self, lists: RankedLists, keep: np.ndarray) -> None:
        """The values of the queries ``keep`` of ``lists``, and their facts for the checks."""
        for m in self.measures:
            self.values[str(m)].append(m.compute(lists)[keep])
        self.facts.add(lists, keep)

    def _stand_in_run(self, with_rank: bool, integer: bool = False) -> Run:
        """One row of the judgments' stand-in query (see :meth:`_Judgments.subset`), its doc
        unjudged (an integer for runs with integer doc ids)."""
        qid, doc = self.judgments.stand_in(np.zeros(0, dtype=np.int64))
        doc = len(self.judgments.levels) if integer else doc
        run = Run.from_columns([qid], [doc], [0.0], name="stand-in", source="stand-in")
        return replace(run, rank=np.ones(1, dtype=np.int64) if with_rank else None)

    def _baseline(self) -> Diagnostics:
        """The counts the stand-in query adds on its own (subtracted from its chunk's)."""
        if self.baseline is None:
            index = self.judgments.subset(np.zeros(0, dtype=np.int64), 0)
            self.baseline = rank(index, self._stand_in_run(True), self.chunk_conv).diagnostics
        return self.baseline

    # -------------------------------------------------------------- the end

    def _finish(self, path: str, first_row: tuple[str, str], name: str) -> SystemResult:
        seen = self.seen.judged_first_line >= 0
        if not seen.any():  # the same error as rankwise.evaluate's
            rank(self.qrels, Run.from_columns([first_row[0]], [first_row[1]], [0.0],
                                              source=path), self.chunk_conv)
        missing = np.flatnonzero(~seen)
        scored = self.conv.missing_queries == "zero" and len(missing) > 0
        if scored:
            self._score_missing(missing, int(np.flatnonzero(seen)[0]))

        self.judgments.check_rest()  # the judged queries no chunk held
        counts = dict(self.counts)
        if not self.rank_column:  # as the in-memory reader: no rank column, nothing checked
            counts["queries_rank_contradicts_score"] = 0
        diag = Diagnostics(
            **counts, qrels_rows=len(self.qrels), qrels_queries=self.qrels.num_queries,
            queries_only_in_qrels=len(missing),
            queries_only_in_qrels_scored_zero=len(missing) if scored else 0,
            qrels_queries_without_judgments=len(self.qrels.empty_queries),
            qrels_duplicates_dropped=self.judgments.duplicates_dropped,
            negative_grades=self.judgments.negative_grades)
        if self.rank_column:
            diag.examples["queries_rank_contradicts_score"] = self.contradiction_examples
        diag.examples["queries_only_in_run"] = self.run_only_examples
        diag.examples["queries_only_in_qrels"] = take(self.qrels.query_dict,
                                                      missing[:_EXAMPLES]).to_pylist()

        values = {k: _concat(v) for k, v in self.values.items()}
        self.values.clear()
        checks = self.facts.checks(self.measures, values, diag, self.conv)
        if self.per_query:
            ids = self.facts.query_ids.all()
            order = np.argsort(ids.astype(str), kind="stable")
        return SystemResult(
            name=name,
            aggregates={str(m): aggregate(values[str(m)], m.spec.aggregate,
                                          m.skips_undefined(self.conv)) for m in self.measures},
            diagnostics=diag.to_dict(),
            query_ids=ids[order] if self.per_query else None,
            values={k: v[order] for k, v in values.items()} if self.per_query else None,
            undefined={k: int(np.isnan(v).sum()) for k, v in values.items() if np.isnan(v).any()},
            trec_names={str(m): m.trec_name() for m in self.measures},
            warnings=[c.message for c in checks if c.severity == "warning"],
            checks=[c.to_dict() for c in checks])

    def _score_missing(self, missing: np.ndarray, seen_code: int) -> None:
        """Values of the judged queries absent from the run under ``missing_queries="zero"``:
        one pass over a one-row run of a judged query that was seen, with the judgments of
        that query and the missing ones; the missing ones are appended empty, in judgments
        order, as the in-memory pass appends them."""
        codes = np.sort(np.append(missing, seen_code))
        qid = self.qrels.query_dict[seen_code].as_py()
        one = Run.from_columns([qid], ["-"], [0.0], source="stand-in")
        lists = rank(self.judgments.subset(codes, 0, widen=False, strings=True), one,
                     self.conv)
        at = np.arange(1, 1 + len(missing))  # query 0 is the one-row query; the stand-in last
        self._add_lists(lists, at)
        self.counts["queries_evaluated"] += len(missing)
        self.counts["queries_without_relevant"] += int(
            (lists.num_relevant(self.conv.relevance_threshold)[at] == 0).sum())


class _Judgments:
    """The judgments split by query, so that each chunk is joined with the judgments of its
    own queries only: the work per chunk grows with the chunk, not with all the judgments.

    They are checked as an in-memory evaluation checks them (identical duplicates counted,
    negative grades counted, a document judged twice with different grades an error) by the
    indexes the chunks make anyway: each query is counted the first time a chunk's index
    holds it, and the judged queries no chunk held are checked at the end
    (:meth:`check_rest`, block by block of whole queries). On a conflict, every judgment is
    checked in the order of the query codes, so that the error is the one an in-memory
    evaluation raises (the first conflict in that order; the readers number queries in order
    of first appearance). Indexing the judgments once more only to check them cost a sixth of
    a streamed evaluation (100k queries x 100: 0.4 s of 3.4 s).
    """

    #: Judgments indexed at a time by the checks (whole queries; bounds their memory),
    #: two blocks side by side (60M judgments: 6.3 s in one thread).
    CHECK_BLOCK_ROWS = 1 << 22

    def __init__(self, qrels) -> None:
        self.qrels = qrels
        codes = qrels.query_code
        n, queries = len(codes), qrels.num_queries
        starts = starts_of_runs(codes)
        self.start = np.zeros(queries, dtype=np.int64)
        self.length = np.zeros(queries, dtype=np.int64)
        if len(starts) == queries:  # each query's judgments together: no permutation needed
            self.order = None
            self.start[codes[starts]] = starts
            self.length[codes[starts]] = np.diff(np.append(starts, n))
        else:
            self.order = np.argsort(codes, kind="stable")
            self.length = np.bincount(codes, minlength=queries).astype(np.int64)
            self.start = np.cumsum(self.length) - self.length
        #: every judged grade >= 0 once: the grade levels of the whole judgments, which a
        #: subset must keep (they decide the largest grade and the ideal gains)
        self.levels = judged_levels(qrels.grade)
        self.checked = np.zeros(queries, dtype=bool)  # counted by some index already
        self.duplicates_dropped = self.negative_grades = 0

    def check_rest(self) -> None:
        """Check and count the judged queries that no index has held yet."""
        rest = np.flatnonzero(~self.checked & (self.length > 0))
        self._check(rest)

    def _check(self, codes: np.ndarray) -> None:
        """Index the judgments of the queries ``codes`` (ascending) block by block, two
        blocks side by side and in order (the first failing block raises first), and count
        them."""
        for block_codes, index in _two_at_a_time(
                lambda block: (block[0], index_judgments(block[1], self.qrels.num_queries,
                                                         False)),
                self._check_blocks(codes)):
            self.duplicates_dropped += index.duplicates_dropped
            self.negative_grades += index.negative_grades
            self.checked[block_codes] = True
            del index

    def _check_blocks(self, codes: np.ndarray) -> Iterator[tuple[np.ndarray, Any]]:
        """The judgments of the queries ``codes`` in blocks of whole queries: each block's
        query codes and a Qrels with the whole query dictionary and its rows' own lines."""
        qrels = self.qrels
        ends = np.cumsum(self.length[codes])
        cuts = _block_cuts(np.append(0, ends[:-1]), int(ends[-1]) if len(ends) else 0,
                           self.CHECK_BLOCK_ROWS)
        at = np.searchsorted(np.append(0, ends), cuts)
        for a, b in zip(at[:-1].tolist(), at[1:].tolist()):
            block = codes[a:b]
            rows = _ranges(self.start[block], self.length[block])
            if self.order is not None:
                rows = self.order[rows]
            yield block, replace(qrels, query_code=qrels.query_code[rows],
                                 docs=take(qrels.docs, rows), grade=qrels.grade[rows],
                                 row_lines=qrels.lines_of(rows))

    def _count(self, index, codes: np.ndarray) -> None:
        """Count the duplicates and negative grades of the queries ``codes`` not counted
        yet, from ``index`` (of a subset: its query ``i`` is ``codes[i]``; the stand-in query
        after them holds distinct level documents, neither duplicated nor negative)."""
        new = ~self.checked[codes]
        if not new.any():
            return
        if index.duplicates_dropped or index.negative_grades:  # rare: query by query
            held = np.bincount(index.query_of_key, minlength=len(codes) + 1)[:len(codes)]
            negative = np.bincount(index.query_of_key[index.grades < 0],
                                   minlength=len(codes) + 1)[:len(codes)]
            self.duplicates_dropped += int((self.length[codes] - held)[new].sum())
            self.negative_grades += int(negative[new].sum())
        self.checked[codes] = True

    def stand_in(self, codes: np.ndarray) -> tuple[str, str]:
        """A judged query that is not among ``codes``, and a doc id for it."""
        free = np.ones(min(len(codes) + 1, self.qrels.num_queries), dtype=bool)
        free[codes[codes < len(free)]] = False
        return self.qrels.query_dict[int(np.flatnonzero(free)[0])].as_py(), "-"

    def subset(self, codes: np.ndarray, run_only: int, widen: bool = True,
               strings: bool = True):
        """The index of the judgments of the queries ``codes`` (ascending), laid out for a
        run with ``run_only`` queries without judgments. Unless ``codes`` are all the judged
        queries, a stand-in query (a judged query not in ``codes``) is added last with one
        judgment at each grade level of the whole judgments, so that the levels stay those
        of the whole; a chunk's run never holds it, so nothing is measured on it.

        Judgments written query by query and a run in the same query order (the usual case)
        give a nearly contiguous range of codes: the judgments of the whole range are taken
        then, as a slice of the columns without a copy (the judged queries in between that
        the chunk lacks change nothing: the chunk's lists never score them). ``widen=False``
        keeps exactly ``codes``. ``strings``: for a run whose doc ids are strings (integer
        doc ids of the judgments are then taken as their decimal strings, made once)."""
        import pyarrow as pa

        from .io.tables import Qrels

        qrels = self._string_qrels() if strings else self.qrels
        lo, hi = (int(codes[0]), int(codes[-1])) if len(codes) else (0, -1)
        contiguous = self.order is None and (hi - lo + 1 == len(codes) or (
            widen and hi - lo + 1 <= 2 * len(codes) + 64))
        if contiguous:
            codes = np.arange(lo, hi + 1)
        if len(codes) == qrels.num_queries:
            return self._checked(qrels, qrels.num_queries + run_only, codes)
        lengths = self.length[codes]
        if contiguous:
            first, total = (int(self.start[lo]), int(lengths.sum())) if len(codes) else (0, 0)
            docs = _chunks_of(qrels.docs.slice(first, total))
            grade = qrels.grade[first:first + total]
        else:
            rows = _ranges(self.start[codes], lengths)
            if self.order is not None:
                rows = self.order[rows]
            docs = _chunks_of(take(self._whole_docs(qrels), rows))
            grade = qrels.grade[rows]
        query_code = np.repeat(np.arange(len(codes), dtype=np.int32), lengths)
        stand_in, _ = self.stand_in(codes)
        level_docs = to_arrow(np.arange(len(self.levels))) if integer_docs(qrels.docs) else \
            string_array([f"level {g!r}" for g in self.levels.tolist()])
        query_dict = pa.concat_arrays([take(qrels.query_dict, codes),
                                       string_array([stand_in])])
        subset = Qrels(
            query_code=np.concatenate([query_code, np.full(len(self.levels), len(codes),
                                                           dtype=np.int32)]),
            query_dict=query_dict,
            docs=pa.chunked_array(docs + [level_docs], type=level_docs.type),
            source=qrels.source, row_lines=None, row_unit=qrels.row_unit,
            grade=np.concatenate([grade, self.levels]))
        return self._checked(subset, subset.num_queries + run_only, codes)

    def _checked(self, qrels, key_queries: int, codes: np.ndarray):
        """The index of ``qrels`` (all the judgments, or the subset of the queries
        ``codes``), its duplicates and negative grades counted; on a conflict, the error an
        in-memory evaluation raises."""
        try:
            index = index_judgments(qrels, key_queries)
        except InputError:  # a subset has no lines: find the first conflict of them all
            self._check(np.flatnonzero(self.length > 0))
            raise
        self._count(index, codes)
        return index

    def _whole_docs(self, qrels):
        """The doc ids of ``qrels`` (the judgments, or their string version) as one Arrow
        array (taking rows from a chunked array costs a pass over all its chunks), made once
        each when first needed."""
        key = "_docs" if qrels is self.qrels else "_string_docs"
        if not hasattr(self, key):
            docs = qrels.docs
            setattr(self, key, docs.combine_chunks() if hasattr(docs, "combine_chunks")
                    else docs)
        return getattr(self, key)

    def _string_qrels(self):
        """The judgments with their doc ids as strings (themselves when they are), made once
        when first needed."""
        if not integer_docs(self.qrels.docs):
            return self.qrels
        if not hasattr(self, "_strings"):
            self._strings = self.qrels.with_string_docs()
        return self._strings


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + n) for s, n in zip(starts, lengths)])``, vectorised."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.cumsum(lengths) - lengths
    return np.arange(total, dtype=np.int64) + np.repeat(starts - offsets, lengths)


def _with_row(chunk: Run, extra: Run) -> Run:
    """``chunk`` with the one row of ``extra`` appended (as line 0)."""
    import pyarrow as pa

    qids = pa.concat_arrays([take(chunk.query_dict, chunk.query_code), extra.query_dict])
    codes, query_dict = encode_queries(qids)
    docs = pa.chunked_array(_chunks_of(chunk.docs) + _chunks_of(extra.docs))
    return replace(chunk, query_code=codes, query_dict=query_dict, docs=docs,
                   score=np.append(chunk.score, 0.0), row_lines=np.append(chunk.row_lines, 0),
                   rank=None if chunk.rank is None else np.append(chunk.rank, 1))


class _QueryFacts:
    """What the checks of :func:`rankwise.diagnostics.run_checks` read about each query,
    gathered chunk by chunk, and the checks computed from it over all queries at once.

    Most checks read per-query facts only (list lengths, grade counts, values, ids): they are
    run as they are, on a :class:`_Summary` of all queries. Three read the ranked rows (ties
    at a cutoff, unjudged documents in the top K, and the tie-order bounds): their per-query
    outcomes are kept per chunk, and the checks are ``run_checks``' own, reading them from
    here (the facts of :class:`rankwise.diagnostics.RowFacts`) and the bounds.
    """

    def __init__(self, measures: list[Measure], conv: Conventions) -> None:
        self.query_ids: _Ids = _Ids()
        self.num_retrieved: list[np.ndarray] = []
        self.ideal_counts: list[np.ndarray] = []
        self.levels: np.ndarray | None = None
        self.num_rows = 0
        self.tie_cutoffs = {cutoff for cutoff, _ in tie_cutoff_groups(measures, conv)}
        self.straddle: dict[int, list[np.ndarray]] = {k: [] for k in self.tie_cutoffs}
        self.change: dict[int, list[np.ndarray]] = {k: [] for k in self.tie_cutoffs}
        self.judged_values: dict[int | None, list[np.ndarray]] = {
            k: [] for k in judged_groups(measures)}
        self.tie_candidates = _tie_candidates(measures, {str(m) for m in measures})
        #: per chunk, its queries whose tie groups mix grades and their lists; kept while all
        #: rows so far are within the check's limit (so at most that many rows), and measured
        #: at the end only if the whole run is
        self.mixed: list[np.ndarray] = []
        self.mixed_lists: list[RankedLists] = []

    def add(self, lists: RankedLists, keep: np.ndarray) -> None:
        """The facts of the queries ``keep`` (indices into ``lists``)."""
        self.query_ids.append(lists.query_ids[keep])
        self.num_retrieved.append(lists.num_retrieved[keep])
        self.ideal_counts.append(lists.ideal_level_counts[keep])
        self.levels = lists.levels
        self.num_rows += int(lists.num_retrieved[keep].sum())
        for cutoff in self.tie_cutoffs:
            straddle, change = straddling_masks(lists, cutoff)
            self.straddle[cutoff].append(straddle[keep])
            self.change[cutoff].append(change[keep])
        for cutoff, parts in self.judged_values.items():
            parts.append(judged_at(lists, cutoff)[keep])
        if self.tie_candidates and self.num_rows <= TIE_CHECK_MAX_ROWS:
            self._add_mixed(lists, keep)
        elif self.mixed_lists:  # the run is over the limit: the check will not be made
            self.mixed_lists.clear()

    def _add_mixed(self, lists: RankedLists, keep: np.ndarray) -> None:
        """The kept queries whose tie groups mix grades, and their lists (as
        ``_tie_sensitivity`` selects them)."""
        mixed = lists.queries_with_mixed_ties()
        chosen = np.zeros(lists.num_queries, dtype=bool)
        chosen[keep] = True
        mixed &= chosen
        self.mixed.append(mixed[keep])
        if mixed.any():
            self.mixed_lists.append(lists.select_queries(np.flatnonzero(mixed)))

    # -------------------------------------------------------------- the checks

    def checks(self, measures: list[Measure], values: dict[str, np.ndarray],
               diag: Diagnostics, conv: Conventions) -> list[Check]:
        """The checks of ``run_checks(lists, measures, values)`` over all queries, in its
        order."""
        from .diagnostics import combine_checks, list_checks

        lists = _Summary(conv, self.levels, diag, self.query_ids,
                         _concat(self.num_retrieved, dtype=np.int64),
                         _concat_rows(self.ideal_counts, 0 if self.levels is None
                                      else len(self.levels)), self.num_rows)
        listed = list_checks(lists, measures, self)
        return combine_checks(lists, measures, values, listed,
                              self._tie_bounds(lists, values))[0]

    def straddling(self, cutoff: int) -> tuple[np.ndarray, np.ndarray]:
        """Per query: a tie straddles rank ``cutoff``; and its documents differ in grade (as
        :meth:`rankwise.diagnostics.RowFacts.straddling`)."""
        return (_concat(self.straddle[cutoff], dtype=bool),
                _concat(self.change[cutoff], dtype=bool))

    def judged(self, cutoff: int | None) -> np.ndarray:
        """Per query: Judged@``cutoff`` (as :meth:`rankwise.diagnostics.RowFacts.judged`)."""
        return _concat(self.judged_values[cutoff])

    def _tie_bounds(self, lists: _Summary, values: dict[str, np.ndarray]):
        """The tie-order check's bounds, computed once on the kept mixed queries' lists
        stacked (they are kept only while the run is within the check's row limit)."""
        from .diagnostics import TieBounds
        from .measures.expected import tie_bounds

        bounds = {}
        if self.mixed_lists and lists.num_rows <= TIE_CHECK_MAX_ROWS:
            stacked = stack_lists(self.mixed_lists)
            bounds = {str(m): tie_bounds(m, stacked)
                      for m in _tie_candidates(self.tie_candidates, values)}
        return TieBounds(_concat(self.mixed, dtype=bool), bounds)


@dataclass
class _Summary:
    """All queries of a streamed run as the per-query checks of
    :mod:`rankwise.diagnostics` read a :class:`~rankwise.core.ranked.RankedLists`: ids, list
    lengths, judgment counts per grade level, conventions and diagnostics (no rows)."""

    conventions: Conventions
    levels: np.ndarray
    diagnostics: Diagnostics
    query_ids: _Ids
    num_retrieved: np.ndarray
    ideal_level_counts: np.ndarray
    num_rows: int

    @property
    def num_queries(self) -> int:
        return len(self.num_retrieved)

    @property
    def max_grade(self) -> float:
        return float(self.levels[-1]) if len(self.levels) else 0.0

    def num_relevant(self, threshold: float) -> np.ndarray:
        return self.ideal_level_counts[:, self.levels >= threshold].sum(axis=1)

    def num_judged_nonrelevant(self, threshold: float) -> np.ndarray:
        return self.ideal_level_counts[:, self.levels < threshold].sum(axis=1)


class _Ids:
    """Query ids kept as Arrow strings (a few bytes each), indexed like the numpy object
    array of a RankedLists."""

    def __init__(self) -> None:
        self.parts: list = []

    def append(self, ids: np.ndarray) -> None:
        self.parts.append(string_array(ids.tolist()))

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts)

    def __getitem__(self, index) -> np.ndarray:
        import pyarrow as pa

        at = np.arange(len(self))[index]
        return np.asarray(take(pa.chunked_array(self.parts, type=pa.string()),
                               np.atleast_1d(at)).to_pylist(), dtype=object)

    def all(self) -> np.ndarray:
        import pyarrow as pa

        return np.asarray(pa.chunked_array(self.parts, type=pa.string()).to_pylist(),
                          dtype=object)


def _concat_rows(parts: list[np.ndarray], width: int) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros((0, width), dtype=np.int64)


# ---------------------------------------------------------------------------- query order


class _SeenQueries:
    """The queries met so far and the line where each began: a query met again after its
    lines ended means the run is not grouped by query.

    Judged queries are found among the judgments' query ids by fingerprint (then verified on
    the strings); queries only in the run are kept by id.
    """

    def __init__(self, qrels) -> None:
        self.qrels = qrels
        fp = fingerprints(qrels.query_dict)
        self.order = np.argsort(fp, kind="stable")
        self.sorted_fp = fp[self.order]
        self.exact = bool((self.sorted_fp[1:] == self.sorted_fp[:-1]).any())
        self.judged_first_line = np.full(qrels.num_queries, -1, dtype=np.int64)
        self.other_first_line: dict[str, int] = {}

    def codes(self, query_dict) -> np.ndarray:
        """The judgments' code of each id (-1 for ids not judged)."""
        if len(self.sorted_fp) == 0:
            return np.full(len(query_dict), -1, dtype=np.int64)
        if not self.exact:
            fp = fingerprints(query_dict)
            at = np.minimum(np.searchsorted(self.sorted_fp, fp), len(self.sorted_fp) - 1)
            found = self.sorted_fp[at] == fp
            codes = np.where(found, self.order[at], -1)
            hit = np.flatnonzero(found)
            if not len(hit) or all_equal(take(query_dict, hit),
                                         take(self.qrels.query_dict, codes[hit])):
                return codes
        return index_in(query_dict, self.qrels.query_dict)

    def add(self, chunk: Run) -> np.ndarray:
        """Record the chunk's queries; raise if one of them was met before. Returns the
        judgments' code of each of the chunk's queries (-1: not judged)."""
        starts = starts_of_runs(chunk.query_code)
        block_codes = chunk.query_code[starts]
        lines = chunk.row_lines
        if len(starts) > chunk.num_queries:  # a query reappears inside the chunk
            _, first_block = np.unique(block_codes, return_index=True)
            again = np.ones(len(starts), dtype=bool)
            again[first_block] = False
            block = int(np.flatnonzero(again)[0])
            code = block_codes[block]
            earlier = int(np.flatnonzero(block_codes[:block] == code)[0])
            end = starts[earlier + 1] - 1
            raise _regrouped(chunk, chunk.query_dict[int(code)].as_py(),
                             int(lines[starts[block]]), int(lines[starts[earlier]]),
                             int(lines[end]))
        first_line = np.empty(chunk.num_queries, dtype=np.int64)
        first_line[block_codes] = lines[starts]
        codes = self.codes(chunk.query_dict)
        judged = np.flatnonzero(codes >= 0)
        before = self.judged_first_line[codes[judged]]
        if (before >= 0).any():
            i = judged[int(np.flatnonzero(before >= 0)[0])]
            raise _regrouped(chunk, chunk.query_dict[int(i)].as_py(), int(first_line[i]),
                             int(self.judged_first_line[codes[i]]))
        self.judged_first_line[codes[judged]] = first_line[judged]
        others = np.flatnonzero(codes < 0)
        if len(others):
            ids = take(chunk.query_dict, others).to_pylist()
            for qid, line in zip(ids, first_line[others].tolist()):
                if qid in self.other_first_line:
                    raise _regrouped(chunk, qid, line, self.other_first_line[qid])
                self.other_first_line[qid] = line
        return codes


class NotGroupedError(InputError):
    """A query's rows reappear after other queries: the run cannot be streamed (it can be
    evaluated in memory)."""


def _regrouped(run: Run, qid: str, line: int, first: int,
               end: int | None = None) -> NotGroupedError:
    word = "row" if run.row_unit == "row" else "line"
    ended = f" to {word} {end}" if end is not None else ""
    how = ("e.g. pyarrow.parquet.write_table(table.sort_by('query'), path)"
           if word == "row" else "e.g. sort -s -k1,1 run.txt > sorted.txt")
    return NotGroupedError(
        f"query {qid!r} appears again after other queries (its {word}s began at {word} "
        f"{first}{ended}): streaming evaluation needs each query's {word}s together; sort the "
        f"run by query ({how}; the order of queries does not matter) or evaluate it in "
        "memory (rankwise.evaluate, or rankwise evaluate without --stream)",
        source=run.source, line=line, value=qid, unit=run.row_unit)


# ---------------------------------------------------------------------------- reading


@dataclass
class _Rows:
    """Parsed run rows: query and doc ids (Arrow), score, rank (None: no integer rank
    column), and where each row is in the file: its 1-based line (text) or 0-based row
    (Parquet, ``unit="row"``)."""

    qid: Any
    doc: Any
    score: np.ndarray
    rank: np.ndarray | None
    line: np.ndarray
    unit: str = "line"

    def __len__(self) -> int:
        return len(self.score)

    def head(self, n: int) -> _Rows:
        return _Rows(self.qid.slice(0, n), self.doc.slice(0, n), self.score[:n],
                     None if self.rank is None else self.rank[:n], self.line[:n], self.unit)

    def tail(self, n: int) -> _Rows:
        """The rows from ``n`` on, copied (so that the block they came from can be freed)."""
        import pyarrow as pa

        rows = indices(np.arange(n, len(self)))
        return _Rows(pa.chunked_array([take(self.qid, rows).combine_chunks()]),
                     pa.chunked_array([take(self.doc, rows).combine_chunks()]),
                     self.score[n:].copy(), None if self.rank is None else self.rank[n:].copy(),
                     self.line[n:].copy(), self.unit)

    def then(self, other: _Rows) -> _Rows:
        import pyarrow as pa

        rank = None if self.rank is None or other.rank is None else \
            np.concatenate([self.rank, other.rank])
        return _Rows(pa.chunked_array(_chunks_of(self.qid) + _chunks_of(other.qid)),
                     pa.chunked_array(_chunks_of(self.doc) + _chunks_of(other.doc)),
                     np.concatenate([self.score, other.score]), rank,
                     np.concatenate([self.line, other.line]), self.unit)

    def last_query_start(self) -> int:
        """The first row of the trailing run of rows with the last row's query id."""
        same = to_numpy(compute("equal", self.qid, self.qid[len(self) - 1]), bool)
        other = np.flatnonzero(~same)
        return int(other[-1]) + 1 if len(other) else 0

    def to_run(self, source: str, name: str) -> Run:
        codes, query_dict = encode_queries(self.qid)
        run = Run(query_code=codes, query_dict=query_dict, docs=self.doc, source=source,
                  row_lines=self.line, row_unit=self.unit, score=self.score, name=name,
                  rank=self.rank)
        check_finite_scores(run)
        return run


class _RunReader:
    """Chunks of whole queries from a TREC run file: blocks of text read and parsed in a
    second thread, the last (maybe unfinished) query of each carried over to the next."""

    def __init__(self, path: str, chunk_bytes: int) -> None:
        self.path = path
        self.chunk_bytes = chunk_bytes
        self.non_blank = False

    def __iter__(self) -> Iterator[_Rows]:
        parsed = (self._parse(*block) for block in self._blocks())
        return _prefetched(rows for rows in parsed if len(rows))

    def no_lines_error(self) -> InputError:
        if self.non_blank:
            return InputError("no run lines: the file holds only blank or comment lines",
                              source=self.path)
        return InputError("empty file", source=self.path)

    def _blocks(self) -> Iterator[tuple[memoryview, int]]:
        """Blocks of about ``chunk_bytes`` of text of whole queries, with the number of their
        first line: each cut where the lines of the last query begin, those carried over as
        text (a block of one query grows until another begins; carrying parsed rows instead
        copied every block once more, 1.4 s at 1M queries x 100).

        The blocks are views of one buffer, read into and reused block after block (each is
        parsed into columns of their own before the next is read): a fresh block of text
        per read, joined to the carried text and cut, put three new blocks of memory through
        page faults each time (a 2.8 GB run: 4.6 s of kernel time; 1.2 s reusing one).
        """
        from .io.trec import text_extent

        line = 1
        text_bytes = text_extent(self.path)[0]  # a small file: a buffer of its size
        step = min(self.chunk_bytes, text_bytes + 1) if text_bytes else self.chunk_bytes
        buffer, kept = bytearray(), 0  # kept: bytes carried at the buffer's start
        with _open(self.path) as handle:
            while True:
                if len(buffer) < kept + step:  # grows only for a long query
                    grown = bytearray(max(kept + step, 2 * len(buffer)))
                    grown[:kept] = buffer[:kept]
                    buffer = grown
                one_query = buffer.rfind(b"\n", 0, kept) + 1  # the carried whole lines
                end = kept + self._read_into(handle, memoryview(buffer)[kept:][:step])
                if end == kept:
                    break
                cut = _last_query_start(buffer, buffer.rfind(b"\n", 0, end) + 1, one_query)
                if cut == 0:
                    kept = end
                    continue
                yield memoryview(buffer)[:cut], line
                line += buffer.count(b"\n", 0, cut)
                buffer[:end - cut] = buffer[cut:end]
                kept = end - cut
        if kept:
            rest = bytes(buffer[:kept])
            yield memoryview(rest if rest.endswith(b"\n") else rest + b"\n"), line

    def _read_into(self, handle, target: memoryview) -> int:
        """Fill ``target`` from the file (less only at its end); the bytes read."""
        filled = 0
        while filled < len(target):
            try:
                n = handle.readinto(target[filled:])
            except (EOFError, OSError, zlib.error) as exc:
                raise InputError(f"corrupt or truncated gzip file ({exc})",
                                 source=self.path) from None
            if not n:
                break
            filled += n
        return filled

    def _parse(self, block: memoryview, first_line: int) -> _Rows:
        import pyarrow as pa

        if not self.non_blank and _NON_BLANK.search(block) is not None:
            self.non_blank = True
        if first_line == 1 and b"\x00" in block[:65536].tobytes():
            raise InputError("not a text file (contains NUL bytes)", source=self.path)
        try:
            types = run_column_types()
            table = arrow_parse(pa.py_buffer(block), RUN_FIELDS, types, tuple(types), len(block))
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return self._parse_slowly(block, first_line)
        n = table.num_rows
        return _Rows(table.column("qid"), table.column("docid"),
                     to_numpy(table.column("score"), np.float64),
                     to_numpy(table.column("rank"), np.int32),
                     np.arange(first_line, first_line + n, dtype=np.int64))

    def _parse_slowly(self, block: memoryview, first_line: int) -> _Rows:
        """A block the fast parse refused (tabs, several spaces, comments, blank lines, extra
        fields, a bad line): the in-memory reader reads it, with its errors moved to the
        file's own lines."""
        import pyarrow as pa

        from .io.trec import read_run

        if _DATA_LINE.search(block) is None:  # only blank or comment lines
            empty = pa.chunked_array([], type=pa.string())
            return _Rows(empty, empty, np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64))
        with tempfile.TemporaryDirectory() as folder:
            part = os.path.join(folder, "part.txt")
            with open(part, "wb") as out:
                out.write(block)
            try:
                run = read_run(part)
            except InputError as exc:
                raise InputError(exc.reason, source=self.path,
                                 line=None if exc.line is None else exc.line + first_line - 1,
                                 value=exc.value, unit=exc.unit) from None
        n = len(run)
        lines = run.row_lines if run.row_lines is not None else np.arange(1, n + 1)
        qids = take(run.query_dict, run.query_code)
        return _Rows(pa.chunked_array([qids]), pa.chunked_array(_chunks_of(run.docs)),
                     run.score, run.rank, np.asarray(lines, dtype=np.int64) + first_line - 1)


def _last_query_start(data: bytes, end: int, known: int = 0) -> int:
    """Where the lines of the last query of ``data[:end]`` (whole lines) begin: after the
    last data line whose first field is another query id (blank and comment lines go with
    the lines after them); 0 when every line holds that query. The lines of ``data[:known]``
    are known to hold one query: the walk back stops at the first of them (a query longer
    than many reads is not walked again at every read)."""
    qid = None
    stop = end
    while stop > 0:
        start = data.rfind(b"\n", 0, stop - 1) + 1
        fields = data[start:stop].split(None, 1)
        if fields and not fields[0].startswith(b"#"):
            if stop <= known:  # a carried line: the lines before it hold its query too
                return 0 if qid is None or fields[0] == qid else stop
            if qid is None:
                qid = fields[0]
            elif fields[0] != qid:
                return stop
        stop = start
    return 0


class _ParquetRunReader:
    """Chunks of whole queries from a Parquet run (a file or a folder of files; columns
    ``query``, ``doc``, ``score``, or as named by ``columns``, and optionally ``rank``), read
    batch by batch in a second thread; a batch holds about as many rows as ``chunk_bytes`` of
    TREC text."""

    #: Bytes of a typical TREC run line: ``chunk_bytes`` of text hold that many fewer rows.
    LINE_BYTES = 40

    def __init__(self, path: str, chunk_bytes: int, columns: tuple[str, str, str]) -> None:
        from .io.parquet import parquet_columns

        self.path = path
        self.batch_rows = max(1, chunk_bytes // self.LINE_BYTES)
        self.columns = parquet_columns(path, columns, ("rank",), "run", "score=")

    def __iter__(self) -> Iterator[_Rows]:
        return _whole_queries(_prefetched(self._batches()))

    def no_lines_error(self) -> InputError:
        return InputError("no rows", source=self.path)

    def _batches(self) -> Iterator[_Rows]:
        import pyarrow as pa
        import pyarrow.dataset as ds

        from .io.parquet import rank_values
        from .io.tables import _doc_ids, _numeric, _strings

        first = 0
        try:
            batches = ds.dataset(self.path, format="parquet").to_batches(
                columns=self.columns, batch_size=self.batch_rows)
            query, doc, score = self.columns[:3]
            for batch in batches:
                n = batch.num_rows
                yield _Rows(pa.chunked_array([_strings(batch.column(query), self.path, query)]),
                            pa.chunked_array([_doc_ids(batch.column(doc), self.path)]),
                            _numeric(batch.column(score), self.path, score, "row"),
                            rank_values(batch.column("rank")) if "rank" in self.columns
                            else None, np.arange(first, first + n, dtype=np.int64), "row")
                first += n
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"cannot read as Parquet ({exc})", source=self.path) from None


# ---------------------------------------------------------------------------- in memory

#: Rows per block (whole queries): about the rows of the streaming default's chunk.
BLOCK_ROWS = DEFAULT_CHUNK_BYTES // _ParquetRunReader.LINE_BYTES


def split_judgments(qrels) -> _Judgments:
    """The judgments as :func:`evaluate_in_blocks` takes them (split by query; made once,
    shared by every run evaluated in blocks)."""
    return _Judgments(qrels)


def evaluate_in_blocks(judgments: _Judgments, run: Run, name: str, measures: list[Measure],
                       conv: Conventions, per_query: bool,
                       block_rows: int | None = None) -> SystemResult:
    """One run held in memory (grouped by query), evaluated as :func:`evaluate_stream`
    evaluates a file: block by block of whole queries, merged exactly into the SystemResult
    of one pass, in the memory of one block (each block's temporaries reuse the last's)."""
    stream = _SystemStream(judgments, measures, conv, per_query)
    return stream.evaluate_rows(_run_blocks(run, block_rows or BLOCK_ROWS), run.source, name,
                                lambda: InputError("no rows", source=run.source))


def _run_blocks(run: Run, block_rows: int) -> Iterator[_Rows]:
    """The rows of a run grouped by query as blocks of whole queries (about ``block_rows``
    each), with their query ids as strings, as the readers give them (doc ids as they are)."""
    import pyarrow as pa

    cuts = _block_cuts(starts_of_runs(run.query_code), len(run), block_rows)
    for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        rows = np.arange(a, b)
        yield _Rows(pa.chunked_array(_chunks_of(take(run.query_dict, run.query_code[a:b]))),
                    pa.chunked_array(_chunks_of(run.docs.slice(a, b - a))),
                    run.score[a:b], None if run.rank is None else run.rank[a:b],
                    run.lines_of(rows), run.row_unit)


def _block_cuts(starts: np.ndarray, n: int, step: int) -> np.ndarray:
    """Where blocks of whole queries of about ``step`` rows begin, ``n`` last: a cut falls
    on the first query start (``starts``, ascending) at or past each multiple of ``step``."""
    bounds = np.append(starts, n)
    return distinct(np.concatenate([[0], bounds[np.searchsorted(
        bounds, np.arange(step, n, step))], [n]]))


def _two_at_a_time(work: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
    """``work(item)`` of every item, in order, on two threads (numpy and Arrow release the
    interpreter lock), at most two items in hand: an error is raised when its item's turn
    comes, so the first failing item in order raises, as one at a time would."""
    from collections import deque

    todo = iter(items)
    with ThreadPoolExecutor(max_workers=2) as pool:
        pending = deque(pool.submit(work, item) for _, item in zip(range(2), todo))
        while pending:
            result = pending.popleft().result()
            for item in todo:
                pending.append(pool.submit(work, item))
                break
            yield result
            del result


def _prefetched(items: Iterator[_Rows]) -> Iterator[_Rows]:
    """The items, each next one made (read, parsed) in a second thread while the caller
    works on the current one."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(next, items, None)
        while True:
            item = pending.result()
            if item is None:
                return
            pending = pool.submit(next, items, None)
            yield item


def _whole_queries(parts: Iterable[_Rows]) -> Iterator[_Rows]:
    """The rows regrouped into chunks of whole queries: the last (maybe unfinished) query of
    each part carried over to the next."""
    carry: _Rows | None = None
    for rows in parts:
        if len(rows) == 0:
            continue
        rows = rows if carry is None else carry.then(rows)
        cut = rows.last_query_start()
        if cut == 0:  # one query so far: it may go on in the next part
            carry = rows
            continue
        carry = rows.tail(cut)
        yield rows.head(cut)
        del rows
    if carry is not None and len(carry):
        yield carry


def _open(path: str):
    try:
        with open(path, "rb") as handle:
            head = handle.read(2)
        return gzip.open(path, "rb") if head == _GZIP_MAGIC else open(path, "rb")
    except FileNotFoundError:
        raise InputError("file not found", source=path) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", source=path) from None
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror})", source=path) from None


def _run_name(path: str) -> str:
    """The run's name as the in-memory reader gives it: the tag (sixth field) of the first
    data line within the first 64 KiB of text, else the file name."""
    try:
        with _open(path) as handle:
            head = handle.read(1 << 16)
    except (EOFError, OSError, zlib.error):
        head = b""
    for raw in head.split(b"\n"):
        line = raw.strip()
        if line and not line.startswith(b"#"):
            fields_ = line.decode("utf-8", "replace").split()
            return fields_[5] if len(fields_) > 5 else Path(path).name
    return Path(path).name


# ---------------------------------------------------------------------------- helpers


def integer_docs(docs) -> bool:
    """Whether a column of doc ids (as the readers make them) holds integers."""
    import pyarrow as pa

    return pa.types.is_integer(docs.type)


def _chunks_of(values) -> list:
    return list(values.chunks) if hasattr(values, "chunks") else [values]


def _extend(examples: list[str], more: list[str]) -> None:
    examples.extend(more[:_EXAMPLES - len(examples)])


def _concat(parts: list[np.ndarray], dtype=np.float64) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


__all__ = ["DEFAULT_CHUNK_BYTES", "evaluate_stream"]
