"""Preference measures (trec_eval ``-R prefs`` and ``-R qrels_prefs``): how many of the
assessors' preferences between documents a ranking fulfils.

A preference A > B comes from one judgment sub-group (jsg) of one judgment group (jg):
every document of the sub-group is preferred to every one with a lower rel_level. A group
with several sub-groups is one consistent partial order: its preferences are closed under
transitivity (A > B in one sub-group and B > C in another give A > C). ``qrels_prefs`` reads
a qrels file so: every document of a higher grade preferred to every one of a lower grade,
one group per value of the iter field (form_prefs_counts.c).

Each preference of a group falls in one of five areas, as its documents are retrieved
(within ``max_depth``) or not and in its order or not; with "ful" fulfilled and "poss"
possible (every preference of the area, fulfilled or not):

* both retrieved: ``ful_ret`` (A above B), ``poss_ret``;
* one retrieved: ``ful_imp`` (A retrieved, B not), ``poss_imp``;
* neither retrieved: ``notoccur`` (never fulfilled).

The measures of a query, per judgment group g and summed or averaged over its groups G
(m_prefs_*.c; a ratio whose denominator is 0 is 0):

* ``prefs_num_prefs_poss`` = Σ poss, ``prefs_num_prefs_ful`` = Σ ful (ret + imp),
  ``prefs_num_prefs_ful_ret`` = Σ ful_ret (summed over queries too);
* ``prefs_simp`` = Σ ful / Σ poss; ``_ret``: both retrieved only; ``_imp``: at least one;
* ``prefs_pair``: the mean over document pairs with a preference of the share of their
  preferences (over all groups) that the ranking fulfils; ``_ret``, ``_imp`` as above;
* ``prefs_avgjg`` = (1 / |G|) Σ_g ful_g / poss_g; ``_ret``, ``_imp`` as above;
* ``prefs_avgjg_Rnonrel``: ``prefs_avgjg`` with each group's nonrelevant documents
  (rel_level 0) counted as many as its relevant ones, R: with N < R nonrelevant, R - N
  fulfilled preferences are added per relevant document retrieved (of R (R - N)
  possible); with N > R, only the first R nonrelevant documents (judged retrieved ones in
  rank order, then the others by doc id) count; ``_ret``: R and N of the retrieved documents.
  As trec_eval computes it, including what its code does beyond that comment: with N > R
  a group of one sub-group also counts the pairs of every nonrelevant document with each
  kept one, itself included (fulfilled where the first is retrieved and above the
  second); ``_ret`` with N < R adds R - N possible preferences per relevant document of
  the group, retrieved or not, and in a group of several sub-groups keeps as many
  retrieved nonrelevant documents as the group has relevant ones, retrieved or not; a
  group whose ratio is 0 / 0 makes the query's value 0.

The documents of a query are ranked by score, ties by doc id ascending (trec_eval's order
here, not its ``docid_desc`` of the other measures), cut at ``max_depth``; documents without
a preference play no part. Queries with preferences but no ranking are left out
(``missing_queries="ignore"``) or evaluated on an empty ranking (``"zero"``, trec_eval -c);
queries ranked without preferences are left out, or evaluated as all 0
(``run_only_queries="zero"``). Every query's documents are held as dense matrices of its
judged documents (a judgment group's preferences, and their counts over the groups):
preference files are small, and a query's pairs are quadratic in its documents anyway.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .conventions import Conventions, resolve
from .errors import InputError, MeasureError
from .results import Result, SystemResult, aggregate

#: trec_eval's preference measures (measures.c, in its order): canonical name -> trec_eval's
PREFERENCE_MEASURES = {
    "NumPrefsPoss": "prefs_num_prefs_poss",
    "NumPrefsFul": "prefs_num_prefs_ful",
    "NumPrefsFulRet": "prefs_num_prefs_ful_ret",
    "PrefsSimp": "prefs_simp",
    "PrefsPair": "prefs_pair",
    "PrefsAvgJG": "prefs_avgjg",
    "PrefsAvgJGRnonrel": "prefs_avgjg_Rnonrel",
    "PrefsSimpRet": "prefs_simp_ret",
    "PrefsPairRet": "prefs_pair_ret",
    "PrefsAvgJGRet": "prefs_avgjg_ret",
    "PrefsAvgJGRnonrelRet": "prefs_avgjg_Rnonrel_ret",
    "PrefsSimpImp": "prefs_simp_imp",
    "PrefsPairImp": "prefs_pair_imp",
    "PrefsAvgJGImp": "prefs_avgjg_imp",
}
#: the counts, summed over queries (trec_eval prints them as integers)
COUNTS = ("NumPrefsPoss", "NumPrefsFul", "NumPrefsFulRet")
NUM_Q = "NumQ"
#: trec_eval's sets of measures (measures.c): -m all_prefs, and -m prefs (its official set)
NICKNAMES = {
    "all_prefs": (NUM_Q, *PREFERENCE_MEASURES),
    "prefs": (NUM_Q, *list(PREFERENCE_MEASURES)[:6]),
}
_BY_TREC_NAME = {trec: name for name, trec in PREFERENCE_MEASURES.items()}
#: the ties conventions a ranking of preferences can take (no expected values over ties)
TIES = ("docid_asc", "docid_desc", "input_order")


def is_preference_measure(name: str) -> bool:
    """Whether ``name`` is a preference measure or one of trec_eval's sets of them."""
    return name in PREFERENCE_MEASURES or name in _BY_TREC_NAME or name in NICKNAMES


def preference_measures(measures: str | Sequence[str]) -> list[str]:
    """The canonical names of ``measures``: trec_eval's names and sets (``all_prefs``,
    ``prefs``) read, ``num_q`` as ``NumQ``, each once, in the order given.

    >>> preference_measures(["prefs_simp", "PrefsPair", "num_q"])
    ['PrefsSimp', 'PrefsPair', 'NumQ']
    """
    names = [measures] if isinstance(measures, str) else list(measures)
    out: list[str] = []
    for name in names:
        if not isinstance(name, str):
            raise MeasureError("expected a preference measure name", source="measures",
                               value=repr(name), unit="key")
        if name in NICKNAMES:
            found = list(NICKNAMES[name])
        elif name in ("num_q", NUM_Q):
            found = [NUM_Q]
        elif name in PREFERENCE_MEASURES or name in _BY_TREC_NAME:
            found = [_BY_TREC_NAME.get(name, name)]
        else:
            raise MeasureError(
                "not a preference measure: -R prefs and -R qrels_prefs compute num_q, "
                f"{', '.join(PREFERENCE_MEASURES.values())} (or their sets all_prefs, prefs; "
                "canonical names " + ", ".join(PREFERENCE_MEASURES) + ")", source="measures",
                value=name, unit="key")
        out += [m for m in found if m not in out]
    return out


def evaluate_preferences(prefs: Any, run: Any, measures: str | Sequence[str] = "all_prefs",
                         judgments_format: str = "prefs",
                         conventions: Conventions | str | None = None,
                         per_query: bool = False, **convention_overrides: Any) -> Result:
    """Evaluate runs against preference judgments (trec_eval ``-R prefs`` and
    ``-R qrels_prefs``).

    Parameters
    ----------
    prefs : path or mapping
        ``judgments_format="prefs"``: a prefs file (``qid jg jsg docid rel_level``) or
        ``{query: {jg: {jsg: {doc: level}}}}``; ``"qrels_prefs"``: a qrels file (``qid iter
        docid rel``, iter the judgment group) or ``{query: {doc: grade}}``, read as
        preferences of every document over those of lower grades.
    run : path, mapping or list
        As :func:`rankwise.evaluate`.
    measures : names
        Preference measures (see :mod:`rankwise.preferences`), by canonical name
        (``PrefsSimp``) or trec_eval's (``prefs_simp``), ``num_q``, or trec_eval's sets
        ``all_prefs`` (the default) and ``prefs``.
    judgments_format : {"prefs", "qrels_prefs"}
    conventions, convention_overrides
        As :func:`rankwise.evaluate`: ``max_depth``, ``missing_queries``,
        ``run_only_queries``, ``duplicates``, ``score_precision`` and ``ties`` apply (ties
        by doc id ascending, trec_eval's order for preferences, unless ``ties`` is given
        or ``conventions`` is a :class:`Conventions`); the others do not change these
        measures.
    per_query : bool
        Keep every query's values.

    Returns
    -------
    Result
        Its trec_eval names are trec_eval's (``prefs_simp``). Its diagnostics count the
        run's rows and queries, the preference lines (``qrels_rows``) and their queries, the
        queries on one side only, the documents retrieved without a preference
        (``unjudged_retrieved``, which play no part) and the judgment groups.

    Examples
    --------
    >>> import rankwise
    >>> prefs = {"q1": {"alice": {"s1": {"d1": 2, "d2": 1, "d3": 0}}}}
    >>> run = {"q1": {"d2": 3.0, "d1": 2.0, "d9": 1.0}}   # d2 above d1, d3 not retrieved
    >>> result = rankwise.evaluate_preferences(prefs, run, ["prefs_simp", "prefs_simp_ret"])
    >>> result.mean("PrefsSimp"), result.mean("PrefsSimpRet")  # d1>d3, d2>d3 of 3; 0 of 1
    (0.6666666666666666, 0.0)
    """
    from .api import _run_sources
    from .io.frames import to_run
    from .io.preferences import read_preferences
    from .io.tables import numbered_names

    conv = _conventions(conventions, convention_overrides)
    names = preference_measures(measures)
    judged = _by_query(read_preferences(prefs, judgments_format))
    sources = _run_sources(run)
    runs = numbered_names((r.name, r) for r in (to_run(source, name) for name, source in sources))
    kinds = {m: "sum" if m in COUNTS or m == NUM_Q else "mean" for m in names}
    systems = {name: _system(name, r, judged, names, kinds, conv, per_query)
               for name, r in runs}
    return Result(names, systems, conv, kinds)


def _conventions(conventions, overrides: dict[str, Any]) -> Conventions:
    conv = resolve(conventions, **overrides)
    if overrides.get("ties") is None and not isinstance(conventions, Conventions):
        conv = replace(conv, ties="docid_asc")  # form_prefs_counts.c, comp_sim_docno
    if conv.ties not in TIES:
        raise InputError(f"ties: preferences are counted on one ranking, ties ordered by "
                         f"one of {', '.join(TIES)}", source="conventions", value=conv.ties)
    return conv


class _Judged:
    """One query's preferences: each row's judgment group, sub-group, document and level,
    the rows' lines (for errors), and the source."""

    def __init__(self, prefs, rows: np.ndarray) -> None:
        self.group = prefs.group[rows].astype(str)
        self.subgroup = prefs.subgroup[rows].astype(str)
        self.doc = prefs.doc[rows].astype(str)
        self.level = prefs.level[rows]
        self.lines = prefs.lines[rows]
        self.source, self.unit = prefs.source, prefs.unit

    def error(self, message: str, row: int) -> InputError:
        """An :class:`InputError` at the line (or entry) of ``row``."""
        return InputError(message, source=self.source, line=self.lines[row], unit=self.unit)


def _by_query(prefs) -> dict[str, _Judged]:
    queries = prefs.query.astype(str)
    order = np.argsort(queries, kind="stable")
    unique, starts = np.unique(queries[order], return_index=True)
    bounds = [*starts.tolist(), len(order)]
    return {q: _Judged(prefs, order[a:b]) for q, a, b in zip(unique.tolist(), bounds, bounds[1:])}


def _system(name: str, run, judged: dict[str, _Judged], measures: list[str],
            kinds: dict[str, str], conv: Conventions, per_query: bool) -> SystemResult:
    whole, diag = _rankings(run, conv)
    ranked = {q: docs[:conv.max_depth] for q, docs in whole.items()}
    in_run = set(ranked)
    only_judged = [q for q in judged if q not in in_run]
    only_run = sorted(q for q in in_run if q not in judged)
    queries = sorted([q for q in judged if q in in_run]
                     + (only_judged if conv.missing_queries == "zero" else [])
                     + (only_run if conv.run_only_queries == "zero" else []))
    empty = np.array([], dtype=str)
    rows = np.array([_query_values(q, ranked.get(q, empty), judged[q]) if q in judged
                     else np.zeros(len(PREFERENCE_MEASURES)) for q in queries]
                    ).reshape(len(queries), len(PREFERENCE_MEASURES))
    at = {m: i for i, m in enumerate(PREFERENCE_MEASURES)}
    values = {m: np.ones(len(queries)) if m == NUM_Q else rows[:, at[m]] for m in measures}
    evaluated = [q for q in queries if q in in_run]
    diag.update(
        qrels_rows=sum(len(j.level) for j in judged.values()), qrels_queries=len(judged),
        queries_evaluated=len(queries), queries_only_in_run=len(only_run),
        queries_only_in_qrels=len(only_judged),
        queries_only_in_qrels_scored_zero=len(only_judged) if conv.missing_queries == "zero"
        else 0,
        queries_only_in_run_scored=len(only_run) if conv.run_only_queries == "zero" else 0,
        rows_in_run_only_queries=sum(len(whole[q]) for q in only_run),
        unjudged_retrieved=sum(int((~np.isin(ranked[q], judged[q].doc)).sum())
                               for q in evaluated if q in judged),
        judgment_groups=sum(len(np.unique(judged[q].group)) for q in queries if q in judged),
        examples={k: v[:5] for k, v in (("queries_only_in_run", only_run),
                                         ("queries_only_in_qrels", sorted(only_judged))) if v})
    diag["rows_evaluated"] = sum(len(ranked[q]) for q in evaluated)
    diag["rows_beyond_depth"] = sum(len(whole[q]) - len(ranked[q]) for q in evaluated)
    return SystemResult(
        name=name, aggregates={m: aggregate(values[m], kinds[m]) for m in measures},
        diagnostics=diag, query_ids=np.array(queries, dtype=object) if per_query else None,
        values=values if per_query else None, undefined={m: 0 for m in measures},
        trec_names={m: "num_q" if m == NUM_Q else PREFERENCE_MEASURES[m] for m in measures})


def _rankings(run, conv: Conventions) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Each query's documents (str) in rank order: by score, ties as ``conv.ties``, one
    row per document (``conv.duplicates``); and the run's own counts."""
    codes = np.asarray(run.query_code)
    docs = np.array([str(d) for d in run.docs.to_pylist()], dtype=str) if len(codes) \
        else np.array([], dtype=str)
    score = np.asarray(run.score, dtype=np.float64)
    if conv.score_precision == "float32":
        score = score.astype(np.float32).astype(np.float64)
    doc_code = np.unique(docs, return_inverse=True)[1].reshape(-1)
    # query, then doc, then input order: finds the duplicates
    by_doc = np.lexsort((np.arange(len(codes)), doc_code, codes))
    same = (codes[by_doc][1:] == codes[by_doc][:-1]) & \
        (doc_code[by_doc][1:] == doc_code[by_doc][:-1])
    keep = np.ones(len(codes), bool)
    if same.any():
        first, second = by_doc[:-1][same], by_doc[1:][same]
        if conv.duplicates == "error":
            b = int(second.min())
            a = int(first[second == b][0])
            doc = str(docs[b])
            raise run.error_at(b, f"document {doc!r} appears twice for query "
                               f"{run.query_ids()[codes[b]]!r} (first at {run.row_unit} "
                               f"{run.location(a)}; keep one with the duplicates convention, "
                               "e.g. --duplicates first)", doc)
        keep[_dropped(by_doc, same, score, conv.duplicates)] = False
    tie = {"docid_asc": doc_code, "docid_desc": -doc_code,
           "input_order": np.arange(len(codes))}[conv.ties]
    order = np.lexsort((tie, -score, codes))
    order = order[keep[order]]
    starts = np.flatnonzero(np.r_[True, codes[order][1:] != codes[order][:-1]]) \
        if len(order) else np.array([], dtype=int)
    bounds = [*starts.tolist(), len(order)]
    ids = run.query_ids()
    ranked = {ids[codes[order[a]]]: docs[order[a:b]] for a, b in zip(bounds, bounds[1:])}
    return ranked, {"run_rows": len(codes), "run_duplicates_dropped": int((~keep).sum()),
                    "run_queries": len(ids)}


def _dropped(by_doc: np.ndarray, same: np.ndarray, score: np.ndarray, policy: str) -> np.ndarray:
    """The rows a duplicates policy drops: all of a (query, doc)'s rows but the first, the
    last or the highest-scored (the first of equal scores)."""
    group = np.r_[0, np.cumsum(~same)]  # one number per (query, doc), in by_doc's order
    if policy == "first":
        kept = np.r_[True, ~same]
    elif policy == "last":
        kept = np.r_[~same, True]
    else:
        best = np.lexsort((np.arange(len(by_doc)), -score[by_doc], group))
        kept = np.zeros(len(by_doc), bool)
        kept[best[np.r_[True, group[best][1:] != group[best][:-1]]]] = True
    return by_doc[~kept]


def _query_values(query: str, ranked: np.ndarray, judged: _Judged) -> np.ndarray:
    """The preference measures of one query, in PREFERENCE_MEASURES' order."""
    docs = np.unique(judged.doc)  # sorted
    retrieved = ranked[np.isin(ranked, docs)]
    njr = len(retrieved)
    # index of each judged document: the retrieved in rank order, then the others by id
    ordered = np.concatenate([retrieved, np.setdiff1d(docs, retrieved)])
    index = np.empty(len(docs), dtype=np.int64)
    index[np.searchsorted(docs, ordered)] = np.arange(len(docs))
    row_index = index[np.searchsorted(docs, judged.doc)]
    counts = np.zeros((len(docs), len(docs)), dtype=np.int64)
    groups = [_group_counts(query, g, judged, judged.group == g, row_index, njr, counts,
                            ordered) for g in np.unique(judged.group).tolist()]
    g = {k: np.array([c[k] for c in groups], dtype=np.float64) for k in groups[0]}
    ful, poss = g["ful_ret"] + g["ful_imp"], g["poss_ret"] + g["poss_imp"] + g["notoccur"]
    pair, pair_ret, pair_imp = _pairs(counts, njr)
    return np.array([
        poss.sum(), ful.sum(), g["ful_ret"].sum(),
        _ratio(ful.sum(), poss.sum()), pair, _per_group(_ratios(ful, poss)),
        _per_group(g["rnonrel"]),
        _ratio(g["ful_ret"].sum(), g["poss_ret"].sum()), pair_ret,
        _per_group(_ratios(g["ful_ret"], g["poss_ret"])), _per_group(g["rnonrel_ret"]),
        _ratio(ful.sum(), (g["poss_ret"] + g["poss_imp"]).sum()), pair_imp,
        _per_group(_ratios(ful, g["poss_ret"] + g["poss_imp"]))])


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def _ratios(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a / b per group, 0 where b is 0."""
    return np.divide(a, b, out=np.zeros_like(a), where=b > 0)


def _per_group(terms: np.ndarray) -> float:
    """The mean over a query's groups, 0 unless the sum is above 0 (a NaN term, 0 / 0,
    makes it 0, as in trec_eval)."""
    with np.errstate(invalid="ignore"):
        total = float(np.sum(terms))
    return total / len(terms) if total > 0 else 0.0


def _pairs(counts: np.ndarray, njr: int) -> tuple[float, float, float]:
    """prefs_pair, _ret and _imp: over the pairs of documents with a preference in any
    group, the share of their preferences the ranking fulfils (for the pair's higher
    document by index: its preferences over the other, where it is retrieved)."""
    upper, lower = np.triu_indices(len(counts), 1)
    a, b = counts[upper, lower], counts[lower, upper]
    has = (a + b) > 0
    share = np.divide(a, a + b, out=np.zeros(len(a)), where=has)
    first_retrieved, both_retrieved = upper < njr, lower < njr
    with_one = has & first_retrieved
    with_both = has & both_retrieved
    return (_ratio(share[with_one].sum(), has.sum()),
            _ratio(share[with_both].sum(), with_both.sum()),
            _ratio(share[with_one].sum(), with_one.sum()))


def _group_counts(query: str, group: str, judged: _Judged, rows: np.ndarray,
                  row_index: np.ndarray, njr: int, counts: np.ndarray,
                  ordered: np.ndarray) -> dict[str, float]:
    """One judgment group's preferences counted by area, and its prefs_avgjg_Rnonrel
    terms; its preferences are added to ``counts`` (document by document, over groups)."""
    members, local = np.unique(row_index[rows], return_inverse=True)  # sorted by index
    local = local.reshape(-1)
    level, subgroup = judged.level[rows], judged.subgroup[rows]
    subgroups = np.unique(subgroup)
    size = len(members)
    prefer = np.zeros((size, size), dtype=bool)
    for s in subgroups.tolist():
        at = subgroup == s
        prefer[np.ix_(local[at], local[at])] |= level[at][:, None] > level[at][None, :]
    positive = np.zeros(size, bool)
    zero = np.zeros(size, bool)
    positive[local[level > 0]] = True
    zero[local[level == 0]] = True
    several = len(subgroups) > 1
    if several:
        conflict = np.flatnonzero(positive & zero)
        if len(conflict):
            doc = str(ordered[members[conflict[0]]])
            row = np.flatnonzero(rows & (judged.doc == doc) & (judged.level == 0))[0]
            raise judged.error(f"query {query!r}, judgment group {group!r}: document {doc!r} "
                               "has rel_level 0 here and above 0 in another sub-group", row)
        prefer = _transitive(prefer)
        cycle = np.argwhere(prefer & prefer.T)
        if len(cycle):
            a, b = (str(ordered[members[i]]) for i in cycle[0])
            row = np.flatnonzero(rows & (judged.doc == a))[0]
            raise judged.error(f"query {query!r}, judgment group {group!r}: inconsistent "
                               f"preferences, {a!r} and {b!r} are each preferred to the other "
                               "(directly or through others); preferences that contradict "
                               "each other belong in different judgment groups", row)
    counts[np.ix_(members, members)] += prefer
    retrieved = members < njr
    relevant = positive
    a1, a2, a3, a4, a5 = _areas(prefer, retrieved)
    out = {"ful_ret": a1, "poss_ret": a1 + a2, "ful_imp": a3, "poss_imp": a3 + a4,
           "notoccur": a5}
    num_rel, num_nonrel = int(relevant.sum()), int((~relevant).sum())
    rel_ret, nonrel_ret = int((relevant & retrieved).sum()), int((~relevant & retrieved).sum())
    nonrel = np.flatnonzero(~relevant)  # by index
    with np.errstate(invalid="ignore", divide="ignore"):
        # prefs_avgjg_Rnonrel (m_prefs_avgjg_Rnonrel.c)
        if num_rel >= num_nonrel:
            ful = a1 + a3 + rel_ret * (num_rel - num_nonrel)
            poss = a1 + a2 + a3 + a4 + a5 + num_rel * (num_rel - num_nonrel)
        else:
            keep = relevant.copy()
            keep[nonrel[:num_rel]] = True
            k1, k2, k3, k4, k5 = _areas(prefer[np.ix_(keep, keep)], retrieved[keep])
            ful, poss = k1 + k3, k1 + k2 + k3 + k4 + k5
            if not several:  # every nonrelevant document against each kept one
                first, kept = members[nonrel][:, None], members[nonrel[:num_rel]][None, :]
                ful += int(((first < kept) & (first < njr)).sum())
                poss += len(nonrel) * num_rel
        out["rnonrel"] = np.float64(ful) / np.float64(poss)
        # prefs_avgjg_Rnonrel_ret (m_prefs_avgjg_Rnonrel_ret.c)
        if rel_ret >= nonrel_ret:
            ful = a1 + rel_ret * (rel_ret - nonrel_ret)
            poss = a1 + a2 + num_rel * (rel_ret - nonrel_ret)
        else:
            nonrel_retrieved = nonrel[retrieved[nonrel]]
            keep = relevant & retrieved
            keep[nonrel_retrieved[:num_rel if several else rel_ret]] = True
            k1, k2 = _areas(prefer[np.ix_(keep, keep)], retrieved[keep])[:2]
            ful, poss = k1, k1 + k2
            if not several:
                first = members[nonrel_retrieved][:, None]
                kept = members[nonrel_retrieved[:rel_ret]][None, :]
                ful += int((first < kept).sum())
                poss += len(nonrel_retrieved) * rel_ret
        out["rnonrel_ret"] = np.float64(ful) / np.float64(poss)
    return out


def _areas(prefer: np.ndarray, retrieved: np.ndarray) -> tuple[int, ...]:
    """The preferences (row preferred to column, rows and columns by index) of the five
    areas: both retrieved in order, both retrieved out of order, only the preferred one
    retrieved, only the other one, neither."""
    out_ = ~retrieved
    both = prefer[np.ix_(retrieved, retrieved)]
    in_order = int(np.triu(both, 1).sum())
    return (in_order, int(both.sum()) - in_order, int(prefer[np.ix_(retrieved, out_)].sum()),
            int(prefer[np.ix_(out_, retrieved)].sum()), int(prefer[np.ix_(out_, out_)].sum()))


def _transitive(prefer: np.ndarray) -> np.ndarray:
    """The transitive closure of a preference relation (its diagonal left out): squared
    until it no longer changes."""
    closure = prefer | np.eye(len(prefer), dtype=bool)
    while True:
        step = closure.astype(np.float32)
        grown = (step @ step) > 0
        if np.array_equal(grown, closure):
            break
        closure = grown
    np.fill_diagonal(closure, False)
    return closure
