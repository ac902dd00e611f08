"""What a TensorRT engine holds because of how it was built, beyond what its checkpoint and release say
(docs/engines/trtllm.md §17, §18): which builder made it, and the LM head a tied checkpoint is built with.

**The builder (§18, v0.8).** TensorRT-LLM 0.8 built engines two ways: the old per-model `examples/<model>/build.py`
(its runtime prints `No engine version found in the config file, assuming engine(s) built by old builder API`) and
`trtllm-build` (`Engine version 0.8.0 found in the config file, assuming engine(s) built by new builder API`). Their
C++ runtimes hold different amounts before the KV sizing: the two `trtllm-build` Llama-3-8B engines of the corpus grow
TensorRT's process-wide count by max_num_tokens × vocab × 4 B (4,030 MiB at 8,192 tokens, 5,946 at 12,288), the
`build.py` gpt2-medium engine of search-index id 29338649464 by 190 MiB, the packed-token activation of the build.py
line before v0.8 (8 × 924 tokens × (3 × 4,096 + 1,024) × 2 B = 187.7 MiB). A launch line says which builder made a
v0.8 engine by build.py's own spellings, which `trtllm-build` of v0.8 does not take (it spells `--gpt_attention_plugin`,
`--gemm_plugin`, `--context_fmha`, and has no in-flight-batching switch): examples/gpt/build.py `parse_arguments`
(stored copy at b57221b7, search-index id 193704310) takes `--use_gpt_attention_plugin`, `--use_gemm_plugin`,
`--enable_context_fmha`, `--use_inflight_batching`; the v0.8.0 `trtllm-build` lines of the guide 69112122406 and of
bentoml/BentoTRTLLM's README spell the new ones.

**A tied LM head (§17).** A checkpoint whose config ties the LM head to the embedding is built into an engine that
holds both matrices: the converters write the LM head as a copy of the embedding (tensorrt_llm/models/qwen/convert.py
`convert_hf_qwen`, stored copy at 0428c188, search-index id 52322261543: `if hf_config.tie_word_embeddings:
lm_head_weights = v.clone()`, beside `transformer.vocab_embedding.weight`; gpt's `weight.py` of the build.py line
likewise unless `--use_embedding_sharing`). Read off two engines' own sizes: gpt2-medium at v0.8.0, `TensorRT-managed
allocation in engine deserialization: GPU +774 (MiB)` where the book of the tied model holds 677 MiB and its LM head
50,257 × 1,024 × 2 B = 98 MiB; Qwen2.5-Coder-0.5B int8 weight-only at 0.14, 869 MiB against the book's 602 and a
16-bit head of 151,936 × 896 × 2 B = 260 MiB, 861 together (issue 1188). The PyTorch backend ties them as the model does.
"""

from __future__ import annotations

from kvtop.domain.calibration.features import mlp_transient_gib
from kvtop.domain.engines.trtllm.eras import RuntimeForm, engine_runtime_form
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.rounding import ceil_div
from kvtop.domain.wording import GIB, gib

# build.py's own spellings (examples/gpt/build.py, id 193704310), as kvtop keeps a pass-through flag: without dashes
OLD_BUILDER_FLAGS = ("use_gpt_attention_plugin", "use_gemm_plugin", "enable_context_fmha", "use_inflight_batching")
# build.py's and convert_checkpoint's switch to share the embedding with the LM head ("might not take effect when the
# criteria are not met", its help says: kvtop takes it as shared)
EMBEDDING_SHARING_FLAG = "use_embedding_sharing"
# the families TensorRT-LLM shares the table for whatever the flags say: tensorrt_llm/models/gemma/model.py asserts
# `config.share_embedding_table` ("Gemma only supports share_embedding_table", search-index id 3263411732), and
# ModelOpt's export forces it for gemma, gemma2, gemma3 (id 4228687882)
SHARED_HEAD_FAMILIES = ("Gemma",)
# TensorRT held three [tokens, intermediate] tensors for GPT-2's ungated MLP too: the v0.8 GPT-2 log's 190 MiB
# against 187.7 MiB by this count at its build's 7,392 tokens (two, the PyTorch forward's, would give 129.9 MiB);
# measured in that one log, assumed for every build.py engine
PACKED_TOKEN_INTERMEDIATES = 3


def old_builder_flag(settings: LaunchSettings) -> str | None:
    """The first of build.py's own flags the launch states (`--use_gpt_attention_plugin`, …), else None."""
    return next((f"--{name}" for name in OLD_BUILDER_FLAGS if name in settings.flags), None)


def runtime_form(version: ResolvedVersion, settings: LaunchSettings) -> RuntimeForm:
    """What the engine's C++ runtime holds before the KV sizing: the release's form (`ENGINE_RUNTIME_ERAS`), except a
    v0.8 engine that build.py made, whose runtime holds the packed-token activation of the build.py line (§18)."""
    form = engine_runtime_form(version)
    if form == "token_logits" and old_builder_flag(settings) is not None:
        return "packed_tokens"
    return form


def packed_tokens_mlp_bytes(model: ModelSpec, layout: ParallelLayout, tokens: int) -> int:
    """What TensorRT holds for `tokens` packed tokens whatever the vocabulary (§18 "before v0.8"): the widest layer's
    live tensors, the MLP's three 16-bit [tokens, intermediate] and the residual (`mlp_transient_gib`)."""
    return round(mlp_transient_gib(model, layout, tokens, intermediates=PACKED_TOKEN_INTERMEDIATES) * GIB)


def tied_head_copy(model: ModelSpec | None, layout: ParallelLayout, settings: LaunchSettings) -> tuple[int, str] | None:
    """(bytes, why) a TensorRT engine of a tied checkpoint holds beside the book: its LM head as its own matrix, the
    vocabulary padded to a multiple of TP and split over it, in the model's dtype (the converters leave the head
    unquantized), for `weights_estimate(extra=…)`. None where the model is not tied, the launch shares the embedding
    (`--use_embedding_sharing`), the family is built shared (`SHARED_HEAD_FAMILIES`: Gemma), or the rank holds no
    embedding beside its head (pipeline stages: the book charges a last stage's head already)."""
    if model is None or not model.tie_word_embeddings or EMBEDDING_SHARING_FLAG in settings.flags or layout.pp > 1:
        return None
    if model.architecture.startswith(SHARED_HEAD_FAMILIES):
        return None
    tp = max(layout.tp, 1)
    rows = ceil_div(model.vocab_size, tp)
    width = model.embedding_size or model.hidden_size
    nbytes = rows * width * model.dtype_bytes
    return nbytes, (f"the LM head the engine holds as its own matrix, {gib(nbytes)} ({rows:,} × {width:,} × "
                    f"{model.dtype_bytes} B: the converters copy a tied embedding into it, §17)")  # fmt: skip
