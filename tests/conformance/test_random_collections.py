"""rankwise against trec_eval 10.0 on 24 small random collections (tests/data/random, made by
:mod:`tests.conformance.random_collections`): every line of every measure rankwise implements,
per query and ``all``, under seven flag sets, at trec_eval's 4 printed decimals.

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


def expected_lines() -> dict[str, dict[int, list[tuple[str, str, str]]]]:
    """flags -> seed -> trec_eval's (measure, query, value) lines."""
    out: dict[str, dict[int, list]] = defaultdict(lambda: defaultdict(list))
    with gzip.open(DATA / "expected.tsv.gz", "rt") as lines:
        for line in lines:
            seed, flags, name, qid, value = line.rstrip("\n").split("\t")
            out[flags][int(seed)].append((name, qid, value))
    return out


EXPECTED = expected_lines()


@pytest.mark.parametrize("flags", list(FLAGS), ids=lambda f: f or "defaults")
def test_random_collections(flags: str) -> None:
    conventions, full_qrels, pinned = FLAGS[flags]
    compared, mismatches, empty_nan = 0, [], 0
    for seed, lines in sorted(EXPECTED[flags].items()):
        folder = DATA / str(seed)
        qrels = folder / ("qrels" if full_qrels else "qrels.inrun")
        result = rankwise.evaluate(qrels, folder / "run", MEASURES, per_query=True,
                                   conventions=rankwise.Conventions(**conventions))
        per_query = result.per_query()
        for name, qid, value in lines:
            if name == "runid" or not_implemented(name):
                continue
            canonical = BY_TREC_NAME[name]
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
    assert compared == pinned
    assert (empty_nan > 0) == ("J" in flags)


def test_the_collections_are_the_generators():
    """The stored inputs are what the generator writes for each seed (so the generator is the
    description of the data)."""
    from tests.conformance.random_collections import collection

    for seed in sorted(EXPECTED[""]):
        qrels, run = collection(seed)
        assert (DATA / str(seed) / "qrels").read_text() == "\n".join(qrels) + "\n"
        assert (DATA / str(seed) / "run").read_text() == "\n".join(run) + "\n"
    assert len(EXPECTED[""]) == 24
