"""Property tests: invariants every correct evaluation must satisfy, on random small inputs.

Each property is one that a plausible implementation bug breaks: bounds (a wrong ideal or a
wrong denominator), perfect rankings (an ideal built from the wrong documents), row order
(ties broken by input order instead of doc id), splitting queries (state leaking between
queries), renaming documents (ties broken by something other than byte order), cutoff
relations (off-by-one cutoffs), and agreement with plain-Python references for the
conventions (depth, unjudged removal, missing queries, tie order).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankwise

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# measures whose every per-query value lies in [0, 1]
NORMALISED = [
    "P@1", "P@5", "R@3", "R@100", "F1@5", "Success@1", "Success@3", "RR", "RR@3", "AP", "AP@3",
    "gm_map", "nDCG", "nDCG@1", "nDCG@3", "nDCG(gain=exp)", "nDCG(gain=exp)@5", "Rprec",
    "Bpref", "IPrec@0", "IPrec@0.3", "IPrec@0.5", "IPrec@1", "11pt_avg",
    "11pt_avg(levels={0.2,0.5,0.8})", "SetP", "SetR", "SetF",
    "ERR", "ERR@3",
]
COUNTS = ["NumQ", "NumRet", "NumRel", "NumRelRet"]
UNBOUNDED = ["DCG", "DCG@3", "IDCG", "IDCG@3", "CG@3", "DCG(gain=exp)@5", "MAE", "RMSE"]
ALL = NORMALISED + COUNTS + UNBOUNDED

# doc ids: short strings with digits (byte order != numeric order), letters of both cases and
# a few non-ASCII characters (UTF-8 byte order must equal code point order)
DOC_ID = st.text(alphabet="0123456789abAB_.é€𝄞", min_size=1, max_size=3)


@st.composite
def collections(draw, max_queries: int = 5, max_grade: int = 3, negative: bool = True):
    """(qrels, run) dict-of-dicts: ties, unjudged docs, queries only in the run or the qrels.

    The first query is always in both, so that the run and the judgments always overlap.
    """
    pool = draw(st.lists(DOC_ID, min_size=1, max_size=12, unique=True))
    n = draw(st.integers(1, max_queries))
    grade = st.integers(-1 if negative else 0, max_grade)
    score = st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, -1.5])  # few values: many ties
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(n):
        qid = f"q{i}"
        where = "both" if i == 0 else draw(st.sampled_from(["both", "both", "run", "qrels"]))
        if where != "run":
            judged = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=8, unique=True))
            qrels[qid] = {d: draw(grade) for d in judged}
        if where != "qrels":
            retrieved = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=10, unique=True))
            run[qid] = {d: draw(score) for d in retrieved}
    return qrels, run


def per_query(qrels, run, measures=ALL, **conventions):
    return rankwise.evaluate(qrels, run, measures, per_query=True, **conventions).per_query()


def same(a: float, b: float, tol: float = 0.0) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b if tol == 0 else math.isclose(a, b, rel_tol=tol, abs_tol=tol)


def assert_same(got: dict, expected: dict, tol: float = 0.0) -> None:
    """Same queries, same values: bit for bit unless ``tol`` is given.

    Every value of a query depends on that query's rows only (ERR walks each query's gains in
    order, IDCG sums the grades in the same order for every query), so splitting, merging or
    reordering queries must not change a single bit.
    """
    assert set(got) == set(expected)
    bad = [(q, m, got[q][m], expected[q][m]) for q in expected for m in expected[q]
           if not same(got[q][m], expected[q][m], tol)]
    assert not bad, bad[:5]


def ranked(docs: dict[str, float]) -> list[str]:
    """The documented order: score descending, ties by doc id as UTF-8 bytes, descending."""
    by_doc = sorted(docs, key=lambda d: d.encode(), reverse=True)
    return sorted(by_doc, key=lambda d: -docs[d])  # stable: keeps the doc order within ties


# ---------------------------------------------------------------------------- bounds


@SETTINGS
@given(collections(), st.sampled_from([1, 2]), st.sampled_from(["nonrelevant", "remove"]),
       st.sampled_from(["ignore", "zero"]), st.sampled_from([None, 2]))
def test_normalised_measures_lie_in_unit_interval(coll, threshold, unjudged, missing, depth):
    qrels, run = coll
    values = per_query(qrels, run, relevance_threshold=threshold, unjudged=unjudged,
                       missing_queries=missing, max_depth=depth)
    for qid, row in values.items():
        for m in NORMALISED:
            assert 0.0 <= row[m] <= 1.0, (qid, m, row[m])
        for m in COUNTS:
            assert row[m] >= 0 and float(row[m]).is_integer(), (qid, m, row[m])
        assert row["NumRelRet"] <= min(row["NumRel"], row["NumRet"])
        assert row["DCG@3"] <= row["IDCG@3"]  # no ranking beats the ideal
        assert row["DCG"] <= row["IDCG"]


# ---------------------------------------------------------------------------- perfect rankings


@SETTINGS
@given(collections(negative=True), st.sampled_from([1, 2]), st.booleans())
def test_perfect_ranking_scores_one(coll, threshold, with_unjudged_tail):
    qrels, _ = coll
    run = {}
    for qid, judged in qrels.items():
        # every judged document, best grade first (ties among equal grades are harmless);
        # negative grades are unjudged and go to the bottom with the other unjudged docs
        run[qid] = {d: float(max(g, -1)) for d, g in judged.items()}
        if with_unjudged_tail:
            run[qid]["zz-unjudged"] = -5.0
    values = per_query(qrels, run, relevance_threshold=threshold)
    for qid, row in values.items():
        rel = sum(g >= threshold for g in qrels[qid].values())
        positive = any(g > 0 for g in qrels[qid].values())
        if rel:
            for m in ["AP", "RR", "Rprec", "Bpref", "Success@1", "SetR", "IPrec@0", "IPrec@0.5",
                      "IPrec@1", "11pt_avg", "gm_map"]:
                assert row[m] == 1.0, (qid, m)
            assert row["R@3"] == pytest.approx(1.0 if rel <= 3 else 3 / rel)
            assert row["R@100"] == pytest.approx(1.0)
            assert row["P@1"] == 1.0
            assert row["P@5"] == pytest.approx(min(rel, 5) / 5)
            assert row["NumRelRet"] == rel
        else:
            for m in ["AP", "RR", "Rprec", "Bpref", "Success@3", "SetR", "R@100", "11pt_avg"]:
                assert row[m] == 0.0, (qid, m)
        # nDCG uses the grades as gains, whatever the threshold; exactly 1, as in trec_eval
        # (the ideal DCG was once summed otherwise than the run's, and off by an ulp or two)
        for m in ["nDCG", "nDCG@1", "nDCG@3", "nDCG(gain=exp)", "nDCG(gain=exp)@5"]:
            assert row[m] == (1.0 if positive else 0.0), (qid, m)
        assert row["DCG"] == row["IDCG"]


# ---------------------------------------------------------------------------- input order


@SETTINGS
@given(collections(), st.randoms(use_true_random=False), st.sampled_from(["docid_desc", "docid_asc"]))
def test_row_order_of_the_run_changes_nothing(coll, rnd, ties):
    pd = pytest.importorskip("pandas")
    qrels, run = coll
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    shuffled = rows[:]
    rnd.shuffle(shuffled)
    frame = pd.DataFrame(shuffled, columns=["query", "doc", "score"])
    expected = per_query(qrels, run, ties=ties)
    assert_same(per_query(qrels, frame, ties=ties), expected)
    # the sorted input (fast path) and the shuffled input (full sort) agree too
    in_order = pd.DataFrame(sorted(rows, key=lambda r: (r[0], -r[2])),
                            columns=["query", "doc", "score"])
    assert_same(per_query(qrels, in_order, ties=ties), expected)


@SETTINGS
@given(collections(), st.randoms(use_true_random=False))
def test_row_order_of_the_judgments_changes_nothing(coll, rnd):
    pd = pytest.importorskip("pandas")
    qrels, run = coll
    rows = [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    rnd.shuffle(rows)
    frame = pd.DataFrame(rows, columns=["query", "doc", "relevance"])
    assert_same(per_query(frame, run), per_query(qrels, run))


@SETTINGS
@given(collections())
def test_ties_follow_the_documented_doc_id_order(coll):
    # replace the scores by distinct ones that spell out the documented order (score desc,
    # doc id bytes desc): nothing may change
    qrels, run = coll
    untied = {q: {d: float(len(docs) - i) for i, d in enumerate(ranked(docs))}
              for q, docs in run.items()}
    assert_same(per_query(qrels, run, [m for m in ALL if m not in ("MAE", "RMSE")]),
                per_query(qrels, untied, [m for m in ALL if m not in ("MAE", "RMSE")]))


@SETTINGS
@given(collections())
def test_input_order_ties_follow_the_rows(coll):
    qrels, run = coll
    # with ties="input_order", rows given in the documented order reproduce the default
    reordered = {q: {d: docs[d] for d in ranked(docs)} for q, docs in run.items()}
    assert_same(per_query(qrels, reordered, ties="input_order"), per_query(qrels, run))


# ---------------------------------------------------------------------------- renaming


@SETTINGS
@given(collections())
def test_order_preserving_doc_renaming_changes_nothing(coll):
    qrels, run = coll
    names = sorted({d for docs in [*qrels.values(), *run.values()] for d in docs},
                   key=lambda d: d.encode())
    keep = {d: f"doc{i:04d}" for i, d in enumerate(names)}  # same byte order
    flip = {d: f"doc{len(names) - i:04d}" for i, d in enumerate(names)}  # reversed byte order

    def rename(data, mapping):
        return {q: {mapping[d]: v for d, v in docs.items()} for q, docs in data.items()}

    expected = per_query(qrels, run)
    assert_same(per_query(rename(qrels, keep), rename(run, keep)), expected)
    # reversing the doc order and the tie order together also changes nothing
    assert_same(per_query(rename(qrels, flip), rename(run, flip), ties="docid_asc"), expected)


@SETTINGS
@given(collections())
def test_renaming_queries_changes_nothing(coll):
    qrels, run = coll
    new = {q: f"topic-{q[::-1]}" for q in {*qrels, *run}}
    got = per_query({new[q]: v for q, v in qrels.items()}, {new[q]: v for q, v in run.items()})
    assert_same({q: got[new[q]] for q in per_query(qrels, run)}, per_query(qrels, run))


# ---------------------------------------------------------------------------- splitting


# ERR is normalised by the largest grade in the judgments of *all* queries unless max_grade is
# given (documented), so splitting the judgments can change it: fix the scale here.
SPLIT_MEASURES = [m for m in ALL if not m.startswith("ERR")] + ["ERR(max_grade=3)",
                                                                 "ERR(max_grade=3)@3"]


@SETTINGS
@given(collections(max_queries=7), st.data())
def test_split_queries_evaluate_independently(coll, data):
    qrels, run = coll
    queries = sorted({*qrels, *run})
    side = {q: data.draw(st.booleans(), label=q) for q in queries}
    whole = per_query(qrels, run, SPLIT_MEASURES)
    parts: dict[str, dict[str, float]] = {}
    for flag in (True, False):
        q_half = {q: v for q, v in qrels.items() if side[q] == flag}
        r_half = {q: v for q, v in run.items() if side[q] == flag}
        if not set(q_half) & set(r_half):
            continue  # nothing evaluated in this half (rankwise refuses disjoint inputs)
        parts.update(per_query(q_half, r_half, SPLIT_MEASURES))
    assert_same(parts, whole, tol=1e-12)


@SETTINGS
@given(collections(), collections())
def test_several_runs_at_once_equal_one_at_a_time(coll_a, coll_b):
    qrels, run_a = coll_a
    run_b = {q: docs for q, docs in coll_b[1].items()}
    run_b.setdefault("q0", {"x": 1.0})  # keep an overlap with the judgments
    both = rankwise.evaluate(qrels, {"a": run_a, "b": run_b}, ALL, per_query=True)
    assert_same(both.per_query("a"), per_query(qrels, run_a))
    assert_same(both.per_query("b"), per_query(qrels, run_b))


# ---------------------------------------------------------------------------- cutoffs


@SETTINGS
@given(collections(max_grade=4))
def test_cutoff_relations(coll):
    qrels, run = coll
    ks = [1, 2, 3, 5, 10, 20]
    measures = ([f"P@{k}" for k in ks] + [f"R@{k}" for k in ks] + [f"AP@{k}" for k in ks]
                + [f"RR@{k}" for k in ks] + [f"DCG@{k}" for k in ks] + [f"nDCG@{k}" for k in ks]
                + [f"Success@{k}" for k in ks] + [f"F1@{k}" for k in ks] + [f"CG@{k}" for k in ks]
                + ["AP", "RR", "DCG", "nDCG", "CG", "SetP", "SetR", "Rprec", "NumRel",
                   "NumRet", "NumRelRet"])
    for qid, row in per_query(qrels, run, measures).items():
        depth = row["NumRet"]
        for k in ks:
            hits = row[f"P@{k}"] * k
            assert abs(hits - round(hits)) < 1e-9, (qid, k)  # P@k * k is a count
            assert round(hits) <= min(k, depth, row["NumRel"])
            if row["NumRel"]:
                assert row[f"R@{k}"] == pytest.approx(hits / row["NumRel"])
            assert row[f"Success@{k}"] == (1.0 if hits > 0.5 else 0.0)
            assert row[f"RR@{k}"] <= row["RR"]
            assert row[f"AP@{k}"] <= row["AP"] + 1e-12
            assert row[f"DCG@{k}"] <= row[f"CG@{k}"] + 1e-12
            p, r = row[f"P@{k}"], row[f"R@{k}"]
            assert row[f"F1@{k}"] == pytest.approx(2 * p * r / (p + r) if p + r else 0.0)
            if k >= depth:  # the cutoff no longer cuts anything
                assert row[f"AP@{k}"] == pytest.approx(row["AP"])
                assert row[f"RR@{k}"] == row["RR"]
                assert row[f"DCG@{k}"] == pytest.approx(row["DCG"])
                assert row[f"CG@{k}"] == pytest.approx(row["CG"])
                assert row[f"R@{k}"] == pytest.approx(row["SetR"])
        for small, large in zip(ks, ks[1:]):  # monotone in the cutoff
            for m in ["R", "AP", "RR", "DCG", "Success", "CG"]:
                assert row[f"{m}@{small}"] <= row[f"{m}@{large}"] + 1e-12, (qid, m, small)
            assert row[f"P@{small}"] * small <= row[f"P@{large}"] * large + 1e-9
        if row["NumRet"]:
            assert row["SetP"] * row["NumRet"] == pytest.approx(row["NumRelRet"])
        rprec_hits = row["Rprec"] * row["NumRel"]
        assert abs(rprec_hits - round(rprec_hits)) < 1e-9


# ---------------------------------------------------------------------------- conventions


@SETTINGS
@given(collections(), st.integers(1, 6))
def test_max_depth_equals_truncating_the_run(coll, depth):
    qrels, run = coll
    truncated = {q: {d: docs[d] for d in ranked(docs)[:depth]} for q, docs in run.items()}
    assert_same(per_query(qrels, run, max_depth=depth), per_query(qrels, truncated))
    # trec_eval: map with -M k equals map_cut_k
    cut = per_query(qrels, run, [f"AP@{depth}", f"P@{depth}"])
    for qid, row in per_query(qrels, run, ["AP", f"P@{depth}"], max_depth=depth).items():
        assert row["AP"] == pytest.approx(cut[qid][f"AP@{depth}"])
        assert row[f"P@{depth}"] == cut[qid][f"P@{depth}"]


@SETTINGS
@given(collections())
def test_unjudged_remove_equals_dropping_unjudged_rows(coll):
    qrels, run = coll
    judged = {q: {d: s for d, s in docs.items() if qrels.get(q, {}).get(d, -1) >= 0}
              for q, docs in run.items()}
    judged = {q: docs for q, docs in judged.items() if docs}
    removed = per_query(qrels, run, unjudged="remove")
    if set(judged) & set(qrels):
        kept = per_query(qrels, judged)
        assert_same({q: removed[q] for q in kept}, kept)
    else:
        kept = {}
    # queries whose every retrieved doc was unjudged are still evaluated, as empty rankings
    for qid in set(removed) - set(kept):
        row = removed[qid]
        assert row["NumRet"] == 0
        for m in NORMALISED + ["DCG", "CG@3", "NumRelRet"]:
            assert row[m] == 0.0, (qid, m)


@SETTINGS
@given(collections())
def test_missing_queries_zero(coll):
    qrels, run = coll
    ignored = rankwise.evaluate(qrels, run, ALL, per_query=True)
    zero = rankwise.evaluate(qrels, run, ALL, per_query=True, missing_queries="zero")
    missing = set(qrels) - set(run)
    got = zero.per_query()
    assert set(got) == set(ignored.per_query()) | missing
    for qid in missing:
        for m in NORMALISED + ["DCG", "CG@3", "NumRet", "NumRelRet"]:
            assert got[qid][m] == 0.0, (qid, m)
        assert got[qid]["NumRel"] == sum(g >= 1 for g in qrels[qid].values())
        assert got[qid]["IDCG"] == pytest.approx(
            sum(g / math.log2(i + 2) for i, g in
                enumerate(sorted((g for g in qrels[qid].values() if g > 0), reverse=True))))
    for m in ["AP", "nDCG@3", "P@5", "RR"]:
        total = sum(row[m] for row in ignored.per_query().values())
        assert zero.mean(m) == pytest.approx(total / len(got))
    assert zero.mean("NumQ") == len(got)


@SETTINGS
@given(collections(negative=False), st.sampled_from([1, 2, 3]))
def test_relevance_threshold_equals_binarised_judgments(coll, threshold):
    # binary measures under threshold t equal the same measures on judgments binarised at t
    qrels, run = coll
    binary = {q: {d: int(g >= threshold) for d, g in docs.items()} for q, docs in qrels.items()}
    measures = ["P@3", "R@5", "AP", "AP@3", "RR", "Rprec", "Bpref", "SetF", "IPrec@0.5",
                "11pt_avg", "Success@2", "NumRel", "NumRelRet", "F1@3"]
    expected = per_query(binary, run, measures)
    assert_same(per_query(qrels, run, measures, relevance_threshold=threshold), expected)
    # a measure's own rel= parameter overrides the conventions' threshold
    own = [f"P(rel={threshold})@3", f"AP(rel={threshold})", f"RR(rel={threshold})"]
    got = per_query(qrels, run, own)
    for qid, row in expected.items():
        assert (got[qid][own[0]], got[qid][own[1]], got[qid][own[2]]) == \
            (row["P@3"], row["AP"], row["RR"])


# ---------------------------------------------------------------------------- input forms


@SETTINGS
@given(collections())
def test_dict_pandas_polars_agree(coll):
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    qrels, run = coll
    q_rows = [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    r_rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    expected = per_query(qrels, run)
    q_pd = pd.DataFrame(q_rows, columns=["query", "doc", "relevance"])
    r_pd = pd.DataFrame(r_rows, columns=["query", "doc", "score"])
    assert_same(per_query(q_pd, r_pd), expected)
    q_pl = pl.DataFrame(q_rows, schema=["query", "doc", "relevance"], orient="row")
    r_pl = pl.DataFrame(r_rows, schema=["query", "doc", "score"], orient="row")
    assert_same(per_query(q_pl, r_pl), expected)


@SETTINGS
@given(st.lists(st.lists(st.tuples(st.integers(0, 3), st.sampled_from([0.0, 0.5, 1.0, 2.5])),
                         min_size=3, max_size=3), min_size=1, max_size=4))
def test_from_arrays_forms_agree(matrix):
    y_true = np.array([[g for g, _ in row] for row in matrix], dtype=float)
    y_score = np.array([[s for _, s in row] for row in matrix], dtype=float)
    measures = ["nDCG", "nDCG@2", "AP", "RR", "P@2", "ERR", "DCG(gain=exp)"]
    two_d = per_query(*rankwise.from_arrays(y_true, y_score), measures)
    sizes = per_query(*rankwise.from_arrays(y_true.ravel(), y_score.ravel(),
                                            group=[3] * len(matrix)), measures)
    ids = np.repeat(np.arange(len(matrix)), 3)
    rnd = np.random.default_rng(len(matrix)).permutation(len(ids))  # rows need not be grouped
    by_id = per_query(*rankwise.from_arrays(y_true.ravel()[rnd], y_score.ravel()[rnd],
                                            query=ids[rnd]), measures)
    assert_same(sizes, two_d)  # same rows in the same order: bit-identical
    # with query ids the doc names follow the (shuffled) row order, so only tie order may
    # differ: compare on rows without ties
    for qid, row in by_id.items():
        if len(set(y_score[int(qid)])) == 3:
            assert_same({qid: row}, {qid: two_d[qid]})


# ---------------------------------------------------------------------------- ERR is exact per query


def test_err_with_a_wide_grade_scale():
    qrels = {"q1": {"a": 60, "c": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 2.0, "c": 1.0}, "q2": {"b": 1.0}}
    with np.errstate(all="ignore"):
        values = per_query(qrels, run, ["ERR"])
    # q1: the top document has R_1 = 1 - 2^-60 (1.0 in float64): ERR = 1 up to 2^-60
    assert values["q1"]["ERR"] == pytest.approx(1.0)
    # q2 has nothing to do with q1: R_1 = (2^1 - 1) / 2^60
    assert values["q2"]["ERR"] == pytest.approx(2.0 ** -60, rel=1e-9)


def test_err_of_a_query_depends_on_the_other_queries():
    qrels = {"q0": {"a": 1}, "q1": {"b": 1, "c": 1}}
    q0, q1 = {"a": 1.0}, {"x": 3.0, "b": 2.0, "c": 1.0}
    # q1: R = 1/2 at ranks 2 and 3: ERR = (1/2)(1/2) + (1/3)(1/2)(1/2) = 1/3 exactly
    first = per_query(qrels, {"q0": q0, "q1": q1}, ["ERR"])["q1"]["ERR"]
    second = per_query(qrels, {"q1": q1, "q0": q0}, ["ERR"])["q1"]["ERR"]
    assert second == 1 / 3
    assert first == second


def _one_lists_object_gives_what_fresh_lists_give(seed: int, names: list[str],
                                                  conventions=None, lowest_score: int = 0):
    """Every measure of ``names``, asked in that order of one lists object (whose caches fill
    as it goes), gives bit for bit what it gives on lists ranked afresh."""
    from rankwise.core.judgments import index_judgments
    from rankwise.core.ranked import rank
    from rankwise.io import to_qrels, to_run
    from rankwise.measures import parse_measure

    rng = np.random.default_rng(seed)
    qrels = {f"q{q}": {f"d{d}": int(rng.integers(-1, 4)) for d in range(0, 30, 2)}
             for q in range(20)}
    run = {f"q{q}": {f"d{d}": float(rng.integers(lowest_score, 8))
                     for d in rng.permutation(30)[:25]} for q in range(22)}
    judged, ranked = to_qrels(qrels), to_run(run)
    shared = rank(index_judgments(judged), ranked, conventions)
    for name in names:
        m = parse_measure(name)
        alone = m.compute(rank(index_judgments(judged), ranked, conventions))
        assert m.compute(shared).tobytes() == alone.tobytes(), name


@pytest.mark.parametrize("seed", range(4))
def test_graded_measures_on_one_lists_object_are_those_on_fresh_lists(seed):
    """The gaining rows are kept with the lists once found (per gain): every cutoff and gain
    asked of one lists object, in any order, gives the values fresh lists give."""
    _one_lists_object_gives_what_fresh_lists_give(seed, [
        f"{family}{gain}@{k}" for k in (5, 1, 30, 3) for family in ("nDCG", "DCG", "CG")
        for gain in ("", "(gain=exp)", "(gain={1:5,3:1})")] + ["nDCG", "DCG(gain=exp)"])


@pytest.mark.parametrize("seed", range(4))
def test_interpolated_precision_on_one_lists_object_is_that_on_fresh_lists(seed):
    """The best precision from each hit on is kept with the lists once found (per relevance
    threshold): every recall level and threshold asked of one lists object, one at a time,
    gives the values fresh lists give, and so does the 11-point average."""
    _one_lists_object_gives_what_fresh_lists_give(seed, [
        f"IPrec{rel}@{p}" for p in (0.5, 0, 1, 0.3) for rel in ("", "(rel=2)", "(rel=3)")]
        + ["11pt_avg", "11pt_avg(rel=2)"])


@pytest.mark.parametrize("seed", range(3))
def test_caches_kept_with_the_lists_follow_per_family_conventions(seed):
    """A family that overrides a convention reads the lists through another conventions
    object: the caches it shares with them (gaining rows, tie groups, relevant rows and the
    best precision from each hit) give what fresh lists give, in either order of asking,
    and are not shared where the override changes them (non-positive scores)."""
    overrides = (("IPrec", "nonpositive_scores", "nonrelevant"), ("nDCG", "ties", "expected"),
                 ("AP", "ties", "expected"))
    conv = rankwise.Conventions(family_overrides=overrides)
    names = ["11pt_avg", "IPrec@0.5", "P@5", "nDCG@5", "DCG@5", "AP", "RR", "IPrec@0.3"]
    for order in (names, names[::-1]):
        _one_lists_object_gives_what_fresh_lists_give(seed, order, conv, lowest_score=-3)


@pytest.mark.parametrize("measure", ["nDCG", "nDCG@5", "nDCG(gain=exp)", "nDCG(base=10)@20",
                                     "nDCG(base=1e40)", "nDCG(gain={1:0.1,2:0.7,4:3})"])
@pytest.mark.parametrize("discount", ["rank_plus_one", "jarvelin"])
def test_a_ranking_in_ideal_order_has_ndcg_exactly_one(measure, discount):
    """Its DCG and ideal DCG are the same sum in the same order: one in three such queries
    once had nDCG 1 + 2.2e-16 or 1 + 4.4e-16 (above its bound), and others 1 - 1.1e-16."""
    rng = np.random.default_rng(5)
    qrels, run = {}, {}
    for q in range(600):
        grades = rng.integers(0, 5, rng.integers(1, 40)).tolist()
        qrels[f"q{q}"] = {f"d{i}": g for i, g in enumerate(grades)}
        order = sorted(range(len(grades)), key=lambda i: -grades[i])
        run[f"q{q}"] = {f"d{i}": float(len(grades) - r) for r, i in enumerate(order)}
    result = rankwise.evaluate(qrels, run, [measure], per_query=True, discount=discount)
    (name,) = result.measures
    values = np.array([row[name] for row in result.per_query().values()])
    assert ((values == 1.0) | (values == 0.0)).all()  # 0: no judgment gains
    assert (values == 1.0).sum() > 500
