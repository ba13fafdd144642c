"""Put a run's rows in ranked order: query by query, score descending, ties by a policy.

TREC runs are nearly always written query by query in score order, so the order is first
*proved* in O(n); only rows tied on (query, score) are then re-ordered. A full sort is the
fallback for unordered input.
"""

from __future__ import annotations

import numpy as np

from .segments import starts_of_runs


def ranking_order(run, ties: str) -> tuple[np.ndarray, np.ndarray]:
    """Row indices of ``run`` in ranked order, and the offsets of each query's block.

    Returns ``(order, offsets)``: ``order[offsets[b]:offsets[b+1]]`` are the rows of the b-th
    query block, best first. Each query occupies exactly one block.

    ``ties``: ``"docid_desc"`` (trec_eval: doc ids compared as byte strings, larger first),
    ``"docid_asc"`` or ``"input_order"``.
    """
    qc, score = run.query_code, run.score
    n = len(qc)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(1, np.int64)
    new_query = qc[1:] != qc[:-1]
    grouped = int(new_query.sum()) + 1 == run.num_queries
    if grouped and not np.any((score[1:] > score[:-1]) & ~new_query):
        order = np.arange(n, dtype=np.int64)
        tied = (score[1:] == score[:-1]) & ~new_query
        if ties != "input_order" and tied.any():
            _order_ties(order, tied, run, ties)
    else:
        order = _full_sort(run, ties)
    boundaries = starts_of_runs(qc[order])
    return order, np.append(boundaries, n).astype(np.int64)


def _order_ties(order: np.ndarray, tied: np.ndarray, run, ties: str) -> None:
    """Re-order, in place, the rows of each tie group by doc id."""
    in_group = np.zeros(len(order), dtype=bool)
    in_group[1:] |= tied
    in_group[:-1] |= tied
    rows = np.flatnonzero(in_group)
    # a tie group starts at a row that is in a group but not tied to its predecessor
    starts_group = np.ones(len(rows), dtype=bool)
    starts_group[1:] = ~tied[rows[1:] - 1]
    group = np.cumsum(starts_group)
    doc_rank = _doc_byte_rank(run, run.doc_code[rows])
    key = -doc_rank if ties == "docid_desc" else doc_rank
    perm = np.lexsort((key, group))
    order[rows] = rows[perm]


def _full_sort(run, ties: str) -> np.ndarray:
    keys = [-run.score, run.query_code]
    if ties != "input_order":
        doc_rank = _doc_byte_rank(run, run.doc_code)
        keys.insert(0, -doc_rank if ties == "docid_desc" else doc_rank)
    return np.lexsort(keys).astype(np.int64)


def _doc_byte_rank(run, doc_codes: np.ndarray) -> np.ndarray:
    """Rank (0 = smallest, byte order as strcmp) of each given doc code among those given."""
    import pyarrow as pa
    import pyarrow.compute as pc

    used = np.unique(doc_codes)
    names = run.doc_dict.take(pa.array(used)).cast(pa.binary())
    by_bytes = np.asarray(pc.sort_indices(names))
    rank_of_used = np.empty(len(used), dtype=np.int64)
    rank_of_used[by_bytes] = np.arange(len(used))
    return rank_of_used[np.searchsorted(used, doc_codes)]
