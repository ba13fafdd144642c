"""rankwise on Apache Spark: the same measures, conventions, diagnostics and statistics on
DataFrames of any size::

    import rankwise.spark as rs

    result = rs.evaluate(run_df, qrels_df, ["nDCG@10", "AP"], per_query=True)
    result.mean("nDCG@10")
    result.per_query_frame.write.parquet("per_query")

Importing this package does not import pyspark; the functions do. See docs/spark.md.
"""

from .api import SparkResult, compare, evaluate, evaluate_ranking_columns
from .io import read_qrels, read_run, skipped_files
from .session import get_session, java_available

__all__ = ["SparkResult", "compare", "evaluate", "evaluate_ranking_columns", "get_session",
           "java_available", "read_qrels", "read_run", "skipped_files"]
