"""Small shared helpers for the tests: write text files into a temporary folder."""

from __future__ import annotations

import gzip
from pathlib import Path


def write(folder: Path, name: str, text: str | bytes, compress: bool = False) -> str:
    """Write ``text`` to ``folder/name`` (gzip-compressed when asked) and return the path."""
    data = text.encode() if isinstance(text, str) else text
    path = folder / name
    path.write_bytes(gzip.compress(data) if compress else data)
    return str(path)
