"""Combine the partitions' summaries into one :class:`~rankwise.results.SystemResult` per
system, on the driver.

Everything a partition reports adds up: diagnostics counts are sums over queries and rows
(queries never span partitions), per-query values arrive as exact sums and counts
(:mod:`rankwise.spark.exact`), so a mean is the correctly rounded mean of every query's value,
whatever the number and sizes of the partitions (never a mean of means). Examples carry the
row id where their query first appeared, so the first five overall are those of the in-memory
engine.

Diagnostic checks (and the warnings among them) come from the same checks as in the
in-memory engine, run per chunk and merged by :mod:`rankwise.spark.checks`.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..core.join import no_judgments, nothing_ranked, scores_one_sided_queries
from ..core.lists import skipped_counts
from ..errors import InputError
from ..results import SystemResult
from . import exact
from .checks import merge_checks
from .partition import EXAMPLES, SECONDS, Plan

#: Count fields whose queries are those of one run (the others concern the judgments).
_ROWS = "run_rows"


def parse(summaries: list[str], plan: Plan) -> list[dict[str, Any]]:
    """The partitions' JSON summaries; raises the first error any partition met, the
    judgments' before the runs' (in their order), as the in-memory engine meets them."""
    parsed = [json.loads(s) for s in summaries]
    errors = [p["error"] for p in parsed if p.get("error")]
    if errors:
        sources = [plan.qrels_source, *plan.run_sources]
        first = min(errors, key=lambda e: (
            sources.index(e["source"]) if e.get("source") in sources else len(sources),
            e.get("line") is None, e.get("line") or 0))
        raise InputError(first["message"], source=first.get("source"), line=first.get("line"),
                         value=first.get("value"), unit=first.get("unit") or "row")
    return parsed


def system_results(plan: Plan, parsed: list[dict[str, Any]]) -> dict[str, SystemResult]:
    """One SystemResult per system (per-query values stay in Spark)."""
    out = {}
    for s, name in enumerate(plan.systems):
        parts = [p["systems"][s] for p in parsed if p["systems"][s]["counts"]]
        out[name] = _system(plan, s, name, parts)
    return out


def _system(plan: Plan, s: int, name: str, parts: list[dict[str, Any]]) -> SystemResult:
    diagnostics = _diagnostics(parts)
    run_skipped = plan.run_skipped[s] if plan.run_skipped else ()
    for key, (count, examples) in skipped_counts(run_skipped, plan.qrels_skipped).items():
        diagnostics[key] = count
        diagnostics["examples"][key] = examples
    _check_input(plan, s, diagnostics)
    n = len(plan.measures)
    sums = [exact.ZERO] * n
    defined = [0] * n
    undefined = [0] * n
    for part in parts:
        for i in range(n):
            sums[i] = exact.add(sums[i], exact.from_json(part["sums"][i]))
            defined[i] += part["defined"][i]
            undefined[i] += part["undefined"][i]
    aggregates = {}
    for i, m in enumerate(plan.measures):
        aggregates[str(m)] = _aggregate(m, plan, sums[i], defined[i], undefined[i])
    checks = merge_checks([c for part in parts for c in part["checks"]],
                          int(diagnostics.get("queries_evaluated", 0)))
    return SystemResult(
        name=name, aggregates=aggregates, diagnostics=diagnostics,
        undefined={str(m): undefined[i] for i, m in enumerate(plan.measures) if undefined[i]},
        trec_names={str(m): m.trec_name() for m in plan.measures},
        warnings=[c["message"] for c in checks if c["severity"] == "warning"], checks=checks)


def _aggregate(measure, plan: Plan, total: exact.ExactSum, defined: int,
               undefined: int) -> float:
    """As :func:`rankwise.results.aggregate`, from an exact sum and counts."""
    kind = measure.spec.aggregate
    if undefined and not measure.skips_undefined(plan.conventions):
        return math.nan
    if kind == "sum":
        return exact.to_float(total)
    if kind == "gmean":
        return math.exp(exact.mean(total, defined)) if defined else math.nan
    if kind == "mean":
        return exact.mean(total, defined)
    raise InputError(f"{measure} is averaged as {kind!r}, which the Spark engine cannot combine "
                     "across partitions", source="measures", value=str(measure))


def _diagnostics(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts summed; examples merged by first appearance; a rank column that some chunk had to
    drop (it did not hold integers) is dropped everywhere, as the in-memory reader drops it."""
    counts: dict[str, Any] = {}
    for part in parts:
        for key, value in part["counts"].items():
            counts[key] = counts.get(key, 0) + value
    keys: list[str] = []
    for part in sorted(parts, key=lambda p: -len(p["examples"])):
        keys += [k for k in part["examples"] if k not in keys]
    examples = {}
    for key in keys:
        placed = sorted(tuple(e) for part in parts for e in part["examples"].get(key, []))
        examples[key] = [query for _, query in placed[:EXAMPLES]]
    if any(part["rank_dropped"] for part in parts):
        counts["queries_rank_contradicts_score"] = 0
        examples.pop("queries_rank_contradicts_score", None)
    counts["examples"] = examples
    return counts


def _check_input(plan: Plan, s: int, diagnostics: dict[str, Any]) -> None:
    """What the in-memory readers and engine refuse: an empty run or judgments, and a run with
    no query in common with the judgments (almost always a wrong file), unless the
    conventions score every query on one side only (the spark profile: Spark's RankingMetrics
    scores such users 0)."""
    source = plan.run_sources[s]
    if not diagnostics.get("qrels_rows"):  # the judgments first, as the in-memory engine reads
        raise no_judgments(plan.qrels_source)
    if not diagnostics.get(_ROWS):
        raise nothing_ranked(source)
    if scores_one_sided_queries(plan.conventions):
        return
    shared = diagnostics.get("queries_evaluated", 0) \
        - diagnostics.get("queries_only_in_qrels_scored_zero", 0) \
        - diagnostics.get("queries_only_in_run_scored", 0)
    if shared <= 0:
        examples = diagnostics.get("examples", {})
        raise no_common_query(plan, s, (examples.get("queries_only_in_run") or ["?"])[0],
                              (examples.get("queries_only_in_qrels") or ["?"])[0])


def no_common_query(plan: Plan, s: int, run_query: str, judged_query: str) -> InputError:
    """The error for run ``s`` without a query judged (almost always a wrong file), given
    its first query and the judgments' first, as the in-memory engine words it; in the array
    layout (one DataFrame holds both sides), in its terms."""
    if plan.qrels_source == plan.run_sources[s]:
        return InputError(f"no row with both predictions and labels (rows with predictions "
                          f"only such as {run_query!r}, with labels only such as "
                          f"{judged_query!r}); Spark's RankingMetrics scores such rows 0, as "
                          "conventions='spark' (missing_queries='zero' with "
                          "run_only_queries='zero') does", source=plan.run_sources[s])
    return InputError(f"no query in common with the judgments in {plan.qrels_source} (run "
                      f"queries such as {run_query!r}, judged queries such as "
                      f"{judged_query!r})", source=plan.run_sources[s])


def seconds(parsed: list[dict[str, Any]]) -> dict[str, float]:
    """The Python workers' time, summed over the partitions (``wall``, ``cpu``, ``waiting``
    for Spark's record batches, ``returning`` per-query batches to Spark), and the number of
    ``partitions``."""
    total = dict.fromkeys(SECONDS, 0.0)
    for part in parsed:
        for key, value in (part.get("seconds") or {}).items():
            total[key] = total.get(key, 0.0) + value
    return {**total, "partitions": len(parsed)}
