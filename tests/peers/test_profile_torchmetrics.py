"""The ``torchmetrics`` profile against torchmetrics' retrieval metrics, query by query: the
functional metrics called once per list, and the module metrics with ``indexes`` (their
per-query values through a custom ``aggregation`` that returns them).

torchmetrics sees lists only (scores ``preds``, labels ``target``), so R, the "no relevant
document" test and the ideal DCG come from the list (``ideal="retrieved"``); rankwise gets the
same lists through :func:`rankwise.from_arrays`. What its source does (functional/retrieval/,
torchmetrics 1.9.0):

* ``preds`` become float32 (``score_precision="float32"``); binary metrics need a binary
  ``target`` (the test passes ``grade >= rel``); nDCG takes the grades as linear gains;
* P, R, AP and RR zero the target of every document scored <= 0
  (``torch.where(preds > 0, target, 0)``); hit rate, R-precision and nDCG do not;
* AP divides by the relevant documents retrieved (within ``top_k``); P divides by ``top_k``,
  or by the list length with ``adaptive_k=True`` (``short_lists="length"``); ``top_k=None``
  means the whole list;
* nDCG averages over tied scores (``_tie_average_dcg``), the expected value: ``ties="expected"``;
  the other metrics rank with ``torch.topk`` or ``torch.argsort``, whose order of equal scores
  is unspecified (it is not the input order, and ``topk(k)`` is not a prefix of ``topk(n)``),
  so on tied data the test only checks that each value lies between rankwise's pessimistic
  and optimistic values, and compares exactly on tie-free data;
* module metrics: a query without a positive target gets ``empty_target_action``: "neg" -> 0
  (``no_relevant="zero"``, nDCG ``idcg_zero="zero"``), "skip" -> left out (``"skip"``), "pos"
  -> 1 (no rankwise convention), "error" raises. ``ignore_index=-1`` with unjudged documents
  labelled -1 drops them from the list: ``unjudged="remove"``, as long as a judged document
  is left. A list of ignored documents only disappears from torchmetrics, while
  ``rankwise.evaluate`` keeps the judged query (trec_eval ``-J``);
  ``rankwise.torch``'s ``ignore_index=`` drops it as torchmetrics does
  (tests/compat/test_torch.py).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tm_functional = pytest.importorskip("torchmetrics.functional.retrieval")
tm_retrieval = pytest.importorskip("torchmetrics.retrieval")

import rankwise  # noqa: E402
from rankwise.conventions import resolve  # noqa: E402
from tests.peers.profile_compare import (  # noqa: E402
    assert_same, assert_within_tie_bounds, mismatches, rankwise_values)
from tests.peers.profile_data import make_profile_data  # noqa: E402

F = tm_functional
HAVE_EXPECTED = importlib.util.find_spec("rankwise.measures.expected") is not None

# key -> (function, relevance threshold of the binary target or None for grades, kwargs,
# rankwise measure)
BINARY = {
    "precision k=5": (F.retrieval_precision, 1, {"top_k": 5}, "P@5"),
    "precision k=30": (F.retrieval_precision, 1, {"top_k": 30}, "P@30"),
    "precision": (F.retrieval_precision, 1, {}, "SetP"),
    "precision rel=2 k=5": (F.retrieval_precision, 2, {"top_k": 5}, "P(rel=2)@5"),
    "recall k=5": (F.retrieval_recall, 1, {"top_k": 5}, "R@5"),
    "recall": (F.retrieval_recall, 1, {}, "SetR"),
    "average_precision": (F.retrieval_average_precision, 1, {}, "AP"),
    "average_precision k=5": (F.retrieval_average_precision, 1, {"top_k": 5}, "AP@5"),
    "average_precision rel=2": (F.retrieval_average_precision, 2, {}, "AP(rel=2)"),
    "reciprocal_rank": (F.retrieval_reciprocal_rank, 1, {}, "RR"),
    "reciprocal_rank k=3": (F.retrieval_reciprocal_rank, 1, {"top_k": 3}, "RR@3"),
    "hit_rate k=1": (F.retrieval_hit_rate, 1, {"top_k": 1}, "Success@1"),
    "hit_rate k=3": (F.retrieval_hit_rate, 1, {"top_k": 3}, "Success@3"),
    "hit_rate": (F.retrieval_hit_rate, 1, {}, "Success@1000"),  # longer than every list
    "r_precision": (F.retrieval_r_precision, 1, {}, "Rprec"),
    "r_precision rel=2": (F.retrieval_r_precision, 2, {}, "Rprec(rel=2)"),
}
GRADED = {
    "normalized_dcg": (F.retrieval_normalized_dcg, None, {}, "nDCG"),
    "normalized_dcg k=5": (F.retrieval_normalized_dcg, None, {"top_k": 5}, "nDCG@5"),
}
ADAPTIVE = {  # adaptive_k: P@k on a shorter list divides by its length
    "precision k=30 adaptive": (F.retrieval_precision, 1, {"top_k": 30, "adaptive_k": True},
                                "P@30"),
    "precision k=3 adaptive": (F.retrieval_precision, 1, {"top_k": 3, "adaptive_k": True},
                               "P@3"),
}
TOLERANCE = 1e-6  # torchmetrics computes in float32


def target(grades: np.ndarray, rel) -> torch.Tensor:
    return torch.tensor(grades.astype(np.int64) if rel is None else (grades >= rel).astype(
        np.int64))


def functional_values(data, calls) -> dict[str, dict[str, float]]:
    """One call per non-empty list (torchmetrics refuses empty ones) and measure."""
    return {qid: {key: float(function(torch.tensor(scores), target(grades, rel), **kwargs))
                  for key, (function, rel, kwargs, _) in calls.items()}
            for qid, grades, scores in data.lists() if len(grades)}


def arrays(data):
    lists = [(q, g, s) for q, g, s in data.lists() if len(g)]
    query = np.concatenate([[q] * len(g) for q, g, _ in lists])
    return rankwise.from_arrays(np.concatenate([g for _, g, _ in lists]),
                                np.concatenate([s for _, _, s in lists]), query=query)


def profile(**overrides):
    """The profile; on tie-free data any tie policy is the profile's, so without the expected
    value (not there yet) nDCG keeps the input order instead."""
    conv = resolve("torchmetrics", **overrides)
    if not HAVE_EXPECTED:
        conv = conv.with_options(family_overrides=tuple(
            o for o in conv.family_overrides if o[1] != "ties"))
    return conv


def names(calls) -> dict[str, str]:
    return {key: call[3] for key, call in calls.items()}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tie_free_every_functional_metric(seed):
    data = make_profile_data(seed, ties=False, float32_pair=False)
    qrels, run = arrays(data)
    calls = {**BINARY, **GRADED}
    theirs = functional_values(data, calls)
    assert_same(rankwise_values(qrels, run, names(calls), profile()), theirs, TOLERANCE,
                f"seed {seed}")
    assert_same(rankwise_values(qrels, run, names(ADAPTIVE), profile(short_lists="length")),
                functional_values(data, ADAPTIVE), TOLERANCE, "adaptive_k")


def test_scores_at_or_below_zero():
    # x-nonpositive: d4 (grade 2) at 0.0 and d2 (grade 3) at -0.4 are retrieved; x-negative:
    # every score < 0, the relevant document first
    data = make_profile_data(0, num_queries=0, ties=False, float32_pair=False)
    theirs = functional_values(data, BINARY)
    assert theirs["x-nonpositive"]["recall"] == pytest.approx(1 / 3)  # only d1 counts
    assert theirs["x-nonpositive"]["r_precision"] == pytest.approx(2 / 3)  # all count
    assert theirs["x-negative"]["hit_rate k=1"] == 1.0  # hit rate does not filter
    assert theirs["x-negative"]["reciprocal_rank"] == 0.0  # RR does
    qrels, run = arrays(data)
    assert_same(rankwise_values(qrels, run, names(BINARY), profile()), theirs, TOLERANCE,
                "scores <= 0")


def module_values(cls, grades, scores, queries, rel=1, **kwargs) -> np.ndarray:
    """Per-query values of a module metric, in the order of the query indexes (queries it
    skips are absent)."""
    metric = cls(aggregation=lambda values, dim=None: values, **kwargs)
    labels = grades if rel is None else (grades >= rel)
    metric.update(torch.tensor(scores), torch.tensor(labels.astype(np.int64)),
                  indexes=torch.tensor(queries))
    return metric.compute().numpy().astype(np.float64)


MODULES = [  # class, kwargs, relevance threshold (None: grades), rankwise measure
    (tm_retrieval.RetrievalPrecision, {"top_k": 5}, 1, "P@5"),
    (tm_retrieval.RetrievalPrecision, {"top_k": 30, "adaptive_k": True}, 1, "P@30"),
    (tm_retrieval.RetrievalRecall, {"top_k": 10}, 1, "R@10"),
    (tm_retrieval.RetrievalMAP, {}, 1, "AP"),
    (tm_retrieval.RetrievalMRR, {"top_k": 5}, 1, "RR@5"),
    (tm_retrieval.RetrievalHitRate, {"top_k": 3}, 1, "Success@3"),
    (tm_retrieval.RetrievalRPrecision, {}, 2, "Rprec(rel=2)"),
    (tm_retrieval.RetrievalNormalizedDCG, {"top_k": 10}, None, "nDCG@10"),
]


@pytest.mark.parametrize("action", ["neg", "skip"])
def test_module_metrics_with_indexes(action):
    data = make_profile_data(3, ties=False, float32_pair=False)
    lists = [(q, g, s) for q, g, s in data.lists() if len(g)]
    order = {q: i for i, q in enumerate(sorted(q for q, _, _ in lists))}
    grades = np.concatenate([g for _, g, _ in lists])
    scores = np.concatenate([s for _, _, s in lists])
    queries = np.concatenate([[order[q]] * len(g) for q, g, _ in lists])
    qrels, run = arrays(data)
    policy = {"neg": "zero", "skip": "skip"}[action]
    for cls, kwargs, rel, name in MODULES:
        theirs = module_values(cls, grades, scores, queries, rel, empty_target_action=action,
                               **kwargs)
        conv = profile(no_relevant=policy, idcg_zero=policy,
                       short_lists="length" if kwargs.get("adaptive_k") else "cutoff")
        result = rankwise.evaluate(qrels, run, [name], conventions=conv, per_query=True)
        mine = np.array([result.per_query()[q][name] for q in sorted(order)])
        kept = mine[~np.isnan(mine)]  # "skip" leaves the query out: NaN in rankwise
        assert len(kept) == len(theirs), (name, action)
        np.testing.assert_allclose(kept, theirs, rtol=0, atol=TOLERANCE, err_msg=name)
        assert result.mean(name) == pytest.approx(float(theirs.mean()), abs=TOLERANCE), name
        if action == "skip":
            assert len(kept) < len(mine), "expected queries without a relevant document"


def test_ignore_index_drops_unjudged_documents():
    # label unjudged documents -1 and pass ignore_index=-1: trec_eval -J, unjudged="remove"
    data = make_profile_data(4, ties=False, float32_pair=False)
    shared = sorted(q for q in data.qrels if data.run.get(q))
    grades, scores, queries = [], [], []
    for i, (qid, g, s) in enumerate(data.lists(shared, unjudged=-1)):
        grades.append(g)
        scores.append(s)
        queries += [i] * len(g)
    grades, scores = np.concatenate(grades), np.concatenate(scores)
    labels = np.where(grades < 0, -1, grades >= 1).astype(np.int64)
    for cls, kwargs, name in [(tm_retrieval.RetrievalMAP, {}, "AP"),
                              (tm_retrieval.RetrievalPrecision, {"top_k": 3}, "P@3"),
                              (tm_retrieval.RetrievalMRR, {}, "RR")]:
        metric = cls(ignore_index=-1, aggregation=lambda values, dim=None: values, **kwargs)
        metric.update(torch.tensor(scores), torch.tensor(labels), indexes=torch.tensor(queries))
        theirs = metric.compute().numpy()
        result = rankwise.evaluate(data.qrels, data.run, [name], per_query=True,
                                   conventions=profile(unjudged="remove"))
        per_query = result.per_query()
        # every list keeps a judged document here: a list of unjudged documents only would
        # disappear from torchmetrics and stay in rankwise.evaluate (trec_eval -J)
        mine = [per_query[q][name] for q in shared]
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=TOLERANCE, err_msg=name)


@pytest.mark.parametrize("seed", [3, 4])
def test_tied_scores_lie_within_the_tie_bounds(seed):
    # torch.topk / torch.argsort order equal scores in an unspecified way: whatever it is, it
    # is one order of the tied documents (the float32 pair is a tie here too)
    data = make_profile_data(seed)
    qrels, run = arrays(data)
    theirs = functional_values(data, BINARY)
    assert_within_tie_bounds(qrels, run, names(BINARY), profile(), theirs, TOLERANCE)
    # and not always the input order the profile keeps
    as_given = rankwise_values(qrels, run, names(BINARY), profile())
    assert mismatches(as_given, theirs, TOLERANCE)


@pytest.mark.skipif(not HAVE_EXPECTED, reason="ties='expected' not implemented yet")
@pytest.mark.parametrize("seed", [3, 4])
def test_tied_ndcg_is_the_tie_average(seed):
    data = make_profile_data(seed)
    qrels, run = arrays(data)
    theirs = functional_values(data, GRADED)
    assert_same(rankwise_values(qrels, run, names(GRADED), "torchmetrics"), theirs, TOLERANCE,
                "tied nDCG")
    # the float32 pair: 'a' (1) and 'b' (0) tie, so each gets gain 1/2 over ranks 1-2
    ideal = 2 + 1 / np.log2(3)
    expected = (0.5 * (1 + 1 / np.log2(3)) + 2 / np.log2(4)) / ideal
    assert theirs["x-float32"]["normalized_dcg"] == pytest.approx(expected, abs=TOLERANCE)


def test_negative_labels_are_negative_gains_in_torchmetrics_only():
    # torchmetrics' nDCG accepts a label -1 as gain -1 (in the DCG and the ideal DCG); rankwise
    # reads a negative grade as not judged, gain 0
    theirs = float(F.retrieval_normalized_dcg(torch.tensor([0.9, 0.1]), torch.tensor([-1, 2])))
    assert theirs == pytest.approx((-1 + 2 / np.log2(3)) / (2 - 1 / np.log2(3)), abs=TOLERANCE)
    qrels, run = rankwise.from_arrays([-1, 2], [0.9, 0.1])
    mine = rankwise.evaluate(qrels, run, ["nDCG"], conventions=profile()).mean("nDCG")
    assert mine == pytest.approx((2 / np.log2(3)) / 2, abs=1e-12)


def test_torch_does_not_keep_the_input_order_of_ties():
    # why the profile cannot reproduce tied lists for P, R, AP, RR, hit rate and R-precision
    scores = torch.ones(10)
    assert scores.topk(10)[1].tolist() != list(range(10))
    assert scores.topk(3)[1].tolist() != scores.topk(10)[1].tolist()[:3]
