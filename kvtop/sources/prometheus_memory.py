"""The last answer to each query, so a refresh types again only the answers whose samples changed.

A Prometheus instant query answers whole: every series with its labels and value, each stamped with the
evaluation time (`"value":[1750000100.123,"0.25"]`). Between two refreshes of a cluster most answers
hold the same samples (which engines run where, their capacities, findings, GPU counts); only the
stamps moved, and the ages and KV usage. So the answer's body with its evaluation stamp taken out is
compared, as bytes, with the last one: when equal, the series typed last time are the answer (same
labels, same values, so the same series); kvtop never reads the stamp. Anything else — another stamp
on some sample, a value or label changed, another order — is typed afresh.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable

Series = list[tuple[dict[str, str], float]]
_STAMPED = re.compile(rb'"value":\s*\[([0-9.eE+-]{1,32}),')
#: queries remembered (the cluster reader's 16–19, and a few drilled-into nodes' own queries)
MAX_REMEMBERED = 64


def without_stamp(body: bytes) -> bytes:
    """The body with the first sample's time stamp taken out wherever a sample carries that same stamp
    (an instant query stamps every sample with its evaluation time). Only a sample's `"value": [` is
    followed by a bracket: a label named `value` holds a string."""
    first = _STAMPED.search(body)
    if first is None:
        return body
    prefix = body[first.start() : first.start(1)]
    return body.replace(first.group(0), prefix + b",")


class AnswerMemory:
    """Per query, the last answer's stamp-free body and the series typed from it."""

    def __init__(self, size: int = MAX_REMEMBERED) -> None:
        self._size = size
        self._last: OrderedDict[tuple[str, bool], tuple[bytes, Series]] = OrderedDict()

    def typed(self, key: tuple[str, bool], body: bytes, type_it: Callable[[], Series]) -> Series:
        """The series of `body`: last time's when its samples are the same, else `type_it()` (remembered
        once it returns; an answer it refuses is never remembered)."""
        plain = without_stamp(body)
        last = self._last.get(key)
        if last is not None and last[0] == plain:
            self._last.move_to_end(key)
            return list(last[1])
        series = type_it()
        self._last[key] = (plain, series)
        self._last.move_to_end(key)
        while len(self._last) > self._size:
            self._last.popitem(last=False)
        return list(series)
