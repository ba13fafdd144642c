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
query, or evaluate it in memory). Other errors are those of :func:`rankwise.evaluate`, in its
order: a problem met evaluating a chunk (conflicting judgments, a document ranked twice) is
raised once the rest of the run is read, after any bad line of it, as one pass reads the run
whole before it ranks.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ..conventions import Conventions, resolve
from ..core.join import nothing_ranked
from ..core.memory import large_arrays
from ..errors import InputError
from ..io.frames import to_qrels
from ..io.parquet import is_parquet_path, run_file_name
from ..io.tables import Run, numbered_names
from ..io.trec import is_pipe
from ..measures import Measure, parse_measures
from ..results import Result, SystemResult
from .judgments import Judgments
from .order import NotGroupedError
from .readers import ParquetRunReader, file_run_name, run_blocks
from .system import SystemStream

#: Default text per chunk: large enough that the fixed costs of a chunk (a pass over its
#: queries, the thread hand-over) stay small, small enough for a few hundred MB of memory.
DEFAULT_CHUNK_BYTES = 64 << 20


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
    parsed = parse_measures(measures, conventions)
    if not isinstance(chunk_bytes, int) or isinstance(chunk_bytes, bool) or chunk_bytes < 1:
        raise InputError("chunk_bytes must be a positive number of bytes", source="chunk_bytes",
                         value=repr(chunk_bytes))
    runs = _run_paths(run)
    with large_arrays():
        judgments = Judgments(to_qrels(qrels))
        systems = {}
        for name, path in runs:
            stream = SystemStream(judgments, parsed, conv, per_query)
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
        raise InputError("streaming evaluation reads run files (TREC text or Parquet): "
                         "expected a path, a list of paths or {name: path}; evaluate "
                         "in-memory runs with rankwise.evaluate", source="run",
                         value=type(run).__name__)
    if not items:
        raise InputError("no run given", source="run")
    out: list[tuple[str | None, str]] = []
    for name, path in items:
        if not isinstance(path, (str, os.PathLike)):
            raise InputError("streaming evaluation reads run files (TREC text or "
                             "Parquet): expected a path", source="run",
                             value=type(path).__name__)
        if is_pipe(path):
            raise InputError("a pipe cannot be read chunk by chunk (it can be read only once): "
                             "write it to a file, or evaluate it in memory (without --stream)",
                             source=str(path))
        out.append((run_name(path) if name is None else name, str(path)))
    return list(numbered_names(out))


def run_name(path: str | os.PathLike[str]) -> str:
    """A run file's name as the in-memory readers give it (the TREC tag, or the Parquet file's
    name)."""
    return run_file_name(path) if is_parquet_path(path) else file_run_name(str(path))


def evaluate_file(judgments: Judgments, path: str, name: str, measures: list[Measure],
                  conv: Conventions, per_query: bool,
                  columns: tuple[str, str, str]) -> SystemResult:
    """One run file (TREC text, or Parquet with the query, doc and score ``columns``)
    evaluated as :func:`evaluate_stream` evaluates it, with the judgments of
    :func:`split_judgments`. Raises :class:`NotGroupedError` when the file is not grouped by
    query."""
    return SystemStream(judgments, measures, conv, per_query).evaluate(
        str(path), name, DEFAULT_CHUNK_BYTES, columns)


#: Rows per block (whole queries): about the rows of the streaming default's chunk.
BLOCK_ROWS = DEFAULT_CHUNK_BYTES // ParquetRunReader.LINE_BYTES


def split_judgments(qrels) -> Judgments:
    """The judgments as :func:`evaluate_in_blocks` takes them (split by query; made once,
    shared by every run evaluated in blocks)."""
    return Judgments(qrels)


def evaluate_in_blocks(judgments: Judgments, run: Run, name: str, measures: list[Measure],
                       conv: Conventions, per_query: bool,
                       block_rows: int | None = None) -> SystemResult:
    """One run held in memory (grouped by query), evaluated as :func:`evaluate_stream`
    evaluates a file: block by block of whole queries, merged exactly into the SystemResult
    of one pass, in the memory of one block (each block's temporaries reuse the last's)."""
    stream = SystemStream(judgments, measures, conv, per_query)
    return stream.evaluate_rows(run_blocks(run, block_rows or BLOCK_ROWS), run.source, name,
                                lambda: nothing_ranked(run.source), run.skipped_files)


__all__ = ["DEFAULT_CHUNK_BYTES", "NotGroupedError", "evaluate_stream"]
