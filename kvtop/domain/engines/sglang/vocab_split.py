"""SGLang's vocab embedding under --enable-dp-attention: the model classes whose model code builds it without TP
(`VocabParallelEmbedding(..., enable_tp=not is_dp_attention_enabled())`), so it is whole on every rank, its rows
still padded to 64; the LM head stays split over TP (attention TP only with --enable-dp-lm-head, not modelled).

What SGLang's code does, by class (the config's first architecture), not a fact of the model family: DeepseekV2Model
(models/deepseek_v2.py, which DeepSeek-V2/V3/V3.2, Kimi-K2/K2.5, GLM-5, Mistral-Large-3 and the DeepSeek-V2-based
VLMs build), Llama4Model (models/llama4.py), and the classes kvtop reads through the same architecture entries.
Applied at every release with DP attention, as before session 62; what the releases read say (session 62, left for
the coordinator: the weights book has no "embedding over attention TP, LM head over TP" split yet):
- DeepseekV2Model: whole from 0.4.x (0.4.6.post5 deepseek_v2.py:1343 `enable_tp=not
  global_server_args_dict["enable_dp_attention"]`) to 0.5.7 (:3042); from 0.5.8 split over the attention TP group
  (`use_attn_tp_group=is_dp_attention_enabled()`, 0.5.8 :2523; 0.5.16 … 0.5.23 `get_embedding_tp_kwargs()`,
  layers/vocab_parallel_embedding.py:166-185, whole only under SGLANG_ENABLE_EMBED_REPLICATION) — whole where
  dp == tp (attention TP 1), as the DP-attention launches read;
- Llama4Model: whole to 0.5.8 (llama4.py:489), over the attention TP group from 0.5.9 (:490);
- DeepseekV4ForCausalLM (0.5.23 deepseek_v4.py:3773) and SarvamMLAForCausalLM (0.5.23 sarvam_moe.py:1107): whole;
- Glm4MoeLiteForCausalLM (0.5.23 glm4_moe_lite.py:580-583) and HYV4ForCausalLM (0.5.23 hunyuan_v4.py:688-692): over
  the attention TP group;
- AXK1ForCausalLM and PanguUltraMoEForCausalLM: no SGLang class at 0.5.23 (the rule never reached).
"""

from __future__ import annotations

from typing import NamedTuple

from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import VocabSplit
from kvtop.domain.model import ModelSpec


class WholeEmbeddingClass(NamedTuple):
    """A model class whose embedding SGLang builds without TP under DP attention: the model code that builds it."""

    architecture: str
    built_by: str
    source: str


_DSV2 = "DeepseekV2Model"
_DSV2_SOURCE = "models/deepseek_v2.py DeepseekV2Model (0.5.7:3042)"
WHOLE_EMBEDDING_CLASSES: tuple[WholeEmbeddingClass, ...] = (
    WholeEmbeddingClass("DeepseekV2ForCausalLM", _DSV2, _DSV2_SOURCE),
    WholeEmbeddingClass("DeepseekV3ForCausalLM", _DSV2, f"{_DSV2_SOURCE}; DeepseekV3ForCausalLM(DeepseekV2ForCausalLM)"),
    WholeEmbeddingClass("DeepseekV32ForCausalLM", _DSV2, f"{_DSV2_SOURCE}; 0.5.23 deepseek_v2.py:3522"),
    WholeEmbeddingClass("MistralLarge3ForCausalLM", _DSV2, "models/mistral_large_3.py:12 (a DeepseekV3ForCausalLM)"),
    WholeEmbeddingClass("PixtralForConditionalGeneration", _DSV2,
                        "models/pixtral.py:126 builds MistralLarge3ForCausalLM (0.5.23)"),
    WholeEmbeddingClass("KimiK25ForConditionalGeneration", _DSV2, "models/kimi_k25.py:693 DeepseekV3ForCausalLM (0.5.23)"),
    WholeEmbeddingClass("KimiVLForConditionalGeneration", _DSV2, "models/kimi_vl.py:168 DeepseekV2ForCausalLM (0.5.23)"),
    WholeEmbeddingClass("DeepseekVL2ForCausalLM", _DSV2, "models/deepseek_vl2.py:217 DeepseekV2ForCausalLM (0.5.23)"),
    WholeEmbeddingClass("DeepseekOCRForCausalLM", _DSV2, "models/deepseek_ocr.py:1485-1497 DeepseekV3/V2ForCausalLM"),
    WholeEmbeddingClass("DotsVLMForCausalLM", _DSV2, "models/dots_vlm.py:76 DeepseekV2ForCausalLM (0.5.23)"),
    WholeEmbeddingClass("GlmMoeDsaForCausalLM", _DSV2, "models/glm4_moe.py:1284 GlmMoeDsaForCausalLM(DeepseekV2ForCausalLM)"),
    WholeEmbeddingClass("Glm4MoeLiteForCausalLM", "Glm4MoeLiteModel", "models/glm4_moe_lite.py:580-583 (0.5.23)"),
    WholeEmbeddingClass("HYV4ForCausalLM", "HYV4Model", "models/hunyuan_v4.py:688-692 (0.5.23)"),
    WholeEmbeddingClass("DeepseekV4ForCausalLM", "DeepseekV4Model", "models/deepseek_v4.py:3773 (0.5.23)"),
    WholeEmbeddingClass("SarvamMLAForCausalLM", "SarvamMLAModel", "models/sarvam_moe.py:1107 (0.5.23)"),
    WholeEmbeddingClass("AXK1ForCausalLM", _DSV2, "DeepSeek-V3's layout; no SGLang class at 0.5.23"),
    WholeEmbeddingClass("PanguUltraMoEForCausalLM", _DSV2, "DeepSeek-V3's layout; no SGLang class at 0.5.23"),
    WholeEmbeddingClass("Llama4ForCausalLM", "Llama4Model", "models/llama4.py Llama4Model (0.5.8:489)"),
    WholeEmbeddingClass("Llama4ForConditionalGeneration", "Llama4Model", "models/mllama4.py:496 Llama4ForCausalLM"),
)  # fmt: skip
_BY_CLASS = {entry.architecture: entry for entry in WHOLE_EMBEDDING_CLASSES}
# SGLang's PixtralForConditionalGeneration builds Mistral-Large-3 only (pixtral.py:126): kvtop reads Pixtral-12B's
# params.json under the same class over a Mistral MHA model, which that code does not build (no latent attention)
_LATENT_ONLY = frozenset({"PixtralForConditionalGeneration"})


def whole_embedding_class(model: ModelSpec) -> WholeEmbeddingClass | None:
    """The table's entry for this model's class (None: SGLang splits its embedding over TP under DP attention too)."""
    entry = _BY_CLASS.get(model.architecture)
    if entry is None or (entry.architecture in _LATENT_ONLY and model.mla is None):
        return None
    return entry


def sglang_vocab_split(model: ModelSpec, settings: LaunchSettings) -> VocabSplit:
    """Under --enable-dp-attention a class of WHOLE_EMBEDDING_CLASSES has its embedding whole on every rank, its
    rows padded to 64 (a VocabParallelEmbedding with enable_tp=False); otherwise the book's TP split."""
    if settings.enable_dp_attention and whole_embedding_class(model) is not None:
        return VocabSplit(embedding_whole=True, embedding_rows_padded=True,
                          note="SGLang builds it without TP under DP attention")  # fmt: skip
    return VocabSplit()
