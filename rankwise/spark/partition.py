"""The Spark engine's kernel: one partition evaluated by the in-memory engine.

Spark groups the rows of each side (the judgments, and each system's run) by query, and joins
the sides on the query: one row per query with, per side, the number of its rows, one list
per field of them (doc, value, and where needed row id, rank and a reader's error;
``collect_list`` of each field in one aggregation, so the lists are aligned) and its smallest
row id. This module turns the Arrow record batches of such rows into results with no Python
object per input row:

1. **Chunks of whole queries.** Batches are gathered until their lists hold ``chunk_rows``
   rows; a query is never split, so memory holds about ``chunk_rows`` rows, or one longer
   query (Spark holds no more than that query either: its list is built in one place).
2. **The same engine.** Each chunk becomes a :class:`~rankwise.io.Qrels` and one
   :class:`~rankwise.io.Run` per system, joined and ranked once by
   :func:`rankwise.core.ranked.rank`; every measure is computed by the same vectorised kernels
   as :func:`rankwise.evaluate`, so per-query values are bit-identical to the in-memory ones;
   the lists carry the grade levels of all the judgments (found on the driver), as the
   in-memory engine's do.
3. **Additive summaries.** Per system: every diagnostics count (sums over queries and rows),
   exact sums of the per-query values (:mod:`rankwise.spark.exact`), undefined counts, and
   the examples of each diagnostic with the row id where the query first appeared, so the
   driver picks the same first five as the in-memory engine.

Query codes are given in order of first appearance (row id), as the in-memory readers give
them, so the engine's per-query order and examples follow the input order. The order of the
rows within a query's list is Spark's; where a convention depends on it (``ties=
"input_order"``, ``duplicates="first"``/``"last"``) the rows carry their row id and are put
back in input order.

A chunk in which no query of a run is judged (possible in a small partition) is joined as it
is (``rank(..., disjoint=True)``: the engine otherwise refuses a run and judgments without a
common query, a wrong-file guard), so that its counts, values and checks are those of its own
queries.

Errors in the data raise :class:`~rankwise.errors.InputError` here; the partition then returns
the error in its summary and the driver raises it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..conventions import Conventions
from ..errors import InputError
from ..results import MIN_GEO_MEAN
from . import exact

#: Columns of the rows a partition receives: the query id and, per side ``s`` (0 the judgments,
#: s + 1 the s-th run; see :func:`side_column`), the number of its rows (COUNT, null where the
#: side has none), its smallest row id (FIRST) and one list per field of its rows: doc id,
#: score or grade, and optionally the row id (input order), the rank column (NO_RANK where it
#: is not an integer) and a reader's error ("" where none). Without a value list (the array
#: layout of :func:`rankwise.spark.arrays.grouped_ranking_columns`), a run's rows score
#: ``-position`` in their query's list and every judgment has grade 1.
QUERY, COUNT, FIRST = "q", "n", "first"
DOC, VALUE, ROW, RANK, BAD = "d", "v", "r", "rank", "bad"
FIELDS = (DOC, VALUE, ROW, RANK, BAD)
NO_RANK = -(1 << 63)
#: What a partition's summary times (:attr:`PartitionSummary.seconds`).
SECONDS = ("wall", "cpu", "waiting", "returning")
#: Column of the summary row (JSON), the one non-null column of that row.
SUMMARY = "summary"
#: Examples kept per diagnostic (as the in-memory engine keeps).
EXAMPLES = 5


def side_column(name: str, side: int) -> str:
    """The column of field ``name`` (or COUNT, FIRST) of side ``side``: ``"d1"``, ``"first0"``.
    """
    return f"{name}{side}"


@dataclass(frozen=True)
class Plan:
    """What every partition needs: measures, conventions, systems and where rows came from.

    ``systems[s]`` is the run whose rows have side ``s + 1``. ``levels``: the distinct judged
    grades of all the judgments (:func:`rankwise.spark.api.judged_levels`), which every
    chunk's lists carry, so that what reads them (ERR's default largest grade, the checks of
    the grades the judgments hold) sees all the judgments, as in memory (None: each chunk's
    own, as when one chunk holds every judgment).
    ``qrels_skipped`` and ``run_skipped[s]``: the files of the inputs' Parquet folders
    skipped for their names though they hold rows (see
    :func:`rankwise.spark.io.skipped_files`), counted on the driver.
    """

    measures: tuple[Any, ...]
    conventions: Conventions
    systems: tuple[str, ...]
    run_sources: tuple[str, ...]
    qrels_source: str
    levels: tuple[float, ...] | None = None
    per_query: bool = False
    chunk_rows: int = 1 << 21
    qrels_skipped: tuple[str, ...] = ()
    run_skipped: tuple[tuple[str, ...], ...] = ()

    @property
    def input_order(self) -> bool:
        """Whether a convention depends on the order of the rows within a query."""
        return self.conventions.ties == "input_order" or \
            self.conventions.duplicates in ("first", "last")


# ---------------------------------------------------------------------------- the stream


def evaluate_partition(batches: Iterable[Any], plan: Plan) -> Iterator[Any]:
    """Evaluate one partition: per-query record batches (with ``plan.per_query``), then one
    summary batch. Used through ``DataFrame.mapInArrow``."""
    from ..core.memory import large_arrays

    summary = PartitionSummary(plan)
    clock = summary.seconds
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        with large_arrays():  # each chunk's temporaries reuse the previous chunk's memory
            for chunk in chunks(_timed(batches, clock), plan.chunk_rows):
                for per_query in evaluate_chunk(chunk, plan, summary):
                    if per_query.num_rows:
                        returned = time.perf_counter()
                        yield per_query
                        clock["returning"] += time.perf_counter() - returned
    except InputError as exc:
        summary.error = {"message": exc.reason, "source": exc.source, "line": exc.line,
                         "value": exc.value, "unit": exc.unit}
    clock["wall"] = time.perf_counter() - wall
    clock["cpu"] = time.process_time() - cpu
    yield summary_batch(plan, summary.to_json())


def _timed(batches: Iterable[Any], clock: dict[str, float]) -> Iterator[Any]:
    """The batches, adding to ``clock["waiting"]`` the time spent waiting for each (Spark
    grouping the rows and moving them here)."""
    it = iter(batches)
    while True:
        start = time.perf_counter()
        batch = next(it, None)
        clock["waiting"] += time.perf_counter() - start
        if batch is None:
            return
        yield batch


def chunks(batches: Iterable[Any], chunk_rows: int) -> Iterator[Any]:
    """Arrow tables of whole queries whose lists hold at least ``chunk_rows`` rows (except the
    last).

    >>> import pyarrow as pa
    >>> batch = pa.RecordBatch.from_pydict({"q": ["a", "b", "c"], "n0": [2, 1, None],
    ...                                     "n1": [None, None, 3]})
    >>> [t.column("q").to_pylist() for t in chunks([batch, batch.slice(2)], 3)]
    [['a', 'b'], ['c'], ['c']]
    """
    import pyarrow as pa

    pending: list[Any] = []
    size = 0  # rows pending, always fewer than chunk_rows
    for batch in batches:
        if batch.num_rows == 0:
            continue
        ends = np.cumsum(_row_counts(batch))  # rows up to and including each query
        start, before = 0, 0  # first query not yet cut, rows of the batch before it
        while True:  # cut after the first query that makes the chunk reach chunk_rows
            cut = int(np.searchsorted(ends, before + chunk_rows - size))
            if cut >= batch.num_rows:
                break
            pending.append(batch.slice(start, cut + 1 - start))
            yield pa.Table.from_batches(pending)
            pending, size, start, before = [], 0, cut + 1, int(ends[cut])
        if start < batch.num_rows:
            pending.append(batch.slice(start))
            size += int(ends[-1]) - before
    if pending:
        yield pa.Table.from_batches(pending)


def _row_counts(batch) -> np.ndarray:
    """Rows of each query of a batch, over every side."""
    from ..core.arrow import to_numpy

    total = np.zeros(batch.num_rows, dtype=np.int64)
    for name in batch.schema.names:
        if name.startswith(COUNT) and name[len(COUNT):].isdigit():
            total += to_numpy(batch.column(name), np.int64, null=0)
    return total


# ---------------------------------------------------------------------------- one chunk


def evaluate_chunk(table, plan: Plan, summary: PartitionSummary) -> list[Any]:
    """Evaluate every system on one chunk and add to ``summary``; return the per-query
    record batches, one per system (none without ``plan.per_query``)."""
    from ..core.judgments import index_judgments

    rows = _Rows(table.combine_chunks(), plan)
    qrels, qrels_first = rows.qrels()
    index = index_judgments(qrels)  # shared by every system
    batches = []
    for s, name in enumerate(plan.systems):
        run, run_first, has_rank, dropped = rows.run(s)
        lists, values = _evaluate(index, run, plan)
        summary.systems[s].add(lists, values, plan, run_first, qrels_first, has_rank, dropped)
        if plan.per_query:
            batches.append(_per_query(name, lists, values, plan))
    return batches


class _Rows:
    """A chunk's rows, flattened side by side out of the per-query lists."""

    def __init__(self, table, plan: Plan) -> None:
        self.plan = plan
        self.table = table
        self.queries = table.column(QUERY).combine_chunks()
        sides = range(len(plan.systems) + 1)
        self.owner = [np.repeat(np.arange(table.num_rows, dtype=np.int64), self._counts(s))
                      for s in sides]
        self.fields: list[dict[str, Any]] = [{} for _ in sides]
        for s in sides:  # a reader's error first: it explains missing values
            self._raise_bad_rows(s)
        for s in sides:
            for name in FIELDS[:-1]:
                values = self._flat(name, s)
                if values is not None:
                    self.fields[s][name] = values

    def _counts(self, s: int) -> np.ndarray:
        from ..core.arrow import to_numpy

        return to_numpy(self.table.column(side_column(COUNT, s)), np.int64, null=0)

    def _flat(self, name: str, s: int):
        """The values of field ``name`` of side ``s``, query by query (None: no such column)."""
        column = side_column(name, s)
        if column not in self.table.column_names:
            return None
        lists = self.table.column(column).combine_chunks()
        values = lists.flatten()
        if len(values) != len(self.owner[s]):  # collect_list leaves out nulls
            self._missing(name, s, lists)
        return values

    def _missing(self, name: str, s: int, lists) -> None:
        import pyarrow.compute as pc

        from ..core.arrow import to_numpy

        short = np.flatnonzero(to_numpy(pc.list_value_length(lists), np.int64, null=0)
                               != self._counts(s))[0]
        what = "a doc id" if name == DOC else "a score or grade"
        raise InputError(f"a row of query {self.queries[int(short)].as_py()!r} has no value "
                         f"where {what} is expected", source=_source(self.plan, s), value="null")

    def _raise_bad_rows(self, s: int) -> None:
        """Rows a reader refused carry ``order reason \\x00 text`` in the bad field: raise the
        first of the lowest order (the driver then finds the first of the whole input)."""
        bad = self._flat(BAD, s)
        if bad is None:
            return
        import pyarrow.compute as pc

        from ..core.arrow import to_numpy
        from .io import problem_error

        orders = pc.utf8_slice_codeunits(bad, 0, 1)  # "" where the row has no problem
        lowest = pc.min(pc.filter(orders, pc.not_equal(bad, ""))).as_py()
        if lowest is not None:
            first = np.flatnonzero(to_numpy(pc.equal(orders, lowest), bool))[0]
            raise problem_error(str(bad[int(first)].as_py()), _source(self.plan, s))

    def _side(self, s: int):
        """Rows of side ``s`` in input order (the permutation that puts them in it, None
        where they are: queries in order of first appearance, as the readers give them, and
        within a query by row id where a convention needs it), their query codes in order of
        first appearance, the query ids, the first row id of each code, and each row's row
        id (None unless a convention needs it)."""
        from ..core.arrow import to_numpy

        owner, at, lines = self.owner[s], None, None
        if ROW in self.fields[s]:
            lines = to_numpy(self.fields[s][ROW], np.int64)
            at = np.lexsort((lines, owner))
            owner, lines = owner[at], lines[at]
        first = to_numpy(self.table.column(side_column(FIRST, s)), np.int64, null=-1)
        codes, queries, first_of_code = _encode(owner, first, self.queries,
                                                _source(self.plan, s))
        if len(codes) > 1 and (codes[1:] < codes[:-1]).any():
            # queries in input order, as the readers give them (the engine lists them, and
            # the checks' examples, in the order of their rows)
            order = np.argsort(codes, kind="stable")
            at = order if at is None else at[order]
            codes = codes[order]
            lines = None if lines is None else lines[order]
        return at, codes, queries, first_of_code, lines

    def qrels(self):
        from ..io.tables import Qrels

        source = self.plan.qrels_source
        at, codes, queries, first, lines = self._side(0)
        qrels = Qrels(codes, queries, self._ids(0, at), source, lines, "row",
                      self._numbers(0, at))
        return qrels, _first_rows(queries, first)

    def run(self, s: int):
        """The ``s``-th run of the chunk; whether its rank column was kept, or dropped (it did
        not hold integers)."""
        from ..core.arrow import to_numpy
        from ..io.tables import Run, check_finite_scores

        at, codes, queries, first, lines = self._side(s + 1)
        rank, dropped = None, False
        ranks = self.fields[s + 1].get(RANK)
        if ranks is not None and len(ranks):
            rank = _taken(to_numpy(ranks, np.int64), at)
            if (rank == NO_RANK).any():
                rank, dropped = None, True
        run = Run(codes, queries, self._ids(s + 1, at), self.plan.run_sources[s], lines, "row",
                  self._numbers(s + 1, at), self.plan.systems[s], rank)
        check_finite_scores(run)
        return run, _first_rows(queries, first), rank is not None, dropped

    def _ids(self, s: int, at: np.ndarray | None):
        """Doc ids of side ``s``: strings, or int64 where every side holds integers (the
        engine keys them as they are: no decimal strings, no fingerprints)."""
        import pyarrow as pa

        from ..core.arrow import take

        docs = self.fields[s][DOC]
        docs = docs if at is None else take(docs, at)
        if pa.types.is_int64(docs.type):
            return docs
        return _as_strings(docs)

    def _numbers(self, s: int, at: np.ndarray | None) -> np.ndarray:
        """Scores (runs) or grades (judgments) of side ``s``; without a value list, as the
        array layout implies them: ``-position`` in the query's list, or 1."""
        from ..core.arrow import to_numpy

        if VALUE in self.fields[s]:
            return _taken(to_numpy(self.fields[s][VALUE], np.float64), at)
        owner = self.owner[s]
        if s == 0:
            return np.ones(len(owner))
        counts = self._counts(s)
        start = np.cumsum(counts) - counts
        return _taken(-(np.arange(len(owner)) - start[owner]).astype(np.float64), at)


def _taken(values: np.ndarray, at: np.ndarray | None) -> np.ndarray:
    return values if at is None else values[at]


def _evaluate(index, run, plan: Plan):
    """Rank one run against the chunk's judgments (``index``, shared by every system) and
    compute every measure: ``(lists, values)``. A chunk without a query on both sides is
    ranked as it is (see the module docstring)."""
    from ..core.ranked import rank

    lists = _with_levels(rank(index, run, plan.conventions, disjoint=True), plan.levels)
    return lists, {str(m): m.compute(lists) for m in plan.measures}


def _with_levels(lists, levels: tuple[float, ...] | None):
    """``lists`` with the grade levels of all the judgments (``levels``; None: the chunk's
    own), each query's count of judgments per level spread over them (0 at a level the
    chunk's judgments lack): what the in-memory engine's lists hold, so that the checks of
    the grades the judgments hold see all of them, not the chunk's."""
    from dataclasses import replace

    if levels is None or np.array_equal(lists.levels, levels):
        return lists
    every = np.union1d(np.asarray(levels, dtype=np.float64), lists.levels)
    counts = np.zeros((lists.num_queries, len(every)), dtype=np.int64)
    counts[:, np.searchsorted(every, lists.levels)] = lists.level_counts
    return replace(lists, levels=every, level_counts=counts)


def _source(plan: Plan, side: int) -> str:
    return plan.qrels_source if side == 0 else plan.run_sources[side - 1]


def _as_strings(values):
    """Ids as one Arrow string array (integers become their decimal strings)."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if not pa.types.is_string(values.type):
        values = values.cast(pa.string())
    return values


def _encode(owner: np.ndarray, first: np.ndarray, queries, source: str):
    """Query codes for rows grouped by query (``owner``: the query's row in the chunk), in
    order of first appearance (``first``: each query's smallest row id on this side), as the
    in-memory readers number queries; only the distinct query ids become strings (``source``:
    the side's file or DataFrame, named when an id is missing).

    Returns ``(codes, distinct ids, first row id of each code)``.
    """
    import pyarrow as pa

    from ..core.arrow import take

    n = len(owner)
    if n == 0:
        return np.zeros(0, np.int32), pa.array([], pa.string()), np.zeros(0, np.int64)
    change = np.ones(n, dtype=bool)
    change[1:] = owner[1:] != owner[:-1]
    starts = np.flatnonzero(change)
    block_query = owner[starts]
    block_first = first[block_query]
    by_first = np.argsort(block_first, kind="stable")
    code_of_block = np.empty(len(starts), dtype=np.int32)
    code_of_block[by_first] = np.arange(len(starts), dtype=np.int32)
    codes = np.repeat(code_of_block, np.diff(np.append(starts, n)))
    ids = take(queries, block_query[by_first])
    if ids.null_count:
        raise InputError("missing query id", source=source, value="null")
    return codes, _as_strings(ids), block_first[by_first]


def _first_rows(queries, first: np.ndarray) -> dict[str, Any]:
    """What the summary needs to place a query id in input order: a lookup table."""
    return {"ids": queries, "first": first}


def _per_query(name: str, lists, values: dict[str, np.ndarray], plan: Plan):
    import pyarrow as pa

    n = lists.num_queries
    columns = {"system": pa.repeat(pa.scalar(name, pa.string()), n),
               "query": pa.array(lists.query_ids, pa.string())}
    for i, m in enumerate(plan.measures):
        columns[f"m{i}"] = pa.array(values[str(m)], pa.float64())
    columns[SUMMARY] = pa.nulls(n, pa.string())
    return pa.RecordBatch.from_pydict(columns)


def summary_batch(plan: Plan, text: str):
    """The partition's one summary row (every other column null)."""
    import pyarrow as pa

    columns = {"system": pa.nulls(1, pa.string()), "query": pa.nulls(1, pa.string())}
    for i in range(len(plan.measures)):
        columns[f"m{i}"] = pa.nulls(1, pa.float64())
    columns[SUMMARY] = pa.array([text], pa.string())
    return pa.RecordBatch.from_pydict(columns)


# ---------------------------------------------------------------------------- summaries


@dataclass
class SystemSummary:
    """Everything additive about one system over the chunks of a partition."""

    counts: dict[str, float] = field(default_factory=dict)
    examples: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    sums: list[exact.ExactSum] = field(default_factory=list)
    defined: list[int] = field(default_factory=list)
    undefined: list[int] = field(default_factory=list)
    checks: list[list[dict]] = field(default_factory=list)  # per chunk with queries
    rank_dropped: bool = False
    has_rank: bool = False

    def add(self, lists, values: dict[str, np.ndarray], plan: Plan,
            run_first: dict[str, Any], qrels_first: dict[str, Any], has_rank: bool,
            rank_dropped: bool) -> None:
        diag = lists.diagnostics.to_dict()
        for key, value in diag.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                self.counts[key] = self.counts.get(key, 0) + value
        for key, ids in (diag.get("examples") or {}).items():
            side = qrels_first if key == "queries_only_in_qrels" else run_first
            placed = _placed(ids, side, run_first, qrels_first)
            self.examples[key] = sorted(self.examples.get(key, []) + placed)[:EXAMPLES]
        if not self.sums:
            self.sums = [exact.ZERO] * len(plan.measures)
            self.defined = [0] * len(plan.measures)
            self.undefined = [0] * len(plan.measures)
        for i, m in enumerate(plan.measures):
            v = values[str(m)]
            nan = np.isnan(v)
            defined = v[~nan]
            if m.spec.aggregate == "gmean":
                defined = np.log(np.maximum(defined, MIN_GEO_MEAN))
            self.sums[i] = exact.add(self.sums[i], exact.exact_sum(defined))
            self.defined[i] += len(defined)
            self.undefined[i] += int(nan.sum())
        if lists.num_queries or lists.diagnostics.queries_only_in_run \
                or lists.diagnostics.queries_only_in_qrels:
            from ..diagnostics import run_checks

            found = run_checks(lists, list(plan.measures), values)
            if not lists.num_queries:  # only queries on one side: what one_side says of them
                found = [c for c in found if c.code == "one_side"]
            self.checks.append([_with_first(c.to_dict(), run_first, qrels_first) for c in found])
        self.rank_dropped |= rank_dropped
        self.has_rank |= has_rank

    def to_json(self) -> dict[str, Any]:
        return {"counts": self.counts, "examples": self.examples,
                "sums": [exact.to_json(s) for s in self.sums], "defined": self.defined,
                "undefined": self.undefined, "checks": self.checks,
                "rank_dropped": self.rank_dropped, "has_rank": self.has_rank}


def _first_of(ids: list[str], side: dict[str, Any]) -> dict[str, int]:
    """``{id: first row id}`` for the ids found on one side (a chunk's run or judgments)."""
    from ..core.arrow import index_in, string_array

    if not ids or not len(side["ids"]):
        return {}
    at = index_in(string_array(ids), side["ids"])
    return {ids[i]: int(side["first"][at[i]]) for i in np.flatnonzero(at >= 0).tolist()}


def _placed(ids: list[str], preferred: dict[str, Any], run_first: dict[str, Any],
            qrels_first: dict[str, Any]) -> list[tuple[int, str]]:
    """``(first row id, id)`` of example query ids, looked up on the side they come from."""
    found: dict[str, int] = {}
    for side in (qrels_first, run_first, preferred):  # the preferred side wins
        found.update(_first_of(ids, side))
    return [(found[q], q) for q in ids if q in found]


def _with_first(check: dict[str, Any], run_first: dict[str, Any],
                qrels_first: dict[str, Any]) -> dict[str, Any]:
    """A check (as a dict) with, for its example queries, where each first appeared: the run's
    row id, or after every run query the judgments' row id (the in-memory engine's order)."""
    examples = list(check.get("examples", ()))
    in_run, in_qrels = _first_of(examples, run_first), _first_of(examples, qrels_first)
    check["_first"] = [in_run[q] if q in in_run else (1 << 62) + in_qrels.get(q, 0)
                       for q in examples]
    return check


class PartitionSummary:
    """The summary of one partition: per system, what :class:`SystemSummary` adds up; and the
    first input error met, if any."""

    def __init__(self, plan: Plan) -> None:
        self.systems = [SystemSummary() for _ in plan.systems]
        self.error: dict[str, Any] | None = None
        #: seconds of the Python worker: wall and CPU time in the partition, time waiting for
        #: record batches, and time handing per-query batches back to Spark
        self.seconds = dict.fromkeys(SECONDS, 0.0)

    def to_json(self) -> str:
        return json.dumps({"systems": [s.to_json() for s in self.systems], "error": self.error,
                           "seconds": self.seconds})
