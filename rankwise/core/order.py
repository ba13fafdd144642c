"""Put a run's rows in ranked order: query by query, score descending, ties by a policy.

TREC runs are nearly always written query by query in score order, so the order is first
*proved* in O(n); otherwise one integer sort on (query, score) puts it right. Only rows tied
on (query, score) are then re-ordered by document id.
"""

from __future__ import annotations

import numpy as np

from .arrow import cast, compute, compute_options, indices, take, to_numpy
from .keys import byte_prefixes
from .segments import query_blocks, starts_of_runs, tied_neighbours


#: Tie policies that are an order of the rows (the others are computed by the measures).
ORDERING_TIES = ("docid_desc", "docid_asc", "input_order")


def float32_scores(score: np.ndarray) -> np.ndarray:
    """Scores as a peer that stores them as float32 compares them (``score_precision=
    "float32"``): rounded to float32, as float64; beyond float32's range (3.4e38) infinite, as
    a C cast makes them, without numpy's warning of the overflow."""
    with np.errstate(over="ignore"):
        return score.astype(np.float32).astype(np.float64)


def ranking_order(run, ties: str) -> tuple[np.ndarray, np.ndarray]:
    """Row indices of ``run`` in ranked order, and the offsets of each query's block.

    Returns ``(order, offsets)``: ``order[offsets[b]:offsets[b+1]]`` are the rows of the b-th
    query block, best first. Each query occupies exactly one block.

    ``ties``: ``"docid_desc"`` (trec_eval: doc ids compared as byte strings, larger first),
    ``"docid_asc"`` or ``"input_order"`` (rows keep the order they were given in).
    """
    order, offsets, _ = ranking_order_and_ties(run, ties)
    return order, offsets


def ranking_order_and_ties(run, ties: str, parts: np.ndarray | None = None
                           ) -> tuple[np.ndarray, np.ndarray, int | np.ndarray]:
    """:func:`ranking_order`, and the number of rows that share their score with another
    row of their query (rows in tie groups).

    ``parts``: bounds of the rows of runs stacked in ``run``, each part's query codes above
    the previous part's (each part's rows are then ``order[parts[i]:parts[i + 1]]``); the
    tied rows are then counted per part (an array).
    """
    qc, score = run.query_code, run.score
    n = len(qc)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(1, np.int64), 0
    new_query = qc[1:] != qc[:-1]
    grouped = int(new_query.sum()) + 1 == run.num_queries
    if grouped and not np.any((score[1:] > score[:-1]) & ~new_query):
        order = np.arange(n, dtype=np.int64)
        ranked_query, ranked_score = qc, score
    else:
        order = _by_query_then_score(qc, score, grouped)  # stable: ties keep input order
        ranked_query, ranked_score = qc[order], score[order]
        new_query = ranked_query[1:] != ranked_query[:-1]
    tied = (ranked_score[1:] == ranked_score[:-1]) & ~new_query
    del new_query
    tied_rows: int | np.ndarray = 0 if parts is None else np.zeros(len(parts) - 1, dtype=np.int64)
    if tied.any():
        in_group = _in_tie_group(tied)
        tied_rows = int(np.count_nonzero(in_group)) if parts is None else \
            np.add.reduceat(in_group, parts[:-1], dtype=np.int64)
        if ties != "input_order":
            _order_ties(order, tied, in_group, run.docs, descending=ties == "docid_desc")
    boundaries = starts_of_runs(ranked_query)
    return order, np.append(boundaries, n).astype(np.int64), tied_rows


def _order_ties(order: np.ndarray, tied: np.ndarray, in_group: np.ndarray, docs,
                descending: bool) -> None:
    """Re-order, in place, the rows of each tie group by doc id (byte order, as strcmp).

    ``tied[i]``: position i+1 ties with position i; ``in_group``: the position is in a group."""
    import pyarrow as pa

    positions = np.flatnonzero(in_group)
    # a tie group starts at a position that is in a group but not tied to its predecessor
    starts_group = np.ones(len(positions), dtype=bool)
    starts_group[1:] = ~tied[positions[1:] - 1]
    rows = order[positions]
    group = np.cumsum(starts_group)
    tied_docs = take(docs, rows)
    if pa.types.is_integer(tied_docs.type):  # ordered as their decimal strings, as trec_eval
        tied_docs = cast(tied_docs, pa.string())
    longest = compute("max", compute("binary_length", tied_docs)).as_py() or 0
    if longest <= 8:  # short ids (the usual case): their 8-byte prefixes order them exactly
        prefix, _ = byte_prefixes(tied_docs)
        perm = sort_within_groups(group, ~prefix if descending else prefix)
    else:
        perm = _sort_ids_within_groups(group, cast(tied_docs, pa.binary()), descending)
    order[positions] = rows[perm]


#: Rows per block when longer ids are sorted by Arrow (whole groups per block; each call
#: costs more than numpy's, so blocks are larger: 10M tied rows of 25-byte ids 0.83 s in one
#: sort, 0.58 s in blocks of 1 << 12, 0.43 s of 1 << 16).
ARROW_SORT_BLOCK_ROWS = 1 << 16


def _sort_ids_within_groups(group: np.ndarray, docs, descending: bool) -> np.ndarray:
    """The permutation that sorts rows by (group, doc id bytes), for ``group`` numbers that
    do not decrease, block by block of whole groups."""
    import pyarrow as pa

    table = pa.table({"group": indices(group), "doc": docs})
    options = compute_options("Sort", sort_keys=[
        ("group", "ascending"), ("doc", "descending" if descending else "ascending")])
    perm = np.empty(len(group), dtype=np.int64)
    for start, end in query_blocks(group, ARROW_SORT_BLOCK_ROWS):
        block = table.slice(start, end - start)
        perm[start:end] = to_numpy(compute("sort_indices", block, options=options),
                                   np.int64) + start
    return perm


def sort_within_groups(group: np.ndarray, key: np.ndarray) -> np.ndarray:
    """The permutation that sorts rows by (group, key), equal keys kept in input order, for
    ``group`` numbers that do not decrease (each group's rows together, in order).

    One integer sort instead of ``np.lexsort`` (several times slower on 64-bit keys): each
    key is replaced by its rank among all keys, packed below the group number. More rows
    than SORT_BLOCK_ROWS are sorted block by block of whole groups, each block's sorts in
    the CPU cache (a run of 10M rows all tied in groups of about ten, ordered: 1.9-2.2 s ->
    1.0-1.3 s). Arrow's multi-key sort in blocks sorted those rows alone twice as fast
    (0.30-0.37 s against 0.68 s) but made the usual cases slower (100k x 100 2.27-2.30 ->
    2.36-2.47 s, 1,000 small runs 2.24-2.39 -> 2.57-2.75 s): not used for numbers.
    """
    if len(group) > SORT_BLOCK_ROWS:
        blocks = query_blocks(group, SORT_BLOCK_ROWS)
        if len(blocks) > 1:
            perm = np.empty(len(group), dtype=np.int64)
            for start, end in blocks:
                perm[start:end] = _sort_block(group[start:end], key[start:end]) + start
            return perm
    return _sort_block(group, key)


def _sort_block(group: np.ndarray, key: np.ndarray) -> np.ndarray:
    """:func:`sort_within_groups` in one pass (two sorts of all the rows)."""
    by_key = np.argsort(key, kind="stable")
    rank = np.empty(len(key), dtype=np.int64)
    rank[by_key] = np.arange(len(key))
    bits = max(len(key).bit_length(), 1)
    return np.argsort((group.astype(np.int64) << bits) | rank, kind="stable")


def tie_group_rows(values: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of tie groups of two or more rows (:func:`.segments.tie_groups`: consecutive
    equal ``values`` within a segment) and their group numbers (one per group, increasing):
    only the tied rows are numbered (a few percent of a run's rows, usually).

    >>> [a.tolist() for a in tie_group_rows(np.array([3., 3., 2., 1., 1.]), np.array([0, 5]))]
    [[0, 1, 3, 4], [1, 1, 2, 2]]
    """
    tied = tied_neighbours(values, offsets)
    rows = np.flatnonzero(_in_tie_group(tied))
    new_group = np.ones(len(rows), dtype=bool)
    new_group[1:] = ~tied[rows[1:] - 1]  # a tied row not tied with the row before it
    return rows, np.cumsum(new_group)


def _in_tie_group(tied: np.ndarray) -> np.ndarray:
    """Per row, whether it ties with a neighbour; ``tied[i]``: row i+1 ties with row i."""
    out = np.zeros(len(tied) + 1, dtype=bool)
    out[1:] |= tied
    out[:-1] |= tied
    return out


#: Rows per block when a run's rows must be sorted: sorts stay in cache (10M rows out of
#: score order: 0.78 s in blocks of 1 << 16, 0.68 s of 1 << 14, 0.59 s of 1 << 12; smaller
#: blocks cost more calls than they save).
SORT_BLOCK_ROWS = 1 << 12


#: Rows per block of whole queries sorted as one padded table (queries x longest list).
PADDED_BLOCK_ROWS = 1 << 20


def _by_query_then_score(qc: np.ndarray, score: np.ndarray, grouped: bool) -> np.ndarray:
    """``np.lexsort((-score, qc))``: rows by query, then score descending, ties in input
    order; computed block by block of whole queries (about 2x faster than lexsort on 10M
    rows). Queries given in several pieces or out of code order are first put in order.
    Blocks whose queries have lists of similar length (learning-to-rank candidates,
    recommendation lists) are sorted as one padded table, one short sort per query row
    (1M rows in queries of 100: 0.095 s to 0.035 s)."""
    by_query = None
    heads = qc[starts_of_runs(qc)] if grouped else None
    if not grouped or np.any(heads[1:] < heads[:-1]):  # bring the queries together, in order
        by_query = np.argsort(qc, kind="stable")
        qc, score = qc[by_query], score[by_query]
    order = np.empty(len(qc), dtype=np.int64)
    for start, end in query_blocks(qc, PADDED_BLOCK_ROWS):
        codes = qc[start:end]
        padded = by_score_padded(codes, score[start:end])
        if padded is not None:
            order[start:end] = padded + start
            continue
        for a, b in query_blocks(codes, SORT_BLOCK_ROWS):
            group = np.zeros(b - a, dtype=np.int64)
            np.cumsum(codes[a + 1:b] != codes[a:b - 1], out=group[1:])
            order[start + a:start + b] = sort_within_groups(group, -score[start + a:start + b]) \
                + start + a
    return order if by_query is None else by_query[order]


def by_score_padded(codes: np.ndarray, score: np.ndarray) -> np.ndarray | None:
    """The rows of whole queries (``codes``: each query's rows together) by score descending
    within each query, ties in input order, from one stable sort along the rows of a
    queries x longest-list table (padded with +inf after each list, which sorts last); None
    when the lists are too uneven for the table to stay within twice the rows."""
    if len(codes) == 0:
        return np.zeros(0, dtype=np.int64)
    starts = starts_of_runs(codes)
    sizes = np.diff(np.append(starts, len(codes)))
    longest = int(sizes.max())
    if len(starts) * longest > 2 * len(codes):
        return None
    if len(starts) * longest == len(codes):  # every list of one length: no padding
        local = np.argsort(-score.reshape(len(starts), longest), axis=1, kind="stable")
        return (local + starts[:, None]).reshape(-1)
    table = np.full((len(starts), longest), np.inf)
    position = np.arange(len(codes)) - np.repeat(starts, sizes)
    table[np.repeat(np.arange(len(starts)), sizes), position] = -score
    local = np.argsort(table, axis=1, kind="stable")
    return (local + starts[:, None])[np.arange(longest) < sizes[:, None]]
