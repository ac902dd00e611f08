"""Which model classes SGLang gives a separate sliding-window pool (hybrid SWA memory), by release.

Three mechanisms, each read in the release wheels (0.4.0 … 0.5.23, the releases named in each era's source):
- before 0.4.9.post3 no class but Llama-4 (its --hybrid-kvcache-ratio, eras.py) has a sliding-window pool;
- 0.4.9.post3 … 0.5.6.post2: `ModelRunner.__init__` splits one where `sliding_window_size` > 0, which only a class
  whose model defines `get_attention_sliding_window_size` sets (models/*.py: Gemma-2/3/3n, GPT-OSS; Llama-4's
  `attention_chunk_size` is excluded by name), so Cohere2, Mistral, EXAONE-4 … keep every layer in the one full pool;
  server_args.py turns it off for Gemma (eras.py GEMMA_SWA_OFF_ERAS: all of them from 0.5.0rc0), GPT-OSS
  (GPT_OSS_FULL_POOL_ERAS) and Olmo2 (0.5.4 on, the release its model first defines the method), so from 0.5.0rc0
  no class but Llama-4 splits;
- from 0.5.7 `configs/model_config.py` decides by class name alone (`is_hybrid_model` 0.5.7, `is_hybrid_swa_model`
  from 0.5.8): an unlisted sliding-window class (Gemma-3n, Cohere2, Llama-4's text-only class …) keeps every layer in
  the full pool, its per-token cell all layers — unless, from 0.5.13, the config opts in itself (`is_hybrid_swa`
  true in the text config: Spark-2.5's and IQuest-Q1's config classes set it where any layer slides).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.model import ModelSpec


class HybridSwaClasses(NamedTuple):
    """The classes a release splits a sliding-window pool for, and how it picks them."""

    classes: frozenset[str]
    how: Literal["none", "window_method", "listed"]
    reads_stated: bool = False  # the config's own `is_hybrid_swa` opts in (0.5.13 on)
    asserts: bool = False  # a listed class without a sliding layer fails the start (0.5.9 on, checks.py)
    laguna_by_window: bool = False  # Laguna only where its config states a sliding_window (0.5.14 on)


# models/*.py classes defining get_attention_sliding_window_size (server_args.py turns each off in the releases
# eras.py names; olmo2.py's from 0.5.4, switched off in the same release: never split)
_WINDOW_METHOD = frozenset({
    "Gemma2ForCausalLM", "Gemma3ForCausalLM", "Gemma3ForConditionalGeneration", "Gemma3nForCausalLM",
    "Gemma3nForConditionalGeneration", "GptOssForCausalLM",
})  # fmt: skip
# is_hybrid_swa_model's hybrid_swa_archs (with MIMO_V2_MODEL_ARCHS and SWA_SINK_ARCHS spelled out), by release
_L0_5_8 = frozenset({"Llama4ForConditionalGeneration", "GptOssForCausalLM", "MiMoV2FlashForCausalLM", "MiMoV2MTP"})
_L0_5_9 = _L0_5_8 | {"Step3p5ForCausalLM", "Step3p5MTP"}
_L0_5_11 = _L0_5_9 | {"MiMoV2ForCausalLM", "Gemma4ForCausalLM", "Gemma4ForConditionalGeneration"}
_L0_5_12 = _L0_5_11 | {"DeepseekV4ForCausalLM", "DeepseekV4ForCausalLMNextN", "LagunaForCausalLM"}
_L0_5_13 = _L0_5_12 | {"Step3p7ForConditionalGeneration", "Gemma4UnifiedForConditionalGeneration"}
_L0_5_15 = _L0_5_13 | {"UnlimitedOCRForCausalLM"}
_L0_5_16 = _L0_5_15 | {"DeepseekV4ForCausalLMDSpark", "MellumForCausalLM", "InklingForConditionalGeneration",
                       "InklingForConditionalGenerationMTP"}  # fmt: skip
_L0_5_18 = _L0_5_16 | {"MuseGlimmerForCausalLM", "MuseGlimmerForConditionalGeneration"}
_L0_5_19 = _L0_5_18 | {"GraniteSWAForCausalLM", "GraniteMoeSWAForCausalLM"}
_L0_5_21 = _L0_5_19 | {"DiffusionGemmaForBlockDiffusion", "IQuestQ1ForCausalLM", "IQuestQ1MTP"}
_L0_5_22 = _L0_5_21 | {"EmbeddingGemma2Model"}
_L0_5_23 = _L0_5_22 | {"BeamForCausalLM"}  # Beam only with sliding layers (checks.py)

_LISTED = "configs/model_config.py is_hybrid_swa_model (read in the wheel"
HYBRID_SWA_ARCHS_ERAS: Eras[HybridSwaClasses] = Eras((
    Era("", HybridSwaClasses(frozenset(), "none"), "model_runner.py: no sliding-window pool but Llama-4's (read at "
        "0.4.0, 0.4.3, 0.4.5, 0.4.6.post5, 0.4.8.post1, 0.4.9, 0.4.9.post1, 0.4.9.post2)"),
    Era("0.4.9.post3", HybridSwaClasses(_WINDOW_METHOD, "window_method"), "model_runner.py ModelRunner.__init__ "
        "'Check if the model is using hybrid SWA' + models/*.py get_attention_sliding_window_size (read at 0.4.9.post3, "
        "0.4.10 … 0.4.10.post2, 0.5.0rc0 … 0.5.0rc2, 0.5.1, 0.5.1.post3, 0.5.2, 0.5.3 … 0.5.3.post3, 0.5.4, 0.5.5, "
        "0.5.6 … 0.5.6.post2)"),
    Era("0.5.7", HybridSwaClasses(frozenset({"MiMoV2FlashForCausalLM", "MiMoV2MTP"}), "listed"),
        "configs/model_config.py is_hybrid_model (0.5.7): MiMo-V2-Flash always, Llama-4 with --hybrid-kvcache-ratio; "
        "model_runner.py's window switch removed"),
    Era("0.5.8", HybridSwaClasses(_L0_5_8, "listed"), f"{_LISTED}s 0.5.8, 0.5.8.post1)"),
    Era("0.5.9", HybridSwaClasses(_L0_5_9, "listed", asserts=True),
        f"{_LISTED}s 0.5.9, 0.5.10rc0, 0.5.10, 0.5.10.post1); 'Hybrid SWA model must have at least one SWA layer' "
        "(model_runner_kv_cache_mixin.py; pool_configurator.py from 0.5.11)"),
    Era("0.5.11", HybridSwaClasses(_L0_5_11, "listed", asserts=True), f"{_LISTED} 0.5.11)"),
    Era("0.5.12", HybridSwaClasses(_L0_5_12, "listed", asserts=True), f"{_LISTED}s 0.5.12, 0.5.12.post1)"),
    Era("0.5.13", HybridSwaClasses(_L0_5_13, "listed", reads_stated=True, asserts=True),
        f"{_LISTED}s 0.5.13, 0.5.13.post1): the config's is_hybrid_swa read besides"),
    Era("0.5.14", HybridSwaClasses(_L0_5_13, "listed", True, True, laguna_by_window=True),
        f"{_LISTED} 0.5.14): Laguna only with a sliding_window"),
    Era("0.5.15", HybridSwaClasses(_L0_5_15, "listed", True, True, True), f"{_LISTED}s 0.5.15, 0.5.15.post1)"),
    Era("0.5.16", HybridSwaClasses(_L0_5_16, "listed", True, True, True), f"{_LISTED}s 0.5.16, 0.5.17)"),
    Era("0.5.18", HybridSwaClasses(_L0_5_18, "listed", True, True, True), f"{_LISTED} 0.5.18)"),
    Era("0.5.19", HybridSwaClasses(_L0_5_19, "listed", True, True, True), f"{_LISTED}s 0.5.19, 0.5.20: SWA_SINK_ARCHS)"),
    Era("0.5.21", HybridSwaClasses(_L0_5_21, "listed", True, True, True), f"{_LISTED} 0.5.21)"),
    Era("0.5.22", HybridSwaClasses(_L0_5_22, "listed", True, True, True), f"{_LISTED} 0.5.22)"),
    Era("0.5.23", HybridSwaClasses(_L0_5_23, "listed", True, True, True), f"{_LISTED} 0.5.23)"),
))  # fmt: skip


def hybrid_swa_classes(version: ResolvedVersion) -> HybridSwaClasses:
    """The release's rule: which classes get a sliding-window pool, and how it picks them."""
    return era_for(HYBRID_SWA_ARCHS_ERAS, version).value


def unlisted_reason(model: ModelSpec, version: ResolvedVersion) -> str | None:
    """Why this release keeps the model's sliding layers in the full pool because of its class (None: it splits)."""
    rule = hybrid_swa_classes(version)
    if model.architecture in rule.classes or (rule.reads_stated and model.hybrid_swa_stated):
        return None
    if rule.how == "none":
        return f"SGLang {version.label} has no sliding-window pool but Llama-4's (hybrid SWA memory from 0.4.9.post3)"
    if rule.how == "window_method":
        return (
            f"SGLang {version.label} splits a sliding-window pool only for a class whose model defines "
            f"get_attention_sliding_window_size (model_runner.py), not {model.architecture}"
        )
    return (
        f"SGLang {version.label} gives a sliding-window pool only to the classes configs/model_config.py lists "
        f"(is_hybrid_swa_model), not {model.architecture}"
    )
