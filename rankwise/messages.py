"""Messages for a person that name ids (query ids, doc ids, run names, file names).

A :class:`Message` is a ``str``, the plain text that the command line prints and that
``warnings`` hold, which also knows where each id stands in it. The HTML report isolates
every id it knows from the text around it, so that a bidi control inside an id (a
right-to-left override, U+202E) reorders the id alone, never the rest of the message.
Build one with :func:`message` from text and :func:`as_id`; an f-string of a message is
plain text again.
"""

from __future__ import annotations

from typing import Any, Iterable


class Message(str):
    """Text whose ids are known: ``pieces`` alternate the text around the ids and the ids
    (every odd-numbered piece is an id, the first and the last are text); the string is the
    pieces joined.

    >>> m = message("left out: ", joined(as_id(q) for q in ["q1", "q2"]), ".")
    >>> m, m.pieces
    ('left out: q1, q2.', ('left out: ', 'q1', ', ', 'q2', '.'))
    """

    pieces: tuple[str, ...]

    def __new__(cls, *pieces: str) -> "Message":
        if len(pieces) % 2 == 0:
            raise ValueError("a message's pieces alternate text and ids, text first and last")
        made = super().__new__(cls, "".join(pieces))
        made.pieces = pieces
        return made


def message(*parts: str) -> Message:
    """``parts`` one after another as one message: plain strings are text, and the ids of the
    parts that are messages stay known."""
    pieces = [""]
    for part in parts:
        more = part.pieces if isinstance(part, Message) else (part,)
        pieces[-1] += more[0]
        pieces += more[1:]
    return Message(*pieces)


def as_id(identifier: Any) -> Message:
    """One id (a query id, a run name, ...) as a message."""
    return Message("", str(identifier), "")


def joined(parts: Iterable[str], separator: str = ", ") -> Message:
    """``parts`` (text or messages) with ``separator`` between them."""
    out: list[str] = []
    for part in parts:
        out += [separator, part] if out else [part]
    return message(*out)


def pieces(text: str) -> list[str]:
    """``text`` cut around its ids (text, id, text, ..., text); a plain string is one piece.

    >>> pieces(message("run ", as_id("bm25"), " is ahead")), pieces("no id")
    (['run ', 'bm25', ' is ahead'], ['no id'])
    """
    return list(text.pieces) if isinstance(text, Message) else [str(text)]


def isolated(identifier: Any) -> str:
    """An id between U+2068 and U+2069, for text that must stay a string (a page's title):
    with a U+2068 before it for each U+2069 it holds unopened and a U+2069 after it for each
    isolate it leaves open, so that its own isolates pair among themselves and the outer pair
    stays whole (a paragraph separator in the id still ends the paragraph).

    >>> print(ascii(isolated("x")), ascii(isolated("x\\u2069\\u202e")), ascii(isolated("\\u2067")))
    '\\u2068x\\u2069' '\\u2068\\u2068x\\u2069\\u202e\\u2069' '\\u2068\\u2067\\u2069\\u2069'
    """
    text = str(identifier)
    still_open = unopened = 0
    for character in text:
        if "\u2066" <= character <= "\u2068":
            still_open += 1
        elif character == "\u2069":
            if still_open:
                still_open -= 1
            else:
                unopened += 1
    return "\u2068" * (unopened + 1) + text + "\u2069" * (still_open + 1)
