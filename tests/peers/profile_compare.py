"""Shared checks for the profile tests: rankwise's per-query values under a profile, compared
with a peer's, value by value and query by query."""

from __future__ import annotations

import math
from typing import Any

import rankwise
from rankwise.conventions import Conventions, profile, resolve


def rankwise_values(qrels: Any, run: Any, measures: dict[str, str],
                    conventions: "Conventions | str", **overrides: Any) -> dict[str, dict]:
    """``{qid: {key: value}}`` for ``measures = {key: rankwise measure name}``.

    A profile name passed as ``conventions`` also maps the peer's measure names (as
    :func:`rankwise.evaluate` does); ``overrides`` are convention fields on top.
    """
    conv = resolve(conventions, **overrides)
    names = list(measures.values())
    if isinstance(conventions, str):
        names = profile(conventions).measure_names(names)
    canonical = [str(rankwise.parse_measure(n)) for n in names]
    result = rankwise.evaluate(qrels, run, sorted(set(canonical)), conventions=conv,
                               per_query=True)
    return {qid: {key: row[c] for key, c in zip(measures, canonical)}
            for qid, row in result.per_query().items()}


def mismatches(ours: dict[str, dict], theirs: dict[str, dict], tolerance: float) -> list:
    """``(qid, key, ours, theirs)`` for every value of ``theirs`` that ``ours`` does not
    reproduce within ``tolerance`` (NaN equals NaN only)."""
    out = []
    for qid, values in theirs.items():
        for key, expected in values.items():
            got = ours[qid][key]
            if math.isnan(expected) or math.isnan(got):
                same = math.isnan(expected) and math.isnan(got)
            else:
                same = abs(got - expected) <= tolerance
            if not same:
                out.append((qid, key, got, expected))
    return out


def assert_same(ours: dict[str, dict], theirs: dict[str, dict], tolerance: float,
                context: str) -> int:
    """Same queries and every value within ``tolerance``; returns the number of values."""
    assert set(ours) == set(theirs), (
        f"{context}: evaluated queries differ: only rankwise {sorted(set(ours) - set(theirs))}, "
        f"only the peer {sorted(set(theirs) - set(ours))}")
    bad = mismatches(ours, theirs, tolerance)
    count = sum(len(v) for v in theirs.values())
    assert not bad, (f"{context}: {len(bad)} of {count} values differ, first "
                     f"(query, measure, rankwise, peer): {bad[:6]}")
    return count


def assert_within_tie_bounds(qrels: Any, run: Any, measures: dict[str, str],
                             conventions: "Conventions | str", theirs: dict[str, dict],
                             tolerance: float, **overrides: Any) -> int:
    """Every peer value lies between rankwise's pessimistic and optimistic values (tied
    documents ordered worst / best first): what any order of tied documents can give.

    Returns the number of values strictly inside (0 < peer value's distance to both bounds),
    i.e. where the peer's tie order was neither extreme."""
    low = rankwise_values(qrels, run, measures, conventions, ties="pessimistic", **overrides)
    high = rankwise_values(qrels, run, measures, conventions, ties="optimistic", **overrides)
    outside = []
    strictly_inside = 0
    for qid, values in theirs.items():
        for key, value in values.items():
            lo, hi = low[qid][key], high[qid][key]
            if not lo - tolerance <= value <= hi + tolerance:
                outside.append((qid, key, lo, value, hi))
            strictly_inside += lo + tolerance < value < hi - tolerance
    assert not outside, (f"{len(outside)} peer values outside rankwise's tie bounds, first "
                         f"(query, measure, pessimistic, peer, optimistic): {outside[:6]}")
    return strictly_inside
