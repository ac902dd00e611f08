"""Which model classes TensorRT-LLM serves: no release's list read, so every release is "not checked"; what
its main branch registers at one 2026 commit is said beside it, with the error a release without the class
stops with.

The PyTorch backend (trtllm-serve's default from 1.0) builds the class a `@register_auto_model("<class>")`
in tensorrt_llm/_torch/models/ registers for config.json's `architectures[0]`
(`AutoModelForCausalLM.from_config`, _torch/models/modeling_auto.py); a class none registers stops the launch
with `ValueError: Unknown architecture for AutoModelForCausalLM: <class>` — the same f-string in the 1.0-era
file (`MODEL_CLASS_MAPPING.get`), the DeepSeek-MTP one and the 2026 `_resolve_class` ones. The TensorRT
backend's `MODEL_MAP` (tensorrt_llm/models/__init__.py) is not read.

No release tag was read: the repository's snapshot (2.5 GB) is over what kvtop's reading tools bring, PyPI
holds only placeholder sdists (the wheels are on pypi.nvidia.com), and the public file index keeps a file at
the commits that changed it, so no tag's tree can be put together. Read instead: main at
065ff9e93780bc0bdbfdbc7156a306ca14f5850c (2026), `MODEL_ARCH_TO_MODULE` in _torch/models/_arch_index.py
(its test_lazy_model_zoo.py keeps it equal to the decorators), parsed by
benchmarks/engine_registries/read_registries.py trtllm and kept in tests/data/architectures/
engine_registries.json (`trtllm_main`). A main branch is no release, so nothing is refused from it
(docs/engines/architectures.md §8).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engine_architectures import ArchitectureCheck, RegistryTable, names
from kvtop.domain.tower_spec import TowerSplit

if TYPE_CHECKING:
    from kvtop.domain.engines.versions import ResolvedVersion
    from kvtop.domain.launch import LaunchSettings
    from kvtop.domain.model import ModelSpec

MAIN_COMMIT = "065ff9e93780bc0bdbfdbc7156a306ca14f5850c"
MAIN_SOURCE = (
    f"tensorrt_llm/_torch/models/_arch_index.py MODEL_ARCH_TO_MODULE, main at {MAIN_COMMIT[:8]} (2026)"
)
MAIN_REGISTERED = names("""
AfmoeForCausalLM BartForConditionalGeneration BertForSequenceClassification CLIPVisionModel Cohere2ForCausalLM
Cosmos3ForConditionalGeneration DeciLMForCausalLM DeepseekV32ForCausalLM DeepseekV3ForCausalLM
DeepseekV4ForCausalLM EAGLE3LlamaForCausalLM Eagle3DeepSeekV3ForCausalLM Exaone4ForCausalLM
Exaone4_5_ForConditionalGeneration ExaoneMoEForCausalLM Gemma3ForCausalLM Gemma3ForConditionalGeneration
Gemma4AssistantForCausalLM Gemma4ForCausalLM Gemma4ForConditionalGeneration
Gemma4UnifiedForConditionalGeneration Glm4MoeForCausalLM GlmMoeDsaForCausalLM GptOssForCausalLM
HCXVisionForCausalLM HCXVisionModel HunYuanDenseV1ForCausalLM HunYuanMoEV1ForCausalLM
KimiK25ForConditionalGeneration KimiK3ForConditionalGeneration KimiLinearForCausalLM LagunaForCausalLM
Llama4ForConditionalGeneration LlamaForCausalLM LlavaLlamaModel LlavaNextForConditionalGeneration
MBartForConditionalGeneration MTPDraftModelForCausalLM MiniCPMV4_6ForConditionalGeneration MiniMaxM2ForCausalLM
MiniMaxM3SparseForCausalLM MiniMaxM3SparseForConditionalGeneration Mistral3ForConditionalGeneration
MistralForCausalLM MistralLarge3EagleForCausalLM MistralLarge3ForCausalLM MixtralForCausalLM
MllamaForConditionalGeneration NemotronForCausalLM NemotronHForCausalLM NemotronHPuzzleForCausalLM
NemotronH_Nano_Omni_Reasoning_V3 NemotronH_Nano_VL_V2 Phi3ForCausalLM Phi4MMForCausalLM
PixtralForConditionalGeneration PixtralVisionModel Qwen2ForCausalLM Qwen2ForProcessRewardModel
Qwen2ForRewardModel Qwen2MoeForCausalLM Qwen2VLForConditionalGeneration Qwen2_5_VLForConditionalGeneration
Qwen3ForCausalLM Qwen3ForTextEmbedding Qwen3MoeForCausalLM Qwen3NextForCausalLM Qwen3VLForConditionalGeneration
Qwen3VLMoeForConditionalGeneration Qwen3_5ForCausalLM Qwen3_5ForConditionalGeneration Qwen3_5MoeForCausalLM
Qwen3_5MoeForConditionalGeneration QwenImageBenchForConditionalGeneration SeedOssForCausalLM SiglipVisionModel
Starcoder2ForCausalLM Step3p5ForCausalLM Step3p7ForConditionalGeneration T5ForConditionalGeneration
WhisperForConditionalGeneration
""")  # fmt: skip


def refusal_words(architecture: str) -> str:
    """TensorRT-LLM's error for a class its PyTorch backend does not register (modeling_auto.py)."""
    return f"Unknown architecture for AutoModelForCausalLM: {architecture}"


TABLE = RegistryTable(
    "TensorRT-LLM", (), lambda architecture, found: refusal_words(architecture),
    not_read="kvtop read no release's @register_auto_model classes (nor the TensorRT backend's MODEL_MAP)",
)  # fmt: skip


def main_branch_word(architecture: str) -> str:
    """What the main branch read (not a release) does with `architecture`, said beside "not checked"."""
    at = f"its main branch at {MAIN_COMMIT[:8]} (2026)"
    if architecture in MAIN_REGISTERED:
        return f"{at} registers {architecture}"
    return (
        f"{at} registers no {architecture}: a release without it stops with '{refusal_words(architecture)}'"
    )


# TensorRT-LLM's tower sharding is not read: assumed as vLLM's (docs/engines/architectures.md).
TOWER_SPLIT = TowerSplit()


def check(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> ArchitectureCheck:
    """Not checked at any release (see the module docstring); the note says what the main branch read does."""
    found = TABLE.check_class(model.architecture, version, custom_code=bool(model.auto_map_models))
    if found.state != "not_checked" or not found.architecture[:1].isupper():
        return found
    return found.model_copy(
        update={"message": f"{found.message}; {main_branch_word(found.architecture)}", "source": MAIN_SOURCE}
    )
