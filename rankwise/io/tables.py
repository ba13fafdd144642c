"""The in-memory forms of judgments and rankings: columns with exact ids.

Query ids are dictionary-encoded strings (``query_code`` per row into the small
``query_dict``); doc ids stay one Arrow column (``docs``), exact, never hashed away: strings,
or int64 where the input holds integers (Parquet, Arrow, pandas, numpy), which the one pass
keys as they are (see :func:`rankwise.core.keys.integer_ids`) and which every output shows as
their decimal strings, so the numbers and the output are those of the same ids as strings.
Every reader and converter produces one of these two classes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Sequence, TypeVar

import numpy as np

from ..core.arrow import (cast, compute, starts_of_equal_runs, string_array, take, to_arrow,
                          to_numpy)
from ..core.segments import distinct, segment_of, starts_of_runs
from ..errors import InputError


@dataclass(frozen=True, eq=False)
class _Encoded:
    query_code: np.ndarray  # int32, one per row, index into query_dict
    query_dict: Any  # pyarrow string array of distinct query ids
    docs: Any  # Arrow string or int64 array (or chunked array): the doc id of every row
    source: str  # file name or a description of the in-memory object
    row_lines: np.ndarray | None  # 1-based line (or row) of each row in the source; None: row + 1
    row_unit: str  # "line" for files, "row"/"key" for in-memory inputs

    def __len__(self) -> int:
        return int(self.query_code.shape[0])

    @property
    def num_queries(self) -> int:
        """Number of distinct query ids."""
        return len(self.query_dict)

    def query_ids(self) -> list[str]:
        """The distinct query ids (Python strings)."""
        return self.query_dict.to_pylist()

    def location(self, row: int) -> int | str:
        """Line (files), row (frames) or ``'query'/'doc'`` key (dicts) of a given row, as used
        in error messages."""
        if self.row_unit == "key":
            return "{!r}/{!r}".format(*self.ids_at(row))
        if self.row_lines is None:
            return int(row) + (1 if self.row_unit == "line" else 0)
        return int(self.row_lines[row])

    def error_at(self, row: int, message: str, value: str | None = None) -> InputError:
        """An :class:`InputError` pointing at ``row``."""
        return InputError(message, source=self.source, line=self.location(row), value=value,
                          unit=self.row_unit)

    def ids_at(self, row: int) -> tuple[str, str]:
        """(query id, doc id) of one row."""
        return (self.query_dict[int(self.query_code[row])].as_py(), str(self.docs[int(row)]))

    def with_string_docs(self):
        """The same rows with the doc ids as strings (integers become their decimal strings)."""
        from dataclasses import replace

        docs = string_docs(self.docs)
        return self if docs is self.docs else replace(self, docs=docs)

    def lines_of(self, rows: np.ndarray) -> np.ndarray:
        """The line (or row) of each of ``rows`` in the source, as :meth:`location` gives it."""
        if self.row_lines is not None:
            return self.row_lines[rows]
        return rows + (1 if self.row_unit == "line" else 0)


@dataclass(frozen=True, eq=False)
class Qrels(_Encoded):
    """Relevance judgments: (query, doc, grade) rows.

    Grades are float64 (TREC files hold integers; rating data may hold fractions). A negative
    grade means "in the pool but not judged", as in trec_eval.
    """

    grade: np.ndarray = None  # type: ignore[assignment]
    empty_queries: tuple[str, ...] = ()  # queries given with no judgment ({qid: {}} in a dict)
    skipped_files: tuple[str, ...] = ()  # as Run's

    @classmethod
    def from_columns(cls, queries: Any, docs: Any, grades: Any, source: str = "qrels",
                     row_lines: np.ndarray | None = None, row_unit: str = "row") -> "Qrels":
        """Build from three equal-length columns (sequences, numpy or Arrow arrays)."""
        q = _query_codes(queries, source, row_lines, row_unit)
        d = _doc_ids(docs, source)
        grade = _numeric(grades, source, "relevance", row_unit)
        _same_length(source, q[0], d, grade)
        return check_grades(cls(q[0], q[1], d, source, row_lines, row_unit, grade))


@dataclass(frozen=True, eq=False)
class Run(_Encoded):
    """A ranking: (query, doc, score) rows, higher score = ranked earlier."""

    score: np.ndarray = None  # type: ignore[assignment]
    name: str = "run"
    rank: np.ndarray | None = None  # the rank column of a TREC file (int32), when it has one
    empty_queries: tuple[str, ...] = ()  # queries given with no document ({qid: {}} in a dict)
    # a Parquet folder's files holding rows but skipped for their names (_ or .), described
    # as "path (N rows)": counted in the diagnostics
    skipped_files: tuple[str, ...] = ()

    def subset(self, rows: np.ndarray) -> "Run":
        """The given rows only (in that order), still pointing at their original lines."""
        from dataclasses import replace

        return replace(self, query_code=self.query_code[rows], docs=take(self.docs, rows),
                       score=self.score[rows], row_lines=self.lines_of(rows),
                       rank=None if self.rank is None else self.rank[rows])

    @classmethod
    def from_columns(cls, queries: Any, docs: Any, scores: Any, name: str = "run",
                     source: str = "run", row_lines: np.ndarray | None = None,
                     row_unit: str = "row") -> "Run":
        """Build from three equal-length columns (sequences, numpy or Arrow arrays); a
        ``name`` that is not a string is named by its string."""
        q = _query_codes(queries, source, row_lines, row_unit)
        d = _doc_ids(docs, source)
        score = _numeric(scores, source, "score", row_unit)
        _same_length(source, q[0], d, score)
        run = cls(q[0], q[1], d, source, row_lines, row_unit, score, str(name))
        check_finite_scores(run)
        return run


def _query_codes(queries: Any, source: str, row_lines: np.ndarray | None, row_unit: str
                 ) -> tuple[np.ndarray, Any]:
    """(code per row, distinct ids) of a column of query ids (:func:`encode_queries`);
    raises :class:`InputError` naming the first row of a missing or empty id. Emptiness is
    looked for among the distinct ids only, once they are encoded."""
    codes, ids = encode_queries(id_strings(queries, source, "query", dictionary=True,
                                         check_empty=False))
    empty = _first_empty(ids)
    if empty is not None:
        row = int(np.argmax(codes == empty))
        line = repr("") if row_unit == "key" else int(row_lines[row]) \
            if row_lines is not None else row + (row_unit == "line")
        raise InputError("empty query id: an id must hold at least one character, as in a "
                         "TREC file", source=source, line=line, unit=row_unit)
    return codes, ids


def check_grades(qrels: Qrels) -> Qrels:
    """Raise on the first missing (NaN, null) or infinite grade; return ``qrels``. A text
    file's grades are integers by their parse; frames, dicts and Parquet may hold any number
    (a negative grade means "in the pool but not judged")."""
    _check_finite(qrels, qrels.grade, "relevance grade")
    return qrels


def check_finite_scores(run: Run) -> None:
    """Raise on the first missing (NaN, null) or infinite score."""
    _check_finite(run, run.score, "score")


def _check_finite(table: _Encoded, values: np.ndarray, what: str) -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.argmax(bad))
        raise table.error_at(row, f"{what} must be a finite number (NaN and null are "
                             "missing values)", str(values[row]))


def string_docs(docs):
    """Doc ids (an Arrow column of strings or integers) as an Arrow string column: integers
    become their decimal strings; strings are returned as they are."""
    import pyarrow as pa

    return docs if pa.types.is_string(docs.type) else cast(docs, pa.string())


def doc_strings(docs) -> list[str]:
    """Doc ids (an Arrow column of strings or integers) as Python strings, for output."""
    return string_docs(docs).to_pylist()


def _doc_ids(values: Any, source: str):
    """A column of doc ids as Arrow int64 when it holds integers (without nulls; unsigned 64-bit
    ones may not fit and become strings), else as :func:`id_strings` makes it."""
    import pyarrow as pa

    values = id_arrow(values, source, "doc")
    kind = values.type
    if pa.types.is_integer(kind) and not pa.types.is_uint64(kind) and not values.null_count:
        return values if pa.types.is_int64(kind) else cast(values, pa.int64())
    return id_strings(values, source, "doc")


def id_arrow(values: Any, source: str, what: str):
    """Ids ``values`` as an Arrow array (Arrow arrays and chunked arrays as they are); Python
    integers beyond 64 bits as :func:`python_integers` makes them."""
    import pyarrow as pa

    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values
    try:
        return to_arrow(values)  # strings and numbers on their buffers, the rest as Arrow does
    except OverflowError:  # Python integers beyond 64 bits
        values = list(values)
        if all(v is None or type(v) is int for v in values):
            return python_integers(values, source, f"the {what} ids")
        raise InputError(f"{what} ids must be strings or integers, of one kind",
                         source=source) from None
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise InputError(f"{what} ids must be strings or integers ({exc})", source=source) from None
    except UnicodeEncodeError:
        raise not_unicode(list(values), source, f"{what} id") from None


def not_unicode(values: list, source: str, what: str) -> InputError:
    """The refusal of the first of ``values`` that is a string holding a lone surrogate
    (what decoding bytes that are not UTF-8 with ``errors="surrogateescape"`` makes, as
    ``os.fsdecode`` does), which no UTF-8 text can hold, naming its row."""
    row = next(i for i, v in enumerate(values) if isinstance(v, str) and not _encodes(v))
    return InputError(f"{what} is not valid Unicode text (it holds a lone surrogate, as text "
                      "decoded from bytes that are not UTF-8 with errors='surrogateescape' "
                      "does)", source=source, line=row, unit="row", value=values[row])


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


#: Digits of the widest integer an Arrow decimal column holds (decimal256).
DECIMAL_DIGITS = 76


def python_integers(values: list, source: str, where: str):
    """Python integers (None: missing), some beyond 64 bits, as an Arrow decimal column of
    scale 0 (decimal128 where they fit, else decimal256), which ids read as their decimal
    strings (as a dict's integer keys are) and values as numbers. An integer of more than
    76 digits raises :class:`InputError` naming its row."""
    import pyarrow as pa

    widest = max((abs(v) for v in values if v is not None), default=0)
    if widest >= 10 ** DECIMAL_DIGITS:
        row = next(i for i, v in enumerate(values) if v is not None
                   and abs(v) >= 10 ** DECIMAL_DIGITS)
        raise InputError(f"an integer of more than {DECIMAL_DIGITS} digits in {where}, "
                         "beyond Arrow's widest decimal: give such ids as strings",
                         source=source, line=row, unit="row", value=str(values[row]))
    kind = pa.decimal128(38, 0) if widest < 10 ** 38 else pa.decimal256(DECIMAL_DIGITS, 0)
    return pa.array(values, kind)


def id_strings(values: Any, source: str, what: str, dictionary: bool = False,
             check_empty: bool = True):
    """A column of ids as an Arrow string array, or chunked array when given one (its chunks
    kept: no copy); integers (decimals of scale 0 too) become their decimal strings. A
    missing (null) id raises :class:`InputError` naming its row, an empty one too unless
    ``check_empty`` is False (the caller then checks the distinct ids, as
    :func:`_query_codes` does). With ``dictionary`` and not ``check_empty``, a column
    dictionary-encoded in every chunk (as Parquet's string columns read) stays encoded, for
    :func:`encode_queries`."""
    import pyarrow as pa

    values = id_arrow(values, source, what)
    if dictionary and pa.types.is_dictionary(values.type) and \
            pa.types.is_string(values.type.value_type) and not values.null_count \
            and not check_empty:
        return values
    if isinstance(values, pa.Array):
        return _string_chunk(values, source, what, 0, check_empty)
    chunks, at = [], 0
    for chunk in values.chunks:
        chunks.append(_string_chunk(chunk, source, what, at, check_empty))
        at += len(chunk)
    return pa.chunked_array(chunks, type=pa.string())


def _string_chunk(values, source: str, what: str, first_row: int, check_empty: bool = True):
    """One Arrow array of ids as strings (``first_row``: its first row in the column)."""
    import pyarrow as pa

    if not len(values):  # no row: its type (pandas' float64 of an empty frame) says nothing
        return string_array([])
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if values.null_count:
        row = first_row + int(np.flatnonzero(to_numpy(values.is_null(), bool))[0])
        raise InputError(f"missing {what} id", source=source, line=row, unit="row")
    kind = values.type
    if pa.types.is_integer(kind) or is_whole_decimal(kind):
        return cast(values, pa.string())  # never empty
    if pa.types.is_large_string(kind) or _is_string_view(kind):
        values = cast(values, pa.string())
    elif not pa.types.is_string(kind):
        raise _not_ids(values, source, what, first_row)
    empty = _first_empty(values) if check_empty else None
    if empty is not None:
        raise _empty_id(what, source, first_row + empty)
    return values


#: Rows compared at a time by :func:`_first_empty` (its temporary stays in the CPU cache).
EMPTY_BLOCK_ROWS = 1 << 18


def _first_empty(strings) -> int | None:
    """The first row of an Arrow string array (no nulls) holding the empty string, or None:
    its offsets compared with themselves shifted by one, a block of rows at a time (about
    4 ms for 10M rows)."""
    n = len(strings)
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32, count=n + 1,
                            offset=4 * strings.offset)
    same = np.empty(min(n, EMPTY_BLOCK_ROWS), dtype=bool)
    for start in range(0, n, EMPTY_BLOCK_ROWS):
        size = min(EMPTY_BLOCK_ROWS, n - start)
        np.equal(offsets[start + 1:start + 1 + size], offsets[start:start + size],
                 out=same[:size])
        if same[:size].any():
            return start + int(np.argmax(same[:size]))
    return None


def _empty_id(what: str, source: str, row: int) -> InputError:
    return InputError(f"empty {what} id: an id must hold at least one character, as in a TREC "
                      "file", source=source, line=row, unit="row")


def _not_ids(values, source: str, what: str, first_row: int) -> InputError:
    """The refusal of an id column of another type than strings and integers: for floats,
    the first row that holds no integer, or how to use integral ones."""
    import pyarrow as pa

    kind = values.type
    if pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        if pa.types.is_floating(kind):
            numbers = to_numpy(values, np.float64)
            fraction = np.flatnonzero(~np.isfinite(numbers) | (numbers != np.trunc(numbers)))
            if len(fraction):
                row = int(fraction[0])
                return InputError(f"{what} ids must be strings or integers (got a column of "
                                  f"{kind}, holding {float(numbers[row])!r} here)",
                                  source=source, line=first_row + row, unit="row")
        return InputError(f"{what} ids must be strings or integers (got a column of {kind}); "
                          "cast the column to integers (or strings) to use it as ids",
                          source=source)
    return InputError(f"{what} ids must be strings or integers", source=source,
                      value=str(kind))


def is_string_type(kind) -> bool:
    """Whether an Arrow type is one of strings: string, large_string or string_view."""
    import pyarrow as pa

    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or _is_string_view(kind)


def is_whole_decimal(kind) -> bool:
    """Whether an Arrow type is a decimal of scale 0: integers beyond 64 bits (Python's
    integers, pandas object columns and polars Int128 are read so), ids as their decimal
    strings."""
    import pyarrow as pa

    return pa.types.is_decimal(kind) and kind.scale == 0


def _is_string_view(kind) -> bool:
    """Whether an Arrow type is string_view (pyarrow 16 on; polars may give it)."""
    import pyarrow as pa

    return hasattr(pa.types, "is_string_view") and pa.types.is_string_view(kind)


def encode_queries(ids) -> tuple[np.ndarray, Any]:
    """(int32 code per row, distinct ids) for a column of query ids (array or chunked array).

    Rows of one query are nearly always consecutive, so the column is first cut into runs of
    equal ids (one vectorised comparison) and only the first id of each run is hashed.
    """
    import pyarrow as pa

    n = len(ids)
    if n == 0:
        return np.zeros(0, dtype=np.int32), string_array([])
    if pa.types.is_dictionary(ids.type):
        return _encode_dictionary_queries(ids)
    starts = starts_of_equal_runs(ids)
    heads = take(ids, starts)
    encoded = compute("dictionary_encode",
                      heads.combine_chunks() if hasattr(heads, "chunks") else heads)
    codes = to_numpy(encoded.indices, np.int32)
    return np.repeat(codes, np.diff(np.append(starts, n))), encoded.dictionary


def encode_queries_by_part(ids, bounds: np.ndarray) -> tuple[np.ndarray, list]:
    """:func:`encode_queries` of each part ``ids[bounds[i]:bounds[i + 1]]`` (non-empty parts
    of a column of string ids), for all the parts at once: every row's code within its part
    (int32) and each part's distinct ids, in the order they first appear in it.

    The runs of equal ids, cut at the part bounds too, are hashed once; each run's id is then
    numbered within its part by where the (part, id) pair first appears.
    """
    starts = distinct(np.concatenate([starts_of_equal_runs(ids), bounds[:-1]]))
    heads = take(ids, starts)
    encoded = compute("dictionary_encode",
                      heads.combine_chunks() if hasattr(heads, "chunks") else heads)
    part = segment_of(bounds, starts)
    indices = to_numpy(encoded.indices, np.int64)
    key = part * len(encoded.dictionary) + indices
    by_key = np.argsort(key, kind="stable")  # equal pairs together, the first one first
    new = np.ones(len(key), dtype=bool)
    new[1:] = key[by_key[1:]] != key[by_key[:-1]]
    pair = np.empty(len(key), dtype=np.int64)  # the (part, id) pair of each run
    pair[by_key] = np.cumsum(new) - 1
    first = np.sort(by_key[new])  # each pair's first run: part by part, in order
    pair_at = np.empty(len(first), dtype=np.int64)
    pair_at[pair[first]] = np.arange(len(first))
    part_start = np.searchsorted(part[first], np.arange(len(bounds)))  # each part's first pair
    local = pair_at[pair] - part_start[part]
    codes = np.repeat(local.astype(np.int32), np.diff(np.append(starts, bounds[-1])))
    ids_first = take(encoded.dictionary, indices[first])
    return codes, [ids_first.slice(a, b - a) for a, b in zip(part_start[:-1], part_start[1:])]


def _encode_dictionary_queries(ids) -> tuple[np.ndarray, Any]:
    """:func:`encode_queries` for dictionary-encoded ids (string values, no nulls): runs of
    equal ids are found on the integer indices, and only the first id of each run is read."""
    import pyarrow as pa

    heads, lengths = [], []
    for chunk in ids.chunks if hasattr(ids, "chunks") else [ids]:
        if not len(chunk):
            continue
        at = to_numpy(chunk.indices, np.int64)
        starts = starts_of_runs(at)
        heads.append(take(chunk.dictionary, at[starts]))
        lengths.append(np.diff(np.append(starts, len(at))))
    encoded = compute("dictionary_encode", pa.concat_arrays(heads))
    codes = to_numpy(encoded.indices, np.int32)
    return np.repeat(codes, np.concatenate(lengths)), encoded.dictionary


def _numeric(values: Any, source: str, what: str, unit: str) -> np.ndarray:
    """A column of grades or scores as float64. An Arrow column must hold numbers (integers,
    floats, decimals; nulls, which become NaN): booleans, strings, dates and nested values
    are refused, as a file's or a dict's are."""
    import pyarrow as pa

    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        if not len(values):
            return np.zeros(0)
        if pa.types.is_dictionary(values.type):  # pandas' categorical of numbers
            values = cast(values, values.type.value_type)
        kind = values.type
        if not values.null_count and (pa.types.is_floating(kind) or pa.types.is_integer(kind)) \
                and not pa.types.is_float16(kind):
            return to_numpy(values, np.float64)  # on the buffers: no copy through pandas
        if not (pa.types.is_floating(kind) or pa.types.is_integer(kind)
                or pa.types.is_decimal(kind) or pa.types.is_null(kind)):
            hint = "; cast booleans to 0 and 1 to use them as numbers" \
                if pa.types.is_boolean(kind) else ""
            raise InputError(f"{what} must be a number (got a column of {kind}{hint})",
                             source=source)
    return as_floats(values, source, what, unit).reshape(-1)


def as_floats(values: Any, source: str, what: str, unit: str = "row") -> np.ndarray:
    """``values`` (any shape) as float64, raising :class:`InputError` on the first value that
    is not a number (its row counted in the flattened values). An integer beyond a double's
    range becomes an infinity, as a file's ``1e400`` reads (and is refused where values
    must be finite, naming its row or key)."""
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        objects = given_array(values.to_pylist() if hasattr(values, "to_pylist") else values,
                              source, f"{what} must be an array of numbers", dtype=object)
        out = np.empty(objects.size)
        for i, v in enumerate(objects.reshape(-1).tolist()):
            try:
                out[i] = as_double(v)
            except (TypeError, ValueError):
                raise InputError(f"{what} must be a number", source=source, line=i, value=repr(v),
                                 unit=unit) from None
        return out.reshape(objects.shape)


def given_array(values: Any, source: str, expected: str, dtype: Any = None) -> np.ndarray:
    """``np.asarray(values, dtype)``, or an :class:`InputError` naming ``source`` and what was
    ``expected`` where no array can be made of them: ragged nested lists, a bfloat16 tensor,
    an empty polars DataFrame (older polars raise numpy's "need at least one array to
    concatenate")."""
    try:
        return np.asarray(values, dtype=dtype)
    except (ValueError, TypeError) as exc:
        raise InputError(f"{expected} ({exc})", source=source) from None


def as_double(value: Any) -> float:
    """A number as a double; an integer beyond a double's range as an infinity of its sign."""
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def is_missing(value: Any) -> bool:
    """Whether an id is missing: None, NaN, or pandas' NA or NaT (as a frame's null).

    >>> is_missing(None), is_missing(float("nan")), is_missing(np.float32("nan")), is_missing("a")
    (True, True, True, False)
    """
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def is_number(value: Any) -> bool:
    """Whether a value is an integer or a float (of Python or numpy), not a boolean."""
    return isinstance(value, (int, float, np.integer, np.floating)) \
        and not isinstance(value, (bool, np.bool_))


def is_number_value(value: Any) -> bool:
    """Whether a value (of a dict, or of an object array) is a number: Python's or numpy's
    integers and floats (a 0-d array of them too), or another number ``float`` takes
    (``Decimal``, ``Fraction``); not a boolean, and not numpy's complex numbers, dates,
    durations or strings, which ``float`` would take as their real part, their count of
    days or their text.

    >>> is_number_value(np.float32(0.5)), is_number_value(np.datetime64("2020-01-01"))
    (True, False)
    """
    if isinstance(value, (np.ndarray, np.generic)):
        return value.ndim == 0 and value.dtype.kind in "iuf"
    return not isinstance(value, (bool, complex)) and (
        isinstance(value, (int, float)) or hasattr(value, "__float__"))


def is_integer(value: Any) -> bool:
    """Whether a value is an integer (of Python or numpy), not a boolean."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _same_length(source: str, *columns: Sequence[Any]) -> None:
    lengths = {len(c) for c in columns}
    if len(lengths) > 1:
        raise InputError(f"columns have different lengths {sorted(lengths)}", source=source)


Item = TypeVar("Item")


def numbered_names(named: Iterable[tuple[str, Item]]) -> Iterator[tuple[str, Item]]:
    """Each ``(name, item)``, a name seen before numbered ``name#2``, ``name#3``...: two runs
    with one tag stay apart in one result."""
    seen: dict[str, int] = {}
    for name, item in named:
        if name in seen:
            seen[name] += 1
            name = f"{name}#{seen[name]}"
        else:
            seen[name] = 1
        yield name, item
