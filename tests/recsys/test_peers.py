"""rankwise.recsys against RecBole 1.2.1, LensKit 2025.8.1 and Microsoft recommenders 1.2.1,
user by user, on shared generated data (tests/recsys/peer_data.py).

The toolkits live in their own environment (``.venv-recsys-peers``, built by
tests/recsys/peer_env.py on first use; several minutes and a few GB, hence ``slow``); their
metrics are computed there by tests/recsys/peer_metrics.py and compared here with rankwise
under each toolkit's conventions:

* RecBole (``recbole/evaluator/metrics.py``): every held-out item is relevant; Hit, MRR,
  Recall, Precision (÷K) and NDCG (binary, ideal of min(R, K) items) are trec_eval's; MAP@K
  divides by min(R, K): ``ap_denominator="min_relevant_cutoff"``.
* LensKit (``lenskit/metrics/ranking``): Precision divides by the list length when it is
  shorter than K (``short_lists="length"``), Recall by min(R, K)
  (``recall_denominator="min_relevant_cutoff"``), AveragePrecision by min(R, |L@K|). NDCG's
  default discount is 1/log2(max(rank, 2)) (ranks 1 and 2 undiscounted, Järvelin &
  Kekäläinen 2002), a convention rankwise does not have: it is compared with LensKit's own
  ``LogRankWeight(offset=1)`` = 1/log2(rank + 1), and the default is shown to differ.
* Microsoft recommenders (``recommenders/evaluation/python_evaluation.py``): precision_at_k
  ÷K, recall_at_k ÷R, map_at_k ÷min(R, K), map ÷R (within the top K), ndcg_at_k binary or
  with the rating (``raw``) or 2^rating − 1 (``exp``) as gain; means over the users in both
  inputs, except ndcg_at_k, which also averages the users with test data but no
  recommendations as 0 (``missing_queries="zero"`` for that measure only).

On ``edges`` (empty lists, lists longer than K, users with a list but no test data):
LensKit's Precision and AveragePrecision are NaN on an empty list (rankwise: 0, an empty
ranking), its other measures agree, and it measures no list without test data; Microsoft
recommenders takes frames, which hold no empty list (rankwise is given the same lists), and
its user_serendipity scores a user without test data 0 (``run_only_queries="zero"``).

Per-user values must agree to 1e-9.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import rankwise.recsys as rs
from rankwise.conventions import resolve
from tests.recsys.peer_data import make_data

pytestmark = pytest.mark.slow
HERE = os.path.dirname(os.path.abspath(__file__))
TOLERANCE = 1e-9
RECBOLE = resolve("recbole")
LENSKIT = resolve("lenskit")
MS = resolve("ms_recommenders")


@pytest.fixture(scope="module")
def peers(tmp_path_factory):
    """The data and every available toolkit's values."""
    built = subprocess.run([sys.executable, os.path.join(HERE, "peer_env.py")],
                           capture_output=True, text=True, timeout=3600)
    assert built.returncode == 0, built.stderr[-3000:]
    with open(built.stdout.strip().splitlines()[-1]) as f:
        status = json.load(f)
    folder = tmp_path_factory.mktemp("peers")
    data = make_data()
    (folder / "data.json").write_text(json.dumps(data))
    done = subprocess.run([status["python"], os.path.join(HERE, "peer_metrics.py"),
                           str(folder / "data.json"), str(folder / "out.json")],
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads((folder / "out.json").read_text())
    return data, out, status


def toolkit(peers, name: str, dataset: str) -> dict:
    data, out, status = peers
    if status["toolkits"].get(name) != "ok":
        pytest.skip(f"{name} did not install: {status['toolkits'].get(name)}")
    if name in out["unavailable"]:
        pytest.fail(f"{name} installed but cannot be imported: {out['unavailable'][name]}")
    values = out[name][dataset]
    assert "error" not in values, values.get("error")
    return values


def frames(data: dict, dataset: str, ratings: bool = False):
    d = data["datasets"][dataset]
    test = pd.DataFrame(d["test"], columns=["user", "item", "rating"])
    if not ratings:
        test = test[["user", "item"]]
    train = pd.DataFrame(d["train"], columns=["user", "item"])
    return d["recs"], test, train


def same(theirs: dict, ours: dict, label: str) -> int:
    """Assert equal per-user values on the peer's users; return how many were compared."""
    missing = sorted(set(theirs) - set(ours))
    assert not missing, f"{label}: users the peer has and rankwise not: {missing[:5]}"
    bad = [(u, v, ours[u]) for u, v in theirs.items()
           if not (math.isclose(v, ours[u], rel_tol=TOLERANCE, abs_tol=TOLERANCE)
                   or (math.isnan(v) and math.isnan(ours[u])))]
    assert not bad, f"{label}: {len(bad)} of {len(theirs)} users differ, e.g. {bad[:3]}"
    return len(theirs)


def per_user(result, measure: str) -> dict:
    return {u: row[measure] for u, row in result.per_user().items()}


def empty_lists(recs: dict) -> set:
    return {u for u, items in recs.items() if not items}


def as_frame_holds_them(recs: dict) -> dict:
    """The lists a frame of (user, item) rows holds: none empty."""
    return {u: items for u, items in recs.items() if items}


# ---------------------------------------------------------------------------- RecBole


RECBOLE_NAMES = {"hit": "Success", "mrr": "RR", "map": "AP", "recall": "R", "ndcg": "nDCG",
                 "precision": "P"}


def test_recbole_accuracy(peers):
    theirs = toolkit(peers, "recbole", "full")
    recs, test, _ = frames(peers[0], "full")
    measures = [f"{m}@{k}" for m in RECBOLE_NAMES.values() for k in (5, 10)]
    result = rs.evaluate(recs, test, measures, conventions=RECBOLE)
    compared = 0
    for name, family in RECBOLE_NAMES.items():
        for k in (5, 10):
            compared += same(theirs["per_user"][f"{name}@{k}"],
                             per_user(result, f"{family}@{k}"), f"recbole {name}@{k}")
    assert compared == 12 * 115


def test_recbole_map_is_not_trec_eval_ap(peers):
    """The convention matters on this data: MAP@10 ÷ R (trec_eval) differs for users with
    more than 10 held-out items."""
    theirs = toolkit(peers, "recbole", "full")["per_user"]["map@10"]
    recs, test, _ = frames(peers[0], "full")
    trec = per_user(rs.evaluate(recs, test, ["AP@10"]), "AP@10")
    assert sum(abs(trec[u] - v) > 1e-6 for u, v in theirs.items()) > 0


def test_recbole_beyond_accuracy(peers):
    theirs = toolkit(peers, "recbole", "full")
    data = peers[0]
    recs, test, train = frames(data, "full")
    users = theirs["global"]["users"]
    recs = {u: recs[u] for u in users}
    result = rs.evaluate(recs, test, ["ARP@10", "TailShare@10", "Coverage@10", "Gini@10",
                                      "Entropy@10"], train=train, catalog=len(data["items"]))
    same(theirs["per_user"]["averagepopularity@10"], per_user(result, "ARP@10"), "recbole ARP")
    same(theirs["per_user"]["tailpercentage@10"], per_user(result, "TailShare@10"),
         "recbole TailPercentage")
    g = theirs["global"]
    assert result.mean("Coverage@10") == pytest.approx(g["itemcoverage@10"], abs=TOLERANCE)
    assert result.mean("Gini@10") == pytest.approx(g["giniindex@10"], abs=TOLERANCE)
    # RecBole's ShannonEntropy is the entropy in nats divided by the number of distinct
    # recommended items (a mean, not the entropy): the same counts, another scale
    distinct = len({i for u in users for i in recs[u][:10]})
    assert result.mean("Entropy@10") * math.log(2) / distinct == pytest.approx(
        g["shannonentropy@10"], abs=TOLERANCE)


# ---------------------------------------------------------------------------- LensKit


LENSKIT_NAMES = {"Hit@10": "Success@10", "RecipRank@10": "RR@10", "Precision@10": "P@10",
                 "Recall@10": "R@10", "NDCG@10": "nDCG@10"}


@pytest.mark.parametrize("dataset", ["full", "ragged", "edges"])
def test_lenskit_accuracy(peers, dataset):
    theirs = toolkit(peers, "lenskit", dataset)["per_user"]
    recs, test, _ = frames(peers[0], dataset)
    result = rs.evaluate(recs, test, [*LENSKIT_NAMES.values(), "AP@10"], conventions=LENSKIT)
    empty = empty_lists(recs)
    assert len(empty) == (3 if dataset == "edges" else 0)
    for user in empty:  # LensKit: no precision of an empty list; rankwise: an empty ranking
        assert math.isnan(theirs["Precision@10"].pop(user))
        assert math.isnan(theirs["AveragePrecision@10"].pop(user))
        assert result.per_user()[user]["P@10"] == result.per_user()[user]["AP@10"] == 0.0
    assert not set(theirs["Hit@10"]) - set(test["user"])  # no list without test data
    for name, ours in LENSKIT_NAMES.items():
        same(theirs[name], per_user(result, ours), f"lenskit {name}")
    graded = rs.evaluate(recs, frames(peers[0], dataset, ratings=True)[1], ["nDCG@10"],
                         relevance="graded", conventions=LENSKIT,
                         discount="rank_plus_one")  # LogRankWeight(offset=1)
    same(theirs["NDCG@10(gain=rating,offset=1)"], per_user(graded, "nDCG@10"),
         "lenskit NDCG gain=rating")
    # AveragePrecision divides by min(R, |L@10|): min(R, K) is the same unless the list is
    # shorter than both; those users are checked against the formula
    ap = per_user(result, "AP@10")
    sizes = test.groupby("user").size()
    for user, value in theirs["AveragePrecision@10"].items():
        length, r = min(len(recs[user]), 10), int(sizes[user])
        if min(r, 10) == min(r, length):
            assert value == pytest.approx(ap[user], abs=TOLERANCE), user
        else:
            assert value == pytest.approx(ap[user] * min(r, 10) / min(r, length), abs=TOLERANCE)


def test_lenskit_default_ndcg_discount_is_jarvelins(peers):
    """LensKit's default NDCG discounts rank i by log2(max(i, 2)) (the profile's
    discount='jarvelin'); LogRankWeight(offset=1) is trec_eval's 1/log2(i + 1)."""
    theirs = toolkit(peers, "lenskit", "full")["per_user"]
    default, offset = theirs["NDCG@10"], theirs["NDCG@10(offset=1)"]
    assert sum(abs(default[u] - offset[u]) > 1e-6 for u in default) > 10
    recs, test, _ = frames(peers[0], "full")
    result = rs.evaluate(recs, test, ["nDCG@10"], conventions=LENSKIT, discount="rank_plus_one")
    same(offset, per_user(result, "nDCG@10"), "lenskit NDCG LogRankWeight(offset=1)")


def test_lenskit_gini(peers):
    data = peers[0]
    for dataset in ("full", "ragged", "edges"):
        theirs = toolkit(peers, "lenskit", dataset)["global"]["ListGini@10"]
        recs, test, _ = frames(data, dataset)
        result = rs.evaluate(recs, test, ["Gini@10"], catalog=len(data["items"]))
        # LensKit counts exposure in float32 at aggregation (np.int32 counts here: exact)
        assert result.mean("Gini@10") == pytest.approx(theirs, abs=1e-12)


# ---------------------------------------------------------------------------- Microsoft


@pytest.mark.parametrize("dataset", ["full", "ragged", "edges"])
def test_ms_recommenders_accuracy(peers, dataset):
    theirs = toolkit(peers, "ms_recommenders", dataset)
    recs, test, _ = frames(peers[0], dataset)
    recs = as_frame_holds_them(recs)
    rated = frames(peers[0], dataset, ratings=True)[1]
    ap_min = rs.evaluate(recs, test, ["P@10", "R@10", "AP@10", "nDCG@10"], conventions=MS)
    ap_r = rs.evaluate(recs, test, ["AP@10"])
    raw = rs.evaluate(recs, rated, ["nDCG@10"], relevance="graded")
    exp = rs.evaluate(recs, rated, ["nDCG@10"], relevance="graded", gain="exponential")
    pairs = {"precision_at_k@10": (ap_min, "P@10"), "recall_at_k@10": (ap_min, "R@10"),
             "map_at_k@10": (ap_min, "AP@10"), "map@10": (ap_r, "AP@10"),
             "ndcg_at_k@10": (ap_min, "nDCG@10"), "ndcg_at_k(raw)@10": (raw, "nDCG@10"),
             "ndcg_at_k(exp)@10": (exp, "nDCG@10")}
    for name, (result, measure) in pairs.items():
        same(theirs["per_user"][name], per_user(result, measure), f"ms {name}")
    # means: over the users in both inputs, except ndcg_at_k (test-only users count as 0)
    g = theirs["global"]
    for name in ("precision_at_k@10", "recall_at_k@10", "map_at_k@10", "map@10"):
        result, measure = pairs[name]
        assert result.mean(measure) == pytest.approx(g[f"{name}:mean"], abs=TOLERANCE), name
    zero = rs.evaluate(recs, test, ["nDCG@10"], missing_queries="zero")
    assert zero.mean("nDCG@10") == pytest.approx(g["ndcg_at_k@10:mean"], abs=TOLERANCE)
    assert ap_min.mean("nDCG@10") != pytest.approx(g["ndcg_at_k@10:mean"], abs=1e-6)


@pytest.mark.parametrize("dataset", ["full", "ragged", "edges"])
def test_ms_recommenders_beyond_accuracy(peers, dataset):
    theirs = toolkit(peers, "ms_recommenders", dataset)
    data = peers[0]
    recs, test, train = frames(data, dataset)
    recs = as_frame_holds_them(recs)
    features = data["datasets"][dataset]["features"]
    # user_serendipity reads the caller's relevance column: 0 for a user without test data
    result = rs.evaluate(recs, test, ["Coverage@10", "Entropy@10", "Novelty@10",
                                      "ILD(similarity=cooccurrence)@10", "ILD@10",
                                      "UnexpRel@10"], train=train, item_features=features,
                         run_only_queries="zero")
    g = theirs["global"]
    assert result.mean("Coverage@10") == pytest.approx(g["catalog_coverage"], abs=TOLERANCE)
    assert result.mean("Entropy@10") == pytest.approx(g["distributional_coverage"],
                                                      abs=TOLERANCE)
    # MS novelty is the mean over all recommended items: the mean over users weighted by
    # list length (the same as rankwise's mean over users when all lists are full)
    novelty = per_user(result, "Novelty@10")
    lengths = {u: min(len(v), 10) for u, v in recs.items()}
    weighted = sum(novelty[u] * n for u, n in lengths.items()) / sum(lengths.values())
    assert weighted == pytest.approx(g["novelty"], abs=TOLERANCE)
    same(theirs["per_user"]["user_diversity(cooccurrence)"],
         per_user(result, "ILD(similarity=cooccurrence)@10"), "ms user_diversity")
    same(theirs["per_user"]["user_diversity(features)"], per_user(result, "ILD@10"),
         "ms user_diversity features")
    same(theirs["per_user"]["user_serendipity(cooccurrence)"], per_user(result, "UnexpRel@10"),
         "ms user_serendipity")
    assert np.isfinite(list(theirs["per_user"]["user_serendipity(cooccurrence)"].values())).all()
