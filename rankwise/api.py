"""The public entry point: :func:`evaluate`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import closing
from itertools import islice
from typing import Any

import numpy as np

from .conventions import Conventions, profile, resolve
from .core.memory import large_arrays
from .core.ranked import THREAD_MIN_ROWS, index_judgments, rank, stack_lists
from .diagnostics import TieBounds, combine_checks, list_checks, run_checks, tie_order_bounds
from .errors import InputError
from .io.frames import is_nested_run, to_qrels, to_run
from .io.tables import Run
from .measures import Measure, parse_measures
from .results import Result, SystemResult, aggregate


def evaluate(qrels: Any, run: Any, measures: str | Measure | Sequence[str | Measure],
             conventions: Conventions | str | None = None, per_query: bool = False,
             **convention_overrides: Any) -> Result:
    """Evaluate one or several runs against judgments.

    Parameters
    ----------
    qrels : path, DataFrame, Arrow table, dict or Qrels
        The judgments: a TREC qrels file (plain or ``.gz``), a frame with columns ``query``,
        ``doc``, ``relevance``, or ``{query: {doc: grade}}``.
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

    Returns
    -------
    Result

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
    if isinstance(conventions, str):
        measures = profile(conventions).measure_names(measures)
    parsed = parse_measures(measures)
    with large_arrays():
        return _evaluate(qrels, run, parsed, conv, per_query)


def _evaluate(qrels: Any, run: Any, parsed: list[Measure], conv: Conventions,
              per_query: bool) -> Result:
    from concurrent.futures import ThreadPoolExecutor  # here: importing it costs 6-10 ms

    judged = to_qrels(qrels)
    with ThreadPoolExecutor(max_workers=1) as pool:
        # the judgments are indexed in a second thread while the runs are read and the first
        # run's doc ids are fingerprinted (numpy and Arrow release the interpreter lock)
        judgments = pool.submit(index_judgments, judged)
        systems = {}
        blocks = None  # the judgments split by query, once a run is evaluated in blocks
        with closing(_iter_runs(run)) as runs:  # closed early on an error: reading stops
            for batch in _batches(runs):
                if len(batch) == 1:
                    name, one = batch[0]
                    if _in_blocks(one):  # a huge run: block by block, in reused memory
                        from .stream import evaluate_in_blocks, split_judgments

                        blocks = blocks or split_judgments(judged)
                        systems[name] = evaluate_in_blocks(blocks, one, name, parsed, conv,
                                                           per_query)
                    else:
                        systems[name] = _summarise(name, rank(judgments, one, conv), parsed,
                                                   per_query)
                    continue
                ranked = [rank(judgments, one, conv) for _, one in batch]
                for (name, _), lists, (values, bounds) in zip(
                        batch, ranked, _stacked_values(ranked, parsed)):
                    systems[name] = _summarise(name, lists, parsed, per_query, values, bounds)
        if not systems:
            raise InputError("no run given", source="run")
    return Result([str(m) for m in parsed], systems, conv, {str(m): _kind(m) for m in parsed})


#: Runs under this many rows are evaluated together, up to STACK_ROWS rows at a time: their
#: lists stacked, each measure computed once for all of them (see ``_stacked_values``).
STACK_RUN_MAX_ROWS = THREAD_MIN_ROWS
STACK_ROWS = 1 << 18  # 1 << 20 was no faster and held 130 MB more (1,000 runs of 5,000 rows)


#: A run grouped by query is evaluated block by block of whole queries
#: (``stream.evaluate_in_blocks``, as a streamed file is) when one pass over it would need
#: more than half the memory the system has left: the kernel then reclaims its page cache
#: page by page (100M rows on a 24 GB machine: one pass 22.0-26.6 s, two thirds of its CPU
#: time in the kernel, peak 11.1 GB; in blocks 18.5 s, peak 6.1 GB). Blocks do more work per
#: row (ids as strings), so smaller runs always take the one pass (40M rows: 3.0 s against
#: 5.4 s with the memory to spare).
BLOCKWISE_MIN_ROWS = 1 << 25
#: Peak memory of one pass per run row (11.1 GB at 100M rows with integer doc ids, 14.4 GB
#: from TREC text), for that decision.
ONE_PASS_BYTES_PER_ROW = 120


def _in_blocks(run: Run) -> bool:
    """Whether ``run`` is evaluated block by block (see BLOCKWISE_MIN_ROWS): large, each
    query's rows together, no query given without rows, and one pass over it would need more
    than half of the memory available (never where that is unknown)."""
    from .core.memory import available_bytes
    from .core.segments import starts_of_runs

    if len(run) < BLOCKWISE_MIN_ROWS or run.empty_queries:
        return False
    available = available_bytes()
    if available is None or len(run) * ONE_PASS_BYTES_PER_ROW <= available // 2:
        return False
    return len(starts_of_runs(run.query_code)) == run.num_queries


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


def _stacked_values(ranked: list, parsed: list[Measure]
                    ) -> list[tuple[dict[str, np.ndarray], TieBounds]]:
    """Per system, every measure's per-query values and the tie-order check's bounds,
    computed once on the systems' lists stacked (many small runs: the cost of a measure is
    then mostly per call) and split back; bit-identical to computing them run by run."""
    stacked = stack_lists(ranked)
    values = {str(m): m.compute(stacked) for m in parsed}
    bounds = tie_order_bounds(stacked, parsed, values)
    out, start = [], 0
    for lists in ranked:
        stop = start + lists.num_queries
        out.append(({k: v[start:stop] for k, v in values.items()}, bounds.part(start, stop)))
        start = stop
    return out


def _summarise(name: str, lists, parsed: list[Measure], per_query: bool,
               values: dict[str, np.ndarray] | None = None,
               bounds: TieBounds | None = None) -> SystemResult:
    """Every measure of one ranked run: aggregates, per-query values, diagnostics, warnings
    (``values`` and ``bounds``: already computed by ``_stacked_values``)."""
    if values is None:
        values, checks = _values_and_checks(lists, parsed)
    else:
        checks = run_checks(lists, parsed, values, bounds)
    order = np.argsort(lists.query_ids.astype(str), kind="stable") if per_query else None
    return SystemResult(
        name=name,
        aggregates={k: aggregate(v, _kind(m), m.skips_undefined(lists.conventions))
                    for (k, v), m in zip(values.items(), parsed)},
        diagnostics=lists.diagnostics.to_dict(),
        query_ids=lists.query_ids[order] if per_query else None,
        values={k: v[order] for k, v in values.items()} if per_query else None,
        undefined={k: int(np.isnan(v).sum()) for k, v in values.items() if np.isnan(v).any()},
        trec_names={str(m): m.trec_name() for m in parsed},
        warnings=[c.message for c in checks if c.severity == "warning"],
        checks=[c.to_dict() for c in checks])


def _values_and_checks(lists, parsed: list[Measure]):
    """Every measure's per-query values and the diagnostic checks; on large lists the checks
    that need no values run in a second thread while the measures are computed (numpy
    releases the interpreter lock). Measures side by side were measured slower: they share
    the lists' cached columns and memory bandwidth."""
    if lists.num_rows < THREAD_MIN_ROWS:
        values = {str(m): m.compute(lists) for m in parsed}
        return values, run_checks(lists, parsed, values)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        listed = pool.submit(list_checks, lists, parsed)
        values = {str(m): m.compute(lists) for m in parsed}
        return values, combine_checks(lists, parsed, values, listed.result())


#: Run files read ahead of the one being evaluated, in two threads, so that reading overlaps
#: the evaluation; after a large run (one evaluated alone) only one, so that at most two large
#: runs are in memory however many are given (reading every run first held all of them).
READ_AHEAD = 2


def _read_runs(sources: list, names: list) -> Iterator[Run]:
    """``to_run`` of every source in the given order, up to READ_AHEAD files read ahead of the
    caller in two threads (pyarrow parses files without the interpreter lock); a bad one
    raises its error when its turn comes, and an early stop leaves the rest unread."""
    if len(sources) < 2:
        yield from (to_run(r, name=n) for r, n in zip(sources, names))
        return
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    todo = iter(zip(sources, names))
    with ThreadPoolExecutor(max_workers=2) as pool:
        ahead = deque(pool.submit(to_run, r, name=n) for r, n in islice(todo, READ_AHEAD))
        while ahead:
            run = ahead.popleft().result()
            limit = READ_AHEAD if len(run) < STACK_RUN_MAX_ROWS else 1
            for r, n in islice(todo, max(0, limit - len(ahead))):
                ahead.append(pool.submit(to_run, r, name=n))
            yield run


def _kind(measure: Measure) -> str:
    return measure.spec.aggregate


def _runs(run: Any) -> list[tuple[str, Run]]:
    """Normalise the ``run`` argument to ``[(name, Run), ...]`` with unique names."""
    return list(_iter_runs(run))


def _iter_runs(run: Any) -> Iterator[tuple[str, Run]]:
    """``_runs``, one run at a time as they are read (see ``_read_runs``)."""
    if isinstance(run, Mapping) and run and not is_nested_run(run):
        names = [str(name) for name in run]
        items = zip(names, _read_runs(list(run.values()), names))
    elif isinstance(run, (list, tuple)):
        if not run:
            raise InputError("no run given", source="run")
        items = ((r.name, r) for r in _read_runs(list(run), [None] * len(run)))
    else:
        one = to_run(run)
        items = iter([(one.name, one)])
    seen: dict[str, int] = {}
    for name, r in items:
        if name in seen:
            seen[name] += 1
            name = f"{name}#{seen[name]}"
        else:
            seen[name] = 1
        yield name, r
