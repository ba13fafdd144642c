"""Measure the speed ratios quoted in the "switching from X" pages.

    python docs/switching/speed.py [--queries 10000] [--repeat 5] [--only pytrec_eval,torch]

Each comparison runs the peer and the rankwise replacement in this process on the same
generated data, after one warm-up call each (so imports, numba compilation and caches are not
counted; the README's benchmark table counts fresh processes), and reports the median wall time
of ``--repeat`` calls and the ratio peer / rankwise. The data: ``--queries`` queries with 100
ranked documents each, scores with 2 or 3 decimals (ties), grades 0-3 on about 60 judged
documents per query (benchmarks/generate.py, seed 7). A peer that is not installed is skipped.

Thread pools (torch, numba, LightGBM, XGBoost) are held to one thread, as rankwise's numpy
code runs on one: on a small shared machine, spinning worker threads made every library's
timings swing by a factor of ten. ``--threads N`` changes that.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
THREADS = 1


def pair(peer: Callable[[], Any], ours: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Median wall times of ``repeat`` calls of each, after one warm-up call each; the calls
    alternate, so that a machine getting busier or quieter affects both alike."""
    peer()
    ours()
    times: tuple[list, list] = ([], [])
    for _ in range(repeat):
        for call, spent in ((peer, times[0]), (ours, times[1])):
            start = time.perf_counter()
            call()
            spent.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def trec_data(queries: int, folder: str) -> tuple[dict, dict]:
    """(qrels, run) dicts of the benchmark generator's TREC files."""
    from rankwise.compat import pytrec_eval as compat

    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "generate.py"), "--queries",
                    str(queries), "--depth", "100", "--seed", "7", "--out", folder], check=True,
                   capture_output=True)
    with open(Path(folder) / "qrels.txt") as f:
        qrels = compat.parse_qrel(f)
    with open(Path(folder) / "run.txt") as f:
        run = compat.parse_run(f)
    return qrels, run


def ltr_arrays(queries: int, depth: int = 100, seed: int = 7):
    rng = np.random.default_rng(seed)
    y_true = rng.choice([0, 0, 0, 1, 2, 3], size=(queries, depth)).astype(float)
    y_score = np.round(y_true + rng.normal(size=(queries, depth)), 2)
    return y_true, y_score


def row(table: list, peer: str, what: str, times: tuple[float, float]) -> None:
    theirs, ours = times
    table.append((peer, what, theirs, ours))
    print(f"{peer:14} {what:58} {theirs:8.3f} s {ours:8.3f} s  x{theirs / ours:6.2f}",
          flush=True)


def bench_pytrec_eval(qrels, run, repeat, table):
    import pytrec_eval

    from rankwise.compat import pytrec_eval as compat

    beir = {"ndcg_cut.1,3,5,10,100,1000", "map_cut.1,3,5,10,100,1000",
            "recall.1,3,5,10,100,1000", "P.1,3,5,10,100,1000"}
    ten = {"P.10", "recall.100", "map", "map_cut.100", "ndcg_cut.10", "ndcg", "recip_rank",
           "Rprec", "bpref", "success.10"}
    for label, measures in [("BEIR's 24 measures (evaluator + evaluate)", beir),
                            ("10 measures (evaluator + evaluate)", ten),
                            ("official (evaluator + evaluate)", {"official"})]:
        row(table, "pytrec_eval", label,
            pair(lambda m=measures: pytrec_eval.RelevanceEvaluator(qrels, m).evaluate(run),
                 lambda m=measures: compat.RelevanceEvaluator(qrels, m).evaluate(run), repeat))
    theirs = pytrec_eval.RelevanceEvaluator(qrels, ten)
    ours = compat.RelevanceEvaluator(qrels, ten)
    row(table, "pytrec_eval", "10 measures, evaluate() of a built evaluator",
        pair(lambda: theirs.evaluate(run), lambda: ours.evaluate(run), repeat))


def bench_ir_measures(qrels, run, repeat, table):
    import ir_measures
    import pandas as pd
    from ir_measures import AP, RR, P, R, nDCG

    import rankwise.compat.ir_measures as rw

    measures = [nDCG@10, AP, RR@10, P@10, R@100]
    row(table, "ir_measures", "calc_aggregate, 5 measures (dicts)",
        pair(lambda: ir_measures.calc_aggregate(measures, qrels, run),
             lambda: rw.provider.calc_aggregate(measures, qrels, run), repeat))
    theirs = ir_measures.evaluator(measures, qrels)
    ours = rw.provider.evaluator(measures, qrels)
    row(table, "ir_measures", "evaluator().iter_calc, 5 measures, per query (dicts)",
        pair(lambda: list(theirs.iter_calc(run)), lambda: list(ours.iter_calc(run)), repeat))
    qrels_frame = pd.DataFrame([(q, d, g) for q, v in qrels.items() for d, g in v.items()],
                               columns=["query_id", "doc_id", "relevance"])
    run_frame = pd.DataFrame([(q, d, x) for q, v in run.items() for d, x in v.items()],
                             columns=["query_id", "doc_id", "score"])
    row(table, "ir_measures", "calc_aggregate, 5 measures (DataFrames, as PyTerrier)",
        pair(lambda: ir_measures.calc_aggregate(measures, qrels_frame, run_frame),
             lambda: rw.provider.calc_aggregate(measures, qrels_frame, run_frame), repeat))
    wrapped = rw.on_rankwise(*measures)
    row(table, "ir_measures", "ir_measures.calc_aggregate of on_rankwise measures (DataFrames)",
        pair(lambda: ir_measures.calc_aggregate(measures, qrels_frame, run_frame),
             lambda: ir_measures.calc_aggregate(wrapped, qrels_frame, run_frame), repeat))
    row(table, "ir_measures", "ir_measures.calc_aggregate of on_rankwise measures (dicts)",
        pair(lambda: ir_measures.calc_aggregate(measures, qrels, run),
             lambda: ir_measures.calc_aggregate(wrapped, qrels, run), repeat))


def bench_ranx(qrels, run, repeat, table):
    from ranx import Qrels, Run, evaluate

    import rankwise

    metrics = ["ndcg@10", "map@100", "mrr@10", "precision@10", "recall@100"]
    ranx_qrels, ranx_run = Qrels(qrels), Run(run)
    judged = {q: v for q, v in qrels.items() if q in run}
    shared = {q: v for q, v in run.items() if q in judged}
    ranx_judged, ranx_shared = Qrels(judged), Run(shared)
    row(table, "ranx", "evaluate, 5 measures (Qrels/Run built, numba warm)",
        pair(lambda: evaluate(ranx_judged, ranx_shared, metrics),
             lambda: rankwise.evaluate(judged, shared, metrics, conventions="ranx"), repeat))
    row(table, "ranx", "Qrels(dict) + Run(dict) + evaluate, 5 measures",
        pair(lambda: evaluate(Qrels(judged), Run(shared), metrics),
             lambda: rankwise.evaluate(judged, shared, metrics, conventions="ranx"), repeat))
    del ranx_qrels, ranx_run


def bench_sklearn(queries, repeat, table):
    from sklearn.metrics import ndcg_score

    import rankwise.sklearn

    y_true, y_score = ltr_arrays(queries)
    groups = np.repeat(np.arange(queries), y_true.shape[1])
    scorer = rankwise.sklearn.make_scorer("nDCG@10", conventions="sklearn")
    row(table, "scikit-learn", "ndcg_score(k=10) vs scorer, ties averaged",
        pair(lambda: ndcg_score(y_true, y_score, k=10),
             lambda: scorer.score(y_true.ravel(), y_score.ravel(), groups), repeat))
    plain = rankwise.sklearn.make_scorer("nDCG@10", conventions="sklearn", ties="input_order")
    row(table, "scikit-learn", "ndcg_score(k=10, ignore_ties=True) vs ties in input order",
        pair(lambda: ndcg_score(y_true, y_score, k=10, ignore_ties=True),
             lambda: plain.score(y_true.ravel(), y_score.ravel(), groups), repeat))


def bench_torch(queries, repeat, table):
    import torch
    from torchmetrics.retrieval import RetrievalMAP, RetrievalMRR, RetrievalNormalizedDCG

    import rankwise.torch as rt

    y_true, y_score = ltr_arrays(queries)
    preds = torch.tensor(y_score.ravel(), dtype=torch.float32)
    target = torch.tensor(y_true.ravel()).long()
    binary = (target >= 2).long()
    indexes = torch.arange(queries).repeat_interleave(y_true.shape[1])

    def theirs_ndcg():
        metric = RetrievalNormalizedDCG(top_k=10)
        metric.update(preds, target, indexes=indexes)
        return metric.compute()

    def theirs_map_mrr():
        out = []
        for cls in (RetrievalMAP, RetrievalMRR):
            metric = cls()
            metric.update(preds, binary, indexes=indexes)
            out.append(metric.compute())
        return out

    row(table, "torchmetrics", "RetrievalNormalizedDCG(top_k=10), update + compute",
        pair(theirs_ndcg,
             lambda: rt.ndcg(preds, target, indexes, k=10, conventions="torchmetrics"), repeat))
    row(table, "torchmetrics", "RetrievalMAP + RetrievalMRR (binary targets)",
        pair(theirs_map_mrr,
             lambda: rt.evaluate(preds, binary, indexes, ["AP", "RR"],
                                 conventions="torchmetrics"), repeat))


def bench_boosting(queries, repeat, table):
    """Cost of one evaluation of a validation set, as every boosting round pays it."""
    y_true, y_score = ltr_arrays(queries)
    sizes = np.full(queries, y_true.shape[1])
    labels, scores = y_true.ravel(), y_score.ravel()
    conventions = {"gain": "exponential", "ties": "input_order",
                   "ap_denominator": "min_relevant_cutoff"}
    try:
        import lightgbm as lgb

        import rankwise.lightgbm
    except ImportError:
        lgb = None
    if lgb is not None:
        features = np.column_stack([scores, np.zeros_like(scores)])
        valid = lgb.Dataset(features, labels, group=sizes, params={"verbose": -1})
        train = lgb.Dataset(features[:1000], labels[:1000], group=[100] * 10,
                            params={"verbose": -1})
        booster = lgb.train({"objective": "lambdarank", "metric": ["ndcg", "map"],
                             "eval_at": [10], "verbose": -1, "num_threads": THREADS,
                             "num_leaves": 4}, train, 1, valid_sets=[valid],
                            keep_training_booster=True)
        metric = rankwise.lightgbm.metric("nDCG@10", "AP@10", **conventions)
        predictions = booster.predict(features)
        row(table, "LightGBM", "one round's evaluation: built-in ndcg@10 + map@10 vs feval",
            pair(lambda: booster.eval_valid(),
                 lambda: metric(predictions, valid), repeat))
    try:
        import xgboost as xgb

        import rankwise.xgboost
    except ImportError:
        xgb = None
    if xgb is not None:
        data = xgb.DMatrix(np.column_stack([scores, np.zeros_like(scores)]), labels)
        data.set_group(sizes)
        booster = xgb.train({"objective": "rank:ndcg", "eval_metric": ["ndcg@10"],
                             "nthread": THREADS, "max_depth": 2}, data, 1)
        metric = rankwise.xgboost.metric("nDCG@10", **conventions)
        predictions = booster.predict(data)
        row(table, "XGBoost", "one round's evaluation: built-in ndcg@10 vs custom metric",
            pair(lambda: booster.eval(data),
                 lambda: metric(predictions, data), repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--only", default="", help="comma-separated subset of: pytrec_eval, "
                        "ir_measures, ranx, sklearn, torch, boosting")
    args = parser.parse_args()
    global THREADS
    THREADS = args.threads
    os.environ["NUMBA_NUM_THREADS"] = str(args.threads)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    try:
        import torch

        torch.set_num_threads(args.threads)
    except ImportError:
        pass
    chosen = set(filter(None, args.only.split(","))) or {
        "pytrec_eval", "ir_measures", "ranx", "sklearn", "torch", "boosting"}
    print(f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()}, Python "
          f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f}; "
          f"{args.queries} queries x 100; median of {args.repeat}; {args.threads} thread(s)")
    table: list = []
    with tempfile.TemporaryDirectory() as folder:
        qrels = run = None
        if chosen & {"pytrec_eval", "ir_measures", "ranx"}:
            qrels, run = trec_data(args.queries, folder)
        for name, bench in [("pytrec_eval", lambda: bench_pytrec_eval(qrels, run, args.repeat,
                                                                        table)),
                            ("ir_measures", lambda: bench_ir_measures(qrels, run, args.repeat,
                                                                        table)),
                            ("ranx", lambda: bench_ranx(qrels, run, args.repeat, table)),
                            ("sklearn", lambda: bench_sklearn(args.queries, args.repeat, table)),
                            ("torch", lambda: bench_torch(args.queries, args.repeat, table)),
                            ("boosting", lambda: bench_boosting(args.queries, args.repeat,
                                                                table))]:
            if name not in chosen:
                continue
            try:
                bench()
            except ImportError as missing:
                print(f"{name}: skipped ({missing})")
    print("\n| peer | what | peer s | rankwise s | peer / rankwise |\n|---|---|---:|---:|---:|")
    for peer, what, theirs, ours in table:
        print(f"| {peer} | {what} | {theirs:.3f} | {ours:.3f} | {theirs / ours:.2f} |")


if __name__ == "__main__":
    main()
