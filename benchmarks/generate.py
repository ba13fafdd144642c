"""Seeded generator of synthetic TREC run and qrels files for the benchmarks.

Writes two files into ``--out``:

``run.txt``
    ``qid Q0 docid rank score tag``, query by query, each query's documents in descending
    score order (rank 1, 2, ...). Scores carry 2 decimals for about half of the queries and
    3 decimals for the rest, so tied scores occur (a few percent of adjacent pairs). Depth is
    ``--depth`` for most queries; about 2% of the queries retrieve fewer documents.
``qrels.txt``
    ``qid 0 docid grade``, grades 0-3. About 60 judged documents per query: about 40 of them
    are retrieved (judging is denser near the top of the ranking), about 20 are judged but not
    retrieved; the remaining retrieved documents are unjudged. Relevance is likelier near the
    top of the ranking and varies with a per-query difficulty.

Query sets: the run holds exactly ``--queries`` queries; about 2% of them have no judgments
(run only), and about 2% extra queries are judged but absent from the run (qrels only). About
0.5% of the judged queries have judgments but no relevant document.

Document ids look like ``d1234567`` and come from a collection of a few million documents;
within a query they are distinct.

The output depends only on the arguments (numpy ``default_rng(seed)``). Everything is
vectorised; 100k queries x depth 100 (10M run lines) takes a few seconds.

Usage::

    python benchmarks/generate.py --queries 100000 --depth 100 --seed 7 --out benchmarks/data/100k
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

#: Size of the document collection (a prime, so that ``(start + k * stride) mod N`` walks
#: distinct documents for k < N whatever the stride).
COLLECTION_SIZE = 4_999_999
JUDGED_UNRETRIEVED = (10, 31)  # per query, uniform in [10, 30]
RUN_ONLY_SHARE = 0.02
QRELS_ONLY_SHARE = 0.02
NO_RELEVANT_SHARE = 0.005
SHORT_QUERY_SHARE = 0.02


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True


def _collection_size() -> int:
    n = COLLECTION_SIZE
    while not _is_prime(n):
        n -= 1
    return n


def _strings(prefix: str, values: np.ndarray) -> pa.Array:
    """``prefix + str(value)`` for an integer array, in Arrow (fast)."""
    text = pc.cast(pa.array(values), pa.string())
    return pc.binary_join_element_wise(prefix, text, "") if prefix else text


def _scores_text(units: np.ndarray, decimals: np.ndarray) -> pa.Array:
    """Fixed-point text for ``units / 10**decimals`` (decimals is 2 or 3 per row)."""
    scale = np.where(decimals == 3, 1000, 100)
    magnitude = np.abs(units)
    whole = _strings("", magnitude // scale)
    whole = pc.if_else(pa.array(units < 0), pc.binary_join_element_wise("-", whole, ""), whole)
    frac = pc.utf8_lpad(_strings("", magnitude % scale), width=3, padding="0")
    frac = pc.if_else(pa.array(decimals == 3), frac, pc.utf8_slice_codeunits(frac, 1, 3))
    return pc.binary_join_element_wise(whole, frac, ".")


def _write(path: str, columns: list[pa.Array]) -> None:
    table = pa.table({f"c{i}": col for i, col in enumerate(columns)})
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none",
                                 batch_size=1 << 20)
    pacsv.write_csv(table, path, write_options=options)


def generate(queries: int, depth: int, seed: int, out: str, tag: str = "synthetic") -> dict:
    """Write ``run.txt`` and ``qrels.txt`` into ``out``; return a few counts."""
    rng = np.random.default_rng(seed)
    n_docs = _collection_size()
    n_qrels_only = int(round(queries * QRELS_ONLY_SHARE))
    universe = queries + n_qrels_only
    pool = depth + JUDGED_UNRETRIEVED[1] - 1

    # Query roles: qrels-only queries are spread among the ids; run-only ones likewise.
    role = np.zeros(universe, dtype=np.int8)  # 0 both, 1 run only, 2 qrels only
    role[rng.choice(universe, n_qrels_only, replace=False)] = 2
    in_run = np.flatnonzero(role != 2)
    role[rng.choice(in_run, int(round(queries * RUN_ONLY_SHARE)), replace=False)] = 1
    judged_q = np.flatnonzero(role != 1)
    no_relevant = np.zeros(universe, dtype=bool)
    no_relevant[rng.choice(judged_q, max(1, int(round(len(judged_q) * NO_RELEVANT_SHARE))),
                           replace=False)] = True

    # Per-query pool of distinct documents: (start + k * stride) mod n_docs, k = 0..pool-1.
    # Positions 0..depth-1 are the ranking (position = rank - 1); the rest are judged but
    # not retrieved.
    start = rng.integers(0, n_docs, universe, dtype=np.int64)
    stride = rng.integers(1, n_docs, universe, dtype=np.int64)
    k = np.arange(pool, dtype=np.int64)
    docs = (start[:, None] + k[None, :] * stride[:, None]) % n_docs  # (universe, pool)

    depth_q = np.full(universe, depth, dtype=np.int64)
    short = rng.random(universe) < SHORT_QUERY_SHARE
    depth_q[short] = rng.integers(min(10, depth), depth + 1, short.sum())
    extra_q = rng.integers(*JUDGED_UNRETRIEVED, universe)

    # Scores: a per-query base minus positive decrements, rounded to 2 or 3 decimals per query
    # (rounding keeps the order non-increasing and creates ties).
    decimals = np.where(rng.random(universe) < 0.5, 2, 3)
    step = np.where(decimals == 2, 0.08, 0.02)
    base = rng.uniform(10.0, 30.0, universe)
    raw = base[:, None] - np.cumsum(rng.exponential(1.0, (universe, depth)) * step[:, None], axis=1)
    units = np.round(raw * np.where(decimals == 3, 1000, 100)[:, None]).astype(np.int64)

    # Judgments: retrieved docs judged with probability falling from 0.6 (top) to 0.2 (bottom),
    # plus extra_q judged unretrieved documents. Relevance likelier near the top.
    ranks = np.arange(depth, dtype=np.float64)
    difficulty = rng.uniform(0.2, 1.5, universe)
    p_judged = 0.6 - 0.4 * ranks / max(depth - 1, 1)
    judged = np.zeros((universe, pool), dtype=bool)
    judged[:, :depth] = rng.random((universe, depth)) < p_judged[None, :]
    judged[:, :depth] &= np.arange(depth)[None, :] < depth_q[:, None]
    judged[:, depth:] = np.arange(pool - depth)[None, :] < extra_q[:, None]
    p_rel = np.empty((universe, pool))
    p_rel[:, :depth] = 0.05 + 0.55 * np.exp(-ranks / 20.0)[None, :]
    p_rel[:, depth:] = 0.2
    p_rel = np.minimum(p_rel * difficulty[:, None], 0.95)
    relevant = rng.random((universe, pool)) < p_rel
    relevant[no_relevant] = False
    grade = np.where(relevant, rng.choice([1, 2, 3], (universe, pool), p=[0.55, 0.3, 0.15]), 0)

    qid_text = np.char.add("q", np.arange(1, universe + 1).astype(str))  # small: one per query

    # ---- run.txt
    keep = (np.arange(depth)[None, :] < depth_q[:, None]) & (role != 2)[:, None]
    rows_q, rows_pos = np.nonzero(keep)  # row-major: query by query, rank order
    run_cols = [
        pa.array(qid_text).take(pa.array(rows_q)),
        pa.array(np.full(1, "Q0")).take(pa.array(np.zeros(len(rows_q), dtype=np.int64))),
        _strings("d", docs[rows_q, rows_pos]),
        _strings("", rows_pos + 1),
        _scores_text(units[rows_q, rows_pos], decimals[rows_q]),
        pa.array(np.full(1, tag)).take(pa.array(np.zeros(len(rows_q), dtype=np.int64))),
    ]
    os.makedirs(out, exist_ok=True)
    _write(os.path.join(out, "run.txt"), run_cols)

    # ---- qrels.txt (per query, judged documents in random order)
    judged &= (role != 1)[:, None]
    jq, jpos = np.nonzero(judged)
    order = np.lexsort((rng.random(len(jq)), jq))
    jq, jpos = jq[order], jpos[order]
    qrels_cols = [
        pa.array(qid_text).take(pa.array(jq)),
        pa.array(np.full(1, "0")).take(pa.array(np.zeros(len(jq), dtype=np.int64))),
        _strings("d", docs[jq, jpos]),
        _strings("", grade[jq, jpos]),
    ]
    _write(os.path.join(out, "qrels.txt"), qrels_cols)

    return {
        "run_queries": int((role != 2).sum()),
        "run_lines": int(len(rows_q)),
        "qrels_queries": int((role != 1).sum()),
        "qrels_lines": int(len(jq)),
        "run_only_queries": int((role == 1).sum()),
        "qrels_only_queries": int((role == 2).sum()),
        "queries_without_relevant": int(((role != 1) & ~(relevant & judged).any(axis=1)).sum()),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=10_000, help="queries in the run")
    parser.add_argument("--depth", type=int, default=100, help="documents per query in the run")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", required=True, help="output folder")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    stats = generate(args.queries, args.depth, args.seed, args.out)
    stats["seconds"] = round(time.perf_counter() - t0, 2)
    print(" ".join(f"{k}={v}" for k, v in stats.items()))


if __name__ == "__main__":
    main()
