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
    top of the ranking and varies with a per-query difficulty. ``--judged-depth J`` judges
    only the top J ranks (a deep run over shallow judgments, as candidate lists for
    re-ranking are: ``--depth 7000 --judged-depth 100`` writes a 28.6 GB run, 693M lines, over
    judgments like depth 100's).

Query sets: the run holds exactly ``--queries`` queries; about 2% of them have no judgments
(run only), and about 2% extra queries are judged but absent from the run (qrels only). About
0.5% of the judged queries have judgments but no relevant document.

Document ids look like ``d1234567`` and come from a collection of a few million documents;
within a query they are distinct. ``--doc-prefix`` writes another prefix instead of ``d``
(``msmarco_doc_00_`` gives ids of 16 to 22 bytes, as large collections write them).

The output depends only on the arguments (numpy ``default_rng(seed)``). Everything is
vectorised; 100k queries x depth 100 (10M run lines) takes a few seconds.

Usage::

    python benchmarks/generate.py --queries 100000 --depth 100 --seed 7 --out benchmarks/data/100k

Three more shapes of the same data, for the other benchmark cases:

``--runs N``
    N runs over the same queries and judgments (``runs/run_0000.txt`` ...): the run above
    with every score perturbed by seeded noise and each query re-sorted, so the runs differ.
``--parquet``
    ``run.parquet`` (``query, doc, score``) and ``qrels.parquet`` (``query, doc,
    relevance``): the same rows as the TREC files, as a binary columnar input; and
    ``run-int.parquet`` / ``qrels-int.parquet``, the same with each doc id's number as an
    integer (``d191800`` -> 191800), as recommender data usually holds item ids.
``--messy``
    ``run-messy.txt`` and ``qrels-messy.txt``: the same rows as the TREC files, written as
    files from other systems often are, tab-separated with CRLF line ends (a format every
    TREC reader takes, and rankwise reads on its careful path rather than its fast one).
``--arrays``
    ``arrays.npz`` instead of TREC files: learning-to-rank arrays ``y_true`` (grades 0-3) and
    ``y_score`` (float32, no ties), ``--queries`` rows of ``--depth`` candidates, the input
    scikit-learn's ``ndcg_score`` and torchmetrics' retrieval metrics take.

Usage::

    python benchmarks/generate.py --queries 50 --runs 1000 --seed 7 --out benchmarks/data/many
    python benchmarks/generate.py --queries 100000 --parquet --seed 7 --out benchmarks/data/100k
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


def _write(path: str, columns: list[pa.Array], append: bool = False) -> None:
    table = pa.table({f"c{i}": col for i, col in enumerate(columns)})
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none",
                                 batch_size=1 << 20)
    with open(path, "ab" if append else "wb") as sink:
        pacsv.write_csv(table, sink, write_options=options)


#: Queries generated at once; larger collections are made of independent batches (batch 0
#: is drawn from ``default_rng(seed)``, batch b from ``default_rng((seed, b))``), so memory
#: stays near that of 100k queries and the first 100k queries are the same at every size.
BATCH = 100_000
#: Run lines generated at a time (deep runs come in batches of fewer queries).
BATCH_CELLS = 10_000_000


def generate(queries: int, depth: int, seed: int, out: str, tag: str = "synthetic",
             doc_prefix: str = "d", judged_depth: int | None = None) -> dict:
    """Write ``run.txt`` and ``qrels.txt`` into ``out`` (doc ids ``doc_prefix`` + a number;
    only the top ``judged_depth`` ranks judged, by default all); return a few counts."""
    os.makedirs(out, exist_ok=True)
    totals: dict = {}
    first_id = 0
    batch = max(1, min(BATCH, BATCH_CELLS // depth))
    for b, start in enumerate(range(0, queries, batch)):
        rng = np.random.default_rng(seed if b == 0 else (seed, b))
        stats = _batch(rng, min(batch, queries - start), depth, out, tag, first_id, b > 0,
                       doc_prefix, judged_depth or depth)
        first_id += stats.pop("universe")
        for k, v in stats.items():
            totals[k] = totals.get(k, 0) + v
    return totals


def _batch(rng, queries: int, depth: int, out: str, tag: str, first_id: int,
           append: bool, doc_prefix: str = "d", judged_depth: int = 0) -> dict:
    """One batch of queries (ids from ``first_id + 1``), appended to the files if ``append``."""
    n_docs = _collection_size()
    n_qrels_only = round(queries * QRELS_ONLY_SHARE)
    universe = queries + n_qrels_only
    pool = depth + JUDGED_UNRETRIEVED[1] - 1

    # Query roles: qrels-only queries are spread among the ids; run-only ones likewise.
    role = np.zeros(universe, dtype=np.int8)  # 0 both, 1 run only, 2 qrels only
    role[rng.choice(universe, n_qrels_only, replace=False)] = 2
    in_run = np.flatnonzero(role != 2)
    role[rng.choice(in_run, round(queries * RUN_ONLY_SHARE), replace=False)] = 1
    judged_q = np.flatnonzero(role != 1)
    no_relevant = np.zeros(universe, dtype=bool)
    no_relevant[rng.choice(judged_q, max(1, round(len(judged_q) * NO_RELEVANT_SHARE)),
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
    judged_depth = min(judged_depth or depth, depth)
    p_judged = np.where(ranks < judged_depth, 0.6 - 0.4 * ranks / max(judged_depth - 1, 1), 0.0)
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

    qid_text = np.char.add("q", np.arange(first_id + 1, first_id + universe + 1).astype(str))

    # ---- run.txt
    keep = (np.arange(depth)[None, :] < depth_q[:, None]) & (role != 2)[:, None]
    rows_q, rows_pos = np.nonzero(keep)  # row-major: query by query, rank order
    run_cols = [
        pa.array(qid_text).take(pa.array(rows_q)),
        pa.array(np.full(1, "Q0")).take(pa.array(np.zeros(len(rows_q), dtype=np.int64))),
        _strings(doc_prefix, docs[rows_q, rows_pos]),
        _strings("", rows_pos + 1),
        _scores_text(units[rows_q, rows_pos], decimals[rows_q]),
        pa.array(np.full(1, tag)).take(pa.array(np.zeros(len(rows_q), dtype=np.int64))),
    ]
    _write(os.path.join(out, "run.txt"), run_cols, append)

    # ---- qrels.txt (per query, judged documents in random order)
    judged &= (role != 1)[:, None]
    jq, jpos = np.nonzero(judged)
    order = np.lexsort((rng.random(len(jq)), jq))
    jq, jpos = jq[order], jpos[order]
    qrels_cols = [
        pa.array(qid_text).take(pa.array(jq)),
        pa.array(np.full(1, "0")).take(pa.array(np.zeros(len(jq), dtype=np.int64))),
        _strings(doc_prefix, docs[jq, jpos]),
        _strings("", grade[jq, jpos]),
    ]
    _write(os.path.join(out, "qrels.txt"), qrels_cols, append)

    return {
        "universe": universe,
        "run_queries": int((role != 2).sum()),
        "run_lines": len(rows_q),
        "qrels_queries": int((role != 1).sum()),
        "qrels_lines": len(jq),
        "run_only_queries": int((role == 1).sum()),
        "qrels_only_queries": int((role == 2).sum()),
        "queries_without_relevant": int(((role != 1) & ~(relevant & judged).any(axis=1)).sum()),
    }


def many_runs(runs: int, seed: int, out: str, noise: float = 0.5) -> dict:
    """Write ``runs`` perturbed copies of ``out/run.txt`` into ``out/runs/``."""
    columns = ["qid", "q0", "docid", "rank", "score", "tag"]
    table = pacsv.read_csv(os.path.join(out, "run.txt"), read_options=pacsv.ReadOptions(
        column_names=columns), parse_options=pacsv.ParseOptions(delimiter=" "),
        convert_options=pacsv.ConvertOptions(column_types={"qid": pa.string(),
                                                           "docid": pa.string()}))
    qid, docid = table.column("qid"), table.column("docid")
    query = pc.dictionary_encode(qid).combine_chunks().indices.to_numpy()
    score = table.column("score").to_numpy()
    rng = np.random.default_rng(seed + 1)
    folder = os.path.join(out, "runs")
    os.makedirs(folder, exist_ok=True)
    for i in range(runs):
        noisy = np.round(score + rng.normal(0.0, noise, len(score)), 3)
        order = np.lexsort((-noisy, query))
        q = query[order]
        starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
        rank = np.arange(len(q)) - np.repeat(starts, np.diff(np.r_[starts, len(q)])) + 1
        _write(os.path.join(folder, f"run_{i:04d}.txt"), [
            qid.take(pa.array(order)), table.column("q0").take(pa.array(order)),
            docid.take(pa.array(order)), _strings("", rank),
            pc.cast(pa.array(noisy[order]), pa.string()),
            pa.array(np.full(len(q), f"run{i:04d}"))])
    return {"runs": runs, "lines_per_run": len(score)}


def to_parquet(out: str) -> dict:
    """Write ``run.parquet`` and ``qrels.parquet`` with the rows of the TREC files."""
    import pyarrow.parquet as pq

    def read(name: str, columns: list[str], types: dict) -> pa.Table:
        return pacsv.read_csv(os.path.join(out, name), read_options=pacsv.ReadOptions(
            column_names=columns), parse_options=pacsv.ParseOptions(delimiter=" "),
            convert_options=pacsv.ConvertOptions(column_types=types))

    run = read("run.txt", ["query", "q0", "doc", "rank", "score", "tag"],
               {"query": pa.string(), "doc": pa.string(), "score": pa.float64()})
    pq.write_table(run.select(["query", "doc", "score"]), os.path.join(out, "run.parquet"))
    qrels = read("qrels.txt", ["query", "iter", "doc", "relevance"],
                 {"query": pa.string(), "doc": pa.string(), "relevance": pa.int64()})
    pq.write_table(qrels.select(["query", "doc", "relevance"]), os.path.join(out, "qrels.parquet"))
    for name, table, value in (("run-int", run, "score"), ("qrels-int", qrels, "relevance")):
        numbers = pc.cast(pc.utf8_slice_codeunits(table["doc"], 1), pa.int64())  # "d17" -> 17
        table = table.set_column(table.schema.get_field_index("doc"), "doc", numbers)
        pq.write_table(table.select(["query", "doc", value]), os.path.join(out, f"{name}.parquet"))
    return {"parquet_run_mb": round(os.path.getsize(os.path.join(out, "run.parquet")) / 1e6, 1)}


def arrays(queries: int, depth: int, seed: int, out: str) -> dict:
    """Write ``arrays.npz``: ``y_true`` (grades 0-3) and ``y_score`` (float32, distinct within
    a query), shape (queries, depth); relevance likelier for higher scores."""
    rng = np.random.default_rng(seed)
    # a random permutation of 0..depth-1 per query, scaled: distinct scores, exact in float32
    score = (rng.permuted(np.tile(np.arange(depth), (queries, 1)), axis=1) / depth)
    score = score.astype(np.float32)
    p_rel = 0.05 + 0.5 * score.astype(np.float64) ** 3
    grade = np.where(rng.random((queries, depth)) < p_rel,
                     rng.choice([1, 2, 3], (queries, depth), p=[0.55, 0.3, 0.15]), 0)
    os.makedirs(out, exist_ok=True)
    np.savez(os.path.join(out, "arrays.npz"), y_true=grade.astype(np.float64), y_score=score)
    return {"queries": queries, "candidates": depth,
            "ties": int((np.diff(np.sort(score, axis=1), axis=1) == 0).sum())}


def to_messy(out: str) -> dict:
    """Write ``run-messy.txt`` and ``qrels-messy.txt``: the TREC files tab-separated, with
    CRLF line ends (block by block, whole lines each)."""
    for name in ("run", "qrels"):
        with open(os.path.join(out, f"{name}.txt"), "rb") as src, \
                open(os.path.join(out, f"{name}-messy.txt"), "wb") as dst:
            for block in iter(lambda: src.readlines(1 << 24), []):
                dst.write(b"".join(block).replace(b" ", b"\t").replace(b"\n", b"\r\n"))
    return {"messy_run_mb": round(os.path.getsize(os.path.join(out, "run-messy.txt")) / 1e6, 1)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=10_000, help="queries in the run")
    parser.add_argument("--depth", type=int, default=100, help="documents per query in the run")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--judged-depth", type=int, default=None,
                        help="judge only the top N ranks (default: the whole depth)")
    parser.add_argument("--doc-prefix", default="d",
                        help="doc ids are this prefix and a number (default: d)")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--runs", type=int, default=0,
                        help="also write this many perturbed runs into OUT/runs/")
    parser.add_argument("--parquet", action="store_true",
                        help="also write run.parquet and qrels.parquet")
    parser.add_argument("--messy", action="store_true",
                        help="also write run-messy.txt and qrels-messy.txt (tabs, CRLF)")
    parser.add_argument("--arrays", action="store_true",
                        help="write learning-to-rank arrays (arrays.npz) instead of TREC files")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    if args.arrays:
        stats = arrays(args.queries, args.depth, args.seed, args.out)
    else:
        stats = generate(args.queries, args.depth, args.seed, args.out,
                         doc_prefix=args.doc_prefix, judged_depth=args.judged_depth)
        if args.runs:
            stats.update(many_runs(args.runs, args.seed, args.out))
        if args.parquet:
            stats.update(to_parquet(args.out))
        if args.messy:
            stats.update(to_messy(args.out))
    stats["seconds"] = round(time.perf_counter() - t0, 2)
    print(" ".join(f"{k}={v}" for k, v in stats.items()))


if __name__ == "__main__":
    main()
