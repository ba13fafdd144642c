"""The Spark examples of docs/spark.md, as tests/test_docs_examples.py runs the others: the
Python blocks on the session of conftest.py (which their ``SparkSession.builder.getOrCreate()``
returns), and the ``--engine spark`` command lines through the command line's ``main`` in this
process, on the same session (a command of their own would start a Java VM each, 20 s)."""

from __future__ import annotations

import pytest

from tests.test_docs_examples import (check_python_example, check_shell_line, python_cases,
                                      shell_cases, write_example_data)

pytestmark = pytest.mark.slow


@pytest.fixture
def folder(spark, tmp_path, monkeypatch):
    """The example files in the working directory of this process and of Spark's local file
    systems, which resolve relative paths against it (by default the directory its Java VM
    started in, as a command of its own would start it here): the cached one, and the raw
    one the readers make for each read (rankwise.spark.io.UNVERIFIED), which starts in the
    Java VM's ``user.dir``."""
    write_example_data(tmp_path)
    monkeypatch.chdir(tmp_path)
    hadoop, system = spark._jvm.org.apache.hadoop.fs, spark._jvm.java.lang.System
    local = hadoop.FileSystem.getLocal(spark._jsc.hadoopConfiguration())
    started_in, user_dir = local.getWorkingDirectory(), system.getProperty("user.dir")
    local.setWorkingDirectory(hadoop.Path(str(tmp_path)))
    system.setProperty("user.dir", str(tmp_path))
    yield tmp_path
    local.setWorkingDirectory(started_in)
    system.setProperty("user.dir", user_dir)


@pytest.mark.parametrize("block, example", python_cases(spark=True))
def test_python_block(block, example, folder):
    check_python_example(block, example, folder)


@pytest.mark.parametrize("block, example, line", shell_cases(spark=True))
def test_shell_line(block, example, line, folder):
    check_shell_line(block, example, line, folder, in_process=True)
