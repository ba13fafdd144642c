"""Metamorphic relations of every measure family under every value of every convention.

Each test is parametrised by one convention setting (:data:`SETTINGS`: trec_eval's defaults
and every other value of every field, one at a time) and checks, on a few seeded random
collections (ties, duplicated rows where the setting keeps one, unjudged documents, grades
-1 to 3, empty rankings, queries only in the run or only in the judgments), relations a correct
evaluator satisfies whatever it computes: renaming and reordering the input changes nothing,
nor does a strictly increasing transform of the scores, nor documents appended below a cutoff;
queries evaluated apart equal queries together; values stay in their documented range; a
threshold or a gain map equals the judgments rewritten by hand; a family override equals the
whole evaluation under that value. Where a setting makes a relation fail by design (ties in
input order and row order, say), the test leaves that relation out, as docs/conventions.md
says.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import rankwise
from rankwise.conventions import CHOICES
from rankwise.measures import FAMILIES, parse_measure
from rankwise.measures.registry import make_measure

TOLERANCE = 1e-12
COLLECTIONS = 4  # per setting and test: about 200 collections per test over the settings


def _measures() -> list[str]:
    """Every family at typical cutoffs (1, 3, 5), recall levels and multiples, and a few
    parameters."""
    out = []
    for name, spec in FAMILIES.items():
        if spec.cutoff_type is float:
            out += [str(make_measure(name, level)) for level in
                    ((0.0, 0.3, 1.0) if name == "IPrec" else (0.5, 2.0))]
            continue
        if spec.cutoff in ("none", "optional"):
            out.append(name)
        if spec.cutoff in ("required", "optional"):
            out += [f"{name}@{k}" for k in (1, 3, 5)]
    out += ["P(rel=2)@3", "AP(rel=2)", "nDCG(gain=exp)@3", "nDCG(gain={1:1,2:5,3:4})",
            "DCG(base=10)@4", "ERR(max_grade=3)", "RBP(p=0.5,rel=1)", "nDCG(rel=2)@3",
            "11pt_avg(levels={0.2,0.5})", "SetF(beta=0.5)", "Utility(rel_ret=2,docs=50)"]
    return [str(parse_measure(m)) for m in out]


MEASURES = _measures()
CUTOFF = {m: parse_measure(m).cutoff for m in MEASURES}
RANKING = [m for m in MEASURES if parse_measure(m).spec.order_based]
FIELDS = {**CHOICES, "gain": ("linear", "exponential", {1: 1, 2: 5, 3: 2}),
          "relevance_threshold": (1, 2, 0), "max_depth": (None, 3), "discount_base": (2.0, 10.0)}
SETTINGS = [{}] + [{name: value} for name, values in FIELDS.items() for value in values[1:]]
IDS = ["trec_eval"] + [f"{k}={v}" for s in SETTINGS[1:] for k, v in s.items()]
#: the settings of the default suite; the others are marked slow (CI runs them too)
FAST = ({}, {"ties": "expected"}, {"ties": "input_order"}, {"unjudged": "remove"},
        {"max_depth": 3}, {"gain": {1: 1, 2: 5, 3: 2}}, {"missing_queries": "zero"},
        {"run_only_queries": "zero"})


def tiered(settings: list[dict]) -> list:
    """``settings`` as parameters, those not in FAST marked slow."""
    return [s if s in FAST else pytest.param(s, marks=pytest.mark.slow) for s in settings]
POOL = [f"d{i}" for i in range(12)] + ["D1", "é", "x10", "x9"]
SCORES = [0.0, 0.25, 0.5, 1.0, 2.0, -1.5, 3.0]


def collection(rng: np.random.Generator, duplicates: bool = False):
    """(judgment rows, run rows, queries given with no document) of 1-5 queries."""
    qrels, run, empty = [], [], []
    for i in range(int(rng.integers(1, 6))):
        q = f"q{i}"
        where = "both" if i == 0 else rng.choice(["both", "both", "both", "run", "qrels",
                                                  "empty"])
        if where != "run":
            qrels += [(q, str(d), int(rng.integers(-1, 4)))
                      for d in rng.choice(POOL, int(rng.integers(1, 9)), replace=False)]
        if where == "empty":
            empty.append(q)
        if where in ("both", "run"):
            docs = rng.choice(POOL, int(rng.integers(1, 10)), replace=False)
            run += [(q, str(d), float(rng.choice(SCORES))) for d in docs]
            if duplicates and rng.random() < 0.5:
                run.append((q, str(docs[0]), float(rng.choice(SCORES))))
    return qrels, run, empty


def inputs(qrels_rows, run_rows, empty, frame: bool):
    """Judgments as a dict; the run as a frame (which keeps duplicated rows) or a dict (which
    holds the queries given with no document)."""
    qrels: dict = {}
    for q, d, g in qrels_rows:
        qrels.setdefault(q, {})[d] = g
    if frame:
        return qrels, pd.DataFrame(run_rows, columns=["query", "doc", "score"])
    run: dict = {q: {} for q in empty}
    for q, d, s in run_rows:
        run.setdefault(q, {})[d] = s
    return qrels, run


def evaluated(qrels_rows, run_rows, empty, setting, measures=MEASURES):
    frame = setting.get("duplicates", "error") != "error"
    return per_query(*inputs(qrels_rows, run_rows, empty, frame), setting, measures)


def per_query(qrels, run, setting, measures=MEASURES):
    return rankwise.evaluate(qrels, run, measures, per_query=True, **setting).per_query()


def collections(setting, seed: int):
    """Seeded collections whose run and judgments overlap (else evaluate refuses them)."""
    rng = np.random.default_rng([seed, SETTINGS.index(setting)])
    duplicates = setting.get("duplicates", "error") != "error"
    found = 0
    while found < COLLECTIONS:
        qrels, run, empty = collection(rng, duplicates)
        if {q for q, _, _ in qrels} & ({q for q, _, _ in run} | set(empty)):
            found += 1
            yield qrels, run, empty


def same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def assert_same(got: dict, expected: dict, context=None) -> None:
    assert set(got) == set(expected), context
    bad = [(q, m, got[q][m], v) for q, row in expected.items() for m, v in row.items()
           if not same(got[q][m], v)]
    assert not bad, (context, bad[:4])


def any_doc_map(setting) -> bool:
    """Whether the tie order leaves doc ids out of the values (so any renaming keeps them)."""
    ties = setting.get("ties", "docid_desc")
    # with max_depth, lists are cut in trec_eval's doc id order first, even under expected
    return ties == "input_order" or (ties in ("expected", "optimistic", "pessimistic")
                                     and setting.get("max_depth") is None)


@pytest.mark.parametrize("setting", tiered(SETTINGS), ids=IDS)
def test_renaming_and_reordering_the_input_change_nothing(setting):
    rng = np.random.default_rng(SETTINGS.index(setting))
    for qrels, run, empty in collections(setting, 0):
        expected = evaluated(qrels, run, empty, setting)
        # queries: any injective map
        name = {f"q{i}": f"topic {(7 * i) % 11:02d}" for i in range(6)}
        got = evaluated([(name[q], d, g) for q, d, g in qrels],
                        [(name[q], d, s) for q, d, s in run], [name[q] for q in empty], setting)
        assert_same({q: got[name[q]] for q in expected}, expected, "queries renamed")
        # documents: a map keeping their byte order, or any map when the order ignores ids
        docs = sorted({d for _, d, _ in qrels + run}, key=str.encode)
        new = [f"doc{i:03d}" for i in range(len(docs))]
        if any_doc_map(setting):
            rng.shuffle(new)
        doc = dict(zip(docs, new))
        got = evaluated([(q, doc[d], g) for q, d, g in qrels],
                        [(q, doc[d], s) for q, d, s in run], empty, setting)
        assert_same(got, expected, "documents renamed")
        # rows: any order, but where the input order decides (ties, which duplicate is kept)
        if setting.get("ties") != "input_order" and \
                setting.get("duplicates") not in ("first", "last"):
            got = evaluated([qrels[i] for i in rng.permutation(len(qrels))],
                            [run[i] for i in rng.permutation(len(run))], empty, setting)
            assert_same(got, expected, "rows reordered")


@pytest.mark.parametrize("setting", tiered(SETTINGS), ids=IDS)
def test_a_strictly_increasing_transform_of_the_scores_changes_nothing(setting):
    """Scores mapped to others in the same order and on the same side of 0 (which
    nonpositive_scores="nonrelevant" reads), exact in float32 (which merges scores)."""
    for qrels, run, empty in collections(setting, 1):
        values = sorted({s for _, _, s in run})
        positive, other = [v for v in values if v > 0], [v for v in values if v <= 0]
        new = {v: 2.0 + 3 * i for i, v in enumerate(positive)}
        new.update({v: -7.0 * (len(other) - 1 - i) for i, v in enumerate(other)})
        expected = evaluated(qrels, run, empty, setting, RANKING)
        got = evaluated(qrels, [(q, d, new[s]) for q, d, s in run], empty, setting, RANKING)
        assert_same(got, expected)


def _list_lengths(qrels_rows, run_rows, setting) -> dict[str, int]:
    """Per query, the length of its evaluated list (after max_depth and unjudged)."""
    grade = {(q, d): g for q, d, g in qrels_rows}
    docs: dict[str, set] = {}
    for q, d, _ in run_rows:
        docs.setdefault(q, set()).add(d)
    if setting.get("unjudged") == "remove":
        docs = {q: {d for d in ds if grade.get((q, d), -1) >= 0} for q, ds in docs.items()}
    depth = setting.get("max_depth") or 10 ** 6
    return {q: min(len(ds), depth) for q, ds in docs.items()}


@pytest.mark.parametrize("setting", tiered(SETTINGS), ids=IDS)
def test_documents_appended_below_the_list_change_nothing_above_them(setting):
    """Unjudged documents appended below the last one change no value within a cutoff
    above them, and nothing at all under unjudged="remove"; the judged documents not
    retrieved, appended below, change no value within the cutoff (unless the ideal comes from
    the retrieved documents)."""
    for qrels, run, empty in collections(setting, 2):
        expected = evaluated(qrels, run, empty, setting, RANKING)
        length = _list_lengths(qrels, run, setting)
        low = min(s for _, _, s in run) - 10 if run else 0.0
        unjudged = [(q, f"new{j}", low - j) for q in length for j in range(3)]
        retrieved = {(q, d) for q, d, _ in run}
        judged = [(q, d, low - 1 - i) for i, (q, d, _) in enumerate(qrels)
                  if q in length and (q, d) not in retrieved]
        for extra, kind in ((unjudged, "unjudged"), (judged, "judged")):
            if kind == "judged" and setting.get("ideal") == "retrieved":
                continue
            got = evaluated(qrels, run + extra, empty, setting, RANKING)
            everything = kind == "unjudged" and setting.get("unjudged") == "remove"
            for q, row in expected.items():
                for m, value in row.items():
                    k = CUTOFF[m]
                    if everything or (isinstance(k, int) and k <= length.get(q, 0)):
                        assert same(got[q][m], value), (kind, q, m, got[q][m], value)


@pytest.mark.parametrize("setting", tiered(SETTINGS), ids=IDS)
def test_queries_apart_and_runs_together_equal_one_pass(setting):
    """Splitting the queries in two and merging the per-query values, and evaluating two
    runs in one call, give each query the value of one pass (ERR with its grade scale
    fixed: without max_grade it reads the largest grade of all the judgments)."""
    rng = np.random.default_rng(SETTINGS.index(setting))
    measures = [m for m in MEASURES if not m.startswith("ERR") or "max_grade" in m]
    for qrels, run, empty in collections(setting, 3):
        whole = evaluated(qrels, run, empty, setting, measures)
        side = {q: bool(rng.integers(2)) for q, _, _ in qrels + run} | \
            {q: bool(rng.integers(2)) for q in empty}
        parts: dict = {}
        for half in (True, False):
            mine = [[r for r in rows if side[r[0]] == half] for rows in (qrels, run)]
            mine_empty = [q for q in empty if side[q] == half]
            frame = setting.get("duplicates", "error") != "error"
            if {q for q, _, _ in mine[0]} & ({q for q, _, _ in mine[1]} |
                                              (set() if frame else set(mine_empty))):
                parts.update(evaluated(*mine, mine_empty, setting, measures))
        assert_same({q: whole[q] for q in parts}, parts, "split")
        other = next(collections(setting, 4))[1] + [("q0", "d1", 1.0)]
        frame = setting.get("duplicates", "error") != "error"
        run_a, run_b = (inputs(qrels, rows, empty, frame)[1] for rows in (run, other))
        judged = inputs(qrels, run, empty, frame)[0]
        both = rankwise.evaluate(judged, {"a": run_a, "b": run_b}, measures, per_query=True,
                                 **setting)
        assert_same(both.per_query("a"), whole, "run a together")
        assert_same(both.per_query("b"), per_query(judged, run_b, setting, measures),
                    "run b together")


KS = (1, 2, 3, 5, 10)
CUTOFF_MEASURES = [f"{m}@{k}" for m in ("P", "R", "Success", "DCG", "AP", "RR") for k in KS]


@pytest.mark.parametrize("setting", tiered(SETTINGS), ids=IDS)
def test_values_lie_in_their_range_and_grow_with_the_cutoff(setting):
    """Every value in its family's documented range; P@K·K and R@K·R are counts (not under
    ties="expected", a mean of counts); Success@K, R@K (over R: min(R, K) changes with K)
    and DCG@K (for non-negative gains) do not decrease with K; AP@K <= AP (over R: min(R, K),
    K and the hits within K grow with K)."""
    expected_ties = setting.get("ties") == "expected"
    for qrels, run, empty in collections(setting, 5):
        values = evaluated(qrels, run, empty, setting, MEASURES + CUTOFF_MEASURES)
        for q, row in values.items():
            for m, value in row.items():
                bounds = parse_measure(m).spec.bounds
                if bounds is not None and not math.isnan(value):
                    assert bounds[0] - TOLERANCE <= value <= bounds[1] + TOLERANCE, (q, m)
            relevant = row["NumRel"]
            for k in KS:
                hits = [row[f"P@{k}"] * k]
                if relevant and setting.get("recall_denominator") != "min_relevant_cutoff":
                    hits.append(row[f"R@{k}"] * relevant)
                if not expected_ties and setting.get("short_lists") != "length":
                    assert all(abs(h - round(h)) < 1e-9 for h in hits if not math.isnan(h)), \
                        (q, k, hits)
                if setting.get("ap_denominator", "relevant") == "relevant":  # else D grows
                    assert row[f"AP@{k}"] <= row["AP"] + TOLERANCE or math.isnan(row["AP"])
            growing = ["Success", "DCG"] + \
                (["R"] if setting.get("recall_denominator") != "min_relevant_cutoff" else [])
            for small, large in zip(KS, KS[1:]):
                for m in growing:
                    a, b = row[f"{m}@{small}"], row[f"{m}@{large}"]
                    assert math.isnan(a) or a <= b + TOLERANCE, (q, m, small, a, b)


@pytest.mark.parametrize("setting", tiered(SETTINGS), ids=IDS)
def test_a_perfect_ranking_scores_one(setting):
    """Every judged document by grade, an unjudged one below: nDCG = 1 where a grade gains
    (without max_depth, which cuts the list; a gain map that does not grow with the grade has
    another ideal order), RR = 1 where a document is relevant."""
    setting = {k: v for k, v in setting.items() if k != "duplicates"}
    threshold = setting.get("relevance_threshold", 1)
    for qrels_rows, _, _ in collections(setting, 6):
        qrels = inputs(qrels_rows, [], [], False)[0]
        run = {q: {**{d: 100.0 - i for i, d in enumerate(sorted(docs, key=docs.get,
                                                                reverse=True))},
                   "unjudged": -50.0} for q, docs in qrels.items()}
        names = ["nDCG", "nDCG@3", "nDCG(gain=exp)@5", "RR"]
        for q, row in per_query(qrels, run, setting, names).items():
            grades = qrels[q].values()
            if any(g > 0 for g in grades) and setting.get("max_depth") is None:
                for m in names[:3] if not isinstance(setting.get("gain"), dict) else names[2:3]:
                    assert row[m] == pytest.approx(1.0, abs=TOLERANCE), (q, m)
            if any(g >= threshold for g in grades) and \
                    setting.get("nonpositive_scores") != "nonrelevant":
                assert row["RR"] == 1.0, q


BINARY = ["P@3", "R@5", "AP", "RR", "Rprec", "Bpref", "SetF", "IPrec@0.5", "Success@2", "infAP",
          "binG", "RelP@3", "Hits@3", "ARHR", "F1@3", "RprecMult@0.5", "Utility",
          "NumNonRelJudgedRet"]
GAINS = ["nDCG", "nDCG@3", "DCG@5", "IDCG", "CG@3", "ndcg_rel", "G", "RWRR@3"]


@pytest.mark.parametrize("setting", tiered([s for s in SETTINGS if "relevance_threshold"
                                            not in s and "gain" not in s]),
                         ids=lambda s: str(s) or "trec_eval")
def test_thresholds_and_gain_maps_equal_judgments_rewritten(setting):
    """A binary measure with rel=t, or under relevance_threshold=t, equals the measure on the
    judgments thresholded at t by hand (negative grades kept: unjudged); a gain map equals the
    grades rewritten as their gains."""
    for qrels, run, empty in collections(setting, 7):
        for t in (1, 2, 3):
            binary = [(q, d, int(g >= t) if g >= 0 else g) for q, d, g in qrels]
            expected = evaluated(binary, run, empty, setting, BINARY)
            own = [str(parse_measure(m.replace("@", f"(rel={t})@") if "@" in m
                                     else f"{m}(rel={t})")) for m in BINARY]
            got = evaluated(qrels, run, empty, setting, own)
            assert_same({q: dict(zip(BINARY, row.values())) for q, row in got.items()},
                        expected, ("rel", t))
            assert_same(evaluated(qrels, run, empty, {**setting, "relevance_threshold": t},
                                  BINARY), expected, ("relevance_threshold", t))
        gain = {1: 3, 2: 1, 3: 7}
        rewritten = [(q, d, gain.get(g, g)) for q, d, g in qrels]
        assert_same(evaluated(qrels, run, empty, {**setting, "gain": gain}, GAINS),
                    evaluated(rewritten, run, empty, setting, GAINS), "gain map")


OVERRIDABLE = {name: values for name, values in FIELDS.items()
               if name not in ("missing_queries", "run_only_queries", "unjudged", "duplicates",
                               "score_precision", "max_depth")}
OVERRIDABLE["ties"] = ("expected", "optimistic", "pessimistic")
OVERRIDES = [(name, value) for name, values in OVERRIDABLE.items()
             for value in (values if name == "ties" else values[1:])]


@pytest.mark.parametrize("name,value", OVERRIDES, ids=[f"{n}={v}" for n, v in OVERRIDES])
def test_a_family_override_equals_the_whole_evaluation_under_it(name, value):
    """Each family computed under a family override gives what the whole evaluation gives
    under that value (a gain map given as a dict once ended in a TypeError)."""
    rng = np.random.default_rng(8)
    for qrels, run, empty in collections({}, int(rng.integers(100))):
        whole = evaluated(qrels, run, empty, {name: value})
        overrides = tuple((family, name, value) for family in FAMILIES)
        assert_same(evaluated(qrels, run, empty, {"family_overrides": overrides}), whole)


def tied_collection(rng: np.random.Generator):
    """Judgments and a run of 1-3 queries whose scores take 2-3 values: small tie groups."""
    qrels, run = {}, {}
    for q in range(int(rng.integers(1, 4))):
        values = rng.choice([2.0, 1.0, 0.0, -1.0], int(rng.integers(2, 4)), replace=False)
        docs = [f"d{i}" for i in range(int(rng.integers(1, 7)))]
        run[f"q{q}"] = {d: float(rng.choice(values)) for d in docs}
        grades = {d: int(g) for d in docs + ["x0", "x1"]
                  if (g := rng.choice([-2, -1, 0, 0, 1, 2, 3])) > -2}
        qrels[f"q{q}"] = grades or {docs[0]: 0}
    return qrels, run


@pytest.mark.parametrize("setting", tiered([s for s in SETTINGS if "ties" not in s
                                            and "duplicates" not in s]),
                         ids=lambda s: str(s) or "trec_eval")
def test_expected_ties_are_the_mean_over_orderings_between_the_bounds(setting):
    """ties="expected" equals the mean over every ordering of the tied documents (brute
    force), and optimistic >= expected >= pessimistic for the grade-monotone measures, under
    every other convention (but where docs/conventions.md says the two are orders among
    others)."""
    from tests.properties.test_expected_ties import MEASURES as TIED, MONOTONE, brute_force

    rng = np.random.default_rng(SETTINGS.index(setting))
    names, monotone = [str(m) for m in TIED], [str(m) for m in MONOTONE]
    # documented exceptions: AP@K over the hits within K; the cut at max_depth by grade
    bounded = [m for m in monotone if not (
        setting.get("ap_denominator") == "relevant_retrieved" and m.startswith("AP@")
        or setting.get("max_depth") and isinstance(dict(parse_measure(m).params).get("gain"),
                                                   tuple))]
    for _ in range(3):
        qrels, run = tied_collection(rng)
        got = per_query(qrels, run, {**setting, "ties": "expected"}, names)
        want = brute_force(qrels, run, TIED, **setting)
        bad = [(q, m, got[q][m], v) for q, row in want.items() for m, v in row.items()
               if not math.isclose(got[q][m], v, rel_tol=1e-9, abs_tol=1e-9)
               and not (math.isnan(v) and math.isnan(got[q][m]))]
        assert not bad, bad[:4]
        best = per_query(qrels, run, {**setting, "ties": "optimistic"}, monotone)
        worst = per_query(qrels, run, {**setting, "ties": "pessimistic"}, monotone)
        for q, row in best.items():
            for m in bounded:
                sign = 1.0 if parse_measure(m).spec.higher_is_better else -1.0
                b, e, w = sign * row[m], sign * got[q][m], sign * worst[q][m]
                assert math.isnan(e) or b + 1e-12 >= e >= w - 1e-12, (q, m, b, e, w)
