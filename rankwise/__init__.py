"""rankwise: ranking evaluation you can trust, fast at every scale.

    >>> import rankwise
    >>> rankwise.evaluate({"q": {"a": 1}}, {"q": {"a": 2.0, "b": 1.0}}, ["P@1"]).mean("P@1")
    1.0

``import rankwise`` loads numpy only; pyarrow loads when data is first read (its allocator
then commits memory as it is used: :func:`rankwise.core.memory.arrow_memory_on_demand`).
"""

from .core import memory as _memory

_memory.arrow_memory_on_demand()  # before anything loads pyarrow

from .api import evaluate
from .compare import compare
from .conventions import TREC_EVAL, Conventions
from .errors import InputError, MeasureError
from .io import Qrels, Run, from_arrays, read_qrels, read_run, to_qrels, to_run, write_qrels, write_run
from .measures import Measure, parse_measure, parse_measures
from .results import Result

__version__ = "0.1.0"

__all__ = [
    "Conventions", "InputError", "Measure", "MeasureError", "Qrels", "Result", "Run", "TREC_EVAL",
    "compare", "evaluate", "evaluate_judgment_groups", "evaluate_preferences", "explain", "explain_many", "report", "from_arrays", "parse_measure", "parse_measures", "read_qrels", "read_run",
    "standardize", "to_qrels", "to_run", "write_qrels", "write_run", "__version__",
]

#: Loaded on first use, so that ``import rankwise`` stays light.
_LAZY = {"explain_many": ".explain", "standardize": ".zscores",
         "evaluate_judgment_groups": ".judgment_groups", "evaluate_preferences": ".preferences"}


def __getattr__(name: str):
    import importlib

    if name in ("report", "explain"):  # callable modules: rankwise.report(...), .explain(...)
        return importlib.import_module("." + name, __name__)
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rankwise' has no attribute {name!r}")
