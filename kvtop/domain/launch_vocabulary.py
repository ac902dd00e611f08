"""The words a launch is parsed into, named by no engine: the canonical fields and their checks, kvtop's own spellings,
kvtop's own flag for one engine (`OwnFlag`), a kind of flags with no effect on memory (`NeutralGroup`), and the
canonical fields written back in an engine's spelling (`written_flags`).

Split from launch.py (which parses a launch with them and re-exports them) so that it stays one reader's size; the
protocol each engine's flags implement (`EngineFlags`) stays there, beside `LaunchSettings`, which it takes.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from kvtop.domain.errors import InputError
from kvtop.domain.redact import quoted

# canonical field -> value type (the engines' spellings live in their packages)
FIELD_TYPES: dict[str, type] = {
    "model": str, "host": str, "port": int, "tp": int, "pp": int, "dp": int, "ep": int, "dcp": int,
    "enable_dp_attention": bool, "enable_expert_parallel": bool, "mem_fraction_static": float,
    "gpu_memory_utilization": float, "kv_cache_dtype": str, "page_size": int, "context_length": int,
    "max_running_requests": int, "max_total_tokens": int, "chunked_prefill_size": int,
    "max_prefill_tokens": int, "max_num_batched_tokens": int, "kv_cache_memory_bytes": int,
    "num_gpu_blocks_override": int, "swa_full_tokens_ratio": float, "disable_hybrid_swa_memory": bool,
    "disable_hybrid_kv_cache_manager": bool, "disable_radix_cache": bool, "enforce_eager": bool,
    "quantization": str, "dtype": str, "cuda_graph_max_bs": int, "engine_version": str,
    # LMDeploy
    "backend": str, "cache_max_entry_count": float, "cache_chunk_size": int, "prefix_cache_state_budget": int,
    "turbomind_workspace": bool,
    # vLLM: started through its offline `LLM(...)` class (usage context LLM_CLASS), not `vllm serve`
    "llm_class": bool,
    # vLLM: started through `EngineArgs` → `LLMEngine` (usage context ENGINE_CONTEXT), not `vllm serve`
    "engine_context": bool,
    # TensorRT-LLM: trtllm-serve flags and the --extra_llm_api_options YAML's kv_cache_config keys
    "free_gpu_memory_fraction": float, "kv_cache_max_tokens": int, "max_gpu_total_bytes": int,
    "max_beam_width": int, "extra_llm_api_options": str, "max_input_len": int,
}  # fmt: skip
# sizes in bytes that kvtop also takes written with their unit ('20GiB', '20GB') where they are typed to kvtop; on an
# engine's own command line (`--cmd`, a process, a log) only what the engine reads (EngineFlags.read_int, else int())
WRITTEN_SIZE_FIELDS = frozenset({"kv_cache_memory_bytes"})
# kvtop's own spellings, the same for every engine
KVTOP_SPELLINGS: dict[str, str] = {
    "--tp": "tp", "--pp": "pp", "--dp": "dp", "--ep": "ep", "--dcp": "dcp", "--model": "model",
    "--engine-version": "engine_version",
}  # fmt: skip
# Counts that must be at least 1 unless the engine documents a smaller value (`EngineFlags.specials`).
POSITIVE_COUNTS = (
    "tp", "pp", "dp", "ep", "dcp", "port", "page_size", "context_length", "max_running_requests",
    "max_total_tokens", "chunked_prefill_size", "max_prefill_tokens", "max_num_batched_tokens",
    "num_gpu_blocks_override", "cuda_graph_max_bs", "kv_cache_memory_bytes",
    # TensorRT-LLM
    "kv_cache_max_tokens", "max_gpu_total_bytes", "max_beam_width", "max_input_len",
)  # fmt: skip
FRACTIONS = (
    "mem_fraction_static",
    "gpu_memory_utilization",
    "swa_full_tokens_ratio",
    "free_gpu_memory_fraction",  # TensorRT-LLM
)
# No node has more than this many GPUs per engine, nor tokens beyond int64 page tables: anything
# larger is a typo (and an unbounded count would make kvtop loop or allocate without end).
MAX_PARALLEL = 4096
MAX_COUNT = 1 << 40
# the KV dtype words of an engine whose values are names already (`EngineFlags.kv_cache_dtype_words`)
NO_WORDS: Mapping[str, str] = MappingProxyType({})


class OwnFlag(BaseModel):
    """A flag kvtop takes for one engine that the engine itself does not have: it states a fact the engine
    reads elsewhere (off the model path, say). Typed to kvtop, read off a log; inside an engine's own
    command line (`--cmd`) it is refused, since the engine would reject it."""

    model_config = ConfigDict(frozen=True)

    field: str  # the LaunchSettings field it sets
    says: str  # what it tells kvtop, e.g. "the model path is a TurboMind workspace"


class NeutralGroup(NamedTuple):
    """One kind of an engine's flags with no effect on GPU memory (the API server's own, logging, …)."""

    why: str  # why none of them changes memory, e.g. "the API server's own setting: a CPU process"
    flags: frozenset[str]  # their spellings (a bool flag's `--no-NAME` too, where the engine's parser takes it)


def written_flags(settings: BaseModel, preferred: Mapping[str, str]) -> list[str]:
    """`--flag value` for every field of `preferred` (field -> the engine's spelling) that is set.

    `settings` is a `LaunchSettings` (launch.py); it is typed as the pydantic model it is read as, field by name, so
    that this module, which launch.py imports, does not import launch.py back (no import circle, not even for types).

    Parallel sizes of 1, False booleans and unset values are left out; True booleans are bare flags.
    """
    out: list[str] = []
    for field, spelling in preferred.items():
        value = getattr(settings, field)
        if value is None or value is False or (field in ("tp", "pp", "dp", "ep", "dcp") and value == 1):
            continue
        if field == "kv_cache_dtype" and value == "auto":
            continue
        out += (
            [spelling]
            if value is True
            else [spelling, f"{value:g}" if isinstance(value, float) else str(value)]
        )
    return out


def refuse_unlisted_kv_dtype(
    engine_name: str, dtype: str, accepted: tuple[str, ...], flag: str, source: str | None = None
) -> None:
    """Raise InputError for a KV dtype outside those an engine's flags take (`EngineFlags.kv_cache_dtypes`), naming
    them: the refusal of an engine whose package has no more to say by release (`source`: the file it was read from)."""
    if dtype not in accepted:
        raise InputError(f"{engine_name} has no KV cache dtype {quoted(dtype)} (one of {', '.join(accepted)})",
                         field=flag, source=source)  # fmt: skip
