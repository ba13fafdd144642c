"""End-to-end speed and peak memory of rankwise next to pytrec_eval and ranx.

For each scale (queries x depth 100) the script generates synthetic TREC files if they are
absent (``benchmarks/generate.py``, seed 7), then measures each tool in a fresh Python process
per measurement (``benchmarks/child.py``): import + parse both files + evaluate ten measures +
means. Tools alternate within each repetition (the order rotates), the input files are read
into the page cache right before each measurement, and the median wall time over the
repetitions is reported with the peak RSS of the child process (``wait4``'s ``ru_maxrss``).

    python benchmarks/run.py                      # 10k and 100k queries, 3 repetitions
    python benchmarks/run.py --quick              # 1k and 10k, 1 repetition
    python benchmarks/run.py --scales 1k,10k,100k --repeat 5 --skip ranx

The table is printed and written to ``benchmarks/results/latest.md`` (raw numbers in
``latest.json``).
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

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
RESULTS = os.path.join(HERE, "results")
TOOLS = ["rankwise", "pytrec_eval", "ranx"]
DEPTH = 100
SEED = 7


# ---------------------------------------------------------------------------- helpers

def parse_scale(text: str) -> int:
    text = text.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text[:-1] if text[-1:] in "km" else text) * mult)


def scale_label(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1_000 and n % 1_000 == 0:
        return f"{n // 1_000}k"
    return str(n)


def ensure_data(n: int) -> tuple[str, str]:
    folder = os.path.join(DATA, scale_label(n))
    qrels, run = os.path.join(folder, "qrels.txt"), os.path.join(folder, "run.txt")
    if not (os.path.exists(qrels) and os.path.exists(run)):
        print(f"generating {scale_label(n)} queries x depth {DEPTH} ...", flush=True)
        subprocess.run([sys.executable, os.path.join(HERE, "generate.py"), "--queries", str(n),
                        "--depth", str(DEPTH), "--seed", str(SEED), "--out", folder], check=True)
    return qrels, run


def warm_page_cache(*paths: str) -> None:
    """Read the files so that every tool starts with them in the page cache (pages are
    evicted quickly on some machines, which would otherwise favour whoever runs second)."""
    buf = bytearray(1 << 22)
    for path in paths:
        with open(path, "rb", buffering=0) as f:
            while f.readinto(buf):
                pass


def measure(tool: str, qrels: str, run: str, timeout: float,
            env: dict | None = None) -> dict:
    """Run one child; return wall seconds, peak RSS (MB) and the child's JSON report."""
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
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        stderr = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
        rss_mb = usage.ru_maxrss / 1024  # Linux: kilobytes
        if timed_out.is_set():
            return {"tool": tool, "timeout": timeout, "wall": wall, "rss_mb": rss_mb}
        if proc.returncode != 0:
            raise RuntimeError(f"{tool} failed ({proc.returncode}):\n{stderr[-3000:]}")
        with open(out) as f:
            report = json.load(f)
    report.update(tool=tool, wall=wall, rss_mb=rss_mb)
    if "warm_evaluate" in report:  # the child ran evaluate() twice; the cold row excludes the 2nd
        report["wall"] = wall - report["warm_evaluate"]
    return report


def machine_line() -> str:
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        cpu = platform.processor() or cpu
    ram = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(next(l for l in f if l.startswith("MemTotal")).split()[1])
        ram = f", {kb / 1024 ** 2:.0f} GiB RAM"
    except (OSError, StopIteration):
        pass

    def version(dist: str) -> str:
        try:
            return md.version(dist)
        except md.PackageNotFoundError:
            return "absent"

    pkgs = [("rankwise", "rankwise"), ("numpy", "numpy"), ("pyarrow", "pyarrow"),
            ("pytrec_eval", "pytrec_eval-terrier"), ("ranx", "ranx"), ("numba", "numba")]
    versions = ", ".join(f"{name} {version(dist)}" for name, dist in pkgs)
    return (f"{cpu}, {os.cpu_count()} cores{ram}, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}; {versions}")


# ---------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scales", default="10k,100k", help="comma-separated query counts (1k, 10k, 100k)")
    p.add_argument("--repeat", type=int, default=3, help="repetitions per tool and scale (median)")
    p.add_argument("--skip", default="", help="comma-separated tools to skip (pytrec_eval, ranx)")
    p.add_argument("--quick", action="store_true", help="1k and 10k, one repetition")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds after which one measurement is abandoned (ranx at 100k can be slow)")
    p.add_argument("--no-first-use", action="store_true",
                   help="skip the one-off ranx measurement with an empty numba cache (about a minute)")
    p.add_argument("--output", default=os.path.join(RESULTS, "latest.md"))
    args = p.parse_args(argv)
    if args.quick:
        args.scales, args.repeat = "1k,10k", 1
    scales = [parse_scale(s) for s in args.scales.split(",") if s.strip()]
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    tools = [t for t in TOOLS if t not in skip]
    if "rankwise" not in tools:
        p.error("rankwise cannot be skipped (it is the reference for ratios and means)")
    for tool in tools[1:]:
        dist = {"pytrec_eval": "pytrec_eval-terrier", "ranx": "ranx"}[tool]
        try:
            md.version(dist)
        except md.PackageNotFoundError:
            print(f"{tool} is not installed; skipping it (pip install {dist})")
            tools.remove(tool)

    machine = machine_line()
    print(machine, flush=True)

    if "ranx" in tools:
        # ranx compiles its numba functions on first use and caches them on disk. One untimed
        # run on a tiny input fills that cache, so the timed "cold" runs measure a fresh process
        # with a populated cache (a user's every run after the first). The first-ever compile is
        # measured once, separately, with an empty cache directory.
        q1, r1 = ensure_data(1_000)
        measure("ranx", q1, r1, args.timeout)
    first = None
    if "ranx" in tools and not args.no_first_use:
        q1, r1 = ensure_data(1_000)
        with tempfile.TemporaryDirectory() as cache:
            first = measure("ranx", q1, r1, args.timeout, env={**os.environ, "NUMBA_CACHE_DIR": cache})
        print(f"ranx first use (empty numba cache, 1k queries): {first['wall']:.1f} s", flush=True)

    results: dict[str, dict] = {}
    for n in scales:
        label = scale_label(n)
        qrels, run = ensure_data(n)
        runs: dict[str, list[dict]] = {t: [] for t in tools}
        abandoned: set[str] = set()
        for rep in range(args.repeat):
            order = tools[rep % len(tools):] + tools[:rep % len(tools)]
            for tool in order:
                if tool in abandoned:
                    continue
                r = measure(tool, qrels, run, args.timeout)
                runs[tool].append(r)
                if "timeout" in r:
                    abandoned.add(tool)
                    print(f"[{label}] {tool}: timed out after {args.timeout:.0f} s; not repeated",
                          flush=True)
                else:
                    print(f"[{label}] rep {rep + 1}/{args.repeat} {tool}: {r['wall']:.2f} s, "
                          f"{r['rss_mb']:.0f} MB, stages "
                          + ", ".join(f"{k} {v:.2f}" for k, v in r["stages"].items())
                          + (f", warm evaluate {r['warm_evaluate']:.2f}" if "warm_evaluate" in r else ""),
                          flush=True)
        results[label] = {"queries": n, "runs": runs}

    md_text = render(results, tools, machine, first, args)
    print()
    print(md_text)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        f.write(md_text)
    with open(os.path.splitext(args.output)[0] + ".json", "w") as f:
        args_out = {**vars(args), "output": os.path.relpath(args.output, os.path.dirname(HERE))}
        json.dump({"machine": machine, "args": args_out, "ranx_first_use": first,
                   "results": results}, f, indent=1)
    print(f"written: {os.path.relpath(args.output)}")
    return 0


def _list(values) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def render(results: dict, tools: list[str], machine: str, first: dict | None, args) -> str:
    lines = [
        "# rankwise benchmark",
        "",
        f"{_dt.date.today().isoformat()}; synthetic TREC data, depth {DEPTH}, seed {SEED}; "
        f"median of {args.repeat} fresh-process run(s) per row; peak RSS = max over the runs.",
        "",
        f"Machine: {machine}",
        "",
        "| scale | tool | median wall s | peak RSS MB | ratio vs rankwise | runs (s) | inside the process (median s) |",
        "|---|---|---:|---:|---:|---|---|",
    ]
    sanity = []
    for label, entry in results.items():
        runs = entry["runs"]
        ok = {t: [r for r in rs if "timeout" not in r] for t, rs in runs.items()}
        base = statistics.median(r["wall"] for r in ok["rankwise"])
        for tool in tools:
            rs = ok[tool]
            name = {"ranx": "ranx (cold)"}.get(tool, tool)
            if not rs:
                lines.append(f"| {label} | {name} | > {args.timeout:.0f} (timed out) | | | | |")
                continue
            wall = statistics.median(r["wall"] for r in rs)
            rss = max(r["rss_mb"] for r in rs)
            stages = " / ".join(f"{k} {statistics.median(r['stages'][k] for r in rs):.2f}"
                                for k in rs[0]["stages"])
            lines.append(f"| {label} | {name} | {wall:.2f} | {rss:.0f} | {wall / base:.2f} | "
                         f"{_list(r['wall'] for r in rs)} | {stages} |")
            if tool == "ranx":
                warm = statistics.median(r["warm_evaluate"] for r in rs)
                lines.append(f"| {label} | ranx (warm: 2nd evaluate() in-process) | {warm:.2f} | | "
                             f"{warm / base:.2f} | "
                             f"{_list(r['warm_evaluate'] for r in rs)} | "
                             f"evaluate only, files already parsed |")
        # sanity check of the means against rankwise (first successful run of each tool)
        ref = ok["rankwise"][0]
        for tool in tools[1:]:
            if not ok[tool]:
                continue
            means = dict(ok[tool][0]["means"])
            note = ""
            if tool == "ranx":
                # ranx averages over every judged query (qrels-only queries score 0 after
                # make_comparable); rescale to the queries both files share, as trec_eval does.
                factor = ok[tool][0]["queries_in_mean"] / ref["queries_evaluated"]
                means = {k: v * factor for k, v in means.items()}
                note = (f" (ranx means rescaled x{factor:.4f}: ranx averages over all "
                        f"{ok[tool][0]['queries_in_mean']} judged queries, trec_eval over the "
                        f"{ref['queries_evaluated']} shared ones)")
            diffs = {k: abs(means[k] - ref["means"][k]) for k in ref["means"]}
            worst = max(diffs, key=diffs.get)
            detail = ", ".join(f"{k} {v:.1e}" for k, v in diffs.items())
            sanity.append(f"- {label} {tool}: max |mean - rankwise mean| = {diffs[worst]:.2e} "
                          f"({worst}){note}. Per measure: {detail}")
    if first is not None:
        lines += ["", f"ranx first use ever (empty numba cache, 1k queries, compile included): "
                      f"{first['wall']:.1f} s wall, {first['rss_mb']:.0f} MB peak RSS. The cold rows "
                      f"above run with numba's on-disk cache already filled."]
    lines += ["", "Means agreement (sanity check):", ""] + sanity + [""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
