"""llama.cpp's `llama-server`: flags, K and V cache types apart, and a cache sized by context, not memory.

llama.cpp allocates `-c` cells (padded to 256) in one stream or one per slot (`-np`), each cell one
row per layer of `n_embd_k_gqa` K elements and `n_embd_v_gqa` V elements in the ggml types `-ctk` and
`-ctv` (q8_0: 34 bytes per 32 elements); sliding-window layers get their own, smaller cache
(docs/engines/llamacpp.md). It has no TP/PP/DP ranks: one GPU is what kvtop models; the KV of layers
`-ngl`/`-nkvo` keep on the CPU is in host memory, out of the GPU ledger (§10).
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.base import EngineInputs, EngineResult
from kvtop.domain.engines.llamacpp.budget import solve
from kvtop.domain.engines.llamacpp.cells import cache_cells
from kvtop.domain.engines.llamacpp.eras import DEFAULT_PORT, build_number
from kvtop.domain.engines.llamacpp.eras import RELEASE_NAMES as RELEASE_NAMES  # what --engine-version takes
from kvtop.domain.engines.llamacpp.flags import LlamacppFlags, cache_types
from kvtop.domain.engines.llamacpp.ggml_types import cache_type
from kvtop.domain.engines.llamacpp.slot_context import slot_context
from kvtop.domain.engines.measured_reads import MeasuredField
from kvtop.domain.engines.modules import EngineBase
from kvtop.domain.engines.protocols import EngineRules
from kvtop.domain.engines.versions import ReleaseDate, ResolvedVersion
from kvtop.domain.errors import LayoutError
from kvtop.domain.kv import KvStorage
from kvtop.domain.launch import EngineFlags, LaunchSettings
from kvtop.domain.model import ModelSpec

# kvtop's name for each ggml type, for the ledger's one KV format label (the bytes come from `element_bytes`)
FORMAT_NAMES: tuple[tuple[str, str], ...] = (
    ("auto", "fp16"), ("f32", "fp32"), ("f16", "fp16"), ("bf16", "bf16"), ("q8_0", "int8"), ("q4_0", "int4"), ("q4_1", "int4"),
    ("iq4_nl", "int4"), ("q5_0", "int4"), ("q5_1", "int4"),
)  # fmt: skip


class LlamacppRules(EngineBase):
    id = "llamacpp"
    display_name = "llama.cpp"
    kv_storage = KvStorage(format_names=FORMAT_NAMES, element_bytes=(2.0, 2.0))
    sizes_every_rank_from_least_free = False  # one process, one cache: sized by -c
    # its context is "total − free before load" (the budget's free memory), which holds the driver's reserved bytes
    context_holds_driver_reserved = True
    calendar: tuple[ReleaseDate, ...] = ()  # releases are build numbers (eras.py), not in the calendar
    memory_fraction_field: str | None = None  # no share of memory: the context (-c) sizes the cache
    memory_fraction_flag = "-c"  # what sizes it instead
    memory_fraction_of = "no share of memory: llama.cpp allocates the context -c asks for (all slots together)"
    # llama-server is one process with no title of its own: the prefix matches no `prefix::role` title,
    # and its one GPU is its rank
    title_prefix = "llama-server"
    default_port = DEFAULT_PORT
    ranks_by_gpu_order = True
    # nothing caps the cells below what -c asks for: -c is the capacity itself (the waterfall has no cap term)
    # its /metrics (with --metrics): the cache's share in use, in builds before 2025 only (§7); no capacity gauge
    usage_metrics: tuple[str, ...] = ("llamacpp:kv_cache_usage_ratio",)
    # §1 (docs/engines/llamacpp.md; src/llama-context.cpp llama_context::llama_context): -c sizes the cells, and the
    # plan checks only that they fit in the free memory before load less the weights
    measured_not_read: Mapping[MeasuredField, str] = {
        "free_after_load_bytes": "-c sizes the cache; the fit is checked against the free memory before load less "
        "the weights (--free-memory, --weights-memory; docs/engines/llamacpp.md §1)",
        "non_kv_bytes": "-c sizes the cache, and its compute buffers are not in this plan (docs/engines/llamacpp.md §1)",
        "compile_cache": "-c sizes the cache, and llama.cpp, a C++ engine on ggml, runs no torch.compile: there is "
        "no such cache (docs/engines/llamacpp.md §1)",
    }

    def kv_storage_for(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> KvStorage:
        """K and V in their own ggml types (`-ctk`, `-ctv`): bytes per element of each."""
        k, v = cache_types(settings)
        return self.kv_storage.model_copy(
            update={"element_bytes": (cache_type(k, "-ctk").bytes_per_element, cache_type(v, "-ctv").bytes_per_element)}
        )

    def context_length(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> int:
        """The context one request can fill: its slot's, by build (slot_context.py, llamacpp.md §1): -c over the
        slots before b6925, then `n_ctx_seq` capped at the training context (YaRN flags may lift it), not -c."""
        build = build_number(settings.engine_version)
        return slot_context(model, settings, cache_cells(model, settings, build), build).tokens

    def default_page_size(self, model: ModelSpec, gpu_name: str | None, version: ResolvedVersion) -> int:
        """One token per cell."""
        return 1

    def resolve_version(self, log: EngineLog) -> ResolvedVersion:
        from kvtop.domain.engines.llamacpp.explain import resolve_version

        return resolve_version(log)

    def expert_parallel_without_experts(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> str:
        """Never reached: llama.cpp has no expert-parallel ranks, refused as a flag (flags.py check_parallel)."""
        raise LayoutError("llama.cpp has no expert parallel ranks", field="--ep")

    def solve_budget(self, inputs: EngineInputs) -> EngineResult:
        return solve(inputs)

    def at_shared_capacity(self, settings: LaunchSettings, tightest: EngineResult) -> LaunchSettings:
        """One stage only: the settings hold as they are."""
        return settings


RULES: EngineRules = LlamacppRules()
FLAGS: EngineFlags = LlamacppFlags()
