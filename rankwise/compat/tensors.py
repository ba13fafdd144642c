"""The tensor kernels behind :mod:`rankwise.torch`: candidates ranked query by query and the
measures computed with tensor operations on the tensors' device.

The ranking mirrors :class:`~rankwise.compat.candidates.Candidates` (itself the engine's
:class:`~rankwise.core.lists.RankedLists` for fixed candidates): stable sorts by score within
each query, ties by the conventions (input order, or the candidate's position compared as text),
optimistic/pessimistic tie groups ordered by grade, ``max_depth`` and ``unjudged="remove"``.
Each measure follows its numpy family in :mod:`rankwise.measures` line for line (segment sums
instead of ``np.bincount``), and the discounts come from the engine's own table, so both give
the same numbers (checked per query in tests/compat/test_torch.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..conventions import Conventions
from ..errors import InputError

#: families computed with tensor operations; the rest goes through the numpy engine
NATIVE = ("P", "Hits", "R", "SetP", "SetR", "Success", "RR", "AP", "Rprec", "nDCG", "DCG")
#: families whose expected value over tie orders is linear in the positions (native too)
NATIVE_EXPECTED = ("P", "Hits", "R", "SetP", "SetR", "Rprec", "nDCG", "DCG")


# ------------------------------------------------------------------------------ ranking


@dataclass
class _Lists:
    """The candidates in ranked order, query by query (the tensors' twin of RankedLists)."""

    seg: Any  # query of every row (0 .. Q-1), ranked order
    position: Any  # 0-based rank within its query
    grade: Any  # float64
    score: Any  # float64
    offsets: Any  # Q + 1
    num_queries: int
    all_seg: Any  # every candidate's query (for the ideal from all judgments)
    all_grade: Any  # every candidate's grade
    original: tuple  # (preds, target, indexes) as given, for the numpy engine
    conventions: Conventions


def check(preds: Any, target: Any, indexes: Any):
    """The three tensors, flattened, once their lengths, device, index type and finite values
    are checked (:class:`~rankwise.InputError` otherwise)."""
    import torch

    tensors = []
    for name, value in (("preds", preds), ("target", target), ("indexes", indexes)):
        if not isinstance(value, torch.Tensor):
            raise InputError(f"{name} must be a torch.Tensor", source=name,
                             value=type(value).__name__)
        tensors.append(value.reshape(-1))
    preds, target, indexes = tensors
    if not (len(preds) == len(target) == len(indexes)):
        raise InputError(f"preds, target and indexes have {len(preds)}, {len(target)} and "
                         f"{len(indexes)} elements", source="tensors")
    if len({preds.device, target.device, indexes.device}) > 1:
        raise InputError("preds, target and indexes must be on one device", source="tensors",
                         value=f"{preds.device}, {target.device}, {indexes.device}")
    if indexes.is_floating_point() or indexes.is_complex():
        raise InputError("indexes must hold integer query ids", source="indexes",
                         value=str(indexes.dtype))
    if not len(preds):
        raise InputError("no candidates", source="tensors")
    for name, value in (("preds", preds), ("target", target)):
        finite = torch.isfinite(value.double())
        if not bool(finite.all()):
            row = int((~finite).nonzero()[0])
            raise InputError(f"{name} must be finite", source=name, line=row, unit="row",
                             value=str(value[row].item()))
    return preds, target, indexes


def check_ignore_index(ignore_index: Any) -> None:
    """torchmetrics' rule: ``ignore_index`` is an integer or None; of 64 bits, as a tensor
    compares it (a wider one escaped as OverflowError)."""
    if ignore_index is not None and (isinstance(ignore_index, bool)
                                     or not isinstance(ignore_index, int)
                                     or not -(1 << 63) <= ignore_index < 1 << 63):
        raise InputError("ignore_index must be an integer of 64 bits or None",
                         source="ignore_index", value=repr(ignore_index)[:80])


def drop_ignored(preds, target, indexes, ignore_index: int):
    """The candidates whose target is not ``ignore_index``, as torchmetrics' ``ignore_index``
    drops them before grouping: a query left with no candidate is no query at all."""
    check_ignore_index(ignore_index)
    keep = target != ignore_index
    if bool(keep.all()):
        return preds, target, indexes
    return preds[keep], target[keep], indexes[keep]


def rank(preds, target, indexes, conv: Conventions) -> _Lists:
    """Sort the candidates query by query, score descending, ties by the conventions."""
    import torch

    device = preds.device
    score = preds.detach().double()
    if conv.score_precision == "float32":
        score = score.float().double()
    grade = target.detach().double()
    _, seg = torch.unique(indexes, return_inverse=True)
    num_queries = int(seg.max()) + 1
    sizes = torch.bincount(seg, minlength=num_queries)
    offsets = torch.zeros(num_queries + 1, dtype=torch.long, device=device)
    offsets[1:] = torch.cumsum(sizes, 0)
    order = torch.argsort(-score, stable=True)  # ties keep the input order
    order = order[torch.argsort(seg[order], stable=True)]
    ties = conv.ties if conv.ties in ("input_order", "docid_asc") else "docid_desc"
    if ties != "input_order" and _has_ties(score[order], seg[order]):
        # the doc id of a candidate is its position among its query's rows, in input order
        by_query = torch.argsort(seg, stable=True)
        position = torch.empty_like(seg)
        position[by_query] = torch.arange(len(seg), device=device) - offsets[seg[by_query]]
        key = _byte_order_rank(position, int(sizes.max()))
        order = torch.argsort(key if ties == "docid_asc" else -key, stable=True)
        order = order[torch.argsort(-score[order], stable=True)]
        order = order[torch.argsort(seg[order], stable=True)]
    lists = _Lists(seg[order], _positions(offsets, len(seg)), grade[order], score[order],
                   offsets, num_queries, seg, grade, (preds, target, indexes), conv)
    if conv.ties in ("optimistic", "pessimistic"):
        lists = _ties_by_grade(lists, best_first=conv.ties == "optimistic")
    keep = None
    if conv.max_depth is not None:
        keep = lists.position < conv.max_depth
    if conv.unjudged == "remove":
        judged = lists.grade >= 0
        keep = judged if keep is None else keep & judged
    if keep is not None and not bool(keep.all()):
        counts = torch.bincount(lists.seg[keep], minlength=num_queries)
        offsets = torch.zeros(num_queries + 1, dtype=torch.long, device=device)
        offsets[1:] = torch.cumsum(counts, 0)
        lists = _Lists(lists.seg[keep], _positions(offsets, int(offsets[-1])), lists.grade[keep],
                       lists.score[keep], offsets, num_queries, seg, grade, lists.original, conv)
    return lists


def _has_ties(score, seg) -> bool:
    """Whether two consecutive ranked rows of one query share a score."""
    return len(score) > 1 and bool(((score[1:] == score[:-1]) & (seg[1:] == seg[:-1])).any())


def _positions(offsets, n: int):
    import torch

    seg = torch.repeat_interleave(torch.arange(len(offsets) - 1, device=offsets.device),
                                  torch.diff(offsets))
    return torch.arange(n, device=offsets.device) - offsets[seg]


def _byte_order_rank(position, longest: int):
    """Rank of ``str(position)`` among ``"0" .. str(longest - 1)`` in byte order."""
    import torch

    names = np.arange(longest).astype(str)
    rank = np.empty(longest, dtype=np.int64)
    rank[np.argsort(names, kind="stable")] = np.arange(longest)
    return torch.from_numpy(rank).to(position.device)[position]


def _tie_groups(lists: _Lists):
    import torch

    n = len(lists.score)
    new = torch.ones(n, dtype=torch.bool, device=lists.score.device)
    if n > 1:
        new[1:] = (lists.score[1:] != lists.score[:-1]) | (lists.seg[1:] != lists.seg[:-1])
    return torch.cumsum(new.long(), 0) - 1


def _ties_by_grade(lists: _Lists, best_first: bool) -> _Lists:
    """Each tie group ordered by grade, best (or worst) first; unjudged as grade -1."""
    import torch

    key = torch.where(lists.grade >= 0, lists.grade, torch.full_like(lists.grade, -1.0))
    order = torch.argsort(-key if best_first else key, stable=True)
    order = order[torch.argsort(_tie_groups(lists)[order], stable=True)]
    return _Lists(lists.seg, lists.position, lists.grade[order], lists.score[order],
                  lists.offsets, lists.num_queries, lists.all_seg, lists.all_grade,
                  lists.original, lists.conventions)


# ------------------------------------------------------------------------------ measures


def compute(measure, lists: _Lists, base: Conventions):
    """One value per query (float64 tensor), NaN where the conventions leave it undefined."""
    import torch

    conv = base.for_family(measure.family)
    params = dict(measure.spec.params)
    params.update(dict(measure.params))
    for name, default in (("rel", conv.relevance_threshold), ("gain", conv.gain_name),
                          ("base", conv.discount_base)):
        if name in params and params[name] is None:
            params[name] = default
    native = measure.family in NATIVE and (
        conv.ties != "expected" or measure.family in NATIVE_EXPECTED) and not (
        measure.family in ("nDCG", "DCG") and params["rel"] > 0) and not (  # gains from a grade
        conv.ties in ("optimistic", "pessimistic") and isinstance(params.get("gain"), tuple))
    # (a gain map orders a tie by gain there: Measure.tie_ordered)
    if conv.ties != base.ties and conv.ties in ("optimistic", "pessimistic"):
        lists = _ties_by_grade(lists, best_first=conv.ties == "optimistic")
    if not native:
        return _on_host(measure, lists, base)
    cutoff = measure.cutoff
    expected = conv.ties == "expected"
    if measure.family in ("nDCG", "DCG"):
        dcg = _dcg(lists, cutoff, params["gain"], params["base"], expected, conv.discount)
        if measure.family == "DCG":
            return dcg
        ideal = _ideal_dcg(lists, cutoff, params["gain"], params["base"], conv)
        values = torch.where(ideal > 0, dcg / torch.where(ideal > 0, ideal, 1.0),
                             torch.full_like(dcg, math.nan))
        return _undefined(values, torch.isnan(values), conv.idcg_zero)
    rel = params["rel"]
    hit = _hits(lists, rel, conv, expected)
    num_rel = _num_relevant(lists, rel, conv)
    family = measure.family
    if family == "Hits":  # a count: defined without relevant documents too
        return _sum_within(lists, hit, cutoff)
    if family == "P":
        found = _sum_within(lists, hit, cutoff)
        if conv.short_lists == "length":
            values = _divide(found, torch.clamp(torch.diff(lists.offsets), max=cutoff).double())
        else:
            values = found / cutoff
    elif family == "R":
        denominator = num_rel if conv.recall_denominator == "relevant" else \
            torch.clamp(num_rel, max=cutoff)
        values = _divide(_sum_within(lists, hit, cutoff), denominator)
    elif family == "SetP":
        values = _divide(_segment_sum(lists, hit), torch.diff(lists.offsets).double())
    elif family == "SetR":
        values = _divide(_segment_sum(lists, hit), num_rel)
    elif family == "Success":
        values = (_sum_within(lists, hit, cutoff) > 0).double()
    elif family == "Rprec":
        within = lists.position < num_rel[lists.seg]
        values = _divide(_segment_sum(lists, torch.where(within, hit, 0.0)), num_rel)
    elif family == "RR":
        values = _reciprocal_rank(lists, hit, cutoff)
    else:  # AP
        values = _average_precision(lists, hit, cutoff, num_rel, conv)
    return _undefined(values, num_rel == 0, conv.no_relevant)


def _hits(lists: _Lists, rel: float, conv: Conventions, expected: bool):
    """1.0 for a relevant row (a hit), else 0.0; with expected ties, the tie group's share."""
    import torch

    hit = (lists.grade >= rel).double()
    if conv.nonpositive_scores == "nonrelevant":
        hit = torch.where(lists.score > 0, hit, 0.0)
    return _group_mean(lists, hit) if expected else hit


def _group_mean(lists: _Lists, values):
    import torch

    group = _tie_groups(lists)
    count = torch.bincount(group).double()
    total = torch.zeros(len(count), dtype=torch.float64, device=values.device)
    total.index_add_(0, group, values)
    return (total / count)[group]


def _num_relevant(lists: _Lists, rel: float, conv: Conventions):
    """R per query: relevant candidates, all of them or (``ideal="retrieved"``) those ranked."""
    if conv.ideal == "judgments":
        return _count(lists.all_seg, lists.all_grade >= rel, lists.num_queries)
    return _count(lists.seg, lists.grade >= rel, lists.num_queries)


def _count(seg, mask, num_queries: int):
    import torch

    return torch.bincount(seg[mask], minlength=num_queries).double()


def _segment_sum(lists: _Lists, values):
    import torch

    out = torch.zeros(lists.num_queries, dtype=torch.float64, device=values.device)
    return out.index_add_(0, lists.seg, values)


def _sum_within(lists: _Lists, values, cutoff: int | None):
    import torch

    if cutoff is not None:
        values = torch.where(lists.position < cutoff, values, 0.0)
    return _segment_sum(lists, values)


def _divide(numerator, denominator):
    """numerator / denominator, 0 where the denominator is 0."""
    import torch

    safe = torch.where(denominator != 0, denominator, torch.ones_like(denominator))
    return torch.where(denominator != 0, numerator / safe, torch.zeros_like(numerator))


def _undefined(values, undefined, policy: str | None):
    """``values`` with the undefined queries set as the ``no_relevant`` / ``idcg_zero``
    policy says (0, 1 or NaN), as the numpy engine does."""
    import torch

    from ..measures.registry import undefined_value

    if policy is None:
        return values
    fill = undefined_value(policy)
    return torch.where(undefined, torch.full_like(values, fill), values)


def _reciprocal_rank(lists: _Lists, hit, cutoff: int | None):
    import torch

    rows = hit > 0
    if cutoff is not None:
        rows &= lists.position < cutoff
    first = torch.full((lists.num_queries,), math.inf, dtype=torch.float64,
                       device=hit.device)
    first.scatter_reduce_(0, lists.seg[rows], lists.position[rows].double(), reduce="amin")
    return torch.where(torch.isfinite(first), 1.0 / (first + 1.0), torch.zeros_like(first))


def _average_precision(lists: _Lists, hit, cutoff: int | None, num_rel, conv: Conventions):
    import torch

    within = hit if cutoff is None else torch.where(lists.position < cutoff, hit, 0.0)
    running = torch.cumsum(within, 0)
    kth = running - _start_value(running, lists)  # hits so far in the query, this one included
    total = _segment_sum(lists, within * kth / (lists.position + 1.0))
    rule = conv.ap_denominator
    if rule == "relevant_retrieved":
        denominator = _segment_sum(lists, within)
    elif rule == "relevant" or cutoff is None and rule == "min_relevant_cutoff":
        denominator = num_rel
    elif rule == "min_relevant_cutoff":
        denominator = torch.clamp(num_rel, max=cutoff)
    elif cutoff is not None:
        denominator = torch.full_like(num_rel, float(cutoff))
    else:
        denominator = torch.diff(lists.offsets).double()
    return _divide(total, denominator)


def _start_value(running, lists: _Lists):
    """The running sum just before each row's query starts."""
    import torch

    previous = torch.zeros(lists.num_queries, dtype=torch.float64, device=running.device)
    nonempty = torch.diff(lists.offsets) > 0
    starts = lists.offsets[:-1][nonempty]
    shifted = torch.where(starts > 0, running[torch.clamp(starts - 1, min=0)],
                          torch.zeros(len(starts), dtype=torch.float64, device=running.device))
    previous[nonempty] = shifted
    return previous[lists.seg]


def _gains(grade, gain):
    import torch

    from ..measures.graded import check_exp_gain

    g = torch.where(grade >= 0, grade, torch.zeros_like(grade))
    if gain == "linear":
        return g
    if gain == "exp":
        check_exp_gain(float(g.max()))  # as the numpy engine refuses grades above 1023
        return torch.exp2(g) - 1.0
    mapped = g.clone()
    for level, value in gain:
        mapped = torch.where(grade == level, torch.full_like(mapped, value), mapped)
    return mapped


def _discount(position, base: float, rule: str):
    """The discount of every 0-based position, from the numpy engine's own table (so that
    both compute the same bits), moved to the positions' device."""
    import torch

    from ..core.segments import discounts

    longest = int(position.max()) + 1 if len(position) else 0
    table = torch.from_numpy(discounts(longest, base, rule)).to(position.device)
    return table[position]


def _dcg(lists: _Lists, cutoff: int | None, gain, base: float, expected: bool, rule: str):
    import torch

    row_gain = _gains(lists.grade, gain)
    if expected:
        row_gain = _group_mean(lists, row_gain)
    weight = row_gain * _discount(lists.position, base, rule)
    if cutoff is not None:
        weight = torch.where(lists.position < cutoff, weight, 0.0)
    return _segment_sum(lists, weight)


def _ideal_dcg(lists: _Lists, cutoff: int | None, gain, base: float, conv: Conventions):
    """DCG of the candidates sorted by gain: all of them, or (``ideal="retrieved"``) the ranked.

    The positive gains of each query, best first, weighted by their discounts and summed as
    :func:`_dcg` sums a ranking's (``index_add_`` in rank order): a ranking in the ideal order
    has nDCG exactly 1 on the CPU, as in the numpy engine (a sum from prefix sums of the
    discounts was off by an ulp or two).
    """
    import torch

    if conv.ideal == "judgments":
        seg, grade = lists.all_seg, lists.all_grade
    else:
        seg, grade = lists.seg, lists.grade
    row_gain = _gains(grade, gain)
    positive = row_gain > 0
    out = torch.zeros(lists.num_queries, dtype=torch.float64, device=seg.device)
    if not bool(positive.any()):
        return out
    levels, level = torch.unique(-row_gain[positive], return_inverse=True)  # best gain first
    counts = torch.bincount(seg[positive] * len(levels) + level,
                            minlength=lists.num_queries * len(levels))
    per_query = counts.reshape(lists.num_queries, len(levels)).sum(dim=1)
    row_gain = torch.repeat_interleave(-levels.repeat(lists.num_queries), counts)
    seg = torch.repeat_interleave(torch.arange(lists.num_queries, device=seg.device), per_query)
    position = torch.arange(len(seg), device=seg.device) - torch.repeat_interleave(
        torch.cumsum(per_query, 0) - per_query, per_query)
    weight = row_gain * _discount(position, base, conv.discount)
    if cutoff is not None:
        weight = torch.where(position < cutoff, weight, 0.0)
    return out.index_add_(0, seg, weight)


def _on_host(measure, lists: _Lists, conv: Conventions):
    """A measure the tensors' code does not cover, by the numpy engine (copies to the host)."""
    import torch

    from .candidates import Candidates

    preds, target, indexes = (t.detach().cpu() for t in lists.original)
    # as float64 on the tensors' side: numpy has no bfloat16 (.numpy() raised TypeError)
    candidates = Candidates(target.double().numpy(), query=indexes.numpy(), conventions=conv)
    values = candidates.values(preds.double().numpy(), [measure])[str(measure)]
    return torch.from_numpy(values).to(lists.original[0].device)


def aggregate(measure, values, conv: Conventions):
    """The mean (sum for counts) over queries, as rankwise.evaluate aggregates, except that
    when every query is skipped the mean is 0.0, as torchmetrics returns (retrieval/base.py:
    ``tensor(0.0)`` when no query is left), where rankwise.evaluate's is NaN."""
    import torch

    skip = measure.skips_undefined(conv)
    undefined = torch.isnan(values)
    if bool(undefined.any()):
        if not skip:
            return torch.tensor(math.nan, dtype=torch.float64, device=values.device)
        values = values[~undefined]
    if measure.spec.aggregate == "sum":
        return values.sum()
    if len(values) == 0:
        return torch.tensor(0.0, dtype=torch.float64, device=values.device)
    if measure.spec.aggregate == "gmean":
        return torch.exp(torch.log(torch.clamp(values, min=1e-5)).mean())
    return values.mean()
