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
    plain = _means(rankwise.evaluate(write(tmp_path, "q.txt", QRELS),
                                     write(tmp_path, "r.txt", RUN), MEASURES))
    for compress in (False, True):
        qrels = write(tmp_path, f"qt{compress}.txt", qrels_text, compress)
        run = write(tmp_path, f"rt{compress}.txt", run_text, compress)
        assert _means(rankwise.evaluate(qrels, run, MEASURES)) == plain
        assert _means(evaluate_stream(qrels, run, MEASURES, chunk_bytes=16)) == plain
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
