"""rankwise against trec_eval 10.0 on 24 small random collections (tests/data/random, made by
:mod:`tests.conformance.random_collections`): every line of every measure rankwise implements,
per query and ``all``, under seven flag sets, at trec_eval's 4 printed decimals.

The same collections are compared under measure parameters too (``-m 11pt_avg.0.2,0.5,0.8 -m
ndcg.1=3,2=9 ...``, :data:`PARAMETERS`), under five flag sets.

The collections hold what the fixed test data has little of: grades -1 to 4, numeric and
zero-padded query ids, negative and heavily tied scores, shuffled runs, queries with one
document, and judged queries whose every retrieved document is unjudged. trec_eval prints
``-nan`` for ``iprec_at_recall_*`` and ``11pt_avg`` of such a query under ``-J`` (its ranking is
empty: 0/0), and so for their ``all`` line; rankwise gives the query 0 (docs/conformance.md),
which the test checks instead.
"""

from __future__ import annotations

import gzip
from collections import defaultdict
from pathlib import Path

import pytest

import rankwise
from tests.conformance.test_trec_eval import not_implemented, same_value

DATA = Path(__file__).resolve().parent.parent / "data" / "random"

#: trec_eval's flags -> (rankwise conventions, whether the full qrels are used, lines compared)
FLAGS = {
    "": ({}, False, 12992),
    "-c": ({"missing_queries": "zero"}, True, 14322),
    "-l2": ({"relevance_threshold": 2}, False, 12992),
    "-J": ({"unjudged": "remove"}, False, 12810),
    "-M5": ({"max_depth": 5}, False, 12992),
    "-c -M3": ({"missing_queries": "zero", "max_depth": 3}, True, 14322),
    "-l2 -J": ({"relevance_threshold": 2, "unjudged": "remove"}, False, 12778),
}
MEASURES = rankwise.parse_measures("all_trec")
BY_TREC_NAME = {m.trec_name(): str(m) for m in MEASURES}


#: trec_eval's -m arguments of expected_params.tsv.gz (one parameter set per measure name:
#: trec_eval keeps the first -m of a measure)
PARAMETERS = ("11pt_avg.0.2,0.5,0.8", "ndcg.1=3,2=9", "utility.2,-1,-0.5,0.25", "set_F.0.5",
              "rbp.p=0.5", "rbp_resid.p=0.5", "Rprec_mult.0.5,1.5", "iprec_at_recall..33,.66",
              "P.3,7", "ndcg_rel.1=3,2=9", "Rndcg.1=3,2=9", "G.1=3,2=9", "ndcg_cut.3,7",
              "success.2,4", "relative_P.3", "recall.3,7", "map_cut.3,7", "unj.3")
#: flags -> (lines compared, lines of trec_eval's -c leftovers not compared: see below)
PARAMETER_FLAGS = {"": (3400, 0), "-c": (3704, 46), "-l2": (3400, 0), "-J": (3356, 0),
                   "-M5": (3400, 0)}


def trec_names(arguments) -> dict[str, str]:
    """trec_eval's printed name -> rankwise's canonical name, for -m arguments: a family with
    parameters prints as ``name_params`` (``ndcg_1=3,2=9``), a list of cutoffs as one name each
    (what ``Measure.trec_name`` gives measures written in trec_eval's syntax)."""
    return {m.trec_name(): str(m) for argument in arguments
            for m in rankwise.parse_measures(argument)}


def expected_lines(file: str = "expected.tsv.gz") -> dict[str, dict[int, list[tuple[str, str,
                                                                                   str]]]]:
    """flags -> seed -> trec_eval's (measure, query, value) lines."""
    out: dict[str, dict[int, list]] = defaultdict(lambda: defaultdict(list))
    with gzip.open(DATA / file, "rt") as lines:
        for line in lines:
            seed, flags, name, qid, value = line.rstrip("\n").split("\t")
            out[flags][int(seed)].append((name, qid, value))
    return out


EXPECTED = expected_lines()
EXPECTED_PARAMETERS = expected_lines("expected_params.tsv.gz")
EXPECTED_GAINS = expected_lines("expected_gains.tsv.gz")
#: trec_eval's -m arguments of expected_gains.tsv.gz: a gain map with a negative gain (grade 0)
#: and gains out of grade order, under the flags of PARAMETER_FLAGS
GAIN_MAPS = ("ndcg.0=-1,1=3,3=1", "ndcg_rel.0=-1,1=3,3=1", "Rndcg.0=-1,1=3,3=1",
             "G.0=-1,1=3,3=1")
GAIN_LINES = {"": 544, "-c": 600, "-l2": 544, "-J": 544, "-M5": 544}


def compare(expected: dict[int, list[tuple[str, str, str]]], flags: str,
            names: dict[str, str], left_out=lambda name, qid, missing: False
            ) -> tuple[int, int, int]:
    """Every seed's trec_eval lines under ``flags`` against rankwise's values of ``names``
    (trec_eval's name -> rankwise's); ``left_out(name, qid, queries missing from the run)``
    names the lines not compared. Returns (compared, left out, -nan lines); asserts no
    mismatch."""
    conventions, full_qrels, _ = FLAGS[flags]
    measures = [rankwise.parse_measure(n) for n in dict.fromkeys(names.values())]
    compared, skipped, empty_nan, mismatches = 0, 0, 0, []
    for seed, lines in sorted(expected.items()):
        folder = DATA / str(seed)
        qrels = folder / ("qrels" if full_qrels else "qrels.inrun")
        result = rankwise.evaluate(qrels, folder / "run", measures, per_query=True,
                                   conventions=rankwise.Conventions(**conventions))
        per_query = result.per_query()
        missing = set(rankwise.read_qrels(qrels).query_ids()) - set(
            rankwise.read_run(folder / "run").query_ids())
        for name, qid, value in lines:
            if name == "runid" or not_implemented(name):
                continue
            if left_out(name, qid, missing):
                skipped += 1
                continue
            canonical = names[name]
            actual = result.mean(canonical) if qid == "all" else per_query[qid][canonical]
            if value == "-nan":  # an empty ranking under -J (module docstring)
                assert "J" in flags and (qid == "all" or actual == 0.0), (seed, name, qid)
                empty_nan += 1
                continue
            if not same_value(value, actual, name):
                mismatches.append(f"seed {seed}: {name}\t{qid}\texpected {value}, rankwise "
                                  f"{actual!r}")
            compared += 1
    assert not mismatches, f"{len(mismatches)} of {compared} differ:\n" + "\n".join(
        mismatches[:40])
    return compared, skipped, empty_nan


@pytest.mark.parametrize("flags", list(FLAGS), ids=lambda f: f or "defaults")
def test_random_collections(flags: str) -> None:
    compared, _, empty_nan = compare(EXPECTED[flags], flags, BY_TREC_NAME)
    assert compared == FLAGS[flags][2]
    assert (empty_nan > 0) == ("J" in flags)


@pytest.mark.parametrize("flags", list(PARAMETER_FLAGS), ids=lambda f: f or "defaults")
def test_random_collections_with_measure_parameters(flags: str) -> None:
    """Under ``-c``, trec_eval scores a query missing from the run on a made-up ranking of one
    unjudged document, then resets the measures that ranking would disturb by their exact
    names (trec_eval.c: ``utility``, ``rbp_resid``, ``unj*``, ``num_ret``): ``utility_2,...``
    and ``rbp_resid_p=0.5`` keep that ranking's values. rankwise scores the empty ranking; those
    lines (and their ``all``) are not compared, and the next test shows where trec_eval's
    numbers come from."""
    def leftover(name: str, qid: str, missing: set) -> bool:
        return flags == "-c" and name.startswith(("utility_", "rbp_resid_")) and bool(
            missing) and (qid == "all" or qid in missing)

    compared, leftovers, _ = compare(EXPECTED_PARAMETERS[flags], flags, trec_names(PARAMETERS),
                                     leftover)
    assert (compared, leftovers) == PARAMETER_FLAGS[flags]


@pytest.mark.parametrize("flags", list(GAIN_LINES), ids=lambda f: f or "defaults")
def test_random_collections_with_negative_gains(flags: str) -> None:
    """Negative gains count in the DCG of the ranking (and nDCG can be negative), but only the
    documents with a positive gain are the relevant ones ndcg_rel averages over, and an
    ndcg_rel sum of 0 or less is 0 (m_ndcg_rel.c)."""
    compared, _, _ = compare(EXPECTED_GAINS[flags], flags, trec_names(GAIN_MAPS))
    assert compared == GAIN_LINES[flags]


def test_trec_eval_scores_a_missing_query_on_a_one_document_ranking():
    """Where the -c values of parameterized utility and rbp_resid come from: trec_eval's
    made-up ranking, one unjudged document (trec_eval.c ``bogus_ranking``), evaluated by
    rankwise gives trec_eval's numbers for query 2 of seed 1 (judged, not in the run)."""
    lines = {(name, qid): value for name, qid, value in EXPECTED_PARAMETERS["-c"][1]}
    bogus = {"2": {"ceci_nest_pas_un_docno": 1.0}}
    names = trec_names(["utility.2,-1,-0.5,0.25", "rbp_resid.p=0.5"])
    result = rankwise.evaluate(DATA / "1" / "qrels", bogus, list(names.values()), per_query=True)
    for name, canonical in names.items():
        assert same_value(lines[(name, "2")], result.per_query()["2"][canonical], name)
    empty = rankwise.evaluate(DATA / "1" / "qrels", DATA / "1" / "run", list(names.values()),
                              per_query=True, missing_queries="zero").per_query()["2"]
    assert empty == {"Utility(nonrel_missed=0.25,rel_missed=-0.5,rel_ret=2)": -1.5,
                     "RBPResid(p=0.5)": 0.0}


def test_the_collections_are_the_generators():
    """The stored inputs are what the generator writes for each seed (so the generator is the
    description of the data)."""
    from tests.conformance.random_collections import collection

    for seed in sorted(EXPECTED[""]):
        qrels, run = collection(seed)
        assert (DATA / str(seed) / "qrels").read_text() == "\n".join(qrels) + "\n"
        assert (DATA / str(seed) / "run").read_text() == "\n".join(run) + "\n"
    assert len(EXPECTED[""]) == 24
