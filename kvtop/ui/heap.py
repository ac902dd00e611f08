"""Keep the cyclic garbage collector off the objects a TUI session lives with.

Modules, styles, themes, models and sources built before the app runs stay alive for the
whole session; left to the collector, every full collection walks all of them again (≈ 1 ms
per refresh tick on the 8-GPU demo, measured by benchmarks/ui_bench.py). Collecting once and
then freezing moves them out of its reach; refcounting still frees anything that dies.
Call it once, right before `App.run()`, in a process that runs one app (not in tests).
"""

from __future__ import annotations

import gc


def settle_heap() -> None:
    """Collect what is garbage now, then exempt every surviving object from later collections."""
    gc.collect()
    gc.freeze()
