"""One run streamed chunk by chunk: each chunk ranked and measured as one pass would, its
per-query values, diagnostics counts and warning counts kept, and all of them merged at the end
into the :class:`~rankwise.results.SystemResult` of one pass."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import numpy as np

from ..conventions import Conventions
from ..core.arrow import string_array, take
from ..core.lists import Diagnostics, RankedLists, count_skipped, stack_lists
from ..core.ranked import rank
from ..diagnostics import (TIE_CHECK_MAX_ROWS, Check, _tie_candidates, judged_at, judged_groups,
                           straddling_masks, tie_cutoff_groups)
from ..errors import InputError
from ..io.parquet import is_parquet_path
from ..io.tables import Run, encode_queries
from ..measures import Measure
from ..results import SystemResult, aggregate
from .helpers import chunks_of, integer_docs
from .judgments import Judgments
from .order import NotGroupedError, SeenQueries
from .readers import ParquetRunReader, Rows, RunReader

#: Diagnostics counts that add up over chunks of whole queries (the others describe the
#: judgments, or the judged queries never seen, and are set once).
ADDITIVE = ("run_rows", "run_duplicates_dropped", "run_queries", "queries_evaluated",
             "queries_only_in_run", "queries_only_in_run_scored", "queries_empty_in_run",
             "queries_without_relevant", "rows_evaluated", "rows_in_run_only_queries",
             "rows_beyond_depth", "rows_unjudged_removed", "unjudged_retrieved", "tied_rows",
             "queries_rank_contradicts_score")


EXAMPLES = 5


class SystemStream:
    """Evaluates one run file chunk by chunk and merges the chunks into a SystemResult."""

    def __init__(self, judgments: Judgments, measures: list[Measure], conv: Conventions,
                 per_query: bool) -> None:
        self.judgments = judgments
        self.qrels = judgments.qrels
        self.measures = measures
        self.conv = conv
        # chunks never score the judged queries they lack: that is decided once, at the end
        self.chunk_conv = replace(conv, missing_queries="ignore")
        self.per_query = per_query
        self.values: dict[str, list[np.ndarray]] = {str(m): [] for m in measures}
        self.counts = dict.fromkeys(ADDITIVE, 0)
        self.contradiction_examples: list[str] = []
        self.run_only_examples: list[str] = []
        self.rank_column = True  # every chunk had an integer rank column
        self.facts = QueryFacts(measures, conv)
        self.baseline: Diagnostics | None = None  # the stand-in query's own counts
        self.seen = SeenQueries(self.qrels)

    # -------------------------------------------------------------- the chunks

    def evaluate(self, path: str, name: str, chunk_bytes: int,
                 columns: tuple[str, str, str]) -> SystemResult:
        """``columns``: the query, doc and score columns of a Parquet run."""
        if is_parquet_path(path):
            reader = ParquetRunReader(path, chunk_bytes, columns)
            return self.evaluate_rows(reader, path, name, reader.no_lines_error,
                                      reader.layout.skipped)
        reader = RunReader(path, chunk_bytes)
        return self.evaluate_rows(reader, path, name, reader.no_lines_error)

    def evaluate_rows(self, parts: Iterable[Rows], source: str, name: str,
                      no_rows: Callable[[], InputError],
                      skipped: tuple[str, ...] = ()) -> SystemResult:
        """Every chunk of whole queries of ``parts``, merged (``no_rows()``: the error to
        raise when there is none; ``skipped``: the files of a Parquet folder skipped for
        their names, see :attr:`rankwise.io.tables.Run.skipped_files`).

        An error met evaluating a chunk (a document ranked twice, conflicting judgments) is
        raised in the order of one pass, which reads the whole run, then checks the
        judgments and that a query is shared, then ranks: after the rest of the run is read
        (its bad lines first), and after those two checks."""
        first_row = None
        refused: InputError | None = None
        for rows in parts:
            chunk = rows.to_run(source, name)
            if first_row is None:
                first_row = (chunk.query_dict[0].as_py(), chunk.docs[0].as_py())
            if refused is None:
                try:
                    self._add(chunk, rows.rank is not None)
                except NotGroupedError:
                    raise
                except InputError as error:
                    refused = error
            else:
                self.seen.add(chunk)  # whether a judged query comes, and the grouping
            del rows, chunk
        if first_row is None:
            raise no_rows()
        if refused is not None:
            self._check_judgments(source, first_row)
            raise refused
        return self._finish(source, first_row, name, skipped)

    def _add(self, chunk: Run, has_rank: bool) -> None:
        codes = self.seen.add(chunk)
        judged = codes >= 0
        self.rank_column &= has_rank
        run_only = int((~judged).sum())
        stand_in = not judged.any()
        integer = integer_docs(chunk.docs)
        if stand_in:  # the engine needs a judged query: lend it one and take it away again
            chunk = with_row(chunk, self._stand_in_run(chunk.rank is not None, integer))
        index = self.judgments.subset(np.sort(codes[judged]), run_only, strings=not integer)
        lists = rank(index, chunk, self.chunk_conv)
        keep = np.arange(lists.num_queries - 1 if stand_in else lists.num_queries)
        self._add_lists(lists, keep)
        diag = lists.diagnostics
        base = self._baseline() if stand_in else None
        for field_name in ADDITIVE:
            self.counts[field_name] += getattr(diag, field_name) - (
                getattr(base, field_name) if base is not None else 0)
        extend(self.contradiction_examples,
               diag.examples.get("queries_rank_contradicts_score", []))
        extend(self.run_only_examples, diag.examples.get("queries_only_in_run", []))

    def _add_lists(self, lists: RankedLists, keep: np.ndarray) -> None:
        """The values of the queries ``keep`` of ``lists``, and their facts for the checks."""
        for m in self.measures:
            self.values[str(m)].append(m.compute(lists)[keep])
        self.facts.add(lists, keep)

    def _stand_in_run(self, with_rank: bool, integer: bool = False) -> Run:
        """One row of the judgments' stand-in query (see :meth:`Judgments.subset`), its doc
        unjudged (an integer for runs with integer doc ids)."""
        qid, doc = self.judgments.stand_in(np.zeros(0, dtype=np.int64))
        doc = len(self.judgments.levels) if integer else doc
        run = Run.from_columns([qid], [doc], [0.0], name="stand-in", source="stand-in")
        return replace(run, rank=np.ones(1, dtype=np.int64) if with_rank else None)

    def _baseline(self) -> Diagnostics:
        """The counts the stand-in query adds on its own (subtracted from its chunk's)."""
        if self.baseline is None:
            index = self.judgments.subset(np.zeros(0, dtype=np.int64), 0)
            self.baseline = rank(index, self._stand_in_run(True), self.chunk_conv).diagnostics
        return self.baseline

    # -------------------------------------------------------------- the end

    def _check_judgments(self, path: str, first_row: tuple[str, str]) -> None:
        """Raise the error of rankwise.evaluate for conflicting judgments, else for a run
        without a judged query (unless the conventions score every query on one side only);
        the judged queries no chunk held are checked too."""
        if not (self.seen.judged_first_line >= 0).any():  # conflicts first, as in one pass
            rank(self.qrels, Run.from_columns([first_row[0]], [first_row[1]], [0.0],
                                              source=path), self.conv)
        self.judgments.check_rest()

    def _finish(self, path: str, first_row: tuple[str, str], name: str,
                skipped: tuple[str, ...]) -> SystemResult:
        self._check_judgments(path, first_row)
        seen = self.seen.judged_first_line >= 0
        missing = np.flatnonzero(~seen)
        scored = self.conv.missing_queries == "zero" and len(missing) > 0
        if scored:
            self._score_missing(missing, int(np.flatnonzero(seen)[0]) if seen.any() else None,
                                first_row[0])

        counts = dict(self.counts)
        if not self.rank_column:  # as the in-memory reader: no rank column, nothing checked
            counts["queries_rank_contradicts_score"] = 0
        diag = Diagnostics(
            **counts, qrels_rows=len(self.qrels), qrels_queries=self.qrels.num_queries,
            queries_only_in_qrels=len(missing),
            queries_only_in_qrels_scored_zero=len(missing) if scored else 0,
            qrels_queries_without_judgments=len(self.qrels.empty_queries),
            qrels_duplicates_dropped=self.judgments.duplicates_dropped,
            negative_grades=self.judgments.negative_grades)
        if self.rank_column:
            diag.examples["queries_rank_contradicts_score"] = self.contradiction_examples
        diag.examples["queries_only_in_run"] = self.run_only_examples
        diag.examples["queries_only_in_qrels"] = take(self.qrels.query_dict,
                                                      missing[:EXAMPLES]).to_pylist()
        count_skipped(diag, skipped, self.qrels.skipped_files)

        values = {k: concat(v) for k, v in self.values.items()}
        self.values.clear()
        checks = self.facts.checks(self.measures, values, diag, self.conv)
        if self.per_query:
            ids = self.facts.query_ids.all()
            order = np.argsort(ids.astype(str), kind="stable")
        return SystemResult(
            name=name,
            aggregates={str(m): aggregate(values[str(m)], m.spec.aggregate,
                                          m.skips_undefined(self.conv)) for m in self.measures},
            diagnostics=diag.to_dict(),
            query_ids=ids[order] if self.per_query else None,
            values={k: v[order] for k, v in values.items()} if self.per_query else None,
            undefined={k: int(np.isnan(v).sum()) for k, v in values.items() if np.isnan(v).any()},
            trec_names={str(m): m.trec_name() for m in self.measures},
            warnings=[c.message for c in checks if c.severity == "warning"],
            checks=[c.to_dict() for c in checks])

    def _score_missing(self, missing: np.ndarray, seen_code: int | None,
                       run_query: str) -> None:
        """Values of the judged queries absent from the run under ``missing_queries="zero"``:
        one pass over a one-row run of a judged query that was seen, with the judgments of
        that query and the missing ones; the missing ones are appended empty, in judgments
        order, as the in-memory pass appends them. Where no judged query was seen (the
        conventions also score the run's queries without judgments), the one row is of the
        run's query ``run_query``, a query without judgments."""
        if seen_code is None:
            codes, qid = missing, run_query
        else:
            codes, qid = np.sort(np.append(missing, seen_code)), \
                self.qrels.query_dict[seen_code].as_py()
        one = Run.from_columns([qid], ["-"], [0.0], source="stand-in")
        lists = rank(self.judgments.subset(codes, int(seen_code is None), widen=False,
                                           strings=True), one, self.conv)
        at = np.arange(1, 1 + len(missing))  # query 0 is the one-row query; the stand-in last
        self._add_lists(lists, at)
        self.counts["queries_evaluated"] += len(missing)
        self.counts["queries_without_relevant"] += int(
            (lists.num_relevant(self.conv.relevance_threshold)[at] == 0).sum())


def with_row(chunk: Run, extra: Run) -> Run:
    """``chunk`` with the one row of ``extra`` appended (as line 0)."""
    import pyarrow as pa

    qids = pa.concat_arrays([take(chunk.query_dict, chunk.query_code), extra.query_dict])
    codes, query_dict = encode_queries(qids)
    docs = pa.chunked_array(chunks_of(chunk.docs) + chunks_of(extra.docs))
    return replace(chunk, query_code=codes, query_dict=query_dict, docs=docs,
                   score=np.append(chunk.score, 0.0), row_lines=np.append(chunk.row_lines, 0),
                   rank=None if chunk.rank is None else np.append(chunk.rank, 1))


class QueryFacts:
    """What the checks of :func:`rankwise.diagnostics.run_checks` read about each query,
    gathered chunk by chunk, and the checks computed from it over all queries at once.

    Most checks read per-query facts only (list lengths, grade counts, values, ids): they are
    run as they are, on a :class:`Summary` of all queries. Three read the ranked rows (ties
    at a cutoff, unjudged documents in the top K, and the tie-order bounds): their per-query
    outcomes are kept per chunk, and the checks are ``run_checks``' own, reading them from
    here (the facts of :class:`rankwise.diagnostics.RowFacts`) and the bounds.
    """

    def __init__(self, measures: list[Measure], conv: Conventions) -> None:
        self.query_ids: Ids = Ids()
        self.num_retrieved: list[np.ndarray] = []
        self.ideal_counts: list[np.ndarray] = []
        self.levels: np.ndarray | None = None
        self.num_rows = 0
        self.tie_cutoffs = {cutoff for cutoff, _ in tie_cutoff_groups(measures, conv)}
        self.straddle: dict[int, list[np.ndarray]] = {k: [] for k in self.tie_cutoffs}
        self.change: dict[int, list[np.ndarray]] = {k: [] for k in self.tie_cutoffs}
        self.judged_values: dict[int | None, list[np.ndarray]] = {
            k: [] for k in judged_groups(measures)}
        self.tie_candidates = _tie_candidates(measures, {str(m) for m in measures})
        #: per chunk, its queries whose tie groups mix grades and their lists; kept while all
        #: rows so far are within the check's limit (so at most that many rows), and measured
        #: at the end only if the whole run is
        self.mixed: list[np.ndarray] = []
        self.mixed_lists: list[RankedLists] = []

    def add(self, lists: RankedLists, keep: np.ndarray) -> None:
        """The facts of the queries ``keep`` (indices into ``lists``)."""
        self.query_ids.append(lists.query_ids[keep])
        self.num_retrieved.append(lists.num_retrieved[keep])
        self.ideal_counts.append(lists.ideal_level_counts[keep])
        self.levels = lists.levels
        self.num_rows += int(lists.num_retrieved[keep].sum())
        for cutoff in self.tie_cutoffs:
            straddle, change = straddling_masks(lists, cutoff)
            self.straddle[cutoff].append(straddle[keep])
            self.change[cutoff].append(change[keep])
        for cutoff, parts in self.judged_values.items():
            parts.append(judged_at(lists, cutoff)[keep])
        if self.tie_candidates and self.num_rows <= TIE_CHECK_MAX_ROWS:
            self._add_mixed(lists, keep)
        elif self.mixed_lists:  # the run is over the limit: the check will not be made
            self.mixed_lists.clear()

    def _add_mixed(self, lists: RankedLists, keep: np.ndarray) -> None:
        """The kept queries whose tie groups mix grades, and their lists (as
        ``_tie_sensitivity`` selects them)."""
        mixed = lists.queries_with_mixed_ties()
        chosen = np.zeros(lists.num_queries, dtype=bool)
        chosen[keep] = True
        mixed &= chosen
        self.mixed.append(mixed[keep])
        if mixed.any():
            self.mixed_lists.append(lists.select_queries(np.flatnonzero(mixed)))

    # -------------------------------------------------------------- the checks

    def checks(self, measures: list[Measure], values: dict[str, np.ndarray],
               diag: Diagnostics, conv: Conventions) -> list[Check]:
        """The checks of ``run_checks(lists, measures, values)`` over all queries, in its
        order."""
        from ..diagnostics import combine_checks, list_checks

        lists = Summary(conv, self.levels, diag, self.query_ids,
                        concat(self.num_retrieved, dtype=np.int64),
                        concat_rows(self.ideal_counts, 0 if self.levels is None
                                      else len(self.levels)), self.num_rows)
        listed = list_checks(lists, measures, self)
        return combine_checks(lists, measures, values, listed,
                              self._tie_bounds(lists, values))[0]

    def straddling(self, cutoff: int) -> tuple[np.ndarray, np.ndarray]:
        """Per query: a tie straddles rank ``cutoff``; and its documents differ in grade (as
        :meth:`rankwise.diagnostics.RowFacts.straddling`)."""
        return (concat(self.straddle[cutoff], dtype=bool),
                concat(self.change[cutoff], dtype=bool))

    def judged(self, cutoff: int | None) -> np.ndarray:
        """Per query: Judged@``cutoff`` (as :meth:`rankwise.diagnostics.RowFacts.judged`)."""
        return concat(self.judged_values[cutoff])

    def _tie_bounds(self, lists: Summary, values: dict[str, np.ndarray]):
        """The tie-order check's bounds, computed once on the kept mixed queries' lists
        stacked (they are kept only while the run is within the check's row limit)."""
        from ..diagnostics import TieBounds
        from ..measures.expected import tie_bounds

        bounds = {}
        if self.mixed_lists and lists.num_rows <= TIE_CHECK_MAX_ROWS:
            stacked = stack_lists(self.mixed_lists)
            bounds = {str(m): tie_bounds(m, stacked)
                      for m in _tie_candidates(self.tie_candidates, values)}
        return TieBounds(concat(self.mixed, dtype=bool), bounds)


@dataclass
class Summary:
    """All queries of a streamed run as the per-query checks of
    :mod:`rankwise.diagnostics` read a :class:`~rankwise.core.lists.RankedLists`: ids, list
    lengths, judgment counts per grade level, conventions and diagnostics (no rows)."""

    conventions: Conventions
    levels: np.ndarray
    diagnostics: Diagnostics
    query_ids: Ids
    num_retrieved: np.ndarray
    ideal_level_counts: np.ndarray
    num_rows: int

    @property
    def num_queries(self) -> int:
        return len(self.num_retrieved)

    @property
    def max_grade(self) -> float:
        return float(self.levels[-1]) if len(self.levels) else 0.0

    def num_relevant(self, threshold: float) -> np.ndarray:
        return self.ideal_level_counts[:, self.levels >= threshold].sum(axis=1)

    def num_judged_nonrelevant(self, threshold: float) -> np.ndarray:
        return self.ideal_level_counts[:, self.levels < threshold].sum(axis=1)


class Ids:
    """Query ids kept as Arrow strings (a few bytes each), indexed like the numpy object
    array of a RankedLists."""

    def __init__(self) -> None:
        self.parts: list = []

    def append(self, ids: np.ndarray) -> None:
        self.parts.append(string_array(ids.tolist()))

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts)

    def __getitem__(self, index) -> np.ndarray:
        import pyarrow as pa

        at = np.arange(len(self))[index]
        return np.asarray(take(pa.chunked_array(self.parts, type=pa.string()),
                               np.atleast_1d(at)).to_pylist(), dtype=object)

    def all(self) -> np.ndarray:
        import pyarrow as pa

        return np.asarray(pa.chunked_array(self.parts, type=pa.string()).to_pylist(),
                          dtype=object)


def concat_rows(parts: list[np.ndarray], width: int) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros((0, width), dtype=np.int64)


def extend(examples: list[str], more: list[str]) -> None:
    examples.extend(more[:EXAMPLES - len(examples)])


def concat(parts: list[np.ndarray], dtype=np.float64) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)
