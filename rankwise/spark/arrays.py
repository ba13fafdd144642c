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
