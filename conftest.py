"""Collection settings for the whole suite: the doctests of the modules built on an optional
library are left out where it is not installed (``make test-minimum``'s environment; the full
test environment has them all, which ``tests/test_environment.py`` checks)."""

from __future__ import annotations

import importlib.util

#: module -> the optional library its doctests import
_OPTIONAL = {"rankwise/torch.py": "torch", "rankwise/lightgbm.py": "lightgbm",
             "rankwise/xgboost.py": "xgboost", "rankwise/spark": "pyspark"}

collect_ignore = [path for path, library in _OPTIONAL.items()
                  if importlib.util.find_spec(library) is None]
