"""What each vLLM model runner lacks of a launch, by release, in the engine's words (docs/engines/vllm.md §3), and the
runner a log says ran.

V2 (config/vllm.py `_get_v2_model_runner_unsupported_features`): refused when VLLM_USE_V2_MODEL_RUNNER=1 forces it
(`_validate_v2_model_runner`), fallen back from where the release would pick it ('Model Runner V2 does not yet support
%s; using the V1 model runner instead.', `use_v2_model_runner`). Here the features kvtop reads beyond the speculative
ones (spec_methods.keeps_v1_runner) and a model's inner state (runner_eras): stock torch.compile, sequence parallelism,
pipeline parallelism under external_launcher, a reasoning parser at v0.22.0, a heterogeneous-vocabulary draft at
v0.32.0-v0.33.x. The others (dual batch overlap, elastic EP, prompt embeds,
logprobs modes, custom logits processors, KV sharing fast prefill, EC transfer, prefill context parallelism) are flags
kvtop refuses anyway (flags_unmodelled.py).

V1 (`_get_v1_model_runner_unsupported_features`, first in v0.29.0): refused wherever V1 runs, forced by
VLLM_USE_V2_MODEL_RUNNER=0 or fallen back to ('Model Runner V1 does not support: …', `_validate_v1_model_runner`).
V1 also refuses Step5ForCausalLM / Step5ForConditionalGeneration at v0.33.0 (config/vllm.py:3145-3149), a model
kvtop does not plan (named not modelled: architectures/coverage.py:184-185), so no rule here reads it. Before v0.29.0
nothing refuses a dspark draft on V1: v0.25.0-v0.28.x build it an EagleProposer, which vLLM's own
comment says cannot run it — not modelled, named.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.deployment_flags import flag_json
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.compilation import compilation_level, stated_pass_config
from kvtop.domain.engines.vllm.spec_methods import keeps_v1_runner, stated_method
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import compute_capability
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.span import flag_text

# V2's features kvtop reads, each with the releases whose V2 lacks it (None: V2 runs it, or no V2 to pick)
STOCK_COMPILE_ON_V2: Eras[str | None] = Eras((
    Era("", None, "no V2 model runner picked before v0.22.0"),
    Era("0.22.0", "config/vllm.py:1989-1990 at v0.22.0 ... :3056-3057 at v0.31.0: CompilationMode.STOCK_TORCH_COMPILE",
        "first in v0.22.0"),
    Era("0.32.0", None, "v0.32.0 config/vllm.py:2914-2954 tests no compilation mode (v0.33.0 alike)"),
))  # fmt: skip
SEQUENCE_PARALLEL_ON_V2: Eras[str | None] = Eras((
    Era("", None, "no V2 model runner picked before v0.22.0"),
    Era("0.22.0", "config/vllm.py:1992-1996 at v0.22.0 ... :3059-3063 at v0.31.0: pass_config.enable_sp (or "
                  "fuse_gemm_comms, which sets it: :1133-1134 at v0.22.0, :1484-1485 at v0.29.0) at TP > 1, kept "
                  "by __post_init__ only where sp_min_token_num is stated or the threshold heuristic gives one "
                  "(:1141-1160 at v0.22.0, :1491-1512 at v0.29.0, :1875-1895 at v0.31.0)", "first in v0.22.0"),
    Era("0.32.0", None, "v0.32.0 config/vllm.py:2914-2954 has no sequence-parallel test (v0.33.0 alike)"),
))  # fmt: skip
# compilation/passes/fusion/sequence_parallelism.py get_sequence_parallelism_threshold (:40-43, :55-97 at v0.22.0;
# :40-43, :83-99 at v0.29.0): on CUDA a number only on sm90 and the sm10x family (SP_MIN_HIDDEN_SIZE keys 90 and 100,
# `is_device_capability_family(100)` collapsing sm100 / sm103), and only for hidden_size >= 8,192; None (SP off) on
# any other GPU or a smaller hidden size
SP_MIN_HIDDEN_SIZE = 8192
SP_THRESHOLD_SOURCE = ("compilation/passes/fusion/sequence_parallelism.py get_sequence_parallelism_threshold "
                       "(SP_MIN_HIDDEN_SIZE :40-43 at v0.22.0 and v0.29.0)")
EXTERNAL_PP_ON_V2: Eras[str | None] = Eras((
    Era("", None, "v0.22.0-v0.23.x: no external_launcher test (config/vllm.py:1977-2037 at v0.22.0)"),
    Era("0.24.0", "config/vllm.py:2020-2025 at v0.24.0 ... :3059-3064 at v0.33.0: distributed_executor_backend "
                  "'external_launcher' and pipeline_parallel_size > 1", "first in v0.24.0"),
    Era("0.34.0", None, "v0.34.0: V2 the only runner"),
))  # fmt: skip
REASONING_ON_V2: Eras[str | None] = Eras((
    Era("", None, "no V2 model runner picked before v0.22.0"),
    Era("0.22.0", "config/vllm.py:2014-2017 at v0.22.0: `reasoning_config is not None`, which --reasoning-parser sets "
                  "(engine/arg_utils.py:2435-2440 _set_default_reasoning_config_args)", "v0.22.0 only"),
    Era("0.23.0", None, "v0.23.0 config/vllm.py:2073-2077: a warning ('does not yet support the thinking_token_budget "
                        "request parameter'), V2 kept"),
))  # fmt: skip

HETEROGENEOUS_VOCAB_ON_V2: Eras[str | None] = Eras((
    Era("", None, "v0.31.0 config/vllm.py: no heterogeneous-vocabulary test in the V2 list"),
    Era("0.32.0", "config/vllm.py:2947-2948 at v0.32.0, :3081-3082 at v0.33.0: speculative-config "
                  "use_heterogeneous_vocab", "first in v0.32.0"),
    Era("0.34.0", None, "v0.34.0: V2 the only runner"),
))  # fmt: skip

# The ValueError `_validate_v2_model_runner` raises where VLLM_USE_V2_MODEL_RUNNER=1 forces V2 onto what it lacks
V2_REFUSAL_WORDS: Eras[str] = Eras((
    Era("", "VLLM_USE_V2_MODEL_RUNNER does not yet support: …", "config/vllm.py:2057-2067 at v0.22.0"),
    Era("0.23.0", "Model Runner V2 does not yet support: …", "config/vllm.py:2062-2071 at v0.23.0, :2724-2733 at "
                                                            "v0.29.0, :3324-3330 at v0.33.0"),
))  # fmt: skip

# V1's features kvtop reads (`_get_v1_model_runner_unsupported_features`)
V1_VALIDATED = "config/vllm.py _validate_v1_model_runner (v0.29.0 :1656, :2735-2740; v0.33.0 :2096, :3332-3337)"
DSPARK_ON_V1: Eras[str | None] = Eras((
    Era("", None, "no V1 refusal before v0.29.0"),
    Era("0.29.0", "config/vllm.py:2622-2624 at v0.29.0 ... :3111-3113 at v0.33.0: 'DSpark is implemented only by the "
                  "V2 GPU model runner'", "first in v0.29.0"),
    Era("0.34.0", None, "v0.34.0: no V1 runner"),
))  # fmt: skip
ADAPTIVE_ON_V1: Eras[str | None] = Eras((
    Era("", None, "no V1 refusal before v0.29.0"),
    Era("0.29.0", "config/vllm.py:2625-2626 at v0.29.0 ... :3116-3117 at v0.33.0: speculative-config "
                  "enable_adaptive_verification", "first in v0.29.0"),
    Era("0.34.0", None, "v0.34.0: no V1 runner"),
))  # fmt: skip
# SpeculativeConfig's own test, whatever the runner: 'Adaptive verification only supported with DSpark'
# (config/speculative.py:1141-1142 at v0.28.0, :1507-1508 at v0.29.0); no such field before v0.28.0 (its @config
# dataclass forbids extra fields: config/utils.py:69 at v0.27.0); from v0.30.0 other methods take it (:1564-1573)
ADAPTIVE_METHODS: Eras[str | None] = Eras((
    Era("", "no such field", "v0.27.0 config/speculative.py has no enable_adaptive_verification (config/utils.py:69 "
                             "ConfigDict(extra='forbid'))"),
    Era("0.28.0", "Adaptive verification only supported with DSpark",
        "config/speculative.py:1141-1142 at v0.28.0, :1507-1508 at v0.29.0"),
    Era("0.30.0", None, "v0.30.0 config/speculative.py:1564-1573: any method (use_local_argmax_reduction aside)"),
))  # fmt: skip
# a dflash draft whose config's architectures name a candidate head (the draft config kvtop read:
# LaunchSettings.draft_architectures): vLLM's words and the architectures it tests
DFLASH_HEADS_ON_V1: Eras[tuple[str, frozenset[str]] | None] = Eras((
    Era("", None, "no V1 refusal before v0.29.0"),
    Era("0.29.0", ("dflash2 drafts", frozenset({"DFlash2DraftModel"})),
        "config/vllm.py:2635-2636 at v0.29.0, :2904-2905 at v0.30.0 (`_is_dflash2_draft`, :679-688 at v0.29.0)"),
    Era("0.31.0", ("DFlash candidate-head drafts", frozenset({"DFlash2DraftModel", "LiLiCorrDraftModel"})),
        "config/vllm.py:3140-3141 at v0.31.0, :2990-2991 at v0.32.0, :3136-3137 at v0.33.0 "
        "(`_is_dflash_candidate_draft`, :763-776 at v0.31.0)"),
    Era("0.34.0", None, "v0.34.0: no V1 runner"),
))  # fmt: skip
PARSE_MTP_ON_V1: Eras[str | None] = Eras((
    Era("", None, "no Parse MTP test before v0.33.0"),
    Era("0.33.0", "config/vllm.py:3121-3127 at v0.33.0: a ParseAuxMTPModel draft", "v0.33.0"),
    Era("0.34.0", None, "v0.34.0: no V1 runner"),
))  # fmt: skip
# v0.28.0 forces V2 for a DFlash2 draft when the variable is unset, as for dspark (config/vllm.py:639-643 at v0.28.0:
# 'On V1 the same checkpoint drafts through DFlashProposer … degrades to DFlash1 silently'); from v0.29.0 V2 is the
# default and V1 refuses it (DFLASH_HEADS_ON_V1)
DFLASH2_FORCES_V2: Eras[bool] = Eras((
    Era("", False, "no DFlash2 test before v0.28.0 (v0.27.0 config/vllm.py use_v2_model_runner)"),
    Era("0.28.0", True, "config/vllm.py:639-643 at v0.28.0 (`_is_dflash2_draft`, :668-677)"),
    Era("0.29.0", False, "v0.29.0 config/vllm.py:645-678: no forcing test (V2 the default)"),
))  # fmt: skip


def forces_v2(version: ResolvedVersion, settings: LaunchSettings | None) -> bool:
    """Whether the launch's draft makes the release run V2 before its model test (VLLM_USE_V2_MODEL_RUNNER unset): a
    dspark draft at v0.25.0-v0.28.x (runner_eras, :524-532 at v0.25.0), a DFlash2 draft at v0.28.0."""
    method = stated_method(settings) if settings is not None else None
    if method == "dspark" or settings is None:
        return method == "dspark"
    return method == "dflash" and DFLASH2_FORCES_V2.at(version) and "DFlash2DraftModel" in settings.draft_architectures


# v0.25.0-v0.28.x: V2 forced for dspark when the variable is unset (config/vllm.py:524-532 at v0.25.0, :624-632 at
# v0.28.0, "V1 (which can't run dspark)"); VLLM_USE_V2_MODEL_RUNNER=0 still builds V1, whose gpu_model_runner.py
# :623-624 (v0.25.0) gives `use_eagle()` methods, dspark among them (config/speculative.py:1242), an EagleProposer
DSPARK_V1_UNMODELLED: Eras[bool] = Eras((
    Era("", False, "no dspark method before v0.25.0 (spec_methods.DETECTION_ERAS)"),
    Era("0.25.0", True, "v0.25.0 config/vllm.py:524-527, v1/worker/gpu_model_runner.py:623-624; v0.28.0 "
                        "config/vllm.py:624-632: nothing refuses VLLM_USE_V2_MODEL_RUNNER=0 with dspark"),
    Era("0.29.0", False, "refused from v0.29.0 (DSPARK_ON_V1)"),
))  # fmt: skip


def _adaptive(settings: LaunchSettings) -> bool:
    return flag_json(settings, "speculative-config").get("enable_adaptive_verification") is True


def check_adaptive(version: ResolvedVersion, settings: LaunchSettings) -> None:
    """Refuse enable_adaptive_verification where the release's SpeculativeConfig refuses it (`ADAPTIVE_METHODS`), in
    vLLM's words."""
    refusal = ADAPTIVE_METHODS.era(version)
    if refusal.value is None or not _adaptive(settings) or stated_method(settings) == "dspark" and refusal.value != "no such field":
        return
    said = (f"'{refusal.value}'" if refusal.value != "no such field" else
            "no field enable_adaptive_verification (first in v0.28.0)")
    raise InputError(f"vLLM {version.label} refuses speculative-config enable_adaptive_verification: {said} "
                     f"({refusal.source})", field="--speculative-config")  # fmt: skip


def _sequence_parallel(model: ModelSpec, settings: LaunchSettings, passes: Mapping[str, object]) -> bool:
    """Whether vLLM keeps the launch's sequence parallelism after __post_init__ (`SEQUENCE_PARALLEL_ON_V2`): at TP > 1
    where sp_min_token_num is stated; off for a hidden size below 8,192 (`SP_MIN_HIDDEN_SIZE`: the heuristic gives
    None on every GPU); at 8,192 or more the GPU decides (`settings.gpu_name`): sm90 and sm10x keep it, any other
    CUDA GPU turns it off; refused, by name, where kvtop knows no GPU's capability."""
    if settings.tp <= 1 or not (passes.get("enable_sp") is True or passes.get("fuse_gemm_comms") is True):
        return False
    if passes.get("sp_min_token_num") is not None:
        return True
    if model.hidden_size < SP_MIN_HIDDEN_SIZE:
        return False
    capability = compute_capability(settings.gpu_name)
    if capability is not None:
        return capability == (9, 0) or capability[0] == 10
    raise UnsupportedModelError(f"sequence parallelism at hidden size {model.hidden_size:,}: vLLM keeps it (and the V1 "
                                "model runner) on sm90 / sm10x GPUs only and turns it off elsewhere "
                                f"({SP_THRESHOLD_SOURCE}); kvtop knows no GPU's compute capability here: name the "
                                "GPU (--gpu) or state pass_config.sp_min_token_num to keep it",
                                field="--compilation-config")  # fmt: skip


def v2_lacks(version: ResolvedVersion, model: ModelSpec, settings: LaunchSettings) -> str | None:
    """The features of the launch the release's V2 runner lacks beyond the speculative ones and a model's state, each
    with its source ('stock torch.compile (config/vllm.py:…)'); None where none. A stated mode counts as NONE under
    --enforce-eager (config/vllm.py:1032-1038 at v0.22.0, :1370-1376 at v0.29.0, :1694-1696 at v0.31.0), set before
    the runner is validated."""
    found: list[str] = []
    stock = STOCK_COMPILE_ON_V2.at(version)
    if stock is not None and not settings.enforce_eager and compilation_level(settings.flags, version) == 1:
        found.append(f"stock torch.compile ({stock})")
    parallel = SEQUENCE_PARALLEL_ON_V2.at(version)
    if parallel is not None and _sequence_parallel(model, settings, stated_pass_config(settings.flags, version)):
        found.append(f"sequence parallelism ({parallel})")
    external = EXTERNAL_PP_ON_V2.at(version)
    backend = (flag_text(settings, "distributed-executor-backend") or "").lower()
    if external is not None and settings.pp > 1 and backend == "external_launcher":
        found.append(f"pipeline parallelism with external_launcher ({external})")
    reasoning = REASONING_ON_V2.at(version)
    if reasoning is not None and flag_text(settings, "reasoning-parser"):
        found.append(f"reasoning budget enforcement ({reasoning})")
    vocab = HETEROGENEOUS_VOCAB_ON_V2.at(version)
    if vocab is not None and flag_json(settings, "speculative-config").get("use_heterogeneous_vocab") is True:
        found.append(f"heterogeneous-vocabulary draft models ({vocab})")
    return ", ".join(found) or None


def fallback_reason(version: ResolvedVersion, model: ModelSpec, settings: LaunchSettings) -> str | None:
    """What of the launch keeps the V1 runner where the release would run V2, with sources: its speculative decoding
    (spec_methods.keeps_v1_runner) or another feature V2 lacks (`v2_lacks`); None where none. The one answer the
    runner's pick, a forced V2's refusal and the plan's fallback note read."""
    return keeps_v1_runner(stated_method(settings), settings, version) or v2_lacks(version, model, settings)


def v1_lacks(version: ResolvedVersion, model: ModelSpec, settings: LaunchSettings) -> str | None:
    """The features of the launch the release's V1 runner refuses, in vLLM's words with their source; None where
    none (or no V1 refusal at the release). `model`: the target, which no rule reads since Step5 is not planned."""
    found: list[str] = []
    method = stated_method(settings)
    dspark = DSPARK_ON_V1.at(version)
    if dspark is not None and method == "dspark":
        found.append(f"dspark speculative decoding ({dspark})")
    adaptive = ADAPTIVE_ON_V1.at(version)
    if adaptive is not None and _adaptive(settings):
        found.append(f"adaptive draft verification ({adaptive})")
    heads = DFLASH_HEADS_ON_V1.era(version)
    if heads.value is not None and method == "dflash" and heads.value[1] & set(settings.draft_architectures):
        found.append(f"{heads.value[0]} ({heads.source})")
    parse = PARSE_MTP_ON_V1.at(version)
    if parse is not None and "ParseAuxMTPModel" in settings.draft_architectures:
        found.append(f"Parse 3.5 MTP ({parse})")
    return ", ".join(found) or None


def check_v1(version: ResolvedVersion, model: ModelSpec, settings: LaunchSettings, how: str) -> None:
    """Refuse a launch the V1 runner cannot run where the release runs it on V1 (`how`: why V1 runs): vLLM's
    ValueError where it refuses (`v1_lacks`), an UnsupportedModelError where it runs something kvtop does not model
    (a dspark draft on V1 at v0.25.0-v0.28.x)."""
    lacks = v1_lacks(version, model, settings)
    if lacks is not None:
        raise InputError(f"vLLM {version.label} refuses this launch on the V1 model runner ({how}): 'Model Runner V1 "
                         f"does not support: …' — {lacks}; {V1_VALIDATED}", field=_field(settings))  # fmt: skip
    unmodelled = DSPARK_V1_UNMODELLED.era(version)
    if unmodelled.value and stated_method(settings) == "dspark":
        raise UnsupportedModelError(f"vLLM {version.label} runs the dspark draft on the V1 model runner ({how}) through "
                                    f"its EagleProposer, which vLLM says cannot run dspark ({unmodelled.source}); kvtop "
                                    "does not model it: unset VLLM_USE_V2_MODEL_RUNNER", field=_field(settings))  # fmt: skip


def _field(settings: LaunchSettings) -> str:
    """The input to change: the variable where the launch forces V1, the speculative config where its draft keeps
    V1, else the model (Step5)."""
    if "VLLM_USE_V2_MODEL_RUNNER" in settings.flags:
        return "VLLM_USE_V2_MODEL_RUNNER"
    return "--speculative-config" if "speculative-config" in settings.flags else "--model"


def logged_runner(settings: LaunchSettings | None) -> bool | None:
    """Whether the log said V2 ran (True), or V1 (False, the fallback warning): `LaunchSettings.logged_runner`, a
    measured input explain sets from the log alone (log_facts.model_runner); None where it said neither."""
    said = settings.logged_runner if settings is not None else None
    return None if said is None else said == "v2"
