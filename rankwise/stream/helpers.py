"""Small helpers shared by the streaming modules."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ..core.segments import distinct


def block_cuts(starts: np.ndarray, n: int, step: int) -> np.ndarray:
    """Where blocks of whole queries of about ``step`` rows begin, ``n`` last: a cut falls
    on the first query start (``starts``, ascending) at or past each multiple of ``step``."""
    bounds = np.append(starts, n)
    return distinct(np.concatenate([[0], bounds[np.searchsorted(
        bounds, np.arange(step, n, step))], [n]]))


def two_at_a_time(work: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
    """``work(item)`` of every item, in order, on two threads (numpy and Arrow release the
    interpreter lock), at most two items in hand: an error is raised when its item's turn
    comes, so the first failing item in order raises, as one at a time would."""
    from collections import deque

    todo = iter(items)
    with ThreadPoolExecutor(max_workers=2) as pool:
        pending = deque(pool.submit(work, item) for _, item in zip(range(2), todo))
        while pending:
            result = pending.popleft().result()
            for item in todo:
                pending.append(pool.submit(work, item))
                break
            yield result
            del result


def integer_docs(docs) -> bool:
    """Whether a column of doc ids (as the readers make them) holds integers."""
    import pyarrow as pa

    return pa.types.is_integer(docs.type)


def chunks_of(values) -> list:
    return list(values.chunks) if hasattr(values, "chunks") else [values]
