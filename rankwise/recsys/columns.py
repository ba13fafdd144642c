"""Column helpers of the recommender readers: a frame's columns found by name, ids checked
and coded, numbers checked, named options checked."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.arrow import (cast, compute, starts_of_equal_runs, string_array, take, to_arrow,
                          to_numpy)
from ..core.segments import starts_of_runs
from ..errors import InputError
from ..io.frames import table_columns
from ..io.tables import id_arrow, is_missing, is_whole_decimal


def frame_columns(obj: Any, what: str, user: str, item: str, value: str | None,
                  rank: str | None, need_value: bool = True):
    """Columns of a pandas/polars DataFrame or Arrow table as Arrow arrays, and which of the
    value columns (``score``/``rating`` or ``rank``) are present; (None, {}) otherwise."""
    available, getter = table_columns(obj, f"{what} {type(obj).__name__}")
    if getter is None:
        return None, {}
    names: dict[str, str | None] = {}
    for label, name in (("user", user), ("item", item)):
        if name not in available:
            raise InputError(f"{what} frame has no {label} column {name!r} (columns: "
                             f"{', '.join(available)}); name it with {label}=",
                             source=f"{what} {type(obj).__name__}")
    if rank is not None and rank not in available:
        raise InputError(f"{what} frame has no rank column {rank!r} (columns: "
                         f"{', '.join(available)})", source=f"{what} {type(obj).__name__}")
    if rank is not None:
        names["rank"] = rank
    elif value is not None and value in available:
        names["score"] = value
    wanted = [user, item] + [v for v in names.values() if v]
    return {c: one_chunk(getter(c)) for c in wanted}, names


def one_chunk(values: Any):
    """An Arrow column as one array (an Arrow table holds chunked ones)."""
    return values.combine_chunks() if hasattr(values, "chunks") else values


def user_values(values: Any, source: str):
    """User ids of many rows: an Arrow integer array as it is (encoded before it becomes
    strings), anything else as :func:`user_strings`."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array) and pa.types.is_integer(values.type) and not values.null_count:
        return values
    return user_strings(values, source)


#: The place of a row of ids in the input as a message names it: ``(place, unit)``, e.g.
#: ``("'u1'[2]", "key")`` for the third item of user u1's list in a dict.
Locate = Callable[[int], tuple[Any, str]]


def user_strings(values: Any, source: str, locate: Locate | None = None):
    """User ids as an Arrow string array (integers become their decimal strings)."""
    import pyarrow as pa

    values = id_array(values, source, "user", locate)
    if len(values) == 0:  # an empty frame's column, of whatever type (pandas: float64)
        return string_array([])
    if pa.types.is_integer(values.type) or pa.types.is_large_string(values.type) \
            or is_whole_decimal(values.type):
        values = cast(values, pa.string())
    elif not pa.types.is_string(values.type):
        raise InputError("user ids must be strings or integers", source=source,
                         value=str(values.type))
    return values


def item_values(values: Any, source: str, locate: Locate | None = None):
    """Item ids as a numpy int64 array (integer ids) or an Arrow string array."""
    import pyarrow as pa

    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        return values.astype(np.int64, copy=False)
    values = id_array(values, source, "item", locate)
    if len(values) == 0:  # an empty frame's column, of whatever type (pandas: float64)
        return np.zeros(0, dtype=np.int64)
    if pa.types.is_integer(values.type):
        return to_numpy(values, np.int64, null=0)
    if pa.types.is_large_string(values.type) or is_whole_decimal(values.type):
        values = cast(values, pa.string())
    if not pa.types.is_string(values.type):
        raise InputError("item ids must be strings or integers", source=source,
                         value=str(values.type))
    return values


def id_array(values: Any, source: str, what: str, locate: Locate | None = None):
    """User or item ids (``what``) as one Arrow array without nulls or dictionary encoding;
    the caller checks the type. A missing id (null; in a Python sequence None, NaN or
    pandas' NA or NaT) raises :class:`InputError` naming its row, or its place
    ``locate(row)``."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        listed = values if isinstance(values, np.ndarray) else list(values)
        try:
            values = id_arrow(listed, source, what)
        except ValueError:  # NaN among strings: refused in Arrow's words (NaT: its ValueError)
            _refuse_missing(listed, source, what, locate)
            raise
        if pa.types.is_floating(values.type):  # NaN among integers: a float column
            _refuse_missing(listed, source, what, locate)
    if pa.types.is_dictionary(values.type):
        values = take(values.dictionary, values.indices)
    if values.null_count:
        row = int(np.flatnonzero(to_numpy(compute("is_null", values), bool))[0])
        raise missing_id(what, source, row, locate)
    return values


def missing_id(what: str, source: str, row: int, locate: Locate | None) -> InputError:
    """The error for a missing ``what`` id at ``row`` (named by its place with ``locate``)."""
    line, unit = (row, "row") if locate is None else locate(row)
    return InputError(f"missing {what} id", source=source, line=line, unit=unit)


def _refuse_missing(values: Any, source: str, what: str, locate: Locate | None) -> None:
    """Raise :func:`missing_id` for the first missing id among ``values``, if there is one."""
    row = next((i for i, v in enumerate(values) if is_missing(v)), None)
    if row is not None:
        raise missing_id(what, source, row, locate)


def as_strings(values: Any):
    import pyarrow as pa

    if isinstance(values, np.ndarray):
        return cast(to_arrow(values), pa.string())
    return values


def numeric_column(values: Any, source: str, what: str) -> np.ndarray:
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if values.null_count:
        row = int(np.flatnonzero(to_numpy(compute("is_null", values), bool))[0])
        raise InputError(f"missing {what}", source=source, line=row, unit="row")
    if not (pa.types.is_integer(values.type) or pa.types.is_floating(values.type)
            or pa.types.is_decimal(values.type)):
        raise InputError(f"{what} must be a number", source=source, value=str(values.type))
    return to_numpy(cast(values, pa.float64()), np.float64)


def check_number(value: Any, source: str, user: Any, item: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise InputError("expected a number", source=source, line=f"{user!r}/{item!r}",
                         unit="key", value=repr(value))
    if not np.isfinite(value):
        raise InputError("expected a finite number", source=source, line=f"{user!r}/{item!r}",
                         unit="key", value=repr(value))
    return float(value)


def check_threshold(threshold: Any) -> float:
    """The relevance threshold as a plain Python number; anything but a finite number raises
    :class:`InputError` (NaN or infinity would make nothing, or every rating, relevant)."""
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, numbers.Real):
        raise InputError("threshold must be a number", source="threshold", value=repr(threshold))
    if not math.isfinite(threshold):
        raise InputError("threshold must be a finite number", source="threshold",
                         value=repr(float(threshold)))
    return int(threshold) if isinstance(threshold, numbers.Integral) else float(threshold)


def check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise InputError(f"{name} must be one of {', '.join(choices)}", source=name,
                         value=str(value))


def check_distinct(ids, source: str) -> None:
    if len(compute("unique", ids)) != len(ids):
        counts = compute("value_counts", ids)
        twice = [v["values"] for v in counts.to_pylist() if v["counts"] > 1][:1]
        raise InputError("a user has two recommendation lists", source=source,
                         value=str(twice[0]) if twice else None)


def encode(ids) -> tuple[np.ndarray, Any]:
    """Code of every id (0, 1, ... in order of first appearance) and the distinct ids, of the
    Arrow array's type. Ids already grouped (each id's rows together) are coded from their
    runs, without hashing every row."""
    starts, first = run_starts(ids)
    if len(starts) == count_distinct_ids(first):
        codes = np.zeros(len(ids), dtype=np.int64)
        codes[starts[1:]] = 1
        np.cumsum(codes, out=codes)
        return codes, first
    return hashed_codes(ids)


def hashed_codes(ids) -> tuple[np.ndarray, Any]:
    """:func:`encode` for ids in any order."""
    encoded = compute("dictionary_encode", ids)
    return to_numpy(encoded.indices, np.int64, null=0), encoded.dictionary


def run_starts(ids) -> tuple[np.ndarray, Any]:
    """Where every run of equal consecutive ids starts (an Arrow array of integers or
    strings), and the id of each run."""
    import pyarrow as pa

    if len(ids) == 0:
        return np.zeros(0, dtype=np.int64), ids
    if pa.types.is_integer(ids.type):
        starts = starts_of_runs(to_numpy(ids, np.int64, null=0))
    else:
        starts = starts_of_equal_runs(ids)
    return starts, take(ids, starts)


def count_distinct_ids(ids) -> int:
    return compute("count_distinct", ids).as_py() if len(ids) else 0


def as_integers(ids) -> np.ndarray | None:
    """Integer ids (an Arrow array) as int64, None for other ids (or unsigned 64-bit ones,
    which int64 cannot hold)."""
    import pyarrow as pa

    if not pa.types.is_integer(ids.type) or pa.types.is_uint64(ids.type):
        return None
    return to_numpy(ids, np.int64, null=0)


def index_in_numbers(values: np.ndarray, numbers: np.ndarray) -> np.ndarray:
    """Where each value is in ``numbers`` (distinct), -1 where it is not."""
    out = np.full(len(values), -1, dtype=np.int64)
    if len(numbers) == 0 or len(values) == 0:
        return out
    order = None if np.all(numbers[1:] > numbers[:-1]) else np.argsort(numbers)
    ordered = numbers if order is None else numbers[order]
    at = np.minimum(np.searchsorted(ordered, values), len(ordered) - 1)
    found = ordered[at] == values
    out[found] = at[found] if order is None else order[at[found]]
    return out
