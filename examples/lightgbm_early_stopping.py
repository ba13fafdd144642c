"""Train a small LightGBM ranker on generated data, stopping early on rankwise's nDCG@10.

    python examples/lightgbm_early_stopping.py [--queries 2000] [--seed 0]

The metric is ``rankwise.lightgbm.metric``: it reads the validation set's labels and query
groups once and only ranks the new scores every round. The run prints the round it stopped
at, then evaluates the model on held-out queries twice: under rankwise's default conventions
(trec_eval's: linear gain) and under LightGBM's own (exponential gain, ties in input order,
AP@k over min(R, k)), which is what LightGBM's built-in ``ndcg@10`` would report on queries
that have a relevant candidate.
"""

from __future__ import annotations

import argparse

import numpy as np

import rankwise
import rankwise.lightgbm

#: LightGBM's ndcg@k / map@k as rankwise conventions (see rankwise.lightgbm)
LIGHTGBM = {"gain": "exponential", "ties": "input_order", "ap_denominator": "min_relevant_cutoff"}


def make_data(queries: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, graded labels 0..4 and query sizes: 5 to 60 candidates per query, labels
    driven by two of the eight features plus noise."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(5, 61, size=queries)
    n = int(sizes.sum())
    X = rng.normal(size=(n, 8))
    signal = 1.2 * X[:, 0] + 0.6 * X[:, 1] * X[:, 2] + rng.normal(scale=1.0, size=n)
    y = np.digitize(signal, [0.5, 1.5, 2.3, 3.0]).astype(float)
    return X, y, sizes


def main(queries: int = 2000, seed: int = 0, verbose: bool = True):
    """Train with early stopping; returns (best iteration, best nDCG@10, nDCG@10 per round)."""
    import lightgbm as lgb

    split = [int(queries * 0.6), int(queries * 0.8)]
    X, y, sizes = make_data(queries, seed)
    ends = np.cumsum(sizes)
    rows = [0, ends[split[0] - 1], ends[split[1] - 1], ends[-1]]
    parts = [(X[a:b], y[a:b], s) for (a, b), s in zip(zip(rows, rows[1:]),
                                                    np.split(sizes, split))]
    (X_train, y_train, g_train), (X_valid, y_valid, g_valid), (X_test, y_test, g_test) = parts

    train = lgb.Dataset(X_train, y_train, group=g_train)
    valid = lgb.Dataset(X_valid, y_valid, group=g_valid, reference=train)
    metric = rankwise.lightgbm.metric("nDCG@10", "AP@100")
    history: dict = {}
    booster = lgb.train(
        {"objective": "lambdarank", "metric": "None", "learning_rate": 0.1, "num_leaves": 15,
         "min_data_in_leaf": 20, "verbose": -1, "seed": seed, "num_threads": 1},
        train, num_boost_round=500, valid_sets=[valid], valid_names=["valid"], feval=metric,
        callbacks=[lgb.early_stopping(20, first_metric_only=True, verbose=False),
                   lgb.record_evaluation(history)])
    rounds = history["valid"]["nDCG@10"]
    best = booster.best_iteration
    best_score = booster.best_score["valid"]["nDCG@10"]

    qrels, run = rankwise.from_arrays(y_test, booster.predict(X_test, num_iteration=best),
                                      group=g_test)
    measures = ["nDCG@10", "AP@100", "P@5", "RR"]
    default = rankwise.evaluate(qrels, run, measures)
    as_lightgbm = rankwise.evaluate(qrels, run, measures, **LIGHTGBM)
    if verbose:
        print(f"stopped after {len(rounds)} rounds; best round {best}: "
              f"validation nDCG@10 = {best_score:.4f}")
        print(f"held-out queries ({len(g_test)}), rankwise's default conventions:")
        print(default.to_table())
        print("the same, under LightGBM's conventions (exponential gain, ties in input order, "
              "AP@k over min(R, k)):")
        print(as_lightgbm.to_table())
    return best, best_score, rounds


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()
    main(arguments.queries, arguments.seed)
