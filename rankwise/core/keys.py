"""Integer keys for (query, document) pairs, so that joining, de-duplicating and checking
never hash millions of strings.

A document id is turned into a 64-bit fingerprint by vectorised arithmetic over its bytes;
a pair key puts the query code in the high bits and the top of the fingerprint in the low
bits. Keys only *find candidates*: every match they produce is verified on the exact id
strings, and if two different ids ever share a key the caller redoes the work with exact
keys (:func:`exact_pair_keys`, dense codes from hashing the strings). Ids are never replaced
by their fingerprints; results are exact either way.

Integer doc ids (which the Spark engine keeps as they are, see :func:`integer_ids`) need no
fingerprint: they go into the low bits of the key themselves (:func:`integer_pair_keys`), so
their keys are exact and nothing is verified.
"""

from __future__ import annotations

import numpy as np

from .arrow import all_equal, compute, take, to_numpy

_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xFF51AFD7ED558CCD)
_MIX2 = np.uint64(0xC4CEB9FE1A85EC53)
#: _BYTE_MASKS[k] keeps the low k bytes of a word (k = 0..8)
_BYTE_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)


class KeyCollision(Exception):
    """Two different ids got the same key: the caller must use exact keys."""


def string_buffers(strings) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, data) numpy views of an Arrow string array (one chunk, no nulls)."""
    import pyarrow as pa

    if pa.types.is_large_string(strings.type):
        width = np.int64
    else:
        width = np.int32
    offsets = np.frombuffer(strings.buffers()[1], dtype=width)[
        strings.offset:strings.offset + len(strings) + 1]
    data_buffer = strings.buffers()[2]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else \
        np.zeros(0, dtype=np.uint8)
    return offsets.astype(np.int64), data


def fingerprints(strings) -> np.ndarray:
    """A 64-bit fingerprint of every string: 8 bytes per step, vectorised over the rows.

    ``strings``: an Arrow string array or chunked array (without nulls).
    """
    return fingerprints_and_words(strings)[0]


def fingerprints_and_words(strings) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`fingerprints`, and the ids themselves as exact 64-bit words when they are short.

    The words (each id's bytes as one little-endian uint64, zero-padded) are returned when
    every id is at most 8 bytes long and none holds a NUL byte: then two ids are equal exactly
    when their words are, and comparing words verifies a fingerprint match without touching
    the strings. Otherwise the words are None.

    The rows are processed in slices of :data:`FINGERPRINT_BLOCK_ROWS`, so that the dozen
    temporaries of the arithmetic stay in the CPU cache instead of streaming through memory.
    """
    chunks = strings.chunks if hasattr(strings, "chunks") else [strings]
    n = sum(len(chunk) for chunk in chunks)
    fingerprint, words = np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.uint64)
    exact, at = True, 0
    for chunk in chunks:  # written in place: no per-chunk arrays to join afterwards
        for start in range(0, len(chunk), FINGERPRINT_BLOCK_ROWS):
            piece = chunk.slice(start, FINGERPRINT_BLOCK_ROWS)
            end = at + len(piece)
            exact &= _fingerprints(piece, fingerprint[at:end], words[at:end] if exact else None)
            at = end
    return fingerprint, words if exact else None


#: Rows fingerprinted at a time (their temporaries, 8 bytes a row each, fit in the cache).
FINGERPRINT_BLOCK_ROWS = 1 << 16


def _fingerprints(strings, out: np.ndarray, words: np.ndarray | None) -> bool:
    """Write the fingerprints of ``strings`` into ``out`` and, when asked and the ids are
    short (see :func:`fingerprints_and_words`), their words into ``words``; return whether
    the words were written."""
    offsets, data = string_buffers(strings)
    starts, lengths = offsets[:-1], np.diff(offsets)
    h = lengths.astype(np.uint64) * _MULTIPLIER
    longest = int(lengths.max()) if len(lengths) else 0
    shortest = int(lengths.min()) if len(lengths) else 0
    short = words is not None and longest <= 8 and \
        not np.any(data[int(offsets[0]):int(offsets[-1])] == 0)
    if longest == 0:
        if short:
            words[:] = 0
        _finalise(h, out)
        return short
    read = _word_reader(data, int(offsets[-1]))
    for step in range(0, longest, 8):
        remaining = lengths - step
        word = read(starts + step, remaining, shortest - step)
        if short:
            words[:] = word
        word ^= h
        word *= _MULTIPLIER
        word ^= word >> np.uint64(29)
        h = word if step == 0 or shortest > step else np.where(remaining > 0, word, h)
    _finalise(h, out)
    return short


def byte_prefixes(strings) -> tuple[np.ndarray, int]:
    """The first 8 bytes of every string as a big-endian uint64 (zero-padded), and the length
    of the longest string. For strings of at most 8 bytes without NUL bytes, comparing the
    prefixes compares the strings exactly as ``strcmp`` does."""
    if hasattr(strings, "chunks"):
        strings = strings.combine_chunks()
    offsets, data = string_buffers(strings)
    starts, lengths = offsets[:-1], np.diff(offsets)
    if len(lengths) == 0:
        return np.zeros(0, dtype=np.uint64), 0
    return _word_reader(data, int(offsets[-1]))(starts, lengths).byteswap(), int(lengths.max())


def _word_reader(data: np.ndarray, end: int):
    """A function (ascending positions, bytes left, optionally the fewest bytes left) -> the
    8 bytes at each position as a little-endian uint64, keeping only the bytes left of each
    string (the rest zero; nothing to mask when every string has 8 bytes or more left).

    Reads through an unaligned view of ``data`` (no copy); positions in the last 8 bytes read
    from a small zero-padded copy of that tail instead.
    """
    body = max(end - 7, 0)
    words = np.ndarray(shape=(body,), dtype="<u8", buffer=data, strides=(1,))
    tail = np.zeros(16, dtype=np.uint8)
    tail[: end - body] = data[body:end]
    tail_words = np.ndarray(shape=(9,), dtype="<u8", buffer=tail, strides=(1,))

    def read(at: np.ndarray, remaining: np.ndarray, shortest: int | None = None) -> np.ndarray:
        late = int(np.searchsorted(at, body))  # positions ascend: the late ones come last
        word = words[at] if late == len(at) else np.concatenate(
            [words[at[:late]], tail_words[np.clip(at[late:] - body, 0, 8)]])
        if shortest is None or shortest < 8:  # keep only the bytes left of each string
            word &= _BYTE_MASKS.take(np.clip(remaining, 0, 8))
        return word

    return read


def _finalise(h: np.ndarray, out: np.ndarray) -> None:
    """The murmur3 64-bit finaliser (spreads every input bit over the whole word), from
    ``h`` (overwritten) into ``out``."""
    h ^= h >> np.uint64(33)
    h *= _MIX1
    h ^= h >> np.uint64(33)
    h *= _MIX2
    np.bitwise_xor(h, h >> np.uint64(33), out=out)


def pair_keys(query_codes: np.ndarray, doc_fingerprints: np.ndarray, num_queries: int,
              code_map: np.ndarray | None = None, reuse: bool = False) -> np.ndarray:
    """int64 keys ordered by query: query code in the high bits, fingerprint below.

    ``code_map`` translates the rows' query codes first (``code_map[query_codes]``);
    ``reuse`` builds the keys in the fingerprints' own memory (which they overwrite).
    """
    query_bits = max(int(num_queries).bit_length(), 1)
    codes = np.arange(int(query_codes.max(initial=0)) + 1) if code_map is None else code_map
    high = np.asarray(codes).astype(np.uint64) << np.uint64(63 - query_bits)  # one per query
    shift = np.uint64(query_bits + 1)
    keys = np.right_shift(doc_fingerprints, shift, out=doc_fingerprints if reuse else None)
    keys |= high[query_codes]
    return keys.view(np.int64)


def integer_ids(docs) -> np.ndarray | None:
    """The doc ids as int64 when ``docs`` is an Arrow integer array (or chunked array) without
    nulls; else None (string ids)."""
    import pyarrow as pa

    from .arrow import to_numpy

    if not pa.types.is_integer(docs.type) or docs.null_count or \
            pa.types.is_uint64(docs.type):  # may not fit an int64
        return None
    return to_numpy(docs, np.int64)


def integer_pair_keys(query_codes: np.ndarray, doc_ids: np.ndarray, num_queries: int,
                      code_map: np.ndarray | None = None) -> np.ndarray:
    """Exact int64 keys for integer doc ids, laid out as :func:`pair_keys` lays fingerprint
    keys out for ``num_queries`` codes: query code in the high bits, the id itself below.

    Raises :class:`KeyCollision` when an id is negative or too large for the low bits (the
    caller then uses :func:`exact_pair_keys`).
    """
    query_bits = max(int(num_queries).bit_length(), 1)
    doc_bits = 63 - query_bits
    if len(doc_ids) and (int(doc_ids.min()) < 0 or int(doc_ids.max()) >> doc_bits):
        raise KeyCollision
    codes = np.arange(int(query_codes.max(initial=0)) + 1) if code_map is None else code_map
    high = np.asarray(codes).astype(np.int64) << np.int64(doc_bits)
    keys = high[query_codes]
    keys |= doc_ids
    return keys


def exact_pair_keys(*pairs) -> list[np.ndarray]:
    """Dense exact codes for several (query ids per row, doc ids per row) Arrow pairs, sharing
    one code space: hashes the strings (slower, used after a fingerprint collision)."""
    import pyarrow as pa

    from .arrow import compute, to_numpy

    joined = [compute("binary_join_element_wise", q, _single(d), "\x00") for q, d in pairs]
    codes = compute("dictionary_encode", pa.chunked_array(joined)).combine_chunks().indices
    codes = to_numpy(codes, np.int64)
    bounds = np.cumsum([0] + [len(j) for j in joined])
    return [codes[bounds[i]:bounds[i + 1]] for i in range(len(joined))]


def _single(strings):
    """One Arrow string array from an array or a chunked array (integer ids as their decimal
    strings)."""
    import pyarrow as pa

    from .arrow import cast

    strings = strings.combine_chunks() if hasattr(strings, "chunks") else strings
    return cast(strings, pa.string()) if pa.types.is_integer(strings.type) else strings


def equal_docs(docs_a, rows_a: np.ndarray, docs_b, rows_b: np.ndarray):
    """Arrow booleans: is the doc id of ``rows_a`` in ``docs_a`` that of ``rows_b`` in
    ``docs_b``?"""
    return compute("equal", take(docs_a, rows_a), take(docs_b, rows_b))


def same_docs_mask(docs_a, rows_a: np.ndarray, docs_b, rows_b: np.ndarray,
                   words_a: np.ndarray | None = None, words_b: np.ndarray | None = None
                   ) -> np.ndarray:
    """Per pair: is the doc id of ``rows_a`` in ``docs_a`` that of ``rows_b`` in ``docs_b``?
    Compared on the exact words of short ids when both sides have them, else as strings."""
    if words_a is not None and words_b is not None:
        return words_a[rows_a] == words_b[rows_b]
    return to_numpy(equal_docs(docs_a, rows_a, docs_b, rows_b), bool)


def same_docs(docs_a, rows_a: np.ndarray, docs_b, rows_b: np.ndarray,
              words_a: np.ndarray | None = None, words_b: np.ndarray | None = None) -> bool:
    if len(rows_a) == 0:
        return True
    if words_a is not None and words_b is not None:
        return bool(np.array_equal(words_a[rows_a], words_b[rows_b]))
    return all_equal(take(docs_a, rows_a), take(docs_b, rows_b))
