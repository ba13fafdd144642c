"""Inferred average precision (Yilmaz & Aslam, "Estimating average precision with incomplete
and imperfect judgments", CIKM 2006), as trec_eval 10 computes it (m_infap.c).

The judgments are a random sample of a pool: a document listed with a negative grade (−1) is
in the pool but was not sampled, one without a judgment is outside the pool (form_res_rels.c:
RELVALUE_UNJUDGED and RELVALUE_NONPOOL). For the relevant document at rank k (1-based), with
``pooled`` documents of the pool ranked above it (all but those without a judgment), ``rel``
judged relevant and ``nonrel`` judged non-relevant among them:

    E[precision at k] = 1/k + ((k − 1)/k) · (pooled / (k − 1)) · (rel + ε) / (rel + nonrel + 2ε)

(1 at rank 1, ε = 0.00001), and infAP is their sum over the relevant retrieved documents
divided by R, the relevant documents judged. With every document of the pool judged it is AP.

Unlike AP, infAP does not always grow when a relevant document moves up: passing a pooled,
unsampled document lowers the pooled count above it, which can outweigh the better rank. So
tie groups ordered by grade (``ties="optimistic"``, ``"pessimistic"``) are two orders among
others, not its best and worst.
"""

from __future__ import annotations

import numpy as np

from .binary import REL, _safe_divide, judged_nonrelevant, rows_above
from .registry import family

#: trec_eval's INFAP_EPSILON (trec_eval.h)
EPSILON = 0.00001


def precision_terms(position: np.ndarray, pooled: np.ndarray, rel_above: np.ndarray,
                    nonrel_above: np.ndarray) -> np.ndarray:
    """The expected precision at each relevant document, with trec_eval's operations in its
    order: ``position`` its 0-based rank j, the others the counts ranked above it."""
    j = position.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * (pooled / j) * (
            (rel_above + EPSILON) / (rel_above + nonrel_above + 2 * EPSILON))
    return np.where(j == 0, 1.0, term)


def outside_pool(lists) -> np.ndarray:
    """Per row: no judgment at all (outside the pool; a negative grade is pooled, unsampled)."""
    return np.isnan(lists.grade)


@family("infAP", "Inferred AP for sampled judgments: AP with the precision at each relevant "
        "document estimated from the judged documents above it (grade -1: pooled, not sampled; "
        "trec_eval 10 m_infap.c, Yilmaz & Aslam 2006).", params=REL, trec_name="infAP",
        grade_monotone=False)
def inferred_ap(lists, cutoff: None, rel: float) -> np.ndarray:
    """infAP = (1/R) Σ over relevant retrieved documents of their expected precision.

    >>> from rankwise import evaluate
    >>> qrels = {"q": {"a": 1, "c": 1, "e": 1}}         # everything judged: AP
    >>> run = {"q": {"a": 5, "b": 4, "c": 3, "d": 2, "e": 1}}
    >>> round(evaluate({"q": {**qrels["q"], "b": 0, "d": 0}}, run, ["infAP"]).mean("infAP"), 4)
    0.7556
    """
    hits = lists.hits(rel)
    rel_above = hits.kth - 1
    nonrel_above = rows_above(lists, judged_nonrelevant(lists, rel), hits.rows, hits.segment)
    pooled = hits.position - rows_above(lists, outside_pool(lists), hits.rows, hits.segment)
    terms = precision_terms(hits.position, pooled, rel_above, nonrel_above)
    return _safe_divide(np.bincount(hits.segment, weights=terms, minlength=lists.num_queries),
                        lists.num_relevant(rel))
