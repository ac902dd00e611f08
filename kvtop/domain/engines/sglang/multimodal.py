"""What SGLang counts as a multimodal model, and what it keeps off the KV budget for one (docs/engines/sglang.md §4).

Both the automatic fraction's VLM factor (`eras`) and the deployment's encoder term (`deployment`) read
it; kept apart from either so that neither imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.engines.sglang.vlm_vision import vision_reading
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for, parse_release
from kvtop.domain.gpu_total_origin import GpuTotalOrigin, smi_total_bytes, total_origin
from kvtop.domain.gpus import gpu_capability
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.load_casts import TowerSwitch
from kvtop.domain.model import ModelSpec, VisionSpec
from kvtop.domain.served_model import tower_unbuilt
from kvtop.domain.span import flag_switch
from kvtop.domain.wording import MIB

VLM_CACHE_MIB = 100  # SGLANG_VLM_CACHE_SIZE_MB
MM_FEATURE_CACHE_MIB = 1024  # SGLANG_MM_FEATURE_CACHE_MB, with --mm-feature-transport cuda_ipc/cuda_vmm
MM_RESERVE_SINCE = "0.5.18"  # mm_runtime_reservation_gb (#34141, 2026-08-12)
_MM_FEATURE_POOL_TRANSPORTS = {"cuda_ipc", "cuda_vmm"}
# large_hopper_qwen3_vl_model_type: get_device_memory_capacity() ≥ 60 × 1024 MiB (0.5.23
# arg_groups/model_overrides/qwen3_vl.py:24-25), which on CUDA is get_nvgpu_memory_capacity (utils/common.py:990-998):
# nvidia-smi's memory.total, least over the visible GPUs (:802-832), CUDA's total only where nvidia-smi prints none
# (a MIG slice, :824-829 _cuda_mem_fallback)
LARGE_HOPPER_BYTES = 60 << 30
HIGH_CONCURRENCY_REQUESTS = 400  # --max-running-requests from which the profiled path keeps a 3 GiB feature cache

# The classes SGLang serves through a profiled path on a large Hopper GPU (sm90, ≥ 60 GiB):
# `_qwen3vl_hopper_serving_overrides` (sglang/srt/arg_groups/model_overrides/qwen3_vl.py) sets
# SGLANG_VLM_CACHE_SIZE_MB=0 and, with no --mm-feature-transport, cuda_ipc, whose feature cache
# (SGLANG_MM_FEATURE_CACHE_MB: 1 GiB, 3 GiB at --max-running-requests ≥ 400) mm_runtime_reservation_gb keeps off
# the KV budget. Engine-diff runs (0.5.23, sm90): Qwen3-VL-8B holds 1 GiB, not 100 MiB, off its budget (S17).
PROFILED_HOPPER_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "not checked before 0.5.23: the default caches"),
    Era("0.5.23", frozenset({"Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration"}),
        "arg_groups/model_overrides/qwen3_vl.py _qwen3vl_hopper_serving_overrides (engine-diff runs, sm90)"),
))  # fmt: skip


# §4.4: architectures ModelConfig serves as text-only unless --enable-multimodal (`mm_disabled_models`):
# then `is_multimodal` is False, so neither the VLM fraction factor nor the multimodal reserve applies.
_MM_DISABLED_0_4_6 = frozenset({"Gemma3ForConditionalGeneration", "Llama4ForConditionalGeneration"})
MM_DISABLED_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "configs/model_config.py: every architecture with a vision tower is multimodal"),
    Era("0.4.6", _MM_DISABLED_0_4_6, "ModelConfig: mm_disabled_models = Gemma-3, Llama-4 (not in 0.4.5.post3)"),
    Era("0.5.0rc0", _MM_DISABLED_0_4_6 | {"Step3VLForConditionalGeneration"}, "mm_disabled_models += Step3-VL"),
    Era(
        "0.5.16",
        _MM_DISABLED_0_4_6 | {"Step3VLForConditionalGeneration", "InklingForConditionalGeneration"},
        "mm_disabled_models += Inkling (read in 0.5.16 … 0.5.23)",
    ),
))


# Of those, the classes that then build no vision tower at all (the model served text-only: `TOWERS`, which
# served_model.tower_unbuilt reads through flags.py's LoadCasts). Gemma-3 and Step3-VL still build theirs
# (gemma3_mm.py, step3_vl.py do not ask); engine-diff's meta-built Llama-4 at 0.5.23 holds the language model alone
# (reading A11 before this rule).
TOWER_UNBUILT_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "not checked before 0.5.23: the tower is counted"),
    Era("0.5.23", frozenset({"Llama4ForConditionalGeneration"}),
        "models/mllama4.py Llama4ForConditionalGeneration: has_vision = has_vision_weights and enable_multimodal"),
))  # fmt: skip
# the `LaunchSettings.flags` key of --enable-multimodal: argparse's store_true in every release read (server_args.py
# :757 0.4.9, :2529 0.5.7, :3716 0.5.10, :4589 0.5.13; from 0.5.14 an Optional[bool] field, which
# arg_groups/arg_utils.py makes store_true: :252-254 0.5.14, :393-395 0.5.23): no `--no-` spelling, but a false word
# (`Engine(enable_multimodal=False)`) leaves it unset (`launch_tokens.switch_in`, the one reading)
MULTIMODAL_FLAG = "enable-multimodal"
TOWERS = TowerSwitch(classes=TOWER_UNBUILT_ERAS, flag=MULTIMODAL_FLAG, unbuilt_when_set=False)  # unless it is set

# §5: adjust_mem_fraction_for_vlm reads `getattr(model_config.hf_config, "vision_config", None)` and leaves the
# fraction as it is where that is None (0.5.6.post2 server_args.py ServerArgs.adjust_mem_fraction_for_vlm, 0.5.23
# arg_groups/memory_hook.py). These classes' config classes keep config.json's vision section under another
# attribute, so the VLM factor is 1 though the class builds its tower and is multimodal (`model_config.py`
# multimodal_model_archs). Read at 0.5.6.post2 and 0.5.23 (each config class built by SGLang's get_config from the
# configs under tests/data: getattr(hf_config, "vision_config") is None) and at main 008b79d2; the classes are
# refused where a release does not register them, so the rule holds for every release that does.
VISION_CONFIG_ELSEWHERE_ERAS: Eras[Mapping[str, str]] = Eras((
    Era("", {
        # configs/nano_nemotron_vl.py NemotronH_Nano_VL_V2_Config.__init__: self.raw_vision_config = vision_config
        # (a dict; the RADIO config is made from it by create_radio_config); sgl-project/sglang#12277
        "NemotronH_Nano_VL_V2": "raw_vision_config",
        # configs/qwen3_omni.py Qwen3OmniMoeConfig: thinker_config (Qwen3OmniMoeThinkerConfig) holds vision_config
        "Qwen3OmniMoeForConditionalGeneration": "thinker_config.vision_config",
        # served by the Transformers backend (0.5.23): transformers' Qwen2_5OmniConfig holds it in thinker_config
        "Qwen2_5OmniForConditionalGeneration": "thinker_config.vision_config",
    }, "configs/nano_nemotron_vl.py raw_vision_config; configs/qwen3_omni.py, transformers Qwen2_5OmniConfig: "
       "thinker_config.vision_config"),
))  # fmt: skip
# … and the other way: LLaVA's own format names its tower by checkpoint id (`mm_vision_tower`) with no vision section;
# its checkpoints' model_type `llava` makes transformers' LlavaConfig (configuration_llava.py, 4.57.1 and 5.19.0) fill
# in its default vision_config, CLIPVisionConfig(hidden_size=1024, num_hidden_layers=24, …), which the factor reads:
# × 0.95 × 1 (get_config of SGLang 0.5.6.post2 and 0.5.23 over the configs under tests/data). Only where SGLang serves
# the class as multimodal: LlavaLlama/LlavaQwen/LlavaVid are in multimodal_model_archs (0.5.6.post2, 0.5.23);
# YiVLForCausalLM is not, and is multimodal from 0.5.23's has_multimodal_subconfig (hf_config is not hf_text_config).
FILLED_VISION = VisionSpec(num_layers=24, hidden_size=1024, stated=(("hidden_size", 1024), ("num_hidden_layers", 24)))
_LLAVA_FORMAT = frozenset({"LlavaLlamaForCausalLM", "LlavaQwenForCausalLM", "LlavaVidForCausalLM"})
VISION_CONFIG_FILLED_ERAS: Eras[frozenset[str]] = Eras((
    Era("", _LLAVA_FORMAT, "transformers configuration_llava.py LlavaConfig: the default CLIPVisionConfig"),
    Era("0.5.23", _LLAVA_FORMAT | {"YiVLForCausalLM"},
        "configs/model_config.py has_multimodal_subconfig makes YiVL multimodal (not checked before 0.5.23)"),
))  # fmt: skip


def tower_unbuilt_note(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """The plan's line for a model this release serves without its vision tower (`TOWERS`, the one rule
    `served_model.tower_unbuilt`)."""
    if not tower_unbuilt(model, settings, version):
        return None
    return (f"vision tower not loaded: SGLang serves {model.architecture} text-only without --enable-multimodal "
            "(configs/model_config.py mm_disabled_models; models/mllama4.py builds no tower)")  # fmt: skip


def is_multimodal(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> bool:
    """SGLang's `model_config.is_multimodal`: a vision tower, and not an architecture SGLang serves as
    text-only by default (Gemma-3, Llama-4 …) unless the launch says --enable-multimodal."""
    if not model.multimodal:
        return False
    if flag_switch(settings, MULTIMODAL_FLAG) is True:  # `enable_multimodal=False` (a false word): not set
        return True
    return model.architecture not in era_for(MM_DISABLED_ERAS, version).value


def profiled_hopper_path(
    model: ModelSpec,
    version: ResolvedVersion,
    gpu_name: str | None,
    gpu_total_bytes: int | None,
    origin: GpuTotalOrigin | None = None,
) -> bool:
    """Whether this release serves `model` through its profiled large-Hopper path (`PROFILED_HOPPER_ERAS`): its
    60 GiB line is drawn on nvidia-smi's total (`LARGE_HOPPER_BYTES`), so a --gpu-memory (CUDA's total) is read as
    the card's nvidia-smi figure (`smi_total_bytes`), as the automatic fraction reads it; `origin` as its chooser
    said it (None: read from the bytes, `total_origin`)."""
    capability = gpu_capability(gpu_name)
    if model.architecture not in PROFILED_HOPPER_ERAS.at(version) or capability is None or capability // 10 != 9:
        return False
    if gpu_total_bytes is None:
        return False
    smi = smi_total_bytes(gpu_name, gpu_total_bytes, total_origin(gpu_name, gpu_total_bytes, origin))
    return smi >= LARGE_HOPPER_BYTES


def multimodal_reserve_bytes(
    model: ModelSpec,
    settings: LaunchSettings,
    version: ResolvedVersion,
    gpu_name: str | None = None,
    gpu_total_bytes: int | None = None,
    origin: GpuTotalOrigin | None = None,
) -> int:
    """§4 `mm_runtime_reservation_gb` (v0.5.18+): what a multimodal model keeps off the KV budget (`origin`: the GPU
    total's, for `profiled_hopper_path`)."""
    release, since = version.release, parse_release(MM_RESERVE_SINCE)
    if not is_multimodal(model, settings, version) or (
        release is not None and since is not None and release < since
    ):
        return 0
    transport = settings.flags.get("mm-feature-transport")
    if profiled_hopper_path(model, version, gpu_name, gpu_total_bytes, origin):
        transport = transport or "cuda_ipc"  # the VLM cache off (SGLANG_VLM_CACHE_SIZE_MB=0)
        many = (settings.max_running_requests or 0) >= HIGH_CONCURRENCY_REQUESTS and transport == "cuda_ipc"
        return (3 * MM_FEATURE_CACHE_MIB if many else MM_FEATURE_CACHE_MIB) * MIB if transport in _MM_FEATURE_POOL_TRANSPORTS else 0
    reserved_mib = VLM_CACHE_MIB
    if transport in _MM_FEATURE_POOL_TRANSPORTS:
        reserved_mib += MM_FEATURE_CACHE_MIB
    return reserved_mib * MIB


def vlm_factor_vision(model: ModelSpec, version: ResolvedVersion) -> tuple[VisionSpec | None, str]:
    """The tower size §5's VLM factor reads (None: it reads no `vision_config` and leaves the fraction), with why
    where that is not the section as it stands: LlavaConfig's filled-in one (`VISION_CONFIG_FILLED_ERAS`), none where
    the config class keeps it elsewhere (`VISION_CONFIG_ELSEWHERE_ERAS`), else the attributes SGLang's config object
    gives (`vision_reading`)."""
    kept = VISION_CONFIG_ELSEWHERE_ERAS.at(version).get(model.architecture)
    if model.vision is None and model.architecture in VISION_CONFIG_FILLED_ERAS.at(version):
        return FILLED_VISION, "LlavaConfig's default vision_config: config.json states none"
    if model.vision is None:
        return None, ""
    if kept is not None:
        return None, (f"no factor for the vision tower: {model.architecture}'s config class keeps vision_config as "
                      f"{kept}, and adjust_mem_fraction_for_vlm reads hf_config.vision_config")  # fmt: skip
    return vision_reading(model.architecture, model.vision, version)
