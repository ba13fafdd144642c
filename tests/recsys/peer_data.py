"""Shared generated data for the differential tests against the recommender toolkits.

Deterministic for a seed: a catalogue with Zipf-like popularity, training interactions drawn
by popularity, held-out items (rated 1-5) that the user did not see in training, and
recommendation lists with no tied scores made of items seen in training (so that every peer
defines every measure). Three datasets: ``full`` (every list has K items, as RecBole's
full-catalogue ranking always does), ``ragged`` (lists of 3 to K items) and ``edges``
(``ragged`` with three users given an empty list, four given lists longer than K, and
three users with a list and a training history but no test data). A few users have test
items but no list, to show how each peer counts them.
"""

from __future__ import annotations

import numpy as np


def make_data(seed: int = 7, users: int = 120, items: int = 150, k: int = 10) -> dict:
    rng = np.random.default_rng(seed)
    catalogue = [f"i{j:03d}" for j in range(items)]
    weight = 1.0 / np.arange(1, items + 1) ** 0.8
    weight /= weight.sum()
    user_ids = [f"u{u:03d}" for u in range(users)]
    train, test, seen_items = [], [], set()
    history = {}
    for user in user_ids:
        n = int(rng.integers(4, 25))
        picked = rng.choice(items, size=n, replace=False, p=weight)
        history[user] = set(int(i) for i in picked)
        train += [[user, catalogue[i]] for i in picked]
        seen_items |= history[user]
    for user in user_ids:
        unseen = np.array([i for i in range(items) if i not in history[user]])
        n = int(rng.integers(1, 15))
        picked = rng.choice(unseen, size=n, replace=False)
        test += [[user, catalogue[i], float(rng.integers(1, 6))] for i in picked]
    pool = np.array(sorted(seen_items))
    full, ragged = {}, {}
    listed = user_ids[:-5]  # the last five users have test data but no list
    for user in listed:
        candidates = np.array([i for i in pool if i not in history[user]])
        held = {t[1] for t in test if t[0] == user}
        # lists that find some held-out items: a noisy preference for them
        score = rng.random(len(candidates)) + np.array(
            [0.6 if catalogue[i] in held else 0.0 for i in candidates])
        top = candidates[np.argsort(-score, kind="stable")[:k]]
        full[user] = [catalogue[i] for i in top]
        ragged[user] = full[user][:int(rng.integers(3, k + 1))]
    features = {item: [float(x) for x in rng.random(6)] for item in catalogue}
    edges, edge_train = _edges(listed, full, ragged, history, pool, catalogue, k)
    datasets = {
        "full": {"recs": full, "test": test, "train": train, "features": features,
                 "full_lists": True},
        "ragged": {"recs": ragged, "test": test, "train": train, "features": features,
                   "full_lists": False},
        "edges": {"recs": edges, "test": test, "train": train + edge_train,
                  "features": features, "full_lists": False},
    }
    return {"k": k, "items": catalogue, "datasets": datasets}


def _edges(listed: list, full: dict, ragged: dict, history: dict, pool, catalogue: list,
           k: int) -> tuple[dict, list]:
    """``ragged`` with edges (no random draw: the other datasets stay as they are): the first
    three users' lists empty, the next four's longer than K (their full list, then five more
    unseen items), and three users with a list (another user's) and a training history but
    no test data; with the training rows of those three."""
    edges = dict(ragged)
    for user in listed[:3]:
        edges[user] = []
    for user in listed[3:7]:
        more = [catalogue[i] for i in pool if i not in history[user]
                and catalogue[i] not in full[user]]
        edges[user] = full[user] + more[:5]
    edge_train = []
    for j, user in enumerate(listed[7:10]):
        edges[f"x{j:03d}"] = full[user]
        edge_train += [[f"x{j:03d}", catalogue[i]] for i in sorted(history[user])]
    return edges, edge_train
