"""Every convention field changes the numbers it should, by hand-computed values, and reaches
the engine from Python keywords, profiles and CLI flags alike."""

from __future__ import annotations

import json
import math

import pytest

import rankwise
from rankwise.cli import main
from rankwise.conventions import CHOICES, PROFILES, Conventions, resolve
from rankwise.errors import InputError

# q: R = 4 relevant (a, c, d, e; d and e not retrieved), x retrieved but unjudged
QRELS = {"q": {"a": 2, "b": 0, "c": 1, "d": 3, "e": 1}, "z": {"b": 0}}
RUN = {"q": {"a": 0.9, "b": 0.8, "c": 0.7, "x": 0.6}, "z": {"b": 1.0}}


def value(measure: str, qrels=QRELS, run=RUN, query: str = "q", **conventions) -> float:
    result = rankwise.evaluate(qrels, run, [measure], per_query=True, **conventions)
    return result.per_query()[query][str(rankwise.parse_measure(measure))]


@pytest.mark.parametrize("measure, conventions, expected", [
    ("P@5", {}, 2 / 5),
    ("P@5", {"short_lists": "length"}, 2 / 4),
    ("R@2", {}, 1 / 4),
    ("R@2", {"recall_denominator": "min_relevant_cutoff"}, 1 / 2),
    ("AP", {}, (1 + 2 / 3) / 4),
    ("AP@2", {"ap_denominator": "min_relevant_cutoff"}, 1 / 2),
    ("AP@3", {"ap_denominator": "cutoff"}, (1 + 2 / 3) / 3),
    ("AP", {"ap_denominator": "relevant_retrieved"}, (1 + 2 / 3) / 2),
    ("AP@2", {"ap_denominator": "relevant_retrieved"}, 1.0),
    ("R@4", {"ideal": "retrieved"}, 1.0),
    ("Rprec", {"ideal": "retrieved"}, 1 / 2),
    ("nDCG", {"ideal": "retrieved"}, (2 + 1 / 2) / (2 + 1 / math.log2(3))),
    ("nDCG", {}, (2 + 1 / 2) / (3 + 2 / math.log2(3) + 1 / 2 + 1 / math.log2(5))),
    ("DCG", {"gain": "exponential"}, 3 + 1 / 2),
    ("DCG", {"gain": {2: 5}}, 5 + 1 / 2),
    ("DCG", {"discount_base": 10}, 2 / math.log10(2) + 1 / math.log10(4)),
    ("nDCG(gain=linear)", {"gain": "exponential"}, (2 + 1 / 2) / (3 + 2 / math.log2(3) + 1 / 2
                                                                  + 1 / math.log2(5))),
    ("IPrec@0.3", {}, 1.0),  # lround(0.3 * 4) = 1: best precision from the first hit on
    ("IPrec@0.3", {"recall_levels": "trec_eval9"}, 2 / 3),  # (long)(1.2 + 0.9) = 2
])
def test_each_convention_by_hand(measure, conventions, expected):
    assert value(measure, **conventions) == pytest.approx(expected, abs=1e-12)


def test_nonpositive_scores_are_never_relevant_when_asked():
    run = {"q": {"a": 0.9, "b": 0.8, "c": -0.7}}
    assert value("P@3", run=run) == pytest.approx(2 / 3)
    assert value("P@3", run=run, nonpositive_scores="nonrelevant") == pytest.approx(1 / 3)
    assert value("nDCG@3", run=run, nonpositive_scores="nonrelevant") == value("nDCG@3", run=run)


def test_float32_scores_tie_as_the_peer_stores_them():
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 2.0 ** 24 + 1, "b": 2.0 ** 24}}
    assert value("RR", qrels, run) == 1.0
    assert value("RR", qrels, run, score_precision="float32") == 0.5  # tie; b > a descending


@pytest.mark.parametrize("policy, mean_p5", [("zero", (0.4 + 0) / 2), ("skip", 0.4),
                                             ("nan", float("nan")), ("one", (0.4 + 1) / 2)])
def test_queries_without_relevant_documents(policy, mean_p5):
    result = rankwise.evaluate(QRELS, RUN, ["P@5", "NumRet"], per_query=True, no_relevant=policy)
    assert result.mean("P@5") == pytest.approx(mean_p5, nan_ok=True)
    assert result.mean("NumRet") == 5  # counts are not concerned
    if policy in ("nan", "skip"):
        assert math.isnan(result.per_query()["z"]["P@5"])
        assert result.systems["run"].undefined == {"P@5": 1}


@pytest.mark.parametrize("policy", ["zero", "skip", "nan"])
def test_ndcg_with_ideal_dcg_zero(policy):
    result = rankwise.evaluate(QRELS, RUN, ["nDCG"], per_query=True, idcg_zero=policy)
    z = result.per_query()["z"]["nDCG"]
    q = result.per_query()["q"]["nDCG"]
    assert (z == 0.0) if policy == "zero" else math.isnan(z)
    expected = {"zero": q / 2, "skip": q, "nan": float("nan")}[policy]
    assert result.mean("nDCG") == pytest.approx(expected, nan_ok=True)


@pytest.mark.parametrize("ties, rr", [("docid_desc", 1 / 2), ("docid_asc", 1.0),
                                      ("input_order", 1 / 2), ("optimistic", 1.0),
                                      ("pessimistic", 1 / 2)])
def test_tie_orders(ties, rr):
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"b": 1.0, "a": 1.0}}
    assert value("RR", qrels, run, ties=ties) == rr


def test_family_override_applies_to_that_family_only():
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"b": 1.0, "a": 1.0}}
    conv = Conventions(family_overrides=(("nDCG", "ties", "optimistic"),))
    result = rankwise.evaluate(qrels, run, ["RR", "nDCG"], conv)
    assert result.mean("RR") == 0.5 and result.mean("nDCG") == 1.0
    with pytest.raises(InputError, match="ties only with"):
        Conventions(family_overrides=(("nDCG", "ties", "docid_asc"),))
    with pytest.raises(InputError, match="cannot be overridden"):
        Conventions(family_overrides=(("nDCG", "missing_queries", "zero"),))


def test_family_override_values_are_checked_and_normalised_as_the_fields_are():
    """A gain map given as a dict once ended the evaluation in "unhashable type: 'dict'",
    and a value the field refuses was only refused by the first measure of that family."""
    qrels = {"q": {"a": 2, "b": 1}}
    run = {"q": {"a": 1.0, "b": 2.0}}
    conv = Conventions(family_overrides=(("nDCG", "gain", {1: 1, 2: 5}),))
    result = rankwise.evaluate(qrels, run, ["nDCG", "DCG"], conv)
    assert result.mean("nDCG") == rankwise.evaluate(qrels, run, ["nDCG"],
                                                    gain={1: 1, 2: 5}).mean("nDCG")
    assert result.mean("DCG") == rankwise.evaluate(qrels, run, ["DCG"]).mean("DCG")
    assert rankwise.Result.from_json(result.to_json()).conventions == conv
    assert Conventions(family_overrides=(("nDCG", "gain", "exp"),)) == \
        Conventions(family_overrides=(("nDCG", "gain", "exponential"),))
    with pytest.raises(InputError, match="gain must be linear"):
        Conventions(family_overrides=(("nDCG", "gain", "squared"),))
    with pytest.raises(InputError, match="relevance_threshold must be 0 or more"):
        Conventions(family_overrides=(("P", "relevance_threshold", -1),))


def test_a_family_override_naming_no_family_is_refused():
    """It once changed nothing, silently: P@1 stayed trec_eval's 0 on a tie at the top."""
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0, "b": 1.0}}
    with pytest.raises(InputError, match="unknown measure family .did you mean nDCG"):
        rankwise.evaluate(qrels, run, ["P@1"], family_overrides=(("ndcg", "ties", "expected"),))
    assert rankwise.evaluate(qrels, run, ["P@1"],
                             family_overrides=(("P", "ties", "expected"),)).mean("P@1") == 0.5

def test_profiles_resolve_and_flags_override():
    assert resolve("pytrec_eval").score_precision == "float32"
    assert resolve("pytrec_eval", score_precision="float64").score_precision == "float64"
    assert resolve(None) == Conventions()
    with pytest.raises(InputError, match="did you mean pytrec_eval"):
        resolve("pytrec-eval")
    with pytest.raises(InputError, match="unknown convention"):
        resolve(None, tie="expected")
    for p in PROFILES.values():  # every profile is a valid, distinct bundle
        assert p.conventions == Conventions.from_dict(p.conventions.to_dict())
    # every peer differs from trec_eval somewhere (or it would need no profile)
    assert all(p.conventions != Conventions() for n, p in PROFILES.items() if n != "trec_eval")


def test_profile_accepts_its_peers_measure_names():
    result = rankwise.evaluate(QRELS, RUN, ["retrieval_precision@2"], conventions="torchmetrics")
    assert result.measures == ["P@2"]


def test_invalid_values_are_refused():
    for field, bad in [("ties", "random"), ("gain", "cubic"), ("discount_base", 1),
                       ("ap_denominator", "R"), ("max_depth", 0), ("relevance_threshold", "2")]:
        with pytest.raises(InputError, match=field if field != "gain" else "gain must"):
            Conventions(**{field: bad})


@pytest.mark.parametrize("field, bad, fragment", [
    ("relevance_threshold", math.nan, "relevance_threshold must be a finite number"),
    ("relevance_threshold", math.inf, "relevance_threshold must be a finite number"),
    ("relevance_threshold", 10 ** 400, "relevance_threshold must be a finite number"),
    ("discount_base", math.inf, "discount_base must be a finite number greater than 1"),
    ("gain", {1: math.nan}, "gain map's grades and gains must be finite numbers"),
    ("gain", {math.inf: 1}, "gain map's grades and gains must be finite numbers"),
    ("gain", {1: 10 ** 400}, "gain map's grades and gains must be finite numbers"),
    ("gain", {10 ** 400: 1}, "gain map's grades and gains must be finite numbers"),
    ("family_overrides", 5, r"family_overrides are \(family, field, value\) triples \(got '5'\)"),
])
def test_numbers_that_are_not_finite_are_refused(field, bad, fragment):
    """As a measure's own rel=, base= and gain maps are: a NaN threshold made nothing relevant
    without a word, an infinite base gave DCG = inf and nDCG = 0. An integer beyond every
    float in a gain map escaped as OverflowError, family_overrides=5 as TypeError."""
    with pytest.raises(InputError, match=fragment):
        Conventions(**{field: bad})


@pytest.mark.parametrize("changes, fragment", [
    ({"relevance_threshold": -1}, "relevance_threshold must be 0 or more"),
    ({"relevance_threshold": -0.5}, "relevance_threshold must be 0 or more"),
    ({"gain": {-1: 5, 1: 1}}, "a gain map's grades must be 0 or more"),
])
def test_negative_grades_cannot_be_made_relevant_or_gaining(changes, fragment):
    """A grade below 0 is judged but not pooled: unjudged for every measure. A threshold of
    -1 counted such documents relevant in the ranking but not in R (AP 2.0, R@3 2.0; trec_eval's
    ``-l -1`` is as inconsistent), and a gain map's -1 was ignored without a word."""
    qrels, run = {"q": {"a": -1, "b": 0}}, {"q": {"a": 1.0, "b": 0.5, "c": 0.2}}
    with pytest.raises(InputError, match=fragment):
        rankwise.evaluate(qrels, run, ["AP", "R@3", "nDCG"], **changes)
    with pytest.raises(rankwise.MeasureError, match="parameter rel must be 0 or more"):
        rankwise.evaluate(qrels, run, ["AP(rel=-1)"])
    assert rankwise.evaluate(qrels, run, ["AP(rel=0)"]).mean("AP(rel=0)") == 0.5


def test_numpy_scalars_are_taken_as_numbers():
    """As the drop-ins' and adapters' keyword overrides pass them: ``np.int64(2)`` was refused
    as 'not a finite number', and a numpy value would have reached the JSON output."""
    np = pytest.importorskip("numpy")
    conv = Conventions(relevance_threshold=np.int64(2), max_depth=np.int32(5),
                       discount_base=np.float32(10))
    assert conv == Conventions(relevance_threshold=2, max_depth=5, discount_base=10.0)
    assert type(conv.max_depth) is int and type(conv.discount_base) is float
    json.dumps(conv.to_dict())
    with pytest.raises(InputError, match="max_depth must be a positive integer"):
        Conventions(max_depth=np.bool_(True))
    with pytest.raises(InputError, match="relevance_threshold must be a finite number"):
        Conventions(relevance_threshold=np.float64("nan"))


def test_json_round_trip_keeps_every_field():
    conv = Conventions(gain={1: 1, 2: 3}, ties="optimistic", family_overrides=(("nDCG", "gain",
                                                                              "exponential"),))
    result = rankwise.evaluate(QRELS, RUN, ["P@5"], conv)
    back = rankwise.Result.from_json(result.to_json())
    assert back.conventions.to_dict() == conv.to_dict()
    assert json.loads(result.to_json())["conventions"]["gain"] == {"1": 1.0, "2": 3.0}


def test_cli_flags_reach_the_engine(tmp_path, capsys):
    qrels = tmp_path / "qrels.txt"
    run = tmp_path / "run.txt"
    qrels.write_text("q 0 a 2\nq 0 b 0\nq 0 c 1\nq 0 d 3\nq 0 e 1\n")
    run.write_text("q Q0 a 1 0.9 t\nq Q0 b 2 0.8 t\nq Q0 c 3 0.7 t\nq Q0 x 4 0.6 t\n")
    argv = ["evaluate", str(qrels), str(run), "-m", "AP", "P@5", "-f", "json"]
    flags = ["--ap-denominator", "relevant_retrieved", "--short-lists", "length", "--gain",
             "1=1,2=3", "--ties", "pessimistic", "--idcg-zero", "nan", "--discount-base", "3"]
    assert main(argv + flags) == 0
    out = json.loads(capsys.readouterr().out)
    assert next(iter(out["systems"].values()))["aggregates"]["AP"] == pytest.approx((1 + 2 / 3) / 2)
    assert next(iter(out["systems"].values()))["aggregates"]["P@5"] == pytest.approx(2 / 4)
    conv = out["conventions"]
    assert (conv["ties"], conv["gain"], conv["idcg_zero"], conv["discount_base"]) == \
        ("pessimistic", {"1": 1.0, "2": 3.0}, "nan", 3.0)
    assert main(argv + ["--profile", "torchmetrics", "--score-precision", "float64"]) == 0
    conv = json.loads(capsys.readouterr().out)["conventions"]
    assert (conv["ideal"], conv["score_precision"]) == ("retrieved", "float64")


def test_cli_table_prints_the_conventions_and_profiles_lists_them(tmp_path, capsys):
    assert main(["profiles"]) == 0
    table = capsys.readouterr().out
    for name in PROFILES:
        assert f"| {name} |" in table
    assert main(["profiles", "sklearn"]) == 0
    assert "ideal                retrieved" in capsys.readouterr().out


def test_every_choice_field_has_a_cli_flag():
    from rankwise.cli import _parser

    text = _parser()._subparsers._group_actions[0].choices["evaluate"].format_help()
    for name in CHOICES:
        assert "--" + name.replace("_", "-") in text


def test_jarvelin_discount_leaves_ranks_up_to_the_base_undiscounted():
    # a (2) at rank 1, c (1) at rank 3: 2/1 + 1/log2(3), where rank_plus_one gives 2 + 1/2
    assert value("DCG", discount="jarvelin") == pytest.approx(2 + 1 / math.log2(3))
    explained = rankwise.explain(QRELS, RUN, query="q", measure="DCG", discount="jarvelin")
    assert explained.value == pytest.approx(2 + 1 / math.log2(3))


def test_run_only_queries_can_count_as_queries_without_relevant_documents():
    run = {**RUN, "y": {"a": 1.0}}
    result = rankwise.evaluate(QRELS, run, ["P@5", "NumQ"], run_only_queries="zero",
                               per_query=True)
    assert result.per_query()["y"] == {"P@5": 0.0, "NumQ": 1.0}
    assert result.mean("P@5") == pytest.approx(0.4 / 3)
    assert result.diagnostics["run"]["queries_only_in_run_scored"] == 1
    skipped = rankwise.evaluate(QRELS, run, ["P@5"], run_only_queries="zero", no_relevant="skip")
    assert skipped.mean("P@5") == pytest.approx(0.4)
