"""The judgments held whole and split by query, so that each chunk of a run is joined with
the judgments of its own queries only; checked as one pass checks them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from ..core.arrow import string_array, take, to_arrow
from ..core.judgments import index_judgments, judged_levels
from ..core.segments import starts_of_runs
from ..errors import InputError
from .helpers import block_cuts, chunks_of, integer_docs, two_at_a_time


class Judgments:
    """The judgments split by query, so that each chunk is joined with the judgments of its
    own queries only: the work per chunk grows with the chunk, not with all the judgments.

    They are checked as an in-memory evaluation checks them (identical duplicates counted,
    negative grades counted, a document judged twice with different grades an error) by the
    indexes the chunks make anyway: each query is counted the first time a chunk's index
    holds it, and the judged queries no chunk held are checked at the end
    (:meth:`check_rest`, block by block of whole queries). On a conflict, every judgment is
    checked in the order of the query codes, so that the error is the one an in-memory
    evaluation raises (the first conflict in that order; the readers number queries in order
    of first appearance). Indexing the judgments once more only to check them cost a sixth of
    a streamed evaluation (100k queries x 100: 0.4 s of 3.4 s).
    """

    #: Judgments indexed at a time by the checks (whole queries; bounds their memory),
    #: two blocks side by side (60M judgments: 6.3 s in one thread).
    CHECK_BLOCK_ROWS = 1 << 22

    def __init__(self, qrels) -> None:
        self.qrels = qrels
        codes = qrels.query_code
        n, queries = len(codes), qrels.num_queries
        starts = starts_of_runs(codes)
        self.start = np.zeros(queries, dtype=np.int64)
        self.length = np.zeros(queries, dtype=np.int64)
        if len(starts) == queries:  # each query's judgments together: no permutation needed
            self.order = None
            self.start[codes[starts]] = starts
            self.length[codes[starts]] = np.diff(np.append(starts, n))
        else:
            self.order = np.argsort(codes, kind="stable")
            self.length = np.bincount(codes, minlength=queries).astype(np.int64)
            self.start = np.cumsum(self.length) - self.length
        #: every judged grade >= 0 once: the grade levels of the whole judgments, which a
        #: subset must keep (they decide the largest grade and the ideal gains)
        self.levels = judged_levels(qrels.grade)
        self.checked = np.zeros(queries, dtype=bool)  # counted by some index already
        self.duplicates_dropped = self.negative_grades = 0

    def check_rest(self) -> None:
        """Check and count the judged queries that no index has held yet."""
        rest = np.flatnonzero(~self.checked & (self.length > 0))
        self._check(rest)

    def _check(self, codes: np.ndarray) -> None:
        """Index the judgments of the queries ``codes`` (ascending) block by block, two
        blocks side by side and in order (the first failing block raises first), and count
        them."""
        for block_codes, index in two_at_a_time(
                lambda block: (block[0], index_judgments(block[1], self.qrels.num_queries,
                                                         False)),
                self._check_blocks(codes)):
            self.duplicates_dropped += index.duplicates_dropped
            self.negative_grades += index.negative_grades
            self.checked[block_codes] = True
            del index

    def _check_blocks(self, codes: np.ndarray) -> Iterator[tuple[np.ndarray, Any]]:
        """The judgments of the queries ``codes`` in blocks of whole queries: each block's
        query codes and a Qrels with the whole query dictionary and its rows' own lines."""
        qrels = self.qrels
        ends = np.cumsum(self.length[codes])
        cuts = block_cuts(np.append(0, ends[:-1]), int(ends[-1]) if len(ends) else 0,
                          self.CHECK_BLOCK_ROWS)
        at = np.searchsorted(np.append(0, ends), cuts)
        for a, b in zip(at[:-1].tolist(), at[1:].tolist()):
            block = codes[a:b]
            rows = ranges(self.start[block], self.length[block])
            if self.order is not None:
                rows = self.order[rows]
            yield block, replace(qrels, query_code=qrels.query_code[rows],
                                 docs=take(qrels.docs, rows), grade=qrels.grade[rows],
                                 row_lines=qrels.lines_of(rows))

    def _count(self, index, codes: np.ndarray) -> None:
        """Count the duplicates and negative grades of the queries ``codes`` not counted
        yet, from ``index`` (of a subset: its query ``i`` is ``codes[i]``; the stand-in query
        after them holds distinct level documents, neither duplicated nor negative)."""
        new = ~self.checked[codes]
        if not new.any():
            return
        if index.duplicates_dropped or index.negative_grades:  # rare: query by query
            held = np.bincount(index.query_of_key, minlength=len(codes) + 1)[:len(codes)]
            negative = np.bincount(index.query_of_key[index.grades < 0],
                                   minlength=len(codes) + 1)[:len(codes)]
            self.duplicates_dropped += int((self.length[codes] - held)[new].sum())
            self.negative_grades += int(negative[new].sum())
        self.checked[codes] = True

    def stand_in(self, codes: np.ndarray) -> tuple[str, str]:
        """A judged query that is not among ``codes``, and a doc id for it."""
        free = np.ones(min(len(codes) + 1, self.qrels.num_queries), dtype=bool)
        free[codes[codes < len(free)]] = False
        return self.qrels.query_dict[int(np.flatnonzero(free)[0])].as_py(), "-"

    def subset(self, codes: np.ndarray, run_only: int, widen: bool = True,
               strings: bool = True):
        """The index of the judgments of the queries ``codes`` (ascending), laid out for a
        run with ``run_only`` queries without judgments. Unless ``codes`` are all the judged
        queries, a stand-in query (a judged query not in ``codes``) is added last with one
        judgment at each grade level of the whole judgments, so that the levels stay those
        of the whole; a chunk's run never holds it, so nothing is measured on it.

        Judgments written query by query and a run in the same query order (the usual case)
        give a nearly contiguous range of codes: the judgments of the whole range are taken
        then, as a slice of the columns without a copy (the judged queries in between that
        the chunk lacks change nothing: the chunk's lists never score them). ``widen=False``
        keeps exactly ``codes``. ``strings``: for a run whose doc ids are strings (integer
        doc ids of the judgments are then taken as their decimal strings, made once)."""
        import pyarrow as pa

        from ..io.tables import Qrels

        qrels = self._string_qrels() if strings else self.qrels
        lo, hi = (int(codes[0]), int(codes[-1])) if len(codes) else (0, -1)
        contiguous = self.order is None and (hi - lo + 1 == len(codes) or (
            widen and hi - lo + 1 <= 2 * len(codes) + 64))
        if contiguous:
            codes = np.arange(lo, hi + 1)
        if len(codes) == qrels.num_queries:
            return self._checked(qrels, qrels.num_queries + run_only, codes)
        lengths = self.length[codes]
        if contiguous:
            first, total = (int(self.start[lo]), int(lengths.sum())) if len(codes) else (0, 0)
            docs = chunks_of(qrels.docs.slice(first, total))
            grade = qrels.grade[first:first + total]
        else:
            rows = ranges(self.start[codes], lengths)
            if self.order is not None:
                rows = self.order[rows]
            docs = chunks_of(take(self._whole_docs(qrels), rows))
            grade = qrels.grade[rows]
        query_code = np.repeat(np.arange(len(codes), dtype=np.int32), lengths)
        stand_in, _ = self.stand_in(codes)
        level_docs = to_arrow(np.arange(len(self.levels))) if integer_docs(qrels.docs) else \
            string_array([f"level {g!r}" for g in self.levels.tolist()])
        query_dict = pa.concat_arrays([take(qrels.query_dict, codes),
                                       string_array([stand_in])])
        subset = Qrels(
            query_code=np.concatenate([query_code, np.full(len(self.levels), len(codes),
                                                           dtype=np.int32)]),
            query_dict=query_dict,
            docs=pa.chunked_array(docs + [level_docs], type=level_docs.type),
            source=qrels.source, row_lines=None, row_unit=qrels.row_unit,
            grade=np.concatenate([grade, self.levels]))
        return self._checked(subset, subset.num_queries + run_only, codes)

    def _checked(self, qrels, key_queries: int, codes: np.ndarray):
        """The index of ``qrels`` (all the judgments, or the subset of the queries
        ``codes``), its duplicates and negative grades counted; on a conflict, the error an
        in-memory evaluation raises."""
        try:
            index = index_judgments(qrels, key_queries)
        except InputError:  # a subset has no lines: find the first conflict of them all
            self._check(np.flatnonzero(self.length > 0))
            raise
        self._count(index, codes)
        return index

    def _whole_docs(self, qrels):
        """The doc ids of ``qrels`` (the judgments, or their string version) as one Arrow
        array (taking rows from a chunked array costs a pass over all its chunks), made once
        each when first needed."""
        key = "_docs" if qrels is self.qrels else "_string_docs"
        if not hasattr(self, key):
            docs = qrels.docs
            setattr(self, key, docs.combine_chunks() if hasattr(docs, "combine_chunks")
                    else docs)
        return getattr(self, key)

    def _string_qrels(self):
        """The judgments with their doc ids as strings (themselves when they are), made once
        when first needed."""
        if not integer_docs(self.qrels.docs):
            return self.qrels
        if not hasattr(self, "_strings"):
            self._strings = self.qrels.with_string_docs()
        return self._strings


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + n) for s, n in zip(starts, lengths)])``, vectorised."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.cumsum(lengths) - lengths
    return np.arange(total, dtype=np.int64) + np.repeat(starts - offsets, lengths)
