"""The ``rankwise`` command line: ``evaluate``, ``compare``, ``measures``, ``profiles`` and
``demo`` here; ``report``, ``plot`` and ``explain`` from the modules of ``COMMAND_MODULES``.

Exit status 0 on success, 2 on bad input, a usage error or output that cannot be written
(one line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import importlib
import math
import re
import sys
from typing import Sequence

from .errors import InputError

FORMATS = ("table", "json", "csv", "markdown", "latex", "trec")
#: the judgments formats of preferences (-R): rankwise.preferences
PREFERENCE_FORMATS = ("prefs", "qrels_prefs")
COMPARE_FORMATS = ("table", "json", "csv", "markdown", "latex")
#: Modules that add commands: each has ``register(commands)`` taking argparse's sub-parsers and
#: imports nothing heavy at module level (the parser is built on every call).
COMMAND_MODULES: tuple[str, ...] = (
    "rankwise.report.commands",
)


def command() -> int:
    """The ``rankwise`` command: :func:`main` in a process of its own, whose allocator it
    may set (see :func:`rankwise.core.memory.one_malloc_arena`)."""
    from .core.memory import one_malloc_arena

    one_malloc_arena()
    return main()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    parser = _parser()
    argv = _attach_values_with_minus(parser, sys.argv[1:] if argv is None else list(argv))
    args = parser.parse_args(_inputs_after_values(parser, argv))
    _refuse_options_left_empty(parser, args)
    _refuse_conflicting_options(_commands(parser).choices[args.command], args)
    try:
        status = args.handler(args)
        sys.stdout.flush()  # a full disk is said here, not as a traceback at the exit
        return status
    except InputError as exc:
        print(f"rankwise: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # writing the output: reading an input raises an InputError
        print(f"rankwise: error: {exc.filename or 'standard output'}: cannot write "
              f"({exc.strerror or exc})", file=sys.stderr)
        return 2


_STARTS_LIKE_A_NUMBER = re.compile(r"-[0-9.]")


def _attach_values_with_minus(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``--gain -1=5`` as ``--gain=-1=5``: argparse takes a value beginning with a minus for
    an option unless it is a plain number (``-1``, ``-0.5``: not ``-1e3`` nor ``-1=5``). A
    token beginning with a minus and a digit or a point, after an option taking one value,
    is that option's value (no option of the command begins so)."""
    one_value = {option for command in _commands(parser).choices.values()
                 for action in command._actions if action.nargs is None
                 for option in action.option_strings}
    out: list[str] = []
    for i, token in enumerate(argv):
        if token == "--":
            return out + argv[i:]
        if out and out[-1] in one_value and _STARTS_LIKE_A_NUMBER.match(token):
            out[-1] += "=" + token
        else:
            out.append(token)
    return out


def _inputs_after_values(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """trec_eval's order, ``-m all_trec qrels run``: an option of several values (``-m``,
    ``plot --format``) takes every word up to the next option, so the files after it were
    its values and the command stopped for want of its files. Where the command's files are
    missing so, the words that end such an option's values and are none of its values (no
    measure name, none of its choices) are the files: they go after a ``--``, in their
    order. Otherwise, or where a word is not understood here, the words stay as given."""
    commands = _commands(parser).choices
    start = next((i for i, word in enumerate(argv) if not word.startswith("-")), None)
    if start is None or argv[start] not in commands or "--" in argv:
        return argv
    command = commands[argv[start]]
    items = _command_items(command, argv[start + 1:])
    if items is None or _count_files(items) >= _files_needed(command):
        return argv
    profile = next((words[-1] if len(words) > 1 else words[0].partition("=")[2]
                    for action, words in items
                    if action is not None and action.dest == "profile"), None)
    split = [part for item in items for part in _split_off_files(item, profile)]
    if _count_files(split) < _files_needed(command):
        return argv
    options = [word for action, words in split if action is not None for word in words]
    files = [word for action, words in split if action is None for word in words]
    return [*argv[:start + 1], *options, "--", *files]


#: One item of a command line: an option and the words it took (the option's own word
#: first), or ``None`` and one file.
_Item = tuple[argparse.Action | None, list[str]]


def _command_items(command: argparse.ArgumentParser, words: list[str]) -> list[_Item] | None:
    """The words of a command line as argparse reads them, option by option (``None`` for a
    word not understood here: an abbreviated or unknown option)."""
    items: list[_Item] = []
    i = 0
    while i < len(words):
        word = words[i]
        if not _is_option_word(command, word):
            items.append((None, [word]))
            i += 1
            continue
        found = _option_of(command, word)
        if found is None:
            return None
        action, attached = found
        taken = 0 if attached else _values_taken(command, action, words[i + 1:])
        items.append((action, words[i:i + 1 + taken]))
        i += 1 + taken
    return items


def _is_option_word(command: argparse.ArgumentParser, word: str) -> bool:
    """Whether argparse reads ``word`` as an option (``-1`` and ``-`` are values)."""
    if not word.startswith("-") or word == "-":
        return False
    return not (command._negative_number_matcher.match(word)
                and not command._has_negative_number_optionals)


def _option_of(command: argparse.ArgumentParser,
               word: str) -> tuple[argparse.Action, bool] | None:
    """The option a word gives and whether its value is in the word (``--measure=map``,
    ``-mmap``, ``-qM10``): the last of flags written together (``-qc``)."""
    options = command._option_string_actions
    if word.startswith("--"):
        name, equals, _ = word.partition("=")
        return (options[name], bool(equals)) if name in options else None
    for at in range(1, len(word)):
        action = options.get("-" + word[at])
        if action is None:
            return None
        if action.nargs != 0:
            return action, at + 1 < len(word)
    return action, False


def _values_taken(command: argparse.ArgumentParser, action: argparse.Action,
                  after: list[str]) -> int:
    """How many of the words ``after`` an option whose value is not in its own word takes."""
    values = 0
    while values < len(after) and not _is_option_word(command, after[values]):
        values += 1
    if action.nargs in ("+", "*"):
        return values
    wanted = {None: 1, "?": 1}.get(action.nargs, action.nargs)
    return min(wanted, values)


def _split_off_files(item: _Item, profile: str | None) -> list[_Item]:
    """An option of several values without the words that end them and are none of its
    values (always leaving it one), those words as files."""
    action, words = item
    if action is None or action.nargs != "+" or len(words) < 3:
        return [item]
    end = len(words)
    while end > 2 and not _is_value_of(action, words[end - 1], profile):
        end -= 1
    return [(action, words[:end]), *((None, [word]) for word in words[end:])]


def _is_value_of(action: argparse.Action, word: str, profile: str | None) -> bool:
    """Whether ``word`` can be a value of the option: one of its choices, a measure name
    (in the profile's names too) for ``-m``; any word for other options."""
    if action.choices is not None:
        return word in action.choices
    if action.dest != "measures":
        return True
    from .conventions import PROFILES
    from .measures.parse import parse_measures
    from .preferences import is_preference_measure

    if is_preference_measure(word):
        return True

    try:
        parse_measures([word], conventions=profile if profile in PROFILES else None)
    except InputError:
        return False
    return True


def _count_files(items: list[_Item]) -> int:
    return sum(1 for action, _ in items if action is None)


def _files_needed(command: argparse.ArgumentParser) -> int:
    """The fewest positional words the command takes (a qrels file and one run)."""
    needed = {None: 1, "+": 1, "?": 0, "*": 0}
    return sum(needed[a.nargs] if a.nargs in needed else a.nargs
               for a in command._actions if not a.option_strings)


def _commands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return commands


def _refuse_options_left_empty(parser: argparse.ArgumentParser,
                               args: argparse.Namespace) -> None:
    """A usage error for ``--option=--``: argparse before Python 3.13 drops the ``--`` and
    leaves the option an empty list, past its type and choices (3.13 reads the value ``--``)."""
    command = _commands(parser).choices[args.command]
    for action in command._actions:
        value = getattr(args, action.dest, None)
        given = value or () if isinstance(action, argparse._AppendAction) else [value]
        if action.option_strings and action.nargs is None and [] in given:
            command.error(f"argument {'/'.join(action.option_strings)}: expected one argument")


#: trec_eval's flags and the convention each sets: given with that convention's option set
#: otherwise, the command line contradicts itself.
_FLAG_CONVENTIONS = {"complete": ("missing_queries", "zero"),
                     "judged_only": ("unjudged", "remove")}


def _refuse_conflicting_options(command: argparse.ArgumentParser,
                                args: argparse.Namespace) -> None:
    """A usage error for options that contradict each other (``-c --missing-queries
    ignore``, ``--stream --engine spark``) or would be ignored (a ``--spark-...`` option
    without ``--engine spark``): one of them was left without a word."""
    options = {action.dest: "/".join(action.option_strings) for action in command._actions}
    for flag, (field, value) in _FLAG_CONVENTIONS.items():
        if getattr(args, flag, False) and getattr(args, field) not in (None, value):
            command.error(f"argument {options[flag]}: sets {options[field]} {value}, not "
                          f"{getattr(args, field)}")
    if getattr(args, "zscores_missing", None) is not None and args.zscores is None:
        command.error("argument --zscores-missing: only with -Z/--zscores FILE")
    if not hasattr(args, "engine"):
        return
    judgments = getattr(args, "judgments_format", "qrels")
    if judgments != "qrels":
        other = "--engine spark" if args.engine == "spark" else "--stream" if args.stream \
            else "Parquet column names" if column_names(args) != DEFAULT_COLUMNS else None
        what = "judgment groups are" if judgments == "qrels_jg" else "preferences are"
        if other:
            command.error(f"argument -R/--judgments-format {judgments}: not with {other} "
                          f"({what} read from TREC text)")
        if judgments in PREFERENCE_FORMATS and args.zscores is not None:
            command.error(f"argument -Z/--zscores: not with -R {judgments} (z-scores of the "
                          "preference measures are not computed)")
    if args.engine == "spark" and args.stream:
        command.error("argument --stream: not with --engine spark (Spark reads the inputs in "
                      "partitions of its own)")
    spark_only = [options[dest] for dest in options if dest.startswith("spark_")
                  and getattr(args, dest) != command.get_default(dest)]
    if args.engine != "spark" and spark_only:
        command.error(f"argument {spark_only[0]}: only with --engine spark")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rankwise", description="Evaluate rankings against "
                                     "relevance judgments, with trec_eval semantics by default.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ev = commands.add_parser("evaluate", help="evaluate runs against judgments",
                             description="Evaluate one or more TREC runs against TREC qrels.")
    ev.add_argument("qrels", help="judgments file (qid iter docid rel), plain or .gz, or "
                    "Parquet (*.parquet, columns query, doc, relevance); with -R prefs, "
                    "preferences (qid jg jsg docid rel_level)")
    ev.add_argument("runs", nargs="+", metavar="RUN", help="run file(s) (qid Q0 docid rank "
                    "score tag), or Parquet (columns query, doc, score, optionally rank)")
    ev.add_argument("-m", "--measure", dest="measures", nargs="+", action="extend",
                    metavar="MEASURE", help="measures in any dialect (nDCG@10, ndcg_cut_10, "
                    "ndcg@10, official, all_trec); default: official. The files may follow, "
                    "as in trec_eval's -m all_trec qrels run")
    ev.add_argument("-q", "--per-query", action="store_true", help="also print per-query values")
    ev.add_argument("-f", "--format", choices=FORMATS, default="table", help="output format")
    ev.add_argument("--diagnostics", action="store_true", help="print every count and every "
                    "diagnostic check on stderr")
    ev.add_argument("-Z", "--zscores", metavar="FILE", help="print z-scores against the means "
                    "and deviations of FILE (lines 'qid measure mean stddev'; trec_eval -Z)")
    ev.add_argument("-R", "--judgments-format", choices=("qrels", "qrels_jg",
                                                          *PREFERENCE_FORMATS),
                    default="qrels",
                    help="qrels_jg: the qrels' second field names a judgment group, and each "
                    "query's value is the mean over the groups judging it (trec_eval -R "
                    "qrels_jg; default measures then -m qrels_jg). prefs: the judgments are "
                    "preferences, lines 'qid jg jsg docid rel_level'; qrels_prefs: the qrels "
                    "read as preferences of each grade over the lower ones (trec_eval -R prefs, "
                    "-R qrels_prefs; default measures then -m all_prefs)")
    ev.add_argument("--zscores-missing", choices=("trec_eval", "undefined"), default=None,
                    help="a value FILE has no mean and deviation for: -1000000 as trec_eval "
                    "(default), or left out of the means")
    ev.add_argument("--stream", action="store_true", help="read each run chunk by chunk of "
                    "whole queries, in bounded memory (runs grouped by query, as TREC runs are; "
                    "without it, a run file too large for one pass in memory is streamed too)")
    from .spark.commands import add_engine_options

    add_engine_options(ev)
    _add_column_options(ev)
    _add_convention_options(ev)
    ev.set_defaults(handler=_evaluate)

    co = commands.add_parser("compare", help="compare runs with significance tests",
                             description="Compare two or more TREC runs on the same judgments: "
                             "means with confidence intervals, paired or many-system "
                             "significance tests, multiple-testing correction, effect sizes.")
    co.add_argument("qrels", help="judgments file (qid iter docid rel), plain or .gz, or "
                    "Parquet (columns query, doc, relevance)")
    co.add_argument("runs", nargs="+", metavar="RUN", help="two or more run files (TREC text "
                    "or Parquet)")
    co.add_argument("-m", "--measure", dest="measures", nargs="+", action="extend",
                    metavar="MEASURE", help="measures in any dialect; default: nDCG@10 AP")
    co.add_argument("--baseline", metavar="NAME", help="compare each run with this one (its "
                    "file name, or its path); default: every pair")
    co.add_argument("--test", default="randomization", metavar="TEST", help="t, wilcoxon, sign, "
                    "randomization (default), bootstrap, tukey, randomized-tukey")
    co.add_argument("--correction", default="holm", metavar="METHOD",
                    help="holm (default), bonferroni, bh or none")
    co.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    co.add_argument("--seed", type=seed_argument, default=0, help="random seed (default 0)")
    co.add_argument("--permutations", type=_positive_int, default=10_000, metavar="N",
                    help="random permutations or bootstrap resamples per test (default 10000)")
    co.add_argument("--confidence", type=float, default=0.95,
                    help="level of the confidence intervals (default 0.95)")
    co.add_argument("-f", "--format", choices=COMPARE_FORMATS, default="table",
                    help="output format")
    _add_column_options(co)
    _add_convention_options(co)
    co.set_defaults(handler=_compare)

    me = commands.add_parser("measures", help="list every measure with a one-line definition")
    me.set_defaults(handler=_measures)

    pr = commands.add_parser("profiles", help="list the convention profiles and how they differ",
                             description="The named profiles: the conventions of each peer "
                             "library, shown where they differ from trec_eval's.")
    pr.add_argument("name", nargs="?", help="show one profile in full")
    pr.set_defaults(handler=_profiles)

    demo = commands.add_parser("demo", help="evaluate built-in example runs and write a report")
    demo.add_argument("-o", "--output", default="rankwise-demo", help="folder for the report "
                      "and the example data (default: rankwise-demo)")
    demo.set_defaults(handler=_demo)
    for module in COMMAND_MODULES:
        importlib.import_module(module).register(commands)
    return parser


#: The column names of Parquet inputs unless the command line names others.
DEFAULT_COLUMNS = {"query": "query", "doc": "doc", "score": "score", "relevance": "relevance"}


def _add_column_options(command: argparse.ArgumentParser) -> None:
    """``--query-column`` and its kin: the column names of Parquet inputs."""
    group = command.add_argument_group(
        "Parquet columns", "the column names of Parquet judgments and runs, where they are not "
        "query, doc, score and relevance (e.g. recommender output's user, item); TREC text has "
        "no names")
    for key, default in DEFAULT_COLUMNS.items():
        group.add_argument(f"--{key}-column", default=default, metavar="NAME",
                           help=f"default: {default}")


#: The roles of a run's columns, and of the judgments'.
RUN_COLUMNS = ("query", "doc", "score")
QRELS_COLUMNS = ("query", "doc", "relevance")


def column_names(args: argparse.Namespace,
                 roles: Sequence[str] = tuple(DEFAULT_COLUMNS)) -> dict[str, str]:
    """The Parquet column names the command line gives, by role (``query``, ``doc``,
    ``score``, ``relevance``, or those of ``roles``)."""
    return {key: getattr(args, f"{key}_column", DEFAULT_COLUMNS[key]) for key in roles}


def _named_qrels(args: argparse.Namespace):
    """The judgments' path, or the judgments read with the column names the command line
    gives where they are Parquet with other names."""
    from .io import to_qrels
    from .io.parquet import is_parquet_path

    if column_names(args) == DEFAULT_COLUMNS or not is_parquet_path(args.qrels):
        return args.qrels
    return to_qrels(args.qrels, **column_names(args, QRELS_COLUMNS))


def _named_inputs(args: argparse.Namespace, runs: dict[str, str] | list[str]):
    """The judgments and runs for ``compare``, ``report``, ``plot`` and ``explain``: paths as
    given, except Parquet paths whose columns the command line names otherwise, read here
    with those names (those commands hold every run anyway; ``evaluate`` passes the names
    on instead, so that its runs are still read one at a time, or streamed)."""
    from .io import to_run
    from .io.parquet import is_parquet_path

    if column_names(args) == DEFAULT_COLUMNS:
        return args.qrels, runs
    qrels = _named_qrels(args)

    def run(path: str, label: str | None):
        return to_run(path, label, **column_names(args, RUN_COLUMNS)) \
            if is_parquet_path(path) else path

    if isinstance(runs, dict):
        return qrels, {label: run(path, label) for label, path in runs.items()}
    return qrels, [run(path, None) for path in runs]


def _add_convention_options(command: argparse.ArgumentParser) -> None:
    """The convention flags shared by every command that evaluates: a profile, trec_eval's
    short flags, and one long flag per field of :class:`~rankwise.Conventions`."""
    from .conventions import CHOICES, PROFILES

    group = command.add_argument_group(
        "conventions", "every choice that changes a number (default: trec_eval 10's); a flag "
        "overrides the profile")
    group.add_argument("--profile", choices=tuple(PROFILES), help="conventions of a peer "
                       "library (see 'rankwise profiles'); default trec_eval")
    threshold = group.add_mutually_exclusive_group()  # two spellings of one setting
    threshold.add_argument("-l", dest="relevance_threshold", type=_whole_grade,
                           metavar="GRADE", help="grade at or above which a document is "
                           "relevant, an integer (trec_eval -l; default 1)")
    threshold.add_argument("--relevance-threshold", type=float, metavar="GRADE",
                           help="the same threshold, a fraction too (for fractional grades)")
    group.add_argument("-c", "--complete", action="store_true", help="queries judged but "
                       "missing from a run count as 0 (trec_eval -c; --missing-queries zero)")
    group.add_argument("-M", "--depth", type=_positive_int, metavar="N",
                       help="evaluate only the first N documents of each ranking (trec_eval -M)")
    group.add_argument("-J", "--judged-only", action="store_true", help="remove unjudged "
                       "documents before evaluating (trec_eval -J; --unjudged remove)")
    group.add_argument("--gain", metavar="GAIN", type=_gain, help="gain of a grade in DCG "
                       "measures: linear (default), exponential (2^g - 1) or a map like 1=1,2=3")
    group.add_argument("--discount-base", type=float, metavar="B",
                       help="DCG discount 1/log_B(rank + 1) (default 2)")
    for name, choices in CHOICES.items():
        group.add_argument("--" + name.replace("_", "-"), choices=choices, dest=name,
                           help=f"{_CONVENTION_HELP[name]} (default {choices[0]})")


_CONVENTION_HELP = {
    "ties": "order of tied scores, or their expected value / best / worst case",
    "missing_queries": "judged queries absent from a run",
    "run_only_queries": "queries in a run without any judgment",
    "discount": "DCG discount 1/log_b(r+1), or Jarvelin's 1/max(1, log_b r)",
    "unjudged": "retrieved documents without a judgment",
    "duplicates": "a document twice for one query in a run",
    "ap_denominator": "AP divides by R, min(R,K), K or the relevant retrieved",
    "short_lists": "P@K on a list shorter than K divides by K or by its length",
    "recall_denominator": "R@K divides by R or min(R,K)",
    "no_relevant": "binary measures on a query without relevant documents",
    "ideal": "R and the ideal ranking from all judgments or the retrieved list only",
    "idcg_zero": "nDCG when the ideal DCG is 0",
    "score_precision": "compare scores as float64 or float32",
    "nonpositive_scores": "documents scored <= 0 are ranked, or never relevant",
    "recall_levels": "interpolated precision's recall-level rounding (trec_eval 10 or 9)",
}


def _conventions(args: argparse.Namespace):
    """The Conventions the profile and flags ask for."""
    from .conventions import resolve

    return resolve(args.profile, **_convention_flags(args))


def _convention_flags(args: argparse.Namespace) -> dict:
    """The conventions the flags set, by field (None: not given)."""
    from .conventions import CHOICES

    flags = {name: getattr(args, name) for name in CHOICES}
    if args.complete:
        flags["missing_queries"] = "zero"
    if args.judged_only:
        flags["unjudged"] = "remove"
    return dict(relevance_threshold=args.relevance_threshold, max_depth=args.depth,
                gain=args.gain, discount_base=args.discount_base, **flags)


def _measure_names(args: argparse.Namespace, default: list[str]) -> list[str]:
    """The measures asked for (a profile also accepts its peer's names for them)."""
    from .conventions import profile

    names = args.measures or default
    return profile(args.profile).measure_names(names) if args.profile else names


def _gain(text: str):
    if text in ("linear", "exponential", "exp"):
        return text
    gains: dict[float, float] = {}
    try:
        for grade, gain in (item.split("=") for item in text.split(",")):
            if float(grade) in gains:
                raise argparse.ArgumentTypeError(f"grade {grade} given twice, in {text!r}")
            gains[float(grade)] = float(gain)
    except ValueError:
        raise argparse.ArgumentTypeError("expected linear, exponential or grade=gain pairs "
                                         f"like 1=1,2=3, got {text!r}") from None
    return gains


def seed_argument(text: str) -> int:
    """An argparse type: a random seed, a non-negative integer (numpy refuses others)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return value


def _whole_grade(text: str) -> int:
    """trec_eval's ``-l``: an integer grade (``2``, ``2.0``, ``-1e0``), as an integer, so that
    the conventions print as ``relevance_threshold=2`` does in Python. trec_eval reads the
    flag with ``atol``, so ``-l 1.5`` means 1 there: a fraction is refused rather than read
    otherwise (``--relevance-threshold`` takes one)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value.is_integer():
        raise argparse.ArgumentTypeError(
            f"expected an integer grade, got {text!r} (trec_eval reads -l 1.5 as 1; "
            "--relevance-threshold takes a fraction)")
    return int(value)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _evaluate(args: argparse.Namespace) -> int:
    from .api import evaluate
    conventions = _conventions(args)
    per_query = args.per_query or args.zscores is not None  # z-scores are made per query
    if args.engine == "spark":
        from .spark.commands import evaluate_from_args

        result = evaluate_from_args(argparse.Namespace(**{**vars(args), "per_query": per_query}),
                                    conventions)
    elif args.judgments_format in PREFERENCE_FORMATS:
        from .preferences import evaluate_preferences

        runs = args.runs if len(args.runs) == 1 else run_labels(args.runs)
        # the profile and the flags given: ties by doc id ascending unless --ties is given
        result = evaluate_preferences(
            args.qrels, runs if isinstance(runs, dict) else runs[0],
            _measure_names(args, ["all_prefs"]), args.judgments_format, args.profile,
            per_query=per_query, **_convention_flags(args))
    elif args.judgments_format == "qrels_jg":
        from .judgment_groups import evaluate_judgment_groups

        runs = args.runs if len(args.runs) == 1 else run_labels(args.runs)
        result = evaluate_judgment_groups(
            args.qrels, runs if isinstance(runs, dict) else runs[0],
            _measure_names(args, ["qrels_jg"]), conventions, per_query=per_query)
    else:
        runs = args.runs if len(args.runs) == 1 else run_labels(args.runs)
        if args.stream:  # every run read chunk by chunk (else only one too large for memory)
            from .stream import evaluate_stream as evaluate
        # the runs stay paths, read one at a time, their Parquet columns named as given
        result = evaluate(_named_qrels(args), runs, _measure_names(args, ["official"]),
                          conventions, per_query=per_query,
                          **column_names(args, RUN_COLUMNS))
    if args.zscores is not None:
        from .zscores import standardize

        result = standardize(result, args.zscores, args.zscores_missing or "trec_eval")
    sys.stdout.write(render(result, args.format, args.per_query))
    report_diagnostics(result, args.diagnostics)
    if "all_trec" in (args.measures or ()):
        from .measures.parse import ALL_TREC_NOT_COMPUTED

        print("rankwise: note: all_trec: trec_eval's " + ", ".join(ALL_TREC_NOT_COMPUTED) +
              " are not computed", file=sys.stderr)
    return 0


def report_diagnostics(result, full: bool) -> None:
    """On stderr: one summary line and the warnings per system; every count and check when
    ``full`` (``--diagnostics``)."""
    from .diagnostics import details, summary_line

    for name, system in result.systems.items():
        print(f"rankwise: {name}: {summary_line(system, hint=not full)}", file=sys.stderr)
        for warning in system.warnings:
            print(f"rankwise: warning: {name}: {warning}", file=sys.stderr)
    if full:
        sys.stderr.write(details(result))


def _compare(args: argparse.Namespace) -> int:
    from .compare import compare

    labels, baseline = _labelled_runs(args, "compare")
    qrels, runs = _named_inputs(args, labels)
    comparison = compare(qrels, runs, _measure_names(args, ["nDCG@10", "AP"]), baseline,
                         args.test, args.correction, args.alpha, args.seed,
                         permutations=args.permutations, confidence=args.confidence,
                         conventions=_conventions(args))
    writers = {"table": comparison.to_table, "markdown": comparison.to_markdown,
               "latex": comparison.to_latex, "csv": comparison.to_csv,
               "json": lambda: comparison.to_json(indent=2) + "\n"}
    sys.stdout.write(writers[args.format]())
    for warning in comparison.warnings:
        if args.format != "table":
            print(f"rankwise: warning: {warning}", file=sys.stderr)
    return 0


def _labelled_runs(args: argparse.Namespace, command: str) -> tuple[dict[str, str], str | None]:
    """The runs of ``compare`` and ``report`` by label, and the label ``--baseline`` names
    (by label or by path; an InputError when it names no run)."""
    labels = run_labels(args.runs)
    baseline = args.baseline
    if baseline is not None and baseline not in labels:
        by_path = {p: label for label, p in labels.items()}
        if baseline not in by_path:
            raise InputError(f"--baseline must name one of the runs ({', '.join(labels)})",
                             source=command, value=baseline)
        baseline = by_path[baseline]
    return labels, baseline


def run_labels(paths: list[str]) -> dict[str, str]:
    """Each run path by its label: the file's name, or its path where two runs share a
    name; a path given twice is labelled ``path#2`` the second time (as
    ``rankwise.evaluate`` names two runs of one name), so no run is lost. One pass over the
    paths (a thousand runs were a million path parses)."""
    from collections import Counter
    from pathlib import Path

    names = [Path(p).name for p in paths]
    shared = Counter(names)
    labels: dict[str, str] = {}
    for path, name in zip(paths, names):
        label = name if shared[name] == 1 else path
        if label in labels:
            copy = 2
            while f"{label}#{copy}" in labels:
                copy += 1
            label = f"{label}#{copy}"
        labels[label] = path
    return labels


def render(result, fmt: str, per_query: bool) -> str:
    """The result in one of the CLI's output formats."""
    if fmt == "trec":
        return result.to_trec(per_query=per_query)
    if fmt == "json":
        return result.to_json(indent=2) + "\n"
    if fmt == "csv":
        return result.to_csv(per_query=per_query)
    if fmt == "markdown":
        return result.to_markdown(per_query=per_query) + "\n"
    if fmt == "latex":
        return result.to_latex(per_query=per_query)
    text = result.to_table() + "\n" + f"conventions: {result.describe_conventions()}\n"
    return text + ("\n" + result.to_csv(per_query=True) if per_query else "")


def _measures(args: argparse.Namespace) -> int:
    from .measures import FAMILIES
    from .measures.parse import ALIASES

    spellings: dict[str, list[str]] = {}
    for alias, (family, params) in ALIASES.items():
        if not params:
            spellings.setdefault(family, []).append(alias)
    width = max(len(n) for n in FAMILIES)
    for name, spec in FAMILIES.items():
        cut = {"required": "@K", "optional": "[@K]", "none": ""}[spec.cutoff]
        if spec.cutoff_type is float:
            cut = "@" + spec.cutoff_name.split()[0]
        print(f"{(name + cut):<{width + 7}} {spec.description}")
        if spellings.get(name):
            print(f"{'':<{width + 7}} also: {', '.join(sorted(spellings[name]))}")
    print("\nDialects: ir_measures (P@10, P(rel=2)@5, nDCG(gain=exp)@10), trec_eval (P_10, "
          "ndcg_cut.5,10, map, official, all_trec) and ranx (precision@10, ndcg_burges@10).")
    return 0


def _profiles(args: argparse.Namespace) -> int:
    from .conventions import PROFILES, profile

    if args.name:
        chosen = profile(args.name)
        print(f"{chosen.name}: {chosen.peer}\n{chosen.notes}\n")
        for key, value in chosen.conventions.to_dict().items():
            print(f"  {key:<20} {value}")
        if chosen.aliases:
            print("  measure names: " + ", ".join(f"{a} -> {b}" for a, b in chosen.aliases))
        return 0
    fields = sorted({k for p in PROFILES.values() for k in p.conventions.differences()})
    print("| profile | peer | " + " | ".join(fields) + " |")
    print("|---" * (len(fields) + 2) + "|")
    for p in PROFILES.values():
        diff = p.conventions.differences()
        cells = [_cell(diff[f]) if f in diff else "·" for f in fields]
        print(f"| {p.name} | {p.peer} | " + " | ".join(cells) + " |")
    print("\n· = trec_eval's default. 'rankwise profiles NAME' shows one profile in full; "
          "--profile NAME on any command uses it.")
    return 0


def _cell(value) -> str:
    if isinstance(value, list):
        return "; ".join(f"{f}: {k}={v}" for f, k, v in value)
    return str(value)


def _demo(args: argparse.Namespace) -> int:
    from .demo import run_demo
    from .report.commands import check_output, output_errors

    check_output(args.output, folder=True)
    with output_errors(args.output):
        print(run_demo(args.output))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
