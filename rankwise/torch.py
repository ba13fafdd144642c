"""rankwise measures on torch tensors, as torchmetrics' retrieval metrics take them (needs
``torch``).

.. code-block:: python

    import rankwise.torch as rt

    rt.ndcg(preds, target, indexes, k=10)                  # tensor(0.8123, dtype=float64)
    rt.evaluate(preds, target, indexes, ["nDCG@10", "AP", "RR@10"], per_query=True)
    rt.evaluate(preds, target, indexes, ["nDCG@10", "AP"], conventions="torchmetrics")

    metric = rt.RetrievalMetric("nDCG@10")                 # accumulate over batches
    for batch in loader:
        metric.update(model(batch.x), batch.target, batch.query)
    metric.compute(); metric.reset()

``preds`` are the scores, ``target`` the grades (0/1 or graded; negative: unjudged) and
``indexes`` the query of every candidate, in any order. Every candidate is judged and the ideal
ranking is built from them, exactly as ``rankwise.evaluate(*rankwise.from_arrays(target, preds,
query=indexes))``: the numbers equal the numpy engine's under the same conventions
(trec_eval's by default; a candidate's doc id, which the doc-id tie orders compare, is its
position among its query's candidates as a decimal string). Under the ``torchmetrics``
profile they equal torchmetrics' retrieval metrics, and two rules follow torchmetrics'
module metrics whatever the conventions: ``ignore_index=`` drops the candidates whose target
equals it before the queries are formed (a query of padding only disappears), and a mean
over queries that are all skipped (``no_relevant="skip"``, ``idcg_zero="skip"``) is 0.0
(``rankwise.evaluate`` gives NaN).

The measures P, Hits, R, SetP, SetR, Success, RR, AP, Rprec, nDCG and DCG are computed with
tensor operations on the tensors' device (CPU or CUDA, float64, nothing copied to the host),
under every convention, except ``ties="expected"`` for Success, RR and AP, and nDCG and DCG
with a ``rel=`` (gains from a grade on: ``nDCG(rel=2)``). Those, and the other
families, are computed by the numpy engine, which copies the three tensors to the host. Values
come back as float64 tensors on the input's device: the mean over queries (skipping or
propagating undefined values as the conventions say), or with ``per_query=True`` one value per
query, in the order of ``torch.unique(indexes)``.
"""

from __future__ import annotations

from typing import Any

from .compat import tensors
from .conventions import Conventions, resolve
from .errors import InputError

__all__ = ["RetrievalMetric", "average_precision", "evaluate", "hit_rate", "ndcg", "precision",
           "r_precision", "recall", "reciprocal_rank"]



def evaluate(preds: Any, target: Any, indexes: Any, measures: Any,
             conventions: Conventions | str | None = None, per_query: bool = False,
             ignore_index: int | None = None, **overrides: Any) -> dict[str, Any]:
    """Every measure of the candidates ``(preds, target, indexes)``.

    Parameters
    ----------
    preds, target, indexes : torch.Tensor
        Scores, grades and query ids of the candidates (1-D, same length, same device).
    measures : str or list of str
        Names in any dialect: ``"nDCG@10"``, ``"AP"``, ``"P@5"``, ``"recip_rank"``; with a
        profile name as ``conventions``, also that peer's, as :func:`rankwise.evaluate` reads
        them (``"retrieval_normalized_dcg@10"``, and ``"retrieval_recall"`` without a
        cutoff, under ``"torchmetrics"``).
    conventions : Conventions or profile name, optional
        trec_eval's by default; ``"torchmetrics"`` reproduces torchmetrics. Keyword overrides
        apply on top.
    per_query : bool
        One value per query (ordered as ``torch.unique(indexes)``) instead of the mean.
    ignore_index : int, optional
        torchmetrics' ``ignore_index``: candidates whose target equals it are dropped before
        anything else, so a query whose every candidate is ignored (padding) is no query at
        all. ``unjudged="remove"`` drops negative targets from the ranking only, as trec_eval
        ``-J``: such a query stays, without relevant candidates.

    Returns
    -------
    dict of str to torch.Tensor
        float64 tensors on the device of ``preds``.

    Examples
    --------
    >>> import torch
    >>> preds = torch.tensor([0.9, 0.8, 0.1, 0.4, 0.5])
    >>> target = torch.tensor([2, 0, 1, 0, 1])
    >>> indexes = torch.tensor([0, 0, 0, 1, 1])
    >>> evaluate(preds, target, indexes, ["nDCG@2", "P@1"])
    {'nDCG@2': tensor(0.8801, dtype=torch.float64), 'P@1': tensor(1., dtype=torch.float64)}
    >>> evaluate(preds, target, indexes, "RR", per_query=True)
    {'RR': tensor([1., 1.], dtype=torch.float64)}
    """
    from .measures import parse_measures

    conv = resolve(conventions, **overrides)
    parsed = parse_measures(measures, conventions)
    preds, target, indexes = tensors.check(preds, target, indexes)
    if ignore_index is not None:
        preds, target, indexes = tensors.drop_ignored(preds, target, indexes, ignore_index)
        if not len(preds):
            raise InputError("no candidates left: every target is ignore_index",
                             source="target", value=str(ignore_index))
    lists = tensors.rank(preds, target, indexes, conv)
    out = {}
    for measure in parsed:
        values = tensors.compute(measure, lists, conv)
        out[str(measure)] = values if per_query else tensors.aggregate(measure, values, conv)
    return out


def _one(name: str, preds, target, indexes, conventions, per_query, overrides):
    return next(iter(evaluate(preds, target, indexes, [name], conventions, per_query,
                              **overrides).values()))


def ndcg(preds: Any, target: Any, indexes: Any, k: int | None = None,
         conventions: Conventions | str | None = None, per_query: bool = False,
         **overrides: Any):
    """nDCG (@k): DCG / ideal DCG of the query's candidates (see :func:`evaluate`)."""
    return _one("nDCG" if k is None else f"nDCG@{k}", preds, target, indexes, conventions,
                per_query, overrides)


def average_precision(preds: Any, target: Any, indexes: Any, k: int | None = None,
                      conventions: Conventions | str | None = None, per_query: bool = False,
                      **overrides: Any):
    """AP (@k), over all relevant candidates by default (see :func:`evaluate`)."""
    return _one("AP" if k is None else f"AP@{k}", preds, target, indexes, conventions,
                per_query, overrides)


def reciprocal_rank(preds: Any, target: Any, indexes: Any, k: int | None = None,
                    conventions: Conventions | str | None = None, per_query: bool = False,
                    **overrides: Any):
    """RR (@k): 1 / rank of the first relevant candidate (see :func:`evaluate`)."""
    return _one("RR" if k is None else f"RR@{k}", preds, target, indexes, conventions,
                per_query, overrides)


def precision(preds: Any, target: Any, indexes: Any, k: int | None = None,
              conventions: Conventions | str | None = None, per_query: bool = False,
              **overrides: Any):
    """P@k; without ``k`` the whole list, relevant / candidates (SetP), as torchmetrics'
    ``RetrievalPrecision(top_k=None)`` (see :func:`evaluate`)."""
    return _one("SetP" if k is None else f"P@{k}", preds, target, indexes, conventions,
                per_query, overrides)


def recall(preds: Any, target: Any, indexes: Any, k: int | None = None,
           conventions: Conventions | str | None = None, per_query: bool = False,
           **overrides: Any):
    """R@k; without ``k`` the whole list, relevant retrieved / relevant (SetR), as
    torchmetrics' ``RetrievalRecall(top_k=None)`` (see :func:`evaluate`)."""
    return _one("SetR" if k is None else f"R@{k}", preds, target, indexes, conventions,
                per_query, overrides)


def hit_rate(preds: Any, target: Any, indexes: Any, k: int | None = None,
             conventions: Conventions | str | None = None, per_query: bool = False,
             **overrides: Any):
    """Success@k, the hit rate; without ``k`` whether any relevant candidate is retrieved, as
    torchmetrics' ``RetrievalHitRate(top_k=None)`` (see :func:`evaluate`)."""
    return _one("Success" if k is None else f"Success@{k}", preds, target, indexes,
                conventions, per_query, overrides)


def r_precision(preds: Any, target: Any, indexes: Any,
                conventions: Conventions | str | None = None, per_query: bool = False,
                **overrides: Any):
    """R-precision (see :func:`evaluate`)."""
    return _one("Rprec", preds, target, indexes, conventions, per_query, overrides)


class RetrievalMetric:
    """Measures accumulated over batches, as torchmetrics' retrieval metrics are used; the
    conventions and ``ignore_index`` as in :func:`evaluate`.

    >>> import torch
    >>> metric = RetrievalMetric("nDCG@2", "RR")
    >>> metric.update(torch.tensor([0.9, 0.8, 0.1]), torch.tensor([2, 0, 1]), torch.tensor([0] * 3))
    >>> metric.update(torch.tensor([0.4, 0.5]), torch.tensor([0, 1]), torch.tensor([1, 1]))
    >>> metric.compute()
    {'nDCG@2': tensor(0.8801, dtype=torch.float64), 'RR': tensor(1., dtype=torch.float64)}
    """

    def __init__(self, *measures: str, conventions: Conventions | str | None = None,
                 ignore_index: int | None = None, **overrides: Any) -> None:
        from .compat.candidates import check_measures

        self.measures = [str(m) for m in check_measures(measures, conventions)]
        self.conventions = resolve(conventions, **overrides)
        tensors.check_ignore_index(ignore_index)
        self.ignore_index = ignore_index
        self.reset()

    def reset(self) -> None:
        """Forget every batch."""
        self._batches: list[tuple[Any, Any, Any]] = []

    def update(self, preds: Any, target: Any, indexes: Any) -> None:
        """Add a batch of candidates (a query may span several batches), less those whose
        target is ``ignore_index``; the tensors are kept detached from any autograd graph."""
        batch = tensors.check(preds, target, indexes)
        if self.ignore_index is not None:
            batch = tensors.drop_ignored(*batch, self.ignore_index)
        self._batches.append(tuple(t.detach() for t in batch))

    def compute(self, per_query: bool = False) -> dict[str, Any]:
        """The measures over every candidate added since the last :meth:`reset`."""
        import torch

        if not sum(len(batch[0]) for batch in self._batches):
            raise InputError("no candidates: call update() first (candidates whose target is "
                             "ignore_index are dropped)", source="RetrievalMetric")
        preds, target, indexes = (torch.cat(parts) for parts in zip(*self._batches))
        return evaluate(preds, target, indexes, self.measures, self.conventions, per_query)
