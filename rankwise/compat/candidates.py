"""Fixed candidate lists scored again and again: learning-to-rank validation sets.

In learning to rank every candidate of a query is judged (its label is its grade) and the
candidates never change; only the model's scores do, every boosting round or every epoch.
:class:`Candidates` does the work that does not depend on the scores once (query offsets,
grade counts per query, the tie key of every candidate) so that evaluating new scores is one
sort and the measures, read from the same :class:`~rankwise.core.lists.RankedLists` that
:func:`rankwise.evaluate` builds.

The numbers are those of ``rankwise.evaluate(*rankwise.from_arrays(labels, scores, ...))``
under the same conventions: a candidate's document id is its position among its query's rows
(``"0"``, ``"1"``, ...), which is what the doc-id tie orders compare (as byte strings, so
``"10"`` comes before ``"9"``), and the ideal ranking is built from the candidates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..conventions import Conventions, resolve
from ..core.order import float32_scores
from ..core.segments import positions, segment_ids
from ..errors import InputError
from ..io.arrays import array_numbers, group_sizes, query_id_values


class Candidates:
    """Judged candidate lists (``labels`` per row, grouped into queries) to be scored.

    Parameters
    ----------
    labels : array-like
        The grade of every candidate (a negative grade counts as unjudged, as in trec_eval).
    group : array-like of int, optional
        Query sizes, rows of one query consecutive (LightGBM's and XGBoost's ``group``).
    query : array-like, optional
        A query id per row, rows of one query anywhere (scikit-learn's ``groups``,
        torchmetrics' ``indexes``). Queries are then ordered by id.
    conventions : Conventions or profile name, optional
        trec_eval's by default; keyword overrides apply on top.

    Examples
    --------
    >>> c = Candidates([2, 0, 1, 0, 1], group=[3, 2])
    >>> c.means([0.9, 0.8, 0.1, 0.4, 0.5], ["nDCG@2", "P@1"])
    {'nDCG@2': 0.8800937667159343, 'P@1': 1.0}
    >>> c.values([0.9, 0.8, 0.1, 0.4, 0.5], ["P@1"])["P@1"].tolist()
    [1.0, 1.0]
    """

    def __init__(self, labels: Any, group: Any = None, query: Any = None,
                 conventions: Conventions | str | None = None, **overrides: Any) -> None:
        self.conventions = resolve(conventions, **overrides)
        labels = array_numbers(labels, "labels", "labels", booleans=True).reshape(-1)
        bad = np.flatnonzero(~np.isfinite(labels))
        if len(bad):
            raise InputError("labels must be finite numbers", source="labels", line=int(bad[0]),
                             unit="row", value=str(labels[bad[0]]))
        n = len(labels)
        if group is not None and query is not None:
            raise InputError("give either group (query sizes) or query (an id per row)",
                             source="candidates")
        if group is not None:
            sizes = group_sizes(group, n)
            self._perm = None
            self.query_ids = np.arange(len(sizes)).astype(str).astype(object)
        else:
            ids = np.zeros(n, dtype=np.int64) if query is None else _query_ids(query, n)
            distinct, inverse = np.unique(ids, return_inverse=True)
            self._perm = np.argsort(inverse, kind="stable")  # rows grouped by query, in order
            sizes = np.bincount(inverse, minlength=len(distinct))
            self.query_ids = distinct.astype(str).astype(object)
        self.num_rows = n
        self.offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=self.offsets[1:])
        self._segment = segment_ids(self.offsets)
        self.labels = labels if self._perm is None else labels[self._perm]
        self._tie_key = _byte_order_rank(positions(self.offsets),
                                         int(sizes.max()) if len(sizes) else 0)
        self._levels, self._level_counts = _level_counts(self.labels, self._segment, len(sizes))

    @property
    def num_queries(self) -> int:
        return len(self.query_ids)

    def lists(self, scores: Any, conventions: Conventions | None = None):
        """The :class:`~rankwise.core.lists.RankedLists` of these scores (one per row, in the
        rows' original order)."""
        from dataclasses import replace

        from ..core.lists import Diagnostics, RankedLists

        conv = conventions or self.conventions
        score = self._scores(scores, conv)
        order = self._order(score, conv.ties)
        grade = self.labels[order]
        offsets = self.offsets
        rows = order if self._perm is None else self._perm[order]
        diagnostics = Diagnostics(run_rows=self.num_rows, run_queries=self.num_queries,
                                  qrels_rows=self.num_rows, qrels_queries=self.num_queries,
                                  queries_evaluated=self.num_queries)
        lists = RankedLists(query_ids=self.query_ids, offsets=offsets, grade=grade,
                            score=score[order], run_row=rows, docs=None, levels=self._levels,
                            level_counts=self._level_counts, conventions=conv,
                            diagnostics=diagnostics)
        if conv.ties in ("optimistic", "pessimistic"):
            lists = lists.with_ties_by_grade(best_first=conv.ties == "optimistic")
        keep = None
        if conv.max_depth is not None:
            keep = lists.position < conv.max_depth
        if conv.unjudged == "remove":
            judged = lists.grade >= 0
            keep = judged if keep is None else keep & judged
        if keep is not None and not keep.all():
            counts = np.bincount(lists.segment[keep], minlength=self.num_queries)
            offsets = np.zeros(self.num_queries + 1, dtype=np.int64)
            np.cumsum(counts, out=offsets[1:])
            lists = replace(lists, offsets=offsets, grade=lists.grade[keep],
                            score=lists.score[keep], run_row=lists.run_row[keep])
        diagnostics.rows_evaluated = lists.num_rows
        return lists

    def values(self, scores: Any, measures: Any) -> dict[str, np.ndarray]:
        """One value per query (in :attr:`query_ids` order) of every measure."""
        from ..measures import parse_measures

        parsed = parse_measures(measures)
        lists = self.lists(scores)
        return {str(m): m.compute(lists) for m in parsed}

    def means(self, scores: Any, measures: Any) -> dict[str, float]:
        """The aggregate (mean, or sum for counts) of every measure, as ``rankwise.evaluate``
        gives it (queries without a value skipped or making it NaN, as the conventions say)."""
        from ..measures import parse_measures
        from ..results import aggregate

        parsed = parse_measures(measures)
        lists = self.lists(scores)
        return {str(m): aggregate(m.compute(lists), m.spec.aggregate,
                                  m.skips_undefined(self.conventions)) for m in parsed}

    # ------------------------------------------------------------------------------ helpers

    def _scores(self, scores: Any, conv: Conventions) -> np.ndarray:
        score = array_numbers(scores, "scores", "scores", booleans=False).reshape(-1)
        if len(score) != self.num_rows:
            raise InputError(f"got {len(score)} scores for {self.num_rows} candidates",
                             source="scores")
        bad = np.flatnonzero(~np.isfinite(score))
        if len(bad):
            raise InputError("scores must be finite numbers", source="scores",
                             line=int(bad[0]), unit="row", value=str(score[bad[0]]))
        if self._perm is not None:
            score = score[self._perm]
        if conv.score_precision == "float32":
            score = float32_scores(score)
        return score

    def _order(self, score: np.ndarray, ties: str) -> np.ndarray:
        """Rows in ranked order: query by query, score descending, ties in input order, then
        re-ordered by doc id (= position, compared as bytes) for the doc-id tie policies. The
        other policies need no order inside a tie group: expected values ignore it, and
        optimistic/pessimistic re-order ties by grade afterwards."""
        order = self._by_score(score)
        if ties not in ("docid_desc", "docid_asc"):
            return order
        ranked = score[order]
        tied = (ranked[1:] == ranked[:-1]) & (self._segment[1:] == self._segment[:-1])
        if not tied.any():
            return order
        in_group = np.zeros(len(order), dtype=bool)
        in_group[1:] |= tied
        in_group[:-1] |= tied
        rows = np.flatnonzero(in_group)
        group = np.cumsum(np.concatenate(([True], ~tied[rows[1:] - 1])))
        members = order[rows]
        key = self._tie_key[members]
        order[rows] = members[np.lexsort((key if ties == "docid_asc" else -key, group))]
        return order

    def _by_score(self, score: np.ndarray) -> np.ndarray:
        """Stable order by score, descending, within each query (rows of a query are
        consecutive): one argsort along the rows of a padded table when the queries are of
        similar length (:func:`~rankwise.core.order.by_score_padded`), else a two-key sort."""
        from ..core.order import by_score_padded

        order = by_score_padded(self._segment, score)
        return np.lexsort((-score, self._segment)) if order is None else order


def _query_ids(query: Any, n: int) -> np.ndarray:
    ids = np.asarray(query)
    if ids.ndim != 1 or len(ids) != n:
        raise InputError(f"query has {ids.size} ids for {n} rows", source="query")
    return query_id_values(ids)


def _byte_order_rank(position: np.ndarray, longest: int) -> np.ndarray:
    """Rank of ``str(position)`` among ``"0" .. str(longest - 1)`` in byte order."""
    names = np.arange(longest).astype(str)
    rank = np.empty(longest, dtype=np.int64)
    rank[np.argsort(names, kind="stable")] = np.arange(longest)
    return rank[position] if longest else position


def _level_counts(labels: np.ndarray, segment: np.ndarray,
                  num_queries: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct grades >= 0 and, per query, how many candidates have each."""
    judged = labels >= 0
    levels, index = np.unique(labels[judged], return_inverse=True)
    counts = np.bincount(segment[judged] * len(levels) + index,
                         minlength=num_queries * len(levels))
    return levels.astype(np.float64), counts.reshape(num_queries, len(levels)).astype(np.int64)


def check_measures(measures: Sequence[Any], conventions: Any = None) -> list:
    """Parsed measures, at least one (a profile name as ``conventions`` also reads its peer's
    measure names, as :func:`rankwise.evaluate` does)."""
    from ..measures import parse_measures

    if not measures:
        raise InputError("name at least one measure, e.g. 'nDCG@10'", source="measures")
    return parse_measures(list(measures), conventions)
