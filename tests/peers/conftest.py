"""ranx compiles its kernels with numba on first use (about 40 s); the compiled code is cached
in the repository's git-ignored ``.numba-cache/`` unless ``NUMBA_CACHE_DIR`` says otherwise.
Set before any test module of this folder imports numba."""

import os
from pathlib import Path

os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(__file__).resolve().parents[2] / ".numba-cache"))
