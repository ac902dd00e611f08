"""The attention backend vLLM runs on a GPU generation, and what follows from it (docs/engines/vllm.md §3.1,
§3.5): the tokens a KV block holds, the launches no backend serves, and DeepSeek V3.2's FP8 layout.

vLLM picks the first backend of `_get_backend_priorities` (vllm/platforms/cuda.py) that takes the model,
the KV dtype and the GPU's compute capability. The GPU comes from its name (kvtop/domain/gpus.py); an
unnamed or unknown GPU is read as Hopper (kvtop's default H100) for the block size and refuses nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.engines.vllm.eras import (
    DEFAULT_BLOCK_ERAS,
    TRITON_MLA_FP8_ERAS,
    backend_selection,
    honours_checkpoint_kv_dtype,
)
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import compute_capability
from kvtop.domain.kv import KvFormat
from kvtop.domain.model import AttentionKind, ModelSpec

Capability = tuple[int, int]
HOPPER: Capability = (9, 0)
FP8_NATIVE: Capability = (8, 9)  # Triton's fp8e4nv
FLASHINFER_HEAD_SIZES = (64, 128, 256, 512)  # FlashInferBackend.get_supported_head_sizes from v0.22.0
# FlashInfer's head sizes by release (FlashInferBackend.get_supported_head_sizes)
FLASHINFER_HEAD_SIZE_ERAS: Eras[tuple[int, ...]] = Eras((
    Era("", (64, 128, 256), "flashinfer.py:400-402 at v0.20.0, :404-406 at v0.21.0: 64, 128, 256 (earlier not read)"),
    Era("0.22.0", FLASHINFER_HEAD_SIZES, "flashinfer.py:403-405 at v0.22.0: 512 added"),
))  # fmt: skip
# FlashInferBackend.supports_compute_capability by release: its lowest compute capability (the one rule the selector,
# attention_select.py, and the sampler's path, sampler_path.py, read) and its highest, sm121 in every release read
FLASHINFER_FLOORS: Eras[Capability] = Eras((
    Era("", (7, 5), "flashinfer.py:405 at v0.20.0, :409-412 v0.21.0, :408 v0.22.0, :407 v0.23.0: sm75 to sm121"),
    Era("0.24.0", (8, 0), "flashinfer.py:426-434 at v0.24.0 (flashinfer#3620: sm75 broken, floor raised to sm80), "
                          ":442 v0.25.0, :461 v0.26.0, :462 v0.27.1, :532 v0.28.0, :508-518 v0.30.0, :704 v0.34.0"),
))  # fmt: skip
FLASHINFER_CEILING: Capability = (12, 1)  # flashinfer.py:409-412 at v0.21.0, :508-518 at v0.30.0, read to v0.34.0
# ModelArchConfigConvertorBase.is_mm_prefix_lm: bidirectional attention over image tokens, which
# FLASH_ATTN and FLASHINFER do not serve (supports_mm_prefix)
MM_PREFIX_LM_MODELS = ("bagel", "gemma3", "molmo2", "moondream3", "paligemma")
# MiMoV2Attention (vllm/model_executor/models/mimo_v2.py) gives layers whose V head differs from K its own
# backend: FLASH_ATTN_DIFFKV where FA3/4 runs (Hopper), else TRITON_ATTN_DIFFKV, whatever the KV dtype; the
# FlashAttention impl then takes no fp8_e5m2 (fa_utils.flash_attn_supports_kv_cache_dtype) and raises
# NotImplementedError "FlashAttention does not support fp8_e5m2 kv-cache on this device." (engine-diff row
# XiaomiMiMo--MiMo-V2-Flash fp8_e5m2, TP 2 on sm90). Blackwell (FA4) not checked.
DIFFKV_ARCHITECTURES = ("MiMoV2FlashForCausalLM", "MiMoV2ForCausalLM")
DIFFKV_FA_ERAS: Eras[bool] = Eras((
    Era("", False, "not read before v0.33.0"),
    Era("0.33.0", True, "v0.33.0 wheel: mimo_v2.py picks FLASH_ATTN_DIFFKV when FA3/4 is usable"),
))  # fmt: skip


def capability(gpu_name: str | None) -> Capability:
    """The GPU's compute capability, Hopper when kvtop does not know the GPU."""
    return compute_capability(gpu_name) or HOPPER


def is_quantized(fmt: KvFormat) -> bool:
    return fmt not in ("bf16", "fp16", "fp32")


def block_size(
    model: ModelSpec, quantized_kv: bool, gpu_name: str | None, version: ResolvedVersion
) -> tuple[int, str]:
    """(tokens per KV block, why) when no `--block-size` says: 16 (`CacheConfig.DEFAULT_BLOCK_SIZE`, which
    FLASH_ATTN, FLASHINFER and TRITON_ATTN take; no reason said) unless an MLA backend needs another (§3.1). From
    v0.34.0 the default is 64, which every backend kvtop plans takes (FLASHINFER_MLA, FLASH_ATTN_MLA, TRITON_MLA and
    FLASHMLA too): 64 wherever the backend, not the platform, picks (`DEFAULT_BLOCK_ERAS`)."""
    default = DEFAULT_BLOCK_ERAS.at(version)
    if model.mla is None:
        return default, "" if default == 16 else f"{default}: {DEFAULT_BLOCK_ERAS.era(version).source}"
    if default > 16 and backend_selection(version) != "platform":
        return default, f"{default}: {DEFAULT_BLOCK_ERAS.era(version).source}"
    if model.attention_kind is AttentionKind.DSA:
        return 64, "64: the sparse MLA backends (FLASHMLA_SPARSE, FLASHINFER_MLA_SPARSE) take only 64"
    major = capability(gpu_name)[0]
    guess = "" if compute_capability(gpu_name) else " (GPU unknown: Hopper assumed)"
    if backend_selection(version) == "platform":
        if major == 10:
            return (
                128,
                f"128: CUTLASS_MLA on Blackwell (forced by CudaPlatform.check_and_update_config){guess}",
            )
        if major == 9:
            return 64, f"64: forced for FlashMLA on Hopper (CudaPlatform.check_and_update_config){guess}"
        return 16, f"16: TRITON_MLA (FlashMLA needs Hopper){guess}"
    if major == 10:
        return 32, f"32: FLASHINFER_MLA on Blackwell (its smallest block){guess}"
    if major == 9:
        if quantized_kv:
            return 64, f"64: FLASHMLA (FLASH_ATTN_MLA takes no FP8 KV){guess}"
        return 16, f"16: FLASH_ATTN_MLA on Hopper{guess}"
    return 16, f"16: TRITON_MLA{guess}"


def falls_to_triton(model: ModelSpec, cap: Capability, version: ResolvedVersion) -> bool:
    """Below sm89 a plain-attention model runs on TRITON_ATTN where FLASH_ATTN (FA2: no FP8 KV) and
    FLASHINFER (sm80+, its head sizes, no sinks there, no mm-prefix) decline it (§3.5): the fallback where
    `attention_select.selected_backend` does not model the pick."""
    mm_prefix = model.multimodal and model.model_type.removesuffix("_text") in MM_PREFIX_LM_MODELS
    sizes = FLASHINFER_HEAD_SIZE_ERAS.at(version)
    head_sizes_ok = model.head_dim in sizes and model.v_head_dim in sizes
    return cap < (8, 0) or not head_sizes_ok or model.attention_sinks or mm_prefix


def check_attention(model: ModelSpec, fmt: KvFormat, gpu_name: str | None, version: ResolvedVersion) -> None:
    """Raise where no vLLM attention backend serves this model and KV dtype on this GPU (§3.5); TRITON_ATTN's FP8
    refusal is `attention_select.check_triton_fp8`'s, where the selector's pick is read."""
    cap = compute_capability(gpu_name)
    if cap is None or model.mla is None and not is_quantized(fmt):
        return
    if model.attention_free:  # no layer attends: vLLM selects no attention backend, so none declines the dtype
        return
    where = f"{gpu_name} (sm{cap[0]}{cap[1]})"
    fp8 = fmt.startswith("fp8")
    platform = backend_selection(version) == "platform"
    if model.attention_kind is AttentionKind.DSA:
        if cap[0] < 9 or (platform and cap[0] not in (9, 10)):
            raise InputError(
                f"vLLM {version.label} has no attention backend for DeepSeek sparse MLA on {where}: "
                "FLASHMLA_SPARSE / FLASHINFER_MLA_SPARSE need Hopper or Blackwell ('No valid attention backend')",
                field="--gpu",
            )
        return
    if fmt == "fp8_e5m2":
        _check_diffkv_e5m2(model, where, cap, version)
    if model.mla is not None and fp8:
        era = TRITON_MLA_FP8_ERAS.at(version)
        if era == "none" and cap[0] not in (9, 10):
            raise InputError(
                f"vLLM {version.label} has no MLA backend for FP8 KV on {where}: FLASHMLA, CUTLASS_MLA and "
                "FLASHINFER_MLA need Hopper or Blackwell, TRITON_MLA takes no FP8 KV; use --kv-cache-dtype auto",
                field="--kv-cache-dtype",
            )
        if era == "sm89" and cap < FP8_NATIVE:
            raise InputError(
                f"vLLM {version.label} refuses FP8 KV on {where}: it runs TRITON_MLA there, whose FP8 "
                "(native fp8e4nv) needs sm89+; use --kv-cache-dtype auto",
                field="--kv-cache-dtype",
            )
        return


def _check_diffkv_e5m2(model: ModelSpec, where: str, cap: Capability, version: ResolvedVersion) -> None:
    """MiMo-V2 with fp8_e5m2 KV on Hopper: FLASH_ATTN_DIFFKV, which takes no fp8_e5m2 (DIFFKV_FA_ERAS)."""
    if model.architecture not in DIFFKV_ARCHITECTURES or cap[0] != 9 or not DIFFKV_FA_ERAS.at(version):
        return
    differ = [g for g in map(model.geometry, range(model.num_layers)) if g.v_head_dim != g.head_dim]
    if differ:
        raise InputError(
            f"vLLM {version.label} refuses fp8_e5m2 KV for {model.architecture} on {where}: its K and V heads "
            f"differ ({differ[0].head_dim} and {differ[0].v_head_dim}), so it runs FLASH_ATTN_DIFFKV, and "
            "FlashAttention takes no fp8_e5m2 ('FlashAttention does not support fp8_e5m2 kv-cache on this "
            "device.'); use fp8_e4m3",
            field="--kv-cache-dtype",
        )


def fp8_dsa_ds_mla_majors(version: ResolvedVersion) -> frozenset[int] | None:
    """Compute-capability majors where FP8 KV on DeepSeek V3.2 is stored as `fp8_ds_mla` (656 B latent + 132 B
    index key per layer): every GPU (None) while DeepseekV32ForCausalLM rewrites fp8 to it, then only where
    FLASHMLA_SPARSE runs FP8 (Hopper; Blackwell prefers FLASHINFER_MLA_SPARSE, plain fp8)."""
    return None if backend_selection(version) == "platform" else frozenset({9})


def checkpoint_fp8_dsa_ds_mla_majors(
    model: ModelSpec, requested: str, version: ResolvedVersion
) -> frozenset[int] | None:
    """`fp8_dsa_ds_mla_majors`, except where `--kv-cache-dtype auto` takes the checkpoint's FP8 KV in the backend era
    (§3.3): `resolve_kv_cache_dtype_string` spells it `fp8_e4m3`, which FLASHMLA_SPARSE does not list (only `fp8`,
    its alias for fp8_ds_mla, and `fp8_ds_mla`), so no GPU stores fp8_ds_mla: the next sparse backend keeps the plain
    576 B latent + 132 B index key (DeepSeek-V3.2-NVFP4 on sm90, vLLM 0.33.0: 994,432 tokens,
    `cache_dtype` fp8_e4m3)."""
    majors = fp8_dsa_ds_mla_majors(version)
    if majors is not None and auto_takes_checkpoint_fp8(model, requested, version):
        return frozenset()
    return majors


def auto_takes_checkpoint_fp8(model: ModelSpec, requested: str, version: ResolvedVersion) -> bool:
    """Whether `--kv-cache-dtype requested` is `auto` and takes the checkpoint's FP8 KV (`kv_cache_quant_algo`),
    which vLLM does from v0.14.0 (§3.3, `eras.CHECKPOINT_KV_DTYPE_ERAS`)."""
    from_checkpoint = requested.strip().lower() == "auto" and (model.quant.kv_cache_quant_algo or "").upper() == "FP8"
    return from_checkpoint and honours_checkpoint_kv_dtype(version)


# `--attention-backend` (EngineArgs.attention_backend, vllm/engine/arg_utils.py): the enum name in any case, "auto"
# the selector's pick (AttentionConfig.validate_backend_before). Passed through the launch (flags.py), read here.
ATTENTION_BACKEND_FLAG = "--attention-backend"

# Classes whose attention takes ALiBi with a square root: Attention(use_alibi_sqrt=True) raises "use_alibi_sqrt is
# not supported by backend X." (model_executor/layers/attention/attention.py) on any backend but TRITON_ATTN, which
# the selector never picks first on Ampere or later (FLASH_ATTN, or FLASHINFER on Blackwell, come ahead of it)
ALIBI_SQRT_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "before v0.16.0: no Step1ForCausalLM (models/step1.py absent from the v0.15.1 sdist)"),
    Era("0.16.0", frozenset({"Step1ForCausalLM"}),
        "v0.16.0 models/step1.py:146 Step1Attention: Attention(use_alibi_sqrt=True), attention.py:279-281 (first in "
        "the v0.16.0 sdist; v0.33.0 step1.py:145, attention.py:363-364)"),
))  # fmt: skip

# Classes whose every layer's Attention takes chunk_lookback (block-local "chunked_attention" layers: -1 on the
# others, still passed), which only TRITON_ATTN's impl takes: FlashAttentionImpl.__init__ (and FlashInfer's) has no
# such parameter and raises TypeError "got an unexpected keyword argument 'chunk_lookback'" as the layers are built
CHUNK_LOOKBACK_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "before v0.20.0: no Rnj1ForCausalLM (models/rnj1.py absent from the v0.19.1 sdist)"),
    Era("0.20.0", frozenset({"Rnj1ForCausalLM"}),
        "v0.20.0 models/rnj1.py:174 Rnj1Attention: Attention(chunk_lookback=…) on every layer (first in the v0.20.0 "
        "sdist; v0.33.0 :170), flash_attn.py:597-610 FlashAttentionImpl.__init__ without it"),
))  # fmt: skip

# Classes built on FLASHINFER only: Flint's attention asserts a FlashInferImpl ("Flint requires FlashInfer attention",
# models/flint/model.py FlintAttention.__init__), which the selector picks first on Blackwell only (FLASH_ATTN before)
FLASHINFER_ONLY_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "before v0.33.0: no FlintForCausalLM (vllm/models/flint/ absent from the v0.32.0 sdist)"),
    Era("0.33.0", frozenset({"FlintForCausalLM"}),
        "v0.33.0 vllm/models/flint/model.py:318 FlintAttention: assert isinstance(impl, FlashInferImpl) (first in v0.33.0)"),
))  # fmt: skip


@dataclass(frozen=True)
class OneBackendFeature:
    """An attention feature only one backend serves: the classes that use it (by release), that backend, the
    backends known to refuse it, and the engine's words when a layer is built on another."""

    eras: Eras[frozenset[str]]  # the classes whose attention uses it, by release
    serves: str  # the one backend that serves it: the remedy `--attention-backend` names
    refusing: dict[str, str] | None  # backend → its impl class, the ones read to refuse; None: every other backend
    verb: str  # what vLLM does to the launch: "refuses" (a raised check) or "fails" (a TypeError)
    why: str  # what the attention needs, after "its attention"
    words: str  # the engine's error text, with {backend} and {impl}
    after: str  # said after the engine's words, before the remedy
    site: str  # where the engine raises, ahead of the era's source ("": the era's source says it)


_ATTENTION_INIT = "model_executor/layers/attention/attention.py Attention.__init__"
# Read in this order by refusals.launch_refusals; each row's eras give its classes and sources.
ONE_BACKEND_FEATURES: tuple[OneBackendFeature, ...] = (
    # Step-1: only TRITON_ATTN's supports_alibi_sqrt() is True (v1/attention/backends/triton_attn.py)
    OneBackendFeature(
        eras=ALIBI_SQRT_ERAS, serves="TRITON_ATTN", refusing=None, verb="refuses",
        why="takes ALiBi with a square root, which only TRITON_ATTN serves",
        words="use_alibi_sqrt is not supported by backend {backend}.", after="", site=_ATTENTION_INIT,
    ),
    # Rnj-1: the impls whose __init__ has no chunk_lookback parameter and no **kwargs (v1/attention/backends/
    # flash_attn.py FlashAttentionImpl, flashinfer.py FlashInferImpl), the selector's picks from Ampere on; the one
    # whose impl takes it is v0.33.0 triton_attn.py:494 TritonAttentionImpl.__init__(…, chunk_lookback: int = -1)
    OneBackendFeature(
        eras=CHUNK_LOOKBACK_ERAS, serves="TRITON_ATTN",
        refusing={"FLASH_ATTN": "FlashAttentionImpl", "FLASHINFER": "FlashInferImpl"}, verb="fails",
        why="passes chunk_lookback, which only TRITON_ATTN takes",
        words="{impl}.__init__() got an unexpected keyword argument 'chunk_lookback'", after="",
        site=f"{_ATTENTION_INIT} (impl_cls(**extra_impl_args))",
    ),
    # Flint: FLASHINFER named or picked (Blackwell) starts it; FLASHINFER named on Hopper is not refused
    OneBackendFeature(
        eras=FLASHINFER_ONLY_ERAS, serves="FLASHINFER", refusing=None, verb="refuses",
        why="runs on FLASHINFER only", words="Flint requires FlashInfer attention",
        after=", which the selector picks first on Blackwell", site="",
    ),
)  # fmt: skip


def refused_backend(
    feature: OneBackendFeature, model: ModelSpec, gpu_name: str | None, version: ResolvedVersion, stated: object
) -> str | None:
    """The backend vLLM would build `model`'s attention on where `feature` stops it, or None where it starts: the
    serving backend named or picked, a class without the feature, a GPU below Ampere with none named (not read), or
    a named backend outside `feature.refusing` where that is given (not read)."""
    if model.architecture not in era_for(feature.eras, version).value:
        return None
    named = str(stated).upper() if isinstance(stated, str) and stated.lower() != "auto" else None
    if named is None and capability(gpu_name) < (8, 0):
        return None
    # the selector's pick from Ampere on: FLASHINFER first on Blackwell, FLASH_ATTN before it
    picked = named or ("FLASHINFER" if capability(gpu_name)[0] == 10 else "FLASH_ATTN")
    if picked == feature.serves or feature.refusing is not None and picked not in feature.refusing:
        return None
    return picked
