"""The judgments indexed for joining: one sorted integer key per (query, doc) pair, and the
number of judgments of every grade per query (what the ideal rankings are read from)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from .arrow import take
from .keys import (KeyCollision, exact_pair_keys, fingerprints_and_words, integer_ids,
                   integer_pair_keys, pair_keys, same_docs)
from .segments import distinct

if TYPE_CHECKING:
    pass



@dataclass(frozen=True, eq=False)
class JudgmentIndex:
    """The judgments sorted by (query, doc) key for lookups; built once, shared by every run.

    With ``exact=False`` the keys come from doc-id fingerprints (see :mod:`.keys`, laid out for
    ``key_queries`` query codes) and every match must be verified on the strings, unless
    ``integer`` (the doc ids are integers, the keys hold them: exact, laid out the same way);
    with ``exact=True`` they are exact pair codes.
    """

    qrels: Any
    keys: np.ndarray  # sorted int64 pair keys, duplicates removed
    grades: np.ndarray  # float64 grade of each key
    rows: np.ndarray  # the qrels row of each key
    query_of_key: np.ndarray  # qrels query code of each key
    duplicates_dropped: int
    negative_grades: int
    exact: bool
    key_queries: int
    key_words: np.ndarray | None = None  # the exact doc-id word of each key (short ids only)
    integer: bool = False  # keys from integer doc ids (exact, laid out for key_queries)

    @property
    def verified(self) -> bool:
        """Whether equal keys are equal (query, doc) pairs without looking at the ids."""
        return self.exact or self.integer

    @cached_property
    def level_table(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct judged grades >= 0 (ascending) and, per judged query, how many
        judgments have each: computed once, shared by every run."""
        return level_counts(self.qrels.num_queries, self.grades, self.query_of_key)


def index_judgments(qrels, key_queries: int | None = None,
                    level_table: bool = True) -> JudgmentIndex:
    """Sort the judgments' (query, doc) keys once; identical duplicates are dropped and
    counted, a pair judged twice with different grades raises :class:`InputError`.
    ``level_table=False``: leave the per-query grade counts, which every pass reads, to be
    computed when first read (an index made only to check the judgments never reads them)."""
    key_queries = key_queries or qrels.num_queries
    ids = integer_ids(qrels.docs)
    if ids is not None:
        try:
            keys = integer_pair_keys(qrels.query_code, ids, key_queries)
        except KeyCollision:  # negative ids, or too large for the keys: keyed as strings
            return index_judgments(qrels.with_string_docs(), key_queries, level_table)
    try:
        if ids is not None:
            index = index_from_keys(qrels, keys, exact=False, key_queries=key_queries,
                                    integer=True)
        else:
            fingerprint, words = fingerprints_and_words(qrels.docs)
            keys = pair_keys(qrels.query_code, fingerprint, key_queries, reuse=True)
            index = index_from_keys(qrels, keys, exact=False, key_queries=key_queries,
                                    words=words)
            del fingerprint, words  # the index holds sorted copies
    except KeyCollision:
        (keys,) = exact_pair_keys((query_ids_per_row(qrels), qrels.docs))
        index = index_from_keys(qrels, keys, exact=True)
    del keys
    if level_table:
        index.level_table  # every pass reads it: computed here, where the indexing thread runs
    return index


def index_from_keys(qrels, key: np.ndarray, exact: bool, key_queries: int = 0,
                    words: np.ndarray | None = None, integer: bool = False) -> JudgmentIndex:
    sorter = np.argsort(key, kind="stable")
    key_sorted = key[sorter]
    dup = np.flatnonzero(key_sorted[1:] == key_sorted[:-1])
    rows = sorter
    if len(dup):
        first, second = sorter[dup], sorter[dup + 1]
        if not (exact or integer) and \
                not same_docs(qrels.docs, first, qrels.docs, second, words, words):
            raise KeyCollision
        conflict = np.flatnonzero(qrels.grade[first] != qrels.grade[second])
        if len(conflict):
            a, b = sorted((int(first[conflict[0]]), int(second[conflict[0]])))
            qid, did = qrels.ids_at(b)
            raise qrels.error_at(
                b, f"document {did!r} judged twice for query {qid!r} with different grades "
                f"({qrels.grade[a]:g} at {qrels.row_unit} {qrels.location(a)}, "
                f"{qrels.grade[b]:g} here)", did)
        keep = np.ones(len(key_sorted), dtype=bool)
        keep[dup + 1] = False
        rows, key_sorted = sorter[keep], key_sorted[keep]
    grades = qrels.grade[rows]
    return JudgmentIndex(qrels, key_sorted, grades, rows, qrels.query_code[rows],
                         len(dup), int((grades < 0).sum()), exact, key_queries,
                         None if words is None or exact else words[rows], integer)


def query_ids_per_row(table):
    return take(table.query_dict, table.query_code)


#: Judgments counted at a time by :func:`level_counts` (its temporaries stay small).
LEVEL_BLOCK_ROWS = 1 << 22


def level_counts(num_queries: int, grades: np.ndarray, query_of_key: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Distinct judged grades >= 0 and, per query, how many judgments have each; block by
    block of judgments when the grades are small integers (the usual case)."""
    present = _integer_levels(grades)
    if present is None:
        return _level_counts_any(num_queries, grades, query_of_key)
    levels = np.flatnonzero(present).astype(np.float64)
    level_of = (np.cumsum(present) - 1).astype(np.int64)
    nlev = len(levels)
    counts = np.zeros(num_queries * nlev, dtype=np.int64)
    for a in range(0, len(grades), LEVEL_BLOCK_ROWS):
        b = min(a + LEVEL_BLOCK_ROWS, len(grades))
        judged = grades[a:b] >= 0
        g = grades[a:b][judged]
        keys = query_of_key[a:b][judged].astype(np.int64) * nlev
        keys += level_of[g.astype(np.int64)]
        counts += np.bincount(keys, minlength=num_queries * nlev)
    return levels, counts.reshape(num_queries, nlev)


def judged_levels(grades: np.ndarray) -> np.ndarray:
    """The distinct grades >= 0, ascending (block by block when they are small integers, the
    usual case; otherwise one sort)."""
    present = _integer_levels(grades)
    if present is None:
        return distinct(grades[grades >= 0])
    return np.flatnonzero(present).astype(np.float64)


def _integer_levels(grades: np.ndarray) -> np.ndarray | None:
    """Which integer grades in [0, 4096) occur (a mask), if every grade >= 0 is one; else
    None. Block by block of LEVEL_BLOCK_ROWS, so its temporaries stay small."""
    present = np.zeros(4096, dtype=bool)
    for a in range(0, len(grades), LEVEL_BLOCK_ROWS):
        block = grades[a:a + LEVEL_BLOCK_ROWS]
        g = block[block >= 0]
        if not len(g):
            continue
        as_integer = g.astype(np.int64) if g.max() < 4096 else None
        if as_integer is None or not np.array_equal(as_integer, g):
            return None
        present[as_integer] = True
    return present


def _level_counts_any(num_queries: int, grades: np.ndarray, query_of_key: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`level_counts` for any grades (non-integer or large): one ``np.unique``."""
    judged = grades >= 0
    levels, level_index = np.unique(grades[judged], return_inverse=True)
    nlev = len(levels)
    counts = np.bincount(query_of_key[judged].astype(np.int64) * nlev + level_index.ravel(),
                         minlength=num_queries * nlev).reshape(num_queries, nlev)
    return levels.astype(np.float64), counts
