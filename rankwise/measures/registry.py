"""Measure objects and the registry of measure families.

A :class:`Measure` is a family name, an optional cutoff and named parameters, e.g.
``P(rel=2)@5``. Each family registers its compute function with :func:`family`; the
function receives the :class:`~rankwise.core.RankedLists`, the cutoff and the parameters,
and returns one float per query.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

import numpy as np

from ..conventions import LONGEST_LIST
from ..errors import MeasureError


@dataclass(frozen=True)
class Family:
    """A measure family: how to compute it, its parameters and how it is named and averaged."""

    name: str
    compute: Callable[..., np.ndarray]
    description: str
    cutoff: str = "none"  # "required", "optional" or "none"
    cutoff_type: type = int  # int ranks, or floats: recall levels (IPrec), multiples of R
    cutoff_name: str = "recall level"  # what a float cutoff is, and the largest it may be
    cutoff_max: float = 1.0
    params: dict[str, Any] = field(default_factory=dict)  # name -> default (None: conventions)
    aggregate: str = "mean"  # "mean", "sum" or "gmean"
    trec_name: str | None = None  # trec_eval's name without a cutoff, or None
    trec_cutoff_name: str | None = None  # trec_eval's name with a cutoff ("P_{cutoff}"), or None
    trec_params: tuple[tuple[str, Any], ...] = ()  # the parameters trec_eval's name stands for
    per_query_in_trec: bool = True  # trec_eval prints it per query
    graded: bool = False  # uses the grades themselves, not only relevant / not relevant
    bounds: tuple[float, float] | None = (0.0, 1.0)  # range of a per-query value; None: open
    order_based: bool = True  # depends on the ranking only (not on the score values)
    higher_is_better: bool = True  # False for error measures (MAE, RMSE)
    undefined_when: str | None = None  # "no_relevant" or "idcg_zero": the convention deciding
    tie_invariant: bool = False  # the same for every order of tied documents
    grade_monotone: bool = True  # tie groups ordered by grade give its best and worst values
    #: how the value changes when every gain is multiplied by a constant: "invariant" (a
    #: ratio: nDCG), "proportional" (a sum: DCG), None (neither, or no gain); the first two
    #: let a query whose gains are too large for float64 sums be computed with scaled gains
    gain_scaling: str | None = None


FAMILIES: dict[str, Family] = {}
#: The largest grade whose exponential gain 2^g − 1 (and ERR's 2^g_max) is a finite float64.
EXP_GAIN_MAX_GRADE = 1023


def family(name: str, description: str, **options: Any) -> Callable:
    """Register ``compute`` as the measure family ``name``."""

    binary = "rel" in options.get("params", {}) and options.get("aggregate", "mean") != "sum"
    options.setdefault("undefined_when", "no_relevant" if binary else None)

    def register(compute: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
        FAMILIES[name] = Family(name, compute, description, **options)
        return compute

    return register


@dataclass(frozen=True)
class Measure:
    """One measure: a family, a cutoff (or recall level) and parameters.

    Examples
    --------
    >>> from rankwise.measures import parse_measure
    >>> m = parse_measure("P(rel=2)@5")
    >>> m.family, m.cutoff, dict(m.params), str(m)
    ('P', 5, {'rel': 2}, 'P(rel=2)@5')
    """

    family: str
    cutoff: int | float | None = None
    params: tuple[tuple[str, Any], ...] = ()
    #: trec_eval's printed name when the measure was written in its syntax with parameters
    #: (``ndcg.1=3,2=9`` prints ``ndcg_1=3,2=9``: the parameters as written); not part of what
    #: the measure is
    trec_text: str | None = field(default=None, compare=False, repr=False)

    @property
    def spec(self) -> Family:
        return FAMILIES[self.family]

    def __str__(self) -> str:
        return self._name

    @cached_property
    def _name(self) -> str:
        """The canonical name, built once (results and checks ask for it per system)."""
        text = self.family
        if self.params:
            text += "(" + ",".join(f"{k}={_show(v)}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            text += f"@{_show(self.cutoff)}"
        return text

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"

    def trec_name(self) -> str:
        """trec_eval's name for this measure where it has one, else the canonical name."""
        if self.trec_text is not None:
            return self.trec_text
        spec = self.spec
        template = spec.trec_name if self.cutoff is None else spec.trec_cutoff_name
        if template is None or self.params != spec.trec_params:
            return str(self)
        cutoff = self.cutoff
        if spec.cutoff_type is float:
            cutoff = f"{cutoff:.2f}"
        return template.format(cutoff=cutoff)

    def conventions(self, lists):
        """The conventions this measure is computed under (its family's overrides applied)."""
        return lists.conventions.for_family(self.family)

    def compute(self, lists) -> np.ndarray:
        """One value per query of ``lists`` (NaN where the conventions leave it undefined)."""
        conv = self.conventions(lists)
        params = {k: v for k, v in self.spec.params.items()}
        params.update(dict(self.params))
        for name, default in (("rel", conv.relevance_threshold), ("gain", conv.gain_name),
                              ("base", conv.discount_base)):
            if name in params and params[name] is None:
                params[name] = default
        lists = self.tie_ordered(lists, conv, params).with_conventions(conv)
        return self._undefined(lists, self.values(lists, params), params)

    def tie_ordered(self, lists, conv, params: dict[str, Any]):
        """``lists`` in this measure's order of each tie group under ``conv``'s ``optimistic``
        / ``pessimistic`` policy: by grade, or by gain for a measure with a gain map (which
        need not grow with the grade: under ``{2: 5, 3: 2}`` a grade 2 gains more than a 3),
        the grades below ``rel`` of DCG and nDCG gaining 0; ``lists`` itself when already so."""
        if conv.ties not in ("optimistic", "pessimistic"):
            return lists
        best_first = conv.ties == "optimistic"
        if isinstance(params.get("gain"), tuple):
            from .graded import GAIN_FROM, gain_from, gains

            gain = gain_from(lists.levels, params["gain"], params["rel"]) \
                if self.spec.params == GAIN_FROM else params["gain"]
            return lists.with_ties_by_grade(best_first, key=gains(lists.grade, gain))
        if conv.ties != lists.conventions.ties:
            return lists.with_ties_by_grade(best_first)
        return lists

    def values(self, lists, params: dict[str, Any]) -> np.ndarray:
        """The family's value per query of ``lists`` (already under this measure's
        conventions) with the filled ``params``, before the ``no_relevant`` / ``idcg_zero``
        policies: the exact expected value over tie orders under ``ties="expected"``. A query
        whose gains are too large (or, for a ratio, too small) for float64 sums is computed
        with its gains scaled by a power of two (:func:`.graded.with_gains_scaled`)."""
        if self.spec.gain_scaling is not None:
            from .graded import with_gains_scaled

            return with_gains_scaled(self, lists, params, self._plain_values)
        return self._plain_values(lists, params)

    def _plain_values(self, lists, params: dict[str, Any]) -> np.ndarray:
        if lists.conventions.ties == "expected" and self.spec.order_based \
                and not self.spec.tie_invariant:
            from .expected import expected_value

            return np.asarray(expected_value(self, lists, params), dtype=np.float64)
        return np.asarray(self.spec.compute(lists, self.cutoff, **params), dtype=np.float64)

    def skips_undefined(self, conventions) -> bool:
        """Whether queries without a value are left out of the mean (else the mean is NaN)."""
        policy = self._policy(conventions.for_family(self.family))
        return policy in (None, "skip")

    def _policy(self, conv) -> str | None:
        when = self.spec.undefined_when
        return None if when is None else getattr(conv, when)

    def _undefined(self, lists, values: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        """Apply the ``no_relevant`` / ``idcg_zero`` convention to the queries it concerns."""
        policy = self._policy(lists.conventions)
        if policy is None:
            return values
        if self.spec.undefined_when == "no_relevant":
            undefined = lists.num_relevant(params["rel"]) == 0
        else:  # nDCG: the family returns NaN where the ideal DCG is 0
            undefined = np.isnan(values)
        if not undefined.any():
            return values
        values = values.copy()
        values[undefined] = undefined_value(policy)
        return values


def undefined_value(policy: str) -> float:
    """The value of an undefined query under a ``no_relevant`` / ``idcg_zero`` policy: 0, 1,
    or NaN (``nan`` and ``skip``; ``skip`` also leaves the query out of the mean)."""
    return {"zero": 0.0, "one": 1.0}.get(policy, math.nan)


def _check_levels(name: str, value: Any, shown: str) -> tuple[float, ...]:
    """Recall levels: numbers in [0, 1], at least one, kept in ascending order (trec_eval reads
    them in that order; given out of order it would not average the levels it names)."""
    try:
        levels = tuple(sorted(float(v) for v in value))
    except (TypeError, ValueError):
        levels = ()
    if not levels or not all(0.0 <= v <= 1.0 for v in levels):
        raise MeasureError(f"{name} parameter levels must be recall levels between 0 and 1, "
                           "e.g. {0.2,0.5,0.8}", source="measure", value=shown)
    return levels


def _show(value: Any) -> str:
    if isinstance(value, tuple) and value and not isinstance(value[0], tuple):
        return "{" + ",".join(_show(v) for v in value) + "}"
    if isinstance(value, tuple):
        return "{" + ",".join(f"{_show(k)}:{_show(v)}" for k, v in value) + "}"
    if isinstance(value, float) and _exact_integer(value):
        return str(int(value))
    return str(value)


def make_measure(name: str, cutoff: Any = None, params: dict[str, Any] | None = None,
                 text: str | None = None) -> Measure:
    """Validate and build a :class:`Measure` (the single place parameters are checked)."""
    shown = text or name
    spec = FAMILIES.get(name)
    if spec is None:
        raise MeasureError(f"unknown measure family {name!r}", source="measure", value=shown)
    params = dict(params or {})
    for key in params:
        if key not in spec.params:
            allowed = ", ".join(spec.params) or "none"
            # ir_measures' judged_only drops unjudged documents: a convention here
            hint = "; ir_measures' judged_only=True is the convention unjudged='remove'" \
                if key == "judged_only" else ""
            raise MeasureError(f"{name} has no parameter {key!r} (parameters: {allowed}){hint}",
                               source="measure", value=shown)
    if cutoff is None and spec.cutoff == "required":
        raise MeasureError(f"{name} needs a cutoff, e.g. {name}@10", source="measure", value=shown)
    if cutoff is not None and spec.cutoff == "none":
        raise MeasureError(f"{name} takes no cutoff", source="measure", value=shown)
    if cutoff is not None:
        cutoff = _check_cutoff(spec, cutoff, shown)
    for key, value in params.items():
        params[key] = _check_param(name, key, value, shown)
    ordered = tuple(sorted((k, v) for k, v in params.items() if v != spec.params[k]))
    return Measure(name, cutoff, ordered)


#: A number as measure strings write one: ASCII digits, an optional sign, point and exponent
#: (and inf or nan, refused afterwards as not finite); Python's float() would also take
#: ``1_0`` as 10 and other scripts' digits, which a cutoff never takes either.
_NUMBER_TEXT = re.compile(r"\s*[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                          r"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN])\s*")


def as_number(value: Any) -> float:
    """``float(value)``, where a string must be written as :data:`_NUMBER_TEXT` says
    (ValueError otherwise)."""
    if isinstance(value, str) and not _NUMBER_TEXT.fullmatch(value):
        raise ValueError(f"not a number: {value!r}")
    return float(value)


def _check_cutoff(spec: Family, cutoff: Any, shown: str) -> int | float:
    if spec.cutoff_type is float:
        try:
            level = as_number(cutoff)
        except (TypeError, ValueError):
            level = -1.0
        if not 0.0 <= level <= spec.cutoff_max:
            raise MeasureError(f"{spec.name} needs a {spec.cutoff_name} between 0 and "
                               f"{spec.cutoff_max:.10g}", source="measure", value=shown)
        return level + 0.0  # -0.0 as 0.0, or trec_eval's name would read -0.00
    try:
        as_float = float(cutoff)
    except (TypeError, ValueError):
        as_float = -1.0
    if isinstance(cutoff, str) and not re.fullmatch(r"\s*[0-9]+\s*", cutoff):
        as_float = -1.0  # "1e3", "+5": trec_eval's atol would read 1 and 5
    if not as_float.is_integer() or not 1 <= as_float <= LONGEST_LIST:
        raise MeasureError(f"a cutoff must be a positive integer of at most {LONGEST_LIST}",
                           source="measure", value=shown)
    return int(as_float)


def _check_param(name: str, key: str, value: Any, shown: str) -> Any:
    if key == "levels":
        return _check_levels(name, value, shown)
    if key == "gain":
        if isinstance(value, (dict, tuple)):
            return _check_gain_map(name, value, shown)
        if value in ("linear", "exp"):
            return value
        if value == "exponential":
            return "exp"
        raise MeasureError("gain must be linear, exp or a map {grade:gain}", source="measure",
                           value=shown)
    try:
        number = as_number(value)
    except (TypeError, ValueError):
        raise MeasureError(f"{name} parameter {key} must be a number", source="measure",
                           value=shown) from None
    if not math.isfinite(number):
        raise MeasureError(f"{name} parameter {key} must be a finite number", source="measure",
                           value=shown)
    if key == "rel" and number < 0:
        raise MeasureError(f"{name} parameter rel must be 0 or more (grades below 0 mark "
                           "documents judged but not pooled, unjudged for every measure)",
                           source="measure", value=shown)
    if key == "p" and not 0 < number < 1:
        raise MeasureError(f"{name} parameter p (the persistence) must lie between 0 and 1",
                           source="measure", value=shown)
    if key == "base" and number <= 1:
        raise MeasureError(f"{name} parameter base (of the discount's logarithm) must be "
                           "greater than 1", source="measure", value=shown)
    if key in ("beta", "max_grade") and number <= 0:
        raise MeasureError(f"{name} parameter {key} must be positive", source="measure",
                           value=shown)
    if key == "max_grade" and number > EXP_GAIN_MAX_GRADE:
        raise MeasureError(f"{name} parameter max_grade must be at most {EXP_GAIN_MAX_GRADE} "
                           "(2^g overflows above)", source="measure", value=shown)
    return int(number) if _exact_integer(number) else number


def _exact_integer(number: float) -> bool:
    """Whether ``number`` is an integer a float holds exactly (beyond 2^53 it stays a float:
    numpy computes with no Python integer of hundreds of digits)."""
    return number.is_integer() and abs(number) <= 2 ** 53


def _check_gain_map(name: str, value: Any, shown: str) -> tuple[tuple[float, float], ...]:
    """A gain map ``{grade: gain}`` as sorted pairs: finite numbers, grades of 0 or more
    (unjudged documents and negative grades gain 0; trec_eval's ``ndcg.-1=g`` would give
    unjudged documents the gain g, an nDCG above 1)."""
    try:
        pairs = tuple(sorted((float(k), float(v)) for k, v in dict(value).items()))
    except (TypeError, ValueError):
        pairs = ((math.nan, math.nan),)
    if not pairs or not all(math.isfinite(k) and math.isfinite(v) for k, v in pairs):
        raise MeasureError(f"{name} gain map must map grades to gains, finite numbers, e.g. "
                           "{1:1,2:3}", source="measure", value=shown)
    if pairs[0][0] < 0:
        raise MeasureError(f"{name} gain map grades must be 0 or more (unjudged documents and "
                           "negative grades gain 0)", source="measure", value=shown)
    return pairs
