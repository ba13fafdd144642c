"""Compile rankwise's bytecode before timing it, as ``pip install`` does for an installed wheel.

The peers come from wheels, whose ``.pyc`` files pip writes at install time. rankwise in this
checkout is an editable install: Python writes its ``.pyc`` files on first import, unless
``PYTHONDONTWRITEBYTECODE`` is set, in which case every process compiles every module again
(about 40 ms for ``import rankwise``, more for a whole evaluation). Compiling them once here
makes every tool start from the same state; a stale or missing ``.pyc`` is still handled by
Python as usual.
"""

from __future__ import annotations

import subprocess
import sys

_COMPILE = ("import compileall, os, rankwise; "
            "ok = compileall.compile_dir(os.path.dirname(rankwise.__file__), quiet=1); "
            "raise SystemExit(0 if ok else 1)")


def compile_rankwise(env: dict | None = None) -> None:
    """Write the ``.pyc`` files of the rankwise that ``env`` imports (``py_compile`` writes
    them even where ``PYTHONDONTWRITEBYTECODE`` is set)."""
    subprocess.run([sys.executable, "-c", _COMPILE], env=env, check=True)
