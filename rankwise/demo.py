"""``rankwise demo``: generate a small example collection deterministically, evaluate three
example systems on it, compare them with significance tests and write a report (Markdown,
JSON and the self-contained HTML report) next to the data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

DEMO_MEASURES = ["nDCG@10", "P@10", "R@100", "AP", "RR", "Bpref", "ERR@20", "Success@1"]
COMPARE_MEASURES = ["nDCG@10", "AP", "RR"]
SYSTEMS = {"strong": 1.0, "medium": 0.6, "random": 0.0}  # how much each score follows the grade


def write_demo_data(folder: str | Path, queries: int = 50, depth: int = 100,
                    seed: int = 20261122) -> tuple[Path, dict[str, Path]]:
    """Write ``qrels.txt`` and one run file per example system; return their paths."""
    rng = np.random.default_rng(seed)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    qrels_lines, run_lines = [], {name: [] for name in SYSTEMS}
    for q in range(1, queries + 1):
        qid = f"q{q:03d}"
        pool = 3 * depth // 2
        grade = rng.choice(4, size=pool, p=[0.75, 0.13, 0.08, 0.04])
        judged = rng.random(pool) < np.where(grade > 0, 0.95, 0.5)  # pooled: most relevant judged
        for d in np.flatnonzero(judged):
            qrels_lines.append(f"{qid} 0 doc{q:03d}-{d:04d} {grade[d]}")
        for name, strength in SYSTEMS.items():
            noise = rng.normal(size=pool)
            score = np.round(strength * grade + noise, 2)  # rounding makes ties, as real runs have
            top = np.argsort(-score, kind="stable")[:depth]
            run_lines[name] += [f"{qid} Q0 doc{q:03d}-{d:04d} {r} {score[d]:.2f} {name}"
                                for r, d in enumerate(top, start=1)]
    qrels_path = folder / "qrels.txt"
    qrels_path.write_text("\n".join(qrels_lines) + "\n")
    runs = {}
    for name, lines in run_lines.items():
        runs[name] = folder / f"run.{name}.txt"
        runs[name].write_text("\n".join(lines) + "\n")
    return qrels_path, runs


def run_demo(folder: str | Path = "rankwise-demo") -> str:
    """Evaluate and compare the example systems; write ``report.md``, ``result.json``,
    ``comparison.json`` and the HTML report ``report.html``; return the tables and where the
    files are."""
    from .api import evaluate
    from .compare import compare_result
    from .core.lists import Diagnostics

    folder = Path(folder)
    qrels, runs = write_demo_data(folder)
    result = evaluate(str(qrels), {name: str(p) for name, p in runs.items()}, DEMO_MEASURES,
                      per_query=True)
    report = ["# rankwise demo", "",
              f"Judgments: `{qrels.name}`; runs: {', '.join(f'`{p.name}`' for p in runs.values())}.",
              "", "## Mean over queries", "", result.to_markdown(), "",
              "## Per-query spread of nDCG@10", "",
              "| system | min | 25% | median | 75% | max | queries at 0 |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name, s in result.systems.items():
        v = s.values["nDCG@10"]
        q = np.quantile(v, [0, .25, .5, .75, 1])
        report.append(f"| {name} | " + " | ".join(f"{x:.3f}" for x in q) + f" | {int((v == 0).sum())} |")
    comparison = compare_result(result, test="randomization", correction="holm",
                                measures=COMPARE_MEASURES)
    report += ["", "## Significance: every pair, randomization test, Holm correction", "",
               comparison.to_markdown()]
    report += ["", "## What was counted", ""]
    report += [f"- **{name}**: {Diagnostics(**s.diagnostics).summary()}"
               for name, s in result.systems.items()]
    (folder / "report.md").write_text("\n".join(report) + "\n")
    (folder / "result.json").write_text(result.to_json(indent=2))
    (folder / "comparison.json").write_text(comparison.to_json(indent=2))
    html = write_demo_report(qrels, runs, folder / "report.html")
    from .recsys import demo_section

    return (result.to_table() + f"\nconventions: {result.conventions.describe()}\n\n"
            + comparison.to_table() + f"\nreport written to {folder / 'report.md'}, "
            f"{folder / 'result.json'} and {folder / 'comparison.json'}"
            f"\nHTML report (open it in a browser; it works offline): {html}\n\n"
            "== Recommender systems: the same engine on a simulated interaction log\n\n"
            + demo_section(str(folder)))


def write_demo_report(qrels: Path, runs: dict[str, Path], output: Path) -> Path:
    """The HTML report of the example systems (baseline: the first, ``strong``)."""
    from .report.data import collect
    from .report.html import write_html

    data = collect(str(qrels), {name: str(p) for name, p in runs.items()}, DEMO_MEASURES,
                   title="rankwise demo: three example systems")
    return write_html(data, output)
