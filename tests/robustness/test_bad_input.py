"""The bad-input table (docs/bad-input.md), one test per row.

Every row asserts the exit status of ``rankwise evaluate`` (2), the exception type
(``InputError`` or a subclass) and that the message names the source, the line (or row, or
key) and the offending value. Rows that are legal input assert what is reported instead.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import math
import re
import sys
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest

import rankwise
from rankwise import InputError, MeasureError
from rankwise.cli import main
from rankwise.stream import evaluate_stream
from tests.helpers import write

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
RUN = "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 1.0 sys\nq2 Q0 d3 1 1.0 sys\n"

# id, qrels text (None: QRELS), run text (None: RUN), expected line, value, message fragment,
# which file is blamed
FILE_ROWS = [
    ("run-field-count", None, "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 1.0\n", 2, "q1 Q0 d2 1.0",
     "expected 6 fields", "run"),
    ("qrels-field-count", "q1 0 d1 1\nq1 d2 0\n", None, 2, "q1 d2 0", "expected 4 fields", "qrels"),
    ("non-numeric-score", None, "q1 Q0 d1 1 high sys\n", 1, "high", "a number for the score", "run"),
    ("nan-score", None, "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 nan sys\n", 2, "nan", "finite", "run"),
    ("inf-score", None, "q1 Q0 d1 1 -inf sys\n", 1, "-inf", "finite", "run"),
    ("score-beyond-double", None, RUN + "q2 Q0 d4 2 1e400 sys\n", 4, "1e400", "finite", "run"),
    ("non-integer-grade", "q1 0 d1 1\nq1 0 d2 0.5\n", None, 2, "0.5", "integer relevance grade", "qrels"),
    ("non-numeric-grade", "q1 0 d1 yes\n", None, 1, "yes", "integer relevance grade", "qrels"),
    ("duplicate-in-run", None, RUN + "q1 Q0 d1 3 0.5 sys\n", 4, "d1", "appears twice", "run"),
    ("conflicting-judgments", QRELS + "q1 0 d1 0\n", None, 4, "d1", "judged twice", "qrels"),
    ("header-line", None, "qid Q0 docno rank score tag\n" + RUN, 1, "score", "header line", "run"),
    ("quoted-id-with-space", None, 'q1 Q0 "doc 1" 1 2.0 sys\n', 1, '"doc 1"', "cannot contain spaces", "run"),
    ("run-given-as-qrels", RUN, RUN, 1, "q1 Q0 d1 1 2.0 sys", "looks like a run file", "qrels"),
    ("qrels-given-as-run", QRELS, QRELS, 1, "q1 0 d1 1", "looks like a qrels file", "run"),
    ("invalid-utf8", None, b"q1 Q0 d\xff 1 2.0 sys\n", 1, "d", "not valid UTF-8", "run"),
    # values Python's int() and float() read but the parse does not: the line is still named
    ("grade-with-plus-sign", "q1 0 d1 1\nq1 0 d2 +1\n", None, 2, "+1", "integer relevance grade",
     "qrels"),
    ("grade-beyond-64-bits", "q1 0 d1 99999999999999999999\n", None, 1, "99999999999999999999",
     "integer relevance grade", "qrels"),
    ("score-with-underscore", None, RUN + "q2 Q0 d4 2 1_0 sys\n", 4, "1_0", "a number", "run"),
    ("vertical-tab-between-fields", None, RUN + "q2\x0bQ0 d4 2 0.5 sys\n", 4, "q2\x0bQ0",
     "expected 6 fields", "run"),
    # a CR with text after it ends a line, as pyarrow and Spark read it (trec_eval: a blank)
    ("carriage-return-inside-a-line", None, RUN + "q2 Q0 d4\r2 0.5 sys\n", 4, "q2 Q0 d4",
     "expected 6 fields", "run"),
    # a NUL byte anywhere, not only in the first 64 KiB the file type is guessed from
    ("nul-byte-late-in-file", None, (RUN * 2000 + "q2 Q0 d\x009 5 0.1 sys\n").encode(), 6001, "",
     "not a text file", "run"),
]


@pytest.mark.parametrize("row", FILE_ROWS, ids=[r[0] for r in FILE_ROWS])
def test_bad_file_line(tmp_path, capsys, row):
    _, qrels_text, run_text, line, value, fragment, blamed = row
    qrels = write(tmp_path, "qrels.txt", QRELS if qrels_text is None else qrels_text)
    run = write(tmp_path, "run.txt", RUN if run_text is None else run_text)
    with pytest.raises(InputError) as info:
        rankwise.evaluate(qrels, run, ["AP"])
    err = info.value
    assert err.source == (qrels if blamed == "qrels" else run)
    assert err.line == line and fragment in str(err) and value in (err.value or "")
    assert main(["evaluate", qrels, run, "-m", "AP"]) == 2
    message = capsys.readouterr().err.strip()
    assert message == f"rankwise: error: {err}" and "\n" not in message
    assert message.startswith(f"rankwise: error: {err.source}:{line}: ")


def zipped(text: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("run.txt", text)
    return out.getvalue()


def parquet_bytes() -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = io.BytesIO()
    pq.write_table(pa.table({"query": ["q1"], "doc": ["d1"], "score": [1.0]}), out)
    return out.getvalue()


WHOLE_FILE_ROWS = [
    ("empty-file", b"", "empty file"),
    ("blank-lines-only", b"\n \n\t\n", "empty file"),
    ("comments-only", b"# nothing\n", "only blank or comment lines"),
    ("byte-order-mark-only", b"\xef\xbb\xbf\n \n", "empty file"),
    ("byte-order-mark-and-comment", b"\xef\xbb\xbf# nothing\n", "only blank or comment lines"),
    ("binary-file", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not a text file"),
    ("truncated-gzip", gzip.compress(RUN.encode() * 50)[:60], "truncated gzip"),
    # files often given where a TREC text is expected: named for what they are
    ("bzip2-file", bz2.compress(RUN.encode() * 50), "compressed with bzip2; rankwise reads "
     "plain text or gzip (.gz): decompress it first"),
    ("xz-file", lzma.compress(RUN.encode() * 50), "compressed with xz"),
    ("zstd-file", b"\x28\xb5\x2f\xfd\x00\x58\x00\x00", "compressed with zstd"),
    ("zip-archive", zipped(RUN), "a zip archive; rankwise reads plain text or gzip"),
    ("parquet-not-named-so", parquet_bytes(), "a Parquet file; a Parquet path's name ends in "
     ".parquet or .pq"),
    ("directory", None, "is a directory"),
    ("missing-file", "missing", "file not found"),
]


@pytest.mark.parametrize("row", WHOLE_FILE_ROWS, ids=[r[0] for r in WHOLE_FILE_ROWS])
def test_unreadable_file(tmp_path, capsys, row):
    _, content, fragment = row
    qrels = write(tmp_path, "qrels.txt", QRELS)
    if content is None:
        run = str(tmp_path)
    elif content == "missing":
        run = str(tmp_path / "nowhere.txt")
    else:
        run = write(tmp_path, "run.txt", content)
    with pytest.raises(InputError, match=re.escape(fragment)) as info:
        rankwise.evaluate(qrels, run, ["AP"])
    assert info.value.source == run
    assert main(["evaluate", qrels, run]) == 2
    assert capsys.readouterr().err.strip() == f"rankwise: error: {info.value}"
    if content not in (None, "missing") and content.strip():
        with pytest.raises(InputError, match=re.escape(fragment)) as streamed:
            evaluate_stream(qrels, run, ["AP"])
        assert streamed.value.source == run


def test_no_query_in_common(tmp_path, capsys):
    qrels = write(tmp_path, "qrels.txt", QRELS)
    run = write(tmp_path, "run.txt", "x1 Q0 d1 1 2.0 sys\n")
    with pytest.raises(InputError, match="no query in common.*'x1'.*'q1'"):
        rankwise.evaluate(qrels, run, ["AP"])
    assert main(["evaluate", qrels, run]) == 2
    assert run in capsys.readouterr().err


@pytest.mark.parametrize("measure, fragment", [
    ("nDGC@10", "unknown measure; closest: nDCG"),
    ("P@0", "positive integer"),
    ("P@-3", "positive integer"),
    ("P@2.5", "positive integer"),
    ("ndcg_cut.10,x", "positive integer"),
    ("__import__('os')", "unknown measure"),
    ("P@1e3", "positive integer"),  # trec_eval's atol would read P.1e3 as P.1
    ("P@99999999999999999999", "at most 2147483647"),
    ("nDCG(base=1)", "greater than 1"),
    ("nDCG(base=nan)", "finite number"),
    ("P(rel=inf)@5", "finite number"),
    ("ERR(max_grade=inf)", "finite number"),
    ("ERR(max_grade=1e308)", "max_grade must be at most 1023"),  # not blamed on the judgments
    ("RprecMult@1e20", "multiple of R between 0 and 2147483647"),  # not computed on overflow
    ("Rprec_mult.inf", "multiple of R between 0 and 2147483647"),
    ("Utility(rel_ret=nan)", "finite number"),
    ("nDCG(gain={1:nan})", "finite numbers"),
    ("ndcg.-1=5", "grades must be 0 or more"),
    ("RBP(p=0.8,p=0.9)", "given twice"),
    ("nDCG(gain={1:3,1:9})", "given twice"),
    ("ndcg.1=3,1=9", "given twice"),
])
def test_bad_measure(tmp_path, capsys, measure, fragment):
    with pytest.raises(MeasureError, match=fragment) as info:
        rankwise.parse_measures(measure)
    assert info.value.value == measure
    qrels, run = write(tmp_path, "qrels.txt", QRELS), write(tmp_path, "run.txt", RUN)
    assert main(["evaluate", qrels, run, "-m", measure]) == 2
    assert fragment in capsys.readouterr().err


# in-memory inputs: the row (frames), the key (dicts) or the position (arrays) is named
def test_frame_rows():
    run = pd.DataFrame({"query": ["q1", "q1", "q1"], "doc": ["d1", "d2", "d1"],
                        "score": [2.0, 1.0, 0.5]})
    with pytest.raises(InputError, match=r"run DataFrame, row 2: document 'd1' appears twice"):
        rankwise.evaluate({"q1": {"d1": 1}}, run, ["AP"])
    run.loc[1, "score"] = math.inf
    with pytest.raises(InputError, match=r"run DataFrame, row 1: score must be a finite number"):
        rankwise.evaluate({"q1": {"d1": 1}}, run, ["AP"])
    qrels = pd.DataFrame({"query": ["q1", "q1"], "doc": ["d1", "d1"], "relevance": [1, 2]})
    with pytest.raises(InputError, match=r"qrels DataFrame, row 1: document 'd1' judged twice"):
        rankwise.evaluate(qrels, {"q1": {"d1": 1.0}}, ["AP"])
    missing_id = pd.DataFrame({"query": ["q1", None], "doc": ["d1", "d2"], "score": [1.0, 2.0]})
    with pytest.raises(InputError, match=r"run DataFrame, row 1: missing query id"):
        rankwise.evaluate({"q1": {"d1": 1}}, missing_id, ["AP"])


def test_dict_keys_and_values():
    with pytest.raises(InputError, match=r"run dict, key 'q1'/'d2': expected a number"):
        rankwise.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0, "d2": "high"}}, ["AP"])
    with pytest.raises(InputError, match=r"run dict, key q1: expected \{query: \{doc: value\}\}"):
        rankwise.to_run({"q1": [("d1", 1.0)]})


@pytest.mark.parametrize("run, message", [
    ({None: {"d1": 1.0}}, r"^run dict, key None: missing query id$"),
    ({"q1": {None: 1.0}}, r"^run dict, key 'q1'/None: missing doc id$"),
    ({"q1": {math.nan: 1.0}}, r"^run dict, key 'q1'/nan: missing doc id$"),
    ({"q1": {1.5: 1.0}}, r"key 'q1'/1.5: doc ids must be strings or integers \(got 'float'\)"),
    ({"q1": {True: 1.0}}, r"key 'q1'/True: doc ids must be strings or integers \(got 'bool'\)"),
    ({("q", 1): {"d1": 1.0}}, r"key \('q', 1\): query ids must be strings or integers"),
    ({"q1": {"d1": True, "d2": 0.5}}, r"key 'q1'/'d1': expected a number \(got 'True'\)"),
    ({"q1": {"d1": 0.5, "d2": np.True_, 3: "x"}}, r"key 'q1'/'d2': expected a number"),
    ({"q1": {"d1": None, "d2": 0.5}}, r"key 'q1'/'d1': score must be a finite number"),
], ids=["None query", "None doc", "NaN doc", "float doc", "bool doc", "tuple query",
        "bool among numbers", "numpy bool", "None value"])
def test_dict_keys_are_ids_and_values_numbers(run, message):
    """Keys were taken as their strings ('None', 'nan', '1.5', 'True'), a boolean among numbers
    as 1, and None was refused as no number where NaN is a missing value."""
    with pytest.raises(InputError, match=message):
        rankwise.evaluate({"q1": {"d1": 1}}, run, ["AP"])


@pytest.mark.parametrize("value", [np.complex128(1 + 1j), np.datetime64("2020-01-01"),
                                   np.timedelta64(5, "s"), np.array("0.9"), np.array(True),
                                   np.array([0.9]), np.array([0.9, 0.1])],
                         ids=["complex", "date", "duration", "0-d string", "0-d bool",
                              "1-element array", "array"])
@pytest.mark.parametrize("side", ["qrels", "run"])
def test_dict_values_that_are_numpy_non_numbers_are_refused_naming_their_key(value, side):
    """float() takes numpy's complex numbers (dropping the imaginary part), dates (their
    count of days), durations, 0-d arrays of strings and booleans: they were read as
    numbers, which a frame's or an array's are not; an array of numbers was refused as
    'key 1', its place among the values, instead of its key."""
    data = {"q1": {"d0": 1, "d1": value}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match=rf"^{side} dict, key 'q1'/'d1': expected a number"):
            rankwise.to_qrels(data) if side == "qrels" else rankwise.to_run(data)


def test_dict_values_of_pandas_na_are_missing_and_0d_numbers_are_numbers():
    """pandas' NA and NaT are missing values, as None and NaN (they were 'expected a
    number'); a 0-d array of a number is that number."""
    for missing in (pd.NA, pd.NaT):
        with pytest.raises(InputError, match=r"^run dict, key 'q1'/'d1': score must be a finite "
                                             r"number \(NaN and null are missing values\)"):
            rankwise.to_run({"q1": {"d0": 1.0, "d1": missing}})
    run = {"q1": {"d0": np.array(0.5), "d1": np.float32(0.25)}}
    plain = {"q1": {"d0": 0.5, "d1": 0.25}}
    assert rankwise.evaluate({"q1": {"d0": 1}}, run, ["AP", "RR"]).to_json() == \
        rankwise.evaluate({"q1": {"d0": 1}}, plain, ["AP", "RR"]).to_json()


def test_writers_take_what_to_run_and_to_qrels_take(tmp_path):
    """write_run and write_qrels escaped as AttributeError ('dict' object has no attribute
    'query_code') on a dict or a frame; they write what rankwise.to_run/to_qrels read."""
    run = {"q1": {"d1": 0.5, "d2": 1.5}, "q2": {"d3": 1.0}}
    qrels = {"q1": {"d1": 1, "d2": -1}, "q2": {"d3": 2}}
    rankwise.write_run(run, tmp_path / "a.run")
    rankwise.write_run(rankwise.to_run(run), tmp_path / "b.run")
    assert (tmp_path / "a.run").read_text() == (tmp_path / "b.run").read_text()
    frame = pd.DataFrame([(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
                         columns=["query", "doc", "relevance"])
    rankwise.write_qrels(frame, tmp_path / "a.qrels")
    assert (tmp_path / "a.qrels").read_text() == "q1 0 d1 1\nq1 0 d2 -1\nq2 0 d3 2\n"
    from_files = rankwise.evaluate(tmp_path / "a.qrels", tmp_path / "a.run", ["AP", "nDCG"],
                                   per_query=True)
    assert from_files.per_query() == \
        rankwise.evaluate(qrels, run, ["AP", "nDCG"], per_query=True).per_query()


@pytest.mark.parametrize("run, message", [
    ({"q 1": {"d1": 1.0}}, r"^run dict, key 'q 1'/'d1': a TREC file cannot hold this query id"),
    ({"q1": {"d1": 1.0}, "#q2": {"d1": 1.0}}, r"^run dict, key '#q2'/'d1': a TREC file cannot "
                                              r"hold this query id: .* starts with #"),
    ({"q1": {"d1": 1.0, "d\t2": 0.5}}, r"^run dict, key 'q1'/'d\\t2': a TREC file cannot hold "
                                       r"this doc id: it holds a blank, a line end or a NUL"),
    (pd.DataFrame({"query": ["q1", "q1"], "doc": ["d1", "d\n2"], "score": [1.0, 0.5]}),
     r"^run DataFrame, row 1: a TREC file cannot hold this doc id"),
], ids=["space", "comment", "tab", "line end"])
def test_write_run_refuses_ids_a_trec_file_cannot_hold(tmp_path, run, message):
    """They were written as they are: a line of more fields or two lines, which reads back
    as other ids or not at all, and a query starting with # whose lines read back as
    comments, silently dropped."""
    with pytest.raises(InputError, match=message):
        rankwise.write_run(run, tmp_path / "out.run")
    assert not (tmp_path / "out.run").exists()


def test_write_qrels_refuses_grades_that_are_not_integers(tmp_path):
    """A qrels file holds integer grades: 0.5 was written as it is, a file rankwise refuses
    to read (and trec_eval reads as 0); 1e30 as a 31-digit integer, beyond 64 bits."""
    for grade in (0.5, 1e30):
        message = r"^qrels dict, key 'q1'/'d2': a TREC qrels file holds integer grades"
        with pytest.raises(InputError, match=message + r" .* \(got '" + re.escape(str(grade))):
            rankwise.write_qrels({"q1": {"d1": 1, "d2": grade}}, tmp_path / "out.qrels")
    assert not (tmp_path / "out.qrels").exists()


@pytest.mark.parametrize("measures, message", [
    (None, r"measures are a name, a Measure or a list of them \(got 'NoneType None'\)"),
    (b"AP", r"measures are a name, a Measure or a list of them \(got \"bytes b'AP'\"\)"),
    (5, r"measures are a name, a Measure or a list of them \(got 'int 5'\)"),
    (["AP", 5], r"a measure is a name \(a string\) or a Measure \(got 'int 5'\)"),
    ([["AP", "RR"]], r"a measure is a name \(a string\) or a Measure \(got \"list \['AP', 'RR'\]"),
], ids=["None", "bytes", "int", "int in a list", "nested list"])
def test_measures_that_are_no_names_are_refused_as_such(measures, message):
    """str() made names of them ('unknown measure (got '5')', "(got "['AP', 'RR']")"), bytes
    were read as their numbers (b"AP" as measures 65 and 80), None escaped as TypeError and
    parse_measure(5) as AttributeError."""
    with pytest.raises(MeasureError, match=r"^measure: " + message):
        rankwise.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, measures)
    with pytest.raises(MeasureError, match=r"^measure: a measure is a name \(a string\)"):
        rankwise.parse_measure(5)


@pytest.mark.parametrize("name", [np.array([1]), pd.DataFrame(), pd.NA, None, 1.5],
                         ids=["array", "frame", "NA", "None", "float"])
def test_column_names_that_are_no_names_are_refused_naming_the_argument(name):
    """An array, a frame or pandas' NA given as query= escaped as pandas' or numpy's "truth
    value ... is ambiguous" (None and floats were looked up as 'None' and '1.5')."""
    frame = pd.DataFrame({"query": ["q1"], "doc": ["d1"], "score": [1.0]})
    message = r"^columns: query= must be a column name \(a string\) \(got '"
    with pytest.raises(InputError, match=message):
        rankwise.evaluate({"q1": {"d1": 1}}, frame, ["AP"], query=name)
    with pytest.raises(InputError, match=message):
        rankwise.to_qrels(frame, query=name)


def test_pandas_labels_that_are_not_strings_still_name_columns():
    frame = pd.DataFrame([["q1", "d1", 1.0]])
    labels = pd.DataFrame([["q1", "d1", 1.0]], columns=pd.MultiIndex.from_tuples(
        [("a", "q"), ("a", "d"), ("a", "s")]))
    assert rankwise.to_run(frame, query=0, doc=np.int64(1), score=2).query_ids() == ["q1"]
    assert rankwise.to_run(labels, query=("a", "q"), doc=("a", "d"),
                           score=("a", "s")).query_ids() == ["q1"]


@pytest.mark.parametrize("value", [np.array(["expected"]), pd.NA], ids=["array", "NA"])
def test_a_convention_choice_of_another_type_is_refused(value):
    """It escaped as numpy's "truth value of an array ... is ambiguous" and pandas'
    "boolean value of NA is ambiguous"."""
    with pytest.raises(InputError, match=r"^conventions: ties must be one of docid_desc"):
        rankwise.Conventions(ties=value)


@pytest.mark.parametrize("path", [True, 1, 0], ids=["True", "1", "0"])
def test_writers_take_file_names_not_descriptors(path, capsys):
    """open() takes an integer as a file descriptor: write_run(run, True) wrote the run to
    standard output and closed it (and 0, standard input)."""
    with pytest.raises(InputError, match=r"^path: expected the path of the file to write"):
        rankwise.write_run({"q1": {"d1": 1.0}}, path)
    with pytest.raises(InputError, match=r"^path: expected the path of the file to write"):
        rankwise.write_qrels({"q1": {"d1": 1}}, path)
    print("still open")
    assert capsys.readouterr().out == "still open\n"


def test_empty_inputs_are_named():
    with pytest.raises(InputError, match=r"qrels dict: no judgments: the judgments hold no rows"):
        rankwise.evaluate({}, {"q1": {"d1": 1.0}}, ["AP"])
    empty_run = pd.DataFrame({"query": pd.Series([], dtype=str), "doc": pd.Series([], dtype=str),
                              "score": pd.Series([], dtype=float)})
    with pytest.raises(InputError, match=r"run DataFrame: nothing ranked: the run holds no rows"):
        rankwise.evaluate({"q1": {"d1": 1}}, empty_run, ["AP"])


def test_an_empty_frame_is_empty_whatever_its_columns_types():
    """pandas makes an empty frame's columns float64 (or object): it was refused as query ids
    that are neither strings nor integers; nor do an empty table's other types matter."""
    import pyarrow as pa

    untyped = pd.DataFrame({"query": [], "doc": [], "score": []})
    with pytest.raises(InputError, match=r"^run DataFrame: nothing ranked: the run holds no"):
        rankwise.evaluate({"q1": {"d1": 1}}, untyped, ["AP"])
    with pytest.raises(InputError, match=r"^qrels DataFrame: no judgments"):
        rankwise.evaluate(untyped.rename(columns={"score": "relevance"}), {"q1": {"d1": 1.0}},
                          ["AP"])
    odd = pa.table({"query": pa.array([], pa.float64()), "doc": pa.array([], pa.list_(pa.int8())),
                    "score": pa.array([], pa.string())})
    with pytest.raises(InputError, match=r"^run Table: nothing ranked: the run holds no rows"):
        rankwise.evaluate({"q1": {"d1": 1}}, odd, ["AP"])


@pytest.mark.parametrize("grade", [math.nan, math.inf, None], ids=["nan", "inf", "null"])
def test_missing_or_infinite_grades_are_refused(tmp_path, grade):
    """A text file's grades are integers by their parse; the other inputs may hold anything."""
    pattern = r"relevance grade must be a finite number"
    with pytest.raises(InputError, match=r"qrels dict, key 'q1'/'d2': " + pattern):
        rankwise.evaluate({"q1": {"d1": 1, "d2": grade}}, {"q1": {"d1": 1.0}}, ["AP"])
    frame = pd.DataFrame({"query": ["q1", "q1"], "doc": ["d1", "d2"],
                          "relevance": pd.array([1, grade], dtype="Float64")})
    with pytest.raises(InputError, match=r"qrels DataFrame, row 1: " + pattern):
        rankwise.evaluate(frame, {"q1": {"d1": 1.0}}, ["AP"])
    path = str(tmp_path / "qrels.parquet")
    frame.to_parquet(path)
    with pytest.raises(InputError, match=pattern) as info:
        rankwise.evaluate(path, {"q1": {"d1": 1.0}}, ["AP"])
    assert info.value.source == path and info.value.line == 1


def test_grades_too_large_for_exponential_gain(tmp_path, capsys):
    qrels = write(tmp_path, "qrels.txt", "q1 0 d1 1024\nq1 0 d2 0\n")
    run = write(tmp_path, "run.txt", "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 1.0 sys\n")
    for measure in ("ERR@3", "nDCG(gain=exp)@3", "DCG(gain=exp)"):
        with pytest.raises(InputError, match=r"grade 1024 is too large for exponential gain"):
            rankwise.evaluate(qrels, run, [measure])
    assert rankwise.evaluate(qrels, run, ["nDCG@3"]).mean("nDCG@3") == 1.0  # linear gain
    assert main(["explain", qrels, run, "--query", "q1", "-m", "ERR"]) == 2
    assert "too large for exponential gain" in capsys.readouterr().err
    ok = write(tmp_path, "ok.txt", "q1 0 d1 1023\nq1 0 d2 0\n")
    assert rankwise.evaluate(ok, run, ["ERR"]).mean("ERR") == 1.0 - 2.0 ** -1023


def test_columns_of_mixed_kinds_and_bad_arrays():
    run = pd.DataFrame({"query": ["q1", "q1"], "doc": ["d1", 2], "score": [2.0, 1.0]})
    with pytest.raises(InputError, match=r"run DataFrame, row 1: column 'doc' must hold one kind"):
        rankwise.evaluate({"q1": {"d1": 1}}, run, ["AP"])
    with pytest.raises(InputError, match=r"y_true, row 1: y_true must be a number"):
        rankwise.from_arrays(np.array([1, "x", 0], dtype=object), [0.3, 0.2, 0.1])
    for missing in (None, math.nan):
        with pytest.raises(InputError, match=r"query, row 1: missing query id"):
            rankwise.from_arrays([1, 0, 1], [0.3, 0.2, 0.1], query=[1, missing, 1])


@pytest.mark.parametrize("doc, score, message", [
    (["d1", None, 3], [2.0, 1.0, 0.5],
     r"run DataFrame, row 2: column 'doc' must hold one kind of value .* \(got '3'\)"),
    ([1 << 64, 2, "d3"], [2.0, 1.0, 0.5], r"run DataFrame, row 2: column 'doc' must hold one"),
    ([2, 10 ** 80, 3], [2.0, 1.0, 0.5],  # beyond 64 bits: read as a dict's keys are
     r"run DataFrame, row 1: an integer of more than 76 digits in column 'doc'.*as strings"),
    ([1 << 63, 1.5, 3], [2.0, 1.0, 0.5],
     r"run DataFrame, row 1: doc ids must be strings or integers \(got a column of double, "
     r"holding 1.5 here\)"),
    (["d1", "d2", "d3"], np.array([2, 1, 0], dtype=complex),
     r"run DataFrame: column 'score' is of a type rankwise cannot read"),
], ids=["mixed", "mixed beyond int64", "beyond 76 digits", "beyond int64 and a float",
        "complex"])
def test_frame_columns_arrow_cannot_type(doc, score, message):
    """Each escaped as pyarrow's OverflowError or ArrowNotImplementedError, or named no row."""
    run = pd.DataFrame({"query": ["q1"] * 3, "doc": pd.Series(doc, dtype=object),
                        "score": score})
    with pytest.raises(InputError, match=message):
        rankwise.evaluate({"q1": {"d1": 1}}, run, ["AP"])


def test_a_polars_object_column_is_refused():
    """polars gives an Object column to Arrow as the objects' addresses: it was read as bytes
    (ids) or refused as bytes that are no number (scores)."""
    pl = pytest.importorskip("polars")
    for name, values in (("doc", ["d1", 2]), ("score", [1.0, "x"])):
        run = pl.DataFrame({"query": ["q1", "q1"], "doc": ["d1", "d2"], "score": [2.0, 1.0]})
        run = run.with_columns(pl.Series(name, values, dtype=pl.Object))
        with pytest.raises(InputError, match=rf"run DataFrame: column '{name}' is of a type "
                                             "rankwise cannot read: a polars Object column"):
            rankwise.evaluate({"q1": {"d1": 1}}, run, ["AP"])


@pytest.mark.parametrize("values, kind", [
    ([True, False], "bool"), (["2.0", "1.0"], "string"), ([[2.0], [1.0]], "list"),
    (pd.to_datetime(["2024-01-02", "2024-01-01"]), "timestamp")],
    ids=["bool", "string", "list", "timestamp"])
def test_score_and_grade_columns_hold_numbers(tmp_path, values, kind):
    """Booleans, numbers written as strings and dates were taken as numbers (True as 1,
    "2.0" as 2, a date as its nanoseconds), as a dict's or a file's are not; a list was
    refused at its first row as no number."""
    from rankwise.stream import evaluate_stream

    frame = pd.DataFrame({"query": ["q1", "q1"], "doc": ["d1", "d2"], "score": values})
    pattern = rf"score must be a number \(got a column of \w*{kind}"
    with pytest.raises(InputError, match=r"^run DataFrame: " + pattern):
        rankwise.evaluate({"q1": {"d1": 1}}, frame, ["AP"])
    with pytest.raises(InputError, match=r"^qrels DataFrame: relevance must be a number"):
        rankwise.evaluate(frame.rename(columns={"score": "relevance"}), {"q1": {"d1": 1.0}},
                          ["AP"])
    path = str(tmp_path / "run.parquet")
    frame.to_parquet(path)
    for evaluate in (rankwise.evaluate, evaluate_stream):
        with pytest.raises(InputError, match=pattern) as info:
            evaluate({"q1": {"d1": 1}}, path, ["AP"])
        assert info.value.source == path


def test_depth_beyond_the_largest_is_refused(tmp_path, capsys):
    qrels, run = write(tmp_path, "qrels.txt", QRELS), write(tmp_path, "run.txt", RUN)
    assert main(["evaluate", qrels, run, "-M", str(2 ** 63)]) == 2
    assert "max_depth must be a positive integer of at most" in capsys.readouterr().err


def test_array_rows():
    with pytest.raises(InputError, match=r"y_true, row 1: y_true must be finite"):
        rankwise.from_arrays([1, np.nan], [0.1, 0.2])
    with pytest.raises(InputError, match=r"y_score, row 0: score must be a finite number"):
        rankwise.from_arrays([1, 0], [np.nan, 0.2])


OLD_ARGPARSE = sys.version_info < (3, 13)


@pytest.mark.parametrize("args, usage, fragment", [
    (["evaluate", "--relevance-threshold", "nan"], False,
     "relevance_threshold must be a finite number (got 'nan')"),
    # trec_eval reads -l with atol (1.5 is 1): a fraction is refused, not read otherwise
    (["evaluate", "-l", "1.5"], True, "argument -l: expected an integer grade, got '1.5' "
     "(trec_eval reads -l 1.5 as 1; --relevance-threshold takes a fraction)"),
    (["evaluate", "-l", "nan"], True, "argument -l: expected an integer grade, got 'nan'"),
    (["evaluate", "--discount-base", "inf"], False, "discount_base must be a finite number"),
    (["evaluate", "--gain", "1=nan"], False, "gain map's grades and gains must be finite numbers"),
    (["evaluate", "--gain", "1=2,1=3"], True, "argument --gain: grade 1 given twice"),
    (["compare", "--seed", "-1"], True, "argument --seed: expected a non-negative integer"),
    # argparse before Python 3.13 reads ``--option=--`` as no value; 3.13 reads the value "--",
    # which the option's own check then refuses
    (["compare", "--correction=--"], OLD_ARGPARSE, "argument --correction: expected one "
     "argument" if OLD_ARGPARSE else "correction: unknown correction"),
    (["evaluate", "--format=--"], True, "argument -f/--format: expected one argument"
     if OLD_ARGPARSE else "argument -f/--format: invalid choice: '--'"),
])
def test_bad_command_line(tmp_path, capsys, args, usage, fragment):
    """Each was accepted (a NaN threshold made nothing relevant, a gain map kept the last of a
    grade's gains), escaped as numpy's ValueError (a negative seed) or, as ``--option=--``
    (an empty list on Python before 3.13), as a TypeError or the option's default."""
    qrels, run = write(tmp_path, "qrels.txt", QRELS), write(tmp_path, "run.txt", RUN)
    command, *options = args
    line = [command, qrels, run] + ([run] if command == "compare" else []) + options
    if usage:  # argparse's usage, then one line
        with pytest.raises(SystemExit) as info:
            main(line)
        assert info.value.code == 2
        last = capsys.readouterr().err.splitlines()[-1]
        assert last.startswith(f"rankwise {command}: error: ") and fragment in last
    else:
        assert main(line) == 2
        err = capsys.readouterr().err
        assert err.startswith("rankwise: error: ") and fragment in err
        assert err.count("\n") == 1


@pytest.mark.parametrize("option, value, fragment", [
    ("--gain", "-1=5,1=1,2=3", "a gain map's grades must be 0 or more"),
    ("-l", "-1e0", "relevance_threshold must be 0 or more"),
    ("--relevance-threshold", "-2E0", "relevance_threshold must be 0 or more"),
    ("--relevance-threshold", "-.5", "relevance_threshold must be 0 or more"),
])
def test_option_value_beginning_with_a_minus(tmp_path, capsys, option, value, fragment):
    """argparse reads a value beginning with a minus as an option unless it is a plain
    number: ``--gain -1=5`` and ``-l -1e0`` stopped with 'expected one argument' instead of
    saying what is wrong with the value (as ``--gain=-1=5`` did)."""
    qrels, run = write(tmp_path, "qrels.txt", QRELS), write(tmp_path, "run.txt", RUN)
    line = ["evaluate", qrels, run, "-m", "nDCG", "P@5"]
    assert main(line + [f"{option}={value}"]) == 2
    joined = capsys.readouterr().err
    assert main(line + [option, value]) == 2
    assert capsys.readouterr().err == joined
    assert joined.startswith("rankwise: error: conventions: ") and fragment in joined


def test_tokens_after_double_dash_are_left_as_they_are(tmp_path, capsys):
    qrels = write(tmp_path, "qrels.txt", QRELS)
    assert main(["evaluate", qrels, "--", "-l", "-1"]) == 2  # a run file named "-l"
    assert capsys.readouterr().err == "rankwise: error: -l: file not found\n"


def test_a_run_named_dash_says_how_standard_input_is_read(tmp_path, capsys, monkeypatch):
    """``-`` is a file name, as for trec_eval; the error says standard input is /dev/stdin."""
    monkeypatch.chdir(tmp_path)
    qrels = write(tmp_path, "qrels.txt", QRELS)
    assert main(["evaluate", qrels, "-"]) == 2
    assert capsys.readouterr().err == ("rankwise: error: -: file not found (standard input "
                                       "is read as /dev/stdin)\n")


# legal input that is reported rather than refused
def test_rank_column_contradicting_scores_is_reported(tmp_path):
    run = write(tmp_path, "run.txt", "q1 Q0 d1 2 2.0 sys\nq1 Q0 d2 1 1.0 sys\nq2 Q0 d3 1 1 sys\n")
    result = rankwise.evaluate(write(tmp_path, "qrels.txt", QRELS), run, ["RR"], per_query=True)
    assert result.per_query()["q1"]["RR"] == 1.0  # the score wins, as in trec_eval
    diag = result.diagnostics["sys"]
    assert diag["queries_rank_contradicts_score"] == 1
    assert diag["examples"]["queries_rank_contradicts_score"] == ["q1"]


def test_huge_errors_are_finite_and_values_without_a_number_null_in_json(tmp_path, capsys):
    """The squares of errors of 1e200 overflowed float64: RMSE was infinite, which JSON has no
    number for (to_json raised ValueError, and the command line printed its traceback). RMSE is
    now 1e200 (tests/robustness/test_number_edges.py); a value JSON has no number for, the NaN
    of a query without a judged retrieved document, is null."""
    qrels = write(tmp_path, "qrels.txt", QRELS)
    run = write(tmp_path, "run.txt", "q1 Q0 d1 1 1e200 sys\nq2 Q0 d9 1 2.0 sys\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = rankwise.evaluate(qrels, run, ["RMSE"], per_query=True)
        assert main(["evaluate", qrels, run, "-m", "RMSE", "-f", "json", "-q"]) == 0
    assert result.per_query()["q1"]["RMSE"] == 1e200
    data = json.loads(result.to_json())["systems"]["sys"]
    assert data["aggregates"]["RMSE"] == 1e200
    assert data["per_query"]["values"]["RMSE"] == [1e200, None]
    assert json.loads(capsys.readouterr().out) == json.loads(result.to_json(indent=2))


def test_scores_beyond_float32_are_infinite_there_without_a_warning():
    """With score_precision float32 a score beyond 3.4e38 is infinite, as the peer's float32
    stores it; numpy's warning of the cast was printed on the command line."""
    run = {"q": {"a": 1e39, "b": 2e39, "c": -1e200}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = rankwise.evaluate({"q": {"a": 1}}, run, ["RR"], score_precision="float32")
    assert result.mean("RR") == 0.5  # a and b tie at infinity; b first (doc ids descending)


def test_negative_grades_follow_trec_eval(tmp_path):
    qrels = write(tmp_path, "qrels.txt", "q1 0 d1 -1\nq1 0 d2 1\n")
    run = write(tmp_path, "run.txt", "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 1.0 sys\n")
    result = rankwise.evaluate(qrels, run, ["Bpref", "NumRel", "RR"], per_query=True)
    assert result.per_query()["q1"] == {"Bpref": 1.0, "NumRel": 1.0, "RR": 0.5}
    assert result.diagnostics["sys"]["negative_grades"] == 1


@pytest.mark.parametrize("transform", [
    lambda t: t.replace("\n", "\r\n"), lambda t: t.rstrip("\n"),
    lambda t: t.replace("d1", "d" + "é" * 3000), lambda t: t.replace("q1", "問い1"),
], ids=["crlf", "no-final-newline", "very-long-non-ascii-id", "non-ascii-query"])
def test_legal_variants_are_read(tmp_path, transform):
    qrels = write(tmp_path, "qrels.txt", transform(QRELS))
    run = write(tmp_path, "run.txt", transform(RUN))
    result = rankwise.evaluate(qrels, run, ["AP"])
    assert result.mean("AP") == 1.0
    assert result.diagnostics["sys"]["rows_evaluated"] == 3


def test_input_too_large_for_memory_is_streamed_or_refused_with_a_way_around(
        tmp_path, monkeypatch, capsys):
    """A run file too large for the memory left is streamed when it is grouped by query (the
    same numbers as one pass); one that is not, or judgments too large, are refused with the
    way around."""
    grouped = "".join(f"q1 Q0 d{i} {i + 1} {1 / (i + 1)} sys\n" for i in range(300))
    mixed = "".join(f"q{1 + i % 2} Q0 d{i} {i + 1} {1 / (i + 1)} sys\n" for i in range(300))
    qrels = write(tmp_path, "qrels.txt", QRELS)
    grouped_run = write(tmp_path, "run.txt", grouped)
    mixed_run = write(tmp_path, "mixed.txt", mixed)
    one_pass = rankwise.evaluate(qrels, grouped_run, ["AP", "NumRet"]).to_json()
    monkeypatch.setattr("rankwise.core.memory.available_bytes", lambda: 1000)
    monkeypatch.setattr("rankwise.core.memory.ALWAYS_FITS_BYTES", 0)  # these files are small
    assert rankwise.evaluate(qrels, grouped_run, ["AP", "NumRet"]).to_json() == one_pass
    assert main(["evaluate", qrels, grouped_run]) == 0
    with pytest.raises(InputError, match=r"needs about .* GB of memory.*evaluate it streamed"
                                         r".*--stream.*sort it by query") as info:
        rankwise.evaluate(qrels, mixed_run, ["AP"])
    assert info.value.source == mixed_run
    capsys.readouterr()
    assert main(["evaluate", qrels, mixed_run]) == 2
    assert "RANKWISE_SKIP_MEMORY_CHECK=1" in capsys.readouterr().err
    big_qrels = write(tmp_path, "big_qrels.txt", QRELS * 20)
    with pytest.raises(InputError, match=r"judgments are held whole.*split the judgments"):
        rankwise.evaluate(big_qrels, grouped_run, ["AP"])
    monkeypatch.setenv("RANKWISE_SKIP_MEMORY_CHECK", "1")
    assert rankwise.evaluate(qrels, mixed_run, ["NumRet"]).mean("NumRet") == 300  # a sum


def test_small_inputs_do_not_read_the_memory_figures(tmp_path, monkeypatch):
    def unavailable():
        raise AssertionError("read the system's memory figures for a small file")

    monkeypatch.setattr("rankwise.core.memory.available_bytes", unavailable)
    qrels, run = write(tmp_path, "qrels.txt", QRELS), write(tmp_path, "run.txt", RUN)
    assert rankwise.evaluate(qrels, run, ["AP"]).mean("AP") == 1.0


@pytest.mark.parametrize("policy, kept_score", [("first", 2.0), ("last", 0.5), ("max", 3.0)])
def test_duplicates_kept_by_policy_are_counted(tmp_path, capsys, policy, kept_score):
    run = write(tmp_path, "run.txt", "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 1.0 sys\nq1 Q0 d1 3 3.0 sys\n"
                "q2 Q0 d3 1 1.0 sys\nq1 Q0 d1 4 0.5 sys\n")
    qrels = write(tmp_path, "qrels.txt", QRELS)
    result = rankwise.evaluate(qrels, run, ["NumRet", "RR"], per_query=True, duplicates=policy)
    diag = result.diagnostics["sys"]
    assert diag["run_duplicates_dropped"] == 2 and diag["run_rows"] == 5
    assert diag["rows_evaluated"] == 3
    assert result.per_query()["q1"]["RR"] == (1.0 if kept_score > 1.0 else 0.5)
    assert main(["evaluate", qrels, run, "-m", "NumRet", "--duplicates", policy]) == 0
    assert "2 duplicate documents dropped from the run" in capsys.readouterr().err


def test_duplicates_last_matches_what_dicts_keep():
    rows = [("q1", "d1", 2.0), ("q1", "d2", 1.0), ("q1", "d1", 0.5)]
    frame = pd.DataFrame(rows, columns=["query", "doc", "score"])
    as_dict = {}
    for q, d, s in rows:
        as_dict.setdefault(q, {})[d] = s  # a dict keeps the last value, as pytrec_eval and ranx
    qrels = {"q1": {"d1": 1, "d2": 0}}
    last = rankwise.evaluate(qrels, frame, ["RR", "AP"], per_query=True, duplicates="last")
    assert last.per_query() == rankwise.evaluate(qrels, as_dict, ["RR", "AP"], per_query=True).per_query()


@pytest.mark.parametrize("sizes", [np.array([2**62] * 4 + [5], np.int64),  # sum wraps to 5
                                   np.array([2**64 - 1, 6], np.uint64)],
                         ids=["int64", "uint64"])
def test_group_sizes_whose_sum_wraps_around_are_refused(sizes):
    """Each size is checked against the rows before they are added up: a sum that wraps
    around 64 bits to the row count passed, and numpy's repeat then crashed the interpreter."""
    with pytest.raises(InputError, match=r"group: the size of group 0, \d+, is larger than "
                                         r"the 5 rows"):
        rankwise.from_arrays([3, 0, 1, 2, 0], [0.9, 0.8, 0.1, 0.4, 0.5], group=sizes)


def test_group_sizes_as_python_integers_are_read_and_a_scalar_is_refused():
    """An object array of integers (Python's, as ``np.array(sizes, dtype=object)`` or an
    object column holds them) gives the sizes it holds: it was refused as not "non-negative
    query sizes"; a size beyond 64 bits is larger than the rows. A single number escaped as
    numpy's IndexError."""
    y_true, y_score = [3, 0, 1, 2, 0], [0.9, 0.8, 0.1, 0.4, 0.5]
    as_objects = rankwise.from_arrays(y_true, y_score, group=np.array([3, 2], dtype=object))
    as_integers = rankwise.from_arrays(y_true, y_score, group=[3, 2])
    assert [len(run) for run in (as_objects[1], as_integers[1])] == [5, 5]
    assert rankwise.evaluate(*as_objects, ["AP"]).to_json() == \
        rankwise.evaluate(*as_integers, ["AP"]).to_json()
    with pytest.raises(InputError, match=r"group: the size of group 1, "
                                         r"1180591620717411303424, is larger than the 5 rows"):
        rankwise.from_arrays(y_true, y_score, group=np.array([3, 2**70], dtype=object))
    with pytest.raises(InputError, match=r"group: group must be a 1-D array of non-negative "
                                         r"query sizes \(got '\[5\]'\)"):
        rankwise.from_arrays(y_true, y_score, group=5)


@pytest.mark.parametrize("scores, kind", [
    (np.arange(3).astype("datetime64[D]"), "datetime64"),
    (np.arange(3).astype("timedelta64[s]"), "timedelta64"),
    (["0.9", "0.8", "0.1"], "<U3"),
    ([True, False, True], "bool; cast booleans to 0 and 1"),
    (np.array([0.9, 0.8, 0.1]) + 1j, "complex128"),
])
def test_array_scores_must_be_numbers(scores, kind):
    """As a DataFrame's columns of them are: numpy read a date as its count of days, "0.9"
    as 0.9, and dropped an imaginary part with a warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match=rf"y_score: score must be numbers \(got an array "
                                             rf"of {re.escape(kind)}"):
            rankwise.from_arrays([1, 0, 1], scores)
    with pytest.raises(InputError, match=r"y_score, row 1: score must be a number"):
        rankwise.from_arrays([1, 0, 1], np.array([0.5, "0.4", 0.1], dtype=object))


def test_array_values_numpy_cannot_take_are_refused_as_input():
    """np.asarray of a bfloat16 tensor raises TypeError ('Got unsupported ScalarType
    BFloat16'), which escaped as it was."""
    torch = pytest.importorskip("torch")
    with pytest.raises(InputError, match=r"^y_score: score must be an array of numbers "
                                         r"\(Got unsupported ScalarType BFloat16\)"):
        rankwise.from_arrays([1, 0], torch.tensor([0.5, 0.25]).bfloat16())


def test_boolean_array_grades_are_one_and_zero():
    """torchmetrics' targets are booleans: True is relevant (1), False not (0)."""
    as_booleans = rankwise.evaluate(*rankwise.from_arrays([True, False, True], [0.1, 0.3, 0.2]),
                                    ["AP", "nDCG"], per_query=True)
    as_numbers = rankwise.evaluate(*rankwise.from_arrays([1, 0, 1], [0.1, 0.3, 0.2]),
                                   ["AP", "nDCG"], per_query=True)
    assert as_booleans.per_query() == as_numbers.per_query()


@pytest.mark.parametrize("query", [
    pd.array(["a", "a", None, "b", "b"], dtype="string"),
    pd.Series(["a", "a", pd.NA, "b", "b"], dtype=object),
    np.array(["a", "a", pd.NaT, "b", "b"], dtype=object),
], ids=["string-array", "object-NA", "NaT"])
def test_array_query_ids_missing_as_pandas_na(query):
    with pytest.raises(InputError, match=r"query, row 2: missing query id"):
        rankwise.from_arrays([3, 0, 1, 2, 0], [0.9, 0.8, 0.1, 0.4, 0.5], query=query)


SURROGATE = "d\udc80"  # what os.fsdecode makes of the byte 0x80


@pytest.mark.parametrize("make, where", [
    (lambda: rankwise.evaluate(QRELS_DICT, {"q1": {SURROGATE: 1.0}}, ["P@5"]),
     r"run dict, row 0: doc id"),
    (lambda: rankwise.evaluate({"q\udc80": {"d1": 1}}, {"q1": {"d1": 1.0}}, ["P@5"]),
     r"qrels dict, row 0: query id"),
    (lambda: rankwise.evaluate(QRELS_DICT, pd.DataFrame(
        {"query": ["q1", "q1"], "doc": pd.Series(["d1", SURROGATE], dtype=object),
         "score": [1.0, 2.0]}), ["P@5"]), r"run DataFrame, row 1: column 'doc': a value"),
    (lambda: rankwise.from_arrays([1, 0], [0.5, 0.4], query=["q1", "q\udc80"]),
     r"query, row 1: query id"),
], ids=["dict-doc", "dict-query", "frame", "arrays"])
def test_ids_holding_a_lone_surrogate_are_refused(make, where):
    """No UTF-8 text holds a lone surrogate (a TREC file's bytes that are not UTF-8 are
    refused as such): they escaped as UnicodeEncodeError."""
    with pytest.raises(InputError, match=where + r" is not valid Unicode text \(it holds a "
                                                 r"lone surrogate"):
        make()


QRELS_DICT = {"q1": {"d1": 1, "d2": 0}}


@pytest.mark.parametrize("make, where", [
    (lambda: rankwise.evaluate(QRELS_DICT, {"q1": {"d1": 10**400}}, ["P@5"]),
     r"run dict, key 'q1'/'d1': score"),
    (lambda: rankwise.evaluate({"q1": {"d1": -10**400}}, {"q1": {"d1": 1.0}}, ["P@5"]),
     r"qrels dict, key 'q1'/'d1': relevance grade"),
    (lambda: rankwise.evaluate(QRELS_DICT, pd.DataFrame(
        {"query": ["q1", "q1"], "doc": ["d1", "d2"],
         "score": np.array([1.5, 10**400], dtype=object)}), ["P@5"]),
     r"run DataFrame, row 1: score"),
    (lambda: rankwise.from_arrays([1, 0], np.array([10**400, 1], dtype=object)),
     r"y_score, row 0: score"),
], ids=["dict-score", "dict-grade", "frame", "arrays"])
def test_integers_beyond_a_double_are_infinite_and_refused(make, where):
    """An integer beyond a double's range is an infinity, as a file's 1e400 reads, refused
    where values must be finite (it escaped as OverflowError)."""
    with pytest.raises(InputError, match=where + r" must be a finite number"):
        make()


@pytest.mark.parametrize("form", ["pandas", "arrow"])
@pytest.mark.parametrize("which", ["run", "qrels"])
def test_a_column_to_read_that_two_columns_are_named_is_refused(form, which):
    import pyarrow as pa

    names = ["query", "doc", "score" if which == "run" else "relevance"]
    rows = [["q1", "d1", 1, 2]]
    frame = pd.DataFrame(rows, columns=names + names[-1:])
    table = pa.Table.from_arrays([pa.array([v]) for v in rows[0]], names=names + names[-1:])
    given = frame if form == "pandas" else table
    qrels, run = (QRELS_DICT, given) if which == "run" else (given, {"q1": {"d1": 1.0}})
    kind = "DataFrame" if form == "pandas" else "Table"
    with pytest.raises(InputError, match=rf"{which} {kind}: 2 columns are named "
                                         rf"'{names[-1]}': the column to read must be the "
                                         r"only one of its name"):
        rankwise.evaluate(qrels, run, ["P@5"])
    frame.columns = names + ["other"]  # a name no column to read has may repeat elsewhere
    frame.insert(0, "extra", 0, allow_duplicates=True)
    frame.insert(0, "extra", 1, allow_duplicates=True)
    assert rankwise.evaluate(*((QRELS_DICT, frame) if which == "run" else
                               (frame, {"q1": {"d1": 1.0}})), ["P@5"]).mean("P@5") >= 0


def test_pandas_column_labels_that_are_not_strings_are_named_as_given_or_by_their_string():
    """``read_csv(header=None)`` labels columns 0, 1, 2: ``query=0`` said the frame had no
    column 0 (listing it), ``query="0"`` escaped as KeyError."""
    frame = pd.DataFrame([["q1", "d1", 1.0], ["q1", "d2", 2.0]], columns=[0, 1, 2])
    named = frame.set_axis(["query", "doc", "score"], axis=1)
    expected = rankwise.evaluate(QRELS_DICT, named, ["AP", "RR"], per_query=True).per_query()
    for labels in ((0, 1, 2), ("0", "1", "2")):
        given = dict(zip(("query", "doc", "score"), labels))
        result = rankwise.evaluate(QRELS_DICT, frame, ["AP", "RR"], per_query=True, **given)
        assert result.per_query() == expected
