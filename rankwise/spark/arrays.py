"""From the array layout of Spark's ``RankingEvaluator`` / ``RankingMetrics`` (one row per
user: the predicted items in rank order, the relevant items, optionally their relevance
values) to rankwise's row layout (a run and judgments), in Spark's JVM (``posexplode``: no
Python per row).

Items held as floating-point numbers (RankingEvaluator wants ``array<double>``) become
their decimal text on both sides (``3.0``), so they still match. The predicted items get the
score ``-position`` (the first item scores highest, no ties), so
any tie convention gives Spark's order. Every label becomes a judgment with its relevance
value, 1 without one. A user whose label array is empty has no judgments: rankwise ignores it
(as a query only in the run), where RankingMetrics counts it as 0 (see docs/spark.md).
"""

from __future__ import annotations

from typing import Any


def from_ranking_columns(df: Any, prediction: str = "prediction", label: str = "label",
                         relevance: str | None = None, query: str | None = None):
    """``(run, qrels)`` DataFrames from a DataFrame of ranking arrays.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        One row per query (user).
    prediction, label : str
        Array columns: predicted items in rank order, and the relevant (held-out) items.
    relevance : str, optional
        Array column of the labels' relevance values (same length as ``label``).
    query : str, optional
        Column of query ids; default: a row number (``monotonically_increasing_id``).

    Returns
    -------
    (DataFrame, DataFrame)
        ``run`` with ``query``, ``doc``, ``score``; ``qrels`` with ``query``, ``doc``,
        ``relevance``.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    qid = F.col(query) if query is not None else F.monotonically_increasing_id()
    rows = df.select(qid.alias("query"), F.col(prediction).alias("_p"),
                     F.col(label).alias("_l"),
                     *([F.col(relevance).alias("_r")] if relevance is not None else []))
    types = {f.name: f.dataType for f in rows.schema.fields}
    as_id = {c: "string" if not isinstance(getattr(types[c], "elementType", None),
                                           (T.StringType, T.IntegralType)) else None
             for c in ("_p", "_l")}

    def item(column, side):  # items held as doubles (RankingEvaluator's type) become text ids
        return column.cast(as_id[side]) if as_id[side] else column

    run = rows.select("query", F.posexplode("_p").alias("_pos", "doc")).select(
        "query", item(F.col("doc"), "_p").alias("doc"),
        (-F.col("_pos")).cast("double").alias("score"))
    if relevance is None:
        qrels = rows.select("query", F.explode("_l").alias("doc")).select(
            "query", item(F.col("doc"), "_l").alias("doc"), F.lit(1.0).alias("relevance"))
    else:
        qrels = rows.select("query", F.explode(F.arrays_zip("_l", "_r")).alias("_j")).select(
            "query", item(F.col("_j._l"), "_l").alias("doc"),
            F.col("_j._r").cast("double").alias("relevance"))
    return run, qrels


def check_ranking_columns(df: Any, prediction: str, label: str, relevance: str | None,
                          source: str) -> None:
    """InputError unless ``df`` has the array columns asked for, of usable element types."""
    from pyspark.sql import types as T

    from ..errors import InputError
    from .io import columns_of

    columns = columns_of(df)
    wanted = [(prediction, "ids"), (label, "ids")] + ([(relevance, "numbers")] if relevance else [])
    for column, kind in wanted:
        if column not in columns:
            raise InputError(f"no column {column!r} (columns: {', '.join(columns)})",
                             source=source, value=column)
        dtype = columns[column]
        element = getattr(dtype, "elementType", None)
        ok = (T.StringType, T.NumericType) if kind == "ids" else (T.NumericType,)
        if not isinstance(dtype, T.ArrayType) or not isinstance(element, ok):
            raise InputError(f"column {column!r} must be an array of {kind}", source=source,
                             value=dtype.simpleString())


def grouped_ranking_columns(df: Any, plan: Any, prediction: str, label: str,
                            relevance: str | None, query: str | None):
    """The rows the kernels take (see :data:`rankwise.spark.partition.QUERY`), one per row of
    ``df``, built in place: what grouping :func:`from_ranking_columns`'s run and judgments by
    query gives (the same query and doc ids and types, scores ``-position``, relevance 1
    without a relevance column, empty or null arrays as a side without rows), without
    exploding or shuffling anything.

    An array element that is null is left out of its list while still counted, as
    ``collect_list`` leaves it out, so the kernel reports it. Row ids (needed only by
    conventions that follow the input order) are the 1-based positions in the arrays. The
    scores (``-position``), and the grades without a relevance column (1), are not sent: the
    kernel knows them from the positions (a third less data to move to Python).
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from .io import columns_of
    from .partition import COUNT, DOC, FIRST, QUERY, ROW, VALUE, side_column

    columns = columns_of(df)
    integral = {c: isinstance(columns[c].elementType, T.IntegralType) for c in (prediction, label)}
    keep = {c: integral[c] or isinstance(columns[c].elementType, T.StringType)
            for c in (prediction, label)}
    item_type = "bigint" if all(integral.values()) else "string"

    def items(column: str, values):  # as from_ranking_columns, then as evaluate's _sides
        if not keep[column]:
            values = F.transform(values, lambda x: x.cast("string"))
        return F.transform(values, lambda x: x.cast(item_type))

    if query is None:
        qid = F.monotonically_increasing_id()
    else:
        qid = F.col(query).cast("bigint" if isinstance(columns[query], T.IntegralType)
                                else "string")
    rows = df.select(qid.alias(QUERY), F.monotonically_increasing_id().alias("_first"),
                     F.col(prediction).alias("_p"),
                     F.arrays_zip(F.col(label).alias("l"), *(
                         [F.col(relevance).alias("r")] if relevance is not None else []))
                     .alias("_j"))
    judged = F.filter("_j", lambda e: e["l"].isNotNull())
    valued = None if relevance is None else F.transform(
        F.filter("_j", lambda e: e["r"].isNotNull()), lambda e: e["r"].cast("double"))
    sides = [
        ("_j", items(label, F.transform(judged, lambda e: e["l"])), valued),
        ("_p", items(prediction, F.filter("_p", lambda x: x.isNotNull())), None),
    ]
    out = [F.col(QUERY)]
    for s, (array, docs, values) in enumerate(sides):
        present = F.size(array) > 0  # null for a null array: the side has no rows
        fields = [(COUNT, F.size(array).cast("bigint")), (FIRST, F.col("_first")),
                  (DOC, docs)] + ([(VALUE, values)] if values is not None else [])
        if plan.input_order:
            fields.append((ROW, F.transform(array, lambda x, i: (i + 1).cast("bigint"))))
        out += [F.when(present, value).alias(side_column(field, s)) for field, value in fields]
    return rows.select(*out)
