"""core.arrow.to_numpy against pyarrow's own conversion: arrays and chunked arrays (sliced,
empty, with nulls, booleans), cast to the dtype asked for."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from rankwise.core.arrow import to_numpy


def _chunked(arrays: list) -> pa.ChunkedArray:
    return pa.chunked_array(arrays, type=arrays[0].type if arrays else pa.int64())


@pytest.mark.parametrize("values, dtype", [
    (pa.array([3, 1, 2], pa.int64()), np.float64),
    (pa.array([3, 1, 2], pa.int32()), np.int64),
    (pa.array([0.5, 2.0], pa.float64()), np.float64),
    (pa.array([7, 8, 9, 10], pa.uint8()).slice(1, 2), np.int32),
    (_chunked([pa.array([1, 2, 3], pa.int64()), pa.array([], pa.int64()),
               pa.array([4, 5, 6, 7], pa.int64()).slice(1)]), np.float64),
    (_chunked([pa.array([1.5], pa.float64()), pa.array([2.5, 3.5], pa.float64())]), np.float64),
    (_chunked([pa.array([True, False, True]), pa.array([False, True]).slice(1)]), bool),
    (_chunked([]), np.float64),
])
def test_same_values_as_pyarrow(values, dtype):
    got = to_numpy(values, dtype)
    expected = values.to_numpy(zero_copy_only=False) if len(values) else np.zeros(0)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, np.asarray(expected).astype(dtype))


def test_nulls_become_the_value_given_chunk_by_chunk():
    values = _chunked([pa.array([1, None, 3], pa.int64()), pa.array([4, 5], pa.int64()),
                       pa.array([None, 7], pa.int64())])
    np.testing.assert_array_equal(to_numpy(values, np.int64, null=-1), [1, -1, 3, 4, 5, -1, 7])
