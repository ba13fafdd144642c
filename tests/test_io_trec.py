"""TREC file reading: accepted variants and the errors for bad input (file, line, value)."""

from __future__ import annotations

import gzip
import random
import re

import numpy as np
import pytest

import rankwise
from rankwise import InputError
from tests.helpers import write

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d1 1\n"
RUN = "q1 Q0 d1 1 3.0 sys\nq1 Q0 d2 2 2.0 sys\nq1 Q0 d3 3 1.0 sys\nq2 Q0 d9 1 5 sys\n"


def evaluate_text(tmp_path, qrels=QRELS, run=RUN, measures=("P@2", "AP", "NumRet")):
    return rankwise.evaluate(write(tmp_path, "qrels", qrels), write(tmp_path, "run", run),
                             list(measures), per_query=True)


def test_plain_file(tmp_path):
    result = evaluate_text(tmp_path)
    assert result.per_query()["q1"]["P@2"] == 0.5
    assert result.per_query()["q1"]["AP"] == pytest.approx((1 + 2 / 3) / 2)
    assert result.per_query()["q2"]["AP"] == 0.0
    assert result.mean("NumRet") == 4
    assert "sys" in result.systems


@pytest.mark.parametrize("transform", [
    lambda t: t.replace(" ", "\t"),
    lambda t: t.replace(" ", " \t  "),
    lambda t: t.replace("\n", "\r\n"),
    lambda t: "  " + t.replace("\n", "   \n  "),
    lambda t: "# a comment\n\n" + t.replace("\n", "\n# another\n\n", 1),
    lambda t: t.rstrip("\n"),
], ids=["tabs", "mixed-blanks", "crlf", "padding", "comments-and-blank-lines", "no-final-newline"])
def test_whitespace_and_comment_variants_give_the_same_numbers(tmp_path, transform):
    expected = evaluate_text(tmp_path).per_query()
    got = evaluate_text(tmp_path, transform(QRELS), transform(RUN)).per_query()
    assert got == expected


@pytest.mark.parametrize("seed", range(12))
def test_messy_text_reads_as_the_clean_rows_with_their_own_lines(tmp_path, seed):
    """Seeded mixes of blanks between fields and at line ends, LF, CRLF and lone-CR line
    ends, blank and comment lines and text after the tag: the rows of the clean text, each
    numbered with its own line (lines end at LF, and at a CR with text after it on its line);
    and a bad score placed anywhere is refused at its line."""
    rng = random.Random(seed)
    rows = [[f"q{i // 7}", "Q0", f"d{i}", str(i % 7 + 1), f"{rng.random():.4f}", "sys"]
            for i in range(60)]
    blanks = [" ", "\t", "  ", " \t ", "\t\t", "   "]
    pieces, at = [], []  # at: the piece of each row's text
    for fields in rows:
        while rng.random() < 0.3:  # blank and comment lines before the row
            pieces += [rng.choice(["", " ", "\t", "# note", "  #q1 Q0 d1 1 1 x"]),
                       rng.choice(["\n", "\r\n", "\r"])]
        text = fields[0] + "".join(rng.choice(blanks) + f for f in fields[1:])
        at.append(len(pieces))
        pieces += [rng.choice(["", " ", "\t"]) + text + rng.choice(["", "", " extra text"])
                   + rng.choice(["", " ", "\t\r"]), rng.choice(["\n", "\r\n", "\r"])]
    numbered = re.split(r"\n|\r(?=[ \t\r]*[^ \t\r\n])", "".join(pieces))
    lines = [next(n for n, text in enumerate(numbered, 1) if not text.strip().startswith("#")
                  and re.search(rf"(^|[ \t])d{i}[ \t]", text)) for i in range(len(rows))]
    run = rankwise.read_run(write(tmp_path, "run", "".join(pieces)))
    clean = rankwise.read_run(write(tmp_path, "clean", "".join(" ".join(f) + "\n"
                                                               for f in rows)))
    assert run.query_dict.take(run.query_code).equals(clean.query_dict.take(clean.query_code))
    assert run.docs.equals(clean.docs) and np.array_equal(run.score, clean.score)
    assert np.array_equal(run.rank, clean.rank)
    assert run.lines_of(np.arange(len(rows))).tolist() == lines
    bad = rng.randrange(len(rows))
    pieces[at[bad]] = pieces[at[bad]].replace(rows[bad][4], "high", 1)
    with pytest.raises(InputError, match="a number for the score") as info:
        rankwise.read_run(write(tmp_path, "bad", "".join(pieces)))
    assert (info.value.line, info.value.value) == (lines[bad], "high")


@pytest.mark.parametrize("block", [1, 3, 4, 1 << 16])
def test_the_first_bad_line_is_found_block_by_block(tmp_path, monkeypatch, block):
    """The search for the line a parse refuses parses the text block by block and scans only
    the blocks it refuses: what blocks before it hold and the parse takes (text after the tag,
    a rank that is no integer, comments, tabs) is no error."""
    from rankwise.io import trec

    monkeypatch.setattr(trec, "LOCATE_BLOCK", block)
    rows = [f"q1 Q0 d{i} {i} {10 - i}.0 sys" for i in range(1, 10)]
    rows[1] += " text after the tag"
    rows[4] = rows[4].replace(" 5 ", " 5.5 ")  # a rank that is no integer
    rows[6] = "# a comment\t" + rows[6]
    rows[7] = rows[7].replace(" ", "\t")
    good = "\n".join(rows) + "\n"
    assert rankwise.read_run(write(tmp_path, "good", good)).rank is None
    with pytest.raises(InputError, match="a number for the score") as info:
        rankwise.read_run(write(tmp_path, "bad", good + "q2 Q0 d1 1 x sys\n"))
    assert info.value.line == 10
    qrels = "".join(f"q1 0 d{i} 1\n" for i in range(8)) + "q1\t0 d9 0x10\nq1 0 d10 x\n"
    with pytest.raises(InputError, match="integer relevance grade") as info:
        rankwise.read_qrels(write(tmp_path, "qrels", qrels))
    assert (info.value.line, info.value.value) == (9, "0x10")


def test_gzip_inputs(tmp_path):
    result = rankwise.evaluate(write(tmp_path, "q.gz", QRELS, compress=True),
                               write(tmp_path, "r.gz", RUN, compress=True), ["P@2"])
    assert result.mean("P@2") == 0.25


def test_ids_stay_exact_strings(tmp_path):
    qrels = "007 0 001 1\n7 0 1 0\n"
    run = "007 Q0 001 1 1.0 s\n7 Q0 1 1 1.0 s\n"
    result = evaluate_text(tmp_path, qrels, run, ["P@1"])
    assert result.per_query() == {"007": {"P@1": 1.0}, "7": {"P@1": 0.0}}


def test_non_ascii_and_long_ids(tmp_path):
    long_id = "d" * 5000
    qrels = f"qé 0 {long_id} 1\nqé 0 dø 0\n"
    run = f"qé Q0 dø 1 2 s\nqé Q0 {long_id} 2 1 s\n"
    assert evaluate_text(tmp_path, qrels, run, ["RR"]).per_query() == {"qé": {"RR": 0.5}}


def test_scores_decide_order_not_rank_column(tmp_path):
    run = "q1 Q0 d1 3 1.0 s\nq1 Q0 d2 1 3.0 s\nq1 Q0 d3 2 2.0 s\n"  # rank column contradicts
    assert evaluate_text(tmp_path, run=run, measures=["RR"]).per_query()["q1"]["RR"] == 0.5


def test_a_rank_beyond_32_bits_is_still_checked(tmp_path):
    """The rank column is read as 32-bit integers (it only serves a diagnostic), as 64-bit
    ones where a rank is larger (it dropped the column, which hid the contradictions of every
    query), and the scores still order the run; a rank beyond 64 bits drops the column, as a
    non-integer one does."""
    run = "q1 Q0 d1 3000000000 1.0 s\nq1 Q0 d2 1 3.0 s\nq1 Q0 d3 2 2.0 s\n"
    read = rankwise.read_run(write(tmp_path, "run", run))
    assert read.rank.tolist() == [3000000000, 1, 2] and read.rank.dtype == np.int64
    result = evaluate_text(tmp_path, run=run, measures=["RR"])
    assert result.per_query()["q1"]["RR"] == 0.5
    assert result.diagnostics["s"]["queries_rank_contradicts_score"] == 0
    contradicting = run + "q2 Q0 d1 1 1.0 s\nq2 Q0 d2 2 3.0 s\n"
    for rows in (contradicting, contradicting.replace("3000000000", "30")):
        assert rankwise.read_run(write(tmp_path, "run", rows)).rank is not None
        result = evaluate_text(tmp_path, run=rows, measures=["RR"])
        assert result.diagnostics["s"]["queries_rank_contradicts_score"] == 1
    beyond = run.replace("3000000000", "99999999999999999999")
    assert rankwise.read_run(write(tmp_path, "run", beyond)).rank is None


def test_ties_broken_by_docid_descending_as_trec_eval(tmp_path):
    qrels = "q 0 a 1\nq 0 b 0\n"
    run = "q Q0 a 1 1.0 s\nq Q0 b 2 1.0 s\n"  # tie: trec_eval puts "b" first
    assert evaluate_text(tmp_path, qrels, run, ["RR"]).mean("RR") == 0.5


def test_unsorted_run_is_sorted(tmp_path):
    run = "q2 Q0 d9 1 5 s\nq1 Q0 d3 3 1.0 s\nq1 Q0 d1 1 3.0 s\nq1 Q0 d2 2 2.0 s\n"
    assert evaluate_text(tmp_path, run=run).per_query() == evaluate_text(tmp_path).per_query()


def test_one_sided_queries_are_counted(tmp_path):
    qrels = QRELS + "q3 0 d1 1\n"
    run = RUN + "q4 Q0 d1 1 1 sys\n"
    result = evaluate_text(tmp_path, qrels, run)
    diag = result.diagnostics["sys"]
    assert diag["queries_only_in_run"] == 1 and diag["queries_only_in_qrels"] == 1
    assert diag["rows_in_run_only_queries"] == 1
    assert diag["examples"]["queries_only_in_run"] == ["q4"]
    assert set(result.per_query()) == {"q1", "q2"}
    assert diag["run_rows"] == diag["rows_evaluated"] + diag["rows_in_run_only_queries"] \
        + diag["rows_beyond_depth"] + diag["rows_unjudged_removed"]
    # scored, the run-only query's rows are evaluated, and still counted as its own
    scored = rankwise.evaluate(write(tmp_path, "q", qrels), write(tmp_path, "r", run), ["AP"],
                               run_only_queries="zero").diagnostics["sys"]
    assert scored["queries_only_in_run_scored"] == 1 and scored["rows_in_run_only_queries"] == 1
    assert scored["run_rows"] == scored["rows_evaluated"] + scored["rows_beyond_depth"] \
        + scored["rows_unjudged_removed"] == diag["run_rows"]


def _error(tmp_path, qrels=QRELS, run=RUN) -> InputError:
    with pytest.raises(InputError) as info:
        evaluate_text(tmp_path, qrels, run)
    return info.value


@pytest.mark.parametrize("run, line, fragment", [
    ("q1 Q0 d1 1 3.0 sys\nq1 Q0 d2 2\n", 2, "expected 6 fields 'qid Q0 docid rank score tag', got 4"),
    ("q1 Q0 d1 1 3.0 sys\nq1 Q0 d2 2 high sys\n", 2, "expected a number for the score"),
    ("q1 Q0 d1 1 3.0 sys\nq1 Q0 d2 2 nan sys\n", 2, "finite"),
    ("q1 Q0 d1 1 3.0 sys\nq1 Q0 d2 2 inf sys\n", 2, "finite"),
    ("qid Q0 docno rank score tag\nq1 Q0 d1 1 3.0 sys\n", 1, "header line"),
    ("q1 Q0 d1 1 3.0 sys\nq1 Q0 d1 2 2.0 sys\n", 2, "appears twice"),
    ("q1 0 d1 1\n", 1, "looks like a qrels file"),
])
def test_bad_run_lines(tmp_path, run, line, fragment):
    err = _error(tmp_path, run=run)
    assert err.line == line and err.source.endswith("run")
    assert fragment in str(err)
    assert str(err).startswith(f"{err.source}:{line}: ")


@pytest.mark.parametrize("qrels, line, fragment", [
    ("q1 0 d1 1\nq1 0 d2\n", 2, "expected 4 fields"),
    ("q1 0 d1 1\nq1 0 d2 x\n", 2, "integer relevance grade"),
    ("q1 0 d1 1\nq1 0 d2 1.5\n", 2, "integer relevance grade"),
    ("q1 0 d1 1\nq1 0 d1 2\n", 2, "judged twice"),
    ("q1 Q0 d1 1 3.0 sys\n", 1, "looks like a run file"),
])
def test_bad_qrels_lines(tmp_path, qrels, line, fragment):
    err = _error(tmp_path, qrels=qrels)
    assert err.line == line and err.source.endswith("qrels")
    assert fragment in str(err)


def test_identical_duplicate_judgments_are_dropped_and_counted(tmp_path):
    result = evaluate_text(tmp_path, QRELS + "q1 0 d1 1\n")
    assert result.diagnostics["sys"]["qrels_duplicates_dropped"] == 1
    assert result.per_query() == evaluate_text(tmp_path).per_query()


def test_negative_grades_are_unjudged_as_in_trec_eval(tmp_path):
    qrels = "q 0 a -1\nq 0 b 1\nq 0 c 0\n"
    run = "q Q0 a 1 3 s\nq Q0 b 2 2 s\nq Q0 c 3 1 s\n"
    result = evaluate_text(tmp_path, qrels, run, ["Bpref", "RR", "NumRel"])
    assert result.per_query()["q"] == {"Bpref": 1.0, "RR": 0.5, "NumRel": 1.0}
    assert result.diagnostics["s"]["negative_grades"] == 1


@pytest.mark.parametrize("content, fragment", [
    (b"", "empty file"),
    (b"\n  \n", "empty file"),
    (b"# only a comment\n", "no qrels lines"),
    (b"\x00\x01\x02binary", "not a text file"),
    (b"q1 0 d\xff\xfe 1\n", "not valid UTF-8"),
])
def test_unreadable_qrels(tmp_path, content, fragment):
    with pytest.raises(InputError, match=fragment):
        rankwise.read_qrels(write(tmp_path, "qrels", content))


def test_truncated_gzip(tmp_path):
    data = gzip.compress(QRELS.encode() * 100)
    with pytest.raises(InputError, match="truncated"):
        rankwise.read_qrels(write(tmp_path, "q.gz", data[: len(data) // 2]))


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        rankwise.read_run(tmp_path / "nope.txt")


def test_no_query_in_common(tmp_path):
    err = _error(tmp_path, run="x1 Q0 d1 1 3.0 sys\n")
    assert "no query in common" in str(err)


def test_write_and_read_back(tmp_path):
    run = rankwise.read_run(write(tmp_path, "run", RUN))
    qrels = rankwise.read_qrels(write(tmp_path, "qrels", QRELS))
    rankwise.write_run(run, tmp_path / "out.run")
    rankwise.write_qrels(qrels, tmp_path / "out.qrels")
    again = rankwise.evaluate(str(tmp_path / "out.qrels"), str(tmp_path / "out.run"), ["AP"],
                              per_query=True)
    assert again.per_query() == rankwise.evaluate(qrels, run, ["AP"], per_query=True).per_query()
    assert np.array_equal(rankwise.read_run(tmp_path / "out.run").score, run.score)


@pytest.mark.parametrize("text, tag", [
    (RUN, "sys"),
    ("# a comment\n\n   \n" + RUN, "sys"),
    ("\r\n# q1 Q0 dX 1 9.0 commented\r\n" + RUN.replace("\n", "\r\n"), "sys"),
    ("#" * 70_000 + "\n" + RUN, "run"),  # no data line in the first 64 KiB: the file's name
    ("q1 Q0 d1 1 3.0 last", "last"),  # one line, no newline at the end
])
def test_the_run_is_named_by_the_tag_of_its_first_data_line(tmp_path, text, tag):
    run = write(tmp_path, "run", text)
    result = rankwise.evaluate(write(tmp_path, "qrels", QRELS), run, ["NumRet"])
    assert list(result.systems) == [tag]
