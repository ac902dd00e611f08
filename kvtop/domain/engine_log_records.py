"""The values every engine's startup log is made of: rounded figures, ranks, refused starts.

Every memory figure SGLang and vLLM print is bytes / 2**30, whatever the label ("GB" in SGLang,
"GiB" in vLLM, "GB" in old vLLM), and it is rounded. A figure is therefore kept as `Measured`:
the bytes it stands for and the interval of bytes that print the same text. Counts (tokens,
blocks, requests) are exact ints. Each engine's own lines are its package's `RankLog` subclass
(`kvtop/domain/engines/<engine>/log_records.py`).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Literal

from pydantic import BaseModel, ConfigDict

from kvtop.domain.redact import RedactedStr
from kvtop.domain.wording import GIB, MIB

_NUMBER = re.compile(r"([-+]?)(\d+)(?:\.(\d*))?")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _decimal(text: str) -> Decimal:
    try:
        return Decimal(text)
    except InvalidOperation:
        raise ValueError(f"not a number: {text!r}") from None


class Measured(_Frozen):
    """A rounded memory figure from a log: '8.23' GB means [8.225, 8.235] GiB, in bytes."""

    value_bytes: int
    low_bytes: int
    high_bytes: int
    decimals: int
    text: str
    """The number as printed, e.g. '22.5'."""
    unit: str = "GiB"
    """The label as printed ('GB' or 'GiB'); both mean 2**30 bytes in these engines."""

    @classmethod
    def from_text(cls, text: str, *, unit: str = "GiB", decimals: int | None = None) -> Measured:
        """Bytes and rounding interval of a printed GiB figure (`decimals` defaults to those printed).

        Exact integer arithmetic: '8.23' is 823/100 GiB, its interval ±1/200 GiB.
        """
        match = _NUMBER.fullmatch(text)
        if match is None:
            raise ValueError(f"not a number: {text!r}")
        sign, whole, fraction = match.group(1), match.group(2), match.group(3) or ""
        places = len(fraction) if decimals is None else decimals
        digits = max(places, len(fraction))
        scaled = int(whole + fraction.ljust(digits, "0")) * (-1 if sign == "-" else 1)
        denominator = 2 * 10**digits
        half = 10 ** (digits - places)
        return cls(
            value_bytes=(2 * scaled * GIB + 10**digits) // denominator,
            low_bytes=((2 * scaled - half) * GIB) // denominator,
            high_bytes=-((-(2 * scaled + half) * GIB) // denominator),
            decimals=places,
            text=text,
            unit=unit,
        )

    @classmethod
    def from_mib(
        cls,
        text: str,
        *,
        printed: Literal["rounded", "floored"] = "rounded",
        point: Literal["nearest", "down"] = "nearest",
    ) -> Measured:
        """Bytes and interval of a printed MiB figure (unit 'MiB'): one parser for every engine's MiB lines.

        `printed="rounded"`: a `%.Nf` of bytes / 2**20, '0.844' is [0.8435, 0.8445] MiB (floor/ceil to whole bytes).
        `printed="floored"`: an integer print of `bytes >> 20` (or `/ 1024 / 1024` as `%zu`), '75' is [75, 76) MiB.
        `point`: how `value_bytes`, the point figure, is rounded where the printed MiB is not a whole number of bytes
        ('0.843' MiB is 883,949.568 B): "nearest" (883,950) or "down" (883,949); the interval is the same either way.
        """
        match = _NUMBER.fullmatch(text)
        if match is None:
            raise ValueError(f"not a number: {text!r}")
        sign, whole, fraction = match.group(1), match.group(2), match.group(3) or ""
        if printed == "floored":
            if fraction or sign == "-":
                raise ValueError(f"not a whole MiB: {text!r}")
            mib = int(whole)
            return cls(value_bytes=mib * MIB, low_bytes=mib * MIB, high_bytes=(mib + 1) * MIB - 1,
                       decimals=0, text=text, unit="MiB")  # fmt: skip
        places = len(fraction)
        scaled = int(whole + fraction) * (-1 if sign == "-" else 1)  # the figure × 10**places
        denominator = 2 * 10**places
        doubled = 2 * scaled * MIB + (10**places if point == "nearest" else 0)
        return cls(
            value_bytes=doubled // denominator,
            low_bytes=((2 * scaled - 1) * MIB) // denominator,
            high_bytes=-((-(2 * scaled + 1) * MIB) // denominator),
            decimals=places,
            text=text,
            unit="MiB",
        )

    @property
    def in_gib(self) -> float:
        """The figure as a number of GiB, as the engine meant it (a float for its arithmetic; text: wording.gib)."""
        return self.value_bytes / GIB

    def contains(self, num_bytes: int) -> bool:
        """Whether `num_bytes` would print as this figure."""
        return self.low_bytes <= num_bytes <= self.high_bytes


class Rounded(_Frozen):
    """A rounded plain number (a utilisation, a concurrency): the value and its interval."""

    text: str
    decimals: int

    @classmethod
    def from_text(cls, text: str, *, decimals: int | None = None) -> Rounded:
        """Keep the printed text; `decimals` defaults to those printed."""
        _decimal(text)
        printed = len(text.split(".", 1)[1]) if "." in text else 0
        return cls(text=text, decimals=printed if decimals is None else decimals)

    @property
    def value(self) -> float:
        return float(self.text)

    @property
    def low(self) -> float:
        return float(_decimal(self.text) - Decimal(5).scaleb(-(self.decimals + 1)))

    @property
    def high(self) -> float:
        return float(_decimal(self.text) + Decimal(5).scaleb(-(self.decimals + 1)))


class RankKey(_Frozen):
    """Which process printed a line: ranks from `[… DP1 TP3 EP3]` or `(Worker_TP0_EP0 pid=…)`.

    All None means the line carried no rank (a single-GPU log, or an excerpt without prefixes).
    `worker` is vLLM's global `VllmWorker rank=N`, whose TP/PP split the line does not say.
    """

    dp: int | None = None
    tp: int | None = None
    pp: int | None = None
    ep: int | None = None
    worker: int | None = None

    @property
    def unranked(self) -> bool:
        """Whether the line carried no rank at all (every field None)."""
        return all(value is None for value in (self.dp, self.tp, self.pp, self.ep, self.worker))

    @property
    def label(self) -> str:
        """'DP0 TP3 EP3', 'rank=1', or 'unranked'."""
        parts = [f"{name.upper()}{value}" for name, value in self._pairs() if value is not None]
        if self.worker is not None:
            parts.append(f"rank={self.worker}")
        return " ".join(parts) or "unranked"

    def sort_key(self) -> tuple[int, ...]:
        """Unranked first, then by DP, PP, TP, EP, worker."""
        values = (self.dp, self.pp, self.tp, self.ep, self.worker)
        return tuple(-1 if value is None else value for value in values)

    def _pairs(self) -> tuple[tuple[str, int | None], ...]:
        return (("dp", self.dp), ("pp", self.pp), ("tp", self.tp), ("ep", self.ep))


class RankLog(_Frozen):
    """What one process of an engine printed; each engine package subclasses it with its own lines."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rank: RankKey


class StartupFailure(_Frozen):
    """An error line showing the engine refused to start (KV sizing, memory, `failed to start`).

    `text` is the error as printed, from the exception name or message on (prefix removed).
    """

    rank: RankKey
    text: RedactedStr  # quoted from a file: redacted and one terminal-safe line
