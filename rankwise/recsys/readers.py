"""Recommendations and interactions read from what recommender people hold (frames, Arrow
tables, dicts, 2-D arrays, runs) into raw columns: users, items, scores and list offsets."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..core.arrow import cast, index_in, string_array, take, to_arrow
from ..core.segments import starts_of_runs, tied_neighbours
from ..errors import InputError
from .columns import (Locate, as_integers, check_distinct, check_number, count_distinct_ids,
                      encode, frame_columns, hashed_codes, item_values, numeric_column,
                      run_starts, user_strings, user_values)


@dataclass
class RawLists:
    users: Any  # Arrow string array, distinct, one per list
    lengths: np.ndarray
    items: Any  # numpy int array or Arrow string array, in ranked order
    scores: np.ndarray
    ties: int
    source: str
    padding: int = 0
    numbers: np.ndarray | None = None  # the user ids as int64, when the input's are integers
    input_rows: np.ndarray | None = None  # each row's row in the input; None: its own position
    locate: Locate | None = None  # an input row's place in error messages; None: (row, "row")
    predicted: bool = True  # the scores are the input's (False: made from the list order)

    def input_row(self) -> np.ndarray:
        """Each row's row in the input (the rows are in ranked order)."""
        return np.arange(len(self.scores)) if self.input_rows is None else self.input_rows

    def place(self, row: int) -> tuple[Any, str]:
        """Where input row ``row`` is, as error messages name it: (place, unit)."""
        return (row, "row") if self.locate is None else self.locate(row)


@dataclass
class RawPairs:
    users: Any  # Arrow string array per row
    items: Any  # numpy int array or Arrow string array per row
    rating: np.ndarray | None
    source: str
    empty_users: int = 0  # users given with no item ({user: []}), counted, not evaluated


def read_recommendations(recs: Any, user: str = "user", item: str = "item",
                         score: str | None = "score", rank: str | None = None,
                         users: Any = None, pad: Any = None) -> RawLists:
    """Read recommendations in any accepted form (see the module docstring)."""
    from ..io.tables import Run

    if isinstance(recs, Run):
        lists = lists_from_scored(user_strings(take(recs.query_dict, recs.query_code),
                                               recs.source),
                                  item_values(recs.docs, recs.source), recs.score, recs.source)
        lists.locate = lambda row: (recs.location(row), recs.row_unit)
        return with_empty_lists(lists, string_array(list(recs.empty_queries)))
    if isinstance(recs, np.ndarray):
        return lists_from_array(recs, users, pad)
    if isinstance(recs, Mapping):
        return lists_from_mapping(recs)
    if isinstance(recs, (str, os.PathLike)):
        from ..io.trec import read_run

        return read_recommendations(read_run(recs))
    columns, names = frame_columns(recs, "recommendations", user, item, score, rank)
    source = f"recommendations {type(recs).__name__}"
    if columns is None:
        raise InputError("expected a DataFrame or Arrow table, {user: [items]}, {user: {item: "
                         "score}}, a 2-D array of item ids or a rankwise Run",
                         source="recommendations", value=type(recs).__name__)
    user_col = user_values(columns[user], source)
    item_col = item_values(columns[item], source)
    if names.get("score"):
        values = numeric_column(columns[names["score"]], source, "score")
        return lists_from_scored(user_col, item_col, values, source)
    if names.get("rank"):
        values = numeric_column(columns[names["rank"]], source, "rank")
        return replace(lists_from_scored(user_col, item_col, -values, source), predicted=False)
    return lists_in_input_order(user_col, item_col, source)


def read_interactions(data: Any, what: str, user: str = "user", item: str = "item",
                      rating: str | None = "rating") -> RawPairs:
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
                ratings.extend(check_number(v, what, u, i) for i, v in inner.items())
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
        return RawPairs(user_strings(users, source, user_key(users)),
                        item_values(items, source, item_key(users, items, bool(explicit))),
                        np.asarray(ratings, dtype=np.float64) if explicit else None, source,
                        sum(1 for inner in data.values() if not len(inner)))
    columns, names = frame_columns(data, what, user, item, rating, None, need_value=False)
    if columns is None:
        raise InputError("expected a DataFrame or Arrow table with user and item columns, "
                         "{user: [items]} or {user: {item: rating}}", source=what,
                         value=type(data).__name__)
    source = f"{what} {type(data).__name__}"
    ratings = numeric_column(columns[names["score"]], source, "rating") \
        if names.get("score") else None
    if ratings is not None and not np.isfinite(ratings).all():
        row = int(np.flatnonzero(~np.isfinite(ratings))[0])
        raise InputError("rating must be a finite number (drop or fill missing ratings first)",
                         source=source, line=row, unit="row", value=str(ratings[row]))
    return RawPairs(user_values(columns[user], source), item_values(columns[item], source),
                    ratings, source)


def lists_from_array(array: np.ndarray, users: Any, pad: Any) -> RawLists:
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
        user_ids = user_strings(users, "users")
        if len(user_ids) != n_users:
            raise InputError(f"users has {len(user_ids)} ids for {n_users} rows of "
                             "recommendations", source="users")
        check_distinct(user_ids, "users")
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
        if not (np.isfinite(items).all() and np.all(items == np.round(items))):
            raise InputError("item ids in a float array must be whole numbers (use pad= for "
                             "padding values)", source=source)
        items = items.astype(np.int64)

    def cell(row: int) -> tuple[str, str]:  # the array's row and column of an item
        at = row if pad is None else int(np.flatnonzero(mask)[row])
        return f"{at // k}, column {at % k}", "row"

    items = item_values(items, source, cell)
    return RawLists(user_ids, lengths, items, list_scores(lengths), 0, source, padding,
                    numbers, locate=cell, predicted=False)


def lists_from_mapping(recs: Mapping) -> RawLists:
    """``{user: [items best first]}`` or ``{user: {item: score}}``; a user given an empty
    list (``[]`` or ``{}`` in either form) keeps it, to be evaluated as an empty ranking."""
    source = "recommendations dict"
    for u, inner in recs.items():
        if isinstance(inner, (str, bytes)) or not hasattr(inner, "__len__"):
            raise InputError("expected {user: [items best first]} or {user: {item: score}}; this "
                             f"user maps to a {type(inner).__name__}", source=source,
                             line=repr(u), unit="key")
    scored = {isinstance(inner, Mapping) for inner in recs.values() if len(inner)}
    if len(scored) > 1:
        u = next(u for u, inner in recs.items() if len(inner) and not isinstance(inner, Mapping))
        raise InputError("mixes {item: score} and [items] values; give every list in one form",
                         source=source, line=repr(u), unit="key")
    if scored == {True}:
        users, items, scores = [], [], []
        for u, inner in recs.items():
            if len(inner):
                users.extend([u] * len(inner))
                items.extend(inner.keys())
                scores.extend(check_number(v, source, u, i) for i, v in inner.items())
        lists = lists_from_scored(user_strings(users, source, user_key(users)),
                                  item_values(items, source, item_key(users, items, True)),
                                  np.asarray(scores, dtype=np.float64), source)
        lists.locate = item_key(users, items, True)
        empty = [u for u, inner in recs.items() if not len(inner)]
        return with_empty_lists(lists, user_strings(empty, source, user_key(empty)))
    user_list, lengths, items = [], [], []
    for u, inner in recs.items():
        user_list.append(u)
        lengths.append(len(inner))
        items.extend(inner)
    lengths = np.asarray(lengths, dtype=np.int64)
    user_ids = user_strings(user_list, source, user_key(user_list))
    check_distinct(user_ids, source)
    locate = list_item_key(user_list, lengths)
    return RawLists(user_ids, lengths, item_values(items, source, locate), list_scores(lengths),
                    0, source, locate=locate,  # predicted: only empty {item: score} dicts
                    predicted=any(isinstance(inner, Mapping) for inner in recs.values()))


def with_empty_lists(lists: RawLists, users: Any) -> RawLists:
    """``lists`` and an empty list for each user of ``users`` (Arrow strings) that has none."""
    if len(users):
        users = take(users, np.flatnonzero(index_in(users, lists.users) < 0))
    if not len(users):
        return lists
    import pyarrow as pa

    all_users = pa.concat_arrays([lists.users, users])
    check_distinct(all_users, lists.source)
    return replace(lists, users=all_users, numbers=None,
                   lengths=np.concatenate([lists.lengths, np.zeros(len(users), np.int64)]))


def user_key(users: list) -> Locate:
    """The dict key of each row of a dict's users (one row per user and item, or per user)."""
    return lambda row: (repr(users[row]), "key")


def item_key(users: list, items: list, nested: bool) -> Locate:
    """The place of each row of a dict's items, one row per user and item: ``'u1'/'a'`` in
    ``{user: {item: value}}``, ``'u1'[2]`` (the position in the user's list) in ``{user:
    [items]}``."""
    def locate(row: int) -> tuple[str, str]:
        if nested:
            return f"{users[row]!r}/{items[row]!r}", "key"
        return f"{users[row]!r}[{row - users.index(users[row])}]", "key"

    return locate


def list_item_key(users: list, lengths: np.ndarray) -> Locate:
    """The place of each row of the items of ``{user: [items]}`` (one list per user)."""
    def locate(row: int) -> tuple[str, str]:
        ends = np.cumsum(lengths)
        at = int(np.searchsorted(ends, row, side="right"))
        return f"{users[at]!r}[{row - int(ends[at] - lengths[at])}]", "key"

    return locate


def lists_from_scored(user_col, item_col, score: np.ndarray, source: str,
                      input_rows: np.ndarray | None = None) -> RawLists:
    """Rows of (user, item, score) in any order -> lists best first (stable for ties).

    Rows already grouped by user (each user's rows together) keep their order of users, and
    rows already best first within each user are not moved at all. ``input_rows``: each given
    row's row in the input, when the rows were moved before (default: their positions); the
    lists keep them where they move the rows (:attr:`RawLists.input_rows`)."""
    if not np.isfinite(score).all():
        row = int(np.flatnonzero(~np.isfinite(score))[0])
        raise InputError("score must be a finite number", source=source, line=row, unit="row",
                         value=str(score[row]))
    n = len(score)
    starts, users = run_starts(user_col)
    order = None
    if len(starts) != count_distinct_ids(users):  # some user's rows are apart: bring them together
        codes, users = hashed_codes(user_col)  # users in order of first appearance
        order = np.argsort(codes, kind="stable")
        starts = starts_of_runs(codes[order])
        score = score[order]
    lengths = np.diff(np.append(starts, n)).astype(np.int64)
    within = best_first(score, starts, lengths)
    if within is not None:
        order = within if order is None else order[within]
        score = score[within]
    if order is not None:
        item_col = item_col[order] if isinstance(item_col, np.ndarray) else \
            take(item_col, order)
        input_rows = order if input_rows is None else input_rows[order]
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return RawLists(user_strings(users, source), lengths, item_col,
                    score.astype(np.float64, copy=False), count_ties(score, offsets), source,
                    numbers=as_integers(users), input_rows=input_rows)


def best_first(score: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
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


def lists_in_input_order(user_col, item_col, source: str) -> RawLists:
    """Rows without scores: each user's rows, in input order, are the list best first."""
    codes, _ = encode(user_col)
    n = len(codes)
    order = None
    if n and np.any(codes[1:] < codes[:-1]):
        order = np.argsort(codes, kind="stable")
        user_col = take(user_col, order)
        item_col = item_col[order] if isinstance(item_col, np.ndarray) else \
            take(item_col, order)
        codes = codes[order]
    lengths = np.diff(np.append(starts_of_runs(codes), n)).astype(np.int64)
    return replace(lists_from_scored(user_col, item_col, list_scores(lengths), source, order),
                   predicted=False)


def list_scores(lengths: np.ndarray) -> np.ndarray:
    """length − position for every row: positive, strictly decreasing within each list."""
    if len(lengths) and lengths[0] > 0 and (lengths == lengths[0]).all():
        k = int(lengths[0])
        return np.tile(np.arange(k, 0, -1, dtype=np.float64), len(lengths))
    n = int(lengths.sum())
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return (np.repeat(lengths, lengths) - (np.arange(n) - starts)).astype(np.float64)


def count_ties(score: np.ndarray, offsets: np.ndarray) -> int:
    """Rows whose score equals the previous row's in the same list (empty lists anywhere)."""
    return int(tied_neighbours(score, offsets).sum())
