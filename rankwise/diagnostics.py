"""Pitfall checks: conditions under which a number is legal but probably not what the user
meant. Each check returns plain sentences; they travel in the ``Result`` and the CLI prints
them as warnings.

From the founding articles' pitfalls: graded measures on binary judgments, relevance
thresholds above every grade, and lists shorter than a measure's cutoff (P@K then counts the
missing ranks as non-relevant, as trec_eval does).
"""

from __future__ import annotations

import numpy as np

SHORT_LIST_FAMILIES = ("P", "F1", "RelP")


def pitfall_warnings(lists, measures) -> list[str]:
    """Warnings for one evaluated system (``lists``: its RankedLists)."""
    return (_binary_judgments(lists, measures) + _threshold_above_grades(lists, measures)
            + _short_lists(lists, measures))


def _binary_judgments(lists, measures) -> list[str]:
    graded = [str(m) for m in measures if m.spec.graded]
    if not graded or not set(lists.levels.tolist()) <= {0.0, 1.0}:
        return []
    verb, pronoun = ("uses", "it reduces") if len(graded) == 1 else ("use", "they reduce")
    return [f"{', '.join(graded)} {verb} graded relevance, but every judgment is 0 or 1: "
            f"{pronoun} to binary gains"]


def _threshold_above_grades(lists, measures) -> list[str]:
    by_threshold: dict[float, list[str]] = {}
    for m in measures:
        if "rel" in m.spec.params:
            threshold = dict(m.params).get("rel", lists.conventions.relevance_threshold)
            if threshold > lists.max_grade:
                by_threshold.setdefault(float(threshold), []).append(str(m))
    return [f"relevance threshold {t:g} is above every judged grade (the largest is "
            f"{lists.max_grade:g}): no document is relevant for {', '.join(names)}"
            for t, names in by_threshold.items()]


def _short_lists(lists, measures) -> list[str]:
    out = []
    for m in measures:
        if m.family in SHORT_LIST_FAMILIES and m.cutoff is not None:
            short = int(np.count_nonzero(lists.num_retrieved < m.cutoff))
            if short:
                out.append(f"{m}: {short} of {lists.num_queries} queries retrieved fewer than "
                           f"{m.cutoff} documents; the missing ranks count as non-relevant")
    return out
