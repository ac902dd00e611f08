"""vLLM's pooling runner (`--runner pooling`, or the older `--task embed|embedding|classify|score|reward`): what it
changes in the memory vLLM sizes its KV pool from (docs/engines/vllm.md §12).

Read in the v0.11.0 wheel (PyPI), the one release whose pooling start the corpus's search found (a Qwen3-VL-Embedding-2B
start on a T4, tests/data/calibration/SOURCES.md):

- `profile_run` runs the forward over `max_num_batched_tokens` as a generating runner does, then, on the last stage,
  `_dummy_pooler_run(hidden_states)` in place of `_dummy_sampler_run` (v1/worker/gpu_model_runner.py:3388-3396): no
  LM head, no logits, no sampler. The pooler is run once per supported task over min(tokens, max_num_seqs) dummy
  requests and again for the task with the largest output (:3310-3323); the largest is the `encode` task's ALL
  pooling, one row a token (`AllPool.forward_all` splits the hidden states into views, model_executor/layers/
  pooler.py:261-278), cast to the head dtype, float32 for a pooling runner (`_get_head_dtype`, config/model.py
  :1738-1758). So the peak is the larger of the forward (its MLP transient beside the residual and the normed input,
  as `calibration_activation._forward_floor` counts it for every runner) and the pooler's float32 rows beside the
  forward's output, plus what a multimodal encoder profile keeps through them (encoder_profile.py).
- The V1 activation fit is kept for the forward's part (its hidden-state and MLP coefficients) with its sampler's
  feature at 0; the peak is never below the forward as counted. No pooling start printed its peak: assumed, ± the
  forward's own size or the fit's held-out error, the larger (a multimodal model's: 2 GiB at least, as its generating
  profile is assumed).
- `_create_pooling_model_cls` deletes the class's own `lm_head` (model_executor/models/adapters.py:190-192), which
  kvtop's weights book still charges where the head is untied: such a launch is refused, not modelled. A tied head is
  the embedding, kept; a multimodal class whose head lives in its `language_model` keeps it (`TOP_HEADS`).
- The scheduler's default `max_num_batched_tokens` for a pooling runner depends on the pooler type the checkpoint's
  sentence-transformers files give (chunked prefill only for LAST pooling of a causal model, engine/arg_utils.py
  :1547-1577; `POOLING_MODEL_MAX_NUM_BATCHED_TOKENS` = 32,768 under it, config/scheduler.py:181-186): kvtop does not
  read those files, so a pooling launch must state `--max-num-batched-tokens`.
- CUDA-graph capture and the KV cache are a generating runner's (no pooling branch in capture_model; the attention of
  a causal decoder keeps its KV cache). An encoder-only model (no causal attention, no KV cache) is not planned here.

- `--runner auto` (the default) resolves the runner from the architecture (`_get_default_runner_type`, config/model.py
  :745-767): first the checkpoint's sentence-transformers modules.json (`get_pooling_config`: pooling whatever the
  class), which kvtop does not read (a generating class is planned as generating, assumed); then a class vLLM
  registers by its `is_pooling_model` (`AUTO_POOLING_CLASSES`) or its text generation (`AUTO_GENERATING_MODELS`: a
  `*Model` name whose class generates, LlamaModel → LlamaForCausalLM, model_executor/models/registry.py:159-199);
  else the name's suffix (`_SUFFIX_TO_DEFAULTS`, config/model.py:1533-1549: `*ForSequenceClassification`,
  `*EmbeddingModel`, `*RewardModel`, … and last `*Model` → pooling; `*ForCausalLM`, `*ForConditionalGeneration`,
  `*ChatModel`, `*LMHeadModel` → generate); no match → generate. Such a launch is the pooling runner's as
  `--runner pooling` is (refused where kvtop does not plan one).

v0.10.2 has the same code, checked function by function in its wheel (`POOLING_ERAS`), but for the container the
pooler returns (a PoolerOutput of the same tensors) and a registry that still holds BartModel as a generating class
(`AUTO_GENERATING_MODELS`); it still has V0, whose pooling runner is not read (refused where the start runs V0:
VLLM_USE_V1=0, or a VLLM_ATTENTION_BACKEND V1 does not take). v0.11.1 – v0.12.0 split `encode` into token_embed and
token_classify, and token_embed's head applies the checkpoint's sentence-transformers projector (v0.11.1
model_executor/layers/pooler.py:345-351, 623-643), which kvtop does not read: not extended there. Other releases are
not read: a pooling launch there is refused by name (`POOLING_ERAS`), an auto one where the class is pooling at
v0.11.0 or has a pooling suffix but the bare `*Model` (`auto_pooling`; the release's own registry, and `--task auto`
before v0.10.1, not read).
"""

from __future__ import annotations

from kvtop.domain.calibration.features import assumed_estimate
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.engines.vllm.encoder_profile import EncoderProfile
from kvtop.domain.engines.vllm.pooling_runner import (
    AS_AUTO,
    AS_GENERATE,
    CONVERT_FLAG,
    POOLING_ERAS,
    POOLING_TASKS,
    RUNNER_FLAG,
    TASK_FLAG,
    TASK_READ_ERAS,
    pooling_runner,
    refuse_values,
)
from kvtop.domain.engines.vllm.profile_run import engine_era
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.wording import GIB, gib

# the adapter deletes only the class's own `lm_head` (`hasattr(self, "lm_head")`, model_executor/models/adapters.py
# :190-192 at v0.11.0): a multimodal class whose head lives in its `language_model` (Qwen2-VL, Qwen2.5-VL, Qwen3-VL,
# Gemma-3, Mistral-3: init_vllm_registered_model / Qwen3LLMForCausalLM) keeps it, as the weights book charges it; these
# multimodal classes hold it at the top (their `self.lm_head =`, v0.11.0 aria.py, chameleon.py, idefics3.py (and
# smolvlm.py's subclass), kimi_vl.py, molmo.py, phi4mm.py), so theirs is deleted
TOP_HEADS = frozenset({
    "AriaForConditionalGeneration", "ChameleonForConditionalGeneration", "Idefics3ForConditionalGeneration",
    "SmolVLMForConditionalGeneration", "KimiVLForConditionalGeneration", "MolmoForCausalLM", "Phi4MMForCausalLM",
})  # fmt: skip
HEAD_DTYPE_BYTES = 4  # float32: a pooling runner's head dtype (config/model.py:1756-1757 at v0.11.0)
MULTIMODAL_ERROR = 2 * GIB  # as a multimodal model's generating profile is assumed (calibration_activation.py)


def refuse_unmodelled(inputs: CalibrationInputs) -> None:
    """What kvtop does not plan of a runner or pooling launch, refused by the flag that asks for it (not modelled:
    `explain` still reads such a start's log)."""
    flags, version = inputs.settings.flags, inputs.version
    refuse_values(flags)  # argparse's choices: a launch without --engine-version skips check_parallel's
    runner, task = flags.get(RUNNER_FLAG.lstrip("-")), flags.get(TASK_FLAG.lstrip("-"))
    convert = flags.get(CONVERT_FLAG.lstrip("-"), "none")
    if task in (AS_GENERATE, AS_AUTO) and not TASK_READ_ERAS.at(version):
        raise UnsupportedModelError(f"vLLM {version.label}'s --task {task} is not modelled (what the release makes of it "
                                    f"read at v0.11.0 – v0.12.x only: {TASK_READ_ERAS.era(version).source})",
                                    field=TASK_FLAG)  # fmt: skip
    if runner == "draft":
        raise UnsupportedModelError("vLLM's draft runner (a speculative model started alone) is not modelled", field=RUNNER_FLAG)
    pooling = pooling_runner(flags, inputs.model, version)
    if not pooling and str(convert) not in ("auto", "none"):
        raise UnsupportedModelError("a conversion without `--runner pooling` (the runner vLLM resolves from the architecture) "
                         "is not modelled", field=CONVERT_FLAG)  # fmt: skip
    if not pooling:
        return
    flag = TASK_FLAG if str(task) in POOLING_TASKS else RUNNER_FLAG
    asked = runner == "pooling" or flag == TASK_FLAG
    arch = inputs.model.architecture if inputs.model is not None else ""
    why = "" if asked else f" (`--runner auto` on {arch}, a pooling class by vLLM's registry and suffixes)"
    if not POOLING_ERAS.at(version):
        raise UnsupportedModelError(f"vLLM {version.label}'s pooling runner{why} is not modelled (its code read at v0.10.2 – "
                         f"v0.11.0 only: {POOLING_ERAS.era(version).source})", field=flag)  # fmt: skip
    if engine_era(inputs) == "v0":
        raise UnsupportedModelError(f"vLLM {version.label}'s pooling runner{why} under V0 (VLLM_USE_V1=0, or a "
                                    "VLLM_ATTENTION_BACKEND V1 does not take) is not modelled: V0's pooling model "
                                    "runner was not read", field=flag)  # fmt: skip
    if inputs.settings.max_num_batched_tokens is None:
        raise UnsupportedModelError(f"a pooling runner's{why} default max_num_batched_tokens depends on the pooler type the "
                         "checkpoint's sentence-transformers files set (engine/arg_utils.py:1547-1577, "
                         "config/scheduler.py:181-186 at v0.11.0), which kvtop does not read: pass "
                         "--max-num-batched-tokens", field=flag)  # fmt: skip
    model = inputs.model
    if model is not None and not model.tie_word_embeddings and (not model.multimodal or model.architecture in TOP_HEADS):
        raise UnsupportedModelError("vLLM's pooling adapter deletes the untied LM head (model_executor/models/adapters.py"
                         ":190-192 at v0.11.0), which kvtop's weights book still charges: not modelled", field=flag)  # fmt: skip


def pooler_bytes(inputs: CalibrationInputs, tokens: int) -> int:
    """What `_dummy_pooler_run` holds at its largest task: the `encode` task's one float32 row a token beside the
    forward's output (tokens × hidden in the model's dtype) that profile_run keeps across it."""
    model = inputs.model
    if model is None:
        return 0
    return tokens * model.hidden_size * (HEAD_DTYPE_BYTES + model.dtype_bytes)


def pooling_estimate(
    inputs: CalibrationInputs, fit_forward: int | None, counted_forward: int, encoder: EncoderProfile | None,
    fit_error: int | None, label: str, tokens: int,
) -> TermEstimate:
    """The profiled peak of a pooling runner: the larger of the fit's forward part (`fit_forward`: its sampler feature
    at 0), the forward as counted and the pooler's rows, plus what the encoder profile keeps, or the encoder's own
    forward where counted and larger (`EncoderProfile.peak`); assumed."""
    pooler = pooler_bytes(inputs, tokens)
    forward = max(fit_forward or 0, counted_forward)
    peak = encoder.peak(max(forward, pooler)) if encoder else max(forward, pooler)
    multimodal = inputs.model is not None and inputs.model.multimodal
    # no pooling start printed its peak: ± the forward itself at least (what the count may miss is bounded by it
    # only by assumption), the fit's held-out error where wider, 2 GiB for a multimodal model's encoder profile
    error = max(fit_error or 0, forward, MULTIMODAL_ERROR if multimodal else 0)
    kept = f"; plus {encoder.peak_words(max(forward, pooler))}" if encoder else ""
    return assumed_estimate(
        Term.ACTIVATION, label, peak, error,
        f"vLLM {inputs.version.label}'s pooling runner (pooling.py): no sampler; the forward at {tokens:,} tokens "
        f"({gib(forward)}: the V1 fit's forward part or its MLP transient as counted, the larger) or the "
        f"pooler's float32 rows beside its output ({gib(pooler)}), the larger{kept}; ± "
        f"{gib(error)} assumed (no pooling start printed its peak: the forward's own size, the fit's error or "
        "a multimodal profile's 2 GiB, the largest)",
    )  # fmt: skip
