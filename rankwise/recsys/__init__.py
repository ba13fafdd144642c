"""Recommender-system evaluation: recommendation lists against held-out interactions.

    >>> import rankwise.recsys as rs
    >>> result = rs.evaluate({"u1": ["a", "b"], "u2": ["b", "c"]}, {"u1": ["b"], "u2": ["b"]},
    ...                      ["HR@1", "nDCG@2", "Coverage@2"])
    >>> result.mean("HR@1"), round(result.mean("nDCG@2"), 4), result.mean("Coverage@2")
    (0.5, 0.8155, 1.0)

Inputs as recommender people hold them (frames, top-K lists, 2-D arrays of item ids),
relevance and imputation policies for ratings, training-item exclusion (counted), accuracy
measures through rankwise's engine and beyond-accuracy measures (:mod:`.beyond`) alongside.
docs/recsys.md has the definitions next to RecBole's, Elliot's, LensKit's, Microsoft
recommenders' and Evidently's.
"""

from .api import RecsysResult, demo_section, evaluate
from .beyond import BEYOND, parse_beyond
from .inputs import IMPUTATION_POLICIES, RELEVANCE_POLICIES

__all__ = ["BEYOND", "IMPUTATION_POLICIES", "RELEVANCE_POLICIES", "RecsysResult", "demo_section",
           "evaluate", "parse_beyond"]
