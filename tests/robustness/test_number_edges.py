"""Numbers at the edges of float64: measures given finite inputs the readers accept return
finite values or refuse with rankwise's own error and a message that says why.

Each test pins a defect found against values computed by hand or at high precision
(``fractions``, ``math.fsum``, integer square roots): RMSE and MAE overflowing.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import rankwise
import rankwise.recsys as recsys
from rankwise import InputError

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
