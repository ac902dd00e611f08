"""Hold the cyclic garbage collector off while a burst of acyclic objects is built.

A cluster refresh builds ~100,000 short-lived dicts, lists and frozen values (1,000 nodes: the decoded
answers, the typed series, the joined view, the rows). Each 700 allocations start a collection, and the
older generations' collections walk every live object again, the last view's included:
benchmarks/cluster_scale_bench.py measured the collector at about half of a refresh's CPU (404 → 189 ms per
refresh with it held off). None of those objects forms a cycle, so reference counting frees them all
the same; the collector resumes afterwards with the allocations counted, and collects then.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_pauses = 0  # pauses running now, in any thread
_was_on = False  # whether the collector was on when the first of them began


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector held off inside the block; when the last pause running ends (the TUI reads in a
    worker thread while it draws), it is turned back on if it was on when the first began."""
    global _pauses, _was_on
    with _lock:
        if _pauses == 0:
            _was_on = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _was_on:
                gc.enable()
