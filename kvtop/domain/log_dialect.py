"""What an engine's startup log looks like, as each engine package describes it to the reader.

`kvtop.sources.engine_logs` reads any log line by line; each engine contributes a `LogDialect`
(`kvtop/domain/engines/<id>/log_lines.py`): the lines it recognises per rank (a trigger substring and a
handler filling that rank's fields), the whole-log lines (its printed arguments, its version line,
decisions that change sizing), the shape of its launch command, how a line names its rank, and how a
rank's fields become its typed `RankLog`. Pure text: nothing here reads a file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from kvtop.domain.engine_log import RankKey, RankLog
from kvtop.domain.engines.catalogue import EngineId
from kvtop.domain.log_args import ArgValue

Fields = dict[str, list[Any]]
RankHandler = Callable[[str, Fields], bool]
RankTuple = tuple[int | None, int | None, int | None, int | None, int | None]
"""(dp, tp, pp, ep, worker): a hashable rank while reading, made a `RankKey` at the end."""
RankReader = Callable[[str], "tuple[int, RankTuple] | None"]
"""A line's head -> (where the engine's rank prefix starts in it, the rank it names), or None."""

_TAG = re.compile(r"(?<![A-Za-z])(DP|TP|PP|EP)(\d{1,5})(?!\d)")


def single(name: str, pattern: re.Pattern[str], convert: Callable[[str], Any]) -> RankHandler:
    """A rank handler appending every match of `pattern` (its group 1, converted) to field `name`."""

    def handle(text: str, fields: Fields) -> bool:
        found = [convert(match.group(1)) for match in pattern.finditer(text)]
        fields[name].extend(found)
        return bool(found)

    return handle


@lru_cache(maxsize=1024)
def rank_from_tags(tags: str, worker: str | None) -> RankTuple:
    """The rank `DP1 TP3 EP3` (or `EngineCore_DP0 Worker_TP1`) names, with a global worker rank if given."""
    ranks = {name: int(number) for name, number in _TAG.findall(tags)}
    return (
        ranks.get("DP"),
        ranks.get("TP"),
        ranks.get("PP"),
        ranks.get("EP"),
        int(worker) if worker else None,
    )


@dataclass
class LogFacts:
    """Whole-log facts gathered while reading (mutable; frozen into `EngineLog` at the end)."""

    server_args: dict[str, ArgValue] = field(default_factory=dict)
    engine_config: dict[str, ArgValue] = field(default_factory=dict)
    engine_version: str | None = None
    engine_version_line: int | None = None
    decisions: list[str] = field(default_factory=list)
    desktop: str | None = None  # what a line proves a desktop shares the card (the engine's words); `--desktop`
    line_number: int = 0  # the physical line being read (1-based), for the version's source

    def stated_version(self, version: str) -> None:
        """Keep the first version a line states, and where."""
        if self.engine_version is None:
            self.engine_version, self.engine_version_line = version, self.line_number

    def decided(self, decision: str) -> None:
        """A sizing decision the engine printed (`field=value`), once."""
        if decision not in self.decisions:
            self.decisions.append(decision)


LogHandler = Callable[[str, LogFacts], bool]


def version_line(pattern: re.Pattern[str]) -> LogHandler:
    """A whole-log handler keeping the release a version line states (`pattern`'s group 1)."""

    def read(line: str, facts: LogFacts) -> bool:
        match = pattern.search(line)
        if match:
            facts.stated_version(match.group(1))
        return match is not None

    return read


@dataclass(frozen=True)
class LogDialect:
    """One engine's startup-log vocabulary."""

    engine: EngineId
    rank_handlers: tuple[tuple[str, RankHandler], ...]  # (trigger substring, handler of one rank's line)
    log_handlers: tuple[tuple[str, LogHandler], ...]  # (trigger substring, handler of a whole-log line)
    launch: re.Pattern[str]  # a pasted launch command of this engine (from its entry point on)
    own_failures: re.Pattern[str] | None  # a refused start in the engine's own words (counts as its line)
    freeze: Callable[[RankKey, Fields], RankLog]
    # A prefix naming the process's global rank (group 1), for engines whose lines carry no DP/TP tags
    # (TensorRT-LLM's `[RANK 3]`): the rank is kept as `RankKey.worker`.
    rank_prefix: re.Pattern[str] | None = None
    # A date written other than ISO (named groups y, m, d), e.g. TensorRT-LLM's `[12/20/2025-04:20:04]`.
    date: re.Pattern[str] | None = None
    # A refused start in the engine's own words, with or without an exception name before it (vLLM V0's
    # `The model's max seq len (N) is larger than …`, TensorRT-LLM's `Executor creation failed due to
    # insufficient GPU memory`): the quoted error starts at the phrase, and the line counts as the engine's.
    refusals: tuple[str, ...] = ()
    # The engine's own "the server is up" line: an error after it is not a refused start.
    ready: tuple[str, ...] = ()
    # Words a line that launches the engine holds (a cheap test before `launch` is searched).
    launch_words: tuple[str, ...] = ()
    # A launch naming its model positionally (`vllm serve MODEL`): group 1 is the model.
    positional_model: re.Pattern[str] | None = None
    # How a line's prefix names its rank (SGLang's `[… DP1 TP3]`, vLLM's `(Worker_TP1 pid=…)`), read only
    # when the line's head holds `rank_hint`; the earliest prefix of any engine wins.
    rank_reader: RankReader | None = None
    rank_hint: str = ""
    # The engine's own words for a start that failed, quoted from there on (vLLM's `EngineCore failed to start`).
    start_failures: tuple[str, ...] = ()
    # The prefix its log lines carry (a line of that shape no handler took is counted as unrecognised).
    line_shape: re.Pattern[str] | None = None
