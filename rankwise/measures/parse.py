"""Parse measure strings in three dialects into :class:`Measure` objects.

* ir_measures: ``P@10``, ``P(rel=2)@5``, ``AP@100``, ``nDCG(gain=exp)@10``, ``IPrec@0.5``, and
  its own spellings of the gain, ``nDCG(dcg=exp-log2)`` and ``nDCG(gains={0:0,1:1,2:5})``;
* trec_eval: ``P_10``, ``ndcg_cut_10``, ``map``, ``recip_rank``, ``iprec_at_recall_0.50``,
  ``unj_5``, ``Rprec_mult_0.20``, ``rbp``, ``infAP``, families with parameters ``P.5,10``,
  ``ndcg.1=3,2=9``, ``rbp.p=0.95``, ``utility.2,-1,0,0``, ``11pt_avg.0.2,0.5,0.8``, bare
  families ``P`` (its default cutoffs), and the sets ``official`` and ``all_trec``;
* ranx: ``precision@10``, ``ndcg@10``, ``ndcg_burges@10``, ``map@100``, ``mrr@10``,
  ``hit_rate@10``, ``f1@10``, ``r-precision``.

A small grammar, never ``eval``. Unknown names get an error listing the closest known ones.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import replace
from typing import Any, Iterable

from ..errors import MeasureError
from .registry import FAMILIES, Measure, as_number, make_measure

# lower-case spelling -> (family, fixed parameters)
ALIASES: dict[str, tuple[str, dict[str, Any]]] = {
    "p": ("P", {}), "precision": ("P", {}),
    "r": ("R", {}), "recall": ("R", {}),
    "f1": ("F1", {}), "f": ("F1", {}),
    "success": ("Success", {}), "hit_rate": ("Success", {}), "hitrate": ("Success", {}),
    "hr": ("Success", {}),
    "rr": ("RR", {}), "mrr": ("RR", {}), "recip_rank": ("RR", {}),
    "ap": ("AP", {}), "map": ("AP", {}), "map_cut": ("AP", {}),
    "gm_map": ("gm_map", {}),
    "rprec": ("Rprec", {}), "r-precision": ("Rprec", {}), "r_precision": ("Rprec", {}),
    "bpref": ("Bpref", {}),
    "ndcg": ("nDCG", {}), "ndcg_cut": ("nDCG", {}), "ndcg_burges": ("nDCG", {"gain": "exp"}),
    "dcg": ("DCG", {}), "dcg_burges": ("DCG", {"gain": "exp"}),
    "idcg": ("IDCG", {}), "ideal_dcg": ("IDCG", {}), "cg": ("CG", {}),
    "err": ("ERR", {}),
    "rrsum": ("RWRR", {}), "rwrr": ("RWRR", {}), "arhr": ("ARHR", {}),
    "iprec": ("IPrec", {}), "iprec_at_recall": ("IPrec", {}),
    "11pt_avg": ("11pt_avg", {}), "11pt": ("11pt_avg", {}),
    "numq": ("NumQ", {}), "num_q": ("NumQ", {}),
    "numret": ("NumRet", {}), "num_ret": ("NumRet", {}),
    "numrel": ("NumRel", {}), "num_rel": ("NumRel", {}),
    "numrelret": ("NumRelRet", {}), "num_rel_ret": ("NumRelRet", {}),
    "hits": ("Hits", {}),
    "setp": ("SetP", {}), "set_p": ("SetP", {}),
    "setr": ("SetR", {}), "set_recall": ("SetR", {}),
    "setf": ("SetF", {}), "set_f": ("SetF", {}),
    "mae": ("MAE", {}), "rmse": ("RMSE", {}),
    "relp": ("RelP", {}), "relative_p": ("RelP", {}),
    "setrelp": ("SetRelP", {}), "set_relative_p": ("SetRelP", {}),
    "setap": ("SetAP", {}), "set_map": ("SetAP", {}),
    "numnonreljudgedret": ("NumNonRelJudgedRet", {}),
    "num_nonrel_judged_ret": ("NumNonRelJudgedRet", {}),
    "gm_bpref": ("gm_bpref", {}),
    "judged": ("Judged", {}), "unjudged": ("Unjudged", {}),
    "rbp": ("RBP", {"p": 0.9}),  # trec_eval's persistence (ir_measures' RBP: 0.8)
    "rbp_resid": ("RBPResid", {"p": 0.9}),
    "infap": ("infAP", {}),
    "utility": ("Utility", {}), "bing": ("binG", {}), "rndcg": ("Rndcg", {}),
}

# trec_eval families that take a list of cutoffs, with their defaults
TREC_CUTOFF_FAMILIES: dict[str, tuple[str, tuple[float, ...]]] = {
    "P": ("P", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "recall": ("R", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "ndcg_cut": ("nDCG", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "map_cut": ("AP", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "success": ("Success", (1, 5, 10)),
    "iprec_at_recall": ("IPrec", tuple(i / 10 for i in range(11))),
    "relative_P": ("RelP", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    "unj": ("Unjudged", (5, 10, 20)),
    "Rprec_mult": ("RprecMult", tuple(i / 5 for i in range(1, 11))),
}

OFFICIAL = ("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
            "recip_rank", "iprec_at_recall", "P")
ALL_TREC = OFFICIAL + ("recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
                       "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut",
                       "relative_P", "success", "set_P", "set_relative_P", "set_recall",
                       "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid",
                       "unj")  # in trec_eval's order of printing (less relstring, after P)
#: trec_eval 10's all_trec measures that rankwise does not compute (see docs/conformance.md)
ALL_TREC_NOT_COMPUTED = ("relstring",)

_GENERIC = re.compile(r"^(?P<name>[A-Za-z0-9_\-]+)(?:\((?P<params>[^()]*)\))?(?:@(?P<cutoff>[^@]+))?$")
_TREC_CUT = re.compile(r"^(?P<family>P|recall|ndcg_cut|map_cut|success|iprec_at_recall|relative_P"
                       r"|unj|Rprec_mult)_(?P<cutoff>\d+(?:\.\d+)?)$")


def parse_measures(specs: Iterable[str | Measure] | str,
                   conventions: Any = None) -> list[Measure]:
    """Parse measure strings (or pass Measure objects through); duplicates removed, order kept.

    ``conventions``: a profile name also reads that peer's own measure names, as the peer
    means them (:meth:`rankwise.conventions.Profile.measure_names`): under ``"ranx"``,
    ``recall`` is ranx's whole-list recall where it is otherwise trec_eval's family of
    recall cutoffs. A ``Conventions`` value or None changes nothing. Every function that
    takes measures and conventions parses them here.

    >>> [str(m) for m in parse_measures(["P_10", "ndcg_cut.5,10", "mrr@10", "map"])]
    ['P@10', 'nDCG@5', 'nDCG@10', 'RR@10', 'AP']
    >>> [str(m) for m in parse_measures(["recall", "recall@10"], conventions="ranx")]
    ['SetR', 'R@10']
    """
    specs = _spec_list(specs)
    if isinstance(conventions, str):
        from ..conventions import profile

        specs = profile(conventions).measure_names(specs)
    out: list[Measure] = []
    for spec in specs:
        for measure in ([spec] if isinstance(spec, Measure) else _parse_one(spec.strip())):
            if measure not in out:
                out.append(measure)
    if not out:
        raise MeasureError("no measure given", source="measure")
    return out


def _spec_list(specs: Any) -> list[str | Measure]:
    """``specs`` (a name, a Measure, or an iterable of them) as a list; anything else raises
    :class:`MeasureError` naming it (``str()`` made names of them: ``5``, ``['AP']``, and
    bytes were read as their numbers, ``b"AP"`` as measures ``65`` and ``80``)."""
    if isinstance(specs, (str, Measure)):
        return [specs]
    if isinstance(specs, (bytes, bytearray)) or not isinstance(specs, Iterable):
        raise _not_a_name(specs, "measures are a name, a Measure or a list of them")
    specs = list(specs)
    for spec in specs:
        if not isinstance(spec, (str, Measure)):
            raise _not_a_name(spec, "a measure is a name (a string) or a Measure")
    return specs


def _not_a_name(value: Any, message: str) -> MeasureError:
    return MeasureError(message, source="measure",
                        value=f"{type(value).__name__} {value!r}"[:80])


def parse_measure(text: str) -> Measure:
    """Parse one string naming exactly one measure."""
    if not isinstance(text, str):
        raise _not_a_name(text, "a measure is a name (a string)")
    measures = _parse_one(text.strip())
    if len(measures) != 1:
        raise MeasureError("names several measures, expected one", source="measure", value=text)
    return measures[0]


#: ranx's relevance level after a name (``map-l2``), read under the ranx profile only
_RANX_LEVEL = re.compile(r"^.+-l[0-9]+$")


def _parse_one(text: str) -> list[Measure]:
    if _RANX_LEVEL.match(text):
        raise MeasureError("ranx's relevance level -lN is read with conventions='ranx'; "
                           "otherwise write rel=N, e.g. AP(rel=2), nDCG(rel=2)@10",
                           source="measure", value=text)
    if text in ("official", "all_trec"):
        return [m for name in (OFFICIAL if text == "official" else ALL_TREC)
                for m in _parse_one(name)]
    match = _TREC_CUT.match(text)
    if match:
        family = TREC_CUTOFF_FAMILIES[match["family"]][0]
        return [make_measure(family, match["cutoff"], text=text)]
    if text in TREC_CUTOFF_FAMILIES:
        family, cutoffs = TREC_CUTOFF_FAMILIES[text]
        return [make_measure(family, c, text=text) for c in cutoffs]
    if "." in text and "@" not in text and "(" not in text:
        return _parse_trec_params(text)
    match = _GENERIC.match(text)
    if not match:
        raise _unknown(text)
    family, fixed = _lookup(match["name"], text)
    params = dict(fixed)
    params.update(_parse_params(match["params"], text) if match["params"] else {})
    return [make_measure(family, match["cutoff"], params, text=text)]


def _lookup(name: str, text: str) -> tuple[str, dict[str, Any]]:
    if name in FAMILIES:
        return name, {}
    alias = ALIASES.get(name.lower())
    if alias is None:
        raise _unknown(text)
    return alias


#: trec_eval families that take a gain map (``ndcg.1=3,2=9``), and their families here
_GAIN_MAPPED = {"ndcg": "nDCG", "ndcg_rel": "ndcg_rel", "Rndcg": "Rndcg", "G": "G"}


def _parse_trec_params(text: str) -> list[Measure]:
    """trec_eval's ``family.params`` form: ``P.5,10``, ``ndcg.1=3,2=9``, ``set_F.0.5``."""
    name, _, rest = text.partition(".")
    values = [v for v in rest.split(",") if v]
    if name in TREC_CUTOFF_FAMILIES:  # in ascending order, as trec_eval prints them
        family = TREC_CUTOFF_FAMILIES[name][0]
        return [make_measure(family, v, text=text) for v in sorted(values, key=_number_first)]
    return [replace(measure, trec_text=text.replace(".", "_", 1))
            for measure in _parse_trec_parameters(name, values, text)]


def _number_first(text: str) -> tuple[int, float, str]:
    """Sort key of cutoffs as written: numbers ascending, anything else after them."""
    try:
        return 0, float(text), text
    except ValueError:
        return 1, 0.0, text


def _parse_trec_parameters(name: str, values: list[str], text: str) -> list[Measure]:
    """A trec_eval measure with a parameter string (``ndcg.1=3,2=9``, ``utility.2,-1,0,0``)."""
    if name in _GAIN_MAPPED and all("=" in v for v in values):
        gain_map = {}
        for v in values:
            grade, _, gain = v.partition("=")
            _put_once(gain_map, _number(grade, text), _number(gain, text), "grade", text)
        return [make_measure(_GAIN_MAPPED[name], None, {"gain": gain_map}, text=text)]
    if name in ("rbp", "rbp_resid") and len(values) == 1 and values[0].startswith("p="):
        return [make_measure(ALIASES[name][0], None, {"p": _number(values[0][2:], text)},
                             text=text)]
    if name == "utility" and len(values) == 4:  # trec_eval's four coefficients, in order
        weights = ("rel_ret", "nonrel_ret", "rel_missed", "nonrel_missed")
        given = {k: _number(v, text) for k, v in zip(weights, values)}
        return [make_measure("Utility", None, given, text=text)]
    if name == "11pt_avg" and values:  # recall levels, e.g. trec_eval 8's 3-point average
        levels = tuple(_number(v, text) for v in values)
        return [make_measure("11pt_avg", None, {"levels": levels}, text=text)]
    if name == "set_F" and len(values) == 1:
        return [make_measure("SetF", None, {"beta": _number(values[0], text)}, text=text)]
    raise _unknown(text)


def _parse_params(text: str, whole: str) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for item in _split_top_level(text):
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key:
            raise MeasureError("parameters are written name=value", source="measure", value=whole)
        if key == "dcg":  # ir_measures spelling of the gain
            key, value = "gain", {"exp-log2": "exp", "log2": "linear"}.get(value, value)
        elif key == "gains":  # ir_measures' gain map: nDCG(gains={0:0,1:1,2:5})
            key = "gain"
        if key in params:
            raise MeasureError(f"parameter {key!r} given twice", source="measure", value=whole)
        if value.startswith("{") and value.endswith("}") and ":" not in value:
            params[key] = tuple(_number(v.strip(), whole) for v in value[1:-1].split(",")
                                if v.strip())
        elif value.startswith("{") and value.endswith("}"):
            params[key] = _parse_map(value[1:-1], whole)
        else:
            params[key] = value
    return params


def _parse_map(text: str, whole: str) -> dict[float, float]:
    out = {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = pair.partition(":")
        if not sep:
            raise MeasureError("a gain map is written {grade:gain,...}", source="measure",
                               value=whole)
        _put_once(out, _number(key, whole), _number(value, whole), "grade", whole)
    return out


def _put_once(mapping: dict, key: Any, value: Any, what: str, whole: str) -> None:
    """``mapping[key] = value``, refusing a key given twice (which one would win?)."""
    if key in mapping:
        raise MeasureError(f"{what} {key:g} given twice in the gain map", source="measure",
                           value=whole)
    mapping[key] = value


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return parts if text.strip() else []  # "()" holds none; "(,)" two empty ones (refused)


def _number(text: str, whole: str) -> float:
    try:
        return as_number(text)
    except ValueError:
        raise MeasureError("expected a number", source="measure", value=whole) from None


def known_names() -> list[str]:
    """Every accepted spelling of a measure family (for suggestions and ``rankwise measures``)."""
    return sorted(set(FAMILIES) | set(ALIASES) | set(TREC_CUTOFF_FAMILIES) | {"official", "all_trec"})


def _unknown(text: str) -> MeasureError:
    from ..preferences import is_preference_measure

    if is_preference_measure(text):
        return MeasureError("a preference measure: it needs preference judgments, -R prefs "
                            "or -R qrels_prefs (rankwise.evaluate_preferences)",
                            source="measure", value=text)
    base = re.split(r"[@(._]", text, maxsplit=1)[0] if text else text
    pool = known_names()
    close = difflib.get_close_matches(text, pool, n=5, cutoff=0.5) or \
        difflib.get_close_matches(base, pool, n=5, cutoff=0.5)
    hint = f"; closest: {', '.join(close)}" if close else "; `rankwise measures` lists them all"
    return MeasureError(f"unknown measure{hint}", source="measure", value=text)
