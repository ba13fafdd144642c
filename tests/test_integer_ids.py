"""Integer doc ids kept as integers (as the Spark engine's partitions keep them): the one
pass keys them as they are and must give exactly what their decimal strings give."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa
import pytest

from rankwise.conventions import resolve
from rankwise.core.keys import KeyCollision, integer_ids, integer_pair_keys
from rankwise.core.ranked import index_judgments, rank
from rankwise.errors import InputError
from rankwise.io.tables import Qrels, Run


def _tables(doc_ids: np.ndarray, seed: int = 0):
    """A run (ties included) and judgments over ``doc_ids``, once with integer doc ids and once
    with their decimal strings."""
    rng = np.random.default_rng(seed)
    queries = np.repeat(np.arange(40), 30)
    run_docs = np.concatenate([rng.choice(doc_ids, 30, replace=False) for _ in range(40)])
    score = np.round(rng.random(len(queries)) * 5)  # many ties
    judged = rng.random(len(queries)) < 0.4
    grade = rng.integers(-1, 4, len(queries)).astype(float)
    sub = np.flatnonzero(judged)
    run = Run.from_columns(queries.astype(str), run_docs.astype(str), score, name="r")
    qrels = Qrels.from_columns(queries[sub].astype(str), run_docs[sub].astype(str), grade[sub])
    out = [(replace(qrels, docs=pa.array(run_docs[sub], pa.int64())),
            replace(run, docs=pa.array(run_docs, pa.int64()))), (qrels, run)]
    return out


def _same(a, b):
    assert a.query_ids.tolist() == b.query_ids.tolist()
    for name in ("offsets", "grade", "score", "run_row", "levels", "level_counts"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.diagnostics.to_dict() == b.diagnostics.to_dict()


@pytest.mark.parametrize("ids", [np.arange(3, 300) * 7,  # "98" sorts after "105" as strings
                                 np.arange(-150, 150) * 13,  # negative: compared as strings
                                 (np.arange(300) + (1 << 60))])  # too large for the keys
@pytest.mark.parametrize("ties", ["docid_desc", "docid_asc", "input_order"])
def test_integer_ids_rank_as_their_strings(ids, ties):
    (qrels_i, run_i), (qrels_s, run_s) = _tables(ids)
    conv = resolve(None, ties=ties)
    _same(rank(qrels_i, run_i, conv), rank(qrels_s, run_s, conv))
    assert index_judgments(qrels_i).integer == bool(ids.min() >= 0 and ids.max() < 1 << 40)


def test_integer_ids_on_one_side_only_compare_as_strings():
    (qrels_i, run_i), (qrels_s, run_s) = _tables(np.arange(500))
    expected = rank(qrels_s, run_s)
    _same(rank(qrels_i, run_s), expected)
    _same(rank(qrels_s, run_i), expected)


def test_integer_duplicates_are_found_and_named():
    (qrels, run), _ = _tables(np.arange(500))
    docs = pa.concat_arrays([run.docs, run.docs.slice(3, 1)])
    twice = replace(run, query_code=np.append(run.query_code, run.query_code[3]), docs=docs,
                    score=np.append(run.score, 9.0))
    with pytest.raises(InputError, match=f"document '{run.docs[3]}' appears twice"):
        rank(qrels, twice)
    kept = rank(qrels, twice, resolve(None, duplicates="max"))
    assert kept.diagnostics.run_duplicates_dropped == 1


def test_integer_pair_keys_refuse_ids_that_do_not_fit():
    codes = np.array([0, 1, 1], dtype=np.int32)
    keys = integer_pair_keys(codes, np.array([5, 5, 6]), 2)
    assert len(set(keys.tolist())) == 3 and np.all(np.diff(keys) > 0)
    with pytest.raises(KeyCollision):
        integer_pair_keys(codes, np.array([5, -1, 6]), 2)
    with pytest.raises(KeyCollision):
        integer_pair_keys(codes, np.array([5, 1 << 62, 6]), 2)
    assert integer_ids(pa.array(["1"])) is None
    assert integer_ids(pa.array([1, None])) is None
    assert integer_ids(pa.array([1, 2], pa.uint64())) is None
    np.testing.assert_array_equal(integer_ids(pa.array([1, 2], pa.int32())), [1, 2])
