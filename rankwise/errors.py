"""Errors raised for bad input.

Every problem with the user's data is an :class:`InputError` naming where it was found
(file and line, or frame row), the offending value and what was expected, so that the
CLI can print one line and exit with status 2.
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad input: names the source, the line or row, the offending value and what was expected.

    Parameters
    ----------
    message
        What was wrong and what was expected.
    source
        The file name or a description such as ``"run DataFrame"``.
    line
        1-based line number in a file, or the row (0-based, as the frame's position) in a frame;
        ``None`` when the problem is not tied to one.
    value
        The offending text, shown shortened.
    unit
        ``"line"`` for files (``run.txt:17: ...``), ``"row"`` or ``"key"`` for in-memory data.
    """

    def __init__(self, message: str, source: str | None = None, line: int | None = None,
                 value: str | None = None, unit: str = "line") -> None:
        self.reason = message
        self.source = source
        self.line = line
        self.value = value
        self.unit = unit
        super().__init__(self._format())

    def _format(self) -> str:
        where = ""
        if self.line is None:
            where = f"{self.source}: " if self.source is not None else ""
        elif self.unit == "line":
            where = f"{self.source}:{self.line}: " if self.source is not None else f"line {self.line}: "
        else:
            where = f"{self.source or 'input'}, {self.unit} {self.line}: "
        text = f"{where}{self.reason}"
        if self.value is not None:
            shown = self.value if len(self.value) <= 80 else self.value[:77] + "..."
            text += f" (got {shown!r})"
        return text


class MeasureError(InputError):
    """An unknown or malformed measure name, or a parameter out of range."""
