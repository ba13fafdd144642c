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
    row per query with one list per field of its rows from every side, in an arbitrary order
    (Spark's ``collect_list``), their row ids where ``input_order``, and each side's first
    row id."""
    import pyarrow as pa

    sides = [qrels.rename(columns={"relevance": "v"})] + \
        [r.rename(columns={"score": "v"}) for r in runs.values()]
    frames = []
    for s, frame in enumerate(sides):
        frame = frame[["query", "doc", "v"]].copy()
        frame.columns = ["q", "d", "v"]
        frame["side"] = np.int8(s)
        frame["r"] = np.arange(len(frame), dtype=np.int64)
        frames.append(frame)
    rows = pd.concat(frames, ignore_index=True)
    rows["v"] = rows["v"].astype(np.float64)
    rows["shuffled"] = np.random.default_rng(seed).permutation(len(rows))
    rows = rows.sort_values(["q", "shuffled"], kind="stable")  # any order within a query
    part = rows["q"].map(lambda q: zlib.crc32(q.encode()) % partitions)
    fields = ["side", "d", "v"] + (["r"] if input_order else [])
    out = []
    for p in range(partitions):
        mine = rows[part == p]
        queries = mine["q"].drop_duplicates().tolist()
        lengths = mine.groupby("q", sort=False).size().loc[queries].to_numpy()
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        columns = {"q": pa.array(queries, pa.string())}
        for f in fields:
            columns[f] = pa.ListArray.from_arrays(pa.array(offsets), pa.array(mine[f].to_numpy()))
        for s in range(len(sides)):
            first = mine[mine["side"] == s].groupby("q", sort=False)["r"].min()
            first = first.reindex(queries)
            columns[f"first{s}"] = pa.array(first.fillna(-1).astype(np.int64).to_numpy(),
                                            mask=first.isna().to_numpy())
        table = pa.table(columns)
        out.append(table.to_batches(max_chunksize=batch_rows))
    return out
