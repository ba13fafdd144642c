"""What the fuzz tests share: seeded random measure strings, every spelling the grammar of
``rankwise.measures.parse`` reads (names, aliases, ``@K``, parameters, gain maps, trec_eval's
``P_10``, ``ndcg_cut.5,10``, ``ndcg.1=3,2=9``, ...) and mutations of them; and which numpy
warnings are float64's own overflow."""

from __future__ import annotations

import random
import re

from rankwise.measures import FAMILIES
from rankwise.measures.parse import ALIASES, TREC_CUTOFF_FAMILIES

#: Values of each measure parameter, as written in a measure string.
PARAMETER_VALUES = {
    "rel": ["1", "2", "0.5", "0", "-1"],
    "gain": ["linear", "exp", "exponential", "{1:1,2:3}", "{0:0,1:2,2:5}"],
    "dcg": ["exp-log2", "log2"],
    "base": ["2", "10", "1.5"],
    "p": ["0.5", "0.8", "0.95"],
    "beta": ["1", "0.5", "2"],
    "max_grade": ["2", "4"],
    "levels": ["{0.2,0.5,0.8}", "{0,1}", "{0.5}"],
    "docs": ["0", "10"],
}
WEIGHT_VALUES = ["1", "-1", "0", "2.5"]  # Utility's rel_ret, nonrel_ret, ...
INT_CUTOFFS = ["1", "3", "5", "10", "20", "100", "1000"]
RECALL_LEVELS = ["0", "0.1", "0.5", "0.50", "1"]
MULTIPLES = ["0.2", "0.5", "1", "2"]
#: Numbers written oddly: huge, beyond a double, not finite, non-ASCII digits, signs, bases.
ODD_NUMBERS = ["9" * 40, "2147483648", "1e400", "1e308", "1e-400", "-0", "0x10", "nan", "inf",
               "-inf", "-1", "0", "١٠", "１０", "²", "1_0", "+5", ".5", "5.", "1e3", "0.0"]
ODD_CHARACTERS = ["@", "(", ")", "{", "}", "=", ",", ".", "_", "-", ":", " ", "\t", "\x00",
                  "١", "１", "é", "\u00a0", "\u2028", "\ufeff", "e", "9"]


def family_names(family: str) -> list[str]:
    """The names that spell ``family`` without fixing a parameter: its own and its aliases."""
    return [family] + [alias for alias, (target, fixed) in ALIASES.items()
                       if target == family and not fixed]


def cutoffs(family: str) -> list[str]:
    """Cutoffs ``family`` reads: ranks, recall levels or multiples of R."""
    spec = FAMILIES[family]
    if spec.cutoff_type is int:
        return INT_CUTOFFS
    return RECALL_LEVELS if spec.cutoff_max == 1.0 else MULTIPLES


def _value(rng: random.Random, values: list[str]) -> str:
    """One of ``values``, or now and then an odd number."""
    return rng.choice(ODD_NUMBERS if rng.random() < 0.15 else values)


def generic_measure(rng: random.Random) -> str:
    """``name``, ``name@K``, ``name(k=v,...)@K`` of a registered family or an alias."""
    family = rng.choice(sorted(FAMILIES))
    spec = FAMILIES[family]
    text = rng.choice(family_names(family))
    if rng.random() < 0.3:
        text = rng.choice([text.lower(), text.upper(), text])
    params = list(spec.params) + (["dcg"] if "gain" in spec.params else [])
    if params and rng.random() < 0.4:
        chosen = rng.sample(params, rng.randint(1, min(2, len(params))))
        text += "(" + ",".join(f"{k}={_value(rng, PARAMETER_VALUES.get(k, WEIGHT_VALUES))}"
                               for k in chosen) + ")"
    if spec.cutoff == "required" or (spec.cutoff == "optional" and rng.random() < 0.6):
        text += "@" + _value(rng, cutoffs(family))
    return text


def trec_measure(rng: random.Random) -> str:
    """trec_eval's spellings: ``P_10``, ``P.5,10``, ``ndcg.1=3``, ``rbp.p=0.5``, ``official``."""
    form = rng.randrange(8)
    if form == 0:
        name = rng.choice(sorted(TREC_CUTOFF_FAMILIES))
        return f"{name}_{rng.choice(cutoffs(TREC_CUTOFF_FAMILIES[name][0]))}"
    if form == 1:
        name = rng.choice(sorted(TREC_CUTOFF_FAMILIES))
        values = cutoffs(TREC_CUTOFF_FAMILIES[name][0])
        return f"{name}." + ",".join(rng.sample(values, rng.randint(1, 3)))
    if form == 2:
        pairs = ",".join(f"{g}={rng.choice(['0', '1', '3', '9', '2.5'])}"
                         for g in rng.sample(["0", "1", "2", "3"], rng.randint(1, 3)))
        return f"{rng.choice(['ndcg', 'ndcg_rel', 'Rndcg', 'G'])}.{pairs}"
    if form == 3:
        return f"{rng.choice(['rbp', 'rbp_resid'])}.p={rng.choice(PARAMETER_VALUES['p'])}"
    if form == 4:
        return "utility." + ",".join(rng.choice(WEIGHT_VALUES) for _ in range(4))
    if form == 5:
        return "11pt_avg." + ",".join(rng.sample(RECALL_LEVELS, rng.randint(1, 3)))
    if form == 6:
        return f"set_F.{rng.choice(PARAMETER_VALUES['beta'])}"
    names = [f.trec_name for f in FAMILIES.values() if f.trec_name]
    return rng.choice(names + sorted(TREC_CUTOFF_FAMILIES) + ["official", "all_trec"])


def valid_measure(rng: random.Random) -> str:
    """A measure string written as the grammar says (parameters may still be out of range)."""
    return generic_measure(rng) if rng.random() < 0.6 else trec_measure(rng)


def mutate(rng: random.Random, text: str) -> str:
    """One random mutation: a character deleted, doubled, swapped or inserted, a number made
    odd, parentheses nested or emptied, blanks added, the case changed, the text cut."""
    i = rng.randrange(len(text) + 1)
    kind = rng.randrange(10)
    if kind == 0 and text:
        return text[:max(i - 1, 0)] + text[i:]
    if kind == 1 and text:
        i = min(i, len(text) - 1)
        return text[:i] + text[i] + text[i:]
    if kind == 2 and len(text) > 1:
        i = min(i, len(text) - 2)
        return text[:i] + text[i + 1] + text[i] + text[i + 2:]
    if kind == 3:
        return text[:i] + rng.choice(ODD_CHARACTERS) + text[i:]
    if kind == 4:
        digits = [j for j, c in enumerate(text) if c.isdigit()]
        if digits:
            j = rng.choice(digits)
            end = j
            while end < len(text) and (text[end].isdigit() or text[end] == "."):
                end += 1
            return text[:j] + rng.choice(ODD_NUMBERS) + text[end:]
        return text + "@" + rng.choice(ODD_NUMBERS)
    if kind == 5:
        if "(" in text:
            return text.replace("(", "((", 1).replace(")", "))", 1)
        return text.replace("@", "()@", 1) if "@" in text else text + "(" + text + ")"
    if kind == 6:
        empty = rng.choice(["()", "(=)", "(,)", "(rel)", "(rel=)", "(=1)", "(gain={})",
                            "(gain={:})", "(levels={})", "(p=0.5,p=0.5)"])
        head, at, tail = text.partition("@")
        return head + empty + at + tail
    if kind == 7:
        blank = rng.choice([" ", "\t", "\n", "\r", "\u3000"])
        return rng.choice([blank + text, text + blank, text[:i] + blank + text[i:]])
    if kind == 8:
        return rng.choice([text.upper(), text.lower(), "-m" + text, "-m " + text, text * 2])
    return text[:i]


def measure_string(rng: random.Random, mutation_rate: float = 0.6) -> str:
    """A measure string: valid, or mutated up to three times (``mutation_rate`` of them)."""
    text = valid_measure(rng)
    if rng.random() < mutation_rate:
        for _ in range(rng.randint(1, 3)):
            text = mutate(rng, text)
    return text


def edge_strings() -> list[str]:
    """Every family with each odd number as its cutoff and as each of its parameters, and
    trec_eval's parameter forms with each odd number: the edges the random strings reach
    only now and then."""
    out = []
    for family, spec in sorted(FAMILIES.items()):
        cut = "" if spec.cutoff != "required" else "@" + cutoffs(family)[1]
        for odd in ODD_NUMBERS:
            if spec.cutoff != "none":
                out.append(f"{family}@{odd}")
            out += [f"{family}({key}={odd}){cut}" for key in spec.params]
    for odd in ODD_NUMBERS:
        out += [f"{name}_{odd}" for name in sorted(TREC_CUTOFF_FAMILIES)]
        out += [f"{name}.{odd}" for name in sorted(TREC_CUTOFF_FAMILIES) + ["set_F", "11pt_avg"]]
        out += [f"ndcg.1={odd}", f"ndcg.{odd}=1", f"rbp.p={odd}", f"utility.{odd},-1,0,0",
                f"nDCG(gain={{1:{odd}}})", f"nDCG(gain={{{odd}:1}})", f"11pt_avg(levels={{{odd}}})"]
    return out


#: Numbers beyond this (scores of 1e200 squared by RMSE, Utility weights or gains of 1e300)
#: overflow float64 in a measure's arithmetic, as trec_eval's doubles do: the values are
#: infinite (or NaN, from inf - inf) and numpy warns. Accepted where the input holds them.
OVERFLOWING = 1e150
_FLOAT64_OVERFLOW = re.compile(r"overflow encountered in (?!cast)|invalid value encountered in "
                               r"(add|subtract|multiply|divide|reduce|matmul)")


def float64_overflow(message: str) -> bool:
    """Whether a numpy warning is arithmetic overflowing float64 (not a cast, not 0/0...)."""
    return bool(_FLOAT64_OVERFLOW.match(message))
