"""Which runner a vLLM launch runs: the pooling runner or the generating one (`--runner`, `--convert`, `--task`, and
what `--runner auto` makes of a model class), by release. Apart from pooling.py's memory so that the batching rules
(async scheduling turns off for a pooling model) can ask it without importing the profile run."""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.flags_table import FlagSpan
from kvtop.domain.errors import InputError
from kvtop.domain.model import ModelSpec
from kvtop.domain.redact import quoted

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
            raise InputError(f"{quoted(value)}: one of {', '.join(choices)} (kvtop plans these)", field=flag)


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
