"""``explain``: the step-by-step table of one measure on one query, as the founding articles
draw it: rank, document, grade, gain, discount, contribution and running sum, the ideal list,
and the final value.

The ranked list comes from the engine (:func:`rankwise.core.ranked.rank`: tie order, depth,
unjudged documents and duplicates as the conventions say); every number after that is
computed here, one rank at a time, from the formulas in the docstrings below, so that the
table *is* the computation. The tests check the final value against
:func:`rankwise.evaluate` for every family under varied conventions, and the founding
articles' worked tables.

Every measure family rankwise computes is explained, one module per kind: ``binary`` (P, Hits,
R, F1, Success, RelP, Rprec, RprecMult, RR, ARHR, AP, Bpref, infAP, binG), ``graded`` (nDCG, DCG,
IDCG, CG, ERR, RWRR), ``trec_graded`` (ndcg_rel, Rndcg, G), ``rbp`` (RBP, RBPResid),
``judged`` (Judged, Unjudged), ``sets`` (the set measures, Utility and the counts), ``curves``
(IPrec, 11pt_avg) and ``rating`` (MAE, RMSE).

Examples
--------
>>> from rankwise.explain import explain
>>> qrels = {"q": {"a": 1, "c": 1, "e": 1}}
>>> run = {"q": {"a": 5, "b": 4, "c": 3, "d": 2, "e": 1}}
>>> e = explain(qrels, run, "q", "AP")
>>> [round(r["precision"], 3) for r in e.rows if r["relevant"]]
[1.0, 0.667, 0.6]
>>> round(e.value, 3)
0.756
"""

from __future__ import annotations

import sys
import types
from typing import Any

from ..errors import InputError
from .listing import query_lists
from .measure import FAMILIES, explain_measure
from .table import HEADERS, Explanation

__all__ = ["Explanation", "FAMILIES", "HEADERS", "explain", "explain_many"]


def explain(qrels: Any, run: Any, query: str, measure: Any, conventions: Any = None,
            **convention_overrides: Any) -> Explanation:
    """Explain one measure on one query of one run, step by step.

    Parameters
    ----------
    qrels, run
        As for :func:`rankwise.evaluate` (``run``: one run).
    query : str
        The query id.
    measure : str or Measure
        One measure of a family explain knows (``nDCG@5``, ``AP``, ``P(rel=2)@10``, ``ERR@20``...).
    conventions : Conventions, profile name or None
        As for :func:`rankwise.evaluate`; keyword overrides apply on top.

    Returns
    -------
    Explanation

    Examples
    --------
    >>> from rankwise.explain import explain
    >>> e = explain({"q": {"a": 3, "b": 2, "c": 1}}, {"q": {"b": 3, "a": 2, "c": 1}}, "q",
    ...             "nDCG(gain=exp)@3")
    >>> [(r["doc"], r["gain"], round(r["discount"], 2)) for r in e.rows]
    [('b', 3.0, 1.0), ('a', 7.0, 1.58), ('c', 1.0, 2.0)]
    >>> round(e.value, 4)
    0.8428
    """
    explained = explain_many(qrels, run, query, [measure], conventions, **convention_overrides)
    if len(explained) != 1:
        from ..errors import MeasureError

        raise MeasureError("names several measures, expected one (explain_many takes several)",
                           source="measure", value=str(measure))
    return explained[0]


def explain_many(qrels: Any, run: Any, query: str, measures: Any, conventions: Any = None,
                 **convention_overrides: Any) -> list[Explanation]:
    """:func:`explain` for several measures of one query (the list is ranked once).

    >>> es = explain_many({"q": {"a": 1}}, {"q": {"b": 2.0, "a": 1.0}}, "q", ["RR", "P@2"])
    >>> [(e.measure, e.value) for e in es]
    [('RR', 0.5), ('P@2', 0.5)]
    """
    from ..api import _runs
    from ..conventions import resolve
    from ..io.frames import to_qrels
    from ..measures import Measure, parse_measures

    conv = resolve(conventions, **convention_overrides)
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    parsed = parse_measures(measures, conventions)
    runs = _runs(run)
    if len(runs) != 1:
        raise InputError("explain takes one run", source="run",
                         value=", ".join(name for name, _ in runs))
    name, one_run = runs[0]
    listed = query_lists(to_qrels(qrels), one_run, str(query), conv)
    return [explain_measure(m, listed, str(query), name, conv) for m in parsed]


class _CallableModule(types.ModuleType):
    """``rankwise.explain`` is this module, and calling it explains: the package attribute
    stays callable once the module has been imported."""

    def __call__(self, *args: Any, **kwargs: Any) -> Explanation:
        return explain(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
