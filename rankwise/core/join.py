"""The join of a run with its judgments: every run row's grade found by its (query, doc) key,
block by block of whole queries on two threads, duplicates found on the way."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from .arrow import index_in, string_array
from .judgments import JudgmentIndex, index_judgments, query_ids_per_row
from .keys import (KeyCollision, exact_pair_keys, fingerprints_and_words, integer_ids,
                   integer_pair_keys, pair_keys, same_docs, same_docs_mask)
from .segments import query_blocks

if TYPE_CHECKING:
    from concurrent.futures import Future



@dataclass(frozen=True, eq=False)
class JoinedRun:
    """The run side of the pass, before its lists are ordered (see :func:`join_run`)."""

    run: Any  # the run joined (its doc ids as strings where the judgments' are)
    index: JudgmentIndex  # the judgments' index its keys were laid out for
    run_to_qrels_query: np.ndarray  # per run query code: its judgments' query code, or -1
    grade_of_row: np.ndarray  # float64 per run row, NaN where not judged
    first: np.ndarray  # pairs of rows (first[i], second[i]) holding the same (query, doc)
    second: np.ndarray
    run_keys: np.ndarray | None  # the run's pair keys, kept only when there are such pairs


def scores_one_sided_queries(conventions) -> bool:
    """Whether the conventions give every query on one side only a value: the judged queries
    missing from the run (``missing_queries="zero"``) and the run's queries without
    judgments (``run_only_queries="zero"``), as Spark's RankingMetrics scores both kinds of
    user 0. Then a run and judgments without a query in common are evaluated; under any
    other conventions one side would count for nothing, and they are refused
    (:func:`no_overlap`: almost always a wrong file)."""
    return conventions.missing_queries == "zero" and conventions.run_only_queries == "zero"


def join_run(index: JudgmentIndex | Future, run, query_parts: np.ndarray,
             run_keys: np.ndarray | None = None, one_sided: bool = False) -> JoinedRun:
    """Key the run's (query, doc) pairs and look their grades up in the judgments' index.

    ``query_parts``: bounds of the query codes of the runs stacked in ``run`` (``[0,
    num_queries]`` for one run): each part's queries without judgments are numbered as that
    run alone numbers them. ``run_keys``: exact keys, when ``index`` is exact. Raises the
    run's error when it has no judged query and gives none empty, unless ``one_sided``
    (:func:`scores_one_sided_queries` of the conventions), and :class:`KeyCollision` when two
    different doc ids share a key.
    """
    from concurrent.futures import Future

    fingerprint = words = None
    run_ids = integer_ids(run.docs)
    if isinstance(index, Future):  # the run's doc ids are fingerprinted while it is built
        if run_ids is None:
            fingerprint, words = fingerprints_and_words(run.docs)
        index = index.result()
    qrels = index.qrels
    run_to_qrels_query = index_in(run.query_dict, qrels.query_dict)
    if not one_sided and not (run_to_qrels_query >= 0).any() \
            and not len(empty_queries(run, qrels)[0]):
        raise no_overlap(qrels, run)
    # one query code space for both sides: judged queries keep their qrels code, the others
    # come after them, numbered from 0 in each part
    run_only = run_to_qrels_query < 0
    before = np.zeros(len(run_only) + 1, dtype=np.int64)  # run-only queries before each code
    np.cumsum(run_only, out=before[1:])
    shared_code = run_to_qrels_query.copy()
    part_start = np.repeat(before[query_parts[:-1]], np.diff(query_parts))
    shared_code[run_only] = qrels.num_queries + (before[:-1] - part_start)[run_only]
    key_queries = qrels.num_queries + int(np.diff(before[query_parts]).max(initial=0))
    if not index.exact and key_queries.bit_length() != index.key_queries.bit_length():
        index = index_judgments(qrels, key_queries)  # lay the keys out for more query codes
    if index.integer:
        try:
            run_keys = None if run_ids is None else integer_pair_keys(
                run.query_code, run_ids, key_queries, code_map=shared_code)
        except KeyCollision:  # integers that do not fit the keys
            run_keys = None
        if run_keys is None:  # string ids in the run, or integers that do not fit the keys
            index = index_judgments(qrels.with_string_docs(), key_queries)
    if not index.integer:
        run = run.with_string_docs()  # integer ids where the judgments' are strings
        if not index.exact:
            if fingerprint is None:
                fingerprint, words = fingerprints_and_words(run.docs)
            # the fingerprints become the keys in place: no second array of that size
            run_keys = pair_keys(run.query_code, fingerprint, key_queries,
                                 code_map=shared_code, reuse=True)
        elif run_keys is None:  # exact codes of the qrels come first, so they stay the same
            _, run_keys = exact_pair_keys((query_ids_per_row(qrels), qrels.docs),
                                          (query_ids_per_row(run), run.docs))
    words = None if index.exact or index.key_words is None else words
    grade_of_row, first, second = _join_by_blocks(index, run, run_keys, words)
    del fingerprint, words  # the keys' memory and the words, freed before the ranked columns
    return JoinedRun(run, index, run_to_qrels_query, grade_of_row, first, second,
                     run_keys if len(first) else None)


def nothing_ranked(source: str) -> InputError:
    """The error for a run without rows (in one pass, streamed or in blocks alike)."""
    return InputError("nothing ranked: the run holds no rows", source=source)


def no_judgments(source: str) -> InputError:
    """The error for judgments without rows (in memory and on Spark alike)."""
    return InputError("no judgments: the judgments hold no rows", source=source)


def no_overlap(qrels, run) -> InputError:
    """The error for a run and judgments without a common query (almost always a wrong file,
    or an empty one)."""
    if len(qrels) == 0:
        return no_judgments(qrels.source)
    if len(run) == 0:
        return nothing_ranked(run.source)
    return InputError(
        f"no query in common with the judgments in {qrels.source} (run queries such as "
        f"{run.query_dict[0].as_py()!r}, judged queries such as {qrels.query_dict[0].as_py()!r})",
        source=run.source)


def empty_queries(run, qrels) -> tuple[np.ndarray, list[str]]:
    """The run's queries given with no document (not also given with documents): qrels
    codes of the judged ones, and the ids of the others, in the order of their ids."""
    if not run.empty_queries:
        return np.zeros(0, dtype=np.int64), []
    names = sorted(set(run.empty_queries) - set(run.query_dict.to_pylist()))
    codes = index_in(string_array(names), qrels.query_dict)
    return codes[codes >= 0], [n for n, c in zip(names, codes.tolist()) if c < 0]


def _duplicates(run, sorter: np.ndarray, sorted_keys: np.ndarray, verified: bool,
                words: np.ndarray | None = None):
    """Pairs of run rows holding the same (query, doc), from the sorted keys (``verified``:
    equal keys are equal pairs).

    Runs are written query by query, so sorting their keys is nearly linear (timsort); the
    same sort then drives the join. Equal fingerprint keys of different docs send the caller
    to exact keys.
    """
    dup = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    first, second = sorter[dup], sorter[dup + 1]
    if len(dup) and not verified and \
            not same_docs_mask(run.docs, first, run.docs, second, words, words).all():
        raise KeyCollision
    return first, second


def raise_duplicate(run, first: np.ndarray, second: np.ndarray) -> None:
    """Raise on the duplicate whose second occurrence comes first in the input."""
    pairs = sorted(zip(np.minimum(first, second).tolist(), np.maximum(first, second).tolist()),
                   key=lambda p: p[1])
    a, b = pairs[0]
    qid, did = run.ids_at(b)
    raise run.error_at(b, f"document {did!r} appears twice for query {qid!r} "
                       f"(first at {run.row_unit} {run.location(a)}; keep one with the "
                       "duplicates convention, e.g. --duplicates first)", did)


def rows_to_keep(run, sorter: np.ndarray, sorted_keys: np.ndarray, policy: str) -> np.ndarray:
    """One row per (query, doc): the first or last in input order, or the highest score."""
    group_start = np.ones(len(sorted_keys), dtype=bool)
    group_start[1:] = sorted_keys[1:] != sorted_keys[:-1]
    group = np.cumsum(group_start)
    if policy == "max":  # highest score first within each group, then input order
        ordered = sorter[np.lexsort((sorter, -run.score[sorter], group))]
        chosen = ordered[group_start]
    elif policy == "first":
        chosen = sorter[group_start]
    else:
        group_end = np.append(group_start[1:], True)
        chosen = sorter[group_end]
    return np.sort(chosen)


#: Rows per block of the join: its temporaries stay small, in cache and in reused memory
#: (the 100k x 100 run's join: 0.31 s in blocks of 1 << 20, 0.26 s of 1 << 17 or 1 << 16).
JOIN_BLOCK_ROWS = 1 << 17


#: Threads joining blocks side by side (the results do not depend on it).
JOIN_THREADS = max(1, min(4, os.cpu_count() or 1))


def _join_by_blocks(index: JudgmentIndex, run, keys: np.ndarray, words: np.ndarray | None):
    """Grade of every run row (NaN when not judged) and the pairs of rows holding the same
    (query, doc), block by block of whole queries.

    In each block the run's keys are sorted (which finds the duplicates: runs are written
    query by query, so this is nearly linear), then searched in the judgments' sorted keys
    (sorted probes keep the search cache-friendly). A run whose queries are not each in one
    piece is one block. ``words``: the run's exact doc-id words (short ids), which verify
    matches without reading the strings.
    """
    from concurrent.futures import ThreadPoolExecutor

    grade = np.full(len(keys), np.nan)

    def join_block(block: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        start, end = block
        sorter = np.argsort(keys[start:end], kind="stable")
        sorted_keys = keys[start:end][sorter]
        sorter += start
        first, second = _duplicates(run, sorter, sorted_keys, index.verified, words)
        _join(index, run, sorter, sorted_keys, grade, words)
        return first, second

    blocks = query_blocks(run.query_code, JOIN_BLOCK_ROWS)
    if len(blocks) == 1:
        pairs = [join_block(blocks[0])]
    else:  # blocks write disjoint rows of ``grade``; numpy releases the interpreter lock
        with ThreadPoolExecutor(max_workers=JOIN_THREADS) as pool:
            pairs = list(pool.map(join_block, blocks))
    return grade, np.concatenate([f for f, _ in pairs]), np.concatenate([s for _, s in pairs])


def _join(index: JudgmentIndex, run, sorter: np.ndarray, sorted_keys: np.ndarray,
          grade: np.ndarray, words: np.ndarray | None = None) -> None:
    """Write the grade of the rows ``sorter`` (keys ``sorted_keys``) into ``grade``: a search
    of the judgments' sorted keys."""
    if len(index.keys) == 0 or len(sorted_keys) == 0:
        return
    # the judgments' keys this block can match (a narrow range when run and judgments list
    # their queries in the same order), searched with the block's sorted keys
    low, high = np.searchsorted(index.keys, sorted_keys[[0, -1]], side="left")
    high = min(int(high) + 1, len(index.keys))
    at = np.searchsorted(index.keys[low:high], sorted_keys)
    at += low
    np.minimum(at, len(index.keys) - 1, out=at)
    found = np.flatnonzero(index.keys[at] == sorted_keys)
    rows, at = sorter[found], at[found]
    if index.verified:
        pass
    elif words is not None:  # short ids: their words are the ids
        if not np.array_equal(words[rows], index.key_words[at]):
            raise KeyCollision
    elif not same_docs(run.docs, rows, index.qrels.docs, index.rows[at]):
        raise KeyCollision
    grade[rows] = index.grades[at]
