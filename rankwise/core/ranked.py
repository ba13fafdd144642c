"""The one pass: join a run with its judgments, order every query's list once, and hold the
result as flat arrays with query offsets (:class:`RankedLists`), read by every measure.

Conventions applied here, once: tie order, queries missing from the run (trec_eval ``-c``),
run depth (``-M``) and removal of unjudged documents (``-J``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ..conventions import Conventions
from ..errors import InputError
from .order import ranking_order
from .segments import positions, rank_within, segment_ids, starts_of_runs


@dataclass
class Diagnostics:
    """What happened to every input row and query; nothing is dropped without being counted.

    Run rows add up: ``run_rows == rows_evaluated + rows_beyond_depth + rows_unjudged_removed
    + rows_in_run_only_queries``.
    """

    run_rows: int = 0
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
    qrels_duplicates_dropped: int = 0
    negative_grades: int = 0
    examples: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        """One line for the CLI: the counts that mean something was left out or altered."""
        parts = [f"{self.queries_evaluated} queries evaluated"]
        labels = [
            ("queries_only_in_run", "only in run (ignored)"),
            ("queries_only_in_qrels", "only in qrels"
             + (" (scored 0)" if self.queries_only_in_qrels_scored_zero else " (ignored)")),
            ("queries_without_relevant", "without relevant docs"),
            ("unjudged_retrieved", "unjudged docs retrieved"),
            ("rows_unjudged_removed", "unjudged docs removed"),
            ("rows_beyond_depth", "docs beyond depth"),
            ("tied_rows", "docs in score ties"),
            ("qrels_duplicates_dropped", "duplicate judgments dropped"),
            ("negative_grades", "negative grades (treated as unjudged)"),
        ]
        parts += [f"{getattr(self, k)} {text}" for k, text in labels if getattr(self, k)]
        return "; ".join(parts)


@dataclass(frozen=True, eq=False)
class RankedLists:
    """Every evaluated query's ranked list, as flat arrays with offsets.

    Rows of query ``q`` are ``offsets[q]:offsets[q+1]``, best first. Per row: the judged
    ``grade`` (NaN when unjudged; negative grades are kept and count as unjudged), the run
    ``score`` and ``doc_code`` (into ``doc_dict``). Per query: the number of judgments at each
    non-negative grade (``level_counts[q, j]`` for grade ``levels[j]``), from which relevant
    counts and ideal rankings follow for any threshold or gain.
    """

    query_ids: np.ndarray  # object array of str, one per query
    offsets: np.ndarray  # int64, Q + 1
    grade: np.ndarray  # float64 per row
    score: np.ndarray  # float64 per row
    doc_code: np.ndarray  # int32 per row
    doc_dict: Any  # Arrow string array
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

    @cached_property
    def num_retrieved(self) -> np.ndarray:
        """Number of ranked documents per query."""
        return np.diff(self.offsets)

    @cached_property
    def max_grade(self) -> float:
        """Largest judged grade in the judgments (0 when none)."""
        return float(self.levels[-1]) if len(self.levels) else 0.0

    def num_relevant(self, threshold: float) -> np.ndarray:
        """Judged documents per query with grade >= threshold (R)."""
        return self.level_counts[:, self.levels >= threshold].sum(axis=1)

    def num_judged_nonrelevant(self, threshold: float) -> np.ndarray:
        """Judged documents per query with 0 <= grade < threshold."""
        return self.level_counts[:, self.levels < threshold].sum(axis=1)

    def hits(self, threshold: float) -> "Hits":
        """The relevant retrieved rows (grade >= threshold), cached per threshold."""
        cache = self.__dict__.setdefault("_hits", {})
        if threshold not in cache:
            rows = np.flatnonzero(self.grade >= threshold)
            segment = self.segment[rows]
            cache[threshold] = Hits(rows, segment, self.position[rows], rank_within(segment))
        return cache[threshold]


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
    """The judgments sorted by (query, doc) key for lookups; built once, shared by every run."""

    qrels: Any
    keys: np.ndarray  # sorted int64 keys query_code * num_docs + doc_code, duplicates removed
    grades: np.ndarray  # float64 grade of each key
    query_of_key: np.ndarray  # qrels query code of each key
    duplicates_dropped: int
    negative_grades: int


def index_judgments(qrels) -> JudgmentIndex:
    """Sort the judgments' (query, doc) keys once; identical duplicates are dropped and
    counted, a pair judged twice with different grades raises :class:`InputError`."""
    ndocs = max(len(qrels.doc_dict), 1)
    key = qrels.query_code.astype(np.int64) * ndocs + qrels.doc_code
    sorter = np.argsort(key, kind="stable")
    key_sorted = key[sorter]
    grade_sorted = qrels.grade[sorter]
    dup = np.flatnonzero(key_sorted[1:] == key_sorted[:-1])
    if len(dup):
        conflict = dup[grade_sorted[dup] != grade_sorted[dup + 1]]
        if len(conflict):
            i = int(conflict[0])
            first, second = sorted((int(sorter[i]), int(sorter[i + 1])))
            qid, did = qrels.ids_at(second)
            raise qrels.error_at(
                second, f"document {did!r} judged twice for query {qid!r} with different grades "
                f"({qrels.grade[first]:g} at {qrels.row_unit} {qrels.location(first)}, "
                f"{qrels.grade[second]:g} here)", did)
        keep = np.ones(len(key_sorted), dtype=bool)
        keep[dup + 1] = False
        key_sorted, grade_sorted = key_sorted[keep], grade_sorted[keep]
    return JudgmentIndex(qrels, key_sorted, grade_sorted, key_sorted // ndocs, len(dup),
                         int((grade_sorted < 0).sum()))


def rank(judgments, run, conventions: Conventions | None = None) -> RankedLists:
    """Join ``run`` with the judgments and order every query's list: the one pass.

    Parameters
    ----------
    judgments : Qrels or JudgmentIndex
        The judgments (index them once with :func:`index_judgments` to share across runs).
    run : Run
        The ranking to evaluate.
    conventions : Conventions, optional
        Defaults to trec_eval's.

    Returns
    -------
    RankedLists
    """
    index = judgments if isinstance(judgments, JudgmentIndex) else index_judgments(judgments)
    qrels = index.qrels
    conv = conventions or Conventions()
    _require_unique_pairs(run)
    diag = Diagnostics(run_rows=len(run), run_queries=run.num_queries, qrels_rows=len(qrels),
                       qrels_queries=qrels.num_queries,
                       qrels_duplicates_dropped=index.duplicates_dropped,
                       negative_grades=index.negative_grades)
    judged_keys, judged_grade, qrels_query_of_key = index.keys, index.grades, index.query_of_key

    order, offsets = ranking_order(run, conv.ties)
    block_query = run.query_code[order[offsets[:-1]]]
    diag.tied_rows = _count_tied(run.score[order], offsets)

    # queries: run codes -> qrels codes (-1 when the query has no judgments)
    run_to_qrels_query = _index_in(run.query_dict, qrels.query_dict)
    block_qrels = run_to_qrels_query[block_query]
    keep_block = block_qrels >= 0
    lengths = np.diff(offsets)
    diag.queries_only_in_run = int((~keep_block).sum())
    diag.rows_in_run_only_queries = int(lengths[~keep_block].sum())
    diag.examples["queries_only_in_run"] = run.query_dict.take(
        _first(block_query[~keep_block])).to_pylist()

    rows = order[np.repeat(keep_block, lengths)]
    lengths = lengths[keep_block]
    query_codes = block_qrels[keep_block]
    query_ids = run.query_dict.take(_arrow(block_query[keep_block])).to_pylist()

    in_run = np.zeros(qrels.num_queries, dtype=bool)
    in_run[query_codes] = True
    missing = np.flatnonzero(~in_run)
    diag.queries_only_in_qrels = len(missing)
    diag.examples["queries_only_in_qrels"] = qrels.query_dict.take(_first(missing)).to_pylist()
    if conv.missing_queries == "zero" and len(missing):
        diag.queries_only_in_qrels_scored_zero = len(missing)
        query_codes = np.concatenate([query_codes, missing])
        query_ids += qrels.query_dict.take(_arrow(missing)).to_pylist()
        lengths = np.concatenate([lengths, np.zeros(len(missing), dtype=lengths.dtype)])

    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if conv.max_depth is not None:
        rows, offsets = _truncate(rows, offsets, conv.max_depth, diag)

    grade = _lookup_grades(run, rows, run_to_qrels_query, _index_in(run.doc_dict, qrels.doc_dict),
                           len(qrels.doc_dict), judged_keys, judged_grade)
    unjudged = ~(grade >= 0)
    diag.unjudged_retrieved = int(unjudged.sum())
    if conv.unjudged == "remove" and diag.unjudged_retrieved:
        keep = ~unjudged
        diag.rows_unjudged_removed = diag.unjudged_retrieved
        seg = segment_ids(offsets)
        offsets = np.zeros(len(offsets), dtype=np.int64)
        np.cumsum(np.bincount(seg[keep], minlength=len(offsets) - 1), out=offsets[1:])
        rows, grade = rows[keep], grade[keep]

    levels, level_counts = _level_counts(qrels, judged_grade, qrels_query_of_key, query_codes)
    ranked = RankedLists(
        query_ids=np.asarray(query_ids, dtype=object), offsets=offsets, grade=grade,
        score=run.score[rows], doc_code=run.doc_code[rows], doc_dict=run.doc_dict,
        levels=levels, level_counts=level_counts, conventions=conv, diagnostics=diag)
    diag.queries_evaluated = ranked.num_queries
    diag.rows_evaluated = ranked.num_rows
    diag.queries_without_relevant = int((ranked.num_relevant(conv.relevance_threshold) == 0).sum())
    return ranked


def check_overlap(qrels, run) -> None:
    """Raise when the run and the judgments share no query (almost always a wrong file)."""
    shared = _index_in(run.query_dict, qrels.query_dict) >= 0
    if not shared.any():
        raise InputError(
            f"no query in common with the judgments in {qrels.source} (run queries such as "
            f"{run.query_dict[0].as_py()!r}, judged queries such as {qrels.query_dict[0].as_py()!r})",
            source=run.source)


def _pair_keys(run) -> np.ndarray:
    return run.query_code.astype(np.int64) * max(len(run.doc_dict), 1) + run.doc_code


def _require_unique_pairs(run) -> None:
    """Raise on a (query, doc) pair that occurs twice in a run, as trec_eval does.

    A hash count of distinct keys proves uniqueness cheaply; only when it fails is the
    (slower) sort run to name the first duplicate.
    """
    import pyarrow.compute as pc

    if len(run) and pc.count_distinct(_pair_keys(run)).as_py() != len(run):
        _raise_first_duplicate(run)


def _raise_first_duplicate(run) -> None:
    key = _pair_keys(run)
    sorter = np.argsort(key, kind="stable")
    dup = np.flatnonzero(key[sorter][1:] == key[sorter][:-1])
    if len(dup):
        first, second = sorted((int(sorter[dup[0]]), int(sorter[dup[0] + 1])))
        qid, did = run.ids_at(second)
        raise run.error_at(second, f"document {did!r} appears twice for query {qid!r} "
                           f"(first at {run.row_unit} {run.location(first)})", did)


# ---------------------------------------------------------------------------- helpers


def _arrow(codes: np.ndarray):
    import pyarrow as pa

    return pa.array(codes, type=pa.int64())


def _first(codes: np.ndarray, limit: int = 5):
    return _arrow(np.sort(codes)[:limit])


def _index_in(values, value_set) -> np.ndarray:
    """Position of each of ``values`` in ``value_set`` (-1 when absent), for Arrow string arrays."""
    import pyarrow.compute as pc

    found = pc.index_in(values, value_set=value_set)
    return np.asarray(found.fill_null(-1)).astype(np.int64)


def _count_tied(scores: np.ndarray, offsets: np.ndarray) -> int:
    if len(scores) < 2:
        return 0
    same = scores[1:] == scores[:-1]
    same[offsets[1:-1] - 1] = False
    tied = np.zeros(len(scores), dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    return int(tied.sum())


def _truncate(rows: np.ndarray, offsets: np.ndarray, depth: int, diag: Diagnostics):
    keep = positions(offsets) < depth
    diag.rows_beyond_depth = int((~keep).sum())
    lengths = np.minimum(np.diff(offsets), depth)
    new_offsets = np.zeros(len(offsets), dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    return rows[keep], new_offsets


def _lookup_grades(run, rows, run_to_qrels_query, run_to_qrels_doc, qrels_ndocs, keys, grades):
    """Grade of every ranked row (NaN when the (query, doc) pair is not judged)."""
    grade = np.full(len(rows), np.nan)
    if len(keys) == 0 or len(rows) == 0:
        return grade
    doc = run_to_qrels_doc[run.doc_code[rows]]
    judged_somewhere = np.flatnonzero(doc >= 0)
    key = run_to_qrels_query[run.query_code[rows[judged_somewhere]]] * max(qrels_ndocs, 1) \
        + doc[judged_somewhere]
    at = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
    found = keys[at] == key
    grade[judged_somewhere[found]] = grades[at[found]]
    return grade


def _level_counts(qrels, grades, query_of_key, query_codes):
    """Distinct judged grades >= 0 and, per evaluated query, how many judgments have each."""
    judged = grades >= 0
    levels, level_index = np.unique(grades[judged], return_inverse=True)
    nlev = len(levels)
    counts = np.bincount(query_of_key[judged] * nlev + level_index,
                         minlength=qrels.num_queries * nlev).reshape(qrels.num_queries, nlev)
    return levels.astype(np.float64), counts[query_codes]
