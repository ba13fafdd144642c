"""Small random TREC collections with the awkward cases in them, for tests/data/random.

    python -m tests.conformance.random_collections SEED FOLDER

writes ``qrels``, ``qrels.inrun`` (the judgments of the queries the run has) and ``run`` for
one seed. Each collection has 1-12 queries with ids like ``q3``, ``3`` or ``003``; doc ids of
1 to 15 characters (numbers, shared prefixes, punctuation); grades 0 up to 1-4, with -1
(trec_eval: judged, not pooled) in a third of them; queries without relevant documents, only
in the run or only in the judgments; runs of 1-80 documents with negative scores in some and
scores rounded to 0, 1, 2 or 6 decimals (so ties are common), random rank columns, and a
fifth of the runs with their lines shuffled. The expected outputs in tests/data/random were
written by trec_eval 10.0 from these files (tests/data/random/README.md).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path


def doc_id(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.3:
        return f"d{rng.randint(0, 60)}"
    if kind < 0.5:
        return str(rng.randint(0, 200))
    if kind < 0.7:
        return "D" + "x" * rng.randint(0, 12) + str(rng.randint(0, 9))
    return "".join(rng.choice("abcAB019-_.") for _ in range(rng.randint(1, 14)))


def collection(seed: int) -> tuple[list[str], list[str]]:
    """The qrels lines and the run lines of one seed."""
    rng = random.Random(seed)
    queries = list(dict.fromkeys(rng.choice([f"q{i}", str(i), f"{i:03d}"])
                                 for i in range(rng.randint(1, 12))))
    qrels, run = [], []
    top_grade = rng.choice([1, 1, 2, 3, 4])
    negative = rng.random() < 0.3
    decimals = rng.choice([0, 1, 2, 6])
    for q in queries:
        pool = list(dict.fromkeys(doc_id(rng) for _ in range(rng.randint(1, 80))))
        judged = rng.random() < 0.85
        ranked = rng.random() < 0.85 or not judged
        if judged:
            for d in rng.sample(pool, rng.randint(1, len(pool))):
                grade = rng.randint(-1 if negative else 0, top_grade)
                qrels.append(f"{q} 0 {d} {0 if rng.random() < 0.5 else grade}")
        if ranked:
            base = rng.uniform(-5, 5) if rng.random() < 0.3 else rng.uniform(0, 30)
            for d in rng.sample(pool, rng.randint(1, len(pool))):
                score = round(rng.uniform(base - 3, base + 3), decimals)
                run.append(f"{q} Q0 {d} {rng.randint(0, 1000)} "
                           f"{int(score) if decimals == 0 else score} tag")
    if not qrels:
        qrels.append(f"{queries[0]} 0 zz 1")
    if rng.random() < 0.2:
        rng.shuffle(run)
    return qrels, run


def write(seed: int, folder: Path) -> None:
    qrels, run = collection(seed)
    folder.mkdir(parents=True, exist_ok=True)
    ranked = {line.split()[0] for line in run}
    (folder / "qrels").write_text("\n".join(qrels) + "\n")
    (folder / "qrels.inrun").write_text(
        "\n".join(line for line in qrels if line.split()[0] in ranked) + "\n")
    (folder / "run").write_text("\n".join(run) + "\n")


if __name__ == "__main__":
    write(int(sys.argv[1]), Path(sys.argv[2]))
