"""Which pipeline stages hold the embedding, final norm, LM head and vision tower, per SGLang model class.

SGLang's models build `embed_tokens` only where `pp_group.is_first_rank` and `norm` only where `is_last_rank`
(a `PPMissingLayer` elsewhere), and most guard `lm_head` with `is_last_rank` too (qwen2.py, qwen3.py,
deepseek_v2.py). The classes below build `lm_head` (`ParallelLMHead`, vocab × hidden ÷ TP) with no guard, so
every stage's rank holds one; Llama's family ties it as `lm_head = self.model.embed_tokens`, which on a stage
without the embedding is nothing. MiniMax-M2 builds its embedding on every stage, and the Qwen-VL family and
Mistral3 their vision tower and projector (its learned position table on the first stage only). Architectures are data here,
by release: read from SGLang 0.5.23's own model classes built on the meta device at TP1×PP4 and TP2×PP2
(tests/data/engine_diff/sglang-0.5.23.flags.json, variants pp2/pp4: each stage's `lm_head` child and its
`model` bytes). Earlier releases are not checked (no PP run of them): kvtop keeps the guarded stages there.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.layout import EveryStage, StageParts, parts_of_stage
from kvtop.domain.model import ModelSpec

# llama.py LlamaForCausalLM (and its subclasses MistralForCausalLM, Phi3ForCausalLM; Mistral3's language
# model): `if tie_word_embeddings: lm_head = model.embed_tokens else: ParallelLMHead(...)`, unguarded
# (Llama-3.1-8B TP1×PP4: lm_head 1,050,673,152 B on each stage; Phi-4-mini, tied: no head past stage 0)
_LLAMA_HEAD = EveryStage(lm_head=True, tied_head_is_embedding=True)
_HEAD = EveryStage(lm_head=True)

EVERY_STAGE_ERAS: Eras[dict[str, EveryStage]] = Eras((
    Era("", {}, "not checked before 0.5.23: the guarded stages"),
    Era("0.5.23", {
        "LlamaForCausalLM": _LLAMA_HEAD,
        "MistralForCausalLM": _LLAMA_HEAD,
        "Phi3ForCausalLM": _LLAMA_HEAD,
        # qwen3_moe.py, mixtral.py, glm4_moe.py, gpt_oss.py: ParallelLMHead unguarded (untied checkpoints only
        # were run: Qwen3-235B-A22B, Mixtral-8x7B/8x22B, GLM-4.5-Air, gpt-oss-20b/120b)
        "Qwen3MoeForCausalLM": _HEAD,
        "MixtralForCausalLM": _HEAD,
        "Glm4MoeForCausalLM": _HEAD,
        "GptOssForCausalLM": _HEAD,
        # minimax_m2.py: embed_tokens unguarded (MiniMax-M2.5 TP1×PP4: stages 1–3 hold 1,229,193,216 B more)
        "MiniMaxM2ForCausalLM": EveryStage(embedding=True),
        # qwen2_5_vl.py, qwen3_vl.py, qwen3_5.py, mistral3 (llava.py): the vision tower and projector on every
        # stage, its learned position table (pos_embed) on the first only (Qwen3-VL-8B TP1×PP4: visual
        # 1,152,776,672 B on stage 0, 1,147,468,256 B on the others: 2,304 × 1,152 × 2 B less)
        "Qwen2_5_VLForConditionalGeneration": EveryStage(tower=True),
        "Qwen3VLForConditionalGeneration": EveryStage(tower=True),
        "Qwen3_5ForConditionalGeneration": EveryStage(tower=True),
        "Qwen3_5MoeForConditionalGeneration": EveryStage(tower=True),
        "Mistral3ForConditionalGeneration": _LLAMA_HEAD.model_copy(update={"tower": True}),
    }, "sglang/srt/models/{llama,qwen3_moe,mixtral,glm4_moe,gpt_oss,minimax_m2}.py: lm_head (or embed_tokens) "
       "without an is_last_rank / is_first_rank guard (engine-diff meta builds, PP 2 and 4)"),
))  # fmt: skip


# Classes that build their LM head apart whatever the config's tie_word_embeddings, by release: whisper.py
# WhisperForConditionalGeneration.proj_out a ParallelLMHead of its own (vocab padded, split over TP), its load_weights
# copying embed_tokens' weight into it (openai--whisper-large-v3 meta-built: proj_out 132,874,240 B at TP 1, 51,904 ×
# 1,280 × 2 B)
UNTIED_HEAD_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "not read before 0.5.23 (0.5.6.post2 has no whisper.py): the config's tying"),
    Era("0.5.23", frozenset({"WhisperForConditionalGeneration"}),
        "sglang/srt/models/whisper.py proj_out ParallelLMHead (meta build, TP 1 and 2); the release that added it "
        "is not pinned"),
))  # fmt: skip


def stage_parts(model: ModelSpec, pp_rank: int, pp: int, version: ResolvedVersion) -> StageParts:
    """The parts this release's class of `model` builds on stage `pp_rank` of `pp`."""
    every = EVERY_STAGE_ERAS.at(version).get(model.architecture)
    parts = parts_of_stage(every, model.tie_word_embeddings, pp_rank, pp)
    untied = model.architecture in UNTIED_HEAD_ERAS.at(version)
    return parts.model_copy(update={"tied_head": False}) if untied else parts
