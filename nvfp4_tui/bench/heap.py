"""Handing the C heap's free pages back to the system, for processes that run for hours.

glibc's malloc returns memory to the system only from the top of its main heap. A recording
process churns through buffers of every size (HTTP reads, answer texts, event batches handed to
the snapshot thread) between objects that live on, so the heap fills with free holes that stay
resident. Measured on the demo fleet at time scale 20: after four minutes the main heap held
~39 MiB free (in ~1,700 chunks, most of 40-470 KiB) beside ~17 MiB in use, the free part growing
with every new suite, and the threads' own heaps under 1 MiB each. ``malloc_trim`` gives the
whole free pages inside those holes back (0.2-10 ms a call on that heap).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

TRIM_INTERVAL_S = 10.0  # between two trims of a long-running process


def _find_malloc_trim() -> Callable[[int], int] | None:
    try:
        process = ctypes.CDLL(None)  # the symbols already loaded: the C library among them
    except OSError:
        return None
    trim = getattr(process, "malloc_trim", None)  # glibc only (not musl, macOS or Windows)
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_MALLOC_TRIM = _find_malloc_trim()


def release_free_heap() -> bool:
    """Give the heap's free pages back to the system; False where the C library cannot."""
    if _MALLOC_TRIM is None:
        return False
    _MALLOC_TRIM(0)
    return True
