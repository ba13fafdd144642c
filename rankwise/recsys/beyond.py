"""Beyond-accuracy measures of recommendation lists, vectorised over users.

Every measure reads the integer-coded lists of :class:`~rankwise.recsys.inputs.TopLists`
(best first, cut at the measure's ``@K``) and, where it needs them, the training
interactions (item popularity, each user's history) and item features. Per-user measures
return one value per list (NaN where undefined, e.g. a list of one item has no pairs);
global measures return one number. No per-user Python loop: segment sums
(``np.add.reduceat``, ``np.bincount``) and sparse products.

Measures (``@K`` optional on every one; parameters in parentheses):

=================== ======== ====================================================================
name                per user definition
=================== ======== ====================================================================
``Coverage``        no       |distinct recommended items| / |catalogue|
``Entropy``         no       −Σ_i p_i log2 p_i, p_i = share of all recommendations that are item i
``Gini``            no       Gini index of the recommendation counts over the catalogue
``ARP``             yes      mean training popularity φ(i) of the list's items
``APLT(head=0.2)``  yes      share of the list's items in the long tail (outside the head)
``TailShare(...)``  yes      RecBole's TailPercentage: share of the rarest training items
``Novelty``         yes      mean self-information −log2(φ(i) / N) of the list's items
``ILD(...)``        yes      mean pairwise distance (1 − similarity) within the list
``Serendipity``     yes      share of the list both relevant and not in a popularity list
``UnexpRel(...)``   yes      mean (1 − similarity to the user's history) × relevance
``Personalization`` yes      1 − mean cosine similarity of the list with every other list
=================== ======== ====================================================================

docs/recsys.md sets each definition next to RecBole's, Elliot's, LensKit's, Microsoft
recommenders' and Evidently's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import MeasureError
from .inputs import TopLists


@dataclass(eq=False)
class Context:
    """What the beyond-accuracy measures read (built once per system by the API)."""

    lists: TopLists
    catalogue: np.ndarray  # bool per item code: in the catalogue
    popularity: np.ndarray | None  # training interactions per item code (None: no training data)
    train_user: np.ndarray | None = None  # user code per training row
    train_item: np.ndarray | None = None  # item code per training row
    relevant: np.ndarray | None = None  # bool per list row: judged relevant
    features: Any = None  # (items x d) dense array or scipy sparse matrix, rows by item code
    item_ids: Any = None  # Arrow string array: the id of every item code (tie-breaks by id)
    rating: np.ndarray | None = None  # per list row: the user's test rating (NaN: none)
    predicted: bool = True  # the lists' scores are the input's (False: made from the order)
    judged: np.ndarray | None = None  # bool per list: relevance known (None: every list)
    test_ratings: int = 0  # rated (user, item) pairs in the test data
    with_features: np.ndarray | None = None  # bool per item code: given a feature vector
    notes: dict[str, int] = field(default_factory=dict)  # counts for the diagnostics


@dataclass(frozen=True)
class BeyondSpec:
    """A beyond-accuracy measure family."""

    name: str
    compute: Callable[..., Any]
    description: str
    per_user: bool
    needs: tuple[str, ...] = ()  # "train", "features", "test"
    params: dict[str, Any] = field(default_factory=dict)
    higher_is_better: bool = True
    reference: str = ""


BEYOND: dict[str, BeyondSpec] = {}


def beyond(name: str, description: str, per_user: bool, needs: tuple[str, ...] = (),
           params: dict[str, Any] | None = None, higher_is_better: bool = True,
           reference: str = "") -> Callable:
    """Register a beyond-accuracy measure family."""

    def register(compute: Callable[..., Any]) -> Callable[..., Any]:
        BEYOND[name] = BeyondSpec(name, compute, description, per_user, needs, params or {},
                                  higher_is_better, reference)
        return compute

    return register


@dataclass(frozen=True)
class BeyondMeasure:
    """One beyond-accuracy measure: family, cutoff, parameters (``ILD(metric=jaccard)@10``)."""

    family: str
    cutoff: int | None = None
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def spec(self) -> BeyondSpec:
        return BEYOND[self.family]

    def __str__(self) -> str:
        text = self.family
        if self.params:
            text += "(" + ",".join(f"{k}={_show(v)}" for k, v in self.params) + ")"
        return text + (f"@{self.cutoff}" if self.cutoff is not None else "")

    def compute(self, ctx: Context):
        lists = ctx.lists if self.cutoff is None else ctx.lists.truncate(self.cutoff)
        params = dict(self.spec.params)
        params.update(dict(self.params))
        return self.spec.compute(ctx, lists, self.cutoff, **params)


_NAME = re.compile(r"^(?P<name>[A-Za-z]+)(?:\((?P<params>[^()]*)\))?(?:@(?P<cutoff>\d+))?$")


def parse_beyond(text: str) -> BeyondMeasure | None:
    """The beyond-accuracy measure ``text`` names, or None if it names none.

    >>> str(parse_beyond("ild(metric=jaccard)@10")), parse_beyond("nDCG@10")
    ('ILD(metric=jaccard)@10', None)
    """
    match = _NAME.match(text.strip())
    if not match:
        return None
    by_lower = {k.lower(): k for k in BEYOND}
    family = by_lower.get(match["name"].lower())
    if family is None:
        return None
    spec = BEYOND[family]
    params: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in (match["params"] or "").split(","))):
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in spec.params:
            allowed = ", ".join(spec.params) or "none"
            raise MeasureError(f"{family} has no parameter {key!r} (parameters: {allowed})",
                               source="measure", value=text)
        params[key] = _value(f"{family} parameter {key}", value, spec.params[key], text)
    cutoff = int(match["cutoff"]) if match["cutoff"] else None
    if cutoff == 0:
        raise MeasureError("a cutoff must be a positive integer", source="measure", value=text)
    ordered = tuple(sorted((k, v) for k, v in params.items() if v != spec.params[k]))
    return BeyondMeasure(family, cutoff, ordered)


def _value(name: str, text: str, default: Any, whole: str) -> Any:
    """A parameter's value ``text``, of its default's type: a string, a finite number, or a
    whole number of 0 or more (``name`` is the parameter, ``whole`` the measure, for errors)."""
    if isinstance(default, str):
        return text
    try:
        number = float(text)
    except ValueError:
        raise MeasureError("expected a number", source="measure", value=whole) from None
    if not math.isfinite(number):
        raise MeasureError(f"{name} must be a finite number", source="measure", value=whole)
    if isinstance(default, float):
        return number
    if not number.is_integer() or number < 0:
        raise MeasureError(f"{name} must be a whole number, 0 or more", source="measure",
                           value=whole)
    return int(number)


def _show(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


# ---------------------------------------------------------------------------- helpers


def _per_list_mean(lists: TopLists, row_values: np.ndarray, valid: np.ndarray | None = None
                   ) -> np.ndarray:
    """Mean of ``row_values`` over each list's rows (where ``valid``), NaN for empty lists."""
    segment = lists.segment()
    if valid is not None:
        segment, row_values = segment[valid], row_values[valid]
    total = np.bincount(segment, weights=row_values, minlength=lists.num_lists)
    count = np.bincount(segment, minlength=lists.num_lists)
    out = np.full(lists.num_lists, np.nan)
    np.divide(total, count, out=out, where=count > 0)
    return out


def _counts(ctx: Context, lists: TopLists) -> np.ndarray:
    """How often each item code is recommended (within the cutoff)."""
    return np.bincount(lists.items, minlength=len(ctx.catalogue))


def _note(ctx: Context, name: str, count: int) -> None:
    """Count what a measure left out or assumed, for the diagnostics (``result.inputs``): the
    most of any measure asked (they cut the lists at different depths)."""
    ctx.notes[name] = max(count, ctx.notes.get(name, 0))


def _need_train(ctx: Context, name: str) -> np.ndarray:
    if ctx.popularity is None:
        raise MeasureError(f"{name} needs the training interactions (train=...)",
                           source="measure", value=name)
    return ctx.popularity


# ---------------------------------------------------------------------------- global measures


@beyond("Coverage", "Catalogue coverage: distinct recommended items / catalogue size.",
        per_user=False, reference="Shani & Gunawardana 2011, Recommender Systems Handbook "
        "(catalog coverage); Ge et al. 2010")
def coverage(ctx: Context, lists: TopLists, cutoff: int | None) -> float:
    """Coverage@K = |∪_u L_u@K| / |I| with I the catalogue (default: the items of the
    training data when given, else every item seen in any input).

    >>> ctx = _toy()
    >>> coverage(ctx, ctx.lists.truncate(2), 2)   # items 0, 1, 2 of 5
    0.6
    """
    recommended = _counts(ctx, lists) > 0
    outside = int(np.count_nonzero(recommended & ~ctx.catalogue))
    _note(ctx, "recommended_items_outside_catalogue", outside)
    return float(np.count_nonzero(recommended) / max(int(ctx.catalogue.sum()), 1))


@beyond("Entropy", "Distributional coverage: Shannon entropy (bits) of the recommendation "
        "counts.", per_user=False, reference="Shani & Gunawardana 2011, eq. 21 (Microsoft "
        "recommenders' distributional_coverage)")
def entropy(ctx: Context, lists: TopLists, cutoff: int | None) -> float:
    """Entropy@K = −Σ_i p_i log2 p_i, p_i = c_i / Σ_j c_j, c_i = lists recommending i in the
    top K. 0 when one item is everything; log2 |I| when all catalogue items are equally shown.

    >>> ctx = _toy()
    >>> round(entropy(ctx, ctx.lists.truncate(2), 2), 6)   # items 0, 1, 2 twice each: log2 3
    1.584963
    """
    c = _counts(ctx, lists)
    c = c[c > 0].astype(np.float64)
    if len(c) == 0:
        return float("nan")
    p = c / c.sum()
    return float(-(p * np.log2(p)).sum())


@beyond("Gini", "Gini index of exposure: inequality of recommendation counts over the "
        "catalogue (0 equal, → 1 concentrated).", per_user=False, higher_is_better=False,
        reference="Fleder & Hosanagar 2009; RecBole GiniIndex, LensKit ListGini")
def gini(ctx: Context, lists: TopLists, cutoff: int | None) -> float:
    """Gini@K = Σ_{j=1}^{n} (2j − n − 1) c_(j) / (n Σ_j c_(j)) over the n catalogue items
    (items never recommended count 0; recommended items outside the catalogue are added),
    c_(j) in non-decreasing order.

    >>> ctx = _toy()
    >>> gini(ctx, ctx.lists.truncate(2), 2)   # counts 0, 0, 2, 2, 2: (0·2 + 2·2 + 4·2) / (5·6)
    0.4
    """
    c = _counts(ctx, lists)
    c = np.sort(c[ctx.catalogue | (c > 0)]).astype(np.float64)
    n = len(c)
    if n == 0 or c.sum() == 0:
        return float("nan")
    j = np.arange(1, n + 1, dtype=np.float64)
    return float(((2 * j - n - 1) * c).sum() / (n * c.sum()))


# ---------------------------------------------------------------------------- popularity


@beyond("ARP", "Average recommendation popularity: mean training interactions of the list's "
        "items.", per_user=True, needs=("train",), higher_is_better=False,
        reference="Abdollahpouri et al. 2019, 'Managing popularity bias in recommender "
        "systems with personalized re-ranking' (FLAIRS); RecBole AveragePopularity")
def average_popularity(ctx: Context, lists: TopLists, cutoff: int | None) -> np.ndarray:
    """ARP@K(u) = (1/|L_u@K|) Σ_{i ∈ L_u@K} φ(i), φ(i) = training interactions with i (0 for
    items not in the training data).

    >>> ctx = _toy()
    >>> average_popularity(ctx, ctx.lists.truncate(2), 2)   # popularity 5, 3, 1, 1, 0
    array([4., 3., 2.])
    """
    popularity = _need_train(ctx, "ARP")
    return _per_list_mean(lists, popularity[lists.items].astype(np.float64))


def head_items(popularity: np.ndarray, head: float, id_rank: np.ndarray | None = None
               ) -> np.ndarray:
    """The short head: the most popular items that together hold ``head`` of all training
    interactions (the prefix of items by popularity, ties by item id, up to and including
    the item where the cumulative share first reaches ``head``).

    >>> head_items(np.array([5, 3, 1, 1, 0]), 0.5)   # 5 / 10 reaches half
    array([ True, False, False, False, False])
    """
    tiebreak = np.arange(len(popularity)) if id_rank is None else id_rank
    order = np.lexsort((tiebreak, -popularity))
    share = np.cumsum(popularity[order]) / max(popularity.sum(), 1)
    inside = np.zeros(len(popularity), dtype=bool)
    stop = int(np.searchsorted(share, head - 1e-12)) + 1
    inside[order[:stop]] = popularity[order[:stop]] > 0
    return inside


@beyond("APLT", "Average percentage of long tail: share of the list's items outside the "
        "short head (the most popular items holding `head` of the training interactions).",
        per_user=True, needs=("train",), params={"head": 0.2},
        reference="Abdollahpouri et al. 2017 (RecSys), 2019 (FLAIRS)")
def long_tail_share(ctx: Context, lists: TopLists, cutoff: int | None,
                    head: float) -> np.ndarray:
    """APLT@K(u) = |{i ∈ L_u@K : i ∉ Head}| / |L_u@K|; items without training
    interactions are in the tail.

    >>> ctx = _toy()
    >>> long_tail_share(ctx, ctx.lists.truncate(2), 2, head=0.5)   # head = {item 0}
    array([0.5, 0.5, 1. ])
    """
    if not 0 < head < 1:
        raise MeasureError("APLT head must be a share between 0 and 1", source="measure",
                           value=str(head))
    tail = ~head_items(_need_train(ctx, "APLT"), head, _id_rank(ctx))
    return _per_list_mean(lists, tail[lists.items].astype(np.float64))


@beyond("TailShare", "RecBole's TailPercentage: share of the list's items among the rarest "
        "training items (the bottom `ratio` of them, or count <= ratio when ratio > 1).",
        per_user=True, needs=("train",), params={"ratio": 0.1},
        reference="RecBole 1.2 TailPercentage (recbole/evaluator/metrics.py)")
def tail_share(ctx: Context, lists: TopLists, cutoff: int | None, ratio: float) -> np.ndarray:
    """TailShare@K(u) = |L_u@K ∩ T| / |L_u@K|, T = the max(⌊ratio·n⌋, 1) training items with
    the fewest interactions (ties by item id as a string; RecBole sorts (count, internal id),
    its ids numbering the items in the order its dataset lists them) among the n items
    with any, or the items with at most ``ratio`` interactions when ``ratio > 1``. Items
    absent from the training data are not in T (as in RecBole).
    """
    if not ratio > 0:
        raise MeasureError("TailShare ratio must be more than 0", source="measure",
                           value=str(ratio))
    popularity = _need_train(ctx, "TailShare")
    seen = np.flatnonzero(popularity > 0)
    tail = np.zeros(len(popularity), dtype=bool)
    if ratio > 1:
        tail[seen[popularity[seen] <= ratio]] = True
    else:
        ids = _id_rank(ctx)[seen]
        order = np.lexsort((ids, popularity[seen]))
        tail[seen[order[:max(int(len(seen) * ratio), 1)]]] = True
    return _per_list_mean(lists, tail[lists.items].astype(np.float64))


@beyond("Novelty", "Mean self-information −log2 p(i) of the list's items: p(i) = share of the "
        "training interactions (model=choice) or of the training users (model=discovery) on "
        "item i; items never seen in training are left out and counted.",
        per_user=True, needs=("train",), params={"model": "choice"},
        reference="Castells, Vargas & Wang 2011 (ECIR; item choice and discovery models); "
        "Zhou et al. 2010 (PNAS)")
def novelty(ctx: Context, lists: TopLists, cutoff: int | None, model: str = "choice"
            ) -> np.ndarray:
    """Novelty@K(u) = (1/|L'|) Σ_{i ∈ L'} −log2 p(i) over L' = the items of L_u@K seen in
    training (an unseen item has no defined self-information; NaN when none is seen).

    ``choice`` (Microsoft recommenders): p(i) = φ(i) / N, φ(i) the training interactions with
    i, N all of them. ``discovery`` (Evidently's mean inverse user frequency): p(i) = users
    who interacted with i / users in the training data.

    >>> ctx = _toy()
    >>> np.round(novelty(ctx, ctx.lists.truncate(2), 2), 4)   # (1 + 1.737) / 2, ...
    array([1.3685, 2.161 , 2.5294])
    """
    popularity = _need_train(ctx, "Novelty").astype(np.float64)
    if model == "choice":
        share = popularity / popularity.sum()
    elif model == "discovery":
        if ctx.train_user is None:
            raise MeasureError("Novelty(model=discovery) needs the training users",
                               source="measure", value=model)
        n = len(ctx.catalogue)
        pairs = np.unique(ctx.train_user * n + ctx.train_item)
        users = np.bincount(pairs % n, minlength=n).astype(np.float64)
        share = users / max(len(np.unique(ctx.train_user)), 1)
    else:
        raise MeasureError("Novelty model must be choice or discovery", source="measure",
                           value=model)
    seen = share[lists.items] > 0
    _note(ctx, "recommended_unseen_in_training", int(np.count_nonzero(~seen)))
    info = np.zeros(lists.num_rows)
    info[seen] = -np.log2(share[lists.items[seen]])
    return _per_list_mean(lists, info, seen)


# ---------------------------------------------------------------------------- similarity


def _unit_rows(matrix):
    """Rows scaled to unit L2 norm (zero rows stay zero): dense or scipy sparse."""
    if hasattr(matrix, "tocsr"):
        import scipy.sparse as sp

        matrix = sp.csr_matrix(matrix, dtype=np.float64)
        norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
        scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        return sp.diags(scale) @ matrix
    matrix = np.asarray(matrix, dtype=np.float64)
    norms = np.sqrt((matrix * matrix).sum(axis=1))
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    return matrix * scale[:, None]


def item_vectors(ctx: Context, similarity: str, lists: TopLists):
    """Item vectors whose cosine is the item similarity: the item features, or
    (``cooccurrence``) each item's column of the binary training user-item matrix, whose
    cosine is co-occurrence / sqrt(count_i · count_j) (Zhang et al. 2012, Auralist). The
    rows of ``lists`` whose item has no feature vector (similarity 0 to everything) are
    counted as ``recommended_without_features``."""
    if similarity == "features":
        if ctx.features is None:
            raise MeasureError("this measure needs item features (item_features=...) or "
                               "similarity=cooccurrence", source="measure", value=similarity)
        if ctx.with_features is not None:
            _note(ctx, "recommended_without_features",
                  int(np.count_nonzero(~ctx.with_features[lists.items])))
        return ctx.features
    if similarity == "cooccurrence":
        import scipy.sparse as sp

        if ctx.train_user is None:
            raise MeasureError("similarity=cooccurrence needs the training interactions",
                               source="measure", value=similarity)
        n_users = int(ctx.train_user.max()) + 1 if len(ctx.train_user) else 0
        matrix = sp.csr_matrix((np.ones(len(ctx.train_item)), (ctx.train_item, ctx.train_user)),
                               shape=(len(ctx.catalogue), n_users))
        matrix.data[:] = 1.0  # duplicate interactions count once
        return matrix
    raise MeasureError("similarity must be features or cooccurrence", source="measure",
                       value=similarity)


def _list_sums(vectors, lists: TopLists, rows: np.ndarray | None = None):
    """Σ of the vectors of each list's items (lists x d), dense or sparse."""
    import scipy.sparse as sp

    segment = lists.segment()
    items = lists.items
    if rows is not None:
        segment, items = segment[rows], items[rows]
    incidence = sp.csr_matrix((np.ones(len(items)), (segment, items)),
                              shape=(lists.num_lists, vectors.shape[0]))
    return incidence @ vectors


def _row_dots(a, b) -> np.ndarray:
    if hasattr(a, "multiply"):
        return np.asarray(a.multiply(b).sum(axis=1)).ravel()
    if hasattr(b, "multiply"):
        return np.asarray(b.multiply(a).sum(axis=1)).ravel()
    return (a * b).sum(axis=1)


def _squared_norms(matrix) -> np.ndarray:
    return _row_dots(matrix, matrix)


@beyond("ILD", "Intra-list diversity: mean pairwise distance 1 − similarity between the list's "
        "items (cosine of features or of training co-occurrence, or Jaccard of binary "
        "features).", per_user=True, needs=("features",),
        params={"similarity": "features", "metric": "cosine"},
        reference="Ziegler et al. 2005 (WWW), Smyth & McClave 2001; Microsoft recommenders "
        "user_diversity")
def intra_list_diversity(ctx: Context, lists: TopLists, cutoff: int | None, similarity: str,
                         metric: str) -> np.ndarray:
    """ILD@K(u) = (2 / (k(k−1))) Σ_{i<j ∈ L_u@K} (1 − sim(i, j)), k = |L_u@K| (NaN if k < 2).

    Cosine: with unit vectors v_i, Σ_{i<j} v_i·v_j = (‖Σ_i v_i‖² − Σ_i ‖v_i‖²) / 2, so the
    pairs are never formed. An item without features has similarity 0 to everything (as in
    Microsoft recommenders). Jaccard (binary features): |F_i ∩ F_j| / |F_i ∪ F_j| over the
    pairs, 0 for two empty sets.

    >>> ctx = _toy()
    >>> intra_list_diversity(ctx, ctx.lists.truncate(2), 2, "features", "cosine")
    array([1., 1., 0.])
    """
    vectors = item_vectors(ctx, similarity, lists)
    k = lists.lengths.astype(np.float64)
    pairs = k * (k - 1) / 2
    if metric == "cosine":
        unit = _unit_rows(vectors)
        sums = _list_sums(unit, lists)
        self_sim = np.bincount(lists.segment(), weights=_squared_norms(unit)[lists.items],
                               minlength=lists.num_lists)
        similar = (_squared_norms(sums) - self_sim) / 2
    elif metric == "jaccard":
        similar = _pairwise_jaccard(vectors, lists)
    else:
        raise MeasureError("ILD metric must be cosine or jaccard", source="measure", value=metric)
    out = np.full(lists.num_lists, np.nan)
    np.divide(pairs - similar, pairs, out=out, where=pairs > 0)
    return out


def _pairwise_jaccard(vectors, lists: TopLists, chunk: int = 1 << 20) -> np.ndarray:
    """Σ over each list's item pairs of the Jaccard similarity of their binary features."""
    binary = (vectors != 0)
    if hasattr(binary, "tocsr"):
        binary = binary.tocsr().astype(np.float64)
    else:
        binary = binary.astype(np.float64)
    size = np.asarray(binary.sum(axis=1)).ravel()
    out = np.zeros(lists.num_lists)
    lengths = lists.lengths
    for k in np.unique(lengths[lengths >= 2]):  # a few distinct lengths, vectorised within
        owners = np.flatnonzero(lengths == k)
        a, b = np.triu_indices(int(k), 1)
        starts = lists.offsets[owners]
        first = (starts[:, None] + a).ravel()
        second = (starts[:, None] + b).ravel()
        owner = np.repeat(owners, len(a))
        for lo in range(0, len(first), chunk):
            i = lists.items[first[lo:lo + chunk]]
            j = lists.items[second[lo:lo + chunk]]
            inter = _row_dots(binary[i], binary[j])
            union = size[i] + size[j] - inter
            sim = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
            out += np.bincount(owner[lo:lo + chunk], weights=sim, minlength=lists.num_lists)
    return out


@beyond("Serendipity", "Share of the list that is relevant and unexpected, i.e. not among "
        "the `n` most popular training items (the primitive recommender; default n = K).",
        per_user=True, needs=("train", "test"), params={"n": 0},
        reference="Ge, Delgado-Battenfeld & Jannach 2010 (RecSys), Murakami et al. 2008")
def serendipity(ctx: Context, lists: TopLists, cutoff: int | None, n: int) -> np.ndarray:
    """Serendipity@K(u) = |{i ∈ L_u@K : i ∉ PM, i relevant}| / |L_u@K|, PM = the ``n`` (K
    when 0) most popular training items (ties by item code), relevant = judged grade at or
    above the relevance threshold; NaN for a user without test data (but under
    ``run_only_queries="zero"``, as the accuracy measures).

    >>> ctx = _toy()
    >>> serendipity(ctx, ctx.lists.truncate(2), 2, n=1)   # PM = {0}; relevant: item 1 for u0
    array([0.5, 0. , 0. ])
    """
    popularity = _need_train(ctx, "Serendipity")
    size = n or cutoff or int(lists.lengths.max(initial=0))
    order = np.lexsort((_id_rank(ctx), -popularity))
    expected = np.zeros(len(popularity), dtype=bool)
    expected[order[:size]] = popularity[order[:size]] > 0  # never-seen items are not popular
    relevant = ctx.relevant if ctx.relevant is not None else np.zeros(lists.num_rows, bool)
    hit = relevant[_rows_in(ctx.lists, lists)] & ~expected[lists.items]
    return _judged_only(ctx, _per_list_mean(lists, hit.astype(np.float64)))


@beyond("UnexpRel", "Microsoft recommenders' serendipity: mean over the list of (1 − mean "
        "similarity of the item to the user's training items) × relevance.", per_user=True,
        needs=("train", "test"), params={"similarity": "cooccurrence"},
        reference="Zhang et al. 2012 (Auralist, WSDM); Microsoft recommenders user_serendipity")
def unexpected_relevance(ctx: Context, lists: TopLists, cutoff: int | None,
                         similarity: str) -> np.ndarray:
    """UnexpRel@K(u) = (1/|L_u@K|) Σ_{i ∈ L_u@K} (1 − (1/|H_u|) Σ_{j ∈ H_u} sim(i, j)) · rel(u, i),
    H_u = the user's training items; NaN for users without training items, and for users
    without test data (but under ``run_only_queries="zero"``, as the accuracy measures).

    With unit item vectors v, Σ_{j ∈ H_u} sim(i, j) = v_i · Σ_{j ∈ H_u} v_j: one sparse
    product, no pairs.
    """
    if ctx.train_user is None:
        raise MeasureError("UnexpRel needs the training interactions", source="measure",
                           value="UnexpRel")
    import scipy.sparse as sp

    unit = _unit_rows(item_vectors(ctx, similarity, lists))
    users = lists.num_lists
    inside = ctx.train_user < users
    pairs = np.unique(ctx.train_user[inside] * len(ctx.catalogue) + ctx.train_item[inside])
    h_user, h_item = pairs // len(ctx.catalogue), pairs % len(ctx.catalogue)
    history = sp.csr_matrix((np.ones(len(pairs)), (h_user, h_item)),
                            shape=(users, len(ctx.catalogue)))
    history_sum = history @ unit
    history_size = np.bincount(h_user, minlength=users).astype(np.float64)
    segment = lists.segment()
    dots = _row_dots(unit[lists.items], history_sum[segment])
    mean_sim = np.divide(dots, history_size[segment], out=np.zeros(lists.num_rows),
                         where=history_size[segment] > 0)
    relevant = ctx.relevant if ctx.relevant is not None else np.zeros(lists.num_rows, bool)
    value = (1.0 - mean_sim) * relevant[_rows_in(ctx.lists, lists)]
    out = _per_list_mean(lists, value)
    out[history_size == 0] = np.nan
    return _judged_only(ctx, out)


def _judged_only(ctx: Context, values: np.ndarray) -> np.ndarray:
    """``values`` of a measure that reads relevance, NaN for the users whose relevance is not
    known (a list without test data, not evaluated under ``run_only_queries="ignore"``, as
    the accuracy measures leave them out)."""
    if ctx.judged is not None:
        values[~ctx.judged] = np.nan
    return values


@beyond("Personalization", "1 − mean cosine similarity between the user's list and every "
        "other user's list (as sets of items).", per_user=True,
        reference="Zhou et al. 2010 (PNAS, 'personalization' as inter-list distance); "
        "recmetrics personalization")
def personalization(ctx: Context, lists: TopLists, cutoff: int | None) -> np.ndarray:
    """Personalization@K(u) = 1 − (1/(U−1)) Σ_{v≠u} |L_u ∩ L_v| / sqrt(|L_u| |L_v|), over
    the U non-empty lists (distinct items). Its mean over users is the mean over all pairs.

    With w_i = Σ_{v ∋ i} |L_v|^{-1/2}: Σ_{v≠u} |L_u∩L_v| / sqrt(|L_u||L_v|) =
    |L_u|^{-1/2} Σ_{i ∈ L_u} (w_i − |L_u|^{-1/2}), one pass over the rows.

    >>> ctx = _toy()
    >>> personalization(ctx, ctx.lists.truncate(2), 2)   # lists {0,1}, {0,2}, {1,2}
    array([0.5, 0.5, 0.5])
    """
    segment = lists.segment()
    keys = np.unique(segment * len(ctx.catalogue) + lists.items)  # distinct items per list
    seg, item = keys // len(ctx.catalogue), keys % len(ctx.catalogue)
    size = np.bincount(seg, minlength=lists.num_lists).astype(np.float64)
    nonempty = size > 0
    users = int(nonempty.sum())
    inv = np.divide(1.0, np.sqrt(size), out=np.zeros_like(size), where=nonempty)
    w = np.bincount(item, weights=inv[seg], minlength=len(ctx.catalogue))
    total = np.bincount(seg, weights=w[item] - inv[seg], minlength=lists.num_lists) * inv
    out = np.full(lists.num_lists, np.nan)
    if users > 1:
        out[nonempty] = 1.0 - total[nonempty] / (users - 1)
    return out


def _id_rank(ctx: Context) -> np.ndarray:
    """Rank of every item code by its id (as strings; codes when the ids are not known)."""
    n = len(ctx.catalogue)
    if ctx.item_ids is None:
        return np.arange(n)
    ids = np.asarray(ctx.item_ids.to_pylist(), dtype=object)
    rank = np.empty(len(ids), dtype=np.int64)
    rank[np.argsort(ids.astype(str), kind="stable")] = np.arange(len(ids))
    return np.concatenate([rank, np.arange(len(ids), n)]) if n > len(ids) else rank


def _errors(ctx: Context, lists: TopLists, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(score − rating, valid) for every row of ``lists`` (valid: the user rated the item)."""
    if ctx.rating is None:
        raise MeasureError(f"{name} needs ratings in the test data (rating=...)",
                           source="measure", value=name)
    if not ctx.predicted:  # the scores would be made up from the list order
        raise MeasureError(f"{name} needs predicted ratings: recommendations with a score "
                           "column (score=...), {user: {item: predicted rating}} or a Run; "
                           f"{ctx.lists.source} gives only an order (top-K lists, a rank "
                           "column or a 2-D array of item ids)", source="measure", value=name)
    rows = _rows_in(ctx.lists, lists)
    rating = ctx.rating[rows]
    valid = ~np.isnan(rating)
    rated = int(np.count_nonzero(valid))  # the seed article's missing ratings: counted
    _note(ctx, "predictions_without_rating", len(rows) - rated)
    _note(ctx, "ratings_without_prediction", ctx.test_ratings - rated)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(valid, lists.scores - np.where(valid, rating, 0.0), 0.0), valid


def _rescued(ctx: Context, lists: TopLists, values: np.ndarray, valid: np.ndarray,
             squared: bool, name: str, pooled: bool = False) -> np.ndarray:
    """``values`` (per user, or the pooled value as one) with the ones that overflowed (or
    an RMSE that may have underflowed) computed again from scaled errors
    (:func:`rankwise.measures.rating.rescued_error_means`)."""
    from ..measures.rating import rescued_error_means

    rated = np.flatnonzero(valid)
    if pooled:
        counts = np.array([float(len(rated))])
        segment = lambda: np.zeros(len(rated), dtype=np.int64)  # noqa: E731
    else:
        counts = np.bincount(lists.segment()[rated], minlength=lists.num_lists)
        segment = lambda: lists.segment()[rated]  # noqa: E731
    return rescued_error_means(
        values, counts, segment,
        lambda: (lists.scores[rated], ctx.rating[_rows_in(ctx.lists, lists)][rated]), squared,
        name, (lambda q: "the pooled ratings") if pooled else
        (lambda q: f"user {lists.users[q].as_py()!r}"), "recommendations", "ratings")


@beyond("MAE", "Mean absolute error of the scores as predicted ratings, per user (rated "
        "items only).", per_user=True, needs=("test",), higher_is_better=False,
        reference="Herlocker et al. 2004 (TOIS); the first seed article")
def mean_absolute_error(ctx: Context, lists: TopLists, cutoff: int | None) -> np.ndarray:
    """MAE(u) = (1/|S_u|) Σ_{i ∈ S_u} |r̂_ui − r_ui|, S_u = the user's listed items that have a
    test rating (NaN when none). Compares with the ratings themselves, whatever the relevance
    policy. Its mean is over users; ``GMAE`` pools every rating.
    """
    error, valid = _errors(ctx, lists, "MAE")
    with np.errstate(over="ignore", invalid="ignore"):
        values = _per_list_mean(lists, np.abs(error), valid)
    return _rescued(ctx, lists, values, valid, False, "MAE")


@beyond("RMSE", "Root mean squared error of the scores as predicted ratings, per user.",
        per_user=True, needs=("test",), higher_is_better=False,
        reference="Herlocker et al. 2004 (TOIS); the first seed article")
def root_mean_squared_error(ctx: Context, lists: TopLists, cutoff: int | None) -> np.ndarray:
    """RMSE(u) = sqrt((1/|S_u|) Σ_{i ∈ S_u} (r̂_ui − r_ui)²) over the user's rated items."""
    error, valid = _errors(ctx, lists, "RMSE")
    with np.errstate(over="ignore", invalid="ignore"):
        values = np.sqrt(_per_list_mean(lists, error * error, valid))
    return _rescued(ctx, lists, values, valid, True, "RMSE")


@beyond("GMAE", "Global mean absolute error: |predicted − actual| pooled over every rating.",
        per_user=False, needs=("test",), higher_is_better=False,
        reference="Herlocker et al. 2004 (TOIS); RecBole MAE, Microsoft recommenders mae")
def global_mae(ctx: Context, lists: TopLists, cutoff: int | None) -> float:
    """GMAE = (1/|S|) Σ_{(u,i) ∈ S} |r̂_ui − r_ui| over every rated (user, item) of the lists."""
    error, valid = _errors(ctx, lists, "GMAE")
    if not valid.any():
        return math.nan
    with np.errstate(over="ignore", invalid="ignore"):
        value = np.abs(error[valid]).mean()
    return float(_rescued(ctx, lists, np.array([value]), valid, False, "GMAE", pooled=True)[0])


@beyond("GRMSE", "Global root mean squared error, pooled over every rating.", per_user=False,
        needs=("test",), higher_is_better=False,
        reference="Herlocker et al. 2004 (TOIS); RecBole RMSE, Microsoft recommenders rmse")
def global_rmse(ctx: Context, lists: TopLists, cutoff: int | None) -> float:
    """GRMSE = sqrt((1/|S|) Σ_{(u,i) ∈ S} (r̂_ui − r_ui)²)."""
    error, valid = _errors(ctx, lists, "GRMSE")
    if not valid.any():
        return math.nan
    with np.errstate(over="ignore", invalid="ignore"):
        value = np.sqrt((error[valid] ** 2).mean())
    return float(_rescued(ctx, lists, np.array([value]), valid, True, "GRMSE", pooled=True)[0])


def _rows_in(full: TopLists, cut: TopLists) -> np.ndarray:
    """Rows of ``full`` that ``cut`` (its prefix per list) keeps."""
    if cut is full:
        return np.arange(full.num_rows)
    return np.flatnonzero(full.position() < np.repeat(cut.lengths, full.lengths))


def mean_of(values) -> float:
    """The aggregate of a per-user measure: the mean over the users with a value (as
    :func:`rankwise.results.aggregate` takes it: errors near 1e308 average to their mean,
    not to an overflowed infinity)."""
    from ..results import aggregate

    if not isinstance(values, np.ndarray):
        return float(values)
    return aggregate(values, "mean")


def _toy() -> Context:
    """Three users' lists for the doctests: u0 [0, 1, 3], u1 [0, 2, 4], u2 [1, 2]; training
    popularity 5, 3, 1, 1, 0 (10 interactions); one-hot features of items 0-3 (item 4 has
    none; items 1 and 2 share one feature); u0 finds item 1 relevant."""
    import pyarrow as pa

    lists = TopLists(pa.array(["u0", "u1", "u2"]), np.array([0, 3, 6, 8]),
                     np.array([0, 1, 3, 0, 2, 4, 1, 2]), np.array([3., 2, 1, 3, 2, 1, 2, 1]), 0,
                     "toy")
    features = np.array([[1., 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]])
    relevant = np.array([False, True, False, False, False, False, False, False])
    return Context(lists, np.ones(5, dtype=bool), np.array([5, 3, 1, 1, 0]),
                   relevant=relevant, features=features)
