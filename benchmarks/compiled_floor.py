"""What compiled code would gain: the work after reading, written as fused compiled passes.

    python benchmarks/compiled_floor.py                       # the 100k case
    python benchmarks/compiled_floor.py --data benchmarks/data/10k --repeat 5

rankwise ships no compiled code and uses no JIT (an installation needs only Python). To weigh
an optional compiled extension, this script times the same evaluation after reading (doc ids
hashed, the run joined with the judgments, each query ordered by score and doc id, the nine
measures of the benchmark suite) written as two fused compiled passes, with numba standing in
for C: one hashing every doc id, one walking every query once (a hash table of its judgments,
the order proved or mended by an insertion sort, every measure in one pass over the ranked
rows), both on all cores. It is timed warm (its compilation excluded: what a compiled
extension would cost) on the tables rankwise's readers give, its means checked against
``rankwise.evaluate`` on the same tables, whose own time is printed beside it.

trec_eval's conventions only (relevance from grade 1, ties by doc id descending, queries on
one side only left out) on data as ``generate.py`` writes it: the script refuses judgments
not grouped by query or with grades other than integers 0-15, and ``rankwise.evaluate``,
run beside it, refuses a run holding a (query, doc) pair twice. Not used by rankwise; see
"The floor" in docs/performance.md.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MEASURES = ["P_10", "recall_100", "map", "map_cut_100", "ndcg_cut_10", "ndcg", "recip_rank",
            "Rprec", "bpref"]


def _kernels():
    """The two compiled passes (compiled on first use, cached on disk by numba)."""
    import numba as nb

    @nb.njit(parallel=True, cache=True)
    def hash_ids(offsets, data, out, base):
        """64-bit FNV-1a of every string (Arrow offsets and bytes) into out[base:]."""
        for i in nb.prange(len(offsets) - 1):
            h = np.uint64(14695981039346656037)
            for j in range(offsets[i], offsets[i + 1]):
                h = (h ^ np.uint64(data[j])) * np.uint64(1099511628211)
            out[base + i] = h

    @nb.njit(cache=True)
    def compare(oa, da, ia, ob, db, ib):
        """strcmp of string ia of (oa, da) with string ib of (ob, db): -1, 0 or 1."""
        a0, b0 = oa[ia], ob[ib]
        la, lb = oa[ia + 1] - a0, ob[ib + 1] - b0
        for k in range(min(la, lb)):
            x, y = da[a0 + k], db[b0 + k]
            if x != y:
                return -1 if x < y else 1
        return 0 if la == lb else (-1 if la < lb else 1)

    @nb.njit(parallel=True, cache=True)
    def evaluate_queries(run_starts, run_code, run_to_qrels, run_hash, score, r_off, r_data,
                         q_starts, q_hash, q_grade, q_off, q_data, out):
        """Per run query block: join, order, and P@10, R@100, AP, AP@100, nDCG@10, nDCG, RR,
        Rprec, Bpref into out[block] (NaN rows: queries without judgments)."""
        for b in nb.prange(len(run_starts) - 1):
            rs, re = run_starts[b], run_starts[b + 1]
            q = run_to_qrels[run_code[rs]]
            if q < 0:
                continue
            qs, qe = q_starts[q], q_starts[q + 1]
            size = 16
            while size < 2 * (qe - qs):
                size *= 2
            table = np.full(size, -1, dtype=np.int64)
            for j in range(qs, qe):
                slot = np.int64(q_hash[j] % np.uint64(size))
                while table[slot] >= 0:
                    slot = (slot + 1) % size
                table[slot] = j
            n = re - rs
            grade = np.empty(n, dtype=np.float64)
            for i in range(n):
                h, g = run_hash[rs + i], -1.0
                slot = np.int64(h % np.uint64(size))
                while table[slot] >= 0:
                    j = table[slot]
                    if q_hash[j] == h and compare(r_off, r_data, rs + i, q_off, q_data, j) == 0:
                        g = q_grade[j]
                        break
                    slot = (slot + 1) % size
                grade[i] = g
            order = np.arange(n)  # by score descending, then doc id descending
            for i in range(1, n):
                x, k = order[i], i - 1
                while k >= 0:
                    y = order[k]
                    if score[rs + y] > score[rs + x] or (score[rs + y] == score[rs + x] and compare(
                            r_off, r_data, rs + y, r_off, r_data, rs + x) > 0):
                        break
                    order[k + 1] = y
                    k -= 1
                order[k + 1] = x
            levels = np.zeros(16, dtype=np.int64)
            rel, nonrel = 0, 0
            for j in range(qs, qe):
                if q_grade[j] >= 1:
                    rel += 1
                elif q_grade[j] >= 0:
                    nonrel += 1
                if q_grade[j] > 0:
                    levels[int(q_grade[j])] += 1
            idcg, idcg10, at = 0.0, 0.0, 0
            for level in range(15, 0, -1):
                for _ in range(levels[level]):
                    gain = level / math.log2(at + 2.0)
                    idcg += gain
                    if at < 10:
                        idcg10 += gain
                    at += 1
            hits, p10, r100, rprec, nonrel_above = 0, 0, 0, 0, 0
            ap, ap100, dcg, dcg10, rr, bpref = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
            for i in range(n):
                g = grade[order[i]]
                if g >= 1:
                    hits += 1
                    p10 += i < 10
                    rprec += i < rel
                    ap += hits / (i + 1.0)
                    if i < 100:
                        r100 += 1
                        ap100 += hits / (i + 1.0)
                    if rr == 0.0:
                        rr = 1.0 / (i + 1.0)
                    bpref += 1.0 - min(nonrel_above, rel) / min(nonrel, rel) \
                        if nonrel_above > 0 else 1.0
                elif g >= 0:
                    nonrel_above += 1
                if g > 0:
                    dcg += g / math.log2(i + 2.0)
                    if i < 10:
                        dcg10 += g / math.log2(i + 2.0)
            out[b, 0] = p10 / 10.0
            out[b, 1] = r100 / rel if rel else 0.0
            out[b, 2] = ap / rel if rel else 0.0
            out[b, 3] = ap100 / rel if rel else 0.0
            out[b, 4] = dcg10 / idcg10 if idcg10 > 0 else 0.0
            out[b, 5] = dcg / idcg if idcg > 0 else 0.0
            out[b, 6] = rr
            out[b, 7] = rprec / rel if rel else 0.0
            out[b, 8] = bpref / rel if rel else 0.0

    return hash_ids, evaluate_queries


def _string_chunks(column):
    """(offsets, bytes) of every chunk of an Arrow string column, without copies."""
    out = []
    for chunk in column.chunks if hasattr(column, "chunks") else [column]:
        buffers = chunk.buffers()
        offsets = np.frombuffer(buffers[1], dtype=np.int32)[chunk.offset:
                                                             chunk.offset + len(chunk) + 1]
        out.append((offsets, np.frombuffer(buffers[2], dtype=np.uint8)))
    return out


def _one_chunk(column):
    return _string_chunks(column.combine_chunks() if hasattr(column, "chunks") else column)[0]


def compiled_means(run, qrels, kernels) -> tuple[np.ndarray, dict[str, float]]:
    """The nine means by the compiled passes, and the seconds of each step."""
    from rankwise.core.arrow import index_in
    from rankwise.core.segments import starts_of_runs

    hash_ids, evaluate_queries = kernels
    seconds = {}
    t0 = time.perf_counter()
    run_starts = np.append(starts_of_runs(run.query_code), len(run))
    q_starts = np.append(starts_of_runs(qrels.query_code), len(qrels))
    run_to_qrels = index_in(run.query_dict, qrels.query_dict)
    r_off, r_data = _one_chunk(run.docs)
    q_off, q_data = _one_chunk(qrels.docs)
    t1 = time.perf_counter()
    hashed = []
    for column in (run.docs, qrels.docs):
        out, base = np.empty(len(column), dtype=np.uint64), 0
        for offsets, data in _string_chunks(column):
            hash_ids(offsets, data, out, base)
            base += len(offsets) - 1
        hashed.append(out)
    t2 = time.perf_counter()
    values = np.full((len(run_starts) - 1, len(MEASURES)), np.nan)
    evaluate_queries(run_starts, run.query_code, run_to_qrels, hashed[0], run.score, r_off,
                     r_data, q_starts, hashed[1], qrels.grade, q_off, q_data, values)
    t3 = time.perf_counter()
    seconds.update({"query blocks, ids joined in one buffer": t1 - t0,
                    "hash every doc id": t2 - t1, "join, order, measures": t3 - t2})
    return values[~np.isnan(values[:, 0])].mean(axis=0), seconds


def _check_input(qrels) -> None:
    from rankwise.core.segments import starts_of_runs

    grades = qrels.grade[qrels.grade >= 0]
    if len(starts_of_runs(qrels.query_code)) != qrels.num_queries:
        sys.exit("the judgments must be grouped by query (as generate.py writes them)")
    if np.any(grades != np.round(grades)) or np.any(grades > 15):
        sys.exit("the judgments' grades must be integers from 0 to 15")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=os.path.join(HERE, "data", "100k"),
                   help="folder with qrels.txt and run.txt (made by generate.py)")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    import rankwise
    from rankwise.core.memory import large_arrays
    from rankwise.io import to_qrels, to_run

    with large_arrays():
        t0 = time.perf_counter()
        qrels = to_qrels(os.path.join(args.data, "qrels.txt"))
        run = to_run(os.path.join(args.data, "run.txt"))
        read = time.perf_counter() - t0
        _check_input(qrels)
        kernels = _kernels()
        compiled_means(run, qrels, kernels)  # compiles, or loads numba's cache
        runs = [compiled_means(run, qrels, kernels) for _ in range(args.repeat)]
        engine = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            result = rankwise.evaluate(qrels, run, MEASURES)
            engine.append(time.perf_counter() - t0)
    means = runs[-1][0]
    reference = np.array([result.mean(m) for m in MEASURES])
    print(f"{args.data}: {len(run)} run rows, {len(qrels)} judgments; median of {args.repeat}")
    print(f"  reading both files with rankwise's readers (one after the other)  {read:7.3f} s")
    for step in runs[0][1]:
        print(f"  compiled: {step:52s} {statistics.median(r[1][step] for r in runs):7.3f} s")
    total = statistics.median(sum(r[1].values()) for r in runs)
    print(f"  compiled: {'all of the work after reading':52s} {total:7.3f} s")
    print(f"  rankwise.evaluate on the same tables (numpy)                     "
          f"{statistics.median(engine):7.3f} s")
    print(f"  means agree with rankwise's to {np.max(np.abs(means - reference)):.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
