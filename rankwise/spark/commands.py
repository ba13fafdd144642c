"""The command line's Spark engine: ``rankwise evaluate --engine spark``.

:func:`add_engine_options` adds the options to the ``evaluate`` command; with ``--engine
spark`` the command calls :func:`evaluate_from_args`, which reads the files with Spark (TREC
text, plain or ``.gz``, or Parquet, from any path Spark reads) and returns the same
:class:`~rankwise.Result` as the in-memory engine, so every output format prints the same.
Importing this module imports no Spark.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

ENGINES = ("memory", "spark")


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """``--engine``, ``--spark-master`` and the Spark engine's other options."""
    from .io import FORMATS

    group = parser.add_argument_group("engine", "where the evaluation runs (the numbers are the "
                                      "same)")
    group.add_argument("--engine", choices=ENGINES, default="memory",
                       help="memory (default): this process; spark: Apache Spark, for inputs "
                       "larger than memory or already on a cluster (pip install 'rankwise[spark]')")
    group.add_argument("--spark-master", default="local[*]", metavar="URL",
                       help="Spark master URL (default local[*]: every core of this machine)")
    group.add_argument("--spark-input", choices=FORMATS, default="auto",
                       help="format of QRELS and RUN with --engine spark: TREC text, Parquet "
                       "(columns query, doc, score / relevance) or auto: Parquet for *.parquet "
                       "and folders of Parquet files, TREC text otherwise")
    group.add_argument("--spark-per-query-output", metavar="PATH",
                       help="with --engine spark: write the per-query table there as Parquet")
    group.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                       help="a Spark setting, e.g. spark.driver.memory=8g (repeatable)")


def evaluate_from_args(args: argparse.Namespace, conventions: Any,
                       measures: Sequence[str] | None = None):
    """Evaluate the files named in ``args`` with Spark; the result as the in-memory engine
    gives it (per-query values collected when ``--per-query`` asks for them).

    ``measures`` default to ``args.measures`` (else ``official``), a profile's peer names
    translated.
    """
    from ..cli import QRELS_COLUMNS, RUN_COLUMNS, column_names, run_labels
    from ..errors import InputError
    from .api import evaluate
    from .io import read_qrels, read_run, skipped_files
    from .session import get_session

    if measures is None:
        measures = getattr(args, "measures", None) or ["official"]
        if getattr(args, "profile", None):
            from ..conventions import profile

            measures = profile(args.profile).measure_names(measures)
    config = {}
    for item in args.spark_conf or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError("--spark-conf takes KEY=VALUE", source="--spark-conf", value=item)
        config[key.strip()] = value.strip()
    spark = get_session(args.spark_master, config=config)
    fmt = args.spark_input
    qrels = read_qrels(spark, args.qrels, fmt, column_names(args, QRELS_COLUMNS))
    runs, sources, skipped = {}, {}, {}
    labels = run_labels(args.runs)
    for label, path in labels.items():
        frame, tag = read_run(spark, path, format=fmt,
                              columns=column_names(args, RUN_COLUMNS))
        label = tag if len(args.runs) == 1 else label
        runs[label] = frame
        sources[label] = str(path)
        skipped[label] = skipped_files(str(path), fmt)
    keep = bool(args.per_query or args.spark_per_query_output)
    result = evaluate(runs, qrels, measures, conventions, per_query=keep,
                      qrels_source=str(args.qrels), run_sources=sources,
                      qrels_skipped_files=skipped_files(str(args.qrels), fmt),
                      run_skipped_files=skipped, per_query_path=args.spark_per_query_output)
    if not args.per_query:
        result.unpersist()
        return result
    try:
        return result.collect()
    finally:
        result.unpersist()
