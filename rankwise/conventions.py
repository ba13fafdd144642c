"""Conventions: every choice that changes a number, decided in one place.

A frozen :class:`Conventions` value travels with every evaluation and is written into every
result. The default reproduces trec_eval 10 (``trec_eval -q``); each field documents the
trec_eval flag it corresponds to.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

#: Tie orders: how documents with equal scores within one query are ordered.
TIE_ORDERS = ("docid_desc", "docid_asc", "input_order")
#: What happens to queries that are judged but absent from the run.
MISSING_QUERY_POLICIES = ("ignore", "zero")
#: What happens to retrieved documents without a judgment.
UNJUDGED_POLICIES = ("nonrelevant", "remove")
#: What happens to a (query, doc) pair that occurs more than once in a run.
DUPLICATE_POLICIES = ("error", "first", "last", "max")


@dataclass(frozen=True)
class Conventions:
    """The evaluation conventions.

    Attributes
    ----------
    relevance_threshold
        A judged grade ``>= relevance_threshold`` counts as relevant for binary measures
        (trec_eval ``-l``, default 1). Measures with an explicit ``rel=`` parameter override it.
    ties
        Order of documents with equal scores in one query: ``"docid_desc"`` (trec_eval: doc ids
        compared as byte strings, descending), ``"docid_asc"``, or ``"input_order"`` (the order of
        the rows as given).
    missing_queries
        Queries in the judgments but not in the run: ``"ignore"`` (trec_eval default) or ``"zero"``
        (evaluated as empty rankings, every measure 0, and counted in the mean: trec_eval ``-c``).
    max_depth
        Only the first ``max_depth`` documents of each ranking are evaluated (trec_eval ``-M``);
        ``None`` for no limit.
    unjudged
        Retrieved documents without a judgment (or with a negative grade): ``"nonrelevant"``
        (trec_eval default) or ``"remove"`` (they are dropped and the ranking condensed, trec_eval
        ``-J``).
    duplicates
        A (query, doc) pair more than once in a run: ``"error"`` (trec_eval refuses such a
        run), or keep one row and count the others as dropped: ``"first"`` or ``"last"`` in
        input order (``"last"`` is what pytrec_eval and ranx do with dicts), or ``"max"``, the
        highest score.
    """

    relevance_threshold: float = 1
    ties: str = "docid_desc"
    missing_queries: str = "ignore"
    max_depth: int | None = None
    unjudged: str = "nonrelevant"
    duplicates: str = "error"

    def __post_init__(self) -> None:
        from .errors import InputError

        _check_choice("ties", self.ties, TIE_ORDERS)
        _check_choice("missing_queries", self.missing_queries, MISSING_QUERY_POLICIES)
        _check_choice("unjudged", self.unjudged, UNJUDGED_POLICIES)
        _check_choice("duplicates", self.duplicates, DUPLICATE_POLICIES)
        if self.max_depth is not None and (not isinstance(self.max_depth, int) or self.max_depth < 1):
            raise InputError("max_depth must be a positive integer or None", source="conventions",
                             value=repr(self.max_depth))
        if not isinstance(self.relevance_threshold, (int, float)):
            raise InputError("relevance_threshold must be a number", source="conventions",
                             value=repr(self.relevance_threshold))

    def with_options(self, **changes: Any) -> "Conventions":
        """A copy with some fields changed (``None`` values are ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (for JSON and reports)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Conventions":
        """Rebuild from :meth:`to_dict` output."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def describe(self) -> str:
        """One line: ``relevance_threshold=1, ties=docid_desc, ...``."""
        return ", ".join(f"{k}={v}" for k, v in self.to_dict().items())


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    from .errors import InputError

    if value not in choices:
        raise InputError(f"{name} must be one of {', '.join(choices)}", source="conventions",
                         value=str(value))


#: trec_eval 10 defaults.
TREC_EVAL = Conventions()
