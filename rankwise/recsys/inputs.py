"""Recommender inputs as recommender people hold them, turned into integer-coded lists.

Recommendations come as a DataFrame (pandas, polars) or Arrow table of ``user, item,
score`` (or ``rank``, or neither: each user's rows in list order), as top-K lists
``{user: [item, ...]}``, as ``{user: {item: score}}``, as a 2-D array of item ids (one row
per user, best first, short rows padded with ``pad``) or as a rankwise ``Run``. Test and
training interactions come as frames (``user, item`` and optionally ``rating``), as
``{user: [item, ...]}`` (implicit feedback) or as ``{user: {item: rating}}``.

Everything is coded once against one item catalogue and one user index
(:class:`Prepared`): every recommendation list (:class:`TopLists`), the held-out
judgments with their relevance grades, the training interactions, and the join of the
lists with the judgments. The accuracy measures (through rankwise's engine) and the
beyond-accuracy measures (:mod:`rankwise.recsys.beyond`) all read this one structure.

Explicit ratings become relevance grades through a named policy (:data:`RELEVANCE_POLICIES`):

* ``"threshold"``: grade 1 if ``rating >= threshold`` else 0 (the first seed article's
  "ratings ≥ 4 are relevant");
* ``"graded"``: the rating itself is the grade (linear gain in nDCG); binary measures count
  ``rating >= threshold`` as relevant;
* ``"centered"``: grade ``max(rating − mean_u, 0)`` with ``mean_u`` the user's mean test
  rating; an item is relevant when rated above the user's mean.

Recommended items the user has no test rating for follow an imputation policy
(:data:`IMPUTATION_POLICIES`): ``"nonrelevant"`` (left unjudged, as trec_eval treats them),
``"user_mean"`` or ``"user_median"`` (the user's mean / median test rating is imputed and
then goes through the relevance policy; counted in the diagnostics).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise
from typing import Any

import numpy as np

from ..core.arrow import (cast, compute, index_in, starts_of_equal_runs, string_array, take,
                          to_arrow, to_numpy)
from ..core.segments import starts_of_runs
from ..errors import InputError

#: How explicit ratings become relevance grades.
RELEVANCE_POLICIES = ("threshold", "graded", "centered")
#: What a recommended item without a test rating becomes.
IMPUTATION_POLICIES = ("nonrelevant", "user_mean", "user_median")
#: Smallest positive float: under the "centered" policy any rating above the user's mean is relevant.
ABOVE_ZERO = float(np.nextafter(0.0, 1.0))


@dataclass(frozen=True, eq=False)
class TopLists:
    """Every user's recommendation list, best first: flat arrays with offsets.

    List ``u`` is ``items[offsets[u]:offsets[u+1]]``; ``users[u]`` is its user id.
    ``scores`` are the input's scores in list order (for lists given without scores:
    ``length − position``, so every score is positive and the order is the given one).
    """

    users: Any  # Arrow string array, one distinct id per list
    offsets: np.ndarray  # int64, U + 1
    items: np.ndarray  # int64 item codes, in ranked order
    scores: np.ndarray  # float64, in ranked order
    ties: int  # rows whose score equals the previous row's in the same list
    source: str

    @property
    def num_lists(self) -> int:
        return len(self.offsets) - 1

    @property
    def num_rows(self) -> int:
        return int(self.offsets[-1])

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def segment(self) -> np.ndarray:
        """List index of every row (computed once)."""
        return self._segment

    def position(self) -> np.ndarray:
        """0-based rank of every row in its list (computed once)."""
        return self._position

    @cached_property
    def _segment(self) -> np.ndarray:
        k = self.fixed_length
        if k:
            return np.repeat(np.arange(self.num_lists, dtype=np.int64), k)
        return np.repeat(np.arange(self.num_lists, dtype=np.int64), self.lengths)

    @cached_property
    def _position(self) -> np.ndarray:
        k = self.fixed_length
        if k:
            return np.tile(np.arange(k, dtype=np.int64), self.num_lists)
        return np.arange(self.num_rows, dtype=np.int64) - np.repeat(self.offsets[:-1], self.lengths)

    @cached_property
    def fixed_length(self) -> int:
        """The length every list has, or 0 when they differ (or there is none)."""
        lengths = self.lengths
        if len(lengths) == 0 or lengths[0] == 0 or not (lengths == lengths[0]).all():
            return 0
        return int(lengths[0])

    def keep(self, mask: np.ndarray) -> TopLists:
        """The rows where ``mask`` is true, each list condensed (the rest move up)."""
        counts = np.bincount(self.segment()[mask], minlength=self.num_lists)
        offsets = np.zeros(self.num_lists + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return TopLists(self.users, offsets, self.items[mask], self.scores[mask],
                        _count_ties(self.scores[mask], offsets), self.source)

    def truncate(self, depth: int) -> TopLists:
        """Only the first ``depth`` items of each list."""
        if int(self.lengths.max(initial=0)) <= depth:
            return self
        return self.keep(self.position() < depth)


@dataclass(frozen=True, eq=False)
class Interactions:
    """(user, item[, rating]) rows coded against the shared user index and item catalogue.

    ``user`` indexes :attr:`Prepared.user_ids` (list users first, then users without a
    list); ``item`` indexes the catalogue.
    """

    user: np.ndarray  # int64
    item: np.ndarray  # int64
    rating: np.ndarray | None  # float64 or None (implicit feedback)
    source: str

    def __len__(self) -> int:
        return len(self.user)


@dataclass(eq=False)
class Prepared:
    """Recommendations, judgments and training data coded together, and their join.

    Attributes
    ----------
    lists : TopLists
        The recommendations as evaluated (after training-item exclusion and ``max_depth``).
    user_ids : Arrow string array
        Every user: first the ``lists.num_lists`` users with a list (same order), then users
        only in the test or training data.
    item_ids : Arrow string array
        The item catalogue, indexed by item code.
    test : Interactions
        The held-out interactions, duplicates removed, with ``grade`` their relevance.
    grade : ndarray
        Relevance grade of every test row (after the relevance policy).
    row_grade : ndarray
        Grade of every recommended row (NaN when not judged, after imputation).
    train : Interactions or None
    counts : dict
        What was done to the input, for the diagnostics.
    """

    lists: TopLists
    user_ids: Any
    item_ids: Any
    test: Interactions
    grade: np.ndarray
    row_grade: np.ndarray
    imputed: Interactions | None
    imputed_grade: np.ndarray | None
    train: Interactions | None
    relevance_threshold: float
    duplicates_in_lists: int
    counts: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def num_items(self) -> int:
        return len(self.item_ids)


# ---------------------------------------------------------------------------- raw readers


@dataclass
class _RawLists:
    users: Any  # Arrow string array, distinct, one per list
    lengths: np.ndarray
    items: Any  # numpy int array or Arrow string array, in ranked order
    scores: np.ndarray
    ties: int
    source: str
    padding: int = 0
    numbers: np.ndarray | None = None  # the user ids as int64, when the input's are integers


@dataclass
class _RawPairs:
    users: Any  # Arrow string array per row
    items: Any  # numpy int array or Arrow string array per row
    rating: np.ndarray | None
    source: str


def read_recommendations(recs: Any, user: str = "user", item: str = "item",
                         score: str | None = "score", rank: str | None = None,
                         users: Any = None, pad: Any = None) -> _RawLists:
    """Read recommendations in any accepted form (see the module docstring)."""
    from ..io.tables import Run

    if isinstance(recs, Run):
        return _lists_from_scored(_user_strings(take(recs.query_dict, recs.query_code),
                                                recs.source),
                                  _item_values(recs.docs, recs.source), recs.score, recs.source)
    if isinstance(recs, np.ndarray):
        return _lists_from_array(recs, users, pad)
    if isinstance(recs, Mapping):
        return _lists_from_mapping(recs)
    if isinstance(recs, (str, os.PathLike)):
        from ..io.trec import read_run

        return read_recommendations(read_run(recs))
    columns, names = _frame_columns(recs, "recommendations", user, item, score, rank)
    source = f"recommendations {type(recs).__name__}"
    if columns is None:
        raise InputError("expected a DataFrame or Arrow table, {user: [items]}, {user: {item: "
                         "score}}, a 2-D array of item ids or a rankwise Run",
                         source="recommendations", value=type(recs).__name__)
    user_col = _user_values(columns[user], source)
    item_col = _item_values(columns[item], source)
    if names.get("score"):
        values = _numbers(columns[names["score"]], source, "score")
        return _lists_from_scored(user_col, item_col, values, source)
    if names.get("rank"):
        values = _numbers(columns[names["rank"]], source, "rank")
        return _lists_from_scored(user_col, item_col, -values, source)
    return _lists_in_input_order(user_col, item_col, source)


def read_interactions(data: Any, what: str, user: str = "user", item: str = "item",
                      rating: str | None = "rating") -> _RawPairs:
    """Read test or training interactions: a frame, ``{user: [items]}`` or ``{user: {item:
    rating}}``. ``rating=None`` (or a frame without that column) means implicit feedback."""
    if isinstance(data, Mapping):
        users, items, ratings = [], [], []
        explicit = None
        for u, inner in data.items():
            if isinstance(inner, Mapping):
                explicit = True if explicit is None else explicit
                if not explicit:
                    raise InputError("mixes {item: rating} and [items] values", source=what,
                                     line=repr(u), unit="key")
                items.extend(inner.keys())
                ratings.extend(_check_number(v, what, u, i) for i, v in inner.items())
                users.extend([u] * len(inner))
            elif isinstance(inner, (list, tuple, np.ndarray, set, frozenset)):
                explicit = False if explicit is None else explicit
                if explicit:
                    raise InputError("mixes {item: rating} and [items] values", source=what,
                                     line=repr(u), unit="key")
                items.extend(inner)
                users.extend([u] * len(inner))
            else:
                raise InputError("expected {user: [items]} or {user: {item: rating}}; this user "
                                 f"maps to a {type(inner).__name__}", source=what, line=repr(u),
                                 unit="key")
        source = f"{what} dict"
        return _RawPairs(_user_strings(users, source), _item_values(items, source),
                         np.asarray(ratings, dtype=np.float64) if explicit else None, source)
    columns, names = _frame_columns(data, what, user, item, rating, None, need_value=False)
    if columns is None:
        raise InputError("expected a DataFrame or Arrow table with user and item columns, "
                         "{user: [items]} or {user: {item: rating}}", source=what,
                         value=type(data).__name__)
    source = f"{what} {type(data).__name__}"
    ratings = _numbers(columns[names["score"]], source, "rating") if names.get("score") else None
    if ratings is not None and not np.isfinite(ratings).all():
        row = int(np.flatnonzero(~np.isfinite(ratings))[0])
        raise InputError("rating must be a finite number (drop or fill missing ratings first)",
                         source=source, line=row, unit="row", value=str(ratings[row]))
    return _RawPairs(_user_values(columns[user], source), _item_values(columns[item], source),
                     ratings, source)


# ---------------------------------------------------------------------------- coding


def prepare(recs: _RawLists, test: _RawPairs, train: _RawPairs | None = None,
            feature_items: Any = None, relevance: str = "threshold", threshold: float = 4,
            impute: str = "nonrelevant", exclude_train: bool = False,
            conventions: Any = None) -> Prepared:
    """Code everything against one user index and item catalogue, put tied items in the
    conventions' order, exclude training items if asked, cut the lists at ``max_depth``,
    apply the relevance and imputation policies and join the lists with the test data."""
    from ..conventions import Conventions

    conv = conventions or Conventions()
    import pyarrow as pa

    _check_choice("relevance", relevance, RELEVANCE_POLICIES)
    _check_choice("impute", impute, IMPUTATION_POLICIES)
    if not isinstance(threshold, (int, float)) or isinstance(threshold, bool):
        raise InputError("threshold must be a number", source="threshold", value=repr(threshold))
    counts: dict[str, Any] = {"recommendation_rows": int(recs.lengths.sum()) + recs.padding,
                              "padding_dropped": recs.padding,
                              "recommendation_users": len(recs.users)}
    # items: one catalogue for every input
    item_sources = [recs.items, test.items] + ([train.items] if train is not None else [])
    if feature_items is not None:
        item_sources.append(_item_values(feature_items, "item features"))
    item_ids, item_codes = _catalogue(item_sources)
    rec_items, test_items = item_codes[0], item_codes[1]
    train_items = item_codes[2] if train is not None else None
    feature_codes = item_codes[-1] if feature_items is not None else None
    # users: list users first, then the others
    user_ids, numbers = recs.users, recs.numbers
    user_codes = []
    for pairs in [test] + ([train] if train is not None else []):
        codes, distinct = _encode(pairs.users)
        ints = _integers(distinct)  # integer ids on both sides: matched as numbers
        if ints is not None and numbers is not None:
            at = _index_in_numbers(ints, numbers)
        else:  # as strings (integer ids: only the distinct ones become strings)
            distinct = _user_strings(distinct, pairs.source)
            at = index_in(distinct, user_ids)
        new = np.flatnonzero(at < 0)
        if len(new):
            at[new] = len(user_ids) + np.arange(len(new))
            user_ids = pa.concat_arrays([user_ids, _user_strings(take(distinct, new),
                                                                 pairs.source)])
            numbers = np.concatenate([numbers, ints[new]]) \
                if ints is not None and numbers is not None else None
        user_codes.append(at[codes])
    offsets = np.zeros(len(recs.lengths) + 1, dtype=np.int64)
    np.cumsum(recs.lengths, out=offsets[1:])
    lists = TopLists(recs.users, offsets, rec_items, recs.scores, recs.ties, recs.source)
    n_items = len(item_ids)
    lists = order_ties(lists, item_ids, conv)

    train_pairs = None
    if train is not None:
        train_pairs = Interactions(user_codes[1], train_items, train.rating, train.source)
        seen = _member(lists, train_pairs.user, train_pairs.item, n_items)
        counts["recommended_seen_in_training"] = int(seen.sum())
        counts["users_recommended_seen_items"] = int(
            len(np.unique(lists.segment()[seen])) if seen.any() else 0)
        if exclude_train and seen.any():
            lists = lists.keep(~seen)
            counts["training_items_excluded"] = counts["recommended_seen_in_training"]
        else:
            counts["training_items_excluded"] = 0
    elif exclude_train:
        raise InputError("exclude_train needs the training interactions (train=...)",
                         source="exclude_train")
    counts["rows_beyond_depth"] = 0
    if conv.max_depth is not None:
        before = lists.num_rows
        lists = lists.truncate(conv.max_depth)
        counts["rows_beyond_depth"] = before - lists.num_rows

    # test: duplicates, relevance policy
    test_pairs, dropped = _dedupe(Interactions(user_codes[0], test_items, test.rating,
                                               test.source), n_items)
    counts["test_rows"] = len(test.users)
    counts["test_duplicates_dropped"] = dropped
    grade, rel_threshold = relevance_grades(test_pairs, relevance, threshold)
    # the lists joined with the test data: every recommended row's grade (and rating), NaN
    # where not judged; allocated first, so that the memory the join frees is reused later
    row_grade = np.full(lists.num_rows, np.nan)
    row_rating = np.full(lists.num_rows, np.nan) if test_pairs.rating is not None else None
    pair, rows, duplicates = _matches(lists, test_pairs.user, test_pairs.item, n_items)
    row_grade[rows] = grade[pair]
    if row_rating is not None:
        row_rating[rows] = test_pairs.rating[pair]

    imputed = imputed_grade = None
    counts["imputed_ratings"] = 0
    if impute != "nonrelevant":
        if test_pairs.rating is None:
            raise InputError(f"impute={impute!r} needs ratings in the test data (rating=...)",
                             source="impute")
        imputed, imputed_grade = _impute(lists, test_pairs, row_grade, relevance, threshold,
                                         impute, n_items)
        counts["imputed_ratings"] = len(imputed)
    prepared = Prepared(lists, user_ids, item_ids, test_pairs, grade, row_grade, imputed,
                        imputed_grade, train_pairs, rel_threshold, duplicates, counts)
    prepared.feature_codes = feature_codes  # type: ignore[attr-defined]
    prepared.row_rating = row_rating  # type: ignore[attr-defined]
    if train is not None and not exclude_train and counts["recommended_seen_in_training"]:
        prepared.warnings.append(
            f"{counts['recommended_seen_in_training']} recommended items "
            f"({counts['users_recommended_seen_items']} users) were already seen in training and "
            "stay in the lists; exclude_train=True removes them")
    return prepared


def order_ties(lists: TopLists, item_ids: Any, conv: Any) -> TopLists:
    """The lists with tied scores ordered as the conventions say (``ties``: by item id
    descending or ascending, as byte strings, or in input order), scores rounded to float32
    first under ``score_precision="float32"``. Policies that are not an order (expected,
    optimistic, pessimistic) start from trec_eval's order, as the engine does."""
    import pyarrow as pa

    from ..core.order import ORDERING_TIES, ranking_order
    from ..io.tables import Run

    scores, ties = lists.scores, lists.ties
    if conv.score_precision == "float32":
        scores = scores.astype(np.float32).astype(np.float64)
        ties = _count_ties(scores, lists.offsets)
    if ties == 0 or conv.ties == "input_order":
        return TopLists(lists.users, lists.offsets, lists.items, scores, ties, lists.source)
    policy = conv.ties if conv.ties in ORDERING_TIES else "docid_desc"
    segment = lists.segment().astype(np.int32)
    run = Run(segment, cast(to_arrow(np.arange(lists.num_lists)), pa.string()),
              take(item_ids, lists.items), lists.source, None, "row", scores)
    order, _ = ranking_order(run, policy)
    return TopLists(lists.users, lists.offsets, lists.items[order], scores[order], ties,
                    lists.source)


def relevance_grades(pairs: Interactions, policy: str, threshold: float
                     ) -> tuple[np.ndarray, float]:
    """Grade of every interaction under ``policy``, and the relevance threshold binary
    measures then use.

    >>> import numpy as np
    >>> p = Interactions(np.array([0, 0, 1]), np.array([0, 1, 0]), np.array([5., 3., 4.]), "t")
    >>> relevance_grades(p, "threshold", 4)
    (array([1., 0., 1.]), 1)
    >>> relevance_grades(p, "graded", 4)
    (array([5., 3., 4.]), 4)
    >>> relevance_grades(p, "centered", 4)[0]   # user 0's mean is 4, user 1's is 4
    array([1., 0., 0.])
    """
    if pairs.rating is None:  # implicit feedback: every held-out interaction is relevant
        return np.ones(len(pairs)), 1
    rating = pairs.rating
    if policy == "threshold":
        return (rating >= threshold).astype(np.float64), 1
    if policy == "graded":
        return rating.astype(np.float64, copy=True), threshold
    mean = _user_mean(pairs)
    return np.maximum(rating - mean[pairs.user], 0.0), ABOVE_ZERO


def _user_mean(pairs: Interactions) -> np.ndarray:
    n = int(pairs.user.max()) + 1 if len(pairs) else 0
    total = np.bincount(pairs.user, weights=pairs.rating, minlength=n)
    count = np.bincount(pairs.user, minlength=n)
    out = np.full(n, np.nan)
    np.divide(total, count, out=out, where=count > 0)
    return out


def _user_median(pairs: Interactions) -> np.ndarray:
    """Median rating per user, vectorised: sort by (user, rating), take the middle one(s)."""
    n = int(pairs.user.max()) + 1 if len(pairs) else 0
    order = np.lexsort((pairs.rating, pairs.user))
    rating = pairs.rating[order]
    count = np.bincount(pairs.user, minlength=n)
    start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(count, out=start[1:])
    out = np.full(n, np.nan)
    has = count > 0
    low = start[:-1][has] + (count[has] - 1) // 2
    high = start[:-1][has] + count[has] // 2
    out[has] = (rating[low] + rating[high]) / 2.0
    return out


def _impute(lists: TopLists, test: Interactions, row_grade: np.ndarray, relevance: str,
            threshold: float, impute: str, n_items: int):
    """Judgments for the recommended items a user with test ratings has not rated: the
    user's mean (or median) rating, through the relevance policy. Fills ``row_grade`` in
    place; returns the imputed judgments (one per user and item) and their grades."""
    stat = _user_mean(test) if impute == "user_mean" else _user_median(test)
    rows = np.flatnonzero(np.isnan(row_grade))
    user = lists.segment()[rows]
    known = user < len(stat)
    rows, user = rows[known], user[known]
    value = stat[user]
    rated = ~np.isnan(value)
    rows, user, value = rows[rated], user[rated], value[rated]
    if relevance == "threshold":
        grade = (value >= threshold).astype(np.float64)
    elif relevance == "graded":
        grade = value.copy()
    else:
        grade = np.maximum(value - _user_mean(test)[user], 0.0)
    row_grade[rows] = grade
    # one imputed judgment per (user, item), even where a list repeats an item
    _, first = np.unique(user * n_items + lists.items[rows], return_index=True)
    return Interactions(user[first], lists.items[rows[first]], value[first],
                        "imputed ratings"), grade[first]


def _dedupe(pairs: Interactions, n_items: int) -> tuple[Interactions, int]:
    """Identical duplicate interactions are dropped (and counted); the same (user, item) with
    two different ratings is an error."""
    keys = pairs.user * n_items + pairs.item
    ordered = _sort_by_user(keys, pairs.user)  # no duplicate (the usual case): nothing to
    if not np.any(ordered[1:] == ordered[:-1]):  # find out about where they were
        return pairs, 0
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    dup = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    if pairs.rating is not None:
        differ = pairs.rating[order[dup]] != pairs.rating[order[dup + 1]]
        if differ.any():
            first, second = sorted((int(order[dup][differ][0]), int(order[dup + 1][differ][0])))
            raise InputError(f"the same user and item rated twice with different ratings "
                             f"({pairs.rating[first]:g} at row {first}, "
                             f"{pairs.rating[second]:g} here); keep one rating per pair",
                             source=pairs.source, line=second, unit="row")
    keep = np.ones(len(keys), dtype=bool)
    keep[order[dup + 1]] = False
    return Interactions(pairs.user[keep], pairs.item[keep],
                        None if pairs.rating is None else pairs.rating[keep], pairs.source), len(dup)


def _sort_by_user(keys: np.ndarray, user: np.ndarray) -> np.ndarray:
    """``keys`` (``user * n_items + item``) sorted. Rows already in user order (the usual
    test data) are sorted a block of users at a time, in the processor's cache: several times
    faster than one sort of them all."""
    block = 1 << 10
    if len(keys) <= block or np.any(user[1:] < user[:-1]):
        return np.sort(keys)
    cuts = np.unique(np.append(np.searchsorted(user, user[::block]), len(keys)))
    out = keys.copy()
    for a, b in pairwise(cuts):
        out[a:b].sort()
    return out


def _member(lists: TopLists, user: np.ndarray, item: np.ndarray, n_items: int) -> np.ndarray:
    """For every recommended row: is its (user, item) among the given pairs?"""
    out = np.zeros(lists.num_rows, dtype=bool)
    out[_matches(lists, user, item, n_items)[1]] = True
    return out


#: (user, item) pairs looked up at once, and a quarter of the list rows sorted at once:
#: blocks this size keep their temporaries in the processor's cache.
_BLOCK = 1 << 16


def _matches(lists: TopLists, user: np.ndarray, item: np.ndarray, n_items: int
             ) -> tuple[np.ndarray, np.ndarray, int]:
    """Every (pair, list row) where the pair's user and item are a recommended row's (every
    copy of an item a list repeats), and the number of repeated rows in the lists.

    Each list is sorted on its own (the items, packed with their position in the list into
    one integer) and every pair is found by a binary search in its user's list; lists whose
    packed items do not fit in 63 bits, or whose lengths differ too much to lay out in one
    padded 2-D array, go through one sort of all (user, item) keys instead."""
    layout = _row_sorted(lists, n_items)
    if layout is None:
        return _matches_by_keys(lists, user, item, n_items)
    packed, bits, duplicates = layout
    n, width = packed.shape
    flat = packed.ravel()
    inside = np.flatnonzero(user < n) if len(user) and user.max() >= n else None
    found_pair, found_at = [], []
    for a in range(0, len(user) if inside is None else len(inside), _BLOCK):
        if inside is None:  # every pair's user has a list
            pair = np.arange(a, min(a + _BLOCK, len(user)))
            at, target = user[a:a + _BLOCK] * width, item[a:a + _BLOCK].astype(packed.dtype)
        else:
            pair = inside[a:a + _BLOCK]
            at, target = user[pair] * width, item[pair].astype(packed.dtype)
        target <<= bits
        last = at + (width - 1)
        span = width  # branch-free binary search: every row has the same width
        while span > 1:
            half = span >> 1
            middle = at + half
            at = np.where(flat[middle] < target, middle, at)
            span -= half
        at += flat[at] < target  # the first entry >= target, or one past the row
        np.minimum(at, last, out=at)
        hit = (flat[at] >> bits) == (target >> bits)
        found_pair.append(pair[hit])
        found_at.append(at[hit])
    pair = np.concatenate(found_pair) if found_pair else np.zeros(0, np.int64)
    at = np.concatenate(found_at) if found_at else np.zeros(0, np.int64)
    if duplicates:  # the other copies follow the first in the sorted list
        more_pair, more_at = [pair], [at]
        cur_pair, cur = pair, at
        while len(cur):
            nxt = cur + 1
            ok = (nxt % width) != 0
            ok[ok] = (flat[nxt[ok]] >> bits) == (flat[cur[ok]] >> bits)
            cur_pair, cur = cur_pair[ok], nxt[ok]
            more_pair.append(cur_pair)
            more_at.append(cur)
        pair, at = np.concatenate(more_pair), np.concatenate(more_at)
    position = (flat[at] & ((1 << bits) - 1)).astype(np.int64)
    return pair, lists.offsets[at // width] + position, duplicates


def _row_sorted(lists: TopLists, n_items: int) -> tuple[np.ndarray, int, int] | None:
    """Every list's items sorted, one row per list: ``(item << bits) | position`` (int32 when
    that fits, else int64), rows shorter than the longest padded with the type's largest
    value; with ``bits`` and the number of repeated rows. None when the items do not fit, or
    when padding would more than double the rows."""
    n = lists.num_lists
    lengths = lists.lengths
    width = int(lengths.max(initial=0))
    if width == 0 or n * width > 2 * lists.num_rows + _BLOCK:
        return None
    bits = (width - 1).bit_length()
    top = max(n_items, 1) << bits  # above every packed value
    if top < np.iinfo(np.int32).max:
        dtype = np.int32
    elif top < np.iinfo(np.int64).max:
        dtype = np.int64
    else:
        return None
    fill = np.iinfo(dtype).max
    position = np.arange(width, dtype=dtype)
    fixed = lists.fixed_length == width
    packed = np.empty((n, width), dtype=dtype)
    duplicates = 0
    per_block = max(1, 4 * _BLOCK // width)  # lists
    for a in range(0, n, per_block):
        b = min(n, a + per_block)
        part = packed[a:b]
        if fixed:
            np.left_shift(lists.items[a * width:b * width].reshape(b - a, width), bits, out=part,
                          casting="unsafe")
            part |= position
        else:
            first, stop = lists.offsets[a], lists.offsets[b]
            counts = lengths[a:b]
            row = np.repeat(np.arange(b - a), counts)
            pos = np.arange(stop - first) - np.repeat(lists.offsets[a:b] - first, counts)
            part.fill(fill)
            part[row, pos] = (lists.items[first:stop].astype(dtype) << bits) | pos
        part.sort(axis=1)
        same = (part[:, 1:] ^ part[:, :-1]) < (1 << bits)
        if not fixed:
            same &= part[:, 1:] != fill
        duplicates += int(np.count_nonzero(same))
    return packed, bits, duplicates


def _matches_by_keys(lists: TopLists, user: np.ndarray, item: np.ndarray, n_items: int
                     ) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`_matches` through one stable sort of every recommended (user, item) key."""
    keys = lists.segment() * n_items + lists.items
    rows = np.argsort(keys, kind="stable")
    keys = keys[rows]
    duplicates = int(np.count_nonzero(keys[1:] == keys[:-1]))
    inside = np.flatnonzero(user < lists.num_lists)
    if len(keys) == 0 or len(inside) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), duplicates
    probe = user[inside] * n_items + item[inside]
    first = np.searchsorted(keys, probe)
    hit = keys[np.minimum(first, len(keys) - 1)] == probe
    pair, first = inside[hit], first[hit]
    if not duplicates:
        return pair, rows[first], 0
    count = np.searchsorted(keys, probe[hit], side="right") - first
    starts = np.zeros(len(count), dtype=np.int64)
    np.cumsum(count[:-1], out=starts[1:])
    at = np.repeat(first - starts, count) + np.arange(int(count.sum()))
    return np.repeat(pair, count), rows[at], duplicates


def _catalogue(columns: list[Any]) -> tuple[Any, list[np.ndarray]]:
    """One item catalogue for several item columns: (ids as Arrow strings, codes per column).

    Columns of non-negative integers (the usual item indices) are their own codes; anything
    else is dictionary-encoded as strings."""
    import pyarrow as pa

    if all(isinstance(c, np.ndarray) for c in columns):
        top = max((int(c.max()) for c in columns if len(c)), default=-1)
        low = min((int(c.min()) for c in columns if len(c)), default=0)
        total = sum(len(c) for c in columns)
        if low >= 0 and top < max(4 * total, 1 << 20):
            present = np.zeros(top + 1, dtype=bool)
            for c in columns:
                present[c] = True
            ids = np.flatnonzero(present)
            if len(ids) == top + 1:  # dense ids: the id is the code
                return cast(to_arrow(ids), pa.string()), [c.astype(np.int64, copy=False)
                                                         for c in columns]
            remap = np.cumsum(present) - 1
            return cast(to_arrow(ids), pa.string()), [remap[c].astype(np.int64) for c in columns]
    strings = [_as_strings(c) for c in columns]
    dictionaries = [compute("unique", s) for s in strings]
    catalogue = compute("unique", pa.concat_arrays(dictionaries)) if dictionaries else \
        string_array([])
    codes = [index_in(s, catalogue) for s in strings]  # every id is in the catalogue
    return catalogue, codes


# ---------------------------------------------------------------------------- list builders


def _lists_from_array(array: np.ndarray, users: Any, pad: Any) -> _RawLists:
    import pyarrow as pa

    source = "recommendations array"
    if array.ndim != 2:
        raise InputError("a recommendation array must be 2-D (one row of item ids per user)",
                         source=source, value=f"shape {array.shape}")
    n_users, k = array.shape
    numbers = None
    if users is None:  # 0..n-1
        numbers = np.arange(n_users, dtype=np.int64)
        user_ids = cast(to_arrow(numbers), pa.string())
    else:
        user_ids = _user_strings(users, "users")
        if len(user_ids) != n_users:
            raise InputError(f"users has {len(user_ids)} ids for {n_users} rows of "
                             "recommendations", source="users")
        _check_distinct(user_ids, "users")
    if pad is not None:
        mask = ~np.isnan(array) if isinstance(pad, float) and np.isnan(pad) else array != pad
        lengths = mask.sum(axis=1).astype(np.int64)
        items = array[mask]
        padding = int(array.size - len(items))
    else:
        lengths = np.full(n_users, k, dtype=np.int64)
        items = array.ravel()
        padding = 0
    if items.dtype.kind == "f":
        if not np.all(items == np.round(items)):
            raise InputError("item ids in a float array must be whole numbers (use pad= for "
                             "padding values)", source=source)
        items = items.astype(np.int64)
    items = _item_values(items, source)
    return _RawLists(user_ids, lengths, items, _list_scores(lengths), 0, source, padding,
                     numbers)


def _lists_from_mapping(recs: Mapping) -> _RawLists:
    source = "recommendations dict"
    values = list(recs.values())
    if values and all(isinstance(v, Mapping) for v in values):
        users, items, scores = [], [], []
        for u, inner in recs.items():
            users.extend([u] * len(inner))
            items.extend(inner.keys())
            scores.extend(_check_number(v, source, u, i) for i, v in inner.items())
        return _lists_from_scored(_user_strings(users, source), _item_values(items, source),
                                  np.asarray(scores, dtype=np.float64), source)
    user_list, lengths, items = [], [], []
    for u, inner in recs.items():
        if isinstance(inner, (str, bytes)) or not hasattr(inner, "__len__"):
            raise InputError("expected {user: [items best first]} or {user: {item: score}}; this "
                             f"user maps to a {type(inner).__name__}", source=source,
                             line=repr(u), unit="key")
        user_list.append(u)
        lengths.append(len(inner))
        items.extend(inner)
    lengths = np.asarray(lengths, dtype=np.int64)
    user_ids = _user_strings(user_list, source)
    _check_distinct(user_ids, source)
    return _RawLists(user_ids, lengths, _item_values(items, source), _list_scores(lengths), 0,
                     source)


def _lists_from_scored(user_col, item_col, score: np.ndarray, source: str) -> _RawLists:
    """Rows of (user, item, score) in any order -> lists best first (stable for ties).

    Rows already grouped by user (each user's rows together) keep their order of users, and
    rows already best first within each user are not moved at all."""
    if not np.isfinite(score).all():
        row = int(np.flatnonzero(~np.isfinite(score))[0])
        raise InputError("score must be a finite number", source=source, line=row, unit="row",
                         value=str(score[row]))
    n = len(score)
    starts, users = _runs(user_col)
    order = None
    if len(starts) != _count_distinct(users):  # some user's rows are apart: bring them together
        codes, users = _hashed_codes(user_col)  # users in order of first appearance
        order = np.argsort(codes, kind="stable")
        starts = starts_of_runs(codes[order])
        score = score[order]
    lengths = np.diff(np.append(starts, n)).astype(np.int64)
    within = _best_first(score, starts, lengths)
    if within is not None:
        order = within if order is None else order[within]
        score = score[within]
    if order is not None:
        item_col = item_col[order] if isinstance(item_col, np.ndarray) else \
            take(item_col, order)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return _RawLists(_user_strings(users, source), lengths, item_col,
                     score.astype(np.float64, copy=False), _count_ties(score, offsets), source,
                     numbers=_integers(users))


def _best_first(score: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
    """The order that puts each list's rows (``starts``, ``lengths``: consecutive) by score,
    highest first, equal scores in their order; None when they already are."""
    if len(score) < 2:
        return None
    rises = score[1:] > score[:-1]
    rises[starts[1:] - 1] = False  # from one list to the next
    if not rises.any():
        return None
    k = int(lengths[0])
    if (lengths == k).all():  # lists of one length: one stable sort per row
        within = np.argsort(-score.reshape(-1, k), axis=1, kind="stable")
        within += starts[:, None]
        return within.ravel()
    return np.lexsort((-score, np.repeat(np.arange(len(starts)), lengths)))


def _lists_in_input_order(user_col, item_col, source: str) -> _RawLists:
    """Rows without scores: each user's rows, in input order, are the list best first."""
    codes, _ = _encode(user_col)
    n = len(codes)
    if n and np.any(codes[1:] < codes[:-1]):
        order = np.argsort(codes, kind="stable")
        user_col = take(user_col, order)
        item_col = item_col[order] if isinstance(item_col, np.ndarray) else \
            take(item_col, order)
        codes = codes[order]
    lengths = np.diff(np.append(starts_of_runs(codes), n)).astype(np.int64)
    return _lists_from_scored(user_col, item_col, _list_scores(lengths), source)


def _list_scores(lengths: np.ndarray) -> np.ndarray:
    """length − position for every row: positive, strictly decreasing within each list."""
    if len(lengths) and lengths[0] > 0 and (lengths == lengths[0]).all():
        k = int(lengths[0])
        return np.tile(np.arange(k, 0, -1, dtype=np.float64), len(lengths))
    n = int(lengths.sum())
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return (np.repeat(lengths, lengths) - (np.arange(n) - starts)).astype(np.float64)


def _count_ties(score: np.ndarray, offsets: np.ndarray) -> int:
    if len(score) < 2:
        return 0
    same = score[1:] == score[:-1]
    same[offsets[1:-1][offsets[1:-1] > 0] - 1] = False
    return int(same.sum())


# ---------------------------------------------------------------------------- column helpers


def _frame_columns(obj: Any, what: str, user: str, item: str, value: str | None,
                   rank: str | None, need_value: bool = True):
    """Columns of a pandas/polars DataFrame or Arrow table as Arrow arrays, and which of the
    value columns (``score``/``rating`` or ``rank``) are present; (None, {}) otherwise."""
    import sys

    getter = available = None
    if "pandas" in sys.modules and isinstance(obj, sys.modules["pandas"].DataFrame):
        import pyarrow as pa

        available = [str(c) for c in obj.columns]
        getter = lambda c: pa.Array.from_pandas(obj[c])
    elif "polars" in sys.modules and isinstance(obj, sys.modules["polars"].DataFrame):
        available = list(obj.columns)
        getter = lambda c: obj[c].to_arrow()
    elif "pyarrow" in sys.modules and isinstance(obj, sys.modules["pyarrow"].Table):
        available = obj.column_names
        getter = lambda c: obj.column(c).combine_chunks()
    if getter is None:
        return None, {}
    names: dict[str, str | None] = {}
    for label, name in (("user", user), ("item", item)):
        if name not in available:
            raise InputError(f"{what} frame has no {label} column {name!r} (columns: "
                             f"{', '.join(available)}); name it with {label}=",
                             source=f"{what} {type(obj).__name__}")
    if rank is not None and rank not in available:
        raise InputError(f"{what} frame has no rank column {rank!r} (columns: "
                         f"{', '.join(available)})", source=f"{what} {type(obj).__name__}")
    if rank is not None:
        names["rank"] = rank
    elif value is not None and value in available:
        names["score"] = value
    wanted = [user, item] + [v for v in names.values() if v]
    return {c: getter(c) for c in wanted}, names


def _user_values(values: Any, source: str):
    """User ids of many rows: an Arrow integer array as it is (encoded before it becomes
    strings), anything else as :func:`_user_strings`."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array) and pa.types.is_integer(values.type) and not values.null_count:
        return values
    return _user_strings(values, source)


def _user_strings(values: Any, source: str):
    """User ids as an Arrow string array (integers become their decimal strings)."""
    import pyarrow as pa

    values = _id_array(values, source, "user")
    if pa.types.is_integer(values.type) or pa.types.is_large_string(values.type):
        values = cast(values, pa.string())
    elif not pa.types.is_string(values.type):
        raise InputError("user ids must be strings or integers", source=source,
                         value=str(values.type))
    return values


def _item_values(values: Any, source: str):
    """Item ids as a numpy int64 array (integer ids) or an Arrow string array."""
    import pyarrow as pa

    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        return values.astype(np.int64, copy=False)
    values = _id_array(values, source, "item")
    if pa.types.is_integer(values.type):
        return to_numpy(values, np.int64, null=0)
    if pa.types.is_large_string(values.type):
        values = cast(values, pa.string())
    if not pa.types.is_string(values.type):
        raise InputError("item ids must be strings or integers", source=source,
                         value=str(values.type))
    return values


def _id_array(values: Any, source: str, what: str):
    """User or item ids (``what``) as one Arrow array without nulls or dictionary encoding;
    the caller checks the type."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        try:
            values = to_arrow(values if isinstance(values, np.ndarray) else list(values))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise InputError(f"{what} ids must be strings or integers ({exc})",
                             source=source) from None
    if pa.types.is_dictionary(values.type):
        values = take(values.dictionary, values.indices)
    if values.null_count:
        row = int(np.flatnonzero(to_numpy(compute("is_null", values), bool))[0])
        raise InputError(f"missing {what} id", source=source, line=row, unit="row")
    return values


def _as_strings(values: Any):
    import pyarrow as pa

    if isinstance(values, np.ndarray):
        return cast(to_arrow(values), pa.string())
    return values


def _numbers(values: Any, source: str, what: str) -> np.ndarray:
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if values.null_count:
        row = int(np.flatnonzero(to_numpy(compute("is_null", values), bool))[0])
        raise InputError(f"missing {what}", source=source, line=row, unit="row")
    if not (pa.types.is_integer(values.type) or pa.types.is_floating(values.type)
            or pa.types.is_decimal(values.type)):
        raise InputError(f"{what} must be a number", source=source, value=str(values.type))
    return to_numpy(cast(values, pa.float64()), np.float64)


def _check_number(value: Any, source: str, user: Any, item: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise InputError("expected a number", source=source, line=f"{user!r}/{item!r}",
                         unit="key", value=repr(value))
    if not np.isfinite(value):
        raise InputError("expected a finite number", source=source, line=f"{user!r}/{item!r}",
                         unit="key", value=repr(value))
    return float(value)


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise InputError(f"{name} must be one of {', '.join(choices)}", source=name,
                         value=str(value))


def _check_distinct(ids, source: str) -> None:
    if len(compute("unique", ids)) != len(ids):
        counts = compute("value_counts", ids)
        twice = [v["values"] for v in counts.to_pylist() if v["counts"] > 1][:1]
        raise InputError("a user has two recommendation lists", source=source,
                         value=str(twice[0]) if twice else None)


def _encode(ids) -> tuple[np.ndarray, Any]:
    """Code of every id (0, 1, ... in order of first appearance) and the distinct ids, of the
    Arrow array's type. Ids already grouped (each id's rows together) are coded from their
    runs, without hashing every row."""
    starts, first = _runs(ids)
    if len(starts) == _count_distinct(first):
        codes = np.zeros(len(ids), dtype=np.int64)
        codes[starts[1:]] = 1
        np.cumsum(codes, out=codes)
        return codes, first
    return _hashed_codes(ids)


def _hashed_codes(ids) -> tuple[np.ndarray, Any]:
    """:func:`_encode` for ids in any order."""
    encoded = compute("dictionary_encode", ids)
    return to_numpy(encoded.indices, np.int64, null=0), encoded.dictionary


def _runs(ids) -> tuple[np.ndarray, Any]:
    """Where every run of equal consecutive ids starts (an Arrow array of integers or
    strings), and the id of each run."""
    import pyarrow as pa

    if len(ids) == 0:
        return np.zeros(0, dtype=np.int64), ids
    if pa.types.is_integer(ids.type):
        starts = starts_of_runs(to_numpy(ids, np.int64, null=0))
    else:
        starts = starts_of_equal_runs(ids)
    return starts, take(ids, starts)


def _count_distinct(ids) -> int:
    return compute("count_distinct", ids).as_py() if len(ids) else 0


def _integers(ids) -> np.ndarray | None:
    """Integer ids (an Arrow array) as int64, None for other ids (or unsigned 64-bit ones,
    which int64 cannot hold)."""
    import pyarrow as pa

    if not pa.types.is_integer(ids.type) or pa.types.is_uint64(ids.type):
        return None
    return to_numpy(ids, np.int64, null=0)


def _index_in_numbers(values: np.ndarray, numbers: np.ndarray) -> np.ndarray:
    """Where each value is in ``numbers`` (distinct), -1 where it is not."""
    out = np.full(len(values), -1, dtype=np.int64)
    if len(numbers) == 0 or len(values) == 0:
        return out
    order = None if np.all(numbers[1:] > numbers[:-1]) else np.argsort(numbers)
    ordered = numbers if order is None else numbers[order]
    at = np.minimum(np.searchsorted(ordered, values), len(ordered) - 1)
    found = ordered[at] == values
    out[found] = at[found] if order is None else order[at[found]]
    return out
