"""Measures: the registry, the parser, and one module per family of measures."""

from . import binary, curves, graded, rating  # noqa: F401  (register the families)
from . import inferred, judged, ndcg_averages, normalized_gain, rbp, recsys  # noqa: F401
# (infAP; Judged, Unjudged; ndcg_rel, Rndcg; G; RBP, RBPResid; RWRR, ARHR)
from .parse import parse_measure, parse_measures
from .registry import FAMILIES, Family, Measure

__all__ = ["FAMILIES", "Family", "Measure", "parse_measure", "parse_measures"]
