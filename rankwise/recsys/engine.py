"""The accuracy measures of recommendation lists, through rankwise's measure layer.

:func:`ranked_lists` turns a :class:`~rankwise.recsys.inputs.Prepared` into the engine's
:class:`~rankwise.core.lists.RankedLists`. Recommendation lists are already in ranked order
and already joined with the held-out data (on integer codes), so the common case needs no
string work at all: the ranked lists are built directly from the codes (the fast path).
Where a convention needs the engine's own ranking pass (unjudged items removed, optimistic
or pessimistic ties), the lists and judgments are written out as a rankwise ``Run`` and
``Qrels`` and go through :func:`rankwise.core.ranked.rank` (the generic path). Both give the
same numbers as :func:`rankwise.evaluate` on the same lists, under every convention;
``tests/recsys`` checks that they do. (Items repeated in a list are resolved before, as the
``duplicates`` convention says: :func:`rankwise.recsys.inputs.drop_duplicates`.)
"""

from __future__ import annotations

import numpy as np

from ..conventions import Conventions
from ..core.arrow import take
from ..core.join import no_overlap, scores_one_sided_queries
from ..core.judgments import index_judgments
from ..core.lists import Diagnostics, RankedLists
from ..core.ranked import rank
from .inputs import Prepared


def needs_engine(prep: Prepared, conv: Conventions) -> bool:
    """Whether these lists must go through the engine's ranking pass (the generic path)."""
    return conv.unjudged == "remove" or (
        prep.lists.ties > 0 and conv.ties in ("optimistic", "pessimistic"))


def ranked_lists(prep: Prepared, conv: Conventions, force_engine: bool = False) -> RankedLists:
    """The evaluated users' lists as RankedLists (fast path, or the engine when needed)."""
    if not (force_engine or needs_engine(prep, conv)):
        return _fast(prep, conv)
    lists = rank(index_judgments(to_qrels(prep)), to_run(prep), conv)
    # the engine saw the lists cut at the depth, repeats dropped: what it counts on the
    # lists as given, counted here
    diag = lists.diagnostics
    diag.rows_beyond_depth, diag.rows_in_run_only_queries = _depth_counts(
        prep, _judged_users(prep, _judgments(prep)[0])[:prep.lists.num_lists], conv)
    diag.run_duplicates_dropped = prep.counts["run_duplicates_dropped"]
    diag.tied_rows = prep.tied_rows
    diag.run_rows += prep.counts["rows_beyond_depth"] + diag.run_duplicates_dropped
    diag.qrels_queries_without_judgments = prep.counts["test_users_without_items"]
    return lists


def _judged_users(prep: Prepared, user: np.ndarray) -> np.ndarray:
    """Per user code: whether the user has a judgment (``user``: the user of each)."""
    judged = np.zeros(len(prep.user_ids), dtype=bool)
    judged[user] = True
    return judged


def _depth_counts(prep: Prepared, judged_lists: np.ndarray, conv: Conventions
                  ) -> tuple[int, int]:
    """``rows_beyond_depth`` and ``rows_in_run_only_queries`` as the engine counts them on
    the lists as given (``judged_lists``: per list, whether its user has judgments): it cuts
    only the lists it evaluates at ``max_depth`` and counts the rows of lists without
    judgments as given, before any cut."""
    cut = prep.beyond_depth
    evaluated = int(cut.sum() if conv.run_only_queries == "zero" else cut[judged_lists].sum())
    return evaluated, int((prep.lists.lengths + cut)[~judged_lists].sum())


def _judgments(prep: Prepared) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(user, item, grade) of every judgment: the test data, then the imputed ratings."""
    user, item, grade = prep.test.user, prep.test.item, prep.grade
    if prep.imputed is not None and len(prep.imputed):
        user = np.concatenate([user, prep.imputed.user])
        item = np.concatenate([item, prep.imputed.item])
        grade = np.concatenate([grade, prep.imputed_grade])
    return user, item, grade


def _fast(prep: Prepared, conv: Conventions) -> RankedLists:
    """The ranked lists built from the codes, in the engine's order of queries: the lists of
    the evaluated users (with judgments; under ``run_only_queries="zero"`` those without too,
    as queries without relevant items), then the judged users given an empty list, then
    (``missing_queries="zero"``) the judged users without a list."""
    lists = prep.lists
    user, _, grade = _judgments(prep)
    n_users = len(prep.user_ids)
    judged_users = _judged_users(prep, user)
    judged_lists = judged_users[:lists.num_lists]  # the users with a list come first
    missing = lists.num_lists + np.flatnonzero(judged_users[lists.num_lists:])
    if not judged_lists.any() and not scores_one_sided_queries(conv):
        from ..errors import InputError  # as the engine: almost always the wrong file

        if len(prep.test) == 0 or lists.num_rows == 0:  # an empty side, in the engine's words
            raise no_overlap(to_qrels(prep), to_run(prep))
        raise InputError(
            f"no user in common with the test data in {prep.test.source} (users with a list "
            f"such as {_examples(prep, np.arange(lists.num_lists))[:1]}, test users such as "
            f"{_examples(prep, np.flatnonzero(judged_users))[:1]})", source=lists.source)
    run_only = ~judged_lists
    # run_only_queries="zero": their lists too, an empty one as an empty ranking
    scored = run_only if conv.run_only_queries == "zero" else np.zeros_like(run_only)
    evaluated = np.flatnonzero(judged_lists | scored)
    # the empty lists after the others, as the engine places queries given with no document
    given = lists.lengths[evaluated] > 0
    empty, evaluated = evaluated[~given], evaluated[given]

    lengths = lists.lengths[evaluated]
    if len(evaluated) == lists.num_lists:
        rows = None
    else:
        keep = np.zeros(lists.num_lists, dtype=bool)
        keep[evaluated] = True
        rows = np.flatnonzero(np.repeat(keep, lists.lengths))
    query_users = np.concatenate([evaluated, empty])
    if conv.missing_queries == "zero" and len(missing):
        query_users = np.concatenate([query_users, missing])
    lengths = np.concatenate([lengths, np.zeros(len(query_users) - len(lengths), np.int64)])
    offsets = np.zeros(len(query_users) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])

    row_grade = prep.row_grade if rows is None else prep.row_grade[rows]
    scores = lists.scores if rows is None else lists.scores[rows]
    items = lists.items if rows is None else lists.items[rows]
    levels, level_counts = _level_counts(user, grade, query_users, n_users)

    counts = prep.counts
    beyond_depth, run_only_rows = _depth_counts(prep, judged_lists, conv)
    diag = Diagnostics(
        run_rows=lists.num_rows + counts["rows_beyond_depth"] + counts["run_duplicates_dropped"],
        run_duplicates_dropped=counts["run_duplicates_dropped"],
        run_queries=int(np.count_nonzero(lists.lengths)),
        qrels_rows=len(user) + counts["test_duplicates_dropped"],
        qrels_queries=int(judged_users.sum()), queries_only_in_run=int(run_only.sum()),
        queries_only_in_run_scored=int(scored.sum()),
        queries_only_in_qrels=len(missing),
        queries_only_in_qrels_scored_zero=len(missing) if conv.missing_queries == "zero" else 0,
        rows_in_run_only_queries=run_only_rows, rows_beyond_depth=beyond_depth,
        unjudged_retrieved=len(row_grade) - int(np.count_nonzero(row_grade >= 0)),
        tied_rows=prep.tied_rows,
        qrels_duplicates_dropped=counts["test_duplicates_dropped"],
        qrels_queries_without_judgments=counts["test_users_without_items"],
        negative_grades=int(np.count_nonzero(grade < 0)), queries_empty_in_run=len(empty))
    diag.examples["queries_only_in_run"] = _examples(prep, np.flatnonzero(run_only))
    diag.examples["queries_only_in_qrels"] = _examples(prep, missing)
    ranked = RankedLists(
        query_ids=np.asarray(take(prep.user_ids, query_users).to_pylist(), dtype=object),
        offsets=offsets, grade=row_grade, score=scores, run_row=items, docs=prep.item_ids,
        levels=levels, level_counts=level_counts, conventions=conv, diagnostics=diag)
    if rows is None:  # the lists' own row structure: no need to recompute it
        ranked.__dict__["segment"] = lists.segment()
        ranked.__dict__["position"] = lists.position()
    diag.queries_evaluated = ranked.num_queries
    diag.rows_evaluated = ranked.num_rows
    diag.queries_without_relevant = int(
        (ranked.num_relevant(conv.relevance_threshold) == 0).sum())
    return ranked


def _level_counts(user: np.ndarray, grade: np.ndarray, query_users: np.ndarray, n_users: int):
    """Distinct judged grades >= 0 (over all judgments, as the engine) and, per evaluated
    user, how many judgments have each."""
    judged = grade >= 0
    levels, level = np.unique(grade[judged], return_inverse=True)
    nlev = len(levels)
    counts = np.bincount(user[judged] * nlev + level, minlength=n_users * nlev)
    return levels.astype(np.float64), counts.reshape(n_users, nlev)[query_users]


def _examples(prep: Prepared, users: np.ndarray, limit: int = 5) -> list[str]:
    chosen = users[:limit]
    if len(chosen) == 0:
        return []
    ids = sorted(take(prep.user_ids, chosen).to_pylist())
    return ids


def to_run(prep: Prepared, name: str = "run"):
    """The lists as a rankwise Run (user ids as queries, item ids as docs); users given an
    empty list are its ``empty_queries``."""
    from ..io.tables import Run

    lists = prep.lists
    given = lists.lengths > 0
    users, empty = lists.users, ()
    segment = lists.segment()
    if not given.all():  # queries are the users with items, the others given empty
        users, empty = take(lists.users, np.flatnonzero(given)), \
            tuple(take(lists.users, np.flatnonzero(~given)).to_pylist())
        segment = (np.cumsum(given) - 1)[segment]
    return Run(segment.astype(np.int32), users, take(prep.item_ids, lists.items), lists.source,
               None, "row", lists.scores, name, empty_queries=empty)


def to_qrels(prep: Prepared):
    """The judgments (test data after the relevance policy, and imputed ratings) as Qrels."""
    from ..io.tables import Qrels, encode_queries

    user, item, grade = _judgments(prep)
    code, dictionary = encode_queries(take(prep.user_ids, user))
    return Qrels(code, dictionary, take(prep.item_ids, item), prep.test.source, None,
                 "row", grade.astype(np.float64))

