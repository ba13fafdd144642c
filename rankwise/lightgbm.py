"""rankwise measures as LightGBM evaluation metrics (needs ``lightgbm``).

.. code-block:: python

    import lightgbm as lgb
    import rankwise.lightgbm

    ndcg = rankwise.lightgbm.metric("nDCG@10", "AP@100")
    booster = lgb.train({"objective": "lambdarank", "metric": "None"}, train, valid_sets=[valid],
                        feval=ndcg, callbacks=[lgb.early_stopping(20, first_metric_only=True)])
    ranker = lgb.LGBMRanker().fit(X, y, group=sizes, eval_X=(Xv,), eval_y=(yv,),
                                  eval_group=[gv], eval_metric=ndcg)
    # (LightGBM before 4.7 takes eval_set=[(Xv, yv)] in place of eval_X and eval_y)

The metric reads each data set's labels and query groups once (the first round it sees it)
and then only ranks the new scores every round. Values are those of :func:`rankwise.evaluate`
on the same candidates (every candidate judged, the ideal ranking built from them) under the
conventions given, trec_eval's by default.

LightGBM's own ``ndcg@k`` and ``map@k`` differ from rankwise's defaults in four ways:
exponential gain 2^label − 1 (``gain="exponential"``), ties kept in input order (its sort is
stable: ``ties="input_order"``), AP@k divided by min(relevant, k)
(``ap_denominator="min_relevant_cutoff"``), and a query without a relevant candidate counts 1
in both (rankwise: 0; ``no_relevant="one", idcg_zero="one"`` count it 1). The profile
``conventions="lightgbm"`` sets all four (and the ideal from the candidates): the numbers are
then LightGBM's, checked round by round in tests/compat on random data sets.
"""

from __future__ import annotations

from typing import Any

from .compat.boosting import RankingMetric
from .conventions import Conventions

__all__ = ["LightGBMMetric", "metric"]


class LightGBMMetric(RankingMetric):
    """A LightGBM evaluation function computing rankwise measures.

    Call it as ``feval(preds, eval_data)`` (``lightgbm.train``, ``lightgbm.cv``) or as
    ``eval_metric(y_true, y_pred, weight, group)`` (the scikit-learn API); either returns
    ``[(name, value, is_higher_better), ...]``.
    """

    def __call__(self, preds: Any, eval_data: Any, weight: Any = None,
                 group: Any = None) -> list[tuple[str, float, bool]]:
        if _is_dataset(eval_data):  # native API: (preds, Dataset)
            labels, scores, sizes = eval_data.get_label(), preds, eval_data.get_group()
            weight = eval_data.get_weight()
        else:  # scikit-learn API: (y_true, y_pred, weight, group)
            labels, scores, sizes = preds, eval_data, group
        if sizes is None:
            from .errors import InputError

            raise InputError("the evaluation data has no query groups: give LightGBM "
                             "group= (or eval_group= in the scikit-learn API)", source="lightgbm")
        values = self.values(labels, scores, sizes, weighted=weight is not None)
        return [(name, value, better)
                for (name, value), better in zip(values, self.higher_is_better())]


def metric(*measures: Any, conventions: Conventions | str | None = None,
           **overrides: Any) -> LightGBMMetric:
    """A LightGBM evaluation function for these measures.

    Parameters
    ----------
    *measures : str
        Measure names in any dialect: ``"nDCG@10"``, ``"AP@100"``, ``"ndcg_cut_10"``.
    conventions : Conventions or profile name, optional
        trec_eval's by default; keyword overrides (``gain="exponential"``,
        ``ties="input_order"``, ...) apply on top.

    Examples
    --------
    >>> import numpy as np, lightgbm as lgb
    >>> m = metric("nDCG@2", "P@1")
    >>> data = lgb.Dataset(np.zeros((5, 1)), label=[2, 0, 1, 0, 1], group=[3, 2],
    ...                    params={"verbose": -1}).construct()
    >>> m(np.array([0.9, 0.8, 0.1, 0.4, 0.5]), data)
    [('nDCG@2', 0.8800937667159343, True), ('P@1', 1.0, True)]
    """
    return LightGBMMetric(measures, conventions, overrides)


def _is_dataset(obj: Any) -> bool:
    import lightgbm

    return isinstance(obj, lightgbm.Dataset)
