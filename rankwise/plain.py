"""Plain Python values, CSV fields, Markdown and LaTeX text for the outputs that leave the
library (JSON, CSV, Markdown, LaTeX, the HTML report's data)."""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

import numpy as np


def plain(value: Any) -> Any:
    """``value`` with numpy scalars and arrays as Python numbers and lists, tuples as lists,
    dict keys as strings, and NaN and infinities as None (JSON has no such numbers).

    >>> plain({1: (np.float64("nan"), np.int32(2)), "b": np.array([True])})
    {'1': [None, 2], 'b': [True]}
    """
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return value


def percent(share: float) -> str:
    """``share`` as a percentage with every digit it has: the shortest decimal that reads
    back as the float (its ``repr``), moved two places, so neither rounding (``{:.0%}`` made
    0.999 "100%") nor binary noise (``0.57 * 100`` is ``56.99999999999999``) shows.

    >>> percent(0.95), percent(0.975), percent(0.999), percent(0.57), percent(1e-7)
    ('95%', '97.5%', '99.9%', '57%', '0.00001%')
    """
    digits = Decimal(repr(float(share))).scaleb(2).normalize()
    return f"{digits:f}%"


def check_digits(digits: Any) -> None:
    """Raise ValueError unless ``digits`` (the decimals a table prints) is a whole number, 0
    or more (``f"{x:.{-1}f}"`` raised "Format specifier missing precision").

    >>> check_digits(4)
    >>> check_digits(-1)
    Traceback (most recent call last):
    ...
    ValueError: digits must be a whole number of decimals, 0 or more (got -1)
    """
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 0:
        raise ValueError(f"digits must be a whole number of decimals, 0 or more (got "
                         f"{digits!r})")


def csv_field(text: str) -> str:
    """One CSV field: quoted (inner quotes doubled) when it holds a comma, a quote or a line
    break (RFC 4180)."""
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n\r') else text


#: Characters escaped in Markdown text: the backslash first (so the escapes added are not
#: escaped again), then the markup of GitHub-flavoured Markdown (CommonMark escapes any ASCII
#: punctuation with a backslash; ``&``, ``<`` and ``>`` as entities, for inline HTML).
_MARKDOWN = [("\\", "\\\\"), ("&", "&amp;"), ("<", "&lt;"), (">", "&gt;")] + \
    [(c, "\\" + c) for c in "|`*_[]~"]


def markdown_text(text: str) -> str:
    r"""Text shown as itself in Markdown (a table cell, a line of prose): markup characters
    escaped, line breaks flattened, so ids never turn into links, emphasis or columns.

    >>> print(markdown_text("a|b [x](y) *z*"))
    a\|b \[x\](y) \*z\*
    """
    for plain_char, escaped in _MARKDOWN:
        text = text.replace(plain_char, escaped)
    return " ".join(text.split())


def one_line(text: str) -> str:
    r"""An id as an aligned text table shows it: as it is, or, where it holds a line break, a
    tab or another character that does not print, escaped as Python writes it, so that its
    row stays one line.

    >>> print(one_line("a b"), one_line("a\nb\tc"))
    a b a\nb\tc
    """
    return text if text.isprintable() else repr(text)[1:-1]


#: Characters LaTeX would not typeset as themselves (``<``, ``>`` and ``|`` too: the default
#: font encoding prints other glyphs for them).
_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
          "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\^{}", "<": r"\textless{}",
          ">": r"\textgreater{}", "|": r"\textbar{}"}


#: Pairs of characters the default fonts join into one glyph (``--`` a dash, two quotes a
#: double quote, ``,,`` a low quote, ``!``` and ``?``` inverted marks): an empty group
#: between them keeps both.
_LIGATURES = re.compile(r"(?<=-)(?=-)|(?<=`)(?=`)|(?<=')(?=')|(?<=,)(?=,)|(?<=[!?])(?=`)")


def latex_text(text: str) -> str:
    r"""Text typeset as itself by LaTeX: its special characters escaped, ligatures broken
    (``run--2`` stays two hyphens, not a dash), line breaks and other whitespace flattened to
    one space (a blank line would end the paragraph inside a table cell, and a line break
    end a ``%`` comment, the rest of the line then typeset).

    >>> print(latex_text("50% of a_b\n\nc"))
    50\% of a\_b c
    >>> print(latex_text("bm25--rm3 ''q'' ,,x"))
    bm25-{}-rm3 '{}'q'{}' ,{},x
    """
    return _LIGATURES.sub("{}", " ".join("".join(_LATEX.get(c, c) for c in text).split()))


def text_ids(ids: Any) -> np.ndarray:
    """Ids as an object array of Python strings, to match, sort or join by: numpy's
    fixed-width strings (``astype(str)``) drop trailing NUL characters, so ``'q'`` and
    ``'q\\x00'`` would become one id.

    >>> text_ids(np.array(["q", "q\\x00", 7], dtype=object)).tolist()
    ['q', 'q\\x00', '7']
    """
    ids = np.asarray(ids, dtype=object)
    if all(isinstance(i, str) for i in ids):
        return ids
    return np.array([str(i) for i in ids.tolist()], dtype=object)


#: From this magnitude on, tables print a number in scientific notation: fixed notation
#: wrote a mean of 1e307 with 308 digits.
SCIENTIFIC_FROM = 1e15


def decimal_text(value: float, digits: int = 4, signed: bool = False) -> str:
    """``value`` with ``digits`` decimals (``signed``: with its sign, ``+`` too); from
    :data:`SCIENTIFIC_FROM` on in scientific notation, ``digits`` decimals in the mantissa;
    NaN (undefined) as ``nan``, without a sign (Python's ``+nan`` suggested a direction).

    >>> decimal_text(0.25), decimal_text(-0.1, signed=True), decimal_text(4.2e307)
    ('0.2500', '-0.1000', '4.2000e+307')
    >>> decimal_text(float("nan")), decimal_text(float("inf"), signed=True)
    ('nan', '+inf')
    >>> decimal_text(float("nan"), signed=True)
    'nan'
    """
    if math.isnan(value):
        return "nan"
    style = "e" if math.isfinite(value) and abs(value) >= SCIENTIFIC_FROM else "f"
    return f"{value:{'+' if signed else ''}.{digits}{style}}"


def shortest_number(x: float) -> str:
    """A number as given (a grade, score, parameter or gain): the shortest text that reads
    back as it (``2`` for 2.0; ``:g`` made 1234567 ``1.23457e+06`` and p = 0.9999999 ``1``;
    ``int`` wrote a gain of 2^1018 with 307 digits).

    >>> [shortest_number(x) for x in (2.0, 1234567.0, 0.9999999, 1e300, 2.0 ** 1018)]
    ['2', '1234567', '0.9999999', '1e+300', '2.8088955232223686e+306']
    """
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text
