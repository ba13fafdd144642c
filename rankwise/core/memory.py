"""Memory settings for the duration of one evaluation: large temporaries without page-fault
storms.

The engine makes a few dozen arrays of ``rows × 8`` bytes. Two process defaults make each of
them cost far more than the arithmetic on it (measured at 10M rows on a 2-core Linux machine,
end to end 7.3 s → 3.6 s):

* numpy asks the kernel to back large arrays with transparent huge pages
  (``madvise(MADV_HUGEPAGE)``); where the kernel's THP ``defrag`` setting is ``madvise``, the
  first touch of every fresh array then stalls on memory compaction (an 80 MB array: 0.35 s
  instead of 0.07 s);
* glibc's allocator gives every block above its mmap threshold a fresh mapping and unmaps it
  on free, so each temporary is faulted in page by page again.

:func:`large_arrays` turns off numpy's huge-page advice and keeps large blocks in glibc's heap
while it runs, then restores numpy's setting, glibc's default thresholds and trims the heap,
so the host process keeps no extra memory afterwards. Elsewhere it does nothing.
:func:`one_malloc_arena`, for the command line's own process only, also keeps worker threads
on glibc's main arena (a setting that cannot be undone). :func:`arrow_memory_on_demand`,
called when rankwise is imported, keeps pyarrow's allocator from committing its arenas up
front with huge-page advice.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Iterator

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
_GLIBC_DEFAULT_THRESHOLD = 128 * 1024
_LARGE = 1 << 30


def _glibc():
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here, not at import (numpy has usually imported it already)

    try:  # the symbols already loaded into the process (libc among them): no library search
        libc = ctypes.CDLL(None)
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


def _hugepage_switch():
    import numpy as np

    for module in ("_core", "core"):
        multiarray = getattr(getattr(np, module, None), "multiarray", None)
        if multiarray is not None and hasattr(multiarray, "_set_madvise_hugepage"):
            return multiarray._set_madvise_hugepage
    return None


@contextlib.contextmanager
def large_arrays() -> Iterator[None]:
    """Run the enclosed block with the memory settings above, restoring them afterwards."""
    libc = _glibc()
    switch = _hugepage_switch()
    previous = switch(False) if switch else None
    if libc is not None:
        libc.mallopt(_M_MMAP_THRESHOLD, _LARGE)
        libc.mallopt(_M_TRIM_THRESHOLD, _LARGE)
    try:
        yield
    finally:
        if switch is not None:
            switch(previous)
        if libc is not None:
            libc.mallopt(_M_MMAP_THRESHOLD, _GLIBC_DEFAULT_THRESHOLD)
            libc.mallopt(_M_TRIM_THRESHOLD, _GLIBC_DEFAULT_THRESHOLD)
            libc.malloc_trim(0)


#: pyarrow's allocator (mimalloc) option read once, when pyarrow is loaded.
ARROW_COMMIT_OPTION = "MIMALLOC_ARENA_EAGER_COMMIT"


def arrow_memory_on_demand() -> None:
    """Have pyarrow's allocator (mimalloc) commit memory as it is used, unless pyarrow is
    already loaded or ``MIMALLOC_ARENA_EAGER_COMMIT`` is set. By default it commits each
    1 GiB arena it reserves up front, advised for transparent huge pages; where the kernel's
    THP ``defrag`` setting is ``madvise`` (a common default), first touches then stall on
    memory compaction. Measured on 2 cores, fresh processes, alternating: reading the 1M x 100
    judgments (60M lines) 3.2-3.9 s to 2.2 s; the 100k x 100 evaluation 2.33-2.83 s to
    2.24-2.45 s, peak 2.0-2.1 to 1.7-1.9 GB; 1M x 100 streamed 29.3, 30.7 s to 28.6, 27.8 s.
    An environment variable, since mimalloc reads its options only once: called when
    rankwise is imported, it affects pyarrow in this process (and in processes it starts)."""
    import os

    if "pyarrow" not in sys.modules:
        os.environ.setdefault(ARROW_COMMIT_OPTION, "0")


def one_malloc_arena() -> None:
    """For a process rankwise owns (the command line): every thread allocates from glibc's
    main arena, which :func:`large_arrays` keeps large blocks in. Otherwise each worker
    thread allocates from an arena of its own, whose heaps cannot hold arrays over 64 MB
    and are unmapped when they empty, so its temporaries are faulted in afresh chunk after
    chunk (100k x 100, alternating fresh processes: streamed 3.45-3.53 s to 2.99-3.00 s,
    minor page faults 450k to 175k, peak 1.29 to 1.03 GB; in memory about 5% faster). glibc
    fixes the limit once it is set, so :func:`rankwise.evaluate` never sets it in a process
    it does not own; ``MALLOC_ARENA_MAX=1`` in the environment does the same for a script.
    Elsewhere it does nothing."""
    libc = _glibc()
    if libc is not None:
        libc.mallopt(_M_ARENA_MAX, 1)


#: Peak memory of an evaluation per byte of TREC text read (measured: 1.6 GB for 0.49 GB of
#: run and qrels text at 10M rows), with a margin.
BYTES_PER_INPUT_BYTE = 4
#: Memory needs this small are not checked (reading the system's figures costs more than
#: evaluating a small file: 1,000 small runs read them 1,000 times).
ALWAYS_FITS_BYTES = 64 << 20


def available_bytes() -> int | None:
    """Memory the system can still give (Linux ``MemAvailable``); None where unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def check_fits(source: str, text_bytes: int, kind: str = "run") -> None:
    """Refuse, with a clear message, an input that cannot be evaluated in the memory left
    (about :data:`BYTES_PER_INPUT_BYTE` times its text; needs up to
    :data:`ALWAYS_FITS_BYTES` pass unchecked).

    Set ``RANKWISE_SKIP_MEMORY_CHECK=1`` to try anyway. ``kind``: ``"run"`` or ``"qrels"``
    (judgments are held whole, streamed or not), for the way around that the message names.
    """
    import os

    from ..errors import InputError

    needed = BYTES_PER_INPUT_BYTE * text_bytes
    if needed <= ALWAYS_FITS_BYTES or os.environ.get("RANKWISE_SKIP_MEMORY_CHECK") == "1":
        return
    available = available_bytes()
    if available is not None and needed > available:
        around = ("evaluate it streamed, chunk by chunk of whole queries (rankwise evaluate "
                  "--stream, or rankwise.stream.evaluate_stream; the run must be grouped by "
                  "query: sort it by query first if it is not)") if kind == "run" else (
            "judgments are held whole, even with a streamed run: split the judgments and the "
            "run by query and evaluate the parts (each query's values depend on its own rows "
            "only)")
        raise InputError(
            f"{text_bytes / 1e9:.1f} GB of text needs about {needed / 1e9:.1f} GB of memory to "
            f"evaluate, but {available / 1e9:.1f} GB is available; {around}, or set "
            "RANKWISE_SKIP_MEMORY_CHECK=1 to try anyway", source=source)
