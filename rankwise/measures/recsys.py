"""Reciprocal-rank sums used in recommender-system evaluation.

* ``RWRR@K``, the relevance-weighted reciprocal-rank sum: every item in the top K adds its
  relevance divided by its rank, ``RWRR@K = Σ_{i <= K} rel_i / i``. This is the "RR(u)" of the
  fifth seed article (``004_979c15c855f3ba6e.txt``: "the sum of relevance score of top L items
  weighted by reciprocal rank"); its mean over users is that article's MRR.
* ``ARHR@K``, the average reciprocal hit rank (Deshpande & Karypis 2004, "Item-based top-N
  recommendation algorithms", ACM TOIS 22(1)): the same sum with binary relevance,
  ``ARHR@K = Σ_{relevant i <= K} 1 / i``. With one held-out item per user (leave-one-out) it
  equals RR@K; with several it rewards every hit, not only the first.

Neither is normalised: RWRR@K can exceed 1 (three relevant items at ranks 1-3 give
1 + 1/2 + 1/3). Unjudged items and negative grades add nothing.
"""

from __future__ import annotations

import numpy as np

from .graded import gains
from .registry import family


@family("RWRR", "Relevance-weighted reciprocal-rank sum: Σ over the top K of gain(grade) / rank "
        "(the fifth seed article's RR(u); gain from the conventions, linear by default).",
        cutoff="optional", params={"gain": None}, graded=True, bounds=None,
        gain_scaling="proportional")
def relevance_weighted_rr(lists, cutoff: int | None, gain) -> np.ndarray:
    """RWRR@K = Σ_{i <= K} gain(grade_i) / i, per user (query).

    Reference: Wang (2021), "Ranking evaluation metrics for recommender systems", the fifth
    seed article: ``RR(u) = Σ_{i <= L} relevance_i / rank_i``. Conventions read: none besides
    the cutoff (``max_depth`` and ``unjudged`` act before, in the ranking pass).

    >>> from rankwise import evaluate
    >>> run = {"u": {"a": 3.0, "b": 2.0, "c": 1.0}}
    >>> evaluate({"u": {"a": 2, "c": 3}}, run, ["RWRR@3"]).mean("RWRR@3")   # 2/1 + 3/3
    3.0
    """
    rows = lists.judged_rows
    if cutoff is not None:
        rows = rows[lists.position_of(rows) < cutoff]
    segment = lists.segment_of(rows)
    weight = gains(lists.grade[rows], gain) / (lists.position_of(rows, segment) + 1.0)
    return np.bincount(segment, weights=weight, minlength=lists.num_queries)


@family("ARHR", "Average reciprocal hit rank: Σ over the relevant items in the top K of 1 / rank "
        "(Deshpande & Karypis 2004).", cutoff="optional", params={"rel": None}, bounds=None)
def average_reciprocal_hit_rank(lists, cutoff: int | None, rel: float) -> np.ndarray:
    """ARHR@K = Σ_{i <= K, grade_i >= rel} 1 / i, per user (query).

    >>> from rankwise import evaluate
    >>> run = {"u": {"a": 3.0, "b": 2.0, "c": 1.0}}
    >>> round(evaluate({"u": {"a": 1, "c": 1}}, run, ["ARHR@3"]).mean("ARHR@3"), 6)  # 1 + 1/3
    1.333333
    """
    hits = lists.hits(rel)
    mask = hits.within(cutoff)
    return np.bincount(hits.segment[mask], weights=1.0 / (hits.position[mask] + 1.0),
                       minlength=lists.num_queries)
