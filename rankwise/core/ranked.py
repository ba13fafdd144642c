"""The one pass: join a run with its judgments (:mod:`.join`, against the index of
:mod:`.judgments`), order every query's list once, and assemble the result as flat arrays with
query offsets (:class:`~.lists.RankedLists`), read by every measure.

Conventions applied here, once: tie order, queries missing from the run (trec_eval ``-c``),
run depth (``-M``) and removal of unjudged documents (``-J``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from ..conventions import Conventions
from ..parts import Parts
from .arrow import take
from .join import (empty_queries, join_run, raise_duplicate, rows_to_keep,
                   scores_one_sided_queries)
from .judgments import JudgmentIndex, index_from_keys, index_judgments, query_ids_per_row
from .keys import KeyCollision, exact_pair_keys
from .lists import Diagnostics, RankedLists, count_skipped, ties_by_grade
from .order import ORDERING_TIES, float32_scores, ranking_order_and_ties
from .segments import distinct, positions, segment_of

if TYPE_CHECKING:
    from concurrent.futures import Future



def rank(judgments, run, conventions: Conventions | None = None, *,
         disjoint: bool = False) -> RankedLists:
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
    disjoint : bool
        Join a run and judgments without a query in common (one part of a larger
        evaluation, such as a Spark chunk), which are otherwise refused as almost always a
        wrong file (:func:`~.join.no_overlap`).

    Returns
    -------
    RankedLists
    """
    from concurrent.futures import Future  # here: importing it costs 6-10 ms

    conv = conventions or Conventions()
    if conv.score_precision == "float32":  # compared as the peer stores them: may create ties
        run = replace(run, score=float32_scores(run.score))
    if isinstance(judgments, Future):  # being indexed in another thread meanwhile
        index: JudgmentIndex | Future = judgments
    else:
        index = judgments if isinstance(judgments, JudgmentIndex) else index_judgments(judgments)
    try:
        return _rank(index, run, conv, disjoint=disjoint)
    except KeyCollision:  # two different doc ids share a fingerprint key: redo exactly
        qrels = (index.result() if isinstance(index, Future) else index).qrels
        qrels_keys, run_keys = exact_pair_keys((query_ids_per_row(qrels), qrels.docs),
                                               (query_ids_per_row(run), run.docs))
        return _rank(index_from_keys(qrels, qrels_keys, exact=True), run, conv, run_keys,
                     disjoint=disjoint)


def _rank(index, run, conv: Conventions, run_keys: np.ndarray | None = None,
          dropped: int = 0, disjoint: bool = False) -> RankedLists:
    """The pass itself; ``run_keys`` are the run's exact pair codes when ``index.exact``;
    ``dropped`` rows of duplicates were already removed from ``run``; ``disjoint``: as for
    :func:`rank`.

    The run's ranked order (which needs no judgments) is worked out in a second thread while
    this one fingerprints the doc ids and joins: numpy and Arrow release the interpreter lock.
    """
    from concurrent.futures import Future, ThreadPoolExecutor

    if len(run) < THREAD_MIN_ROWS:  # a second thread costs more than it saves
        ordering: Future = Future()
        ordering.set_result(order_run(run, conv.ties))
        return _rank_ordered(index, run, conv, run_keys, dropped, ordering, disjoint)
    with ThreadPoolExecutor(max_workers=1) as pool:
        ordering = pool.submit(order_run, run, conv.ties)
        return _rank_ordered(index, run, conv, run_keys, dropped, ordering, disjoint)


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
                  dropped: int, ordering: Future, disjoint: bool) -> RankedLists:
    joined = join_run(index, run, np.array([0, run.num_queries]), run_keys,
                      one_sided=disjoint or scores_one_sided_queries(conv))
    run, index = joined.run, joined.index
    if len(joined.first):
        if conv.duplicates == "error":
            raise_duplicate(run, joined.first, joined.second)
        run_keys = joined.run_keys
        sorter = np.argsort(run_keys, kind="stable")
        keep = rows_to_keep(run, sorter, run_keys[sorter], conv.duplicates)
        return _rank(index, run.subset(keep), conv,
                     None if run_keys is None or not index.exact else run_keys[keep],
                     dropped + len(run) - len(keep), disjoint)
    return assemble_lists(index, run, conv, RunParts.single(run, dropped),
                          joined.run_to_qrels_query, joined.grade_of_row, *ordering.result())[0]


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
        count_skipped(diag, one.skipped_files, qrels.skipped_files)
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
    empty: list  # per part: (judged queries given empty, ids of unjudged ones given empty)
    missing: np.ndarray  # per part: judged queries absent from the run
    missing_codes: list  # per part: the first few of them (all when scored)

    def count_into(self, diag: Diagnostics, i: int, qrels, query_dict,
                   conv: Conventions) -> None:
        """Fill part ``i``'s query counts into its ``diag`` (``query_dict``: the stacked run's
        query ids)."""
        judged_empty, unjudged_empty = self.empty[i]
        scored = conv.run_only_queries == "zero"
        diag.queries_only_in_run = int(self.only_in_run[i]) + len(unjudged_empty)
        diag.rows_in_run_only_queries = int(self.only_in_run_rows[i])
        diag.examples["queries_only_in_run"] = _first_ids(query_dict, self.only_in_run_codes[i])
        if scored:
            diag.queries_only_in_run_scored = diag.queries_only_in_run
        diag.qrels_queries_without_judgments = len(qrels.empty_queries)
        diag.queries_empty_in_run = len(judged_empty) + (len(unjudged_empty) if scored else 0)
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
    with no document (empty lists, as pytrec_eval), then (``run_only_queries="zero"``) its
    queries given with no document and no judgment, as queries without relevant documents,
    then its judged queries absent from it (``missing_queries="zero"``); with what was left
    out or added, counted per part."""
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
    empty = [empty_queries(one, qrels) for one in parts.runs]
    extra_codes = [given for given, _ in empty if len(given)]
    extra_parts = [np.full(len(given), i) for i, (given, _) in enumerate(empty) if len(given)]
    if extra_codes:
        seen = np.concatenate([seen, *extra_codes])
        seen_part = np.concatenate([seen_part, *extra_parts])
    missing = qrels.num_queries - np.bincount(seen_part, minlength=count)
    extra_ids = [take(qrels.query_dict, given).to_pylist() for given in extra_codes]
    if conv.run_only_queries == "zero":  # codes after the part's run-only lists
        for i, (_, unjudged) in enumerate(empty):
            if unjudged:
                extra_codes.append(qrels.num_queries + only_in_run[i]
                                   + np.arange(len(unjudged)))
                extra_parts.append(np.full(len(unjudged), i))
                extra_ids.append(unjudged)
    scored = conv.missing_queries == "zero"
    absent, absent_part = _absent_codes(seen, seen_part, count, qrels.num_queries,
                                        None if scored else EXAMPLE_IDS)
    if scored:
        extra_codes.append(absent)
        extra_parts.append(absent_part)
        extra_ids.append(take(qrels.query_dict, absent).to_pylist())
    part_queries = np.bincount(part_of_query, minlength=count)
    if extra_codes:  # each part's lists first, then what it adds, in that order
        extra_code, extra_part = np.concatenate(extra_codes), np.concatenate(extra_parts)
        part_queries += np.bincount(extra_part, minlength=count)
        ids += [q for given in extra_ids for q in given]
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


#: Ids given as examples of the queries a diagnostic counts.
EXAMPLE_IDS = 5


def _first_ids(query_dict, codes: np.ndarray, limit: int = EXAMPLE_IDS) -> list[str]:
    """The ids of the ``limit`` smallest query codes (examples for the diagnostics)."""
    if len(codes) == 0:  # the usual case: no Arrow call (many small runs make thousands)
        return []
    # a few scalars read one by one: an Arrow take costs several times more for five
    return [query_dict[code].as_py() for code in np.sort(codes)[:limit].tolist()]


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
