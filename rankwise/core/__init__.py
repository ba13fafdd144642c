"""The engine: one join-and-sort pass producing :class:`RankedLists`, and segment primitives."""

from .judgments import JudgmentIndex, index_judgments
from .lists import Diagnostics, RankedLists
from .ranked import rank

__all__ = ["Diagnostics", "JudgmentIndex", "RankedLists", "index_judgments", "rank"]
