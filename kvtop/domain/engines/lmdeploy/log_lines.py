"""LMDeploy startup-log lines (docs/engines/lmdeploy.md §2.4, §3, §4.4), one handler per kind of line.

TurboMind prints `[TM][INFO] [BlockManager] block_size = 75 MB` (`block_size_ >> 20`, an integer, up
to v0.7.x) or `= 0.844 MB` (`%.3f` MiB from v0.8.0), then `max_block_count` and `chunk_size`, once per
TP rank thread, with no rank in the line. The Python side prints the engine config it runs with
(`updated backend_config=TurbomindEngineConfig(…)`, `PytorchEngineConfig(…)`), read as the log's
arguments; its enum values (`<QuantPolicy.INT4: 4>`) are read as their numbers.
"""

from __future__ import annotations

import re

from kvtop.domain.engine_log import RankKey
from kvtop.domain.engines.lmdeploy.log_records import (
    LmdeployRankLog,
    ObjectCacheBudget,
    PytorchCacheConfig,
    SessionTruncation,
    mib_figure,
)
from kvtop.domain.log_args import ArgValue, parse_call_args
from kvtop.domain.log_dialect import Fields, LogDialect, LogFacts, RankHandler, version_line

_NUM = r"\d{1,15}(?:\.\d{1,6})?"
_BLOCK_SIZE = re.compile(rf"block_size = ({_NUM}) MB")
_MAX_BLOCKS = re.compile(r"max_block_count = (\d{1,15})")
_CHUNK = re.compile(r"chunk_size = (-?\d{1,15})")
_OLD_TRUNCATION = re.compile(
    r"No enough blocks for `session_len` \((\d{1,12})\), `session_len` truncated to (\d{1,12})"
)
_NEW_TRUNCATION = re.compile(r"`session_len` truncated to (\d{1,12}) due to limited KV cache memory")
_MAX_CACHED = re.compile(r"max cached tokens: (\d{1,15})")
_OBJECT_CACHE = re.compile(
    rf"Object cache budget: ({_NUM}) MB from (?:free|cacheable) ({_NUM}) MB and ratio ({_NUM})"
)
_FREE = re.compile(r"free gpu memory: (\d{1,12}) mb")
_RUNTIME = re.compile(r"estimated max runtime memory: (\d{1,12}) mb")
_PREFILL_UPDATE = re.compile(r"(?i)update max_prefill_token_num=(\d{1,12})")
_INITIALISED = re.compile(r"Initialize cache engine with (\d{1,15}) gpu blocks")
# 0.17.0+ (executor/base.py:407, PR #4896): `logger.info('Reserve %d MiB for DSA prefill score workspace.', b >> 20)`
_DSA_WORKSPACE = re.compile(r"Reserve (\d{1,12}) MiB for DSA prefill score workspace")
_CACHE_CONFIG = re.compile(r"(?<![A-Za-z])CacheConfig\(")
_ENUM = re.compile(r"<\w{1,60}\.\w{1,60}: (-?\d{1,12})>")
_CACHE_CONFIG_FIELDS = ("num_gpu_blocks", "block_size", "num_cpu_blocks", "max_batches",
                        "cache_max_entry_count", "max_prefill_token_num")  # fmt: skip


def _block_size(text: str, fields: Fields) -> bool:
    match = _BLOCK_SIZE.search(text)
    if match is None or "BlockManager" not in text:
        return False
    printed = match.group(1)
    fields["block_sizes"].append(mib_figure(printed, floor="." not in printed))
    return True


def _ints(name: str, pattern: re.Pattern[str], needs: str | None = None) -> RankHandler:
    """A handler appending every match of `pattern` (group 1, an int) to field `name`."""

    def handle(text: str, fields: Fields) -> bool:
        if needs is not None and needs not in text:
            return False
        found = [int(match.group(1)) for match in pattern.finditer(text)]
        fields[name].extend(found)
        return bool(found)

    return handle


def _mib(name: str, pattern: re.Pattern[str]) -> RankHandler:
    """A `>> 20` "mb" figure of the PyTorch engine's DEBUG lines (an integer, floored)."""

    def handle(text: str, fields: Fields) -> bool:
        match = pattern.search(text)
        if match is None:
            return False
        fields[name].append(mib_figure(match.group(1), floor=True))
        return True

    return handle


def _truncation(text: str, fields: Fields) -> bool:
    old = _OLD_TRUNCATION.search(text)
    if old is not None:
        fields["session_truncations"].append(
            SessionTruncation(requested=int(old.group(1)), truncated=int(old.group(2)), wording="no_enough_blocks")
        )
        return True
    new = _NEW_TRUNCATION.search(text)
    if new is not None:
        fields["session_truncations"].append(SessionTruncation(truncated=int(new.group(1)), wording="limited_memory"))
        return True
    return False


def _object_cache(text: str, fields: Fields) -> bool:
    match = _OBJECT_CACHE.search(text)
    if match is None:
        return False
    fields["object_cache_budgets"].append(
        ObjectCacheBudget(budget=mib_figure(match.group(1)), free=mib_figure(match.group(2)), ratio=float(match.group(3)))
    )
    return True


def _cache_config_start(text: str) -> int:
    """Where the PyTorch engine's own `CacheConfig(` opens (not TensorRT-LLM's `KvCacheConfig(`), else −1."""
    match = _CACHE_CONFIG.search(text)
    return match.end() if match and "num_gpu_blocks=" in text else -1


def _cache_config(text: str, fields: Fields) -> bool:
    """`CacheConfig(max_batches=…, block_size=64, num_cpu_blocks=…, num_gpu_blocks=N, …)`."""
    start = _cache_config_start(text)
    if start < 0:
        return False
    args = _numbers(parse_call_args(text, start))
    values: dict[str, int | float] = {}
    for key in _CACHE_CONFIG_FIELDS:
        value = args.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            values[key] = value if key == "cache_max_entry_count" else int(value)
    blocks = values.get("num_gpu_blocks")
    if not isinstance(blocks, int) or blocks <= 0:
        return False
    fields["cache_configs"].append(PytorchCacheConfig.model_validate(values))
    return True


HANDLERS: tuple[tuple[str, RankHandler], ...] = (
    ("block_size = ", _block_size),
    ("max_block_count = ", _ints("max_block_counts", _MAX_BLOCKS)),
    ("chunk_size = ", _ints("chunk_sizes", _CHUNK, needs="BlockManager")),
    ("truncated to ", _truncation),
    ("max cached tokens: ", _ints("max_cached_tokens", _MAX_CACHED)),
    ("Object cache budget: ", _object_cache),
    ("CacheConfig(", _cache_config),
    ("free gpu memory: ", _mib("free_memory", _FREE)),
    ("estimated max runtime memory: ", _mib("runtime_memory", _RUNTIME)),
    ("max_prefill_token_num=", _ints("prefill_updates", _PREFILL_UPDATE)),
    ("Initialize cache engine with ", _ints("gpu_blocks_initialised", _INITIALISED)),
    ("for DSA prefill score workspace", _mib("dsa_workspaces", _DSA_WORKSPACE)),
)
"""(trigger substring, handler): a handler runs only on lines that contain its trigger."""



def freeze(rank: RankKey, fields: Fields) -> LmdeployRankLog:
    """The frozen record of one process from the lists the handlers filled."""
    values = {name: tuple(items) for name, items in fields.items() if items}
    return LmdeployRankLog(rank=rank, **values)


# --- whole-log lines ----------------------------------------------------------------------------

_VERSION = re.compile(r"(?:LMDeploy: |lmdeploy version:? v?)(\d{1,3}\.\d{1,3}\.\d{1,3}[\w.+-]{0,30})")


def _numbers(args: dict[str, ArgValue]) -> dict[str, ArgValue]:
    """Enum reprs (`<QuantPolicy.INT4: 4>`) as the numbers they stand for."""
    out: dict[str, ArgValue] = {}
    for key, value in args.items():
        match = _ENUM.fullmatch(value.strip()) if isinstance(value, str) else None
        out[key] = int(match.group(1)) if match else value
    return out


def _engine_config(line: str, facts: LogFacts) -> bool:
    """`…backend_config=TurbomindEngineConfig(…)` / `PytorchEngineConfig(…)`: the settings it runs with;
    the `updated` config wins over the `input` one."""
    for name, backend in (("TurbomindEngineConfig(", "turbomind"), ("PytorchEngineConfig(", "pytorch")):
        start = line.find(name)
        if start < 0:
            continue
        args = _numbers(parse_call_args(line, start + len(name)))
        updated = "updated" in line[:start]
        facts.server_args = {**facts.server_args, **args} if updated else {**args, **facts.server_args}
        if args:  # a bare `TurbomindEngineConfig(…)` (prose, a docstring) states no backend ran
            facts.decided(f"backend={backend}")
        return bool(args)
    return False


_MODEL_SOURCE = re.compile(r"model_source: (?:ModelSource\.)?(workspace|hf_model)\b", re.IGNORECASE)


def _model_source(line: str, facts: LogFacts) -> bool:
    """TurboMind's `model_source: workspace` / `hf_model` (turbomind.py `from_pretrained`, v0.1.0 – v0.9.x):
    a converted workspace is read by TurboMind itself and stages nothing through torch (§15.1)."""
    match = _MODEL_SOURCE.search(line)
    if match is None:
        return False
    if match.group(1).lower() == "workspace":
        facts.decided("turbomind_workspace=True")
    return True


def _windows(line: str, facts: LogFacts) -> bool:
    """`Add dll path C:\\…\\bin, please note cuda version should >= 11.3 …`: LMDeploy's Windows wheel
    (`turbomind/__init__.py` `bootstrap`, printed only where `os.name == 'nt'`, v0.2.0 – v0.13.x): a Windows host,
    whose card a desktop shares under WDDM (§15.5), the fact `--desktop` says."""
    if "please note cuda version" not in line:
        return False
    facts.desktop = ("LMDeploy's Windows wheel ('Add dll path …': turbomind/__init__.py bootstrap, os.name == 'nt'): "
                     "a Windows host, whose card its desktop shares under WDDM")  # fmt: skip
    return True


def _turbomind(line: str, facts: LogFacts) -> bool:
    """A TurboMind line (`[TM][…]`): the TurboMind engine runs."""
    facts.decided("backend=turbomind")
    return True


def _pytorch(line: str, facts: LogFacts) -> bool:
    """The PyTorch engine's `CacheConfig(…)`: the PyTorch engine runs."""
    if _cache_config_start(line) < 0:
        return False
    facts.decided("backend=pytorch")
    return True


_version = version_line(_VERSION)


DIALECT = LogDialect(
    engine="lmdeploy",
    rank_handlers=HANDLERS,
    log_handlers=(
        ("EngineConfig(", _engine_config),
        ("[TM]", _turbomind),
        ("model_source: ", _model_source),
        ("Add dll path ", _windows),
        ("CacheConfig(", _pytorch),
        ("LMDeploy: ", _version),
        ("lmdeploy version", _version),
    ),
    launch=re.compile(r"(?:python[\d.]*\s+-m\s+)?lmdeploy\s+serve\s+(?:api_server|gradio)\b.*"),
    own_failures=re.compile(r"No enough gpu memory for (?:kv|state) cache"),
    freeze=freeze,
    refusals=("No enough gpu memory for kv cache", "No enough gpu memory for state cache"),
    launch_words=("serve",),
)
