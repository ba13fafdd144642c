"""Numbers at the edges of float64: every measure, given finite inputs the readers accept,
returns finite values or refuses with rankwise's own error and a message that says why.

The targeted tests pin each defect found (RMSE and MAE overflowing, sums of gains overflowing
to inf or to inf/inf, G losing its lag, Utility's weights overflowing) against values computed
by hand or at high precision (``fractions``, ``math.fsum``, integer square roots); the sweep
runs every registered measure over seeded collections of extreme scores, grades, gains and
parameters. docs/conventions.md, "Numbers at the edges of float64", states the behaviour.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import rankwise
import rankwise.recsys as recsys
from rankwise import InputError
from rankwise.measures import FAMILIES
from rankwise.measures.expected import EXPECTED
from rankwise.measures.registry import LONGEST_LIST, make_measure

BIGGEST = np.finfo(np.float64).max  # 1.7976931348623157e308
TINIEST = np.finfo(np.float64).smallest_subnormal  # 5e-324


def value(qrels, run, measure, **conventions) -> float:
    """The per-query value of ``measure`` for the only query."""
    result = rankwise.evaluate(qrels, run, [measure], per_query=True, **conventions)
    (row,) = result.per_query().values()
    return row[str(rankwise.parse_measure(measure))]


def per_query(qrels, run, measures, **conventions) -> dict[str, dict[str, float]]:
    return rankwise.evaluate(qrels, run, measures, per_query=True, **conventions).per_query()


def exact_rms(errors) -> float:
    """sqrt(mean(e²)) from the errors' exact rational values, to some 200 bits before the one
    rounding to float64."""
    mean = sum(Fraction(e) ** 2 for e in errors) / len(errors)
    k = 200 - (mean.numerator.bit_length() - mean.denominator.bit_length()) // 2
    if k >= 0:
        return float(Fraction(math.isqrt(mean.numerator * 4 ** k // mean.denominator), 2 ** k))
    return float(math.isqrt(mean.numerator // (mean.denominator * 4 ** -k)) * 2 ** -k)


# ----------------------------------------------------------------------- RMSE and MAE


def test_rmse_of_errors_whose_squares_overflow_is_exact():
    qrels = {"q": {"a": 0, "b": 0}}
    # the squares of 1e200 overflow: RMSE was inf
    assert value(qrels, {"q": {"a": 1e200, "b": 1e200}}, "RMSE") == 1e200
    assert value(qrels, {"q": {"a": 1e200, "b": -1e200}}, "RMSE") == 1e200
    errors = [3e200, 4e200, 1.5e154, 0.0]
    got = value({"q": {d: 0 for d in "abcd"}}, {"q": dict(zip("abcd", errors))}, "RMSE")
    assert got == pytest.approx(exact_rms(errors), rel=4e-16)


def test_mae_of_errors_whose_sum_overflows_is_exact():
    run = {"q": {"a": 1.5e308, "b": 1.5e308, "c": 1.2e308}}
    got = value({"q": {"a": 0, "b": 0, "c": 0}}, run, "MAE")  # the sum overflowed: inf
    exact = (2 * Fraction(1.5e308) + Fraction(1.2e308)) / 3
    assert got == pytest.approx(float(exact), rel=4e-16)


def test_rmse_of_tiny_errors_is_not_lost_to_underflow():
    qrels = {"q": {"a": 0, "b": 0}}
    # the squares of 1e-200 underflow to 0: RMSE was 0
    assert value(qrels, {"q": {"a": 1e-200, "b": 1e-200}}, "RMSE") == 1e-200
    errors = [3e-170, 4e-170, TINIEST]
    got = value({"q": {d: 0 for d in "abc"}}, {"q": dict(zip("abc", errors))}, "RMSE")
    assert got == pytest.approx(exact_rms(errors), rel=4e-16)


def test_rmse_beyond_float64_is_refused_and_one_within_it_computed():
    # rating data: a grade of 1e308 and a score of -1.7e308 differ by 2.7e308, beyond float64
    qrels = {"q": {"a": 1e308}}
    with pytest.raises(InputError, match=r"RMSE of query 'q' is about 2\.70e\+308, beyond"):
        value(qrels, {"q": {"a": -1.7e308}}, "RMSE")
    with pytest.raises(InputError, match=r"MAE of query 'q' is about 2\.70e\+308, beyond"):
        value(qrels, {"q": {"a": -1.7e308}}, "MAE")
    # with three exact predictions beside it the RMSE is 1.35e308: computed
    qrels = {"q": {"a": 1e308, "b": 1, "c": 2, "d": 3}}
    run = {"q": {"a": -1.7e308, "b": 1.0, "c": 2.0, "d": 3.0}}
    exact = exact_rms([Fraction(-1.7e308) - Fraction(1e308), 0, 0, 0])  # 1.35e308
    assert value(qrels, run, "RMSE") == pytest.approx(exact, rel=4e-16)
    error = Fraction(-1.7e308) - Fraction(1e308)
    assert value(qrels, run, "MAE") == pytest.approx(float(abs(error) / 4), rel=4e-16)


def test_an_infinite_score_stays_an_error():
    for run in ({"q": {"a": math.inf}}, {"q": {"a": -math.inf}}):
        with pytest.raises(InputError, match="finite"):
            value({"q": {"a": 1}}, run, "RMSE")
    with pytest.raises(InputError, match="finite"):
        value({"q": {"a": math.inf}}, {"q": {"a": 1.0}}, "RMSE")
    # float32 scores (pytrec_eval's) make 1e300 infinite: the error is infinite, not NaN
    with pytest.raises(InputError, match="RMSE of query 'q' is infinite"):
        value({"q": {"a": 1}}, {"q": {"a": 1e300}}, "RMSE", score_precision="float32")


def test_rmse_and_mae_of_ordinary_errors_are_the_plain_formula_bit_for_bit():
    rng = np.random.default_rng(7)
    qrels, run, errors = {}, {}, {}
    for q in range(200):
        n = int(rng.integers(1, 12))
        grades = rng.integers(0, 5, n)
        scores = rng.normal(2, 1.5, n)
        qrels[f"q{q}"] = {f"d{i}": int(g) for i, g in enumerate(grades)}
        run[f"q{q}"] = {f"d{i}": float(s) for i, s in enumerate(scores)}
        errors[f"q{q}"] = scores - grades
    got = per_query(qrels, run, ["RMSE", "MAE"])
    for q, e in errors.items():
        e = e[np.argsort(-np.array(list(run[q].values())))]  # summed in ranked order
        assert got[q]["RMSE"] == np.sqrt(np.bincount(np.zeros(len(e), int), e * e)[0] / len(e))
        assert got[q]["MAE"] == np.bincount(np.zeros(len(e), int), np.abs(e))[0] / len(e)


def test_recommender_rmse_and_mae_at_the_edges():
    test = {"u": {"a": 0.0, "b": 0.0}, "v": {"a": 0.0, "b": -1e308}, "w": {"a": 0.0}}
    recs = {"u": {"a": 1e200, "b": -1e200}, "v": {"a": 1e308, "b": 1e308},
            "w": {"a": 1e-200}}
    result = recsys.evaluate(recs, test, ["RMSE", "MAE", "GRMSE", "GMAE"])
    rows = result.per_user()
    assert rows["u"]["RMSE"] == 1e200 and rows["u"]["MAE"] == 1e200
    # v's errors are 1e308 and 2e308 (beyond float64 itself: halved, then doubled)
    assert rows["v"]["RMSE"] == pytest.approx(exact_rms([1e308, 2 * Fraction(1e308)]), rel=4e-16)
    assert rows["v"]["MAE"] == pytest.approx(1.5e308, rel=4e-16)
    assert rows["w"]["RMSE"] == 1e-200
    pooled = [1e200, -1e200, 1e308, 2 * Fraction(1e308), 1e-200]
    assert result.mean("GRMSE") == pytest.approx(exact_rms(pooled), rel=4e-16)
    assert result.mean("GMAE") == pytest.approx(
        float(sum(abs(Fraction(e)) for e in pooled) / 5), rel=4e-16)
    with pytest.raises(InputError, match=r"RMSE of user 'u' is about 2\.40e\+308, beyond"):
        recsys.evaluate({"u": {"a": 1.7e308}}, {"u": {"a": -0.7e308}}, ["RMSE"])


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_the_mean_of_errors_near_the_largest_float_is_their_mean_without_a_warning():
    # per query (user) the errors are 1e308 and 1.5e308: their sum overflows. evaluate's mean
    # was right but numpy warned "overflow encountered in reduce" (twice); the recommender
    # mean was inf, and the mean difference of compare_beyond too
    qrels = {"q": {"a": 1, "b": 0}, "p": {"a": 1}}
    run = {"q": {"a": 1e308, "b": -1e308}, "p": {"a": 1.5e308}}
    result = rankwise.evaluate(qrels, run, ["MAE", "RMSE"], per_query=True)
    assert result.mean("MAE") == result.mean("RMSE") == 1.25e308
    rec = recsys.evaluate({"x": run, "y": {"q": {"a": 1.0, "b": 0.0}, "p": {"a": 1.0}}}, qrels,
                          ["MAE", "RMSE"])
    assert rec.mean("MAE", "x") == rec.mean("RMSE", "x") == 1.25e308
    assert rec.mean("MAE", "y") == 0.0
    with warnings.catch_warnings():  # the test's interval (a standard deviation) overflows
        warnings.simplefilter("ignore", RuntimeWarning)
        assert rec.compare_beyond(["MAE"], test="sign")[0]["mean_difference"] == 1.25e308


# ----------------------------------------------------------------------- gains


GRADED = {"q": {"a": 3, "b": 1, "c": 0, "d": 2, "e": 1, "f": 3},
          "r": {"x": 1, "y": 2}, "s": {"z": 0}}
RANKED = {"q": {"a": 1.0, "b": 5.0, "c": 4.0, "d": 4.0, "e": 2.0, "g": 3.0},
          "r": {"x": 2.0, "y": 1.0, "w": 3.0}, "s": {"z": 1.0}}
GAINS = {0: 0.0, 1: 1.0, 2: 3.0, 3: 7.0}
RATIOS = ["nDCG", "nDCG@3", "ndcg_rel", "Rndcg"]


def scaled_gains(factor: float = 1.0, exponent: int = 0) -> dict[int, float]:
    return {g: math.ldexp(v * factor, exponent) for g, v in GAINS.items()}


@pytest.mark.parametrize("conventions", [{}, {"ties": "expected"}, {"ties": "optimistic"},
                                         {"ideal": "retrieved"}, {"discount_base": 10.0}],
                         ids=["default", "expected", "optimistic", "retrieved", "base10"])
def test_ratios_of_gains_do_not_depend_on_their_size(conventions):
    plain = per_query(GRADED, RANKED, RATIOS, gain=GAINS, **conventions)
    # a power of two scales every sum exactly: the same ratio, bit for bit
    for exponent in (1000, 1020, -1000, -1070):
        assert per_query(GRADED, RANKED, RATIOS, gain=scaled_gains(1.0, exponent),
                         **conventions) == plain, exponent
    # a factor of 1e300: the gains are rounded once, the ratios agree to a few ulps
    big = per_query(GRADED, RANKED, RATIOS, gain=scaled_gains(1e300), **conventions)
    for q, row in plain.items():
        for name, v in row.items():
            assert big[q][name] == pytest.approx(v, rel=1e-14, abs=0), (q, name)


def test_ndcg_with_a_gain_near_the_largest_float():
    # gains of 1e308 summed to inf, and inf / inf was NaN, silently scored 0 (idcg_zero)
    qrels = {"q": {f"d{i}": 1 for i in range(5)}}
    run = {"q": {f"d{i}": float(i) for i in range(6)}}
    got = value(qrels, run, "nDCG", gain={1: 1e308})
    assert got == value(qrels, run, "nDCG", gain={1: 1})  # d5, unjudged, ranks first
    by_hand = math.fsum(1 / math.log2(r + 1) for r in range(2, 7)) / \
        math.fsum(1 / math.log2(r + 1) for r in range(1, 6))
    assert got == pytest.approx(by_hand, rel=1e-15)


def test_exponential_gain_of_large_grades():
    # 2^1000 - 1 is 2^1000 in float64: nDCG(exp) on grades 1000, 999, 998 is nDCG with the
    # gains 4, 2, 1
    qrels = {"q": {"a": 998, "b": 1000, "c": 999, "d": 0}}
    run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    for name in ("nDCG", "ndcg_rel", "Rndcg", "nDCG@2"):
        assert value(qrels, run, name, gain="exponential") == \
            value(qrels, run, name, gain={998: 1, 999: 2, 1000: 4}), name
    # 2^1024 overflows: a grade above 1023 is refused, naming the grade and the limit
    with pytest.raises(InputError, match=r"grade 1100 is too large for exponential gain.*1023"):
        value({"q": {"a": 1100}}, run, "nDCG", gain="exponential")


def test_sums_of_gains_beyond_float64_are_refused():
    qrels = {"q": {f"d{i}": 1 for i in range(5)}}
    run = {"q": {f"d{i}": float(i) for i in range(5)}}
    for name in ("DCG", "IDCG", "CG", "RWRR", "DCG@3"):
        with pytest.raises(InputError, match=rf"{name} of query 'q' is about [0-9.]+e\+308, "
                                             r"beyond the largest float64.*largest 1e\+308"):
            value(qrels, run, name, gain={1: 1e308})
        if name != "IDCG":  # the ideal ranks positive gains only
            with pytest.raises(InputError, match=rf"{name} of query 'q' is about -"):
                value(qrels, run, name, gain={1: -1e308}, ties="expected")


def test_a_sum_of_gains_whose_partial_sums_overflow_is_computed():
    # 1.5e308 + 1.5e308/log2(3) overflows; the two negative gains below bring it back
    qrels = {"q": {"a": 1, "b": 1, "c": 2, "d": 2}}
    run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    gain = {1: 1.5e308, 2: -1.5e308}
    terms = [1.5e308 / math.log2(2), 1.5e308 / math.log2(3), -1.5e308 / math.log2(4),
             -1.5e308 / math.log2(5)]
    expected = math.fsum(t / 4 for t in terms) * 4  # fsum of the quarters cannot overflow
    assert value(qrels, run, "DCG", gain=gain) == pytest.approx(expected, rel=1e-15)
    assert value(qrels, run, "CG", gain=gain) == 0.0


def test_a_ratio_beyond_float64_is_refused():
    # negative gains of -1e308 against positive ones of 1e-300: nDCG is about -1e608
    qrels = {"q": {"a": 2, "b": 1}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    with pytest.raises(InputError, match=r"nDCG of query 'q' is beyond the largest float64"):
        value(qrels, run, "nDCG", gain={1: 1e-300, 2: -1e308})
    # the same negative gain against a positive one of 1e300 is within range
    by_hand = (-1e308 + 1e300 / math.log2(3)) / 1e300
    assert value(qrels, run, "nDCG", gain={1: 1e300, 2: -1e308}) == \
        pytest.approx(by_hand, rel=1e-15)


def test_gains_of_tiny_size_keep_their_ratios():
    # gains of 5e-324 (a gain map, or linear grades that small) were subnormal: nDCG rounded
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    qrels = {"q": {"a": 0, "b": 1, "c": 2}}
    plain = value(qrels, run, "nDCG")
    assert value(qrels, run, "nDCG", gain={1: TINIEST, 2: 2 * TINIEST}) == plain
    assert value({"q": {"a": 0, "b": TINIEST, "c": 2 * TINIEST}}, run, "nDCG") == plain


def test_grades_below_rel_do_not_decide_the_scaling():
    # grade 1 gains 0 under rel=2 whatever the map gives it, but its mapped gain of 1e300 (or
    # 1e-300) decided the scaling: query q, judged 0 and 1 only (nDCG 0, its ideal DCG 0),
    # was refused as "beyond the largest float64"
    qrels = {"q": {"a": 1, "b": 0}, "p": {"a": 2, "b": 1}}
    run = {"q": {"a": 2.0, "b": 1.0}, "p": {"b": 2.0, "a": 1.0}}
    plain = per_query(qrels, run, ["nDCG(rel=2)", "DCG(rel=2)"])
    for gain in ("1e300", "1e-300"):
        measures = [f"nDCG(rel=2,gain={{1:{gain}}})", f"DCG(rel=2,gain={{1:{gain}}})"]
        got = per_query(qrels, run, measures)
        assert {q: list(v.values()) for q, v in got.items()} == \
            {q: list(v.values()) for q, v in plain.items()}


def test_queries_of_every_gain_size_in_one_evaluation():
    # each query scaled by its own power of two: the same values as evaluated alone
    qrels = {"huge": {"a": 1.5e308, "b": 5e307}, "plain": {"a": 3, "b": 1},
             "tiny": {"a": 1e-320, "b": 3e-321}, "zero": {"a": 0}}
    run = {q: {"a": 1.0, "b": 2.0} for q in qrels}
    together = per_query(qrels, run, RATIOS)
    for q in qrels:
        assert per_query({q: qrels[q]}, {q: run[q]}, RATIOS)[q] == together[q]
    assert together["huge"]["nDCG"] == pytest.approx(together["plain"]["nDCG"], rel=1e-15)


def test_g_refuses_gains_too_large_for_its_lag():
    # G reads the lag (ideal gain so far - gain so far) in units: 2 + 9e18 - 9e18 was 0 in
    # float64, log2(0) = -inf, and the document's term -0.0
    qrels = {"q": {"a": 9_000_000_000_000_000_000, "b": 2}}
    run = {"q": {"a": 3.0, "b": 2.0}}
    with pytest.raises(InputError, match=r"G of query 'q'.*9e\+18.*2\^52"):
        value(qrels, run, "G")
    with pytest.raises(InputError, match=r"G of query 'q'.*2\^52"):
        value({"q": {"a": 1, "b": 2}}, run, "G", gain={1: 1e308}, ties="expected")
    # below the limit G is computed exactly: a lag of 0 at a, 2^50 - 1 at b
    big = 2 ** 50
    got = value({"q": {"a": big, "b": 3}}, {"q": {"b": 2.0, "a": 1.0}}, "G")
    expected = (3 / math.log2(2 + big - 3) + big / math.log2(2)) / (big + 3)
    assert got == pytest.approx(expected, rel=1e-15)


def test_utility_weights_near_the_largest_float():
    qrels = {"q": {"a": 1, "b": 1, "c": 0, "d": 0}}
    run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    # 2 · 1.5e308 - 2 · 1e308 = 1e308: the plain sum was inf - inf = NaN
    got = value(qrels, run, "Utility(rel_ret=1.5e308,nonrel_ret=-1e308)")
    assert got == pytest.approx(float(2 * Fraction(1.5e308) - 2 * Fraction(1e308)), rel=1e-15)
    assert value(qrels, run, "Utility(rel_ret=1e308,nonrel_ret=-1e308)") == 0.0
    assert value(qrels, run, "Utility(docs=1e308,nonrel_missed=1.5,nonrel_ret=-1e308)") == \
        pytest.approx(float(Fraction(1e308 - 4) * Fraction(1.5) - 2 * Fraction(1e308)), rel=1e-15)
    with pytest.raises(InputError, match=r"Utility of query 'q' is beyond the largest float64"):
        value(qrels, run, "Utility(rel_ret=1.5e308)")


def test_ordinary_gains_are_computed_as_before_bit_for_bit():
    # the scaling never touches a query whose gains lie within 2^±900: a reference DCG
    rng = np.random.default_rng(3)
    grades = rng.integers(0, 4, 8)
    qrels = {"q": {f"d{i}": int(g) for i, g in enumerate(grades)}}
    run = {"q": {f"d{i}": float(8 - i) for i in range(8)}}
    weights = [g * (1.0 / np.log2(i + 2.0)) for i, g in enumerate(grades.astype(float)) if g]
    assert value(qrels, run, "DCG") == np.bincount(np.zeros(len(weights), int), weights)[0]


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_the_mean_of_large_finite_values_is_finite():
    """The mean summed the values first: two queries' CG of 1.5e308 averaged to inf, and
    +1.5e308 beside -1.5e308 to NaN; a part's mean (by_parts, compare) likewise."""
    qrels = {"q": {"a": 1}, "r": {"a": 1}, "s": {"a": 2}}
    run = {"q": {"a": 1.0}, "r": {"a": 1.0}, "s": {"a": 1.0}}
    result = rankwise.evaluate(qrels, run, ["CG"], gain={1: 1.5e308, 2: -1.5e308},
                               per_query=True)
    assert result.mean("CG") == pytest.approx(1.5e308 / 3)
    two = rankwise.evaluate({"q": qrels["q"], "r": qrels["r"]}, run, ["CG"], gain={1: 1.5e308})
    assert two.mean("CG") == 1.5e308


# ----------------------------------------------------------------------- the sweep

#: values the readers accept at the edges: scores (any finite float) and grades (a TREC qrels
#: file holds int64; dicts and frames any finite number)
EDGE_SCORES = [BIGGEST, -BIGGEST, 1e300, -1e300, 1e154, TINIEST, -TINIEST, 0.0, -0.0, 1.0, 2.0,
               1e-300]
EDGE_GRADES = [0, 1, 2, 3, -1, -2 ** 63, 2 ** 63 - 1, 2 ** 53 + 1, 1023, 1024, 1e308, BIGGEST,
               TINIEST, 0.5, -1e308]
#: extreme values of every measure parameter the registry accepts
EDGE_PARAMS = {
    "p": [TINIEST, 1e-300, 1 - 2 ** -53], "beta": [TINIEST, 1e300, BIGGEST],
    "rel": [0.0, TINIEST, 1e300, BIGGEST], "base": [1 + 2 ** -52, BIGGEST],
    "max_grade": [TINIEST, 1023], "rel_ret": [BIGGEST, -BIGGEST, TINIEST],
    "nonrel_ret": [BIGGEST, TINIEST], "rel_missed": [-BIGGEST], "nonrel_missed": [BIGGEST],
    "docs": [BIGGEST, -BIGGEST], "levels": [(0.0, TINIEST, 1.0)],
    "gain": ["exp", {1: BIGGEST, 2: TINIEST}, {1: -BIGGEST, 3: 1e300}],
}
CONVENTIONS = {"default": {}, "expected": {"ties": "expected"},
               "pessimistic": {"ties": "pessimistic"}, "exponential": {"gain": "exponential"},
               "gain-map": {"gain": {1: BIGGEST, 2: TINIEST, 3: -1e308}},
               "ideal-retrieved": {"ideal": "retrieved"},
               "base-largest": {"discount_base": BIGGEST, "discount": "jarvelin"},
               "base-near-1": {"discount_base": 1 + 2 ** -52},
               "float32": {"score_precision": "float32"},
               "nonpositive": {"nonpositive_scores": "nonrelevant",
                               "relevance_threshold": TINIEST}}


def measures_with_edges() -> list:
    """Every family with its defaults (cutoffs 1, 3 and the longest list) and with each
    parameter at its extremes."""
    out = []
    for name, spec in FAMILIES.items():
        if spec.cutoff_type is float:
            cutoffs = [0.0, 0.5, spec.cutoff_max]
        else:
            cutoffs = ([None] if spec.cutoff in ("none", "optional") else []) + \
                ([1, 3, LONGEST_LIST] if spec.cutoff in ("required", "optional") else [])
        base = {"max_grade": 3} if "max_grade" in spec.params else {}
        out += [make_measure(name, c, base) for c in cutoffs]
        for key, values in EDGE_PARAMS.items():
            if key in spec.params:
                out += [make_measure(name, cutoffs[-1], {**base, key: v}) for v in values]
    return out


def collections(seed: int = 20240611) -> list[tuple[str, dict, dict]]:
    """Seeded collections of edge scores and grades, and a few written out."""
    rng = np.random.default_rng(seed)
    out = [("all-tied", {"q": {"a": 1, "b": 0, "c": 2}},
            {"q": {"a": 0.0, "b": -0.0, "c": 0.0, "d": 0.0}}),
           ("edge-scores", {"q": {"a": 1, "b": 2, "c": 0, "d": -1}},
            {"q": {"a": BIGGEST, "b": -BIGGEST, "c": TINIEST, "d": -0.0, "e": 0.0}}),
           ("edge-grades", {"q": {f"d{i}": g for i, g in enumerate(EDGE_GRADES)}},
            {"q": {f"d{i}": float(-i) for i in range(len(EDGE_GRADES) + 2)}})]
    for k in range(6):
        qrels, run = {}, {}
        for q in range(int(rng.integers(1, 4))):
            n = int(rng.integers(1, 9))
            scores = rng.choice(np.array(EDGE_SCORES), n)
            grades = rng.choice(np.array(EDGE_GRADES, dtype=object), n)
            run[f"q{q}"] = {f"d{i}": float(s) for i, s in enumerate(scores)}
            qrels[f"q{q}"] = {f"d{i}": g for i, g in enumerate(grades) if rng.random() < .8}
            qrels[f"q{q}"].setdefault("unretrieved", int(rng.integers(0, 4)))
        out.append((f"random-{k}", qrels, run))
    return out


def clear(error: InputError, measure) -> bool:
    """A refusal says what is refused: the measure, or the grade, gain or score at fault."""
    text = str(error)
    return any(word in text for word in (measure.family, "grade", "gain", "score"))


def outcomes(qrels, run, measures, conventions) -> dict[str, object]:
    """Per measure: its per-query values and mean, or the InputError it raised. Every measure
    of a family is evaluated together, one at a time where the family refuses."""
    out = {}
    by_family = {}
    for m in measures:
        by_family.setdefault(m.family, []).append(m)
    for group in by_family.values():
        try:
            result = rankwise.evaluate(qrels, run, group, per_query=True, **conventions)
        except InputError:
            singles = group
        else:
            rows = result.per_query()
            for m in group:
                out[str(m)] = ([row[str(m)] for row in rows.values()], result.mean(str(m)))
            continue
        for m in singles:
            try:
                result = rankwise.evaluate(qrels, run, [m], per_query=True, **conventions)
            except InputError as error:
                out[str(m)] = error
            else:
                out[str(m)] = ([row[str(m)] for row in result.per_query().values()],
                               result.mean(str(m)))
    return out


def aggregate_overflow(caught: warnings.WarningMessage) -> bool:
    """The known overflow of the mean over queries (rankwise/results.py sums first; see
    test_the_mean_of_large_finite_values_is_finite), which is not a measure's."""
    return str(caught.message) == "overflow encountered in reduce" and \
        caught.filename.replace("\\", "/").endswith(("rankwise/results.py", "rankwise/api.py"))


def same(a, b) -> bool:
    """Two outcomes agree: the same values (NaN equal to NaN) and mean, or both refused."""
    if isinstance(a, InputError) or isinstance(b, InputError):
        return isinstance(a, InputError) and isinstance(b, InputError)
    return np.array_equal(np.array(a[0] + [a[1]]), np.array(b[0] + [b[1]]), equal_nan=True)


MEASURES = measures_with_edges()
BY_NAME = {str(m): m for m in MEASURES}
UNDEFINED_ALLOWED = {"MAE", "RMSE"}  # NaN for a query without a judged retrieved document


@pytest.mark.slow
@pytest.mark.parametrize("conventions", CONVENTIONS.values(), ids=CONVENTIONS.keys())
def test_every_measure_is_finite_or_refused_at_the_edges(conventions):
    measures = MEASURES
    if conventions.get("ties") == "expected":
        measures = [m for m in MEASURES if m.family in EXPECTED or not m.spec.order_based
                    or m.spec.tie_invariant]
    problems = []
    for label, qrels, run in collections():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # no overflow goes unnoticed
            got = outcomes(qrels, run, measures, conventions)
        problems += [(label, str(w.message), w.filename, w.lineno) for w in caught
                     if not aggregate_overflow(w)]
        for name, outcome in got.items():
            m = BY_NAME[name]
            if isinstance(outcome, InputError):
                if not clear(outcome, m):
                    problems.append((label, name, str(outcome)))
                continue
            values, mean = outcome
            undefined_ok = m.family in UNDEFINED_ALLOWED
            bad = [v for v in values if not (math.isfinite(v) or undefined_ok and math.isnan(v))]
            finite = [v for v in values if math.isfinite(v)]
            # the mean of values near the largest float overflows in the aggregate: see
            # test_the_mean_of_large_finite_values_is_finite
            sums = math.isfinite(sum(abs(v) for v in finite)) if finite else True
            if bad or (finite and sums and not math.isfinite(mean)):
                problems.append((label, name, values, mean))
    assert not problems, problems[:20]


def test_the_sweep_covers_every_family_and_parameter():
    assert {m.family for m in MEASURES} == set(FAMILIES)
    params = {key for spec in FAMILIES.values() for key in spec.params}
    assert params <= set(EDGE_PARAMS), params - set(EDGE_PARAMS)


ORDER_BASED = [m for m in MEASURES if m.spec.order_based]


@pytest.mark.slow
@pytest.mark.parametrize("conventions", [{}, {"ties": "expected"},
                                         {"nonpositive_scores": "nonrelevant"}],
                         ids=["default", "expected", "nonpositive"])
def test_scaling_the_scores_leaves_rank_based_measures_unchanged(conventions):
    rng = np.random.default_rng(11)
    measures = ORDER_BASED
    if conventions.get("ties") == "expected":
        measures = [m for m in ORDER_BASED if m.family in EXPECTED or m.spec.tie_invariant]
    qrels, run = {}, {}
    for q in range(5):
        n = int(rng.integers(1, 10))
        # scores on a grid (ties included, zero and negatives): any positive factor keeps
        # their order, their ties and their signs
        scores = rng.integers(-3, 6, n) / 4
        run[f"q{q}"] = {f"d{i}": float(s) for i, s in enumerate(scores)}
        qrels[f"q{q}"] = {f"d{i}": int(rng.integers(-1, 4)) for i in range(n + 2)
                          if rng.random() < .7}
    plain = outcomes(qrels, run, measures, conventions)
    for factor in (1e-300, 2.0 ** -1000, 3.7, 1e300, 2.0 ** 1000):
        scaled = {q: {d: s * factor for d, s in docs.items()} for q, docs in run.items()}
        got = outcomes(qrels, scaled, measures, conventions)
        for name, outcome in plain.items():
            assert same(got[name], outcome), (factor, name, got[name], outcome)
