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
        self._entries: OrderedDict[Hashable, tuple[object, V]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, owner: object, compute: Callable[[], V]) -> V:
        """The value for `key`; computed (outside the lock) when missing.

        `owner` is the object `key` names by `id()`: the entry holds it, and a hit must be for
        the very same object.
        """
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] is owner:
                self._entries.move_to_end(key)
                return entry[1]
        value = compute()  # exceptions are not remembered: a bad input fails the same way again
        with self._lock:
            self._entries[key] = (owner, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
