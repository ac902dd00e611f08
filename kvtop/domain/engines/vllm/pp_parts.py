"""Which pipeline stages hold the embedding, the final norm and the LM head, per vLLM model class.

Most of vLLM's classes guard them: `embed_tokens` only where `get_pp_group().is_first_rank` (or the last rank
of a tied model), `norm` and `lm_head` only where `is_last_rank`, a `PPMissingLayer` elsewhere (llama.py,
qwen2.py, qwen3.py, deepseek_v2.py, glm4_moe.py). The classes below build them with no guard, so every stage's
rank holds them. Architectures are data here, by release: read from vLLM 0.33.0's own model classes built on
the meta device at TP1×PP4 and TP2×PP2 (tests/data/engine_diff/vllm-0.33.0.flags.json, variants pp2/pp4: each
stage's `lm_head` child and its `model` bytes, equal on every stage of an even split). DeepSeek-V4 builds its
hyper-connections' head mixer on every stage (`EveryStage.head_mixer`; a TP1×PP2 meta build of DeepSeek-V4-Flash,
tests/engines/vllm/test_dsv4_pp_head_mixer.py). Earlier releases are read from their source (every wheel from
0.6.3.post1 to 0.32.0): the same classes build the same parts with no guard from the first of those releases that
ships each file, so the table holds from 0.6.3.post1 (DeepSeek-V4's head mixer from 0.29.0); before it, not read:
the guarded stages.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.layout import EveryStage, StageParts, parts_of_stage
from kvtop.domain.model import ModelSpec

_ALL = EveryStage(embedding=True, final_norm=True, lm_head=True)

# Read from each release's source (the wheels 0.6.3.post1 … 0.32.0): `embed_tokens`, `norm`, `lm_head` assigned in
# `__init__` at the function's own level, no `get_pp_group().is_first_rank` / `is_last_rank` branch around them,
# the same parts as 0.33.0's meta builds, from the first of those releases that ships the file: mixtral.py and
# jamba.py 0.6.3.post1, gemma3.py 0.8.0, qwen3_moe.py 0.8.5.post1 (Qwen3MoeModel.__init__ line 466 and
# Qwen3MoeForCausalLM.__init__ line 578 at 0.27.1), granitemoehybrid.py 0.9.0, nemotron_h.py 0.9.1, gpt_oss.py
# 0.10.1, qwen3_next.py 0.10.2, qwen3_5.py 0.17.0, gemma4.py 0.19.0. A class absent from a release is never looked up.
# The bytes in the comments are vLLM 0.33.0's meta builds.
_UNGUARDED: dict[str, EveryStage] = {
    # mixtral.py MixtralModel / MixtralForCausalLM: embed_tokens, norm and lm_head unguarded
    # (Mixtral-8x7B TP1×PP4: every stage lm_head 262,144,000 B and model 23,482,474,496 B)
    "MixtralForCausalLM": _ALL,
    # qwen3_moe.py Qwen3MoeModel / Qwen3MoeForCausalLM (Qwen3-30B-A3B TP1×PP4: 12 layers and lm_head each)
    "Qwen3MoeForCausalLM": _ALL,
    # gpt_oss.py GptOssModel / GptOssForCausalLM (gpt-oss-120b TP1×PP4: model 16,891,341,696 B each stage)
    "GptOssForCausalLM": _ALL,
    # jamba.py, nemotron_h.py (engine-diff PP4: every stage's bytes equal, lm_head on each)
    "JambaForCausalLM": _ALL,
    "NemotronHForCausalLM": _ALL,
    # qwen3_next.py: embed_tokens and lm_head unguarded, the final norm on the last stage (+4,096 B there)
    "Qwen3NextForCausalLM": EveryStage(embedding=True, lm_head=True),
    # qwen3_5.py: the language model's embed_tokens unguarded, norm and lm_head on the last stage (Qwen3.5-27B
    # TP1×PP4: language_model 14,719,396,224 B on stages 0–2, + 2,542,807,040 B of head and norm on stage 3)
    "Qwen3_5ForConditionalGeneration": EveryStage(embedding=True),
    "Qwen3_5MoeForConditionalGeneration": EveryStage(embedding=True),
    # gemma3.py Gemma3Model: embed_tokens and norm unguarded; the head is tied to the embedding
    # (gemma-3-27b TP1×PP4: stages 1 and 2 hold 2,819,260,416 + 10,752 B more than a guarded split)
    "Gemma3ForCausalLM": EveryStage(embedding=True, final_norm=True),
    "Gemma3ForConditionalGeneration": EveryStage(embedding=True, final_norm=True),
    # gemma4.py Gemma4Model: embed_tokens and norm unguarded; Gemma4ForCausalLM's ParallelLMHead too (tied to
    # the stage's embed_tokens where tie_word_embeddings); gemma4_mm.py builds its language model so, the
    # tower on the first stage only (gemma-4-26B-A4B TP1×PP4: embed_tokens [262144, 2816] bf16 and
    # norm [2816] on all four stages, 1,476,395,008 + 5,632 B)
    "Gemma4ForCausalLM": _ALL,
    "Gemma4ForConditionalGeneration": _ALL,
    # granitemoehybrid.py GraniteMoeHybridModel: embed_tokens and norm unguarded, the head tied to the embedding
    # (granite-4.0-h-small TP1×PP4: every stage 16,720,240,128 B; a guarded split's middle stages hold
    # 100,352 × 4,096 × 2 B + 8,192 B less)
    "GraniteMoeHybridForCausalLM": EveryStage(embedding=True, final_norm=True),
}
_HEAD_MIXER: dict[str, EveryStage] = {
    # models/deepseek_v4/nvidia/model.py DeepseekV4Model.__init__ (0.33.0 lines 883-903): hc_head_fn [hc_mult, hc_mult
    # × hidden], hc_head_base [hc_mult], hc_head_scale [1] fp32 with no is_last_rank guard (the norm, line 878,
    # and lm_head, line 1344, guarded); cpu/, amd/, xpu/ model.py the same; the multimodal wrapper
    # (common/vl_model.py) builds it as its language model. DeepSeek-V4-Flash TP1×PP2 meta build: stage 0
    # holds the three, 262,144 + 16 + 4 B, beside embed_tokens and no norm
    "DeepseekV4ForCausalLM": EveryStage(head_mixer=True),
    "DeepseekV4ForConditionalGeneration": EveryStage(head_mixer=True),
}

EVERY_STAGE_ERAS: Eras[dict[str, EveryStage]] = Eras((
    Era("", {}, "not read before 0.6.3.post1: the guarded stages"),
    Era("0.6.3.post1", _UNGUARDED,
        "vllm/model_executor/models/{mixtral,qwen3_moe,gpt_oss,jamba,nemotron_h,qwen3_next,qwen3_5,gemma3,gemma4,"
        "granitemoehybrid}.py read at every release 0.6.3.post1-0.32.0: no is_first_rank / is_last_rank guard"),
    # models/deepseek_v4/nvidia/model.py at 0.29.0 (lines 1300-1320), 0.30.0 and 0.32.0: hc_head_fn, hc_head_base,
    # hc_head_scale built after the guarded norm, as at 0.33.0
    Era("0.29.0", {**_UNGUARDED, **_HEAD_MIXER},
        "vllm/models/deepseek_v4/nvidia/model.py DeepseekV4Model.__init__ (0.29.0 lines 1305-1327): the head mixer "
        "unguarded"),
    Era("0.33.0", {**_UNGUARDED, **_HEAD_MIXER},
        "vllm/model_executor/models/{mixtral,qwen3_moe,gpt_oss,jamba,nemotron_h,qwen3_next,qwen3_5,gemma3,gemma4,"
        "granitemoehybrid}.py, vllm/models/deepseek_v4/nvidia/model.py: no is_first_rank / is_last_rank guard "
        "(engine-diff meta builds, PP 2 and 4)"),
))  # fmt: skip


def stage_parts(model: ModelSpec, pp_rank: int, pp: int, version: ResolvedVersion) -> StageParts:
    """The parts this release's class of `model` builds on stage `pp_rank` of `pp`."""
    every = EVERY_STAGE_ERAS.at(version).get(model.architecture)
    tie = tied(model, version)
    parts = parts_of_stage(every, tie, pp_rank, pp)
    return parts if tie == model.tie_word_embeddings else parts.model_copy(update={"tied_head": tie})


# vLLM 0.33.0 config/vllm.py `VllmConfig.with_hf_config` (init_vllm_registered_model builds a multimodal model's
# language model with it) copies the multimodal config's own tie_word_embeddings into its text config ("In
# Transformers v5, tie_word_embeddings belongs to the config of the class that can see both layers"); 0.13.0's
# has no such copy
OUTER_TIE_ERAS: Eras[bool] = Eras((
    Era("", False, "vLLM 0.13.0 config/vllm.py with_hf_config: the text config's own value"),
    Era("0.33.0", True, "vLLM 0.33.0 config/vllm.py with_hf_config: the multimodal config's tie_word_embeddings"),
))  # fmt: skip


def tied(model: ModelSpec, version: ResolvedVersion) -> bool:
    """Whether vLLM ties the language model's head to its embedding: from 0.33.0, a multimodal wrapper's value
    where its config states one (InternVLConfig's default True over its Qwen2 text_config's False: no lm_head in
    vLLM 0.33.0's meta build of the registry sweep's InternS1ForConditionalGeneration default), else the text
    section's."""
    if OUTER_TIE_ERAS.at(version) and model.multimodal and model.outer_tie_word_embeddings is not None:
        return model.outer_tie_word_embeddings
    return model.tie_word_embeddings
