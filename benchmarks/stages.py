"""Where rankwise's time goes: one evaluation cut into its stages, timed one after the other.

    python benchmarks/stages.py                      # the 100k case, median of 3 processes
    python benchmarks/stages.py --data benchmarks/data/10k --repeat 5
    python benchmarks/stages.py --source OTHER_CHECKOUT   # the same stages of another version

Each repetition is a fresh process that runs the stages of ``rankwise.evaluate`` in sequence
(the evaluation itself overlaps some of them in a second thread, so its wall time is lower
than their sum): interpreter start, ``import rankwise``, reading the run and the judgments
(TREC text parsed by pyarrow, query ids encoded), indexing the judgments (their pair keys
sorted), the one pass of :func:`rankwise.core.ranked.rank` (doc-id fingerprints, the run's
keys sorted, duplicates checked, the join, the ranked order proved and ties re-ordered), each
measure, and the summary (aggregates, diagnostics, warnings). Next to them: pyarrow.csv
reading the same files with nothing else (the reader's limit), and the whole
``rankwise.evaluate`` call in the same process. ``--cprofile N`` adds the N functions with
the most time of their own.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from bytecode import compile_rankwise

HERE = os.path.dirname(os.path.abspath(__file__))
MEASURES = ["P_10", "recall_100", "map", "map_cut_100", "ndcg_cut_10", "ndcg", "recip_rank",
            "Rprec", "bpref"]


def stages(qrels_path: str, run_path: str, cprofile: int) -> dict:
    """Run the stages once in this process; return their seconds (and the top functions)."""
    out: dict[str, float] = {}

    def timed(name: str, fn):
        t0 = time.perf_counter()
        value = fn()
        out[name] = time.perf_counter() - t0
        return value

    import importlib

    timed("import rankwise", lambda: importlib.import_module("rankwise"))
    import pyarrow as pa
    from pyarrow import csv

    profiler = None
    if cprofile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    _one_pass(qrels_path, run_path, timed)  # its arrays are freed when it returns
    if profiler is not None:
        profiler.disable()
    import rankwise

    timed("rankwise.evaluate, whole call (same process, files cached)",
          lambda: rankwise.evaluate(qrels_path, run_path, MEASURES))

    def floor(path: str, names: list[str], types: dict):
        if path.endswith(".parquet"):
            import pyarrow.parquet as pq

            return pq.read_table(path, memory_map=True)
        return csv.read_csv(path, read_options=csv.ReadOptions(column_names=names,
                                                               block_size=1 << 24),
                            parse_options=csv.ParseOptions(delimiter=" ", quote_char=False),
                            convert_options=csv.ConvertOptions(column_types=types,
                                                               include_columns=list(types)))

    reader = "pyarrow.parquet" if run_path.endswith(".parquet") else "pyarrow.csv"
    timed(f"floor: {reader} reads the run alone", lambda: floor(
        run_path, ["qid", "q0", "docid", "rank", "score", "tag"],
        {"qid": pa.string(), "docid": pa.string(), "rank": pa.int64(), "score": pa.float64()}))
    timed(f"floor: {reader} reads the qrels alone", lambda: floor(
        qrels_path, ["qid", "iter", "docid", "rel"],
        {"qid": pa.string(), "docid": pa.string(), "rel": pa.int64()}))
    report: dict = {"stages": out}
    if profiler is not None:
        import pstats

        stats = pstats.Stats(profiler).sort_stats("tottime")
        top = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:cprofile]
        report["top"] = [(f"{os.path.basename(f)}:{line}({fn})", round(tt, 3))
                         for (f, line, fn), (_, _, tt, _, _) in top]
    return report


def _one_pass(qrels_path: str, run_path: str, timed) -> None:
    """The stages of one evaluation, each timed by ``timed(name, fn)``."""
    from rankwise.core.memory import large_arrays
    from rankwise.core.judgments import index_judgments
    from rankwise.core.ranked import rank
    from rankwise.io import to_qrels, to_run
    from rankwise.measures import parse_measures

    measures = parse_measures(MEASURES)
    with large_arrays():
        run = timed("read run (parse, encode query ids)", lambda: to_run(run_path))
        qrels = timed("read qrels", lambda: to_qrels(qrels_path))
        index = timed("index judgments (sort pair keys)", lambda: index_judgments(qrels))
        lists = timed("rank: fingerprints, sort, join, order, ties", lambda: rank(index, run))
        values = {str(m): timed(f"measure {m}", lambda m=m: m.compute(lists)) for m in measures}
        timed("summary: aggregates, diagnostics, checks",
              lambda: _summary(lists, measures, values))


def _summary(lists, measures, values: dict) -> None:
    """What ``rankwise.evaluate`` does after the measures: aggregates, diagnostics and the
    diagnostic checks (where a version has them: earlier ones returned warnings only)."""
    from rankwise import diagnostics
    from rankwise.results import aggregate

    for m in measures:
        aggregate(values[str(m)], m.spec.aggregate)
    lists.diagnostics.to_dict()
    if hasattr(diagnostics, "run_checks"):
        diagnostics.run_checks(lists, measures, values)
    else:
        diagnostics.pitfall_warnings(lists, measures)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=os.path.join(HERE, "data", "100k"),
                   help="folder with qrels.txt and run.txt (made by generate.py)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--source", default=None,
                   help="a rankwise checkout to profile instead of the installed one")
    p.add_argument("--cprofile", type=int, default=0, help="list the N most expensive functions")
    p.add_argument("--parquet", action="store_true",
                   help="read qrels.parquet and run.parquet (generate.py --parquet) instead")
    p.add_argument("--json", default=None, help="also write the medians here")
    p.add_argument("--once", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    suffix = ".parquet" if args.parquet else ".txt"
    qrels, run = (os.path.join(args.data, name + suffix) for name in ("qrels", "run"))
    if args.once:
        print(json.dumps(stages(qrels, run, args.cprofile)))
        return 0
    env = dict(os.environ)
    if args.source:
        env["PYTHONPATH"] = os.path.abspath(args.source) + os.pathsep + env.get("PYTHONPATH", "")
    compile_rankwise(env)  # as pip does for an installed wheel
    reports = []
    for _ in range(args.repeat):
        for path in (run, qrels):  # in the page cache for every repetition
            with open(path, "rb") as f:
                while f.read(1 << 24):
                    pass
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
        interpreter = time.perf_counter() - t0
        done = subprocess.run([sys.executable, __file__, "--once", "--data", args.data,
                               "--cprofile", str(args.cprofile),
                               *(["--parquet"] if args.parquet else [])], env=env, check=True,
                              capture_output=True, text=True)
        report = json.loads(done.stdout)
        report["stages"] = {"interpreter start (python -c pass)": interpreter,
                            **report["stages"]}
        reports.append(report)
    names = list(reports[0]["stages"])
    medians = {n: statistics.median(r["stages"][n] for r in reports) for n in names}
    in_pass = [n for n in names if not n.startswith(("rankwise.evaluate", "floor",
                                                     "interpreter", "import"))]
    width = max(map(len, names))
    print(f"{args.data}: median of {args.repeat} processes (seconds)")
    for n in names:
        print(f"  {n:<{width}}  {medians[n]:7.3f}")
    print(f"  {'sum of the stages of the pass':<{width}}  {sum(medians[n] for n in in_pass):7.3f}")
    if args.cprofile:
        print("most time of their own (first repetition):")
        for name, seconds in reports[0]["top"]:
            print(f"  {seconds:7.3f}  {name}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"data": args.data, "repeat": args.repeat, "source": args.source,
                       "medians": medians, "reports": reports}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
