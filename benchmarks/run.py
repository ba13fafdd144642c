"""End-to-end speed and peak memory of rankwise next to the evaluation tools people use.

One command generates the data (seeded, ``benchmarks/generate.py``) on first use, then
measures each tool in a fresh Python process per measurement (``benchmarks/child.py``):
import, read the input with the tool's own reader, evaluate, take the means. Tools alternate
within each repetition (the order rotates), the input files are read into the page cache
right before each measurement, and the median wall time over the repetitions is reported
with the peak memory of the child process and the ratio to rankwise.

    python benchmarks/run.py                       # every case but 1M (about 40 minutes)
    python benchmarks/run.py --quick               # 1k and 10k, one repetition
    python benchmarks/run.py --cases 100k,1M --repeat 3
    python benchmarks/run.py --cases all           # everything, 1M included (~5 GB of text)
    python benchmarks/run.py --skip ranx,ir_measures

The table is printed and written to ``benchmarks/results/latest.md`` (raw numbers in
``latest.json``); with three or more depth-100 scales the log-log plot of time against run
lines goes to ``docs/img/scaling.svg``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.metadata as md
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

from bytecode import compile_rankwise

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, "data")
RESULTS = os.path.join(HERE, "results")
SEED = 7


@dataclass(frozen=True)
class Case:
    """One benchmark case: its data and the tools measured on it.

    ``tools`` maps a child tool to the tool whose time it is compared with (its ratio's
    denominator); the first tool is the case's rankwise reference for the means check.
    """

    name: str
    kind: str  # trec, many, parquet, arrays
    queries: int
    depth: int = 100
    runs: int = 0
    tools: dict = field(default_factory=dict)
    doc_prefix: str = "d"  # doc ids: this prefix and a number
    judged_depth: int = 0  # only the top ranks judged (0: all)
    messy: bool = False  # the TREC files tab-separated with CRLF line ends (generate --messy)
    by_name_only: bool = False  # not among 'all': run when named

    @property
    def folder(self) -> str:
        if self.kind == "arrays":
            return os.path.join(DATA, f"arrays-{_label(self.queries)}x{self.depth}")
        if self.kind == "many":
            return os.path.join(DATA, f"many-{self.runs}x{_label(self.queries)}")
        suffix = "" if self.depth == 100 else f"-d{self.depth}"
        if self.judged_depth:
            suffix += f"-j{self.judged_depth}"
        if self.doc_prefix != "d":
            suffix += "-long"
        return os.path.join(DATA, _label(self.queries) + suffix)

    def inputs(self, tool: str) -> tuple[str, str]:
        """(qrels, run) arguments of the child for ``tool``."""
        if self.kind == "arrays":
            return "-", os.path.join(self.folder, "arrays.npz")
        if tool.endswith("_parquet_int"):
            return os.path.join(self.folder, "qrels-int.parquet"), os.path.join(
                self.folder, "run-int.parquet")
        if tool.endswith(("_parquet", "_arrow")):
            return os.path.join(self.folder, "qrels.parquet"), os.path.join(self.folder,
                                                                           "run.parquet")
        if self.kind == "many":
            return os.path.join(self.folder, "qrels.txt"), os.path.join(self.folder, "runs")
        suffix = "-messy" if self.messy else ""
        return os.path.join(self.folder, f"qrels{suffix}.txt"), os.path.join(
            self.folder, f"run{suffix}.txt")

    def run_lines(self) -> int:
        return self.queries * self.depth * max(self.runs, 1)


_TREC_TOOLS = {"rankwise": "rankwise", "rankwise_stream": "rankwise", "pytrec_eval": "rankwise",
               "ranx": "rankwise", "ir_measures": "rankwise", "read_floor": "rankwise"}
CASES = {c.name: c for c in [
    Case("1k", "trec", 1_000, tools=_TREC_TOOLS),
    Case("10k", "trec", 10_000, tools=_TREC_TOOLS),
    Case("100k", "trec", 100_000, tools=_TREC_TOOLS),
    Case("1M", "trec", 1_000_000, tools=_TREC_TOOLS),
    Case("10k-d1000", "trec", 10_000, depth=1000, tools=_TREC_TOOLS),
    Case("100k-long", "trec", 100_000, doc_prefix="msmarco_doc_00_", tools={
        "rankwise": "rankwise", "pytrec_eval": "rankwise", "read_floor": "rankwise"}),
    Case("100k-messy", "trec", 100_000, messy=True, tools={
        "rankwise": "rankwise", "pytrec_eval": "rankwise", "ir_measures": "rankwise"}),
    Case("many", "many", 50, runs=1000, tools={
        "rankwise_many": "rankwise_many", "pytrec_eval_many": "rankwise_many",
        "ranx_many": "rankwise_many", "ir_measures_many": "rankwise_many"}),
    Case("parquet", "parquet", 100_000, tools={
        "rankwise_parquet": "rankwise_parquet", "rankwise_parquet_int": "rankwise_parquet",
        "rankwise_arrow": "rankwise_parquet",
        "rankwise": "rankwise_parquet", "read_floor_parquet": "rankwise_parquet",
        "read_floor": "rankwise_parquet"}),
    # a run larger than the memory of the machine it was measured on (28.6 GB of text, 693M
    # lines) over the judgments of the top 100 ranks: rankwise.evaluate streams it by itself
    Case("deep", "trec", 100_000, depth=7000, judged_depth=100, by_name_only=True, tools={
        "rankwise": "rankwise", "rankwise_stream": "rankwise"}),
    Case("arrays", "arrays", 10_000, tools={
        "rankwise_sklearn": "rankwise_sklearn", "sklearn": "rankwise_sklearn",
        "rankwise_torchmetrics": "rankwise_torchmetrics",
        "torchmetrics": "rankwise_torchmetrics"}),
]}
DEFAULT_CASES = "1k,10k,100k,10k-d1000,100k-long,100k-messy,many,parquet,arrays"
#: The distribution each peer comes from (a peer that is not installed is skipped).
PEERS = {"pytrec_eval": "pytrec_eval-terrier", "ranx": "ranx", "ir_measures": "ir-measures",
         "sklearn": "scikit-learn", "torchmetrics": "torchmetrics"}
LABELS = {
    "rankwise": "rankwise", "rankwise_stream": "rankwise, streamed (evaluate_stream)",
    "pytrec_eval": "pytrec_eval (reading included)", "ranx": "ranx (cold: fresh process)",
    "ir_measures": "ir_measures", "read_floor": "pyarrow.csv reading both files, no evaluation",
    "rankwise_parquet": "rankwise from Parquet files",
    "rankwise_parquet_int": "rankwise from Parquet files, doc ids as integers",
    "rankwise_arrow": "rankwise from Arrow tables (pyarrow.parquet reads first)",
    "read_floor_parquet":
        "pyarrow.parquet reading both files, no evaluation",
    "rankwise_many": "rankwise (one evaluate() call, 1,000 runs)",
    "pytrec_eval_many": "pytrec_eval (one evaluator, 1,000 runs)",
    "ranx_many": "ranx (evaluate() per run)", "ir_measures_many": "ir_measures (one evaluator)",
    "rankwise_sklearn": "rankwise, sklearn profile (nDCG@10)", "sklearn": "scikit-learn ndcg_score",
    "rankwise_torchmetrics": "rankwise, torchmetrics profile (4 measures)",
    "torchmetrics": "torchmetrics retrieval metrics (4)",
}


# ---------------------------------------------------------------------------- helpers


def _label(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1_000 and n % 1_000 == 0:
        return f"{n // 1_000}k"
    return str(n)


def peer_of(tool: str) -> str | None:
    for peer in PEERS:
        if tool == peer or tool.startswith(peer + "_"):
            return peer
    return None


def ensure_data(case: Case) -> None:
    """Generate the case's data unless it is there (seeded: the same files every time)."""
    folder = case.folder
    needed = [case.inputs(t)[1] for t in case.tools] + \
        [case.inputs(t)[0] for t in case.tools if case.kind != "arrays"]
    if all(os.path.exists(p) for p in needed):
        return
    print(f"generating {os.path.relpath(folder, ROOT)} ...", flush=True)
    cmd = [sys.executable, os.path.join(HERE, "generate.py"), "--queries", str(case.queries),
           "--depth", str(case.depth), "--seed", str(SEED), "--out", folder,
           "--doc-prefix", case.doc_prefix]
    if case.judged_depth:
        cmd += ["--judged-depth", str(case.judged_depth)]
    if case.kind == "arrays":
        cmd.append("--arrays")
    if case.kind == "many":
        cmd += ["--runs", str(case.runs)]
    if case.kind == "parquet":
        cmd.append("--parquet")
    if case.messy:
        cmd.append("--messy")
    subprocess.run(cmd, check=True)


def warm_page_cache(*paths: str) -> None:
    """Read the inputs so that every tool starts with them in the page cache (pages are
    evicted quickly on some machines, which would otherwise favour whoever runs second)."""
    buf = bytearray(1 << 22)
    files = []
    for path in paths:
        if os.path.isdir(path):
            files += [os.path.join(path, name) for name in os.listdir(path)]
        elif os.path.exists(path):
            files.append(path)
    for path in files:
        with open(path, "rb", buffering=0) as f:
            while f.readinto(buf):
                pass


def measure(tool: str, qrels: str, run: str, timeout: float, env: dict | None = None) -> dict:
    """Run one child; return its wall seconds, peak RSS (MB) and JSON report."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        cmd = [sys.executable, os.path.join(HERE, "child.py"), tool, qrels, run, out]
        warm_page_cache(qrels, run)
        timed_out = threading.Event()
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

        def kill() -> None:
            timed_out.set()
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        stderr_chunks: list[bytes] = []
        reader = threading.Thread(target=lambda: stderr_chunks.append(proc.stderr.read()))
        reader.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:  # interrupted: take the child down too
            kill()
            raise
        wall = time.perf_counter() - t0
        timer.cancel()
        reader.join()
        proc.stderr.close()
        proc.returncode = os.waitstatus_to_exitcode(status)
        stderr = b"".join(stderr_chunks).decode(errors="replace")
        if timed_out.is_set():
            return {"tool": tool, "timeout": timeout, "wall": wall,
                    "rss_mb": usage.ru_maxrss / 1024}
        if proc.returncode != 0:
            last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
            print(f"{tool} failed ({proc.returncode}):\n{stderr[-3000:]}", file=sys.stderr)
            return {"tool": tool, "error": last or f"exit status {proc.returncode}",
                    "wall": wall, "rss_mb": usage.ru_maxrss / 1024}
        with open(out) as f:
            report = json.load(f)
    # the child's own peak (VmHWM); wait4's ru_maxrss also counts this parent at the fork
    rss = report.get("peak_rss_mb") or usage.ru_maxrss / 1024
    report.update(tool=tool, wall=wall, rss_mb=rss, cpu=usage.ru_utime + usage.ru_stime)
    if "warm_evaluate" in report:  # the child ran evaluate() twice; the cold row excludes the 2nd
        report["wall"] = wall - report["warm_evaluate"]
    return report


def machine() -> dict:
    """What the numbers were measured on, collected from the system."""
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ram = None
    try:
        with open("/proc/meminfo") as f:
            kb = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
        ram = kb / 1024 ** 2
    except (OSError, StopIteration):
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()

    def version(dist: str) -> str:
        try:
            return md.version(dist)
        except md.PackageNotFoundError:
            return "absent"

    dists = ["rankwise", "numpy", "pyarrow", "pytrec_eval-terrier", "ranx", "numba",
             "ir-measures", "scikit-learn", "torch", "torchmetrics"]
    versions = {d: version(d) for d in dists}
    line = (f"{cpu}, {cores} cores, {ram:.0f} GiB RAM, " if ram else f"{cpu}, {cores} cores, ") + \
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}; " + \
        ", ".join(f"{d} {v}" for d, v in versions.items())
    return {"cpu": cpu, "cores": cores, "ram_gib": ram, "system": platform.system(),
            "release": platform.release(), "python": platform.python_version(),
            "versions": versions, "line": line}


# ---------------------------------------------------------------------------- extras


def import_time(repeat: int) -> dict:
    """``import rankwise``: its cumulative time from ``python -X importtime`` (median), and
    the wall time of ``python -c 'import rankwise'`` next to ``python -c pass``."""
    cumulative, with_import, bare = [], [], []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import rankwise"],
                             capture_output=True, text=True, check=True).stderr
        for line in out.splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) == 3 and parts[2] == "rankwise":
                cumulative.append(int(parts[1]) / 1e6)
        for target, cmd in ((with_import, "import rankwise"), (bare, "pass")):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", cmd], check=True)
            target.append(time.perf_counter() - t0)
    return {"importtime_s": statistics.median(cumulative),
            "python_c_import_s": statistics.median(with_import),
            "python_c_pass_s": statistics.median(bare)}


def cli_time(case: Case, repeat: int) -> dict:
    """``rankwise evaluate QRELS RUN -m <the nine measures>`` end to end (the console script
    next to this interpreter, else ``python -m rankwise``)."""
    from child import TREC_NAMES

    qrels, run = case.inputs("rankwise")
    script = os.path.join(os.path.dirname(sys.executable), "rankwise")
    base = [script] if os.path.exists(script) else [sys.executable, "-m", "rankwise"]
    walls = []
    for _ in range(repeat):
        warm_page_cache(qrels, run)
        t0 = time.perf_counter()
        subprocess.run(base + ["evaluate", qrels, run, "-m", *TREC_NAMES], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t0)
    return {"case": case.name, "command": " ".join([os.path.basename(base[-1]), "evaluate",
                                                    "QRELS", "RUN", "-m", *TREC_NAMES]),
            "walls": walls, "median_s": statistics.median(walls)}


# ---------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default=DEFAULT_CASES,
                   help=f"comma-separated cases ({', '.join(CASES)}) or 'all' (every case "
                        "but deep, a 28.6 GB run file)")
    p.add_argument("--repeat", type=int, default=3, help="repetitions per tool and case (median)")
    p.add_argument("--skip", default="", help="comma-separated tools or peers to skip")
    p.add_argument("--quick", action="store_true", help="1k and 10k, one repetition")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds after which one measurement is abandoned")
    p.add_argument("--max-rss-gb", type=float, default=None,
                   help="do not run a tool whose peak memory, extrapolated from its peak on the "
                        "largest smaller case of this run, would exceed this (default: 70%% of "
                        "the machine's memory); pytrec_eval would need about 27 GB at 1M x 100")
    p.add_argument("--first-use", action="store_true",
                   help="also time ranx's first use ever (empty numba cache, about a minute)")
    p.add_argument("--output", default=os.path.join(RESULTS, "latest.md"))
    p.add_argument("--render", metavar="JSON", default=None,
                   help="measure nothing: write the table and the plot again from the raw "
                        "numbers of an earlier run (its latest.json)")
    p.add_argument("--plot", default=os.path.join(ROOT, "docs", "img", "scaling.svg"),
                   help="where the log-log scaling plot goes ('' for none)")
    args = p.parse_args(argv)
    if args.render:
        return render_again(args)
    # a terminated run stops its child measurement too (see measure)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.quick:
        args.cases, args.repeat = "1k,10k", 1
    names = [n for n, c in CASES.items() if not c.by_name_only] if args.cases == "all" \
        else [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [n for n in names if n not in CASES]
    if unknown:
        p.error(f"unknown case {unknown[0]!r}; cases: {', '.join(CASES)}")
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    missing = {peer for peer, dist in PEERS.items() if not _installed(dist)}
    for peer in sorted(missing):
        print(f"{peer} is not installed; skipping it (pip install {PEERS[peer]})")
    mach = machine()
    print(mach["line"], flush=True)
    limit_mb = 1024 * (args.max_rss_gb if args.max_rss_gb is not None
                       else 0.7 * (mach["ram_gib"] or 16))

    compile_rankwise()  # as pip does for the peers' wheels
    extras: dict = {"import": import_time(max(args.repeat, 5))}
    print(f"import rankwise: {extras['import']['importtime_s'] * 1000:.0f} ms (-X importtime)",
          flush=True)
    if "ranx" not in skip | missing:
        ensure_data(CASES["1k"])
        # ranx compiles its numba functions on first use and caches them on disk; one untimed
        # run fills that cache, so the timed "cold" runs are a fresh process with the cache
        # filled (a user's every run after the first).
        measure("ranx", *CASES["1k"].inputs("ranx"), args.timeout)
        if args.first_use:
            with tempfile.TemporaryDirectory() as cache:
                first = measure("ranx", *CASES["1k"].inputs("ranx"), args.timeout,
                                env={**os.environ, "NUMBA_CACHE_DIR": cache})
            extras["ranx_first_use"] = {"wall": first["wall"], "rss_mb": first["rss_mb"]}

    results: dict[str, dict] = {}
    for name in names:
        case = CASES[name]
        ensure_data(case)
        tools = [t for t in case.tools if t not in skip and peer_of(t) not in skip | missing]
        not_run = {}
        for tool in list(tools):
            expected = _expected_peak_mb(tool, case, results)
            if expected is not None and expected > limit_mb:
                tools.remove(tool)
                not_run[tool] = (f"not run: about {expected / 1024:.0f} GB expected (its peak "
                                 f"on a smaller case, scaled), over {limit_mb / 1024:.0f} GB")
        runs: dict[str, list[dict]] = {t: [] for t in tools}
        abandoned: set[str] = set()
        for rep in range(args.repeat if tools else 0):
            order = tools[rep % len(tools):] + tools[:rep % len(tools)]
            for tool in order:
                if tool in abandoned:
                    continue
                r = measure(tool, *case.inputs(tool), args.timeout)
                runs[tool].append(r)
                if "timeout" in r or "error" in r:
                    abandoned.add(tool)
                    why = f"timed out after {args.timeout:.0f} s" if "timeout" in r else \
                        f"failed ({r['error']})"
                    print(f"[{name}] {tool}: {why}; not repeated", flush=True)
                else:
                    print(f"[{name}] rep {rep + 1}/{args.repeat} {tool}: {r['wall']:.2f} s, "
                          f"{r['rss_mb']:.0f} MB, stages "
                          + ", ".join(f"{k} {v:.2f}" for k, v in r["stages"].items())
                          + (f", warm evaluate {r['warm_evaluate']:.2f}"
                             if "warm_evaluate" in r else ""), flush=True)
        results[name] = {"case": case.__dict__ | {"folder": os.path.relpath(case.folder, ROOT)},
                         "runs": runs, "not_run": not_run}
        if name == "1k":
            extras["cli_1k"] = cli_time(case, max(args.repeat, 5))
            print(f"rankwise evaluate (CLI) on 1k: {extras['cli_1k']['median_s']:.2f} s",
                  flush=True)

    text = render(results, mach, extras, args)
    print()
    print(text)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        f.write(text)
    with open(os.path.splitext(args.output)[0] + ".json", "w") as f:
        json.dump({"date": _dt.date.today().isoformat(), "machine": mach,
                   "args": {**vars(args), "output": os.path.relpath(args.output, ROOT),
                            "plot": os.path.relpath(args.plot, ROOT) if args.plot else ""},
                   "extras": extras, "results": results}, f, indent=1)
    if args.plot:
        written = plot(results, mach, args.plot)
        if written:
            print(f"written: {os.path.relpath(written)}")
    print(f"written: {os.path.relpath(args.output)}")
    return 0


#: A peak is extrapolated from a case with at least 1/MAX_SCALING of the run lines: from
#: much smaller cases the fixed costs (interpreter, imports) would be scaled up too.
MAX_SCALING = 10


def _expected_peak_mb(tool: str, case: Case, results: dict) -> float | None:
    """The tool's peak on the largest TREC case measured so far with fewer run lines (at
    least a tenth as many), scaled by the ratio of run lines (memory grows about linearly
    with the input); None when there is no such case. ``rankwise.evaluate`` streams a run
    file too large for one pass in memory: from BLOCKWISE_MIN_ROWS lines on, its peak is
    expected as the streamed evaluation's."""
    if case.kind != "trec":
        return None
    from rankwise.api import BLOCKWISE_MIN_ROWS

    if tool == "rankwise" and case.run_lines() >= BLOCKWISE_MIN_ROWS:
        tool = "rankwise_stream"  # a run file too large for one pass is streamed
    smaller = [(CASES[n].run_lines(), n) for n, entry in results.items()
               if CASES[n].kind == "trec"
               and case.run_lines() / MAX_SCALING <= CASES[n].run_lines() < case.run_lines()
               and _ok(entry["runs"].get(tool, []))]
    if not smaller:
        return None
    lines, name = max(smaller)
    peak = max(r["rss_mb"] for r in _ok(results[name]["runs"][tool]))
    return peak * case.run_lines() / lines


def render_again(args) -> int:
    """The table and the plot of an earlier run, from its JSON."""
    with open(args.render) as f:
        data = json.load(f)
    saved = argparse.Namespace(**data["args"])
    text = render(data["results"], data["machine"], data["extras"], saved,
                  date=data.get("date"))
    with open(args.output, "w") as f:
        f.write(text)
    print(text)
    if args.plot and plot(data["results"], data["machine"], args.plot):
        print(f"written: {os.path.relpath(args.plot)}")
    return 0


def _installed(dist: str) -> bool:
    try:
        md.version(dist)
        return True
    except md.PackageNotFoundError:
        return False


# ---------------------------------------------------------------------------- report


def _ok(runs: list[dict]) -> list[dict]:
    return [r for r in runs if "timeout" not in r and "error" not in r]


def _median_wall(runs: list[dict]) -> float | None:
    ok = _ok(runs)
    return statistics.median(r["wall"] for r in ok) if ok else None


def render(results: dict, mach: dict, extras: dict, args, date: str | None = None) -> str:
    lines = [
        "# rankwise benchmark",
        "",
        (f"{date or _dt.date.today().isoformat()}; synthetic data (benchmarks/generate.py, seed {SEED}); "
         f"median of {args.repeat} fresh-process run(s) per row, tools alternating; peak RSS = "
         "the largest of the runs' own peaks; CPU s = median user + system time of the process "
         "(all its threads)."),
        "",
        f"Machine: {mach['line']}",
        "",
        ("| case | tool | median wall s | peak RSS MB | time vs rankwise | CPU s | runs (s) | "
         "inside the process (median s) |"),
        "|---|---|---:|---:|---:|---:|---|---|",
    ]
    sanity = []
    for name, entry in results.items():
        case = CASES[name]
        runs = entry["runs"]
        for tool, reason in entry["not_run"].items():
            lines.append(f"| {name} | {LABELS.get(tool, tool)} | {reason} | | | | | |")
        for tool, rs in runs.items():
            label = LABELS.get(tool, tool)
            ok = _ok(rs)
            if not ok:
                failed = [r["error"] for r in rs if "error" in r]
                shown = f"failed: {failed[0]}" if failed else f"> {args.timeout:.0f} (timed out)"
                lines.append(f"| {name} | {label} | {shown} | | | | | |")
                continue
            wall = _median_wall(rs)
            base = _median_wall(runs.get(case.tools[tool], []))
            ratio = f"{wall / base:.2f}" if base else ""
            rss = max(r["rss_mb"] for r in ok)
            stages = " / ".join(f"{k} {statistics.median(r['stages'][k] for r in ok):.2f}"
                                for k in ok[0]["stages"])
            walls = ", ".join(f"{r['wall']:.2f}" for r in ok)
            cpu = statistics.median(r["cpu"] for r in ok)
            lines.append(f"| {name} | {label} | {wall:.2f} | {rss:.0f} | {ratio} | {cpu:.2f} | "
                         f"{walls} | {stages} |")
            if tool in ("ranx", "ranx_parquet"):
                warm = statistics.median(r["warm_evaluate"] for r in ok)
                lines.append(f"| {name} | ranx (warm: 2nd evaluate() in-process) | {warm:.2f} | | "
                             f"{warm / base:.2f} | | "
                             + ", ".join(f"{r['warm_evaluate']:.2f}" for r in ok)
                             + " | evaluate only, files already read |")
        sanity += _agreement(name, case, runs)
    ex = extras
    lines += ["", "Other measurements:", ""]
    imp = ex["import"]
    lines.append(f"- `import rankwise`: {imp['importtime_s'] * 1000:.0f} ms cumulative in "
                 f"`python -X importtime` (median); `python -c 'import rankwise'` "
                 f"{imp['python_c_import_s']:.3f} s wall against {imp['python_c_pass_s']:.3f} s "
                 "for `python -c pass`.")
    if "cli_1k" in ex:
        cli = ex["cli_1k"]
        lines.append(f"- `{cli['command']}` on the 1k case: {cli['median_s']:.2f} s wall, "
                     "interpreter start included (median; runs "
                     + ", ".join(f"{w:.2f}" for w in cli["walls"]) + ").")
    if "ranx_first_use" in ex:
        first = ex["ranx_first_use"]
        lines.append(f"- ranx first use ever (empty numba cache, 1k queries, compile included): "
                     f"{first['wall']:.1f} s wall, {first['rss_mb']:.0f} MB.")
    lines += ["", "Means agreement (sanity check):", ""] + sanity + [""]
    return "\n".join(lines)


def _agreement(name: str, case: Case, runs: dict) -> list[str]:
    """Each tool's means against its rankwise reference (ranx and ir_measures average over
    every judged query, with the judged queries missing from the run scored 0: rescaled)."""
    out = []
    for tool, rs in runs.items():
        ref_tool = case.tools[tool]
        ok, ref_ok = _ok(rs), _ok(runs.get(ref_tool, []))
        if tool == ref_tool or not ok or not ref_ok or not ok[0]["means"]:
            continue
        means, ref = dict(ok[0]["means"]), ref_ok[0]
        note = ""
        if "queries_in_mean" in ok[0] and "queries_evaluated" in ref:
            factor = ok[0]["queries_in_mean"] / ref["queries_evaluated"]
            means = {k: v * factor for k, v in means.items()}
            note = (f" ({tool} averages over all {ok[0]['queries_in_mean']} judged queries, "
                    f"trec_eval over the {ref['queries_evaluated']} in the run: rescaled "
                    f"x{factor:.4f})")
        shared = [k for k in ref["means"] if k in means]
        diffs = {k: abs(means[k] - ref["means"][k]) for k in shared}
        worst = max(diffs, key=diffs.get)
        detail = ", ".join(f"{k} {v:.1e}" for k, v in diffs.items())
        out.append(f"- {name} {tool}: max |mean - rankwise| = {diffs[worst]:.2e} ({worst})"
                   f"{note}. Per measure: {detail}")
    return out


def plot(results: dict, mach: dict, path: str) -> str | None:
    """Log-log plot of median wall time against run lines for the depth-100 TREC cases."""
    scales = [n for n in results if CASES[n].kind == "trec" and CASES[n].depth == 100
              and CASES[n].doc_prefix == "d"]
    if len(scales) < 3:
        return None
    import matplotlib

    matplotlib.use("Agg")  # writes SVG or PNG, after the file's extension
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "rankwise"  # the same file for the same numbers
    fig, ax = plt.subplots(figsize=(7, 4.6))
    styles = {"rankwise": ("C0", "o", "-"), "rankwise_stream": ("C0", "s", "--"),
              "read_floor": ("0.5", "", ":"), "pytrec_eval": ("C1", "^", "-"),
              "ranx": ("C2", "v", "-"), "ir_measures": ("C3", "D", "-")}
    for tool, (color, marker, line) in styles.items():
        points = [(CASES[n].run_lines(), _median_wall(results[n]["runs"].get(tool, [])))
                  for n in scales]
        points = [(x, y) for x, y in points if y]
        if len(points) < 2:
            continue
        xs, ys = zip(*sorted(points))
        ax.plot(xs, ys, color=color, marker=marker, linestyle=line,
                label=LABELS[tool].replace(" (reading included)", ""))
    ref = [(CASES[n].run_lines(), _median_wall(results[n]["runs"].get("rankwise", [])))
           for n in scales]
    ref = [(x, y) for x, y in ref if y]
    if ref:
        x1, y1 = max(ref)
        xs = [min(x for x, _ in ref), x1]
        ax.plot(xs, [y1 * x / x1 for x in xs], color="0.75", linewidth=0.8,
                label="time proportional to lines (slope 1)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("run lines (queries x 100)")
    ax.set_ylabel("wall time, s (fresh process, median)")
    ax.set_title(f"End to end from TREC files, 9 measures; {mach['cores']} cores", fontsize=10)
    ax.grid(True, which="both", linewidth=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)
    return path


if __name__ == "__main__":
    sys.exit(main())
