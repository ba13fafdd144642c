"""Measures: the registry, the parser, and one module per family of measures."""

from . import binary, curves, graded, rating  # noqa: F401  (register the families)
from . import inferred, judged, rbp, recsys  # noqa: F401  (infAP; Judged, Unjudged; RBP;
#                                                       RWRR, ARHR)
from .parse import parse_measure, parse_measures
from .registry import FAMILIES, Family, Measure

__all__ = ["FAMILIES", "Family", "Measure", "parse_measure", "parse_measures"]
