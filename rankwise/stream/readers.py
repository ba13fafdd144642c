"""Where a streamed run's rows come from: a TREC text file read in blocks cut at query
boundaries (parsed in a second thread), a Parquet file read batch by batch, or a run in memory
cut into blocks of whole queries."""

from __future__ import annotations

import gzip
import os
import re
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.arrow import compute, indices, take, to_numpy
from ..core.join import nothing_ranked
from ..core.segments import starts_of_runs
from ..errors import InputError
from ..io.tables import Run, check_finite_scores, encode_queries
from ..io.trec import (HEADER_HINT, RUN_FIELDS, arrow_parse, blank_or_control,
                       check_finite_file_scores, check_no_nul, end_lines_at_lone_crs,
                       file_errors, first_data_line, has_comment_line, name_of_run,
                       problem_rank, run_column_types)
from .helpers import block_cuts, chunks_of

GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"


DATA_LINE = re.compile(rb"(?m)^[ \t\r]*[^#\s]")


NON_BLANK = re.compile(rb"\S")


@dataclass
class Rows:
    """Parsed run rows: query and doc ids (Arrow), score, rank (None: no integer rank
    column), and where each row is in the file: its 1-based line (text) or 0-based row
    (Parquet, ``unit="row"``)."""

    qid: Any
    doc: Any
    score: np.ndarray
    rank: np.ndarray | None
    line: np.ndarray
    unit: str = "line"

    def __len__(self) -> int:
        return len(self.score)

    def head(self, n: int) -> Rows:
        return Rows(self.qid.slice(0, n), self.doc.slice(0, n), self.score[:n],
                    None if self.rank is None else self.rank[:n], self.line[:n], self.unit)

    def tail(self, n: int) -> Rows:
        """The rows from ``n`` on, copied (so that the block they came from can be freed)."""
        import pyarrow as pa

        rows = indices(np.arange(n, len(self)))
        return Rows(pa.chunked_array([take(self.qid, rows).combine_chunks()]),
                    pa.chunked_array([take(self.doc, rows).combine_chunks()]),
                    self.score[n:].copy(), None if self.rank is None else self.rank[n:].copy(),
                    self.line[n:].copy(), self.unit)

    def then(self, other: Rows) -> Rows:
        import pyarrow as pa

        rank = None if self.rank is None or other.rank is None else \
            np.concatenate([self.rank, other.rank])
        return Rows(pa.chunked_array(chunks_of(self.qid) + chunks_of(other.qid)),
                    pa.chunked_array(chunks_of(self.doc) + chunks_of(other.doc)),
                    np.concatenate([self.score, other.score]), rank,
                    np.concatenate([self.line, other.line]), self.unit)

    def last_query_start(self) -> int:
        """The first row of the trailing run of rows with the last row's query id."""
        same = to_numpy(compute("equal", self.qid, self.qid[len(self) - 1]), bool)
        other = np.flatnonzero(~same)
        return int(other[-1]) + 1 if len(other) else 0

    def to_run(self, source: str, name: str) -> Run:
        """The rows as a Run (their scores checked finite by the reader that read them)."""
        codes, query_dict = encode_queries(self.qid)
        return Run(query_code=codes, query_dict=query_dict, docs=self.doc, source=source,
                   row_lines=self.line, row_unit=self.unit, score=self.score, name=name,
                   rank=self.rank)


class RunReader:
    """Chunks of whole queries from a TREC run file: blocks of text read and parsed in a
    second thread, the last (maybe unfinished) query of each carried over to the next."""

    def __init__(self, path: str, chunk_bytes: int) -> None:
        self.path = path
        self.chunk_bytes = chunk_bytes
        self.non_blank = False

    def __iter__(self) -> Iterator[Rows]:
        return prefetched(rows for rows in self._checked() if len(rows))

    def _checked(self) -> Iterator[Rows]:
        """The blocks' rows, their scores checked finite. Once a block is refused, no more
        rows: the rest of the file is still read and parsed, and the problem the in-memory
        reader reports raised, the first of its lowest :func:`~rankwise.io.trec.problem_rank`
        (a NUL byte or a quoted id anywhere come before a bad line, a bad line before a
        score that is not finite), as it reads the whole file before it checks the scores."""
        refused: InputError | None = None
        for block in self._blocks():
            try:
                rows = self._parse(*block)
                if not np.isfinite(rows.score).all():
                    check_finite_file_scores(rows.to_run(self.path, ""))
            except InputError as error:
                if refused is None or problem_rank(error) < problem_rank(refused):
                    refused = error
                continue
            if refused is None:
                yield rows
        if refused is not None:
            raise refused

    def no_lines_error(self) -> InputError:
        if self.non_blank:
            return InputError("no run lines: the file holds only blank or comment lines",
                              source=self.path)
        return InputError("empty file", source=self.path)

    def _blocks(self) -> Iterator[tuple[bytes | bytearray, int, int]]:
        """Blocks of about ``chunk_bytes`` of text of whole queries, as (text, end, number of
        the first line), the block being ``text[:end]``: each cut where the lines of the last
        query begin, those carried over as text (a block of one query grows until another
        begins; carrying parsed rows instead copied every block once more, 1.4 s at 1M
        queries x 100).

        The blocks are prefixes of one buffer, read into and reused block after block (each is
        parsed into columns of their own before the next is read): a fresh block of text
        per read, joined to the carried text and cut, put three new blocks of memory through
        page faults each time (a 2.8 GB run: 4.6 s of kernel time; 1.2 s reusing one).
        A CR with text after it on its line becomes a line end once its line is read whole
        (:func:`~rankwise.io.trec.end_lines_at_lone_crs`), so blocks are cut, and lines
        numbered, as the in-memory reader numbers them.
        """
        from ..io.trec import text_extent

        line = 1
        text_bytes = text_extent(self.path)[0]  # a small file: a buffer of its size
        step = min(self.chunk_bytes, text_bytes + 1) if text_bytes else self.chunk_bytes
        with open_run_file(self.path) as handle:
            buffer = bytearray(len(BOM))  # a byte-order mark is skipped, as in memory
            kept = self._read_into(handle, memoryview(buffer))  # bytes carried at the start
            kept = 0 if buffer == BOM else kept
            while True:
                if len(buffer) < kept + step:  # grows only for a long query
                    grown = bytearray(max(kept + step, 2 * len(buffer)))
                    grown[:kept] = buffer[:kept]
                    buffer = grown
                one_query = buffer.rfind(b"\n", 0, kept) + 1  # the carried whole lines
                end = kept + self._read_into(handle, memoryview(buffer)[kept:][:step])
                if end == kept:
                    break
                whole = buffer.rfind(b"\n", 0, end) + 1  # lines read whole, now known
                end_lines_at_lone_crs(buffer, one_query, whole)
                cut = last_query_start(buffer, whole, one_query)
                if cut == 0:
                    kept = end
                    continue
                yield buffer, cut, line
                line += buffer.count(b"\n", 0, cut)
                buffer[:end - cut] = buffer[cut:end]
                kept = end - cut
        if kept:
            rest = end_lines_at_lone_crs(bytes(buffer[:kept]))
            rest = rest if rest.endswith(b"\n") else rest + b"\n"
            yield rest, len(rest), line

    def _read_into(self, handle, target: memoryview) -> int:
        """Fill ``target`` from the file (less only at its end); the bytes read."""
        filled = 0
        while filled < len(target):
            try:
                n = handle.readinto(target[filled:])
            except (EOFError, OSError, zlib.error) as exc:
                raise InputError(f"corrupt or truncated gzip file ({exc})",
                                 source=self.path) from None
            if not n:
                break
            filled += n
        return filled

    def _parse(self, text: bytes | bytearray, end: int, first_line: int) -> Rows:
        import pyarrow as pa

        block = memoryview(text)[:end]
        if not self.non_blank and NON_BLANK.search(block) is not None:
            self.non_blank = True
        check_no_nul(text, self.path, end, first_line)
        if has_comment_line(text, end):  # the fast parse would read them as rows
            return self._parse_slowly(block, first_line)
        try:
            types = run_column_types()
            table = arrow_parse(pa.py_buffer(block), RUN_FIELDS, types, tuple(types), len(block))
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return self._parse_slowly(block, first_line)
        if blank_or_control(table.column("qid")) or blank_or_control(table.column("docid")):
            return self._parse_slowly(block, first_line)  # a tab or an empty field
        n = table.num_rows
        return Rows(table.column("qid"), table.column("docid"),
                    to_numpy(table.column("score"), np.float64),
                    to_numpy(table.column("rank"), np.int32),
                    np.arange(first_line, first_line + n, dtype=np.int64))

    def _parse_slowly(self, block: memoryview, first_line: int) -> Rows:
        """A block the fast parse refused (tabs, several spaces, comments, blank lines, extra
        fields, a bad line): the in-memory reader reads it, with its errors moved to the
        file's own lines."""
        import pyarrow as pa

        from ..io.trec import read_run

        if DATA_LINE.search(block) is None:  # only blank or comment lines
            empty = pa.chunked_array([], type=pa.string())
            return Rows(empty, empty, np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64))
        with tempfile.TemporaryDirectory() as folder:
            part = os.path.join(folder, "part.txt")
            with open(part, "wb") as out:
                out.write(block)
            try:
                run = read_run(part)
            except InputError as exc:
                reason = exc.reason if first_line == 1 else exc.reason.replace(HEADER_HINT, "")
                raise InputError(reason, source=self.path,
                                 line=None if exc.line is None else exc.line + first_line - 1,
                                 value=exc.value, unit=exc.unit) from None
        n = len(run)
        lines = run.row_lines if run.row_lines is not None else np.arange(1, n + 1)
        qids = take(run.query_dict, run.query_code)
        return Rows(pa.chunked_array([qids]), pa.chunked_array(chunks_of(run.docs)),
                    run.score, run.rank, np.asarray(lines, dtype=np.int64) + first_line - 1)


def last_query_start(data: bytes, end: int, known: int = 0) -> int:
    """Where the lines of the last query of ``data[:end]`` (whole lines) begin: after the
    last data line whose first field is another query id (blank and comment lines go with
    the lines after them); 0 when every line holds that query. The lines of ``data[:known]``
    are known to hold one query: the walk back stops at the first of them (a query longer
    than many reads is not walked again at every read)."""
    qid = None
    stop = end
    while stop > 0:
        start = data.rfind(b"\n", 0, stop - 1) + 1
        fields = data[start:stop].split(None, 1)
        if fields and not fields[0].startswith(b"#"):
            if stop <= known:  # a carried line: the lines before it hold its query too
                return 0 if qid is None or fields[0] == qid else stop
            if qid is None:
                qid = fields[0]
            elif fields[0] != qid:
                return stop
        stop = start
    return 0


class ParquetRunReader:
    """Chunks of whole queries from a Parquet run (a file or a folder of files; columns
    ``query``, ``doc``, ``score``, or as named by ``columns``, and optionally ``rank``), read
    batch by batch in a second thread; a batch holds about as many rows as ``chunk_bytes`` of
    TREC text."""

    #: Bytes of a typical TREC run line: ``chunk_bytes`` of text hold that many fewer rows.
    LINE_BYTES = 40

    def __init__(self, path: str, chunk_bytes: int, columns: tuple[str, str, str]) -> None:
        from ..io.parquet import parquet_layout

        self.path = path
        self.batch_rows = max(1, chunk_bytes // self.LINE_BYTES)
        self.layout = parquet_layout(path, columns, ("rank",), "run", "score=")

    def __iter__(self) -> Iterator[Rows]:
        return whole_queries(prefetched(self._batches()))

    def no_lines_error(self) -> InputError:
        return nothing_ranked(self.path)

    def _batches(self) -> Iterator[Rows]:
        """The batches' rows, checked as the in-memory reader checks the whole run: once a
        batch is refused, no more rows; the rest is still read, and the problem one pass
        reports raised: the first of the earliest of its checks (every query id, then every
        doc id, then every score, then the scores finite)."""
        import pyarrow as pa

        from ..io.parquet import parquet_batches

        refused: tuple[int, InputError] | None = None
        first = 0
        try:
            for batch in parquet_batches(self.layout, self.batch_rows):
                rows, problem = self._read(batch, first)
                if problem is not None and (refused is None or problem[0] < refused[0]):
                    refused = problem
                elif refused is None:
                    yield rows
                first += batch.num_rows
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"cannot read as Parquet ({exc})", source=self.path) from None
        if refused is not None:
            raise refused[1]

    def _read(self, batch, first: int) -> tuple[Rows | None, tuple[int, InputError] | None]:
        """A batch's rows (``first``: the file's row of its first), or the first problem of
        the in-memory reader's checks, with the check's place in their order."""
        import pyarrow as pa

        from ..io.parquet import rank_values
        from ..io.tables import _doc_ids, _numeric, id_strings

        query, doc, score = self.layout.columns[:3]
        check = 0
        try:
            qid = id_strings(batch.column(query), self.path, "query")
            check = 1
            docs = _doc_ids(batch.column(doc), self.path)
            check = 2
            scores = _numeric(batch.column(score), self.path, "score", "row")
        except InputError as error:  # its row counted from the file's start
            return None, (check, InputError(
                error.reason, source=error.source, value=error.value, unit=error.unit,
                line=None if error.line is None else error.line + first))
        rows = Rows(pa.chunked_array([qid]), pa.chunked_array([docs]), scores,
                    rank_values(batch.column("rank")) if "rank" in self.layout.columns else None,
                    np.arange(first, first + batch.num_rows, dtype=np.int64), "row")
        try:
            if not np.isfinite(scores).all():
                check_finite_scores(rows.to_run(self.path, ""))
        except InputError as error:
            return None, (3, error)
        return rows, None


def run_blocks(run: Run, block_rows: int) -> Iterator[Rows]:
    """The rows of a run grouped by query as blocks of whole queries (about ``block_rows``
    each), with their query ids as strings, as the readers give them (doc ids as they are)."""
    import pyarrow as pa

    cuts = block_cuts(starts_of_runs(run.query_code), len(run), block_rows)
    for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        rows = np.arange(a, b)
        yield Rows(pa.chunked_array(chunks_of(take(run.query_dict, run.query_code[a:b]))),
                   pa.chunked_array(chunks_of(run.docs.slice(a, b - a))),
                   run.score[a:b], None if run.rank is None else run.rank[a:b],
                   run.lines_of(rows), run.row_unit)


def prefetched(items: Iterator[Rows]) -> Iterator[Rows]:
    """The items, each next one made (read, parsed) in a second thread while the caller
    works on the current one."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(next, items, None)
        while True:
            item = pending.result()
            if item is None:
                return
            pending = pool.submit(next, items, None)
            yield item


def whole_queries(parts: Iterable[Rows]) -> Iterator[Rows]:
    """The rows regrouped into chunks of whole queries: the last (maybe unfinished) query of
    each part carried over to the next."""
    carry: Rows | None = None
    for rows in parts:
        if len(rows) == 0:
            continue
        rows = rows if carry is None else carry.then(rows)
        cut = rows.last_query_start()
        if cut == 0:  # one query so far: it may go on in the next part
            carry = rows
            continue
        carry = rows.tail(cut)
        yield rows.head(cut)
        del rows
    if carry is not None and len(carry):
        yield carry


def open_run_file(path: str):
    """The run file opened for reading bytes (gzip read through); errors name the file."""
    with file_errors(path):
        with open(path, "rb") as handle:
            head = handle.read(2)
        return gzip.open(path, "rb") if head == GZIP_MAGIC else open(path, "rb")


def file_run_name(path: str) -> str:
    """The run's name as the in-memory reader gives it: the tag (sixth field) of the first
    data line within the first 64 KiB of text, else the file name."""
    try:
        with open_run_file(path) as handle:
            head = handle.read(1 << 16)
    except (EOFError, OSError, zlib.error):
        head = b""
    return name_of_run(None, first_data_line(head), path)
