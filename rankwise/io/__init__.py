"""Readers, writers and converters: TREC files, frames, dicts and arrays."""

from .arrays import from_arrays
from .frames import to_qrels, to_run
from .tables import Qrels, Run
from .trec import read_qrels, read_run, write_qrels, write_run

__all__ = ["Qrels", "Run", "from_arrays", "read_qrels", "read_run", "to_qrels", "to_run",
           "write_qrels", "write_run"]
