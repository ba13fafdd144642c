"""The ranked list of one query, as the engine ranks it (tie order, depth, unjudged documents
and duplicates as the conventions say), and the query's judgments: what every explanation
starts from."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace

import numpy as np

from ..errors import InputError


@dataclass
class Listed:
    docs: list[str]
    grades: list[float]  # NaN: unjudged
    scores: list[float]
    judged: list[tuple[str, float]]  # the query's judgments (doc, grade >= 0)
    max_grade: float  # the largest judged grade in all the judgments
    notes: list[str]


def query_lists(qrels, run, query: str, conv) -> Listed:
    """The query's ranked list under the conventions (engine order), and its judgments."""
    from ..core.arrow import take
    from ..core.judgments import index_judgments
    from ..core.ranked import rank
    from ..io.tables import doc_strings

    judged_grades = qrels.grade[qrels.grade >= 0]
    max_grade = float(judged_grades.max()) if len(judged_grades) else 0.0
    q_code, r_code = _code(qrels.query_dict, query), _code(run.query_dict, query)
    if q_code < 0 and r_code < 0 and query in run.empty_queries:
        raise InputError("query has no judgments and the run gives it no document: it is not "
                         "evaluated", source="query", value=query)
    if q_code < 0 and r_code < 0:
        known = sorted(set(qrels.query_ids()) | set(run.query_ids()))
        close = difflib.get_close_matches(query, known, n=3)
        hint = f"; closest: {', '.join(close)}" if close else ""
        raise InputError(f"query not found in the judgments or the run{hint}", source="query",
                         value=query)
    if q_code < 0 and conv.run_only_queries != "zero":
        raise InputError("query has no judgments: it is not evaluated (as in trec_eval, only "
                         "judged queries are); run_only_queries='zero' scores it as a query "
                         "without judgments", source="query", value=query)
    q_rows = np.flatnonzero(qrels.query_code == q_code) if q_code >= 0 else \
        np.zeros(0, dtype=np.int64)
    sub_qrels = replace(qrels, query_code=qrels.query_code[q_rows],
                        docs=take(qrels.docs, q_rows), grade=qrels.grade[q_rows],
                        row_lines=None if qrels.row_lines is None else qrels.row_lines[q_rows])
    judged = {}
    for doc, grade in zip(doc_strings(sub_qrels.docs), sub_qrels.grade.tolist()):
        if grade >= 0:
            judged[doc] = grade
    judgments = sorted(judged.items(), key=lambda item: (-item[1], item[0]))
    if r_code < 0:
        if query in run.empty_queries:  # given with no document ({qid: {}}): evaluated
            return Listed([], [], [], judgments, max_grade,
                          ["the run gives the query no document: an empty ranking"])
        if conv.missing_queries != "zero":
            raise InputError("query is judged but not in the run: it is ignored (trec_eval's "
                             "default); missing_queries='zero' (trec_eval -c) scores it 0",
                             source="query", value=query)
        return Listed([], [], [], judgments, max_grade,
                       ["the query is not in the run: an empty ranking (missing_queries='zero')"])
    sub_run = run.subset(np.flatnonzero(run.query_code == r_code))
    lists = rank(index_judgments(sub_qrels), sub_run, conv)
    docs = doc_strings(take(sub_run.docs, lists.run_row))
    d = lists.diagnostics
    notes = []
    if q_code < 0:
        notes.append("the query has no judgments: every document is unjudged "
                     "(run_only_queries='zero')")
    if d.rows_beyond_depth:
        notes.append(f"{d.rows_beyond_depth} documents below rank {conv.max_depth} are cut "
                     "(max_depth)")
    if d.rows_unjudged_removed:
        notes.append(f"{d.rows_unjudged_removed} unjudged documents were removed and the list "
                     "closed up (unjudged='remove')")
    if d.run_duplicates_dropped:
        notes.append(f"{d.run_duplicates_dropped} duplicate documents were dropped "
                     f"(duplicates={conv.duplicates})")
    return Listed(docs, lists.grade.tolist(), lists.score.tolist(), judgments, max_grade, notes)


def _code(dictionary, value: str) -> int:
    import pyarrow.compute as pc

    return int(pc.index(dictionary, value).as_py())


def ties_by_grade(docs, grades, scores, best_first: bool, gain=None):
    """Within each run of equal scores, higher grades first (or last); unjudged as -1; by
    gain instead for a gain map ``gain`` (unjudged and negative grades gaining 0)."""
    from ..measures.graded import gains

    group, groups = 0, []
    for i, s in enumerate(scores):
        group += i > 0 and s != scores[i - 1]
        groups.append(group)
    key = [_key(g) for g in grades] if gain is None else \
        gains(np.array(grades, dtype=float), gain).tolist()
    order = sorted(range(len(docs)), key=lambda i: (
        groups[i], -key[i] if best_first else key[i], i))
    return [docs[i] for i in order], [grades[i] for i in order], [scores[i] for i in order]


def _key(grade: float) -> float:
    return grade if grade >= 0 else -1.0
