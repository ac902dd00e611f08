"""A small thread-safe memo for the ledger's pure solves, keyed partly by object identity.

A model spec is frozen but not cheaply hashable (it holds the config's lists and maps), so a
key names it by `id()` and the entry keeps the object alive: that id cannot be reused while the
entry exists. Why it matters: a live node re-runs diagnose every tick, and each what-if re-solves
the same model with the same layout; the planner re-solves on every keystroke, often values it
solved a moment ago. Results are immutable values, so handing the same one out twice is safe.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Memo(Generic[V]):
    """Least-recently-used results of a pure function, at most `size` of them."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[Hashable, tuple[tuple[object, ...], V]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable, owners: tuple[object, ...], compute: Callable[[], V]) -> V:
        """The value for `key`; computed (outside the lock) when missing.

        `owners` are the objects `key` names by `id()`: the entry holds them, and a hit must be
        for the very same objects.
        """
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and all(a is b for a, b in zip(entry[0], owners, strict=True)):
                self._entries.move_to_end(key)
                self.hits += 1
                return entry[1]
        value = compute()  # exceptions are not remembered: a bad input fails the same way again
        with self._lock:
            self.misses += 1
            self._entries[key] = (owners, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
