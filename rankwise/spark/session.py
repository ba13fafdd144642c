"""A Spark session for rankwise, and the check that Spark can run here (it needs Java)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from typing import Any

from ..errors import InputError


def java_available() -> bool:
    """Whether a ``java`` executable is on the PATH or under ``JAVA_HOME`` (Spark needs one)."""
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        return True
    return shutil.which("java") is not None


def get_session(master: str = "local[*]", app_name: str = "rankwise",
                config: Mapping[str, Any] | None = None):
    """The active SparkSession, or a new one on ``master`` (``local[*]``: every core here).

    Worker processes run this Python (``PYSPARK_PYTHON`` defaults to it), so they import the
    same rankwise. On a cluster, ship rankwise to the executors (see docs/spark.md).

    Raises
    ------
    InputError
        When pyspark is not installed or no Java runtime is found.
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise InputError("the Spark engine needs pyspark: pip install 'rankwise[spark]'",
                         source="spark") from None
    if not java_available():
        raise InputError("the Spark engine needs a Java runtime (Java 17 or 21): none found on "
                         "the PATH or under JAVA_HOME", source="spark")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in {"spark.ui.showConsoleProgress": "false", **(config or {})}.items():
        builder = builder.config(key, value)
    spark = _started(builder, master)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _started(builder, master: str):
    """``builder.getOrCreate()``; an InputError when Spark does not start (a master URL it
    cannot parse, a Java runtime it cannot use: Spark's own output above says which)."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    try:
        return builder.getOrCreate()
    except (PySparkException, Py4JError) as exc:
        reason = str(exc).strip().splitlines()[0].rstrip(".") if str(exc).strip() \
            else type(exc).__name__
        raise InputError(f"Spark did not start with master {master!r} ({reason}): check "
                         "--spark-master (local[*], local[N], spark://HOST:PORT, yarn) and "
                         "Spark's output above", source="spark") from None
