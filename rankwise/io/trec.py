"""Readers and writers for TREC text files: qrels (``qid iter docid rel``) and runs
(``qid Q0 docid rank score tag``), plain or gzip-compressed.

Accepted as trec_eval 10 accepts them: fields separated by any mix of spaces and tabs, LF or
CRLF line ends, blank lines, and comment lines whose first non-blank character is ``#``. A
carriage return with text after it on its line ends a line (:func:`end_lines_at_lone_crs`).
The fast path parses with pyarrow.csv straight into dictionary codes; files that need it are
normalised first. Any bad line raises :class:`~rankwise.errors.InputError` naming the file,
the line, the offending text and what was expected.
"""

from __future__ import annotations

import gzip
import os
import re
import stat
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..core.arrow import cast, to_numpy
from ..core.memory import check_fits
from .tables import Qrels, Run, check_finite_scores, encode_queries, encode_queries_by_part

RUN_FIELDS = ("qid", "Q0", "docid", "rank", "score", "tag")
QRELS_FIELDS = ("qid", "iter", "docid", "rel")
#: pyarrow.csv parses a file in blocks, side by side on the cores: a file under SMALL_FILE
#: bytes is cut into PARSE_BLOCKS blocks of at least MIN_BLOCK (the 10k x 100 run, 37 MB:
#: 16 MB blocks, three of them, 0.07-0.08 s; 2 MB blocks 0.05 s), a larger one into blocks
#: of LARGE_BLOCK (smaller blocks were slower at 118 and 376 MB).
PARSE_BLOCKS = 16
MIN_BLOCK, LARGE_BLOCK = 1 << 20, 1 << 24
SMALL_FILE = 64 << 20


def read_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read a TREC qrels file (``qid iter docid rel``; rel an integer grade).

    Examples
    --------
    >>> import rankwise, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "qrels.txt")
    >>> _ = open(p, "w").write("q1 0 d1 2\\nq1 0 d2 0\\n")
    >>> q = rankwise.read_qrels(p)
    >>> len(q), q.grade.tolist()
    (2, [2.0, 0.0])
    """
    import pyarrow as pa

    name = str(path)
    grade_texts = pa.dictionary(pa.int32(), pa.string())
    table, lines, _, codes, queries = _parse(
        name, QRELS_FIELDS, {"qid": pa.string(), "docid": pa.string(), "rel": grade_texts},
        ("qid", "docid", "rel"))
    grade = _grade_values(table.column("rel"))
    return Qrels(codes, queries, table.column("docid"), name, lines, "line", grade)


def read_run(path: str | os.PathLike[str], name: str | None = None) -> Run:
    """Read a TREC run file (``qid Q0 docid rank score tag``).

    Documents are ordered by score, as trec_eval does; the rank column is kept only to report
    queries whose ranks contradict their scores (it is dropped, and not checked, when it does not
    hold integers).
    Text after the sixth field is ignored, as trec_eval ignores it.
    The run's name is ``name``, else the tag of its first line.
    """
    source = str(path)
    types = run_column_types()
    table, lines, first, codes, queries = _parse(source, RUN_FIELDS, types, tuple(types),
                                                 optional=("rank",))
    score = to_numpy(table.column("score"), np.float64)
    rank = rank_numbers(table.column("rank")) if "rank" in table.column_names else None
    run = Run(codes, queries, table.column("docid"), source, lines, "line", score,
              name_of_run(name, first, source), rank)
    check_finite_file_scores(run)
    return run


def check_finite_file_scores(run: Run) -> None:
    """:func:`~.tables.check_finite_scores` on a run read from a TREC file, the refused score
    quoted as the file writes it (``1e400``, ``+NaN``, where the number read is inf, nan)."""
    try:
        check_finite_scores(run)
    except InputError as error:
        fields = _FIELD_GAP.split(file_line(run.source, error.line).strip(" \t\r"))
        score = fields[4] if len(fields) > 4 else error.value
        raise InputError(error.reason, source=error.source, line=error.line, value=score,
                         unit=error.unit) from None


def file_line(source: str, number: int) -> str:
    """Line ``number`` of a TREC file, numbered as the readers number lines (LF, and a CR with
    text after it, end one); '' where the file cannot be read again (a pipe) or is shorter.
    Read line by line: only an error's message needs it, and the file may be larger than
    memory."""
    if is_pipe(source):
        return ""
    try:
        with file_errors(source), open(source, "rb") as handle:
            gzipped = handle.read(2) == _GZIP_MAGIC
        with (gzip.open if gzipped else open)(source, "rb") as handle:
            at = 1
            for raw in handle:
                lines = end_lines_at_lone_crs(raw.removesuffix(b"\n")).split(b"\n")
                if number < at + len(lines):
                    text = lines[number - at]
                    return (text[3:] if number == 1 and text[:3] == _BOM else text).decode(
                        "utf-8", "replace")
                at += len(lines)
    except (InputError, OSError, EOFError, zlib.error):
        pass
    return ""


def write_run(run: Any, path: str | os.PathLike[str], tag: str | None = None) -> None:
    """Write a run (a :class:`Run`, or anything :func:`rankwise.to_run` reads: a dict, a
    DataFrame, an Arrow table) as a TREC run file, ranks following the scores (ties by doc
    id descending). An id the file cannot hold as it is (see :func:`check_writable`) raises
    :class:`InputError` before anything is written."""
    from ..core.order import ranking_order
    from .frames import to_run

    _check_output(path)
    run = to_run(run)
    check_writable(run)
    order, offsets = ranking_order(run, "docid_desc")
    qids = np.asarray(run.query_dict.to_pylist(), dtype=object)
    dids = run.docs.to_pylist()
    ranks = np.arange(len(order)) - np.repeat(offsets[:-1], np.diff(offsets)) + 1
    name = tag or run.name
    with open(path, "w", encoding="utf-8") as out:
        for i, row in enumerate(order):
            out.write(f"{qids[run.query_code[row]]} Q0 {dids[row]} {ranks[i]} "
                      f"{float(run.score[row])!r} {name}\n")


def write_qrels(qrels: Any, path: str | os.PathLike[str]) -> None:
    """Write judgments (a :class:`Qrels`, or anything :func:`rankwise.to_qrels` reads) as a
    TREC qrels file. An id the file cannot hold (see :func:`check_writable`), or a grade
    that is not an integer of 64 bits (a qrels file holds those only), raises
    :class:`InputError` before anything is written."""
    from .frames import to_qrels

    _check_output(path)
    qrels = to_qrels(qrels)
    check_writable(qrels)
    whole = (qrels.grade == np.trunc(qrels.grade)) & (np.abs(qrels.grade) < 2.0 ** 63)
    if not whole.all():
        row = int(np.argmax(~whole))
        raise qrels.error_at(row, "a TREC qrels file holds integer grades (of 64 bits at "
                             "most): round the grades to write them",
                             repr(float(qrels.grade[row])))
    qids = qrels.query_dict.to_pylist()
    dids = qrels.docs.to_pylist()
    with open(path, "w", encoding="utf-8") as out:
        for q, d, g in zip(qrels.query_code, dids, qrels.grade):
            out.write(f"{qids[q]} 0 {d} {int(g)}\n")


def _check_output(path: Any) -> None:
    """Raise :class:`InputError` unless ``path`` is a file name (a string or path-like):
    ``open`` takes an integer as a file descriptor, so ``True`` or ``1`` wrote to standard
    output and closed it."""
    if not isinstance(path, (str, os.PathLike)):
        raise InputError("expected the path of the file to write", source="path",
                         value=type(path).__name__)


#: Characters a TREC file's id cannot hold: blanks and line ends split its line into other
#: fields or lines, a NUL makes the file no text file.
UNWRITABLE_ID = "[ \\t\\r\\n\\x00]"


def check_writable(table: Qrels | Run) -> None:
    """Raise :class:`InputError` naming the first row of an id that a TREC file cannot hold
    as it is, which it would read back otherwise or not at all: one holding a blank, a line
    end or a NUL (see UNWRITABLE_ID), or a query id starting with ``#`` (a comment line)."""
    import pyarrow as pa

    queries = table.query_dict
    bad = _matches(queries, "match_substring_regex", UNWRITABLE_ID) | \
        _matches(queries, "starts_with", "#")
    if bad.any():
        row = int(np.argmax(table.query_code == int(np.argmax(bad))))
        raise table.error_at(row, "a TREC file cannot hold this query id: it holds a blank, a "
                             "line end or a NUL, or starts with # (a comment line)",
                             repr(table.query_ids()[int(np.argmax(bad))]))
    if pa.types.is_string(table.docs.type):
        bad = _matches(table.docs, "match_substring_regex", UNWRITABLE_ID)
        if bad.any():
            row = int(np.argmax(bad))
            raise table.error_at(row, "a TREC file cannot hold this doc id: it holds a blank, "
                                 "a line end or a NUL", repr(table.ids_at(row)[1]))


def _matches(strings, function: str, pattern: str) -> np.ndarray:
    """Arrow's string matching ``function`` (``starts_with``, ``match_substring_regex``) of
    ``pattern`` on every string, as booleans."""
    from ..core.arrow import compute, compute_options

    return to_numpy(compute(function, strings, options=compute_options("MatchSubstring",
                                                                       pattern)), bool)


def read_runs(paths: list[str], names: list[str | None]) -> list[Run] | None:
    """``[read_run(path, name) for ...]`` for small run files, parsed as one text.

    pyarrow's cost per call is most of a small file's parse: 0.88 ms a file of 5,000 lines
    read alone, 0.33 ms each read 25 at once (with the query ids encoded). Only files the
    fast path of :func:`read_run` reads as they are qualify: plain text, every line a row of
    single-space-separated fields (no blank or comment lines, no byte-order mark, no NUL), finite
    scores. Returns None, for the caller to read them one by one (which reports any error),
    where one does not.
    """
    import pyarrow as pa

    if any(is_pipe(path) for path in paths):  # read once, by the one-by-one reader
        return None
    texts = []
    for path in paths:
        try:
            with open(path, "rb") as handle:
                text = handle.read()
        except OSError:
            return None
        if not text or text[:2] == _GZIP_MAGIC or text[:3] == _BOM or b"\x00" in text or \
                has_comment_line(text):
            return None
        texts.append(text if text.endswith(b"\n") else text + b"\n")
    rows = np.array([text.count(b"\n") for text in texts])
    bounds = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(rows, out=bounds[1:])
    joined = b"".join(texts)
    types = run_column_types()
    try:
        table = arrow_parse(pa.py_buffer(joined), RUN_FIELDS, types, tuple(types), len(joined))
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    if table.num_rows != bounds[-1]:  # a line end pyarrow reads and the count does not
        return None
    score = to_numpy(table.column("score"), np.float64)
    if not np.isfinite(score).all():
        return None
    rank = to_numpy(table.column("rank"), np.int32)
    codes, queries = encode_queries_by_part(table.column("qid"), bounds)
    docs = table.column("docid")
    if any(map(blank_or_control, queries)) or blank_or_control(docs):
        return None  # a tab or an empty field (see blank_or_control)
    runs = []
    for path, name, text, first, last, dictionary in zip(paths, names, texts, bounds[:-1],
                                                          bounds[1:], queries):
        part = slice(first, last)
        runs.append(Run(codes[part], dictionary, docs.slice(first, last - first), str(path),
                        None, "line", score[part], name_of_run(name, first_data_line(text), path),
                        rank[part]))
    return runs


def rank_numbers(ranks) -> np.ndarray:
    """A rank column as parsed (int32, or int64 where a rank is beyond 32 bits) as numpy."""
    import pyarrow as pa

    return to_numpy(ranks, np.int32 if pa.types.is_int32(ranks.type) else np.int64)


def name_of_run(name: str | None, first_line: str, source) -> str:
    """A run's name: ``name`` (by its string), else the tag of its first line, else its
    file's name."""
    fields = _FIELD_GAP.split(first_line.strip(" \t\r"))
    return str(name) if name else fields[5] if len(fields) > 5 else Path(source).name


# ---------------------------------------------------------------------------- parsing


def _parse(source: str, names: tuple[str, ...], types: dict, keep: tuple[str, ...],
           optional: tuple[str, ...] = ()):
    """Parse a whitespace-separated file into an Arrow table of the ``keep`` columns, and
    encode its query ids (:func:`~.tables.encode_queries`).

    Returns the table, the 1-based line number of each row (``None`` when row i is line i+1),
    the first data line (for the run tag), and the query codes and distinct query ids.
    """
    import pyarrow as pa

    kind = "run" if len(names) == 6 else "qrels"
    pipe = is_pipe(source)  # read once: it can be neither peeked at nor read again
    head = b"" if pipe else _peek(source)
    size = 0 if pipe else _text_size(source, head)
    check_fits(source, size, kind)
    if not pipe and head[:2] != _GZIP_MAGIC and b"\x00" not in head:
        try:  # the fast path: pyarrow reads the file itself, overlapping I/O and parsing
            table = arrow_parse(source, names, types, keep, size)
            if table.num_rows:
                codes, queries = encode_queries(table.column("qid"))
                if not _misread(table, queries) and not _nul_after(source, len(head)):
                    return table, None, first_data_line(head), codes, queries
        except (pa.ArrowInvalid, pa.ArrowTypeError, OSError, UnicodeEncodeError):
            pass  # (OSError: a text file named .gz or .bz2, which pyarrow decompresses;
            # UnicodeEncodeError: a name that is not UTF-8, which pyarrow cannot open)
    data = _read_bytes(source)
    table = lines = encoded = None
    # tabs as spaces: a file of single tabs (or spaces) and LF or CRLF line ends, without
    # blank or comment lines, is then read by the parse as it is (checked by _misread)
    text = data.translate(_TABS_TO_SPACES) if b"\t" in data else data
    if not has_comment_line(text):
        try:
            table = arrow_parse(pa.py_buffer(text), names, types, keep, len(text))
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass
        if table is not None and table.num_rows:
            encoded = encode_queries(table.column("qid"))
            if _misread(table, encoded[1]):
                table = encoded = None
    if table is None:
        clean, lines = _normalise(data)
        if not clean:
            raise InputError(f"no {kind} lines: the file holds only blank or comment lines",
                             source=source) from None
        table, failure = _parse_clean(source, data, clean, names, types, keep, optional)

        def parses(text: bytes) -> bool:  # (a block of whole lines of ``data``)
            part = _normalise(text)[0]
            got = part and _parse_clean(source, text, part, names, types, keep, optional)[0]
            return not part or (got is not None and _grades_read_as_parsed(got))

        if table is None:
            raise _locate_error(source, data, names, kind, parses) or InputError(
                f"cannot parse as a TREC {kind} file ({failure})", source=source) from None
        if not _grades_read_as_parsed(table):  # (else _misread checked)
            raise _locate_error(source, data, names, kind, parses) or InputError(
                "expected integer relevance grades", source=source)
    if table.num_rows == 0:
        raise InputError(f"no {kind} lines: the file holds only blank or comment lines",
                         source=source)
    return (table, lines, first_data_line(data)) + (encoded or
                                                       encode_queries(table.column("qid")))


def _parse_clean(source: str, data: bytes, clean: bytes, names: tuple[str, ...], types: dict,
                 keep: tuple[str, ...], optional: tuple[str, ...]):
    """pyarrow's parse of normalised text: ``(table, None)``, or ``(None, why)`` where it
    fails. Where it fails, a run holding a quoted id with spaces anywhere is refused; run
    lines with text after the tag are cut there (trec_eval reads six fields); then the
    ``optional`` columns are read as text, kept as 64-bit integers where they all are
    (ranks beyond 32 bits) and dropped where not (a rank column without integers). The line
    at fault is left to :func:`_locate_error`."""
    import pyarrow as pa

    def parse(text: bytes, as_text: tuple[str, ...] = ()):
        try:
            table = arrow_parse(pa.py_buffer(text), names,
                                {**types, **{k: pa.string() for k in as_text}}, keep, len(text))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            return None, exc
        for name in as_text:
            at = table.column_names.index(name)
            try:
                table = table.set_column(at, name, cast(table.column(name), pa.int64()))
            except pa.ArrowInvalid:  # not all integers of 64 bits
                table = table.remove_column(at)
        return table, None

    table, failure = parse(clean)
    if table is None and len(names) == len(RUN_FIELDS):
        quoted = _quoted_id(source, data)  # anywhere: before any other line is blamed
        if quoted is not None:
            raise quoted
        # more blanks than five a line: some line has text after the tag (two counts, where a
        # search for such a line walks every line: 0.2 s against 3 s for 10M lines)
        if clean.count(b" ") > (len(RUN_FIELDS) - 1) * clean.count(b"\n"):
            clean = _RUN_EXTRA.sub(rb"\1", clean)
            table, failure = parse(clean)
    if table is None and optional:
        table = parse(clean, optional)[0]
    return table, failure


def _nul_after(source: str, start: int) -> bool:
    """Whether a file holds a NUL byte from ``start`` on, where the fast parse would not see
    it (in ``Q0``, ``iter`` or the tag, fields it does not keep): the careful path then names
    its line, as every reader refuses the file. One ``memchr`` over a map of the file, 0.08 s
    for the 494 MB of the 100k case's two files, about 1.7% of its CPU time."""
    import mmap

    with open(source, "rb") as handle:
        if os.fstat(handle.fileno()).st_size <= start:
            return False
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
            return view.find(b"\x00", start) >= 0


def _grades_read_as_parsed(table) -> bool:
    """Whether every distinct grade text of a qrels table (read as dictionary-encoded text)
    is an integer as the parse reads one (``INTEGER_TEXT``, 64 bits). pyarrow's integer parse
    would also take ``0x10`` as 16, where trec_eval's ``atol`` reads 0; the dictionaries hold
    a few texts each, so this costs nothing. True for a run table (no grades)."""
    if "rel" not in table.column_names:
        return True
    return all(_is_grade(text) for chunk in table.column("rel").chunks
               for text in chunk.dictionary.to_pylist())


def _grade_values(column) -> np.ndarray:
    """The grades of a dictionary-encoded grade column (texts checked by
    :func:`_grades_read_as_parsed`) as float64: each chunk's few texts converted once, then
    gathered by the chunk's indices."""
    out = np.empty(len(column), dtype=np.float64)
    at = 0
    for chunk in column.chunks:
        values = np.array([int(text) for text in chunk.dictionary.to_pylist()], np.float64)
        out[at:at + len(chunk)] = values[to_numpy(chunk.indices, np.int32)]
        at += len(chunk)
    return out


def _misread(table, queries) -> bool:
    """Whether pyarrow's single-space parse may have read rows otherwise than TREC's rules
    (fields between any blanks, ``#`` lines skipped): the text is then normalised (the careful
    path), which also names a bad line. Such rows: comment lines (a query id starting with
    ``#``); an id holding a tab or another byte below 0x0A, or empty
    (:func:`blank_or_control`); a grade text the parse does not read
    (:func:`_grades_read_as_parsed`). Reads the distinct query ids, and the doc ids' bytes
    and offsets once (5-15 ms for 10M rows)."""
    from ..core.arrow import compute, compute_options

    comment = compute("starts_with", queries, options=compute_options("MatchSubstring", "#"))
    return compute("any", comment).as_py() or blank_or_control(queries) or \
        blank_or_control(table.column("docid")) or not _grades_read_as_parsed(table)


def blank_or_control(column) -> bool:
    """Whether a string column (array or chunked array) holds an empty string or a byte below
    0x0A (NUL, tab, ...): where the single-space parse meets a tab beside a space, or two
    blanks in a row, it keeps the tab in a field (``q1 0 \\td1 1``: the doc ``'\\td1'``) or
    makes an empty field of a missing one, and the row's other fields shift silently."""
    import pyarrow as pa

    for chunk in getattr(column, "chunks", [column]):
        if not len(chunk):
            continue
        wide = pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type)
        offsets = np.frombuffer(chunk.buffers()[1], np.int64 if wide else np.int32)[
            chunk.offset:chunk.offset + len(chunk) + 1]
        if (offsets[1:] == offsets[:-1]).any():
            return True
        data = np.frombuffer(chunk.buffers()[2], np.uint8)[offsets[0]:offsets[-1]]
        if data.min() < 0x0A:
            return True
    return False


def first_data_line(data: bytes) -> str:
    """The first line of ``data`` (its first 64 KiB, a byte-order mark skipped) that is
    neither blank nor a comment, without the blanks (spaces, tabs, CR) at its ends. Lines end
    at LF and at CR (:func:`end_lines_at_lone_crs`: the pieces a CR at a line's end leaves
    are blank)."""
    start = len(_BOM) if data[:3] == _BOM else 0
    for piece in _LINE_PIECE.finditer(data, start, min(len(data), 1 << 16)):
        line = piece.group().strip(b" \t")
        if line and not line.startswith(b"#"):
            return line.decode("utf-8", "replace")
    return ""


_LINE_PIECE = re.compile(rb"[^\r\n]+")


def parse_block_size(size: int) -> int:
    """pyarrow.csv's block size for ``size`` bytes of text (see PARSE_BLOCKS)."""
    return LARGE_BLOCK if size >= SMALL_FILE else max(MIN_BLOCK, size // PARSE_BLOCKS)


def run_column_types() -> dict:
    """The run columns read (query, doc, rank, score) and their Arrow types."""
    import pyarrow as pa

    return {"qid": pa.string(), "docid": pa.string(), "rank": pa.int32(), "score": pa.float64()}


def arrow_parse(source, names, types, keep, size: int):
    """pyarrow.csv on a path or a buffer (``size`` bytes): single spaces, no quoting, every
    line a row."""
    import pyarrow.csv as csv

    return csv.read_csv(
        source,
        read_options=csv.ReadOptions(column_names=list(names),
                                     block_size=parse_block_size(size)),
        parse_options=csv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False,
                                       escape_char=False, ignore_empty_lines=False),
        convert_options=csv.ConvertOptions(column_types=types, include_columns=list(keep),
                                           null_values=[], strings_can_be_null=False,
                                           check_utf8=True),
    )


_NON_BLANK = re.compile(rb"\S")
#: Run lines with text after the tag (trec_eval reads six fields and ignores the rest).
_RUN_EXTRA = re.compile(rb"(?m)^((?:[^ \n]+ ){5}[^ \n]+) [^\n]*$")
_TABS_AND_CRS_TO_SPACES = bytes.maketrans(b"\t\r", b"  ")
_TABS_TO_SPACES = bytes.maketrans(b"\t", b" ")


def _normalise(data: bytes) -> tuple[bytes, np.ndarray]:
    """Single spaces between fields, no blanks at either end of a line, no blank or comment
    lines; and the line of each kept row. The CRs of ``data`` are blanks (those that end
    lines are LFs by now: :func:`end_lines_at_lone_crs`).

    Whole-text passes of ``bytes.translate`` and ``bytes.replace`` (each about as fast as
    memory): at 10M run lines (376 MB) with a comment line, in CRLF, a pass of a regular
    expression per blank took 90 s in all, these take about 1 s.
    """
    text = data.translate(_TABS_AND_CRS_TO_SPACES) if b"\t" in data or b"\r" in data \
        else data
    for blanks, kept in ((b"  ", b" "), (b" \n", b"\n"), (b"\n ", b"\n")):
        while text.find(blanks) >= 0:  # (a run of n spaces halves in each pass)
            text = text.replace(blanks, kept)
    text = text.strip(b" ")
    if not text.endswith(b"\n"):
        text += b"\n"
    buf = np.frombuffer(text, dtype=np.uint8)
    ends = np.flatnonzero(buf == 10)
    starts = np.concatenate(([0], ends[:-1] + 1))
    first = buf[starts]
    keep = (first != 10) & (first != ord("#"))
    return (text if keep.all() else _without_lines(text, starts, ends, ~keep)), \
        np.flatnonzero(keep) + 1


def _without_lines(text: bytes, starts: np.ndarray, ends: np.ndarray,
                   drop: np.ndarray) -> bytes:
    """``text`` without the lines ``drop`` marks (``starts``, ``ends``: of every line): the
    kept stretches between runs of dropped lines, joined once."""
    edges = np.flatnonzero(np.diff(drop.astype(np.int8), prepend=0, append=0))
    cut_from, cut_to = starts[edges[0::2]].tolist(), (ends[edges[1::2] - 1] + 1).tolist()
    view = memoryview(text)
    kept = [view[end:start] for end, start in zip([0] + cut_to, cut_from + [len(text)])]
    return b"".join(kept)


_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"


def _text_size(source: str, head: bytes) -> int:
    """Bytes of text in a file: its size, or for gzip the size its trailer records (modulo
    4 GiB, so at least the compressed size times four)."""
    size = os.path.getsize(source)
    if head[:2] != _GZIP_MAGIC or size < 4:
        return size
    with open(source, "rb") as handle:
        handle.seek(-4, os.SEEK_END)
        recorded = int.from_bytes(handle.read(4), "little")
    return max(recorded, 4 * size)


def text_extent(source: str | os.PathLike[str]) -> tuple[int, int]:
    """(bytes of text, about how many lines) of a TREC file, without reading it: its size
    (for gzip, the size its trailer records) and that over the mean length of its first
    64 KiB of lines; (0, 0) when it cannot be read (the reader then says why)."""
    source = str(source)
    if is_pipe(source):
        return 0, 0
    try:
        head = _peek(source)
        text = head
        if head[:2] == _GZIP_MAGIC:
            with gzip.open(source, "rb") as handle:
                text = handle.read(1 << 16)
        size = _text_size(source, head)
        lines = text.count(b"\n")
        return size, size * lines // len(text) if lines else 0
    except (InputError, OSError, EOFError, zlib.error):
        return 0, 0


def is_pipe(source: str | os.PathLike[str]) -> bool:
    """Whether ``source`` is a pipe or a character device (``/dev/stdin``, a shell's
    ``<(zcat run.gz)``): text that can be read once, front to back, and not sized or sought."""
    try:
        mode = os.stat(source).st_mode
    except (OSError, ValueError):
        return False  # the reader says why it cannot be opened
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def _peek(source: str, size: int = 1 << 16) -> bytes:
    """The first bytes of a file (raising InputError when it cannot be opened)."""
    return _read_bytes(source, size, checks=False)


@contextmanager
def file_errors(source: str) -> Iterator[None]:
    """Opening or reading ``source``: an OSError becomes the InputError that names the file."""
    try:
        yield
    except FileNotFoundError:
        hint = " (standard input is read as /dev/stdin)" if str(source) == "-" else ""
        raise InputError("file not found" + hint, source=source) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", source=source) from None
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror})", source=source) from None


def _read_bytes(source: str, size: int = -1, checks: bool = True) -> bytes:
    with file_errors(source), open(source, "rb") as handle:
        data = handle.read(size)
    if not checks:
        return data
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error) as exc:
            raise InputError(f"corrupt or truncated gzip file ({exc})", source=source) from None
    if data[:3] == _BOM:  # trec_eval would read it as part of the first id; pyarrow skips it
        data = data[3:]
    data = end_lines_at_lone_crs(data)
    if _NON_BLANK.search(data) is None:
        raise InputError("empty file", source=source)
    check_no_nul(data, source)
    return data


def text_fields(source: str) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of each line of a small whitespace-separated text file
    (plain or gzip; blank lines and ``#`` comment lines skipped, as in qrels files), each
    field decoded as UTF-8 (else the InputError naming the line): the reader of the files
    that have no fast path (z-scores, preferences)."""
    data = _read_bytes(source)
    for number, raw in enumerate(data.split(b"\n"), start=1):
        fields = raw.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        try:
            yield number, [f.decode("utf-8") for f in fields]
        except UnicodeDecodeError:
            raise InputError("not valid UTF-8 text", source=source, line=number,
                             value=raw.decode("utf-8", "replace")) from None


_CR_BEFORE_TEXT = re.compile(rb"\r(?=[ \t\r]*[^ \t\r\n])")


def end_lines_at_lone_crs(data: bytes | bytearray, start: int = 0, end: int | None = None):
    """``data`` with each carriage return that has text after it on its line (within
    ``data[start:end]``, whole lines) turned into a line feed, in place for a bytearray: such
    a CR ends a line, as pyarrow's parse of rows and Spark's text reader read it
    (``q1 0 d1 1\\rq1 0 d2 0`` is two lines, numbered so); a CR with only blanks after it on its
    line (a CRLF's, ``\\r\\r\\n``) stays a blank. trec_eval reads every CR as a blank (a run line's
    second row would be text after the tag, dropped). The same length, so offsets stay. One
    ``memchr`` when the text holds no CR; else the CRs not before an LF are found slice by
    slice (0.1-0.2 s for the 10M lines of a CRLF file), and only those are looked at."""
    end = len(data) if end is None else end
    if data.find(b"\r", start, end) < 0:
        return data
    buf = np.frombuffer(data, np.uint8)
    lone: list[int] = []
    for at in range(start, end, _CR_SLICE):
        crs = np.flatnonzero(buf[at:min(at + _CR_SLICE, end)] == 0x0D) + at
        after = buf[np.minimum(crs + 1, len(buf) - 1)]
        lone += crs[(crs + 1 >= end) | (after != 0x0A)].tolist()
    del buf  # (a bytearray cannot change while a view of it lives)
    crs = [at for at in lone if _CR_BEFORE_TEXT.match(data, at, end)]
    if not crs:
        return data
    out = data if isinstance(data, bytearray) else bytearray(data)
    for at in crs:
        out[at] = 0x0A
    return out if isinstance(data, bytearray) else bytes(out)


_CR_SLICE = 1 << 24


def check_no_nul(data: bytes | bytearray, source: str, end: int | None = None,
                 first_line: int = 1) -> None:
    """Raise on a NUL byte in ``data[:end]`` (text whose first line is ``first_line``),
    naming its line: a binary file, or text no TREC tool reads as written (C strings end at
    the NUL). One ``memchr`` (about 10 GB/s)."""
    at = data.find(b"\x00", 0, len(data) if end is None else end)
    if at >= 0:
        kind = next((kind for magic, kind in _NOT_TEXT.items() if data.startswith(magic)), None)
        if first_line == 1 and kind is not None:
            raise InputError(f"not a text file: {kind}", source=source)
        raise InputError("not a text file (contains NUL bytes)", source=source,
                         line=first_line + data.count(b"\n", 0, at))


#: The first bytes of files often given where a TREC text is expected, and what to do.
_NOT_TEXT = {
    b"BZh": "compressed with bzip2; rankwise reads plain text or gzip (.gz): decompress it first",
    b"\xfd7zXZ\x00": "compressed with xz; rankwise reads plain text or gzip (.gz): decompress "
                      "it first",
    b"\x28\xb5\x2f\xfd": "compressed with zstd; rankwise reads plain text or gzip (.gz): "
                         "decompress it first",
    b"PK\x03\x04": "a zip archive; rankwise reads plain text or gzip (.gz): extract it first",
    b"PAR1": "a Parquet file; a Parquet path's name ends in .parquet or .pq",
}


def has_comment_line(data: bytes | bytearray, end: int | None = None) -> bool:
    """Whether a line of ``data[:end]`` starts with ``#``: a comment line, which the fast
    parse would read as a row when it has the right number of fields. One ``memchr`` when
    the text holds no ``#`` (the usual case)."""
    end = len(data) if end is None else end
    return data.find(b"#", 0, end) >= 0 and \
        (data[:1] == b"#" or data[:4] == _BOM + b"#" or data.find(b"\n#", 0, end) >= 0)


_QUOTE_IN_IDS = re.compile(rb'(?m)^[ \t]*(?:[^ \t\n]+[ \t]+){0,2}[^ \t\n]*"[^\n]*$')


def _quoted_id(source: str, data: bytes) -> InputError | None:
    """A run line with more than six fields (split as the parse splits them, on spaces and
    tabs) and a double quote among its ids: an id with spaces quoted as in CSV, which TREC
    files cannot hold (trec_eval would misread it)."""
    if data.find(b'"') < 0:
        return None
    for match in _QUOTE_IN_IDS.finditer(data):
        line = match.group(0).decode("utf-8", "replace").strip(" \t\r")
        if len(_FIELD_GAP.split(line)) > len(RUN_FIELDS) and not line.startswith("#"):
            number = data.count(b"\n", 0, match.start()) + 1
            return InputError("ids cannot contain spaces in a TREC file (quoted ids are not "
                              "part of the format)", source=source, line=number, value=line)
    return None


#: What the parse reads as an integer grade (int64) and a score (float64), as regular
#: expressions both Python and Spark (Java) read; NaN and infinities are refused afterwards.
INTEGER_TEXT = r"-?[0-9]+"
FLOAT_TEXT = (r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
              r"|[nN][aA][nN]|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)")
_FIELD_GAP = re.compile(r"[ \t]+")
_INTEGER = re.compile(INTEGER_TEXT)
_FLOAT = re.compile(FLOAT_TEXT)


#: The fields each kind's reader reads (by position): bytes that are not UTF-8 elsewhere (Q0
#: or iter, the tag, text after it) are skipped, as the parse skips those fields.
READ_FIELDS = {"run": (0, 2, 3, 4), "qrels": (0, 2, 3)}


_NOT_UTF8 = re.compile("[\udc80-\udcff]")


def _is_grade(text: str) -> bool:
    """Whether ``text`` is a grade as the parse reads one: ``INTEGER_TEXT`` within 64 bits."""
    return _INTEGER.fullmatch(text) is not None and -1 << 63 <= int(text) < 1 << 63


HEADER_HINT = " (a header line? TREC files have none)"
#: The problems a file can have that are found only by reading all of it (the first of each
#: is reported): their order, as the in-memory reader meets them (the Spark readers rank them
#: alike: spark.io.BAD_COLUMN). Any other problem of a line comes after these.
_PROBLEMS_FIRST = ("not a text file", "ids cannot contain spaces")
_PROBLEM_LAST = "score must be a finite number"


def problem_rank(error: InputError) -> int:
    """Where a problem of a file comes among those a reader can meet: a NUL byte anywhere
    (0), a quoted id anywhere (1), a line that does not parse (2), a score that is not finite
    (3). The in-memory reader reports the first problem of the lowest rank."""
    for rank, start in enumerate(_PROBLEMS_FIRST):
        if error.reason.startswith(start):
            return rank
    return 3 if error.reason.startswith(_PROBLEM_LAST) else 2


#: Lines per block of :func:`_locate_error`'s search (a block of 10M run lines scanned line by
#: line takes about 25 s; this many, about 0.15 s).
LOCATE_BLOCK = 1 << 16


def _locate_error(source: str, data: bytes, names: tuple[str, ...], kind: str,
                  parses: Callable[[bytes], bool]) -> InputError | None:
    """The first bad line of ``data``, whose parse has failed: block by block of
    ``LOCATE_BLOCK`` lines, only the blocks ``parses`` refuses are scanned line by line
    (:func:`_scan_lines`); None where none is found."""
    ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 0x0A)
    start = 0
    for first in range(0, len(ends) + 1, LOCATE_BLOCK):
        last = first + LOCATE_BLOCK - 1  # the block's last line end, if the text has it
        stop = int(ends[last]) + 1 if last < len(ends) else len(data)
        if not parses(data[start:stop]):
            error = _scan_lines(source, data[start:stop], names, kind, first + 1)
            if error is not None:
                return error
        start = stop
    return None


def _scan_lines(source: str, data: bytes, names: tuple[str, ...], kind: str,
                first_line: int) -> InputError | None:
    """The first bad line of ``data`` (whose first line is ``first_line``), line by line.
    The rank column's numbers are not checked (a rank column without integers is dropped)."""
    expected = " ".join(names)
    numeric = {"score": _FLOAT} if kind == "run" else {"rel": _INTEGER}
    read = READ_FIELDS[kind]
    for number, raw in enumerate(data.split(b"\n"), start=first_line):
        stripped = raw.strip(b" \t\r")  # what the parse strips and splits on, no more
        if not stripped or stripped.startswith(b"#"):
            continue
        line = stripped.decode("utf-8", "surrogateescape")  # bytes not UTF-8: U+DC80-U+DCFF
        fields = _FIELD_GAP.split(line)
        right_count = len(fields) == len(names) or (kind == "run" and len(fields) > len(names))
        if _NOT_UTF8.search(line) and (not right_count or any(
                _NOT_UTF8.search(fields[i]) for i in read)):
            return InputError("not valid UTF-8 text", source=source, line=number,
                              value=stripped.decode("utf-8", "replace"))
        if not right_count:
            hint = ""
            if kind == "qrels" and len(fields) == 6:
                hint = "; this looks like a run file passed as qrels"
            elif kind == "run" and len(fields) == 4 and fields[1] != "Q0" \
                    and fields[3].lstrip("-").isdigit():
                hint = "; this looks like a qrels file passed as a run"
            return InputError(f"expected {len(names)} fields '{expected}', got {len(fields)}{hint}",
                              source=source, line=number, value=line)
        for field_name, pattern in numeric.items():
            text = fields[names.index(field_name)]
            if not (_is_grade(text) if pattern is _INTEGER else pattern.fullmatch(text)):
                what = "an integer relevance grade" if pattern is _INTEGER else \
                    "a number for the score"
                header = HEADER_HINT if number == 1 else ""
                return InputError(f"expected {what} in field '{field_name}'{header}",
                                  source=source, line=number, value=text)
    return None


def read_judgment_groups(path: str | os.PathLike[str]) -> dict[str, Qrels]:
    """Read a qrels file whose second field names a judgment group (trec_eval's
    ``qrels_jg`` format, ``qid jg docid rel``: one set of judgments per assessor), as one
    :class:`Qrels` per group, in the order the groups first appear; each row keeps its line.

    Examples
    --------
    >>> import tempfile, os
    >>> from rankwise.io.trec import read_judgment_groups
    >>> p = os.path.join(tempfile.mkdtemp(), "qrels.jg")
    >>> _ = open(p, "w").write("q1 a d1 1\\nq1 b d1 0\\nq1 b d2 1\\n")
    >>> groups = read_judgment_groups(p)
    >>> list(groups), [len(q) for q in groups.values()], groups["b"].lines_of([1]).tolist()
    (['a', 'b'], [1, 2], [3])
    """
    import pyarrow as pa

    name = str(path)
    grade_texts = pa.dictionary(pa.int32(), pa.string())
    table, lines, _, _, _ = _parse(
        name, QRELS_FIELDS, {"qid": pa.string(), "iter": pa.string(), "docid": pa.string(),
                             "rel": grade_texts}, ("qid", "iter", "docid", "rel"))
    grade = _grade_values(table.column("rel"))
    line_of = np.arange(1, table.num_rows + 1) if lines is None else np.asarray(lines)
    group_codes, group_names = encode_queries(table.column("iter"))
    out = {}
    for code, group in enumerate(group_names.to_pylist()):
        rows = np.flatnonzero(group_codes == code)
        out[group] = Qrels.from_columns(table.column("qid").take(rows),
                                        table.column("docid").take(rows), grade[rows], name,
                                        line_of[rows], "line")
    return out
