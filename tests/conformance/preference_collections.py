"""Small random preference collections, for tests/data/preferences.

    python -m tests.conformance.preference_collections SEED FOLDER

writes, for one seed, ``prefs`` (``qid jg jsg docid rel_level``), ``qrels`` (``qid iter docid
rel``, iter 0 or 1: read as preferences by ``-R qrels_prefs``), ``prefs.inrun`` and
``qrels.inrun`` (the lines of the queries the run has) and ``run``. Each collection has 1-6
queries; judgment groups of one sub-group (every document against every other) or of two or
three (a partial order, whose transitive preferences count: each sub-group grades some of
the group's documents by one hidden grade, scaled by 0.5, 1 or 2, so that the group is
consistent); rel_levels 0 (not relevant) to 6, fractions among them; doc ids whose byte
order is not their numeric order (``d10`` before ``d9``, ``B`` before ``a``); runs ranking
some judged and some unjudged documents with scores of few values (ties are common), a
judged query missing from some runs and a query only in the run in some. The expected
outputs in tests/data/preferences were written by trec_eval 10.0 from these files
(tests/data/preferences/README.md).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

DOC_IDS = ("d1", "d2", "d9", "d10", "d11", "B7", "a7", "A-1", "doc.3", "x_2", "Z", "z", "0",
           "10", "9", "d9.1")


def collection(seed: int) -> tuple[list[str], list[str], list[str], set[str]]:
    """The prefs lines, the qrels lines, the run lines of one seed, and the queries the run
    ranks."""
    rng = random.Random(seed)
    prefs, qrels, run = [], [], []
    ranked: set[str] = set()
    for q in range(rng.randint(1, 6)):
        qid = f"q{q}" if rng.random() < 0.7 else str(q)
        pool = rng.sample(DOC_IDS, rng.randint(2, len(DOC_IDS)))
        for g in range(rng.randint(1, 3)):
            grade = {d: rng.choice([0, 0, 1, 2, 3]) for d in pool}
            for s in range(rng.choice([1, 1, 2, 3])):
                scale = rng.choice([1, 1, 2, 0.5])
                for d in rng.sample(pool, rng.randint(1, min(7, len(pool)))):
                    prefs.append(f"{qid}\tjg{g}\t{s}\t{d}\t{grade[d] * scale:g}")
        for g in range(rng.choice([1, 1, 2])):
            for d in rng.sample(pool, rng.randint(1, len(pool))):
                qrels.append(f"{qid} {g} {d} {rng.choice([0, 0, 1, 2])}")
        if rng.random() < 0.2:
            continue  # judged, not ranked
        docs = pool + [f"u{i}" for i in range(rng.randint(0, 5))]
        chosen = rng.sample(docs, rng.randint(1, len(docs)))
        ranked.add(qid)
        for rank, d in enumerate(chosen, start=1):
            run.append(f"{qid} Q0 {d} {rank} {rng.randint(0, 8) / 4:g} run{seed}")
    if rng.random() < 0.3:
        run.append(f"only Q0 d1 1 1.0 run{seed}")
        ranked.add("only")
    if not ranked - {"only"}:  # trec_eval needs a query with both
        qid = prefs[0].split()[0]
        run.append(f"{qid} Q0 d1 1 1.0 run{seed}")
        ranked.add(qid)
    rng.shuffle(run)
    return prefs, qrels, run, ranked


def write(seed: int, folder: Path) -> None:
    prefs, qrels, run, ranked = collection(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for name, lines in (("prefs", prefs), ("qrels", qrels), ("run", run),
                        ("prefs.inrun", [p for p in prefs if p.split()[0] in ranked]),
                        ("qrels.inrun", [q for q in qrels if q.split()[0] in ranked])):
        (folder / name).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    write(int(sys.argv[1]), Path(sys.argv[2]))
