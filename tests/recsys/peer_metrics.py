"""Compute RecBole's, LensKit's and Microsoft recommenders' metrics on shared data.

Run inside the peer environment (tests/recsys/peer_env.py builds it), never imported by
rankwise's tests:

    .venv-recsys-peers/bin/python tests/recsys/peer_metrics.py data.json out.json

``data.json`` (written by tests/recsys/test_peers.py): ``k``, ``items`` (the catalogue, ids
sorted), ``datasets`` ``{name: {"recs": {user: [items]}, "test": [[user, item, rating]],
"train": [[user, item]], "features": {item: [floats]}}}``. The output holds, per toolkit and
dataset, per-user values ``{metric: {user: value}}`` and global values ``{metric: value}``,
each computed by the toolkit's own code; a toolkit that cannot be imported is reported under
``"unavailable"``.

Per-user values come from each toolkit's per-user code path: RecBole's ``metric_info`` (the
matrices its ``calculate_metric`` averages and rounds to 4 decimals), LensKit's
``measure_list``, and Microsoft recommenders' public functions called on one user's rows.
"""

from __future__ import annotations

import json
import sys
import traceback


def recbole_metrics(data: dict, k: int, catalogue: list[str]) -> dict:
    import numpy as np

    if not hasattr(np, "float"):  # RecBole 1.2.1 predates numpy 1.24, which removed np.float
        np.float = float  # type: ignore[attr-defined]
    from recbole.evaluator import metrics as rb

    config = {"topk": [k], "metric_decimal_place": 4, "tail_ratio": 0.1}
    recs, test, train = data["recs"], data["test"], data["train"]
    positives: dict[str, set] = {}
    for user, item, _ in test:
        positives.setdefault(user, set()).add(item)
    users = sorted(u for u in recs if u in positives)  # RecBole evaluates test users only
    pos_index = np.zeros((len(users), k), dtype=bool)
    for row, user in enumerate(users):
        for col, item in enumerate(recs[user][:k]):
            pos_index[row, col] = item in positives[user]
    pos_len = np.array([len(positives[u]) for u in users])
    per_user = {}
    for name, cls in (("hit", rb.Hit), ("mrr", rb.MRR), ("map", rb.MAP), ("recall", rb.Recall),
                      ("ndcg", rb.NDCG), ("precision", rb.Precision)):
        metric = cls.__new__(cls)  # metric_info needs no configuration
        values = metric.metric_info(pos_index) if name in ("hit", "mrr", "precision") else \
            metric.metric_info(pos_index, pos_len)
        for cut in (k, 5):
            per_user[f"{name}@{cut}"] = {u: float(v) for u, v in zip(users, values[:, cut - 1])}
    # beyond accuracy: RecBole's internal item ids are 1.. in catalogue order (0 is padding)
    internal = {item: i + 1 for i, item in enumerate(catalogue)}
    full = [u for u in users if len(recs[u]) >= k]
    item_matrix = np.array([[internal[i] for i in recs[u][:k]] for u in full], dtype=np.int64)
    count_items: dict[int, int] = {}
    for _, item in train:
        count_items[internal[item]] = count_items.get(internal[item], 0) + 1
    popularity = rb.AveragePopularity(config)
    tail = rb.TailPercentage(config)
    pop_values = popularity.metric_info(popularity.get_pop(item_matrix, count_items))
    tail_values = tail.metric_info(tail.get_tail(item_matrix, count_items))
    per_user[f"averagepopularity@{k}"] = {u: float(v) for u, v in zip(full, pop_values[:, -1])}
    per_user[f"tailpercentage@{k}"] = {u: float(v) for u, v in zip(full, tail_values[:, -1])}
    coverage = rb.ItemCoverage(config)
    entropy = rb.ShannonEntropy(config)
    gini = rb.GiniIndex(config)
    global_values = {
        f"itemcoverage@{k}": coverage.get_coverage(item_matrix, len(catalogue)),
        f"shannonentropy@{k}": float(entropy.get_entropy(item_matrix)),
        f"giniindex@{k}": float(gini.get_gini(item_matrix, len(catalogue))),
        "users": full,
    }
    return {"per_user": per_user, "global": global_values}


def lenskit_metrics(data: dict, k: int, catalogue: list[str]) -> dict:
    import numpy as np
    import pyarrow as pa
    from lenskit.data import ItemList
    from lenskit.metrics.ranking import (NDCG, AveragePrecision, Hit, ListGini, LogRankWeight,
                                         Precision, Recall, RecipRank)

    recs, test = data["recs"], data["test"]
    truth: dict[str, dict[str, float]] = {}
    for user, item, rating in test:
        truth.setdefault(user, {})[item] = rating
    metrics = {
        f"Hit@{k}": Hit(n=k), f"RecipRank@{k}": RecipRank(n=k),
        f"AveragePrecision@{k}": AveragePrecision(n=k), f"Precision@{k}": Precision(n=k),
        f"Recall@{k}": Recall(n=k), f"NDCG@{k}": NDCG(n=k),
        f"NDCG@{k}(offset=1)": NDCG(n=k, weight=LogRankWeight(offset=1)),
        f"NDCG@{k}(gain=rating,offset=1)": NDCG(n=k, gain="rating",
                                                weight=LogRankWeight(offset=1)),
    }
    per_user: dict[str, dict[str, float]] = {name: {} for name in metrics}
    lists = []
    for user, items in recs.items():
        out = ItemList(item_ids=np.array(items), ordered=True)
        lists.append(out)
        if user not in truth:
            continue
        mine = truth[user]
        held = ItemList(item_ids=np.array(list(mine)),
                        rating=np.array(list(mine.values()), dtype=np.float64))
        for name, metric in metrics.items():
            per_user[name][user] = float(metric.measure_list(out, held))
    gini = ListGini(n=k, items=len(catalogue))
    # an empty list recommends nothing; its part (an array of another type) would make
    # global_aggregate fail ("Array chunks must all be same type")
    parts = [gini.compute_list_data(out, None) for out in lists if len(out)]
    global_values = {f"ListGini@{k}": float(gini.global_aggregate(
        [p if isinstance(p, pa.Array) else pa.array(p) for p in parts]))}
    return {"per_user": per_user, "global": global_values}


def ms_metrics(data: dict, k: int, catalogue: list[str]) -> dict:
    import warnings

    import numpy as np
    import pandas as pd
    from recommenders.evaluation import python_evaluation as ms

    warnings.simplefilter("ignore")
    recs, test, train = data["recs"], data["test"], data["train"]
    pred = pd.DataFrame([(u, i, float(len(items) - r)) for u, items in recs.items()
                         for r, i in enumerate(items)], columns=["userID", "itemID", "prediction"])
    true = pd.DataFrame(test, columns=["userID", "itemID", "rating"])
    train_df = pd.DataFrame(train, columns=["userID", "itemID"]).drop_duplicates()
    functions = {
        f"precision_at_k@{k}": lambda t, p: ms.precision_at_k(t, p, k=k),
        f"recall_at_k@{k}": lambda t, p: ms.recall_at_k(t, p, k=k),
        f"map_at_k@{k}": lambda t, p: ms.map_at_k(t, p, k=k),
        f"map@{k}": lambda t, p: ms.map(t, p, k=k),
        f"ndcg_at_k@{k}": lambda t, p: ms.ndcg_at_k(t, p, k=k),
        f"ndcg_at_k(raw)@{k}": lambda t, p: ms.ndcg_at_k(t, p, k=k, score_type="raw"),
        f"ndcg_at_k(exp)@{k}": lambda t, p: ms.ndcg_at_k(t, p, k=k, score_type="exp"),
    }
    per_user: dict[str, dict[str, float]] = {name: {} for name in functions}
    common = sorted(set(true["userID"]) & set(pred["userID"]))
    by_user_true = dict(tuple(true.groupby("userID")))
    by_user_pred = dict(tuple(pred.groupby("userID")))
    for user in common:
        for name, fn in functions.items():
            per_user[name][user] = float(fn(by_user_true[user].copy(), by_user_pred[user].copy()))
    global_values = {f"{name}:mean": float(fn(true.copy(), pred.copy()))
                     for name, fn in functions.items()}
    # beyond accuracy, on the top-k lists
    reco = pred.groupby("userID").head(k).copy()
    relevant = set(map(tuple, true[["userID", "itemID"]].to_numpy()))
    reco["relevance"] = [int((u, i) in relevant) for u, i in zip(reco["userID"], reco["itemID"])]
    features = pd.DataFrame({"itemID": list(data["features"]),
                             "features": [np.array(v) for v in data["features"].values()]})
    global_values["catalog_coverage"] = float(ms.catalog_coverage(train_df, reco))
    global_values["distributional_coverage"] = float(ms.distributional_coverage(train_df, reco))
    global_values["novelty"] = float(ms.novelty(train_df, reco))
    diversity = ms.user_diversity(train_df, reco)
    per_user["user_diversity(cooccurrence)"] = dict(zip(diversity["userID"],
                                                        map(float, diversity["user_diversity"])))
    diversity = ms.user_diversity(train_df, reco, item_feature_df=features,
                                  item_sim_measure="item_feature_vector")
    per_user["user_diversity(features)"] = dict(zip(diversity["userID"],
                                                    map(float, diversity["user_diversity"])))
    serendipity = ms.user_serendipity(train_df, reco, col_relevance="relevance")
    per_user["user_serendipity(cooccurrence)"] = dict(
        zip(serendipity["userID"], map(float, serendipity["user_serendipity"])))
    return {"per_user": per_user, "global": global_values}


TOOLKITS = {"recbole": recbole_metrics, "lenskit": lenskit_metrics, "ms_recommenders": ms_metrics}


def main(data_path: str, out_path: str) -> int:
    with open(data_path) as f:
        data = json.load(f)
    out: dict = {"unavailable": {}}
    for toolkit, compute in TOOLKITS.items():
        out[toolkit] = {}
        for name, dataset in data["datasets"].items():
            if toolkit == "recbole" and not dataset.get("full_lists", False):
                continue  # RecBole ranks the whole catalogue: its lists are never short
            try:
                out[toolkit][name] = compute(dataset, data["k"], data["items"])
            except ImportError as exc:
                out["unavailable"][toolkit] = f"{type(exc).__name__}: {exc}"
                break
            except Exception:  # noqa: BLE001  (report the peer's failure to the test)
                out[toolkit][name] = {"error": traceback.format_exc()}
    with open(out_path, "w") as f:
        json.dump(out, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
