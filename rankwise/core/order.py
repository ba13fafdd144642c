"""Put a run's rows in ranked order: query by query, score descending, ties by a policy.

TREC runs are nearly always written query by query in score order, so the order is first
*proved* in O(n); otherwise one integer sort on (query, score) puts it right. Only rows tied
on (query, score) are then re-ordered by document id.
"""

from __future__ import annotations

import numpy as np

from .arrow import indices, to_numpy
from .keys import byte_prefixes
from .segments import starts_of_runs


#: Tie policies that are an order of the rows (the others are computed by the measures).
ORDERING_TIES = ("docid_desc", "docid_asc", "input_order")


def ranking_order(run, ties: str) -> tuple[np.ndarray, np.ndarray]:
    """Row indices of ``run`` in ranked order, and the offsets of each query's block.

    Returns ``(order, offsets)``: ``order[offsets[b]:offsets[b+1]]`` are the rows of the b-th
    query block, best first. Each query occupies exactly one block.

    ``ties``: ``"docid_desc"`` (trec_eval: doc ids compared as byte strings, larger first),
    ``"docid_asc"`` or ``"input_order"`` (rows keep the order they were given in).
    """
    qc, score = run.query_code, run.score
    n = len(qc)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(1, np.int64)
    new_query = qc[1:] != qc[:-1]
    grouped = int(new_query.sum()) + 1 == run.num_queries
    if grouped and not np.any((score[1:] > score[:-1]) & ~new_query):
        order = np.arange(n, dtype=np.int64)
        ranked_query, ranked_score = qc, score
    else:
        order = np.lexsort((-score, qc)).astype(np.int64)  # stable: ties keep input order
        ranked_query, ranked_score = qc[order], score[order]
        new_query = ranked_query[1:] != ranked_query[:-1]
    tied = (ranked_score[1:] == ranked_score[:-1]) & ~new_query
    if ties != "input_order" and tied.any():
        _order_ties(order, tied, run.docs, descending=ties == "docid_desc")
    boundaries = starts_of_runs(ranked_query)
    return order, np.append(boundaries, n).astype(np.int64)


def _order_ties(order: np.ndarray, tied: np.ndarray, docs, descending: bool) -> None:
    """Re-order, in place, the rows of each tie group by doc id (byte order, as strcmp)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    in_group = np.zeros(len(order), dtype=bool)
    in_group[1:] |= tied
    in_group[:-1] |= tied
    positions = np.flatnonzero(in_group)
    # a tie group starts at a position that is in a group but not tied to its predecessor
    starts_group = np.ones(len(positions), dtype=bool)
    starts_group[1:] = ~tied[positions[1:] - 1]
    rows = order[positions]
    group = np.cumsum(starts_group)
    tied_docs = docs.take(indices(rows))
    prefix, longest = byte_prefixes(tied_docs)
    if longest <= 8:  # short ids (the usual case): their 8-byte prefixes order them exactly
        perm = np.lexsort((~prefix if descending else prefix, group))
    else:
        table = pa.table({"group": indices(group), "doc": tied_docs.cast(pa.binary())})
        perm = to_numpy(pc.sort_indices(table, sort_keys=[
            ("group", "ascending"), ("doc", "descending" if descending else "ascending")]),
            np.int64)
    order[positions] = rows[perm]
