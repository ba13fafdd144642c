"""Agreement between two orderings of systems: Kendall's tau and rank-biased overlap
(with ties: its expectation over the orderings of tied systems)."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..errors import InputError


def kendall_tau(a: Any, b: Any) -> float:
    """Kendall's tau-b between two scorings of the same items (e.g. systems' means under two
    measures).

    ``tau_b = (C - D) / sqrt((P - T_a)(P - T_b))`` over the ``P = n(n-1)/2`` pairs, with C
    concordant and D discordant pairs and ``T_a``, ``T_b`` pairs tied in a or b (Kendall
    1945); the value of :func:`scipy.stats.kendalltau`. Pairwise, O(n²) memory: meant for
    orderings of systems (up to a few thousand). NaN when one side is constant.

    >>> kendall_tau([0.3, 0.2, 0.1], [0.9, 0.1, 0.5])
    0.3333333333333333
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise InputError("kendall_tau needs two 1-D sequences of the same length",
                         source="kendall_tau", value=f"{x.shape} and {y.shape}")
    i, j = np.triu_indices(len(x), 1)
    sx, sy = _order_signs(x, i, j), _order_signs(y, i, j)
    denominator = math.sqrt(float((sx != 0).sum()) * float((sy != 0).sum()))
    return float((sx * sy).sum()) / denominator if denominator else float("nan")


def _order_signs(v: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """``sign(v[i] - v[j])`` by comparison, so that means near 1e308 do not overflow in the
    subtraction (NaN where either is NaN)."""
    signs = (v[i] > v[j]).astype(np.float64) - (v[i] < v[j])
    return np.where(np.isnan(v[i]) | np.isnan(v[j]), np.nan, signs)


def rbo(a: Sequence[Any], b: Sequence[Any], p: float = 0.9) -> float:
    """Extrapolated rank-biased overlap of two rankings (lists of distinct items, best first).

    With ``X_d`` the number of items shared by the top d of both lists, s and l the lengths of
    the shorter and the longer list:
    ``RBO_ext = (1-p)/p [Σ_{d=1}^{l} X_d/d p^d + Σ_{d=s+1}^{l} X_s (d-s)/(s d) p^d]
    + [(X_l - X_s)/l + X_s/s] p^l`` (Webber, Moffat & Zobel 2010, TOIS 28(4), eq. 32; eq. 30
    when ``s = l``). 1 for identical lists, 0 for disjoint ones; top-weighted, with
    ``p`` the persistence (the top ``1/(1-p)`` ranks carry most of the weight). For two
    scorings with ties, see :func:`expected_rbo`.

    >>> rbo(["a", "b", "c"], ["a", "b", "c"])
    1.0
    >>> round(rbo(["a", "b", "c"], ["b", "a", "c"]), 4)   # (0.1/0.9)(0 + 0.81 + 0.729) + 0.729
    0.9
    """
    _check_persistence(p)
    short, long_ = (list(a), list(b)) if len(a) <= len(b) else (list(b), list(a))
    s, l = len(short), len(long_)
    if len(set(short)) != s or len(set(long_)) != l:
        raise InputError("rbo needs rankings without repeated items", source="rbo")
    if s == 0:
        return 0.0
    pos_long = {item: r for r, item in enumerate(long_, start=1)}
    entry = [max(r, pos_long[item]) for r, item in enumerate(short, start=1) if item in pos_long]
    overlap = np.cumsum(np.bincount(np.asarray(entry, dtype=np.int64), minlength=l + 1)[1:])
    return _rbo_ext(overlap.astype(np.float64), s, p)


def expected_rbo(a: Any, b: Any, p: float = 0.9) -> float:
    """RBO of the orderings of the same items by two scorings (highest first), averaged over
    every way of ordering tied items, all equally likely and independent in the two.

    A tie leaves the order of its items unknown; rather than break it by a key (input order,
    a name) that changes the value, this takes the expectation over the orderings, as
    rankwise's ``ties="expected"`` does for measures (McSherry & Najork 2008; Corsi & Urbano
    2024, SIGIR, "The treatment of ties in rank-biased overlap", compare treatments of ties).
    With k items, ``X_d`` the overlap of the two top-d sets, and ties broken independently,
    ``E[X_d] = Σ_i P_a(i, d) P_b(i, d)``: an item in a tie group of g items below s better
    ones is in the top d with probability ``min(1, max(0, (d - s) / g))``. Both lists hold the
    same k items (``X_k = k``), so RBO_ext (eq. 30 of Webber et al. 2010) is linear in the
    ``X_d`` and its expectation is RBO_ext of the ``E[X_d]``. Without ties it is
    :func:`rbo` of the two orderings. NaN scores rank last, tied with each other.

    >>> round(expected_rbo([0.5, 0.5, 0.25], [0.7, 0.8, 0.5]), 4)   # mean of 0.9 and 1
    0.95
    """
    _check_persistence(p)
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise InputError("expected_rbo needs two 1-D sequences of the same length",
                         source="expected_rbo", value=f"{x.shape} and {y.shape}")
    k = len(x)
    if k == 0:
        return 0.0
    overlap = (_in_top(x) * _in_top(y)).sum(axis=0)  # E[X_d], d = 1..k
    return _rbo_ext(overlap, k, p)


def _in_top(scores: np.ndarray) -> np.ndarray:
    """``P[i, d - 1]``: probability that item i is among the top d when ties are broken
    uniformly at random (NaN last)."""
    v = np.where(np.isnan(scores), -np.inf, scores)
    above = (v[None, :] > v[:, None]).sum(axis=1)  # items strictly better than i
    tied = (v[None, :] == v[:, None]).sum(axis=1)  # i's tie group, i included
    depth = np.arange(1, len(v) + 1)
    return np.clip((depth[None, :] - above[:, None]) / tied[:, None], 0.0, 1.0)


def _rbo_ext(overlap: np.ndarray, s: int, p: float) -> float:
    """Eq. 32 of Webber et al. (2010) from the overlaps ``X_1 .. X_l`` of the top-d sets, s
    the length of the shorter list (eq. 30 when ``s = l``)."""
    l = len(overlap)
    depth = np.arange(1, l + 1)
    weights = p ** depth.astype(np.float64)
    x_s, x_l = float(overlap[s - 1]), float(overlap[l - 1])
    tail = depth > s
    total = float((overlap / depth * weights).sum())
    total += float((x_s * (depth[tail] - s) / (s * depth[tail]) * weights[tail]).sum())
    return (1 - p) / p * total + ((x_l - x_s) / l + x_s / s) * p ** l


def _check_persistence(p: float) -> None:
    if not 0 < p < 1:
        raise InputError("rbo persistence p must be strictly between 0 and 1", source="rbo",
                         value=repr(p))
