"""Beyond-accuracy measures against independent references: each definition recomputed
here the slow, obvious way (loops over users, pairs and items, from the published formula)
on generated data, plus hand-computed examples and properties (bounds, extremes).

The peers' own implementations (RecBole, LensKit, Microsoft recommenders) are compared in
test_peers.py.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankwise.recsys as rs
from rankwise import InputError

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def worlds(draw):
    """Lists (distinct items, lengths 1-6), training data, tests, binary item features."""
    n_items = draw(st.integers(3, 12))
    items = [f"i{j:02d}" for j in range(n_items)]
    recs = {}
    for u in range(draw(st.integers(2, 6))):
        order = draw(st.permutations(items))
        recs[f"u{u}"] = list(order[:draw(st.integers(1, min(6, n_items)))])
    train = [(f"u{draw(st.integers(0, 7))}", items[draw(st.integers(0, n_items - 1))])
             for _ in range(draw(st.integers(1, 30)))]
    test = [(u, draw(st.sampled_from(items))) for u in recs for _ in range(draw(st.integers(1, 3)))]
    features = {i: [float(draw(st.booleans())) for _ in range(4)] for i in items}
    return recs, pd.DataFrame(train, columns=["user", "item"]), \
        pd.DataFrame(test, columns=["user", "item"]).drop_duplicates(), features, items


def top(recs, k):
    return {u: v[:k] for u, v in recs.items()}


def evaluate(world, measures, **options):
    recs, train, test, features, items = world
    return rs.evaluate(recs, test, measures, train=train, item_features=features, **options)


@SETTINGS
@given(worlds(), st.integers(1, 4))
def test_global_measures_match_their_formulas(world, k):
    recs, train, test, features, items = world
    result = evaluate(world, [f"Coverage@{k}", f"Entropy@{k}", f"Gini@{k}"])
    lists = top(recs, k)
    shown = [i for v in lists.values() for i in v]
    catalogue = set(train["item"])
    assert result.mean(f"Coverage@{k}") == pytest.approx(len(set(shown)) / len(catalogue))
    counts = {i: shown.count(i) for i in set(shown)}
    entropy = -sum(c / len(shown) * math.log2(c / len(shown)) for c in counts.values())
    assert result.mean(f"Entropy@{k}") == pytest.approx(entropy, abs=1e-12)
    # Gini as the mean absolute difference over all pairs / (2 · mean), over catalogue items
    # and recommended ones
    x = [counts.get(i, 0) for i in catalogue | set(shown)]
    n, mean = len(x), sum(x) / len(x)
    g = sum(abs(a - b) for a in x for b in x) / (2 * n * n * mean)
    assert result.mean(f"Gini@{k}") == pytest.approx(g, abs=1e-12)


@SETTINGS
@given(worlds(), st.integers(1, 4))
def test_popularity_measures_match_their_formulas(world, k):
    recs, train, test, features, items = world
    result = evaluate(world, [f"ARP@{k}", f"APLT@{k}", f"Novelty@{k}",
                              f"Novelty(model=discovery)@{k}"]).per_user()
    users_of = train.drop_duplicates().groupby("item")["user"].nunique().to_dict()
    n_users = train["user"].nunique()
    pop = train["item"].value_counts().to_dict()
    total = len(train)
    # the short head: most popular first (ties by id) until 20% of interactions are covered
    ranked = sorted(pop, key=lambda i: (-pop[i], i))
    head, covered = set(), 0
    for i in ranked:
        if covered / total >= 0.2 - 1e-12:
            break
        head.add(i)
        covered += pop[i]
    for u, items_u in top(recs, k).items():
        assert result[u][f"ARP@{k}"] == pytest.approx(np.mean([pop.get(i, 0) for i in items_u]))
        assert result[u][f"APLT@{k}"] == pytest.approx(np.mean([i not in head for i in items_u]))
        seen = [i for i in items_u if i in pop]
        expected = np.mean([-math.log2(pop[i] / total) for i in seen]) if seen else math.nan
        got = result[u][f"Novelty@{k}"]
        assert (math.isnan(expected) and math.isnan(got)) or got == pytest.approx(expected)
        # Evidently's mean inverse user frequency
        expected = np.mean([-math.log2(users_of[i] / n_users) for i in seen]) if seen \
            else math.nan
        got = result[u][f"Novelty(model=discovery)@{k}"]
        assert (math.isnan(expected) and math.isnan(got)) or got == pytest.approx(expected)


def _cosine(a, b):
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(x * x for x in b))
    return 0.0 if na == 0 or nb == 0 else sum(x * y for x, y in zip(a, b)) / (na * nb)


def _jaccard(a, b):
    a, b = {i for i, x in enumerate(a) if x}, {i for i, x in enumerate(b) if x}
    return len(a & b) / len(a | b) if a | b else 0.0


@SETTINGS
@given(worlds(), st.integers(2, 5))
def test_intra_list_diversity_matches_the_pairwise_definition(world, k):
    recs, train, test, features, items = world
    result = evaluate(world, [f"ILD@{k}", f"ILD(metric=jaccard)@{k}",
                              f"ILD(similarity=cooccurrence)@{k}"]).per_user()
    history = train.drop_duplicates().groupby("item")["user"].apply(set).to_dict()
    for u, items_u in top(recs, k).items():
        pairs = list(itertools.combinations(items_u, 2))
        for name, sim in ((f"ILD@{k}", lambda a, b: _cosine(features[a], features[b])),
                          (f"ILD(metric=jaccard)@{k}",
                           lambda a, b: _jaccard(features[a], features[b])),
                          (f"ILD(similarity=cooccurrence)@{k}",
                           lambda a, b: len(history.get(a, set()) & history.get(b, set()))
                           / math.sqrt(len(history[a]) * len(history[b]))
                           if a in history and b in history else 0.0)):
            got = result[u][name]
            if not pairs:
                assert math.isnan(got)
            else:
                assert got == pytest.approx(np.mean([1 - sim(a, b) for a, b in pairs]),
                                            abs=1e-12), name


@SETTINGS
@given(worlds(), st.integers(1, 5))
def test_personalization_matches_all_pairs_of_users(world, k):
    recs, train, test, features, items = world
    result = evaluate(world, [f"Personalization@{k}"])
    lists = {u: set(v) for u, v in top(recs, k).items()}
    users = sorted(lists)
    for u in users:
        sims = [len(lists[u] & lists[v]) / math.sqrt(len(lists[u]) * len(lists[v]))
                for v in users if v != u]
        assert result.per_user()[u][f"Personalization@{k}"] == pytest.approx(1 - np.mean(sims))
    pairs = [len(lists[a] & lists[b]) / math.sqrt(len(lists[a]) * len(lists[b]))
             for a, b in itertools.combinations(users, 2)]
    assert result.mean(f"Personalization@{k}") == pytest.approx(1 - np.mean(pairs))


@SETTINGS
@given(worlds(), st.integers(1, 5))
def test_serendipity_matches_its_definitions(world, k):
    recs, train, test, features, items = world
    result = evaluate(world, [f"Serendipity@{k}", f"UnexpRel(similarity=features)@{k}"])
    pop = train["item"].value_counts().to_dict()
    primitive = set(sorted(pop, key=lambda i: (-pop[i], i))[:k])
    relevant = set(map(tuple, test[["user", "item"]].to_numpy()))
    history = train.drop_duplicates().groupby("user")["item"].apply(list).to_dict()
    for u, items_u in top(recs, k).items():
        got = result.per_user()[u]
        expected = np.mean([(u, i) in relevant and i not in primitive for i in items_u])
        assert got[f"Serendipity@{k}"] == pytest.approx(expected)
        name = f"UnexpRel(similarity=features)@{k}"
        if u not in history:
            assert math.isnan(got[name])
            continue
        value = np.mean([(1 - np.mean([_cosine(features[i], features[j]) for j in history[u]]))
                         * ((u, i) in relevant) for i in items_u])
        assert got[name] == pytest.approx(value, abs=1e-12)


def test_extremes():
    same = {"u1": ["a", "b"], "u2": ["a", "b"]}
    different = {"u1": ["a", "b"], "u2": ["c", "d"]}
    test = {"u1": ["a"], "u2": ["c"]}
    train = pd.DataFrame({"user": ["x"] * 4, "item": ["a", "b", "c", "d"]})
    a = rs.evaluate(same, test, ["Personalization", "Gini", "Coverage", "Entropy"], train=train)
    b = rs.evaluate(different, test, ["Personalization", "Gini", "Coverage", "Entropy"],
                    train=train)
    assert a.mean("Personalization") == pytest.approx(0.0, abs=1e-15)
    assert b.mean("Personalization") == 1.0
    assert b.mean("Gini") == 0.0 and a.mean("Gini") == pytest.approx(0.5)
    assert (a.mean("Coverage"), b.mean("Coverage")) == (0.5, 1.0)
    assert (a.mean("Entropy"), b.mean("Entropy")) == (1.0, 2.0)


def test_users_differing_by_a_trailing_nul_stay_apart():
    # numpy's fixed-width strings drop a trailing NUL: 'u' and 'u\x00' were one user
    recs = {"u": ["a", "b"], "u\x00": ["c", "d"]}
    test = {"u": ["a"], "u\x00": ["d"]}
    train = pd.DataFrame({"user": ["x"] * 4, "item": ["a", "b", "c", "d"]})
    result = rs.evaluate({"s": recs, "t": {"u": ["b", "a"], "u\x00": ["d", "c"]}}, test,
                         ["RR@2", "Novelty@2"], train=train)
    assert {u: v["RR@2"] for u, v in result.per_user("s").items()} == {"u": 1.0, "u\x00": 0.5}
    (row,) = result.compare_beyond(["Novelty@2"], test="t")
    assert row["users"] == 2


def test_sparse_features_and_embeddings_give_the_same_ild():
    import scipy.sparse as sp

    ids = ["a", "b", "c", "d"]
    dense = np.array([[1.0, 0, 2], [0, 1, 0], [1, 1, 0], [0, 0, 0]])
    recs = {"u": ["a", "b", "c", "d"]}
    one = rs.evaluate(recs, {"u": ["a"]}, ["ILD"], item_features=(ids, dense)).mean("ILD")
    two = rs.evaluate(recs, {"u": ["a"]}, ["ILD"],
                      item_features=(ids, sp.csr_matrix(dense))).mean("ILD")
    frame = pd.DataFrame({"item": ids, "f0": dense[:, 0], "f1": dense[:, 1], "f2": dense[:, 2]})
    three = rs.evaluate(recs, {"u": ["a"]}, ["ILD"], item_features=frame).mean("ILD")
    sims = [_cosine(dense[i], dense[j]) for i, j in itertools.combinations(range(4), 2)]
    assert one == pytest.approx(two) == pytest.approx(three) == pytest.approx(1 - np.mean(sims))


FEATURES = pd.DataFrame({"f0": [1.0, 0.0, 1.0], "item": ["a", "b", "c"], "f1": [0, 1, 1]})
FEATURE_RECS, FEATURE_TEST = {"u": ["a", "b"], "v": ["b", "c"]}, {"u": ["a"], "v": ["c"]}


def test_item_features_from_every_kind_of_table():
    import polars as pl
    import pyarrow as pa

    # u: a = (1, 0), b = (0, 1), cosine 0; v: b and c = (1, 1), cosine 1/sqrt(2)
    by_hand = {"u": 1.0, "v": 1 - 1 / math.sqrt(2)}
    tables = {"pandas": FEATURES, "arrow": pa.Table.from_pandas(FEATURES),
              "polars": pl.from_pandas(FEATURES),
              "boolean tags": FEATURES.astype({"f0": bool, "f1": bool}),
              "dict": {"a": [1, 0], "b": [0, 1], "c": [1, 1]},
              "matrix": (["a", "b", "c"], np.array([[1.0, 0], [0, 1], [1, 1]]))}
    for name, features in tables.items():
        result = rs.evaluate(FEATURE_RECS, FEATURE_TEST, ["ILD@2", "Serendipity@2"],
                             train={"w": ["a"]}, item_features=features)
        values = {u: v["ILD@2"] for u, v in result.per_user().items()}
        assert values == pytest.approx(by_hand), name
    ids = FEATURES.assign(item=[7, 8, 9])  # integer item ids, named by another column
    result = rs.evaluate({"u": [7, 8]}, {"u": [7]}, ["ILD@2"],
                         item_features=pa.Table.from_pandas(ids.rename(columns={"item": "id"})),
                         item="id")
    assert result.mean("ILD@2") == pytest.approx(1.0)
    with pytest.raises(InputError, match="no item column 'item_id' \\(columns: f0, item, f1"):
        rs.evaluate(FEATURE_RECS, FEATURE_TEST, ["ILD@2"], item="item_id",
                    item_features=pa.Table.from_pandas(FEATURES))


@pytest.mark.parametrize("bad", [math.nan, math.inf, None])
def test_missing_or_infinite_features_are_refused_naming_the_item(bad):
    import polars as pl
    import pyarrow as pa
    import scipy.sparse as sp

    frame = FEATURES.astype({"f1": float})
    frame.loc[1, "f1"] = bad  # item b, column f1
    named = "item_features, item 'b': feature column 'f1' must be a finite number"
    forms = {"pandas": (frame, named), "arrow": (pa.Table.from_pandas(frame), named),
             "polars": (pl.from_pandas(frame, nan_to_null=False), named)}
    if bad is not None:
        vectors = {"a": [1, 0], "b": [0, bad], "c": [1, 1]}
        matrix = np.array(list(vectors.values()), dtype=float)
        forms["dict"] = vectors, "item 'b': feature 1 .0-based. of the vector must be a finite"
        forms["matrix"] = (list(vectors), matrix), "item 'b': column 1 of the feature matrix"
        forms["sparse"] = (list(vectors), sp.csr_matrix(matrix)), "item 'b': column 1"
    for name, (features, message) in forms.items():
        with pytest.raises(InputError, match=message):
            rs.evaluate(FEATURE_RECS, FEATURE_TEST, ["ILD@2"], item_features=features)


def test_catalogue_can_be_given():
    recs = {"u": ["a", "b"]}
    assert rs.evaluate(recs, {"u": ["a"]}, ["Coverage"], catalog=10).mean("Coverage") == 0.2
    result = rs.evaluate(recs, {"u": ["a"]}, ["Coverage", "Gini"], catalog=["a", "b", "c", "z"])
    assert result.mean("Coverage") == 0.5
    assert result.mean("Gini") == pytest.approx(0.5)  # counts 0, 0, 1, 1


@pytest.mark.parametrize("form", ["list", "array", "series", "arrow"])
@pytest.mark.parametrize("missing", [None, math.nan, np.float64("nan"), pd.NA, pd.NaT], ids=repr)
def test_a_missing_item_id_in_the_catalogue_is_refused_naming_its_position(missing, form):
    """It was one more catalogue item, "nan" (or "None", "<NA>", "NaT"): Coverage 0.5, not
    2/3, and Gini over an item that does not exist."""
    import pyarrow as pa

    ids = ["a", "b", "c", missing]
    catalog = {"list": ids, "array": np.array(ids, dtype=object), "series": pd.Series(ids),
               "arrow": pa.array(["a", "b", "c", None])}[form]
    with pytest.raises(InputError, match=r"^catalog, row 3: missing item id$"):
        rs.evaluate({"u": ["a", "b"]}, {"u": ["a"]}, ["Coverage", "Gini"], catalog=catalog)


def test_an_item_id_given_twice_in_the_catalogue_is_one_item():
    """An id the inputs do not name counted once per time it was given: Coverage 0.5."""
    result = rs.evaluate({"u": ["a", "b"]}, {"u": ["a"]}, ["Coverage"],
                         catalog=["a", "b", "z", "z", "a"])
    assert result.mean("Coverage") == pytest.approx(2 / 3)
    assert result.settings["catalogue_items"] == 3


@pytest.mark.parametrize("measure, message", [
    ("TailShare(ratio=nan)@2", "TailShare parameter ratio must be a finite number"),
    ("TailShare(ratio=inf)@2", "TailShare parameter ratio must be a finite number"),
    ("TailShare(ratio=0)@2", "TailShare ratio must be more than 0"),
    ("TailShare(ratio=-1)@2", "TailShare ratio must be more than 0"),
    ("APLT(head=nan)@2", "APLT parameter head must be a finite number"),
    ("Serendipity(n=nan)@2", "Serendipity parameter n must be a finite number"),
    ("Serendipity(n=-1)@2", "Serendipity parameter n must be a whole number, 0 or more"),
    ("Serendipity(n=1.5)@2", "Serendipity parameter n must be a whole number, 0 or more")])
def test_measure_parameters_out_of_range_are_refused(measure, message):
    """ratio=nan and n=1.5 crashed (ValueError, TypeError), n=-1 left the last popular item
    out of the most popular ones, ratio=-1 took the rarest item."""
    with pytest.raises(InputError, match=message):
        rs.evaluate(FEATURE_RECS, FEATURE_TEST, [measure], train={"w": ["a", "b"]})


@pytest.mark.parametrize("catalog", [3.0, math.nan, math.inf, True, 0, -1, "abc"], ids=repr)
def test_a_catalogue_that_is_neither_a_size_nor_item_ids_is_refused(catalog):
    """Floats and booleans crashed (TypeError: not iterable); a string was its characters."""
    with pytest.raises(InputError, match="^catalog: catalog must be a positive number of items "
                                         "or the item ids"):
        rs.evaluate({"u": ["a", "b"]}, {"u": ["a"]}, ["Coverage"], catalog=catalog)


@pytest.mark.parametrize("options, message", [
    ({"alpha": math.nan}, "alpha must be strictly between 0 and 1"),
    ({"alpha": 2.0}, "alpha must be strictly between 0 and 1"),
    ({"alpha": 0.0}, "alpha must be strictly between 0 and 1"),
    ({"seed": -1}, "seed must be a non-negative integer"),
    ({"seed": 1.5}, "seed must be a non-negative integer")])
def test_compare_beyond_refuses_what_rankwise_compare_refuses(options, message):
    """alpha=nan made nothing significant and alpha=2 everything; a bad seed crashed in numpy."""
    result = rs.evaluate({"a": {"u": ["a", "b"], "v": ["b"]}, "b": {"u": ["b", "a"], "v": ["a"]}},
                         {"u": ["a"], "v": ["b"]}, ["ARP@2"], train={"w": ["a", "a", "b"]})
    with pytest.raises(InputError, match=message):
        result.compare_beyond(["ARP@2"], **options)
