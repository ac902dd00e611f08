"""Which model runner `vllm serve` runs a generating model on (V1 or V2, VllmConfig.use_v2_model_runner), by
release and model: its eras with the first release each holds for and its source (docs/engines/vllm.md §3).
"""

from __future__ import annotations

from typing import Literal

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.spec_methods import keeps_v1_runner, stated_method
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.quant_spec import NO_QUANT

# The model runner `vllm serve` picks (VllmConfig.use_v2_model_runner, §3): at pp > 1 with async scheduling
# the V1 runner turns async scheduling off (pp batches in flight), the V2 runner keeps it (pp + 1).
ModelRunner = Literal["v1", "v2_listed", "v2_dense", "v2"]
MODEL_RUNNER_ERAS: Eras[ModelRunner] = Eras((
    Era("", "v1", "v0.13.0-v0.21.0: VLLM_USE_V2_MODEL_RUNNER defaults to 0 (the V1 runner); v0.21.0's "
        "config/vllm.py has no DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES"),
    Era(
        "0.22.0",
        "v2_listed",
        "first in v0.22.0: config/vllm.py:493-516 VllmConfig.use_v2_model_runner (VLLM_USE_V2_MODEL_RUNNER unset) "
        "→ :518-531 _is_default_v2_model_runner_model: a generating model of a listed class "
        "(DEFAULT_V2_ARCHITECTURES_ERAS), and at v0.22.x-v0.23.0 neither MoE nor quantized (LISTED_V2_DENSE_ONLY_ERAS); "
        "a hybrid (has_inner_state) is an unsupported feature → V1 (:1983). v0.22.1 the same file",
    ),
    Era(
        "0.25.0",
        "v2_dense",
        "PR #44443 ('Enable by default for all dense models'), first in v0.25.0: config/vllm.py:557-574 "
        "_is_default_v2_model_runner_model: V1 for a pooling runner, a hybrid or an attention-free model, else V2 "
        "for a listed class or `not is_moe` (DEFAULT_V2_ARCHITECTURES_ERAS, `default_v2_model`)",
    ),
    Era(
        "0.29.0",
        "v2",
        "first in v0.29.0: config/vllm.py:645 VllmConfig.use_v2_model_runner drops the architecture test — V2 "
        "wherever Triton imports and no unsupported feature is asked for (ROCm keeps a V1 list); v0.28.0 "
        ":691-712 still the v2_dense era's test. Holds at v0.34.0, which removed the V1 model runner: "
        "v1/worker/gpu_worker.py:579-587 _make_model_runner always builds v1/worker/gpu/model_runner.py's "
        "GPUModelRunner (v1/worker/gpu_model_runner.py gone), platforms/interface.py:1481-1490 refuses "
        "VLLM_USE_V2_MODEL_RUNNER other than 1, config/vllm.py:3123-3137 tests no speculative method "
        "(spec_methods.V1_ONLY_METHOD_ERAS empty from v0.34.0)",
    ),
))
# DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES (config/vllm.py, read in each wheel): in the v2_listed era the only classes V2
# runs; in the v2_dense era the MoE classes it runs on V2 all the same (v0.25.0 :68-74, v0.25.1 the same; v0.26.0 :68
# adds Inkling and LongcatFlashNgram; v0.27.0 :69 KimiK3; v0.28.0 :69 DeepseekV4).
DEFAULT_V2_ARCHITECTURES_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset({"Qwen3ForCausalLM"}), "v0.22.0 config/vllm.py:69 (v0.22.1 the same)"),
    Era("0.23.0", frozenset({"LlamaForCausalLM", "MistralForCausalLM", "Qwen3ForCausalLM"}),
        "v0.23.0 config/vllm.py:69-75"),
    Era("0.24.0", frozenset({
        "DeepseekV2ForCausalLM", "GraniteMoeForCausalLM", "LlamaForCausalLM", "MistralForCausalLM",
        "Qwen2MoeForCausalLM", "Qwen3ForCausalLM"}), "v0.24.0 config/vllm.py:68-77"),
    Era("0.25.0", frozenset({"DeepseekV2ForCausalLM", "Qwen2MoeForCausalLM", "GraniteMoeForCausalLM"}),
        "v0.25.0 config/vllm.py:68-74 (dense classes dropped: every dense model runs V2)"),
    Era("0.26.0", frozenset({
        "DeepseekV2ForCausalLM", "GraniteMoeForCausalLM", "InklingForCausalLM", "InklingForConditionalGeneration",
        "LongcatFlashNgramForCausalLM", "Qwen2MoeForCausalLM"}), "v0.26.0 config/vllm.py:68"),
    Era("0.27.0", frozenset({
        "DeepseekV2ForCausalLM", "GraniteMoeForCausalLM", "InklingForCausalLM", "InklingForConditionalGeneration",
        "KimiK3ForConditionalGeneration", "LongcatFlashNgramForCausalLM", "Qwen2MoeForCausalLM"}),
        "v0.27.0 config/vllm.py:69"),
    Era("0.28.0", frozenset({
        "DeepseekV2ForCausalLM", "DeepseekV4ForCausalLM", "GraniteMoeForCausalLM", "InklingForCausalLM",
        "InklingForConditionalGeneration", "KimiK3ForConditionalGeneration", "LongcatFlashNgramForCausalLM",
        "Qwen2MoeForCausalLM"}), "v0.28.0 config/vllm.py:69"),
))  # fmt: skip
# In the v2_listed era a listed class runs V2 only without experts and without a checkpoint quantization_config
# (ModelConfig.is_moe / is_quantized: `hf_config.quantization_config`, not `--quantization`), until v0.24.0.
LISTED_V2_DENSE_ONLY_ERAS: Eras[bool] = Eras((
    Era("", True, "v0.22.0 config/vllm.py:531, v0.23.0 :558 `return not model_config.is_moe and not "
        "model_config.is_quantized`"),
    Era("0.24.0", False, "v0.24.0 config/vllm.py:559-561: any listed class (MoE and quantized too)"),
))  # fmt: skip
# A hybrid (Mamba / linear-attention layers beside attention: vLLM's `is_hybrid`) of a listed class runs V2: before,
# any hybrid ran V1 (v0.26.0 :613 `if is_hybrid: return False`); v0.27.0 :651 `is_hybrid and not
# is_default_v2_architecture` (v0.28.0 :705 the same). An attention-free model runs V1 throughout (v0.25.0 :568).
LISTED_HYBRID_V2_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.25.0-v0.26.0 config/vllm.py _is_default_v2_model_runner_model: a hybrid → V1"),
    Era("0.27.0", True, "v0.27.0 config/vllm.py:651-654: a hybrid of a listed class → V2"),
))

model_runner = MODEL_RUNNER_ERAS.at


def _listed_runs_v2(version: ResolvedVersion, model: ModelSpec) -> bool:
    """The v2_listed era (v0.22.0-v0.24.x): V2 only for a listed class, without experts or a checkpoint quantization
    at v0.22.x-v0.23.x (no listed class is a hybrid or attention-free)."""
    if model.architecture not in DEFAULT_V2_ARCHITECTURES_ERAS.at(version):
        return False
    return not LISTED_V2_DENSE_ONLY_ERAS.at(version) or (model.moe is None and model.quant == NO_QUANT)


def runs_v2(version: ResolvedVersion, model: ModelSpec, settings: LaunchSettings | None = None) -> bool:
    """Whether `vllm serve` runs this generating model on the V2 model runner (VllmConfig.use_v2_model_runner, with
    VLLM_USE_V2_MODEL_RUNNER unset). In the v2_dense era (v0.25.0-v0.28.x, `_is_default_v2_model_runner_model`): not
    attention-free, not a hybrid (a recurrent state beside attention: vLLM's `is_hybrid`) unless a listed class from
    v0.27.0, and a listed class or no experts; a dspark draft forces V2 before that test (v0.25.0 config/vllm.py
    :529-532, v0.28.0 :629-632). In either V2 era the launch's speculative decoding keeps V1 where V2 does not run it
    (`spec_methods.keeps_v1_runner`: n-gram and draft-model at v0.25.0-v0.28.x, …). `settings` None: no launch flags
    (no speculative decoding). A pooling runner (runner_type != "generate") runs V1 as well; kvtop plans generating
    models only."""
    runner = model_runner(version)
    if runner == "v1":
        return False
    method = stated_method(settings) if settings is not None else None
    if runner == "v2_dense" and method == "dspark":
        return True
    if settings is not None and keeps_v1_runner(method, settings, version) is not None:
        return False
    if runner == "v2_listed":
        return _listed_runs_v2(version, model)
    if runner == "v2":
        return True
    listed = model.architecture in DEFAULT_V2_ARCHITECTURES_ERAS.at(version)
    if model.attention_free or model.state is not None and not (listed and LISTED_HYBRID_V2_ERAS.at(version)):
        return False
    return listed or model.moe is None
