"""Dict-of-dicts ``{query: {doc: value}}`` to columns in a few C-level passes
(``itertools.chain``, ``np.array``, one joined string buffer) instead of a Python loop over
every value: the fast path of :func:`rankwise.to_run` / :func:`rankwise.to_qrels` for dicts.
Anything unusual (ids that are not strings or empty, values that are not numbers) returns
``None`` and goes to the general reader, which accepts what it can and names the offending key
otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain
from typing import Any

import numpy as np

from ..core.arrow import string_array


#: Value types that numpy turns into numbers beside numbers, for the general reader to look
#: at: booleans (refused) and arrays (refused unless they hold one number: ``np.array(True)``
#: beside floats was read as 1).
CLOSER_LOOK = frozenset({bool, np.bool_, np.ndarray})


def nested_columns(nested: Mapping) -> tuple[np.ndarray, Any, Any, np.ndarray] | None:
    """(query code per row, distinct query ids, doc ids, values), or None when the dict needs
    the general reader (non-string or empty ids, non-numeric values, inner values that are
    not dicts)."""
    import pyarrow as pa

    if not isinstance(nested, Mapping):
        return None
    inner = [d for d in nested.values()]
    if not all(isinstance(d, dict) for d in inner):
        return None
    keep = [i for i, d in enumerate(inner) if d]  # queries with an empty dict have no rows
    qids = list(nested.keys())
    qids = [qids[i] for i in keep]
    inner = [inner[i] for i in keep]
    sizes = np.fromiter(map(len, inner), dtype=np.int64, count=len(inner))
    total = int(sizes.sum())
    if not all(type(q) is str for q in qids) or "" in nested or any("" in d for d in inner):
        return None  # an empty id is refused there, naming its key (one lookup per dict)
    try:
        docs = string_array(list(chain.from_iterable(inner)))
        flat = list(chain.from_iterable(d.values() for d in inner))
        values = np.array(flat)
        query_ids = string_array(qids)
    except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError, TypeError):  # UnicodeEncodeError too
        return None
    if values.dtype.kind not in "fiu" or values.shape != (total,) \
            or not CLOSER_LOOK.isdisjoint(map(type, flat)):  # numpy makes numbers of them
        return None
    codes = np.repeat(np.arange(len(qids), dtype=np.int32), sizes)
    return codes, query_ids, docs, values.astype(np.float64, copy=False)
