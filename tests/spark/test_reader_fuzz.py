"""Differential fuzz test: the Spark engine reads TREC text as the in-memory engine does.

Seeded random pairs of qrels and run files are written line by line, valid lines mixed with
what real files hold (tabs and several blanks, blanks at either end, CRLF, a lone CR between
rows, blank lines, comment lines also shaped like rows, a byte-order mark, odd ids, every
number syntax the readers take, rank columns that are not integers, text after the tag,
identical duplicate judgments, negative grades, gzip) and what broken files hold (too few or
too many fields, numbers the readers refuse or that are not finite, bytes that are not UTF-8,
NUL bytes, quoted ids, header lines, other control characters between fields, conflicting
judgments, a document twice in a run, empty files, truncated or misnamed gzip, a run with no
judged query). Three comparisons:

1. every file through both readers (Spark reads each kind's files in one job): where the
   in-memory reader accepts a file, the same rows (ids, scores, grades, the rank column kept
   or dropped); where it refuses one at a line, Spark's first problem (the one the engine
   reports) is on the same line, for the same reason;
2. every accepted pair through both engines, the pairs of each conventions in one Spark
   evaluation (a pair's queries prefixed with its number): per-query values bit for bit,
   the means, and the diagnostics counts;
3. one pair of each outcome (a file refused for one of its lines, or whole, for each reason,
   the judgments or the run; a misnamed gzip file; a pair accepted) through the command
   line's Spark path, the pair with the most faults: the same file named and the same line
   (Spark quotes it instead of numbering it: docs/spark.md, "Limits"), or the same numbers,
   diagnostics and run name.

Lines are numbered as both readers split them: at LF, and at a CR with text after it on its
line (``trec.end_lines_at_lone_crs``). Left out, where generated, what the in-memory reader
reads otherwise than the format says (reported, not changed here): a hexadecimal rank its
parse reads as a number. By design (docs/spark.md, "Command line"): a U+FFFD character,
refused by Spark, is not generated; a misnamed gzip file is refused by Spark.
"""

from __future__ import annotations

import gzip
import math
import os
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

import rankwise
from rankwise import cli
from rankwise.errors import InputError
from rankwise.io import trec
from rankwise.measures import parse_measure
from rankwise.results import aggregate
from rankwise.spark import io as spark_io
from rankwise.spark.commands import evaluate_from_args
from tests.spark.test_io_cli import spark_args

pytestmark = pytest.mark.slow

SEED = 20261125
PAIRS = 160
MEASURES = ["P@5", "AP", "nDCG@10", "RR", "Rprec", "Bpref", "R@10", "NumRet", "NumRel"]
#: The pairs' conventions, by pair number: trec_eval's, and one that keeps the first of a
#: document's duplicates, scores missing queries 0 and breaks ties in file order.
CONVENTIONS = [{}, {"missing_queries": "zero", "duplicates": "first", "ties": "input_order"}]

QUERIES = ["q1", "q2", "q3"]
ODD_QUERIES = ["007", "7", "問い", "q#5", "e\u0301", "Q0", "x" * 500, "1e3"]
ODD_DOCS = ["D1", "0x10", "1e3", "00", "-1", "nan", "d#", "#d", "文書", "é" * 300, "x" * 3000,
            "d\u00a0x", "d\u2028y", "d\u0085z", "d\x0bv", "d\x0cf", "d\x1cg", "\U0001f600",
            "d\u200b", "a,b", "d'q", 'd"q', "d\\n", "d\ufffe", "d\u2029"]
SCORES = ["3", "-2", "0.25", ".5", "5.", "1e-3", "1E+2", "+1", "-0", "+0.0", "0", "4.9e-324",
          "1e-400", "1.7976931348623157e308", "00012", "12345678901234567890", "-.75",
          "0.1000000000000000055511151231257827", "2.50", "+.5"]
BAD_SCORES = ["1_0", "0x10", "2.0f", "3D", "0x1p3", "\u0661", "1,5", "e5", "1.2.3", "--1",
              "+-1", "1e", "high", ".", "\uff11", "0.5e+", "1d", "1F", "1.5\u0085", "2\u2028"]
NOT_FINITE = ["nan", "NaN", "inf", "-Infinity", "+inf", "1e400", "-1e999", "nAn", "+nan",
              "-nan", "INF", "infinity"]
GRADES = ["0", "1", "2", "3", "-1", "-2", "01", "007", "-0", "9223372036854775807",
          "-9223372036854775808", "1000"]
BAD_GRADES = ["+1", "1.0", "0.5", "1e0", "9223372036854775808", "-9223372036854775809",
              "99999999999999999999", "\u0661", "1_0", "0x1", "inf", "nan", "one", "-", "1.",
              "2\u2028", "1\u0085", "3\x0c", "\uff12", "+0", "1L"]
#: Rank columns the in-memory reader keeps (-?[0-9]+ within 32 bits) or drops.
ODD_RANKS = ["+1", "1.5", "x", "3000000000", "2147483648", "-2147483649",
             "99999999999999999999999", "\u0661", "1e2", "01", "-3", "0", "2147483647", "0x1F"]
TAGS = ["run-1", "tag\u2028", "\u0085", "t#", "タグ", "\u2029"]
EXTRA = ["extra", "more text", "#x", '"q"', "\u0085", "1 2 3"]
SEPARATORS = ["\t", "  ", " \t", "\t\t ", "   ", " \t "]
EDGE_BLANKS = [" ", "\t", " \t "]
BLANK_LINES = ["", " ", "\t", " \t "]
COMMENTS = ["#", "# a comment", "  # indented", "\t#tab", "#q1 0 d1 1", "#q1 Q0 d1 1 1 t",
            "# q2 0 d9 3", "#\tq2 Q0 d1 1 2 x"]
#: Bytes that are not UTF-8 (surrogate escapes of them: encoded with "surrogateescape").
NOT_UTF8 = [b"\xff", b"\xc3", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80",
            b"\xe2\x82"]
GAPS_THAT_JOIN = ["\x0b", "\x0c", "\r", "\xa0", "\u2028", "\x1c"]
READ_FIELDS = {"run": (0, 2, 3, 4), "qrels": (0, 2, 3)}
#: gzip files whose name says otherwise (Spark takes the compression from the name).
MISNAMED = {"text-named-gz", "gzip-named-txt"}


def _bad_bytes(rng: random.Random) -> str:
    return rng.choice(NOT_UTF8).decode("utf-8", "surrogateescape")


# ---------------------------------------------------------------------------- generation


@dataclass
class Line:
    """One line: a row's fields, or the text of a blank or comment line."""

    fields: list[str] | None = None
    text: str = ""
    lead: str = ""
    trail: str = ""
    gaps: dict[int, str] = field(default_factory=dict)
    end: str = "\n"

    def render(self) -> str:
        if self.fields is None:
            return self.text + self.end
        parts = [self.lead]
        for i, value in enumerate(self.fields):
            parts.append(value if i == 0 else self.gaps.get(i, " ") + value)
        return "".join(parts) + self.trail + self.end


@dataclass
class TrecFile:
    """A generated file: its name in the corpus, its bytes and what it was made with."""

    kind: str
    name: str
    data: bytes
    variations: set[str]
    path: str = ""
    misread: bool = False  # by the in-memory reader (see memory_misreads)

    @property
    def refused_by_name(self) -> bool:
        """Misnamed or broken gzip: Spark cannot read it as the in-memory reader does."""
        return bool(self.variations & (MISNAMED | {"truncated-gzip"}))


@dataclass
class Pair:
    """A qrels file and a run file evaluated together, under the conventions of its number."""

    number: int
    qrels: TrecFile
    run: TrecFile

    @property
    def conventions(self) -> dict:
        return CONVENTIONS[self.number % len(CONVENTIONS)]


def generate_pair(rng: random.Random, number: int) -> Pair:
    """One qrels file and one run file: six pairs in ten without faults, one with a fault
    only the engines see (conflicting judgments, a document twice in a run, a run without a
    judged query), three with faults in reading one file (and one in four of them in the
    other file too)."""
    queries = rng.sample(QUERIES, rng.randint(1, 3))
    run_queries = list(queries) if rng.random() < 0.8 else rng.sample(QUERIES, 2)
    faults: dict[str, list] = {"qrels": [], "run": []}
    draw = rng.random()
    if draw < 0.1:
        kind, fault = rng.choice([("qrels", _conflict), ("run", _twice), ("run", None)])
        if fault is None:  # (and, half the time, a document twice in that run)
            run_queries = ["x1", "x2"]
            faults[kind] = [_no_common_query] + [_twice] * rng.randint(0, 1)
        else:
            faults[kind] = [fault]
    elif draw >= 0.6:
        first = rng.choice(["qrels", "run"])
        for kind in ("qrels", "run"):
            if kind == first or rng.random() < 0.25:
                faults[kind] = [rng.choice(FAULTS[kind]) for _ in range(rng.randint(1, 2))]
    qrels, run = (make_file(rng, kind, mine, faults[kind], f"p{number:03d}-{kind}")
                  for kind, mine in (("qrels", queries), ("run", run_queries)))
    return Pair(number, qrels, run)


def make_file(rng: random.Random, kind: str, queries: list[str], faults: list,
              stem: str) -> TrecFile:
    """A file of ``kind`` with rows for ``queries``, legal variations and ``faults``
    (functions that break the lines)."""
    variations: set[str] = set()
    odd = rng.random() < 0.75
    lines = _rows(rng, kind, queries, odd, variations)
    if odd:
        _legal_variations(rng, kind, lines, variations)
    _line_breaks_and_bytes(rng, kind, lines, variations, odd)
    for fault in faults:
        fault(rng, kind, lines, variations)
    if lines and rng.random() < 0.15:
        lines[-1].end = ""
        variations.add("no-final-newline")
    text = "".join(line.render() for line in lines)
    if odd and rng.random() < 0.1:
        text = "\ufeff" + text
        variations.add("bom")
    data = text.encode("utf-8", "surrogateescape")
    if rng.random() < 0.03:
        data = rng.choice([b"", b"\n\n", b" \t\r\n", b"\xef\xbb\xbf", b"# only\n#q1 0 d1 1\n",
                           b"\xef\xbb\xbf# c\n"])
        variations.add("empty")
    return _compressed(rng, kind, stem, data, variations)


def _compressed(rng, kind, stem, data, variations) -> TrecFile:
    """The file as written: plain, gzip (whole, truncated, or misnamed either way)."""
    suffix, draw = ".txt", rng.random()
    if draw < 0.12:
        data, suffix = gzip.compress(data, mtime=0), ".gz"
        variations.add("gzip")
    elif draw < 0.14:
        data, suffix = gzip.compress(data, mtime=0)[:-rng.randint(4, 12)], ".gz"
        variations.add("truncated-gzip")
    elif draw < 0.15:
        suffix = ".gz"
        variations.add("text-named-gz")
    elif draw < 0.16:
        data = gzip.compress(data, mtime=0)
        variations.add("gzip-named-txt")
    return TrecFile(kind, stem + suffix, data, variations)


def _rows(rng, kind, queries, odd, variations) -> list[Line]:
    """A file's rows, query by query; ``odd``: with odd ids, numbers and tags."""
    lines = []
    if odd and rng.random() < 0.3:
        queries = queries + [rng.choice(ODD_QUERIES)]
        variations.add("odd-queries")
    for query in queries:
        docs = list(dict.fromkeys(_doc(rng, odd, variations) for _ in range(rng.randint(1, 7))))
        for position, doc in enumerate(docs, 1):
            if kind == "qrels":
                grade = _pick(rng, ["0", "1", "2"], GRADES, 0.2 if odd else 0)
                variations.update(["number-syntax"] if grade not in "012" else [])
                lines.append(Line([query, rng.choice(["0", "0", "Q0", "1"]), doc, grade]))
                continue
            score = _pick(rng, [str(rng.randint(0, 9)), f"{rng.random():.3f}"], SCORES,
                          0.2 if odd else 0)
            variations.update(["number-syntax"] if score in SCORES else [])
            tag = _pick(rng, ["tag"], TAGS, 0.05 if odd else 0)
            variations.update(["odd-tags"] if tag != "tag" else [])
            fields = [query, "Q0", doc, str(position), score, tag]
            if odd and rng.random() < 0.05:
                fields.append(rng.choice(EXTRA))
                variations.add("text-after-tag")
            lines.append(Line(fields))
    return lines


def _doc(rng, odd, variations) -> str:
    """A doc id: d1 to d12, or (``odd``) now and then an odd one."""
    if odd and rng.random() < 0.1:
        variations.add("odd-ids")
        return rng.choice(ODD_DOCS)
    return f"d{rng.randint(1, 12)}"


def _pick(rng, common, rare, p_rare):
    """One of ``rare`` with probability ``p_rare``, else one of ``common``."""
    return rng.choice(rare) if rng.random() < p_rare else rng.choice(common)


def _legal_variations(rng, kind, lines, variations) -> None:
    """Separators, blanks at the ends, CRLF, blank and comment lines, identical duplicate
    judgments, negative grades, rank columns that are not integers."""
    rows = [line for line in lines if line.fields]
    for line in rows:
        if rng.random() < 0.15:
            gap = rng.randrange(1, len(line.fields))
            line.gaps[gap] = rng.choice(SEPARATORS)
            variations.add("separators")
        if rng.random() < 0.1:
            line.lead = rng.choice(EDGE_BLANKS)
            variations.add("edge-blanks")
        if rng.random() < 0.1:
            line.trail = rng.choice(EDGE_BLANKS)
            variations.add("edge-blanks")
        if rng.random() < 0.15:
            line.end = "\r\n"
            variations.add("crlf")
    for _ in range(rng.randint(0, 3)):
        text = rng.choice(BLANK_LINES + COMMENTS)
        variations.add("comments" if "#" in text else "blank-lines")
        lines.insert(rng.randint(0, len(lines)), Line(text=text, end=rng.choice(["\n", "\r\n"])))
    if kind == "qrels" and rows and rng.random() < 0.15:
        lines.insert(rng.randint(0, len(lines)), Line(list(rng.choice(rows).fields)))
        variations.add("identical-duplicate")
    if kind == "qrels" and rows and rng.random() < 0.2:
        lines.append(Line([rows[0].fields[0], "0", "dneg", rng.choice(["-1", "-2"])]))
        variations.add("negative-grades")
    if kind == "run" and rows and rng.random() < 0.1:
        rng.choice(rows).fields[3] = rng.choice(ODD_RANKS)
        variations.add("odd-ranks")


def _line_breaks_and_bytes(rng, kind, lines, variations, odd: bool) -> None:
    """Lone CRs (a CR ending any line, also the last: a line end where text follows it on
    the line, else a blank) and (``odd``) bytes that are not UTF-8 in fields no reader reads
    or in a comment line."""
    rows = [line for line in lines if line.fields]
    if odd and rows and rng.random() < 0.15:
        line = rng.choice(rows)
        line.fields[rng.choice([1] + ([5] if kind == "run" else []))] += _bad_bytes(rng)
        variations.add("bytes-in-unread-fields")
    if odd and rng.random() < 0.1:
        lines.insert(rng.randint(0, len(lines)), Line(text="# bytes " + _bad_bytes(rng)))
        variations.add("bytes-in-comments")
    if lines and rng.random() < 0.25:
        for _ in range(rng.randint(1, 2)):
            rng.choice(lines).end = "\r"
        variations.add("lone-cr")


# faults: each takes (rng, kind, lines, variations) and breaks the lines in one way


def _row(rng, lines) -> Line | None:
    rows = [line for line in lines if line.fields]
    return rng.choice(rows) if rows else None


def _few_fields(rng, kind, lines, variations):
    line = _row(rng, lines)
    if line:
        for _ in range(rng.randint(1, 2)):
            line.fields.pop(rng.randrange(len(line.fields)))
        line.gaps.clear()
        variations.add("few-fields")


def _many_fields(rng, kind, lines, variations):
    line = _row(rng, lines)
    if line:
        line.fields += ["x", "y"][:rng.randint(1, 2)]
        variations.add("many-fields")


def _wrong_kind(rng, kind, lines, variations):
    other = ["q1", "Q0", "d1", "1", "0.5", "tag"] if kind == "qrels" else ["q1", "0", "d1", "1"]
    lines.insert(rng.randint(0, len(lines)), Line(other))
    variations.add("other-kind-line")


def _bad_number(rng, kind, lines, variations):
    line = _row(rng, lines)
    if line and len(line.fields) > 4 - (kind == "qrels"):
        line.fields[3 if kind == "qrels" else 4] = rng.choice(
            BAD_GRADES if kind == "qrels" else BAD_SCORES)
        variations.add("bad-number")


def _not_finite(rng, kind, lines, variations):
    line = _row(rng, lines)
    if line and len(line.fields) > 4:
        line.fields[4] = rng.choice(NOT_FINITE)
        variations.add("not-finite")


def _bytes_in_a_read_field(rng, kind, lines, variations):
    line = _row(rng, lines)
    if line:
        at = rng.choice([i for i in READ_FIELDS[kind] if i < len(line.fields)])
        line.fields[at] = line.fields[at][:1] + _bad_bytes(rng) + line.fields[at][1:]
        variations.add("not-utf8")


def _nul(rng, kind, lines, variations):
    line = _row(rng, lines)
    if line and rng.random() < 0.6:
        at = rng.randrange(len(line.fields))
        line.fields[at] = line.fields[at][:1] + "\x00" + line.fields[at][1:]
    else:
        lines.insert(rng.randint(0, len(lines)), Line(text="# a NUL \x00 in a comment"))
    variations.add("nul")


def _quoted(rng, kind, lines, variations):
    line = _row(rng, lines)
    if line and len(line.fields) > 2:
        line.fields[2] = f'"doc {line.fields[2]}"'
        variations.add("quoted-id")


def _header(rng, kind, lines, variations):
    names = trec.RUN_FIELDS if kind == "run" else trec.QRELS_FIELDS
    lines.insert(0, Line(list(names)))
    variations.add("header")


def _joined_fields(rng, kind, lines, variations):
    line = _row(rng, lines)
    if line and len(line.fields) > 1:
        at = rng.randrange(len(line.fields) - 1)
        line.fields[at] += rng.choice(GAPS_THAT_JOIN) + line.fields.pop(at + 1)
        line.gaps.clear()
        variations.add("other-control-between-fields")


def _conflict(rng, kind, lines, variations):
    line = _row(rng, lines)
    if line and len(line.fields) == 4:
        grade = "3" if line.fields[3] != "3" else "2"
        lines.append(Line([line.fields[0], "0", line.fields[2], grade]))
        variations.add("conflicting-judgments")


def _no_common_query(rng, kind, lines, variations):
    variations.add("no-common-query")  # (the run's rows are made for other queries)


def _twice(rng, kind, lines, variations):
    line = _row(rng, lines)
    if line and len(line.fields) >= 6:
        lines.append(Line([line.fields[0], "Q0", line.fields[2], "9", "0.125", "tag"]))
        variations.add("doc-twice-in-run")


#: The variations that are faults (the others are legal).
FAULTS_MADE = {"few-fields", "many-fields", "other-kind-line", "bad-number", "not-finite",
               "not-utf8", "nul", "quoted-id", "header", "other-control-between-fields",
               "conflicting-judgments", "doc-twice-in-run", "empty", "truncated-gzip",
               "no-common-query"}
COMMON_FAULTS = [_few_fields, _wrong_kind, _bad_number, _bytes_in_a_read_field, _nul,
                 _header, _joined_fields]
FAULTS = {"qrels": COMMON_FAULTS + [_many_fields, _conflict],
          "run": COMMON_FAULTS + [_not_finite, _quoted, _twice]}


# ---------------------------------------------------------------------------- the corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> list[Pair]:
    """The generated pairs, written: files Spark reads in one job per kind in ``qrels/`` and
    ``run/``, misnamed or broken gzip files apart in ``apart/``."""
    root = tmp_path_factory.mktemp("fuzz")
    rng = random.Random(SEED)
    pairs = [generate_pair(rng, number) for number in range(PAIRS)]
    for pair in pairs:
        for f in (pair.qrels, pair.run):
            folder = root / ("apart" if f.refused_by_name else f.kind)
            folder.mkdir(exist_ok=True)
            f.path = str(folder / f.name)
            Path(f.path).write_bytes(f.data)
            f.misread = memory_misreads(f)
    return pairs


def test_the_corpus_covers_every_variation(corpus):
    """Every variation is generated, each legal one also in a file without faults."""
    seen = {v for pair in corpus for f in (pair.qrels, pair.run) for v in f.variations}
    legal = {"separators", "edge-blanks", "crlf", "lone-cr", "no-final-newline", "blank-lines",
             "comments", "bom", "odd-ids", "odd-queries", "number-syntax", "odd-ranks",
             "odd-tags", "text-after-tag", "identical-duplicate", "negative-grades", "gzip",
             "bytes-in-unread-fields", "bytes-in-comments"}
    generated = legal | FAULTS_MADE | MISNAMED
    assert seen == generated, sorted(seen ^ generated)
    files = [f for pair in corpus for f in (pair.qrels, pair.run)]
    assert all(any(v in f.variations and not f.variations & FAULTS_MADE for f in files)
               for v in legal), "each legal variation in a file without faults"


# ---------------------------------------------------------------------------- 1. the readers


def memory_read(f: TrecFile):
    """The in-memory reader's rows of a file: ``(rows, ranks or None)``, or its InputError."""
    try:
        table = trec.read_run(f.path) if f.kind == "run" else trec.read_qrels(f.path)
    except InputError as error:
        return error
    queries = table.query_dict.to_pylist()
    values = table.score if f.kind == "run" else table.grade
    rows = list(zip([queries[c] for c in table.query_code], map(str, table.docs.to_pylist()),
                    values.tolist()))
    ranks = table.rank.tolist() if f.kind == "run" and table.rank is not None else None
    return rows, ranks


def spark_read(spark, folder: str, kind: str) -> dict[str, list]:
    """Spark's rows of every file of a folder (one job): file name to its rows in order."""
    from pyspark.sql import functions as F

    if kind == "run":
        df, _ = spark_io.read_run(spark, folder, name="fuzz")
        columns = ["query", "doc", "score", "rank"]
    else:
        df = spark_io.read_qrels(spark, folder)
        columns = ["query", "doc", "relevance"]
    rows = df.select(*columns, spark_io.BAD_COLUMN, F.input_file_name().alias("file"),
                     F.monotonically_increasing_id().alias("id")).collect()
    by_file: dict[str, list] = {}
    for row in sorted(rows, key=lambda r: r["id"]):
        by_file.setdefault(row["file"].rsplit("/", 1)[-1], []).append(row)
    return by_file


def text_of(data: bytes) -> bytes:
    """A file's text: decompressed, without a byte-order mark."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data[3:] if data[:3] == b"\xef\xbb\xbf" else data


def numbered_lines(text: bytes) -> list[bytes]:
    """A file's lines as both readers number them: ended by LF, or by a CR with text after it
    on its line (a CR with only blanks after it is a blank)."""
    return re.split(rb"\n|\r(?=[ \t\r]*[^ \t\r\n])", text)


def lines_spark_keeps(text: bytes) -> list[int]:
    """The line number of each row Spark reads: blank and comment lines are dropped unless
    they hold a NUL byte (refused)."""
    kept = []
    for number, line in enumerate(numbered_lines(text), 1):
        stripped = line.strip(b" \t\r")
        if b"\x00" in line or (stripped and not stripped.startswith(b"#")):
            kept.append(number)
    return kept


def memory_misreads(f: TrecFile) -> bool:
    """Whether the in-memory reader reads a file otherwise than the format says (reported,
    not changed here): a hexadecimal rank (0x1F) its parse reads as an integer, where Spark
    drops the rank column. (Hexadecimal grades, and tabs or empty fields on a single-space
    parse, it now refuses or reads as the format says: they are compared.)"""
    if "truncated-gzip" in f.variations or f.kind != "run":
        return False  # refused before any parse; a qrels file has no rank
    text = text_of(f.data)
    lines = [line.decode("utf-8", "replace") for line in re.split(rb"\r\n|\r|\n", text)]
    fields = [re.split(r"[ \t]+", line.strip(" \t\r")) for line in lines]
    return not isinstance(memory_read(f), InputError) and any(
        len(row) > 3 and re.fullmatch("0[xX][0-9a-fA-F]+", row[3]) for row in fields)


def first_problem(rows: list) -> int | None:
    """Index of the row the Spark engine reports for a file: its bad rows ranked as the
    in-memory reader meets them (the digit that starts the reason), then in file order."""
    bad = [(r[spark_io.BAD_COLUMN][0], i) for i, r in enumerate(rows) if r[spark_io.BAD_COLUMN]]
    return min(bad)[1] if bad else None


def reason(text: str) -> str:
    """A reason without what each reader adds in parentheses (a hint, the U+FFFD note)."""
    return text.split(" (")[0]


def test_spark_reads_every_file_as_in_memory(spark, corpus):
    """Every readable file through both readers, Spark's in one job per kind: the same rows,
    or the same first refused line (see the module docstring)."""
    files = [f for pair in corpus for f in (pair.qrels, pair.run) if not f.refused_by_name]
    folder = str(Path(files[0].path).parent.parent)
    spark_rows = {kind: spark_read(spark, f"{folder}/{kind}", kind) for kind in ("qrels", "run")}
    outcomes, mismatches = Counter(), []
    for f in files:
        rows = spark_rows[f.kind].get(f.name, [])
        memory = memory_read(f)
        if f.misread:
            outcomes["skipped: the in-memory reader misreads it"] += 1
            continue
        problem = _compare_read(f, memory, rows)
        outcomes["accepted" if not isinstance(memory, InputError) else "refused"] += 1
        if problem:
            mismatches.append(f"{f.name} {sorted(f.variations)}: {problem[:400]}")
    assert not mismatches, "\n".join(mismatches)
    assert outcomes["accepted"] > 100 and outcomes["refused"] > 50, outcomes


def _compare_read(f: TrecFile, memory, rows: list) -> str | None:
    """What differs between the in-memory reader's outcome and Spark's rows (None: nothing)."""
    value = "score" if f.kind == "run" else "relevance"
    at = first_problem(rows)
    if not isinstance(memory, InputError):
        expected, ranks = memory
        if at is not None:
            return f"in memory accepted; Spark refuses {rows[at][spark_io.BAD_COLUMN]!r}"
        got = [(r["query"], r["doc"], r[value]) for r in rows]
        if got != expected:
            diff = next((g, e) for g, e in zip(got + [None], expected + [None]) if g != e)
            return f"rows differ (Spark, in memory): {diff}"
        if f.kind == "run":
            spark_ranks = [r["rank"] for r in rows]
            if (ranks is None) != (None in spark_ranks) or ranks not in (None, spark_ranks):
                return f"rank column: in memory {ranks}, Spark {spark_ranks}"
        return None
    if memory.line is None:  # the whole file: empty, only comments (checked end to end)
        return None if not rows else f"in memory: {memory}; Spark reads {len(rows)} rows"
    if at is None:
        return f"in memory: {memory}; Spark accepts"
    spark_reason, _, spark_value = rows[at][spark_io.BAD_COLUMN][1:].partition("\x00")
    line = lines_spark_keeps(text_of(f.data))[at]
    differ = f"in memory: {memory}; Spark: line {line}: {spark_reason} ({spark_value!r})"
    if line != memory.line:
        return differ
    if reason(spark_reason) != reason(memory.reason):
        return differ
    if reason(memory.reason).startswith(("expected a number", "expected an integer",
                                         "score must be")) and spark_value != memory.value:
        return differ
    return None


# ---------------------------------------------------------------------------- 2. the engines


def memory_evaluate(pair: Pair, run_name: str | None = None):
    """The in-memory engine on a pair's files (the run named ``run_name``, else after its
    tag): the Result, or its InputError."""
    run = pair.run.path if run_name is None else {run_name: pair.run.path}
    try:
        return rankwise.evaluate(pair.qrels.path, run, MEASURES, per_query=True,
                                 **pair.conventions)
    except InputError as error:
        return error


def test_accepted_pairs_give_the_same_numbers(spark, corpus, tmp_path):
    """Pairs the in-memory engine accepts, grouped by conventions, each group in one Spark
    evaluation of a folder of its judgments and one of its runs (a pair's queries prefixed
    with its number): per-query values bit for bit, the means, the diagnostics counts summed
    over the pairs. The rank column is left out (Spark drops a system's for all its rows
    where it drops it for one file's; test_spark_reads_every_file_as_in_memory compares the
    ranks read, the pairs evaluated one by one the counts of ranks that contradict scores)."""
    groups: dict[int, list] = {}
    for pair in corpus:
        if pair.qrels.refused_by_name or pair.run.refused_by_name or \
                pair.qrels.misread or pair.run.misread:
            continue
        memory = memory_evaluate(pair, "run")
        if not isinstance(memory, InputError):
            groups.setdefault(pair.number % len(CONVENTIONS), []).append((pair, memory))
    assert sum(map(len, groups.values())) > 50
    for conventions, members in sorted(groups.items()):
        folder = tmp_path / str(conventions)
        for pair, _ in members:
            for f in (pair.qrels, pair.run):
                (folder / f.kind).mkdir(parents=True, exist_ok=True)
                os.link(f.path, folder / f.kind / f.name)
        _same_numbers(spark, folder, members, CONVENTIONS[conventions])


def _same_numbers(spark, folder: Path, members: list, conventions: dict) -> None:
    """One Spark evaluation of a group's files against the in-memory results of its pairs."""
    from pyspark.sql import functions as F

    import rankwise.spark as rs

    def prefixed(df):  # the pair's number, from its file's name
        number = F.regexp_extract(F.input_file_name(), r"p(\d+)-[a-z]+\.[a-z]+$", 1)
        return df.withColumn("query", F.concat(number.cast("int"), F.lit("/"), "query"))

    qrels = prefixed(spark_io.read_qrels(spark, str(folder / "qrels")))
    run = prefixed(spark_io.read_run(spark, str(folder / "run"), name="run")[0])
    result = rs.evaluate(run, qrels, MEASURES, per_query=True, rank=None, **conventions)
    try:
        collected = result.collect().systems["run"]
    finally:
        result.unpersist()
    values = {m: dict(zip(collected.query_ids, collected.values[m])) for m in MEASURES}
    for pair, memory in members:
        mine = memory.systems["run"]
        ids = [f"{pair.number}/{q}" for q in mine.query_ids]
        for m in MEASURES:
            got = np.array([values[m].get(q, -1.0) for q in ids])
            np.testing.assert_array_equal(got, mine.values[m], err_msg=f"{pair.number} {m}")
    assert len(collected.query_ids) == sum(len(m.systems["run"].query_ids) for _, m in members)
    for m in MEASURES:
        parsed = parse_measure(m)
        every = np.concatenate([memory.systems["run"].values[m] for _, memory in members])
        expected = aggregate(every, parsed.spec.aggregate,
                             parsed.skips_undefined(result.conventions))
        assert collected.aggregates[m] == pytest.approx(expected, rel=1e-12, nan_ok=True), m
    apart = {"examples", "queries_rank_contradicts_score"}
    counts: Counter = Counter()
    for _, memory in members:
        counts.update({k: v for k, v in memory.systems["run"].diagnostics.items()
                       if k not in apart})
    got = {k: v for k, v in collected.diagnostics.items() if k not in apart}
    assert got == {k: counts[k] for k in got} and set(counts) <= set(got)


# ---------------------------------------------------------------------------- 3. end to end


def test_pairs_one_by_one_through_the_command_line(spark, corpus):
    """Through the command line's Spark path, one pair at a time, one pair of each outcome
    (the in-memory engine refusing a file at a line, or whole for each reason, a misnamed gzip
    file, the pair accepted), the one with the most faults: the same file named, and the same
    line, or the same numbers, diagnostics and the run named after its first tag."""
    chosen: dict[tuple, tuple] = {}
    for pair in corpus:
        if pair.qrels.misread or pair.run.misread:
            continue
        memory = memory_evaluate(pair)
        outcome = _outcome(pair, memory)
        if outcome not in chosen or _faults(pair) > _faults(chosen[outcome][0]):
            chosen[outcome] = (pair, memory)
    assert len(chosen) > 10, sorted(chosen)
    mismatches = [f"pair {pair.number} {sorted(pair.qrels.variations)} "
                  f"{sorted(pair.run.variations)}: {problem[:400]}"
                  for pair, memory in chosen.values()
                  if (problem := _compare_end_to_end(pair, memory))]
    assert not mismatches, "\n".join(mismatches)


def _faults(pair: Pair) -> int:
    """How many problems a pair's files hold (a document twice in a run only where the
    conventions refuse it): of each outcome, the more the better a test of which problem the
    engine reports (the first, as the in-memory engine meets them)."""
    kept = {"doc-twice-in-run"} if "duplicates" in pair.conventions else set()
    return sum(len(f.variations & FAULTS_MADE - kept) for f in (pair.qrels, pair.run))


def _outcome(pair: Pair, memory) -> tuple:
    """What a pair tests end to end: a misnamed gzip file, the pair accepted, a line of
    either file refused (the first such line of each file is compared in
    test_spark_reads_every_file_as_in_memory), or else the file the in-memory engine refuses
    and the first words of why."""
    misnamed = misnamed_gzip(pair)
    if misnamed is not None:
        return ("misnamed", *sorted(misnamed.variations & MISNAMED))
    if not isinstance(memory, InputError):
        return ("accepted",)
    blamed = "qrels" if memory.source == pair.qrels.path else "run"
    if memory.line is not None and not _engine_error(memory):
        return (blamed, "line")
    if memory.reason.startswith(("empty file", f"no {blamed} lines")):
        return (blamed, "empty")
    return (blamed, *re.sub(r"'[^']*'", "", memory.reason).split()[:3])


def _engine_error(error: InputError) -> bool:
    """Whether the in-memory engine raised ``error`` after reading the files: a document
    judged twice or ranked twice, no query in common."""
    return error.reason.startswith(("document ", "no query in common"))


def misnamed_gzip(pair: Pair) -> TrecFile | None:
    """The first file of a pair (judgments first, as both engines read them) whose name
    says otherwise than its content about gzip."""
    return next((f for f in (pair.qrels, pair.run) if f.variations & MISNAMED), None)


def _compare_end_to_end(pair: Pair, memory) -> str | None:
    """What differs between the in-memory engine's outcome on a pair (``memory``: its Result
    or InputError) and the command line's Spark path (None: nothing)."""
    argv = ["evaluate", pair.qrels.path, pair.run.path, "-m", *MEASURES, "-q"]
    argv += [f"--{k.replace('_', '-')}={v}" for k, v in pair.conventions.items()]
    args = spark_args(argv)
    try:
        got = evaluate_from_args(args, cli._conventions(args))
    except InputError as error:
        got = error
    misnamed = misnamed_gzip(pair)
    if misnamed is not None and not _read_before(pair, memory, misnamed):
        # docs/spark.md, "Command line": Spark takes the compression from the file's name
        if not isinstance(got, InputError) or got.source != misnamed.path or \
                "gzip" not in got.reason:
            return f"{misnamed.name}: Spark gave {got!r}"
        return None
    if not isinstance(memory, InputError):
        return _same_result(memory, got)
    if not isinstance(got, InputError):
        return f"in memory: {memory}; Spark accepts"
    differ = f"in memory: {memory}; Spark: {got}"
    if got.source != memory.source:
        return differ
    if memory.line is None:  # the whole file (or run): named as in memory
        return None if got.line is None else differ
    if _engine_error(memory):  # a duplicate's row is counted within its query in Spark
        # (docs/spark.md, "Limits"): the same document and query, its position aside
        return None if reason(memory.reason) == reason(got.reason) else differ
    # a line: Spark quotes it (or its field) instead of numbering it (docs/spark.md, "Limits")
    blamed = pair.qrels if memory.source == pair.qrels.path else pair.run
    line = numbered_lines(text_of(blamed.data))[memory.line - 1]
    quoted = (got.value or "").replace("\ufffd", "")
    if got.line is not None or reason(got.reason) != reason(memory.reason) or \
            quoted not in line.decode("utf-8", "replace").replace("\ufffd", ""):
        return differ
    return None


def _read_before(pair: Pair, memory, misnamed: TrecFile) -> bool:
    """Whether the in-memory engine refuses the pair while reading a file read before
    ``misnamed`` (whose refusal by Spark then comes second)."""
    if not isinstance(memory, InputError) or _engine_error(memory):
        return False
    order = [pair.qrels.path, pair.run.path]
    return order.index(memory.source) < order.index(misnamed.path)


def _same_result(memory, got) -> str | None:
    if isinstance(got, InputError):
        return f"in memory accepted; Spark: {got}"
    (name,) = memory.systems
    if list(got.systems) != [name]:
        return f"run named {list(got.systems)} in Spark, {name!r} in memory"
    mine, theirs = memory.systems[name], got.systems[name]
    if mine.query_ids.tolist() != theirs.query_ids.tolist():
        return f"queries {theirs.query_ids.tolist()} in Spark, {mine.query_ids.tolist()}"
    for m in MEASURES:
        if not np.array_equal(mine.values[m], theirs.values[m], equal_nan=True):
            return f"{m} differs"
        a, b = mine.aggregates[m], theirs.aggregates[m]
        if not ((math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12)):
            return f"mean of {m}: {a} in memory, {b} in Spark"
    if mine.diagnostics != theirs.diagnostics:
        return f"diagnostics: {mine.diagnostics} in memory, {theirs.diagnostics} in Spark"
    return None
