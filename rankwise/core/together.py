"""Many small runs ranked as one table: the one pass of :func:`~.ranked.rank` for each run,
with its ordering and join done once for all of them.

With runs of a few thousand rows the pass costs about a millisecond a run whatever its
size (some forty numpy and Arrow calls). Here the runs' rows are stacked, each run's
queries numbered apart from the others' (query codes offset run by run), ordered and joined
as one run, and the lists of all of them are assembled in one pass (the counts, the
conventions, the queries on one side only), each run a part of the stack, by the code
:func:`~.ranked.rank` assembles a single run with (one part). Each run's lists are views of
the stacked columns and the ones it gets alone, bit for bit; the stack goes on to the
measures as it is.

Runs without rows, with queries given empty or with integer doc ids are ranked alone; runs
with a rank column are stacked apart from runs without. Where a stacked run holds a (query,
doc) twice or has no judged query (or two doc ids share a key), every run is ranked alone,
in order, so that the handling and the first error are exactly those of
:func:`~.ranked.rank`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..conventions import Conventions
from ..errors import InputError
from .keys import KeyCollision
from .join import join_run, scores_one_sided_queries
from .judgments import JudgmentIndex
from .lists import RankedLists, stack_lists
from .order import float32_scores
from .ranked import THREAD_MIN_ROWS, RunParts, assemble_lists, order_run, rank

if TYPE_CHECKING:
    from concurrent.futures import Future


class Ranked(NamedTuple):
    """Runs ranked together: all their lists stacked (as :func:`.lists.stack_lists` stacks
    them) and each run's own."""

    stacked: RankedLists
    lists: list[RankedLists]


def rank_together(judgments: JudgmentIndex | Future, runs: list,
                  conventions: Conventions | None = None) -> Ranked:
    """``[rank(judgments, run, conventions) for run in runs]``, computed on the runs stacked,
    and those lists stacked.

    Parameters
    ----------
    judgments : JudgmentIndex, or a Future of one
        The judgments' index, shared by every run.
    runs : list of Run
        Runs read from files or tables (each with its own query codes and source).
    conventions : Conventions, optional
        Defaults to trec_eval's.

    Returns
    -------
    Ranked
        ``lists``: one per run, in the order given, identical to ranking each alone (views of
        the stacked columns where the runs were ranked as one); ``stacked``: the same lists
        stacked, as ``stack_lists(lists)`` makes them. The first run (in that order) that
        cannot be ranked raises its error.
    """
    conv = conventions or Conventions()
    if conv.score_precision == "float32":  # as rank() does (which repeats it exactly)
        runs = [replace(r, score=float32_scores(r.score)) for r in runs]
    lists: list[RankedLists | None] = [None] * len(runs)
    groups = _stackable_groups(runs)
    for group in groups:
        ranked = _rank_stacked(judgments, [runs[i] for i in group], conv)
        if ranked is None:  # a run needs what only ranking it alone does: all in order
            return _stacked(_one_by_one(judgments, runs, conv))
        if len(group) == len(runs):  # the usual case: every run in one stack, in order
            return ranked
        for i, one in zip(group, ranked.lists):
            lists[i] = one
    index = _resolved(judgments)
    return _stacked([one if one is not None else rank(index, run, conv)
                     for one, run in zip(lists, runs)])


def _stacked(lists: list[RankedLists]) -> Ranked:
    """Lists ranked apart, and stacked."""
    return Ranked(stack_lists(lists), lists)


def _stackable_groups(runs: list) -> list[list[int]]:
    """The positions of the runs that can be ranked as one table, in groups of two or more:
    runs with rows and string ids, none given without documents, those with a rank column
    apart from those without."""
    import pyarrow as pa

    groups: dict[bool, list[int]] = {}
    for i, run in enumerate(runs):
        if len(run) and not run.empty_queries and pa.types.is_string(run.docs.type) \
                and pa.types.is_string(run.query_dict.type):
            groups.setdefault(run.rank is None, []).append(i)
    return [group for group in groups.values() if len(group) > 1]


def _rank_stacked(judgments, runs: list, conv: Conventions) -> Ranked | None:
    """Each run's lists from one pass over the runs stacked; None where a run holds a
    (query, doc) twice, has no judged query or two doc ids share a key (what ranking it
    alone handles, or raises)."""
    stacked, query_parts, row_parts = _stack(runs)
    try:
        ordering, joined = _order_and_join(judgments, stacked, query_parts, row_parts, conv)
    except (KeyCollision, InputError):
        return None
    judged = np.logical_or.reduceat(joined.run_to_qrels_query >= 0, query_parts[:-1])
    if not judged.all() or (len(joined.first) and np.any(
            stacked.query_code[joined.first] == stacked.query_code[joined.second])):
        return None
    parts = RunParts(runs, query_parts, row_parts, np.zeros(len(runs), dtype=np.int64))
    return Ranked(*assemble_lists(joined.index, stacked, conv, parts, joined.run_to_qrels_query,
                                  joined.grade_of_row, *ordering))


def _resolved(judgments) -> JudgmentIndex:
    return judgments.result() if hasattr(judgments, "result") else judgments


def _one_by_one(judgments, runs: list, conv: Conventions) -> list[RankedLists]:
    index = _resolved(judgments)
    return [rank(index, run, conv) for run in runs]


def _stack(runs: list) -> tuple[Any, np.ndarray, np.ndarray]:
    """The runs as one Run (query codes offset run by run) and the bounds of each run's
    query codes and rows in it."""
    import pyarrow as pa

    from ..io.tables import Run

    query_parts = np.zeros(len(runs) + 1, dtype=np.int64)
    np.cumsum([r.num_queries for r in runs], out=query_parts[1:])
    row_parts = np.zeros(len(runs) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in runs], out=row_parts[1:])
    codes = np.concatenate([r.query_code + np.int32(first)
                            for r, first in zip(runs, query_parts)])
    chunks = [c for r in runs for c in (r.docs.chunks if hasattr(r.docs, "chunks") else [r.docs])]
    stacked = Run(codes, pa.concat_arrays([r.query_dict for r in runs]),
                  pa.concat_arrays(chunks), "stacked runs", None, "row",
                  np.concatenate([r.score for r in runs]), "stacked runs",
                  None if runs[0].rank is None else np.concatenate([r.rank for r in runs]))
    return stacked, query_parts, row_parts


def _order_and_join(judgments, stacked, query_parts: np.ndarray, row_parts: np.ndarray,
                    conv: Conventions):
    """The stacked run's order (in a second thread when it is large enough to pay) and its
    join with the judgments."""
    from concurrent.futures import ThreadPoolExecutor

    one_sided = scores_one_sided_queries(conv)
    if len(stacked) < THREAD_MIN_ROWS:
        return (order_run(stacked, conv.ties, row_parts),
                join_run(judgments, stacked, query_parts, one_sided=one_sided))
    with ThreadPoolExecutor(max_workers=1) as pool:
        ordering = pool.submit(order_run, stacked, conv.ties, row_parts)
        joined = join_run(judgments, stacked, query_parts, one_sided=one_sided)
        return ordering.result(), joined
