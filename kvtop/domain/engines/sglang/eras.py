"""SGLang's rules that changed between releases: each era with the first release it holds for and its
source (docs/engines/sglang.md §5, §14), and how a log says which release printed it.
"""

from __future__ import annotations

import math

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.base import MIB, EngineInputs
from kvtop.domain.engines.versions import ReleaseDate, ResolvedVersion, resolve
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec, VisionSpec

# The automatic fractions of the TP-size table, by TP ≥ 1/2/4/8/16 (early 2025; see AUTO_FRACTION_ERAS).
TP_TABLE_FRACTIONS = (0.88, 0.87, 0.85, 0.81, 0.79)

# Release tags and their dates (PyPI uploads of sglang), to map a log's date to a release.
CALENDAR: tuple[ReleaseDate, ...] = ()


def resolve_version(log: EngineLog) -> ResolvedVersion:
    """The release whose rules read this log: its version line, else its dates."""
    return resolve(
        engine_name="SGLang",
        stated=log.engine_version,
        stated_line=log.engine_version_line,
        hint=None,
        first_date=log.first_date,
        calendar=CALENDAR,
    )


# §4 `mm_runtime_reservation_gb`: SGLANG_VLM_CACHE_SIZE_MB (default 100), plus SGLANG_MM_FEATURE_CACHE_MB
# (default 1024) when `--mm-feature-transport` is cuda_ipc or cuda_vmm.
VLM_CACHE_MIB = 100
MM_FEATURE_CACHE_MIB = 1024
# §5 `adjust_mem_fraction_for_vlm`: every VLM's auto fraction × 0.95 × a tower-size factor.
VLM_FRACTION_SCALE = 0.95
_MM_FEATURE_POOL_TRANSPORTS = {"cuda_ipc", "cuda_vmm"}

# (upper bound of gpu memory in MiB, chunked_prefill_size, decode cuda-graph max bs (tp<4, tp>=4))
_GPU_CLASSES = (
    (20 * 1024, 2048, (8, 8)),
    (35 * 1024, 4096, (48, 160)),
    (60 * 1024, 4096, (32, 160)),
    (90 * 1024, 8192, (256, 512)),
    (160 * 1024, 8192, (256, 512)),
    (math.inf, 16384, (512, 512)),
)


def auto_mem_fraction_static(inputs: EngineInputs) -> tuple[float, str]:
    """§5 `handle_gpu_memory_settings`: the reserve-based default (piecewise prefill graph off)."""
    s, lay = inputs.settings, inputs.layout
    gpu_mib = inputs.gpu_total_bytes // MIB
    _, chunked_default, graph_bs = next(c for c in _GPU_CLASSES if gpu_mib < c[0])
    chunked = s.chunked_prefill_size if s.chunked_prefill_size is not None else chunked_default
    max_bs = s.cuda_graph_max_bs or graph_bs[0 if lay.tp < 4 else 1]
    activation_tokens = max(chunked if chunked > 0 else s.max_prefill_tokens or 16384, 2048)
    graph: float = 2 * max_bs
    if lay.dp_attention:
        graph += 3 * max_bs * lay.dp + (1.5 * max_bs * lay.dp if max_bs > 300 else 0)
    reserved = 512 + 1.5 * activation_tokens + lay.tp * lay.pp / 8 * 1024 + graph
    if gpu_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    mfs = round((gpu_mib - reserved) / gpu_mib, 3)
    source = f"auto: ({gpu_mib} MiB − {reserved:.0f} MiB reserve) ÷ {gpu_mib} MiB"
    vision = inputs.model.vision
    if inputs.model.multimodal and vision is not None:  # the VLM rule is not rounded again
        tower = vit_size_factor(vision)
        mfs *= VLM_FRACTION_SCALE * tower
        source += (
            f" × {VLM_FRACTION_SCALE:g} × {tower:.5f} for the vision tower"
            f" ({vision.num_layers} layers of width {vision.hidden_size})"
        )
    return mfs, source


def vit_size_factor(vision: VisionSpec) -> float:
    """§5 `adjust_mem_fraction_for_vlm` (no post-capture sizing): the tower-size term of the factor.

    clamp(1 − 0.1 × (layers × width² ÷ (24 × 1024²) − 1), 0.8, 1.05): a tower bigger than 24
    layers of width 1024 leaves less for KV. The auto fraction is multiplied by 0.95 × this.
    """
    size_ratio = vision.num_layers * vision.hidden_size**2 / (24 * 1024**2)
    return min(max(1 - 0.1 * (size_ratio - 1), 0.8), 1.05)


def multimodal_reserve_bytes(model: ModelSpec, settings: LaunchSettings) -> int:
    """§4 `mm_runtime_reservation_gb`: what a multimodal model keeps off the KV budget (0 otherwise)."""
    if not model.multimodal:
        return 0
    reserved_mib = VLM_CACHE_MIB
    if settings.flags.get("mm-feature-transport") in _MM_FEATURE_POOL_TRANSPORTS:
        reserved_mib += MM_FEATURE_CACHE_MIB
    return reserved_mib * MIB
