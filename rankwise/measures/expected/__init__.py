"""Exact expected values of ranking measures over all orderings of tied documents.

With ``ties="expected"`` every order-based measure is the exact mean of its value over all
orderings of the documents that share a score (McSherry & Najork, "Computing Information
Retrieval Performance Measures Efficiently in the Presence of Tied Scores", ECIR 2008), each
tie group ordered uniformly at random and independently of the others. Nothing is sampled:
every family has a closed form or an exact vectorised method, below.

Notation: the rows of a query are cut into tie groups (consecutive rows with equal scores). A
group starts at 0-based position ``s``, holds ``n`` documents of which ``r`` are relevant
(hits, as ``lists.hits`` defines them), and ``H`` hits are ranked above it; ``m`` is the number
of its positions within the cutoff K, ``clip(K - s, 0, n)``. A position ``j`` (1-based) of a
group holds a hit with probability ``r / n``.

* **Linear measures** (P, Hits, R, F1, RelP, Rprec, RprecMult, CG, DCG, nDCG, RWRR, ARHR, RBP,
  RBPResid, Judged, Unjudged): the expected value at a position is the group's mean, so
  E[hits@K] = Σ_groups r·m/n and E[DCG@K] = Σ_positions mean gain of the group / log_b(rank + 1).
  F1 = 2·hits / (P's + R's denominator) is linear in the hits too.
* **Success@K** = 1 − P(no hit above K): only the group straddling K is random, and it has no
  hit in its first m positions with probability C(n−r, m) / C(n, m).
* **RR**: the first hit lies in the first group with r > 0, at its j-th position with
  probability C(n−j, r−1) / C(n, r).
* **AP**: given a hit at position j of its group, the expected number of hits before it in the
  group is (r−1)(j−1)/(n−1), so E[Σ precision at hits] is a sum over positions. With the
  denominator ``relevant_retrieved`` and a cutoff, the number Z of hits of the straddling group
  within K is hypergeometric and the ratio is averaged exactly over its values.
* **infAP**: a hit's term depends on the hits, judged non-relevant and unjudged documents above
  it; within its group it takes a uniform position t, and the documents of the group above it
  are a uniform t-subset of the others (a multivariate hypergeometric draw). The term is linear
  in the number of documents without a judgment among them, so given the hits a and judged
  non-relevant b above it that number is replaced by its mean; (t, a, b) are summed exactly
  (about n·r·b/2 terms for a group of n documents with r hits and b judged non-relevant).
* **binG**: a hit at position t of its group has a hypergeometric number of the group's other
  hits above it; the term 1/log2(2 + documents not relevant above) is averaged over both.
* **G**: a gaining document's term depends on the sum of the gains above it. Outside its group
  that sum is fixed; inside, the documents above it are a uniform subset of the group's others,
  so the term is averaged over every count of each distinct gain among them (a multivariate
  hypergeometric draw): the product of (count + 1) over the group's distinct gains, per
  gaining document's gain.
* **Bpref**: a hit's rank among the b judged non-relevant documents of its own group is uniform
  on 0..b (only their relative order matters), so min(n_r, R) is averaged in closed form.
* **ERR** (cascade): the product of (1 − R_i) over earlier groups does not depend on their
  order; inside a group, the ℓ-th gaining document (gain > 0) of a random order is a uniformly
  random one of the a gaining documents with the ℓ−1 before it a uniform subset (their mean
  stopping products are elementary symmetric means, by dynamic programming over the documents),
  and its position is the ℓ-th order statistic of a uniform a-subset of the n positions.
* **IPrec / 11pt_avg**: interpolated precision at recall level p is the maximum of k/rank_k
  over hits k >= t. The k-th hit's group is fixed; within a group the maximum X_g depends only
  on the positions of its hits, independent across groups, so P(max < v) = Π_g P(X_g < v).
  P(X_g < v) is the probability that the order statistics of a uniform r-subset clear lower
  bounds, computed exactly by a recursion over the last violated bound (O(r²) per value).
  E[max] sums P(max >= v) over the values v the maximum can take above its sure lower bound.

Probabilities of hypergeometric type are ratios of binomial coefficients: exact (correctly
rounded) ones for groups of up to 64 documents; beyond, logs of short products where one side
of C(n, k) is at most 32 (relative error a few units of the last place) and log-factorials
(``math.lgamma``, relative error about 1e-16 · ln n!) otherwise.
Cost: linear in the number of rows for every family but ERR (rows × gaining documents of the
group, for the tie groups with several gaining documents) and IPrec / 11pt_avg (per level, the
values the maximum can take times r²/2 for each tie group with r > 1 hits: about n·r³/2 for a
group of n documents; fast for thousands of documents with a few hits). An input that would
need more than :data:`WORK_LIMIT` steps raises :class:`~rankwise.errors.MeasureError`; nothing
is approximated.

:func:`tie_bounds` gives the optimistic and pessimistic values (tie groups ordered by grade,
best or worst first) and :func:`straddling_ties` counts the queries whose value at a cutoff
can depend on the order of tied documents.

Examples
--------
Two documents tied at the top, one of them relevant: P@1 is 1/2 and RR is (1 + 1/2) / 2.

>>> from rankwise import evaluate
>>> qrels = {"q": {"a": 1, "b": 0}}
>>> run = {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}
>>> result = evaluate(qrels, run, ["P@1", "RR", "AP"], ties="expected")
>>> result.mean("P@1"), result.mean("RR"), result.mean("AP")
(0.5, 0.75, 0.75)
"""


from __future__ import annotations

from . import binary, curves, graded  # noqa: F401  (each registers its families' methods)
from .bounds import reorder_ties, straddling_ties, tie_bound, tie_bounds
from .dispatch import EXPECTED, expected_for, expected_value
from .groups import TieGroups
from .numerics import WORK_LIMIT

__all__ = ["EXPECTED", "WORK_LIMIT", "TieGroups", "expected_for", "expected_value",
           "reorder_ties", "straddling_ties", "tie_bound", "tie_bounds"]
