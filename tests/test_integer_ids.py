"""Integer doc ids kept as integers (as the Spark engine's partitions keep them): the one
pass keys them as they are and must give exactly what their decimal strings give."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa
import pytest

from rankwise.conventions import resolve
from rankwise.core.keys import KeyCollision, integer_ids, integer_pair_keys
from rankwise.core.judgments import index_judgments
from rankwise.core.ranked import rank
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


# ------------------------------------------------ integer doc ids through the public API

MEASURES = ["P@5", "R@10", "AP", "nDCG@10", "nDCG", "RR", "Rprec", "Bpref", "ERR@10",
            "Success@3", "NumRet", "NumRelRet"]


def _frames(doc_ids: np.ndarray, seed: int = 1):
    """Judgments and a run as Arrow tables (ties, grades, unjudged documents, a run-only and
    a judged-only query, a duplicated row), once with integer doc ids and once with their
    decimal strings."""
    rng = np.random.default_rng(seed)
    queries = np.repeat(np.array([f"q{i}" for i in range(30)], dtype="U16"), 25)
    run_docs = np.concatenate([rng.choice(doc_ids, 25, replace=False) for _ in range(30)])
    score = np.round(rng.random(len(queries)) * 4)  # many ties
    queries[-25:] = "run-only"
    pick = (rng.random(len(queries)) < 0.5) & (queries != "run-only")
    q_queries = np.append(queries[pick], ["judged-only"] * 3)
    q_docs = np.append(run_docs[pick], doc_ids[:3])
    grade = rng.integers(-1, 4, len(q_queries)).astype(float)
    run_docs = np.append(run_docs, run_docs[0])  # the first (query, doc) twice
    queries, score = np.append(queries, queries[0]), np.append(score, 9.0)
    out = []
    for cast in (lambda d: pa.array(d, pa.int64()), lambda d: pa.array(d.astype(str))):
        out.append((pa.table({"query": q_queries, "doc": cast(q_docs), "relevance": grade}),
                    pa.table({"query": queries, "doc": cast(run_docs), "score": score})))
    return out


IDS = {"string order differs": np.arange(3, 400) * 7,
       "negative": np.arange(-200, 200) * 13,
       "too large for the keys": np.arange(400) + (1 << 60)}
CONVENTIONS = [dict(duplicates="first"), dict(duplicates="max", ties="docid_asc"),
               dict(duplicates="last", ties="input_order", unjudged="remove"),
               dict(duplicates="first", ties="expected", missing_queries="zero",
                    run_only_queries="zero"),
               dict(duplicates="first", ties="pessimistic", max_depth=12)]


@pytest.mark.parametrize("ids", list(IDS.values()), ids=list(IDS))
@pytest.mark.parametrize("conv", CONVENTIONS, ids=[str(c) for c in CONVENTIONS])
def test_integer_doc_ids_evaluate_as_their_strings(ids, conv):
    import rankwise

    (qrels_i, run_i), (qrels_s, run_s) = _frames(ids)
    expected = rankwise.evaluate(qrels_s, run_s, MEASURES, per_query=True, **conv).to_json()
    for qrels, run in ((qrels_i, run_i), (qrels_i, run_s), (qrels_s, run_i)):
        got = rankwise.evaluate(qrels, run, MEASURES, per_query=True, **conv).to_json()
        assert got == expected


def test_integer_doc_ids_are_kept_and_keyed_as_they_are():
    from rankwise.io.frames import to_qrels, to_run

    (qrels_i, run_i), _ = _frames(IDS["string order differs"])
    run = to_run(run_i.select(["query", "doc", "score"]))
    assert pa.types.is_int64(run.docs.type)
    assert index_judgments(to_qrels(qrels_i)).integer
    narrow = run_i.set_column(1, "doc", run_i["doc"].cast(pa.int32()))
    assert pa.types.is_int64(to_run(narrow).docs.type)
    wide = run_i.set_column(1, "doc", run_i["doc"].cast(pa.uint64()))
    assert pa.types.is_string(to_run(wide).docs.type)  # may not fit an int64: strings


def test_integer_doc_ids_in_explain_report_and_writers(tmp_path):
    import rankwise
    from rankwise.io.frames import to_qrels, to_run
    from rankwise.io.trec import write_qrels, write_run
    from rankwise.report.data import collect

    (qrels_i, run_i), (qrels_s, run_s) = _frames(IDS["string order differs"])
    conv = dict(duplicates="first")
    for query in ("q0", "q7"):
        got = rankwise.explain(qrels_i, run_i, query, "nDCG@10", **conv)
        assert got.to_json() == rankwise.explain(qrels_s, run_s, query, "nDCG@10",
                                                 **conv).to_json()
        assert {type(row["doc"]) for row in got.to_dict()["rows"]} == {str}
    data_i, data_s = (collect(q, r, ["nDCG@10", "AP"], **conv)
                      for q, r in ((qrels_i, run_i), (qrels_s, run_s)))
    top_i, top_s = data_i.systems["run"].top_docs, data_s.systems["run"].top_docs
    assert pa.types.is_string(top_i.type) and top_i.to_pylist() == top_s.to_pylist()
    for name, table in (("i", (qrels_i, run_i)), ("s", (qrels_s, run_s))):
        write_qrels(to_qrels(table[0]), tmp_path / f"qrels.{name}")
        write_run(to_run(table[1].slice(0, table[1].num_rows - 1)), tmp_path / f"run.{name}")
    for kind in ("qrels", "run"):
        assert (tmp_path / f"{kind}.i").read_text() == (tmp_path / f"{kind}.s").read_text()


def test_integer_doc_ids_from_parquet_files_and_streamed(tmp_path):
    import pyarrow.parquet as pq

    import rankwise
    from rankwise.stream import evaluate_stream

    (qrels_i, run_i), (qrels_s, run_s) = _frames(IDS["string order differs"])
    paths = {}
    for name, table in (("qrels_i", qrels_i), ("run_i", run_i), ("qrels_s", qrels_s),
                        ("run_s", run_s)):
        kind, ids = name.split("_")  # the same file names: the source names are reported
        (tmp_path / ids).mkdir(exist_ok=True)
        paths[name] = str(tmp_path / ids / f"{kind}.parquet")
        pq.write_table(table.slice(0, table.num_rows - (kind == "run")), paths[name])
    expected = rankwise.evaluate(paths["qrels_s"], paths["run_s"], MEASURES,
                                 per_query=True).to_json()
    assert rankwise.evaluate(paths["qrels_i"], paths["run_i"], MEASURES,
                             per_query=True).to_json() == expected
    streamed = [evaluate_stream(q, r, MEASURES, per_query=True, chunk_bytes=400).to_json()
                for q, r in ((paths["qrels_i"], paths["run_i"]),
                             (paths["qrels_s"], paths["run_s"]))]
    assert streamed[0] == streamed[1]


@pytest.mark.parametrize("ids", list(IDS.values()), ids=list(IDS))
@pytest.mark.parametrize("conv", CONVENTIONS[1:4], ids=[str(c) for c in CONVENTIONS[1:4]])
def test_integer_doc_ids_stream_as_integers_to_the_in_memory_result(tmp_path, monkeypatch,
                                                                     ids, conv):
    """A Parquet run with integer doc ids streams with its ids as integers (no strings made
    of them), chunk by chunk down to chunks without a judged query, and gives what the one
    pass over the same files gives, whichever side holds integers."""
    import pyarrow.parquet as pq

    import rankwise
    from rankwise.stream.helpers import integer_docs
    from rankwise.stream.readers import Rows

    (qrels_i, run_i), (qrels_s, run_s) = _frames(ids)
    paths = {}
    for name, table in (("qrels_i", qrels_i), ("run_i", run_i), ("qrels_s", qrels_s),
                        ("run_s", run_s)):
        paths[name] = str(tmp_path / f"{name}.parquet")
        rows = table.num_rows - name.startswith("run")  # the duplicate last row: q0 again
        pq.write_table(table.slice(0, rows), paths[name])
    types = []
    to_run = Rows.to_run
    monkeypatch.setattr(Rows, "to_run", lambda self, *a: types.append(
        integer_docs(self.doc)) or to_run(self, *a))
    for q, r in (("qrels_i", "run_i"), ("qrels_i", "run_s"), ("qrels_s", "run_i")):
        expected = rankwise.evaluate(paths[q], {"sys": paths[r]}, MEASURES, per_query=True,
                                     **conv).to_json()
        types.clear()
        for chunk_bytes in (400, 4000, 10 ** 6):
            assert rankwise.stream.evaluate_stream(
                paths[q], {"sys": paths[r]}, MEASURES, per_query=True, chunk_bytes=chunk_bytes,
                **conv).to_json() == expected, (q, r, chunk_bytes)
        assert set(types) == {r == "run_i"}


def test_integer_item_ids_in_a_run_for_recsys():
    from rankwise.io.frames import to_run
    from rankwise.recsys import evaluate as recsys_evaluate

    (qrels_i, run_i), (qrels_s, run_s) = _frames(np.arange(3, 400) * 7)
    test = pa.table({"user": qrels_s["query"], "item": qrels_s["doc"],
                     "rating": [5.0 if g >= 2 else 1.0 for g in qrels_s["relevance"].to_pylist()]})
    got, expected = (recsys_evaluate(to_run(r.slice(0, r.num_rows - 1)), test,
                                     ["nDCG@10", "HR@5"]).to_json() for r in (run_i, run_s))
    assert got == expected
