"""Small shared helpers for the tests: write text files into a temporary folder; take every
run as too large for memory; record the calls of a function."""

from __future__ import annotations

import gzip
from pathlib import Path


def write(folder: Path, name: str, text: str | bytes, compress: bool = False) -> str:
    """Write ``text`` to ``folder/name`` (gzip-compressed when asked) and return the path."""
    data = text.encode() if isinstance(text, str) else text
    path = folder / name
    path.write_bytes(gzip.compress(data) if compress else data)
    return str(path)


def parquet_folder(folder: Path, files: dict) -> str:
    """A folder holding ``files`` (paths relative to it: pyarrow tables written as Parquet,
    or bytes written as they are)."""
    import pyarrow.parquet as pq

    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            pq.write_table(content, path)
    return str(folder)


def memory_short(monkeypatch) -> None:
    """Take every run as too large for one pass in memory (streamed from its file, or in
    blocks), while the judgments are still read."""
    from rankwise import api
    from rankwise.core import memory

    monkeypatch.setattr(api, "BLOCKWISE_MIN_ROWS", 0)
    monkeypatch.setattr(memory, "available_bytes", lambda: 0)
    monkeypatch.setattr(memory, "ALWAYS_FITS_BYTES", 0)
    monkeypatch.setenv("RANKWISE_SKIP_MEMORY_CHECK", "1")  # for reading the judgments


def spy(monkeypatch, owner, name: str) -> list:
    """Replace ``owner.name`` by a wrapper that records the positional arguments of each
    call; returns the record."""
    calls: list = []
    real = getattr(owner, name)
    monkeypatch.setattr(owner, name, lambda *a, **k: calls.append(a) or real(*a, **k))
    return calls
