"""vLLM's extensible KV cache (v0.34.0 on): the cache sized from the memory free after warmup and CUDA-graph capture,
not from the profile's estimate (docs/engines/vllm.md §0.34.0).

With it (the default on CUDA, `_resolve_extensible_kv_cache`) the worker reserves the cache's address range, runs
warmup and captures its graphs, then `measure_kv_cache_blocks` (v1/worker/extensible_kv_cache.py:621-712) sizes it:

    non_kv_used = init_free − free_after − committed          (weights, non-torch, graphs: all that stays resident)
    headroom    = free_after + committed                      (= init_free − non_kv_used)
    margin      = max(1 GiB, 0.75 × transient peak)           (KV_CACHE_MARGIN_FLOOR_BYTES, KV_CACHE_MARGIN_FRACTION)
    available   = min(requested − non_kv_used, headroom − margin) − transient peak

(`measure_kv_cache_bytes`, :592-612). `requested` is ceil(total × utilization), 1.0 unless stated
(`resolved_gpu_memory_utilization`), so the headroom binds: the cache takes the memory free at the worker's start
(the context already taken) less all that stays resident, the transient peak and the margin. The profile's CUDA-graph
estimate is skipped (v1/worker/gpu/model_runner.py:1123-1125: the graphs are measured); the start's
'less than desired GPU memory utilization' check is skipped too (v1/worker/utils.py:783-797).
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.deployment_flags import flag_json
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.flags_table import FlagSpan
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.refusals import Refusal
from kvtop.domain.span import flag_set

# whether the release has it, on by default where `_resolve_extensible_kv_cache` finds nothing against it
EXTENSIBLE_KV_ERAS: Eras[bool] = Eras((
    Era("", False, "no extensible KV cache before v0.34.0 (v0.33.0 config/cache.py has no enable_extensible_kv_cache)"),
    Era("0.34.0", True, "v0.34.0 config/cache.py:395-406 enable_extensible_kv_cache (None: on where supported), "
                        "config/vllm.py:3180-3263 _resolve_extensible_kv_cache; v1/engine/core.py:382-420 sizes the "
                        "cache after compile_or_warm_up_model (kv_cache_planning.py:1864-1911 "
                        "finalize_extensible_kv_cache)"),
))  # fmt: skip
SOURCE = "v0.34.0 v1/worker/extensible_kv_cache.py:592-612 measure_kv_cache_bytes"
MARGIN_FLOOR_BYTES = 1 << 30  # KV_CACHE_MARGIN_FLOOR_BYTES, :48 (CUDA; 3 GiB on ROCm)
MARGIN_FRACTION = 0.75  # KV_CACHE_MARGIN_FRACTION, :49
# the VMM granule each layer's region of the cache is mapped in: cuMemGetAllocationGranularity(MINIMUM) for pinned
# device memory (utils/vmm_driver.py:206-216 at v0.34.0 asks the driver), 2 MiB on the NVIDIA GPUs kvtop plans
# (the driver's figure, not the wheel's: assumed)
GRANULE_BYTES = 2 << 20
GRANULE_SOURCE = ("v0.34.0 v1/worker/extensible_kv_cache.py:304-318 blocks_within: each layer's region "
                  "(layer-outermost KVCacheTensor, kv_cache_interface.py:1510-1530) rounded up to the 2 MiB VMM granule")
# the utilization a launch without the extensible cache takes unstated (CacheConfig.DEFAULT_GPU_MEMORY_UTILIZATION,
# config/cache.py:186 at v0.34.0)
FALLBACK_UTILIZATION = 0.92
FLAG = "--enable-extensible-kv-cache"  # engine/arg_utils.py:1412-1415 (v0.34.0), BooleanOptionalAction
FLAGS = frozenset({FLAG, "--no-" + FLAG[2:]})
SPAN = FlagSpan("0.34.0", None, "engine/arg_utils.py:1412-1415 (v0.34.0)", True)


# How v0.34.0's connectors reach the device KV cache (`kv_cache_access`, KVCacheAccess flags, config/kv_transfer.py:
# 50-75): LMCacheMPConnector shares it by legacy CUDA IPC (lmcache_mp_connector.py:474-476; factory.py:145-151 forces
# it for the lmcache package's class that predates the method), which the extensible cache cannot export; NIXL's
# three classes export it by FABRIC handles unless kv_buffer_device is 'cpu' (nixl/connector.py:85-90), which needs
# an IMEX channel; every other registered connector (factory.py:176-290: Example*, LMCacheConnectorV1, HiSparse,
# Offloading, DecodeBench, FlexKV, SimpleCPUOffload, HF3FS: IN_PROCESS, base.py:206-213; Mooncake, MooncakeStore,
# MoRIIO, UMBPStore: REGISTERS) keeps it on
LEGACY_IPC_CONNECTORS = frozenset({"LMCacheMPConnector"})
FABRIC_CONNECTORS = frozenset({"NixlConnector", "NixlPullConnector", "NixlPushConnector"})
CONNECTOR_SOURCE = "v0.34.0 config/vllm.py:3194-3260 _resolve_extensible_kv_cache, config/kv_transfer.py:174-200"
REFUSAL_SOURCE = "v0.34.0 config/vllm.py:3262-3263 _resolve_extensible_kv_cache: requested and unsupported raises ValueError"


def _children(transfer: Mapping[str, object]) -> object:
    """A MultiConnector's `kv_connector_extra_config.connectors` as given (None where absent)."""
    extra = transfer.get("kv_connector_extra_config")
    return extra.get("connectors") if isinstance(extra, dict) else None


def _connectors(transfer: dict[str, object]) -> list[dict[str, object]]:
    """The connector configs `kv_cache_access` asks: the one given, or MultiConnector's children
    (multi_connector.py:238-247, config/kv_transfer.py:174-188)."""
    if transfer.get("kv_connector") != "MultiConnector":
        return [transfer]
    children = _children(transfer)
    return [c for c in children if isinstance(c, dict)] if isinstance(children, list) else []


def children_read(transfer: Mapping[str, object]) -> bool:
    """Whether `transfer`'s connectors read: a MultiConnector's children as a list of objects (a log's
    KVTransferConfig repr gives them as text, which kvtop does not read)."""
    return transfer.get("kv_connector") != "MultiConnector" or isinstance(_children(transfer), list)


def ruled_out_by_connector(transfer: Mapping[str, object]) -> tuple[str, str] | None:
    """(kvtop's words, vLLM's) where the KV connector config `transfer` rules the extensible cache out whatever the
    launch says (`_resolve_extensible_kv_cache`'s `unsupported`, config/vllm.py:3218-3230 at v0.34.0): legacy CUDA
    IPC, or a connector's custom_mem_pool; None where it does not (or none is given)."""
    if not transfer:
        return None
    configs = _connectors(dict(transfer))
    ipc = [str(c["kv_connector"]) for c in configs if c.get("kv_connector") in LEGACY_IPC_CONNECTORS]
    if ipc:
        return (f"{ipc[0]} shares the cache by legacy CUDA IPC",
                "a KV connector (e.g. LMCacheMPConnector) shares the KV cache through legacy CUDA IPC, which cannot "
                "export driver-mapped memory")  # fmt: skip
    pooled = [c for c in [dict(transfer), *configs] if _custom_pool(c)]
    if pooled:
        return (f"{pooled[-1].get('kv_connector') or 'a connector'}'s custom_mem_pool",
                "custom_mem_pool allocates the KV cache from a connector's memory pool, which a driver-mapped cache "
                "cannot use")  # fmt: skip
    return None


def _custom_pool(config: Mapping[str, object]) -> bool:
    """Whether a connector config's extra config asks a custom_mem_pool (`uses_custom_mem_pool`, kv_transfer.py)."""
    extra = config.get("kv_connector_extra_config")
    return isinstance(extra, dict) and bool(extra.get("custom_mem_pool"))


def connector_off_in(transfer: Mapping[str, object], stated_on: bool) -> str | None:
    """Why the KV connector config `transfer` turns the extensible cache off by default (None: it does not, or none
    given): `ruled_out_by_connector`, or NIXL's FABRIC export without an IMEX channel (kvtop cannot see
    /dev/nvidia-caps-imex-channels: assumed absent) unless `stated_on` (`--enable-extensible-kv-cache`)."""
    ruled = ruled_out_by_connector(transfer)
    return ruled[0] if ruled is not None else _fabric_without_imex(transfer, stated_on)


def _fabric_without_imex(transfer: Mapping[str, object], stated_on: bool) -> str | None:
    """NIXL's FABRIC export (its buffer not on the CPU), off by default without an IMEX channel (assumed absent)."""
    fabric = any(c.get("kv_connector") in FABRIC_CONNECTORS and c.get("kv_buffer_device", "cuda") != "cpu"
                 for c in _connectors(dict(transfer)))  # fmt: skip
    return "NIXL's FABRIC export, assumed without an IMEX channel" if fabric and not stated_on else None


def _transfer(settings: LaunchSettings) -> dict[str, object]:
    return flag_json(settings, "kv-transfer-config", '{"kv_connector": "NixlConnector", "kv_role": "kv_both"}')


# `_ruled_out`'s launch reasons by vLLM's field names (a log's non-default args, release_calendar.py), in its order,
# and the cache's own field (stated either way, it names the cache); a KV connector's config is `connector_off_in`'s
MEMORY_FIELD, BLOCKS_FIELD, ELASTIC_EP_FIELD = "kv_cache_memory_bytes", "num_gpu_blocks_override", "enable_elastic_ep"
OFF_FIELDS = (MEMORY_FIELD, BLOCKS_FIELD, ELASTIC_EP_FIELD, FLAG[2:].replace("-", "_"))


def _ruled_out(settings: LaunchSettings) -> tuple[str, str] | None:
    """(kvtop's words, vLLM's) for the first of `_resolve_extensible_kv_cache`'s `unsupported` reasons kvtop reads
    off the launch (config/vllm.py:3201-3237 at v0.34.0, in its order; `OFF_FIELDS`); None where none holds."""
    measured = "it sizes the KV cache from measured memory, which {} overrides"
    if settings.kv_cache_memory_bytes is not None:
        return "--kv-cache-memory-bytes overrides it", measured.format(MEMORY_FIELD)
    if settings.num_gpu_blocks_override is not None:
        return "--num-gpu-blocks-override overrides it", measured.format(BLOCKS_FIELD)
    if flag_set(settings, ELASTIC_EP_FIELD.replace("_", "-")):
        return ("elastic EP", "elastic EP scale-up skips warmup and reuses the profiled KV cache size, so no "
                              "measurement would size the cache")  # fmt: skip
    ruled = ruled_out_by_connector(_transfer(settings))
    return None if ruled is None else (f"a KV connector: {ruled[0]}", ruled[1])


def off_because(settings: LaunchSettings) -> str | None:
    """Why this launch sizes its cache the profiling way at a release that has the extensible cache (None: it does
    not); `_resolve_extensible_kv_cache`'s tests kvtop can read off the launch (config/vllm.py:3200-3260 at
    v0.34.0), a KV connector's as `connector_off_in` (the rules out in `_ruled_out`, then NIXL's FABRIC export)."""
    if flag_set(settings, "no-" + FLAG[2:]):
        return "--no-enable-extensible-kv-cache"
    ruled = _ruled_out(settings)
    if ruled is not None:
        return ruled[0]
    why = _fabric_without_imex(_transfer(settings), flag_set(settings, FLAG[2:]))
    return f"a KV connector: {why}" if why is not None else None


def stated_refusal(settings: LaunchSettings, version: ResolvedVersion) -> Refusal | None:
    """`--enable-extensible-kv-cache` where a reason rules the cache out: vLLM raises ValueError as it resolves its
    config (config/vllm.py:3262-3263 at v0.34.0), before any sizing; None where it starts."""
    if not EXTENSIBLE_KV_ERAS.at(version) or not flag_set(settings, FLAG[2:]):
        return None
    ruled = _ruled_out(settings)
    if ruled is None:
        return None
    return Refusal(
        field=FLAG,
        message=f"vLLM {version.label} refuses {FLAG} with {ruled[0]} ('enable_extensible_kv_cache: {ruled[1]}.'); "
        f"drop {FLAG} (the cache is then sized the profiling way)",
        source=REFUSAL_SOURCE,
    )


def extensible(settings: LaunchSettings, version: ResolvedVersion) -> bool:
    """Whether vLLM at `version` sizes this launch's KV cache from the memory measured after warmup."""
    return EXTENSIBLE_KV_ERAS.at(version) and off_because(settings) is None


def utilization_default(settings: LaunchSettings, version: ResolvedVersion) -> tuple[float, str] | None:
    """The unstated utilization where the extensible cache decides it (`resolved_gpu_memory_utilization`, config/
    cache.py:493-501 at v0.34.0): 1.0 with it, 0.92 without; None before v0.34.0 (eras.default_utilization)."""
    if not EXTENSIBLE_KV_ERAS.at(version):
        return None
    why = off_because(settings)
    if why is None:
        return 1.0, "v0.34.0 resolved_gpu_memory_utilization: 1.0 with the extensible KV cache (config/cache.py:493-501)"
    return FALLBACK_UTILIZATION, f"v0.34.0 resolved_gpu_memory_utilization: 0.92, the extensible KV cache off ({why})"


def granule_blocks(available: int, page_bytes: int, regions: int) -> int:
    """`ExtensibleKVCache.blocks_within`: the most blocks whose footprint fits `available`, each of the `regions`
    layer slots (one contiguous region of `page_bytes` a block in the default LBHNC layout, `_segments`:134-180)
    mapped in whole granules: n × page ≤ ⌊available ÷ (regions × granule)⌋ × granule. The available figure itself
    is not rounded (`measure_kv_cache_bytes`, :592-612); only the blocks are, up to one granule a region short."""
    if available <= 0 or page_bytes <= 0 or regions <= 0:
        return 0
    return available // (regions * GRANULE_BYTES) * GRANULE_BYTES // page_bytes


def margin_bytes(transient_peak_bytes: int) -> int:
    """What the sizing keeps free beyond the transient peak: max(1 GiB, 0.75 × the peak) (:610)."""
    return max(MARGIN_FLOOR_BYTES, int(transient_peak_bytes * MARGIN_FRACTION))


def available_bytes(
    *, requested_bytes: int, free_at_start_bytes: int, resident_bytes: int, transient_peak_bytes: int
) -> int:
    """`measure_kv_cache_bytes` in kvtop's terms: `resident_bytes` all that stays on the GPU beside the cache after
    warmup and capture (weights, non-torch memory, CUDA graphs), `free_at_start_bytes` the worker's free memory at
    its init snapshot, `transient_peak_bytes` the profiled (or warmup) activation peak kept free in full. Signed:
    vLLM clamps at 0 (:612) and then refuses the start; kvtop keeps the shortfall."""
    within_request = requested_bytes - resident_bytes
    headroom = free_at_start_bytes - resident_bytes - margin_bytes(transient_peak_bytes)
    return min(within_request, headroom) - transient_peak_bytes
