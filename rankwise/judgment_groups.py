"""Judgment groups (trec_eval ``-R qrels_jg``): several sets of judgments for one query (one
per assessor, or user), each run evaluated against every set, and each query's value the
mean over the sets that judge it:

    m_avgjg(q) = (1 / |G(q)|) * sum over g in G(q) of m_g(q)

where G(q) are the judgment groups holding judgments for q and m_g(q) is the measure under
group g's judgments alone; the aggregate then averages (or sums) over queries as the measure
does. trec_eval computes three measures so (m_map_avgjg.c, m_P_avgjg.c,
m_Rprec_mult_avgjg.c: ``map_avgjg``, ``P_avgjg_K``, ``Rprec_mult_avgjg_x``; ``-m qrels_jg``
is them and ``num_q``); here every measure can be averaged over the groups. A query in the
run that no group judges is a query only in the run, as without groups.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .conventions import Conventions, resolve
from .errors import InputError
from .measures import Measure, parse_measure, parse_measures
from .results import Result, SystemResult, aggregate

#: trec_eval's ``-m qrels_jg`` (measures.c): the number of queries and the three measures
#: averaged over judgment groups, at their default cutoffs
QRELS_JG_MEASURES = ("num_q", "map", "P", "Rprec_mult")
#: what marks a trec_eval name as averaged over judgment groups
AVGJG = "_avgjg"


def evaluate_judgment_groups(qrels: Any, run: Any,
                             measures: str | Measure | Sequence[str | Measure] = "qrels_jg",
                             conventions: Conventions | str | None = None,
                             per_query: bool = False, **convention_overrides: Any) -> Result:
    """Evaluate runs against several groups of judgments, each query's value averaged over
    the groups that judge it (trec_eval ``-R qrels_jg``).

    Parameters
    ----------
    qrels : path or mapping
        A qrels file whose second field names the judgment group (``qid jg docid rel``), or
        ``{group: judgments}`` with judgments in any form :func:`rankwise.evaluate` takes.
    run, conventions, per_query, convention_overrides
        As :func:`rankwise.evaluate`.
    measures : names
        Any measures; ``"qrels_jg"`` (the default) is trec_eval's set (``num_q``,
        ``map_avgjg``, ``P_avgjg_K``, ``Rprec_mult_avgjg_x``), and trec_eval's ``_avgjg``
        names are read as the measures they average.

    Returns
    -------
    Result
        Its trec_eval names are trec_eval's ``_avgjg`` names (``P_avgjg_10``). Its
        diagnostics count the run's own rows, queries, ties and duplicates once, add up
        every other count over the groups (judgments, unjudged documents retrieved, queries
        on one side, each per group), count as ``queries_evaluated`` the queries with a
        value, and as ``judgment_groups`` the groups; each warning and check names its
        group.

    Examples
    --------
    >>> import rankwise
    >>> groups = {"alice": {"q1": {"d1": 1}}, "bob": {"q1": {"d2": 1}}}
    >>> run = {"q1": {"d1": 2.0, "d2": 1.0}}
    >>> result = rankwise.evaluate_judgment_groups(groups, run, ["RR", "P@1"])
    >>> result.mean("RR"), result.mean("P@1")   # (1 + 1/2) / 2 and (1 + 0) / 2
    (0.75, 0.5)
    """
    from .api import _run_sources, evaluate
    from .io.frames import to_qrels, to_run
    from .io.trec import read_judgment_groups

    conv = resolve(conventions, **convention_overrides)
    parsed = parse_measures(group_measure_names(measures), conventions)
    if isinstance(qrels, (str, os.PathLike)):
        groups = read_judgment_groups(qrels)
    elif isinstance(qrels, Mapping) and qrels:
        groups = {str(g): to_qrels(q) for g, q in qrels.items()}
    else:
        raise InputError("expected a qrels_jg file or a mapping {group: judgments}, got "
                         f"{type(qrels).__name__}" + (" (empty)" if isinstance(qrels, Mapping)
                                                       else ""), source="qrels")
    sources = _run_sources(run)
    runs = {name: to_run(source, name) for name, source in sources} \
        if sources[0][0] is not None else [to_run(source) for _, source in sources]  # each run read once for all groups
    results = {g: evaluate(q, runs, parsed, conv, per_query=True) for g, q in groups.items()}
    first = next(iter(results.values()))
    systems = {name: _averaged(name, results, first.measures, first.aggregate_kinds, conv,
                               per_query) for name in first.systems}
    return Result(first.measures, systems, conv, first.aggregate_kinds)


def group_measure_names(measures: str | Measure | Sequence[str | Measure]) -> list:
    """The measures to average: ``qrels_jg`` expanded to trec_eval's set, and trec_eval's
    ``_avgjg`` names read as the measures they average (``P_avgjg.5,10`` as ``P.5,10``)."""
    names = [measures] if isinstance(measures, (str, Measure)) else list(measures)
    out: list = []
    for name in names:
        if name == "qrels_jg":
            out += QRELS_JG_MEASURES
        elif isinstance(name, str) and AVGJG in name:
            out.append(name.replace(AVGJG, "", 1))
        else:
            out.append(name)
    return out


def _averaged(name: str, results: dict[str, Result], measures: list[str],
              kinds: dict[str, str], conv: Conventions, per_query: bool) -> SystemResult:
    """One system's per-query values averaged over the groups judging each query."""
    systems = {g: r.systems[name] for g, r in results.items()}
    queries = np.unique(np.concatenate([np.asarray(s.query_ids, dtype=str)
                                        for s in systems.values()]))
    where = {g: np.searchsorted(queries, np.asarray(s.query_ids, dtype=str))
             for g, s in systems.items()}
    groups_of = np.zeros(len(queries))
    for at in where.values():
        groups_of[at] += 1
    values, aggregates, undefined = {}, {}, {}
    for m in measures:
        total = np.zeros(len(queries))
        for g, s in systems.items():
            total[where[g]] += s.values[m]
        with np.errstate(invalid="ignore", divide="ignore"):
            values[m] = total / groups_of
        aggregates[m] = aggregate(values[m], kinds[m], parse_measure(m).skips_undefined(conv))
        undefined[m] = int(np.isnan(values[m]).sum())
    first = next(iter(systems.values()))
    return SystemResult(
        name=name, aggregates=aggregates, diagnostics=_summed_diagnostics(systems, len(queries)),
        query_ids=queries.astype(object) if per_query else None,
        values=values if per_query else None, undefined=undefined,
        trec_names={m: group_trec_name(m, first.trec_names[m]) for m in measures},
        warnings=[f"judgment group {g}: {w}" for g, s in systems.items() for w in s.warnings],
        checks=[{**c, "message": f"judgment group {g}: {c['message']}"}
                for g, s in systems.items() for c in s.checks])


def group_trec_name(measure: str, trec_name: str) -> str:
    """trec_eval's name of ``measure`` averaged over judgment groups: ``_avgjg`` before the
    cutoff (``P_avgjg_10``, ``Rprec_mult_avgjg_0.20``) or at the end (``map_avgjg``); the
    number of queries keeps its name."""
    spec = parse_measure(measure)
    if spec.family == "NumQ":
        return trec_name
    cut = spec.spec.trec_cutoff_name
    if cut and spec.cutoff is not None and "{" in cut:
        stem = cut[:cut.index("{")]
        if trec_name.startswith(stem) and stem.endswith("_"):
            return stem[:-1] + AVGJG + "_" + trec_name[len(stem):]
    return trec_name + AVGJG


#: counts of the run itself, the same against any judgments: kept once, not added up
RUN_COUNTS = ("run_rows", "run_duplicates_dropped", "run_queries", "tied_rows",
              "queries_rank_contradicts_score", "queries_empty_in_run", "run_files_skipped")


def _summed_diagnostics(systems: dict[str, SystemResult], queries: int) -> dict[str, Any]:
    """The run's own counts once (the largest over the groups), every other count added up
    over the groups, ``queries_evaluated`` the queries with a value, the first five
    examples of each kind, and the number of groups."""
    out: dict[str, Any] = {"judgment_groups": len(systems)}
    examples: dict[str, list] = {}
    for s in systems.values():
        for key, value in s.diagnostics.items():
            if key == "examples":
                for kind, shown in (value or {}).items():
                    kept = examples.setdefault(kind, [])
                    kept += [e for e in shown if e not in kept][:5 - len(kept)]
            elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
                out[key] = max(out.get(key, 0), int(value)) if key in RUN_COUNTS \
                    else out.get(key, 0) + int(value)
    out["queries_evaluated"] = queries
    out["examples"] = examples
    return out
