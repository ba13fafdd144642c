"""Measure strings in the three dialects parse to the same objects; bad names get help."""

from __future__ import annotations

import pytest

import rankwise
from rankwise import MeasureError, parse_measure, parse_measures

SAME = [
    ("nDCG@10", "ndcg_cut_10", "ndcg@10", "ndcg_cut.10"),
    ("P@5", "P_5", "precision@5", "P.5"),
    ("AP", "map"),
    ("AP@100", "map_cut_100", "map@100"),
    ("RR", "recip_rank", "mrr"),
    ("RR@10", "mrr@10"),
    ("R@100", "recall_100", "recall@100"),
    ("Success@10", "success_10", "hit_rate@10"),
    ("Success", "hit_rate"),
    ("Hits@5", "hits@5"),
    ("Hits", "hits"),
    ("Rprec", "r-precision", "R-Precision"),
    ("nDCG(gain=exp)@10", "ndcg_burges@10", "nDCG(dcg=exp-log2)@10"),
    ("nDCG(gain={1:3,2:9})@5", "nDCG(gains={1:3,2:9})@5", "nDCG(gains={1: 3, 2: 9})@5",
     "nDCG(gain={2:9,1:3})@5"),
    ("IPrec@0.5", "iprec_at_recall_0.50"),
    ("F1@10", "f1@10"),
    ("Bpref", "bpref"),
    ("SetF", "set_F"),
]


@pytest.mark.parametrize("names", SAME, ids=[s[0] for s in SAME])
def test_dialects_agree(names):
    parsed = {parse_measure(n) for n in names}
    assert len(parsed) == 1
    assert str(parsed.pop()) == names[0]


def test_trec_families_expand_to_default_cutoffs():
    assert [str(m) for m in parse_measures("P")] == [f"P@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    assert len(parse_measures("official")) == 29  # 4 counts, 5 single measures, 11 IPrec, 9 P


def test_trec_names_round_trip():
    for m in parse_measures(["official", "ndcg", "ndcg_cut", "set_F", "success", "recall"]):
        assert parse_measure(m.trec_name()) == m


def test_parameters():
    m = parse_measure("P(rel=2)@5")
    assert dict(m.params) == {"rel": 2} and m.cutoff == 5
    assert parse_measure("nDCG(gain={1:3,2:9})") == parse_measures("ndcg.1=3,2=9")[0]


def test_huge_parameters_stay_floats_and_short_names():
    """An integer-valued 1e308 was kept as a Python integer of 309 digits: the name printed
    every digit, and numpy could not take the logarithm of such a base (a TypeError)."""
    m = parse_measure("nDCG(base=1e308)")
    assert str(m) == "nDCG(base=1e+308)" and parse_measure(str(m)) == m
    assert dict(m.params) == {"base": 1e308} and isinstance(dict(m.params)["base"], float)
    assert dict(parse_measure("P(rel=2.0)@5").params)["rel"] == 2  # small ones read as integers
    value = rankwise.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, [m]).mean(str(m))
    assert value == 1.0


@pytest.mark.parametrize("text, trec_name", [("IPrec@-0", "iprec_at_recall_0.00"),
                                             ("Rprec_mult.-0.0", "Rprec_mult_0.00")])
def test_negative_zero_levels_are_zero(text, trec_name):
    """-0 as a recall level or multiple printed trec_eval's name as ..._-0.00, which no
    parse reads."""
    (m,) = parse_measures(text)
    assert m.trec_name() == trec_name and parse_measure(trec_name) == m


@pytest.mark.parametrize("text, fragment", [
    ("nDGC@10", "closest: nDCG"),
    ("precison@10", "closest: precision"),
    ("P@0", "positive integer"),
    ("P@1.5", "positive integer"),
    ("P@ten", "positive integer"),
    ("P", None),
    ("F1", "needs a cutoff"),
    ("NumRelRet@5", "takes no cutoff"),
    ("Rprec@10", "takes no cutoff"),
    ("P(foo=1)@5", "has no parameter 'foo'"),
    ("nDCG(judged_only=True)@5", "judged_only=True is the convention unjudged='remove'"),
    ("IPrec@1.5", "between 0 and 1"),
    ("RprecMult@inf", "between 0 and 2147483647"),
    ("RprecMult@1e20", "between 0 and 2147483647"),
    ("ERR(max_grade=1024)", "at most 1023"),
    ("ndcg@10-l2", "conventions='ranx'"),  # ranx's level outside the ranx profile
    ("map-l2", r"rel=N, e.g. AP\(rel=2\)"),
])
def test_bad_names(text, fragment):
    if fragment is None:
        assert parse_measures(text)
        return
    with pytest.raises(MeasureError, match=fragment):
        parse_measures(text)


@pytest.mark.parametrize("text", ["nDCG(base=\u0662)", "nDCG(base=1_0)", "IPrec@\u0660.1",
                                  "nDCG(gain={1:1_0})", "P(,)@5", "nDCG(base=2,)"])
def test_numbers_in_ascii_digits_and_no_empty_parameter(text):
    # float() reads '1_0' as 10 and other scripts' digits, which a cutoff never took; an
    # empty parameter between commas was dropped without a word
    with pytest.raises(MeasureError):
        parse_measure(text)
    assert parse_measure("nDCG(base=1e1)") == parse_measure("nDCG(base=10)")
    assert parse_measure("P()@5") == parse_measure("P@5")


@pytest.mark.parametrize("names, expected", [
    # ranx: without @k (or with @0) the whole list; with @k the cutoff family
    (["recall", "recall@10", "precision", "precision@5", "f1", "f1@3", "hit_rate",
      "hit_rate@5", "hits", "hits@5"],
     ["SetR", "R@10", "SetP", "P@5", "SetF", "F1@3", "Success", "Success@5", "Hits", "Hits@5"]),
    (["ndcg@0", "precision@0", "map@0"], ["nDCG", "SetP", "AP"]),
    (["map", "map@100", "mrr@10", "ndcg_burges@10", "dcg_burges", "r-precision",
      "r-precision@5", "bpref@5"],
     ["AP", "AP@100", "RR@10", "nDCG(gain=exp)@10", "DCG(gain=exp)", "Rprec", "Rprec",
      "Bpref"]),
    (["rbp.95", "rbp@5"], ["RBP(p=0.95,rel=1)", "RBP(p=0.5,rel=1)"]),
    # -lN: the relevance level N (rbp weighs by the grade: level 0 adds nothing to level 1)
    (["map-l2", "precision@5-l2", "recall-l0", "ndcg@10-l2", "ndcg_burges-l3",
      "dcg_burges@5-l2", "r-precision-l2", "bpref@5-l2", "rbp.95-l2", "rbp.9-l0", "ndcg-l0"],
     ["AP(rel=2)", "P(rel=2)@5", "SetR(rel=0)", "nDCG(rel=2)@10", "nDCG(gain=exp,rel=3)",
      "DCG(gain=exp,rel=2)@5", "Rprec(rel=2)", "Bpref(rel=2)", "RBP(p=0.95,rel=2)",
      "RBP(p=0.9,rel=1)", "nDCG"]),
    (["P@5", "recall_10", "NumRelRet"], ["P@5", "R@10", "NumRelRet"]),  # rankwise's own names
])
def test_ranx_profile_reads_ranx_names_as_ranx_means_them(names, expected):
    translated = rankwise.conventions.profile("ranx").measure_names(names)
    assert [str(parse_measure(n)) for n in translated] == expected
    assert [str(m) for m in parse_measures(names, conventions="ranx")] == \
        list(dict.fromkeys(expected))


def test_graded_gains_from_a_relevance_level():
    """nDCG(rel=N) and DCG(rel=N): the grades below N gain 0, the others keep their gain
    (linear or exponential), in the run's DCG and in the ideal; worked by hand."""
    import math

    run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    qrels = {"q": {"a": 1, "b": 0, "c": 2, "d": 3, "z": 2}}
    d = [1 / math.log2(r + 1) for r in range(1, 5)]
    dcg, exp_dcg = 2 * d[2] + 3 * d[3], 3 * d[2] + 7 * d[3]
    ideal, exp_ideal = 3 + 2 * d[1] + 2 * d[2], 7 + 3 * d[1] + 3 * d[2]
    result = rankwise.evaluate(qrels, run, ["DCG(rel=2)", "nDCG(rel=2)", "nDCG(gain=exp,rel=2)",
                                            "DCG(rel=2)@3", "nDCG(rel=0)", "nDCG(rel=4)"])
    assert result.aggregates["run"] == pytest.approx({
        "DCG(rel=2)": dcg, "nDCG(rel=2)": dcg / ideal, "nDCG(gain=exp,rel=2)": exp_dcg / exp_ideal,
        "DCG(rel=2)@3": 2 * d[2], "nDCG": rankwise.evaluate(qrels, run, ["nDCG"]).mean("nDCG"),
        "nDCG(rel=4)": 0.0}, rel=1e-12)
    tied = {"q": {"a": 4.0, "b": 2.0, "c": 2.0, "d": 1.0}}  # b, c tied: c's 2 over ranks 2, 3
    expected = rankwise.evaluate(qrels, tied, ["DCG(rel=2)"], ties="expected")
    assert expected.mean("DCG(rel=2)") == pytest.approx((d[1] + d[2]) + 3 * d[3], rel=1e-12)
    assert rankwise.explain(qrels, run, "q", "nDCG(rel=2)").value == \
        pytest.approx(dcg / ideal, rel=1e-12)


def test_trec_eval_names_keep_their_meaning_outside_the_ranx_profile():
    # trec_eval's bare "recall" is its family of cutoffs; num_rel_ret is summed
    assert [str(m) for m in parse_measures("recall")][:2] == ["R@5", "R@10"]
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
    run = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}}
    result = rankwise.evaluate(qrels, run, ["num_rel_ret", "hits"])
    assert result.aggregates["run"] == {"NumRelRet": 3.0, "Hits": 1.5}
    assert rankwise.evaluate(qrels, run, ["hits"], conventions="ranx").mean("Hits") == 1.5


@pytest.mark.parametrize("conventions, names, expected", [
    ("torchmetrics", ["retrieval_normalized_dcg@2", "retrieval_recall", "retrieval_recall@3",
                      "retrieval_precision", "retrieval_precision@3", "retrieval_hit_rate"],
     ["nDCG@2", "SetR", "R@3", "SetP", "P@3", "Success"]),
    ("sklearn", ["ndcg_score@2", "dcg_score"], ["nDCG@2", "DCG"]),
])
def test_profile_names_reach_every_adapter(conventions, names, expected):
    """One alias step for every entry point that takes measures and conventions."""
    from rankwise.compat.candidates import check_measures

    assert [str(m) for m in parse_measures(names, conventions)] == expected
    assert [str(m) for m in check_measures(names, conventions)] == expected
