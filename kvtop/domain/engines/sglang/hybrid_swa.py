"""Which model classes SGLang gives a separate sliding-window pool (hybrid SWA memory), by release.

SGLang 0.5.23 decides it by class name alone (`configs/model_config.py is_hybrid_swa_model`, read by
`ModelConfig._derive_hybrid_model`): a sliding-window or chunked model whose class is not listed (Cohere2,
Llama-4's text-only class, EXAONE-4, OLMo-3 …) keeps every layer in the one full pool, its per-token cell all layers
(`pool_configurator._compute_cell_size`) — unless the config opts in itself: `is_hybrid_swa` true in the text
config (the same function, after the class list; Spark-2.5's and IQuest-Q1's config classes set it where any layer
slides, and SGLang then reads the layers from `hybrid_layer_pattern`, a copy of layer_types). Earlier releases are not checked here: kvtop keeps their split pool.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.model import ModelSpec

# SGLang 0.5.23 configs/model_config.py is_hybrid_swa_model: hybrid_swa_archs, SWA_SINK_ARCHS and MIMO_V2_MODEL_ARCHS
# (Laguna only with a sliding_window, Beam only with sliding layers); a config's own is_hybrid_swa opts in besides
_HYBRID_SWA_0_5_23 = frozenset({
    "BeamForCausalLM", "Llama4ForConditionalGeneration", "DeepseekV4ForCausalLM", "DeepseekV4ForCausalLMNextN",
    "DeepseekV4ForCausalLMDSpark", "GptOssForCausalLM", "GraniteSWAForCausalLM", "GraniteMoeSWAForCausalLM",
    "IQuestQ1ForCausalLM", "IQuestQ1MTP", "MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM", "MiMoV2MTP",
    "Step3p5ForCausalLM", "Step3p5MTP", "Step3p7ForConditionalGeneration", "Gemma4ForCausalLM",
    "Gemma4ForConditionalGeneration", "EmbeddingGemma2Model", "Gemma4UnifiedForConditionalGeneration",
    "DiffusionGemmaForBlockDiffusion", "LagunaForCausalLM", "MellumForCausalLM", "MuseGlimmerForCausalLM",
    "MuseGlimmerForConditionalGeneration", "InklingForConditionalGeneration", "InklingForConditionalGenerationMTP",
    "UnlimitedOCRForCausalLM",
})  # fmt: skip

HYBRID_SWA_ARCHS_ERAS: Eras[frozenset[str] | None] = Eras(
    (  # None: every sliding-window model (not checked)
        Era("", None, "not checked before 0.5.23: every sliding-window or chunked model splits a SWA pool"),
        Era(
            "0.5.23",
            _HYBRID_SWA_0_5_23,
            "configs/model_config.py is_hybrid_swa_model: only the listed classes",
        ),
    )
)


def unlisted_reason(model: ModelSpec, version: ResolvedVersion) -> str | None:
    """Why this release keeps the model's sliding layers in the full pool because of its class (None: listed)."""
    listed = era_for(HYBRID_SWA_ARCHS_ERAS, version).value
    if listed is None or model.architecture in listed or model.hybrid_swa_stated:
        return None
    return (
        f"SGLang {version.label} gives a sliding-window pool only to the classes is_hybrid_swa_model lists, not "
        f"{model.architecture}"
    )
