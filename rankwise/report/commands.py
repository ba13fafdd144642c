"""The ``report``, ``plot`` and ``explain`` commands.

``rankwise report QRELS RUN [RUN ...] -o report.html`` writes the self-contained HTML report;
``rankwise plot QRELS RUN [RUN ...] -o figures/ --format png svg pdf`` writes the same figures
with matplotlib; ``rankwise explain QRELS RUN --query Q -m nDCG@5`` prints the step-by-step
table of one measure on one query. Every command takes the convention flags of ``evaluate``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..errors import InputError


def register(commands) -> None:
    """Add the three commands to the CLI's sub-parsers."""
    from ..cli import _add_column_options, _add_convention_options

    rep = commands.add_parser(
        "report", help="write a self-contained HTML report (charts, tables, drill-down)",
        description="Evaluate runs and write one self-contained HTML file that works offline: "
        "summary table with confidence intervals and significance markers against a baseline, "
        "metric@K and precision-recall curves, per-query distributions, a scatter and the "
        "largest wins and losses of two systems, a drill-down into any query's ranked lists, "
        "and the diagnostics.")
    _inputs(rep)
    rep.add_argument("-o", "--output", default="report.html", help="the HTML file to write "
                     "(default report.html)")
    rep.add_argument("--title", help="title of the page")
    rep.add_argument("--max-k", type=_positive_at_most(MAX_K), default=100, metavar="K",
                     help="largest K of the metric@K curves (default 100)")
    rep.add_argument("--drill-depth", type=_positive_at_most(MAX_DEPTH), default=20, metavar="N",
                     help="ranks per query kept for the drill-down (default 20)")
    rep.add_argument("--pr-sample", type=_positive, default=100, metavar="N",
                     help="queries whose own precision-recall curves are drawn (default 100)")
    rep.add_argument("--doc-budget", type=_positive, default=200_000, metavar="N",
                     help="most document ids kept for the drill-down (default 200000)")
    _statistics(rep)
    _add_column_options(rep)
    _add_convention_options(rep)
    rep.set_defaults(handler=_report)

    plo = commands.add_parser(
        "plot", help="write the report's figures as PNG, SVG or PDF (matplotlib)",
        description="Evaluate runs and write every figure of the report with matplotlib: "
        "means with intervals, metric@K curves, precision-recall curves, per-query "
        "distributions and scatters.")
    _inputs(plo)
    plo.add_argument("-o", "--output", default="figures", help="folder for the figures "
                     "(default figures)")
    plo.add_argument("--format", dest="formats", nargs="+", choices=("png", "svg", "pdf"),
                     default=["png", "svg", "pdf"], help="file formats (default: all three)")
    plo.add_argument("--dpi", type=_positive_at_most(MAX_DPI), default=200,
                     help="PNG resolution (default 200)")
    plo.add_argument("--figures", dest="kinds", nargs="+", metavar="KIND",
                     choices=("summary", "at-k", "pr", "distribution", "histogram", "scatter"),
                     default=["summary", "at-k", "pr", "distribution", "histogram", "scatter"],
                     help="which figures: summary, at-k, pr, distribution, histogram, scatter "
                     "(default all)")
    plo.add_argument("--max-k", type=_positive_at_most(MAX_K), default=100, metavar="K",
                     help="largest K of the metric@K curves (default 100)")
    _statistics(plo)
    _add_column_options(plo)
    _add_convention_options(plo)
    plo.set_defaults(handler=_plot)

    exp = commands.add_parser(
        "explain", help="the step-by-step table of one measure on one query",
        description="Print, for one query and one measure, the table the textbooks draw: "
        "rank, document, grade, gain, discount, contribution and running sum, the ideal "
        "ranking, and the final value, for every measure rankwise computes.")
    exp.add_argument("qrels", help="judgments file (qid iter docid rel), plain or .gz")
    exp.add_argument("run", help="run file (qid Q0 docid rank score tag)")
    exp.add_argument("--query", "-Q", required=True, help="the query id")
    exp.add_argument("-m", "--measure", dest="measures", nargs="+", action="extend",
                     required=True, metavar="MEASURE", help="measures, e.g. nDCG@5, AP, "
                     "ndcg_cut_5, P(rel=2)@10 (one table each)")
    exp.add_argument("-f", "--format", choices=("text", "markdown", "json"), default="text",
                     help="output format (default text)")
    exp.add_argument("--digits", type=_digits, default=4, help="decimals shown (default 4)")
    exp.add_argument("--all-rows", action="store_true", help="show every rank, also those "
                     "that contribute nothing")
    _add_column_options(exp)
    _add_convention_options(exp)
    exp.set_defaults(handler=_explain)


def _inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("qrels", help="judgments file (qid iter docid rel), plain or .gz")
    parser.add_argument("runs", nargs="+", metavar="RUN", help="run file(s)")
    parser.add_argument("-m", "--measure", dest="measures", nargs="+", action="extend",
                        metavar="MEASURE", help="measures of the summary and distributions; "
                        "default nDCG@10 P@10 R@100 AP RR")
    parser.add_argument("--baseline", metavar="NAME", help="the run the others are tested "
                        "against (file name or path; default the first)")


def _statistics(parser: argparse.ArgumentParser) -> None:
    from ..cli import seed_argument

    parser.add_argument("--test", default="randomization", metavar="TEST",
                        help="significance test as for compare (default randomization)")
    parser.add_argument("--correction", default="holm", metavar="METHOD",
                        help="holm (default), bonferroni, bh or none")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level")
    parser.add_argument("--seed", type=seed_argument, default=0, help="random seed (default 0)")
    parser.add_argument("--permutations", type=_positive, default=10_000, metavar="N",
                        help="permutations or resamples per test (default 10000)")
    parser.add_argument("--confidence", type=float, default=0.95,
                        help="level of the confidence intervals (default 0.95)")


def check_output(path: str, folder: bool, inputs: Sequence[str] = ()) -> None:
    """Refuse, before any evaluation, an output path of the wrong kind: an empty one, one
    below an existing file, one this process may not write, an existing file where a folder
    is written (``folder``), an existing folder where a file is, or one of the ``inputs``
    (writing it would destroy it)."""
    if not path:
        raise InputError(f"no {'folder' if folder else 'file'} name given; expected e.g. "
                         f"{'figures' if folder else 'report.html'}", source="--output")
    where = Path(path)
    if any(_same_file(where, Path(given)) for given in inputs):
        raise InputError("is one of the inputs; writing the output there would overwrite it "
                         "(choose another file with -o)", source=path)
    above = next((p for p in where.parents if p.exists() and not p.is_dir()), None)
    if above is not None:
        raise InputError(f"is a file; expected a folder to hold {where.name}", source=str(above))
    denied = _not_writable(where)
    if denied is not None:
        raise InputError("cannot write (Permission denied)", source=str(denied))
    if folder and where.exists() and not where.is_dir():
        raise InputError("is a file; expected a folder to write the output in", source=path)
    if not folder and where.is_dir():
        raise InputError("is a directory; expected the file to write, e.g. report.html",
                         source=path)


def _not_writable(where: Path) -> Path | None:
    """``where``, or the nearest folder above it that exists, where this process may not
    write (so that it is said before an evaluation, not after); None where it may."""
    existing = next((p for p in (where, *where.parents) if p.exists()), None)
    return None if existing is None or os.access(existing, os.W_OK) else existing


def _same_file(one: Path, other: Path) -> bool:
    try:
        return one.samefile(other)
    except OSError:  # either is missing (or unreadable): the readers say so
        return False


@contextmanager
def output_errors(path: str) -> Iterator[None]:
    """Writing ``path``: an OSError (no permission, no space) becomes an InputError naming it."""
    try:
        yield
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror or exc})", source=exc.filename or path
                         ) from None


def _digits(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 17:
        raise argparse.ArgumentTypeError(f"expected a number of decimals from 0 to 17, got "
                                         f"{text!r}")
    return value


#: The largest --max-k (a measure computed per K), --drill-depth (an array of queries x depth)
#: and --dpi (a bitmap of 6.4 x 4.8 inches at that resolution) the commands take: beyond them
#: memory runs out (--max-k 10^11 asked for 745 GiB).
MAX_K, MAX_DEPTH, MAX_DPI = 10_000, 100_000, 2_400


def _positive_at_most(most: int):
    """An argparse type: a positive integer of at most ``most``."""
    def parse(text: str) -> int:
        value = _positive(text)
        if value > most:
            raise argparse.ArgumentTypeError(f"expected at most {most}, got {text!r}")
        return value
    return parse


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _collect(args: argparse.Namespace, **options):
    from ..cli import _conventions, _labelled_runs, _measure_names, _named_inputs
    from .data import DEFAULT_MEASURES, collect

    labels, baseline = _labelled_runs(args, "report")
    qrels, runs = _named_inputs(args, labels)
    return collect(qrels, runs, _measure_names(args, list(DEFAULT_MEASURES)), baseline,
                   _conventions(args), test=args.test, correction=args.correction,
                   alpha=args.alpha, seed=args.seed, permutations=args.permutations,
                   confidence=args.confidence, max_k=args.max_k, **options)


def _print_diagnostics(data) -> None:
    from ..diagnostics import summary_line
    from .html import _WithChecks

    for name, s in data.systems.items():
        line = summary_line(_WithChecks(data.result.systems[name], s.checks), hint=False)
        print(f"rankwise: {name}: {line}", file=sys.stderr)
        for check in s.checks:
            if check.severity == "warning":
                print(f"rankwise: warning: {name}: {check.message}", file=sys.stderr)


def _report(args: argparse.Namespace) -> int:
    from .html import write_html

    check_output(args.output, folder=False, inputs=[args.qrels, *args.runs])
    data = _collect(args, title=args.title, depth=args.drill_depth, pr_sample=args.pr_sample)
    with output_errors(args.output):
        path = write_html(data, args.output, doc_budget=args.doc_budget)
    _print_diagnostics(data)
    seconds = sum(data.timings.values())
    print(f"report written to {path} ({path.stat().st_size / 1e6:.2f} MB, {seconds:.1f} s)")
    return 0


def _plot(args: argparse.Namespace) -> int:
    from ..plot import save_figures

    check_output(args.output, folder=True)
    data = _collect(args)
    with output_errors(args.output):
        paths = save_figures(data, args.output, args.formats, args.dpi, args.kinds)
    _print_diagnostics(data)
    for path in paths:
        print(path)
    return 0


def _explain(args: argparse.Namespace) -> int:
    from ..cli import _conventions, _measure_names, _named_inputs
    from ..explain import explain_many

    qrels, (run,) = _named_inputs(args, [args.run])
    explained = explain_many(qrels, run, args.query, _measure_names(args, []),
                             _conventions(args))
    if args.format == "json":
        data = [e.to_dict() for e in explained]
        sys.stdout.write(json.dumps(data[0] if len(data) == 1 else data, indent=2,
                                    allow_nan=False) + "\n")
        return 0
    for i, e in enumerate(explained):
        if i:
            sys.stdout.write("\n")
        sys.stdout.write(e.to_markdown(args.digits, args.all_rows) if args.format == "markdown"
                         else e.to_text(args.digits, args.all_rows))
    return 0
