"""Seeded random test collections for differential tests against peer implementations.

A collection is a pair of dict-of-dicts, ``qrels = {qid: {docid: grade}}`` and
``run = {qid: {docid: score}}`` (the form pytrec_eval, ranx and rankwise all take), built to
exercise every corner where implementations tend to disagree:

* graded judgments 0..3 (optionally a few negative grades, "in the pool but not judged");
* tied scores: every score is rounded to 2 decimals, so most lists contain ties, which must be
  broken by doc id, compared as byte strings, descending (trec_eval);
* doc ids whose byte order differs from their numeric order ("d7" > "d10" > "d1");
* unjudged retrieved documents;
* queries whose judgments are all non-relevant (no relevant document);
* queries only in the run and queries only in the judgments;
* lists shorter than the usual cutoffs (1 to 9 documents) and lists longer than 20.

Scores and float32: pytrec_eval (like trec_eval) keeps scores in single precision, while
rankwise keeps them as float64. Two distinct float64 scores that round to the same float32
would be tied for pytrec_eval but not for rankwise, and the rankings would differ for reasons
unrelated to any measure. Scores here are multiples of 0.01 in [0, 10): float32 resolves
about 1e-6 at 10, so distinct scores stay distinct and ordered in float32 (gaps 0.01 are
four orders of magnitude larger), and equal scores stay equal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Collection:
    qrels: dict[str, dict[str, int]]
    run: dict[str, dict[str, float]]
    seed: int

    @property
    def shared_queries(self) -> set[str]:
        return set(self.qrels) & set(self.run)


def make_collection(seed: int, num_queries: int = 300, depth: int = 100, pool: int = 250,
                    negative_grades: bool = False) -> Collection:
    """A random collection; identical for identical arguments.

    Parameters
    ----------
    seed : int
        Seed of the generator.
    num_queries : int
        Number of query ids drawn (each ends up in the judgments, the run, or both).
    depth : int
        Longest ranked list.
    pool : int
        Number of candidate documents per query (doc ids ``d0``..``d{pool-1}``).
    negative_grades : bool
        Give a few judgments the grade -1 (trec_eval: judged "not in the pool", i.e. unjudged).
    """
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    docs = np.array([f"d{i}" for i in range(pool)])
    for i in range(num_queries):
        qid = f"q{i}"
        where = rng.choice(["both", "run_only", "qrels_only"], p=[0.86, 0.07, 0.07])
        if where != "run_only":
            qrels[qid] = _judgments(rng, docs, negative_grades)
        if where != "qrels_only":
            run[qid] = _ranking(rng, docs, qrels.get(qid, {}), depth)
    return Collection(qrels, run, seed)


def _judgments(rng: np.random.Generator, docs: np.ndarray, negative: bool) -> dict[str, int]:
    n = int(rng.integers(1, 60))
    judged = rng.choice(docs, size=n, replace=False)
    kind = rng.random()
    if kind < 0.1:  # no relevant document at all
        grades = np.zeros(n, dtype=int)
    elif kind < 0.2:  # exactly one relevant document (known-item style)
        grades = np.zeros(n, dtype=int)
        grades[0] = int(rng.integers(1, 4))
    else:
        grades = rng.choice([0, 1, 2, 3], size=n, p=[0.55, 0.2, 0.15, 0.1])
    if negative:
        grades = np.where(rng.random(n) < 0.08, -1, grades)
    return {str(d): int(g) for d, g in zip(judged, grades)}


def _ranking(rng: np.random.Generator, docs: np.ndarray, judged: dict[str, int],
             depth: int) -> dict[str, float]:
    kind = rng.random()
    if kind < 0.15:
        n = int(rng.integers(1, 10))  # shorter than most cutoffs
    elif kind < 0.3:
        n = depth
    else:
        n = int(rng.integers(10, depth + 1))
    n = min(n, len(docs))
    # favour judged documents so that measures are not all zero, keep plenty unjudged ones
    weights = np.ones(len(docs))
    if judged:
        index = {d: k for k, d in enumerate(docs)}
        for d, g in judged.items():
            weights[index[d]] += 4.0 + 4.0 * max(g, 0)
    chosen = rng.choice(docs, size=n, replace=False, p=weights / weights.sum())
    # scores are multiples of 0.01 (see the module docstring); a narrow range for some queries
    # makes large tie groups
    top = 0.2 if rng.random() < 0.3 else 10.0
    scores = np.round(rng.uniform(0.0, top, size=n), 2)
    return {str(d): float(s) for d, s in zip(chosen, scores)}
