"""rankwise measures as XGBoost evaluation metrics (needs ``xgboost``).

.. code-block:: python

    import xgboost as xgb
    import rankwise.xgboost

    ndcg = rankwise.xgboost.metric("nDCG@10", "AP@100")
    booster = xgb.train({"objective": "rank:ndcg", "disable_default_eval_metric": 1}, train,
                        evals=[(valid, "valid")], custom_metric=ndcg, maximize=True,
                        early_stopping_rounds=20)

The metric reads each ``DMatrix``'s labels and query groups (``group_ptr``) once and then only
ranks the new scores every round. XGBoost's early stopping watches the last metric in the
list, so put the one to stop on last. Values are those of :func:`rankwise.evaluate` on the same
candidates under the conventions given, trec_eval's by default.

XGBoost's own ``ndcg@k`` and ``map@k`` differ from rankwise's defaults in four ways:
exponential gain 2^label − 1 (``gain="exponential"``), ties kept in input order
(``ties="input_order"``), AP@k divided by min(relevant, k)
(``ap_denominator="min_relevant_cutoff"``), and a query without a relevant candidate counts 1
(``ndcg@k-`` and ``map@k-`` count it 0, as rankwise does; ``no_relevant="one",
idcg_zero="one"`` count it 1). Without ``@k``, XGBoost's ``ndcg`` and ``map`` stop at rank 32:
they are rankwise's ``nDCG@32`` and ``AP@32``. With those conventions (the profile
``conventions="xgboost"`` sets them all), the numbers are XGBoost's; tests/compat checks it
round by round (XGBoost records a custom metric in ``evals_result`` as text with 6
significant digits). XGBoost's ``map`` needs 0/1 labels.

With the scikit-learn ``XGBRanker``, a callable ``eval_metric`` is called once per query with
that query's labels and scores; a metric of one measure accepts that call too (a metric of
several raises :class:`~rankwise.InputError`: XGBRanker takes one value). XGBRanker then
averages the queries weighted by their number of candidates (XGBoost 3 passes the query
sizes, ``DMatrix.get_group()``, as weights) and counts a one-candidate query 1.0 without
calling the metric, so its number is not the mean over queries; the native
``xgb.train(custom_metric=...)`` gives that mean and evaluates all queries in one pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .compat.boosting import RankingMetric, sizes_from_offsets
from .conventions import Conventions

__all__ = ["XGBoostMetric", "metric"]


class XGBoostMetric(RankingMetric):
    """An XGBoost ``custom_metric`` computing rankwise measures.

    ``metric(predt, dmatrix)`` returns ``[(name, value), ...]`` (one pair when there is one
    measure); ``metric(y_true, y_score)`` with arrays evaluates them as one query, as
    ``XGBRanker`` calls it (one measure only: XGBRanker takes one value per query).
    """

    def __call__(self, predt: Any, data: Any) -> Any:
        weighted = False
        if hasattr(data, "get_uint_info"):  # a DMatrix
            labels = data.get_label()
            sizes = sizes_from_offsets(data.get_uint_info("group_ptr"), len(labels))
            scores = predt
            weighted = data.get_weight().size > 0
        else:  # XGBRanker: (y_true, y_score) of one query
            if len(self.names) > 1:
                from .errors import InputError

                raise InputError(
                    f"called with (y_true, y_score), as XGBRanker calls a callable eval_metric "
                    f"once per query, the metric gives {len(self.names)} values where "
                    "XGBRanker takes one: make it with one measure (metric('nDCG@10')), or "
                    "pass several to xgboost.train(custom_metric=...)", source="xgboost")
            labels, scores = predt, data
            sizes = np.array([len(np.asarray(labels).reshape(-1))])
        values = self.values(labels, scores, sizes, weighted)
        if not hasattr(data, "get_uint_info"):
            return values[0][1] if len(values) == 1 else [v for _, v in values]
        return values[0] if len(values) == 1 else values

    @property
    def __name__(self) -> str:  # XGBRanker names the metric after the callable
        return ",".join(self.names)


def metric(*measures: Any, conventions: Conventions | str | None = None,
           **overrides: Any) -> XGBoostMetric:
    """An XGBoost custom metric for these measures.

    Parameters
    ----------
    *measures : str
        Measure names in any dialect: ``"nDCG@10"``, ``"AP@100"``, ``"ndcg_cut_10"``.
    conventions : Conventions or profile name, optional
        trec_eval's by default; keyword overrides apply on top.

    Examples
    --------
    >>> import numpy as np, xgboost as xgb
    >>> m = metric("nDCG@2", "P@1")
    >>> data = xgb.DMatrix(np.zeros((5, 1)), label=[2, 0, 1, 0, 1])
    >>> data.set_group([3, 2])
    >>> m(np.array([0.9, 0.8, 0.1, 0.4, 0.5]), data)
    [('nDCG@2', 0.8800937667159343), ('P@1', 1.0)]
    """
    return XGBoostMetric(measures, conventions, overrides)
