"""``rankwise.spark.evaluate`` and ``rankwise.spark.compare``: the whole engine on Spark
DataFrames, with the same numbers, conventions and diagnostics as :func:`rankwise.evaluate`.

How it works (details in docs/spark.md):

1. the judgments and every run are each grouped by query (one list per field of a query's
   rows) and the sides joined on the query: one row per query with its rows from every side;
2. ``mapInArrow`` hands each partition to :func:`rankwise.spark.partition.evaluate_partition`
   as Arrow record batches; it evaluates them chunk by chunk (whole queries, about
   ``chunk_rows`` rows) with the in-memory engine's kernels;
3. each partition returns its per-query values (kept in Spark) and one summary row (exact
   sums and counts), which the driver combines exactly (:mod:`rankwise.spark.combine`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np

from ..conventions import Conventions, resolve
from ..core.join import no_judgments, nothing_ranked, scores_one_sided_queries
from ..errors import InputError
from ..measures import Measure, parse_measures
from ..results import Result, SystemResult
from . import combine
from .io import (
    BAD_COLUMN,
    ORDER_COLUMN,
    columns_of,
    no_lines_error,
    problem_error,
    read_failures,
)
from .partition import (
    BAD,
    COUNT,
    DOC,
    FIRST,
    NO_RANK,
    RANK,
    ROW,
    SUMMARY,
    VALUE,
    Plan,
    evaluate_partition,
    side_column,
)

#: Rows per chunk a partition evaluates at once (whole queries; a longer query is one chunk).
CHUNK_ROWS = 1 << 21
#: Inputs Spark estimates below this size are evaluated in one partition (no shuffle
#: parallelism is worth its overhead there, and one chunk gives warnings word for word).
SMALL_INPUT_BYTES = 64 << 20


class SparkResult(Result):
    """What :func:`rankwise.spark.evaluate` returns: a :class:`~rankwise.Result` (aggregates,
    conventions, diagnostics, warnings; every writer works) whose per-query values stay in
    Spark.

    Attributes
    ----------
    per_query_frame : pyspark.sql.DataFrame or None
        With ``per_query=True``: one row per (system, query), columns ``system``, ``query`` and
        one per measure named as in :attr:`measures` (quote names with dots in Spark SQL:
        ``df.select("`IPrec@0.5`")``). Held in Spark's cache, or read back from
        ``per_query_path``.
    worker_seconds : dict of str to float
        Where the Python workers' time went, summed over the partitions: ``wall`` and ``cpu``
        in the partitions, ``waiting`` for Spark to group and send the rows, ``returning``
        per-query values to Spark; and the number of ``partitions``. ``cpu`` is about the
        kernels' share of the work (see docs/spark.md, "Speed").
    """

    def __init__(self, measures: list[str], systems: dict[str, SystemResult],
                 conventions: Conventions, aggregate_kinds: dict[str, str],
                 per_query_frame: Any = None, cached: Any = None,
                 worker_seconds: dict[str, float] | None = None) -> None:
        super().__init__(measures, systems, conventions, aggregate_kinds)
        self.per_query_frame = per_query_frame
        self._cached = cached
        self.worker_seconds = dict(worker_seconds or {})

    def collect(self) -> Result:
        """The same result with the per-query values on the driver (a plain ``Result``, as
        ``rankwise.evaluate(..., per_query=True)`` returns): needed for ``per_query()``,
        ``to_frame()``, per-query writers and statistics."""
        import pyarrow.compute as pc

        from ..core.arrow import to_numpy

        if self.per_query_frame is None:
            raise ValueError("per-query values were not kept: evaluate(..., per_query=True)")
        table = self.per_query_frame.toArrow()
        systems = {}
        for name, s in self.systems.items():
            mine = table.filter(pc.equal(table.column("system"), name))
            ids = np.asarray(mine.column("query").to_pylist(), dtype=object)
            order = np.argsort(ids.astype(str), kind="stable")
            values = {m: to_numpy(mine.column(m), np.float64)[order] for m in self.measures}
            systems[name] = SystemResult(
                name=name, aggregates=dict(s.aggregates), diagnostics=s.diagnostics,
                query_ids=ids[order], values=values, undefined=dict(s.undefined),
                trec_names=dict(s.trec_names), warnings=list(s.warnings),
                checks=list(s.checks))
        return Result(self.measures, systems, self.conventions, self.aggregate_kinds)

    def write_per_query(self, path: str, mode: str = "errorifexists",
                        format: str = "parquet") -> None:
        """Write the per-query table with Spark (``format``: any Spark writer format)."""
        if self.per_query_frame is None:
            raise ValueError("per-query values were not kept: evaluate(..., per_query=True)")
        self.per_query_frame.write.mode(mode).format(format).save(path)

    def unpersist(self) -> None:
        """Release the per-query values held in Spark's cache."""
        if self._cached is not None:
            self._cached.unpersist()
            self._cached = None

    def __repr__(self) -> str:
        return f"SparkResult(systems={list(self.systems)}, measures={self.measures})"


def evaluate(run: Any, qrels: Any, measures: str | Measure | Sequence[str | Measure],
             conventions: Conventions | str | None = None, per_query: bool = False, *,
             query: str = "query", doc: str = "doc", score: str = "score",
             relevance: str = "relevance", rank: str | None = "rank",
             partitions: int | None = None, chunk_rows: int = CHUNK_ROWS,
             per_query_path: str | None = None, qrels_source: str = "qrels DataFrame",
             run_sources: Mapping[str, str] | None = None,
             qrels_skipped_files: Sequence[str] = (),
             run_skipped_files: Mapping[str, Sequence[str]] | None = None,
             **convention_overrides: Any) -> SparkResult:
    """Evaluate runs held in Spark DataFrames against judgments held in a Spark DataFrame.

    Parameters
    ----------
    run : pyspark.sql.DataFrame or mapping of str to DataFrame
        One run (named ``"run"``) or several ``{name: DataFrame}``; columns ``query``, ``doc``,
        ``score`` (renamable), ids as strings or integers (integers give the numbers of their
        decimal strings in the in-memory engine; integer doc ids are keyed as they are).
    qrels : pyspark.sql.DataFrame
        Judgments: columns ``query``, ``doc``, ``relevance`` (renamable).
    measures : str, Measure or sequence of them
        Names in any dialect, as for :func:`rankwise.evaluate`.
    conventions : Conventions or profile name, optional
        As for :func:`rankwise.evaluate`; keyword overrides apply on top.
    per_query : bool
        Keep the per-query values, as a Spark DataFrame (``SparkResult.per_query_frame``);
        ``SparkResult.collect()`` brings them to the driver.
    query, doc, score, relevance : str
        Column names.
    rank : str or None
        The run's rank column, if any (a TREC run's): used only to report queries whose ranks
        contradict their scores, as the in-memory engine does. Ignored when absent.
    partitions : int, optional
        Number of partitions to spread the queries over; default: one for inputs Spark
        estimates under 64 MiB, else Spark's ``spark.sql.shuffle.partitions`` (coalesced by
        adaptive execution), each input partition's rows being combined by query before the
        shuffle. With a number, the rows are shuffled by query into that many partitions
        first and grouped there (more shuffled data, less memory per task: see "Limits" in
        docs/spark.md).
    chunk_rows : int
        Rows a partition evaluates at once (whole queries; a longer query is one chunk).
    per_query_path : str, optional
        Write the per-query table there as Parquet (implies ``per_query``);
        ``per_query_frame`` then reads it back.
    qrels_source, run_sources : str, mapping of run name to str
        How error messages name the inputs (e.g. their file names).
    qrels_skipped_files, run_skipped_files : sequence of str, mapping of run name to them
        The files of the inputs' Parquet folders skipped for their names though they hold
        rows, as :func:`rankwise.spark.io.skipped_files` names them: counted in the
        diagnostics (``qrels_files_skipped``, ``run_files_skipped``, with examples), as the
        in-memory engine counts them.

    Returns
    -------
    SparkResult

    Examples
    --------
    See docs/spark.md; the tests in tests/spark run every example in local mode.
    """
    per_query = per_query or per_query_path is not None
    conv, parsed = _measures(measures, conventions, chunk_rows, convention_overrides)
    runs = _named_runs(run)
    _check_columns(runs, qrels, query, doc, score, relevance, rank)
    sources = tuple((run_sources or {}).get(name) or (
        f"run DataFrame {name!r}" if len(runs) > 1 else "run DataFrame") for name in runs)
    with read_failures([qrels_source]):  # the judgments' grade levels: a Spark job
        levels = judged_levels(qrels, relevance)
    plan = Plan(measures=tuple(parsed), conventions=conv, systems=tuple(runs),
                run_sources=sources, qrels_source=qrels_source, levels=levels,
                per_query=per_query, chunk_rows=chunk_rows,
                qrels_skipped=tuple(qrels_skipped_files),
                run_skipped=tuple(tuple((run_skipped_files or {}).get(name, ()))
                                  for name in runs))
    sides = _sides(runs, qrels, query, doc, score, relevance, rank)
    if partitions is None and sum(map(_estimated_bytes, sides)) <= SMALL_INPUT_BYTES:
        partitions = 1
    return _evaluate_grouped(_grouped(sides, plan, partitions), plan, per_query_path, sides)


def evaluate_ranking_columns(df: Any, measures: str | Measure | Sequence[str | Measure],
                             conventions: Conventions | str | None = None,
                             per_query: bool = False, *, prediction: str = "prediction",
                             label: str = "label", relevance: str | None = None,
                             query: str | None = None, name: str = "run",
                             partitions: int | None = None, chunk_rows: int = CHUNK_ROWS,
                             per_query_path: str | None = None,
                             source: str = "ranking DataFrame",
                             **convention_overrides: Any) -> SparkResult:
    """Evaluate data in the layout of Spark's ``RankingEvaluator`` / ``RankingMetrics`` (one
    row per query: the predicted items in rank order, the relevant items, optionally their
    relevance values) where it lies: no shuffle, no grouping.

    The numbers, diagnostics and warnings are those of :func:`evaluate` on
    :func:`rankwise.spark.arrays.from_ranking_columns` of the same DataFrame (the predicted
    items scored ``-position``; a label without a relevance value has relevance 1; items held
    as floating-point numbers compared as their decimal text); each row already holds a whole
    query, so the rows go to the kernels as they are.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        One row per query (user).
    measures, conventions, per_query, chunk_rows, per_query_path
        As for :func:`evaluate`.
    prediction, label : str
        Array columns: the predicted items in rank order, the relevant (held-out) items.
    relevance : str, optional
        Array column of the labels' relevance values (same length as ``label``).
    query : str, optional
        Column of query ids; default: a row number (``monotonically_increasing_id``).
    name : str
        The system's name.
    partitions : int, optional
        Spread the rows over this many partitions first; default: one partition for inputs
        Spark estimates under 64 MiB (warnings word for word), else the input's own.
    source : str
        How error messages name the input.

    Returns
    -------
    SparkResult
    """
    from .arrays import check_ranking_columns, from_ranking_columns, grouped_ranking_columns

    per_query = per_query or per_query_path is not None
    conv, parsed = _measures(measures, conventions, chunk_rows, convention_overrides)
    check_ranking_columns(df, prediction, label, relevance, source)
    if query is not None:
        _need(df, source, query, "id")
    _, qrels = from_ranking_columns(df, prediction, label, relevance, query)
    # (without a relevance column every label has grade 1: no job)
    levels = judged_levels(qrels, "relevance") if relevance is not None else (1.0,)
    plan = Plan(measures=tuple(parsed), conventions=conv, systems=(name,),
                run_sources=(source,), qrels_source=source, levels=levels,
                per_query=per_query, chunk_rows=chunk_rows)
    # the row ids (and default query ids) are numbered before any repartitioning, on the
    # input's own partitions, as from_ranking_columns numbers them
    grouped = grouped_ranking_columns(df, plan, prediction, label, relevance, query)
    if partitions is not None:
        grouped = grouped.repartition(partitions)
    elif _estimated_bytes(df) <= SMALL_INPUT_BYTES:
        grouped = grouped.coalesce(1)
    return _evaluate_grouped(grouped, plan, per_query_path)


def _measures(measures, conventions, chunk_rows: int, overrides: dict):
    """The conventions and the parsed measures; InputError for what Spark cannot combine."""
    conv = resolve(conventions, **overrides)
    parsed = parse_measures(measures, conventions)
    for m in parsed:
        if m.spec.aggregate not in ("mean", "sum", "gmean"):
            raise InputError(f"{m} is averaged as {m.spec.aggregate!r}, which the Spark engine "
                             "cannot combine across partitions", source="measures", value=str(m))
    if not isinstance(chunk_rows, int) or chunk_rows < 1:
        raise InputError("chunk_rows must be a positive integer", source="chunk_rows",
                         value=repr(chunk_rows))
    return conv, parsed


def _evaluate_grouped(grouped, plan: Plan, per_query_path: str | None,
                      sides: list[Any] | None = None) -> SparkResult:
    """Run the kernels on the grouped rows (one per query) and combine what they return;
    ``sides``: the inputs (see :func:`_first_error`)."""
    parsed, per_query = list(plan.measures), plan.per_query
    out = grouped.mapInArrow(partial(evaluate_partition, plan=plan), _schema(plan))
    cached = None
    if per_query:
        from pyspark import StorageLevel

        cached = out.persist(StorageLevel.MEMORY_AND_DISK)
        out = cached
    from pyspark.sql import functions as F

    try:
        with read_failures([plan.qrels_source, *plan.run_sources]):
            summaries = [r[0] for r in
                         out.where(F.col(SUMMARY).isNotNull()).select(SUMMARY).collect()]
        parsed_summaries = combine.parse(summaries, plan)
        systems = combine.system_results(plan, parsed_summaries)
    except InputError as error:
        if cached is not None:
            cached.unpersist()
        raise (_first_error(sides, plan, error) if sides else error) from None
    frame = None
    if per_query:
        frame = out.where(F.col(SUMMARY).isNull()).select(
            "system", "query", *[F.col(f"m{i}").alias(str(m)) for i, m in enumerate(parsed)])
        if per_query_path is not None:
            frame.write.parquet(per_query_path)
            cached.unpersist()
            cached = None
            frame = out.sparkSession.read.parquet(per_query_path)
    return SparkResult([str(m) for m in parsed], systems, plan.conventions,
                       {str(m): m.spec.aggregate for m in parsed}, frame, cached,
                       combine.seconds(parsed_summaries))


def _first_error(sides: list[Any], plan: Plan, error: InputError) -> InputError:
    """The error the in-memory engine raises first, where Spark met ``error`` (each partition
    reports its own): a problem in reading the files, in the order it reads them (the
    judgments, then each run; a side read from TREC text empty, or refused at its first
    problem as its reader orders them); else, before a run's own error (a duplicate), a run
    up to that one without a query in common with the judgments; else ``error``. A small
    Spark job or two per side, on this error's path only."""
    from pyspark.sql import functions as F

    sources = [plan.qrels_source, *plan.run_sources]
    for s, side in enumerate(sides):
        if BAD not in side.columns:
            continue
        flagged = F.when(F.col(BAD).isNotNull(), F.struct(F.substring(BAD, 1, 1), ROW, BAD))
        with read_failures([sources[s]]):
            rows, first = side.agg(F.count(F.lit(1)), F.min(flagged)).first()
        if not rows:
            return no_lines_error(side, "run" if s else "qrels", sources[s])
        if first is not None:
            return problem_error(first[2], sources[s])
    last = sources.index(error.source) if error.source in sources[1:] else 0
    if scores_one_sided_queries(plan.conventions):
        last = 0  # a run without a judged query is evaluated, not refused
    for s in range(1, last + 1):
        if sides[s].join(sides[0], "q", "left_semi").limit(1).count() == 0:
            (run_query,), (judged_query,) = (side.agg(F.min_by("q", ROW)).first()
                                             for side in (sides[s], sides[0]))
            if judged_query is None:  # no rows: as the in-memory engine says it
                return no_judgments(plan.qrels_source)
            if run_query is None:
                return nothing_ranked(sources[s])
            return combine.no_common_query(plan, s - 1, str(run_query), str(judged_query))
    return error


def compare(run: Any, qrels: Any, measures: str | Sequence[str], baseline: str | None = None,
            test: str = "randomization", correction: str = "holm", alpha: float = 0.05,
            seed: int | None = 0, *, permutations: int = 10_000, confidence: float = 0.95,
            power: float = 0.8, interval: str | None = None, risk_alpha: float = 1.0,
            conventions: Conventions | str | None = None, **options: Any):
    """Evaluate several runs on Spark and compare them with significance tests on the
    per-query values (:func:`rankwise.compare`'s tests, corrections, options and writers).

    ``run`` maps names to DataFrames (two or more); ``options`` are :func:`evaluate`'s column,
    partitioning and convention keywords.

    Returns
    -------
    rankwise.compare.Comparison
    """
    from ..compare import compare_result

    result = evaluate(run, qrels, measures, conventions, per_query=True, **options)
    try:
        collected = result.collect()
    finally:
        result.unpersist()
    return compare_result(collected, baseline, test, correction, alpha, seed,
                          permutations=permutations, confidence=confidence, power=power,
                          interval=interval, risk_alpha=risk_alpha)


# ---------------------------------------------------------------------------- inputs


def _named_runs(run: Any) -> dict[str, Any]:
    if isinstance(run, Mapping):
        runs = {str(name): df for name, df in run.items()}
    else:
        runs = {"run": run}
    if not runs:
        raise InputError("no run given", source="run")
    for name, df in runs.items():
        if not hasattr(df, "schema") or not hasattr(df, "mapInArrow"):
            raise InputError("expected a Spark DataFrame (or {name: DataFrame})",
                             source=f"run {name!r}", value=type(df).__name__)
    return runs


def judged_levels(qrels, relevance: str) -> tuple[float, ...]:
    """The distinct judged grades (>= 0) of all the judgments, ascending: one small Spark job.
    Every chunk's lists carry them, as the in-memory engine's lists carry those of all the
    judgments, so that what reads the grade levels (ERR's default largest grade, the checks
    ``binary_judgments``, ``threshold_above_grades`` and ``exp_gain_levels``) sees the whole
    judgments, not a chunk's."""
    from pyspark.sql import functions as F

    grade = F.col(relevance).cast("double")
    found = qrels.select(F.array_sort(F.collect_set(F.when(grade >= 0, grade)))).first()[0]
    return tuple(float(g) + 0.0 for g in found)  # (+ 0.0: -0.0 is the grade 0)


def _sides(runs: dict[str, Any], qrels, query: str, doc: str, score: str, relevance: str,
           rank: str | None) -> list[Any]:
    """The judgments and every run as DataFrames of the same shape: q, d, v, r (row id in the
    input order: a Parquet folder's order of rows where its reader gives it, else Spark's),
    and where the input has them, rank and the reader's bad-line column. Ids
    keep their type where every input holds integers (the kernel keys integer doc ids as they
    are and makes strings of query ids only, one per query), else become strings."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    sides = [(qrels, relevance)] + [(df, score) for df in runs.values()]
    id_type = {c: T.LongType() if all(isinstance(columns_of(df)[c], T.IntegralType)
                                      for df, _ in sides) else T.StringType()
               for c in (query, doc)}
    out = []
    for s, (df, value) in enumerate(sides):
        columns = [F.col(query).cast(id_type[query]).alias("q"),
                   F.col(doc).cast(id_type[doc]).alias(DOC),
                   F.col(value).cast("double").alias(VALUE),
                   (F.col(ORDER_COLUMN) if ORDER_COLUMN in columns_of(df)
                    else F.monotonically_increasing_id()).alias(ROW)]
        if s > 0 and rank is not None and rank in columns_of(df):
            columns.append(F.col(rank).cast("long").alias(RANK))
        if BAD_COLUMN in columns_of(df):
            columns.append(F.col(BAD_COLUMN).cast("string").alias(BAD))
        out.append(df.select(*columns))
    return out


def _grouped(sides: list[Any], plan: Plan, partitions: int | None):
    """One row per query: per side the number of its rows, its smallest row id, and one list
    per field of its rows (d, v, and r where the order within a query matters, rank and bad
    where present); the sides grouped one by one and joined on the query (full outer join).

    Every ``collect_list`` of one aggregation sees the rows in the same order, so the lists
    are aligned; it leaves out nulls, so rank and bad are given non-null stand-ins (a missing
    doc id or value then shows as a list shorter than the count, which the kernel reports).
    Grouping each side on its own lets Spark combine each side's rows before the shuffle
    (partial aggregation) with fewer aggregates per row than one grouping of all sides with
    a side column; lists move to Python at a fraction of the cost of rows (measured in
    docs/spark.md).
    """
    from pyspark.sql import functions as F

    grouped = None
    for s, rows in enumerate(sides):
        fields = [F.collect_list(DOC).alias(side_column(DOC, s)),
                  F.collect_list(VALUE).alias(side_column(VALUE, s))]
        if plan.input_order:
            fields.append(F.collect_list(ROW).alias(side_column(ROW, s)))
        if RANK in rows.columns:
            fields.append(F.collect_list(F.coalesce(F.col(RANK), F.lit(NO_RANK).cast("long")))
                          .alias(side_column(RANK, s)))
        if BAD in rows.columns:
            fields.append(F.collect_list(F.coalesce(F.col(BAD), F.lit("")))
                          .alias(side_column(BAD, s)))
        if partitions:
            rows = rows.repartition(partitions, "q")
        side = rows.groupBy("q").agg(F.count(F.lit(1)).alias(side_column(COUNT, s)),
                                     F.min(ROW).alias(side_column(FIRST, s)), *fields)
        if grouped is None:
            grouped = side
            continue
        if partitions and s > 1:  # a full join's output is shuffled again for the next one
            grouped = grouped.repartition(partitions, "q")
        grouped = grouped.join(side, "q", "full")
    return grouped


def _check_columns(runs: dict[str, Any], qrels, query: str, doc: str, score: str,
                   relevance: str, rank: str | None) -> None:
    """Every input has the columns asked for, of usable types (InputError otherwise)."""
    sides = [(qrels, "qrels DataFrame", relevance)] + [
        (df, f"run DataFrame {name!r}", score) for name, df in runs.items()]
    for df, source, value in sides:
        _need(df, source, query, "id")
        _need(df, source, doc, "id")
        _need(df, source, value, "number")
        if rank is not None and rank in columns_of(df) and value == score:
            _need(df, source, rank, "integer")


def _estimated_bytes(df) -> float:
    """Spark's estimate of a DataFrame's size (no job runs); infinite when unknown."""
    try:
        return float(df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes())
    except Exception:  # noqa: BLE001  (no JVM plan, e.g. Spark Connect: assume large)
        return float("inf")


def _need(df, source: str, column: str, kind: str) -> None:
    """Raise InputError unless ``df`` has ``column`` of the right kind of type."""
    from pyspark.sql import types as T

    columns = columns_of(df)
    if column not in columns:
        raise InputError(f"no column {column!r} (columns: {', '.join(columns)}); name it with "
                         f"the {kind if kind != 'id' else 'query/doc'} column keywords",
                         source=source, value=column)
    dtype = columns[column]
    ok = {"id": (T.StringType, T.IntegralType), "number": (T.NumericType,),
          "integer": (T.IntegralType,)}[kind]
    if not isinstance(dtype, ok):
        expected = {"id": "strings or integers", "number": "numbers",
                    "integer": "integers"}[kind]
        raise InputError(f"column {column!r} must hold {expected}", source=source,
                         value=dtype.simpleString())


def _schema(plan: Plan):
    from pyspark.sql import types as T

    return T.StructType(
        [T.StructField("system", T.StringType()), T.StructField("query", T.StringType())]
        + [T.StructField(f"m{i}", T.DoubleType()) for i in range(len(plan.measures))]
        + [T.StructField(SUMMARY, T.StringType())])
