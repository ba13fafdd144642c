"""nDCG averaged over ranks, as trec_eval 10 defines two of them: ``ndcg_rel`` and ``Rndcg``.

Both smooth nDCG@K over K (trec_eval's m_ndcg_rel.c and m_Rndcg.c: "the expected value of
ndcg is a smoothly decreasing function"), with gains as nDCG's (``gain``, ``base``; the ideal
from all judgments) and N+ the judged documents with a positive gain:

* ``ndcg_rel`` = (1/N+) · (Σ over the retrieved documents with a positive gain of nDCG at
  their rank + (N+ − those retrieved) · nDCG of the whole list): nDCG at every relevant
  document, the ones not retrieved counted at the end, as AP averages precision. The ideal at
  rank k stops at N+ (IDCG@min(k, N+)).
* ``Rndcg`` = the mean of nDCG@C over the ranks C where the ideal ranking's gain changes (after
  the last document of each grade, down to N+), with nDCG of the whole list added when the
  list is longer than N+ + 1 (trec_eval's loop adds it from rank N+ + 2 on: a list of exactly
  N+ + 1 documents does not get it). 0 for a query with no relevant document.
"""

from __future__ import annotations

import numpy as np

from ..core.segments import discounts, segmented_cumsum
from .binary import _safe_divide
from .graded import (GAIN, _gaining_rows, _ratio, dcg_at, ideal_dcg_at, ideal_dcg_of,
                     levels_by_gain, unscaled)
from .registry import family


def gaining_judged(lists, gain) -> np.ndarray:
    """N+: each query's judged documents with a positive gain (those the ideal ranks)."""
    by_gain, _ = levels_by_gain(lists, gain)
    return lists.ideal_level_counts[:, by_gain].sum(axis=1)


@family("ndcg_rel", "nDCG at every relevant document, averaged over the N+ judged documents "
        "with a positive gain (those not retrieved at the whole list's nDCG) (trec_eval 10 "
        "m_ndcg_rel.c).", params=GAIN, undefined_when="idcg_zero", trec_name="ndcg_rel",
        gain_scaling="invariant")
def ndcg_at_relevant(lists, cutoff: None, gain, base: float) -> np.ndarray:
    """ndcg_rel = (1/N+) (Σ_{retrieved, gain > 0} DCG@k / IDCG@min(k, N+) + (N+ − n+)·nDCG),
    0 where that sum is not positive (negative gains of a gain map): trec_eval stores the value
    only when the sum is positive.

    >>> from math import log2
    >>> from rankwise import evaluate
    >>> run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}    # a at rank 1, c at 3; x not retrieved
    >>> value = evaluate({"q": {"a": 1, "c": 1, "x": 1}}, run, ["ndcg_rel"]).mean("ndcg_rel")
    >>> dcg, ideal = 1 + 1 / log2(4), 1 + 1 / log2(3) + 1 / log2(4)
    >>> round(value, 12) == round((1 + dcg / ideal + dcg / ideal) / 3, 12)
    True
    """
    row_gain, position, segment = _gaining_rows(lists, None, gain)
    num_gaining = gaining_judged(lists, gain)
    longest = int(position.max()) + 1 if len(position) else 0
    running = segmented_cumsum(row_gain * discounts(longest, base, lists.conventions.discount)[
        position], segment)  # every gain counts in the DCG, negative ones (a gain map) too
    found = row_gain > 0  # but only the documents with a positive gain are averaged over
    running, position, segment = running[found], position[found], segment[found]
    ideal = ideal_dcg_of(lists, segment, np.minimum(position + 1, num_gaining[segment]), gain,
                         base)
    at_relevant = np.bincount(segment, weights=running / ideal, minlength=lists.num_queries)
    missed = num_gaining - np.bincount(segment, minlength=lists.num_queries)
    whole = _safe_divide(dcg_at(lists, None, gain, base), ideal_dcg_at(lists, None, gain, base))
    return _ratio(np.maximum(at_relevant + missed * whole, 0.0), num_gaining.astype(np.float64))


def has_negative_gain(gain) -> bool:
    """Whether a gain (``linear``, ``exp`` or a map's pairs) gives some grade a negative gain."""
    gain = unscaled(gain)
    return isinstance(gain, tuple) and min(value for _, value in gain) < 0


def gain_boundaries(lists, gain) -> list[tuple[np.ndarray, np.ndarray]]:
    """Rndcg's ranks: per grade level (by gain, descending), the rank C after its last document
    in the ideal ranking, and per query whether the ideal's gain changes there (the level is
    judged for the query and the next judged level's gain differs)."""
    by_gain, level_gain = levels_by_gain(lists, gain)
    counts = lists.ideal_level_counts[:, by_gain]
    cumulative = np.cumsum(counts, axis=1)
    out = []
    next_gain = np.full(lists.num_queries, np.nan)
    for j in range(len(by_gain) - 1, -1, -1):
        present = counts[:, j] > 0
        out.append((cumulative[:, j], present & (level_gain[j] != next_gain)))
        next_gain = np.where(present, level_gain[j], next_gain)
    return out[::-1]


@family("Rndcg", "nDCG averaged over the ranks where the ideal ranking's gain changes, plus "
        "the whole list's when longer than N+ + 1 (trec_eval 10 m_Rndcg.c).",
        params={**GAIN, "rel": None}, trec_name="Rndcg", gain_scaling="invariant")
def rank_averaged_ndcg(lists, cutoff: None, gain, base: float, rel: float) -> np.ndarray:
    """Rndcg = mean of nDCG@C over the gain boundaries C (and nDCG of the list, see above).

    >>> from math import log2
    >>> from rankwise import evaluate
    >>> run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.5}}   # the ideal: c (2), a (1)
    >>> value = evaluate({"q": {"a": 1, "c": 2}}, run, ["Rndcg"]).mean("Rndcg")
    >>> at_1, at_2 = 1 / 2, 1 / (2 + 1 / log2(3))               # nDCG@1, nDCG@2
    >>> whole = (1 + 2 / log2(4)) / (2 + 1 / log2(3))            # 4 documents > 2 + 1
    >>> round(value, 12) == round((at_1 + at_2 + whole) / 3, 12)
    True
    """
    return rank_average(lists, gain, base, lambda depth: dcg_at(lists, depth, gain, base))


def rank_average(lists, gain, base: float, dcg) -> np.ndarray:
    """Rndcg from ``dcg``: a function depth (None, or one per query) -> DCG per query (the
    ranked one, or its expected value over tie orders)."""
    total = np.zeros(lists.num_queries)
    terms = np.zeros(lists.num_queries)
    for depth, boundary in gain_boundaries(lists, gain):
        total += np.where(boundary, _safe_divide(dcg(depth), ideal_dcg_at(lists, depth, gain,
                                                                          base)), 0.0)
        terms += boundary
    longer = lists.num_retrieved > gaining_judged(lists, gain) + 1
    whole = _safe_divide(dcg(None), ideal_dcg_at(lists, None, gain, base))
    total += np.where(longer, whole, 0.0)
    terms += longer
    return _safe_divide(total, terms)
