"""Judgments and a run from learning-to-rank arrays: ``(y_true, y_score, group)``.

``y_true`` holds the grade and ``y_score`` the model's score of every candidate. Queries are
given either as LightGBM/XGBoost group sizes (``group=[n1, n2, ...]``), as a query id per row
(``query=``, as scikit-learn's ``groups`` or torchmetrics' ``indexes``), or by 2-D arrays with
one query per row (scikit-learn's ``ndcg_score``). Every candidate becomes a judgment, so the
ideal ranking is built from the candidates given.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError
from .tables import Qrels, Run


def from_arrays(y_true: Any, y_score: Any, group: Any = None, query: Any = None,
                name: str = "run") -> tuple[Qrels, Run]:
    """Build (qrels, run) from arrays; documents are named by their position in the query.

    Examples
    --------
    >>> qrels, run = from_arrays([3, 0, 1, 2, 0], [0.9, 0.8, 0.1, 0.4, 0.5], group=[3, 2])
    >>> run.query_ids(), len(qrels)
    (['0', '1'], 5)
    """
    true = np.asarray(y_true, dtype=np.float64)
    score = np.asarray(y_score, dtype=np.float64)
    if true.shape != score.shape:
        raise InputError(f"y_true has shape {true.shape} but y_score has {score.shape}",
                         source="arrays")
    if true.ndim == 2:
        if group is not None or query is not None:
            raise InputError("2-D arrays already give one query per row; pass no group/query",
                             source="arrays")
        queries = np.repeat(np.arange(true.shape[0]), true.shape[1])
        true, score = true.reshape(-1), score.reshape(-1)
    elif true.ndim != 1:
        raise InputError(f"expected 1-D or 2-D arrays, got {true.ndim}-D", source="arrays")
    elif group is not None and query is not None:
        raise InputError("give either group (sizes) or query (one id per row), not both",
                         source="arrays")
    elif group is not None:
        queries = _queries_from_sizes(np.asarray(group), len(true))
    elif query is not None:
        queries = np.asarray(query)
        if len(queries) != len(true):
            raise InputError(f"query has {len(queries)} ids for {len(true)} rows", source="arrays")
    else:
        queries = np.zeros(len(true), dtype=np.int64)
    bad = np.flatnonzero(~np.isfinite(true))
    if len(bad):
        raise InputError("y_true must be finite", source="y_true", line=int(bad[0]), unit="row",
                         value=str(true[bad[0]]))
    docs = _position_in_query(queries)
    qids = queries.astype(str) if queries.dtype.kind != "U" else queries
    qrels = Qrels.from_columns(qids, docs, true, source="y_true", row_unit="row")
    run = Run.from_columns(qids, docs, score, name=name, source="y_score", row_unit="row")
    return qrels, run


def _queries_from_sizes(sizes: np.ndarray, n: int) -> np.ndarray:
    if sizes.ndim != 1 or not np.issubdtype(sizes.dtype, np.integer) or (sizes < 0).any():
        raise InputError("group must be a 1-D array of non-negative query sizes",
                         source="group", value=str(sizes[:5]))
    if int(sizes.sum()) != n:
        raise InputError(f"group sizes add up to {int(sizes.sum())}, but there are {n} rows",
                         source="group")
    return np.repeat(np.arange(len(sizes)), sizes)


def _position_in_query(queries: np.ndarray) -> np.ndarray:
    """Doc id = the row's position among the rows of its query ("0", "1", ...)."""
    _, inverse = np.unique(queries, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    counts = np.bincount(inverse)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    position = np.empty(len(queries), dtype=np.int64)
    position[order] = np.arange(len(queries)) - starts
    return position.astype(str)
