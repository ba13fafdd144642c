"""What the report and the figures show, collected in one pass over every run.

:func:`collect` ranks each run once (the engine's :func:`~rankwise.core.ranked.rank`) and
keeps, per system: every measure's per-query values (the :class:`~rankwise.Result`), the
metric@K curves (nDCG, P and R at K = 1 … ``max_k``, each point the mean of that measure's
per-query values, computed by the measure itself so every convention applies), the
interpolated precision-recall curve (trec_eval's ``IPrec`` at recall 0, 0.1, …, 1: its mean
over queries, and the curves of a sample of queries), the top ``depth`` documents of every
query with their grades (the drill-down), the number of relevant documents per query, and
every diagnostic check. Then :func:`rankwise.compare` statistics (means, confidence intervals,
significance markers against the baseline) over the per-query values.

The ranked lists themselves are dropped as soon as a system is summarised, so memory stays at
one run's lists at a time.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..messages import isolated
from ..plain import text_ids

#: Measures of the report when none are given.
DEFAULT_MEASURES = ("nDCG@10", "P@10", "R@100", "AP", "RR")
#: Families drawn as metric@K curves.
CURVE_FAMILIES = ("nDCG", "P", "R")
#: Recall levels of the precision-recall curves (trec_eval's 11 points).
RECALL_LEVELS = tuple(i / 10 for i in range(11))


@dataclass
class SystemData:
    """One system's share of the report (arrays in the order of ``query_ids``, sorted)."""

    name: str
    label: str  # letter used by the significance markers
    query_ids: np.ndarray  # evaluated queries, sorted as in the Result
    curves: dict[str, np.ndarray]  # family -> mean at K = 1 .. max_k
    pr_mean: np.ndarray  # mean interpolated precision at each recall level
    pr_queries: np.ndarray  # the sampled queries (ids)
    pr_sample: np.ndarray  # their curves, (sampled, levels)
    top_grades: np.ndarray  # (queries, depth): grade at each rank, NaN unjudged, -inf no document
    top_docs: Any  # Arrow string array: the doc ids of the top ranks, row-major, where present
    num_relevant: np.ndarray  # relevant documents per query (conventions' threshold)
    checks: list = field(default_factory=list)  # diagnostics.Check
    timings: dict[str, float] = field(default_factory=dict)


@dataclass
class ReportData:
    """Everything the HTML report and :mod:`rankwise.plot` draw."""

    title: str
    qrels_source: str
    measures: list[str]
    systems: dict[str, SystemData]
    result: Any  # rankwise.Result with per-query values
    comparison: Any  # rankwise.compare.Comparison, or None with a single system
    baseline: str | None
    conventions: Any
    max_k: int
    depth: int
    # measure -> system -> mean, interval, markers, quantiles
    summary: dict[str, dict[str, dict[str, Any]]]
    timings: dict[str, float] = field(default_factory=dict)
    confidence: float = 0.95  # level of the summary's intervals

    @property
    def cutoffs(self) -> np.ndarray:
        """K = 1 .. max_k of the metric@K curves."""
        return np.arange(1, self.max_k + 1)

    @property
    def recall_levels(self) -> np.ndarray:
        return np.asarray(RECALL_LEVELS)

    def values(self, measure: str, system: str) -> tuple[np.ndarray, np.ndarray]:
        """(query ids, per-query values) of one measure for one system."""
        s = self.result.systems[system]
        return s.query_ids, s.values[measure]

    def paired(self, measure: str, first: str, second: str) -> tuple[np.ndarray, np.ndarray,
                                                                       np.ndarray]:
        """(queries, values of ``first``, values of ``second``) over the queries both evaluated
        with a defined value."""
        q1, v1 = self.values(measure, first)
        q2, v2 = self.values(measure, second)
        common, i1, i2 = np.intersect1d(text_ids(q1), text_ids(q2), return_indices=True)
        a, b = v1[i1], v2[i2]
        keep = ~(np.isnan(a) | np.isnan(b))
        return common[keep], a[keep], b[keep]


def collect(qrels: Any, runs: Any, measures: str | Sequence[str] | None = None,
            baseline: str | None = None, conventions: Any = None, *, title: str | None = None,
            test: str = "randomization", correction: str = "holm", alpha: float = 0.05,
            seed: int = 0, permutations: int = 10_000, confidence: float = 0.95,
            max_k: int = 100, depth: int = 20, pr_sample: int = 100,
            **convention_overrides: Any) -> ReportData:
    """Evaluate ``runs`` and collect what the report shows.

    Parameters
    ----------
    qrels, runs
        As for :func:`rankwise.evaluate` (one run or several).
    measures : str or sequence of str, optional
        The summary and distribution measures; default :data:`DEFAULT_MEASURES`.
    baseline : str, optional
        The system every other one is tested against; default the first run.
    conventions : Conventions, profile name or None
        As for :func:`rankwise.evaluate`; keyword overrides apply on top.
    title : str, optional
        The report's title.
    test, correction, alpha, seed, permutations, confidence
        As for :func:`rankwise.compare`.
    max_k : int
        Largest K of the metric@K curves.
    depth : int
        Ranks kept per query for the drill-down.
    pr_sample : int
        Queries whose own precision-recall curves are drawn behind the mean.

    Returns
    -------
    ReportData
    """
    from ..api import _kind, _runs, _summarise
    from ..compare import _check_arguments
    from ..conventions import resolve
    from ..core.memory import large_arrays
    from ..core.judgments import index_judgments
    from ..errors import InputError
    from ..io.frames import to_qrels
    from ..measures import parse_measures
    from ..results import Result
    from ..stats.intervals import _check_confidence

    if max_k < 1 or depth < 1 or pr_sample < 0:
        raise InputError("max_k and depth must be positive, pr_sample not negative",
                         source="report", value=f"max_k={max_k}, depth={depth}, "
                         f"pr_sample={pr_sample}")
    # before any evaluation, and with one run too (no test runs then, but a typo is a typo)
    _check_arguments(test, correction, alpha, permutations, seed)
    _check_confidence(confidence)
    conv = resolve(conventions, **convention_overrides)
    names = list(DEFAULT_MEASURES) if measures is None else measures
    parsed = parse_measures(names, conventions)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    judged = to_qrels(qrels)
    named_runs = _runs(runs)
    systems, data = {}, {}
    with large_arrays():
        index = index_judgments(judged)
        for i, (name, run) in enumerate(named_runs):
            data[name], systems[name] = _system(name, _letter(i), index, run, conv, parsed,
                                                max_k, depth, pr_sample, _summarise)
    result = Result([str(m) for m in parsed], systems, conv, {str(m): _kind(m) for m in parsed})
    timings["evaluate"] = time.perf_counter() - start
    if baseline is None:
        baseline = next(iter(systems))
    elif baseline not in systems:
        raise InputError(f"baseline is not one of the systems ({', '.join(systems)})",
                         source="baseline", value=str(baseline))
    start = time.perf_counter()
    comparison = None
    if len(systems) > 1:
        from ..compare import compare_result

        comparison = compare_result(result, baseline, test, correction, alpha, seed,
                                    permutations=permutations, confidence=confidence)
    summary = _summary(result, comparison, confidence)
    timings["compare"] = time.perf_counter() - start
    return ReportData(title or _title(judged.source, list(systems)), judged.source,
                      result.measures, data, result, comparison,
                      baseline if len(systems) > 1 else None, conv, max_k, depth, summary,
                      timings, confidence)


def _system(name: str, label: str, index, run, conv, parsed, max_k: int, depth: int,
            pr_sample: int, summarise) -> tuple[SystemData, Any]:
    """Rank one run, summarise it (the Result's share) and collect the report's share."""
    from ..core.ranked import rank
    from ..diagnostics import run_checks

    t0 = time.perf_counter()
    lists = rank(index, run, conv)
    system = summarise(name, lists, parsed, True)
    t1 = time.perf_counter()
    order = np.argsort(lists.query_ids.astype(str), kind="stable")
    in_list_order = {}
    for m in parsed:
        v = np.empty(lists.num_queries)
        v[order] = system.values[str(m)]
        in_list_order[str(m)] = v
    checks = run_checks(lists, parsed, in_list_order)
    curves = {family: _curve(lists, family, max_k) for family in CURVE_FAMILIES}
    t2 = time.perf_counter()
    pr = _pr_curves(lists)  # (queries, levels), NaN where undefined
    pr_mean = np.array([_mean(pr[:, j], f"IPrec@{level}", conv)
                        for j, level in enumerate(RECALL_LEVELS)])
    relevant = lists.num_relevant(conv.relevance_threshold)
    sample = _sample(lists.query_ids, (relevant > 0) & ~np.isnan(pr).any(axis=1), pr_sample)
    grades, docs = _top(lists, depth)
    t3 = time.perf_counter()
    data = SystemData(name=name, label=label, query_ids=lists.query_ids[order], curves=curves,
                      pr_mean=pr_mean, pr_queries=lists.query_ids[sample],
                      pr_sample=pr[sample], top_grades=grades[order],
                      top_docs=_reorder(docs, grades, order),
                      num_relevant=relevant[order], checks=checks,
                      timings={"rank_and_measures": t1 - t0, "checks_and_curves": t2 - t1,
                               "pr_and_drilldown": t3 - t2})
    return data, system


def _curve(lists, family: str, max_k: int) -> np.ndarray:
    """Mean of ``family@K`` for K = 1 .. max_k, each computed by the measure itself."""
    from ..measures import parse_measure

    out = np.empty(max_k)
    for k in range(1, max_k + 1):
        m = parse_measure(f"{family}@{k}")
        out[k - 1] = _mean(m.compute(lists), m, lists.conventions)
    return out


def _pr_curves(lists) -> np.ndarray:
    """Interpolated precision at each recall level, per query (the IPrec measures)."""
    from ..measures import parse_measure

    return np.column_stack([parse_measure(f"IPrec@{level}").compute(lists)
                            for level in RECALL_LEVELS]) if lists.num_queries else \
        np.zeros((0, len(RECALL_LEVELS)))


def _mean(values: np.ndarray, measure, conv) -> float:
    from ..measures import Measure, parse_measure
    from ..results import aggregate

    m = measure if isinstance(measure, Measure) else parse_measure(measure)
    return aggregate(values, m.spec.aggregate, m.skips_undefined(conv))


def _sample(query_ids: np.ndarray, eligible: np.ndarray, size: int) -> np.ndarray:
    """Up to ``size`` eligible queries, the same ones in every run: those whose id has the
    smallest CRC-32 (a fixed pseudo-random choice), in list order."""
    candidates = np.flatnonzero(eligible)
    if len(candidates) <= size:
        return candidates
    keys = np.array([zlib.crc32(str(q).encode()) for q in query_ids[candidates]], dtype=np.int64)
    return np.sort(candidates[np.argsort(keys, kind="stable")[:size]])


def _top(lists, depth: int) -> tuple[np.ndarray, Any]:
    """The grade at each of the first ``depth`` ranks of every query (NaN unjudged, -inf where
    the list is shorter) and the doc ids there as strings (row-major, present ranks only)."""
    from ..core.arrow import take
    from ..io.tables import string_docs

    q = lists.num_queries
    ranks = np.arange(depth)
    present = ranks[None, :] < np.minimum(lists.num_retrieved, depth)[:, None]
    rows = (lists.offsets[:-1, None] + ranks[None, :])[present]
    grades = np.full((q, depth), -np.inf)
    grades[present] = lists.grade[rows]
    return grades, string_docs(take(lists.docs, lists.run_row[rows]))


def _reorder(docs, grades: np.ndarray, order: np.ndarray):
    """The top doc ids (row-major over present ranks) with the queries in ``order``."""
    from ..core.arrow import take

    present = grades != -np.inf  # NaN (unjudged) is a document
    position = np.full(grades.shape, -1, dtype=np.int64)
    position[present] = np.arange(int(present.sum()))
    reordered = position[order]
    return take(docs, reordered[reordered >= 0])


def _summary(result, comparison, confidence: float) -> dict[str, dict[str, dict[str, Any]]]:
    """Per measure and system: the mean (over the queries compared, with a comparison), its
    confidence interval, the markers, and the per-query distribution (over the system's own
    queries)."""
    from ..measures import parse_measure
    from ..stats.intervals import describe

    out: dict[str, dict[str, dict[str, Any]]] = {}
    for measure in result.measures:
        bounds = parse_measure(measure).spec.bounds
        out[measure] = {}
        for name, s in result.systems.items():
            entry = describe(s.values[measure], bounds[1] if bounds else None)
            entry["aggregate"] = s.aggregates[measure]
            if comparison is not None:
                c = comparison.summary[measure][name]
                entry.update(compared_mean=c["mean"], ci_low=c["ci_low"], ci_high=c["ci_high"],
                             markers=c["markers"], compared_n=c["n"])
            else:
                low, high = _interval(s.values[measure], confidence)
                entry.update(compared_mean=entry["mean"], ci_low=low, ci_high=high, markers="",
                             compared_n=entry["n"])
            out[measure][name] = entry
    return out


def _interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    from ..stats.intervals import t_interval

    return t_interval(values, confidence)


def _letter(i: int) -> str:
    from ..stats.multi import letter

    return letter(i)


def _title(source: str, systems: list[str]) -> str:
    """The default title; each run name isolated (between U+2068 and U+2069), so that a
    right-to-left override in one (U+202E) cannot reorder the rest of the title."""
    shown = ", ".join(isolated(name) for name in systems[:4]) + (
        f" and {len(systems) - 4} more" if len(systems) > 4 else "")
    return f"rankwise report: {shown} on {source}"
