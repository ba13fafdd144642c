"""Seeded differential fuzz: rankwise.torch under the ``torchmetrics`` profile against
torchmetrics' retrieval metrics on random candidates.

Random query ids (negative, sparse, rows shuffled), lists of 1 to 8 candidates, float32
scores around 0 (so some are <= 0), binary and graded targets, queries without a relevant
candidate, every ``empty_target_action``, ``top_k`` (none, within and beyond the lists),
``adaptive_k`` and ``ignore_index``
(padding, and queries of padding only). Per-query values (torchmetrics' ``aggregation``
given a callable that returns them) and means are compared to 1e-6 (torchmetrics computes
in float32).

Ties: torchmetrics' nDCG averages over tied orders (the profile's ``ties="expected"``), and
is compared on tied scores. Its other metrics order tied scores with ``torch.topk`` /
``torch.argsort``, an order torch does not specify (docs/switching/torchmetrics.md); on tied
scores the test checks that each of its per-query values lies between rankwise's values
with the ties broken worst first and best first.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
retrieval = pytest.importorskip("torchmetrics.retrieval")

import rankwise.torch as rt  # noqa: E402
from rankwise.compat.candidates import Candidates  # noqa: E402

# torchmetrics class, its arguments, the rankwise measure, graded target, profile overrides
METRICS = [
    ("RetrievalNormalizedDCG", {}, "nDCG", True, {}),
    ("RetrievalNormalizedDCG", {"top_k": 3}, "nDCG@3", True, {}),
    ("RetrievalMAP", {}, "AP", False, {}),
    ("RetrievalMAP", {"top_k": 4}, "AP@4", False, {}),
    ("RetrievalMRR", {}, "RR", False, {}),
    ("RetrievalMRR", {"top_k": 2}, "RR@2", False, {}),
    ("RetrievalPrecision", {"top_k": 3}, "P@3", False, {}),
    ("RetrievalPrecision", {"top_k": 3, "adaptive_k": True}, "P@3", False,
     {"short_lists": "length"}),
    ("RetrievalRecall", {"top_k": 3}, "R@3", False, {}),
    ("RetrievalHitRate", {"top_k": 2}, "Success@2", False, {}),
    ("RetrievalRPrecision", {}, "Rprec", False, {}),
    # without top_k the whole list; top_k beyond every list (of 1 to 8 candidates)
    ("RetrievalPrecision", {}, "SetP", False, {}),
    ("RetrievalPrecision", {"adaptive_k": True}, "SetP", False, {"short_lists": "length"}),
    ("RetrievalRecall", {}, "SetR", False, {}),
    ("RetrievalHitRate", {}, "Success", False, {}),
    ("RetrievalPrecision", {"top_k": 10}, "P@10", False, {}),
    ("RetrievalMAP", {"top_k": 10}, "AP@10", False, {}),
    ("RetrievalNormalizedDCG", {"top_k": 10}, "nDCG@10", True, {}),
]
# torchmetrics' empty_target_action as rankwise conventions
ACTIONS = {
    "neg": {"no_relevant": "zero", "idcg_zero": "zero"},
    "skip": {"no_relevant": "skip", "idcg_zero": "skip"},
    "pos": {"no_relevant": "one", "idcg_zero": "one"},
}
IDS = [f"{m}{kw}" for m, kw, *_ in METRICS]
# no order of tied candidates changes these: whole lists, a cutoff beyond every list
ORDER_FREE = {"SetP", "SetR", "Success", "P@10"}


def random_candidates(seed: int, padding: bool = False, tied: bool = False):
    """(preds float32, binary target, graded target, indexes): 1 to 12 queries with sparse,
    possibly negative ids, rows shuffled; a third of the queries without a relevant
    candidate. ``padding``: target -1 on some rows and on every row of some queries.
    ``tied``: scores rounded to one decimal, so most lists have ties."""
    rng = np.random.default_rng(seed)
    queries = int(rng.integers(1, 13))
    sizes = rng.integers(1, 9, size=queries)
    n = int(sizes.sum())
    ids = np.repeat(rng.choice(np.arange(-50, 1000), size=queries, replace=False), sizes)
    query_of_row = np.repeat(np.arange(queries), sizes)
    graded = rng.choice([0, 0, 1, 2, 3], size=n)
    binary = (rng.random(n) < 0.35).astype(np.int64)
    empty = rng.random(queries) < 0.3  # queries without a relevant candidate
    graded[empty[query_of_row]] = 0
    binary[empty[query_of_row]] = 0
    if padding:
        pad = (rng.random(n) < 0.2) | (rng.random(queries) < 0.15)[query_of_row]
        graded = np.where(pad, -1, graded)
        binary = np.where(pad, -1, binary)
    preds = rng.normal(size=n).astype(np.float32)
    if tied:
        preds = np.round(preds, 1)
    shuffle = rng.permutation(n)
    return (torch.tensor(preds[shuffle]), torch.tensor(binary[shuffle]),
            torch.tensor(graded[shuffle]), torch.tensor(ids[shuffle]))


def torchmetrics_values(metric: str, kwargs: dict, preds, target, indexes):
    """torchmetrics' mean and per-query values (in ascending query id order)."""
    mean = getattr(retrieval, metric)(**kwargs)(preds, target, indexes=indexes)
    per_query = getattr(retrieval, metric)(aggregation=lambda values, dim=None: values,
                                           **kwargs)(preds, target, indexes=indexes)
    return float(mean), per_query.double().reshape(-1)


def finite(values):
    return values[~torch.isnan(values)]


@pytest.mark.slow
@pytest.mark.parametrize("action", sorted(ACTIONS))
@pytest.mark.parametrize("metric,kwargs,name,graded,extra", METRICS, ids=IDS)
def test_random_candidates_as_torchmetrics(metric, kwargs, name, graded, extra, action):
    checked = 0
    for seed in range(40):
        preds, binary, grades, indexes = random_candidates(seed, tied=graded)
        target = grades if graded else binary
        options = {**kwargs, "empty_target_action": action}
        theirs, theirs_per_query = torchmetrics_values(metric, options, preds, target, indexes)
        conventions = {**ACTIONS[action], **extra}
        mine = rt.evaluate(preds, target, indexes, [name], "torchmetrics", **conventions)[name]
        assert float(mine) == pytest.approx(theirs, abs=1e-6), seed
        per_query = rt.evaluate(preds, target, indexes, [name], "torchmetrics", per_query=True,
                                **conventions)[name]
        # "skip" leaves the undefined queries out; rankwise keeps them as NaN
        assert torch.allclose(finite(per_query), theirs_per_query, atol=1e-6), seed
        checked += len(theirs_per_query)
    assert checked > 150


@pytest.mark.slow
@pytest.mark.parametrize("action", sorted(ACTIONS))
@pytest.mark.parametrize("metric,kwargs,name,graded,extra", METRICS, ids=IDS)
def test_random_padding_dropped_by_ignore_index_as_torchmetrics(metric, kwargs, name, graded,
                                                                extra, action):
    for seed in range(100, 120):
        preds, binary, grades, indexes = random_candidates(seed, padding=True, tied=graded)
        target = grades if graded else binary
        if bool((target == -1).all()):
            continue
        options = {**kwargs, "empty_target_action": action, "ignore_index": -1}
        theirs, theirs_per_query = torchmetrics_values(metric, options, preds, target, indexes)
        conventions = {**ACTIONS[action], **extra}
        per_query = rt.evaluate(preds, target, indexes, [name], "torchmetrics", per_query=True,
                                ignore_index=-1, **conventions)[name]
        assert torch.allclose(finite(per_query), theirs_per_query, atol=1e-6), seed
        batched = rt.RetrievalMetric(name, conventions="torchmetrics", ignore_index=-1,
                                     **conventions)
        for part in torch.arange(len(preds)).chunk(3):
            batched.update(preds[part], target[part], indexes[part])
        assert float(batched.compute()[name]) == pytest.approx(theirs, abs=1e-6), seed


@pytest.mark.slow
@pytest.mark.parametrize("metric,kwargs,name,graded,extra",
                         [m for m in METRICS if not m[3]], ids=[i for i, m in zip(IDS, METRICS)
                                                                if not m[3]])
def test_tied_scores_between_worst_and_best_tie_order(metric, kwargs, name, graded, extra):
    """torchmetrics' order of tied scores is not specified: each value it gives equals the
    value of some order of the ties, so it lies between rankwise's pessimistic and optimistic
    values (ties broken worst first, best first)."""
    spread = 0
    for seed in range(200, 240):
        preds, binary, _, indexes = random_candidates(seed, tied=True)
        _, theirs = torchmetrics_values(metric, {**kwargs, "empty_target_action": "neg"},
                                        preds, binary, indexes)
        bounds = [rt.evaluate(preds, binary, indexes, [name], "torchmetrics", per_query=True,
                              ties=ties, **extra)[name]
                  for ties in ("pessimistic", "optimistic")]
        assert bool((bounds[0] - 1e-6 <= theirs).all() and (theirs <= bounds[1] + 1e-6).all())
        spread += int((bounds[1] - bounds[0] > 1e-9).sum())
    assert (spread == 0) == (name in ORDER_FREE)  # the ties did change some values


@pytest.mark.parametrize("metric,kwargs,name,graded,extra", METRICS, ids=IDS)
def test_empty_target_action_error_as_torchmetrics(metric, kwargs, name, graded, extra):
    # torchmetrics raises on a query without a relevant candidate; rankwise has no such
    # policy (no_relevant="nan" marks the query instead)
    preds, target = torch.tensor([0.9, 0.5, 0.8]), torch.tensor([0, 0, 1])
    indexes = torch.tensor([0, 0, 1])
    with pytest.raises(ValueError, match="no positive target"):
        getattr(retrieval, metric)(empty_target_action="error", **kwargs)(preds, target,
                                                                         indexes=indexes)
    values = rt.evaluate(preds, target, indexes, [name], "torchmetrics", per_query=True,
                         no_relevant="nan", idcg_zero="nan", **extra)[name]
    assert math.isnan(float(values[0])) and not math.isnan(float(values[1]))


@pytest.mark.parametrize("policy", ["zero", "one", "nan", "skip"])
def test_undefined_query_policies_equal_the_numpy_engine(policy):
    """Regression: the tensor code filled queries without a relevant candidate (and nDCG
    with an ideal DCG of 0) with NaN under ``"one"`` (torchmetrics' ``"pos"``), where the
    numpy engine gives 1."""
    measures = ["nDCG@3", "nDCG", "AP", "AP@4", "RR", "P@3", "R@3", "Success@2", "Rprec"]
    for seed in range(300, 310):
        preds, binary, grades, indexes = random_candidates(seed)
        for target in (binary, grades):
            conventions = {"no_relevant": policy, "idcg_zero": policy}
            engine = Candidates(target.numpy(), query=indexes.numpy(), **conventions)
            expected = engine.values(preds.double().numpy(), measures)
            got = rt.evaluate(preds, target, indexes, measures, per_query=True, **conventions)
            for name in measures:
                assert np.allclose(got[name].numpy(), expected[name], atol=1e-12,
                                   equal_nan=True), (seed, name)
