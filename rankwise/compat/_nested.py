"""Dict-of-dicts ``{query: {doc: value}}`` to a :class:`~rankwise.io.Run` or
:class:`~rankwise.io.Qrels`, fast.

pytrec_eval converts such dicts in C++; the general reader (:func:`rankwise.to_run`) checks
every value in a Python loop, which takes longer than pytrec_eval's whole evaluation. Here
the columns are built with a few C-level passes (``itertools.chain``, ``np.array``); anything
unusual (ids that are not strings, values that are not numbers) goes to the general reader,
which accepts what it can and raises :class:`~rankwise.InputError` naming the key otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..io.nested import nested_columns


def nested_run(run: Mapping[str, Mapping[str, float]], name: str = "run"):
    """A :class:`~rankwise.io.Run` from ``{query: {doc: score}}``, rows in dict order.

    >>> run = nested_run({"q1": {"a": 2.0, "b": 1}, "q2": {}, "q3": {"c": 0.5}})
    >>> run.query_ids(), run.score.tolist(), len(run)
    (['q1', 'q3'], [2.0, 1.0, 0.5], 3)
    """
    from ..io import to_run
    from ..io.tables import Run, check_finite_scores

    columns = nested_columns(run)
    if columns is None:
        return to_run(run, name=name)
    codes, query_dict, docs, values = columns
    out = Run(codes, query_dict, docs, "run dict", None, "key", values, name)
    check_finite_scores(out)
    return out


def nested_qrels(qrels: Mapping[str, Mapping[str, float]]):
    """A :class:`~rankwise.io.Qrels` from ``{query: {doc: grade}}``, rows in dict order.

    >>> nested_qrels({"q1": {"a": 1, "b": 0}}).grade.tolist()
    [1.0, 0.0]
    """
    from ..io import to_qrels
    from ..io.tables import Qrels, check_grades

    columns = nested_columns(qrels)
    if columns is None:
        return to_qrels(qrels)
    codes, query_dict, docs, values = columns
    return check_grades(Qrels(codes, query_dict, docs, "qrels dict", None, "key", values))
