"""Shared fixtures of the Spark engine's tests: one local[2] SparkSession for the whole run
(small shuffle and Arrow batches, so that even tiny data spreads over several partitions and
chunks), skipped with a clear message only where no Java runtime is installed."""

from __future__ import annotations

import pytest

from rankwise.spark.session import java_available


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")  # (make test-minimum installs no Spark)
    if not java_available():
        pytest.skip("the Spark engine's tests need a Java runtime (Java 17 or 21): no 'java' "
                    "on the PATH or under JAVA_HOME")
    from rankwise.spark.session import get_session

    session = get_session("local[2]", "rankwise-tests", {
        "spark.sql.shuffle.partitions": "4",
        "spark.default.parallelism": "2",
        "spark.sql.execution.arrow.maxRecordsPerBatch": "64",
        "spark.ui.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
    })
    yield session
    session.stop()
