"""The HTML report: one self-contained file (no network request of any kind: every script,
style and number inline) with the summary table and its significance markers, metric@K and
precision-recall curves, per-query distributions, a scatter and a sortable wins/losses table
of two systems, a drill-down into any query's ranked list, and the diagnostics.

``data`` collects what is shown, ``html`` writes the file, ``commands`` adds the ``report``,
``plot`` and ``explain`` commands. Nothing heavy is imported until a function runs.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path
from typing import Any, Sequence


def report(qrels: Any, runs: Any, output: str | Path = "report.html",
           measures: str | Sequence[str] | None = None, baseline: str | None = None,
           conventions: Any = None, *, title: str | None = None, test: str = "randomization",
           correction: str = "holm", alpha: float = 0.05, seed: int = 0,
           permutations: int = 10_000, confidence: float = 0.95, max_k: int = 100,
           depth: int = 20, pr_sample: int = 100, doc_budget: int = 200_000,
           **convention_overrides: Any) -> Path:
    """Evaluate runs and write the HTML report; returns its path.

    Parameters
    ----------
    qrels, runs
        As for :func:`rankwise.evaluate`: judgments, and one run or several (``{name: run}``,
        a list, or paths).
    output : str or Path
        The HTML file to write.
    measures : str or sequence of str, optional
        Summary and distribution measures; default nDCG@10, P@10, R@100, AP, RR.
    baseline : str, optional
        The system the others are tested against (default: the first).
    conventions : Conventions, profile name or None
        As for :func:`rankwise.evaluate`; keyword overrides apply on top.
    title : str, optional
        Title of the page.
    test, correction, alpha, seed, permutations, confidence
        As for :func:`rankwise.compare`.
    max_k : int
        Largest K of the metric@K curves (default 100).
    depth : int
        Ranks of each query kept for the drill-down (default 20).
    pr_sample : int
        Queries whose own precision-recall curves are drawn faintly behind the mean.
    doc_budget : int
        Most document ids kept for the drill-down (queries × systems × depth); above it, the
        queries with the largest differences to the baseline keep theirs and the others show
        grades only (the page says so).

    Returns
    -------
    Path

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from rankwise.report import report
    >>> qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}}
    >>> runs = {"x": {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}},
    ...         "y": {"q1": {"b": 2.0, "a": 1.0}, "q2": {"d": 1.0, "c": 0.5}}}
    >>> folder = tempfile.mkdtemp()
    >>> path = report(qrels, runs, pathlib.Path(folder) / "r.html", ["AP"], test="t")
    >>> path.read_text().startswith("<!DOCTYPE html>")
    True
    """
    from .commands import check_output
    from .data import collect
    from .html import write_html

    check_output(str(output), folder=False, inputs=_paths(qrels, runs))
    data = collect(qrels, runs, measures, baseline, conventions, title=title, test=test,
                   correction=correction, alpha=alpha, seed=seed, permutations=permutations,
                   confidence=confidence, max_k=max_k, depth=depth, pr_sample=pr_sample,
                   **convention_overrides)
    return write_html(data, output, doc_budget=doc_budget)


def _paths(qrels: Any, runs: Any) -> list[str]:
    """The inputs given as paths (the runs as one, a list or a dict of them)."""
    many = runs.values() if isinstance(runs, dict) else runs if isinstance(runs, (list, tuple)) \
        else [runs]
    return [str(x) for x in [qrels, *many] if isinstance(x, (str, os.PathLike))]


__all__ = ["report"]


class _CallableModule(types.ModuleType):
    """``rankwise.report`` is this package, and calling it writes a report: the package
    attribute stays callable whichever of its submodules was imported first."""

    def __call__(self, *args: Any, **kwargs: Any) -> Path:
        return report(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
