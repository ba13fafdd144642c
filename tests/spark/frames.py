"""Test data for the Spark engine: the peers' seeded collections as pandas frames, and a
pure-Python stand-in for Spark's shuffle that feeds the partition kernel directly."""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd

from tests.peers.generate import make_collection


def collection_frames(seed: int, num_queries: int = 120, negative_grades: bool = False,
                      duplicates: int = 0):
    """``(run, qrels)`` pandas frames: graded judgments, ties, unjudged documents, queries on
    one side only, short lists; rows in the collection's own order (query by query).
    ``duplicates`` repeats that many run rows (with a different score) at the end."""
    c = make_collection(seed, num_queries=num_queries, depth=60, pool=150,
                        negative_grades=negative_grades)
    run = pd.DataFrame([(q, d, s) for q, docs in c.run.items() for d, s in docs.items()],
                       columns=["query", "doc", "score"])
    qrels = pd.DataFrame([(q, d, g) for q, docs in c.qrels.items() for d, g in docs.items()],
                         columns=["query", "doc", "relevance"])
    if duplicates:
        rng = np.random.default_rng(seed)
        extra = run.iloc[rng.choice(len(run), duplicates, replace=False)].copy()
        extra["score"] = np.round(rng.random(duplicates) * 10, 2)
        run = pd.concat([run, extra], ignore_index=True)
    return run, qrels


def shuffle(runs: dict[str, pd.DataFrame], qrels: pd.DataFrame, partitions: int,
            batch_rows: int, input_order: bool = False, seed: int = 0):
    """What Spark hands the kernel: per partition (a hash of the query), record batches of one
    row per query (queries in an arbitrary order) with, per side, the number of its rows, one
    list per field of them in an arbitrary order (Spark's ``collect_list``), their row ids
    where ``input_order``, and its first row id; all null where the query has no row on that
    side (the full outer join of the sides)."""
    import pyarrow as pa

    sides = [qrels.rename(columns={"relevance": "v"})] + \
        [r.rename(columns={"score": "v"}) for r in runs.values()]
    rng = np.random.default_rng(seed)
    frames = []
    for s, frame in enumerate(sides):
        frame = frame[["query", "doc", "v"]].copy()
        frame.columns = ["q", "d", "v"]
        frame["v"] = frame["v"].astype(np.float64)
        frame["r"] = np.arange(len(frame), dtype=np.int64)
        frame["shuffled"] = rng.permutation(len(frame))
        frames.append(frame.sort_values(["q", "shuffled"], kind="stable"))  # any order
    queries_all = pd.concat([f["q"] for f in frames]).drop_duplicates()
    queries_all = queries_all.iloc[rng.permutation(len(queries_all))].tolist()
    fields = ["d", "v"] + (["r"] if input_order else [])
    out = []
    for p in range(partitions):
        queries = [q for q in queries_all if zlib.crc32(q.encode()) % partitions == p]
        columns = {"q": pa.array(queries, pa.string())}
        for s, frame in enumerate(frames):
            mine = frame[frame["q"].isin(queries)]
            groups = mine.groupby("q", sort=False)
            counts = groups.size().reindex(queries)
            present = ~counts.isna().to_numpy()
            lengths = counts.fillna(0).astype(np.int64).to_numpy()
            order = np.argsort(pd.Categorical(mine["q"], categories=queries).codes,
                               kind="stable")
            mine = mine.iloc[order]
            offsets = pa.array(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))
            columns[f"n{s}"] = pa.array(lengths, mask=~present)
            first = groups["r"].min().reindex(queries)
            columns[f"first{s}"] = pa.array(first.fillna(-1).astype(np.int64).to_numpy(),
                                            mask=~present)
            for f in fields:
                lists = pa.ListArray.from_arrays(offsets, pa.array(mine[f].to_numpy()))
                columns[f"{f}{s}"] = pa.ListArray.from_arrays(
                    offsets, lists.flatten(), mask=pa.array(~present))
        table = pa.table(columns)
        out.append(table.to_batches(max_chunksize=batch_rows))
    return out
