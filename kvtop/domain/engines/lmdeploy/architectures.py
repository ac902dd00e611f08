"""Which model classes LMDeploy serves, by release: TurboMind's list and the PyTorch engine's `MODULE_MAP`.

`lmdeploy serve` picks TurboMind where `turbomind/supported_models.py` lists the class (kvtop's
`TURBOMIND_ARCHITECTURE_ERAS`), else the PyTorch engine, which builds the class `MODULE_MAP`
(lmdeploy/pytorch/models/module_map.py) names for config.json's `auto_map['AutoModelForCausalLM']` where it is
set, else for its `architectures` (`_get_model_class`, pytorch/models/patch.py): a class it has no entry for
stops the launch ("Can not found rewrite for architectures: [...]"; a family in `REMOVED_MODEL_MAP`, from
v0.15.0: "… support has been removed from LMDeploy"). LMDeploy has no Transformers backend.

Read from every release tag v0.6.0 … v0.16.0 (`git show vX:lmdeploy/pytorch/models/module_map.py`) and from the
0.17.0 and 0.18.0 wheels (PyPI, `pip download lmdeploy==X --no-deps`; no tag of theirs in the stored clone), each
parsed by benchmarks/engine_registries/read_registries.py lmdeploy: each row below is what a release range added (+)
and removed (−) against the one before (REMOVED_MODEL_MAP unchanged through 0.18.0); earlier releases (a module map
of patched transformers classes) are "not checked".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engine_architectures import ArchitectureCheck, RegistryRange, RegistryTable
from kvtop.domain.engines.lmdeploy.eras import TURBOMIND_ARCHITECTURE_ERAS
from kvtop.domain.engines.versions import Release, era_for, parse_release
from kvtop.domain.tower_spec import TowerSplit

if TYPE_CHECKING:
    from kvtop.domain.engines.versions import ResolvedVersion
    from kvtop.domain.launch import LaunchSettings
    from kvtop.domain.model import ModelSpec

SOURCE = "lmdeploy/pytorch/models/module_map.py MODULE_MAP"

# (first release, last release, the classes then: the first row whole, each later one +added −removed)
_HISTORY: tuple[tuple[str, str, str], ...] = (
    ("0.6.0", "0.6.0", """
BaichuanForCausalLM ChatGLMForConditionalGeneration CogVLMForCausalLM DbrxForCausalLM DeepseekForCausalLM
DeepseekV2ForCausalLM FalconForCausalLM Gemma2ForCausalLM GemmaForCausalLM InternLM2ForCausalLM
InternLMForCausalLM InternVLChatModel LlamaForCausalLM LlavaForConditionalGeneration LlavaLlamaForCausalLM
LlavaMistralForCausalLM LlavaNextForConditionalGeneration MistralForCausalLM MixtralForCausalLM
Phi3ForCausalLM Phi3VForCausalLM PhiMoEForCausalLM QWenLMHeadModel Qwen2ForCausalLM Qwen2MoeForCausalLM
Starcoder2ForCausalLM
    """),
    ("0.6.1", "0.6.1", "+MiniCPM3ForCausalLM +Qwen2VLForConditionalGeneration"),
    ("0.6.2", "0.6.2.post1", "+MllamaForConditionalGeneration"),
    ("0.6.3", "0.6.3", "+InternLM2VEForCausalLM"),
    ("0.6.4", "0.6.4", "+MiniCPMV"),
    ("0.7.0", "0.7.0.post3", """
+DeepseekV3ForCausalLM +InternLM3ForCausalLM -LlavaLlamaForCausalLM -LlavaMistralForCausalLM
    """),
    ("0.7.1", "0.7.1", "+DeepseekVLV2ForCausalLM"),
    ("0.7.2", "0.7.2.post1", """
+Gemma3ForCausalLM +Gemma3ForConditionalGeneration +InternLM2ForRewardModel +Qwen2ForRewardModel
+Qwen2_5_VLForConditionalGeneration
    """),
    ("0.7.3", "0.7.3", "+Llama4ForConditionalGeneration +Qwen3ForCausalLM +Qwen3MoeForCausalLM"),
    ("0.8.0", "0.8.0", "-DbrxForCausalLM -FalconForCausalLM"),
    ("0.9.0", "0.9.1", "+InternVLForConditionalGeneration"),
    ("0.9.2", "0.9.2.post1", "+InternS1ForConditionalGeneration"),
    ("0.10.0", "0.10.0", "+Glm4ForCausalLM +Glm4vForConditionalGeneration +GptOssForCausalLM"),
    ("0.10.1", "0.10.2", "+Glm4MoeForCausalLM +SDARForCausalLM +SDARMoeForCausalLM"),
    ("0.11.0", "0.11.0", """
+DeepseekMTPModel +Eagle3LlamaForCausalLM +EagleLlamaForCausalLM +Qwen3NextForCausalLM
+Qwen3VLForConditionalGeneration +Qwen3VLMoeForConditionalGeneration
    """),
    ("0.11.1", "0.11.1", "+DeepseekV32ForCausalLM"),
    ("0.12.0", "0.12.0", "+InternS1ProForConditionalGeneration -MllamaForConditionalGeneration"),
    ("0.12.1", "0.12.1", "+Glm4MoeLiteForCausalLM +InternS1_1_ForConditionalGeneration"),
    ("0.12.2", "0.12.2", """
+Glm4MoeMTPModel +GlmMoeDsaForCausalLM +Qwen3_5ForConditionalGeneration +Qwen3_5MoeForConditionalGeneration
    """),
    ("0.12.3", "0.12.3", "+Qwen3_5MTPModel"),
    ("0.13.0", "0.13.0", "+InternS2PreviewForCausalLM +InternS2PreviewForConditionalGeneration"),
    ("0.14.0", "0.14.0", "+Qwen3OmniMoeForConditionalGeneration"),
    ("0.15.0", "0.15.0", """
+DeepseekV4ForCausalLM -BaichuanForCausalLM -InternLM2VEForCausalLM -InternLMForCausalLM -QWenLMHeadModel
-Starcoder2ForCausalLM
    """),
    ("0.16.0", "0.16.0", """
+GlmMoeDsaMTPModel +HYV3ForCausalLM +HYV3MTP +InternS2MobiusForCausalLM
+InternS2MobiusForConditionalGeneration +MetaMoeForConditionalGeneration
    """),
    ("0.17.0", "0.17.0", "+Eagle3DeepseekV2ForCausalLM +KimiK25ForConditionalGeneration +Kimi_K25ForConditionalGeneration"),
    ("0.18.0", "0.18.0", "+DFlashDraftModel +DeepseekV32MTPModel"),
)  # fmt: skip

# REMOVED_MODEL_MAP (v0.15.0 on): the family each removed class was
_REMOVED = {
    "BaiChuanForCausalLM": "Baichuan",
    "BaichuanForCausalLM": "Baichuan and Baichuan2",
    "InternLM2VEForCausalLM": "Mono-InternVL",
    "InternLMForCausalLM": "InternLM",
    "MllamaForConditionalGeneration": "mllama",
    "QWenLMHeadModel": "Qwen and Qwen-VL",
    "Starcoder2ForCausalLM": "StarCoder2",
}
_REMOVED_SINCE = "0.15.0"


def _ranges() -> tuple[RegistryRange, ...]:
    """Each release range's whole list, from the history's changes."""
    ranges: list[RegistryRange] = []
    current: set[str] = set()
    for first, last, change in _HISTORY:
        for word in change.split():
            if word.startswith("-"):
                current.discard(word[1:])
            else:
                current.add(word.removeprefix("+"))
        span = f"v{first}" if first == last else f"v{first}–v{last}"
        removed = _REMOVED if _release(first) >= _release(_REMOVED_SINCE) else {}
        ranges.append(RegistryRange(first, last, frozenset(current), f"{SOURCE} at {span}", dropped=removed))
    return tuple(ranges)


def _release(text: str) -> Release:
    """A release the history names, ordered as every release is (`versions.parse_release`), not parsed again here."""
    found = parse_release(text)
    if found is None:
        raise ValueError(f"the registry history names no release: {text!r}")
    return found


RANGES = _ranges()


def _table(auto_map_class: str | None) -> RegistryTable:
    def wording(architecture: str, found: RegistryRange) -> str:
        if architecture in found.dropped:
            return f"{found.dropped[architecture]} ({architecture}) support has been removed from LMDeploy."
        if auto_map_class is not None:
            return f"Can not found rewrite for auto_map: {architecture}"
        return f"Can not found rewrite for architectures: [{architecture!r}]"

    return RegistryTable("LMDeploy", RANGES, wording)


# LMDeploy's tower sharding is not read: assumed as vLLM's (docs/engines/architectures.md).
TOWER_SPLIT = TowerSplit()


def check(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> ArchitectureCheck:
    """LMDeploy's verdict at `version`: TurboMind's class, else the PyTorch engine's `MODULE_MAP` entry."""
    turbomind = era_for(TURBOMIND_ARCHITECTURE_ERAS, version)
    if settings.backend != "pytorch" and model.architecture in turbomind.value:
        return ArchitectureCheck(state="registered", architecture=model.architecture, source=turbomind.source,
                                 message=f"LMDeploy {version.label}'s TurboMind supports {model.architecture}")  # fmt: skip
    auto_map_class = dict(model.auto_map_models).get("AutoModelForCausalLM")
    name = auto_map_class.rsplit(".", 1)[-1] if auto_map_class else model.architecture
    return _table(auto_map_class).check_class(name, version, custom_code=False)
