"""Small random collections with awkward inputs, for the differential fuzz tests of the
pytrec_eval drop-in and the ir_measures provider (see tests/compat/test_pytrec_eval_fuzz.py
for what they hold and why two kinds of input are changed before pytrec_eval sees them).
"""

from __future__ import annotations

import numpy as np

DOC_POOLS = [
    [f"d{i}" for i in range(30)],
    [str(i) for i in range(30)],
    ["01", "1", "1.0", "10", "2", "0", "-1", "1e3", "007", "7"],
    ["é", "e", "ß", "ss", "日本", "日", "Ω", "ω", "a b", "😀", "z", "Z", "é1", "É"],
    [" ", "a", "A", "_", "-", "~", "\u00a0", "a\tb", "Ä", "a" * 40],  # no "": refused
]
QUERY_IDS = ["q1", "1", "01", "10", "2", "é", "日本", "q 3", "😀", "-5", "0"]
NOT_RETRIEVED = "\x7fnot retrieved"  # sorts after every doc id of the pools


def collection(seed: int) -> tuple[dict, dict]:
    """Random judgments and run (see the module docstring)."""
    rng = np.random.default_rng(seed)
    pool = list(DOC_POOLS[int(rng.integers(len(DOC_POOLS)))])
    if rng.random() < 0.3:
        pool = sorted(set(pool) | set(DOC_POOLS[int(rng.integers(len(DOC_POOLS)))]))
    queries = [str(q) for q in rng.choice(QUERY_IDS, size=int(rng.integers(1, 8)),
                                          replace=False)]
    grade_kind, score_kind = rng.random(), rng.random()
    qrels: dict = {}
    run: dict = {}
    for qid in queries:
        where = rng.choice(["both", "run", "qrels", "empty ranking", "no judgment",
                            "unjudged empty"], p=[0.65, 0.1, 0.1, 0.05, 0.05, 0.05])
        if where in ("both", "qrels", "empty ranking"):
            docs = rng.choice(pool, size=int(rng.integers(1, len(pool) + 1)), replace=False)
            if grade_kind < 0.3:
                grades = rng.integers(-2, 4, size=len(docs))
            elif grade_kind < 0.6:
                grades = rng.integers(0, 2, size=len(docs))
            else:
                grades = rng.integers(0, 5, size=len(docs))
            if rng.random() < 0.06:
                grades = rng.integers(-2, 0, size=len(docs))  # judged only negatively
            qrels[qid] = {str(d): int(g) for d, g in zip(docs, grades)}
        if where == "no judgment":
            qrels[qid] = {}  # pytrec_eval drops queries without judgments
        if where in ("empty ranking", "unjudged empty"):
            run[qid] = {}
        elif where != "qrels":
            docs = rng.choice(pool, size=int(rng.integers(1, len(pool) + 1)), replace=False)
            run[qid] = {str(d): s for d, s in zip(docs, _scores(rng, score_kind, len(docs)))}
    keys = list(run)
    rng.shuffle(keys)
    return qrels, {q: run[q] for q in keys}


def _scores(rng, kind: float, n: int) -> list[float]:
    if kind < 0.3:
        scores = rng.integers(-3, 3, size=n).astype(float)
    elif kind < 0.6:
        scores = np.round(rng.normal(size=n), 1)
    elif kind < 0.8:
        scores = rng.normal(size=n) * 10.0 ** int(rng.integers(-3, 4))
    elif kind < 0.87:
        scores = np.full(n, float(rng.normal()))
    elif kind < 0.94:
        scores = rng.choice([0.0, -0.0, 1e-300, -1e-300, 1e30, -1e30, 5e-324], size=n)
    else:
        scores = float(rng.normal()) + rng.integers(0, 3, size=n) * 1e-9
    return [float(s) for s in scores]


def as_pytrec_eval_can_take_it(qrels: dict, run: dict) -> tuple[dict, dict]:
    """The input without judged empty rankings, and queries judged only negatively with a
    grade-0 judgment of a document nobody retrieved (see the module docstring)."""
    run = {q: v for q, v in run.items() if v or not qrels.get(q)}
    qrels = {q: {**v, NOT_RETRIEVED: 0} if v and max(v.values()) < 0 else v
             for q, v in qrels.items()}
    return qrels, run
