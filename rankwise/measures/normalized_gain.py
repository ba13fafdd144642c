"""trec_eval 10's ``G`` (m_G.c, "normalized gain", an experimental measure of 2008 that
"combines qualities of MAP and NDCG").

A document with gain g retrieved at rank i adds ``g / log2(2 + cost(i) − S(i))``: S(i) is the
gain retrieved down to rank i (itself included), cost(i) the most that could have been: the
ideal ranking's gains down to rank i, each counted as at least 1 (beyond the ideal list, 1 a
rank). So a document adds its full gain when every document above it was as good as possible,
less the further the list fell behind. G is the sum over the retrieved documents divided by
the total gain of the judgments. Gains as nDCG's (``gain``: linear by default, exponential or
a map ``G.1=3,2=9``); unjudged documents and negative grades gain 0.

G is not monotone in the grades of tied documents: a document's discount depends on how far
the gain retrieved so far lags behind the ideal's, so a smaller gain first can leave the larger
one a smaller lag (grades 3 and 2 tied after two 1s, ideal 3, 2, 1, 1: 2 then 3 gives 0.704, 3
then 2 gives 0.689). The grade orders are then not G's best and worst (``grade_monotone``).
"""

from __future__ import annotations

import numpy as np

from ..core.segments import segmented_cumsum
from ..errors import InputError
from .graded import _gaining_rows, _ratio, gains, levels_by_gain
from .registry import family

#: G's sums of gains are exact below 2^52 (integer gains; plus one a rank, lists of at most
#: 2^31): its discount log2(2 + cost − S) reads the lag cost − S in units, which float64
#: sums of larger gains lose (a lag of 0 read as 2^11 or as −2: a term off by 10x, or NaN).
MAX_TOTAL_GAIN = 2.0 ** 52


def check_total_gain(lists, gain) -> None:
    """Raise :class:`~rankwise.InputError` when a query's judgments hold more than
    :data:`MAX_TOTAL_GAIN` of |gain| in all (G cannot be computed from float64 sums)."""
    level_gain = np.abs(gains(lists.levels, gain))
    if lists.num_queries == 0 or len(level_gain) == 0:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        total = lists.ideal_level_counts @ level_gain
    beyond = np.flatnonzero(~(total <= MAX_TOTAL_GAIN))
    if len(beyond):
        q = beyond[0]
        more = f" (and {len(beyond) - 1} more queries)" if len(beyond) > 1 else ""
        refuse_total_gain(f"query {lists.query_ids[q]!r}{more}", float(total[q]))


def refuse_total_gain(which: str, total: float) -> None:
    """Raise :class:`~rankwise.InputError`: the judgments of ``which`` (``query 'q1'``) hold
    ``total`` of |gain|, more than :data:`MAX_TOTAL_GAIN`."""
    total_text = f"{total:.4g}" if np.isfinite(total) else "more than 1.8e+308"
    raise InputError(f"G of {which}: its judgments' gains add up to {total_text}, more than "
                     f"G can use (2^52 = {MAX_TOTAL_GAIN:.4g}): its discount log2(2 + ideal "
                     "gain so far - gain so far) needs that difference in units, which float64 "
                     "sums of larger gains lose; use smaller grades or a gain map",
                     source="judgments")


def cost_of_ideal(lists, queries: np.ndarray, depth: np.ndarray, gain) -> np.ndarray:
    """cost at ``depth`` for each of ``queries``: Σ over the ideal ranking's first ``depth``
    ranks of max(gain, 1), 1 a rank beyond the judged documents with a positive gain."""
    by_gain, level_gain = levels_by_gain(lists, gain)
    depth = np.asarray(depth, dtype=np.int64)
    if len(by_gain) == 0:
        return depth.astype(np.float64)
    cumulative = np.cumsum(lists.ideal_level_counts[queries][:, by_gain], axis=1)
    within = np.diff(np.minimum(cumulative, depth[:, None]), axis=1, prepend=0)
    beyond = np.maximum(depth - cumulative[:, -1], 0)
    return within @ np.maximum(level_gain, 1.0) + beyond


def total_judged_gain(lists, gain) -> np.ndarray:
    """The total gain of each query's judgments with a positive gain (G's denominator)."""
    by_gain, level_gain = levels_by_gain(lists, gain)
    return lists.ideal_level_counts[:, by_gain] @ level_gain if len(by_gain) else \
        np.zeros(lists.num_queries)


@family("G", "Normalized gain: Σ gain / log2(2 + ideal cost so far − gain so far) over the "
        "retrieved, over the judgments' total gain (trec_eval 10 m_G.c).",
        params={"gain": None}, undefined_when="idcg_zero", trec_name="G", grade_monotone=False)
def normalized_gain(lists, cutoff: None, gain) -> np.ndarray:
    """G = (1 / total judged gain) · Σ_i g_i / log2(2 + cost(i) − S(i)).

    >>> from math import log2
    >>> from rankwise import evaluate
    >>> run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}         # the ideal: c (2), a (1)
    >>> value = evaluate({"q": {"a": 1, "c": 2}}, run, ["G"]).mean("G")
    >>> at_a, at_c = 1 / log2(2 + 2 - 1), 2 / log2(2 + (2 + 1 + 1) - 3)
    >>> round(value, 12) == round((at_a + at_c) / 3, 12)
    True
    """
    check_total_gain(lists, gain)
    row_gain, position, segment = _gaining_rows(lists, None, gain)
    so_far = segmented_cumsum(row_gain, segment)
    cost = cost_of_ideal(lists, segment, position + 1, gain)
    total = np.bincount(segment, weights=row_gain / np.log2(2.0 + cost - so_far),
                        minlength=lists.num_queries)
    return _ratio(total, total_judged_gain(lists, gain))
