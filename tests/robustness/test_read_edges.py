"""Edges of reading TREC files that every path must treat alike: comment lines that look like
rows, NUL bytes anywhere, names that lie about compression, pipes, and output paths of the
wrong kind. Each path (one file in memory, several runs read together, streamed) is checked
against the plain answer."""

from __future__ import annotations

import os
import threading

import pytest

import rankwise
from rankwise import InputError
from rankwise.cli import main
from rankwise.stream import evaluate_stream
from tests.helpers import write

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
RUN = "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 1.0 sys\nq2 Q0 d3 1 1.0 sys\n"
MEASURES = ["NumQ", "NumRet", "NumRel", "AP", "P@1"]
# commented-out rows with exactly the fields of a row: the fast parse would read them as rows
QRELS_COMMENTED = "#q9 0 d9 1\n" + QRELS.replace("q2 0 d3 2\n", "#q2 0 d4 1\nq2 0 d3 2\n")
RUN_COMMENTED = RUN.replace("q2 Q0", "#q2 Q0 d9 1 5.0 sys\nq2 Q0") + "#q3 Q0 d1 1 1.0 sys\n"


def _means(result) -> dict:
    return {m: result.mean(m, "sys") for m in MEASURES}


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
def test_comment_lines_shaped_like_rows_are_skipped_on_every_path(tmp_path, compress):
    plain = _means(rankwise.evaluate(write(tmp_path, "q.txt", QRELS),
                                     write(tmp_path, "r.txt", RUN), MEASURES))
    assert plain == {"NumQ": 2, "NumRet": 3, "NumRel": 2, "AP": 1.0, "P@1": 1.0}
    qrels = write(tmp_path, "qc.txt", QRELS_COMMENTED, compress)
    run = write(tmp_path, "rc.txt", RUN_COMMENTED, compress)
    assert _means(rankwise.evaluate(qrels, run, MEASURES, missing_queries="zero")) == plain
    assert _means(evaluate_stream(qrels, run, MEASURES, chunk_bytes=16)) == plain
    other = write(tmp_path, "other.txt", RUN.replace(" sys", " other"))
    together = rankwise.evaluate(qrels, [run, other], MEASURES)  # several runs read at once
    assert {m: together.mean(m, "sys") for m in MEASURES} == plain


@pytest.mark.parametrize("kind", ["qrels", "run"])
def test_a_nul_byte_in_a_field_never_read_is_refused_past_the_first_64_kib(tmp_path, kind):
    # the fast parse keeps neither Q0 (iter) nor the tag: it once read such a file whole
    # where the careful path, the streamed reader and Spark refuse it
    row = "q1 0 d{} 1\n" if kind == "qrels" else "q1 Q0 d{} 1 2.0 sys\n"
    text = "".join(row.format(i) for i in range(6000))
    bad = "q1 0\x00 d9 1\n" if kind == "qrels" else "q1 Q0 d9 1 2.0 s\x00s\n"
    path = write(tmp_path, "f.txt", text + bad)
    reader = rankwise.read_qrels if kind == "qrels" else rankwise.read_run
    with pytest.raises(InputError, match="not a text file") as info:
        reader(path)
    assert info.value.line == 6001 and len(text) > 1 << 16


def test_nul_byte_after_the_first_block_is_refused_when_streamed(tmp_path):
    qrels = write(tmp_path, "q.txt", QRELS)
    run = write(tmp_path, "r.txt", (RUN + "q2 Q0 d\x009 2 0.5 sys\n").encode())
    with pytest.raises(InputError, match="not a text file") as info:
        evaluate_stream(qrels, run, ["AP"], chunk_bytes=16)
    assert info.value.line == 4 and info.value.source == run


@pytest.mark.parametrize("qrels_text, run_text", [
    (QRELS.replace("q1 0 d1", "q1 0 \td1"), RUN),  # a tab beside a space: not in the id
    (QRELS.replace("d2 0", "d2 \t0"), RUN.replace("q2 Q0", "q2 \tQ0")),
    (QRELS.replace("q2 0", "q2\t0"), RUN.replace("Q0 d1", "Q0\t\td1 ")),
], ids=["doc", "grade-and-query", "trailing"])
def test_tabs_beside_spaces_separate_fields_on_every_path(tmp_path, qrels_text, run_text):
    # pyarrow's single-space parse kept '\td1' as the doc id where every line split into a
    # row's number of fields: the judgment was lost and P@1 fell to 0 without a word
    _read_as_the_plain_files_on_every_path(tmp_path, qrels_text, run_text, [16])


def _read_as_the_plain_files_on_every_path(tmp_path, qrels_text: str, run_text: str,
                                           chunk_sizes: list[int]) -> None:
    """The same means as QRELS and RUN: in memory, streamed in chunks of ``chunk_sizes``
    bytes, plain and gzip, and with another run (several runs read at once)."""
    plain = _means(rankwise.evaluate(write(tmp_path, "q.txt", QRELS),
                                     write(tmp_path, "r.txt", RUN), MEASURES))
    for compress in (False, True):
        qrels = write(tmp_path, f"qt{compress}.txt", qrels_text, compress)
        run = write(tmp_path, f"rt{compress}.txt", run_text, compress)
        assert _means(rankwise.evaluate(qrels, run, MEASURES)) == plain
        for chunk_bytes in chunk_sizes:
            assert _means(evaluate_stream(qrels, run, MEASURES, chunk_bytes=chunk_bytes)) == \
                plain
    other = write(tmp_path, "other.txt", run_text.replace(" sys", " other"))
    together = rankwise.evaluate(qrels, [run, other], MEASURES)  # several runs read at once
    assert {m: together.mean(m, "sys") for m in MEASURES} == plain


@pytest.mark.parametrize("kind", ["qrels", "run"])
def test_a_missing_id_hidden_by_two_blanks_is_refused(tmp_path, kind):
    # 'q1 0  1' split on single spaces has four fields, the doc id empty
    text = "q1 0 d1 1\nq1 0  1\n" if kind == "qrels" else RUN + "q2 Q0  2 0.5 sys\n"
    reader = rankwise.read_qrels if kind == "qrels" else rankwise.read_run
    with pytest.raises(InputError, match="expected [46] fields") as info:
        reader(write(tmp_path, "f.txt", text))
    assert info.value.line == text.count("\n")


# A CR with text after it on its line ends a line (pyarrow's rows and Spark's lines end there);
# a CR with only blanks after it is a blank. Before, the careful path and the stream read such
# a line as one: a comment swallowed the row after its CR, lines were misnumbered, a streamed
# block could be cut inside a query.
QRELS_CR = "q1 0 d1 1\rq1 0 d2 0 \r\n# c\rq2 0 d3 2\r\r\n\r"
RUN_CR = "q1 Q0 d1 1 2.0 sys\r  q1 Q0 d2 2 1.0 sys\r\r\n#q2 Q0 d9 1 5.0 sys\rq2 Q0 d3 1 1.0 sys"


@pytest.mark.parametrize("qrels_text, run_text", [
    (QRELS_CR, RUN_CR),
    (QRELS.replace("\n", "\r"), RUN.replace("\n", "\r")),  # classic Mac line ends only
    ("q1 0 d1 1\r# c\n" + QRELS[10:], RUN.replace("sys\nq2", "sys\r#c\rq2")),
], ids=["mixed", "cr-only", "comments-after-cr"])
def test_a_carriage_return_before_text_ends_a_line_on_every_path(tmp_path, qrels_text,
                                                                   run_text):
    _read_as_the_plain_files_on_every_path(tmp_path, qrels_text, run_text, [1, 16, 1 << 20])


@pytest.mark.parametrize("head", ["", "# forces the careful path\n", "\t"],
                         ids=["fast", "commented", "tabbed"])
@pytest.mark.parametrize("bad, line, value, reason", [
    ("q2 Q0 d3 1 x sys\n", 4, "x", "a number for the score"),
    ("q2 Q0 d1 9 0.5 sys\n", 4, "d1", "appears twice"),
    ("q2 Q0 d3\r1 0.5 sys\n", 4, "q2 Q0 d3", "expected 6 fields"),
])
def test_lines_after_a_carriage_return_are_numbered_alike_on_every_path(tmp_path, head, bad,
                                                                         line, value, reason):
    # lines 1-3: two rows split by a CR, then one; the bad line is line 4 (5 after the head)
    text = "q1 Q0 d1 1 2.0 sys\rq1 Q0 d2 2 1.0 sys\nq2 Q0 d1 1 1.0 sys\n" + bad
    text, value = (head + text, value) if head != "\t" else \
        (text.replace(" Q0", "\tQ0"), value.replace(" Q0", "\tQ0"))
    line += head.count("\n")
    qrels = write(tmp_path, "q.txt", QRELS)
    run = write(tmp_path, "r.txt", text)
    errors = []
    for evaluate in (rankwise.evaluate, *(lambda q, r, m, c=c: evaluate_stream(
            q, r, m, chunk_bytes=c) for c in (1, 30, 1 << 20))):
        with pytest.raises(InputError) as info:
            evaluate(qrels, run, ["AP"])
        errors.append((info.value.line, info.value.value, info.value.source))
        assert reason in info.value.reason
    assert errors == [(line, value, run)] * 4


def test_bytes_not_utf8_where_no_field_is_read_never_hide_the_bad_line(tmp_path):
    # they are skipped in comments, Q0 and the tag (as Spark skips them); before, the search
    # for the line the parse refused named the first of them instead of the bad line
    qrels = write(tmp_path, "q.txt", QRELS)
    text = b"# \xff\nq1 Q0\xc3 d1 1 2.0 sys\xff\n"
    run = write(tmp_path, "r.txt", text + b"q1 Q0 d2 2 high sys\n")
    for evaluate in (rankwise.evaluate, lambda q, r, m: evaluate_stream(q, r, m, chunk_bytes=8)):
        with pytest.raises(InputError, match="a number for the score") as info:
            evaluate(qrels, run, ["AP"])
        assert (info.value.line, info.value.value) == (3, "high")
    for bad in (b"q1 Q0 d\xff2 2 1.0 sys\n", b"q1 Q0 d2\xff 2 1.0\n"):  # a field read; too few
        with pytest.raises(InputError, match="not valid UTF-8") as info:
            rankwise.evaluate(qrels, write(tmp_path, "r.txt", text + bad), ["AP"])
        assert info.value.line == 3 and "\ufffd" in info.value.value


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
def test_a_score_that_is_not_finite_is_quoted_as_written(tmp_path, compress):
    # the number read is inf or nan; the message quotes the file's text
    qrels = write(tmp_path, "q.txt", QRELS)
    for score in ("1e400", "+NaN", "-1E999"):
        text = "# c\r" + RUN.replace("2 1.0 sys", f"2 {score} sys")  # the score on line 3
        run = write(tmp_path, "r.txt", text, compress)
        for evaluate in (rankwise.evaluate,
                         lambda q, r, m: evaluate_stream(q, r, m, chunk_bytes=16)):
            with pytest.raises(InputError, match="finite number") as info:
                evaluate(qrels, run, ["AP"])
            assert (info.value.line, info.value.value) == (3, score)


@pytest.mark.parametrize("text, line, reason", [
    ("q1 Q0 d1 1 1 t\nq2 Q0 d1 1 x t\n", 2, "expected a number for the score in field 'score'"),
    ("q1 Q0 d1 1 nan t\nq2 Q0 d1 1 1\n", 2, "expected 6 fields"),
    ("q1 Q0 d1 1 1 t\nq2 Q0 d1 1 1\nq3 Q0 d\x001 1 1 t\n", 3, "not a text file"),
    ("q1 Q0 d1 1 x t\nq2 Q0 \"d 1\" 1 1 t\n", 2, "ids cannot contain spaces"),
    ("q1 Q0 d1 1\nq2 Q0 \"d 1\" 1 1 t\n", 2, "ids cannot contain spaces"),
], ids=["no-header-hint-after-line-1", "bad-line-before-non-finite", "nul-first",
        "quoted-id-first", "quoted-id-before-a-short-line"])
def test_a_streamed_run_reports_the_problem_the_in_memory_reader_reports(tmp_path, text, line,
                                                                         reason):
    # the reader's order: a NUL byte or a quoted id anywhere, then the first line that does
    # not parse, then the first score that is not finite; a block read on its own once took
    # its first line for the file's (the hint for a header line), and streaming reported the
    # first problem of the first block refused
    qrels, run = write(tmp_path, "q.txt", QRELS), write(tmp_path, "r.txt", text)
    for evaluate in (rankwise.evaluate, *(lambda q, r, m, c=c: evaluate_stream(
            q, r, m, chunk_bytes=c) for c in (1, 1 << 20))):
        with pytest.raises(InputError) as info:
            evaluate(qrels, run, ["AP"])
        assert info.value.line == line and info.value.reason.startswith(reason)
        assert "header line" not in info.value.reason


def test_a_streamed_run_is_named_as_in_memory(tmp_path):
    # a byte-order mark before a comment, a tag ending in a form feed (no field separator)
    qrels = write(tmp_path, "q.txt", QRELS)
    for text, name in (("\ufeff# c\n" + RUN, "sys"), ("# c\rq1 Q0 d1 1 2.0 run-a\n", "run-a"),
                       (RUN.replace("sys\n", "sys\x0c\n"), "sys\x0c")):
        run = write(tmp_path, "r.txt", text)
        assert list(rankwise.evaluate(qrels, run, ["AP"]).systems) == [name]
        assert list(evaluate_stream(qrels, run, ["AP"], chunk_bytes=8).systems) == [name]


@pytest.mark.parametrize("grade", ["0x10", "0X1", "1_0", "+1", "9223372036854775808"])
@pytest.mark.parametrize("shape", ["plain", "gzip", "commented", "large"])
def test_grades_pyarrow_reads_but_trec_eval_does_not_are_refused(tmp_path, grade, shape):
    # pyarrow's integer parse takes 0x10 as 16 where trec_eval's atol reads 0: the grade is
    # refused with its line on every path (the fast parse, the careful one, several blocks)
    head = "#a comment\n" if shape == "commented" else ""
    filler = "".join(f"q{i} 0 d{i} 1\n" for i in range(200_000)) if shape == "large" else ""
    text = head + QRELS + filler + f"q2 0 d7 {grade}\n"
    qrels = write(tmp_path, "q.txt", text, compress=shape == "gzip")
    with pytest.raises(InputError, match="expected an integer relevance grade") as info:
        rankwise.read_qrels(qrels)
    assert info.value.line == text.count("\n") and info.value.value == grade
    assert info.value.source == qrels


def test_grades_read_as_integers_on_every_path(tmp_path):
    text = "q1 0 d1 -0\nq1 0 d2 007\nq1 0 d3 -1\nq1 0 d4 9223372036854775807\n"
    for shape in ("plain", "commented"):
        qrels = write(tmp_path, f"{shape}.txt", text if shape == "plain" else "#\n" + text)
        assert rankwise.read_qrels(qrels).grade.tolist() == [0.0, 7.0, -1.0, 2.0 ** 63]


@pytest.mark.parametrize("name", ["run.gz", "run.bz2"])
def test_plain_text_named_as_compressed_is_read_as_text(tmp_path, name):
    result = rankwise.evaluate(write(tmp_path, "q.txt", QRELS), write(tmp_path, name, RUN),
                               ["AP"])
    assert result.mean("AP", "sys") == 1.0


def test_run_name_is_the_sixth_field_split_as_the_parse_splits(tmp_path):
    run = write(tmp_path, "r.txt", RUN.replace("d1 1 2.0", "d\u00a01 1 2.0"))  # a no-break space
    result = rankwise.evaluate(write(tmp_path, "q.txt", QRELS), run, ["AP"])
    assert list(result.systems) == ["sys"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_pipe_is_read_once_in_memory_and_refused_when_streamed(tmp_path, capsys):
    qrels = write(tmp_path, "q.txt", QRELS)
    pipe = str(tmp_path / "run.pipe")

    def feed() -> threading.Thread:
        if not os.path.exists(pipe):
            os.mkfifo(pipe)
        writer = threading.Thread(target=lambda: open(pipe, "w").write(RUN_COMMENTED))
        writer.start()
        return writer

    writer = feed()
    assert _means(rankwise.evaluate(qrels, pipe, MEASURES)) == \
        {"NumQ": 2, "NumRet": 3, "NumRel": 2, "AP": 1.0, "P@1": 1.0}
    writer.join()
    with pytest.raises(InputError, match="a pipe cannot be read chunk by chunk"):
        evaluate_stream(qrels, pipe, ["AP"])  # refused before the pipe is opened
    writer = feed()
    assert main(["evaluate", qrels, pipe, "-m", "AP"]) == 0
    writer.join()
    assert "1.0000" in capsys.readouterr().out


@pytest.mark.parametrize("command, fragment", [
    (["report", "{q}", "{r}", "-o", "{dir}"], "is a directory; expected the file to write"),
    (["plot", "{q}", "{r}", "-o", "{q}"], "is a file; expected a folder"),
    (["demo", "-o", "{q}"], "is a file; expected a folder"),
])
def test_output_paths_of_the_wrong_kind_are_refused_before_evaluating(tmp_path, capsys,
                                                                        command, fragment):
    paths = {"q": write(tmp_path, "q.txt", QRELS), "r": write(tmp_path, "r.txt", RUN),
             "dir": str(tmp_path)}
    assert main([part.format(**paths) for part in command]) == 2
    message = capsys.readouterr().err.strip()
    assert message.startswith("rankwise: error: ") and fragment in message
    assert "\n" not in message


def test_explain_decimals_are_checked(tmp_path, capsys):
    qrels, run = write(tmp_path, "q.txt", QRELS), write(tmp_path, "r.txt", RUN)
    with pytest.raises(SystemExit) as info:
        main(["explain", qrels, run, "--query", "q1", "-m", "AP", "--digits", "-1"])
    assert info.value.code == 2
    assert "expected a number of decimals from 0 to 17" in capsys.readouterr().err
    from rankwise.explain import explain

    with pytest.raises(ValueError, match="digits must be a whole number"):
        explain(qrels, run, "q1", "AP").to_text(digits=-1)


@pytest.mark.parametrize("column", ["query", "doc"])
def test_an_empty_id_is_refused_on_every_path(tmp_path, capsys, column):
    """A TREC file cannot hold an empty id (its line has a field less); a frame, an Arrow
    table, a Parquet file or a dict can, and read it as an id. Every path now refuses it at
    its row, line or key: in one pass and streamed, from the API and the command line."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [("q1", "d1", 2.0), ("q1", "d2", 1.0), ("q2", "d3", 1.0)]
    broken = [(q, "" if column == "doc" else d, s) if i == 2 else (q, d, s)
              for i, (q, d, s) in enumerate(rows)]
    if column == "query":
        broken[2] = ("", *broken[2][1:])
    text = write(tmp_path, "run.txt", "".join(f"{q} Q0 {d} 1 {s} sys\n" for q, d, s in broken))
    table = pa.table(dict(zip(("query", "doc", "score"), map(list, zip(*broken)))))
    parquet = str(tmp_path / "run.parquet")
    pq.write_table(table, parquet)
    nested: dict = {}
    for q, d, s in broken:
        nested.setdefault(q, {})[d] = s
    qrels = write(tmp_path, "qrels.txt", QRELS)
    expected = {text: ("expected 6 fields", text, 3, "line"),
                parquet: (f"empty {column} id", parquet, 2, "row")}
    forms = {**expected, "frame": (f"empty {column} id", "run DataFrame", 2, "row"),
             "table": (f"empty {column} id", "run Table", 2, "row"),
             "dict": (f"empty {column} id", "run dict",
                      "'q2'/''" if column == "doc" else "''", "key")}
    given = {"frame": table.to_pandas(), "table": table, "dict": nested}
    for name, (reason, source, line, unit) in forms.items():
        run = given.get(name, name)
        calls = [lambda: rankwise.evaluate(qrels, run, ["AP"])]
        if name in expected:
            calls.append(lambda: evaluate_stream(qrels, run, ["AP"], chunk_bytes=40))
        for call in calls:
            with pytest.raises(InputError) as error:
                call()
            got = error.value
            assert (got.reason.startswith(reason), got.source, got.line, got.unit) == \
                (True, source, line, unit), str(got)
    for run in expected:
        assert main(["evaluate", qrels, run, "-m", "AP"]) == 2
        message = capsys.readouterr().err.strip()
        assert message.startswith("rankwise: error: ") and "\n" not in message


def test_file_names_that_are_not_utf8(tmp_path):
    """A file whose name is bytes that are not UTF-8 (``os.fsdecode`` gives lone surrogates):
    TREC text is read, in one pass and streamed, as under any other name (pyarrow cannot open
    it by its name: the read went through Python's own); a Parquet file is refused naming
    it, where both ended in a UnicodeEncodeError from inside pyarrow."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    qrels = write(tmp_path, "qrels", "q1 0 a 1\nq1 0 b 0\n")
    text = "q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\n"
    run = os.fsdecode(os.fsencode(str(tmp_path)) + b"/run\xff")
    with open(run, "w") as f:
        f.write(text)
    expected = rankwise.evaluate(qrels, write(tmp_path, "plain", text), ["AP", "P@1"])
    assert rankwise.evaluate(qrels, run, ["AP", "P@1"]).aggregates == expected.aggregates
    assert evaluate_stream(qrels, run, ["AP"]).mean("AP") == expected.mean("AP")
    table = os.fsdecode(os.fsencode(str(tmp_path)) + b"/qrels\xfe.parquet")
    with open(table, "wb") as f:  # (pyarrow cannot write it by its name either)
        pq.write_table(pa.table({"query": ["q1"], "doc": ["a"], "relevance": [1]}), f)
    with pytest.raises(InputError, match="the file name is not UTF-8"):
        rankwise.evaluate(table, run, ["AP"])
