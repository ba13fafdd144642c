"""Seeded random measure strings, valid and mutated: the parser returns measures or raises
MeasureError, never another exception; a measure's name, parsed again, is the same measure;
and a sample evaluated on a tiny collection gives a result or an InputError, without a numpy
warning and within the measure's bounds."""

from __future__ import annotations

import math
import random
import traceback
import warnings
from collections import Counter

import rankwise
from rankwise import InputError, MeasureError
from rankwise.measures import Measure, parse_measure, parse_measures
from tests.robustness.fuzzing import OVERFLOWING, edge_strings, float64_overflow, measure_string

SEED = 20260611
STRINGS = 2500
EVALUATED = 450  # strings that parse to measures not evaluated yet, on the collection below
QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1, "d5": -1}, "q2": {"d1": 1, "d4": 3},
         "q3": {"d2": 0}}
RUN = {"q1": {"d1": 3.0, "d2": 2.0, "d9": 1.0, "d5": 0.5}, "q2": {"d4": 1.0, "d1": 1.0},
       "q3": {"d2": 0.2}}


def _where(exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    return f"{type(exc).__name__}: {exc} (at {frame.filename}:{frame.lineno})"


def _parse(text: str, problems: list[str]) -> list[Measure] | None:
    """The measures ``text`` names, None when it is refused; anything but a MeasureError,
    or a round trip that changes a measure, is a problem."""
    try:
        single = parse_measure(text)
    except MeasureError:
        single = None
    except Exception as exc:  # noqa: BLE001 - what the test is for
        problems.append(f"parse_measure({text!r}) raised {_where(exc)}")
    try:
        measures = parse_measures(text)
    except MeasureError:
        return None
    except Exception as exc:  # noqa: BLE001
        problems.append(f"parse_measures({text!r}) raised {_where(exc)}")
        return None
    if single is not None and measures != [single]:
        problems.append(f"{text!r}: parse_measure gives {single!r}, parse_measures {measures!r}")
    for measure in measures:
        for name in {str(measure), measure.trec_name()} - {measure.trec_text}:
            try:
                again = parse_measure(name)
            except Exception as exc:  # noqa: BLE001
                problems.append(f"{text!r}: the name {name!r} does not parse: {_where(exc)}")
                continue
            if again != measure or str(again) != str(measure):
                problems.append(f"{text!r}: the name {name!r} parses to {again!r}, "
                                f"not {measure!r}")
    return measures


def _numbers(value) -> list[float]:
    if isinstance(value, tuple):
        return [x for item in value for x in _numbers(item)]
    return [value] if isinstance(value, (int, float)) else []


def _overflows(measures: list[Measure]) -> bool:
    """Whether a parameter of ``measures`` is large enough to overflow float64."""
    return any(abs(x) > OVERFLOWING for m in measures for _, v in m.params for x in _numbers(v))


def _evaluate(text: str, measures: list[Measure], problems: list[str]) -> str:
    """Evaluate ``text``: ``"ok"`` or ``"refused"``; an exception other than InputError, a
    numpy warning or a value outside the measure's bounds is a problem."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = rankwise.evaluate(QRELS, RUN, [text], per_query=True)
        except InputError:
            return "refused"
        except Exception as exc:  # noqa: BLE001
            problems.append(f"evaluate with {text!r} raised {_where(exc)}")
            return "crashed"
    for warning in caught:
        if issubclass(warning.category, RuntimeWarning) and not (
                _overflows(measures) and float64_overflow(str(warning.message))):
            problems.append(f"evaluate with {text!r} warned {warning.message} "
                            f"(at {warning.filename}:{warning.lineno})")
    by_query = result.per_query()
    for measure in measures:
        low, high = measure.spec.bounds or (-math.inf, math.inf)
        values = [row[str(measure)] for row in by_query.values()]
        outside = [v for v in values if not math.isnan(v) and not low <= v <= high]
        if outside:
            problems.append(f"{text!r}: {measure} = {outside[0]!r}, outside [{low}, {high}]")
    return "ok"


def test_measure_strings_parse_or_are_refused_with_measure_error():
    rng = random.Random(SEED)
    problems: list[str] = []
    outcomes: Counter = Counter()
    evaluated: set[tuple[str, ...]] = set()
    for text in edge_strings() + [measure_string(rng) for _ in range(STRINGS)]:
        measures = _parse(text, problems)
        outcomes["parsed" if measures else "refused"] += 1
        names = tuple(map(str, measures or ()))
        if measures and names not in evaluated and len(evaluated) < EVALUATED:
            evaluated.add(names)
            outcomes["evaluated " + _evaluate(text, measures, problems)] += 1
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:40])
    # not vacuous: many strings parse, many are refused, and many parsed ones are evaluated
    assert outcomes["parsed"] > STRINGS / 3 and outcomes["refused"] > STRINGS / 3, outcomes
    assert outcomes["evaluated ok"] > EVALUATED / 2, outcomes
