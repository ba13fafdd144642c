"""Comparing systems: :func:`compare` evaluates runs, tests every pair (or each system
against a baseline) on the per-query values, corrects for multiple testing and returns a
:class:`Comparison` with writers to a text table, Markdown, LaTeX, CSV and JSON.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .conventions import Conventions
from .errors import InputError
from .messages import Message, as_id, joined, message
from .plain import (check_digits, csv_field, decimal_text, latex_text, markdown_text, one_line,
                    percent, plain, text_ids)
from .results import Result

#: Values of ``test``: the paired tests, and the two many-system tests.
TESTS = ("t", "wilcoxon", "sign", "randomization", "bootstrap", "tukey", "randomized-tukey")
#: Measure families where a lower value is better.
_TEST_NAMES = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test", "sign": "sign test",
               "randomization": "randomization test", "bootstrap": "paired bootstrap test",
               "tukey": "Tukey HSD (ANOVA blocked by query)",
               "randomized-tukey": "randomized Tukey HSD"}
_EXAMPLES = 5


def compare(qrels: Any, runs: Any, measures: str | Sequence[str], baseline: str | None = None,
            test: str = "randomization", correction: str = "holm", alpha: float = 0.05,
            seed: int | None = 0, *, permutations: int = 10_000, confidence: float = 0.95,
            power: float = 0.8, interval: str | None = None, risk_alpha: float = 1.0,
            missing_queries: str | None = None, conventions: Conventions | None = None,
            **convention_overrides: Any) -> "Comparison":
    """Evaluate several runs and compare them with significance tests.

    Parameters
    ----------
    qrels, runs
        As for :func:`rankwise.evaluate`; ``runs`` names at least two systems
        (``{name: run}`` or a list).
    measures : str or sequence of str
        Measure names in any dialect.
    baseline : str, optional
        Compare each system with this one; default: every pair of systems.
    test : str
        ``"t"``, ``"wilcoxon"``, ``"sign"``, ``"randomization"`` (default), ``"bootstrap"``,
        ``"tukey"`` or ``"randomized-tukey"`` (see ``docs/statistics.md``).
    correction : str
        ``"holm"`` (default), ``"bonferroni"``, ``"bh"`` or ``"none"``, applied to the tests of
        each measure. The Tukey tests control the family-wise error themselves: no correction.
    alpha : float
        Significance level of the markers and groups.
    seed : int or None
        Seeds every random procedure (each test draws from its own stream derived from the
        seed and the names of the measure and the pair, so other measures and systems and
        their order do not change it). None draws a seed, recorded in the result.
    permutations : int
        Random sign vectors, bootstrap resamples or shuffles per test.
    confidence : float
        Level of every confidence interval.
    power : float
        Power for the minimum detectable effect reported with few queries, strictly between
        ``alpha`` and 1.
    interval : str, optional
        Interval of each system's mean: ``"t"`` or ``"bootstrap"``; default: bootstrap for
        the bootstrap test, t otherwise.
    risk_alpha : float
        Weight of losses in URisk/TRisk against the baseline.
    missing_queries : str, optional
        ``"zero"`` scores judged queries missing from a run as 0 (trec_eval ``-c``).
    conventions, **convention_overrides
        As for :func:`rankwise.evaluate`.

    Returns
    -------
    Comparison

    Examples
    --------
    >>> import rankwise
    >>> qrels = {f"q{i}": {"d1": 1, "d2": 0} for i in range(6)}
    >>> good = {f"q{i}": {"d1": 2.0, "d2": 1.0} for i in range(6)}
    >>> bad = {f"q{i}": {"d1": 1.0, "d2": 2.0} for i in range(6)}
    >>> c = rankwise.compare(qrels, {"good": good, "bad": bad}, ["P@1"], baseline="bad")
    >>> row = c.tests[0]
    >>> row["system"], row["other"], row["test"].p_value, row["significant"]
    ('good', 'bad', 0.03125, True)
    """
    from .api import evaluate

    _check_arguments(test, correction, alpha, permutations, seed, power, confidence, interval,
                     risk_alpha)
    result = evaluate(qrels, runs, measures, conventions, per_query=True,
                      missing_queries=missing_queries, **convention_overrides)
    return compare_result(result, baseline, test, correction, alpha, seed,
                          permutations=permutations, confidence=confidence, power=power,
                          interval=interval, risk_alpha=risk_alpha)


def _check_arguments(test: str, correction: str, alpha: float, permutations: int,
                     seed: int | None, power: float | None = None, confidence: float = 0.95,
                     interval: str | None = None, risk_alpha: float = 1.0) -> None:
    """Refuse any argument that cannot work, before the runs are evaluated."""
    from .stats.corrections import CORRECTIONS
    from .stats.intervals import _check_confidence
    from .stats.power import check_alpha_and_power, is_number

    if test not in TESTS:
        raise InputError(f"unknown test: expected one of {', '.join(TESTS)}", source="test",
                         value=str(test))
    if correction not in CORRECTIONS:
        raise InputError("unknown correction: expected one of none, bonferroni, holm, bh",
                         source="correction", value=str(correction))
    check_alpha_and_power(alpha, power)
    if not isinstance(permutations, (int, np.integer)) or permutations < 1:
        raise InputError("permutations must be a positive integer", source="permutations",
                         value=repr(permutations))
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))
                             or seed < 0):
        raise InputError("seed must be a non-negative integer or None", source="seed",
                         value=repr(seed))
    _check_confidence(confidence)
    if interval not in (None, "t", "bootstrap"):
        raise InputError("interval must be 't', 'bootstrap' or None", source="interval",
                         value=repr(interval))
    if not is_number(risk_alpha) or not math.isfinite(risk_alpha):
        raise InputError("risk_alpha must be a finite number (losses weigh 1 + risk_alpha)",
                         source="risk_alpha", value=repr(risk_alpha))


def compare_result(result: Result, baseline: str | None = None, test: str = "randomization",
                   correction: str = "holm", alpha: float = 0.05, seed: int | None = 0, *,
                   permutations: int = 10_000, confidence: float = 0.95, power: float = 0.8,
                   interval: str | None = None, risk_alpha: float = 1.0,
                   measures: Sequence[str] | None = None) -> "Comparison":
    """:func:`compare` on a :class:`~rankwise.Result` evaluated with ``per_query=True``
    (``measures``: a subset of its measures; default: all of them)."""
    _check_arguments(test, correction, alpha, permutations, seed, power, confidence, interval,
                     risk_alpha)
    chosen = list(result.measures) if measures is None else [_canonical(m) for m in measures]
    unknown = [m for m in chosen if m not in result.measures]
    if unknown:
        raise InputError(f"measures not in the result ({', '.join(result.measures)})",
                         source="measures", value=", ".join(unknown))
    systems = list(result.systems)
    if len(systems) < 2:
        raise InputError("a comparison needs at least two systems", source="runs",
                         value=", ".join(systems))
    if baseline is not None and baseline not in result.systems:
        raise InputError(f"baseline is not one of the systems ({', '.join(systems)})",
                         source="baseline", value=str(baseline))
    if any(s.values is None for s in result.systems.values()):
        raise InputError("per-query values are needed: evaluate(..., per_query=True)",
                         source="result")
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (1 << 63))
    comparison = Comparison(result, chosen, baseline, test, correction, alpha, seed,
                            permutations, confidence, power,
                            interval or ("bootstrap" if test == "bootstrap" else "t"), risk_alpha)
    comparison._run()
    return comparison


class Comparison:
    """What :func:`compare` returns.

    Attributes
    ----------
    systems : list of str
        In the order given; ``labels`` maps each to its letter (a, b, c, ...) used by markers.
    measures : list of str
        Canonical names.
    summary : dict
        ``{measure: {system: {"mean", "ci_low", "ci_high", "n", "sd", "min", "p10", ...,
        "share_zero", "share_perfect", "markers"}}}``: means over the compared queries, their
        confidence interval, the per-query distribution and the letters of the systems this
        one is significantly better than.
    tests : list of dict
        One per measure and pair: ``measure``, ``system``, ``other``, ``test`` (a
        :class:`~rankwise.stats.PairedTest` of ``system - other``, whose ``dropped`` counts
        the queries left out of the measure's tests for a NaN value), ``p_value_corrected``
        (None where no correction applies) and ``significant``.
    anova : dict
        ``{measure: Anova}`` for the Tukey tests.
    groups : dict
        ``{measure: {system: letters}}``: systems sharing a letter are not significantly
        different (all-pairs comparisons only).
    risk : dict
        ``{measure: {system: {"urisk", "trisk"}}}`` against the baseline (with a baseline).
    agreement : list of dict
        Kendall's tau and RBO between the orderings of the systems under each two measures.
    warnings : list of str
        Pitfalls found: missing or undefined queries, cutoffs, few queries, a lead carried
        by a handful of queries. One that names ids is a :class:`~rankwise.messages.Message`,
        which also knows where they stand (the HTML report isolates them).
    """

    def __init__(self, result: Result, measures: list[str], baseline: str | None, test: str, correction: str,
                 alpha: float, seed: int, permutations: int, confidence: float, power: float,
                 interval: str, risk_alpha: float) -> None:
        from .stats.corrections import CORRECTIONS
        from .stats.multi import letter

        self.result = result
        self.systems = list(result.systems)
        self.labels = {s: letter(i) for i, s in enumerate(self.systems)}
        self.measures = measures
        self.conventions = result.conventions
        self.baseline = baseline
        self.test = test
        self.multi = test in ("tukey", "randomized-tukey")
        self.correction = "none" if self.multi else CORRECTIONS[correction]
        self.alpha = alpha
        self.seed = seed
        self.permutations = permutations
        self.confidence = confidence
        self.power = power
        self.interval = interval
        self.risk_alpha = risk_alpha
        self.summary: dict[str, dict[str, dict[str, Any]]] = {}
        self.tests: list[dict[str, Any]] = []
        self.anova: dict[str, Any] = {}
        self.groups: dict[str, dict[str, str]] = {}
        self.risk: dict[str, dict[str, dict[str, float]]] = {}
        self.agreement: list[dict[str, Any]] = []
        self.warnings: list[str] = []
        self.n_queries: dict[str, int] = {}

    # ------------------------------------------------------------------ computation

    def _pairs(self) -> list[tuple[int, int]]:
        k = len(self.systems)
        if self.baseline is None:
            return [(i, j) for i in range(k) for j in range(i + 1, k)]
        b = self.systems.index(self.baseline)
        return [(i, b) for i in range(k) if i != b]

    def _run(self) -> None:
        from .stats.pitfalls import cutoff_warnings, few_queries_warning

        matrix, common = self._common_queries()
        self.warnings += cutoff_warnings(self.measures)
        spread: dict[str, float] = {}
        for measure in self.measures:
            scores = matrix[measure]
            keep = ~np.isnan(scores).any(axis=0)
            if not keep.all():
                lost = common[~keep]
                self.warnings.append(message(
                    f"{measure}: {len(lost)} queries have no value for some system (undefined, "
                    "e.g. no rating to compare) and are left out of its tests: ",
                    _examples(lost)))
            scores = scores[:, keep]
            self.n_queries[measure] = scores.shape[1]
            sign = -1.0 if _lower_is_better(measure) else 1.0
            self._summarise(measure, scores)
            sds = self._test_measure(measure, scores, sign, int((~keep).sum()))
            spread[measure] = float(np.median(sds)) if sds else float("nan")
            self._markers(measure, sign)
            if self.baseline is not None:
                self._risk(measure, scores, sign)
        n_min = min(self.n_queries.values()) if self.n_queries else 0
        few = few_queries_warning(n_min, self.alpha, self.power, spread)
        if few:
            self.warnings.append(few)
        self._agreement()

    def _common_queries(self) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Per measure, a ``(systems, queries)`` matrix over the queries every system has."""
        ids = {name: text_ids(s.query_ids) for name, s in self.result.systems.items()}
        common = ids[self.systems[0]]
        union = common
        for q in ids.values():
            common = np.intersect1d(common, q)
            union = np.union1d(union, q)
        left_out = np.setdiff1d(union, common)
        if len(left_out):
            shown = [message(as_id(q), " (missing for ", joined(
                         as_id(n) for n in self.systems if not np.isin(q, ids[n])), ")")
                     for q in left_out[:_EXAMPLES]]
            more = f", ... ({len(left_out) - _EXAMPLES} more)" if len(left_out) > _EXAMPLES else ""
            self.warnings.append(message(
                f"{len(left_out)} queries are not evaluated for every system and are left out "
                "of the comparison: ", joined(shown), f"{more}; missing_queries='zero' "
                "(trec_eval -c) scores judged queries missing from a run as 0"))
        matrix = {}
        for measure in self.measures:
            rows = []
            for name in self.systems:
                s = self.result.systems[name]
                _, _, at = np.intersect1d(common, ids[name], assume_unique=True,
                                          return_indices=True)
                rows.append(s.values[measure][at])
            matrix[measure] = np.vstack(rows) if len(common) else np.empty((len(rows), 0))
        return matrix, common

    def _summarise(self, measure: str, scores: np.ndarray) -> None:
        from .measures import parse_measure
        from .stats.intervals import describe, mean_interval

        bounds = parse_measure(measure).spec.bounds
        upper = bounds[1] if bounds is not None else None
        self.summary[measure] = {}
        for si, name in enumerate(self.systems):
            low, high = mean_interval(scores[si], self.interval, self.confidence,
                                      self.permutations,
                                      self._rng("mean interval", measure, name))
            self.summary[measure][name] = {**describe(scores[si], upper), "ci_low": low,
                                           "ci_high": high, "markers": ""}

    def _rng(self, procedure: str, measure: str, *systems: str) -> np.random.Generator:
        """The random stream of one procedure on one measure and one system, pair or set of
        systems: ``default_rng([seed, key])`` with ``key`` a BLAKE2b digest of their names
        (the systems sorted), so it does not depend on the other measures and systems, nor on
        the order of any of them."""
        names = json.dumps([procedure, measure, *sorted(systems)]).encode()
        key = int.from_bytes(hashlib.blake2b(names, digest_size=16).digest(), "little")
        return np.random.default_rng([self.seed, key])

    def _test_measure(self, measure: str, scores: np.ndarray, sign: float,
                      dropped: int) -> list[float]:
        """Test the pairs on one measure's scores, ``dropped`` queries left out of them for a
        NaN value; the standard deviations of the pairs' differences."""
        from .stats.corrections import adjust_p_values
        from .stats.paired import paired_differences, paired_test
        from .stats.pitfalls import undefined_test_warning

        pairs = self._pairs()
        if self.multi:
            outcomes = self._tukey(measure, scores, pairs)
        else:
            outcomes = [paired_test(self.test, scores[i], scores[j], self.confidence,
                                    self.permutations,
                                    self._rng(self.test, measure, self.systems[i],
                                              self.systems[j]))
                        for i, j in pairs]
        if any(math.isnan(o.p_value) for o in outcomes):
            self.warnings.append(undefined_test_warning(measure, self.test,
                                                        _TEST_NAMES[self.test], scores.shape[1]))
        if sign < 0:
            outcomes = [_better_first(o) for o in outcomes]
        raw = np.array([o.p_value for o in outcomes])
        corrected = adjust_p_values(raw, self.correction)
        sds = []
        for (i, j), outcome, p_adj in zip(pairs, outcomes, corrected):
            outcome.dropped = dropped
            p = p_adj if self.correction != "none" else outcome.p_value
            self.tests.append({
                "measure": measure, "system": self.systems[i], "other": self.systems[j],
                "test": outcome,
                "p_value_corrected": float(p_adj) if self.correction != "none" else None,
                "significant": bool(p < self.alpha)})
            diffs = paired_differences(scores[i], scores[j])  # in units of diffs.scale
            if len(diffs.d) > 1:
                sds.append(float(diffs.d.std(ddof=1)) * diffs.scale)
            self._check_carried(measure, i, j, sign * diffs.d, diffs.scale, diffs.allowance)
        if self.multi and self.baseline is None and scores.shape[1] >= 2:
            self._groups(measure, scores, sign)
        return sds

    def _tukey(self, measure: str, scores: np.ndarray, pairs: list[tuple[int, int]]) -> list:
        from scipy import stats

        from .stats.intervals import t_interval
        from .stats.multi import randomized_tukey_hsd, tukey_hsd
        from .stats.paired import PairedTest, cohens_d, paired_differences, win_tie_loss

        k, n = scores.shape
        if n < (2 if self.test == "tukey" else 1):  # no error variance; no query to shuffle
            return [_undefined(self.test, scores[i], scores[j], self.confidence)
                    for i, j in pairs]
        if self.test == "tukey":
            order = list(range(k))
            idx, diff, p, anova = tukey_hsd(scores)
            self.anova[measure] = anova
            se = anova.root_ms_error / math.sqrt(n)
            with np.errstate(over="ignore"):  # |diff| / se is finite; a diff of 2e308 is not
                q = np.abs(diff) / se if se > 0 else np.where(diff == 0, 0.0, np.inf)
            half = float(stats.studentized_range.ppf(self.confidence, k, anova.df_error)) * se
        else:
            order = sorted(range(k), key=lambda s: self.systems[s])  # shuffled in name order
            idx, diff, p = randomized_tukey_hsd(scores[order], self.permutations,
                                                self._rng(self.test, measure, *self.systems))
            q = diff
        where = {}
        for r, (a, b) in enumerate(idx):
            where[order[a], order[b]], where[order[b], order[a]] = (r, 1.0), (r, -1.0)
        out = []
        for i, j in pairs:
            r, flip = where[i, j]
            diffs = paired_differences(scores[i], scores[j])
            d = diffs.d
            mean = float(d.mean()) * diffs.scale
            if self.test == "tukey":
                low, high = mean - half, mean + half
                stat, details = float(q[r]), {"k": k, "df_error": anova.df_error,
                                              "ci": "Tukey simultaneous"}
            else:
                low, high = (v * diffs.scale for v in t_interval(d, self.confidence))
                stat = flip * float(q[r])
                details = {"permutations": self.permutations, "ci": "t"}
            w, t, lo = win_tie_loss(d, diffs.allowance)
            out.append(PairedTest(self.test, stat, float(p[r]), n, mean, low, high,
                                  self.confidence, cohens_d(d), w, t, lo, 0, details))
        return out

    def _groups(self, measure: str, scores: np.ndarray, sign: float) -> None:
        from .stats.multi import groups

        k = len(self.systems)
        significant = np.zeros((k, k), dtype=bool)
        for row in self.tests:
            if row["measure"] == measure and row["significant"]:
                i, j = self.systems.index(row["system"]), self.systems.index(row["other"])
                significant[i, j] = significant[j, i] = True
        means = np.array([self.summary[measure][s]["mean"] for s in self.systems])
        letters = groups(sign * means, significant)
        self.groups[measure] = dict(zip(self.systems, letters))

    def _markers(self, measure: str, sign: float) -> None:
        """Each system's markers: the labels of the systems it is significantly better than,
        in the order of the systems (see :func:`~rankwise.stats.multi.joined_labels`)."""
        from .stats.multi import joined_labels

        position = {name: i for i, name in enumerate(self.systems)}
        beaten: dict[str, set[int]] = {name: set() for name in self.systems}
        for row in self.tests:
            if row["measure"] != measure or not row["significant"]:
                continue
            better = sign * row["test"].mean_difference > 0
            winner, loser = ((row["system"], row["other"]) if better
                             else (row["other"], row["system"]))
            beaten[winner].add(position[loser])
        for name, losers in beaten.items():
            self.summary[measure][name]["markers"] = joined_labels(
                [self.labels[self.systems[i]] for i in sorted(losers)], len(self.systems))

    def _check_carried(self, measure: str, i: int, j: int, d: np.ndarray, scale: float,
                       allowance: np.ndarray) -> None:
        """Warn where a lead rests on a handful of queries; ``d * scale`` are the
        differences in the measure's direction, ``allowance`` their rounding allowances."""
        from .stats.pitfalls import carried_by_few_warning

        if len(d) == 0 or d.sum() == 0:
            return
        leader, other = (self.systems[i], self.systems[j]) if d.sum() > 0 else (
            self.systems[j], self.systems[i])
        text = carried_by_few_warning(measure, leader, other, d if d.sum() > 0 else -d, scale,
                                      allowance)
        if text:
            self.warnings.append(text)

    def _risk(self, measure: str, scores: np.ndarray, sign: float) -> None:
        from .stats.risk import trisk, urisk

        b = self.systems.index(self.baseline)
        self.risk[measure] = {
            name: {"urisk": urisk(sign * scores[si], sign * scores[b], self.risk_alpha),
                   "trisk": trisk(sign * scores[si], sign * scores[b], self.risk_alpha)}
            for si, name in enumerate(self.systems) if si != b}

    def _agreement(self) -> None:
        from .stats.agreement import expected_rbo, kendall_tau

        means = {m: np.array([(-1.0 if _lower_is_better(m) else 1.0) * self.summary[m][s]["mean"]
                              for s in self.systems]) for m in self.measures}
        for a in range(len(self.measures)):
            for b in range(a + 1, len(self.measures)):
                ma, mb = self.measures[a], self.measures[b]
                self.agreement.append({"measures": [ma, mb],
                                       "kendall_tau": kendall_tau(means[ma], means[mb]),
                                       "rbo": expected_rbo(means[ma], means[mb])})

    # ------------------------------------------------------------------ access

    def p_values(self, measure: str) -> dict[tuple[str, str], float]:
        """``{(system, other): p-value}`` of one measure's tests (corrected where a correction
        applies)."""
        return {(r["system"], r["other"]): (r["p_value_corrected"] if r["p_value_corrected"]
                                            is not None else r["test"].p_value)
                for r in self.tests if r["measure"] == _canonical(measure)}

    def describe(self) -> Message:
        """One line: the test, the correction, alpha, the queries, the intervals, and the
        permutations and seed (or, for the randomization test, which p-values were exact)."""
        n = sorted(set(self.n_queries.values()))
        queries = "/".join(str(v) for v in n) or "0"
        correction = ("none (Tukey's HSD controls the family-wise error)" if self.multi
                      else self.correction)
        against = message("against baseline ", as_id(self.baseline)) if self.baseline \
            else "all pairs"
        return message(f"{_TEST_NAMES[self.test]}, ", against, f", correction {correction}, "
                       f"alpha {self.alpha:g}, {queries} queries, {percent(self.confidence)} "
                       f"intervals ({self.interval})", self._resampling())

    def _resampling(self) -> str:
        """The end of :meth:`describe`: permutations and seed where something is random; for
        the randomization test, which p-values are exact (all ``2**n`` sign vectors)."""
        seed = f", seed {self.seed}"
        if self.test != "randomization":
            random = self.test in ("bootstrap", "randomized-tukey") or self.interval == "bootstrap"
            return f", {self.permutations} permutations{seed}" if random else ""
        exact = [r["test"].details["permutations"] for r in self.tests
                 if r["test"].details["exact"]]
        if not exact:
            return f", {self.permutations} permutations{seed}"
        low, high = min(exact), max(exact)
        vectors = f"{low} sign vectors" if low == high else f"{low} to {high} sign vectors"
        if len(exact) < len(self.tests):
            return (f", exact for {len(exact)} of {len(self.tests)} tests ({vectors}), "
                    f"{self.permutations} permutations for the others{seed}")
        if self.interval == "bootstrap":
            return f", exact ({vectors}), {self.permutations} bootstrap resamples{seed}"
        return f", exact ({vectors})"

    def legend(self) -> Message:
        """What the markers mean, the example made of this comparison's own labels."""
        from .stats.multi import joined_labels

        labels = list(self.labels.values())[1:3] or ["b"]
        marked = joined_labels(labels, len(self.labels))
        return message(f"x^{marked}: significantly better than "
                       + " and ".join(f"system {label}" for label in labels) + " (",
                       joined(message(f"{v} = ", as_id(k)) for k, v in self.labels.items()),
                       ")")

    # ------------------------------------------------------------------ writers

    def _cell(self, measure: str, system: str, style: str, digits: int) -> str:
        entry = self.summary[measure][system]
        text = decimal_text(entry["mean"], digits)
        mark = entry["markers"]
        if style == "markdown":
            return text + (f"<sup>{mark}</sup>" if mark else "")
        if style == "latex":
            best = max(self.systems, key=lambda s: (-1 if _lower_is_better(measure) else 1)
                       * self.summary[measure][s]["mean"])
            text = rf"\textbf{{{text}}}" if system == best else text
            return text + (f"$^{{{mark}}}$" if mark else "")
        return text + (f"^{mark}" if mark else "")

    def _rows(self, digits: int) -> list[list[str]]:
        rows = []
        for r in self.tests:
            t = r["test"]
            adj = r["p_value_corrected"]
            rows.append([r["measure"], r["system"], r["other"],
                         decimal_text(t.mean_difference, digits, signed=True),
                         f"[{decimal_text(t.ci_low, digits, signed=True)}, "
                         f"{decimal_text(t.ci_high, digits, signed=True)}]",
                         decimal_text(t.statistic, 3), _p(t.p_value),
                         "-" if adj is None else _p(adj),
                         decimal_text(t.effect_size, 2, signed=True),
                         f"{t.wins}/{t.ties}/{t.losses}",
                         "*" if r["significant"] else ""])
        return rows

    def _test_header(self) -> list[str]:
        adj = "p adj" if self.correction == "none" else f"p ({self.correction})"
        return ["measure", "system", "vs", "diff", f"{percent(self.confidence)} CI", "statistic",
                "p", adj, "d", "W/T/L", "sig"]

    def to_table(self, digits: int = 4) -> str:
        """Aligned plain text: means with markers, then one line per test, groups, warnings."""
        check_digits(digits)
        header = ["system", *self.measures]
        body = [[f"{self.labels[s]} {one_line(s)}",
                 *(self._cell(m, s, "text", digits) for m in self.measures)] for s in self.systems]
        lines = [f"comparison: {self.describe()}", *_aligned([header, *body]), self.legend(), ""]
        tests = [[row[0], one_line(row[1]), one_line(row[2]), *row[3:]]
                 for row in self._rows(digits)]
        lines += _aligned([self._test_header(), *tests])
        if self.groups:
            lines += ["", "groups (systems sharing a letter are not significantly different):"]
            lines += [f"  {m}: " + ", ".join(f"{s} {g}" for s, g in gs.items())
                      for m, gs in self.groups.items()]
        lines += self._warning_lines("warning: ")
        lines.append(f"conventions: {self.conventions.describe()}")
        return "\n".join(lines) + "\n"

    def _warning_lines(self, prefix: str) -> list[str]:
        return ([""] + [f"{prefix}{w}" for w in self.warnings]) if self.warnings else []

    def to_markdown(self, digits: int = 4) -> str:
        """Markdown: the means with superscript markers, the tests, groups, risk, warnings,
        the precision and the conventions."""
        check_digits(digits)
        md = markdown_text  # ids and measure names show as text, never as markup
        lines = ["| system | " + " | ".join(map(md, self.measures)) + " |",
                 "|---|" + "---:|" * len(self.measures)]
        lines += [f"| {self.labels[s]} {md(s)} | " + " | ".join(
            self._cell(m, s, "markdown", digits) for m in self.measures) + " |"
            for s in self.systems]
        lines += ["", f"Markers: {md(self.legend())}. Test: {md(self.describe())}.", ""]
        head = self._test_header()
        lines += ["| " + " | ".join(map(md, head)) + " |",
                  "|" + "---|" * 3 + "---:|" * (len(head) - 3)]
        lines += ["| " + " | ".join(map(md, row)) + " |" for row in self._rows(digits)]
        if self.groups:
            lines += ["", "Groups (systems sharing a letter are not significantly different): "
                      + "; ".join(f"{md(m)}: " + ", ".join(f"{md(s)} {g}" for s, g in gs.items())
                                  for m, gs in self.groups.items())]
        if self.risk:
            lines += ["", f"Risk against {md(self.baseline)} (alpha = {self.risk_alpha:g}): "
                      + "; ".join(f"{md(m)}: " + ", ".join(
                          f"{md(s)} URisk {decimal_text(v['urisk'], 4, signed=True)}, "
                          f"TRisk {decimal_text(v['trisk'], 2, signed=True)}"
                          for s, v in rs.items()) for m, rs in self.risk.items())]
        lines += [md(line) for line in self._warning_lines("- Warning: ")]
        lines += ["", _precision(digits) + ".", "",
                  f"Conventions: {md(self.conventions.describe())}"]
        return "\n".join(lines) + "\n"

    def to_latex(self, digits: int = 4) -> str:
        """A LaTeX ``tabular`` of the means, best in bold, superscript markers as in papers;
        the markers' legend, the test, the warnings, the precision and the conventions in
        comments below."""
        check_digits(digits)
        cols = "l" + "r" * len(self.measures)
        lines = [r"\begin{tabular}{" + cols + "}", r"\hline",
                 "System & " + " & ".join(latex_text(m) for m in self.measures) + r" \\",
                 r"\hline"]
        lines += [f"({self.labels[s]}) {latex_text(s)} & " + " & ".join(
            self._cell(m, s, "latex", digits) for m in self.measures) + r" \\" for s in self.systems]
        lines += [r"\hline", r"\end{tabular}",
                  "% " + latex_text(self.legend()).replace("\\^{}", "^"),
                  "% " + latex_text(self.describe())]
        lines += ["% warning: " + latex_text(w) for w in self.warnings]
        lines += ["% " + _precision(digits),
                  "% conventions: " + latex_text(self.conventions.describe())]
        return "\n".join(lines) + "\n"

    def to_csv(self) -> str:
        """One line per test, full precision, with the settings that other formats print in
        their header: ``correction``, ``alpha``, ``confidence`` (of ``ci_low``/``ci_high``),
        ``seed``, ``permutations`` (sign vectors, resamples or shuffles this test evaluated;
        empty for tests that draw none) and ``exact`` (randomization: every sign vector
        enumerated; Wilcoxon: the exact null distribution; empty for the other tests)."""
        head = ["measure", "system", "other", "test", "statistic", "p_value", "p_value_corrected",
                "mean_difference", "ci_low", "ci_high", "effect_size", "wins", "ties", "losses",
                "n", "significant", "correction", "alpha", "confidence", "seed", "permutations",
                "exact"]
        lines = [",".join(head)]
        for r in self.tests:
            t = r["test"]
            adj = r["p_value_corrected"]
            lines.append(",".join([*(csv_field(r[k]) for k in ("measure", "system", "other")),
                                   t.test,
                                   *(repr(float(v)) for v in (t.statistic, t.p_value)),
                                   "" if adj is None else repr(adj),
                                   *(repr(float(v)) for v in (t.mean_difference, t.ci_low,
                                                              t.ci_high, t.effect_size)),
                                   str(t.wins), str(t.ties), str(t.losses), str(t.n),
                                   str(r["significant"]).lower(), self.correction,
                                   repr(self.alpha), repr(self.confidence), str(self.seed),
                                   *_draws(t.test, t.details)]))
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain Python values (NaN and infinities as None)."""
        from . import __version__

        return plain({
            "rankwise": __version__,
            "settings": {"test": self.test, "correction": self.correction, "alpha": self.alpha,
                         "seed": self.seed, "permutations": self.permutations,
                         "confidence": self.confidence, "interval": self.interval,
                         "power": self.power, "baseline": self.baseline,
                         "risk_alpha": self.risk_alpha},
            "conventions": self.conventions.to_dict(),
            "systems": self.systems, "labels": self.labels, "measures": self.measures,
            "queries": self.n_queries,
            "summary": self.summary,
            "tests": [{"measure": r["measure"], "system": r["system"], "other": r["other"],
                       **r["test"].to_dict(), "p_value_corrected": r["p_value_corrected"],
                       "significant": r["significant"]} for r in self.tests],
            "anova": {m: a.to_dict() for m, a in self.anova.items()},
            "groups": self.groups, "risk": self.risk, "agreement": self.agreement,
            "warnings": self.warnings,
        })

    def to_json(self, indent: int | None = None) -> str:
        """:meth:`to_dict` as JSON."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def __repr__(self) -> str:
        return (f"Comparison(systems={self.systems}, measures={self.measures}, "
                f"test={self.test!r}, correction={self.correction!r})")


def _undefined(test: str, x: np.ndarray, y: np.ndarray, confidence: float) -> Any:
    """``test`` where it has no value: NaN statistic, p-value and interval; the counts of
    ``x - y``."""
    from .stats.paired import PairedTest, cohens_d, paired_differences, win_tie_loss

    d, _, allowance, scale = paired_differences(x, y)
    nan = float("nan")
    return PairedTest(test, nan, nan, len(d), float(d.mean()) * scale if len(d) else nan, nan,
                      nan, confidence, cohens_d(d), *win_tie_loss(d, allowance))


def _draws(test: str, details: dict[str, Any]) -> tuple[str, str]:
    """The ``permutations`` and ``exact`` CSV fields of one test from its ``details``."""
    draws = details.get("permutations", details.get("resamples"))
    exact = details.get("exact") if test == "randomization" else (
        details["method"] == "exact" if test == "wilcoxon" else None)
    return ("" if draws is None else str(draws), "" if exact is None else str(exact).lower())


def _canonical(measure: str) -> str:
    from .measures import parse_measure

    return str(parse_measure(measure))


def _better_first(outcome: Any) -> Any:
    """A test on a lower-is-better measure with wins and losses in the measure's direction: a
    win is a query where the system's value is lower (its error smaller). The sign test's
    statistic, the number of wins, follows; its two-sided p-value is symmetric."""
    from dataclasses import replace

    statistic = float(outcome.losses) if outcome.test == "sign" else outcome.statistic
    return replace(outcome, wins=outcome.losses, losses=outcome.wins, statistic=statistic)


def _lower_is_better(measure: str) -> bool:
    from .measures import parse_measure

    return not parse_measure(measure).spec.higher_is_better


def _examples(ids: np.ndarray) -> Message:
    return message(joined(as_id(q) for q in ids[:_EXAMPLES]),
                   f", ... ({len(ids) - _EXAMPLES} more)" if len(ids) > _EXAMPLES else "")


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                       enumerate(zip(r, widths))).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def _precision(digits: int) -> str:
    """How a comparison's Markdown and LaTeX round: means, differences and intervals to
    ``digits`` decimals, statistics to 3, p-values to 4 and effect sizes to 2."""
    return (f"Means, differences and intervals rounded to {digits} "
            f"decimal{'' if digits == 1 else 's'}, statistics to 3, p-values to 4, effect "
            "sizes to 2 (CSV and JSON hold every digit)")


def _p(p: float) -> str:
    if math.isnan(p):
        return "nan"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"
