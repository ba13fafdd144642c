"""A seeded synthetic collection for the report tests, built as Arrow tables (vectorised, so
10 systems x 10,000 queries x 100 documents take a few seconds).

Each query has a pool of documents with grades 0-3 (most 0); a judged subset (relevant ones
nearly always, others half the time); each system scores the pool as ``strength * grade +
noise``, rounded to two decimals (so ties occur, as in real runs), and returns its top
``depth``. Every tenth query of the last system is cut short, and the last system misses one
query, so short lists and one-sided queries occur too.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def make_collection(queries: int = 40, systems: int = 3, depth: int = 30, seed: int = 7,
                    prefix: str = "q", doc_prefix: str = "d"):
    """(qrels table, {system name: run table})."""
    rng = np.random.default_rng(seed)
    pool = depth + depth // 2
    grade = rng.choice(4, size=(queries, pool), p=[0.7, 0.15, 0.1, 0.05]).astype(np.float64)
    judged = rng.random((queries, pool)) < np.where(grade > 0, 0.95, 0.5)
    qids = pa.array([f"{prefix}{i:05d}" for i in range(queries)])
    dids = pa.array([f"{doc_prefix}{j:04d}" for j in range(pool)])
    qi, dj = np.nonzero(judged)
    qrels = pa.table({"query": qids.take(pa.array(qi)), "doc": dids.take(pa.array(dj)),
                      "relevance": grade[qi, dj]})
    runs = {}
    strengths = np.linspace(1.2, 0.0, systems) if systems > 1 else np.array([1.0])
    for s, strength in enumerate(strengths):
        score = np.round(strength * grade + rng.normal(size=grade.shape), 2)
        top = np.argsort(-score, axis=1, kind="stable")[:, :depth]
        keep = np.ones(top.shape, dtype=bool)
        rows = np.arange(queries)
        if s == systems - 1 and systems > 1:
            keep[rows % 10 == 3, depth // 3:] = False  # short lists
            keep[rows == queries - 1] = False  # one query missing
        qi = np.repeat(rows[:, None], depth, axis=1)[keep]
        dj = top[keep]
        runs[f"sys{s}"] = pa.table({"query": qids.take(pa.array(qi)),
                                    "doc": dids.take(pa.array(dj)),
                                    "score": score[qi, dj]})
    return qrels, runs
