"""The ranked lists every measure reads (:class:`RankedLists`: flat arrays with query
offsets, made once by :func:`rankwise.core.ranked.rank`), and the counts of what the pass
left out (:class:`Diagnostics`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from ..conventions import Conventions
from .order import sort_within_groups, tie_group_rows
from .segments import positions, rank_within, segment_ids, segment_of, tie_groups, tied_neighbours

if TYPE_CHECKING:
    pass



@dataclass
class Diagnostics:
    """What happened to every input row and query; nothing is dropped without being counted.

    Run rows add up: ``run_rows == rows_evaluated + rows_beyond_depth + rows_unjudged_removed
    + rows_in_run_only_queries + run_duplicates_dropped``, where under
    ``run_only_queries="zero"`` the rows of queries only in the run are evaluated and so
    counted in ``rows_evaluated``, not again in ``rows_in_run_only_queries`` (which then
    still counts them, beside ``queries_only_in_run_scored``).
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
    run_files_skipped: int = 0
    qrels_files_skipped: int = 0
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
             + (" (scored without judgments)" if self.queries_only_in_run_scored
                else " (ignored)")),
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
            ("run_files_skipped", "Parquet files of the run skipped (name starting with _ "
             "or .)"),
            ("qrels_files_skipped", "Parquet files of the judgments skipped (name starting "
             "with _ or .)"),
        ]
        parts += [f"{getattr(self, k)} {text}" for k, text in labels if getattr(self, k)]
        return "; ".join(parts)


#: Examples kept of the skipped files (see count_skipped).
SKIPPED_EXAMPLES = 5


def count_skipped(diag: Diagnostics, run: tuple[str, ...], qrels: tuple[str, ...]) -> None:
    """Count into ``diag`` the files of the run's and the judgments' Parquet folders that were
    skipped for their names though they hold rows (``run`` and ``qrels``: as
    :attr:`rankwise.io.tables.Run.skipped_files` describes them), with examples."""
    for key, (count, examples) in skipped_counts(run, qrels).items():
        setattr(diag, key, count)
        diag.examples[key] = examples


def skipped_counts(run: Sequence[str], qrels: Sequence[str]) -> dict[str, tuple[int, list[str]]]:
    """``run_files_skipped`` and ``qrels_files_skipped`` where files were skipped (see
    :func:`count_skipped`): the number of files and the first of them (the examples)."""
    return {f"{side}_files_skipped": (len(files), list(files[:SKIPPED_EXAMPLES]))
            for side, files in (("run", run), ("qrels", qrels)) if files}


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
            mixed = grade_key(self.grade[rows]) != grade_key(self.grade[rows + 1])
        else:
            mixed = key[rows] != key[rows + 1]
        out[self.segment_of(rows[mixed])] = True
        return out

    def with_ties_by_grade(self, best_first: bool, key: np.ndarray | None = None
                           ) -> "RankedLists":
        """The same lists with each tie group re-ordered by grade (or by ``key``, one value
        per row: a measure's gains), best (or worst) first: the optimistic (pessimistic)
        order, for a family that overrides the ties convention or orders by gain."""
        rows, source = ties_by_grade(self.score, self.offsets, self.grade, best_first,
                                     self.tied_groups, key)
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


def ties_by_grade(score: np.ndarray, offsets: np.ndarray, grade: np.ndarray,
                  best_first: bool, groups: tuple[np.ndarray, np.ndarray] | None = None,
                  key: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each tie group of ranked lists (equal scores within a query) ordered by grade, higher
    grades first (``best_first``) or last, unjudged documents as grade -1 (below every judged
    one when best first), stable otherwise: the rows of groups of two or more rows and, for
    each, the row that moves there (the other rows keep their place). ``groups``: the tie
    groups' rows and numbers (:func:`.order.tie_group_rows`), when already found; ``key``:
    per row, what to order by instead of the grade."""
    rows, group = tie_group_rows(score, offsets) if groups is None else groups
    key = grade_key(grade[rows]) if key is None else key[rows]
    return rows, rows[sort_within_groups(group, -key if best_first else key)]


def grade_key(grade: np.ndarray) -> np.ndarray:
    """Grades as tie orders compare them: unjudged (NaN) and negative grades as -1."""
    return np.where(grade >= 0, grade, -1.0)
