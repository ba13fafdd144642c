"""One benchmark measurement, run by ``benchmarks/run.py`` in a fresh interpreter.

    python benchmarks/child.py TOOL QRELS RUN OUT_JSON

TOOL is one of :data:`TOOLS`. The child imports the tool, reads the input with the tool's own
reader, evaluates the measures, computes the means, and writes the means, its own stage
timings and its peak memory to OUT_JSON. The parent times the whole process (start to exit).

Inputs by tool: TREC files (QRELS, RUN); Parquet files (``*_parquet``: QRELS and RUN are
``.parquet``); a folder of TREC runs (``*_many``: RUN is the folder, every file in it is one
run); learning-to-rank arrays (``sklearn``, ``torchmetrics``, ``rankwise_sklearn``,
``rankwise_torchmetrics``: RUN is an ``.npz`` with ``y_true`` and ``y_score``, QRELS is
ignored). ``read_floor`` and ``read_floor_parquet`` only read the files (pyarrow), as the
reference for the cost of parsing.

Measure names are the rankwise canonical names below; each tool gets its own spelling.
"""

from __future__ import annotations

import json
import os
import sys
import time

T_START = time.perf_counter()

#: The nine measures of the issue (one at full depth: AP, nDCG, Bpref, Rprec, RR), as
#: rankwise name -> (trec_eval / pytrec_eval name, ranx name, ir_measures name)
MEASURES = {
    "P@10": ("P_10", "precision@10", "P@10"),
    "R@100": ("recall_100", "recall@100", "R@100"),
    "AP": ("map", "map", "AP"),
    "AP@100": ("map_cut_100", "map@100", "AP@100"),
    "nDCG@10": ("ndcg_cut_10", "ndcg@10", "nDCG@10"),
    "nDCG": ("ndcg", "ndcg", "nDCG"),
    "RR": ("recip_rank", "mrr", "RR"),
    "Rprec": ("Rprec", "r-precision", "Rprec"),
    "Bpref": ("bpref", "bpref", "Bpref"),
}
TREC_NAMES = [t for t, _, _ in MEASURES.values()]
RANX_NAMES = [r for _, r, _ in MEASURES.values()]
IRM_NAMES = [i for _, _, i in MEASURES.values()]
#: Measures of the array case: scikit-learn has nDCG only; torchmetrics these four.
ARRAY_MEASURES = {"nDCG@10": "RetrievalNormalizedDCG", "P@10": "RetrievalPrecision",
                  "AP": "RetrievalMAP", "RR": "RetrievalMRR"}


def _rankwise_report(result, stages: dict) -> dict:
    means = [s.aggregates for s in result.systems.values()]
    diag = next(iter(result.systems.values())).diagnostics
    names = list(means[0])
    return {"means": {name: sum(m[name] for m in means) / len(means) for name in names},
            "stages": stages, "systems": len(means),
            "queries_evaluated": diag["queries_evaluated"], "qrels_queries": diag["qrels_queries"]}


def _canonical(means_by_tool_name: dict, position: int) -> dict:
    return {canon: float(means_by_tool_name[names[position]])
            for canon, names in MEASURES.items()}


# ---------------------------------------------------------------------------- TREC files


def run_rankwise(qrels_path: str, run_path: str) -> dict:
    t0 = time.perf_counter()
    import rankwise

    t1 = time.perf_counter()
    result = rankwise.evaluate(qrels_path, run_path, TREC_NAMES)
    t2 = time.perf_counter()
    return _rankwise_report(result, {"import": t1 - t0, "read+evaluate": t2 - t1})


def run_rankwise_stream(qrels_path: str, run_path: str) -> dict:
    t0 = time.perf_counter()
    import rankwise  # noqa: F401
    from rankwise.stream import evaluate_stream

    t1 = time.perf_counter()
    result = evaluate_stream(qrels_path, run_path, TREC_NAMES)
    t2 = time.perf_counter()
    return _rankwise_report(result, {"import": t1 - t0, "read+evaluate": t2 - t1})


def run_pytrec_eval(qrels_path: str, run_path: str) -> dict:
    t0 = time.perf_counter()
    import pytrec_eval

    t1 = time.perf_counter()
    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    t2 = time.perf_counter()
    per_query = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_NAMES)).evaluate(run)
    means = _mean_of(per_query, TREC_NAMES)
    t3 = time.perf_counter()
    return {"means": _canonical(means, 0), "stages": {"import": t1 - t0, "read": t2 - t1,
                                                       "evaluate": t3 - t2},
            "queries_evaluated": len(per_query)}


def _mean_of(per_query: dict, names: list[str]) -> dict:
    sums = dict.fromkeys(names, 0.0)
    for values in per_query.values():
        for name in names:
            sums[name] += values[name]
    return {name: total / max(len(per_query), 1) for name, total in sums.items()}


def run_ranx(qrels_path: str, run_path: str) -> dict:
    t0 = time.perf_counter()
    from ranx import Qrels, Run, evaluate

    t1 = time.perf_counter()
    qrels = Qrels.from_file(qrels_path, kind="trec")
    run = Run.from_file(run_path, kind="trec")
    t2 = time.perf_counter()
    # ranx refuses a run and qrels on different query sets unless make_comparable=True, which
    # drops run-only queries and adds qrels-only queries as empty rankings (scored 0).
    scores = evaluate(qrels, run, RANX_NAMES, make_comparable=True)
    t3 = time.perf_counter()
    # Warm: the same call again in the same process (numba functions compiled or loaded,
    # the run already made comparable and sorted).
    evaluate(qrels, run, RANX_NAMES, make_comparable=True)
    t4 = time.perf_counter()
    return {"means": _canonical(scores, 1),
            "stages": {"import": t1 - t0, "read": t2 - t1, "evaluate": t3 - t2},
            "warm_evaluate": t4 - t3, "queries_in_mean": len(qrels)}


def run_ir_measures(qrels_path: str, run_path: str) -> dict:
    t0 = time.perf_counter()
    import ir_measures

    t1 = time.perf_counter()
    measures = [ir_measures.parse_measure(name) for name in IRM_NAMES]
    # the documented use: the readers' generators go straight into calc_aggregate
    means = ir_measures.calc_aggregate(measures, ir_measures.read_trec_qrels(qrels_path),
                                       ir_measures.read_trec_run(run_path))
    t2 = time.perf_counter()
    qrels_queries = len({q.query_id for q in ir_measures.read_trec_qrels(qrels_path)})
    return {"means": {canon: float(means[m]) for canon, m in zip(MEASURES, measures)},
            "stages": {"import": t1 - t0, "read+evaluate": t2 - t1},
            "queries_in_mean": qrels_queries}


def run_read_floor(qrels_path: str, run_path: str) -> dict:
    """pyarrow.csv parsing the run file alone, then the judgments: the fastest reader
    reachable from Python, with the column types a reader needs (no evaluation)."""
    t0 = time.perf_counter()
    import pyarrow as pa
    from pyarrow import csv

    t1 = time.perf_counter()

    def read(path: str, names: list[str], types: dict):
        return csv.read_csv(path, read_options=csv.ReadOptions(column_names=names,
                                                               block_size=1 << 24),
                            parse_options=csv.ParseOptions(delimiter=" ", quote_char=False),
                            convert_options=csv.ConvertOptions(
                                column_types=types, include_columns=list(types)))

    run = read(run_path, ["qid", "q0", "docid", "rank", "score", "tag"],
               {"qid": pa.string(), "docid": pa.string(), "rank": pa.int64(),
                "score": pa.float64()})
    t2 = time.perf_counter()
    qrels = read(qrels_path, ["qid", "iter", "docid", "rel"],
                 {"qid": pa.string(), "docid": pa.string(), "rel": pa.int64()})
    t3 = time.perf_counter()
    return {"means": {}, "stages": {"import": t1 - t0, "read run": t2 - t1,
                                    "read qrels": t3 - t2},
            "rows": run.num_rows + qrels.num_rows,
            "bytes": os.path.getsize(run_path) + os.path.getsize(qrels_path)}


# ---------------------------------------------------------------------------- Parquet


def run_rankwise_arrow(qrels_path: str, run_path: str) -> dict:
    """Arrow tables read by pyarrow.parquet first, then given to evaluate()."""
    t0 = time.perf_counter()
    import pyarrow.parquet as pq

    import rankwise

    t1 = time.perf_counter()
    qrels, run = pq.read_table(qrels_path), pq.read_table(run_path)
    t2 = time.perf_counter()
    result = rankwise.evaluate(qrels, run, TREC_NAMES)
    t3 = time.perf_counter()
    return _rankwise_report(result, {"import": t1 - t0, "read": t2 - t1, "evaluate": t3 - t2})


def run_read_floor_parquet(qrels_path: str, run_path: str) -> dict:
    t0 = time.perf_counter()
    import pyarrow.parquet as pq

    t1 = time.perf_counter()
    rows = pq.read_table(run_path).num_rows
    t2 = time.perf_counter()
    rows += pq.read_table(qrels_path).num_rows
    t3 = time.perf_counter()
    return {"means": {}, "stages": {"import": t1 - t0, "read run": t2 - t1,
                                    "read qrels": t3 - t2}, "rows": rows}


# ---------------------------------------------------------------------------- many runs


def _run_files(folder: str) -> list[str]:
    return [os.path.join(folder, name) for name in sorted(os.listdir(folder))]


def _average(reports: list[dict]) -> dict:
    return {k: sum(r[k] for r in reports) / len(reports) for k in reports[0]}


def run_rankwise_many(qrels_path: str, runs_folder: str) -> dict:
    t0 = time.perf_counter()
    import rankwise

    t1 = time.perf_counter()
    files = _run_files(runs_folder)
    result = rankwise.evaluate(qrels_path, {os.path.basename(p): p for p in files}, TREC_NAMES)
    t2 = time.perf_counter()
    return _rankwise_report(result, {"import": t1 - t0, "read+evaluate": t2 - t1})


def run_pytrec_eval_many(qrels_path: str, runs_folder: str) -> dict:
    t0 = time.perf_counter()
    import pytrec_eval

    t1 = time.perf_counter()
    with open(qrels_path) as f:
        evaluator = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(f), set(TREC_NAMES))
    means, n = [], 0
    for path in _run_files(runs_folder):
        with open(path) as f:
            per_query = evaluator.evaluate(pytrec_eval.parse_run(f))
        means.append(_mean_of(per_query, TREC_NAMES))
        n = len(per_query)
    t2 = time.perf_counter()
    return {"means": _canonical(_average(means), 0), "systems": len(means),
            "stages": {"import": t1 - t0, "read+evaluate": t2 - t1}, "queries_evaluated": n}


def run_ranx_many(qrels_path: str, runs_folder: str) -> dict:
    t0 = time.perf_counter()
    from ranx import Qrels, Run, evaluate

    t1 = time.perf_counter()
    qrels = Qrels.from_file(qrels_path, kind="trec")
    means = []
    for path in _run_files(runs_folder):
        run = Run.from_file(path, kind="trec")
        means.append(evaluate(qrels, run, RANX_NAMES, make_comparable=True))
    t2 = time.perf_counter()
    return {"means": _canonical(_average(means), 1), "systems": len(means),
            "stages": {"import": t1 - t0, "read+evaluate": t2 - t1},
            "queries_in_mean": len(qrels)}


def run_ir_measures_many(qrels_path: str, runs_folder: str) -> dict:
    t0 = time.perf_counter()
    import ir_measures

    t1 = time.perf_counter()
    measures = [ir_measures.parse_measure(name) for name in IRM_NAMES]
    evaluator = ir_measures.evaluator(measures, ir_measures.read_trec_qrels(qrels_path))
    means = []
    for path in _run_files(runs_folder):
        agg = evaluator.calc_aggregate(ir_measures.read_trec_run(path))
        means.append({str(m): float(agg[m]) for m in measures})
    t2 = time.perf_counter()
    qrels_queries = len({q.query_id for q in ir_measures.read_trec_qrels(qrels_path)})
    avg = _average(means)
    return {"means": {canon: avg[str(m)] for canon, m in zip(MEASURES, measures)},
            "systems": len(means), "stages": {"import": t1 - t0, "read+evaluate": t2 - t1},
            "queries_in_mean": qrels_queries}


# ---------------------------------------------------------------------------- arrays


def _arrays(path: str):
    import numpy as np

    data = np.load(path)
    return data["y_true"], data["y_score"]


def run_rankwise_sklearn(_: str, arrays_path: str) -> dict:
    t0 = time.perf_counter()
    import rankwise

    t1 = time.perf_counter()
    y_true, y_score = _arrays(arrays_path)
    t2 = time.perf_counter()
    qrels, run = rankwise.from_arrays(y_true, y_score)
    result = rankwise.evaluate(qrels, run, ["nDCG@10"], "sklearn")
    t3 = time.perf_counter()
    return {"means": {"nDCG@10": result.mean("nDCG@10")},
            "stages": {"import": t1 - t0, "load": t2 - t1, "evaluate": t3 - t2}}


def run_sklearn(_: str, arrays_path: str) -> dict:
    t0 = time.perf_counter()
    from sklearn.metrics import ndcg_score

    t1 = time.perf_counter()
    y_true, y_score = _arrays(arrays_path)
    t2 = time.perf_counter()
    value = ndcg_score(y_true, y_score, k=10)
    t3 = time.perf_counter()
    return {"means": {"nDCG@10": float(value)},
            "stages": {"import": t1 - t0, "load": t2 - t1, "evaluate": t3 - t2}}


def run_rankwise_torchmetrics(_: str, arrays_path: str) -> dict:
    t0 = time.perf_counter()
    import rankwise

    t1 = time.perf_counter()
    y_true, y_score = _arrays(arrays_path)
    t2 = time.perf_counter()
    qrels, run = rankwise.from_arrays(y_true, y_score)
    result = rankwise.evaluate(qrels, run, list(ARRAY_MEASURES), "torchmetrics")
    t3 = time.perf_counter()
    return {"means": {m: result.mean(m) for m in ARRAY_MEASURES},
            "stages": {"import": t1 - t0, "load": t2 - t1, "evaluate": t3 - t2}}


def run_torchmetrics(_: str, arrays_path: str) -> dict:
    t0 = time.perf_counter()
    import torch
    import torchmetrics.retrieval as tr

    t1 = time.perf_counter()
    y_true, y_score = _arrays(arrays_path)
    t2 = time.perf_counter()
    queries, depth = y_true.shape
    preds = torch.from_numpy(y_score.reshape(-1))
    graded = torch.from_numpy(y_true.reshape(-1)).long()
    binary = graded >= 1
    indexes = torch.arange(queries).repeat_interleave(depth)
    metrics = {"nDCG@10": (tr.RetrievalNormalizedDCG(top_k=10), graded),
               "P@10": (tr.RetrievalPrecision(top_k=10), binary),
               "AP": (tr.RetrievalMAP(), binary), "RR": (tr.RetrievalMRR(), binary)}
    means = {name: float(metric(preds, target, indexes=indexes))
             for name, (metric, target) in metrics.items()}
    t3 = time.perf_counter()
    return {"means": means, "stages": {"import": t1 - t0, "load": t2 - t1, "evaluate": t3 - t2}}


TOOLS = {
    "rankwise": run_rankwise, "rankwise_stream": run_rankwise_stream,
    "pytrec_eval": run_pytrec_eval, "ranx": run_ranx, "ir_measures": run_ir_measures,
    "read_floor": run_read_floor,
    "rankwise_parquet": run_rankwise,  # the Parquet paths given to evaluate()
    "rankwise_parquet_int": run_rankwise,  # the same, doc ids stored as integers
    "rankwise_arrow": run_rankwise_arrow,
    "read_floor_parquet": run_read_floor_parquet,
    "rankwise_many": run_rankwise_many, "pytrec_eval_many": run_pytrec_eval_many,
    "ranx_many": run_ranx_many, "ir_measures_many": run_ir_measures_many,
    "rankwise_sklearn": run_rankwise_sklearn, "sklearn": run_sklearn,
    "rankwise_torchmetrics": run_rankwise_torchmetrics, "torchmetrics": run_torchmetrics,
}


def peak_rss_mb() -> float | None:
    """This process's own peak resident memory (Linux ``VmHWM``), in MB; None elsewhere.

    ``wait4``'s ``ru_maxrss`` would also count the parent's memory at the fork, which Linux
    carries over the ``exec``."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def main() -> None:
    tool, qrels_path, run_path, out_path = sys.argv[1:5]
    report = TOOLS[tool](qrels_path, run_path)
    report["child_total"] = time.perf_counter() - T_START
    report["peak_rss_mb"] = peak_rss_mb()
    with open(out_path, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main()
