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

from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import pairwise
from typing import Any

import numpy as np

from ..core.arrow import cast, compute, index_in, string_array, take, to_arrow
from ..core.order import float32_scores
from ..core.segments import tied_neighbours
from ..errors import InputError

from .columns import (as_integers, as_strings, check_choice, check_threshold, encode,
                      index_in_numbers, item_values, user_strings)
from .matching import matches, member
from .readers import RawLists, RawPairs, count_ties


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
    ``input_rows``, where kept (to resolve repeated items), are each row's row in the input.
    """

    users: Any  # Arrow string array, one distinct id per list
    offsets: np.ndarray  # int64, U + 1
    items: np.ndarray  # int64 item codes, in ranked order
    scores: np.ndarray  # float64, in ranked order
    ties: int  # rows whose score equals the previous row's in the same list
    source: str
    input_rows: np.ndarray | None = None  # int64, in ranked order; None: not kept

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
                        count_ties(self.scores[mask], offsets), self.source,
                        self.moved_input_rows(mask))

    def moved_input_rows(self, rows: np.ndarray) -> np.ndarray | None:
        """The input rows of ``rows`` (a mask or an order), where kept."""
        return None if self.input_rows is None else self.input_rows[rows]

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
        The recommendations as evaluated (one row per user and item, as the ``duplicates``
        convention keeps them; after training-item exclusion and ``max_depth``).
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
    beyond_depth : ndarray
        Per list, the rows ``max_depth`` cut from it (all 0 without a depth).
    tied_rows : int
        Rows in a tie group of their list, before the depth cut.
    counts : dict
        What was done to the input, for the diagnostics.
    predicted : bool
        Whether the lists' scores are the input's (predicted ratings for MAE and RMSE), not
        made from the list order (top-K lists, a rank column, a 2-D array).
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
    beyond_depth: np.ndarray
    tied_rows: int
    counts: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    predicted: bool = True

    @property
    def num_items(self) -> int:
        return len(self.item_ids)


def prepare(recs: RawLists, test: RawPairs, train: RawPairs | None = None,
            feature_items: Any = None, relevance: str = "threshold", threshold: float = 4,
            impute: str = "nonrelevant", exclude_train: bool = False,
            conventions: Any = None) -> Prepared:
    """Code everything against one user index and item catalogue, put tied items in the
    conventions' order, exclude training items if asked, apply the relevance policy, join
    the lists with the test data, keep one row per user and item (``duplicates``), order
    tie groups by grade (``ties="optimistic"``, ``"pessimistic"``), cut the lists at
    ``max_depth`` and apply the imputation policy: the depth cut comes after the other two,
    as in the engine."""
    from ..conventions import Conventions

    conv = conventions or Conventions()
    import pyarrow as pa

    check_choice("relevance", relevance, RELEVANCE_POLICIES)
    check_choice("impute", impute, IMPUTATION_POLICIES)
    threshold = check_threshold(threshold)
    counts: dict[str, Any] = {"recommendation_rows": int(recs.lengths.sum()) + recs.padding,
                              "padding_dropped": recs.padding,
                              "recommendation_users": len(recs.users)}
    # items: one catalogue for every input
    item_sources = [recs.items, test.items] + ([train.items] if train is not None else [])
    if feature_items is not None:
        item_sources.append(item_values(feature_items, "item features"))
    item_ids, item_codes = _catalogue(item_sources)
    rec_items, test_items = item_codes[0], item_codes[1]
    train_items = item_codes[2] if train is not None else None
    feature_codes = item_codes[-1] if feature_items is not None else None
    # users: list users first, then the others
    user_ids, numbers = recs.users, recs.numbers
    user_codes = []
    for pairs in [test] + ([train] if train is not None else []):
        codes, distinct = encode(pairs.users)
        ints = as_integers(distinct)  # integer ids on both sides: matched as numbers
        if ints is not None and numbers is not None:
            at = index_in_numbers(ints, numbers)
        else:  # as strings (integer ids: only the distinct ones become strings)
            distinct = user_strings(distinct, pairs.source)
            at = index_in(distinct, user_ids)
        new = np.flatnonzero(at < 0)
        if len(new):
            at[new] = len(user_ids) + np.arange(len(new))
            user_ids = pa.concat_arrays([user_ids, user_strings(take(distinct, new),
                                                                pairs.source)])
            numbers = np.concatenate([numbers, ints[new]]) \
                if ints is not None and numbers is not None else None
        user_codes.append(at[codes])
    offsets = np.zeros(len(recs.lengths) + 1, dtype=np.int64)
    np.cumsum(recs.lengths, out=offsets[1:])
    given = TopLists(recs.users, offsets, rec_items, recs.scores, recs.ties, recs.source)
    n_items = len(item_ids)
    train_pairs = None
    if train is not None:
        train_pairs = Interactions(user_codes[1], train_items, train.rating, train.source)
    elif exclude_train:
        raise InputError("exclude_train needs the training interactions (train=...)",
                         source="exclude_train")

    # test: duplicates, relevance policy
    test_pairs, dropped = _dedupe(Interactions(user_codes[0], test_items, test.rating,
                                               test.source), n_items)
    counts["test_rows"] = len(test.users)
    counts["test_users_without_items"] = test.empty_users
    counts["test_duplicates_dropped"] = dropped
    grade, rel_threshold = relevance_grades(test_pairs, relevance, threshold)
    lists = _arranged(given, item_ids, conv, train_pairs, exclude_train, counts)
    row_grade, row_rating, repeated = _joined(lists, test_pairs, grade, n_items)
    counts["run_duplicates_dropped"] = 0
    if repeated:  # rare: the lists again, their input rows kept, one row per user and item
        lists = _arranged(replace(given, input_rows=recs.input_row()), item_ids, conv,
                          train_pairs, exclude_train, counts)
        lists, counts["run_duplicates_dropped"] = drop_duplicates(lists, recs, item_ids, conv)
        row_grade, row_rating, _ = _joined(lists, test_pairs, grade, n_items)
    ties = tied_rows(lists.scores, lists.offsets) if lists.ties else 0
    if lists.ties and conv.ties in ("optimistic", "pessimistic"):
        lists, row_grade, row_rating = order_ties_by_grade(lists, row_grade, row_rating,
                                                           conv.ties == "optimistic")
    lists, row_grade, row_rating, beyond_depth = cut_at_depth(lists, row_grade, row_rating,
                                                              conv.max_depth)
    counts["rows_beyond_depth"] = int(beyond_depth.sum())

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
                        imputed_grade, train_pairs, rel_threshold, beyond_depth, ties,
                        counts, predicted=recs.predicted)
    prepared.feature_codes = feature_codes  # type: ignore[attr-defined]
    prepared.row_rating = row_rating  # type: ignore[attr-defined]
    if train is not None and not exclude_train and counts["recommended_seen_in_training"]:
        prepared.warnings.append(
            f"{counts['recommended_seen_in_training']} recommended items "
            f"({counts['users_recommended_seen_items']} users) were already seen in training and "
            "stay in the lists; exclude_train=True removes them")
    return prepared


def _arranged(lists: TopLists, item_ids: Any, conv: Any, train: Interactions | None,
              exclude_train: bool, counts: dict[str, Any]) -> TopLists:
    """The lists with ties in the conventions' order and, with ``exclude_train``, without
    the items each user interacted with in training (those items counted either way)."""
    lists = order_ties(lists, item_ids, conv)
    if train is None:
        return lists
    seen = member(lists, train.user, train.item, len(item_ids))
    counts["recommended_seen_in_training"] = int(seen.sum())
    counts["users_recommended_seen_items"] = int(
        len(np.unique(lists.segment()[seen])) if seen.any() else 0)
    counts["training_items_excluded"] = counts["recommended_seen_in_training"] \
        if exclude_train else 0
    return lists.keep(~seen) if exclude_train and seen.any() else lists


def _joined(lists: TopLists, test: Interactions, grade: np.ndarray, n_items: int
            ) -> tuple[np.ndarray, np.ndarray | None, int]:
    """Every recommended row's grade and rating (NaN where not judged), and the number of
    rows repeating an item earlier in their list."""
    # allocated first, so that the memory the join frees is reused later
    row_grade = np.full(lists.num_rows, np.nan)
    row_rating = np.full(lists.num_rows, np.nan) if test.rating is not None else None
    pair, rows, repeated = matches(lists, test.user, test.item, n_items)
    row_grade[rows] = grade[pair]
    if row_rating is not None:
        row_rating[rows] = test.rating[pair]
    return row_grade, row_rating, repeated


def drop_duplicates(lists: TopLists, recs: RawLists, item_ids: Any, conv: Any
                    ) -> tuple[TopLists, int]:
    """One row per user and item, as the engine keeps them (the ``duplicates`` convention):
    the ``"first"`` or ``"last"`` in the input's row order (``lists.input_rows``), or the
    highest score (``"max"``, then the first); the number of rows dropped. ``"error"``
    refuses the repeated item whose second copy comes first in the input, naming both places
    as ``recs`` (the lists as read) names them."""
    segment, items, row = lists.segment(), lists.items, lists.input_rows
    by_pair = np.lexsort((row, items, segment))  # each user's copies of an item together
    pair_segment, pair_item = segment[by_pair], items[by_pair]
    later = np.flatnonzero((pair_segment[1:] == pair_segment[:-1])
                           & (pair_item[1:] == pair_item[:-1])) + 1  # every copy but the first
    if conv.duplicates == "error":
        raise _repeated_item(lists, recs, item_ids, by_pair[later - 1], by_pair[later])
    if conv.duplicates == "max":  # the same groups, highest score first
        scores = float32_scores(lists.scores) if conv.score_precision == "float32" \
            else lists.scores
        by_pair = np.lexsort((row, -scores, items, segment))
    first = np.ones(len(by_pair), dtype=bool)
    first[later] = False
    chosen = by_pair[np.append(first[1:], True)] if conv.duplicates == "last" else \
        by_pair[first]
    keep = np.zeros(len(by_pair), dtype=bool)
    keep[chosen] = True
    return lists.keep(keep), len(later)


def _repeated_item(lists: TopLists, recs: RawLists, item_ids: Any, earlier: np.ndarray,
                   copies: np.ndarray) -> InputError:
    """The error for the repeated item whose second copy comes first in the input."""
    row = lists.input_rows
    at = int(np.argmin(row[copies]))
    (first, first_unit), (here, unit) = recs.place(int(row[earlier[at]])), \
        recs.place(int(row[copies[at]]))
    item = item_ids[int(lists.items[copies[at]])].as_py()
    user = lists.users[int(lists.segment()[copies[at]])].as_py()
    return InputError(f"item {item!r} appears twice for user {user!r} (first at {first_unit} "
                      f"{first}; keep one with the duplicates convention, e.g. "
                      "duplicates='first')", source=lists.source, line=here, unit=unit,
                      value=str(item))


def order_ties_by_grade(lists: TopLists, row_grade: np.ndarray, row_rating: np.ndarray | None,
                        best_first: bool) -> tuple[TopLists, np.ndarray, np.ndarray | None]:
    """The lists with each tie group ordered by grade, best first (``ties="optimistic"``) or
    worst first (``"pessimistic"``), as the engine orders them before the depth cut (which
    then keeps the rows the engine keeps), with their grades and ratings."""
    from ..core.lists import ties_by_grade

    tied, source = ties_by_grade(lists.scores, lists.offsets, row_grade, best_first)
    order = np.arange(lists.num_rows)
    order[tied] = source
    return (TopLists(lists.users, lists.offsets, lists.items[order], lists.scores[order],
                     lists.ties, lists.source, lists.moved_input_rows(order)),
            row_grade[order], None if row_rating is None else row_rating[order])


def tied_rows(scores: np.ndarray, offsets: np.ndarray) -> int:
    """Rows whose score equals a neighbour's in the same list (every row of a tie group)."""
    if len(scores) < 2:
        return 0
    same = tied_neighbours(scores, offsets)
    tied = np.zeros(len(scores), dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    return int(tied.sum())


def cut_at_depth(lists: TopLists, row_grade: np.ndarray, row_rating: np.ndarray | None,
                 depth: int | None):
    """The first ``depth`` rows of each list, with their grades and ratings, and the rows cut
    from each list (all 0 without a depth)."""
    if depth is None or int(lists.lengths.max(initial=0)) <= depth:
        return lists, row_grade, row_rating, np.zeros(lists.num_lists, dtype=np.int64)
    keep = lists.position() < depth
    cut = lists.keep(keep)
    return cut, row_grade[keep], None if row_rating is None else row_rating[keep], \
        lists.lengths - cut.lengths


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
        scores = float32_scores(scores)
        ties = count_ties(scores, lists.offsets)
    if ties == 0 or conv.ties == "input_order":
        return TopLists(lists.users, lists.offsets, lists.items, scores, ties, lists.source,
                        lists.input_rows)
    policy = conv.ties if conv.ties in ORDERING_TIES else "docid_desc"
    segment = lists.segment().astype(np.int32)
    run = Run(segment, cast(to_arrow(np.arange(lists.num_lists)), pa.string()),
              take(item_ids, lists.items), lists.source, None, "row", scores)
    order, _ = ranking_order(run, policy)
    return TopLists(lists.users, lists.offsets, lists.items[order], scores[order], ties,
                    lists.source, lists.moved_input_rows(order))


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
    top, below = _user_mean_parts(pairs)
    # rating − mean = d̄ − (m − rating): 0 exactly for a rating at the mean of equal ones
    return np.maximum(below[pairs.user] - (top[pairs.user] - rating), 0.0), ABOVE_ZERO


def _user_mean_parts(pairs: Interactions) -> tuple[np.ndarray, np.ndarray]:
    """Per user, the highest test rating m and the mean distance below it d̄ = mean(m − r):
    the mean rating is m − d̄ (NaN without a rating). A user whose ratings are all equal has
    d̄ = 0 exactly, so no rating is above the mean and the mean is the rating (a sum of n
    copies of 0.2, divided by n, is 0.19999999999999998: 0.2 would be above it)."""
    n = int(pairs.user.max()) + 1 if len(pairs) else 0
    top = np.full(n, -np.inf)
    np.maximum.at(top, pairs.user, pairs.rating)
    count = np.bincount(pairs.user, minlength=n)
    total = np.bincount(pairs.user, weights=top[pairs.user] - pairs.rating, minlength=n)
    below = np.full(n, np.nan)
    np.divide(total, count, out=below, where=count > 0)
    top[count == 0] = np.nan
    return top, below


def _user_mean(pairs: Interactions) -> np.ndarray:
    """Mean test rating per user (NaN without one), exact when the ratings are all equal."""
    top, below = _user_mean_parts(pairs)
    return top - below


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
    strings = [as_strings(c) for c in columns]
    dictionaries = [compute("unique", s) for s in strings]
    catalogue = compute("unique", pa.concat_arrays(dictionaries)) if dictionaries else \
        string_array([])
    codes = [index_in(s, catalogue) for s in strings]  # every id is in the catalogue
    return catalogue, codes
