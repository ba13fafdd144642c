"""``rankwise.recsys.evaluate``: recommendation lists against held-out interactions, accuracy
and beyond-accuracy measures in one call, and the recommender section of ``make demo``."""

from __future__ import annotations

import json
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..conventions import Conventions, profile, resolve
from ..core.arrow import cast, to_numpy
from ..core.memory import large_arrays
from ..errors import InputError
from ..io.frames import table_columns
from ..plain import text_ids
from ..results import Result, SystemResult
from .beyond import BeyondMeasure, Context, mean_of, parse_beyond
from .columns import check_threshold, is_missing, missing_id, one_chunk
from .inputs import Prepared, prepare
from .readers import read_interactions, read_recommendations


class RecsysResult(Result):
    """What :func:`rankwise.recsys.evaluate` returns: a :class:`rankwise.Result` whose
    ``measures`` hold the accuracy measures (per evaluated user, through rankwise's engine)
    followed by the beyond-accuracy ones.

    Per-user values cover the users evaluated (as ``rankwise.evaluate``'s ``per_query``) and,
    with a per-user beyond-accuracy measure, every user with a list: one with a list but no test
    interaction is then there with NaN accuracy values (not evaluated, as trec_eval ignores
    run-only queries; counted in the diagnostics as ``queries_only_in_run``; with accuracy
    measures only it is left out) or, with ``run_only_queries="zero"``, the values
    of a user without relevant items (``no_relevant``; counted as
    ``queries_only_in_run_scored``). A user given an empty list is an empty ranking
    (accuracy values 0, counted as ``queries_empty_in_run``; without test interactions, one
    of those above: evaluated only under ``run_only_queries="zero"``). A user with test
    data but no list is left out (counted as ``queries_only_in_qrels``) or, with
    ``missing_queries="zero"``, has accuracy values 0 and NaN beyond-accuracy values. A
    global beyond-accuracy measure (``Coverage``, ``Entropy``, ``Gini``, ``GMAE``, ``GRMSE``)
    has one value per system (``mean()``), NaN per user, and adds no user to the table.

    Attributes
    ----------
    accuracy_measures, beyond_measures : list of str
        The two groups of ``measures``.
    beyond_kinds : dict
        ``{measure: "per_user" | "global"}``.
    inputs : dict
        ``{system: counts}``: what was done to each system's input (rows, padding dropped,
        training items seen and excluded, test duplicates dropped, imputed ratings, rows
        beyond the depth, recommended items outside the catalogue, unseen in training or
        without features, and for MAE and RMSE the predictions without a test rating and the
        test ratings without a prediction).
    settings : dict
        The relevance policy, threshold, imputation, training exclusion and catalogue size.
    recsys_warnings : dict
        ``{system: [sentences]}`` about the inputs (e.g. items seen in training kept).
    not_evaluated : dict
        ``{system: [user ids]}``: the users in the per-user table that the accuracy measures
        did not evaluate (a list without test data, there for a per-user beyond-accuracy
        measure); :meth:`accuracy_result` leaves them out.
    """

    def __init__(self, measures: list[str], systems: dict[str, SystemResult],
                 conventions: Conventions, aggregate_kinds: dict[str, str],
                 beyond_kinds: dict[str, str] | None = None,
                 inputs: dict[str, dict[str, Any]] | None = None,
                 settings: dict[str, Any] | None = None,
                 recsys_warnings: dict[str, list[str]] | None = None,
                 not_evaluated: dict[str, list[str]] | None = None) -> None:
        super().__init__(measures, systems, conventions, aggregate_kinds)
        self.beyond_kinds = dict(beyond_kinds or {})
        self.beyond_measures = [m for m in measures if m in self.beyond_kinds]
        self.accuracy_measures = [m for m in measures if m not in self.beyond_kinds]
        self.inputs = dict(inputs or {})
        self.settings = dict(settings or {})
        self.recsys_warnings = dict(recsys_warnings or {})
        self.not_evaluated = {k: list(v) for k, v in (not_evaluated or {}).items()}

    def mean(self, measure: str, system: str | None = None) -> float:
        """The aggregate of an accuracy or beyond-accuracy measure for ``system``."""
        parsed = parse_beyond(measure)
        if parsed is not None:
            return self._system(system).aggregates[str(parsed)]
        return super().mean(measure, system)

    def per_user(self, system: str | None = None) -> dict[str, dict[str, float]]:
        """``{user: {measure: value}}`` (see :meth:`rankwise.Result.per_query`)."""
        return self.per_query(system)

    def accuracy_result(self) -> Result:
        """The accuracy measures alone, as a plain :class:`rankwise.Result` (for
        :func:`rankwise.compare.compare_result` and the other tools that take one): the users
        the accuracy measures evaluated, as ``rankwise.evaluate``'s ``per_query`` (one whose
        values are all NaN, e.g. under ``no_relevant="nan"``, too)."""
        systems = {}
        for name, s in self.systems.items():
            keep = ~np.isin(text_ids(s.query_ids), text_ids(self.not_evaluated.get(name, []))) \
                if self.accuracy_measures else np.zeros(len(s.query_ids), bool)
            systems[name] = SystemResult(
                name=name, aggregates={m: s.aggregates[m] for m in self.accuracy_measures},
                diagnostics=s.diagnostics, query_ids=s.query_ids[keep],
                values={m: s.values[m][keep] for m in self.accuracy_measures},
                undefined={m: v for m, v in s.undefined.items() if m in self.accuracy_measures},
                trec_names={m: s.trec_names[m] for m in self.accuracy_measures},
                warnings=s.warnings, checks=s.checks)
        return Result(list(self.accuracy_measures), systems, self.conventions,
                      {m: self.aggregate_kinds[m] for m in self.accuracy_measures})

    def to_trec(self, per_query: bool = False) -> str:
        """trec_eval's format for the accuracy measures (beyond-accuracy ones have no such name)."""
        return self.accuracy_result().to_trec(per_query)

    def to_markdown(self, digits: int = 4, per_query: bool = False) -> str:
        text = super().to_markdown(digits, per_query)
        settings = ", ".join(f"{k}={v}" for k, v in self.settings.items())
        notes = [f"Recommender settings: {settings}"] if settings else []
        for name, lines in self.recsys_warnings.items():
            notes += [f"- {name}: {line}" for line in lines]
        return text + ("\n\n" + "\n".join(notes) if notes else "")

    def to_json(self, indent: int | None = None) -> str:
        data = json.loads(super().to_json())
        data["recsys"] = {"beyond_kinds": self.beyond_kinds, "inputs": self.inputs,
                          "settings": self.settings, "warnings": self.recsys_warnings,
                          "not_evaluated": self.not_evaluated}
        return json.dumps(data, indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> RecsysResult:
        """Rebuild a RecsysResult written by :meth:`to_json`."""
        base = Result.from_json(text)
        extra = json.loads(text).get("recsys", {})
        return cls(base.measures, base.systems, base.conventions, base.aggregate_kinds,
                   extra.get("beyond_kinds"), extra.get("inputs"), extra.get("settings"),
                   extra.get("warnings"), extra.get("not_evaluated"))

    def compare_beyond(self, measures: Sequence[str] | None = None, baseline: str | None = None,
                       test: str = "randomization", correction: str = "holm",
                       alpha: float = 0.05, seed: int = 0) -> list[dict[str, Any]]:
        """Paired significance tests on per-user beyond-accuracy measures (users with a list
        in both systems), ``correction`` applied per measure. Each entry: ``measure``,
        ``system``, ``other``, ``mean_difference``, ``p_value``, ``p_value_corrected``,
        ``significant``, ``users``. (Accuracy measures: ``rankwise.compare.compare_result(
        result.accuracy_result(), ...)``.)"""
        from ..compare import _check_arguments
        from ..stats.corrections import adjust_p_values
        from ..stats.paired import paired_test

        _check_arguments(test, correction, alpha, 10_000, seed)  # paired_test's permutations
        chosen = [str(parse_beyond(m)) for m in measures] if measures is not None else \
            [m for m in self.beyond_measures if self.beyond_kinds[m] == "per_user"]
        names = list(self.systems)
        if baseline is not None and baseline not in names:
            raise InputError(f"baseline is not one of the systems ({', '.join(names)})",
                             source="baseline", value=baseline)
        pairs = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))] \
            if baseline is None else [(i, names.index(baseline)) for i in range(len(names))
                                      if names[i] != baseline]
        out = []
        for measure in chosen:
            if self.beyond_kinds.get(measure) != "per_user":
                raise InputError("significance needs a per-user measure", source="measures",
                                 value=measure)
            rows = []
            for i, j in pairs:
                a, b = self.systems[names[i]], self.systems[names[j]]
                _, ia, ib = np.intersect1d(text_ids(a.query_ids), text_ids(b.query_ids),
                                           return_indices=True)
                x, y = a.values[measure][ia], b.values[measure][ib]
                keep = ~(np.isnan(x) | np.isnan(y))
                result = paired_test(test, x[keep], y[keep], seed=seed)
                rows.append({"measure": measure, "system": names[i], "other": names[j],
                             "mean_difference": mean_of(x[keep] - y[keep]),
                             "p_value": result.p_value,
                             "users": int(keep.sum())})
            corrected = adjust_p_values([r["p_value"] for r in rows], correction) \
                if correction != "none" else [r["p_value"] for r in rows]
            for r, p in zip(rows, corrected):
                r["p_value_corrected"] = float(p)
                r["significant"] = bool(p < alpha)
            out += rows
        return out


def evaluate(recs: Any, test: Any, measures: str | Sequence[str], train: Any = None,
             item_features: Any = None, *, relevance: str = "threshold", threshold: float = 4,
             impute: str = "nonrelevant", exclude_train: bool = False,
             catalog: int | Sequence[Any] | None = None, user: str = "user", item: str = "item",
             score: str | None = "score", rank: str | None = None, rating: str | None = "rating",
             users: Any = None, pad: Any = None, conventions: Conventions | str | None = None,
             **convention_overrides: Any) -> RecsysResult:
    """Evaluate recommendation lists against held-out interactions.

    Parameters
    ----------
    recs
        One system's recommendations, or several as ``{name: recs}``: a DataFrame or Arrow
        table (``user``, ``item`` and ``score``, or ``rank=`` a rank column, or neither: each
        user's rows in list order), top-K lists ``{user: [item, ...]}``, ``{user: {item:
        score}}``, a 2-D array of item ids (one row per user, best first; ``users=`` their
        ids, default 0..n-1; ``pad=`` the value that fills short rows) or a rankwise ``Run``.
        A user given an empty list is an empty ranking (as in :func:`rankwise.evaluate`:
        accuracy 0, counted as ``queries_empty_in_run``).
    test
        Held-out interactions: a frame with ``user``, ``item`` and optionally ``rating``,
        ``{user: [items]}`` or ``{user: {item: rating}}``. Without ratings every held-out
        interaction is relevant.
    measures
        Accuracy measures in any rankwise dialect (``HR@10`` = ``Success@10``, ``P@10``,
        ``R@10``, ``F1@10``, ``RR@10``, ``AP@10``, ``nDCG@10``, ``RWRR@10``, ``ARHR@10``,
        ``MAE``, ``RMSE``) and beyond-accuracy ones (``Coverage@10``, ``Entropy@10``,
        ``Gini@10``, ``ARP@10``, ``APLT@10``, ``TailShare@10``, ``Novelty@10``, ``ILD@10``,
        ``Serendipity@10``, ``UnexpRel@10``, ``Personalization@10``; see
        :mod:`rankwise.recsys.beyond`).
    train
        Training interactions (same forms as ``test``): item popularity for ARP, APLT,
        Novelty and Serendipity, each user's history for exclusion and UnexpRel, and the
        default catalogue.
    item_features
        For ILD and similarity-based serendipity: a frame with ``item`` and numeric feature
        columns, ``{item: vector}``, or ``(item_ids, matrix)`` with a dense array or a
        scipy sparse matrix (embeddings, or binary tags for ``ILD(metric=jaccard)``).
    relevance, threshold
        How ratings become relevance: ``"threshold"`` (grade 1 if rating >= threshold),
        ``"graded"`` (the rating is the gain; binary measures count rating >= threshold as
        relevant) or ``"centered"`` (rating minus the user's mean, relevant above the mean).
        The relevance threshold of the conventions follows from these; ``threshold`` must be
        a finite number.
    impute
        Recommended items without a test rating: ``"nonrelevant"`` (unjudged), or the user's
        ``"user_mean"`` / ``"user_median"`` rating imputed (counted in ``inputs``).
    exclude_train
        Remove items the user interacted with in training from the lists (counted; the rest
        move up). When False and training data is given, such items are counted and warned
        about.
    catalog
        The item catalogue for Coverage and Gini: a positive number of items, or the item
        ids (each given once or more; a missing one, None or NaN, is refused); default the
        items of ``train``, else every item seen in any input.
    user, item, score, rank, rating
        Column names.
    conventions, **convention_overrides
        As for :func:`rankwise.evaluate` (a ``Conventions``, a profile name, field overrides
        such as ``ap_denominator="min_relevant_cutoff"``, ``max_depth=100``,
        ``run_only_queries="zero"``): every field means what it means there. The relevance
        threshold is the one ``relevance`` and ``threshold`` give (``relevance_threshold=``
        is refused).

    Returns
    -------
    RecsysResult

    Examples
    --------
    >>> import rankwise.recsys as rs
    >>> recs = {"ann": ["a", "b", "c"], "bob": ["c", "a", "d"]}
    >>> test = {"ann": {"b": 5, "d": 2}, "bob": {"a": 4}}
    >>> result = rs.evaluate(recs, test, ["P@2", "RR", "Coverage@2"], relevance="threshold")
    >>> result.per_user()["ann"]["RR"], result.mean("P@2"), result.mean("Coverage@2")
    (0.5, 0.5, 0.75)
    """
    _check_overrides(convention_overrides)
    conv = resolve(conventions, **convention_overrides)
    threshold = check_threshold(threshold)
    catalog = _check_catalog(catalog)
    names = [measures] if isinstance(measures, str) else list(measures)
    if isinstance(conventions, str):
        names = profile(conventions).measure_names(names)
    beyond_measures, accuracy_names = _split(names)
    from ..measures import parse_measures

    accuracy = parse_measures(accuracy_names) if accuracy_names else []
    _check_needs(beyond_measures, train, item_features)
    with large_arrays():  # 100M-row temporaries without page-fault storms
        test_raw = read_interactions(test, "test", user, item, rating)
        train_raw = read_interactions(train, "train", user, item, rating) \
            if train is not None else None
        if train_raw is not None and len(train_raw.users) == 0:  # popularity of nothing
            raise InputError("no training interactions: the training data holds no rows "
                             "(leave train= out)", source=train_raw.source)
        feature_items, feature_matrix = _features(item_features, item)
        settings = {"relevance": relevance, "threshold": threshold, "impute": impute,
                    "exclude_train": exclude_train}
        systems, inputs, warnings, not_evaluated = {}, {}, {}, {}
        result_conv = conv
        for name, one in _systems(recs):
            prep = prepare(read_recommendations(one, user, item, score, rank, users, pad),
                           test_raw, train_raw, feature_items, relevance, threshold, impute,
                           exclude_train, conv)  # the lists as read are freed once prepared
            sys_conv = conv.with_options(relevance_threshold=prep.relevance_threshold)
            result_conv = sys_conv
            systems[name], inputs[name], not_evaluated[name] = _system(
                name, prep, sys_conv, accuracy, beyond_measures, feature_matrix, catalog)
            warnings[name] = prep.warnings
            if "catalogue_items" in inputs[name]:
                settings["catalogue_items"] = inputs[name]["catalogue_items"]
    beyond_kinds = {str(m): "per_user" if m.spec.per_user else "global" for m in beyond_measures}
    kinds = {str(m): m.spec.aggregate for m in accuracy}
    kinds.update({m: "mean" if k == "per_user" else "global" for m, k in beyond_kinds.items()})
    return RecsysResult([str(m) for m in accuracy] + list(beyond_kinds), systems, result_conv,
                        kinds, beyond_kinds, inputs, settings,
                        {k: v for k, v in warnings.items() if v},
                        {k: v for k, v in not_evaluated.items() if v})


def _system(name: str, prep: Prepared, conv: Conventions, accuracy: list, beyond_measures: list,
            feature_matrix: Any, catalog: Any) -> tuple[SystemResult, dict[str, Any], list[str]]:
    """One system: accuracy through the engine, beyond-accuracy on the lists, merged per user;
    with the users of the merged table that the accuracy measures did not evaluate."""
    from ..api import _summarise
    from .engine import ranked_lists

    ranked = ranked_lists(prep, conv)
    acc = _summarise(name, ranked, accuracy, True)
    counts = dict(prep.counts)
    beyond_values = {}
    if beyond_measures:
        ctx = _context(prep, conv, feature_matrix, catalog)
        beyond_values = {str(m): m.compute(ctx) for m in beyond_measures}
        counts.update(ctx.notes)
        counts["catalogue_items"] = int(ctx.catalogue.sum())

    if not beyond_measures:  # accuracy only: the engine's per-user table as it is
        return acc, counts, []
    # users with a list join the evaluated ones for a per-user measure (a global one has no
    # per-user value to give them)
    per_user = any(m.spec.per_user for m in beyond_measures)
    list_users = text_ids(prep.lists.users.to_pylist()) if per_user else np.zeros(0, object)
    ids = np.union1d(text_ids(acc.query_ids), list_users)
    values: dict[str, np.ndarray] = {}
    at_acc = np.searchsorted(ids, text_ids(acc.query_ids))
    for m in acc.values:
        values[m] = np.full(len(ids), np.nan)
        values[m][at_acc] = acc.values[m]
    at_list = np.searchsorted(ids, list_users)
    aggregates = dict(acc.aggregates)
    undefined = dict(acc.undefined)
    for m, v in beyond_values.items():
        values[m] = np.full(len(ids), np.nan)
        if isinstance(v, np.ndarray):
            values[m][at_list] = v
            missing = int(np.isnan(v).sum())
            if missing:
                undefined[m] = missing
        aggregates[m] = mean_of(v)
    system = SystemResult(name=name, aggregates=aggregates, diagnostics=acc.diagnostics,
                          query_ids=np.asarray(ids, dtype=object), values=values,
                          undefined=undefined, trec_names={**acc.trec_names,
                                                           **{m: m for m in beyond_values}},
                          warnings=acc.warnings, checks=acc.checks)
    return system, counts, np.setdiff1d(list_users, text_ids(acc.query_ids)).tolist()


def _context(prep: Prepared, conv: Conventions, feature_matrix: Any, catalog: Any) -> Context:
    n_items = prep.num_items
    popularity = train_user = train_item = None
    if prep.train is not None:
        train_user, train_item = prep.train.user, prep.train.item
        popularity = np.bincount(train_item, minlength=n_items)
    catalogue = np.zeros(n_items, dtype=bool)
    if catalog is None:
        if popularity is not None:
            catalogue[popularity > 0] = True
        else:
            catalogue[:] = True
    elif isinstance(catalog, numbers.Integral):
        catalogue = _sized_catalogue(prep, int(catalog))
    else:
        import pyarrow as pa
        import pyarrow.compute as pc

        ids = pc.unique(pa.array([str(c) for c in catalog], pa.string()))
        found = pc.drop_null(pc.index_in(ids, value_set=prep.item_ids))
        at = np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.int64)
        catalogue[at] = True
        extra = len(ids) - len(at)
        catalogue = np.concatenate([catalogue, np.ones(extra, dtype=bool)]) if extra else \
            catalogue
    relevant = prep.row_grade >= conv.relevance_threshold
    judged = None  # under run_only_queries="zero" a list without test data has no relevant item
    if conv.run_only_queries != "zero":
        judged = np.zeros(prep.lists.num_lists, dtype=bool)
        judged[prep.test.user[prep.test.user < prep.lists.num_lists]] = True
    ctx = Context(prep.lists, catalogue, popularity, train_user, train_item, relevant,
                  item_ids=prep.item_ids, rating=prep.row_rating,  # type: ignore[attr-defined]
                  predicted=prep.predicted, judged=judged,
                  test_ratings=0 if prep.test.rating is None else len(prep.test))
    if popularity is not None and len(catalogue) > n_items:
        ctx.popularity = np.concatenate([popularity, np.zeros(len(catalogue) - n_items, int)])
    if feature_matrix is not None:
        ctx.features = _aligned_features(prep, feature_matrix, len(catalogue))
        ctx.with_features = np.zeros(len(catalogue), dtype=bool)
        ctx.with_features[prep.feature_codes] = True  # type: ignore[attr-defined]
    return ctx


def _check_overrides(overrides: dict[str, Any]) -> None:
    """Refuse a relevance threshold given as a convention: here the relevance policy sets
    it, and taking it silently for the policy's would evaluate another threshold."""
    if overrides.get("relevance_threshold") is not None:
        raise InputError("rankwise.recsys.evaluate sets the relevance threshold from "
                         "relevance= and threshold= (relevance='graded', threshold=2: ratings "
                         "of 2 or more are relevant)", source="relevance_threshold",
                         value=repr(overrides["relevance_threshold"]))


def _check_catalog(catalog: Any) -> int | list[Any] | None:
    """``catalog`` as a number of items, a list of item ids or None; refuse one that is
    neither a positive number of items nor item ids (a float, a boolean, a string: its
    characters are no item ids) and a missing item id (None, NaN, pandas' NA or NaT, an
    Arrow null), naming its position: it would be one more item, "nan"."""
    integral = isinstance(catalog, numbers.Integral) and not isinstance(catalog, (bool, np.bool_))
    if catalog is None or (integral and catalog >= 1):
        return catalog
    if integral or not isinstance(catalog, Iterable) or isinstance(catalog, (str, bytes)):
        raise InputError("catalog must be a positive number of items or the item ids",
                         source="catalog", value=repr(catalog))
    ids = catalog.to_pylist() if hasattr(catalog, "to_pylist") else list(catalog)  # Arrow
    if not ids:  # a catalogue of no item: every share of it undefined
        raise InputError("catalog must be a positive number of items or the item ids (it "
                         "names none)", source="catalog", value=repr(catalog))
    row = next((i for i, c in enumerate(ids) if is_missing(c)), None)
    if row is not None:
        raise missing_id("item", "catalog", row, None)
    return ids


def _sized_catalogue(prep: Prepared, size: int) -> np.ndarray:
    """A catalogue of ``size`` items: every known item plus unseen ones to make up the size."""
    n = prep.num_items
    if size < n:
        raise InputError(f"catalog has {size} items but the inputs name {n} different ones",
                         source="catalog", value=str(size))
    return np.ones(size, dtype=bool)


def _aligned_features(prep: Prepared, feature_matrix: Any, rows: int):
    """The feature matrix with one row per item code (zero rows for items without one)."""
    codes = prep.feature_codes  # type: ignore[attr-defined]
    if hasattr(feature_matrix, "tocsr"):
        import scipy.sparse as sp

        matrix = sp.csr_matrix(feature_matrix, dtype=np.float64)
        placement = sp.csr_matrix((np.ones(len(codes)), (codes, np.arange(len(codes)))),
                                  shape=(rows, len(codes)))
        return (placement @ matrix).tocsr()
    matrix = np.asarray(feature_matrix, dtype=np.float64)
    out = np.zeros((rows, matrix.shape[1]))
    out[codes] = matrix
    return out


def _features(item_features: Any, item: str) -> tuple[Any, Any]:
    """(item ids, matrix) from the accepted feature forms, every feature a finite number."""
    if item_features is None:
        return None, None
    if isinstance(item_features, tuple) and len(item_features) == 2:
        ids, matrix = item_features
        if matrix.shape[0] != len(ids):
            raise InputError(f"item_features has {matrix.shape[0]} rows for {len(ids)} items",
                             source="item_features")
        ids = np.asarray(ids) if not isinstance(ids, np.ndarray) else ids
        _check_finite(ids, matrix, lambda j: f"column {j} of the feature matrix")
        return ids, matrix
    if isinstance(item_features, Mapping):
        ids = np.asarray(list(item_features))
        try:
            matrix = np.vstack([np.asarray(v, dtype=np.float64).ravel()
                                for v in item_features.values()])
        except ValueError:
            raise InputError("every item's feature vector must have the same length",
                             source="item_features") from None
        _check_finite(ids, matrix, lambda j: f"feature {j} (0-based) of the vector")
        return ids, matrix
    names, column = table_columns(item_features, "item_features")
    if column is None:
        raise InputError("item_features must be a DataFrame or Arrow table with an item column, "
                         "{item: vector} or (item_ids, matrix)", source="item_features",
                         value=type(item_features).__name__)
    if item not in names:
        raise InputError(f"item_features has no item column {item!r} (columns: "
                         f"{', '.join(names)}); name it with item=", source="item_features")
    others = [c for c in names if c != item]
    if not others:
        raise InputError(f"item_features has no feature column besides {item!r}",
                         source="item_features")
    ids = one_chunk(column(item))
    matrix = np.column_stack([_feature_column(column(c), c) for c in others])
    _check_finite(ids, matrix, lambda j: f"feature column {others[j]!r}")
    return ids, matrix


def _feature_column(values: Any, name: str) -> np.ndarray:
    """One numeric (or boolean) feature column as float64, a missing value as NaN."""
    import pyarrow as pa

    kind = values.type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)
            or pa.types.is_boolean(kind)):
        raise InputError(f"feature column {name!r} must hold numbers", source="item_features",
                         value=str(kind))
    return to_numpy(cast(values, pa.float64()), np.float64, null=np.nan)


def _check_finite(ids: Any, matrix: Any, feature: Callable[[int], str]) -> None:
    """Refuse a NaN (missing) or infinite feature, naming its item and ``feature(j)``: it would
    make every similarity it enters NaN."""
    if hasattr(matrix, "tocoo"):  # scipy sparse: only the stored values can be bad
        stored = matrix.tocoo()
        bad = np.flatnonzero(~np.isfinite(stored.data))
        if not len(bad):
            return
        row, col, value = int(stored.row[bad[0]]), int(stored.col[bad[0]]), stored.data[bad[0]]
    else:
        dense = np.asarray(matrix, dtype=np.float64)
        bad = np.argwhere(~np.isfinite(dense))
        if not len(bad):
            return
        row, col = int(bad[0][0]), int(bad[0][1])
        value = dense[row, col]
    item = ids[row]
    if hasattr(item, "as_py"):  # an Arrow scalar
        item = item.as_py()
    elif isinstance(item, np.generic):
        item = item.item()
    raise InputError(f"{feature(col)} must be a finite number (fill in or drop missing features "
                     "first)", source="item_features", line=repr(item), unit="item",
                     value=str(value))


def _split(names: list[Any]) -> tuple[list[BeyondMeasure], list[Any]]:
    beyond_measures, accuracy = [], []
    for name in names:
        parsed = parse_beyond(name) if isinstance(name, str) else None
        if parsed is not None:
            if parsed not in beyond_measures:
                beyond_measures.append(parsed)
        else:
            accuracy.append(name)
    return beyond_measures, accuracy


def _check_needs(beyond_measures: list[BeyondMeasure], train: Any, features: Any) -> None:
    for m in beyond_measures:
        params = dict(m.params)
        if "train" in m.spec.needs and train is None:
            raise InputError(f"{m} needs the training interactions (train=...)",
                             source="measures", value=str(m))
        similarity = params.get("similarity", m.spec.params.get("similarity"))
        if "features" in m.spec.needs and similarity == "features" and features is None:
            raise InputError(f"{m} needs item features (item_features=...) or "
                             "similarity=cooccurrence with train=...", source="measures",
                             value=str(m))
        if similarity == "cooccurrence" and train is None:
            raise InputError(f"{m} needs the training interactions (train=...)",
                             source="measures", value=str(m))


def _systems(recs: Any) -> list[tuple[str, Any]]:
    """``[(name, recs)]``: a mapping of systems or one system called ``recs``."""
    if isinstance(recs, Mapping) and recs and all(_is_system(v) for v in recs.values()):
        return [(str(k), v) for k, v in recs.items()]
    return [("recs", recs)]


def _is_system(value: Any) -> bool:
    from ..io.tables import Run

    if isinstance(value, Run) or hasattr(value, "columns") or hasattr(value, "column_names"):
        return True
    if isinstance(value, np.ndarray):
        return value.ndim == 2
    if isinstance(value, Mapping):
        inner = next(iter(value.values()), None)
        return isinstance(inner, (Mapping, list, tuple, np.ndarray))
    return False


def demo_section(folder: str) -> str:
    """The recommender comparison of ``make demo``: a simulated interaction log, three
    recommenders, accuracy and beyond-accuracy measures and their significance; writes
    ``recsys-report.md`` and ``recsys-result.json`` into ``folder`` and returns the text."""
    from pathlib import Path

    from ..compare import compare_result
    from .simulate import DEMO_ACCURACY, DEMO_BEYOND, recommenders, simulate

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    log = simulate()
    recs = recommenders(log, k=10)
    result = evaluate(recs, log.test, DEMO_ACCURACY + DEMO_BEYOND, train=log.train,
                      item_features=(log.item_ids, log.features), relevance="threshold",
                      threshold=4, exclude_train=True, ap_denominator="min_relevant_cutoff")
    comparison = compare_result(result.accuracy_result(), baseline="popularity",
                                test="randomization", correction="holm",
                                measures=["nDCG@10", "AP@10"])
    beyond_tests = result.compare_beyond(["Novelty@10", "ILD@10"], baseline="popularity")
    lines = ["# Recommender comparison", "",
             f"Simulated log: {log.describe()}", "", result.to_markdown(), "",
             "## Significance against the popularity baseline (randomization test, Holm)", "",
             comparison.to_markdown(), "", "| measure | system | mean difference | p (Holm) |",
             "|---|---|---:|---:|"]
    lines += [f"| {t['measure']} | {t['system']} | {t['mean_difference']:+.4f} | "
              f"{t['p_value_corrected']:.4f} |" for t in beyond_tests]
    (folder / "recsys-report.md").write_text("\n".join(lines) + "\n")
    (folder / "recsys-result.json").write_text(result.to_json(indent=2))
    return (result.to_table() + "\n\n" + comparison.to_table() + "\n"
            + "\n".join(f"{t['measure']} {t['system']} - popularity: {t['mean_difference']:+.4f}"
                        f" (p = {t['p_value_corrected']:.4f}, Holm)" for t in beyond_tests)
            + f"\nreport written to {folder / 'recsys-report.md'}")
