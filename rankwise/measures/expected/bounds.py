"""The optimistic and pessimistic values of a measure (tie groups ordered by grade), and the
queries whose value at a cutoff depends on the order of tied documents."""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

import numpy as np

from .groups import TieGroups


def reorder_ties(lists, best_first: bool, conventions: Any = None):
    """The same lists (a new RankedLists, caches cleared) with every tie group ordered by
    grade, best (or worst) first, unjudged documents ranked as grade −1, stable otherwise; under
    ``conventions`` when given."""
    cache = lists.__dict__.setdefault("_ties_by_grade", {})  # shared by every measure
    if best_first not in cache:
        cache[best_first] = lists.with_ties_by_grade(best_first)
    if conventions is None:
        return cache[best_first]
    key = (best_first, conventions)  # one view per conventions: its cached columns shared
    if key not in cache:
        cache[key] = cache[best_first].with_conventions(conventions)
    return cache[key]


def tie_bounds(measure, lists, params: dict[str, Any] | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """Per query, the value of ``measure`` with every tie group ordered best first
    (optimistic) and worst first (pessimistic), from the same ``lists``.

    Parameters
    ----------
    measure : Measure
    lists : RankedLists
        Any tie policy; the rows are re-ordered by grade within each tie group. (The ranking
        pass orders ties before cutting lists at ``max_depth``; here only the rows kept are
        re-ordered, so with a depth limit the two can differ on the tie cut by the depth.)
    params : dict, optional
        The measure's filled parameters; by default filled from the conventions as
        ``Measure.compute`` does. The ``no_relevant`` / ``idcg_zero`` policies apply.

    Returns
    -------
    (optimistic, pessimistic) : tuple of numpy.ndarray
        For measures where higher is better, optimistic >= expected >= pessimistic.

    Examples
    --------
    >>> from rankwise.core.ranked import rank
    >>> from rankwise.io.frames import to_qrels, to_run
    >>> from rankwise.measures import parse_measure
    >>> lists = rank(to_qrels({"q": {"a": 1}}), to_run({"q": {"a": 1.0, "b": 1.0}}))
    >>> best, worst = tie_bounds(parse_measure("RR"), lists)
    >>> float(best[0]), float(worst[0])
    (1.0, 0.5)
    """
    spec = measure.spec
    if not spec.order_based or spec.tie_invariant:
        values = measure.compute(lists)
        return values, values.copy()
    return (tie_bound(measure, lists, True, params), tie_bound(measure, lists, False, params))


def tie_bound(measure, lists, best_first: bool, params: dict[str, Any] | None = None
              ) -> np.ndarray:
    """One side of :func:`tie_bounds`: per query, the value of ``measure`` with every tie
    group ordered best first (``best_first``, optimistic) or worst first (pessimistic)."""
    spec = measure.spec
    if not spec.order_based or spec.tie_invariant:
        return measure.compute(lists)
    policy = "optimistic" if best_first else "pessimistic"
    bound = reorder_ties(lists, best_first, _with_ties(measure.conventions(lists), policy))
    if params is None:
        return measure.compute(bound)
    bound = measure.tie_ordered(bound, bound.conventions, params)
    return measure._undefined(bound, measure.values(bound, params), params)


@functools.lru_cache(maxsize=64)
def _with_ties(conventions, policy: str):
    """``conventions`` with another tie policy (made once per pair: every measure asks)."""
    return replace(conventions, ties=policy)


def straddling_ties(lists, cutoff: int | None) -> int:
    """Queries with a tie group holding ranks both within and beyond ``cutoff`` (a position
    < K and one >= K) and documents of at least two different grades (unjudged counting as
    one more grade): those whose value at K can depend on the order of tied documents.

    >>> from rankwise.core.ranked import rank
    >>> from rankwise.io.frames import to_qrels, to_run
    >>> lists = rank(to_qrels({"q": {"a": 1}}), to_run({"q": {"a": 1.0, "b": 1.0, "c": 1.0}}))
    >>> straddling_ties(lists, 1), straddling_ties(lists, 3)
    (1, 0)
    """
    if cutoff is None or lists.num_rows == 0:
        return 0
    groups = TieGroups.of(lists)
    grade = np.where(lists.grade >= 0, lists.grade, -1.0)
    mixed = np.minimum.reduceat(grade, groups.start) != np.maximum.reduceat(grade, groups.start)
    across = (groups.position < cutoff) & (groups.position + groups.size > cutoff)
    return int(np.unique(groups.query[across & mixed]).size)
