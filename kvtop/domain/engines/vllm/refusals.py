"""Launches vLLM sizes but refuses at start (docs/engines/vllm.md §3.7), as `kvtop.domain.refusals` values.

- A `--max-model-len` above the model's positions: `_get_and_verify_max_len` (vllm/config) raises
  ValueError ("User-specified max_model_len (…) is greater than the derived max_model_len …") unless the launch sets
  VLLM_ALLOW_LONG_MAX_MODEL_LEN as the release reads it (from v0.5.4; then planned, with a note: long_context.py); a
  launch's `--rope-scaling` / `--hf-overrides` rope scales the derived length first (rope_override.py).
- `--kv-cache-dtype fp8_ds_mla` on a model without MLA: only the sparse-MLA backends (FLASHMLA_SPARSE and
  kin) list `fp8_ds_mla` in `supported_kv_cache_dtypes`; FLASH_ATTN, FLASHINFER and TRITON_ATTN do not, so
  the selector finds no backend ("No valid attention backend found"), on every GPU.
- `--kv-cache-dtype nvfp4` outside Blackwell's SM100 family: the TRTLLM backend's
  `supports_kv_cache_dtype("nvfp4")` needs `is_device_capability_family(100)` (the trtllm-gen kernels),
  and no other backend lists nvfp4 ("--kv-cache-dtype nvfp4 requires the SM100 trtllm-gen FlashInfer
  path"); checked only where the GPU is named (an unnamed GPU refuses nothing).
- `--kv-cache-dtype fp8_e5m2` on an MLA model (DeepSeek V2/V3/R1, Kimi K2, V3.2, GLM-5): no CUDA MLA backend lists
  fp8_e5m2 in `supported_kv_cache_dtypes` (FLASH_ATTN_MLA, FLASHMLA, FLASHINFER_MLA, TRITON_MLA, CUTLASS_MLA and
  the sparse ones, in v0.13.0 and v0.33.0 alike), so `CudaPlatform.get_attn_backend_cls` raises "No valid attention
  backend found for cuda with AttentionSelectorConfig(…)"; checked where the GPU is named.
- `--kv-cache-dtype fp8_e5m2` on a checkpoint whose quantization config gives the attention layers a KV-cache
  method (FP8, ModelOpt FP8/NVFP4, Quark; compressed-tensors in v0.13.0): `_init_kv_cache_quant` raises
  "fp8_e5m2 kv-cache is not supported with fp8 checkpoints." (kv_scales.py), on every GPU.
- DeepSeek sparse MLA (V3.2, GLM-5) with a `--block-size` that is not a multiple of 64 on Hopper, where the backend
  picks the block (PR #35122 era): FLASH_ATTN_MLA_SPARSE, FLASHMLA_SPARSE and FLASHINFER_MLA_SPARSE_SM90 all take
  `MultipleOf(64)` kernel blocks, so no backend is valid (the same "No valid attention backend" error); before,
  CudaPlatform.check_and_update_config forced 64 (v0.13.0: `if use_sparse and block_size != 64`), not refused.
- `--no-enable-chunked-prefill` on a Mamba / linear-attention hybrid with prefix caching on (the default from
  PR #50991; from v0.15.0 with `--enable-prefix-caching`, hybrid.mamba_prefix_caching):
  MambaModelConfig.verify_and_update_config asserts "Chunked prefill is required for Mamba prefix caching."
  ("... for mamba cache mode 'align'." at v0.18.0 models/config.py:388-391); with `--no-enable-prefix-caching` too
  it starts.
- Step-1 (Step1ForCausalLM, v0.33.0): its Attention takes use_alibi_sqrt, which only TRITON_ATTN serves; on the
  backend the selector picks (FLASH_ATTN, FLASHINFER on Blackwell) or one `--attention-backend` names, Attention
  raises "use_alibi_sqrt is not supported by backend X." (backends.ALIBI_SQRT_ERAS); `--attention-backend
  TRITON_ATTN` starts.
- Rnj-1 (Rnj1ForCausalLM, v0.33.0): its Attention takes chunk_lookback on every layer, which only TRITON_ATTN's impl
  takes; on any other backend building a layer raises TypeError "… got an unexpected keyword argument
  'chunk_lookback'" (backends.CHUNK_LOOKBACK_ERAS); `--attention-backend TRITON_ATTN` starts.
- Flint (FlintForCausalLM, v0.33.0): its attention asserts a FlashInferImpl; on any other backend (FLASH_ATTN, the
  selector's pick before Blackwell) "Flint requires FlashInfer attention" (backends.FLASHINFER_ONLY_ERAS).
- A `--block-size` the release's command line does not take (`block_sizes.py`: v0.13.0's argparse choices 1, 8, 16,
  32, 64, 128, 256; v0.33.0 any whole number).
- A dense MLP whose intermediate width does not divide by TP (`TP_WIDTHS`, `kvtop.domain.tp_widths`): gate_up_proj's
  MergedColumnParallelLinear asserts every width divides (bare AssertionError), a plain up projection's
  ColumnParallelLinear `divide()`s it ("X is not divisible by Y"); read in v0.13.0 and v0.33.0 layers/linear.py
  (harness: Llama-2-13B's 13,824 at TP 5 refuses). Before it, the vocabulary padded to a multiple of 64 must divide
  (VocabParallelEmbedding; harness: Qwen2.5-1.5B's 151,936 at TP 6, "151936 is not divisible by 6").
- A config with experts on a class vLLM builds dense (`DENSE_ONLY_ERAS`): XVERSE-MoE-A4.2B's checkpoint names
  XverseForCausalLM (num_experts 64), which v0.13.0's registry maps to models/llama.py LlamaForCausalLM (a dense
  LlamaMLP); LlamaModel.load_weights meets mlp.experts.N.* / mlp.router with no parameter (`params_dict[name]`:
  KeyError). The class was dropped after v0.23.0 (v0.33.0 refuses it by name, architectures.py).
- VLLM_USE_V1=1 with a VLLM_ATTENTION_BACKEND V1 does not take, v0.8.0-v0.10.2 (v0_backends.py): `_raise_or_fallback`
  raises NotImplementedError ("VLLM_USE_V1=1 is not supported with VLLM_ATTENTION_BACKEND=…").
- `--enable-extensible-kv-cache` (v0.34.0) where the launch rules the cache out (a KV connector's legacy CUDA IPC or
  custom_mem_pool, --kv-cache-memory-bytes, --num-gpu-blocks-override, elastic EP): `_resolve_extensible_kv_cache`
  raises ValueError ("enable_extensible_kv_cache: …", extensible_kv.stated_refusal).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engines.versions import Era, Eras, era_for
from kvtop.domain.engines.vllm.architectures import MLP_SOURCE, TOWER_SPLIT
from kvtop.domain.engines.vllm.awq_bits import awq_bits_refusal
from kvtop.domain.engines.vllm.backends import (
    ATTENTION_BACKEND_FLAG,
    ONE_BACKEND_FEATURES,
    OneBackendFeature,
    refused_backend,
)
from kvtop.domain.engines.vllm.batching import chunked_prefill
from kvtop.domain.engines.vllm.block_sizes import block_size_refusal
from kvtop.domain.engines.vllm.budget import start_request_bytes
from kvtop.domain.engines.vllm.eras import backend_selection
from kvtop.domain.engines.vllm.extensible_kv import extensible, stated_refusal
from kvtop.domain.engines.vllm.hybrid import mamba_prefix_caching
from kvtop.domain.engines.vllm.kv_scales import E5M2_SOURCE, refuses_e5m2
from kvtop.domain.engines.vllm.long_context import long_context_refusal
from kvtop.domain.engines.vllm.v0_backends import (
    ATTENTION_BACKEND_ENV,
    V1_BACKEND_ERAS,
    backend_runs_v0,
    named_backend,
)
from kvtop.domain.engines.vllm.v1_opt_in import use_v1_env
from kvtop.domain.gpus import compute_capability
from kvtop.domain.model import AttentionKind
from kvtop.domain.refusals import Refusal, dense_only_refusal, tower_blocks_refusal
from kvtop.domain.tp_widths import DivideCheck, TpWidths, mlp_width_refusal
from kvtop.domain.wording import gib

if TYPE_CHECKING:
    from kvtop.domain.ledger import Ledger

DTYPE_FLAG = "--kv-cache-dtype"
NO_BACKEND = "CudaPlatform.get_attn_backend_cls (vllm/platforms/cuda.py): 'No valid attention backend found for cuda'"
SPARSE_MLA_BLOCK = 64  # MultipleOf(64): every sparse MLA backend vLLM tries on Hopper
_LINEAR = "model_executor/layers/linear.py"
TP_WIDTHS = TpWidths(
    gated=DivideCheck(
        words="AssertionError: 'assert all(output_size % self.tp_size == 0 for output_size in output_sizes)'",
        source=f"{_LINEAR} MergedColumnParallelLinear.__init__ (v0.13.0, v0.33.0 read; earlier taken alike)",
    ),
    plain=DivideCheck(
        words="'{width} is not divisible by {tp}'",
        source=f"{_LINEAR} ColumnParallelLinear.__init__: divide(output_size, tp_size), distributed/utils.py "
        "ensure_divisibility (v0.13.0, v0.33.0 read; earlier taken alike)",
    ),
    vocab=DivideCheck(
        words="'{width} is not divisible by {tp}'",
        source="model_executor/layers/vocab_parallel_embedding.py VocabParallelEmbedding.__init__: pad_vocab_size to "
        "DEFAULT_VOCAB_PADDING_SIZE 64, then vocab_range_from_global_vocab_size's divide (v0.13.0, v0.33.0 read); a "
        "model passing another padding_size is not told apart",
    ),
)


# class → the engine file that builds it dense and fails to load the experts
DENSE_ONLY_ERAS: Eras[dict[str, str]] = Eras((
    Era("", {}, "not checked before v0.13.0"),
    Era("0.13.0", {
        "XverseForCausalLM": "model_executor/models/registry.py (XverseForCausalLM → llama LlamaForCausalLM), "
                             "models/llama.py LlamaDecoderLayer (LlamaMLP only) / LlamaModel.load_weights",
    }, "read in v0.13.0"),
    Era("0.24.0", {}, "XverseForCausalLM dropped after v0.23.0: the registry refuses the class (v0.33.0's "
                      "_PREVIOUSLY_SUPPORTED_MODELS, architectures.py)"),
))  # fmt: skip


def experts_refusal(ledger: Ledger) -> Refusal | None:
    """A config with experts on a class vLLM builds dense only (DENSE_ONLY_ERAS): its checkpoint's experts cannot load."""
    return dense_only_refusal(ledger, DENSE_ONLY_ERAS.at(ledger.version))


def launch_refusals(ledger: Ledger) -> tuple[Refusal, ...]:
    # above the derived length, unless the launch sets VLLM_ALLOW_LONG_MAX_MODEL_LEN as the release reads it
    found = [long_context_refusal(ledger)]  # (long_context.py)
    # a tower vLLM cannot split at this TP; `--mm-encoder-tp-mode data` builds the encoder of a class that takes it
    # as at TP 1 (is_vit_use_data_parallel: GLM-4.xV's, the Qwen2.5-VL MLP), so kvtop refuses nothing there; a class
    # that does not take it (GLM-ASR's: no supports_encoder_tp_data) falls back to "weights" and still stops
    found.append(tower_blocks_refusal(ledger, TOWER_SPLIT.for_launch(ledger.settings.flags, ledger.version.text),
                                        mlp_source=MLP_SOURCE))
    dtype, version = ledger.settings.kv_cache_dtype, ledger.version.label
    if dtype == "fp8_ds_mla" and ledger.model.mla is None:
        found.append(Refusal(
            field=DTYPE_FLAG,
            message=f"vLLM {version} has no attention backend for fp8_ds_mla on {ledger.model.name}: it is "
            "DeepSeek's MLA latent layout and the model has no MLA ('No valid attention backend found'); "
            "use fp8_e4m3",
            source="supported_kv_cache_dtypes: only the sparse MLA backends list fp8_ds_mla",
        ))  # fmt: skip
    capability = compute_capability(ledger.gpu_name)
    if dtype == "nvfp4" and capability is not None and capability[0] != 10:
        found.append(Refusal(
            field=DTYPE_FLAG,
            message=f"vLLM {version} refuses nvfp4 KV on {ledger.gpu_name} (sm{capability[0]}{capability[1]}): "
            "it needs Blackwell's SM100 family (B200, GB200, B300); use fp8_e4m3",
            source="TRTLLMBackend.supports_kv_cache_dtype: nvfp4 only on is_device_capability_family(100)",
        ))  # fmt: skip
    found += _no_attention_backend(ledger, capability)
    if dtype == "fp8_e5m2" and refuses_e5m2(ledger.model, ledger.version):
        found.append(Refusal(
            field=DTYPE_FLAG,
            message=f"vLLM {version} refuses fp8_e5m2 KV for {ledger.model.name}: the attention layers of its "
            f"{ledger.model.quant.method} checkpoint take KV-cache scales ('fp8_e5m2 kv-cache is not supported with "
            "fp8 checkpoints.'); use --kv-cache-dtype fp8_e4m3 (or auto)",
            source=E5M2_SOURCE,
        ))  # fmt: skip
    settings = ledger.settings
    hybrid = ledger.model.state is not None
    if hybrid and not chunked_prefill(settings) and mamba_prefix_caching(ledger.model, settings, ledger.version):
        found.append(Refusal(
            field="--no-enable-chunked-prefill",
            message=f"vLLM {version} refuses a hybrid Mamba model with chunked prefill off while prefix caching "
            "is on ('Chunked prefill is required for Mamba prefix caching.'); add --no-enable-prefix-caching",
            source="MambaModelConfig.verify_and_update_config (vllm/model_executor/models/config.py)",
        ))  # fmt: skip
    found += [_one_backend(ledger, feature) for feature in ONE_BACKEND_FEATURES]
    found.append(mlp_width_refusal(ledger, TP_WIDTHS))
    found.append(block_size_refusal(ledger))
    found.append(awq_bits_refusal(ledger))
    found.append(experts_refusal(ledger))
    found.append(v1_backend_refusal(ledger))
    found.append(free_memory_refusal(ledger))
    found.append(stated_refusal(settings, ledger.version))  # --enable-extensible-kv-cache where ruled out
    return tuple(refusal for refusal in found if refusal is not None)


# the releases whose start check was read: it raises where free memory is below the request (§2.2)
START_CHECK_READ_ERAS: Eras[bool] = Eras((
    Era("", False, "not read before v0.11.1 (V0's worker.py has no such check at v0.6.3.post1; V1's before v0.11.1 "
                   "not read)"),
    Era("0.11.1", True, "v0.11.1 v1/worker/gpu_worker.py:241-253 (init_device); v0.13.0 alike; v0.33.0 "
                        "v1/worker/utils.py request_memory; v0.34.0 :783-797 alike, skipped under the extensible KV "
                        "cache (extensible_kv.py)"),
))  # fmt: skip


def free_memory_refusal(ledger: Ledger) -> Refusal | None:
    """§2.2: its start asks ceil(total × gpu_memory_utilization) free (`request_memory` at v0.33.0, v0.13.0's
    `init_device` alike) and raises below it. A measured free memory before load (--free-memory) below that request
    is a launch that does not start, whatever its pool would have been; refused only at the releases read
    (START_CHECK_READ_ERAS), elsewhere the note says the flag sizes nothing."""
    measured = ledger.measured
    free = measured.free_before_load_bytes
    if free is None or not measured.is_measured("free_before_load_bytes"):
        return None
    if not START_CHECK_READ_ERAS.at(ledger.version):
        return None
    if extensible(ledger.settings, ledger.version):  # v0.34.0 v1/worker/utils.py:783-797: the check is skipped
        return None
    total, util = ledger.engine_total_bytes, ledger.engine.memory_fraction
    requested = start_request_bytes(total, util)
    if free >= requested:
        return None
    return Refusal(
        field="--gpu-memory-utilization",
        message=f"vLLM {ledger.version.label}: 'Free memory on device ({gib(free)}/{gib(total)}) on startup is less "
        f"than desired GPU memory utilization ({util:g}, {gib(requested)})': --free-memory is below what it asks",
        source=f"{START_CHECK_READ_ERAS.era(ledger.version).source} (docs/engines/vllm.md §2.2)",
    )


def v1_backend_refusal(ledger: Ledger) -> Refusal | None:
    """VLLM_USE_V1=1 with a VLLM_ATTENTION_BACKEND the release's V1 does not take (v0_backends.py): the oracle's
    `_raise_or_fallback` raises instead of falling back to V0 (envs.VLLM_USE_V1 is `bool(int(value))`)."""
    flags, version = ledger.settings.flags, ledger.version
    if use_v1_env(flags) in (None, 0) or backend_runs_v0(version, flags) is not True:
        return None
    return Refusal(
        field=ATTENTION_BACKEND_ENV,
        message=f"vLLM {version.label} refuses VLLM_USE_V1=1 with {ATTENTION_BACKEND_ENV}={named_backend(flags)}: its "
        "V1 does not take that backend ('VLLM_USE_V1=1 is not supported with …'); name a V1 backend, or drop "
        "VLLM_USE_V1=1 to run V0",
        source=f"engine/arg_utils.py _is_v1_supported_oracle, _raise_or_fallback; {V1_BACKEND_ERAS.era(version).source}",
    )  # fmt: skip


def _one_backend(ledger: Ledger, feature: OneBackendFeature) -> Refusal | None:
    """A class whose attention only `feature.serves` serves (Step-1, Rnj-1, Flint) on another backend: refused or
    failed as its layers are built (backends.ONE_BACKEND_FEATURES)."""
    stated = ledger.settings.flags.get(ATTENTION_BACKEND_FLAG.lstrip("-"))
    backend = refused_backend(feature, ledger.model, ledger.gpu_name, ledger.version, stated)
    if backend is None:
        return None
    impl = (feature.refusing or {}).get(backend, "")
    words = feature.words.format(backend=backend, impl=impl)
    era = era_for(feature.eras, ledger.version).source
    return Refusal(
        field=ATTENTION_BACKEND_FLAG,
        message=f"vLLM {ledger.version.label} {feature.verb} {ledger.model.architecture} on {backend}: its attention "
        f"{feature.why} ('{words}'){feature.after}; add {ATTENTION_BACKEND_FLAG} {feature.serves}",
        source=f"{feature.site}; {era}" if feature.site else era,
    )


def _no_attention_backend(ledger: Ledger, capability: tuple[int, int] | None) -> list[Refusal]:
    """MLA with fp8_e5m2 KV, and sparse MLA on Hopper with a block no backend takes: vLLM finds no backend."""
    model, settings, version = ledger.model, ledger.settings, ledger.version.label
    if model.mla is None or capability is None:
        return []
    where = f"{ledger.gpu_name} (sm{capability[0]}{capability[1]})"
    if settings.kv_cache_dtype == "fp8_e5m2":
        return [Refusal(
            field=DTYPE_FLAG,
            message=f"vLLM {version} has no attention backend for MLA with fp8_e5m2 KV on {where} ('No valid "
            "attention backend found for cuda … kv_cache_dtype not supported'); use fp8_e4m3",
            source=f"{NO_BACKEND}: no MLA backend lists fp8_e5m2 in supported_kv_cache_dtypes",
        )]  # fmt: skip
    block = settings.page_size
    sparse = model.attention_kind is AttentionKind.DSA
    if sparse and capability[0] == 9 and block and block % SPARSE_MLA_BLOCK and backend_selection(ledger.version) == "backend":
        return [Refusal(
            field="--block-size",
            message=f"vLLM {version} has no attention backend for DeepSeek sparse MLA with {block}-token blocks on "
            f"{where} ('No valid attention backend found for cuda … block_size={block}'): its sparse MLA backends "
            f"take multiples of {SPARSE_MLA_BLOCK}; use --block-size {SPARSE_MLA_BLOCK}",
            source=f"{NO_BACKEND}: FLASH_ATTN_MLA_SPARSE, FLASHMLA_SPARSE, FLASHINFER_MLA_SPARSE_SM90 take MultipleOf(64)",
        )]  # fmt: skip
    return []
