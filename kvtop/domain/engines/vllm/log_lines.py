"""vLLM startup-log lines (docs/engines/vllm.md §1, §2, §5, §6, §9), one handler per kind of line, and its dialect.

The lines of one sentence are read here; the memory messages of several sentences (the startup ledger, the
admission error, V0's profile) in `log_memory`, the figures' text in `log_figures`, the whole-log lines
(arguments, version, a process's rank) in `log_facts`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kvtop.domain.engine_log import RankKey
from kvtop.domain.engines.vllm.log_facts import (
    engine_config,
    hybrid_off,
    model_runner,
    mxfp4_backend,
    namespace_args,
    non_default_args,
    rank_of_processes,
    refused_length,
    version,
)
from kvtop.domain.engines.vllm.log_figures import (
    COUNT,
    GIB_FIGURE,
    NUM,
    count,
    gib,
    gib_before,
    merge,
    rounded,
    rounded_text,
)
from kvtop.domain.engines.vllm.log_memory import MEMORY_HANDLERS
from kvtop.domain.engines.vllm.log_records import (
    BlocksOverride,
    Concurrency,
    GraphAdvisory,
    GraphCaptureFinished,
    GraphPool,
    KvAdmissionError,
    ModelLoading,
    StartupLedger,
    StartupShortfall,
    V0MemoryProfile,
    VllmRankLog,
    WarmupSizing,
)
from kvtop.domain.log_dialect import Fields, LogDialect, RankHandler, single

_LOADING = re.compile(
    rf"(?:Model loading|Loading model weights) took ({NUM})\s*(GiB|GB)(?:\s+memory)?(?:\s+and\s+({NUM})\s*s)?"
)
_AVAILABLE = re.compile(rf"Available KV cache memory: {GIB_FIGURE}")
_TOKENS = re.compile(rf"GPU KV cache size: {COUNT} tokens")
_WARMUP = re.compile(
    rf"Memory after warmup: {GIB_FIGURE} free, {GIB_FIGURE} committed to the KV cache\b.{{0,400}}?; "
    rf"{COUNT} KV cache blocks \({GIB_FIGURE}\) fit within the requested {GIB_FIGURE}"
)
_CONCURRENCY = re.compile(rf"Maximum concurrency for {COUNT} tokens per request: ({NUM})\s*x")
_BLOCKS = re.compile(rf" blocks: {COUNT}")
_OVERRIDE = re.compile(r"Overriding num_gpu_blocks=(\d{1,20}) with num_gpu_blocks_override=(\d{1,20})")
_UTIL_NOW = re.compile(rf"current --gpu-memory-utilization=({NUM})")
_UTIL_EQUIVALENT = re.compile(rf"equivalent to --gpu-memory-utilization=({NUM})")
_UTIL_SUGGESTED = re.compile(rf"increase --gpu-memory-utilization to ({NUM})")
_ESTIMATED = re.compile(rf"Estimated CUDA graph memory: {GIB_FIGURE}")
_CAPTURED = re.compile(rf"Graph capturing finished in ({NUM}) secs?, took {GIB_FIGURE}")
_POOL_ACTUAL = re.compile(r"GiB \(actual\)")
_POOL_ESTIMATED = re.compile(r"GiB \(estimated\)")
_POOL_DIFFERENCE = re.compile(rf"difference: {GIB_FIGURE}(?: \(({NUM})%\))?")
_BLOCK_SIZE = re.compile(r"Setting (?:kv cache|attention) block size to (\d{1,12})")
_BACKEND_BLOCK = re.compile(r"(?:Forcing|Setting) kv cache block size to (\d{1,12}) for \w")
# vLLM's own prefix (`[cuda.py:191] `, `selector.py:135] `) before it: another engine's "Using … backend" is not read
_BACKEND = re.compile(
    r"\.py:\d{1,5}\]\s+Using (?:AttentionBackendEnum\.|_Backend\.)?"
    r"(Triton MLA|Cutlass MLA|Flash Attention|FlashInfer MLA|Torch SDPA|[A-Za-z][A-Za-z0-9_]{1,30}) (?:attention )?backend\b"
)
_BACKEND_ALIASES = {"FLASH_ATTENTION": "FLASH_ATTN", "FLASHINFER_MLA": "FLASHINFER_MLA", "FLASH_MLA": "FLASHMLA"}
# only vLLM's own kernel-config paths (SGLang's fused-MoE configs name the device too)
_DEVICE_NAME = re.compile(r"vllm/model_executor/\S{0,200}?device_name=([A-Za-z][\w-]{1,80}?)(?:\.json|[,\s]|$)")
_ASSIGNED_PP = re.compile(r"in world size \d{1,6} is assigned as DP rank \d{1,6}, PP rank (\d{1,6})")
_INIT_ENGINE = re.compile(rf"warmup model\) took ({NUM})\s*s")
_ENCODER_BUDGET = re.compile(r"Encoder cache will be initialized with a budget of (\d{1,12}) tokens")
_COMPILE_CACHE = re.compile(r"(Directly load (?:the compiled graph|AOT compilation))")
_COMPILE_MISS = re.compile(r"(Compiling a graph for (?:compile range|dynamic shape|general shape|shape))")
_COMPILE_OFF = re.compile(r"(torch\.compile cache is disabled)")


def _blocks(text: str, fields: Fields) -> bool:
    """`# GPU blocks: N`, `# cuda blocks: N`, `# CPU blocks: M` (V0 and early V1)."""
    took = False
    for match in _BLOCKS.finditer(text):
        device = text[max(match.start() - 4, 0) : match.start()].lower()
        name = "num_cpu_blocks" if device.endswith("cpu") else "num_gpu_blocks"
        if device.endswith(("gpu", "cuda", "cpu")):
            fields[name].append(count(match.group(1)))
            if name == "num_gpu_blocks" and "kv_cache_utils.py" in text[: match.start()]:
                fields["v1_gpu_blocks"].append(count(match.group(1)))
            took = True
    return took


def _loading(text: str, fields: Fields) -> bool:
    start = max(text.find("Model loading took"), text.find("Loading model weights took"), 0)
    match = _LOADING.search(text, start)
    if match is None:
        return False
    seconds = float(match.group(3)) if match.group(3) else None
    fields["model_loading"].append(ModelLoading(memory=gib(match.group(1), match.group(2)), seconds=seconds))
    return True


def _warmup(text: str, fields: Fields) -> bool:
    """v0.34.0's `Memory after warmup: …; N KV cache blocks (K GiB) fit within the requested R GiB.`
    (v1/worker/extensible_kv_cache.py:693-708)."""
    match = _WARMUP.search(text)
    if match is None:
        return False
    free, committed, blocks, kv, requested = match.groups()
    fields["warmup_sizings"].append(
        WarmupSizing(free=gib(free), committed=gib(committed), num_blocks=count(blocks), kv_cache=gib(kv),
                     requested=gib(requested))
    )  # fmt: skip
    return True


def _concurrency(text: str, fields: Fields) -> bool:
    match = _CONCURRENCY.search(text)
    if match is None:
        return False
    concurrency = Concurrency(
        tokens_per_request=count(match.group(1)), concurrency=rounded_text(match.group(2))
    )
    fields["max_concurrency"].append(concurrency)
    return True


def _override(text: str, fields: Fields) -> bool:
    """`--num-gpu-blocks-override` as the engine applied it. vLLM 0.19–0.20's CUDA-graph memory profiling
    builds a throwaway KV cache first: `Overriding num_gpu_blocks=0 with num_gpu_blocks_override=512`, then
    `Profiling CUDA graph memory` (gpu_model_runner.profile_cudagraph_memory, no memory measured yet, so 0
    blocks). No operator override reads 0 computed blocks: such a line is read and left out."""
    match = _OVERRIDE.search(text)
    if match is None:
        return False
    if int(match.group(1)) > 0:
        fields["blocks_overrides"].append(
            BlocksOverride(num_gpu_blocks=int(match.group(1)), override=int(match.group(2)))
        )
    return True


def _advisory(text: str, fields: Fields) -> bool:
    values = {
        "util": rounded(_UTIL_NOW, text),
        "equivalent_util": rounded(_UTIL_EQUIVALENT, text),
        "suggested_util": rounded(_UTIL_SUGGESTED, text),
    }
    return merge(fields["graph_advisories"], values, new=True)


def _captured(text: str, fields: Fields) -> bool:
    match = _CAPTURED.search(text)
    if match is None:
        return False
    capture = GraphCaptureFinished(seconds=float(match.group(1)), memory=gib(match.group(2)))
    fields["graph_captures"].append(capture)
    return True


def _pool(text: str, fields: Fields) -> bool:
    difference = _POOL_DIFFERENCE.search(text)
    values = {
        "actual": gib_before(_POOL_ACTUAL, text),
        "estimated": gib_before(_POOL_ESTIMATED, text),
        "difference": gib(difference.group(1)) if difference else None,
        "difference_pct": rounded_text(difference.group(2)) if difference and difference.group(2) else None,
    }
    return merge(fields["graph_pools"], values, new=True)


def _backend(text: str, fields: Fields) -> bool:
    """`Using Triton MLA backend.` (V0), `Using FlashMLA backend on V1 engine.`, `Using AttentionBackendEnum.FLASHMLA
    backend.`: the backend in vLLM's enum spelling (TRITON_MLA, FLASHMLA, CUTLASS_MLA, FLASH_ATTN…)."""
    match = _BACKEND.search(text)
    if match is None:
        return False
    name = match.group(1).removesuffix(" on V1 engine").strip().upper().replace(" ", "_")
    fields["attention_backends"].append(_BACKEND_ALIASES.get(name, name))
    return True


def _device_name(text: str, fields: Fields) -> bool:
    """The device name in a kernel-config path (`device_name=NVIDIA_A100-SXM4-40GB.json`), as CUDA names it."""
    match = _DEVICE_NAME.search(text)
    if match is None:
        return False
    fields["device_names"].append(match.group(1).replace("_", " "))
    return True


_RAY_FOLDED = re.compile(r"\[repeated (\d{1,6})x across cluster\]")
_KV_MEMORY_WORDS = ("Available KV cache memory:", "reserved for KV Cache is", "kv_cache_size=", "kv cache memory in use")


def _ray_folded(text: str, fields: Fields) -> bool:
    """Ray's deduplication (`… [repeated Nx across cluster]`, on unless RAY_DEDUP_LOGS=0) prints one of
    N + 1 workers' identical-but-for-numbers lines: on a KV-memory line, N workers' figures are lost."""
    match = _RAY_FOLDED.search(text)
    if match is None or not any(word in text for word in _KV_MEMORY_WORDS):
        return False
    fields["ray_folded_kv_figures"].append(int(match.group(1)))
    return True


HANDLERS: tuple[tuple[str, RankHandler], ...] = (
    ("Model loading took", _loading),
    ("Loading model weights took", _loading),
    ("Available KV cache memory:", single("available_kv_cache_memory", _AVAILABLE, gib)),
    ("GPU KV cache size:", single("kv_cache_tokens", _TOKENS, count)),
    ("Memory after warmup:", _warmup),
    ("Maximum concurrency for", _concurrency),
    ("blocks: ", _blocks),
    ("Overriding num_gpu_blocks=", _override),
    ("is equivalent to --gpu-memory-utilization", _advisory),
    ("Estimated CUDA graph memory:", single("estimated_cuda_graph_memory", _ESTIMATED, gib)),
    ("Graph capturing finished", _captured),
    ("CUDA graph pool memory:", _pool),
    *MEMORY_HANDLERS,
    ("warmup model) took", single("init_engine_seconds", _INIT_ENGINE, float)),
    ("Encoder cache will be initialized", single("encoder_cache_budgets", _ENCODER_BUDGET, int)),
    ("block size to ", single("block_sizes", _BLOCK_SIZE, int)),
    ("kv cache block size to ", single("forced_blocks", _BACKEND_BLOCK, int)),
    (" backend", _backend),
    ("device_name=", _device_name),
    ("is assigned as DP rank", single("pipeline_stages", _ASSIGNED_PP, int)),
    ("x across cluster]", _ray_folded),
    ("Directly load ", single("compile_cache_loads", _COMPILE_CACHE, str)),
    ("Compiling a graph for ", single("compile_cache_misses", _COMPILE_MISS, str)),
    ("torch.compile cache is disabled", single("compile_cache_disabled", _COMPILE_OFF, str)),
)
"""(trigger substring, handler): a handler runs only on lines that contain its trigger."""


_RECORDS: dict[str, Callable[..., Any]] = {
    "graph_advisories": GraphAdvisory,
    "graph_pools": GraphPool,
    "startup_ledgers": StartupLedger,
    "startup_shortfalls": StartupShortfall,
    "admission_errors": KvAdmissionError,
    "v0_profiles": V0MemoryProfile,
}


def freeze(rank: RankKey, fields: Fields) -> VllmRankLog:
    """The frozen record of one process from the lists the handlers filled (records are dicts)."""
    values = {
        name: tuple(_RECORDS[name](**item) if isinstance(item, dict) else item for item in items)
        for name, items in fields.items()
        if items
    }
    return VllmRankLog(rank=rank, **values)


DIALECT = LogDialect(
    engine="vllm",
    rank_handlers=HANDLERS,
    log_handlers=(
        ("non-default args:", non_default_args),
        ("Namespace(", namespace_args),
        ("LLM engine (v", engine_config),
        ("server version ", version),
        ("Turning off hybrid kv cache manager", hybrid_off),
        ("Using Marlin backend", mxfp4_backend),
        ("Using Triton backend", mxfp4_backend),
        (" Mxfp4 MoE ", mxfp4_backend),
        ("max seq len (", refused_length),
        ("Using V2 Model Runner", model_runner),
        ("using the V1 model runner instead", model_runner),
        ("using the v1 model runner instead", model_runner),
    ),
    launch=re.compile(
        r"(?:python[\d.]*\s+-m\s+)?(?:vllm serve|vllm\.entrypoints\.openai\.api_server|vllm\.entrypoints\.cli\.main serve"
        r"|vllm/vllm-openai(?::[\w.-]{1,60})?(?=\s))\b.*"
    ),
    own_failures=re.compile(r"EngineCore failed to start|Engine core initialization failed"),
    freeze=freeze,
    # V0 `raise_if_cache_size_invalid` (its message is logged without the exception name by the engine
    # process and the workers), and V1 `_check_enough_kv_cache_memory` (docs/engines/vllm.md §9)
    refusals=(
        "The model's max seq len (",
        "No available memory for the cache blocks",
        "To serve at least one request with the model",
        "EngineCore failed to start",
        "Engine core initialization failed",
    ),
    launch_words=("serve", "api_server", "vllm/vllm-openai"),
    positional_model=re.compile(r"(?:vllm serve|vllm/vllm-openai(?::[\w.-]{1,60})?) ([^\s'\"-][^\s'\"]{0,500})"),
    rank_reader=rank_of_processes,
    rank_hint="pid=",
    start_failures=("EngineCore failed to start", "Engine core initialization failed"),
    line_shape=re.compile(
        r"(?:INFO|WARNING|ERROR|DEBUG)\s+\d\d-\d\d \d\d:\d\d:\d\d"
        r"|\([\w-]{1,60}(?: rank=\d{1,6})?(?: engine_index=\d{1,6})? pid=\d{1,10}\)"
    ),
)
