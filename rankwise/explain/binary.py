"""Binary families, rank by rank: P, Hits, R, F1, Success, RelP, Rprec, RprecMult, RR, ARHR,
AP, Bpref, infAP and binG. A document is relevant when its grade reaches the threshold (and,
under ``nonpositive_scores="nonrelevant"``, its score is above 0)."""

from __future__ import annotations

import math
from typing import Any

from .context import Context, Kind, Ranking, Rows, by_threshold, divide, number, shortest, within


def binary_steps(c: Context, ranking: Ranking) -> Rows:
    """One row per rank: hits so far, P@rank, and the family's contribution.

    AP: contribution = P@rank at a relevant rank (Σ / denominator). RR: 1/rank at the first
    relevant rank. ARHR: 1/rank at every relevant rank. Bpref: 1 − min(n_r, R) / min(N, R) at
    a relevant rank, n_r the judged non-relevant documents above it (unjudged ones skipped).
    infAP: at a relevant rank j + 1, 1/(j+1) + (j/(j+1))·(pooled/j)·(rel + ε)/(rel + nonrel +
    2ε) over the documents above it (pooled: those with a judgment; 1 at rank 1). binG:
    1 / log2(2 + documents not relevant above) at a relevant rank. Others: the hits.
    """
    from ..measures.inferred import EPSILON

    rows, hits, running, nonrel_above, found, pooled = [], 0, 0.0, 0, False, 0
    for i in range(ranking.depth):
        rank, g, is_rel = i + 1, ranking.grades[i], bool(ranking.relevant[i])
        hits += is_rel
        row: dict[str, Any] = {"rank": rank, "doc": ranking.docs[i], "grade": g,
                               "relevant": int(is_rel), "hits": hits, "precision": hits / rank}
        if c.kind == "AP":
            row["contribution"] = hits / rank if is_rel else 0.0
        elif c.kind == "RR":
            row["contribution"] = 1.0 / rank if is_rel and not found else 0.0
            found = found or is_rel
        elif c.kind == "ARHR":
            row["contribution"] = 1.0 / rank if is_rel else 0.0
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


def _finish(c: Context, steps: Rows, ideal: Rows, ranking: Ranking) -> tuple[float, list[str]]:
    """The final value from the step table, and the lines that show it."""
    name, k, kind, n = str(c.measure), c.cutoff, c.kind, ranking.length
    hits = steps[-1]["hits"] if steps else 0
    total = steps[-1]["running"] if steps else 0.0
    where = within(c)
    if kind == "P":
        denominator = k if c.conv.short_lists == "cutoff" else min(k, n)
        value = divide(hits, denominator)
        why = "K" if c.conv.short_lists == "cutoff" else "min(K, list length)"
        return value, [f"{name} = relevant {where} / {why} = {hits} / {denominator} = "
                       f"{number(value)}"]
    if kind == "Hits":
        return float(hits), [f"{name} = relevant {where} = {hits} (averaged over the queries)"]
    if kind == "R":
        denominator = c.num_rel if c.conv.recall_denominator == "relevant" else min(c.num_rel, k)
        value = divide(hits, denominator)
        why = "R" if c.conv.recall_denominator == "relevant" else "min(R, K)"
        return value, [f"{name} = relevant {where} / {why} = {hits} / {denominator} = "
                       f"{number(value)}"]
    if kind == "F1":
        p_den = k if c.conv.short_lists == "cutoff" else min(k, n)
        r_den = c.num_rel if c.conv.recall_denominator == "relevant" else min(c.num_rel, k)
        p, r = divide(hits, p_den), divide(hits, r_den)
        value = divide(2 * p * r, p + r)
        return value, [f"P@{k} = {hits} / {p_den} = {number(p)}; R@{k} = {hits} / {r_den} = "
                       f"{number(r)}", f"{name} = 2·P·R / (P + R) = {number(value)}"]
    if kind == "Success":
        value = 1.0 if hits > 0 else 0.0
        return value, [f"{name} = 1 if a relevant document is {where} else 0 = {number(value)}"]
    if kind == "RelP":
        denominator = min(k, c.num_rel)
        value = divide(hits, denominator)
        return value, [f"{name} = relevant {where} / min(K, R) = {hits} / {denominator} = "
                       f"{number(value)}"]
    if kind == "RprecMult":
        multiple = c.measure.cutoff
        depth = math.floor(multiple * c.num_rel + 0.9)
        at_c = steps[min(depth, len(steps)) - 1]["hits"] if depth and steps else 0
        value = divide(at_c, depth)
        m = shortest(multiple)
        return value, [f"c = floor({m}·R + 0.9) = floor({m}·{c.num_rel} + 0.9) = {depth}",
                       f"{name} = relevant in the top c / c = {at_c} / {depth} = {number(value)}"]
    if kind in ("infAP", "binG"):
        value = divide(total, c.num_rel)
        what = "estimated precision" if kind == "infAP" else "1 / log2(2 + not relevant above)"
        return value, [f"{name} = Σ {what} at relevant ranks / R = {number(total)} / "
                       f"{c.num_rel} = {number(value)}"]
    if kind == "Rprec":
        at_r = steps[min(c.num_rel, len(steps)) - 1]["hits"] if c.num_rel and steps else 0
        value = divide(at_r, c.num_rel)
        return value, [f"{name} = relevant in the top R / R = {at_r} / {c.num_rel} = "
                       f"{number(value)}"]
    if kind == "RR":
        first = next((s["rank"] for s in steps if s["contribution"] > 0), None)
        return total, [f"{name} = 1 / rank of the first relevant document = "
                       + (f"1 / {first} = {number(total)}" if first else f"0 (none {where})")]
    if kind == "ARHR":
        ranks = [s["rank"] for s in steps if s["relevant"]]
        terms = " + ".join(f"1/{r}" for r in ranks[:8]) + (" + ..." if len(ranks) > 8 else "")
        return total, [f"{name} = Σ 1 / rank over the relevant documents {where} = "
                       + (f"{terms} = {number(total)}" if ranks else f"0 (none {where})")]
    if kind == "AP":
        denominator, why = _ap_denominator(c, hits, n)
        value = divide(total, denominator)
        return value, [f"{name} = Σ P@rank at relevant ranks / {why} = {number(total)} / "
                       f"{denominator} = {number(value)}"]
    # Bpref
    value = divide(total, c.num_rel)
    return value, [f"{name} = Σ contributions / R = {number(total)} / {c.num_rel} = "
                   f"{number(value)} (R = {c.num_rel} relevant, N = {c.num_nonrel} judged "
                   "non-relevant)"]


def _ap_denominator(c: Context, hits: int, n: int) -> tuple[int, str]:
    rule, k = c.conv.ap_denominator, c.cutoff
    if rule == "relevant_retrieved":
        return hits, "relevant retrieved"
    if rule == "relevant" or (rule == "min_relevant_cutoff" and k is None):
        return c.num_rel, "R"
    if rule == "min_relevant_cutoff":
        return min(c.num_rel, k), "min(R, K)"
    return (k, "K") if k is not None else (n, "list length")


def _kind(columns: list[str], shown_by: str = "contribution", **options: Any) -> Kind:
    return Kind(columns, binary_steps, _finish, by_threshold, shown_by, **options)


_HITS = ["rank", "doc", "grade", "relevant", "hits"]
_SUMMED = ["rank", "doc", "grade", "relevant", "contribution", "running"]
KINDS = {
    "P": _kind(_HITS + ["precision"], "relevant"),
    "Hits": _kind(_HITS, "relevant"),
    "R": _kind(_HITS, "relevant"),
    "F1": _kind(_HITS + ["precision"], "relevant"),
    "Success": _kind(_HITS, "relevant"),
    "RelP": _kind(_HITS, "relevant"),
    "Rprec": _kind(_HITS + ["precision"], "relevant"),
    "RprecMult": _kind(_HITS + ["precision"], "relevant", rank_cutoff=False),
    "RR": _kind(_SUMMED),
    "ARHR": _kind(_SUMMED, counts_missed=False),
    "AP": _kind(_HITS + ["precision", "contribution", "running"]),
    "Bpref": _kind(["rank", "doc", "grade", "relevant", "nonrel_above", "contribution",
                    "running"], unjudged="bpref skips them"),
    "infAP": _kind(_HITS + ["pooled_above", "nonrel_above", "contribution", "running"]),
    "binG": _kind(["rank", "doc", "grade", "relevant", "not_relevant_above", "contribution",
                   "running"]),
}
#: Family -> kind, for the families explained here.
FAMILIES = {"P": "P", "Hits": "Hits", "R": "R", "F1": "F1", "Success": "Success",
            "RelP": "RelP", "Rprec": "Rprec", "RprecMult": "RprecMult", "RR": "RR", "ARHR": "ARHR",
            "AP": "AP", "gm_map": "AP", "Bpref": "Bpref", "gm_bpref": "Bpref", "infAP": "infAP",
            "binG": "binG"}
