"""Rank-biased precision (Moffat & Zobel 2008, "Rank-biased precision for measurement of
retrieval effectiveness", ACM TOIS 27(1)).

``RBP(p)@K = (1 − p) · Σ_{i <= K} p^(i−1) · r_i``: a user reads on from rank i to i + 1 with
probability p (the persistence), and RBP is the expected rate of relevance met. ``r_i`` is
binary with ``rel`` given (1 when the grade is >= rel), else graded as trec_eval 10's ``rbp``
(m_rbp.c) grades it: the grade divided by the query's largest judged grade when that is
above 1 (gains normalised to [0, 1]), the grade itself otherwise. Unjudged documents and
negative grades add nothing. Without a cutoff the sum runs over the whole list.

``RBPResid(p)``, trec_eval's ``rbp_resid``, is the residual: how much RBP could still grow if
every unjudged document of the list (no judgment, or a negative grade) were fully relevant and
so were all documents below the list, ``p^n + (1 − p) · Σ_{unjudged i} p^(i−1)`` for a list of
n documents. As trec_eval computes it, it is 0 for a list with no unjudged document (the part
below the list, p^n, counted only when the list holds an unjudged one).

trec_eval's ``rbp`` is ``RBP(p=0.9)``; ir_measures' default persistence is 0.8, so is ours.
"""

from __future__ import annotations

import numpy as np

from .registry import family

#: ``rel`` of graded RBP (no threshold: the grades, normalised).
GRADED = "graded"


def relevance_of_rows(lists, rows: np.ndarray, segment: np.ndarray, rel) -> np.ndarray:
    """r of each of ``rows`` (judged rows of queries ``segment``): binary (grade >= rel), or
    the grade over max(1, the query's largest judged grade)."""
    grade = lists.grade[rows]
    if rel != GRADED:
        return (grade >= rel).astype(np.float64)
    return np.where(grade > 0, grade, 0.0) / np.maximum(largest_grade(lists), 1.0)[segment]


def largest_grade(lists) -> np.ndarray:
    """The largest grade among each query's judgments (those the ideal reads), 0 for none."""
    counts = lists.ideal_level_counts
    if counts.shape[1] == 0:
        return np.zeros(lists.num_queries)
    present = counts > 0
    last = counts.shape[1] - 1 - np.argmax(present[:, ::-1], axis=1)
    return np.where(present.any(axis=1), lists.levels[last], 0.0)


@family("RBP", "Rank-biased precision: (1 − p) Σ p^(rank−1) r over the top K, r binary with rel "
        "given, else the grade over the query's largest (trec_eval 10 m_rbp.c; Moffat & Zobel "
        "2008).", cutoff="optional", params={"p": 0.8, "rel": GRADED}, trec_name="rbp",
        trec_params=(("p", 0.9),), undefined_when=None)
def rank_biased_precision(lists, cutoff: int | None, p: float, rel) -> np.ndarray:
    """RBP = (1 − p) · Σ_i p^(i−1) · r_i.

    >>> from rankwise import evaluate
    >>> run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    >>> round(evaluate({"q": {"a": 1, "c": 1}}, run, ["RBP(p=0.5)"]).mean("RBP(p=0.5)"), 6)
    0.625
    """
    rows = lists.judged_rows
    segment = lists.segment_of(rows)
    position = lists.position_of(rows, segment)
    if cutoff is not None:
        within = position < cutoff
        rows, segment, position = rows[within], segment[within], position[within]
    weight = rank_weights(lists, p)[position]
    return np.bincount(segment, weights=weight * relevance_of_rows(lists, rows, segment, rel),
                       minlength=lists.num_queries)


def rank_weights(lists, p: float) -> np.ndarray:
    """(1 − p) · p^i for every 0-based rank i of the longest list: one small table, read by
    rank (no power per row)."""
    longest = int(lists.num_retrieved.max()) if lists.num_queries else 0
    return (1.0 - p) * np.power(p, np.arange(longest, dtype=np.float64))


@family("RBPResid", "Residual of rank-biased precision: p^n + (1 − p) Σ p^(rank−1) over the "
        "unjudged documents of a list of n, 0 when none is unjudged (trec_eval 10 "
        "m_rbp_resid.c).", params={"p": 0.8}, trec_name="rbp_resid", trec_params=(("p", 0.9),),
        higher_is_better=False)
def rbp_residual(lists, cutoff: None, p: float) -> np.ndarray:
    """RBP's residual: the most RBP could gain from the unjudged documents and the unretrieved.

    >>> from rankwise import evaluate
    >>> run = {"q": {"a": 3.0, "b": 2.0}}     # b unjudged, at rank 2: 0.5 · 0.5 + 0.5^2
    >>> evaluate({"q": {"a": 1}}, run, ["RBPResid(p=0.5)"]).mean("RBPResid(p=0.5)")
    0.5
    """
    # the unjudged are the rows not judged with a grade >= 0: (1 − p) Σ over them of p^i is
    # 1 − p^n less the same sum over the judged, so only the judged rows are read
    rows = lists.judged_rows
    segment = lists.segment_of(rows)
    judged = np.bincount(segment, weights=rank_weights(lists, p)[lists.position_of(rows, segment)],
                         minlength=lists.num_queries)
    has_unjudged = np.bincount(segment, minlength=lists.num_queries) < lists.num_retrieved
    return np.where(has_unjudged, 1.0 - judged, 0.0)
