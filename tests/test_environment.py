"""The test environment holds every library of the ``test`` extra: many tests skip where
their library is missing (``pytest.importorskip``), so that ``make test-minimum`` can run the
suite's core without Spark, torch or the browser; in ``make test`` a library that failed to
install would otherwise pass silently as skips."""

from __future__ import annotations

import os
import re
from importlib import metadata

import pytest


def _requirements(extra: str) -> list[str]:
    """The distributions an extra of the installed rankwise names (its own extras unfolded)."""
    names = []
    for requirement in metadata.requires("rankwise") or []:
        if f'extra == "{extra}"' not in requirement:
            continue
        name = re.match(r"[A-Za-z0-9._-]+(?:\[([^\]]+)\])?", requirement)
        names += _requirements(name.group(1)) if name.group(0).startswith("rankwise[") \
            else [name.group(0)]
    return names


@pytest.mark.skipif(os.environ.get("RANKWISE_TEST_CORE_ONLY") == "1",
                    reason="make test-minimum installs the test-core extra only")
def test_every_library_of_the_test_extra_is_installed():
    names = _requirements("test")
    assert "torch" in names and "pytest" in names  # the extra and the one it includes
    missing = []
    for name in names:
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    assert missing == [], f"not installed: {missing} (pip install -e '.[test]')"


def test_the_core_extra_is_installed():
    names = _requirements("test-core")
    assert "pytest" in names
    assert all(metadata.version(name) for name in names)
