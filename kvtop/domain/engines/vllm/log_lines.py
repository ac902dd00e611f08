"""vLLM startup-log lines (docs/engines/vllm.md §1, §2, §5, §6, §9), one handler per kind of line.

vLLM prints memory with `format_gib` (Python `round(x, 2)`, trailing zeros dropped: "22.5") or
`%.2f`/`%.4f`; every figure is bytes / 2**30, even where old builds label it "GB". A figure is
therefore never taken at fewer than 2 decimals. Multi-sentence messages (the startup ledger, the
admission error) may be reflowed over several lines: each sentence is matched on its own and
completes the latest record of its process.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from kvtop.domain.engine_log import Measured, RankKey, Rounded
from kvtop.domain.engines.vllm.log_facts import (
    engine_config,
    hybrid_off,
    namespace_args,
    non_default_args,
    rank_of_processes,
    version,
)
from kvtop.domain.engines.vllm.log_records import (
    BlocksOverride,
    Concurrency,
    GraphAdvisory,
    GraphCaptureFinished,
    GraphPool,
    KvAdmissionError,
    KvMemoryReserved,
    KvTokenShortfall,
    ModelLoading,
    StartupLedger,
    StartupShortfall,
    V0MemoryProfile,
    VllmRankLog,
)
from kvtop.domain.log_dialect import (
    Fields,
    LogDialect,
    RankHandler,
)

Handler = RankHandler

_NUM = r"-?\d{1,15}(?:\.\d{1,12})?"
_COUNT = r"(\d[\d,]{0,29})"
_GIB = rf"({_NUM})\s*GiB"

_LOADING = re.compile(
    rf"(?:Model loading|Loading model weights) took ({_NUM})\s*(GiB|GB)(?:\s+memory)?(?:\s+and\s+({_NUM})\s*s)?"
)
_AVAILABLE = re.compile(rf"Available KV cache memory: {_GIB}")
_TOKENS = re.compile(rf"GPU KV cache size: {_COUNT} tokens")
_CONCURRENCY = re.compile(rf"Maximum concurrency for {_COUNT} tokens per request: ({_NUM})\s*x")
_BLOCKS = re.compile(rf" blocks: {_COUNT}")
_OVERRIDE = re.compile(r"Overriding num_gpu_blocks=(\d{1,20}) with num_gpu_blocks_override=(\d{1,20})")
_UTIL_NOW = re.compile(rf"current --gpu-memory-utilization=({_NUM})")
_UTIL_EQUIVALENT = re.compile(rf"equivalent to --gpu-memory-utilization=({_NUM})")
_UTIL_SUGGESTED = re.compile(rf"increase --gpu-memory-utilization to ({_NUM})")
_ESTIMATED = re.compile(rf"Estimated CUDA graph memory: {_GIB}")
_CAPTURED = re.compile(rf"Graph capturing finished in ({_NUM}) secs?, took {_GIB}")
_POOL_ACTUAL = re.compile(r"GiB \(actual\)")
_POOL_ESTIMATED = re.compile(r"GiB \(estimated\)")
_POOL_DIFFERENCE = re.compile(rf"difference: {_GIB}(?: \(({_NUM})%\))?")
_FREE = re.compile(rf"Free memory on device\s*(?:\S{{1,40}}\s+)?\(({_NUM})/{_GIB}\) on startup")
_DESIRED = re.compile(
    rf"(?:esired GPU memory utilization is|esired GPU memory utilization) \(({_NUM}), {_GIB}\)"
)
_USAGE_PART = re.compile(
    r"GiB for (weight|consumed memory|peak activation|non-torch memory|CUDAGraph memory)"
)
_USAGE_FIELDS = {
    "weight": "weights",
    "consumed memory": "consumed",
    "peak activation": "peak_activation",
    "non-torch memory": "non_torch",
    "CUDAGraph memory": "cuda_graph",
}
_FIT = re.compile(rf"--kv-cache-memory=(\d{{1,20}})`?\s*\({_GIB}\) to fit")
_FULL = re.compile(rf"--kv-cache-memory=(\d{{1,20}})`?\s*\({_GIB}\) to fully")
_IN_USE = re.compile(rf"Current kv cache memory in use is {_GIB}")
_MAX_SEQ_LEN = re.compile(r"max seq len \((\d{1,20})\)")
_NEEDED = re.compile(r"GiB KV cache is needed")
_TRAILING_NUMBER = re.compile(rf"({_NUM})\s*$")
_ADMISSION_AVAILABLE = re.compile(rf"available KV cache memory \({_GIB}\)")
_ESTIMATED_LEN = re.compile(r"estimated maximum model length is (\d{1,20})")
_TOKEN_SHORTFALL = re.compile(
    r"max seq len \((\d{1,20})\) is larger than the maximum number of tokens that can be stored in KV cache \((\d{1,20})\)"
)
_RESERVED = re.compile(rf"Initial free memory {_GIB}, reserved {_GIB} memory for KV Cache")
_PROFILE_PAIR = re.compile(rf"(\w{{1,40}})=({_NUM})\s*GiB")
_PROFILE_UTIL = re.compile(rf"gpu_memory_utilization[ =(]{{1,2}}({_NUM})")
_PROFILE_TOTAL = re.compile(rf"total_gpu_memory \({_GIB}\) x gpu_memory_utilization \(({_NUM})\) = {_GIB}")
_PROFILE_SENTENCE = re.compile(
    rf"(model weights take|non_torch_memory takes|PyTorch activation peak memory takes|"
    rf"the rest of the memory reserved for KV Cache is) {_GIB}"
)
_PROFILE_KEYS = {
    "model weights take": "weights",
    "non_torch_memory takes": "non_torch_memory",
    "PyTorch activation peak memory takes": "peak_activation",
    "the rest of the memory reserved for KV Cache is": "kv_cache_size",
}
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
_INIT_ENGINE = re.compile(rf"warmup model\) took ({_NUM})\s*s")


@lru_cache(maxsize=4096)
def _gib(text: str, unit: str = "GiB") -> Measured:
    """A vLLM figure, never at fewer than 2 decimals (format_gib drops trailing zeros); cached."""
    printed = len(text.split(".", 1)[1]) if "." in text else 0
    return Measured.from_text(text, unit=unit, decimals=max(printed, 2))


@lru_cache(maxsize=1024)
def _rounded_text(text: str) -> Rounded:
    return Rounded.from_text(text)


def _gib_before(pattern: re.Pattern[str], text: str) -> Measured | None:
    """The 'X' of 'X GiB <words>' where `pattern` matches 'GiB <words>' (a literal-first search is
    far faster than a number-first one on long lines)."""
    match = pattern.search(text)
    return _number_before(text, match.start()) if match else None


def _number_before(text: str, end: int) -> Measured | None:
    number = _TRAILING_NUMBER.search(text, max(end - 32, 0), end)
    return _gib(number.group(1)) if number else None


def _found_gib(pattern: re.Pattern[str], text: str, group: int = 1) -> Measured | None:
    match = pattern.search(text)
    return _gib(match.group(group)) if match else None


def _count(text: str) -> int:
    return int(text.replace(",", ""))


def _rounded(pattern: re.Pattern[str], text: str) -> Rounded | None:
    match = pattern.search(text)
    return _rounded_text(match.group(1)) if match else None


def _merge(items: list[Any], values: dict[str, Any], *, new: bool = False) -> bool:
    """Complete the latest record (a dict until `freeze`) with `values`, or start one when asked
    or when they clash with what it already holds."""
    stated = {key: value for key, value in values.items() if value is not None}
    if not stated:
        return False
    if not new and items and all(items[-1].get(key) is None for key in stated):
        items[-1].update(stated)
    else:
        items.append(stated)
    return True


def _single(name: str, pattern: re.Pattern[str], convert: Callable[[str], Any]) -> Handler:
    """A handler appending every match of `pattern` (group 1, converted) to field `name`."""

    def handle(text: str, fields: Fields) -> bool:
        found = [convert(match.group(1)) for match in pattern.finditer(text)]
        fields[name].extend(found)
        return bool(found)

    return handle


def _blocks(text: str, fields: Fields) -> bool:
    """`# GPU blocks: N`, `# cuda blocks: N`, `# CPU blocks: M` (V0 and early V1)."""
    took = False
    for match in _BLOCKS.finditer(text):
        device = text[max(match.start() - 4, 0) : match.start()].lower()
        name = "num_cpu_blocks" if device.endswith("cpu") else "num_gpu_blocks"
        if device.endswith(("gpu", "cuda", "cpu")):
            fields[name].append(_count(match.group(1)))
            took = True
    return took


def _loading(text: str, fields: Fields) -> bool:
    start = max(text.find("Model loading took"), text.find("Loading model weights took"), 0)
    match = _LOADING.search(text, start)
    if match is None:
        return False
    seconds = float(match.group(3)) if match.group(3) else None
    fields["model_loading"].append(ModelLoading(memory=_gib(match.group(1), match.group(2)), seconds=seconds))
    return True


def _concurrency(text: str, fields: Fields) -> bool:
    match = _CONCURRENCY.search(text)
    if match is None:
        return False
    concurrency = Concurrency(
        tokens_per_request=_count(match.group(1)), concurrency=_rounded_text(match.group(2))
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
        "util": _rounded(_UTIL_NOW, text),
        "equivalent_util": _rounded(_UTIL_EQUIVALENT, text),
        "suggested_util": _rounded(_UTIL_SUGGESTED, text),
    }
    return _merge(fields["graph_advisories"], values, new=True)


def _captured(text: str, fields: Fields) -> bool:
    match = _CAPTURED.search(text)
    if match is None:
        return False
    capture = GraphCaptureFinished(seconds=float(match.group(1)), memory=_gib(match.group(2)))
    fields["graph_captures"].append(capture)
    return True


def _pool(text: str, fields: Fields) -> bool:
    difference = _POOL_DIFFERENCE.search(text)
    values = {
        "actual": _gib_before(_POOL_ACTUAL, text),
        "estimated": _gib_before(_POOL_ESTIMATED, text),
        "difference": _gib(difference.group(1)) if difference else None,
        "difference_pct": _rounded_text(difference.group(2)) if difference and difference.group(2) else None,
    }
    return _merge(fields["graph_pools"], values, new=True)


def _free_on_startup(text: str, fields: Fields) -> bool:
    free = _FREE.search(text)
    values: dict[str, Any] = {
        "free": _gib(free.group(1)) if free else None,
        "total": _gib(free.group(2)) if free else None,
    }
    if "is less than desired" in text:
        desired = _DESIRED.search(text)
        values["util"] = _rounded_text(desired.group(1)) if desired else None
        values["requested"] = _gib(desired.group(2)) if desired else None
        return _merge(fields["startup_shortfalls"], values, new=True)
    return _merge(fields["startup_ledgers"], values, new=True)


def _desired(text: str, fields: Fields) -> bool:
    desired = _DESIRED.search(text)
    if desired is None or "is less than desired" in text:
        return False
    values = {"util": _rounded_text(desired.group(1)), "requested": _gib(desired.group(2))}
    return _merge(fields["startup_ledgers"], values)


def _actual_usage(text: str, fields: Fields) -> bool:
    values = {
        _USAGE_FIELDS[match.group(1)]: _number_before(text, match.start())
        for match in _USAGE_PART.finditer(text)
    }
    return _merge(fields["startup_ledgers"], values)


def _suggested_kv(text: str, fields: Fields) -> bool:
    fit, full = _FIT.search(text), _FULL.search(text)
    values = {
        "fit_kv_bytes": int(fit.group(1)) if fit else None,
        "fit_kv": _gib(fit.group(2)) if fit else None,
        "full_kv_bytes": int(full.group(1)) if full else None,
        "full_kv": _gib(full.group(2)) if full else None,
    }
    return _merge(fields["startup_ledgers"], values)


def _in_use(text: str, fields: Fields) -> bool:
    return _merge(fields["startup_ledgers"], {"kv_in_use": _found_gib(_IN_USE, text)})


def _admission(text: str, fields: Fields) -> bool:
    seq_len = _MAX_SEQ_LEN.search(text)
    estimated = _ESTIMATED_LEN.search(text)
    values = {
        "max_seq_len": int(seq_len.group(1)) if seq_len else None,
        "needed": _gib_before(_NEEDED, text),
        "available": _found_gib(_ADMISSION_AVAILABLE, text),
        "estimated_max_model_len": int(estimated.group(1)) if estimated else None,
    }
    return _merge(fields["admission_errors"], values, new=True)


def _estimated_len(text: str, fields: Fields) -> bool:
    if "KV cache is needed" in text:
        return False  # the admission handler took it with the rest of the message
    estimated = _ESTIMATED_LEN.search(text)
    values = {"estimated_max_model_len": int(estimated.group(1)) if estimated else None}
    return _merge(fields["admission_errors"], values)


def _token_shortfall(text: str, fields: Fields) -> bool:
    match = _TOKEN_SHORTFALL.search(text)
    if match is None:
        return False
    shortfall = KvTokenShortfall(max_seq_len=int(match.group(1)), kv_tokens=int(match.group(2)))
    fields["token_shortfalls"].append(shortfall)
    return True


def _reserved(text: str, fields: Fields) -> bool:
    match = _RESERVED.search(text)
    if match is None:
        return False
    reserved = KvMemoryReserved(initial_free=_gib(match.group(1)), reserved=_gib(match.group(2)))
    fields["kv_memory_reserved"].append(reserved)
    return True


def _add_profile(fields: Fields, figures: dict[str, Measured], util: float | None, *, new: bool) -> bool:
    profiles = fields["v0_profiles"]
    if not figures and util is None:
        return False
    last = profiles[-1] if profiles else None
    if not new and last is not None and not set(figures) & set(last["figures"]):
        last["figures"].update(figures)
        last["gpu_memory_utilization"] = last["gpu_memory_utilization"] if util is None else util
    else:
        profiles.append({"figures": dict(figures), "gpu_memory_utilization": util})
    return True


def _profile_results(text: str, fields: Fields) -> bool:
    figures = {match.group(1): _gib(match.group(2)) for match in _PROFILE_PAIR.finditer(text)}
    util = _PROFILE_UTIL.search(text)
    return _add_profile(fields, figures, float(util.group(1)) if util else None, new=True)


def _profile_total(text: str, fields: Fields) -> bool:
    match = _PROFILE_TOTAL.search(text)
    if match is None:
        return False
    figures = {"total_gpu_memory": _gib(match.group(1)), "requested": _gib(match.group(3))}
    return _add_profile(fields, figures, float(match.group(2)), new=True)


def _profile_sentences(text: str, fields: Fields) -> bool:
    figures = {_PROFILE_KEYS[m.group(1)]: _gib(m.group(2)) for m in _PROFILE_SENTENCE.finditer(text)}
    return _add_profile(fields, figures, None, new=False)


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


HANDLERS: tuple[tuple[str, Handler], ...] = (
    ("Model loading took", _loading),
    ("Loading model weights took", _loading),
    ("Available KV cache memory:", _single("available_kv_cache_memory", _AVAILABLE, _gib)),
    ("GPU KV cache size:", _single("kv_cache_tokens", _TOKENS, _count)),
    ("Maximum concurrency for", _concurrency),
    ("blocks: ", _blocks),
    ("Overriding num_gpu_blocks=", _override),
    ("is equivalent to --gpu-memory-utilization", _advisory),
    ("Estimated CUDA graph memory:", _single("estimated_cuda_graph_memory", _ESTIMATED, _gib)),
    ("Graph capturing finished", _captured),
    ("CUDA graph pool memory:", _pool),
    ("Free memory on device", _free_on_startup),
    ("esired GPU memory utilization is (", _desired),
    ("Actual usage is", _actual_usage),
    ("--kv-cache-memory=", _suggested_kv),
    ("Current kv cache memory in use", _in_use),
    ("KV cache is needed", _admission),
    ("estimated maximum model length is", _estimated_len),
    ("stored in KV cache (", _token_shortfall),
    ("as specified by kv_cache_memory_bytes", _reserved),
    ("Memory profiling results", _profile_results),
    ("x gpu_memory_utilization (", _profile_total),
    (" take", _profile_sentences),
    ("warmup model) took", _single("init_engine_seconds", _INIT_ENGINE, float)),
    ("block size to ", _single("block_sizes", _BLOCK_SIZE, int)),
    ("kv cache block size to ", _single("forced_blocks", _BACKEND_BLOCK, int)),
    (" backend", _backend),
    ("device_name=", _device_name),
    ("is assigned as DP rank", _single("pipeline_stages", _ASSIGNED_PP, int)),
    ("x across cluster]", _ray_folded),
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
