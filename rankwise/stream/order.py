"""Whether a run is grouped by query: the queries seen so far, and the error that names the
line where one comes back."""

from __future__ import annotations

import numpy as np

from ..core.arrow import all_equal, index_in, take
from ..core.keys import fingerprints
from ..core.segments import starts_of_runs
from ..errors import InputError
from ..io.tables import Run


class SeenQueries:
    """The queries met so far and the line where each began: a query met again after its
    lines ended means the run is not grouped by query.

    Judged queries are found among the judgments' query ids by fingerprint (then verified on
    the strings); queries only in the run are kept by id.
    """

    def __init__(self, qrels) -> None:
        self.qrels = qrels
        fp = fingerprints(qrels.query_dict)
        self.order = np.argsort(fp, kind="stable")
        self.sorted_fp = fp[self.order]
        self.exact = bool((self.sorted_fp[1:] == self.sorted_fp[:-1]).any())
        self.judged_first_line = np.full(qrels.num_queries, -1, dtype=np.int64)
        self.other_first_line: dict[str, int] = {}

    def codes(self, query_dict) -> np.ndarray:
        """The judgments' code of each id (-1 for ids not judged)."""
        if len(self.sorted_fp) == 0:
            return np.full(len(query_dict), -1, dtype=np.int64)
        if not self.exact:
            fp = fingerprints(query_dict)
            at = np.minimum(np.searchsorted(self.sorted_fp, fp), len(self.sorted_fp) - 1)
            found = self.sorted_fp[at] == fp
            codes = np.where(found, self.order[at], -1)
            hit = np.flatnonzero(found)
            if not len(hit) or all_equal(take(query_dict, hit),
                                         take(self.qrels.query_dict, codes[hit])):
                return codes
        return index_in(query_dict, self.qrels.query_dict)

    def add(self, chunk: Run) -> np.ndarray:
        """Record the chunk's queries; raise if one of them was met before. Returns the
        judgments' code of each of the chunk's queries (-1: not judged)."""
        starts = starts_of_runs(chunk.query_code)
        block_codes = chunk.query_code[starts]
        lines = chunk.row_lines
        if len(starts) > chunk.num_queries:  # a query reappears inside the chunk
            _, first_block = np.unique(block_codes, return_index=True)
            again = np.ones(len(starts), dtype=bool)
            again[first_block] = False
            block = int(np.flatnonzero(again)[0])
            code = block_codes[block]
            earlier = int(np.flatnonzero(block_codes[:block] == code)[0])
            end = starts[earlier + 1] - 1
            raise regrouped(chunk, chunk.query_dict[int(code)].as_py(),
                            int(lines[starts[block]]), int(lines[starts[earlier]]),
                            int(lines[end]))
        first_line = np.empty(chunk.num_queries, dtype=np.int64)
        first_line[block_codes] = lines[starts]
        codes = self.codes(chunk.query_dict)
        judged = np.flatnonzero(codes >= 0)
        before = self.judged_first_line[codes[judged]]
        if (before >= 0).any():
            i = judged[int(np.flatnonzero(before >= 0)[0])]
            raise regrouped(chunk, chunk.query_dict[int(i)].as_py(), int(first_line[i]),
                            int(self.judged_first_line[codes[i]]))
        self.judged_first_line[codes[judged]] = first_line[judged]
        others = np.flatnonzero(codes < 0)
        if len(others):
            ids = take(chunk.query_dict, others).to_pylist()
            for qid, line in zip(ids, first_line[others].tolist()):
                if qid in self.other_first_line:
                    raise regrouped(chunk, qid, line, self.other_first_line[qid])
                self.other_first_line[qid] = line
        return codes


class NotGroupedError(InputError):
    """A query's rows reappear after other queries: the run cannot be streamed (it can be
    evaluated in memory)."""


def regrouped(run: Run, qid: str, line: int, first: int,
              end: int | None = None) -> NotGroupedError:
    word = "row" if run.row_unit == "row" else "line"
    ended = f" to {word} {end}" if end is not None else ""
    how = ("e.g. pyarrow.parquet.write_table(table.sort_by('query'), path)"
           if word == "row" else "e.g. sort -s -k1,1 run.txt > sorted.txt")
    return NotGroupedError(
        f"query {qid!r} appears again after other queries (its {word}s began at {word} "
        f"{first}{ended}): streaming evaluation needs each query's {word}s together; sort the "
        f"run by query ({how}; the order of queries does not matter) or evaluate it in "
        "memory (rankwise.evaluate, or rankwise evaluate without --stream)",
        source=run.source, line=line, value=qid, unit=run.row_unit)
