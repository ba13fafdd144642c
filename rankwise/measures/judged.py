"""How much of the top of each ranking is judged: ``Judged@K`` (ir_measures) and its
complement as trec_eval 10 prints it, ``unj_K``.

A document is judged when the judgments give it a grade >= 0; trec_eval's grade -1 ("not in
the pool", m_unjudged.c's ``RELVALUE_NONPOOL``) counts as unjudged, as in every other measure
(see the conventions page). Both are "red flag" measures: a low Judged@K means the values of
the other measures rest on documents nobody judged (counted as non-relevant).

A list shorter than K: ``short_lists="cutoff"`` (trec_eval) divides by K, the missing ranks
counting as neither judged nor unjudged; ``"length"`` (ir_measures' Judged) divides by the
documents ranked within K. A query that retrieved nothing gets 0.
"""

from __future__ import annotations

import numpy as np

from ..core.segments import count_within
from .binary import _safe_divide
from .registry import family


def judged_within(lists, cutoff: int | None) -> np.ndarray:
    """Number of judged documents ranked within the cutoff, per query."""
    return count_within(lists.offsets, lists.judged_rows, cutoff).astype(np.float64)


def ranks_counted(lists, cutoff: int | None) -> np.ndarray:
    """The denominator of Judged@K and unj_K per query: K (``short_lists="cutoff"``; the list
    length without a cutoff), or the documents ranked within K (``"length"``)."""
    ranked = lists.num_retrieved.astype(np.float64)
    if cutoff is None:
        return ranked
    if lists.conventions.short_lists == "length":
        return np.minimum(ranked, cutoff)
    return np.full(lists.num_queries, float(cutoff))


@family("Judged", "Judgment rate: judged documents (grade >= 0) in the top K / K (ir_measures "
        "Judged; over the ranked documents with short_lists='length', as ir_measures divides).",
        cutoff="optional")
def judged(lists, cutoff: int | None) -> np.ndarray:
    """Judged@K = |judged documents in the top K| / K (whole list: / its length).

    Reference: ir_measures' ``Judged`` (providers/judged_provider.py, from OpenNIR), which
    divides by min(K, length): ``short_lists="length"``.

    >>> from rankwise import evaluate
    >>> evaluate({"q": {"a": 1, "c": 0}}, {"q": {"a": 3, "b": 2, "c": 1}}, ["Judged@2"]
    ...          ).mean("Judged@2")
    0.5
    """
    return _safe_divide(judged_within(lists, cutoff), ranks_counted(lists, cutoff))


@family("Unjudged", "Unjudged rate: unjudged documents (no grade, or grade -1) in the top K / K "
        "(trec_eval 10 m_unjudged.c, unj_K).", cutoff="required", trec_cutoff_name="unj_{cutoff}",
        higher_is_better=False)
def unjudged(lists, cutoff: int) -> np.ndarray:
    """unj_K = |unjudged documents in the top K| / K; a list shorter than K is padded with
    documents that are neither (trec_eval: "assumed irrelevant (not unjudged)").

    >>> from rankwise import evaluate
    >>> evaluate({"q": {"a": 1, "c": 0}}, {"q": {"a": 3, "b": 2, "c": 1}}, ["unj_5"]
    ...          ).mean("Unjudged@5")
    0.2
    """
    ranked = np.minimum(lists.num_retrieved, cutoff).astype(np.float64)
    return _safe_divide(ranked - judged_within(lists, cutoff), ranks_counted(lists, cutoff))
