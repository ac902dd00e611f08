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

from collections.abc import Mapping

from kvtop.domain.calibration.features import assumed_estimate
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.encoder_profile import EncoderProfile
from kvtop.domain.engines.vllm.flags_table import FlagSpan
from kvtop.domain.engines.vllm.profile_run import engine_era
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import GIB

RUNNER_FLAG = "--runner"
CONVERT_FLAG = "--convert"
TASK_FLAG = "--task"
# the releases read that have each flag (flags_unmodelled.py's rows until session 55); a release without one refuses
# it (flags.RELEASE_SPANS)
SPANS: Mapping[str, FlagSpan] = {
    RUNNER_FLAG: FlagSpan("0.10.1", None, "engine/arg_utils.py:970 (v0.33.0)"),
    CONVERT_FLAG: FlagSpan("0.10.1", None, "engine/arg_utils.py:971 (v0.33.0)"),
    TASK_FLAG: FlagSpan("0.6.4", "0.12.0", "engine/arg_utils.py:619 (v0.12.0)"),
}
FLAGS = frozenset(SPANS)
# their values (config/model.py:61-77 at v0.11.0: RunnerOption, ConvertOption, TaskOption, _RUNNER_TASKS)
RUNNERS = ("auto", "generate", "pooling", "draft")
CONVERTS = ("auto", "none", "embed", "classify", "reward")
POOLING_TASKS = ("embedding", "embed", "classify", "score", "reward")
GENERATE_TASKS = ("auto", "generate")
# TaskOption's other values at v0.11.0 (config/model.py:64-65) and v0.12.0 (:78-88), and what ModelConfig makes of
# them (v0.11.0 :473-520, v0.12.0 :537-590): "transcription" is a generate task (_RUNNER_TASKS, v0.11.0 :74-78), the
# generating runner; "draft" is in neither list, so the runner and convert stay "auto" (the `# task == "auto"` arm)
AS_GENERATE, AS_AUTO = "transcription", "draft"
TASK_READ_ERAS: Eras[bool] = Eras((
    Era("", False, "--task transcription / draft not read before v0.11.0"),
    Era("0.11.0", True, "v0.11.0 config/model.py:64-78, 473-520; v0.12.0 :78-88, 537-590"),
    Era("0.13.0", False, "--task removed (SPANS)"),
))  # fmt: skip
# the releases whose pooling runner kvtop plans: its code read there (not when the flags exist: SPANS says that)
POOLING_ERAS: Eras[bool] = Eras((
    Era("", False, "not read before v0.10.2"),
    Era("0.10.2", True, "v0.11.0's code at v0.10.2: v1/worker/gpu_model_runner.py:2914-2979 (_dummy_pooler_run, its "
                        "output a PoolerOutput), :2981-3042 (profile_run's pooler branch), model_executor/layers/"
                        "pooler.py:69-85, 273-317, models/adapters.py:170-233, config/__init__.py:120-136, 926-948, "
                        "2772-2794, engine/arg_utils.py:1615-1642 (the same functions as v0.11.0's)"),
    Era("0.11.0", True, "v0.11.0 v1/worker/gpu_model_runner.py:3257-3396 (profile_run → _dummy_pooler_run), "
                        "model_executor/models/adapters.py:170-192, engine/arg_utils.py:1547-1577"),
    Era("0.11.1", False, "v0.11.1 – v0.12.0: `encode` split into token_embed / token_classify, the ST projector in "
                         "token_embed's head (model_executor/layers/pooler.py:345-351, 623-643 at v0.11.1): not read"),
))  # fmt: skip
# `--runner auto` at v0.11.0 (module docstring): the registered classes whose model class is a pooling model (its
# `is_pooling_model`: bert.py, bert_with_rope.py:630, gpt2.py:332, gritlm.py:237, internlm2.py:406, jamba.py:561,
# jina_vl.py:79, modernbert.py:301, qwen2_rm.py:29, roberta.py:171, terratorch.py:209)
AUTO_POOLING_CLASSES = frozenset({
    "BertForSequenceClassification", "BertForTokenClassification", "BertModel", "GPT2ForSequenceClassification",
    "GritLM", "GteNewForSequenceClassification", "InternLM2ForRewardModel", "JambaForSequenceClassification",
    "JinaVLForRanking", "ModernBertForSequenceClassification", "PrithviGeoSpatialMAE", "Qwen2ForProcessRewardModel",
    "Qwen2ForRewardModel", "RobertaForMaskedLM", "RobertaForSequenceClassification", "RobertaModel", "Terratorch",
    "XLMRobertaForSequenceClassification", "XLMRobertaModel",
})  # fmt: skip
# registered names with a pooling suffix whose class generates (it has compute_logits): registry.py:45-199; BartModel
# at v0.10.2 (registry.py:149, an encoder-decoder; a dropped class from v0.11.0, architectures.py)
AUTO_GENERATING_MODELS = frozenset({
    "AquilaModel", "ChatGLMModel", "Gemma2Model", "LlamaModel", "MistralModel", "Qwen2Model", "Qwen2_5OmniModel",
    "UltravoxModel", "MiDashengLMModel", "BartModel",
})  # fmt: skip
# `_SUFFIX_TO_DEFAULTS` in order (config/model.py:1533-1549 at v0.11.0): True where the runner is pooling
SUFFIX_DEFAULTS: tuple[tuple[str, bool], ...] = (
    ("ForCausalLM", False), ("ForConditionalGeneration", False), ("ChatModel", False), ("LMHeadModel", False),
    ("ForTextEncoding", True), ("EmbeddingModel", True), ("ForSequenceClassification", True),
    ("ForAudioClassification", True), ("ForImageClassification", True), ("ForVideoClassification", True),
    ("ClassificationModel", True), ("ForRewardModeling", True), ("RewardModel", True), ("Model", True),
)  # fmt: skip
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


# each flag's argparse choices (config/model.py:61-77 at v0.11.0)
CHOICES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (RUNNER_FLAG, RUNNERS), (CONVERT_FLAG, CONVERTS), (TASK_FLAG, (*GENERATE_TASKS, AS_GENERATE, AS_AUTO, *POOLING_TASKS)),
)  # fmt: skip


def refuse_values(flags: Mapping[str, object]) -> None:
    """A runner, convert or task value vLLM does not take (argparse's choices, which need no release: every launch
    passes here, `refuse_unmodelled`, not only one giving --engine-version)."""
    for flag, choices in CHOICES:
        value = flags.get(flag.lstrip("-"))
        if value is not None and str(value) not in choices:
            raise InputError(f"{str(value)[:40]!r}: one of {', '.join(choices)} (kvtop plans these)", field=flag)


def auto_pooling(architecture: str, version: ResolvedVersion) -> bool:
    """Whether `--runner auto` resolves this class to the pooling runner, the checkpoint's sentence-transformers files
    aside (not read): v0.11.0's rule (module docstring). At a release whose registry kvtop did not read for it, only a
    class pooling at v0.11.0 or a pooling suffix but the bare `*Model` (which later releases also register generating
    classes under, MossAudioModel at v0.33.0): such a launch is then refused by name (`refuse_unmodelled`)."""
    if architecture in AUTO_POOLING_CLASSES or architecture in AUTO_GENERATING_MODELS:
        return architecture in AUTO_POOLING_CLASSES
    suffix, pooling = next(((s, p) for s, p in SUFFIX_DEFAULTS if architecture.endswith(s)), ("", False))
    return pooling and (suffix != "Model" or POOLING_ERAS.at(version))


def pooling_runner(flags: Mapping[str, object], model: ModelSpec | None = None,
                   version: ResolvedVersion | None = None) -> bool:  # fmt: skip
    """Whether the launch runs vLLM's pooling runner: `--runner pooling`, a pooling `--task`, or the default runner
    (`--runner auto`, or no runner or task) on a class `auto_pooling` resolves to it at `version`."""
    runner, task = flags.get(RUNNER_FLAG.lstrip("-")), flags.get(TASK_FLAG.lstrip("-"))
    if runner == "pooling" or str(task) in POOLING_TASKS:
        return True
    auto = runner in (None, "auto") and task in (None, "auto", AS_AUTO)  # --task draft: runner auto (AS_AUTO)
    return auto and model is not None and version is not None and auto_pooling(model.architecture, version)


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
        f"({forward / GIB:.2f} GiB: the V1 fit's forward part or its MLP transient as counted, the larger) or the "
        f"pooler's float32 rows beside its output ({pooler / GIB:.2f} GiB), the larger{kept}; ± "
        f"{error / GIB:.2f} GiB assumed (no pooling start printed its peak: the forward's own size, the fit's error or "
        "a multimodal profile's 2 GiB, the largest)",
    )  # fmt: skip
