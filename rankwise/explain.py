"""``explain``: the step-by-step table of one measure on one query, as the founding articles
draw it: rank, document, grade, gain, discount, contribution and running sum, the ideal list,
and the final value.

The ranked list comes from the engine (:func:`rankwise.core.ranked.rank`: tie order, depth,
unjudged documents and duplicates as the conventions say); every number after that is
computed here, one rank at a time, from the formulas in the docstrings below, so that the
table *is* the computation. The tests check the final value against
:func:`rankwise.evaluate` for every family under varied conventions, and the founding
articles' worked tables.

Families: P, R, F1, Success, RelP, Rprec, RR, AP (gm_map), Bpref (gm_bpref), nDCG, DCG,
IDCG, CG, ERR, RBP, Judged, Unjudged, infAP, binG and RprecMult.

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

import difflib
import json
import math
import sys
import types
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .errors import InputError
from .plain import plain

#: Families explain knows, and the one whose steps they share.
FAMILIES = {"P": "P", "R": "R", "F1": "F1", "Success": "Success", "RelP": "RelP",
            "Rprec": "Rprec", "RR": "RR", "AP": "AP", "gm_map": "AP", "Bpref": "Bpref",
            "gm_bpref": "Bpref", "nDCG": "nDCG", "DCG": "DCG", "IDCG": "IDCG", "CG": "CG",
            "ERR": "ERR", "RBP": "RBP", "Judged": "Judged", "Unjudged": "Judged",
            "infAP": "infAP", "binG": "binG", "RprecMult": "RprecMult"}
#: Column key -> header, in display order.
HEADERS = {"rank": "rank", "doc": "doc", "grade": "grade", "relevant": "relevant",
           "hits": "hits", "precision": "P@rank", "gain": "gain", "discount": "discount",
           "stop": "R_i", "reach": "reach", "nonrel_above": "nonrel above",
           "weight": "(1-p)p^(r-1)", "judged": "judged", "judged_so_far": "judged so far",
           "pooled_above": "pooled above", "not_relevant_above": "not relevant above",
           "contribution": "contribution", "running": "running sum"}


@dataclass
class Explanation:
    """The worked computation of one measure on one query.

    Attributes
    ----------
    measure, query, system : str
        What was explained.
    columns : list of str
        Keys of each step, in display order (see :data:`HEADERS`).
    rows : list of dict
        One step per rank considered (the whole list, or its top K).
    ideal_rows : list of dict
        The same steps on the ideal ranking (judged documents, best first).
    value : float
        The final value, computed from ``rows`` (NaN where the conventions leave it undefined).
    ideal_value : float
        The value of the ideal ranking (what a perfect system would score).
    formula : list of str
        The last lines of the computation, e.g. ``nDCG@5 = DCG@5 / IDCG@5 = 0.8428``.
    notes : list of str
        What the reader should know: relevant documents never retrieved, unjudged documents,
        ties, short lists, and the conventions that decided a number.
    shown : int
        How many rows the text table shows (the rest contribute nothing).
    """

    measure: str
    query: str
    system: str
    columns: list[str]
    rows: list[dict[str, Any]]
    ideal_rows: list[dict[str, Any]]
    value: float
    ideal_value: float
    formula: list[str]
    notes: list[str] = field(default_factory=list)
    shown: int = 0
    ideal_shown: int = 0
    conventions: Any = None

    # ------------------------------------------------------------------ writers

    def to_text(self, digits: int = 4, all_rows: bool = False) -> str:
        """Aligned plain text: the steps, the ideal list, the final value, the notes."""
        lines = [f"{self.measure} of query {self.query!r} in run {self.system!r}", ""]
        lines += _aligned(self._table(self.rows, self.shown, digits, all_rows))
        lines += self._elided(self.rows, self.shown, all_rows)
        if self.ideal_rows:
            lines += ["", "ideal ranking (the judged documents, best first):"]
            lines += _aligned(self._table(self.ideal_rows, self.ideal_shown, digits, all_rows))
            lines += self._elided(self.ideal_rows, self.ideal_shown, all_rows)
        lines += ["", *self.formula]
        lines += [f"note: {n}" for n in self.notes]
        if self.conventions is not None:
            lines.append(_conventions_line(self.conventions))
        return "\n".join(lines) + "\n"

    def to_markdown(self, digits: int = 4, all_rows: bool = False) -> str:
        """The same as Markdown tables (ids escaped: they show as text, never as markup)."""
        from .results import _md

        def table(rows: list[dict[str, Any]], shown: int) -> list[str]:
            cells = self._table(rows, shown, digits, all_rows)
            out = ["| " + " | ".join(_md(c) for c in cells[0]) + " |",
                   "|" + "|".join("---" if k == "doc" else "---:" for k in self.columns) + "|"]
            return out + ["| " + " | ".join(_md(c) for c in r) + " |" for r in cells[1:]]

        lines = [f"**{_md(self.measure)}** of query `{_md(self.query)}` in run "
                 f"`{_md(self.system)}`", "", *table(self.rows, self.shown)]
        lines += [_md(x) for x in self._elided(self.rows, self.shown, all_rows)]
        if self.ideal_rows:
            lines += ["", "Ideal ranking (the judged documents, best first):", "",
                      *table(self.ideal_rows, self.ideal_shown)]
            lines += [_md(x) for x in self._elided(self.ideal_rows, self.ideal_shown, all_rows)]
        lines += [""] + [f"- {_md(f)}" for f in self.formula]
        lines += [f"- Note: {_md(n)}" for n in self.notes]
        if self.conventions is not None:
            line = _md(_conventions_line(self.conventions))
            lines += ["", line[0].upper() + line[1:]]
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """Plain values (NaN as None)."""
        return plain({"measure": self.measure, "query": self.query, "system": self.system,
                       "columns": self.columns, "rows": self.rows, "ideal_rows": self.ideal_rows,
                       "value": self.value, "ideal_value": self.ideal_value,
                       "formula": self.formula, "notes": self.notes,
                       "conventions": None if self.conventions is None
                       else self.conventions.to_dict()})

    def to_json(self, indent: int | None = None) -> str:
        """:meth:`to_dict` as JSON."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def _table(self, rows, shown: int, digits: int, all_rows: bool) -> list[list[str]]:
        head = [HEADERS[k] for k in self.columns]
        if self.columns and "discount" in self.columns and rows:
            head[self.columns.index("discount")] = rows[0].get("discount_label", "discount")
        body = rows if all_rows else rows[:shown]
        return [head, *([_cell(k, r.get(k), digits) for k in self.columns] for r in body)]

    @staticmethod
    def _elided(rows, shown: int, all_rows: bool) -> list[str]:
        if all_rows or shown >= len(rows):
            return []
        first, last = rows[shown]["rank"], rows[-1]["rank"]
        span = f"rank {first}" if first == last else f"ranks {first}-{last}"
        return [f"... {span} ({len(rows) - shown} documents): nothing further contributes "
                "(all_rows / --all-rows shows them)"]


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
        from .errors import MeasureError

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
    from .api import _runs
    from .conventions import profile, resolve
    from .io.frames import to_qrels
    from .measures import Measure, parse_measures

    conv = resolve(conventions, **convention_overrides)
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    if isinstance(conventions, str):
        measures = profile(conventions).measure_names(
            [m if isinstance(m, str) else str(m) for m in measures])
    parsed = parse_measures(measures)
    unknown = [str(m) for m in parsed if m.family not in FAMILIES]
    if unknown:
        raise InputError(f"explain covers the families {', '.join(FAMILIES)}", source="measure",
                         value=", ".join(unknown))
    runs = _runs(run)
    if len(runs) != 1:
        raise InputError("explain takes one run", source="run",
                         value=", ".join(name for name, _ in runs))
    name, one_run = runs[0]
    listed = _query_lists(to_qrels(qrels), one_run, str(query), conv)
    return [_explain(m, listed, str(query), name, conv) for m in parsed]


# ---------------------------------------------------------------------------- the ranked list


@dataclass
class _Listed:
    docs: list[str]
    grades: list[float]  # NaN: unjudged
    scores: list[float]
    judged: list[tuple[str, float]]  # the query's judgments (doc, grade >= 0)
    max_grade: float  # the largest judged grade in all the judgments
    notes: list[str]


def _query_lists(qrels, run, query: str, conv) -> _Listed:
    """The query's ranked list under the conventions (engine order), and its judgments."""
    from .core.arrow import take
    from .core.ranked import index_judgments, rank
    from .io.tables import doc_strings

    judged_grades = qrels.grade[qrels.grade >= 0]
    max_grade = float(judged_grades.max()) if len(judged_grades) else 0.0
    q_code, r_code = _code(qrels.query_dict, query), _code(run.query_dict, query)
    if q_code < 0 and r_code < 0:
        known = sorted(set(qrels.query_ids()) | set(run.query_ids()))
        close = difflib.get_close_matches(query, known, n=3)
        hint = f"; closest: {', '.join(close)}" if close else ""
        raise InputError(f"query not found in the judgments or the run{hint}", source="query",
                         value=query)
    if q_code < 0:
        raise InputError("query has no judgments: it is not evaluated (as in trec_eval, only "
                         "judged queries are)", source="query", value=query)
    q_rows = np.flatnonzero(qrels.query_code == q_code)
    sub_qrels = replace(qrels, query_code=qrels.query_code[q_rows],
                        docs=take(qrels.docs, q_rows), grade=qrels.grade[q_rows],
                        row_lines=None if qrels.row_lines is None else qrels.row_lines[q_rows])
    judged = {}
    for doc, grade in zip(doc_strings(sub_qrels.docs), sub_qrels.grade.tolist()):
        if grade >= 0:
            judged[doc] = grade
    judgments = sorted(judged.items(), key=lambda item: (-item[1], item[0]))
    if r_code < 0:
        if conv.missing_queries != "zero":
            raise InputError("query is judged but not in the run: it is ignored (trec_eval's "
                             "default); missing_queries='zero' (trec_eval -c) scores it 0",
                             source="query", value=query)
        return _Listed([], [], [], judgments, max_grade,
                       ["the query is not in the run: an empty ranking (missing_queries='zero')"])
    sub_run = run.subset(np.flatnonzero(run.query_code == r_code))
    lists = rank(index_judgments(sub_qrels), sub_run, conv)
    docs = doc_strings(take(sub_run.docs, lists.run_row))
    d = lists.diagnostics
    notes = []
    if d.rows_beyond_depth:
        notes.append(f"{d.rows_beyond_depth} documents below rank {conv.max_depth} are cut "
                     "(max_depth)")
    if d.rows_unjudged_removed:
        notes.append(f"{d.rows_unjudged_removed} unjudged documents were removed and the list "
                     "closed up (unjudged='remove')")
    if d.run_duplicates_dropped:
        notes.append(f"{d.run_duplicates_dropped} duplicate documents were dropped "
                     f"(duplicates={conv.duplicates})")
    return _Listed(docs, lists.grade.tolist(), lists.score.tolist(), judgments, max_grade, notes)


def _code(dictionary, value: str) -> int:
    import pyarrow.compute as pc

    return int(pc.index(dictionary, value).as_py())


# ---------------------------------------------------------------------------- the steps


def _explain(m, listed: _Listed, query: str, system: str, conv) -> Explanation:
    fconv = conv.for_family(m.family)
    params = dict(m.spec.params)
    params.update(dict(m.params))
    rel = params.get("rel")  # RBP's "graded" reads the grades: no threshold
    rel = fconv.relevance_threshold if rel is None or isinstance(rel, str) else float(rel)
    gain = params.get("gain")
    gain = fconv.gain_name if gain is None else gain
    base = params.get("base")
    base = fconv.discount_base if base is None else float(base)
    docs, grades, scores = listed.docs, listed.grades, listed.scores
    notes = list(listed.notes)
    if fconv.ties == "expected":
        raise InputError("explain shows one ordering; ties='expected' averages a measure over "
                         "every order of the tied documents: explain with ties='optimistic', "
                         "'pessimistic' or an order (docid_desc, docid_asc, input_order)",
                         source="conventions", value="ties=expected")
    if fconv.ties != conv.ties:  # a family's own optimistic / pessimistic order
        docs, grades, scores = _ties_by_grade(docs, grades, scores, fconv.ties == "optimistic")
    kind = FAMILIES[m.family]
    k = None if kind == "RprecMult" else m.cutoff  # a multiple of R, not a rank
    n = len(docs)
    if fconv.ideal == "retrieved":
        pool = sorted(((d, g) for d, g in zip(docs, grades) if g >= 0),
                      key=lambda item: (-item[1], item[0]))
    else:
        pool = listed.judged
    relevant = [(g >= rel) and (fconv.nonpositive_scores == "ranked" or s > 0)
                for g, s in zip(grades, scores)]
    num_rel = sum(1 for _, g in pool if g >= rel)
    num_nonrel = sum(1 for _, g in pool if g < rel)
    depth = n if k is None else min(k, n)
    context = _Context(m, kind, k, rel, gain, base, num_rel, num_nonrel, fconv, listed.max_grade,
                       params)
    if kind in ("RBP", "Judged"):
        ideal_list = sorted(pool, key=lambda item: (-item[1], item[0]))
        ideal_depth = len(ideal_list) if k is None else min(k, len(ideal_list))
        ideal_docs, ideal_grades = [d for d, _ in ideal_list], [g for _, g in ideal_list]
        if kind == "RBP":
            top = max(1.0, max((g for _, g in pool), default=0.0))
            steps = _rbp_steps(context, docs, grades, depth, top)
            ideal = _rbp_steps(context, ideal_docs, ideal_grades, ideal_depth, top)
        else:
            steps = _judged_steps(docs, grades, depth)
            ideal = _judged_steps(ideal_docs, ideal_grades, ideal_depth)
    elif kind in ("nDCG", "DCG", "IDCG", "CG", "ERR"):
        steps = _graded_steps(context, docs, grades, depth)
        ideal_list = [(d, g) for d, g in pool]
        ideal_list.sort(key=lambda item: -_gain(item[1], gain))
        ideal_list = [(d, g) for d, g in ideal_list if _gain(g, gain) > 0] \
            if kind != "ERR" else [(d, g) for d, g in pool if g > 0]
        ideal_depth = len(ideal_list) if k is None else min(k, len(ideal_list))
        ideal = _graded_steps(context, [d for d, _ in ideal_list], [g for _, g in ideal_list],
                              ideal_depth)
    else:
        steps = _binary_steps(context, docs, grades, relevant, depth)
        ideal_list = sorted(pool, key=lambda item: (not item[1] >= rel, -item[1], item[0]))
        ideal_depth = len(ideal_list) if k is None else min(k, len(ideal_list))
        ideal = _binary_steps(context, [d for d, _ in ideal_list], [g for _, g in ideal_list],
                              [g >= rel for _, g in ideal_list], ideal_depth)
    value, formula = _finish(context, steps, ideal, depth, n, notes)
    ideal_value, _ = _finish(context, ideal, ideal, ideal_depth, len(ideal_list), [])
    notes += _list_notes(context, docs, grades, scores, relevant, depth, n, listed)
    columns = _COLUMNS[kind]
    return Explanation(str(m), query, system, columns, steps, ideal, value, ideal_value, formula,
                       notes, _shown(steps, kind, k), _shown(ideal, kind, k), conv)


@dataclass
class _Context:
    measure: Any
    kind: str
    cutoff: int | None
    rel: float
    gain: Any
    base: float
    num_rel: int
    num_nonrel: int
    conv: Any
    max_grade: float
    params: dict[str, Any]


_BINARY = ["rank", "doc", "grade", "relevant", "hits", "precision", "contribution", "running"]
_COLUMNS = {
    "P": ["rank", "doc", "grade", "relevant", "hits", "precision"],
    "R": ["rank", "doc", "grade", "relevant", "hits"],
    "F1": ["rank", "doc", "grade", "relevant", "hits", "precision"],
    "Success": ["rank", "doc", "grade", "relevant", "hits"],
    "RelP": ["rank", "doc", "grade", "relevant", "hits"],
    "Rprec": ["rank", "doc", "grade", "relevant", "hits", "precision"],
    "RR": ["rank", "doc", "grade", "relevant", "contribution", "running"],
    "AP": _BINARY,
    "Bpref": ["rank", "doc", "grade", "relevant", "nonrel_above", "contribution", "running"],
    "nDCG": ["rank", "doc", "grade", "gain", "discount", "contribution", "running"],
    "DCG": ["rank", "doc", "grade", "gain", "discount", "contribution", "running"],
    "IDCG": ["rank", "doc", "grade", "gain", "discount", "contribution", "running"],
    "CG": ["rank", "doc", "grade", "gain", "contribution", "running"],
    "ERR": ["rank", "doc", "grade", "stop", "reach", "contribution", "running"],
    "RBP": ["rank", "doc", "grade", "gain", "weight", "contribution", "running"],
    "Judged": ["rank", "doc", "grade", "judged", "judged_so_far"],
    "infAP": ["rank", "doc", "grade", "relevant", "hits", "pooled_above", "nonrel_above",
              "contribution", "running"],
    "binG": ["rank", "doc", "grade", "relevant", "not_relevant_above", "contribution", "running"],
    "RprecMult": ["rank", "doc", "grade", "relevant", "hits", "precision"],
}


def _binary_steps(c: _Context, docs, grades, relevant, depth: int) -> list[dict[str, Any]]:
    """One row per rank: hits so far, P@rank, and the family's contribution.

    AP: contribution = P@rank at a relevant rank (Σ / denominator). RR: 1/rank at the first
    relevant rank. Bpref: 1 − min(n_r, R) / min(N, R) at a relevant rank, n_r the judged
    non-relevant documents above it (unjudged ones skipped). infAP: at a relevant rank j + 1,
    1/(j+1) + (j/(j+1))·(pooled/j)·(rel + ε)/(rel + nonrel + 2ε) over the documents above it
    (pooled: those with a judgment; 1 at rank 1). binG: 1 / log2(2 + documents not relevant
    above) at a relevant rank. Others: the hits.
    """
    from .measures.inferred import EPSILON

    rows, hits, running, nonrel_above, found, pooled = [], 0, 0.0, 0, False, 0
    for i in range(depth):
        rank, g, is_rel = i + 1, grades[i], bool(relevant[i])
        hits += is_rel
        row = {"rank": rank, "doc": docs[i], "grade": g, "relevant": int(is_rel), "hits": hits,
               "precision": hits / rank}
        if c.kind == "AP":
            row["contribution"] = hits / rank if is_rel else 0.0
        elif c.kind == "RR":
            row["contribution"] = 1.0 / rank if is_rel and not found else 0.0
            found = found or is_rel
        elif c.kind == "Bpref":
            row["nonrel_above"] = nonrel_above
            if is_rel:
                penalty = min(nonrel_above, c.num_rel) / min(c.num_nonrel, c.num_rel) \
                    if nonrel_above > 0 else 0.0
                row["contribution"] = 1.0 - penalty
            else:
                row["contribution"] = 0.0
        elif c.kind == "infAP":
            row.update(pooled_above=pooled, nonrel_above=nonrel_above, contribution=0.0)
            if is_rel:
                rel_above = hits - 1
                row["contribution"] = 1.0 if i == 0 else 1.0 / (i + 1.0) + (i / (i + 1.0)) * (
                    pooled / i) * ((rel_above + EPSILON) / (rel_above + nonrel_above
                                                           + 2 * EPSILON))
        elif c.kind == "binG":
            row["not_relevant_above"] = i - (hits - is_rel)
            row["contribution"] = 1.0 / math.log2(2 + row["not_relevant_above"]) if is_rel \
                else 0.0
        else:
            row["contribution"] = float(is_rel)
        if g >= 0 and g < c.rel:
            nonrel_above += 1
        pooled += g == g  # a judgment, of any grade (NaN: none)
        running += row["contribution"]
        row["running"] = running
        rows.append(row)
    return rows


def _graded_steps(c: _Context, docs, grades, depth: int) -> list[dict[str, Any]]:
    """One row per rank. DCG family: gain / log_base(rank + 1), summed. ERR: R_i =
    (2^g − 1) / 2^g_max (g clipped to [0, g_max]), reach_i = Π_{j<i} (1 − R_j), contribution
    R_i · reach_i / rank (Chapelle et al. 2009)."""
    rows, running, reach = [], 0.0, 1.0
    top = c.max_grade if c.params.get("max_grade") is None else float(c.params["max_grade"])
    jarvelin = c.conv.discount == "jarvelin"
    label = ("max(1, log2 r)" if c.base == 2 else f"max(1, log{c.base:g} r)") if jarvelin else \
        ("log2(1+r)" if c.base == 2 else f"log{c.base:g}(1+r)")
    for i in range(depth):
        rank, g = i + 1, grades[i]
        row: dict[str, Any] = {"rank": rank, "doc": docs[i], "grade": g}
        if c.kind == "ERR":
            clipped = min(g, top) if g > 0 else 0.0
            stop = (2.0 ** clipped - 1.0) / 2.0 ** top
            row.update(stop=stop, reach=reach, contribution=stop * reach / rank)
            reach *= 1.0 - stop
        else:
            gain = _gain(g, c.gain)
            discount = 1.0 if c.kind == "CG" else \
                max(1.0, _log(rank, c.base)) if jarvelin else _log(rank + 1, c.base)
            row.update(gain=gain, discount=discount, discount_label=label,
                       contribution=gain / discount)
        running += row["contribution"]
        row["running"] = running
        rows.append(row)
    return rows


def _rbp_steps(c: _Context, docs, grades, depth: int, top: float) -> list[dict[str, Any]]:
    """One row per rank: r (1 when the grade is >= rel; graded: the grade over ``top``, the
    query's largest judged grade or 1), weight (1 − p)·p^(rank − 1), contribution r · weight,
    summed (Moffat & Zobel 2008)."""
    p, rel = float(c.params["p"]), c.params["rel"]
    rows, running = [], 0.0
    for i in range(depth):
        g = grades[i]
        r = (g / top if g > 0 else 0.0) if isinstance(rel, str) else float(g >= rel)
        weight = (1.0 - p) * p ** i
        running += r * weight
        rows.append({"rank": i + 1, "doc": docs[i], "grade": g, "gain": r, "weight": weight,
                     "contribution": r * weight, "running": running})
    return rows


def _judged_steps(docs, grades, depth: int) -> list[dict[str, Any]]:
    """One row per rank: whether the document is judged (grade >= 0), and how many are so far."""
    rows, judged = [], 0
    for i in range(depth):
        judged += grades[i] >= 0
        rows.append({"rank": i + 1, "doc": docs[i], "grade": grades[i],
                     "judged": int(grades[i] >= 0), "judged_so_far": judged})
    return rows


def _gain(grade: float, gain) -> float:
    """linear: the grade; exp: 2^grade − 1; a map: its value for the grade (else the grade).
    Unjudged (NaN) and negative grades gain 0."""
    if not grade >= 0:
        return 0.0
    if isinstance(gain, tuple):
        for mapped_grade, value in gain:
            if grade == mapped_grade:
                return float(value)
    return 2.0 ** grade - 1.0 if gain == "exp" else float(grade)


def _log(x: float, base: float) -> float:
    return math.log2(x) if base == 2 else math.log(x) / math.log(base)


def _finish(c: _Context, steps, ideal, depth: int, n: int, notes: list[str]):
    """The final value from the step table, and the lines that show it."""
    name, k, kind = str(c.measure), c.cutoff, c.kind
    hits = steps[-1]["hits"] if steps and "hits" in steps[-1] else 0
    total = steps[-1].get("running", 0.0) if steps else 0.0
    within = f"in the top {k}" if k is not None else "retrieved"
    undefined = None
    if kind == "P":
        denominator = k if c.conv.short_lists == "cutoff" else min(k, n)
        value = _divide(hits, denominator)
        why = "K" if c.conv.short_lists == "cutoff" else "min(K, list length)"
        lines = [f"{name} = relevant {within} / {why} = {hits} / {denominator} = {_f(value)}"]
    elif kind == "R":
        denominator = c.num_rel if c.conv.recall_denominator == "relevant" else min(c.num_rel, k)
        value = _divide(hits, denominator)
        why = "R" if c.conv.recall_denominator == "relevant" else "min(R, K)"
        lines = [f"{name} = relevant {within} / {why} = {hits} / {denominator} = {_f(value)}"]
    elif kind == "F1":
        p_den = k if c.conv.short_lists == "cutoff" else min(k, n)
        r_den = c.num_rel if c.conv.recall_denominator == "relevant" else min(c.num_rel, k)
        p, r = _divide(hits, p_den), _divide(hits, r_den)
        value = _divide(2 * p * r, p + r)
        lines = [f"P@{k} = {hits} / {p_den} = {_f(p)}; R@{k} = {hits} / {r_den} = {_f(r)}",
                 f"{name} = 2·P·R / (P + R) = {_f(value)}"]
    elif kind == "Success":
        value = 1.0 if hits > 0 else 0.0
        lines = [f"{name} = 1 if a relevant document is {within} else 0 = {_f(value)}"]
    elif kind == "RelP":
        denominator = min(k, c.num_rel)
        value = _divide(hits, denominator)
        lines = [f"{name} = relevant {within} / min(K, R) = {hits} / {denominator} = {_f(value)}"]
    elif kind == "RprecMult":
        multiple = c.measure.cutoff
        depth_c = math.floor(multiple * c.num_rel + 0.9)
        at_c = steps[min(depth_c, len(steps)) - 1]["hits"] if depth_c and steps else 0
        value = _divide(at_c, depth_c)
        lines = [f"c = floor({multiple:g}·R + 0.9) = floor({multiple:g}·{c.num_rel} + 0.9) = "
                 f"{depth_c}", f"{name} = relevant in the top c / c = {at_c} / {depth_c} = "
                 f"{_f(value)}"]
    elif kind in ("infAP", "binG"):
        value = _divide(total, c.num_rel)
        what = "estimated precision" if kind == "infAP" else "1 / log2(2 + not relevant above)"
        lines = [f"{name} = Σ {what} at relevant ranks / R = {_f(total)} / {c.num_rel} = "
                 f"{_f(value)}"]
    elif kind == "Rprec":
        at_r = steps[min(c.num_rel, len(steps)) - 1]["hits"] if c.num_rel and steps else 0
        value = _divide(at_r, c.num_rel)
        lines = [f"{name} = relevant in the top R / R = {at_r} / {c.num_rel} = {_f(value)}"]
    elif kind == "RR":
        value = total
        first = next((s["rank"] for s in steps if s["contribution"] > 0), None)
        lines = [f"{name} = 1 / rank of the first relevant document = "
                 + (f"1 / {first} = {_f(value)}" if first else f"0 (none {within})")]
    elif kind == "AP":
        denominator, why = _ap_denominator(c, hits, n)
        value = _divide(total, denominator)
        lines = [f"{name} = Σ P@rank at relevant ranks / {why} = {_f(total)} / {denominator} "
                 f"= {_f(value)}"]
    elif kind == "Bpref":
        value = _divide(total, c.num_rel)
        lines = [f"{name} = Σ contributions / R = {_f(total)} / {c.num_rel} = {_f(value)} "
                 f"(R = {c.num_rel} relevant, N = {c.num_nonrel} judged non-relevant)"]
    elif kind in ("DCG", "CG", "ERR"):
        value = total
        label = {"DCG": "Σ gain / discount", "CG": "Σ gain", "ERR": "Σ R_i · reach_i / rank"}
        lines = [f"{name} = {label[kind]} = {_f(value)}"]
    elif kind == "RBP":
        value = total
        p, rel = c.params["p"], c.params["rel"]
        what = "r = 1 if grade >= " + f"{rel:g}" if not isinstance(rel, str) else \
            "r = grade / the largest judged grade (when above 1)"
        lines = [f"{name} = Σ (1 − p)·p^(rank − 1)·r over the {'top ' + str(k) if k else 'list'}"
                 f" = {_f(value)} (p = {p:g}, {what})"]
    elif kind == "Judged":
        judged = steps[-1]["judged_so_far"] if steps else 0
        denominator = n if k is None else k if c.conv.short_lists == "cutoff" else min(k, n)
        why = "the list length" if k is None else "K" if c.conv.short_lists == "cutoff" else \
            "min(K, list length)"
        if c.measure.family == "Judged":
            value = _divide(judged, denominator)
            lines = [f"{name} = judged {within} / {why} = {judged} / {denominator} = "
                     f"{_f(value)}"]
        else:
            unjudged = depth - judged
            value = _divide(unjudged, denominator)
            lines = [f"{name} = unjudged {within} / {why} = {unjudged} / {denominator} = "
                     f"{_f(value)}"]
    elif kind == "IDCG":
        value = ideal[-1]["running"] if ideal else 0.0
        lines = [f"{name} = DCG of the ideal ranking = {_f(value)}"]
    else:  # nDCG
        idcg = ideal[-1]["running"] if ideal else 0.0
        at = f"@{k}" if k is not None else ""
        if idcg > 0:
            value = total / idcg
            lines = [f"DCG{at} = {_f(total)}; IDCG{at} = {_f(idcg)} (the ideal ranking's DCG)",
                     f"{name} = DCG{at} / IDCG{at} = {_f(total)} / {_f(idcg)} = {_f(value)}"]
        else:
            undefined = c.conv.idcg_zero
            value = 0.0 if undefined == "zero" else math.nan
            lines = [f"IDCG{at} = 0 (no judged document with a positive gain): {name} = "
                     f"{_f(value)} (idcg_zero='{undefined}')"]
    if c.measure.spec.undefined_when == "no_relevant" and c.num_rel == 0:
        policy = c.conv.no_relevant
        value = 0.0 if policy == "zero" else math.nan
        lines.append(f"no relevant document: {name} = {_f(value)} (no_relevant='{policy}'"
                     + (", left out of the mean)" if policy == "skip" else ")"))
    return value, lines


def _ap_denominator(c: _Context, hits: int, n: int) -> tuple[int, str]:
    rule, k = c.conv.ap_denominator, c.cutoff
    if rule == "relevant_retrieved":
        return hits, "relevant retrieved"
    if rule == "relevant" or (rule == "min_relevant_cutoff" and k is None):
        return c.num_rel, "R"
    if rule == "min_relevant_cutoff":
        return min(c.num_rel, k), "min(R, K)"
    return (k, "K") if k is not None else (n, "list length")


def _list_notes(c: _Context, docs, grades, scores, relevant, depth: int, n: int,
                listed: _Listed) -> list[str]:
    notes = []
    k = c.cutoff
    if k is not None and n < k:
        notes.append(f"the list has {n} documents, fewer than {k}: the missing ranks add nothing"
                     + (" (P@K still divides by K)" if c.kind in ("P", "F1")
                        and c.conv.short_lists == "cutoff" else ""))
    unjudged = sum(1 for g in grades[:depth] if not g >= 0)
    if unjudged and c.kind != "Judged":
        notes.append(f"{_count(unjudged, depth)} unjudged (grade shown as -): "
                     + ("bpref skips them" if c.kind == "Bpref" else "they count as non-relevant"
                        if c.kind not in ("nDCG", "DCG", "CG", "ERR", "IDCG") else "they gain 0"))
    if c.kind not in ("ERR",):
        retrieved = {d for d, r in zip(docs[:depth], relevant[:depth]) if r}
        missed = c.num_rel - len(retrieved) if c.conv.ideal == "judgments" else 0
        if missed > 0 and c.kind not in ("DCG", "CG", "nDCG", "IDCG", "RBP", "Judged"):
            notes.append(f"{missed} of the {c.num_rel} relevant documents (grade >= {c.rel:g}) "
                         f"{'is' if missed == 1 else 'are'} not "
                         f"{'in the top ' + str(k) if k is not None else 'retrieved'}: "
                         "they count in R but add nothing")
    if c.conv.nonpositive_scores == "nonrelevant" and any(
            g >= c.rel and s <= 0 for g, s in zip(grades[:depth], scores[:depth])):
        notes.append("documents scored <= 0 count as non-relevant (nonpositive_scores)")
    if k is not None and n > k and scores[k - 1] == scores[k]:
        notes.append(f"the documents at ranks {k} and {k + 1} have equal scores: which of them "
                     f"count depends on the tie order (ties={c.conv.ties})")
    if c.kind == "ERR":
        top = c.max_grade if c.params.get("max_grade") is None else c.params["max_grade"]
        notes.append(f"g_max = {top:g}, the largest grade in the judgments "
                     "(ERR(max_grade=G) sets it)")
    return notes


def _shown(rows, kind: str, cutoff: int | None) -> int:
    """Rows worth showing: up to the cutoff, else up to the last one that contributes."""
    if cutoff is not None:
        return len(rows)
    key = "relevant" if kind in ("P", "R", "F1", "Success", "RelP", "Rprec", "RprecMult") else \
        "judged" if kind == "Judged" else "contribution"
    last = max((i for i, r in enumerate(rows) if r.get(key)), default=-1)
    return min(len(rows), max(last + 1, 10))


def _ties_by_grade(docs, grades, scores, best_first: bool):
    """Within each run of equal scores, higher grades first (or last); unjudged as -1."""
    group, groups = 0, []
    for i, s in enumerate(scores):
        group += i > 0 and s != scores[i - 1]
        groups.append(group)
    order = sorted(range(len(docs)), key=lambda i: (
        groups[i], -_key(grades[i]) if best_first else _key(grades[i]), i))
    return [docs[i] for i in order], [grades[i] for i in order], [scores[i] for i in order]


def _key(grade: float) -> float:
    return grade if grade >= 0 else -1.0


def _count(part: int, whole: int) -> str:
    verb = "is" if part == 1 else "are"
    return f"{part} of the {whole} documents considered {verb}"


def _conventions_line(conv) -> str:
    changed = conv.differences()
    if not changed:
        return "conventions: trec_eval's (every default)"
    shown = ", ".join(f"{k}={v}" for k, v in changed.items())
    return f"conventions: {shown} (the others trec_eval's)"


def _divide(a: float, b: float) -> float:
    return a / b if b else 0.0


def _f(x: float, digits: int = 4) -> str:
    return "NaN" if isinstance(x, float) and math.isnan(x) else f"{x:.{digits}f}"


def _cell(key: str, value: Any, digits: int) -> str:
    if value is None:
        return ""
    if key == "grade":
        if not value >= 0:
            return "-" if math.isnan(value) else f"{value:g} (unjudged)"
        return f"{value:g}"
    if key in ("rank", "hits", "relevant", "nonrel_above", "judged", "judged_so_far",
               "pooled_above", "not_relevant_above"):
        return str(int(value))
    if key == "doc":
        return str(value)
    if key == "gain" and float(value).is_integer():
        return f"{value:g}"
    return f"{value:.{digits}f}"


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.rjust(w) if i != 1 else c.ljust(w) for i, (c, w) in
                      enumerate(zip(r, widths))).rstrip() for r in rows]



class _CallableModule(types.ModuleType):
    """``rankwise.explain`` is this module, and calling it explains: the package attribute
    stays callable once the module has been imported."""

    def __call__(self, *args: Any, **kwargs: Any) -> Explanation:
        return explain(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
