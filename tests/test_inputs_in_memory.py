"""Judgments and runs from DataFrames, Arrow tables, dicts and learning-to-rank arrays."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import rankwise
from rankwise import InputError

QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d1": 1}}
RUN = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d9": 5.0, "d1": 4.0}}
MEASURES = ["P@2", "AP", "nDCG@3", "RR"]


def expected():
    return rankwise.evaluate(QRELS, RUN, MEASURES, per_query=True).per_query()


def long_rows(nested, value):
    return [{"query": q, "doc": d, value: v} for q, docs in nested.items() for d, v in docs.items()]


def test_dicts():
    got = expected()
    assert got["q1"]["P@2"] == 0.5 and got["q2"]["RR"] == 0.5


@pytest.mark.parametrize("make", [
    lambda rows: pd.DataFrame(rows),
    lambda rows: pl.DataFrame(rows),
    lambda rows: pa.Table.from_pylist(rows),
    lambda rows: pl.DataFrame(rows).lazy(),
    lambda rows: pa.RecordBatch.from_pylist(rows),
], ids=["pandas", "polars", "arrow", "polars-lazy", "arrow-record-batch"])
def test_frames_match_dicts(make):
    """A polars LazyFrame (collected once) and an Arrow RecordBatch are read as a DataFrame
    and a Table are: they were refused as neither a path, a frame, a table nor a dict."""
    qrels = make(long_rows(QRELS, "relevance"))
    run = make(long_rows(RUN, "score"))
    assert rankwise.evaluate(qrels, run, MEASURES, per_query=True).per_query() == expected()


def test_a_lazyframe_whose_plan_fails_is_refused_saying_why(tmp_path):
    plans = [pl.scan_parquet(tmp_path / "missing.parquet"),
             pl.LazyFrame({"query": ["q1"], "doc": ["d1"], "score": ["x"]})
             .with_columns(pl.col("score").cast(pl.Float64))]
    for plan, reason in zip(plans, ["No such file or directory", "conversion from `str`"]):
        with pytest.raises(InputError, match=rf"^run LazyFrame: the LazyFrame's plan failed: "
                                             rf".*{reason}"):
            rankwise.evaluate(QRELS, plan, MEASURES)


def test_renamed_columns():
    qrels = pd.DataFrame(long_rows(QRELS, "rating")).rename(columns={"query": "user", "doc": "item"})
    run = pd.DataFrame(long_rows(RUN, "pred")).rename(columns={"query": "user", "doc": "item"})
    q = rankwise.to_qrels(qrels, query="user", doc="item", relevance="rating")
    r = rankwise.to_run(run, query="user", doc="item", score="pred")
    assert rankwise.evaluate(q, r, MEASURES, per_query=True).per_query() == expected()


def test_missing_column_is_named():
    with pytest.raises(InputError, match="no column 'score'.*columns: query, doc, rating"):
        rankwise.evaluate(QRELS, pd.DataFrame(long_rows(RUN, "rating")), ["AP"])


def test_a_qrels_frame_missing_a_column_says_to_name_them_with_to_qrels():
    """evaluate's query=, doc= name the runs' columns and it takes no relevance=: the hint
    "name the columns with query=, doc= and relevance=" sent evaluate(..., relevance=...) to
    'unknown convention 'relevance''."""
    qrels = pd.DataFrame({"user": ["u1"], "item": ["i1"], "rating": [1]})
    run = pd.DataFrame({"user": ["u1"], "item": ["i1"], "score": [1.0]})
    with pytest.raises(InputError, match=r"^qrels DataFrame: qrels frame has no column 'query' "
                                         r"\(columns: user, item, rating\); name the columns "
                                         r"with rankwise.to_qrels\(qrels, query=..., doc=..., "
                                         r"relevance=...\)$"):
        rankwise.evaluate(qrels, run, ["AP"], query="user", doc="item")
    named = rankwise.to_qrels(qrels, query="user", doc="item", relevance="rating")
    assert rankwise.evaluate(named, run, ["AP"], query="user", doc="item").mean("AP") == 1.0


def test_a_column_in_the_index_is_named_as_such():
    """A frame indexed by query (set_index, groupby) was refused as having no column 'query'
    with the hint to name the columns with query=, which cannot name an index level."""
    run = pd.DataFrame(long_rows(RUN, "score")).set_index(["query", "doc"])
    with pytest.raises(InputError, match=r"^run DataFrame: run frame has no column 'query' "
                                         r"\(columns: score\); 'query' is the frame's index, "
                                         r"which is not read: reset_index\(\) makes it a column"):
        rankwise.evaluate(QRELS, run, MEASURES)
    assert rankwise.evaluate(QRELS, run.reset_index(), MEASURES, per_query=True).per_query() \
        == expected()


def test_integer_ids_become_strings():
    qrels = pd.DataFrame({"query": [1, 1], "doc": [10, 11], "relevance": [1, 0]})
    run = pd.DataFrame({"query": [1, 1], "doc": [11, 10], "score": [0.9, 0.1]})
    assert rankwise.evaluate(qrels, run, ["RR"], per_query=True).per_query() == {"1": {"RR": 0.5}}


def test_nan_score_in_frame_names_the_row():
    run = pd.DataFrame({"query": ["q1", "q1"], "doc": ["d1", "d2"], "score": [1.0, np.nan]})
    with pytest.raises(InputError, match=r"run DataFrame, row 1: score must be a finite number"):
        rankwise.evaluate(QRELS, run, ["AP"])


def test_bad_value_in_dict_names_the_key():
    with pytest.raises(InputError, match="'q1'/'d2'"):
        rankwise.evaluate(QRELS, {"q1": {"d1": 1.0, "d2": "high"}}, ["AP"])


def test_several_runs_by_name():
    other = {"q1": {"d3": 3.0, "d1": 2.0}, "q2": {"d1": 1.0}}
    result = rankwise.evaluate(QRELS, {"a": RUN, "b": other}, MEASURES)
    assert list(result.systems) == ["a", "b"]
    assert result.mean("RR", "b") == 1.0
    assert result.mean("AP", "a") == rankwise.evaluate(QRELS, RUN, ["AP"]).mean("AP")


def test_a_run_name_that_is_not_a_string_is_its_string(tmp_path):
    """As {name: run}'s names are: to_run(..., name=5), read_run(..., name=5) and
    from_arrays(..., name=5) kept the integer, and the result's tables then failed
    (to_markdown: AttributeError 'int' object has no attribute 'replace')."""
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 3.0 sys\n")
    runs = [rankwise.to_run(RUN, name=5), rankwise.read_run(path, name=5),
            rankwise.to_run(str(path), name=5),
            rankwise.from_arrays([1, 0], [0.5, 0.25], name=5)[1],
            rankwise.Run.from_columns(["q1"], ["d1"], [1.0], name=5)]
    assert [run.name for run in runs] == ["5"] * 5
    result = rankwise.evaluate(QRELS, runs[0], ["AP"])
    assert list(result.systems) == ["5"] and "| 5 |" in result.to_markdown()


def test_arrays_with_group_sizes():
    y_true = [3, 0, 1, 2, 0]
    y_score = [0.9, 0.8, 0.1, 0.4, 0.5]
    qrels, run = rankwise.from_arrays(y_true, y_score, group=[3, 2])
    result = rankwise.evaluate(qrels, run, ["nDCG"], per_query=True).per_query()
    ideal = 3 + 1 / np.log2(3)
    assert result["0"]["nDCG"] == pytest.approx((3 + 0 + 1 / 2) / ideal)
    assert result["1"]["nDCG"] == pytest.approx((2 / np.log2(3)) / 2)


def test_arrays_with_query_ids_and_2d():
    y_true = np.array([[3, 0, 1], [0, 2, 0]])
    y_score = np.array([[0.9, 0.8, 0.1], [0.5, 0.4, 0.1]])
    two_d = rankwise.evaluate(*rankwise.from_arrays(y_true, y_score), ["nDCG"]).mean("nDCG")
    flat = rankwise.from_arrays(y_true.ravel(), y_score.ravel(), query=["a"] * 3 + ["b"] * 3)
    assert rankwise.evaluate(*flat, ["nDCG"]).mean("nDCG") == pytest.approx(two_d)


def test_arrays_against_sklearn_ndcg():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    y_true = rng.integers(0, 4, size=(20, 15))
    y_score = rng.random((20, 15))  # no ties: sklearn averages over tied orderings
    ours = rankwise.evaluate(*rankwise.from_arrays(y_true, y_score), ["nDCG@5"]).mean("nDCG@5")
    assert ours == pytest.approx(sklearn_metrics.ndcg_score(y_true, y_score, k=5))


def test_arrays_name_documents_by_position_and_order_ties_as_their_strings():
    """Doc ids are the positions 0, 1, ... (integers), tie-ordered as trec_eval orders their
    decimal strings ("9" before "10" under docid_desc): the same values as the same
    lists given with string doc ids."""
    rng = np.random.default_rng(5)
    y_true = rng.integers(0, 3, size=(30, 12)).astype(float)
    y_score = rng.integers(0, 3, size=(30, 12)).astype(float)  # many ties
    measures = ["P@5", "AP", "nDCG@5", "RR", "ERR@10", "Bpref"]
    qrels, run = rankwise.from_arrays(y_true, y_score)
    assert rankwise.io.tables.doc_strings(run.docs)[:12] == [str(i) for i in range(12)]
    as_dicts = ({str(q): {str(d): y_true[q, d] for d in range(12)} for q in range(30)},
                {str(q): {str(d): y_score[q, d] for d in range(12)} for q in range(30)})
    ours = rankwise.evaluate(qrels, run, measures, per_query=True).per_query()
    assert ours == rankwise.evaluate(*as_dicts, measures, per_query=True).per_query()


@pytest.mark.parametrize("query, names", [
    (np.array([7, 7, 3, 3, 3, 7]), ["7", "3"]),  # first appearance, numbers as strings
    (np.array(["b", "b", "a", "a", "a", "b"]), ["b", "a"]),
    (np.array([0.0, 0.0, -0.0, -0.0, -0.0, 0.0]), ["0.0", "-0.0"]),  # equal, not the same id
    (np.array([1, 1, "1", "1", "1", 1], dtype=object), ["1"]),
    (np.array([1, 1, True, True, True, 1.0], dtype=object), ["1", "True", "1.0"]),
])
def test_arrays_with_query_ids_of_any_kind(query, names):
    """Query ids are the given values' strings (rows of one id need not be together);
    documents are numbered within each id."""
    qrels, run = rankwise.from_arrays([1, 0, 2, 0, 1, 1], [0.5, 0.4, 0.3, 0.2, 0.1, 0.0],
                                      query=query)
    assert run.query_ids() == names == qrels.query_ids()
    per_row = [str(v) for v in query]
    seen: dict[str, int] = {}
    expected = []
    for qid in per_row:
        expected.append(str(seen.get(qid, 0)))
        seen[qid] = seen.get(qid, 0) + 1
    assert rankwise.io.tables.doc_strings(run.docs) == expected


@pytest.mark.parametrize("kwargs, fragment", [
    ({"group": [2, 2]}, "add up to 4, but there are 5 rows"),
    ({"group": [3, 2], "query": [1] * 5}, "either group"),
    ({"query": [1, 2]}, "query has 2 ids for 5 rows"),
    ({"query": [[1], [1], [2], [2], [2]]}, "1-D array of ids, one per row"),
])
def test_bad_arrays(kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        rankwise.from_arrays([1, 0, 0, 1, 0], [0.1] * 5, **kwargs)


def test_arrays_of_decimals_and_fractions_are_numbers_as_a_dicts_values_are():
    """A dict's values and a frame's column may be Decimal (as a database returns them) or
    Fraction; an object array of them was refused: 'y_score, row 0: score must be a number
    (got Decimal('0.9'))'."""
    from decimal import Decimal
    from fractions import Fraction

    y_true, y_score = [3, 0, 1, 2, 0], [0.875, 0.5, 0.25, 0.5, 0.75]
    expected_json = rankwise.evaluate(*rankwise.from_arrays(y_true, y_score, group=[3, 2]),
                                      ["nDCG@2", "AP"]).to_json()
    for kind in (Decimal, Fraction):
        scores = np.array([kind(str(s)) for s in y_score], dtype=object)
        grades = np.array([kind(g) for g in y_true], dtype=object)
        got = rankwise.evaluate(*rankwise.from_arrays(grades, scores, group=[3, 2]),
                                ["nDCG@2", "AP"])
        assert got.to_json() == expected_json


def test_shape_mismatch():
    with pytest.raises(InputError, match="shape"):
        rankwise.from_arrays([1, 0], [0.1, 0.2, 0.3])


def test_a_query_given_with_no_document_is_evaluated_as_an_empty_list_and_counted():
    import rankwise

    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {}}
    run = {"q1": {"a": 1.0}, "q2": {}, "q4": {}, "q3": {"c": 1.0}}
    result = rankwise.evaluate(qrels, run, ["P@1", "NumQ"], per_query=True)
    assert result.per_query() == {"q1": {"P@1": 1.0, "NumQ": 1.0}, "q2": {"P@1": 0.0, "NumQ": 1.0}}
    diag = result.diagnostics["run"]
    assert (diag["queries_empty_in_run"], diag["queries_only_in_run"],
            diag["qrels_queries_without_judgments"], diag["queries_only_in_qrels"]) == (1, 2, 1, 0)
    only_empty = rankwise.evaluate(qrels, {"q2": {}}, ["P@1"])
    assert only_empty.mean("P@1") == 0.0


@pytest.mark.parametrize("last_rank", [2, 3_000_000_000], ids=["int32", "beyond-32-bits"])
@pytest.mark.parametrize("make", [pd.DataFrame, pl.DataFrame, pa.table, "parquet"],
                         ids=["pandas", "polars", "arrow", "parquet"])
def test_a_frames_rank_column_is_checked_as_a_files(make, last_rank, tmp_path):
    """A run frame's ``rank`` column is read as a TREC file's rank field is: the queries whose
    ranks contradict their scores are counted, with the JSON of the same run as text, in one
    pass and streamed; a rank beyond 32 bits in another query once left the column out."""
    import pyarrow.parquet as pq

    from rankwise.stream import evaluate_stream

    run = {"query": ["q1", "q1", "q2", "q2"], "doc": ["d1", "d2", "d9", "d1"],
           "rank": [1, 2, 1, last_rank], "score": [1.0, 3.0, 5.0, 4.0]}
    text = tmp_path / "run.txt"
    text.write_text("".join(f"{q} Q0 {d} {r} {s} sys\n" for q, d, r, s in zip(*run.values())))
    expected = rankwise.evaluate(QRELS, {"sys": str(text)}, MEASURES, per_query=True)
    if make == "parquet":
        pq.write_table(pa.table(run), tmp_path / "run.parquet")
        given = str(tmp_path / "run.parquet")
    else:
        given = make(run)
    got = rankwise.evaluate(QRELS, {"sys": given}, MEASURES, per_query=True)
    assert got.systems["sys"].diagnostics["queries_rank_contradicts_score"] == 1
    assert got.to_json() == expected.to_json()
    for streamed in [str(text)] + ([given] if make == "parquet" else []):
        once = evaluate_stream(QRELS, {"sys": streamed}, MEASURES, per_query=True)
        assert once.systems["sys"].diagnostics["queries_rank_contradicts_score"] == 1


@pytest.mark.skipif(not hasattr(pa, "string_view"), reason="pyarrow before 16")
def test_string_view_id_columns_are_strings():
    """Arrow's string_view columns (as polars' newest Arrow output holds strings) are ids as
    string columns are."""
    def viewed(table):
        for name in ("query", "doc"):
            table = table.set_column(table.column_names.index(name), name,
                                     table.column(name).cast(pa.string_view()))
        return table

    qrels = viewed(pa.Table.from_pylist(long_rows(QRELS, "relevance")))
    run = viewed(pa.Table.from_pylist(long_rows(RUN, "score")))
    assert rankwise.evaluate(qrels, run, MEASURES, per_query=True).per_query() == expected()


def test_python_integers_beyond_int64_are_the_ids_of_uint64():
    """An object column of Python integers beyond int64 (64-bit hashes), which pyarrow cannot
    convert as int64, holds the ids a numpy uint64 column holds."""
    ids = [(1 << 64) - 1, 1 << 63, 5]
    qrels = {"q1": {str(ids[0]): 1, "5": 2}}
    as_uint64 = pd.DataFrame({"query": ["q1"] * 3, "doc": np.array(ids, dtype=np.uint64),
                              "score": [1.0, 3.0, 2.0]})
    as_objects = as_uint64.assign(doc=pd.Series(ids, dtype=object))
    expected = rankwise.evaluate(qrels, as_uint64, MEASURES, per_query=True).to_json()
    assert rankwise.evaluate(qrels, as_objects, MEASURES, per_query=True).to_json() == expected


def _with(rows: list[dict], column: str, row: int, value) -> list[dict]:
    changed = [dict(r) for r in rows]
    changed[row][column] = value
    return changed


EMPTY_ID_FORMS = {
    "pandas-object": lambda rows: pd.DataFrame(rows).astype({"query": object, "doc": object}),
    "pandas-str": lambda rows: pd.DataFrame(rows).astype({"query": "str", "doc": "str"}),
    "pandas-category": lambda rows: pd.DataFrame(rows).astype({"query": "category",
                                                               "doc": "category"}),
    "polars": lambda rows: pl.DataFrame(rows),
    "polars-categorical": lambda rows: pl.DataFrame(rows).with_columns(
        pl.col(pl.String).cast(pl.Categorical)),
    "arrow": lambda rows: pa.Table.from_pylist(rows),
    "arrow-dictionary": lambda rows: pa.Table.from_pylist(rows).set_column(
        0, "query", pa.Table.from_pylist(rows).column("query").dictionary_encode()
    ).set_column(1, "doc", pa.Table.from_pylist(rows).column("doc").dictionary_encode()),
    "arrow-large-string": lambda rows: pa.Table.from_pylist(rows).cast(pa.schema(
        [("query", pa.large_string()), ("doc", pa.large_string()), ("score", pa.float64())])),
}


@pytest.mark.parametrize("column", ["query", "doc"])
@pytest.mark.parametrize("form", EMPTY_ID_FORMS.values(), ids=EMPTY_ID_FORMS)
def test_an_empty_id_in_a_frame_is_refused_at_its_row(form, column):
    """An empty id, which a TREC file cannot hold, was read from a frame as an id; refused
    naming the frame and the row, in every kind of string column."""
    rows = _with(long_rows(RUN, "score"), column, 3, "")
    frame = form(rows)
    with pytest.raises(InputError, match=rf"^run {type(frame).__name__}, row 3: empty {column} "
                                         "id: an id must hold at least one character"):
        rankwise.evaluate(QRELS, frame, MEASURES)
    qrels = form([{"query": r["query"], "doc": r["doc"], "score": 1.0} for r in rows])
    with pytest.raises(InputError, match=rf"^qrels {type(qrels).__name__}, row 3: empty "):
        rankwise.to_qrels(qrels, relevance="score")


@pytest.mark.parametrize("nested, key", [
    ({"q1": {"d1": 1.0, "": 2.0}}, "'q1'/''"),
    ({"q1": {"d1": 1.0}, "": {"d1": 2.0}}, "''"),
    ({"q1": {"d1": 1.0}, "": {}}, "''"),  # a query given with no document
    ({"q1": {7: 1.0, "": 2.0}}, "'q1'/''"),  # integer keys: the general reader
    ({"": {7: 1.0}}, "''"),
], ids=["doc", "query", "query without documents", "doc beside integers", "query, integers"])
def test_an_empty_id_in_a_dict_is_refused_at_its_key(nested, key):
    what = "doc" if "/" in key else "query"
    for read in (rankwise.to_run, rankwise.to_qrels):
        with pytest.raises(InputError, match=rf"dict, key {key}: empty {what} id"):
            read(nested)


@pytest.mark.parametrize("nested, message", [
    ({"1": {"d1": 1.0}, 1: {"d2": 2.0}},
     r"dict, key 1: two query ids read as one: the string '1' and the integer 1 "),
    ({"q1": {"7": 1.0, 7: 2.0}},
     r"dict, key 'q1'/7: two doc ids read as one: the string '7' and the integer 7 "),
    ({"q1": {np.int64(7): 1.0, "7": 2.0}},
     r"dict, key 'q1'/'7': two doc ids read as one: the integer 7 and the string '7' "),
], ids=["queries", "docs", "numpy integer"])
def test_two_dict_keys_that_are_one_id_are_refused_not_merged(nested, message):
    """The integer 1 and the string "1" are one id once read: two queries (or documents)
    would silently become one."""
    for read in (rankwise.to_run, rankwise.to_qrels):
        with pytest.raises(InputError, match=message):
            read(nested)
    assert rankwise.to_run({"1": {"d1": 1.0}, 2: {"d1": 2.0}}).query_ids() == ["1", "2"]


def test_an_empty_query_id_given_to_arrays_is_refused_at_its_row():
    with pytest.raises(InputError, match=r"^query, row 2: empty query id"):
        rankwise.from_arrays([1, 0, 1], [0.3, 0.2, 0.1], query=["a", "a", ""])
    with pytest.raises(InputError, match=r"^query, row 1: empty query id"):
        rankwise.from_arrays([1, 0, 1], [0.3, 0.2, 0.1], query=np.array([1, "", 2], object))


#: Integer ids beyond 64 bits, negative ones and small ones among them.
BIG = [1 << 70, -(1 << 65), 5, (1 << 64) + 1]


def _big_ids_forms():
    """The same run, its doc and query ids integers beyond 64 bits, in each frame that can
    hold them: a pandas object column of Python integers, polars Int128 and Decimal columns,
    Arrow decimal128 and decimal256 columns."""
    docs, queries = BIG, [BIG[0], BIG[0], BIG[1], BIG[1]]
    scores = [4.0, 3.0, 2.0, 1.0]
    columns = {"query": queries, "doc": docs, "score": scores}
    decimal = pa.decimal128(38, 0)
    return {
        "pandas-object": pd.DataFrame({k: pd.Series(v, dtype=object if k != "score" else None)
                                       for k, v in columns.items()}),
        "arrow-decimal": pa.table({"query": pa.array(queries, decimal),
                                   "doc": pa.array(docs, decimal), "score": scores}),
        "polars-decimal": pl.from_arrow(pa.table({"query": pa.array(queries, decimal),
                                                  "doc": pa.array(docs, decimal),
                                                  "score": scores})),
        "arrow-decimal256": pa.table({"query": pa.array(queries, pa.decimal256(50, 0)),
                                      "doc": pa.array(docs, pa.decimal256(50, 0)),
                                      "score": scores}),
    } | ({"polars-int128": pl.DataFrame({"query": pl.Series(queries, dtype=pl.Int128),
                                         "doc": pl.Series(docs, dtype=pl.Int128),
                                         "score": scores})}
         if hasattr(pl, "Int128") else {})  # (polars 1.0 has none)


@pytest.mark.parametrize("name", list(_big_ids_forms()))
def test_integer_ids_beyond_64_bits_are_their_decimal_strings_in_every_form(name, tmp_path):
    """A dict key 2**70 was read as "1180591620717411303424" but a pandas object column
    holding it was refused, a polars Int128 column with Arrow's message about a format string
    and a decimal column as not integers. Each is now read as a dict's keys are: the ids'
    decimal strings, the numbers and output of the same ids as strings (and as TREC text)."""
    form = _big_ids_forms()[name]
    nested = {}
    for q, d, s in zip([BIG[0], BIG[0], BIG[1], BIG[1]], BIG, [4.0, 3.0, 2.0, 1.0]):
        nested.setdefault(q, {})[d] = s
    strings = {str(q): {str(d): s for d, s in docs.items()} for q, docs in nested.items()}
    qrels = {str(BIG[0]): {str(BIG[1]): 1, "5": 2}, str(BIG[1]): {str(BIG[3]): 1}}
    expected = rankwise.evaluate(qrels, {"sys": strings}, MEASURES, per_query=True).to_json()
    assert rankwise.evaluate(qrels, {"sys": nested}, MEASURES, per_query=True).to_json() == \
        expected
    assert rankwise.evaluate(qrels, {"sys": form}, MEASURES, per_query=True).to_json() == \
        expected
    run = rankwise.to_run(form)
    assert run.query_ids() == [str(BIG[0]), str(BIG[1])]
    assert [str(d) for d in run.docs.to_pylist()] == [str(d) for d in BIG]
    if name.startswith("arrow"):
        import pyarrow.parquet as pq

        pq.write_table(form, tmp_path / "run.parquet")
        assert rankwise.evaluate(qrels, {"sys": str(tmp_path / "run.parquet")}, MEASURES,
                                 per_query=True).to_json() == expected


def test_python_integers_beyond_64_bits_are_ids_in_lists_too():
    run = rankwise.Run.from_columns(["q1", "q1"], [1 << 70, 5], [2.0, 1.0])
    assert run.docs.to_pylist() == [str(1 << 70), "5"]


@pytest.mark.parametrize("values", [[1 << 63, 1.5, 2], [1 << 70, 0.5, 2], [2, 1 << 70, 1]])
def test_score_and_grade_columns_of_python_numbers_beyond_int64_are_numbers(values):
    """Scores and grades beyond int64 in an object column (beside floats or not) are read as
    float64, as a dict's values are (a column [2**63, 1.5] was refused as "one kind of value
    (all strings or all numbers)", which it is; 2**70 as "integers beyond 64 bits ... give
    such ids as strings")."""
    rows = {"query": ["q1"] * 3, "doc": ["a", "b", "c"]}
    frame = pd.DataFrame({**rows, "score": pd.Series(values, dtype=object)})
    assert rankwise.to_run(frame).score.tolist() == [float(v) for v in values]
    assert rankwise.to_run({"q1": dict(zip(rows["doc"], values))}).score.tolist() == \
        [float(v) for v in values]
    qrels = pd.DataFrame({**rows, "relevance": pd.Series(values, dtype=object)})
    assert rankwise.to_qrels(qrels).grade.tolist() == [float(v) for v in values]
    if hasattr(pl, "Int128"):  # (polars 1.0 has none)
        int128 = pl.DataFrame({**rows, "score": pl.Series([int(v) for v in values],
                                                          dtype=pl.Int128)})
        assert rankwise.to_run(int128).score.tolist() == [float(int(v)) for v in values]


@pytest.mark.parametrize("frame, message", [
    (pd.DataFrame({"query": ["q1", "q1"], "doc": pd.Series([1 << 63, 1.5], dtype=object),
                   "score": [1.0, 2.0]}),
     r"^run DataFrame, row 1: doc ids must be strings or integers \(got a column of double, "
     r"holding 1.5 here\)$"),
    (pd.DataFrame({"query": pd.Series([1.5, 1 << 63], dtype=object), "doc": ["a", "b"],
                   "score": [1.0, 2.0]}),
     r"^run DataFrame, row 0: query ids must be strings or integers \(got a column of double, "
     r"holding 1.5 here\)$"),
    (pd.DataFrame({"query": ["q1", "q1"], "doc": [1.0, 2.0], "score": [1.0, 2.0]}),
     r"^run DataFrame: doc ids must be strings or integers \(got a column of double\); cast "
     r"the column to integers \(or strings\) to use it as ids$"),
    (pd.DataFrame({"query": ["q1", "q1"], "doc": pd.Series([5, 10 ** 80], dtype=object),
                   "score": [1.0, 2.0]}),
     r"^run DataFrame, row 1: an integer of more than 76 digits in column 'doc', beyond "
     r"Arrow's widest decimal: give such ids as strings \(got '1000"),
    (pa.table({"query": ["q1", "q1"], "doc": pa.array([1, 2], pa.decimal128(5, 2)),
               "score": [1.0, 2.0]}),
     r"^run Table: doc ids must be strings or integers \(got a column of decimal128\(5, 2\)\); "
     r"cast the column to integers"),
], ids=["integers beside a float", "a float beside integers", "integral floats",
        "beyond 76 digits", "decimal of scale 2"])
def test_id_columns_of_numbers_that_are_no_ids_say_what_they_hold(frame, message):
    """Each said "must hold one kind of value (all strings or all numbers): PyLong is too
    large to fit int64", or "(got 'double')" without the row."""
    with pytest.raises(InputError, match=message):
        rankwise.to_run(frame)
