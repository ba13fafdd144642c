"""Which recommended items are in a user's held-out set: per row of sorted lists, or by
one sort of (user, item) keys, block by block."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .inputs import TopLists


def member(lists: TopLists, user: np.ndarray, item: np.ndarray, n_items: int) -> np.ndarray:
    """For every recommended row: is its (user, item) among the given pairs?"""
    out = np.zeros(lists.num_rows, dtype=bool)
    out[matches(lists, user, item, n_items)[1]] = True
    return out


#: (user, item) pairs looked up at once, and a quarter of the list rows sorted at once:
#: blocks this size keep their temporaries in the processor's cache.
MATCH_BLOCK = 1 << 16


def matches(lists: TopLists, user: np.ndarray, item: np.ndarray, n_items: int
            ) -> tuple[np.ndarray, np.ndarray, int]:
    """Every (pair, list row) where the pair's user and item are a recommended row's (every
    copy of an item a list repeats), and the number of repeated rows in the lists.

    Each list is sorted on its own (the items, packed with their position in the list into
    one integer) and every pair is found by a binary search in its user's list; lists whose
    packed items do not fit in 63 bits, or whose lengths differ too much to lay out in one
    padded 2-D array, go through one sort of all (user, item) keys instead."""
    layout = row_sorted(lists, n_items)
    if layout is None:
        return matches_by_keys(lists, user, item, n_items)
    packed, bits, duplicates = layout
    n, width = packed.shape
    flat = packed.ravel()
    inside = np.flatnonzero(user < n) if len(user) and user.max() >= n else None
    found_pair, found_at = [], []
    for a in range(0, len(user) if inside is None else len(inside), MATCH_BLOCK):
        if inside is None:  # every pair's user has a list
            pair = np.arange(a, min(a + MATCH_BLOCK, len(user)))
            at = user[a:a + MATCH_BLOCK] * width
            target = item[a:a + MATCH_BLOCK].astype(packed.dtype)
        else:
            pair = inside[a:a + MATCH_BLOCK]
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


def row_sorted(lists: TopLists, n_items: int) -> tuple[np.ndarray, int, int] | None:
    """Every list's items sorted, one row per list: ``(item << bits) | position`` (int32 when
    that fits, else int64), rows shorter than the longest padded with the type's largest
    value; with ``bits`` and the number of repeated rows. None when the items do not fit, or
    when padding would more than double the rows."""
    n = lists.num_lists
    lengths = lists.lengths
    width = int(lengths.max(initial=0))
    if width == 0 or n * width > 2 * lists.num_rows + MATCH_BLOCK:
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
    per_block = max(1, 4 * MATCH_BLOCK // width)  # lists
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


def matches_by_keys(lists: TopLists, user: np.ndarray, item: np.ndarray, n_items: int
                    ) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`matches` through one stable sort of every recommended (user, item) key."""
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
