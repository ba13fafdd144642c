"""The engine: one join-and-sort pass producing :class:`RankedLists`, and segment primitives."""

from .ranked import Diagnostics, JudgmentIndex, RankedLists, index_judgments, rank

__all__ = ["Diagnostics", "JudgmentIndex", "RankedLists", "index_judgments", "rank"]
