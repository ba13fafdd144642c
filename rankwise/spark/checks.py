"""The diagnostic checks of a Spark evaluation: those of each chunk, merged into one list.

Each chunk runs :func:`rankwise.diagnostics.run_checks` on its own queries, as the in-memory
engine runs it on all of them. With a single chunk (every input Spark estimates under 64 MiB
and ``chunk_rows`` rows) the checks, and so the warnings, are the in-memory engine's word for
word. With several, the checks of one kind (code and measures) are merged:

* severity: the most serious any chunk found (a warning, else a note, else ok; an "ok" of a
  check that found something elsewhere, on the same measures or as a whole, is dropped);
* ``queries`` add up, ``total`` is every evaluated query, the examples are the first five in
  input order, ``value`` is kept where every chunk measured the same;
* message: kept when it holds no number or is an "ok"; else with its counts of queries ("N of
  M queries", "N queries", "N of them") added up, M the number of queries evaluated (a lone
  "N queries" is a count where N is the check's ``queries``), and any other figure
  that differs between chunks (a mean over a chunk's queries) shown as the
  range it takes, the message then saying so; where some chunks word a check more fully
  (ties_at_cutoff's tied documents that differ in grade, no_relevant's mean over the
  other queries) that wording, counting every chunk's queries; a message otherwise worded
  differently in different chunks is that of the first, marked "(in part of the data)".

The merged checks come in :func:`rankwise.diagnostics.run_checks`' order
(:data:`rankwise.diagnostics.CHECK_ORDER`); those of one code in an order that keeps each
chunk's, and several of one kind in the order in which their first example query appears
in the input. Checks of a mean over all queries cannot be made
from per-chunk results: ``carried_by_few``
(the share of queries carrying half the total), ``tie_sensitivity`` (whether the mean moves
under another tie order) and the severity of ``judged_at_k`` (a warning when Judged@K is
below 0.5) describe, with several chunks, the chunks that raised them (the most serious
severity wins), and ``carried_by_few`` is absent where every chunk is too small to check.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..diagnostics import CHECK_ORDER
from .partition import EXAMPLES

_SEVERITY = {"warning": 0, "note": 1, "ok": 2}
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_PART = " (in part of the data)"
_RANGES = " (ranges: the figure differs between parts of the data)"


def merge_checks(chunks: list[list[dict[str, Any]]], total: int) -> list[dict[str, Any]]:
    """One list of checks (as dicts) from those of several chunks; ``total``: queries evaluated.

    >>> a = [{"code": "short_lists", "severity": "warning", "measures": ["P@10"], "queries": 2,
    ...       "total": 5, "examples": ["q1"], "_first": [1], "value": None,
    ...       "message": "P@10: 2 of 5 queries retrieved fewer than 10 documents"}]
    >>> b = [{**a[0], "queries": 1, "total": 4, "examples": ["q0"], "_first": [0],
    ...       "message": "P@10: 1 of 4 queries retrieved fewer than 10 documents"}]
    >>> merged = merge_checks([a, b], 9)[0]
    >>> merged["message"], merged["queries"], merged["total"], merged["examples"]
    ('P@10: 3 of 9 queries retrieved fewer than 10 documents', 3, 9, ['q0', 'q1'])
    """
    if len(chunks) == 1:
        return [_public(c) for c in chunks[0]]
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for found in chunks:
        for check in found:
            groups.setdefault((check["code"], tuple(check.get("measures", ()))), []).append(check)
    found: dict[str, list[set[str]]] = {}  # per code, the measures of what chunks found
    for (code, measures), checks in groups.items():
        if any(c["severity"] != "ok" for c in checks):
            found.setdefault(code, []).append(set(measures))
    out = []
    # in run_checks' order (a chunk without evaluated queries lacks some codes: the order of
    # the groups as met could put its checks first), and within a code in the chunks' order
    within = _merged_order([[(c["code"], tuple(c.get("measures", ()))) for c in found]
                            for found in chunks])
    for (code, measures), checks in sorted(groups.items(), key=lambda g: (
            CHECK_ORDER.index(g[0][0]), within[g[0]])):
        if all(c["severity"] == "ok" for c in checks) and _found_elsewhere(
                set(measures), found.get(code, [])):
            continue  # "nothing found" by some chunks, while others found something
        serious, others, counted = _serious(code, checks)
        by_shape: dict[str, list[dict[str, Any]]] = {}
        for check in serious:
            by_shape.setdefault(_NUMBER.sub("#", check["message"]), []).append(check)
        for same in sorted(by_shape.values(), key=_first_example):
            out += _merge(same, len(chunks), total, others, counted)
    return out


#: Checks whose message a chunk can word more fully than another: the words of the fuller
#: one, and whether the queries of the other count in the check's ``queries``.
_FULLER = {"ties_at_cutoff": (" of them the tied documents differ in grade", False),
           "no_relevant": ("; the mean over the other queries: ", True),
           "idcg_zero": ("; the mean over the other queries: ", True)}


def _serious(code: str, checks: list[dict[str, Any]]
             ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], bool]:
    """The checks of one kind to merge (those of the most serious severity), the checks
    whose queries the merged message's first count adds, and whether they add to its
    ``queries`` and examples too.

    Where some chunks word a check more fully (:data:`_FULLER`) those checks are merged, the
    first count adding the other chunks' queries, as memory counts them: ties_at_cutoff's
    "ties straddle rank K in N of M queries; in n of them the tied documents differ in
    grade" (a warning under an ordering tie policy) counts in N the chunks whose tied
    documents have equal grades; no_relevant's and idcg_zero's "N of M queries ...; the mean
    over the other queries" the chunks without other queries."""
    words, counted = _FULLER.get(code, (None, False))
    fuller = [c for c in checks if words is not None and words in c["message"]]
    if fuller:
        return fuller, [c for c in checks
                        if c["severity"] != "ok" and words not in c["message"]], counted
    worst = min(_SEVERITY[c["severity"]] for c in checks)
    return [c for c in checks if _SEVERITY[c["severity"]] == worst], [], False


def _merged_order(orders: list[list[tuple]]) -> dict[tuple, int]:
    """One order of the keys of several lists that keeps the order of every list (a key
    placed before another in some list stays before it), else the order of first appearance;
    each chunk's checks are in run_checks' order, a chunk holding only some of them:
    short_lists' note on nDCG@10 where P@5's lists are long enough, then its warning on P@5
    before the note in another chunk, as in memory."""
    first: dict[tuple, int] = {}
    after: dict[tuple, set[tuple]] = {}
    for keys in orders:
        for i, key in enumerate(keys):
            first.setdefault(key, len(first))
            after.setdefault(key, set()).update(k for k in keys[i + 1:] if k != key)
    before = {key: {k for k in first if key in after[k]} for key in first}
    placed: dict[tuple, int] = {}
    while len(placed) < len(first):
        free = [k for k in first if k not in placed and before[k] <= placed.keys()]
        key = min(free or [k for k in first if k not in placed], key=first.__getitem__)
        placed[key] = len(placed)  # (no free key: lists that disagree, in first appearance)
    return placed


def _found_elsewhere(measures: set[str], found: list[set[str]]) -> bool:
    """Whether an "ok" of a check on ``measures`` (none: the evaluation as a whole, as
    short_lists' "every list is at least as long as each cutoff") is contradicted by what
    chunks found on them (``found``: the measures of each finding of the check). An "ok" of
    other measures stands, as in memory: ties_at_cutoff's "no tie straddles rank 3" beside
    its warning at rank 5."""
    return any(not measures or measures & other for other in found)


def _first_example(checks: list[dict[str, Any]]) -> int:
    """Where the first example query of checks of one kind and wording first appeared (-1
    for none: their order of appearance then stands), so that checks of one kind come in
    the in-memory engine's order: one_side's note on queries only in the run (run rows)
    before the one on queries only in the judgments (placed after every run row), even
    where a chunk holds only the latter."""
    return min((r for c in checks for r in c.get("_first", ())), default=-1)


def _merge(checks: list[dict[str, Any]], chunks: int, total: int,
           others: Sequence[dict[str, Any]] = (), counted: bool = False
           ) -> list[dict[str, Any]]:
    """Checks of one kind, severity and wording (numbers aside) into one, or one per chunk
    (``others``: checks whose queries the message's first count adds, and ``queries`` and
    the examples where ``counted``; see :func:`_serious`)."""
    first = checks[0]
    extra = sum(int(c.get("queries", 0)) for c in others)
    placed = sorted((r, q) for c in [*checks, *(others if counted else ())]
                    for r, q in zip(c.get("_first", []), c.get("examples", [])))
    examples = list(dict.fromkeys(q for _, q in placed))[:EXAMPLES]
    values = {c.get("value") for c in checks}
    queries = sum(int(c.get("queries", 0)) for c in checks) + (extra if counted else 0)
    merged = {**_public(first), "queries": queries,
              "total": total if any(c.get("total") or c.get("queries") for c in checks) else 0,
              "examples": examples,
              "value": values.pop() if len(values) == 1 else None}
    messages = {c["message"] for c in checks}
    if len(messages) == 1 and (first["severity"] == "ok"
                               or not _NUMBER.search(first["message"])):
        return [merged]
    return [{**merged, "message": _combined_message(checks, total, extra)}]


def _combined_message(checks: list[dict[str, Any]], total: int, extra: int = 0) -> str:
    """The common message with its query counts added up (M in "N of M queries" becomes the
    queries evaluated; ``extra`` added to the first count) and any other number that differs
    between chunks shown as a range."""
    parsed = [_numbers(c["message"], int(c.get("total", -1)), int(c.get("queries", -1)))
              for c in checks]
    text = checks[0]["message"]
    if any([k for _, _, k, _ in p] != [k for _, _, k, _ in parsed[0]] for p in parsed):
        return text + _PART  # worded differently beyond the numbers: one chunk's words
    ranged = False
    first_count = next((i for i, p in enumerate(parsed[0]) if p[2] == "count"), None)
    for i in range(len(parsed[0]) - 1, -1, -1):
        start, end, kind, _ = parsed[0][i]
        if kind == "count":
            shown = str(sum(int(p[i][3]) for p in parsed) + (extra if i == first_count else 0))
        elif kind == "total":
            shown = str(total)
        else:
            seen = sorted({p[i][3] for p in parsed}, key=float)
            if len(seen) == 1:
                continue
            shown, ranged = f"{seen[0]}–{seen[-1]}", True
        text = text[:start] + shown + text[end:]
    return text + (_RANGES if ranged else "")


def _numbers(text: str, total: int, queries: int) -> list[tuple[int, int, str, str]]:
    """Every number of a message: (start, end, kind, text); kind ``count`` (a number of
    queries: the check's ``queries`` where "N queries" could be either), ``total`` (the
    queries evaluated in the chunk) or ``other``."""
    out = []
    for m in _NUMBER.finditer(text):
        after, before = text[m.end():], text[:m.start()]
        kind = "other"
        if "." not in m.group():
            if re.match(r" of \d+ queries\b| of them\b", after):
                kind = "count"
            elif re.match(r" (?:judged )?queries\b", after):
                kind = "total" if before.endswith((" of ", "the ")) \
                    or int(m.group()) == total != queries else "count"
        out.append((m.start(), m.end(), kind, m.group()))
    return out


def _public(check: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in check.items() if not k.startswith("_")}
