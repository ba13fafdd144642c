"""The one pass: join a run with its judgments, order every query's list once, and hold the
result as flat arrays with query offsets (:class:`RankedLists`), read by every measure.

Conventions applied here, once: tie order, queries missing from the run (trec_eval ``-c``),
run depth (``-M``) and removal of unjudged documents (``-J``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from ..conventions import Conventions
from ..errors import InputError
from ..parts import Parts
from .arrow import all_equal, compute, index_in, string_array, take, to_numpy
from .keys import (KeyCollision, exact_pair_keys, fingerprints_and_words, integer_ids,
                   integer_pair_keys, pair_keys)
from .order import (ORDERING_TIES, ranking_order_and_ties, sort_within_groups,
                    tie_group_rows)
from .segments import (distinct, positions, query_blocks, rank_within, segment_ids,
                       segment_of, tie_groups, tied_neighbours)

if TYPE_CHECKING:
    from concurrent.futures import Future


@dataclass
class Diagnostics:
    """What happened to every input row and query; nothing is dropped without being counted.

    Run rows add up: ``run_rows == rows_evaluated + rows_beyond_depth + rows_unjudged_removed
    + rows_in_run_only_queries + run_duplicates_dropped``.
    """

    run_rows: int = 0
    run_duplicates_dropped: int = 0
    run_queries: int = 0
    qrels_rows: int = 0
    qrels_queries: int = 0
    queries_evaluated: int = 0
    queries_only_in_run: int = 0
    queries_only_in_qrels: int = 0
    queries_only_in_qrels_scored_zero: int = 0
    queries_without_relevant: int = 0
    rows_evaluated: int = 0
    rows_in_run_only_queries: int = 0
    rows_beyond_depth: int = 0
    rows_unjudged_removed: int = 0
    unjudged_retrieved: int = 0
    tied_rows: int = 0
    queries_rank_contradicts_score: int = 0
    queries_empty_in_run: int = 0
    queries_only_in_run_scored: int = 0
    qrels_queries_without_judgments: int = 0
    qrels_duplicates_dropped: int = 0
    negative_grades: int = 0
    examples: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in _DIAGNOSTIC_FIELDS}
        out["examples"] = {k: list(v) for k, v in self.examples.items()}
        return out

    def summary(self) -> str:
        """One line for the CLI: the counts that mean something was left out or altered."""
        parts = [f"{self.queries_evaluated} queries evaluated"]
        labels = [
            ("queries_only_in_run", "only in run"
             + (" (scored without judgments)" if self.queries_only_in_run_scored else " (ignored)")),
            ("queries_only_in_qrels", "only in qrels"
             + (" (scored 0)" if self.queries_only_in_qrels_scored_zero else " (ignored)")),
            ("queries_without_relevant", "without relevant docs"),
            ("unjudged_retrieved", "unjudged docs retrieved"),
            ("rows_unjudged_removed", "unjudged docs removed"),
            ("rows_beyond_depth", "docs beyond depth"),
            ("tied_rows", "docs in score ties"),
            ("queries_rank_contradicts_score",
             "queries whose rank column contradicts the scores (ordered by score)"),
            ("run_duplicates_dropped", "duplicate documents dropped from the run"),
            ("qrels_duplicates_dropped", "duplicate judgments dropped"),
            ("negative_grades", "negative grades (treated as unjudged)"),
            ("queries_empty_in_run", "queries given with no document (evaluated as empty)"),
            ("qrels_queries_without_judgments", "judged queries given with no judgment "
             "(ignored)"),
        ]
        parts += [f"{getattr(self, k)} {text}" for k, text in labels if getattr(self, k)]
        return "; ".join(parts)


#: Diagnostics' field names, looked up once (``dataclasses.fields`` costs microseconds a call,
#: and 1,000 small runs convert 1,000 of them).
_DIAGNOSTIC_FIELDS = tuple(f.name for f in fields(Diagnostics))


@dataclass(frozen=True, eq=False)
class RankedLists:
    """Every evaluated query's ranked list, as flat arrays with offsets.

    Rows of query ``q`` are ``offsets[q]:offsets[q+1]``, best first. Per row: the judged
    ``grade`` (NaN when unjudged; negative grades are kept and count as unjudged), the run
    ``score`` and ``run_row`` (the row of the run, e.g. to look up its doc id in ``docs``). Per
    query: the number of judgments at each
    non-negative grade (``level_counts[q, j]`` for grade ``levels[j]``), from which relevant
    counts and ideal rankings follow for any threshold or gain.
    """

    query_ids: np.ndarray  # object array of str, one per query
    offsets: np.ndarray  # int64, Q + 1
    grade: np.ndarray  # float64 per row
    score: np.ndarray  # float64 per row
    run_row: np.ndarray  # int64 per row: the row of the run it came from
    docs: Any  # the run's doc ids (Arrow string array), indexed by run_row
    levels: np.ndarray  # float64, ascending distinct judged grades >= 0
    level_counts: np.ndarray  # int64, Q x L
    conventions: Conventions
    diagnostics: Diagnostics

    @property
    def num_queries(self) -> int:
        return len(self.query_ids)

    @property
    def num_rows(self) -> int:
        return int(self.offsets[-1])

    @cached_property
    def segment(self) -> np.ndarray:
        """Query index of every row."""
        return segment_ids(self.offsets)

    @cached_property
    def position(self) -> np.ndarray:
        """0-based rank of every row within its query."""
        return positions(self.offsets)

    def segment_of(self, rows: np.ndarray) -> np.ndarray:
        """Query index of each of ``rows``: ``segment[rows]``, without a column for every row
        (unless it is already made). The measures read a few rows each (the relevant, the
        judged): at 10M rows the two full columns cost 160 MB and a few passes."""
        if "segment" in self.__dict__:
            return self.segment[rows]
        return segment_of(self.offsets, rows)

    def position_of(self, rows: np.ndarray, segment: np.ndarray | None = None) -> np.ndarray:
        """0-based rank of each of ``rows``: ``position[rows]`` (``segment``: their
        :meth:`segment_of`, when at hand)."""
        if "position" in self.__dict__:
            return self.position[rows]
        if segment is None:
            segment = self.segment_of(rows)
        return rows - self.offsets[segment]

    @cached_property
    def judged_rows(self) -> np.ndarray:
        """Rows with a judgment (grade >= 0): the only ones that can carry gain."""
        return np.flatnonzero(self.grade >= 0)

    @cached_property
    def num_retrieved(self) -> np.ndarray:
        """Number of ranked documents per query."""
        return np.diff(self.offsets)

    @cached_property
    def max_grade(self) -> float:
        """Largest judged grade in the judgments (0 when none)."""
        return float(self.levels[-1]) if len(self.levels) else 0.0

    @cached_property
    def tied_groups(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows of tie groups of two or more rows and their group numbers
        (:func:`.order.tie_group_rows`), found once for both orders of the ties."""
        return tie_group_rows(self.score, self.offsets)

    @cached_property
    def tie_group(self) -> np.ndarray:
        """Tie group of every row: consecutive rows of one query with the same score share one."""
        return tie_groups(self.score, self.offsets)

    def with_conventions(self, conventions: Conventions) -> "RankedLists":
        """The same lists read under other measure conventions (per-family overrides); the
        row order, which the ranking conventions fixed, is shared."""
        if conventions == self.conventions:
            return self
        other = replace(self, conventions=conventions)
        shared = ["segment", "position", "judged_rows", "num_retrieved", "tie_group",
                  "_tie_groups", "_gaining"]  # the measures' caches of rows and grades only
        self.__dict__.setdefault("_gaining", {})  # one cache, filled by either
        if conventions.nonpositive_scores == self.conventions.nonpositive_scores:
            for cache in ("_hits", "_best_precision"):  # relevant rows depend on the grades,
                self.__dict__.setdefault(cache, {})  # the scores and this only
                shared.append(cache)
        if conventions.ideal == self.conventions.ideal:
            shared.append("ideal_level_counts")
        for name in shared:
            if name in self.__dict__:
                other.__dict__[name] = self.__dict__[name]
        return other

    def select_queries(self, queries: np.ndarray) -> "RankedLists":
        """The lists of some queries only (ascending query indices), same conventions."""
        lengths = self.num_retrieved[queries]
        offsets = np.zeros(len(queries) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        rows = np.repeat(self.offsets[queries] - offsets[:-1], lengths) + np.arange(offsets[-1])
        return RankedLists(self.query_ids[queries], offsets, self.grade[rows], self.score[rows],
                           self.run_row[rows], self.docs, self.levels,
                           self.level_counts[queries], self.conventions, self.diagnostics)

    def queries_with_mixed_ties(self, key: np.ndarray | None = None) -> np.ndarray:
        """Per query: has a tie group whose documents differ in ``key`` (one value per row;
        by default the grade, unjudged as -1), so that an order-based measure may depend on
        how the tie is ordered.

        A group mixes keys exactly when two neighbours in it differ, so the rows are compared
        with the next row of the same query (equal score, different key): no numbering of
        every row's tie group.
        """
        out = np.zeros(self.num_queries, dtype=bool)
        if self.num_rows < 2:
            return out
        rows = np.flatnonzero(tied_neighbours(self.score, self.offsets))  # row ties with next
        if key is None:
            mixed = _grade_key(self.grade[rows]) != _grade_key(self.grade[rows + 1])
        else:
            mixed = key[rows] != key[rows + 1]
        out[self.segment_of(rows[mixed])] = True
        return out

    def with_ties_by_grade(self, best_first: bool) -> "RankedLists":
        """The same lists with each tie group re-ordered by grade, best (or worst) first: the
        optimistic (pessimistic) order, for a family that overrides the ties convention."""
        rows, source = ties_by_grade(self.score, self.offsets, self.grade, best_first,
                                     self.tied_groups)
        columns = {}
        for name in ("grade", "run_row"):  # only the tied rows move; a tie's scores are equal
            column = getattr(self, name).copy()
            column[rows] = column[source]
            columns[name] = column
        other = replace(self, **columns)
        for name in ("segment", "position", "num_retrieved", "tie_group", "tied_groups"):
            if name in self.__dict__:
                other.__dict__[name] = self.__dict__[name]
        return other

    @cached_property
    def ideal_level_counts(self) -> np.ndarray:
        """Per query and grade level, the documents the ideal ranking is built from: all
        judgments, or (``ideal="retrieved"``) only the retrieved ones."""
        if self.conventions.ideal == "judgments":
            return self.level_counts
        rows = self.judged_rows
        cell = self.segment_of(rows) * len(self.levels) + np.searchsorted(self.levels,
                                                                          self.grade[rows])
        size = self.num_queries * len(self.levels)
        return np.bincount(cell, minlength=size).astype(np.int64, copy=False).reshape(
            self.num_queries, len(self.levels))

    def num_relevant(self, threshold: float) -> np.ndarray:
        """Documents per query with grade >= threshold (R): judged, or retrieved under
        ``ideal="retrieved"``."""
        return self.ideal_level_counts[:, self.levels >= threshold].sum(axis=1)

    def num_judged_nonrelevant(self, threshold: float) -> np.ndarray:
        """Judged documents per query with 0 <= grade < threshold (judged or retrieved, as R)."""
        return self.ideal_level_counts[:, self.levels < threshold].sum(axis=1)

    def hits(self, threshold: float) -> "Hits":
        """The relevant retrieved rows (grade >= threshold), cached per threshold; under
        ``nonpositive_scores="nonrelevant"`` rows scored <= 0 are not hits."""
        cache = self.__dict__.setdefault("_hits", {})
        if threshold not in cache:
            relevant = self.grade >= threshold
            if self.conventions.nonpositive_scores == "nonrelevant":
                relevant &= self.score > 0
            rows = np.flatnonzero(relevant)
            segment = self.segment_of(rows)
            cache[threshold] = Hits(rows, segment, self.position_of(rows, segment),
                                    rank_within(segment))
        return cache[threshold]


def stack_lists(parts: list[RankedLists]) -> RankedLists:
    """Several systems' lists as one, their queries one after another, so that a measure is
    computed once for many small runs (the per-call cost dominates there).

    Every measure is a function of each query's own rows, so part ``i``'s values are the
    slice ``stacked[sum(q_0..q_{i-1}) : ... + q_i]`` of the stacked values, bit for bit (the
    streaming tests check the same property for chunks). The parts must share the
    conventions and the judgments' grade levels (lists ranked against one index); the stack
    has no doc ids (no measure reads them; ``run_row`` is each part's own) and empty
    diagnostics.
    """
    first = parts[0]
    if any(p.conventions != first.conventions or not np.array_equal(p.levels, first.levels)
           for p in parts[1:]):
        raise ValueError("lists ranked under other conventions or judgments cannot be stacked")
    offsets = np.zeros(sum(p.num_queries for p in parts) + 1, dtype=np.int64)
    np.cumsum(np.concatenate([p.num_retrieved for p in parts]), out=offsets[1:])
    return RankedLists(
        query_ids=np.concatenate([p.query_ids for p in parts]), offsets=offsets,
        grade=np.concatenate([p.grade for p in parts]),
        score=np.concatenate([p.score for p in parts]),
        run_row=np.concatenate([p.run_row for p in parts]), docs=None, levels=first.levels,
        level_counts=np.concatenate([p.level_counts for p in parts]),
        conventions=first.conventions, diagnostics=Diagnostics())


@dataclass(frozen=True)
class Hits:
    """Relevant retrieved rows: their query, 0-based rank, and 1-based hit number."""

    rows: np.ndarray
    segment: np.ndarray
    position: np.ndarray
    kth: np.ndarray

    def within(self, cutoff: int | None) -> np.ndarray:
        """Boolean mask of hits ranked within the top ``cutoff`` (all when None)."""
        if cutoff is None:
            return np.ones(len(self.rows), dtype=bool)
        return self.position < cutoff


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
        return _level_counts(self.qrels.num_queries, self.grades, self.query_of_key)


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
            index = _index_from_keys(qrels, keys, exact=False, key_queries=key_queries,
                                     integer=True)
        else:
            fingerprint, words = fingerprints_and_words(qrels.docs)
            keys = pair_keys(qrels.query_code, fingerprint, key_queries, reuse=True)
            index = _index_from_keys(qrels, keys, exact=False, key_queries=key_queries,
                                     words=words)
            del fingerprint, words  # the index holds sorted copies
    except KeyCollision:
        (keys,) = exact_pair_keys((_query_ids_per_row(qrels), qrels.docs))
        index = _index_from_keys(qrels, keys, exact=True)
    del keys
    if level_table:
        index.level_table  # every pass reads it: computed here, where the indexing thread runs
    return index


def _index_from_keys(qrels, key: np.ndarray, exact: bool, key_queries: int = 0,
                     words: np.ndarray | None = None, integer: bool = False) -> JudgmentIndex:
    sorter = np.argsort(key, kind="stable")
    key_sorted = key[sorter]
    dup = np.flatnonzero(key_sorted[1:] == key_sorted[:-1])
    rows = sorter
    if len(dup):
        first, second = sorter[dup], sorter[dup + 1]
        if not (exact or integer) and \
                not _same_docs(qrels.docs, first, qrels.docs, second, words, words):
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


def rank(judgments, run, conventions: Conventions | None = None) -> RankedLists:
    """Join ``run`` with the judgments and order every query's list: the one pass.

    Parameters
    ----------
    judgments : Qrels, JudgmentIndex, or a Future of a JudgmentIndex
        The judgments (index them once with :func:`index_judgments` to share across runs; a
        Future lets the indexing overlap with the run-side work of this pass).
    run : Run
        The ranking to evaluate.
    conventions : Conventions, optional
        Defaults to trec_eval's.

    Returns
    -------
    RankedLists
    """
    from concurrent.futures import Future  # here: importing it costs 6-10 ms

    conv = conventions or Conventions()
    if conv.score_precision == "float32":  # compared as the peer stores them: may create ties
        run = replace(run, score=run.score.astype(np.float32).astype(np.float64))
    if isinstance(judgments, Future):  # being indexed in another thread meanwhile
        index: JudgmentIndex | Future = judgments
    else:
        index = judgments if isinstance(judgments, JudgmentIndex) else index_judgments(judgments)
    try:
        return _rank(index, run, conv)
    except KeyCollision:  # two different doc ids share a fingerprint key: redo exactly
        qrels = (index.result() if isinstance(index, Future) else index).qrels
        qrels_keys, run_keys = exact_pair_keys((_query_ids_per_row(qrels), qrels.docs),
                                               (_query_ids_per_row(run), run.docs))
        return _rank(_index_from_keys(qrels, qrels_keys, exact=True), run, conv, run_keys)


def _rank(index, run, conv: Conventions,
          run_keys: np.ndarray | None = None, dropped: int = 0) -> RankedLists:
    """The pass itself; ``run_keys`` are the run's exact pair codes when ``index.exact``;
    ``dropped`` rows of duplicates were already removed from ``run``.

    The run's ranked order (which needs no judgments) is worked out in a second thread while
    this one fingerprints the doc ids and joins: numpy and Arrow release the interpreter lock.
    """
    from concurrent.futures import Future, ThreadPoolExecutor

    if len(run) < THREAD_MIN_ROWS:  # a second thread costs more than it saves
        ordering: Future = Future()
        ordering.set_result(order_run(run, conv.ties))
        return _rank_ordered(index, run, conv, run_keys, dropped, ordering)
    with ThreadPoolExecutor(max_workers=1) as pool:
        ordering = pool.submit(order_run, run, conv.ties)
        return _rank_ordered(index, run, conv, run_keys, dropped, ordering)


#: Runs with fewer rows are ordered and joined in one thread (handing work to a second
#: thread and back costs up to the interpreter's switch interval, 5 ms, each way).
THREAD_MIN_ROWS = 1 << 17


def order_run(run, ties: str, parts: np.ndarray | None = None):
    """Ranked order, block offsets, tied rows and rank/score contradictions of a run
    (``parts``: as for :func:`~.order.ranking_order_and_ties`).

    Tie policies that are not an order (expected, optimistic, pessimistic) start from
    trec_eval's order; optimistic and pessimistic re-order ties by grade after the join."""
    order, offsets, tied_rows = ranking_order_and_ties(
        run, ties if ties in ORDERING_TIES else "docid_desc", parts)
    contradicting = _rank_contradicts_score(run) if run.rank is not None else None
    return order, offsets, tied_rows, contradicting


def _rank_ordered(index: JudgmentIndex | Future, run, conv: Conventions, run_keys,
                  dropped: int, ordering: Future) -> RankedLists:
    joined = join_run(index, run, np.array([0, run.num_queries]), run_keys)
    run, index = joined.run, joined.index
    if len(joined.first):
        if conv.duplicates == "error":
            _raise_duplicate(run, joined.first, joined.second)
        run_keys = joined.run_keys
        sorter = np.argsort(run_keys, kind="stable")
        keep = _rows_to_keep(run, sorter, run_keys[sorter], conv.duplicates)
        return _rank(index, run.subset(keep), conv,
                     None if run_keys is None or not index.exact else run_keys[keep],
                     dropped + len(run) - len(keep))
    return assemble_lists(index, run, conv, RunParts.single(run, dropped),
                          joined.run_to_qrels_query, joined.grade_of_row, *ordering.result())[0]


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


def join_run(index: JudgmentIndex | Future, run, query_parts: np.ndarray,
             run_keys: np.ndarray | None = None) -> JoinedRun:
    """Key the run's (query, doc) pairs and look their grades up in the judgments' index.

    ``query_parts``: bounds of the query codes of the runs stacked in ``run`` (``[0,
    num_queries]`` for one run): each part's queries without judgments are numbered as that
    run alone numbers them. ``run_keys``: exact keys, when ``index`` is exact. Raises the
    run's error when it has no judged query and gives none empty, and :class:`KeyCollision`
    when two different doc ids share a key.
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
    if not (run_to_qrels_query >= 0).any() and not len(_empty_queries(run, qrels)[0]):
        raise _no_overlap(qrels, run)
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
            _, run_keys = exact_pair_keys((_query_ids_per_row(qrels), qrels.docs),
                                          (_query_ids_per_row(run), run.docs))
    words = None if index.exact or index.key_words is None else words
    grade_of_row, first, second = _join_by_blocks(index, run, run_keys, words)
    del fingerprint, words  # the keys' memory and the words, freed before the ranked columns
    return JoinedRun(run, index, run_to_qrels_query, grade_of_row, first, second,
                     run_keys if len(first) else None)


@dataclass(frozen=True)
class RunParts:
    """Runs stacked as one (:mod:`.together`): the runs, the bounds of each one's query codes
    and rows in the stack, and the duplicate rows each had removed before."""

    runs: list
    queries: np.ndarray
    rows: np.ndarray
    dropped: np.ndarray

    @classmethod
    def single(cls, run, dropped: int = 0) -> "RunParts":
        return cls([run], np.array([0, run.num_queries]), np.array([0, len(run)]),
                   np.array([dropped]))


def assemble_lists(index: JudgmentIndex, run, conv: Conventions, parts: RunParts,
                   run_to_qrels_query: np.ndarray, grade_of_row: np.ndarray,
                   order: np.ndarray, offsets: np.ndarray, tied_rows: int | np.ndarray,
                   contradicting: np.ndarray | None
                   ) -> tuple[RankedLists, list[RankedLists]]:
    """The ranked lists of a joined run (:func:`join_run`) in its order (:func:`order_run`),
    with the conventions applied and every row and query counted, for each of the runs
    stacked in ``run`` (``parts``; one run: a part of its own) as that run alone gets them.

    Returns the lists of all the parts stacked (as :func:`stack_lists` stacks them) and each
    part's own (views of the stacked columns, with its diagnostics); for one run both are the
    same lists. Every step is a pass over the stack, with per-part counts read off the part
    bounds; only the examples (the first few ids) are looked up part by part.
    """
    queries = _evaluated_queries(index.qrels, run, conv, parts, run_to_qrels_query,
                                 order, offsets)
    rows, bounds = queries.rows, queries.bounds
    offsets = np.zeros(len(queries.lengths) + 1, dtype=np.int64)
    np.cumsum(queries.lengths, out=offsets[1:])
    if conv.ties in ("optimistic", "pessimistic"):
        rows = _order_ties_by_grade(rows, grade_of_row[rows], run.score[rows], offsets,
                                    best_first=conv.ties == "optimistic")
    if conv.max_depth is not None:
        retrieved = np.diff(offsets[bounds])  # per part
        rows, offsets = _truncate(rows, offsets, conv.max_depth)
        beyond_depth = retrieved - np.diff(offsets[bounds])
    grade = grade_of_row[rows]
    unjudged_row = ~(grade >= 0)
    unjudged = np.asarray(Parts(offsets[bounds]).counts(unjudged_row))
    if conv.unjudged == "remove" and unjudged.any():
        offsets = offsets - np.searchsorted(np.flatnonzero(unjudged_row), offsets)
        rows, grade = rows[~unjudged_row], grade[~unjudged_row]

    single = len(parts.runs) == 1
    levels, level_counts = index.level_table
    codes = queries.codes
    if len(codes) and codes.max() >= index.qrels.num_queries:  # run-only queries scored
        level_counts = np.concatenate([level_counts, np.zeros(
            (int(codes.max()) + 1 - index.qrels.num_queries, len(levels)), dtype=np.int64)])
    row_bounds = offsets[bounds]
    run_row = rows if single else rows - np.repeat(parts.rows[:-1], np.diff(row_bounds))
    stacked = RankedLists(
        query_ids=queries.ids, offsets=offsets, grade=grade, score=run.score[rows],
        run_row=run_row, docs=run.docs if single else None, levels=levels,
        level_counts=level_counts[codes], conventions=conv, diagnostics=Diagnostics())
    no_relevant = Parts(bounds).counts(stacked.num_relevant(conv.relevance_threshold) == 0)
    contradicting_bounds = None if contradicting is None else \
        np.searchsorted(contradicting, parts.queries)

    tied_rows = np.atleast_1d(tied_rows)
    qrels = index.qrels
    lists = []
    for i, one in enumerate(parts.runs):
        diag = stacked.diagnostics if single else Diagnostics()
        diag.run_rows = len(one) + int(parts.dropped[i])
        diag.run_duplicates_dropped = int(parts.dropped[i])
        diag.run_queries, diag.qrels_rows = one.num_queries, len(qrels)
        diag.qrels_queries = qrels.num_queries
        diag.qrels_duplicates_dropped = index.duplicates_dropped
        diag.negative_grades = index.negative_grades
        diag.tied_rows = int(tied_rows[i])
        if contradicting_bounds is not None:
            mine = contradicting[contradicting_bounds[i]:contradicting_bounds[i + 1]]
            diag.queries_rank_contradicts_score = len(mine)
            diag.examples["queries_rank_contradicts_score"] = _first_ids(run.query_dict, mine)
        queries.count_into(diag, i, qrels, run.query_dict, conv)
        if conv.max_depth is not None:
            diag.rows_beyond_depth = int(beyond_depth[i])
        diag.unjudged_retrieved = int(unjudged[i])
        if conv.unjudged == "remove" and unjudged[i]:
            diag.rows_unjudged_removed = int(unjudged[i])
        first, last = bounds[i], bounds[i + 1]
        diag.rows_evaluated = int(row_bounds[i + 1] - row_bounds[i])
        diag.queries_without_relevant = no_relevant[i]
        if single:
            return stacked, [stacked]
        rows_of = slice(row_bounds[i], row_bounds[i + 1])
        lists.append(RankedLists(
            query_ids=stacked.query_ids[first:last],
            offsets=offsets[first:last + 1] - offsets[first], grade=grade[rows_of],
            score=stacked.score[rows_of], run_row=run_row[rows_of], docs=one.docs,
            levels=levels, level_counts=stacked.level_counts[first:last],
            conventions=conv, diagnostics=diag))
    return stacked, lists


@dataclass(frozen=True, eq=False)
class _EvaluatedQueries:
    """Which queries the stacked lists hold, in their order (see :func:`_evaluated_queries`),
    and per part the queries left out or added, counted."""

    rows: np.ndarray  # the run's rows of the evaluated lists, in order
    codes: np.ndarray  # per evaluated query: its judgments' query code (or one after them)
    ids: np.ndarray  # per evaluated query: its id (object array)
    lengths: np.ndarray  # per evaluated query: its rows
    bounds: np.ndarray  # each part's evaluated queries: bounds[i]:bounds[i + 1]
    only_in_run: np.ndarray  # per part: queries without judgments, and their rows
    only_in_run_rows: np.ndarray
    only_in_run_codes: list  # per part: their (stacked) query codes
    empty: list  # per part: (judged queries given empty, unjudged ones given empty)
    missing: np.ndarray  # per part: judged queries absent from the run
    missing_codes: list  # per part: the first few of them (all when scored)

    def count_into(self, diag: Diagnostics, i: int, qrels, query_dict,
                   conv: Conventions) -> None:
        """Fill part ``i``'s query counts into its ``diag`` (``query_dict``: the stacked run's
        query ids)."""
        diag.queries_only_in_run = int(self.only_in_run[i]) + self.empty[i][1]
        diag.rows_in_run_only_queries = int(self.only_in_run_rows[i])
        diag.examples["queries_only_in_run"] = _first_ids(query_dict, self.only_in_run_codes[i])
        if conv.run_only_queries == "zero" and self.only_in_run[i]:
            diag.queries_only_in_run_scored = int(self.only_in_run[i])
        diag.qrels_queries_without_judgments = len(qrels.empty_queries)
        if len(self.empty[i][0]):
            diag.queries_empty_in_run = len(self.empty[i][0])
        diag.queries_only_in_qrels = int(self.missing[i])
        diag.examples["queries_only_in_qrels"] = _first_ids(qrels.query_dict,
                                                            self.missing_codes[i])
        if conv.missing_queries == "zero" and self.missing[i]:
            diag.queries_only_in_qrels_scored_zero = int(self.missing[i])
        diag.queries_evaluated = int(self.bounds[i + 1] - self.bounds[i])


def _evaluated_queries(qrels, run, conv: Conventions, parts: RunParts,
                       run_to_qrels_query: np.ndarray, order: np.ndarray,
                       offsets: np.ndarray) -> _EvaluatedQueries:
    """The queries evaluated, part by part: each part's ranked lists of judged queries (and
    of the others, ``run_only_queries="zero"``) in its order, then its judged queries given
    with no document (empty lists, as pytrec_eval), then its judged queries absent from it
    (``missing_queries="zero"``); with what was left out or added, counted per part."""
    count = len(parts.runs)
    block_query = run.query_code[order[offsets[:-1]]]  # stacked query code of each list
    block_part = segment_of(parts.queries, block_query)
    lengths = np.diff(offsets)
    block_qrels = run_to_qrels_query[block_query]
    keep_block = block_qrels >= 0
    only = ~keep_block
    only_in_run = np.bincount(block_part[only], minlength=count)
    only_in_run_rows = np.bincount(block_part[only], lengths[only], minlength=count)
    only_in_run_codes = np.split(block_query[only], np.cumsum(only_in_run)[:-1])
    if conv.run_only_queries == "zero" and only_in_run.any():
        # evaluated as queries without judgments: codes after the judged ones, in each part
        block_qrels = block_qrels.copy()
        before = np.repeat(np.cumsum(only_in_run) - only_in_run, only_in_run)
        block_qrels[only] = qrels.num_queries + np.arange(len(before)) - before
        keep_block = np.ones(len(keep_block), dtype=bool)

    rows = order if keep_block.all() else order[np.repeat(keep_block, lengths)]
    names = run.query_dict.to_pylist()  # (an Arrow take costs more on small runs)
    ids = [names[code] for code in block_query[keep_block].tolist()]
    codes, part_of_query = block_qrels[keep_block], block_part[keep_block]
    lengths = lengths[keep_block]
    judged = codes < qrels.num_queries
    seen, seen_part = codes[judged], part_of_query[judged]  # the judged queries in each part
    empty = [_empty_queries(one, qrels) for one in parts.runs]
    extra_codes = [given for given, _ in empty if len(given)]
    extra_parts = [np.full(len(given), i) for i, (given, _) in enumerate(empty) if len(given)]
    if extra_codes:
        seen = np.concatenate([seen, *extra_codes])
        seen_part = np.concatenate([seen_part, *extra_parts])
    missing = qrels.num_queries - np.bincount(seen_part, minlength=count)
    scored = conv.missing_queries == "zero"
    absent, absent_part = _absent_codes(seen, seen_part, count, qrels.num_queries,
                                        None if scored else EXAMPLE_IDS)
    if scored:
        extra_codes.append(absent)
        extra_parts.append(absent_part)
    part_queries = np.bincount(part_of_query, minlength=count)
    if extra_codes:  # each part's lists first, then what it adds, in that order
        extra_code, extra_part = np.concatenate(extra_codes), np.concatenate(extra_parts)
        part_queries += np.bincount(extra_part, minlength=count)
        ids += take(qrels.query_dict, extra_code).to_pylist()
        by_part = np.argsort(np.concatenate([part_of_query, extra_part]), kind="stable")
        codes = np.concatenate([codes, extra_code])[by_part]
        lengths = np.concatenate([lengths, np.zeros(len(extra_code), lengths.dtype)])[by_part]
        ids = np.asarray(ids, dtype=object)[by_part]
    bounds = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(part_queries, out=bounds[1:])
    return _EvaluatedQueries(
        rows, codes, np.asarray(ids, dtype=object), lengths, bounds, only_in_run,
        only_in_run_rows.astype(np.int64), only_in_run_codes, empty, missing,
        np.split(absent, np.searchsorted(absent_part, np.arange(1, count))))


def _absent_codes(seen: np.ndarray, seen_part: np.ndarray, parts: int, size: int,
                  limit: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Per part, the codes in ``[0, size)`` that are not among its ``seen`` codes (distinct
    within a part), ascending: all of them, or the first ``limit``; and the part of each.

    Each part's candidates are laid out one after the other and its seen codes struck out;
    the first ``limit`` absent codes of a part holding n codes are below n + ``limit``, so
    only that many candidates are laid out for it."""
    width = np.full(parts, size, dtype=np.int64)
    if limit is not None:
        np.minimum(width, np.bincount(seen_part, minlength=parts) + limit, out=width)
    start = np.zeros(parts + 1, dtype=np.int64)
    np.cumsum(width, out=start[1:])
    taken = np.zeros(int(start[-1]), dtype=bool)
    inside = seen < width[seen_part]
    taken[start[seen_part[inside]] + seen[inside]] = True
    free = np.flatnonzero(~taken)
    part = segment_of(start, free)
    codes = free - start[part]
    if limit is not None:
        rank = np.arange(len(free)) - np.searchsorted(part, part)
        codes, part = codes[rank < limit], part[rank < limit]
    return codes, part


def _no_overlap(qrels, run) -> InputError:
    """The error for a run and judgments without a common query (almost always a wrong file)."""
    return InputError(
        f"no query in common with the judgments in {qrels.source} (run queries such as "
        f"{run.query_dict[0].as_py()!r}, judged queries such as {qrels.query_dict[0].as_py()!r})",
        source=run.source)


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
            not _same_docs_mask(run.docs, first, run.docs, second, words, words).all():
        raise KeyCollision
    return first, second


def _raise_duplicate(run, first: np.ndarray, second: np.ndarray) -> None:
    """Raise on the duplicate whose second occurrence comes first in the input."""
    pairs = sorted(zip(np.minimum(first, second).tolist(), np.maximum(first, second).tolist()),
                   key=lambda p: p[1])
    a, b = pairs[0]
    qid, did = run.ids_at(b)
    raise run.error_at(b, f"document {did!r} appears twice for query {qid!r} "
                       f"(first at {run.row_unit} {run.location(a)}; keep one with the "
                       "duplicates convention, e.g. --duplicates first)", did)


def _rows_to_keep(run, sorter: np.ndarray, sorted_keys: np.ndarray, policy: str) -> np.ndarray:
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
    elif not _same_docs(run.docs, rows, index.qrels.docs, index.rows[at]):
        raise KeyCollision
    grade[rows] = index.grades[at]


def _equal_docs(docs_a, rows_a: np.ndarray, docs_b, rows_b: np.ndarray):
    """Arrow booleans: is the doc id of ``rows_a`` in ``docs_a`` that of ``rows_b`` in ``docs_b``."""
    return compute("equal", take(docs_a, rows_a), take(docs_b, rows_b))


def _same_docs_mask(docs_a, rows_a: np.ndarray, docs_b, rows_b: np.ndarray,
                    words_a: np.ndarray | None = None, words_b: np.ndarray | None = None
                    ) -> np.ndarray:
    """Per pair: is the doc id of ``rows_a`` in ``docs_a`` that of ``rows_b`` in ``docs_b``?
    Compared on the exact words of short ids when both sides have them, else as strings."""
    if words_a is not None and words_b is not None:
        return words_a[rows_a] == words_b[rows_b]
    return to_numpy(_equal_docs(docs_a, rows_a, docs_b, rows_b), bool)


def _same_docs(docs_a, rows_a: np.ndarray, docs_b, rows_b: np.ndarray,
               words_a: np.ndarray | None = None, words_b: np.ndarray | None = None) -> bool:
    if len(rows_a) == 0:
        return True
    if words_a is not None and words_b is not None:
        return bool(np.array_equal(words_a[rows_a], words_b[rows_b]))
    return all_equal(take(docs_a, rows_a), take(docs_b, rows_b))


def _query_ids_per_row(table):
    return take(table.query_dict, table.query_code)


# ---------------------------------------------------------------------------- helpers


#: Ids given as examples of the queries a diagnostic counts.
EXAMPLE_IDS = 5


def _first_ids(query_dict, codes: np.ndarray, limit: int = EXAMPLE_IDS) -> list[str]:
    """The ids of the ``limit`` smallest query codes (examples for the diagnostics)."""
    if len(codes) == 0:  # the usual case: no Arrow call (many small runs make thousands)
        return []
    # a few scalars read one by one: an Arrow take costs several times more for five
    return [query_dict[code].as_py() for code in np.sort(codes)[:limit].tolist()]


def _empty_queries(run, qrels) -> tuple[np.ndarray, int]:
    """The run's queries given with no document: qrels codes of the judged ones (not also
    given with documents), and how many are not judged."""
    if not run.empty_queries:
        return np.zeros(0, dtype=np.int64), 0
    names = string_array(sorted(set(run.empty_queries) - set(run.query_dict.to_pylist())))
    codes = index_in(names, qrels.query_dict)
    return codes[codes >= 0], int((codes < 0).sum())


def _rank_contradicts_score(run) -> np.ndarray:
    """Query codes whose rows, ordered by the rank column, do not have non-increasing scores.

    trec_eval ignores the rank column and orders by score; rankwise does the same and reports
    the queries where the two disagree. Runs written in rank order are checked in O(n).
    """
    qc, rank, score = run.query_code, run.rank, run.score
    same_query = qc[1:] == qc[:-1]
    if np.any((rank[1:] <= rank[:-1]) & same_query):  # not written in rank order: sort
        by_rank = np.lexsort((rank, qc))
        qc, score = qc[by_rank], score[by_rank]
        same_query = qc[1:] == qc[:-1]
    rises = (score[1:] > score[:-1]) & same_query
    return distinct(qc[1:][rises])


def ties_by_grade(score: np.ndarray, offsets: np.ndarray, grade: np.ndarray,
                  best_first: bool, groups: tuple[np.ndarray, np.ndarray] | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Each tie group of ranked lists (equal scores within a query) ordered by grade, higher
    grades first (``best_first``) or last, unjudged documents as grade -1 (below every judged
    one when best first), stable otherwise: the rows of groups of two or more rows and, for
    each, the row that moves there (the other rows keep their place). ``groups``: the tie
    groups' rows and numbers (:func:`.order.tie_group_rows`), when already found."""
    rows, group = tie_group_rows(score, offsets) if groups is None else groups
    key = _grade_key(grade[rows])
    return rows, rows[sort_within_groups(group, -key if best_first else key)]


def _grade_key(grade: np.ndarray) -> np.ndarray:
    """Grades as tie orders compare them: unjudged (NaN) and negative grades as -1."""
    return np.where(grade >= 0, grade, -1.0)


def _order_ties_by_grade(rows: np.ndarray, grade: np.ndarray, score: np.ndarray,
                         offsets: np.ndarray, best_first: bool):
    """``rows`` (and their ``grade``, ``score``) with each tie group ordered by grade
    (:func:`ties_by_grade`)."""
    tied, source = ties_by_grade(score, offsets, grade, best_first)
    rows = rows.copy()
    rows[tied] = rows[source]
    return rows


def _truncate(rows: np.ndarray, offsets: np.ndarray, depth: int):
    """The first ``depth`` rows of each list."""
    keep = positions(offsets) < depth
    lengths = np.minimum(np.diff(offsets), depth)
    new_offsets = np.zeros(len(offsets), dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    return rows[keep], new_offsets


#: Judgments counted at a time by :func:`_level_counts` (its temporaries stay small).
LEVEL_BLOCK_ROWS = 1 << 22


def _level_counts(num_queries: int, grades: np.ndarray, query_of_key: np.ndarray
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
    """:func:`_level_counts` for any grades (non-integer or large): one ``np.unique``."""
    judged = grades >= 0
    levels, level_index = np.unique(grades[judged], return_inverse=True)
    nlev = len(levels)
    counts = np.bincount(query_of_key[judged].astype(np.int64) * nlev + level_index.ravel(),
                         minlength=num_queries * nlev).reshape(num_queries, nlev)
    return levels.astype(np.float64), counts
