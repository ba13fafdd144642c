"""A deterministic simulated interaction log with popularity bias, and three simple
recommenders for it: the data of the recommender walk-through and of ``make demo``.

Items belong to one of a few genres and have a Zipf-like popularity; users prefer some
genres. Each user rates items drawn with probability proportional to popularity times their
genre affinity (so the log is biased towards popular items), with ratings 1-5 that follow the
affinity. A fifth of each user's ratings is held out as test data.

Recommenders (each returns every user's top-``k`` item ids, best first, as a 2-D array):

* ``popularity``: the most rated training items;
* ``item_knn``: Σ over the user's training items of the cosine co-occurrence similarity;
* ``genre_profile``: the user's mean rating per genre (content-based), popularity to break ties.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

DEMO_ACCURACY = ["HR@10", "P@10", "R@10", "RR@10", "AP@10", "nDCG@10", "RWRR@10"]
DEMO_BEYOND = ["Coverage@10", "Entropy@10", "Gini@10", "ARP@10", "APLT@10", "Novelty@10",
               "ILD@10", "Serendipity@10", "Personalization@10"]


@dataclass(frozen=True, eq=False)
class Log:
    """The simulated log: training and test ratings (pandas frames ``user, item, rating``),
    item ids and item features (one-hot genre), and what generated them."""

    train: Any
    test: Any
    item_ids: np.ndarray
    features: np.ndarray
    genre: np.ndarray
    users: int
    seed: int

    def describe(self) -> str:
        return (f"{self.users} users, {len(self.item_ids)} items in {self.features.shape[1]} "
                f"genres, {len(self.train)} training and {len(self.test)} test ratings "
                f"(seed {self.seed})")


def simulate(users: int = 600, items: int = 400, genres: int = 8, per_user: int = 40,
             seed: int = 20261123) -> Log:
    """Generate the log (the same numbers on every machine for a given seed)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    genre = rng.integers(0, genres, size=items)
    popularity = 1.0 / np.arange(1, items + 1) ** 0.9  # Zipf-like, item 0 most popular
    popularity = popularity[rng.permutation(items)]
    taste = rng.dirichlet(np.full(genres, 0.4), size=users)  # each user likes a few genres
    rows_user, rows_item, rows_rating = [], [], []
    for_user = np.minimum(rng.poisson(per_user, size=users) + 5, items // 2)
    weight = popularity[None, :] * (0.05 + taste[:, genre])
    weight /= weight.sum(axis=1, keepdims=True)
    # Gumbel top-k: a weighted sample without replacement for every user at once
    keys = np.log(weight) - np.log(-np.log(rng.random((users, items))))
    order = np.argsort(-keys, axis=1)
    for_rows = np.arange(items)[None, :] < for_user[:, None]
    user_of = np.repeat(np.arange(users)[:, None], items, axis=1)[for_rows]
    item_of = order[for_rows]
    affinity = taste[user_of, genre[item_of]] * genres  # ~1 on average
    rating = np.clip(np.round(2.2 + 1.3 * affinity + rng.normal(0, 0.7, len(item_of))), 1, 5)
    rows_user, rows_item, rows_rating = user_of, item_of, rating
    held_out = rng.random(len(rows_user)) < 0.2
    frame = pd.DataFrame({"user": [f"u{u:04d}" for u in rows_user],
                          "item": [f"i{i:04d}" for i in rows_item],
                          "rating": rows_rating.astype(np.float64)})
    features = np.zeros((items, genres))
    features[np.arange(items), genre] = 1.0
    return Log(frame[~held_out].reset_index(drop=True), frame[held_out].reset_index(drop=True),
               np.array([f"i{i:04d}" for i in range(items)]), features, genre, users, seed)


def recommenders(log: Log, k: int = 10, candidates: int = 60) -> dict[str, dict[str, list[str]]]:
    """Top-``candidates`` lists of the three recommenders, ``{name: {user: [items]}}``
    (items seen in training are left in: the evaluation's ``exclude_train`` removes them)."""
    import scipy.sparse as sp

    items = len(log.item_ids)
    user_ids = np.array(sorted(set(log.train["user"]) | set(log.test["user"])))
    u = np.searchsorted(user_ids, log.train["user"].to_numpy())
    i = log.train["item"].str.slice(1).astype(int).to_numpy()
    r = log.train["rating"].to_numpy()
    seen = sp.csr_matrix((np.ones(len(u)), (u, i)), shape=(len(user_ids), items))
    seen.data[:] = 1.0
    count = np.asarray(seen.sum(axis=0)).ravel()
    # popularity: the same list for everyone
    pop_score = np.tile(count, (len(user_ids), 1)) + 0.0
    # item kNN: cosine co-occurrence similarity
    norms = np.sqrt(np.maximum(count, 1))
    co = (seen.T @ seen).toarray() / norms[:, None] / norms[None, :]
    np.fill_diagonal(co, 0.0)
    knn_score = (seen @ co)
    # genre profile: mean rating per genre, items of liked genres first
    ratings = sp.csr_matrix((r, (u, i)), shape=(len(user_ids), items)).toarray()
    genre_sum = ratings @ log.features
    genre_n = seen.toarray() @ log.features
    profile = np.divide(genre_sum, genre_n, out=np.zeros_like(genre_sum), where=genre_n > 0)
    genre_score = profile @ log.features.T + 1e-3 * count / count.max()
    out = {}
    for name, score in (("popularity", pop_score), ("item_knn", knn_score),
                        ("genre_profile", genre_score)):
        top = np.argsort(-score, axis=1, kind="stable")[:, :candidates]
        out[name] = {user: list(log.item_ids[row]) for user, row in zip(user_ids, top)}
    return out
