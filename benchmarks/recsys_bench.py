"""Speed of rankwise.recsys on top-K recommendation lists, next to Microsoft recommenders'
python evaluation and RecBole's metrics where they are installed (as ratios).

    python benchmarks/recsys_bench.py                          # 1M users x top-100, rankwise
    python benchmarks/recsys_bench.py --users 1000000 --peer-users 20000,100000
    python benchmarks/recsys_bench.py --quick                  # 100k users, peers at 10k

The data (seeded): every user gets a top-K list of distinct item ids (a 2-D array, and the
same as a pandas frame ``user, item, score``) and 1-19 held-out items, about 30% of them
inside the list. rankwise evaluates nine accuracy measures in one call (HR@10, P@10, R@10,
F1@10, RR@100, AP@100 with the recommender denominator min(R, K), nDCG@10, nDCG@100,
RWRR@100); each measurement runs in a fresh process and reports the wall time of the
evaluation (imports and data generation excluded, for every tool; median of ``--repeat``)
and the process's peak RSS.

Peers run in the peer environment (``.venv-recsys-peers``, built by
tests/recsys/peer_env.py) when it exists, on ``--peer-users`` users (they are too slow or too
large for the full size): Microsoft recommenders' ``precision_at_k``, ``recall_at_k``,
``map_at_k`` and ``ndcg_at_k`` on pandas frames (each call merges the frames again), and
RecBole's ``Hit``, ``Precision``, ``Recall``, ``MRR``, ``MAP`` and ``NDCG``
``metric_info`` on the boolean hit matrix (RecBole's own collector builds that matrix from
its full score matrix on the GPU or with torch; the join is not timed for RecBole, which
favours it). rankwise is timed on the same sizes, so each ratio compares equal work.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PEER_PYTHON = os.path.join(ROOT, ".venv-recsys-peers", "bin", "python")
MEASURES = ["HR@10", "P@10", "R@10", "F1@10", "RR@100", "AP@100", "nDCG@10", "nDCG@100",
            "RWRR@100"]

GENERATE = textwrap.dedent("""
    import numpy as np, pandas as pd
    def generate(users, k, items=50_021, seed=7):
        rng = np.random.default_rng(seed)
        start = rng.integers(0, items, size=(users, 1))
        stride = rng.integers(1, 5000, size=(users, 1))   # items is prime: no repeats
        recs = ((start + stride * np.arange(k)) % items).astype(np.int64)
        n_test = rng.integers(1, 20, size=users)
        user = np.repeat(np.arange(users), n_test)
        inside = rng.random(len(user)) < 0.3
        item = np.where(inside, recs[user, rng.integers(0, k, size=len(user))],
                        rng.integers(0, items, size=len(user)))
        test = pd.DataFrame({"user": user, "item": item}).drop_duplicates(ignore_index=True)
        return recs, test
""")

RANKWISE = GENERATE + textwrap.dedent("""
    import json, resource, sys, time
    users, k, form = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    recs, test = generate(users, k)
    if form == "frame":
        recs = pd.DataFrame({"user": np.repeat(np.arange(users), k), "item": recs.ravel(),
                             "score": np.tile(np.arange(k, 0, -1), users).astype(float)})
    import rankwise.recsys as rs
    start = time.perf_counter()
    result = rs.evaluate(recs, test, MEASURES, ap_denominator="min_relevant_cutoff")
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "rss_mb": resource.getrusage(
        resource.RUSAGE_SELF).ru_maxrss / 1024, "means": result.aggregates["recs"]}))
""")

MS = GENERATE + textwrap.dedent("""
    import json, resource, sys, time, warnings
    warnings.simplefilter("ignore")
    users, k = int(sys.argv[1]), int(sys.argv[2])
    recs, test = generate(users, k)
    pred = pd.DataFrame({"userID": np.repeat(np.arange(users), k), "itemID": recs.ravel(),
                         "prediction": np.tile(np.arange(k, 0, -1), users).astype(float)})
    true = test.rename(columns={"user": "userID", "item": "itemID"}).assign(rating=1.0)
    from recommenders.evaluation import python_evaluation as ms
    start = time.perf_counter()
    means = {"P@10": ms.precision_at_k(true, pred, k=10), "R@10": ms.recall_at_k(true, pred, k=10),
             "AP@100": ms.map_at_k(true, pred, k=100), "nDCG@10": ms.ndcg_at_k(true, pred, k=10),
             "nDCG@100": ms.ndcg_at_k(true, pred, k=100)}
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "rss_mb": resource.getrusage(
        resource.RUSAGE_SELF).ru_maxrss / 1024, "means": means}))
""")

RECBOLE = GENERATE + textwrap.dedent("""
    import json, resource, sys, time
    users, k = int(sys.argv[1]), int(sys.argv[2])
    recs, test = generate(users, k)
    # the boolean hit matrix RecBole's collector would hand to its metrics (not timed)
    keys = np.sort(test["user"].to_numpy() * 50_021 + test["item"].to_numpy())
    probe = (np.arange(users)[:, None] * 50_021 + recs).ravel()
    at = np.minimum(np.searchsorted(keys, probe), len(keys) - 1)
    pos_index = (keys[at] == probe).reshape(users, k)
    pos_len = np.bincount(test["user"].to_numpy(), minlength=users)
    if not hasattr(np, "float"):
        np.float = float   # RecBole 1.2.1 predates numpy 1.24
    from recbole.evaluator import metrics as rb
    start = time.perf_counter()
    def info(cls, *args):
        return cls.__new__(cls).metric_info(*args)
    means = {"HR@10": info(rb.Hit, pos_index)[:, 9].mean(),
             "P@10": info(rb.Precision, pos_index)[:, 9].mean(),
             "R@10": info(rb.Recall, pos_index, pos_len)[:, 9].mean(),
             "RR@100": info(rb.MRR, pos_index)[:, 99].mean(),
             "AP@100": info(rb.MAP, pos_index, pos_len)[:, 99].mean(),
             "nDCG@10": info(rb.NDCG, pos_index, pos_len)[:, 9].mean(),
             "nDCG@100": info(rb.NDCG, pos_index, pos_len)[:, 99].mean()}
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "rss_mb": resource.getrusage(
        resource.RUSAGE_SELF).ru_maxrss / 1024, "means": {m: float(v) for m, v in means.items()}}))
""")


def run(python: str, script: str, *args: str, timeout: int = 3600) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(f"MEASURES = {MEASURES!r}\n" + script)
    try:
        done = subprocess.run([python, f.name, *args], capture_output=True, text=True,
                              timeout=timeout, cwd=ROOT, check=False)
    finally:
        os.unlink(f.name)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(python: str, script: str, repeat: int, *args: str) -> dict:
    runs = [run(python, script, *args) for _ in range(repeat)]
    errors = [r for r in runs if "error" in r]
    if errors:
        return errors[0]
    return {"seconds": statistics.median(r["seconds"] for r in runs),
            "rss_mb": max(r["rss_mb"] for r in runs), "means": runs[0]["means"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--peer-users", default="10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--skip-peers", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.users, args.peer_users, args.repeat = 100_000, "10000", 1
    rows = []
    for form in ("array", "frame"):
        r = measure(sys.executable, RANKWISE, args.repeat, str(args.users), str(args.k), form)
        rows.append((f"rankwise ({form})", args.users, r, None))
    peers = [] if args.skip_peers or not os.path.exists(PEER_PYTHON) else \
        [("Microsoft recommenders", MS), ("RecBole metric_info", RECBOLE)]
    for users in (int(u) for u in args.peer_users.split(",") if u):
        if not peers:
            break
        mine = measure(sys.executable, RANKWISE, args.repeat, str(users), str(args.k), "frame")
        rows.append(("rankwise (frame)", users, mine, None))
        for name, script in peers:
            r = measure(PEER_PYTHON, script, 1 if users > 20_000 else args.repeat, str(users),
                        str(args.k))
            rows.append((name, users, r, mine.get("seconds")))
    print(f"| tool | users x {args.k} | wall s | peak RSS MB | time vs rankwise |")
    print("|---|---:|---:|---:|---:|")
    for name, users, r, base in rows:
        if "error" in r:
            print(f"| {name} | {users:,} | failed: {r['error'][:60]} | | |")
            continue
        ratio = f"{r['seconds'] / base:.1f}x" if base else "1.0"
        print(f"| {name} | {users:,} | {r['seconds']:.2f} | {r['rss_mb']:.0f} | {ratio} |")
    if not peers:
        print("\n(peers skipped: build .venv-recsys-peers with tests/recsys/peer_env.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
