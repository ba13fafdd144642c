"""rankwise.torch: the tensor measures equal the numpy engine's under every convention, and
torchmetrics' retrieval metrics under the ``torchmetrics`` profile; tensors in, tensors out,
on the input's device.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import rankwise  # noqa: E402
import rankwise.torch as rt  # noqa: E402
from rankwise import InputError  # noqa: E402
from rankwise.compat.candidates import Candidates  # noqa: E402

MEASURES = ["nDCG@10", "nDCG", "DCG@5", "nDCG(gain=exp)@5", "AP", "AP@5", "P@5", "P(rel=2)@5",
            "R@10", "RR", "RR@3", "Rprec", "Success@3", "ERR@10", "Bpref", "F1@5", "SetP",
            "SetR", "Success", "Hits", "Hits@3", "nDCG(rel=2)@5", "DCG(gain=exp,rel=2)"]
CONVENTIONS = [
    {}, {"ties": "docid_asc"}, {"ties": "input_order"}, {"ties": "expected"},
    {"ties": "optimistic"}, {"ties": "pessimistic"}, {"gain": "exponential"},
    {"gain": {1: 3, 2: 7}}, {"discount_base": 10.0}, {"discount": "jarvelin"}, {"max_depth": 5},
    {"ap_denominator": "min_relevant_cutoff"}, {"ap_denominator": "cutoff"},
    {"ap_denominator": "relevant_retrieved"}, {"score_precision": "float32"},
    {"relevance_threshold": 2}, {"no_relevant": "nan"}, {"no_relevant": "skip"},
    {"idcg_zero": "skip"}, {"short_lists": "length"}, {"nonpositive_scores": "nonrelevant"},
    {"unjudged": "remove"}, {"ideal": "retrieved"}, {"ideal": "retrieved", "max_depth": 4},
    {"recall_denominator": "min_relevant_cutoff"},
    # a gain map that does not grow with the grade: a tie is ordered by gain there
    {"ties": "optimistic", "gain": {1: 1, 2: 5, 3: 2}},
    {"ties": "pessimistic", "gain": {0: -1, 2: 4}},
    {"gain": {1: 1, 2: 5, 3: 2}, "family_overrides": (("nDCG", "ties", "optimistic"),
                                                     ("DCG", "ties", "pessimistic"))},
]


def candidates(seed: int = 0, queries: int = 120):
    """Grades -1..3 (-1: unjudged), scores with ties and non-positive values, query ids
    shuffled over the rows, lists of 1 to 29 candidates."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 30, size=queries)
    n = int(sizes.sum())
    labels = rng.choice([-1, 0, 0, 0, 1, 2, 3], size=n).astype(float)
    scores = np.round(rng.random(n) * 2 - 0.5, 1)
    query = np.repeat(np.arange(queries) * 3 + 5, sizes)
    shuffle = rng.permutation(n)
    return labels[shuffle], scores[shuffle], query[shuffle]


def close(a: float, b: float, tol: float) -> bool:
    return math.isclose(a, b, abs_tol=tol) or math.isnan(a) and math.isnan(b)


@pytest.mark.parametrize("conventions", CONVENTIONS, ids=lambda c: ",".join(
    f"{k}={v}" for k, v in c.items()) or "trec_eval")
def test_same_numbers_as_the_numpy_engine(conventions):
    labels, scores, query = candidates()
    engine = Candidates(labels, query=query, **conventions)
    expected = engine.values(scores, MEASURES)
    means = engine.means(scores, MEASURES)
    tensors = torch.tensor(scores), torch.tensor(labels), torch.tensor(query)
    per_query = rt.evaluate(*tensors, MEASURES, per_query=True, **conventions)
    mean = rt.evaluate(*tensors, MEASURES, **conventions)
    for name, values in expected.items():
        got = per_query[name]
        assert got.dtype == torch.float64 and got.shape == (len(engine.query_ids),)
        assert np.allclose(got.numpy(), values, atol=1e-12, equal_nan=True), name
        assert close(float(mean[name]), means[name], 1e-12), name


def test_query_order_is_torch_unique_order():
    labels, scores, query = candidates(1, queries=30)
    got = rt.evaluate(torch.tensor(scores), torch.tensor(labels), torch.tensor(query), "RR",
                      per_query=True)["RR"]
    ids = torch.unique(torch.tensor(query))
    for i, qid in enumerate(ids.tolist()):
        rows = query == qid
        single = Candidates(labels[rows], group=[int(rows.sum())]).values(scores[rows], ["RR"])
        assert float(got[i]) == pytest.approx(single["RR"][0])


# ------------------------------------------------------------------------------ torchmetrics


def _torchmetrics_cases():
    rng = np.random.default_rng(2)
    sizes = rng.integers(1, 30, size=300)
    n = int(sizes.sum())
    query = torch.tensor(np.repeat(np.arange(len(sizes)), sizes))
    binary = torch.tensor(rng.random(n) < 0.25).long()
    graded = torch.tensor(rng.choice([0, 0, 1, 2, 3], size=n))
    distinct = torch.tensor(rng.random(n) * 2 - 0.4, dtype=torch.float32)  # some <= 0
    tied = torch.tensor(np.round(rng.random(n) * 2 - 0.4, 1), dtype=torch.float32)
    return query, binary, graded, distinct, tied


@pytest.mark.parametrize("metric,kwargs,name,extra", [
    ("RetrievalNormalizedDCG", {"top_k": 10}, "nDCG@10", {}),
    ("RetrievalNormalizedDCG", {}, "nDCG", {}),
    ("RetrievalMAP", {}, "AP", {}),
    ("RetrievalMAP", {"top_k": 5}, "AP@5", {}),
    ("RetrievalMRR", {}, "RR", {}),
    ("RetrievalMRR", {"top_k": 3}, "RR@3", {}),
    ("RetrievalPrecision", {"top_k": 5}, "P@5", {}),
    ("RetrievalPrecision", {"top_k": 5, "adaptive_k": True}, "P@5", {"short_lists": "length"}),
    ("RetrievalRecall", {"top_k": 5}, "R@5", {}),
    ("RetrievalHitRate", {"top_k": 5}, "Success@5", {}),
    ("RetrievalPrecision", {}, "SetP", {}),  # top_k=None: the whole list
    ("RetrievalRecall", {}, "SetR", {}),
    ("RetrievalHitRate", {}, "Success", {}),
    ("RetrievalRPrecision", {}, "Rprec", {}),
    ("RetrievalMAP", {"empty_target_action": "skip"}, "AP", {"no_relevant": "skip"}),
    ("RetrievalNormalizedDCG", {"top_k": 5, "empty_target_action": "skip"}, "nDCG@5",
     {"idcg_zero": "skip"}),
])
def test_same_numbers_as_torchmetrics_under_its_profile(metric, kwargs, name, extra):
    retrieval = pytest.importorskip("torchmetrics.retrieval")
    query, binary, graded, distinct, tied = _torchmetrics_cases()
    is_ndcg = name.startswith("nDCG")
    target = graded if is_ndcg else binary
    # nDCG averages tied scores in torchmetrics (exactly what ties="expected" computes); the
    # other metrics sort with topk/argsort, whose order of tied scores is not specified
    scores = tied if is_ndcg else distinct
    reference = getattr(retrieval, metric)(**kwargs)
    reference.update(scores, target, indexes=query)
    got = rt.evaluate(scores, target, query, [name], conventions="torchmetrics", **extra)[name]
    # torchmetrics computes in float32
    assert float(got) == pytest.approx(float(reference.compute()), abs=1e-6)


def test_non_positive_scores_under_the_torchmetrics_profile():
    retrieval = pytest.importorskip("torchmetrics.retrieval")
    preds, target, query = torch.tensor([-0.5, -0.7]), torch.tensor([1, 0]), torch.tensor([0, 0])
    for metric, kwargs, name in [("RetrievalMRR", {}, "RR"), ("RetrievalMAP", {}, "AP"),
                                 ("RetrievalPrecision", {"top_k": 1}, "P@1"),
                                 ("RetrievalHitRate", {"top_k": 5}, "Success@5"),
                                 ("RetrievalPrecision", {}, "SetP"),
                                 ("RetrievalRecall", {}, "SetR"),
                                 ("RetrievalHitRate", {}, "Success"),
                                 ("RetrievalRPrecision", {}, "Rprec")]:
        reference = getattr(retrieval, metric)(**kwargs)
        reference.update(preds, target, indexes=query)
        got = rt.evaluate(preds, target, query, [name], conventions="torchmetrics")[name]
        assert float(got) == float(reference.compute()), name
    assert float(rt.reciprocal_rank(preds, target, query)) == 1.0  # trec_eval: ranked as scored


@pytest.mark.parametrize("metric, kwargs, function, k", [
    ("RetrievalRecall", {}, rt.recall, None), ("RetrievalPrecision", {}, rt.precision, None),
    ("RetrievalHitRate", {}, rt.hit_rate, None), ("RetrievalRecall", {"top_k": 3}, rt.recall, 3),
    ("RetrievalPrecision", {"top_k": 3}, rt.precision, 3),
    ("RetrievalHitRate", {"top_k": 3}, rt.hit_rate, 3),
])
def test_functions_take_k_as_torchmetrics_takes_top_k(metric, kwargs, function, k):
    """recall, precision and hit_rate without k read the whole list, as torchmetrics'
    RetrievalRecall / RetrievalPrecision / RetrievalHitRate with top_k=None."""
    retrieval = pytest.importorskip("torchmetrics.retrieval")
    query, binary, _, distinct, _ = _torchmetrics_cases()
    reference = getattr(retrieval, metric)(**kwargs)
    reference.update(distinct, binary, indexes=query)
    got = function(distinct, binary, query, k, conventions="torchmetrics")
    assert float(got) == pytest.approx(float(reference.compute()), abs=1e-6)
    per_query = function(distinct, binary, query, k, conventions="torchmetrics", per_query=True)
    assert per_query.shape == (len(torch.unique(query)),)


@pytest.mark.parametrize("name, metric, kwargs", [
    ("retrieval_normalized_dcg@3", "RetrievalNormalizedDCG", {"top_k": 3}),
    ("retrieval_normalized_dcg", "RetrievalNormalizedDCG", {}),
    ("retrieval_average_precision", "RetrievalMAP", {}),
    ("retrieval_reciprocal_rank@3", "RetrievalMRR", {"top_k": 3}),
    ("retrieval_precision@3", "RetrievalPrecision", {"top_k": 3}),
    ("retrieval_precision", "RetrievalPrecision", {}),
    ("retrieval_recall@3", "RetrievalRecall", {"top_k": 3}),
    ("retrieval_recall", "RetrievalRecall", {}),
    ("retrieval_hit_rate@2", "RetrievalHitRate", {"top_k": 2}),
    ("retrieval_hit_rate", "RetrievalHitRate", {}),
    ("retrieval_r_precision", "RetrievalRPrecision", {}),
])
def test_the_profiles_names_in_evaluate_and_retrieval_metric(name, metric, kwargs):
    """The torchmetrics profile's own names reach rankwise.torch.evaluate and RetrievalMetric
    as they reach rankwise.evaluate, with torchmetrics' meaning."""
    import rankwise

    retrieval = pytest.importorskip("torchmetrics.retrieval")
    query, binary, graded, distinct, tied = _torchmetrics_cases()
    is_ndcg = "dcg" in name
    target, scores = (graded, tied) if is_ndcg else (binary, distinct)
    reference = getattr(retrieval, metric)(**kwargs)
    reference.update(scores, target, indexes=query)
    theirs = float(reference.compute())
    (got,) = rt.evaluate(scores, target, query, [name], conventions="torchmetrics").values()
    assert float(got) == pytest.approx(theirs, abs=1e-6)
    accumulated = rt.RetrievalMetric(name, conventions="torchmetrics")
    for part in torch.arange(len(scores)).chunk(3):
        accumulated.update(scores[part], target[part], query[part])
    (batched,) = accumulated.compute().values()
    assert float(batched) == pytest.approx(theirs, abs=1e-6)
    qrels, run = rankwise.from_arrays(target.numpy(), scores.numpy(), query=query.numpy())
    (in_memory,) = rankwise.evaluate(qrels, run, [name], conventions="torchmetrics"
                                     ).aggregates["run"].values()
    assert in_memory == pytest.approx(float(got), abs=1e-12)


def test_negative_targets_differ_from_torchmetrics_as_documented():
    # docs/switching/torchmetrics.md: torchmetrics' nDCG takes a negative target as a negative
    # gain (values leave [0, 1]); rankwise reads it as unjudged, as trec_eval does
    retrieval = pytest.importorskip("torchmetrics.retrieval")
    preds, query = torch.tensor([0.9, 0.8, 0.7]), torch.tensor([0, 0, 0])
    for target, theirs, ours in [([-1, 1, 0], 0.0, 1 / math.log2(3)),
                                 ([-1, -1, 0], 1.4421, 0.0)]:
        reference = retrieval.RetrievalNormalizedDCG()(preds, torch.tensor(target),
                                                       indexes=query)
        assert float(reference) == pytest.approx(theirs, abs=1e-4)
        got = rt.ndcg(preds, torch.tensor(target), query, conventions="torchmetrics")
        assert float(got) == pytest.approx(ours, abs=1e-12)
    with pytest.raises(ValueError, match="binary"):  # its binary measures refuse them
        retrieval.RetrievalMAP()(preds, torch.tensor([-1, 1, 0]), indexes=query)


TM_METRICS = [  # torchmetrics class, kwargs, rankwise measure, graded target
    ("RetrievalMAP", {}, "AP", False),
    ("RetrievalMAP", {"top_k": 3}, "AP@3", False),
    ("RetrievalMRR", {}, "RR", False),
    ("RetrievalPrecision", {"top_k": 3}, "P@3", False),
    ("RetrievalRecall", {"top_k": 3}, "R@3", False),
    ("RetrievalHitRate", {"top_k": 2}, "Success@2", False),
    ("RetrievalRPrecision", {}, "Rprec", False),
    ("RetrievalNormalizedDCG", {"top_k": 3}, "nDCG@3", True),
    ("RetrievalNormalizedDCG", {}, "nDCG", True),
]
SKIP = {"neg": {}, "skip": {"no_relevant": "skip", "idcg_zero": "skip"}}


def _padded_batches(seed: int):
    """Queries of 1 to 8 candidates padded with target -1 to 8 rows, some of them padding
    only, the rows shuffled; distinct scores, some <= 0."""
    rng = np.random.default_rng(seed)
    queries, width = 40, 8
    sizes = rng.integers(1, width + 1, size=queries)
    sizes[rng.random(queries) < 0.2] = 0  # nothing but padding
    real = np.arange(width)[None, :] < sizes[:, None]
    graded = np.where(real, rng.choice([0, 0, 1, 2, 3], size=(queries, width)), -1).ravel()
    binary = np.where(graded > 0, 1, graded)
    scores = rng.permutation(queries * width) / (queries * width) * 2 - 0.3
    query = np.repeat(np.arange(queries) * 2 + 3, width)
    shuffle = rng.permutation(queries * width)
    return (torch.tensor(scores[shuffle], dtype=torch.float32), torch.tensor(binary[shuffle]),
            torch.tensor(graded[shuffle]), torch.tensor(query[shuffle]))


def _per_query(retrieval, metric, kwargs, preds, target, query, batches=1):
    reference = getattr(retrieval, metric)(aggregation=lambda values, dim=None: values,
                                           **kwargs)
    for part in torch.arange(len(preds)).chunk(batches):
        reference.update(preds[part], target[part], indexes=query[part])
    return reference.compute().double()


@pytest.mark.parametrize("action", ["neg", "skip"])
@pytest.mark.parametrize("seed", [0, 1])
def test_ignore_index_drops_queries_of_padding_as_torchmetrics(seed, action):
    retrieval = pytest.importorskip("torchmetrics.retrieval")
    preds, binary, graded, query = _padded_batches(seed)
    for metric, kwargs, name, is_graded in TM_METRICS:
        target = graded if is_graded else binary
        options = {**kwargs, "empty_target_action": action, "ignore_index": -1}
        reference = getattr(retrieval, metric)(**options)
        reference.update(preds, target, indexes=query)
        theirs = float(reference.compute())
        got = rt.evaluate(preds, target, query, [name], "torchmetrics", ignore_index=-1,
                          **SKIP[action])[name]
        assert float(got) == pytest.approx(theirs, abs=1e-6), (metric, kwargs)
        per_query = rt.evaluate(preds, target, query, [name], "torchmetrics", per_query=True,
                                ignore_index=-1, **SKIP[action])[name]
        per_query = per_query[~torch.isnan(per_query)]  # "skip": left out of the mean
        expected = _per_query(retrieval, metric, options, preds, target, query)
        assert torch.allclose(per_query, expected, atol=1e-6), (metric, kwargs)
        batched = rt.RetrievalMetric(name, conventions="torchmetrics", ignore_index=-1,
                                     **SKIP[action])
        for part in torch.arange(len(preds)).chunk(5):  # padding-only batches among them
            batched.update(preds[part], target[part], query[part])
        assert float(batched.compute()[name]) == pytest.approx(theirs, abs=1e-6), metric
    # unjudged="remove" drops the same rows from the rankings but keeps a query of padding
    # only, as trec_eval -J keeps a judged query (0, the mean pulled down, under "neg")
    kept = rt.evaluate(preds, binary, query, ["AP"], "torchmetrics", per_query=True,
                       unjudged="remove", **SKIP[action])["AP"]
    dropped = rt.evaluate(preds, binary, query, ["AP"], "torchmetrics", per_query=True,
                          ignore_index=-1, **SKIP[action])["AP"]
    assert len(kept) == len(torch.unique(query)) > len(dropped)


def test_ignore_index_is_checked():
    preds, target, query = torch.tensor([0.5, 0.2]), torch.tensor([-1, -1]), torch.tensor([0, 0])
    with pytest.raises(InputError, match="every target is ignore_index"):
        rt.evaluate(preds, target, query, ["AP"], ignore_index=-1)
    with pytest.raises(InputError, match="ignore_index must be an integer"):
        rt.evaluate(preds, target, query, ["AP"], ignore_index=-1.0)
    with pytest.raises(InputError, match="ignore_index must be an integer"):
        rt.RetrievalMetric("AP", ignore_index="-1")
    metric = rt.RetrievalMetric("AP", ignore_index=-1)
    metric.update(preds, target, query)  # padding only: nothing added
    with pytest.raises(InputError, match="ignore_index are dropped"):
        metric.compute()


@pytest.mark.parametrize("metric,kwargs,name,graded", TM_METRICS)
def test_every_query_skipped_gives_zero_as_torchmetrics(metric, kwargs, name, graded):
    # torchmetrics' compute returns tensor(0.0) when "skip" leaves no query
    retrieval = pytest.importorskip("torchmetrics.retrieval")
    preds, target = torch.tensor([0.9, 0.5, 0.8]), torch.tensor([0, 0, 0])
    query = torch.tensor([0, 0, 1])
    reference = getattr(retrieval, metric)(empty_target_action="skip", **kwargs)
    reference.update(preds, target, indexes=query)
    assert float(reference.compute()) == 0.0
    got = rt.evaluate(preds, target, query, [name], "torchmetrics", **SKIP["skip"])[name]
    assert float(got) == 0.0 and got.dtype == torch.float64
    per_query = rt.evaluate(preds, target, query, [name], "torchmetrics", per_query=True,
                            **SKIP["skip"])[name]
    assert bool(torch.isnan(per_query).all())  # the queries themselves stay undefined
    batched = rt.RetrievalMetric(name, conventions="torchmetrics", **SKIP["skip"])
    batched.update(preds, target, query)
    assert float(batched.compute()[name]) == 0.0
    # a measure that propagates undefined values stays NaN
    assert math.isnan(float(rt.evaluate(preds, target, query, [name], no_relevant="nan",
                                        idcg_zero="nan")[name]))


# ------------------------------------------------------------------------------ the API


def test_functions_batches_and_tensors_out():
    labels, scores, query = candidates(3, queries=40)
    preds, target, indexes = torch.tensor(scores), torch.tensor(labels), torch.tensor(query)
    together = rt.evaluate(preds, target, indexes, ["nDCG@10", "AP", "RR@10", "P@5", "R@10",
                                                    "Success@5", "Rprec"])
    assert float(rt.ndcg(preds, target, indexes, k=10)) == float(together["nDCG@10"])
    assert float(rt.average_precision(preds, target, indexes)) == float(together["AP"])
    assert float(rt.reciprocal_rank(preds, target, indexes, k=10)) == float(together["RR@10"])
    assert float(rt.precision(preds, target, indexes, k=5)) == float(together["P@5"])
    assert float(rt.recall(preds, target, indexes, k=10)) == float(together["R@10"])
    assert float(rt.hit_rate(preds, target, indexes, k=5)) == float(together["Success@5"])
    assert float(rt.r_precision(preds, target, indexes)) == float(together["Rprec"])
    metric = rt.RetrievalMetric("nDCG@10", "AP", "RR@10")
    for part in torch.arange(len(preds)).chunk(7):  # queries split across batches
        metric.update(preds[part], target[part], indexes[part])
    batched = metric.compute()
    for name, value in batched.items():
        assert isinstance(value, torch.Tensor) and value.ndim == 0
        assert float(value) == pytest.approx(float(together[name]), abs=1e-12)
    metric.reset()
    with pytest.raises(InputError, match="update"):
        metric.compute()


def test_gradients_do_not_flow_and_inputs_are_left_alone():
    preds = torch.tensor([0.3, 0.2, 0.9], requires_grad=True)
    target, indexes = torch.tensor([1, 0, 1]), torch.tensor([0, 0, 0])
    value = rt.ndcg(preds, target, indexes)
    assert not value.requires_grad and preds.grad is None
    assert preds.tolist() == pytest.approx([0.3, 0.2, 0.9])


def test_bad_tensors_are_explained():
    preds, target, indexes = torch.tensor([0.3, 0.2]), torch.tensor([1, 0]), torch.tensor([0, 0])
    with pytest.raises(InputError, match="have 2, 1 and 2 elements"):
        rt.ndcg(preds, target[:1], indexes)
    with pytest.raises(InputError, match="integer query ids"):
        rt.ndcg(preds, target, indexes.double())
    with pytest.raises(InputError, match="must be a torch.Tensor"):
        rt.ndcg([0.3, 0.2], target, indexes)
    with pytest.raises(InputError, match=r"preds, row 1: preds must be finite"):
        rt.ndcg(torch.tensor([0.3, math.nan]), target, indexes)


@pytest.mark.parametrize("measure, conventions", [("nDCG(gain=exp)@2", {}),
                                                  ("DCG(gain=exp)", {}),
                                                  ("nDCG@2", {"gain": "exponential"})])
def test_grades_too_large_for_exponential_gain_are_refused_as_by_the_numpy_engine(
        measure, conventions):
    """2^1024 - 1 overflows: the tensors' nDCG was 0.0 and DCG inf where the numpy engine
    (and ERR here) refuse the grade."""
    preds, indexes = torch.tensor([0.9, 0.8, 0.4, 0.5]), torch.tensor([0, 0, 1, 1])
    target = torch.tensor([1024, 0, 0, 1])
    message = r"^judgments: grade 1024 is too large for exponential gain"
    with pytest.raises(InputError, match=message):
        rankwise.evaluate(*rankwise.from_arrays(target.numpy(), preds.numpy(),
                                                query=indexes.numpy()), [measure], **conventions)
    with pytest.raises(InputError, match=message):
        rt.evaluate(preds, target, indexes, [measure], **conventions)
    assert float(rt.evaluate(preds, target - 1, indexes, [measure], **conventions)[measure]) > 0


def test_bfloat16_scores_reach_the_numpy_engine():
    """Measures the tensors' code leaves to the numpy engine (ERR) copy the tensors to the
    host, which bfloat16 ones could not be (torch's TypeError: Got unsupported ScalarType
    BFloat16) while nDCG took them."""
    preds = torch.tensor([0.75, 0.5, 0.25, 0.5])
    target, indexes = torch.tensor([2, 0, 1, 1]), torch.tensor([0, 0, 1, 1])
    measures = ["ERR@2", "nDCG@2", "Bpref"]
    assert rt.evaluate(preds.bfloat16(), target, indexes, measures) == \
        rt.evaluate(preds, target, indexes, measures)
    assert rt.evaluate(preds, target.bfloat16(), indexes, measures) == \
        rt.evaluate(preds, target, indexes, measures)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_tensors_stay_on_the_device():
    labels, scores, query = candidates(4)
    cpu = rt.evaluate(torch.tensor(scores), torch.tensor(labels), torch.tensor(query), MEASURES,
                      per_query=True, ties="expected")
    cuda = rt.evaluate(torch.tensor(scores).cuda(), torch.tensor(labels).cuda(),
                       torch.tensor(query).cuda(), MEASURES, per_query=True, ties="expected")
    for name, values in cpu.items():
        assert cuda[name].device.type == "cuda"
        assert np.allclose(cuda[name].cpu().numpy(), values.numpy(), atol=1e-12, equal_nan=True)


def test_a_ranking_in_ideal_order_has_ndcg_exactly_one():
    """The ideal DCG came from prefix sums of the discounts: one query in seven ranked in the
    ideal order had nDCG 1 + 2.2e-16, a third 1 - 1.1e-16; now summed as the DCG is."""
    torch = pytest.importorskip("torch")
    import rankwise.torch as rt

    rng = np.random.default_rng(3)
    preds, target, indexes = [], [], []
    for q in range(400):
        grades = rng.integers(0, 5, int(rng.integers(1, 30)))
        scores = np.empty(len(grades))
        scores[np.argsort(-grades, kind="stable")] = np.arange(len(grades), 0, -1)
        preds += scores.tolist()
        target += grades.tolist()
        indexes += [q] * len(grades)
    out = rt.evaluate(torch.tensor(preds, dtype=torch.float64), torch.tensor(target),
                      torch.tensor(indexes), ["nDCG", "nDCG@5", "nDCG(gain=exp)"],
                      per_query=True)
    for name, values in out.items():
        values = torch.as_tensor(values)
        if values.ndim:
            assert bool(((values == 1.0) | (values == 0.0)).all()), name
            assert int((values == 1.0).sum()) > 350, name
