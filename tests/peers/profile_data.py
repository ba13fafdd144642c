"""One seeded generator of shared data for the profile tests (tests/peers/test_profile_*.py).

Every profile is proven against its peer on the same kind of collection: random queries plus a
fixed set of edge-case queries, as ``qrels = {qid: {doc: grade}}`` and ``run = {qid: {doc:
score}}`` (dict insertion order is the run's row order, which matters to peers that keep tied
documents in input order). What it contains:

* graded judgments 0..3 (optionally a few grade -1: "in the pool, not judged");
* tied scores (scores rounded to 1 or 2 decimals, narrow ranges for some queries), or, with
  ``ties=False``, scores that are all distinct within a query, in float64 and in float32;
* unjudged retrieved documents, documents scored 0 or below, doc ids whose byte order is not
  their numeric order ("d7" > "d10" > "d1");
* lists of 1 to 4 documents (shorter than the cutoffs), 5 to 15 documents, and longer lists
  (numba's sort, inside ranx, is only stable below 16 elements);
* the edge-case queries of :data:`EDGE`.

The data is small on purpose: ranx compiles with numba on first use, and torchmetrics and
scikit-learn are called once per query.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

#: Edge-case queries (ids sort after the random ones, "q00".."q99").
EDGE = {
    "x-no-relevant": "judged, but every judgment is grade 0",
    "x-qrels-only": "judged, absent from the run",
    "x-run-only": "ranked, never judged",
    "x-empty-run": "judged, and in the run with no document ({qid: {}})",
    "x-float32": "relevant 'a' scored 2^24 + 1 above non-relevant 'b' at 2^24: a tie in float32",
    "x-single": "one retrieved document",
    "x-nonpositive": "every relevant document retrieved, some scored 0 or below",
    "x-negative": "every score below 0, a relevant document first",
    "x-all-tied": "every retrieved document has the same score (distinct with ties=False)",
    "x-no-nonrelevant": "relevant judgments only (no judged non-relevant document)",
}

#: 2^24 + 1 is not a float32: it rounds to 2^24 (ties to even).
FLOAT32_HIGH, FLOAT32_LOW = float(2 ** 24 + 1), float(2 ** 24)


@dataclass
class ProfileData:
    """A collection; ``run`` may hold ``{}`` for a query (see :data:`EDGE`)."""

    qrels: dict[str, dict[str, int]]
    run: dict[str, dict[str, float]]
    seed: int
    ties: bool
    edges: tuple[str, ...] = field(default=())

    def without(self, *queries: str) -> "ProfileData":
        """The same data without some queries (in the judgments and the run)."""
        drop = set(queries)
        return replace(self, qrels={q: d for q, d in self.qrels.items() if q not in drop},
                       run={q: d for q, d in self.run.items() if q not in drop},
                       edges=tuple(e for e in self.edges if e not in drop))

    def only(self, keep) -> "ProfileData":
        """The same data restricted to the queries for which ``keep(qid)`` is true."""
        return self.without(*[q for q in set(self.qrels) | set(self.run) if not keep(q)])

    def with_run(self, run: dict[str, dict[str, float]]) -> "ProfileData":
        return replace(self, run=run)

    def lists(self, queries=None, unjudged: float = 0.0):
        """Per query of the run (or of ``queries``): ``(qid, grades, scores)`` as arrays in row
        order, unjudged documents given grade ``unjudged``: the inputs of scikit-learn and
        torchmetrics, which only see lists."""
        for qid in (self.run if queries is None else queries):
            docs = self.run.get(qid, {})
            judged = self.qrels.get(qid, {})
            grades = np.array([judged.get(d, unjudged) for d in docs], dtype=np.float64)
            scores = np.array(list(docs.values()), dtype=np.float64)
            yield qid, grades, scores


def make_profile_data(seed: int, num_queries: int = 40, max_depth: int = 40, ties: bool = True,
                      negative_grades: bool = False, edges: bool = True,
                      float32_pair: bool = True) -> ProfileData:
    """Random queries "q00", "q01", ... plus the :data:`EDGE` queries; identical for identical
    arguments.

    Parameters
    ----------
    seed : int
        Seed of the generator.
    num_queries : int
        Number of random queries (each judged and ranked).
    max_depth : int
        Longest random list (at most 60, the pool of doc ids per query).
    ties : bool
        Whether scores may tie (within a query). With ``False`` every query's scores are
        distinct, also after rounding to float32, so every peer sees the same ranking.
    negative_grades : bool
        Give about 8 % of the judgments the grade -1.
    edges : bool
        Add the :data:`EDGE` queries.
    float32_pair : bool
        Keep ``x-float32``, whose two top scores tie in float32 (even with ``ties=False``).
    """
    rng = np.random.default_rng(seed)
    pool = np.array([f"d{i}" for i in range(60)])
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(num_queries):
        qid = f"q{i:02d}"
        qrels[qid] = _judgments(rng, pool, negative_grades)
        run[qid] = _ranking(rng, pool, qrels[qid], max_depth, ties)
    names: tuple[str, ...] = ()
    if edges:
        edge_qrels, edge_run = _edge_queries(rng, ties, float32_pair)
        qrels.update(edge_qrels)
        run.update(edge_run)
        names = tuple(sorted(set(edge_qrels) | set(edge_run)))
    return ProfileData(qrels, run, seed, ties, names)


def _judgments(rng: np.random.Generator, pool: np.ndarray, negative: bool) -> dict[str, int]:
    n = int(rng.integers(3, 30))
    judged = rng.choice(pool, size=n, replace=False)
    if rng.random() < 0.15:  # exactly one relevant document (known-item style)
        grades = np.zeros(n, dtype=int)
        grades[0] = int(rng.integers(1, 4))
    else:
        grades = rng.choice([0, 1, 2, 3], size=n, p=[0.5, 0.2, 0.18, 0.12])
        grades[0] = max(grades[0], 1)  # at least one relevant (no-relevant: an edge query)
        grades[-1] = 0  # and one judged non-relevant
    if negative:
        grades = np.where(rng.random(n) < 0.08, -1, grades)
    return {str(d): int(g) for d, g in zip(judged, grades)}


def _ranking(rng: np.random.Generator, pool: np.ndarray, judged: dict[str, int], max_depth: int,
             ties: bool) -> dict[str, float]:
    kind = rng.random()
    if kind < 0.2:
        n = int(rng.integers(1, 5))
    elif kind < 0.6:
        n = int(rng.integers(5, 16))
    else:
        n = int(rng.integers(16, max(max_depth, 16) + 1))
    n = min(n, max_depth, len(pool))
    weights = np.ones(len(pool))  # favour judged documents; plenty stay unjudged
    index = {d: k for k, d in enumerate(pool)}
    for d, g in judged.items():
        weights[index[d]] += 2.0 + 3.0 * max(g, 0)
    chosen = rng.choice(pool, size=n, replace=False, p=weights / weights.sum())
    low = float(rng.choice([-1.0, 0.0, 2.0]))  # some lists reach 0 and below
    if ties:
        width, decimals = (0.3, 1) if rng.random() < 0.3 else (8.0, 2)
        scores = np.round(rng.uniform(low, low + width, size=n), decimals)
    else:  # distinct multiples of 0.01 (distinct in float32 too: |score| < 10)
        scores = np.round(low + 0.01 * rng.choice(700, size=n, replace=False), 2)
    return {str(d): float(s) for d, s in zip(chosen, scores)}


def _edge_queries(rng: np.random.Generator, ties: bool, float32_pair: bool):
    qrels = {
        "x-no-relevant": {"d1": 0, "d2": 0, "d3": 0},
        "x-qrels-only": {"d1": 1, "d2": 0},
        "x-empty-run": {"d1": 2, "d4": 0},
        "x-single": {"d5": 1, "d6": 0, "d7": 2},
        "x-nonpositive": {"d1": 1, "d2": 3, "d3": 0, "d4": 2},
        "x-all-tied": {"d2": 1, "d9": 2, "d10": 0},
        "x-no-nonrelevant": {"d3": 1, "d8": 2},
        "x-negative": {"d4": 1, "d5": 0, "d6": 0},
    }
    run = {
        "x-no-relevant": {"d1": 0.5, "d9": 0.4, "d2": 0.3},
        "x-run-only": {"d1": 0.9, "d2": 0.8, "d3": 0.7},
        "x-empty-run": {},
        "x-single": {"d7": 1.5},
        # d4 (grade 2) at 0 and d2 (grade 3) below 0: retrieved, but not "predicted positive"
        "x-nonpositive": {"d1": 0.6, "d3": 0.2, "d4": 0.0, "x": -0.1, "d2": -0.4},
        "x-no-nonrelevant": {"d11": 0.9, "d8": 0.7, "d3": 0.2},
        "x-negative": {"d4": -0.5, "d5": -1.5, "d7": -2.5},
    }
    if ties:  # a tie at the top: d10 (non-relevant) first in input order, unjudged x last
        run["x-all-tied"] = {"d10": 1.0, "d2": 1.0, "x": 1.0, "d9": 1.0}
    else:
        run["x-all-tied"] = {"d10": 1.3, "d2": 1.2, "x": 1.1, "d9": 1.0}
    if float32_pair:
        qrels["x-float32"] = {"a": 1, "b": 0, "c": 2}
        run["x-float32"] = {"b": FLOAT32_LOW, "a": FLOAT32_HIGH, "c": 3.0}
    return qrels, run
