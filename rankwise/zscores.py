"""Z-scores (trec_eval ``-Z``): each query's value in standard deviations from the mean of a
reference set of runs on that query, then averaged as the measure averages.

    z(q, m) = (v(q, m) - mean(q, m)) / stddev(q, m)

with the reference means and deviations read from a file (:mod:`rankwise.io.zscores`). As
trec_eval's convert_zscores.c: a deviation of 0 gives 0 where the value equals the mean and
no z-score otherwise; a query or measure the reference lacks has no z-score; the number of
queries (``num_q``) is not converted. trec_eval writes -1000000 for a missing z-score and
averages it in (``missing="trec_eval"``, so that its outputs can be diffed);
``missing="undefined"`` leaves such values out of the aggregates instead (counted in
``undefined``). Either way their number is reported (diagnostics ``zscores_missing`` and a
warning). Score standardisation: Webber, Moffat and Zobel, "Score standardization for
inter-collection comparison of retrieval systems", SIGIR 2008.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from .io.zscores import ZScores, read_zscores
from .diagnostics import Check
from .errors import InputError
from .measures import parse_measure
from .results import Result, SystemResult, aggregate

#: trec_eval's value of a z-score it has no reference for (MISSING_ZSCORE_VALUE, trec_eval.h)
TREC_EVAL_MISSING = -1000000.0
MISSING_CHOICES = ("trec_eval", "undefined")
#: measures whose values trec_eval does not convert: the number of queries
NOT_CONVERTED = ("NumQ",)


def standardize(result: Result, zscores: str | os.PathLike[str] | Mapping | ZScores,
                missing: str = "trec_eval") -> Result:
    """``result`` with every per-query value turned into its z-score against ``zscores``
    (a file ``qid measure mean stddev``, or ``{query: {measure: (mean, stddev)}}``), and
    the aggregates recomputed from them, as trec_eval ``-Z`` does.

    A measure is looked up by its trec_eval name (``P_10``, ``map``; what a ``-Z`` file of
    trec_eval holds), else by its canonical name (``P@10``). ``result`` must hold its
    per-query values (``evaluate(..., per_query=True)``).

    Examples
    --------
    >>> import rankwise
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    >>> run = {"q1": {"d1": 2.0, "d3": 1.0}, "q2": {"d3": 2.0, "d2": 1.0}}
    >>> result = rankwise.evaluate(qrels, run, ["RR"], per_query=True)
    >>> z = rankwise.standardize(result, {"q1": {"recip_rank": (0.5, 0.25)},
    ...                                   "q2": {"recip_rank": (0.5, 0.25)}})
    >>> z.per_query()["q1"]["RR"], z.per_query()["q2"]["RR"], z.mean("RR")
    (2.0, 0.0, 1.0)
    """
    if not isinstance(missing, str) or missing not in MISSING_CHOICES:
        raise InputError(f"expected one of {MISSING_CHOICES}", source="missing",
                         value=repr(missing))
    if result.zscores is not None:
        raise ValueError("these values are z-scores already")
    reference = read_zscores(zscores)
    systems = {name: _standardized(s, result, reference, missing)
               for name, s in result.systems.items()}
    return Result(result.measures, systems, result.conventions, result.aggregate_kinds,
                  zscores={"reference": reference.source, "missing": missing})


def _standardized(system: SystemResult, result: Result, reference: ZScores,
                  missing: str) -> SystemResult:
    values = Result._values(system)
    queries = np.asarray(system.query_ids, dtype=str)
    converted, aggregates, undefined = {}, {}, dict(system.undefined)
    unconverted = [m for m in result.measures if parse_measure(m).family in NOT_CONVERTED]
    affected = np.zeros(len(queries), bool)
    lacking_in: list[str] = []
    count = 0
    for m in result.measures:
        if m in unconverted:
            converted[m], aggregates[m] = values[m], system.aggregates[m]
            continue
        z, lacking = _zscores(values[m], queries, reference, system.trec_names.get(m, m), m)
        if lacking.any():
            lacking_in.append(m)
            count += int(lacking.sum())
            affected |= lacking
            z[lacking] = TREC_EVAL_MISSING if missing == "trec_eval" else np.nan
            if missing == "undefined":
                undefined[m] = undefined.get(m, 0) + int(lacking.sum())
        converted[m] = z
        # the values without a reference are left out (missing="undefined") whatever the
        # measure's convention does with its own undefined values
        kept = z if missing == "trec_eval" else z[~lacking]
        aggregates[m] = aggregate(kept, result.aggregate_kinds[m],
                                  parse_measure(m).skips_undefined(result.conventions))
    check = _missing_check(count, len(queries) * (len(result.measures) - len(unconverted)),
                           lacking_in, queries[affected], len(queries), reference.source,
                           missing)
    warnings = [*system.warnings, check.message] if check.severity == "warning" \
        else list(system.warnings)
    return replace(system, aggregates=aggregates, values=converted, undefined=undefined,
                   diagnostics={**system.diagnostics, "zscores_missing": count},
                   warnings=warnings, checks=[*system.checks, check.to_dict()])


def _missing_check(count: int, total: int, measures: list[str], queries: np.ndarray,
                   evaluated: int, source: str, missing: str) -> Check:
    """The ``zscores_missing`` check: which values had no reference, and what became of them."""
    if not count:
        return Check("zscores_missing", "ok", f"every per-query value has a reference mean "
                     f"and deviation in {source}", total=evaluated)
    fate = f"set to {TREC_EVAL_MISSING:.0f} as trec_eval does (missing='undefined' leaves " \
        "them out of the means)" if missing == "trec_eval" else "left out of the means"
    return Check("zscores_missing", "warning",
                 f"z-scores: {count} of {total} per-query values ({', '.join(measures)}) have "
                 f"no reference mean and deviation in {source}, or a deviation of 0 and a "
                 f"value off the mean: {fate}", tuple(measures), len(queries), evaluated,
                 tuple(queries[:5].tolist()))


def _zscores(values: np.ndarray, queries: np.ndarray, reference: ZScores, trec_name: str,
             canonical: str) -> tuple[np.ndarray, np.ndarray]:
    """Each value's z-score (NaN where the value is undefined) and where the reference has
    none (a value without a reference, or a deviation of 0 and a value off the mean)."""
    name = trec_name if trec_name in reference.by_measure else canonical
    found, mean, stddev = reference.lookup(name, queries)
    defined = ~np.isnan(values)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        z = np.where(stddev > 0, (values - mean) / stddev, 0.0)
    off_mean = found & (stddev == 0) & (values != mean)
    lacking = defined & (~found | off_mean)
    z[~defined] = np.nan
    return z, lacking
