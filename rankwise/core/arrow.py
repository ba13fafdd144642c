"""Conversions between Arrow and numpy that stay on the buffers, and Arrow's compute kernels
called without importing ``pyarrow.compute``.

pyarrow's own ``pa.array(ndarray)`` and ``Array.to_numpy()`` import pandas whenever it is
installed (about 0.17 s, more than evaluating 10k queries); these helpers read and wrap the
buffers directly. They accept null-free primitive arrays, as the readers produce.
``import pyarrow.compute`` builds a documented Python wrapper for each of Arrow's ~290
functions (about 27 ms, a tenth of evaluating 1,000 queries in a fresh process):
:func:`compute` calls the kernels by name instead.
"""

from __future__ import annotations

import numpy as np


def to_numpy(values, dtype, null=None) -> np.ndarray:
    """A primitive Arrow array (or chunked array) as a numpy array of ``dtype``; nulls become
    ``null`` (required when there are nulls).

    Booleans (bit-packed in Arrow) are unpacked; other types are read as they are stored.
    A chunked array is written chunk by chunk into one array (no array per chunk, no
    joining copy: reading 60M judgments, 2.0 s of conversions to 0.1-0.7 s).
    """
    if hasattr(values, "chunks"):
        out = np.empty(len(values), dtype=dtype)
        at = 0
        for chunk in values.chunks:
            n = len(chunk)
            if chunk.type.bit_width == 1 or chunk.null_count:
                out[at:at + n] = to_numpy(chunk, dtype, null)
            else:
                np.copyto(out[at:at + n], _stored(chunk), casting="unsafe")
            at += n
        return out
    if values.type.bit_width == 1:
        out = _bits(values.buffers()[1], values.offset, len(values))
    else:
        out = _stored(values).astype(dtype, copy=False)
    if values.null_count:
        out = np.where(_bits(values.buffers()[0], values.offset, len(values)), out, null)
    return out


def _stored(values) -> np.ndarray:
    """The values of a null-free, non-boolean primitive Arrow array as stored (a view of its
    buffer)."""
    stored = np.dtype(f"<{_kind(values.type)}{values.type.bit_width // 8}")
    return np.frombuffer(values.buffers()[1], dtype=stored)[
        values.offset:values.offset + len(values)]


def _kind(arrow_type) -> str:
    import pyarrow as pa

    if pa.types.is_floating(arrow_type):
        return "f"
    return "u" if pa.types.is_unsigned_integer(arrow_type) else "i"


def _bits(buffer, start: int, n: int) -> np.ndarray:
    bitmap = np.frombuffer(buffer, dtype=np.uint8)
    return np.unpackbits(bitmap, bitorder="little")[start:start + n].view(bool)


def indices(values: np.ndarray):
    """A numpy integer array as an Arrow int64 array (for ``take``), without copying."""
    import pyarrow as pa

    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def string_array(values: list):
    """An Arrow string array of a list of ``str``, built from one joined buffer (about three
    times faster than ``pa.array`` on a million ASCII ids, and without its import of pandas
    where pandas is installed: about 0.3 s); raises ``TypeError`` when an item is not a string.

    >>> string_array(["d1", "d22", "", "é"]).to_pylist()
    ['d1', 'd22', '', 'é']
    """
    import pyarrow as pa

    joined = "".join(values)
    if joined.isascii():
        data, sizes = joined.encode("ascii"), map(len, values)
    else:
        encoded = [value.encode("utf-8") for value in values]
        data, sizes = b"".join(encoded), map(len, encoded)
    if len(data) >= 2**31:  # beyond 32-bit offsets: Arrow's own builder splits it
        return pa.array(values, type=pa.string())
    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    np.cumsum(np.fromiter(sizes, dtype=np.int64, count=len(values)), out=offsets[1:])
    return pa.StringArray.from_buffers(len(values), pa.py_buffer(offsets), pa.py_buffer(data))


def to_arrow(values):
    """A list, tuple or 1-D numpy array as an Arrow array, without ``pa.array`` where the
    values are strings, integers, floats or booleans (``pa.array`` imports pandas where it is
    installed); anything else (nulls, mixed types) goes through ``pa.array``, its result and
    errors unchanged.

    >>> to_arrow(["a", "b"]).type, to_arrow([3, 4]).to_pylist(), to_arrow(np.array([True])).type
    (DataType(string), [3, 4], DataType(bool))
    """
    import pyarrow as pa

    if isinstance(values, (list, tuple)):
        try:
            return string_array(values)
        except TypeError:
            kinds = set(map(type, values))
            if not kinds <= {int, float}:  # mixed or other types: as Arrow does
                return pa.array(values)
    values = np.asarray(values)
    kind = values.dtype.kind
    if values.ndim == 1 and kind in "iufb":
        data = np.ascontiguousarray(values, dtype=values.dtype.newbyteorder("="))
        if kind == "b":
            data = np.packbits(data, bitorder="little")
            return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(data)])
        return pa.Array.from_buffers(pa.from_numpy_dtype(data.dtype), len(data),
                                     [None, pa.py_buffer(data)])
    if values.ndim == 1 and kind in "UO":
        try:
            return string_array(values.tolist())
        except TypeError:
            pass
    return pa.array(values)


def compute(name: str, *args, options=None):
    """Arrow's compute function ``name`` (e.g. ``"equal"``, ``"dictionary_encode"``) on
    ``args``, with an options object from :func:`compute_options` where it takes one."""
    return _kernels().call_function(name, list(args), options)


def compute_options(kind: str, *args, **kwargs):
    """An options object of Arrow's compute functions, e.g. ``compute_options("SetLookup",
    value_set)`` for ``index_in`` or ``compute_options("Sort", sort_keys=[...])``."""
    return getattr(_kernels(), f"{kind}Options")(*args, **kwargs)


def index_in(values, value_set) -> np.ndarray:
    """Position of each of ``values`` in ``value_set`` (Arrow arrays), -1 where absent."""
    return to_numpy(compute("index_in", values, options=compute_options("SetLookup", value_set)),
                    np.int64, null=-1)


def all_equal(a, b) -> bool:
    """Whether two Arrow arrays of one length hold the same values, element by element."""
    return bool(compute("all", compute("equal", a, b)).as_py())


def starts_of_equal_runs(values) -> np.ndarray:
    """Where each run of equal consecutive values of an Arrow array or chunked array (no
    nulls) starts, 0 first: one comparison of the column with itself shifted by a row."""
    n = len(values)
    change = np.ones(n, dtype=bool)
    if n > 1:
        change[1:] = to_numpy(compute("not_equal", values.slice(1), values.slice(0, n - 1)), bool)
    return np.flatnonzero(change)


def take(values, rows):
    """``values.take(rows)`` (``rows``: a numpy integer array or Arrow indices).

    A chunked array of several chunks is taken from chunk by chunk: Arrow's own take first
    joins all the chunks (a copy of the whole column per call: 31 ms for a 10M-row column of
    22-byte ids, against 6 ms for 400k rows taken chunk by chunk).
    """
    if hasattr(values, "chunks") and values.num_chunks > 1 and not hasattr(rows, "type"):
        taken = _take_from_chunks(values, np.asarray(rows))
        if taken is not None:
            return taken
    return compute("take", values, rows if hasattr(rows, "type") else indices(rows))


def _take_from_chunks(values, rows: np.ndarray):
    """:func:`take` on a chunked array, chunk by chunk; a chunked array (one chunk per chunk
    read from, in that order, when ``rows`` come chunk by chunk, as ascending rows do; else
    one chunk). None where Arrow's own take must answer: no rows, rows out of range (its
    error), dictionary chunks (whose dictionaries may differ), rows out of chunk order whose
    values hold more string data than one chunk can."""
    import pyarrow as pa

    lengths = np.array([len(chunk) for chunk in values.chunks], dtype=np.int64)
    ends = np.cumsum(lengths)
    if len(rows) == 0 or pa.types.is_dictionary(values.type) \
            or int(rows.min()) < 0 or int(rows.max()) >= int(ends[-1]):
        return None
    chunk = np.searchsorted(ends, rows, side="right")
    order = None
    if np.any(chunk[1:] < chunk[:-1]):  # not grouped by chunk
        order = np.argsort(chunk, kind="stable")
        rows, chunk = rows[order], chunk[order]
    cuts = np.searchsorted(chunk, np.arange(len(lengths) + 1))
    parts = [compute("take", values.chunk(c), indices(rows[cuts[c]:cuts[c + 1]] - ends[c]
                                                      + lengths[c]))
             for c in range(len(lengths)) if cuts[c + 1] > cuts[c]]
    if order is None:
        return pa.chunked_array(parts, type=values.type)
    if sum(part.nbytes for part in parts) >= 1 << 31:
        return None
    inverse = np.empty_like(order)  # back to the order asked for
    inverse[order] = np.arange(len(order))
    joined = parts[0] if len(parts) == 1 else pa.concat_arrays(parts)
    return pa.chunked_array([compute("take", joined, indices(inverse))], type=values.type)


def cast(values, arrow_type):
    """``values.cast(arrow_type)``, checked as Arrow's default (safe) cast is."""
    return compute("cast", values, options=compute_options("Cast", arrow_type))


def _kernels():
    """The module holding Arrow's kernel entry point and options classes (the one
    ``pyarrow.compute`` wraps; that module itself where a pyarrow release moves them)."""
    try:
        from pyarrow import _compute
    except ImportError:  # pragma: no cover - every pyarrow since 1.0 has it
        import pyarrow.compute as _compute
    return _compute
