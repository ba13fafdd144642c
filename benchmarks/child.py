"""One benchmark measurement, run by ``benchmarks/run.py`` in a fresh interpreter.

    python benchmarks/child.py TOOL QRELS RUN OUT_JSON

TOOL is ``rankwise``, ``pytrec_eval`` or ``ranx``. The child imports the tool, parses both
files with the tool's own reader, evaluates the ten measures, computes the means, and writes
the means plus its own stage timings to OUT_JSON. The parent times the whole process (start to
exit) and reads the peak RSS of the process from ``wait4``.

Measure names are the rankwise canonical names below; each tool gets its own spelling.
"""

from __future__ import annotations

import json
import sys
import time

T_START = time.perf_counter()

#: rankwise canonical name -> (trec_eval / pytrec_eval name, ranx name)
MEASURES = {
    "P@10": ("P_10", "precision@10"),
    "R@100": ("recall_100", "recall@100"),
    "AP": ("map", "map"),
    "AP@100": ("map_cut_100", "map@100"),
    "nDCG@10": ("ndcg_cut_10", "ndcg@10"),
    "nDCG": ("ndcg", "ndcg"),
    "RR": ("recip_rank", "mrr"),
    "Rprec": ("Rprec", "r-precision"),
    "Bpref": ("bpref", "bpref"),
    "Success@10": ("success_10", "hit_rate@10"),
}
TREC_NAMES = [t for t, _ in MEASURES.values()]
RANX_NAMES = [r for _, r in MEASURES.values()]


def run_rankwise(qrels_path: str, run_path: str) -> dict:
    t0 = time.perf_counter()
    import rankwise

    t1 = time.perf_counter()
    result = rankwise.evaluate(qrels_path, run_path, TREC_NAMES)
    means = next(iter(result.aggregates.values()))
    t2 = time.perf_counter()
    diag = next(iter(result.diagnostics.values()))
    return {
        "means": {name: float(means[name]) for name in MEASURES},
        "stages": {"import": t1 - t0, "parse+evaluate": t2 - t1},
        "queries_evaluated": diag["queries_evaluated"],
        "qrels_queries": diag["qrels_queries"],
    }


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
    n = len(per_query)
    sums = dict.fromkeys(TREC_NAMES, 0.0)
    for values in per_query.values():
        for name in TREC_NAMES:
            sums[name] += values[name]
    means = {canon: sums[trec] / n for canon, (trec, _) in MEASURES.items()}
    t3 = time.perf_counter()
    return {
        "means": means,
        "stages": {"import": t1 - t0, "parse": t2 - t1, "evaluate": t3 - t2},
        "queries_evaluated": n,
    }


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
    # Warm: the same call again in the same process (numba functions compiled/loaded,
    # run already made comparable and sorted).
    evaluate(qrels, run, RANX_NAMES, make_comparable=True)
    t4 = time.perf_counter()
    return {
        "means": {canon: float(scores[rx]) for canon, (_, rx) in MEASURES.items()},
        "stages": {"import": t1 - t0, "parse": t2 - t1, "evaluate": t3 - t2},
        "warm_evaluate": t4 - t3,
        "queries_in_mean": len(qrels),
    }


TOOLS = {"rankwise": run_rankwise, "pytrec_eval": run_pytrec_eval, "ranx": run_ranx}


def main() -> None:
    tool, qrels_path, run_path, out_path = sys.argv[1:5]
    report = TOOLS[tool](qrels_path, run_path)
    report["child_total"] = time.perf_counter() - T_START
    with open(out_path, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main()
