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
from typing import Any

import numpy as np

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

    def keep(self, mask: np.ndarray) -> "TopLists":
        """The rows where ``mask`` is true, each list condensed (the rest move up)."""
        counts = np.bincount(self.segment()[mask], minlength=self.num_lists)
        offsets = np.zeros(self.num_lists + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return TopLists(self.users, offsets, self.items[mask], self.scores[mask],
                        _count_ties(self.scores[mask], offsets), self.source)

    def truncate(self, depth: int) -> "TopLists":
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
        return _lists_from_scored(_user_strings(recs.query_dict.take(_indices(recs.query_code)),
                                                recs.source), recs.docs, recs.score, recs.source)
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
    user_col = _user_strings(columns[user], source)
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
    import pyarrow.compute as pc

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
    user_ids = recs.users
    extra = [test.users] + ([train.users] if train is not None else [])
    user_codes = []
    for column in extra:
        encoded = pc.dictionary_encode(column)
        if not pa.types.is_string(encoded.dictionary.type):  # integer ids: only the distinct
            encoded = pa.DictionaryArray.from_arrays(  # ones become strings
                encoded.indices, encoded.dictionary.cast(pa.string()))
        at = _to_int(pc.index_in(encoded.dictionary, value_set=user_ids), -1)
        new = np.flatnonzero(at < 0)
        if len(new):
            at[new] = len(user_ids) + np.arange(len(new))
            user_ids = pa.concat_arrays([user_ids, encoded.dictionary.take(_indices(new))])
        user_codes.append(at[_to_int(encoded.indices, 0)])
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
    row_grade, duplicates = _join(lists, test_pairs, grade, n_items)
    row_rating = _join(lists, test_pairs, test_pairs.rating, n_items)[0] \
        if test_pairs.rating is not None else None

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

    scores = lists.scores
    if conv.score_precision == "float32":
        scores = scores.astype(np.float32).astype(np.float64)
    ties = _count_ties(scores, lists.offsets)
    if ties == 0 or conv.ties == "input_order":
        return TopLists(lists.users, lists.offsets, lists.items, scores, ties, lists.source)
    policy = conv.ties if conv.ties in ORDERING_TIES else "docid_desc"
    segment = lists.segment().astype(np.int32)
    run = Run(segment, pa.array(np.arange(lists.num_lists)).cast(pa.string()),
              item_ids.take(_indices(lists.items)), lists.source, None, "row", scores)
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
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    dup = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    if len(dup) == 0:
        return pairs, 0
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


def _sorted_keys(lists: TopLists, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """Every recommended (user, item) key sorted, and the row each sorted key came from.

    Lists of one length (the usual top-K output) are sorted row by row, which is several
    times faster than one sort of all the keys."""
    k = lists.fixed_length
    if k:
        within = np.argsort(lists.items.reshape(-1, k), axis=1)
        rows = (within + lists.offsets[:-1, None]).ravel()
        users = np.arange(lists.num_lists, dtype=np.int64)[:, None]
        keys = (users * n_items + lists.items[rows].reshape(-1, k)).ravel()
        return keys, rows
    keys = lists.segment() * n_items + lists.items
    rows = np.argsort(keys, kind="stable")
    return keys[rows], rows


def _join(lists: TopLists, test: Interactions, grade: np.ndarray, n_items: int
          ) -> tuple[np.ndarray, int]:
    """Grade of every recommended row (NaN when the test data has no such pair; every copy
    of an item a list repeats gets it), and the number of repeated rows."""
    keys, rows = _sorted_keys(lists, n_items)
    repeated = keys[1:] == keys[:-1]
    duplicates = int(np.count_nonzero(repeated))
    row_grade = np.full(lists.num_rows, np.nan)
    inside = np.flatnonzero(test.user < lists.num_lists)
    if len(keys) == 0 or len(inside) == 0:
        return row_grade, duplicates
    test_keys = test.user[inside] * n_items + test.item[inside]
    order = np.argsort(test_keys)
    test_keys = test_keys[order]
    at = np.minimum(np.searchsorted(keys, test_keys), len(keys) - 1)  # first of equal keys
    found = keys[at] == test_keys
    if not duplicates:
        row_grade[rows[at[found]]] = grade[inside[order[found]]]
        return row_grade, 0
    run = np.cumsum(np.r_[True, ~repeated]) - 1
    run_grade = np.full(int(run[-1]) + 1, np.nan)
    run_grade[run[at[found]]] = grade[inside[order[found]]]
    row_grade[rows] = run_grade[run]
    return row_grade, duplicates


def _member(lists: TopLists, user: np.ndarray, item: np.ndarray, n_items: int) -> np.ndarray:
    """For every recommended row: is its (user, item) among the given pairs?"""
    inside = user < lists.num_lists
    pair_keys = np.unique(user[inside] * n_items + item[inside])
    keys = lists.segment() * n_items + lists.items
    if len(pair_keys) == 0:
        return np.zeros(len(keys), dtype=bool)
    at = np.minimum(np.searchsorted(pair_keys, keys), len(pair_keys) - 1)
    return pair_keys[at] == keys


def _catalogue(columns: list[Any]) -> tuple[Any, list[np.ndarray]]:
    """One item catalogue for several item columns: (ids as Arrow strings, codes per column).

    Columns of non-negative integers (the usual item indices) are their own codes; anything
    else is dictionary-encoded as strings."""
    import pyarrow as pa
    import pyarrow.compute as pc

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
                return pa.array(ids).cast(pa.string()), [c.astype(np.int64, copy=False)
                                                         for c in columns]
            remap = np.cumsum(present) - 1
            return pa.array(ids).cast(pa.string()), [remap[c].astype(np.int64) for c in columns]
    strings = [_as_strings(c) for c in columns]
    dictionaries = [pc.unique(s) for s in strings]
    catalogue = pc.unique(pa.concat_arrays(dictionaries)) if dictionaries else pa.array([], pa.string())
    codes = [_to_int(pc.index_in(s, value_set=catalogue), 0) for s in strings]
    return catalogue, codes


# ---------------------------------------------------------------------------- list builders


def _lists_from_array(array: np.ndarray, users: Any, pad: Any) -> _RawLists:
    import pyarrow as pa

    source = "recommendations array"
    if array.ndim != 2:
        raise InputError("a recommendation array must be 2-D (one row of item ids per user)",
                         source=source, value=f"shape {array.shape}")
    n_users, k = array.shape
    if users is None:
        user_ids = pa.array(np.arange(n_users)).cast(pa.string())
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
    return _RawLists(user_ids, lengths, items, _list_scores(lengths), 0, source, padding)


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
    """Rows of (user, item, score) in any order -> lists best first (stable for ties)."""
    import pyarrow.compute as pc

    if not np.isfinite(score).all():
        row = int(np.flatnonzero(~np.isfinite(score))[0])
        raise InputError("score must be a finite number", source=source, line=row, unit="row",
                         value=str(score[row]))
    codes, users = _encode(user_col)
    n = len(codes)
    new_user = codes[1:] != codes[:-1]
    grouped = int(new_user.sum()) + 1 == len(users) if n else True
    if grouped and not np.any((score[1:] > score[:-1]) & ~new_user):
        order = None
        ranked_codes, ranked_score = codes, score
    else:
        order = np.lexsort((-score, codes))
        ranked_codes, ranked_score = codes[order], score[order]
    starts = np.flatnonzero(np.r_[True, ranked_codes[1:] != ranked_codes[:-1]]) if n else \
        np.zeros(0, np.int64)
    lengths = np.diff(np.append(starts, n)).astype(np.int64)
    list_users = users.take(_indices(ranked_codes[starts])) if n else users
    if order is not None:
        item_col = item_col[order] if isinstance(item_col, np.ndarray) else \
            pc.take(item_col, _indices(order))
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return _RawLists(list_users, lengths, item_col, ranked_score.astype(np.float64),
                     _count_ties(ranked_score, offsets), source)


def _lists_in_input_order(user_col, item_col, source: str) -> _RawLists:
    """Rows without scores: each user's rows, in input order, are the list best first."""
    codes, _ = _encode(user_col)
    order = np.argsort(codes, kind="stable")
    ranked = codes[order]
    n = len(codes)
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]]) if n else np.zeros(0, np.int64)
    lengths = np.diff(np.append(starts, n)).astype(np.int64)
    scores = _list_scores(lengths)
    return _lists_from_scored(user_col.take(_indices(order)),
                              item_col[order] if isinstance(item_col, np.ndarray)
                              else item_col.take(_indices(order)), scores, source)


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
        getter = lambda c: pa.Array.from_pandas(obj[c])  # noqa: E731
    elif "polars" in sys.modules and isinstance(obj, sys.modules["polars"].DataFrame):
        available = list(obj.columns)
        getter = lambda c: obj[c].to_arrow()  # noqa: E731
    elif "pyarrow" in sys.modules and isinstance(obj, sys.modules["pyarrow"].Table):
        available = obj.column_names
        getter = lambda c: obj.column(c).combine_chunks()  # noqa: E731
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

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        try:
            values = pa.array(values if isinstance(values, np.ndarray) else list(values))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise InputError(f"user ids must be strings or integers ({exc})", source=source) from None
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if values.null_count:
        row = int(np.flatnonzero(_to_bool(values.is_null()))[0])
        raise InputError("missing user id", source=source, line=row, unit="row")
    if pa.types.is_integer(values.type) or pa.types.is_large_string(values.type):
        values = values.cast(pa.string())
    elif not pa.types.is_string(values.type):
        raise InputError("user ids must be strings or integers", source=source,
                         value=str(values.type))
    return values


def _item_values(values: Any, source: str):
    """Item ids as a numpy int64 array (integer ids) or an Arrow string array."""
    import pyarrow as pa

    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        return values.astype(np.int64, copy=False)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        try:
            values = pa.array(values if isinstance(values, np.ndarray) else list(values))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise InputError(f"item ids must be strings or integers ({exc})", source=source) from None
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if values.null_count:
        row = int(np.flatnonzero(_to_bool(values.is_null()))[0])
        raise InputError("missing item id", source=source, line=row, unit="row")
    if pa.types.is_integer(values.type):
        return _to_int(values, 0)
    if pa.types.is_large_string(values.type):
        values = values.cast(pa.string())
    if not pa.types.is_string(values.type):
        raise InputError("item ids must be strings or integers", source=source,
                         value=str(values.type))
    return values


def _as_strings(values: Any):
    import pyarrow as pa

    if isinstance(values, np.ndarray):
        return pa.array(values).cast(pa.string())
    return values


def _numbers(values: Any, source: str, what: str) -> np.ndarray:
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if values.null_count:
        row = int(np.flatnonzero(_to_bool(values.is_null()))[0])
        raise InputError(f"missing {what}", source=source, line=row, unit="row")
    if not (pa.types.is_integer(values.type) or pa.types.is_floating(values.type)
            or pa.types.is_decimal(values.type)):
        raise InputError(f"{what} must be a number", source=source, value=str(values.type))
    return np.asarray(values.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)


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
    import pyarrow.compute as pc

    if len(pc.unique(ids)) != len(ids):
        counts = pc.value_counts(ids)
        twice = [v["values"] for v in counts.to_pylist() if v["counts"] > 1][:1]
        raise InputError("a user has two recommendation lists", source=source,
                         value=str(twice[0]) if twice else None)


def _encode(ids) -> tuple[np.ndarray, Any]:
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(ids)
    return _to_int(encoded.indices, 0), encoded.dictionary


def _to_int(values, null: int) -> np.ndarray:
    from ..core.arrow import to_numpy

    return to_numpy(values, np.int64, null=null)


def _to_bool(values) -> np.ndarray:
    from ..core.arrow import to_numpy

    return to_numpy(values, bool)


def _indices(values: np.ndarray):
    from ..core.arrow import indices

    return indices(values)
