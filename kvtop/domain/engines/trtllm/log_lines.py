"""TensorRT-LLM startup-log lines (docs/engines/trtllm.md §7, §11), one handler per kind of line.

Python lines read `[MM/DD/YYYY-HH:MM:SS] [TRT-LLM] [RANK n] [I] …` (the rank only in multi-rank
runs); the C++ runtime's read `[TensorRT-LLM][INFO] …` with no rank. Every GiB figure is
`bytes / 2**30` printed with `%.2f`; the few MiB/MB figures (engine size, execution context) are
`bytes / 2**20`. The PyTorch backend allocates the KV pool twice (profiling, then the real pool): each
`Allocated … (N)` is kept in order.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from kvtop.domain.engine_log import Measured, RankKey
from kvtop.domain.engines.trtllm.log_records import (
    BlocksPerSequence,
    CppMemory,
    ExecutorSummary,
    ModelCreation,
    PoolAllocation,
    ProfileSummary,
    TrtllmRankLog,
)
from kvtop.domain.log_dialect import Fields, LogDialect, RankHandler, single, version_line

_NUM = r"-?\d{1,15}(?:\.\d{1,12})?"
_COUNT = r"(\d{1,15})"

_ALLOCATED = re.compile(rf"Allocated ({_NUM}) GiB for max tokens in paged KV cache \({_COUNT}\)")
_LEGACY_BYTES = re.compile(rf"Allocate {_COUNT} bytes for k/v cache")
_LEGACY_TOKENS = re.compile(rf"Using {_COUNT} (?:total )?tokens in paged KV cache")
_LEGACY_PER_SEQUENCE = re.compile(rf"tokens in paged KV cache, and {_COUNT} blocks per sequence")
_NOT_CREATED = re.compile(r"The following component could not be created: ([A-Za-z][\w ()-]{0,60}?)\s*$")
_CREATION_FREE = re.compile(rf"Free GPU memory before component creation attempt \(GiB\): ({_NUM})")
_CREATION_TOTAL = re.compile(rf"Total GPU memory \(GiB\): ({_NUM})")
_MODEL_CREATION = re.compile(rf"(?:^|\s)Model: ({_NUM}) / ({_NUM})\s*$")
_CPP_MEMORY = re.compile(
    rf"Memory usage when calculating max tokens in paged kv cache: total: ({_NUM}) GiB, available: ({_NUM}) GiB"
)
_PRIMARY = re.compile(rf"Number of blocks in KV cache primary pool: {_COUNT}")
_PER_SEQUENCE = re.compile(
    rf"Max KV cache blocks per sequence: {_COUNT}(?: \[window size={_COUNT}\])?"
    rf"(?:, tokens per block={_COUNT})?(?:, primary blocks={_COUNT})?(?:, secondary blocks={_COUNT})?"
    rf"(?:, max sequence length={_COUNT})?"
)
_TOKENS_PER_BLOCK = re.compile(rf"Number of tokens per block: {_COUNT}")
_PEAK = re.compile(rf"Peak memory during memory usage profiling \(torch \+ non-torch\): ({_NUM}) GiB")
_AVAILABLE = re.compile(rf"available KV cache memory when calculating max tokens: ({_NUM}) GiB")
_FULL = r"\d{1,4}(?:\.\d{1,24})?"  # a Python float printed in full (0.8999999761581421: a C++ float)
_FRACTION = re.compile(rf"fraction is set ({_FULL})")
_KV_SIZE = re.compile(rf"kv size (?:per token )?is {_COUNT}")
_DEVICE_TOTAL = re.compile(rf"device total memory ({_NUM}) GiB")
_TEMPORARY = re.compile(rf"(?:tmp kv_mem|temporary kv cache memory during profiling) ({_NUM}) GiB")
_PROFILED = {
    "Memory used after loading model weights (inside torch) in memory usage profiling:": "weights_inside_torch",
    "Memory used after loading model weights (outside torch) in memory usage profiling:": "outside_torch_after_load",
    "Memory dynamically allocated during inference (inside torch) in memory usage profiling:": "activation",
    "Memory used outside torch (e.g., NCCL and CUDA graphs) in memory usage profiling:": "outside_torch_profiling",
}
_PROFILED_VALUE = re.compile(rf"profiling: ({_NUM}) GiB")
_ESTIMATED = re.compile(rf"Estimated max memory in KV cache : ({_NUM}) GiB")
_BOTH_SET = re.compile(rf"Both free_gpu_memory_fraction and max_tokens are set \(to {_FULL} and {_COUNT}")
_SET_BY = re.compile(rf"max_tokens is set by kv_cache_config\.max_tokens: {_COUNT}")
_UPPER_BOUND = re.compile(rf"exceeds upper bound {_COUNT}")
_INFERRED = re.compile(rf"max_seq_len is not specified, using inferred value {_COUNT}")
_SUMMARY = re.compile(r"\b(max_seq_len|max_num_requests|max_num_tokens|max_batch_size)=(\d{1,15})")
_WEIGHTS = re.compile(rf"Use ({_NUM}) GB for model weights")
_ENGINE_SIZE = re.compile(rf"Loaded engine size: ({_NUM}) MiB")
_CONTEXT = re.compile(rf"Allocated ({_NUM}) MiB for execution context memory")


@lru_cache(maxsize=4096)
def _gib(text: str) -> Measured:
    return Measured.from_text(text, unit="GiB")


def _mib(text: str) -> Measured:
    """A MiB figure ('1134.01', '6695') as bytes and the interval that prints the same text, its point the nearest byte."""
    return Measured.from_mib(text, point="nearest")


def _allocated(text: str, fields: Fields) -> bool:
    match = _ALLOCATED.search(text)
    if match is None:
        return False
    fields["allocations"].append(PoolAllocation(memory=_gib(match.group(1)), tokens=int(match.group(2))))
    return True


def _cpp_memory(text: str, fields: Fields) -> bool:
    match = _CPP_MEMORY.search(text)
    if match is None:
        return False
    fields["cpp_memory"].append(CppMemory(total=_gib(match.group(1)), available=_gib(match.group(2))))
    return True


def _per_sequence(text: str, fields: Fields) -> bool:
    match = _PER_SEQUENCE.search(text)
    if match is None:
        return False
    values = [int(group) if group else None for group in match.groups()]
    fields["blocks_per_sequence"].append(
        BlocksPerSequence(
            max_blocks_per_sequence=values[0] or 0,
            window_size=values[1],
            tokens_per_block=values[2],
            primary_blocks=values[3],
            secondary_blocks=values[4],
            max_sequence_length=values[5],
        )
    )
    return True


def _profile(text: str, fields: Fields) -> bool:
    """The profiling summary: its figures are each optional (the wording changed by era)."""

    def measured(pattern: re.Pattern[str]) -> Measured | None:
        match = pattern.search(text)
        return _gib(match.group(1)) if match else None

    fraction = _FRACTION.search(text)
    kv_size = _KV_SIZE.search(text)
    fields["profiles"].append(
        ProfileSummary(
            peak=measured(_PEAK),
            available=measured(_AVAILABLE),
            fraction=float(fraction.group(1)) if fraction else None,
            kv_bytes_per_token=int(kv_size.group(1)) if kv_size else None,
            device_total=measured(_DEVICE_TOTAL),
            temporary_pool=measured(_TEMPORARY),
        )
    )
    fields["pytorch_backend"].append(True)
    return True


def _profiled(text: str, fields: Fields) -> bool:
    name = next((field for key, field in _PROFILED.items() if key in text), None)
    match = _PROFILED_VALUE.search(text)
    if name is None or match is None:
        return False
    fields[name].append(_gib(match.group(1)))
    fields["pytorch_backend"].append(True)
    return True


def _model_creation(text: str, fields: Fields) -> bool:
    match = _MODEL_CREATION.search(text)
    if match is None:
        return False
    fields["model_creation"].append(ModelCreation(before=_gib(match.group(1)), after=_gib(match.group(2))))
    return True


def _max_tokens(text: str, fields: Fields) -> bool:
    match = _BOTH_SET.search(text) or _SET_BY.search(text)
    if match is None:
        return False
    fields["max_tokens_set"].append(int(match.group(1)))
    return True


def _summary(text: str, fields: Fields) -> bool:
    values = {name: int(number) for name, number in _SUMMARY.findall(text)}
    if len(values) < 2:
        return False
    fields["executor_summaries"].append(ExecutorSummary(**values))
    return True


def _start(text: str, fields: Fields) -> bool:
    """The release banner a start prints once (`[TensorRT-LLM] TensorRT-LLM version: X`): where its budget lines
    begin (`TrtllmRankLog.starts_at`)."""
    if _VERSION.search(text) is None:
        return False
    fields["starts_at"].append(len(fields["cpp_memory"]))
    return True


def _pytorch(text: str, fields: Fields) -> bool:
    fields["pytorch_backend"].append(True)
    return True


HANDLERS: tuple[tuple[str, RankHandler], ...] = (
    ("GiB for max tokens in paged KV cache", _allocated),
    ("bytes for k/v cache", single("legacy_pool_bytes", _LEGACY_BYTES, int)),
    ("tokens in paged KV cache", single("legacy_pool_tokens", _LEGACY_TOKENS, int)),
    ("blocks per sequence", single("legacy_blocks_per_sequence", _LEGACY_PER_SEQUENCE, int)),
    ("could not be created:", single("components_not_created", _NOT_CREATED, str)),
    ("before component creation attempt (GiB):", single("free_before_creation", _CREATION_FREE, _gib)),
    ("Total GPU memory (GiB):", single("creation_total", _CREATION_TOTAL, _gib)),
    ("Model: ", _model_creation),
    ("Memory usage when calculating max tokens in paged kv cache", _cpp_memory),
    ("Number of blocks in KV cache primary pool", single("primary_pool_blocks", _PRIMARY, int)),
    ("Max KV cache blocks per sequence", _per_sequence),
    ("Number of tokens per block", single("tokens_per_block", _TOKENS_PER_BLOCK, int)),
    ("Peak memory during memory usage profiling", _profile),
    ("in memory usage profiling:", _profiled),
    ("Estimated max memory in KV cache", single("estimated_max_memory", _ESTIMATED, _gib)),
    ("and max_tokens are set (to", _max_tokens),
    ("max_tokens is set by kv_cache_config.max_tokens", _max_tokens),
    ("exceeds upper bound", single("window_upper_bounds", _UPPER_BOUND, int)),
    ("max_seq_len is not specified, using inferred value", single("inferred_max_seq_len", _INFERRED, int)),
    ("max_num_requests=", _summary),
    ("GB for model weights", single("weights_loaded", _WEIGHTS, _gib)),
    ("Using LLM with PyTorch backend", _pytorch),
    ("LLM version:", _start),
    ("Loaded engine size:", single("engine_size", _ENGINE_SIZE, _mib)),
    ("MiB for execution context memory", single("execution_context", _CONTEXT, _mib)),
)
"""(trigger substring, handler): a handler runs only on lines that contain its trigger."""


def freeze(rank: RankKey, fields: Fields) -> TrtllmRankLog:
    """The frozen record of one process from the lists the handlers filled."""
    values: dict[str, Any] = {
        name: tuple(items) for name, items in fields.items() if items and name != "pytorch_backend"
    }
    return TrtllmRankLog(rank=rank, pytorch_backend=bool(fields.get("pytorch_backend")), **values)


# --- whole-log lines ----------------------------------------------------------------------------

_VERSION = re.compile(r"TensorRT[- ]LLM version: (\d[\w.+-]{0,40})")
_RANK = re.compile(r"\[RANK (\d{1,6})\]")
_DATE = re.compile(r"\[(?P<m>[01]\d)/(?P<d>[0-3]\d)/(?P<y>20\d\d)-\d\d:\d\d:\d\d\]")


_version = version_line(_VERSION)


DIALECT = LogDialect(
    engine="trtllm",
    rank_handlers=HANDLERS,
    log_handlers=(("LLM version:", _version),),
    launch=re.compile(
        r"(?:python[\d.]*\s+-m\s+tensorrt_llm\.commands\.serve|python[\d.]*\s+-m\s+dynamo\.trtllm|trtllm-serve)\b.*"
    ),
    own_failures=re.compile(r"\[TensorRT-LLM\]\[ERROR\]|\[TRT-LLM\](?: \[RANK \d{1,6}\])? \[E\]"),
    freeze=freeze,
    rank_prefix=_RANK,
    date=_DATE,
    # the PyTorch backend's executor creation (1.0+) and the C++ runtime's one-sequence check (≤ v0.8)
    refusals=(
        "Executor creation failed due to insufficient GPU memory",
        "maxTokensInPagedKvCache must be large enough",
        "maxTokensInPagedKvCache (",
    ),
    ready=("successfully loaded 'tensorrt_llm'",),  # the Triton backend's model is up
    launch_words=("trtllm-serve", "tensorrt_llm.commands.serve", "dynamo.trtllm"),
)
