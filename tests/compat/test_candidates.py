"""Candidates (fixed candidate lists scored again and again) against the engine:
``rankwise.evaluate(*rankwise.from_arrays(...))`` on the same labels and scores must give the
same per-query values and means under every convention that changes the order or the values.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import rankwise
from rankwise import InputError
from rankwise.compat.candidates import Candidates

MEASURES = ["nDCG@10", "nDCG", "DCG@5", "AP", "AP@5", "P@5", "R@10", "RR", "RR@3", "Rprec",
            "Bpref", "Success@3", "ERR@10", "IPrec@0.3", "11pt_avg", "F1@5", "NumRelRet"]
CONVENTIONS = [
    {}, {"ties": "docid_asc"}, {"ties": "input_order"}, {"ties": "expected"},
    {"ties": "optimistic"}, {"ties": "pessimistic"}, {"gain": "exponential"},
    {"discount": "jarvelin"}, {"discount_base": 10.0}, {"run_only_queries": "zero"},
    {"max_depth": 5}, {"ap_denominator": "min_relevant_cutoff"},
    {"ap_denominator": "relevant_retrieved"}, {"score_precision": "float32"},
    {"relevance_threshold": 2}, {"no_relevant": "nan"}, {"idcg_zero": "skip"},
    {"short_lists": "length"}, {"nonpositive_scores": "nonrelevant"}, {"unjudged": "remove"},
]


def arrays(seed: int = 0, queries: int = 120):
    """Labels (some negative: unjudged), tied scores (one decimal), list lengths 1 to 29 so
    that doc-id ties cross "9" / "10" in byte order."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 30, size=queries)
    n = int(sizes.sum())
    labels = rng.choice([-1, 0, 0, 0, 1, 2, 3], size=n).astype(float)
    scores = np.round(rng.random(n) * 2 - 0.5, 1)
    return labels, scores, sizes


@pytest.mark.parametrize("conventions", CONVENTIONS, ids=lambda c: ",".join(
    f"{k}={v}" for k, v in c.items()) or "trec_eval")
def test_same_values_as_the_engine(conventions):
    labels, scores, sizes = arrays()
    candidates = Candidates(labels, group=sizes, **conventions)
    got = candidates.values(scores, MEASURES)
    means = candidates.means(scores, MEASURES)
    qrels, run = rankwise.from_arrays(labels, scores, group=sizes)
    result = rankwise.evaluate(qrels, run, MEASURES, per_query=True, **conventions)
    expected = result.per_query()
    assert set(candidates.query_ids) == set(expected)
    for name in result.measures:
        for i, qid in enumerate(candidates.query_ids):
            a, b = got[name][i], expected[qid][name]
            assert a == pytest.approx(b, abs=1e-12, nan_ok=True), (name, qid)
        assert means[name] == pytest.approx(result.mean(name), abs=1e-12, nan_ok=True), name


def test_query_ids_per_row_in_any_order():
    labels, scores, sizes = arrays(1)
    query = np.repeat(np.arange(len(sizes)) * 7 % 1000, sizes)
    shuffle = np.random.default_rng(1).permutation(len(labels))
    candidates = Candidates(labels[shuffle], query=query[shuffle])
    got = candidates.values(scores[shuffle], MEASURES)
    result = rankwise.evaluate(*rankwise.from_arrays(labels[shuffle], scores[shuffle],
                                                     query=query[shuffle]),
                               MEASURES, per_query=True)
    expected = result.per_query()
    assert candidates.query_ids.tolist() == sorted(candidates.query_ids, key=int)
    for name in result.measures:
        for i, qid in enumerate(candidates.query_ids):
            assert got[name][i] == pytest.approx(expected[qid][name], abs=1e-12), (name, qid)


def test_new_scores_reuse_what_does_not_depend_on_them():
    labels, scores, sizes = arrays(2)
    candidates = Candidates(labels, group=sizes)
    first = candidates.means(scores, ["nDCG@10"])
    other = candidates.means(scores[::-1].copy(), ["nDCG@10"])
    assert candidates.means(scores, ["nDCG@10"]) == first
    fresh = Candidates(labels, group=sizes).means(scores[::-1].copy(), ["nDCG@10"])
    assert other == fresh


def test_bad_input_is_explained():
    with pytest.raises(InputError, match="group sizes add up to 4, but there are 5 rows"):
        Candidates([1, 0, 0, 1, 0], group=[2, 2])
    with pytest.raises(InputError, match="labels must be finite"):
        Candidates([1, math.nan], group=[2])
    with pytest.raises(InputError, match="either group"):
        Candidates([1, 0], group=[2], query=[0, 0])
    candidates = Candidates([1, 0, 0], group=[3])
    with pytest.raises(InputError, match="got 2 scores for 3 candidates"):
        candidates.means([0.1, 0.2], ["P@1"])
    with pytest.raises(InputError, match=r"row 1: scores must be finite"):
        candidates.means([0.1, math.inf, 0.3], ["P@1"])
    # the checks of rankwise.from_arrays, shared: sizes that wrap around 64 bits, integral
    # float sizes (LightGBM's), scores that are not numbers, a missing query id
    with pytest.raises(InputError, match="the size of group 0, 4611686018427387904, is larger"):
        Candidates([1, 0, 0, 1, 0], group=np.array([2**62] * 4 + [5], np.int64))
    assert Candidates([1, 0, 0, 1, 0], group=np.array([3.0, 2.0])).num_queries == 2
    with pytest.raises(InputError, match=r"scores: scores must be numbers \(got an array of <U3"):
        candidates.means(["0.1", "0.2", "0.3"], ["P@1"])
    with pytest.raises(InputError, match=r"labels: labels must be numbers"):
        Candidates(["1", "0"], group=[2])
    with pytest.raises(InputError, match=r"query, row 1: missing query id"):
        Candidates([1, 0], query=np.array(["a", None], dtype=object))
