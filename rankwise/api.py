"""The public entry point: :func:`evaluate`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .conventions import Conventions, resolve
from .core.memory import large_arrays
from .core.judgments import index_judgments
from .core.ranked import THREAD_MIN_ROWS, rank
from .core.together import Ranked, rank_together
from .diagnostics import Check, combine_checks, value_free_checks
from .errors import InputError
from .io.frames import column_names, is_nested_run, to_qrels, to_run
from .io.tables import Run, numbered_names
from .measures import Measure, parse_measures
from .parts import Parts
from .results import Result, SystemResult, aggregate

#: The column names of a run given as a table or Parquet (see :func:`evaluate`).
DEFAULT_RUN_COLUMNS = ("query", "doc", "score")


def evaluate(qrels: Any, run: Any, measures: str | Measure | Sequence[str | Measure],
             conventions: Conventions | str | None = None, per_query: bool = False,
             query: str = "query", doc: str = "doc", score: str = "score",
             **convention_overrides: Any) -> Result:
    """Evaluate one or several runs against judgments.

    Parameters
    ----------
    qrels : path, DataFrame, Arrow table, dict or Qrels
        The judgments: a TREC qrels file (plain or ``.gz``), a frame with columns ``query``,
        ``doc``, ``relevance`` (pandas or polars, a polars LazyFrame, an Arrow table or record
        batch), or ``{query: {doc: grade}}``.
    run : path, DataFrame, Arrow table, dict, Run, or a mapping/list of these
        The ranking(s): a TREC run file, a frame with columns ``query``, ``doc``, ``score``, or
        ``{query: {doc: score}}``; several as ``{name: run}`` or a list.
    measures : str, Measure or sequence of them
        Names in any dialect: ``"nDCG@10"``, ``"ndcg_cut_10"``, ``"ndcg@10"``, ``"official"``.
    conventions : Conventions or profile name, optional
        Defaults to trec_eval's. A profile name (``"pytrec_eval"``, ``"sklearn"``, ...; see
        ``rankwise.conventions.PROFILES``) also accepts that peer's measure names. Keyword
        overrides (``relevance_threshold=2``, ``missing_queries="zero"``, ``gain="exponential"``,
        ``ties="expected"``, ...: every field of :class:`Conventions`) apply on top.
    per_query : bool
        Keep the per-query values (``Result.per_query()``, ``Result.to_frame()``).
    query, doc, score : str
        The column names of runs given as Parquet paths, DataFrames or Arrow tables, as
        :func:`rankwise.to_run` takes them (recommender output: ``query="user",
        doc="item"``); name the judgments' columns with :func:`rankwise.to_qrels`.

    Returns
    -------
    Result

    Notes
    -----
    A run too large for one pass in the memory left (one pass needs about 120 bytes a row:
    when that is more than the memory available, or from 2^25 rows on more than half of it)
    is evaluated chunk by chunk of whole queries through :mod:`rankwise.stream`'s exact
    merge, with the same result: a run file grouped by query (TREC text, gzip or Parquet)
    is streamed from the file without being read whole, a run in memory is cut into blocks.
    A run file whose queries are not grouped is read whole.

    Examples
    --------
    >>> import rankwise
    >>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    >>> run = {"q1": {"d1": 0.9, "d2": 0.8}, "q2": {"d4": 0.5, "d3": 0.4}}
    >>> result = rankwise.evaluate(qrels, run, ["P@1", "RR"], per_query=True)
    >>> result.mean("P@1"), result.mean("RR")
    (0.5, 0.75)
    >>> result.per_query()["q2"]
    {'P@1': 0.0, 'RR': 0.5}
    """
    conv = resolve(conventions, **convention_overrides)
    parsed = parse_measures(measures, conventions)
    columns = column_names(query=query, doc=doc, score=score)
    with large_arrays():
        return _evaluate(qrels, run, parsed, conv, per_query, columns)


def _evaluate(qrels: Any, run: Any, parsed: list[Measure], conv: Conventions,
              per_query: bool, columns: tuple[str, str, str] = DEFAULT_RUN_COLUMNS) -> Result:
    from concurrent.futures import ThreadPoolExecutor  # here: importing it costs 6-10 ms

    judged = to_qrels(qrels)
    sources = _run_sources(run)
    huge = [_streams_from_file(source) for _, source in sources]
    with ThreadPoolExecutor(max_workers=1) as pool:
        # the judgments are indexed in a second thread while the runs are read and the first
        # run's doc ids are fingerprinted (numpy and Arrow release the interpreter lock); not
        # before a run needs it when every run is expected to go chunk by chunk (which does
        # not use that index: 10M judgments take 1.5 s to index)
        pending = [] if all(h or _blocks_expected(s) for h, (_, s) in zip(huge, sources)) \
            else [pool.submit(index_judgments, judged)]

        def judgments():
            if not pending:
                pending.append(pool.submit(index_judgments, judged))
            return pending[0]

        systems = {}
        blocks = None  # the judgments split by query, once a run is streamed or in blocks
        with closing(_iter_runs(sources, huge, columns)) as runs:  # closed early on an error
            for batch in _batches(runs):
                if len(batch) == 1:
                    name, one = batch[0]
                    if isinstance(one, _RunFile):  # too large for one pass: streamed
                        from .stream import NotGroupedError, evaluate_file, split_judgments

                        blocks = blocks or split_judgments(judged)
                        try:
                            systems[name] = evaluate_file(blocks, one.path, name, parsed,
                                                          conv, per_query, columns)
                            continue
                        except NotGroupedError:  # it can only be evaluated whole
                            blocks = None
                            one = to_run(one.path, name, *columns)
                    if _in_blocks(one):  # a huge run: block by block, in reused memory
                        from .stream import evaluate_in_blocks, split_judgments

                        blocks = blocks or split_judgments(judged)
                        systems[name] = evaluate_in_blocks(blocks, one, name, parsed, conv,
                                                           per_query)
                    else:
                        systems[name] = _summarise(name, rank(judgments(), one, conv),
                                                   parsed, per_query)
                    continue
                ranked = rank_together(judgments(), [one for _, one in batch], conv)
                for (name, _), lists, (values, checks) in zip(
                        batch, ranked.lists, _stacked_values(ranked, parsed)):
                    systems[name] = _summarise(name, lists, parsed, per_query, values, checks)
        if not systems:
            raise InputError("no run given", source="run")
    return Result([str(m) for m in parsed], systems, conv, {str(m): _kind(m) for m in parsed})


#: Runs under this many rows are evaluated together, up to STACK_ROWS rows at a time: ranked
#: as one table (``core.together``), their lists stacked and each measure computed once for
#: all of them (see ``_stacked_values``); 1 << 16 and 1 << 17 were slower, 1 << 19 no faster.
STACK_RUN_MAX_ROWS = THREAD_MIN_ROWS
STACK_ROWS = 1 << 18  # 1 << 20 was no faster and held 130 MB more (1,000 runs of 5,000 rows)


#: A run too large for one pass is evaluated chunk by chunk of whole queries, through the
#: streaming merge: a run file grouped by query is streamed from the file
#: (``stream.evaluate_file``: 1M queries x 100 from TREC text, 31.7 s and 4.3 GB peak, where
#: one pass took 37.2 s and 14.4 GB), a run already in memory is cut into blocks
#: (``stream.evaluate_in_blocks``). Too large: one pass would need more memory than the
#: system has left, or from this many rows on more than half of it, when the kernel
#: reclaims its page cache page by page (100M rows in memory on a 24 GB machine: one pass
#: 22.0-26.6 s, two thirds of its CPU time in the kernel, peak 11.1 GB; in blocks 18.5 s,
#: peak 6.1 GB). Chunks do more work per row (each chunk's queries encoded, its judgments
#: indexed), so smaller runs take the one pass wherever it fits (40M rows in memory:
#: 2.6-2.9 s against 3.6-4.0 s in blocks).
BLOCKWISE_MIN_ROWS = 1 << 25
#: Peak memory of one pass per run row (11.1 GB at 100M rows with integer doc ids, 14.4 GB
#: from TREC text), for that decision.
ONE_PASS_BYTES_PER_ROW = 120


def _too_large_for_one_pass(rows: int, need: int | None = None) -> bool:
    """Whether one pass over ``rows`` run rows (needing ``need`` bytes, by default
    ONE_PASS_BYTES_PER_ROW a row) would need more than all of the memory available, or more
    than half of it from BLOCKWISE_MIN_ROWS rows on; never where the memory is unknown, and
    the system's figures are not read for needs too small to matter."""
    from .core.memory import ALWAYS_FITS_BYTES, available_bytes

    need = rows * ONE_PASS_BYTES_PER_ROW if need is None else need
    if need <= ALWAYS_FITS_BYTES:
        return False
    available = available_bytes()
    return available is not None and (
        need > available or (rows >= BLOCKWISE_MIN_ROWS and need > available // 2))


def _in_blocks(run: Run) -> bool:
    """Whether ``run`` (in memory) is evaluated block by block: too large for one pass, each
    query's rows together, and no query given without rows."""
    from .core.segments import starts_of_runs

    if run.empty_queries or not _too_large_for_one_pass(len(run)):
        return False
    return len(starts_of_runs(run.query_code)) == run.num_queries


def _blocks_expected(source: Any) -> bool:
    """Whether a run given in memory (a table, frame or Run) has rows enough to be evaluated
    in blocks (see ``_in_blocks``, which decides)."""
    import os

    if isinstance(source, (str, os.PathLike, Mapping)) or not hasattr(source, "__len__"):
        return False
    return _too_large_for_one_pass(len(source))


def _streams_from_file(source: Any) -> bool:
    """Whether ``source`` is a run file (TREC text, gzip or Parquet) too large for one pass,
    to be streamed from the file. Its size on disk rules out small files unopened (every
    row takes at least a byte); then Parquet's rows are read from its metadata, and a text
    file's rows are estimated (its size over the mean length of its first lines) and its
    need taken as ``memory.check_fits`` takes it (BYTES_PER_INPUT_BYTE times its text)."""
    import os

    from .core.memory import ALWAYS_FITS_BYTES, BYTES_PER_INPUT_BYTE
    from .io.parquet import is_parquet_path, parquet_files

    if not isinstance(source, (str, os.PathLike)):
        return False
    path = str(source)
    try:  # a folder: the files its reader reads
        size = os.path.getsize(path) if not os.path.isdir(path) else sum(
            os.path.getsize(file) for file in parquet_files(path))
    except OSError:
        return False  # the reader says why
    if size * ONE_PASS_BYTES_PER_ROW <= ALWAYS_FITS_BYTES:
        return False
    if is_parquet_path(path):
        from .io.parquet import parquet_rows

        return _too_large_for_one_pass(parquet_rows(path))
    from .io.trec import text_extent

    text_bytes, lines = text_extent(path)
    return _too_large_for_one_pass(lines, max(lines * ONE_PASS_BYTES_PER_ROW,
                                              text_bytes * BYTES_PER_INPUT_BYTE))


@dataclass(frozen=True)
class _RunFile:
    """A run file to be streamed (see ``_streams_from_file``) rather than read whole."""

    path: str
    name: str
    rows: int = BLOCKWISE_MIN_ROWS  # at least: evaluated alone (``_batches``, ``_read_runs``)

    def __len__(self) -> int:
        return self.rows


def _batches(runs: Iterable[tuple[str, Run]]) -> Iterator[list[tuple[str, Run]]]:
    """Consecutive runs grouped for evaluation, as they come: small runs together (at most
    STACK_ROWS rows in all), every other run alone; the order is kept."""
    batch: list[tuple[str, Run]] = []
    rows = 0
    for item in runs:
        size = len(item[1])
        if batch and (size >= STACK_RUN_MAX_ROWS or rows + size > STACK_ROWS):
            yield batch
            batch, rows = [], 0
        batch.append(item)
        rows += size
        if size >= STACK_RUN_MAX_ROWS:  # a large run goes alone
            yield batch
            batch, rows = [], 0
    if batch:
        yield batch


def _stacked_values(ranked: Ranked, parsed: list[Measure]
                    ) -> list[tuple[dict[str, np.ndarray], list[Check]]]:
    """Per system, every measure's per-query values and the checks, computed once on the
    systems' lists stacked (many small runs: the cost of a measure or a check is then mostly
    per call) and split back; bit-identical to computing them run by run."""
    edges = np.cumsum([0] + [lists.num_queries for lists in ranked.lists]).tolist()
    parts = Parts(edges, [lists.num_rows for lists in ranked.lists])
    values, checks = _values_and_checks(ranked.stacked, parsed, parts,
                                        [lists.diagnostics for lists in ranked.lists])
    return [({k: v[start:stop] for k, v in values.items()}, found)
            for start, stop, found in zip(edges[:-1], edges[1:], checks)]


def _summarise(name: str, lists, parsed: list[Measure], per_query: bool,
               values: dict[str, np.ndarray] | None = None, checks: list[Check] | None = None
               ) -> SystemResult:
    """Every measure of one ranked run: aggregates, per-query values, diagnostics, warnings
    (``values`` and ``checks``: already computed by ``_stacked_values``)."""
    if values is None or checks is None:
        values, (checks,) = _values_and_checks(lists, parsed)
    order = np.argsort(lists.query_ids.astype(str), kind="stable") if per_query else None
    return SystemResult(
        name=name,
        aggregates={k: aggregate(v, _kind(m), m.skips_undefined(lists.conventions))
                    for (k, v), m in zip(values.items(), parsed)},
        diagnostics=lists.diagnostics.to_dict(),
        query_ids=lists.query_ids[order] if per_query else None,
        values={k: v[order] for k, v in values.items()} if per_query else None,
        undefined=_undefined_counts(values),
        trec_names=dict(_trec_names(tuple(parsed))),
        warnings=[c.message for c in checks if c.severity == "warning"],
        checks=[c.to_dict() for c in checks])


def _undefined_counts(values: dict[str, np.ndarray]) -> dict[str, int]:
    """Per measure with undefined (NaN) values, how many: counted only where the sum is NaN,
    as a NaN anywhere makes it (one pass per measure in the usual case, nothing undefined)."""
    counts = {}
    for name, v in values.items():
        with np.errstate(over="ignore", invalid="ignore"):  # inf - inf: NaN, counted below
            total = np.add.reduce(v)
        if np.isnan(total):
            count = int(np.count_nonzero(np.isnan(v)))
            if count:
                counts[name] = count
    return counts


@lru_cache(maxsize=16)
def _trec_names(parsed: tuple[Measure, ...]) -> dict[str, str]:
    """Each measure's trec_eval name (the same for every system: worked out once)."""
    return {str(m): m.trec_name() for m in parsed}


def _values_and_checks(lists, parsed: list[Measure], parts: Parts | None = None,
                       diagnostics: list | None = None
                       ) -> tuple[dict[str, np.ndarray], list[list[Check]]]:
    """Every measure's per-query values and each system's diagnostic checks (``parts``,
    ``diagnostics``: the systems stacked in ``lists``, by default one). On large lists what
    the checks work out without the values (``diagnostics.value_free_checks``) runs in a
    second thread while the measures are computed (numpy releases the interpreter lock):
    10k x 100, 0.36 -> 0.35 s. Measures side by side were measured slower: they share the
    lists' cached columns and memory bandwidth."""
    if lists.num_rows < THREAD_MIN_ROWS:
        values = {str(m): m.compute(lists) for m in parsed}
        listed, bounds = value_free_checks(lists, parsed, parts, diagnostics)
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=1) as pool:
            pending = pool.submit(value_free_checks, lists, parsed, parts, diagnostics)
            values = {str(m): m.compute(lists) for m in parsed}
            listed, bounds = pending.result()
    return values, combine_checks(lists, parsed, values, listed, bounds, parts)


#: Run files read ahead of the one being evaluated, in two threads, so that reading overlaps
#: the evaluation: at least READ_AHEAD reading units (a file, or a group of small files), and
#: more while the files ahead hold at most READ_AHEAD_BYTES together (up to READ_AHEAD_MAX
#: units), so that a batch of small runs is read while the one before is evaluated (two
#: files ahead were read in a millisecond, then the readers waited for the evaluation: 1,000
#: runs of 5,000 lines 2.30 -> 2.12 s); after a large run (one evaluated alone) only one, so
#: that at most two large runs are in memory however many are given (reading every run
#: first held all of them).
READ_AHEAD = 2
READ_AHEAD_MAX = 64
READ_AHEAD_BYTES = 32 << 20


def _read_runs(sources: list, names: list, huge: list[bool],
               columns: tuple[str, str, str] = DEFAULT_RUN_COLUMNS) -> Iterator[Run | _RunFile]:
    """``to_run`` of every source in the given order (``columns``: the query, doc and score
    column names; a ``_RunFile`` for the sources ``huge``, to be streamed), read ahead of
    the caller in two threads (pyarrow parses files without the interpreter lock; how many
    ahead: see READ_AHEAD), small TREC files several at a time (see ``_reading_units``); a
    bad one raises its error when its turn comes, and an early stop leaves the rest unread."""
    items = [(r, n, h, columns) for r, n, h in zip(sources, names, huge)]
    if len(items) < 2:
        yield from (_read(*item) for item in items)
        return
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    sizes = [_file_bytes(source) for source in sources]
    units = _reading_units(sources, huge, sizes)
    unit_bytes = [sum(sizes[i] for i in unit) for unit in units]
    position = 0  # the next unit to read
    with ThreadPoolExecutor(max_workers=2) as pool:
        ahead: deque = deque()

        def top_up(limit: int, budget: int) -> None:
            nonlocal position
            held = sum(unit_bytes[u] for u, _ in ahead)
            while position < len(units) and len(ahead) < limit and (
                    len(ahead) < READ_AHEAD or held + unit_bytes[position] <= budget):
                held += unit_bytes[position]
                unit = [items[i] for i in units[position]]
                ahead.append((position, pool.submit(_read_unit, unit)))
                position += 1

        top_up(READ_AHEAD_MAX, READ_AHEAD_BYTES)
        while ahead:
            for run in ahead.popleft()[1].result():
                if isinstance(run, Exception):
                    raise run
                if len(run) < STACK_RUN_MAX_ROWS:
                    top_up(READ_AHEAD_MAX, READ_AHEAD_BYTES)
                else:
                    top_up(1, 0)
                yield run


#: Run files of at most GROUP_FILE_BYTES are read GROUP_BYTES at a time, as one text
#: (``io.trec.read_runs``; 1,000 runs of 5,000 lines, files read one by one against 25 at
#: once: 0.88 against 0.33 ms a file to parse and encode).
GROUP_FILE_BYTES = 1 << 20
GROUP_BYTES = 4 << 20


def _reading_units(sources: list, huge: list[bool], sizes: list[int]) -> list[list[int]]:
    """The sources' positions cut into what one reader reads at a time: consecutive small
    TREC text files together (up to GROUP_BYTES), every other source alone."""
    from .io.parquet import is_parquet_path

    units: list[list[int]] = []
    group_bytes = GROUP_BYTES + 1  # no group open
    for i, (source, big, size) in enumerate(zip(sources, huge, sizes)):
        # (only files have a size: a folder, a table or a dict counts as over the limits)
        if big or size > GROUP_FILE_BYTES or is_parquet_path(source):
            units.append([i])
            group_bytes = GROUP_BYTES + 1
        elif group_bytes + size > GROUP_BYTES:
            units.append([i])
            group_bytes = size
        else:
            units[-1].append(i)
            group_bytes += size
    return units


def _read_unit(items: list) -> list:
    """The runs of a reading unit (see ``_reading_units``), in order, up to the first that
    cannot be read, whose error is returned in its place (and raised in its turn)."""
    if len(items) > 1:
        from .io.trec import read_runs

        runs = read_runs([item[0] for item in items], [item[1] for item in items])
        if runs is not None:
            return runs
    out: list = []
    for item in items:  # one by one: each as it is read alone, errors included
        try:
            out.append(_read(*item))
        except Exception as exc:  # raised when its turn comes
            out.append(exc)
            break
    return out


def _file_bytes(source: Any) -> int:
    """The size of a run file on disk, for the read-ahead budget; a source that is not a
    file (or cannot be seen) counts as over the budget, so that only READ_AHEAD of it are
    read ahead."""
    import os

    if isinstance(source, (str, os.PathLike)):
        try:
            if os.path.isfile(source):
                return os.path.getsize(source)
        except OSError:
            pass
    return READ_AHEAD_BYTES + 1


def _read(source: Any, name: str | None, huge: bool,
          columns: tuple[str, str, str]) -> Run | _RunFile:
    if huge:
        from .stream import run_name

        return _RunFile(str(source), name if name is not None else run_name(source))
    return to_run(source, name, *columns)


def _kind(measure: Measure) -> str:
    return measure.spec.aggregate


def _runs(run: Any) -> list[tuple[str, Run]]:
    """Normalise the ``run`` argument to ``[(name, Run), ...]`` with unique names."""
    sources = _run_sources(run)
    return list(_iter_runs(sources, [False] * len(sources)))


def _run_sources(run: Any) -> list[tuple[str | None, Any]]:
    """The ``run`` argument as ``[(name or None: the run's own, source), ...]``, unread."""
    if isinstance(run, Mapping) and run and not is_nested_run(run):
        return [(str(name), r) for name, r in run.items()]
    if isinstance(run, (list, tuple)):
        if not run:
            raise InputError("no run given", source="run")
        return [(None, r) for r in run]
    return [(None, run)]


def _iter_runs(sources: list[tuple[str | None, Any]], huge: list[bool],
               columns: tuple[str, str, str] = DEFAULT_RUN_COLUMNS
               ) -> Iterator[tuple[str, Run | _RunFile]]:
    """The runs one at a time as they are read (see ``_read_runs``), named uniquely."""
    names = [name for name, _ in sources]
    items = ((name if name is not None else r.name, r) for name, r in
             zip(names, _read_runs([source for _, source in sources], names, huge, columns)))
    yield from numbered_names(items)
