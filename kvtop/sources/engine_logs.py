"""Parse SGLang / vLLM startup logs into an `EngineLog` (what the log says, nothing computed).

Prefixes never matter: a line is recognised by a cheap substring check, then its fields are
searched for anywhere in it, so timestamps, journald (`Jan 01 host sglang[123]:`), docker
(`svc-1  | `), ANSI colours and `INFO 01-23 10:00:00 [file.py:123]` all pass through. The rank
comes from `[… DP1 TP3 EP3]` (SGLang) or `(Worker_TP0_EP0 pid=…)` (vLLM). A line ending in a comma
and followed by a bare continuation (a message wrapped by a terminal or a blockquote) is joined
to it. Nothing here raises on strange input: unknown lines are counted, never guessed at.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from kvtop.domain.engine_log import ArgValue, EngineKind, EngineLog, RankKey, StartupFailure
from kvtop.domain.errors import InputError
from kvtop.sources import engine_log_sglang, engine_log_vllm

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_CONTINUATION = re.compile(r"\s*(?:[a-z]|\d{1,12}(?:\.\d{1,12})?\s*[A-Za-z(%])")
_SGLANG_PREFIX = re.compile(
    r"\[(?:\d{4}-\d\d-\d\d[ T])?\d\d:\d\d:\d\d(?:[.,]\d{1,6})?((?:\s+[A-Z]{2,4}\d{1,5}){0,8})\s*\]"
)
_VLLM_PROCESS = re.compile(r"\(([A-Za-z][\w-]{0,60}?)(?:\s+rank=(\d{1,6}))?\s+pid=\d{1,10}\)")
_VLLM_PROCESSES = re.compile(
    r"\([A-Za-z][\w-]{0,60}?(?:\s+rank=\d{1,6})?\s+pid=\d{1,10}\)"
    r"(?:\s*\([A-Za-z][\w-]{0,60}?(?:\s+rank=\d{1,6})?\s+pid=\d{1,10}\)){0,3}"
)
_TAG = re.compile(r"(?<![A-Za-z])(DP|TP|PP|EP)(\d{1,5})(?!\d)")
_ENGINE_LINE = re.compile(
    r"\[(?:\d{4}-\d\d-\d\d[ T])?\d\d:\d\d:\d\d[^\]]{0,60}\]"
    r"|(?:INFO|WARNING|ERROR|DEBUG)\s+\d\d-\d\d \d\d:\d\d:\d\d"
    r"|\([\w-]{1,60}(?: rank=\d{1,6})? pid=\d{1,10}\)"
)
_TOKEN = re.compile(r"""'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|[()\[\]{},]""")
_CALL_ITEM = re.compile(r"\s*([A-Za-z_]\w{0,100})\s*=(.*)", re.DOTALL)
_DICT_ITEM = re.compile(r"""\s*(['"])(.{1,200}?)\1\s*:(.*)""", re.DOTALL)
_PLAIN_NUMBER = re.compile(r"-?\d{1,18}(?:\.\d{1,18})?(?:[eE][-+]?\d{1,3})?")
_LAUNCH = re.compile(
    r"(?:python[\d.]*\s+-m\s+)?(sglang\.launch_server|sglang serve|vllm serve|"
    r"vllm\.entrypoints\.openai\.api_server)\b.*"
)
_LAUNCH_MODEL = re.compile(
    r"(?:--model-path|--model)[ =]([^\s'\"]{1,500})|vllm serve ([^\s'\"-][^\s'\"]{0,500})"
)
_VERSION = re.compile(r"(?:LLM engine \(v|vLLM (?:API )?server version )(\d[\w.+-]{0,40})")
_FAILURE = re.compile(
    r"\b((?:torch\.(?:cuda\.)?)?(?:ValueError|RuntimeError|AssertionError|OutOfMemoryError)):.*"
    r"|(EngineCore failed to start|Engine core initialization failed).*|CUDA out of memory.*"
)
_FAILURE_TOPIC = re.compile(r"(?i)kv.?cache|memory|mem-fraction|max seq len|cache blocks")
_MAX_QUOTE = 400
_MAX_JOINED = 8
_PREFIX_CHARS = 200
_MAX_VALUE_CHARS = 4000

_FieldHandler = Callable[[str, dict[str, list[Any]]], bool]


class _State:
    """Mutable accumulation while reading; frozen into an `EngineLog` at the end."""

    def __init__(self) -> None:
        self.sglang: defaultdict[RankTuple, defaultdict[str, list[Any]]] = defaultdict(
            lambda: defaultdict(list)
        )
        self.vllm: defaultdict[RankTuple, defaultdict[str, list[Any]]] = defaultdict(
            lambda: defaultdict(list)
        )
        self.hits: dict[EngineKind, int] = {"sglang": 0, "vllm": 0}
        self.first_engine: EngineKind | None = None
        self.server_args: dict[str, ArgValue] = {}
        self.engine_config: dict[str, ArgValue] = {}
        self.launch_command: str | None = None
        self.engine_version: str | None = None
        self.failures: list[tuple[RankTuple, str]] = []

    def count(self, engine: EngineKind) -> None:
        """One more line recognised as `engine`'s."""
        self.hits[engine] += 1
        self.first_engine = self.first_engine or engine


# --- python-repr argument lists ---------------------------------------------------------------


def _value(raw: str) -> ArgValue:
    """A scalar from its repr ('x', 3, 0.9, None, True); anything else stays the raw text."""
    text = raw.strip()
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    if _PLAIN_NUMBER.fullmatch(text):
        return int(text) if text.lstrip("-").isdigit() else float(text)
    if len(text) > _MAX_VALUE_CHARS or not text or text[0] not in "'\"":
        return text
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text
    return value if isinstance(value, str) else text


def _top_level_items(text: str, start: int) -> list[str]:
    """Comma-separated items of text[start:] at bracket depth 0, up to the closing bracket."""
    items: list[str] = []
    depth, item_start = 0, start
    for token in _TOKEN.finditer(text, start):
        char = token.group()
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                items.append(text[item_start : token.start()])
                return items
            depth -= 1
        elif char == "," and depth == 0:
            items.append(text[item_start : token.start()])
            item_start = token.end()
    items.append(text[item_start:])
    return items


def parse_call_args(text: str, start: int = 0) -> dict[str, ArgValue]:
    """`k=v, k2='a, b', k3=[1, 2]` (a dataclass or Namespace repr) from `start`; never raises."""
    args: dict[str, ArgValue] = {}
    for item in _top_level_items(text, start):
        match = _CALL_ITEM.match(item)
        if match:
            args.setdefault(match.group(1), _value(match.group(2)))
    return args


def parse_dict_args(text: str, start: int = 0) -> dict[str, ArgValue]:
    """`{'k': v, …}` (a python dict literal) from the `{` at or after `start`; never raises."""
    brace = text.find("{", start)
    if brace < 0:
        return {}
    args: dict[str, ArgValue] = {}
    for item in _top_level_items(text, brace + 1):
        match = _DICT_ITEM.match(item)
        if match:
            args.setdefault(match.group(2), _value(match.group(3)))
    return args


# --- whole-log facts ----------------------------------------------------------------------------


def _server_args(line: str, state: _State) -> bool:
    args = parse_call_args(line, line.find("ServerArgs(") + len("ServerArgs("))
    state.server_args = {**args, **state.server_args}
    return bool(args)


def _non_default_args(line: str, state: _State) -> bool:
    args = parse_dict_args(line, line.find("non-default args:"))
    state.server_args = {**args, **state.server_args}
    return bool(args)


def _namespace_args(line: str, state: _State) -> bool:
    args = parse_call_args(line, line.find("Namespace(") + len("Namespace("))
    state.server_args = {**args, **state.server_args}
    return bool(args)


def _engine_config(line: str, state: _State) -> bool:
    """`Initializing a V1 LLM engine (v0.24.0) with config: model='…', …`."""
    found_version = _version(line, state)
    if "with config:" not in line:
        return found_version
    args = parse_call_args(line, line.find("with config:") + len("with config:"))
    state.engine_config = {**args, **state.engine_config}
    return bool(args) or found_version


def _version(line: str, state: _State) -> bool:
    match = _VERSION.search(line)
    if match and state.engine_version is None:
        state.engine_version = match.group(1)
    return match is not None


def _launch(line: str, state: _State) -> bool:
    match = _LAUNCH.search(line)
    if match is None:
        return False
    if state.launch_command is None:
        state.launch_command = match.group().strip()
    engine: EngineKind = "sglang" if match.group(1).startswith("sglang") else "vllm"
    state.count(engine)
    return True


_GLOBAL: tuple[tuple[str, EngineKind | None, Callable[[str, _State], bool]], ...] = (
    ("ServerArgs(", "sglang", _server_args),
    ("non-default args:", "vllm", _non_default_args),
    ("Namespace(", "vllm", _namespace_args),
    ("LLM engine (v", "vllm", _engine_config),
    ("server version ", "vllm", _version),
    ("sglang.launch_server", None, _launch),
    ("sglang serve", None, _launch),
    ("vllm serve", None, _launch),
    ("vllm.entrypoints.openai.api_server", None, _launch),
)
_Entry = tuple[str, EngineKind | None, Callable[[str, _State], bool] | None, _FieldHandler | None]
_HANDLERS: tuple[_Entry, ...] = tuple(
    [(trigger, engine, handler, None) for trigger, engine, handler in _GLOBAL]
    + [(trigger, "sglang", None, handler) for trigger, handler in engine_log_sglang.HANDLERS]
    + [(trigger, "vllm", None, handler) for trigger, handler in engine_log_vllm.HANDLERS]
)
"""(trigger, engine, whole-log handler or None, per-rank handler or None)."""

# Short substrings shared by many triggers: a line is checked against a bucket's triggers only if
# it holds the bucket's key, so an ordinary line costs ~20 substring checks, not one per trigger.
# A trigger that contains none of the keys gets a bucket of its own (keyed by itself).
_BUCKET_KEYS = (
    "emory", "ache", "oad", "aptur", "lock", "rgs", "sglang", "vllm", "length", "tok", "take",
    "oncurrency", "Init", "SWAKV", "profiled", "budget", "Actual", "LLM engine", "version", "Namespace",
)  # fmt: skip


def _buckets(entries: tuple[_Entry, ...]) -> tuple[tuple[str, tuple[_Entry, ...]], ...]:
    grouped: dict[str, list[_Entry]] = {}
    for entry in entries:
        key = next((key for key in _BUCKET_KEYS if key in entry[0]), entry[0])
        grouped.setdefault(key, []).append(entry)
    return tuple((key, tuple(members)) for key, members in grouped.items())


_BUCKETS = _buckets(_HANDLERS)


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


RankTuple = tuple[int | None, int | None, int | None, int | None, int | None]
"""(dp, tp, pp, ep, worker): a hashable rank while reading, made a `RankKey` at the end."""
_UNRANKED: RankTuple = (None, None, None, None, None)


@lru_cache(maxsize=1024)
def _rank_from_tags(tags: str, worker: str | None) -> RankTuple:
    ranks = {name: int(number) for name, number in _TAG.findall(tags)}
    return (
        ranks.get("DP"),
        ranks.get("TP"),
        ranks.get("PP"),
        ranks.get("EP"),
        int(worker) if worker else None,
    )


def _rank_tuple(line: str) -> RankTuple:
    head = line[:_PREFIX_CHARS]  # prefixes (journald and docker included) sit at the start
    sglang = _SGLANG_PREFIX.search(head) if "[" in head else None
    vllm = _VLLM_PROCESSES.search(head) if "pid=" in head else None
    if sglang and (vllm is None or sglang.start() < vllm.start()):
        return _rank_from_tags(sglang.group(1), None)
    if vllm:  # one or more processes, e.g. `(EngineCore_DP0 pid=1) (Worker_TP1 pid=2)`
        return _rank_from_processes(vllm.group())
    return _UNRANKED


@lru_cache(maxsize=1024)
def _rank_from_processes(processes: str) -> RankTuple:
    names = _VLLM_PROCESS.findall(processes)
    worker = next((rank for _, rank in names if rank), None)
    return _rank_from_tags(" ".join(name for name, _ in names), worker)


def _rank_key(rank: RankTuple) -> RankKey:
    dp, tp, pp, ep, worker = rank
    return RankKey(dp=dp, tp=tp, pp=pp, ep=ep, worker=worker)


def rank_of(line: str) -> RankKey:
    """The rank a line's prefix names: `[… DP0 TP3 EP3]` or `(Worker_TP0_EP0 pid=…)`."""
    return _rank_key(_rank_tuple(line))


def _read(line: str, state: _State) -> bool:
    """Apply every handler whose trigger the line contains; whether any took a value."""
    hits = [entry for key, entries in _BUCKETS if key in line for entry in entries if entry[0] in line]
    if not hits:
        return False
    took = False
    rank: RankTuple | None = None
    engines: list[EngineKind] = []
    for _, engine, handle_log, handle_rank in hits:
        if handle_log is not None:
            if not handle_log(line, state):
                continue
        elif handle_rank is not None:
            if rank is None:
                rank = _rank_tuple(line)
            if not handle_rank(line, (state.sglang if engine == "sglang" else state.vllm)[rank]):
                continue
        took = True
        if engine is not None and engine not in engines:
            engines.append(engine)
    for engine in engines:  # one count per line and engine
        state.count(engine)
    return took


def _failure(line: str, state: _State) -> bool:
    """Keep an error line that shows a refused start (KV sizing, memory, `failed to start`)."""
    if "rror" not in line and "failed" not in line:
        return False
    match = _FAILURE.search(line)
    if match is None or (match.group(1) and not _FAILURE_TOPIC.search(line)):
        return False
    text = match.group().strip()
    text = text if len(text) <= _MAX_QUOTE else text[: _MAX_QUOTE - 1] + "…"
    if match.group(2):  # vLLM's own wording
        state.count("vllm")
    if all(text != seen for _, seen in state.failures):
        state.failures.append((_rank_tuple(line), text))
    return True


def _rank_order(item: tuple[RankTuple, Any]) -> tuple[int, ...]:
    return _rank_key(item[0]).sort_key()


def _detected(state: _State) -> EngineKind | None:
    sglang, vllm = state.hits["sglang"], state.hits["vllm"]
    if sglang == vllm:
        return state.first_engine
    return "sglang" if sglang > vllm else "vllm"


def _model_path(state: _State) -> str | None:
    for args, key in (
        (state.server_args, "model_path"),
        (state.server_args, "model"),
        (state.server_args, "model_tag"),
        (state.engine_config, "model"),
    ):
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    match = _LAUNCH_MODEL.search(state.launch_command or "")
    return (match.group(1) or match.group(2)) if match else None


def parse_engine_log(text: str, source: str = "<log>") -> EngineLog:
    """Everything an SGLang or vLLM startup log states, per rank; never raises on odd text."""
    physical = text.splitlines()
    if "\x1b" in text:
        physical = [_ANSI.sub("", line) if "\x1b" in line else line for line in physical]
    state = _State()
    lines_parsed = unrecognised = 0
    for line, used in _logical_lines(physical):
        if _read(line, state) | _failure(line, state):
            lines_parsed += used
        elif _ENGINE_LINE.search(line):
            unrecognised += 1
    return EngineLog(
        source=source,
        engine=_detected(state),
        engine_version=state.engine_version,
        model_path=_model_path(state),
        server_args=state.server_args,
        engine_config=state.engine_config,
        launch_command=state.launch_command,
        sglang_ranks=tuple(
            engine_log_sglang.freeze(_rank_key(rank), fields)
            for rank, fields in sorted(state.sglang.items(), key=_rank_order)
            if any(fields.values())
        ),
        vllm_ranks=tuple(
            engine_log_vllm.freeze(_rank_key(rank), fields)
            for rank, fields in sorted(state.vllm.items(), key=_rank_order)
            if any(fields.values())
        ),
        lines_total=len(physical),
        lines_parsed=lines_parsed,
        unrecognised_engine_lines=unrecognised,
        sglang_lines=state.hits["sglang"],
        vllm_lines=state.hits["vllm"],
        startup_failures=tuple(
            StartupFailure(rank=_rank_key(rank), text=text) for rank, text in state.failures
        ),
    )


def read_engine_log(path: str | Path) -> EngineLog:
    """Read and parse a log file; a missing or unreadable file is an `InputError` saying which."""
    log_path = Path(path)
    try:
        raw = log_path.read_bytes()
    except FileNotFoundError:
        raise InputError("no such engine log file", field="log", source=str(log_path)) from None
    except IsADirectoryError:
        raise InputError(
            "is a directory, not an engine log file", field="log", source=str(log_path)
        ) from None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise InputError(
            f"cannot read the engine log ({reason})", field="log", source=str(log_path)
        ) from None
    return parse_engine_log(raw.decode("utf-8", errors="replace"), source=str(log_path))
