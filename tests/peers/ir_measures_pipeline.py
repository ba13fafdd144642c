"""ir_measures' default pipeline, called so that its values do not depend on set order.

Its pytrec_eval provider evaluates nDCG without custom gains (and NumQ, NumRet) in whichever
pytrec_eval call it set up first, taking the measures from a set: when that call is the one
for nDCG with custom gains, plain nDCG is computed on the re-mapped grades. Which call comes
first depends on string hashing (PYTHONHASHSEED=32 shows it with the provider tests'
measures), so a single call mixing both fails at random. Measures with custom gains are
therefore evaluated in calls of their own here, one per gain mapping.
"""

from __future__ import annotations

from collections.abc import Iterator

import ir_measures


def _groups(measures) -> list[list]:
    """The measures without custom gains, then one group per gain mapping."""
    plain, by_gains = [], {}
    for measure in measures:
        gains = measure.params.get("gains")
        if gains is None:
            plain.append(measure)
        else:
            by_gains.setdefault(tuple(sorted(gains.items())), []).append(measure)
    return [group for group in [plain, *by_gains.values()] if group]


def iter_calc(measures, qrels, run) -> Iterator:
    for group in _groups(measures):
        yield from ir_measures.iter_calc(group, qrels, run)


def calc_aggregate(measures, qrels, run) -> dict:
    out = {}
    for group in _groups(measures):
        out.update(ir_measures.calc_aggregate(group, qrels, run))
    return out


class Evaluator:
    """``ir_measures.evaluator`` with the same split."""

    def __init__(self, measures, qrels):
        self._evaluators = [ir_measures.evaluator(group, qrels) for group in _groups(measures)]

    def iter_calc(self, run) -> Iterator:
        for evaluator in self._evaluators:
            yield from evaluator.iter_calc(run)

    def calc_aggregate(self, run) -> dict:
        out = {}
        for evaluator in self._evaluators:
            out.update(evaluator.calc_aggregate(run))
        return out
