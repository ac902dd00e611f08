"""Launches SGLang refuses before it sizes any KV, which kvtop refuses the same way (docs/engines/sglang.md §4.5).

Also routed experts whose width does not divide over the MoE TP group (tp ÷ ep), a GPTQ checkpoint Marlin cannot
take (0.5.23 has no plain gptq on CUDA) and an NVFP4 hf_quant_config.json without a group size.

A weight format the GPU cannot run (the quantization config's `get_min_capability`, checked when the
model loads), and block-FP8 MoE experts whose tensor-parallel shard breaks the 128-wide scale blocks
(the FP8 MoE method's `create_weights`; from v0.5.6 also `ModelRunner.check_quantized_moe_compatibility`).
Each is one line naming the flag or GPU and SGLang's reason.
"""

from __future__ import annotations

from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.sglang.chunked_prefix import check_chunked_prefix
from kvtop.domain.engines.sglang.deployment import setup as deployment_setup
from kvtop.domain.engines.sglang.hybrid_swa import hybrid_swa_classes
from kvtop.domain.engines.sglang.mxfp4_held import a2a_ep, check_quantization_upcast
from kvtop.domain.engines.sglang.nvfp4_pad import check_gated_w13_pad
from kvtop.domain.engines.sglang.nvfp4_runner import NvFp4MoeRunner, runner_pick
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import gpu_capability
from kvtop.domain.model import LayerKind
from kvtop.domain.quant import QuantSpec

# SGLang's name of a ModelOpt FP8 checkpoint's method: `modelopt` (ModelOptFp8Config) until v0.5.4 renamed it.
MODELOPT_FP8_NAME_ERAS: Eras[str] = Eras((
    Era("", "modelopt", "layers/quantization/modelopt_quant.py ModelOptFp8Config.get_name"),
    Era("0.5.4", "modelopt_fp8", "ModelOptFp8Config.get_name (read in 0.5.4 … 0.5.23)"),
))
# ModelOptFp4Config.get_min_capability: SM100 (read at v0.4.6 … v0.5.12.post1), then SM80 (v0.5.13 … v0.5.23).
MODELOPT_FP4_MIN_CAPABILITY_ERAS: Eras[int] = Eras((
    Era("", 100, "modelopt_quant.py ModelOptFp4Config.get_min_capability: 100"),
    Era("0.5.13", 80, "ModelOptFp4Config.get_min_capability: 80"),
))
# (kvtop's scheme, method) -> (SGLang's method name, minimum capability), the same in every release read
# (v0.4.5 … v0.5.23; MXFP4 from v0.5.0rc0): Fp8Config 80, Mxfp4Config 80. ModelOpt FP8 is 89 throughout.
# AWQ/GPTQ are left out here: SGLang swaps them for Marlin kernels by GPU (GPTQ's refusal: _check_plain_gptq).
_FIXED_MINIMUM = {("fp8", "fp8"): ("fp8", 80), ("mxfp4", "mxfp4"): ("mxfp4", 80)}
# A checkpoint's `quant_method: mxfp8` (MiniMax-M3-MXFP8): Fp8Config with use_mxfp8, whose get_min_capability is 100
# on CUDA (fp8.py; read at 0.5.23); 0.5.6.post2 registers no `mxfp8` method (layers/quantization/__init__.py), so
# ModelConfig._verify_quantization refuses it ("Unknown quantization method"): None.
MXFP8_MIN_CAPABILITY_ERAS: Eras[int | None] = Eras((
    Era("", None, "layers/quantization/__init__.py: no 'mxfp8' (read at 0.5.6.post2)"),
    Era("0.5.23", 100, "fp8.py Fp8Config.get_min_capability: 100 for use_mxfp8 (read at 0.5.23)"),
))  # fmt: skip


BLACKWELL = 100


def weight_format_minimum(quant: QuantSpec, version: ResolvedVersion) -> tuple[str, int] | None:
    """(SGLang's quantization method, its minimum compute capability) for this checkpoint, where known."""
    if quant.scheme == "modelopt" and quant.method == "fp8":
        return era_for(MODELOPT_FP8_NAME_ERAS, version).value, 89
    if quant.scheme == "modelopt" and quant.method == "nvfp4":
        return "modelopt_fp4", era_for(MODELOPT_FP4_MIN_CAPABILITY_ERAS, version).value
    if quant.scheme == "mxfp8":
        minimum = era_for(MXFP8_MIN_CAPABILITY_ERAS, version).value
        return None if minimum is None else ("mxfp8", minimum)
    return _FIXED_MINIMUM.get((quant.scheme, quant.method))


# ModelOptFp4Config.from_config, nested format (hf_quant_config.json's `quantization`): the group size is
# `common_group_size(config)`, which raises where no group_size is stated, and the ValueError is re-raised as
# "Cannot find 'quant_algo' …" (modelopt_quant.py). The flat format (config.json) defaults NVFP4 to 16.
NESTED_NVFP4_GROUP_REFUSED_ERAS: Eras[bool] = Eras((
    Era("", False, "ModelOptFp4Config.from_config before 0.5.6.post2: not read"),
    Era("0.5.6.post2", True, "modelopt_quant.py ModelOptFp4Config.from_config: common_group_size raises, re-raised"),
))  # fmt: skip
NESTED_NVFP4_WORDS = (
    "Cannot find 'quant_algo' in the model's quantization config. Expected either flat format (config.json) or "
    "nested format (hf_quant_config.json)."
)


# Plain GPTQ on CUDA: 0.5.23's BASE_QUANTIZATION_METHODS has no `gptq` (only gptq_marlin; "gptq" is added for
# NPU, CPU and XPU only), so a checkpoint GPTQMarlinConfig.override_quantization_method does not convert (bits and
# sym not in TYPE_MAP {(4, true), (8, true)}, a group not in MARLIN_SUPPORTED_GROUP_SIZES, or a GPU below SM80:
# query_marlin_supported_quant_types) stays `gptq` and ModelConfig._verify_quantization raises "Unknown
# quantization method: gptq". 0.5.6.post2 registers GPTQConfig for `gptq` and serves it.
PLAIN_GPTQ_REFUSED_ERAS: Eras[bool] = Eras((
    Era("", False, "layers/quantization/__init__.py 'gptq': GPTQConfig (read at 0.5.6.post2)"),
    Era("0.5.23", True, "layers/quantization/__init__.py: no 'gptq' on CUDA (read at 0.5.23)"),
))  # fmt: skip
# Classes configs/model_config.py is_hybrid_swa_model takes as hybrid SWA whatever their layers (hybrid_swa.py's list,
# less DeepSeek-V4, whose window kvtop reads as compressed attention, Beam, hybrid only with a sliding layer, and
# Laguna, hybrid only where sliding_window is stated from 0.5.14: HYBRID_BY_WINDOW): from 0.5.9 the pool asserts
# "Hybrid SWA model must have at least one SWA layer" (model_runner_kv_cache_mixin.py 0.5.9 … 0.5.10.post1,
# model_executor/pool_configurator.py from 0.5.11) unless --disable-hybrid-swa-memory. 0.5.6.post2 registers none of
# the classes that reach it here (Granite SWA, Mellum).
NOT_BY_CLASS_ALONE = ("BeamForCausalLM", "LagunaForCausalLM", "DeepseekV4")


def _hybrid_by_class(version: ResolvedVersion) -> frozenset[str]:
    rule = hybrid_swa_classes(version)
    if not rule.asserts:
        return frozenset()
    # 0.5.12 … 0.5.13.post1 list Laguna with no sliding_window test: by class alone
    alone = NOT_BY_CLASS_ALONE if rule.laguna_by_window else tuple(n for n in NOT_BY_CLASS_ALONE if n != "LagunaForCausalLM")
    return frozenset(name for name in rule.classes if not name.startswith(alone))


HYBRID_SWA_WORDS = "Hybrid SWA model must have at least one SWA layer"
# Classes whose model asserts one pipeline stage (0.5.23 models/nanbeige.py NanbeigeModel.__init__: "The NanbeigeModel
# only supports a pipeline parallelism (PP) value of 1.")
PP_ONE_CLASSES = ("NanbeigeForCausalLM",)
MARLIN_GROUPS = (None, 32, 64, 128)  # MARLIN_SUPPORTED_GROUP_SIZES (-1: channelwise, kvtop's None)
MARLIN_MIN_CAPABILITY = 80


def check_launch(inputs: EngineInputs) -> None:
    """Raise InputError where SGLang refuses this model on this GPU or this TP/EP split, or where kvtop does not
    follow how its class shards (`TORCH_NATIVE_TP`)."""
    _check_nested_nvfp4_group(inputs)
    _check_plain_gptq(inputs)
    _check_hybrid_swa_layers(inputs)
    _check_single_stage(inputs)
    _check_weight_format(inputs)
    _check_expert_split(inputs)
    _check_block_fp8_moe(inputs)
    _check_dsv4_nvfp4_experts(inputs)
    check_gated_w13_pad(inputs)
    _check_torch_native_tp(inputs)
    check_chunked_prefix(inputs)
    a2a_backend = deployment_setup(inputs.settings).a2a_backend
    check_quantization_upcast(inputs.model, inputs.gpu_name, inputs.version, inputs.settings.quantization,
                              ep=a2a_ep(inputs.layout.ep, inputs.layout.tp, a2a_backend), a2a_backend=a2a_backend)  # fmt: skip


def _check_dsv4_nvfp4_experts(inputs: EngineInputs) -> None:
    """A DeepSeek-V4 checkpoint with NVFP4 experts (hybrid FP8 + NVFP4) below Blackwell: the model's overrides
    pick the flashinfer_trtllm_routed MoE runner for it (from 0.5.14: `runner_pick`, nvfp4_runner.DSV4_ROUTED_ERAS;
    below Blackwell no other model gets the TRT-LLM runner), and ModelOptNvFp4FusedMoEMethod refuses any runner but
    auto or marlin off Blackwell (modelopt_quant.py:1774-1778 at 0.5.14, :1903-1908 at 0.5.15); read at 0.5.14,
    0.5.15 and 0.5.23 (engine-diff's nvidia DeepSeek-V4 NVFP4 rows on sm90 at 0.5.23: the engine refuses)."""
    capability = gpu_capability(inputs.gpu_name)
    if capability is None or capability >= BLACKWELL:
        return
    if runner_pick(inputs.model, inputs.gpu_name, inputs.version).runner is not NvFp4MoeRunner.TRTLLM:
        return
    raise InputError(
        f"SGLang {inputs.version.label} refuses DeepSeek-V4's NVFP4 experts on {inputs.gpu_name} ('Current platform "
        "does not support NVFP4 quantization with the selected MoE backend. Please use Blackwell and above, or use "
        "moe_runner_backend=marlin on SM80+.': its overrides pick flashinfer_trtllm_routed for them)",
        field="--gpu",
    )


def _check_nested_nvfp4_group(inputs: EngineInputs) -> None:
    quant = inputs.model.quant
    refused = era_for(NESTED_NVFP4_GROUP_REFUSED_ERAS, inputs.version).value
    if not quant.nested_group_size_missing or not refused:
        return
    raise InputError(
        f"SGLang {inputs.version.label} refuses an NVFP4 hf_quant_config.json whose `quantization` section "
        f"states no group_size (ModelOptFp4Config.common_group_size finds none): '{NESTED_NVFP4_WORDS}'",
        field="quantization.group_size",
        source=quant.source,
    )


# Classes that build every attention and MLP Linear whole on each rank (plain torch.nn.Linear) and shard them only
# while loading (models/torch_native_llama.py, model_runner.py `supports_torch_tp`; read in 0.5.6.post2 and 0.5.23).
# What a rank keeps after loading, read again in 0.5.23 (session 46):
# - qkv_proj / gate_up_proj: their weight loaders replace the whole tensor by a narrowed clone (the rank's part),
#   freeing the whole one to the caching allocator;
# - o_proj / down_proj: ModelRunner.apply_torch_tp (layers/model_parallel.py RowwiseParallelMaybeWait) wraps
#   `full_tensor[slices]`, a strided view, as the DTensor's local shard, so the whole tensor's storage stays
#   resident on every rank (checked on torch 2.13.0: the local shard shares the full tensor's storage);
# - embed_tokens / lm_head: VocabParallelEmbedding / ParallelLMHead, split as every class's.
# The rank's resident bytes then rest on which freed whole qkv / gate_up blocks the caching allocator reuses for
# later layers' narrowed clones (a reused segment stays reserved through get_available_gpu_memory's empty_cache):
# not defined by the model's shapes, so not modelled. And with fewer KV heads than --tp the loader narrows k and v
# to num_kv_heads // tp = 0 rows. The engine's meta build of the class defaults at TP 2 holds the whole model on
# each rank (TorchNativeLlamaForCausalLM 13,214,687,232 B against a 6,738,681,856 B shard).
TORCH_NATIVE_TP = frozenset({"TorchNativeLlamaForCausalLM", "TorchNativePhi3ForCausalLM"})
# TorchNativePhi3ForCausalLM is TorchNativeLlamaForCausalLM unchanged (`pass`): load_weights_to_module maps only the
# unfused names (.q_proj / .k_proj / .v_proj, .gate_proj / .up_proj), and Phi-3's checkpoints store qkv_proj and
# gate_up_proj fused, which then reach the fused parameters' own loaders without a shard id: "TypeError:
# qkv_proj_weight_loader() missing 1 required positional argument: 'loaded_shard_id'" (read in 0.5.6.post2 and
# 0.5.23, the same code; the loader run on CPU in session 46). It fails while loading, before the KV pool is sized,
# at every TP; the meta build (no load) builds it.
TORCH_NATIVE_UNLOADABLE = frozenset({"TorchNativePhi3ForCausalLM"})


def _check_torch_native_tp(inputs: EngineInputs) -> None:
    model, tp = inputs.model, inputs.layout.tp
    if model.architecture in TORCH_NATIVE_UNLOADABLE:
        raise UnsupportedModelError(
            f"SGLang's {model.architecture} cannot load a Phi-3 checkpoint: its loader (torch_native_llama.py "
            f"load_weights_to_module) maps only unfused q/k/v and gate/up tensor names, and Phi-3's checkpoints "
            f"store qkv_proj and gate_up_proj fused (\"qkv_proj_weight_loader() missing 1 required positional "
            f"argument: 'loaded_shard_id'\" while loading); serve it as Phi3ForCausalLM",
            field="architectures",
        )
    if tp > 1 and model.architecture in TORCH_NATIVE_TP:
        raise UnsupportedModelError(
            f"SGLang's {model.architecture} builds every attention and MLP Linear whole on each rank and shards "
            f"them only while loading (torch_native_llama.py weight loaders, apply_torch_tp): o_proj and down_proj "
            f"keep their whole storage on every rank (a view as the DTensor shard), and what stays reserved of the "
            f"freed whole qkv_proj / gate_up_proj rests on the caching allocator, so its weights per rank at --tp "
            f"{tp} are not modelled (the whole model while it builds); plan it at --tp 1",
            field="--tp",
        )


def _check_weight_format(inputs: EngineInputs) -> None:
    if inputs.model.quant.scheme == "mxfp8" and era_for(MXFP8_MIN_CAPABILITY_ERAS, inputs.version).value is None:
        raise UnsupportedModelError(
            f"SGLang {inputs.version.label} has no mxfp8 quantization method (quantization_config.quant_method "
            "'mxfp8'; ModelConfig._verify_quantization: 'Unknown quantization method')",
            field="quantization_config.quant_method",
        )
    capability = gpu_capability(inputs.gpu_name)
    minimum = weight_format_minimum(inputs.model.quant, inputs.version)
    if capability is None or minimum is None or capability >= minimum[1]:
        return
    name, needs = minimum
    raise InputError(
        f"SGLang {inputs.version.label} cannot run {name} weights on {inputs.gpu_name} (compute capability "
        f"{capability / 10:.1f}): the format needs {needs / 10:.1f} or newer (its get_min_capability, "
        "checked when the model loads)",
        field="--gpu",
    )


# FusedMoE.__init__ (layers/moe/fused_moe_triton/layer.py) asserts `intermediate_size % self.moe_tp_size == 0`, a
# bare assertion, where moe_tp_size = tp ÷ ep (÷ --moe-dp-size, not read by kvtop: 1): 0.5.6.post2
# (parallel_state.py: tensor_model_parallel_size // moe_ep_size) and 0.5.23 (runtime_context.py
# derive_parallel_widths); DP replicas without DP attention keep their own TP group's split
EXPERT_SPLIT_SOURCE = "layers/moe/fused_moe_triton/layer.py FusedMoE.__init__ (read in 0.5.6.post2 and 0.5.23)"


def _check_expert_split(inputs: EngineInputs) -> None:
    moe, s = inputs.model.moe, inputs.settings
    if moe is None or s.ep < 1 or s.tp % s.ep:
        return
    moe_tp, size = s.tp // s.ep, moe.expert_intermediate_size
    if size % moe_tp:
        raise InputError(
            f"SGLang {inputs.version.label} refuses experts whose moe_intermediate_size {size} does not divide over "
            f"the MoE TP group (tp {s.tp} ÷ ep {s.ep} = {moe_tp}): {EXPERT_SPLIT_SOURCE} asserts "
            "'intermediate_size % self.moe_tp_size == 0' (AssertionError); pick --tp/--ep so it divides",
            field="--tp",
        )


def _check_block_fp8_moe(inputs: EngineInputs) -> None:
    quant, moe, s = inputs.model.quant, inputs.model.moe, inputs.settings
    if quant.method != "fp8" or quant.block is None or moe is None or s.ep < 1 or s.tp % s.ep:
        return
    moe_tp = s.tp // s.ep
    size, block_n = moe.expert_intermediate_size, quant.block[0]
    if size % moe_tp == 0 and (size // moe_tp) % block_n == 0:
        return
    raise InputError(
        f"SGLang refuses block-FP8 MoE weights whose expert shard breaks the {block_n}-wide scale blocks: "
        f"moe_intermediate_size {size} ÷ (tp {s.tp} ÷ ep {s.ep}) = {size / moe_tp:g}, not a multiple of "
        f"{block_n}; pick --tp/--ep so it is",
        field="--tp",
    )


def _check_plain_gptq(inputs: EngineInputs) -> None:
    quant = inputs.model.quant
    if quant.scheme != "gptq" or not era_for(PLAIN_GPTQ_REFUSED_ERAS, inputs.version).value:
        return
    capability = gpu_capability(inputs.gpu_name)
    why = ""
    if quant.weight_bits not in (4, 8) or quant.zero_point_bits:
        why = f"{quant.weight_bits}-bit {'asymmetric' if quant.zero_point_bits else 'symmetric'} weights"
    elif quant.group_size not in MARLIN_GROUPS:
        why = f"group_size {quant.group_size}"
    elif capability is not None and capability < MARLIN_MIN_CAPABILITY:
        why = f"{inputs.gpu_name} (compute capability {capability / 10:.1f}, below 8.0)"
    if why:
        raise InputError(
            f"SGLang {inputs.version.label} serves GPTQ only as gptq_marlin, which cannot take {why}: 'Unknown "
            "quantization method: gptq' (Marlin takes 4/8-bit symmetric weights, groups -1/32/64/128, SM80+)",
            field="quantization_config.quant_method",
            source=quant.source,
        )


def _check_single_stage(inputs: EngineInputs) -> None:
    model = inputs.model
    if model.architecture in PP_ONE_CLASSES and inputs.layout.pp > 1:
        raise InputError(
            f"SGLang {inputs.version.label}'s {model.architecture} asserts one pipeline stage ('The NanbeigeModel only "
            "supports a pipeline parallelism (PP) value of 1.', models/nanbeige.py)",
            field="--pp-size",
            source=model.source,
        )


# Laguna is hybrid SWA where its config states a sliding_window (is_hybrid_swa_model: `getattr(hf_text_config,
# "sliding_window", 0)`), whatever its layer_types: transformers' LagunaConfig defaults (window 512, every layer
# full) meet the same assertion (the registry sweep's default--LagunaForCausalLM rows: the engine refuses)
HYBRID_BY_WINDOW = ("LagunaForCausalLM",)


def _check_hybrid_swa_layers(inputs: EngineInputs) -> None:
    model = inputs.model
    by_window = model.architecture in HYBRID_BY_WINDOW and model.sliding_window_stated
    rule = hybrid_swa_classes(inputs.version)
    listed = rule.classes if rule.asserts else frozenset()
    if model.architecture not in _hybrid_by_class(inputs.version) and not (by_window and model.architecture in listed):
        return
    if inputs.settings.disable_hybrid_swa_memory or model.layers_of(LayerKind.SLIDING):
        return
    raise InputError(
        f"SGLang {inputs.version.label} takes {model.architecture} as a hybrid sliding-window model, and this config "
        f"gives it no sliding-window layer ('{HYBRID_SWA_WORDS}'): state layer_types with sliding_attention layers, "
        "or launch with --disable-hybrid-swa-memory",
        field="layer_types",
        source=model.source,
    )
