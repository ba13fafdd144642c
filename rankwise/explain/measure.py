"""One measure on one query: resolve its parameters, walk the run's ranking and the ideal
one rank by rank with its kind's steps, and add the notes the reader needs."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..errors import InputError
from ..measures.graded import ScaledGain, gain_from
from ..measures.registry import undefined_value
from . import binary, curves, graded, judged, rating, rbp, sets, trec_graded
from .context import Context, Kind, Ranking, Rows, number, shortest
from .listing import Listed, ties_by_grade
from .scaling import gain_exponent, unscaled
from .table import Explanation

_MODULES = (binary, graded, trec_graded, rbp, judged, sets, curves, rating)
#: Family -> the kind of steps that explain it.
FAMILIES: dict[str, str] = {f: k for module in _MODULES for f, k in module.FAMILIES.items()}
KINDS: dict[str, Kind] = {k: v for module in _MODULES for k, v in module.KINDS.items()}


def explain_measure(m, listed: Listed, query: str, system: str, conv) -> Explanation:
    """The explanation of measure ``m`` on the ranked list of one query."""
    fconv = conv.for_family(m.family)
    params = dict(m.spec.params)
    params.update(dict(m.params))
    rel = params.get("rel")  # RBP's "graded" reads the grades: no threshold
    rel = fconv.relevance_threshold if rel is None or isinstance(rel, str) else float(rel)
    raw_gain = params.get("gain")
    raw_gain = fconv.gain_name if raw_gain is None else raw_gain
    gain = _below_rel(m, listed, raw_gain, params)
    by_gain = isinstance(gain, tuple)  # a gain map: ties ordered by gain, as the engine does
    base = params.get("base")
    base = fconv.discount_base if base is None else float(base)
    docs, grades, scores = listed.docs, listed.grades, listed.scores
    if fconv.ties == "expected":
        _refuse_expected(m.family, conv)
    if fconv.ties in ("optimistic", "pessimistic") and (fconv.ties != conv.ties or by_gain):
        # a family's own optimistic / pessimistic order, or one by a gain map's gains
        docs, grades, scores = ties_by_grade(docs, grades, scores, fconv.ties == "optimistic",
                                             gain if by_gain else None)
    kind = KINDS[FAMILIES[m.family]]
    k = m.cutoff if kind.rank_cutoff else None
    if fconv.ideal == "retrieved":
        pool = sorted(((d, g) for d, g in zip(docs, grades) if g >= 0),
                      key=lambda item: (-item[1], item[0]))
    else:
        pool = listed.judged
    relevant = [(g >= rel) and (fconv.nonpositive_scores == "ranked" or s > 0)
                for g, s in zip(grades, scores)]
    c = Context(m, FAMILIES[m.family], k, rel, gain, base,
                num_rel=sum(1 for _, g in pool if g >= rel),
                num_nonrel=sum(1 for _, g in pool if g < rel), conv=fconv,
                max_grade=listed.max_grade, top_grade=max(1.0, max((g for _, g in pool),
                                                                    default=0.0)),
                params=params, pool=pool, query=query)
    n = len(docs)
    ranking = Ranking(docs, grades, relevant, n if k is None else min(k, n), scores)
    rows, ideal_rows, ideal_value, (value, formula) = _walk(kind, c, ranking)
    exponent = gain_exponent(c, value)
    if exponent is not None:  # gains scaled as the engine scales them
        scaled = replace(c, gain=_below_rel(m, listed, ScaledGain(raw_gain, exponent), params))
        rows, ideal_rows, ideal_value, (value, formula) = _walk(kind, scaled, ranking)
        value, ideal_value, formula = unscaled(c, exponent, value, ideal_value, formula)
    notes = list(listed.notes) + _notes(kind, c, ranking) + (kind.notes(c) if kind.notes else [])
    return Explanation(str(m), query, system, kind.columns, rows, ideal_rows, value, ideal_value,
                       formula, notes, _shown(rows, kind, k), _shown(ideal_rows, kind, k), conv,
                       kind.elided, kind.ideal_title)


def _below_rel(m, listed: Listed, gain, params: dict):
    """``gain`` with nDCG's and DCG's grades below their ``rel`` gaining 0, as a gain map
    of the query's grades (:func:`rankwise.measures.graded.gain_from`)."""
    if m.family not in ("nDCG", "DCG"):
        return gain
    return gain_from(np.array([g for _, g in listed.judged] + list(listed.grades)), gain,
                     params["rel"])


def _walk(kind: Kind, c: Context, ranking: Ranking
          ) -> tuple[Rows, Rows, float, tuple[float, list[str]]]:
    """The run's rows, the ideal ranking's rows and value, and the final value with its
    lines."""
    rows = kind.steps(c, ranking)
    ideal_rows: Rows = []
    ideal_value = math.nan
    if kind.ideal is not None:
        k, rel = c.cutoff, c.rel
        ideal_list = kind.ideal(c, c.pool)
        ideal = Ranking([d for d, _ in ideal_list], [g for _, g in ideal_list],
                        [g >= rel for _, g in ideal_list],
                        len(ideal_list) if k is None else min(k, len(ideal_list)))
        ideal_rows = kind.steps(c, ideal)
        ideal_value, _ = _value(kind, c, ideal_rows, ideal_rows, ideal)
    return rows, ideal_rows, ideal_value, _value(kind, c, rows, ideal_rows, ranking)


def _refuse_expected(family: str, conv) -> None:
    """Refuse ties='expected', naming where it comes from: the conventions' ties, or a
    family override (which a ``ties=`` given on top does not change)."""
    if conv.ties == "expected":
        raise InputError("explain shows one ordering; ties='expected' averages a measure over "
                         "every order of the tied documents: explain with ties='optimistic', "
                         "'pessimistic' or an order (docid_desc, docid_asc, input_order)",
                         source="conventions", value="ties=expected")
    raise InputError(f"explain shows one ordering; the conventions' family_overrides give "
                     f"{family} ties='expected' (the average over every order of the tied "
                     "documents), which ties= does not change: explain it under conventions "
                     f"whose override for {family} is ties='optimistic' or 'pessimistic', or "
                     "that have none", source="conventions",
                     value=f"family_overrides: {family} ties=expected")


def _value(kind: Kind, c: Context, rows: Rows, ideal: Rows, ranking: Ranking
           ) -> tuple[float, list[str]]:
    """The kind's final value, then the ``no_relevant`` policy where the family has one."""
    value, lines = kind.finish(c, rows, ideal, ranking)
    if c.measure.spec.undefined_when == "no_relevant" and c.num_rel == 0:
        policy = c.conv.no_relevant
        value = undefined_value(policy)
        lines.append(f"no relevant document: {c.measure} = {number(value)} "
                     f"(no_relevant='{policy}'" + (", left out of the mean)" if policy == "skip"
                                                   else ")"))
    return value, lines


def _notes(kind: Kind, c: Context, ranking: Ranking) -> list[str]:
    """Short lists, unjudged documents, relevant ones never retrieved, non-positive scores and
    ties at the cutoff."""
    notes = []
    k, depth, n = c.cutoff, ranking.depth, ranking.length
    grades, scores = ranking.grades, ranking.scores
    if k is not None and n < k:
        notes.append(f"the list has {n} documents, fewer than {k}: the missing ranks add nothing"
                     + (" (P@K still divides by K)" if c.kind in ("P", "F1")
                        and c.conv.short_lists == "cutoff" else ""))
    unjudged = sum(1 for g in grades[:depth] if not g >= 0)
    if unjudged and kind.unjudged:
        verb = "is" if unjudged == 1 else "are"
        notes.append(f"{unjudged} of the {depth} documents considered {verb} unjudged (grade "
                     f"shown as -): {kind.unjudged}")
    if kind.counts_missed and c.conv.ideal == "judgments":
        found = {d for d, r in zip(ranking.docs[:depth], ranking.relevant[:depth]) if r}
        missed = c.num_rel - len(found)
        if missed > 0:
            notes.append(f"{missed} of the {c.num_rel} relevant documents (grade >= "
                         f"{shortest(c.rel)}) "
                         f"{'is' if missed == 1 else 'are'} not "
                         f"{'in the top ' + str(k) if k is not None else 'retrieved'}: "
                         "they count in R but add nothing")
    if c.conv.nonpositive_scores == "nonrelevant" and any(
            g >= c.rel and s <= 0 for g, s in zip(grades[:depth], scores[:depth])):
        notes.append("documents scored <= 0 count as non-relevant (nonpositive_scores)")
    if k is not None and n > k and scores[k - 1] == scores[k]:
        notes.append(f"the documents at ranks {k} and {k + 1} have equal scores: which of them "
                     f"count depends on the tie order (ties={c.conv.ties})")
    return notes


def _shown(rows: Rows, kind: Kind, cutoff: int | None) -> int:
    """Rows worth showing: up to the cutoff, else up to the last one that contributes."""
    if cutoff is not None:
        return len(rows)
    last = max((i for i, r in enumerate(rows) if r.get(kind.shown_by)), default=-1)
    return min(len(rows), max(last + 1, 10))
