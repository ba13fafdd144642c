"""Conversions between Arrow and numpy that stay on the buffers.

pyarrow's own ``pa.array(ndarray)`` and ``Array.to_numpy()`` import pandas whenever it is
installed (about 0.17 s, more than evaluating 10k queries); these helpers read and wrap the
buffers directly. They accept null-free primitive arrays, as the readers produce.
"""

from __future__ import annotations

import numpy as np



def to_numpy(values, dtype, null=None) -> np.ndarray:
    """A primitive Arrow array (or chunked array) as a numpy array of ``dtype``; nulls become
    ``null`` (required when there are nulls).

    Booleans (bit-packed in Arrow) are unpacked; other types are read as they are stored.
    """
    if hasattr(values, "chunks"):
        parts = [to_numpy(chunk, dtype, null) for chunk in values.chunks]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)
    n, start = len(values), values.offset
    validity, data = values.buffers()[:2]
    if values.type.bit_width == 1:
        out = _bits(data, start, n)
    else:
        stored = np.dtype(f"<{_kind(values.type)}{values.type.bit_width // 8}")
        out = np.frombuffer(data, dtype=stored)[start:start + n].astype(dtype, copy=False)
    if values.null_count:
        out = np.where(_bits(validity, start, n), out, null)
    return out


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
