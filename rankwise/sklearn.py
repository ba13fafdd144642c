"""rankwise measures as scikit-learn scorers (needs ``scikit-learn``).

.. code-block:: python

    from sklearn.model_selection import GroupKFold, GridSearchCV, cross_val_score
    import rankwise.sklearn

    scorer = rankwise.sklearn.make_scorer("nDCG@10", group="qid")     # a column of X
    cross_val_score(model, X, y, groups=X["qid"], cv=GroupKFold(5), scoring=scorer)
    GridSearchCV(model, grid, cv=GroupKFold(5), scoring=scorer).fit(X, y, groups=X["qid"])

A scorer sees only the test rows of a fold, so it must find their queries itself. Three ways:

* ``group="qid"`` (a column name of a DataFrame) or ``group=0`` (a column of an array): the
  query id is a feature column (drop it inside the pipeline if the model must not see it);
* ``group=qid_array``, one id per row of the *whole* data set, with ``X`` a DataFrame: the
  test rows are found by their index labels (a ``pandas.Series`` is looked up by label, an
  array by position, which needs the default ``RangeIndex``);
* ``group=None``, with scikit-learn's metadata routing: the scorer asks for ``groups``, so
  ``sklearn.set_config(enable_metadata_routing=True)`` and
  ``cross_val_score(..., params={"groups": qid})`` route the test rows' ids to it (and to
  ``GroupKFold``).

The value is that of :func:`rankwise.evaluate` on the fold's candidates (every row judged by its
label, the ideal ranking built from them) under the conventions given, trec_eval's by default;
``conventions="sklearn"`` averages over tied scores and so equals ``sklearn.metrics.ndcg_score``.
Measures where lower is better (``RMSE``) are negated, as scikit-learn's scorers are.
``sample_weight`` (equal for the rows of a query) weights the queries, as ``ndcg_score``
weights its rows; with metadata routing, ``scorer.set_score_request(sample_weight=True)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .compat.candidates import Candidates, check_measures
from .conventions import Conventions, resolve
from .errors import InputError
from .io.tables import as_floats, given_array
from .results import aggregate

__all__ = ["RankingScorer", "make_scorer"]


class RankingScorer:
    """A scikit-learn scorer ``scorer(estimator, X, y)`` computing one rankwise measure over
    the queries of the rows it is given (see :func:`make_scorer`)."""

    def __init__(self, measure: Any, group: Any, conventions: Conventions,
                 response_method: str) -> None:
        (self.measure,) = check_measures([measure])
        self.group = group
        self.conventions = conventions
        self.response_method = response_method
        self._sign = 1.0 if self.measure.spec.higher_is_better else -1.0
        self._sample_weight_request: bool | None = None

    def __repr__(self) -> str:
        changed = self.conventions.differences()
        return (f"make_scorer({str(self.measure)!r}, group={_describe(self.group)}"
                + (f", conventions={changed}" if changed else "") + ")")

    def __call__(self, estimator: Any, X: Any, y: Any, groups: Any = None,
                 sample_weight: Any = None, **kwargs: Any) -> float:
        scores = self._predict(estimator, X)
        return self.score(y, scores, self._queries(X, groups), sample_weight=sample_weight)

    def score(self, y_true: Any, y_score: Any, groups: Any, sample_weight: Any = None) -> float:
        """The measure's mean over the queries ``groups`` (one id per row), signed so that
        greater is better.

        ``sample_weight`` (one weight per row, the same for every row of a query) weights the
        queries, as ``sklearn.metrics.ndcg_score(..., sample_weight=...)`` weights its rows:
        the weighted mean over queries (weighted sum for counts).
        """
        candidates = Candidates(y_true, query=given_array(groups, "groups", GROUPS_EXPECTED),
                                conventions=self.conventions)
        if sample_weight is None:
            value = candidates.means(y_score, [self.measure])[str(self.measure)]
        else:
            weights = _query_weights(sample_weight, candidates)
            values = candidates.values(y_score, [self.measure])[str(self.measure)]
            value = aggregate(values, self.measure.spec.aggregate,
                              self.measure.skips_undefined(self.conventions), weights=weights)
        return self._sign * value

    def set_score_request(self, *, sample_weight: bool | None = None) -> RankingScorer:
        """scikit-learn metadata routing: whether ``sample_weight`` routed to scorers should
        reach this one (``True``), not (``False``), or raise (``None``, the default), as for
        scikit-learn's own scorers."""
        self._sample_weight_request = sample_weight
        return self

    def get_metadata_routing(self):
        """scikit-learn metadata routing: the scorer asks for ``groups`` when it was made with
        ``group=None``, and for ``sample_weight`` as :meth:`set_score_request` says."""
        from sklearn.utils.metadata_routing import MetadataRequest

        request = MetadataRequest(owner=type(self).__name__)
        request.score.add_request(param="groups", alias=self.group is None)
        request.score.add_request(param="sample_weight", alias=self._sample_weight_request)
        return request

    def _predict(self, estimator: Any, X: Any) -> np.ndarray:
        method = getattr(estimator, self.response_method, None)
        if method is None:
            raise InputError(f"{type(estimator).__name__} has no {self.response_method}(); "
                             "choose response_method= in make_scorer", source="estimator")
        scores = np.asarray(method(X))
        if scores.ndim == 2 and scores.shape[1] == 2:  # binary predict_proba: the positive class
            scores = scores[:, 1]
        if scores.ndim != 1:
            raise InputError(f"{self.response_method}() returned shape {scores.shape}; a ranking "
                             "needs one score per row", source="estimator")
        return scores

    def _queries(self, X: Any, routed: Any) -> np.ndarray:
        group = self.group
        if group is None:
            if routed is None:
                raise InputError(
                    "the scorer has no query ids for these rows: make it with group= (a column "
                    "of X or one id per row), or enable scikit-learn's metadata routing "
                    "(sklearn.set_config(enable_metadata_routing=True)) and pass groups "
                    "in params={'groups': ...}", source="scorer")
            return _as_ids(routed)
        if isinstance(group, (str, int, np.integer)):
            return _column(X, group)
        return _rows_of(group, X)


def make_scorer(measure: str, group: Any = None, *, conventions: Conventions | str | None = None,
                response_method: str = "predict", **overrides: Any) -> RankingScorer:
    """A scikit-learn scorer for one ranking measure, per query.

    Parameters
    ----------
    measure : str
        A measure name in any dialect: ``"nDCG@10"``, ``"AP"``, ``"ndcg_cut_10"``; with a
        profile name as ``conventions``, also that peer's (``"ndcg_score@10"`` under
        ``"sklearn"``), as :func:`rankwise.evaluate` reads them.
    group : column name, column position, array-like or None
        Where the query of each row comes from (see the module docstring).
    conventions : Conventions or profile name, optional
        trec_eval's by default (``"sklearn"``: ties averaged, as ``ndcg_score``); keyword
        overrides apply on top.
    response_method : str
        The estimator method giving the scores: ``"predict"`` (rankers, regressors),
        ``"decision_function"`` or ``"predict_proba"`` (the positive class).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> X = np.array([[0, 3.0], [0, 1.0], [0, 2.0], [1, 1.0], [1, 0.0]])  # column 0: query id
    >>> y = np.array([2, 0, 1, 1, 0])
    >>> scorer = make_scorer("nDCG@2", group=0)
    >>> scorer(LinearRegression().fit(X, y), X, y)
    1.0
    >>> scorer.score(y, [0.1, 0.3, 0.2, 0.0, 1.0], groups=X[:, 0])  # scores given directly
    0.4353711100697945
    """
    conv = resolve(conventions, **overrides)
    (parsed,) = check_measures([measure], conventions)  # a profile reads its peer's names
    return RankingScorer(parsed, _checked_group(group), conv, response_method)


def _checked_group(group: Any) -> Any:
    """``group`` as :func:`make_scorer` takes it (a column name or position, ids of the rows,
    or None); anything else raises :class:`InputError` (a boolean picked a column of X by
    numpy's boolean indexing, a float escaped as TypeError when the scorer was called)."""
    if isinstance(group, (bool, np.bool_)) or not (group is None or hasattr(group, "__len__")
                                                   or isinstance(group, (str, int, np.integer))):
        raise InputError("group must be a column name, a column position, one query id per "
                         "row of the whole data set, or None", source="group",
                         value=f"{type(group).__name__} {group!r}"[:80])
    return group


def _query_weights(sample_weight: Any, candidates: Candidates) -> np.ndarray:
    """One weight per query from one weight per row (rows of a query must agree)."""
    weights = as_floats(sample_weight, "sample_weight", "sample weight").reshape(-1)
    if len(weights) != candidates.num_rows:
        raise InputError(f"sample_weight has {len(weights)} weights for {candidates.num_rows} "
                         "rows", source="sample_weight")
    bad = np.flatnonzero(~np.isfinite(weights) | (weights < 0))
    if len(bad):
        raise InputError("sample weights must be finite and non-negative",
                         source="sample_weight", line=int(bad[0]), unit="row",
                         value=str(weights[bad[0]]))
    by_query = weights if candidates._perm is None else weights[candidates._perm]
    first = by_query[candidates.offsets[:-1]]
    differs = np.flatnonzero(np.repeat(first, np.diff(candidates.offsets)) != by_query)
    if len(differs):
        query = np.searchsorted(candidates.offsets, differs[0], side="right") - 1
        raise InputError("sample_weight must be the same for every row of a query: ranking "
                         "measures weight queries, as ndcg_score weights its rows "
                         f"(query {candidates.query_ids[query]} has several weights)",
                         source="sample_weight")
    return first


def _describe(group: Any) -> str:
    if group is None or isinstance(group, (str, int, np.integer)):
        return repr(group)
    return f"<{len(group)} query ids>"


#: What a scorer's ``groups`` must be, as its error says.
GROUPS_EXPECTED = "groups must be an array of query ids, one per row"


def _as_ids(values: Any) -> np.ndarray:
    ids = given_array(values, "group", GROUPS_EXPECTED)
    if ids.ndim != 1:
        raise InputError(f"query ids must be one per row, got shape {ids.shape}", source="group")
    return ids


def _column(X: Any, column: Any) -> np.ndarray:
    """Column ``column`` of a DataFrame (by name) or an array (by position)."""
    if hasattr(X, "columns"):  # pandas or polars
        if column not in list(X.columns):
            raise InputError(f"X has no column {column!r} (columns: "
                             f"{', '.join(map(str, X.columns))})", source="group")
        return _as_ids(X[column].to_numpy())
    if isinstance(column, str):
        raise InputError(f"group={column!r} names a column, but X is a {type(X).__name__} "
                         "without column names: give its position", source="group")
    array = np.asarray(X)
    if array.ndim != 2 or not -array.shape[1] <= column < array.shape[1]:
        raise InputError(f"X has no column {column} (shape {array.shape})", source="group")
    return array[:, column]


def _rows_of(group: Any, X: Any) -> np.ndarray:
    """The ids of the rows of ``X`` from ``group``, one id per row of the whole data set."""
    index = getattr(X, "index", None)
    if index is None:
        raise InputError(
            f"group= has {len(group)} ids for the whole data set, but a scorer only sees a "
            f"fold's rows and X (a {type(X).__name__}) does not say which: pass X as a pandas "
            "DataFrame, name a column of X as group=, or use metadata routing", source="group")
    if hasattr(group, "loc") and hasattr(group, "index"):  # a pandas Series: by label
        try:
            return _as_ids(group.loc[index].to_numpy())
        except KeyError as missing:
            raise InputError(f"rows of X not in group's index: {missing}", source="group") from None
    positions = np.asarray(index)
    ids = given_array(group, "group", GROUPS_EXPECTED)
    if positions.dtype.kind not in "iu" or len(positions) and (
            positions.min() < 0 or positions.max() >= len(ids)):
        raise InputError("X's index is not row positions into group=: give group as a pandas "
                         "Series with X's index, or name a column of X", source="group")
    return _as_ids(ids[positions])
