"""Parse engine startup logs into an `EngineLog` (what the log says, nothing computed).

Each engine's own lines are its `LogDialect` (`kvtop/domain/engines/<engine>/log_lines.py`); this
module reads a log once, line by line, and hands every line to the handlers whose trigger it holds.

Prefixes never matter: a line is recognised by a cheap substring check, then its fields are
searched for anywhere in it, so timestamps, journald (`Jan 01 host sglang[123]:`), docker
(`svc-1  | `), ANSI colours and `INFO 01-23 10:00:00 [file.py:123]` all pass through. The rank
comes from `[… DP1 TP3 EP3]` (SGLang) or `(Worker_TP0_EP0 pid=…)` (vLLM). A line ending in a comma
and followed by a bare continuation (a message wrapped by a terminal or a blockquote) is joined
to it. Nothing here raises on strange input: unknown lines are counted, never guessed at.
"""

from __future__ import annotations

import gzip
import io
import re
import stat
import sys
import zlib
from collections import defaultdict
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from kvtop.domain.engine_log import EngineLog, LogText, RankKey, StartupFailure
from kvtop.domain.engines.registry import EngineId, log_dialects
from kvtop.domain.errors import InputError
from kvtop.domain.log_args import parse_call_args, parse_dict_args
from kvtop.domain.log_dialect import LogDialect, LogFacts, LogHandler, RankHandler, RankReader, RankTuple
from kvtop.domain.redact import shown_cut

__all__ = ["parse_call_args", "parse_dict_args", "parse_engine_log", "rank_of", "read_engine_log"]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_CONTINUATION = re.compile(r"\s*(?:[a-z]|\d{1,12}(?:\.\d{1,12})?\s*[A-Za-z(%])")
_DATE = re.compile(r"(?<!\d)(20\d\d)-([01]\d)-([0-3]\d)(?!\d)")
_LAUNCH_MODEL = re.compile(r"(?:--model-path|--model)[ =]([^\s'\"]{1,500})")
_EXCEPTION = r"\b((?:torch\.(?:cuda\.)?)?(?:ValueError|RuntimeError|AssertionError|OutOfMemoryError)):.*"
_FAILURE_TOPIC = re.compile(r"(?i)kv.?cache|memory|mem-fraction|max seq len|cache blocks")
_EXCEPTION_BEFORE = re.compile(r"((?:torch\.(?:cuda\.)?)?[A-Z][A-Za-z]{0,40}(?:Error|Exception)): $")
_FIGURE_CHARS = "0123456789.,"  # a figure an unterminated last line may have cut short
_TRACEBACK_AFTER = re.compile(r",? Traceback \(most recent call last\):.*$")
# Uvicorn's own lines: every engine's HTTP server says it is up with them (what comes after is not a start)
_SERVER_READY = ("Application startup complete", "Uvicorn running on")
_MAX_QUOTE = 400
_MAX_JOINED = 8
_MAX_LINE_CHARS = 256 * 1024  # a log line longer than this is cut (a startup log's longest is its arguments)
_PREFIX_CHARS = 200
_MAX_VALUES = 32  # of one kind per rank, at each end (`_FirstAndLast`)
MAX_LOG_BYTES = 64 << 20  # a startup log is read up to here (its sizing lines come first)
_GZIP_MAGIC = b"\x1f\x8b"  # a rotated or archived log (`engine.log.gz`, `docker logs … | gzip`)
_MAX_LAUNCH_LINES = 64  # continuation lines joined into one pasted launch command
_DATED_WITHIN_LINES = 10_000  # a log's date (its version era) is looked for in its first lines only


class _FirstAndLast(list[Any]):
    """A rank's values of one kind as they are read: the first and the last `_MAX_VALUES`.

    A startup log prints a sizing line a few times per rank, so thousands of one (a log pasted in a
    loop) say nothing more, and every kept value is a candidate the explanation checks. The middle
    is dropped while reading, not at the end: a 64 MiB log of one block-size line held a million
    values (958 MB of RSS) before."""

    def append(self, value: Any) -> None:
        super().append(value)
        if len(self) > 2 * _MAX_VALUES:
            del self[_MAX_VALUES]

    def extend(self, values: Iterable[Any]) -> None:
        for value in values:
            self.append(value)


class _State:
    """Mutable accumulation while reading; frozen into an `EngineLog` at the end."""

    def __init__(self, dialects: tuple[LogDialect, ...]) -> None:
        self.ranks: dict[EngineId, defaultdict[RankTuple, defaultdict[str, list[Any]]]] = {
            dialect.engine: defaultdict(lambda: defaultdict(_FirstAndLast)) for dialect in dialects
        }
        self.hits: dict[EngineId, int] = {dialect.engine: 0 for dialect in dialects}
        self.first_engine: EngineId | None = None
        self.facts = LogFacts()
        self.launch_command: str | None = None
        self.first_date: str | None = None
        self.failures: list[tuple[RankTuple, str]] = []
        self.ready = False  # the server said it is up: errors after this are not a refused start
        self.read_a_value = False  # some line other than a launch command was recognised

    def count(self, engine: EngineId) -> None:
        """One more line recognised as `engine`'s."""
        self.hits[engine] += 1
        self.first_engine = self.first_engine or engine


_Entry = tuple[str, EngineId, LogHandler | None, RankHandler | None]
"""(trigger, engine, whole-log handler or None, per-rank handler or None)."""

# Short substrings shared by many triggers: a line is checked against a bucket's triggers only if
# it holds the bucket's key, so an ordinary line costs ~20 substring checks, not one per trigger.
# A trigger that contains none of the keys gets a bucket of its own (keyed by itself).
_BUCKET_KEYS = (
    "emory", "ache", "oad", "aptur", "lock", "rgs", "length", "tok", "take", "oncurrency", "Init",
    "SWA", "profiled", "budget", "Actual", "LLM engine", "version", "Namespace", "page_size",
)  # fmt: skip


@lru_cache(maxsize=1)
def _vocabulary() -> tuple[tuple[LogDialect, ...], tuple[tuple[str, tuple[_Entry, ...]], ...]]:
    """Every engine's dialect, and their triggers grouped in buckets (built once)."""
    dialects = log_dialects()
    entries: list[_Entry] = []
    for dialect in dialects:
        entries += [(trigger, dialect.engine, handler, None) for trigger, handler in dialect.log_handlers]
        entries += [(trigger, dialect.engine, None, handler) for trigger, handler in dialect.rank_handlers]
    grouped: dict[str, list[_Entry]] = {}
    for entry in entries:
        key = next((key for key in _BUCKET_KEYS if key in entry[0]), entry[0])
        grouped.setdefault(key, []).append(entry)
    return dialects, tuple((key, tuple(members)) for key, members in grouped.items())


# --- lines and ranks ----------------------------------------------------------------------------


def _ends_with_comma(line: str) -> bool:
    return line.endswith(",") or (line[-1:].isspace() and line.rstrip().endswith(","))


def _logical_lines(physical: list[str]) -> Iterator[tuple[str, int]]:
    """Each line with its wrapped continuations joined, and how many physical lines it took."""
    index, total = 0, len(physical)
    while index < total:
        line, used = physical[index], 1
        while (
            used < _MAX_JOINED
            and index + used < total
            and _ends_with_comma(line)
            and _CONTINUATION.match(physical[index + used])
        ):
            line = f"{line.rstrip()} {physical[index + used].strip()}"
            used += 1
        yield line, used
        index += used


_UNRANKED: RankTuple = (None, None, None, None, None)


def _rank_tuple(line: str) -> RankTuple:
    head = line[:_PREFIX_CHARS]  # prefixes (journald and docker included) sit at the start
    readers, prefixes = _rank_readers()
    found = [hit for hint, reader in readers if hint in head and (hit := reader(head)) is not None]
    if found:  # the earliest prefix wins, e.g. `(EngineCore_DP0 pid=1) (Worker_TP1 pid=2)` as one
        return min(found, key=lambda hit: hit[0])[1]
    for pattern in prefixes:  # an engine's own global-rank prefix, e.g. `[RANK 3]`
        match = pattern.search(head)
        if match:
            return (None, None, None, None, int(match.group(1)))
    return _UNRANKED


@lru_cache(maxsize=1)
def _rank_readers() -> tuple[tuple[tuple[str, RankReader], ...], tuple[re.Pattern[str], ...]]:
    """Every engine's rank-prefix readers (with the substring each needs), and its global-rank prefixes."""
    dialects = _vocabulary()[0]
    readers = tuple((d.rank_hint, d.rank_reader) for d in dialects if d.rank_reader is not None)
    return readers, tuple(d.rank_prefix for d in dialects if d.rank_prefix is not None)


def _first_date(line: str) -> str | None:
    """The ISO date a line's prefix carries (`2025-01-23`), or an engine's own date written as ISO."""
    head = line[:_PREFIX_CHARS]
    iso = _DATE.search(head)
    if iso:
        return iso.group()
    for dialect in _vocabulary()[0]:
        match = dialect.date.search(head) if dialect.date is not None else None
        if match:
            return f"{match['y']}-{match['m']}-{match['d']}"
    return None


def _rank_key(rank: RankTuple) -> RankKey:
    dp, tp, pp, ep, worker = rank
    return RankKey(dp=dp, tp=tp, pp=pp, ep=ep, worker=worker)


def rank_of(line: str) -> RankKey:
    """The rank a line's prefix names: `[… DP0 TP3 EP3]` or `(Worker_TP0_EP0 pid=…)`."""
    return _rank_key(_rank_tuple(line))


def _read(line: str, state: _State) -> bool:
    """Apply every handler whose trigger the line contains; whether any took a value."""
    _, buckets = _vocabulary()
    hits = [entry for key, entries in buckets if key in line for entry in entries if entry[0] in line]
    if not hits:
        return False
    took = False
    rank: RankTuple | None = None
    engines: list[EngineId] = []
    for _, engine, handle_log, handle_rank in hits:
        if handle_log is not None:
            if not handle_log(line, state.facts):
                continue
        elif handle_rank is not None:
            if rank is None:
                rank = _rank_tuple(line)
            if not handle_rank(line, state.ranks[engine][rank]):
                continue
        took = True
        if engine not in engines:
            engines.append(engine)
    for engine in engines:  # one count per line and engine
        state.count(engine)
    return took


def _launch(line: str, physical: list[str], next_line: int, state: _State) -> int:
    """A pasted launch command (backslash continuations and indented flag lines joined, from
    `physical[next_line]` on): the extra physical lines it took, or -1 when the line launches no
    engine. The log's lines are indexed, not sliced: a log of launch lines would copy its rest once
    a line (quadratic: 16 MiB of them took 16 s)."""
    for dialect in _vocabulary()[0]:
        if dialect.launch_words and not any(word in line for word in dialect.launch_words):
            continue  # its pattern need not scan the line ("reserved" holds vLLM's "serve", not llama-server)
        match = dialect.launch.search(line)
        if match is None:
            continue
        command, used = match.group().strip(), 0
        following = physical[next_line : next_line + _MAX_LAUNCH_LINES]
        while used < len(following) and (command.endswith("\\") or following[used].lstrip().startswith("--")):
            command = command.rstrip("\\").rstrip() + " " + following[used].strip()
            used += 1
        if state.launch_command is None:
            state.launch_command = command.rstrip("\\").strip()
        state.count(dialect.engine)
        return used
    return -1


@lru_cache(maxsize=1)
def _failure_pattern() -> re.Pattern[str]:
    """An exception about the start, an engine's own "failed to start" words (group 2), or CUDA's OOM."""
    words = "|".join(re.escape(phrase) for dialect in _vocabulary()[0] for phrase in dialect.start_failures)
    return re.compile(_EXCEPTION + (f"|({words}).*" if words else "") + "|CUDA out of memory.*")


@lru_cache(maxsize=1)
def _engine_line() -> re.Pattern[str]:
    """A line in some engine's log format (its prefix): counted as unrecognised when no handler took it."""
    shapes = [dialect.line_shape.pattern for dialect in _vocabulary()[0] if dialect.line_shape is not None]
    return re.compile("|".join(shapes) or r"(?!)")


def _failure(line: str, state: _State) -> bool:
    """Keep an error line that shows a refused start (KV sizing, memory, `failed to start`, or a refusal
    in an engine's own words); once the server said it is up, errors are no longer a refused start."""
    refusal = _refusal(line, state)
    if refusal is None and "rror" not in line and "failed" not in line:
        return False
    match = _failure_pattern().search(line) if "rror" in line or "failed" in line else None
    if match is not None and match.group(1) and not _FAILURE_TOPIC.search(line):
        match = None
    if match is not None:
        text = match.group().strip()
    elif refusal is not None:
        text = refusal
    else:
        return False
    if state.ready:
        return True
    text = _TRACEBACK_AFTER.sub("", text)
    text = shown_cut(text, _MAX_QUOTE)
    for dialect in _vocabulary()[0]:  # a refused start in an engine's own words is that engine's line
        if dialect.own_failures is not None and dialect.own_failures.search(text):
            state.count(dialect.engine)
    if all(text != seen for _, seen in state.failures):
        state.failures.append((_rank_tuple(line), text))
    return True


def _refusal(line: str, state: _State) -> str | None:
    """The refusal an engine states in its own words on this line (from the exception name before the
    phrase, if any, to the end), counted as that engine's line; None when the line holds none."""
    keys, phrases, _ = _markers()
    if not any(key in line for key in keys):  # an ordinary line costs a few substring checks
        return None
    for engine, phrase in phrases:
        start = line.find(phrase)
        if start < 0:
            continue
        state.count(engine)
        named = _EXCEPTION_BEFORE.search(line, max(start - 48, 0), start)
        return line[named.start() if named else start :].strip()
    return None


_REFUSAL_KEYS = ("emory", "failed", "max seq len", "maxTokens", "serve at least")


@lru_cache(maxsize=1)
def _markers() -> tuple[tuple[str, ...], tuple[tuple[EngineId, str], ...], tuple[str, ...]]:
    """(substrings every refusal phrase holds, (engine, refusal phrase), "the server is up" lines), built once."""
    dialects = _vocabulary()[0]
    phrases = tuple((dialect.engine, phrase) for dialect in dialects for phrase in dialect.refusals)
    keys = tuple(
        {next((key for key in _REFUSAL_KEYS if key in phrase), phrase) for _, phrase in phrases}
    )
    ready = _SERVER_READY + tuple(marker for dialect in dialects for marker in dialect.ready)
    return keys, phrases, ready


def _server_ready(line: str, state: _State) -> None:
    """The server said it is up (uvicorn's lines, or an engine's own): later errors are not a refused start."""
    if not state.ready and any(marker in line for marker in _markers()[2]):
        state.ready = True


def _rank_order(item: tuple[RankTuple, Any]) -> tuple[int, ...]:
    return _rank_key(item[0]).sort_key()


def _detected(state: _State) -> EngineId | None:
    best = max(state.hits.values(), default=0)
    leaders = [engine for engine, hits in state.hits.items() if hits == best and best]
    if len(leaders) != 1:
        return state.first_engine
    return leaders[0]


def _model_path(state: _State) -> str | None:
    facts = state.facts
    for args, key in (
        (facts.server_args, "model_path"),
        (facts.server_args, "model"),
        (facts.server_args, "model_tag"),
        (facts.engine_config, "model"),
    ):
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    command = state.launch_command or ""
    patterns = [_LAUNCH_MODEL, *(d.positional_model for d in _vocabulary()[0] if d.positional_model is not None)]
    matches = [match for pattern in patterns if (match := pattern.search(command)) is not None]
    return min(matches, key=lambda match: match.start()).group(1) if matches else None


def parse_engine_log(text: str, source: str = "<log>", cut_at_bytes: int | None = None) -> EngineLog:
    """Everything an engine's startup log states, per rank; never raises on odd text.
    `cut_at_bytes`: the text is the start of a longer log, cut there (said with the result)."""
    physical = text.splitlines()
    if "\x1b" in text:
        physical = [_ANSI.sub("", line) if "\x1b" in line else line for line in physical]
    physical = [line if len(line) <= _MAX_LINE_CHARS else line[:_MAX_LINE_CHARS] for line in physical]
    dialects, _ = _vocabulary()
    engine_line = _engine_line()
    state = _State(dialects)
    lines_parsed = unrecognised = 0
    number = 0
    for line, used in _logical_lines(physical):
        number += used
        state.facts.line_number = number - used + 1
        if state.first_date is None and number <= _DATED_WITHIN_LINES:
            state.first_date = _first_date(line)
        extra = _launch(line, physical, number, state)
        if extra >= 0:
            lines_parsed += used + extra
            continue
        _server_ready(line, state)
        if _read(line, state) | _failure(line, state):
            state.read_a_value = True
            lines_parsed += used
        elif engine_line.search(line):
            unrecognised += 1
    facts = state.facts
    dialect_of = {dialect.engine: dialect for dialect in dialects}
    records = tuple(
        dialect_of[engine].freeze(_rank_key(rank), {name: list(values) for name, values in fields.items()})
        for engine, ranks in state.ranks.items()
        for rank, fields in sorted(ranks.items(), key=_rank_order)
        if any(fields.values())
    )
    if not state.read_a_value:  # launch commands alone (a README quoting one) are no engine's startup log
        state.hits = dict.fromkeys(state.hits, 0)
    return EngineLog(
        source=source,
        engine=_detected(state) if state.read_a_value else None,
        engine_version=facts.engine_version,
        engine_version_line=facts.engine_version_line,
        first_date=state.first_date,
        model_path=_model_path(state),
        server_args=facts.server_args,
        engine_config=facts.engine_config,
        launch_command=state.launch_command,
        decisions=tuple(facts.decisions),
        desktop=facts.desktop,
        records=records,
        lines_total=len(physical),
        lines_parsed=lines_parsed,
        unrecognised_engine_lines=unrecognised,
        lines_by_engine=dict(state.hits),
        startup_failures=tuple(StartupFailure(rank=_rank_key(rank), text=text) for rank, text in state.failures),
        cut_at_bytes=cut_at_bytes,
        content=LogText.of(text),
    )


def read_engine_log(path: str | Path, field: str = "log") -> EngineLog:
    """Read and parse a log file (`-`: standard input), at most `MAX_LOG_BYTES` of it.

    Only a regular file is read (a FIFO or a device such as /dev/zero would block or never end);
    a missing or unreadable file is an `InputError` naming `field` (the argument that gave the path:
    explain's `log`, the dashboard's `--engine-log`) and the file. A longer log is read up to the
    cap: a startup log states its sizing in its first lines.
    """
    if str(path) == "-":
        return _parse_start(sys.stdin.buffer.read(MAX_LOG_BYTES + 1), "<stdin>", field)
    log_path = Path(path)
    try:
        kind = log_path.stat().st_mode
        if stat.S_ISDIR(kind):
            # the path leads (as 'no such file: …'): '… not an engine log file in /tmp' read as a file inside /tmp
            raise InputError(f"{log_path} is a directory, not an engine log file", field=field)
        if not stat.S_ISREG(kind):
            raise InputError(
                f"{log_path} is not a regular file (a pipe or a device): save the log to a file, or pipe it to `-`",
                field=field,
            )
        with log_path.open("rb") as handle:
            raw = handle.read(MAX_LOG_BYTES + 1)
    except FileNotFoundError:
        raise InputError(f"no such file: {log_path}", field=field) from None  # not '… file in /path': the path is it
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise InputError(f"cannot read the engine log {log_path} ({reason})", field=field) from None
    return _parse_start(raw, str(log_path), field)


def _inflated(raw: bytes, field: str, source: str) -> bytes:
    """`raw`, or what it holds where it is gzip-compressed (a rotated `engine.log.gz`): read up to the same cap.

    Without this a compressed log read as 'no SGLang, vLLM … startup lines', as if it were not a log at all."""
    if not raw.startswith(_GZIP_MAGIC):
        return raw
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as inflating:
            return inflating.read(MAX_LOG_BYTES + 1)
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(
            f"gzip-compressed, and it does not decompress ({error}): pass the log itself (`zcat FILE | kvtop explain -`)",
            field=field,
            source=source,
            value_is_file=True,
        ) from None


def _unfinished_line_trimmed(text: str, cut_short: bool) -> str:
    """`text` without what its last, unterminated line may have lost. A log read as the engine writes
    it (its stdout block-buffered into a file), or cut at `MAX_LOG_BYTES`, can end mid-line:
    `#tokens: 2795` of `#tokens: 2795207,` would read as the logged capacity. A line cut by the cap is
    dropped; otherwise only a number that runs to the very end is left unread (a whole log that
    lacks its last newline keeps the rest of that line)."""
    if not text or text.endswith(("\n", "\r")):
        return text
    start = text.rfind("\n") + 1
    last = text[start:]
    if cut_short:
        return text[:start]
    return text[:start] + (last.rstrip(_FIGURE_CHARS) if last[-1] in _FIGURE_CHARS[:10] else last)


def _parse_start(raw: bytes, source: str, field: str) -> EngineLog:
    """Parse what was read (inflated where it is gzip-compressed): all of it, or the first `MAX_LOG_BYTES` of a
    longer log (said so)."""
    raw = _inflated(raw, field, source)
    cut_short = len(raw) > MAX_LOG_BYTES
    text = _unfinished_line_trimmed(raw[:MAX_LOG_BYTES].decode("utf-8", errors="replace"), cut_short)
    return parse_engine_log(text, source=source, cut_at_bytes=MAX_LOG_BYTES if cut_short else None)
