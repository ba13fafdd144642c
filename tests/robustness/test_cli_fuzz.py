"""Seeded random command lines for every subcommand, built from the parser's own options (a new
option or command is fuzzed without a change here): valid values, edge values and values of
the wrong type, measures from the registry and mutations of them, valid and broken input
files. Whatever the line, the CLI exits 0 or 2; an error is one line ``rankwise: error: ...``
(a usage error: argparse's usage and one error line); no traceback, no exception out of
``main``, no numpy warning; what a command writes is there when it succeeds."""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import math
import random
import re
import traceback
import warnings
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rankwise.cli import _parser, main
from rankwise.compare import TESTS
from rankwise.conventions import PROFILES
from rankwise.stats.corrections import CORRECTIONS
from tests.robustness.fuzzing import OVERFLOWING, float64_overflow, measure_string, valid_measure

SEED = 20260612
#: Command lines per subcommand; a command not named here gets DEFAULT_CASES.
CASES = {"evaluate": 260, "compare": 120, "explain": 120, "profiles": 40, "measures": 15,
         "report": 40, "plot": 6, "demo": 4}
DEFAULT_CASES = 40
#: Every line of ``plot`` ends with these: all figures in all formats take seconds.
PLOT_COST_GUARD = ["--format", "svg", "--figures", "summary"]
#: Left out by design: ``--engine spark`` starts a JVM (tests/spark covers it), and a test
#: run 10^20 times takes as long as asked.
NOT_DRAWN = {"engine": {"spark"}}
COSTLY_WHEN_HUGE = {"permutations"}

HUGE = ["99999999999999999999", "2147483648", "1e308", "1e400"]
EDGE = ["0", "-1", "", "nan", "NaN", "inf", "-inf", "١٠", "é", "\u202e", " ", *HUGE]
WRONG_TYPE = ["abc", "1.5", "True", "0x10", "1=", "-", "--", "1,2", "{}"]
TYPED_CANDIDATES = ["1", "2", "3", "5", "10", "42", "0.05", "0.5", "0.9", "1.5", "2.0",
                    "linear", "exponential", "exp", "1=1,2=3", "0=0,1=2"]
COLUMNS = ["query", "doc", "score", "relevance", "user", "item", "rating", "prediction"]

QRELS = "".join(f"q{q} 0 d{d} {(q * d) % 4}\n" for q in range(1, 5) for d in range(1, 7))
RUN_A = "".join(f"q{q} Q0 d{d} {d} {10 - d} a\n" for q in range(1, 5) for d in range(1, 8))
RUN_B = "".join(f"q{q} Q0 d{8 - d} {d} {10 - d}.5 b\n" for q in range(1, 4) for d in range(1, 8))
BIG_SCORES = "q1 Q0 d1 1 1e200 big\nq1 Q0 d2 2 -1e200 big\nq2 Q0 d3 1 1e-300 big\n"


class Inputs:
    """The files a command line may name, written once into ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        folder = root / "in"
        (folder / "other").mkdir(parents=True)
        files = {"qrels.txt": QRELS, "run_a.txt": RUN_A, "run_b.txt": RUN_B,
                 "other/run_a.txt": RUN_B, "rün ü.txt": RUN_A, "big_scores.txt": BIG_SCORES,
                 "empty.txt": "", "fields.txt": "q1 Q0 d1 1\n", "score.txt": "q1 Q0 d1 1 high a\n",
                 "grade.txt": "q1 0 d1 0.5\n"}
        for name, text in files.items():
            (folder / name).write_text(text)
        (folder / "binary.bin").write_bytes(bytes(range(256)) * 4)
        (folder / "latin1.txt").write_bytes("q1 Q0 d\xe9 1 1.0 a\n".encode("latin-1"))
        (folder / "qrels.txt.gz").write_bytes(gzip.compress(QRELS.encode()))
        (folder / "truncated.gz").write_bytes(gzip.compress(RUN_A.encode())[:30])
        for prefix, names in (("", ("query", "doc", "relevance", "score")),
                              ("named-", ("user", "item", "rating", "prediction"))):
            query, doc, grade, score = names
            pq.write_table(pa.table({query: ["q1", "q1", "q2"], doc: ["d1", "d2", "d3"],
                                     grade: [2, 0, 1]}), folder / f"{prefix}qrels.parquet")
            pq.write_table(pa.table({query: ["q1", "q1", "q2"], doc: ["d2", "d1", "d3"],
                                     score: [0.9, 0.4, 0.1]}), folder / f"{prefix}run.parquet")
        read_only = root / "read-only"
        read_only.mkdir()
        read_only.chmod(0o500)
        (root / "a-file").write_text("not a folder\n")
        self.paths = {name: str(folder / name) for name in files}
        self.paths.update({name: str(folder / name) for name in
                           ("binary.bin", "latin1.txt", "qrels.txt.gz", "truncated.gz",
                            "qrels.parquet", "run.parquet", "named-qrels.parquet",
                            "named-run.parquet")})
        self.missing = str(folder / "missing.txt")
        self.folder = str(folder)
        self.outputs = 0

    def qrels(self, rng: random.Random) -> str:
        good = ["qrels.txt", "qrels.txt.gz", "qrels.parquet"]
        return self.paths[rng.choice(good)] if rng.random() < 0.75 else self.any(rng)

    def run(self, rng: random.Random) -> str:
        good = ["run_a.txt", "run_b.txt", "other/run_a.txt", "rün ü.txt", "big_scores.txt",
                "run.parquet"]
        return self.paths[rng.choice(good)] if rng.random() < 0.75 else self.any(rng)

    def any(self, rng: random.Random) -> str:
        return rng.choice(list(self.paths.values()) + [self.missing, self.folder, ""])

    def unwritable(self, name: str) -> list[str]:
        """Paths that cannot be written: under a read-only folder (writable all the same
        for root) and under a file."""
        return [str(self.root / "read-only" / name), str(self.root / "a-file" / name)]

    def output(self, rng: random.Random, default: str) -> str:
        """A new path of the kind the option's default is (a file with a suffix, else a
        folder), or an existing one, an unwritable one or an empty one."""
        self.outputs += 1
        name = f"out{self.outputs}{Path(default).suffix}"
        choices = [str(self.root / "out" / name)] * 4 + self.unwritable(name) + [
            self.paths["qrels.txt"], self.folder, ""]
        return rng.choice(choices)


def subcommands() -> dict[str, argparse.ArgumentParser]:
    """Every subcommand's parser, from the CLI's own parser."""
    parser = _parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _accepts(kind, text: str) -> bool:
    try:
        kind(text)
    except (ValueError, TypeError, argparse.ArgumentTypeError):
        return False
    return True


def valid_values(command: str, action: argparse.Action, inputs: Inputs,
                 rng: random.Random) -> list[str]:
    """Values the option is meant to take (by its name, choices or type)."""
    dest = action.dest
    by_name = {
        "qrels": lambda: [inputs.qrels(rng)],
        "runs": lambda: [inputs.run(rng)], "run": lambda: [inputs.run(rng)],
        "measures": lambda: [valid_measure(rng) if rng.random() < 0.85 else measure_string(rng)],
        "query": lambda: ["q1", "q2", "q3", "q4", "Q1", "zz"],
        "baseline": lambda: ["run_a.txt", "run_b.txt", inputs.paths["run_a.txt"], "nope"],
        "title": lambda: ["A title", "中文 ü", "<b>x</b>"],
        "test": lambda: list(TESTS), "correction": lambda: list(CORRECTIONS),
        "name": lambda: list(PROFILES),
        "output": lambda: [inputs.output(rng, str(action.default or ""))],
    }
    if dest in by_name:
        return by_name[dest]()
    if dest.endswith("_column"):  # mostly the default: the Parquet files hold both namings
        return [action.default] * len(COLUMNS) + COLUMNS
    if action.choices:
        return [c for c in action.choices if c not in NOT_DRAWN.get(dest, ())]
    if action.type is not None:
        return [v for v in TYPED_CANDIDATES if _accepts(action.type, v)] or TYPED_CANDIDATES
    return ["x", "local[1]", "key=value", "q1"]


def draw_value(command: str, action: argparse.Action, inputs: Inputs,
               rng: random.Random) -> str:
    """A valid value (75%; of a positional or a list: 90%), an edge value or one of the wrong
    type."""
    several = not action.option_strings or action.nargs in ("+", "*")
    roll = rng.random() - (0.15 if several else 0.0)
    if roll < 0.75 or action.dest in NOT_DRAWN:
        return rng.choice(valid_values(command, action, inputs, rng))
    if roll < 0.9:
        pool = EDGE + [inputs.missing, inputs.folder, *inputs.unwritable("x")]
        if action.dest in COSTLY_WHEN_HUGE:
            pool = [v for v in pool if v not in HUGE]
        return rng.choice(pool)
    return rng.choice(WRONG_TYPE)


def _count(nargs, rng: random.Random) -> int:
    if nargs is None:
        return 1
    if isinstance(nargs, int):
        return nargs
    return {"?": rng.randint(0, 1), "+": rng.randint(1, 3), "*": rng.randint(0, 3)}[nargs]


def command_line(name: str, parser: argparse.ArgumentParser, inputs: Inputs,
                 rng: random.Random) -> list[str]:
    """A random command line for the subcommand ``name``."""
    actions = [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]
    positional = [a for a in actions if not a.option_strings]
    optional = [a for a in actions if a.option_strings]
    words = []
    for action in positional:  # two or more runs mostly: compare and report compare them
        count = _count(action.nargs, rng) if action.nargs != "+" else rng.choice([1, 2, 2, 3])
        words += [draw_value(name, action, inputs, rng) for _ in range(count)]
    chosen = [a for a in optional if a.required and rng.random() < 0.95]
    rest = [a for a in optional if not a.required]
    chosen += rng.sample(rest, min(len(rest), rng.randint(0, 3)))
    options = []
    for action in chosen:
        flag = rng.choice(action.option_strings)
        values = [draw_value(name, action, inputs, rng) for _ in range(_count(action.nargs, rng))]
        if flag.startswith("--") and len(values) == 1 and rng.random() < 0.2:
            options.append([f"{flag}={values[0]}"])
        else:
            options.append([flag] + values)
    rng.shuffle(options)
    flat = [word for option in options for word in option]
    line = flat + words if rng.random() < 0.1 else words + flat
    if rng.random() < (0.05 if actions else 0.5):
        line = _mutate(line, rng)
    if rng.random() < 0.01:
        line.insert(rng.randint(0, len(line)), rng.choice(["-h", "--help"]))
    if name == "plot":
        line += PLOT_COST_GUARD
    return [name] + line


def _mutate(words: list[str], rng: random.Random) -> list[str]:
    words = list(words)
    i = rng.randint(0, len(words))
    kind = rng.randrange(4) if words else 2  # a line without words can only gain one
    if kind == 0 and words:
        del words[min(i, len(words) - 1)]
    elif kind == 1 and words:
        words.insert(i, words[min(i, len(words) - 1)])
    elif kind == 2:
        words.insert(i, rng.choice(["--bogus", "-x", "--", "-", "--bogus=1"]))
    elif words:
        rng.shuffle(words)
    return words


def _non_finite(text: str) -> bool:
    """Whether ``text`` is a number that is not finite, or a grade=gain map holding one."""
    parts = re.split(r"[=,]", text) if "=" in text else [text]
    for part in parts:
        try:
            if not math.isfinite(float(part)):
                return True
        except ValueError:
            pass
    return False


def typed_values(line: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """The values the line gives to options with a type (numbers, gain maps)."""
    typed = {s for a in parser._actions if a.option_strings and a.type is not None
             for s in a.option_strings}
    out = []
    for i, word in enumerate(line):
        flag, sep, value = word.partition("=")
        if sep and flag in typed:
            out.append(value)
        elif word in typed and i + 1 < len(line):
            out.append(line[i + 1])
    return out


def outputs_asked(line: list[str], parser: argparse.ArgumentParser) -> list[tuple[str, bool]]:
    """The paths the line asks to be written, each with whether it is a folder."""
    out = []
    for action in parser._actions:
        if action.dest == "output":
            value = action.default
            for i, word in enumerate(line):
                flag, sep, given = word.partition("=")
                if sep and flag in action.option_strings:
                    value = given
                elif word in action.option_strings and i + 1 < len(line):
                    value = line[i + 1]
            out.append((value, not Path(str(action.default)).suffix))
    return out


def holds_huge_numbers(line: list[str]) -> bool:
    """Whether the line names numbers that overflow float64 in a measure's arithmetic (in a
    measure's parameters, or the scores of BIG_SCORES)."""
    numbers = [float(n) for word in line for n in re.findall(r"\d+(?:\.\d*)?(?:e[-+]?\d+)?", word)]
    return any(abs(n) > OVERFLOWING for n in numbers) or any("big_scores" in w for w in line)


def run_line(line: list[str]) -> tuple[object, str, str, list[str]]:
    """Run the CLI in this process: (status, stdout, stderr, problems)."""
    out, err, problems = io.StringIO(), io.StringIO(), []
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            status: object = main(line)
        except SystemExit as exc:
            status = ("exit", exc.code)
        except Exception as exc:  # noqa: BLE001 - what the test is for
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            problems.append(f"{type(exc).__name__} escaped main: {exc} "
                            f"(at {frame.filename}:{frame.lineno})")
            status = None
    huge = holds_huge_numbers(line)
    problems += [f"{w.category.__name__}: {w.message} (at {w.filename}:{w.lineno})"
                 for w in caught if issubclass(w.category, RuntimeWarning)
                 and not (huge and float64_overflow(str(w.message)))]
    return status, out.getvalue(), err.getvalue(), problems


def check(line: list[str], parser: argparse.ArgumentParser) -> tuple[str, list[str]]:
    """Run one line: its outcome (ok, error, usage, help, crash) and what is wrong."""
    status, out, err, problems = run_line(line)
    if "Traceback (most recent call last)" in out + err:
        problems.append("a traceback was printed")
    lines = err.splitlines()
    if status == 0:
        outcome = "ok"
        if not out:
            problems.append("success, but nothing on stdout")
        for path, folder in outputs_asked(line, parser):
            written = Path(path).is_dir() and any(Path(path).iterdir()) if folder \
                else Path(path).is_file()
            if not written:
                problems.append(f"success, but {path!r} was not written")
        bad = [v for v in typed_values(line, parser) if _non_finite(v)]
        if bad:
            problems.append(f"a value that is not a finite number was accepted: {bad[0]!r}")
    elif status == 2:
        outcome = "error"
        if len(lines) != 1 or not lines[0].startswith("rankwise: error: "):
            problems.append(f"expected one line 'rankwise: error: ...' on stderr, got {err!r}")
    elif status == ("exit", 2):
        outcome = "usage"
        errors = [x for x in lines if ": error: " in x]
        if not err.startswith("usage: ") or len(errors) != 1 or errors[0] != lines[-1] \
                or not lines[-1].startswith("rankwise"):
            problems.append(f"expected usage and one error line on stderr, got {err!r}")
    elif status == ("exit", 0) and {"-h", "--help"} & set(line) and out.startswith("usage: "):
        outcome = "help"
    else:
        outcome = "crash"
        problems.append(f"exit status {status!r}")
    return outcome, problems


@pytest.mark.slow
def test_random_command_lines_exit_cleanly(tmp_path, monkeypatch):
    inputs = Inputs(tmp_path)
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")  # where outputs left at their defaults are written
    parsers = subcommands()
    outcomes: Counter = Counter()
    problems: list[str] = []
    for name, parser in parsers.items():
        # a generator per command: a new option of one command changes no other's lines
        rng = random.Random(f"{SEED}/{name}")
        for _ in range(CASES.get(name, DEFAULT_CASES)):
            line = command_line(name, parser, inputs, rng)
            outcome, found = check(line, parser)
            outcomes[name, outcome] += 1
            problems += [f"{line!r}: {p}" for p in found]
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:30])
    # not vacuous: every command succeeds and fails, and many lines do each
    for name in parsers:
        assert outcomes[name, "ok"] and outcomes[name, "error"] + outcomes[name, "usage"], \
            (name, outcomes)
    total = sum(outcomes.values())
    for outcome in ("ok", "error", "usage"):
        assert sum(n for (_, o), n in outcomes.items() if o == outcome) > total / 8, outcomes
