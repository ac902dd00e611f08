"""Which model runner `vllm serve` runs a generating model on (V1 or V2, VllmConfig.use_v2_model_runner), by
release and model, and where the launch line sets VLLM_USE_V2_MODEL_RUNNER, by that (`RUNNER_ENV_ERAS`): its eras
with the first release each holds for and its source (docs/engines/vllm.md §3).
"""

from __future__ import annotations

from typing import Literal

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.hybrid import mamba_prefix_caching
from kvtop.domain.engines.vllm.log_facts import V2_LINE
from kvtop.domain.engines.vllm.runner_refusals import (
    V2_REFUSAL_WORDS,
    check_adaptive,
    check_v1,
    fallback_reason,
    forces_v2,
    logged_runner,
)
from kvtop.domain.engines.vllm.spec_methods import stated_method
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.quant_spec import NO_QUANT
from kvtop.domain.redact import quoted

# The model runner `vllm serve` picks (VllmConfig.use_v2_model_runner, §3): at pp > 1 with async scheduling
# the V1 runner turns async scheduling off (pp batches in flight), the V2 runner keeps it (pp + 1).
ModelRunner = Literal["v1", "v2_listed", "v2_dense", "v2"]
MODEL_RUNNER_ERAS: Eras[ModelRunner] = Eras((
    Era("", "v1", "v0.13.0-v0.21.0: VLLM_USE_V2_MODEL_RUNNER defaults to 0 (the V1 runner); v0.21.0's "
        "config/vllm.py has no DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES"),
    Era(
        "0.22.0",
        "v2_listed",
        "first in v0.22.0: config/vllm.py:493-516 VllmConfig.use_v2_model_runner (VLLM_USE_V2_MODEL_RUNNER unset) "
        "→ :518-531 _is_default_v2_model_runner_model: a generating model of a listed class "
        "(DEFAULT_V2_ARCHITECTURES_ERAS), and at v0.22.x-v0.23.0 neither MoE nor quantized (LISTED_V2_DENSE_ONLY_ERAS); "
        "a hybrid (has_inner_state) is an unsupported feature → V1 (:1983). v0.22.1 the same file",
    ),
    Era(
        "0.25.0",
        "v2_dense",
        "PR #44443 ('Enable by default for all dense models'), first in v0.25.0: config/vllm.py:557-574 "
        "_is_default_v2_model_runner_model: V1 for a pooling runner, a hybrid or an attention-free model, else V2 "
        "for a listed class or `not is_moe` (DEFAULT_V2_ARCHITECTURES_ERAS, `default_v2_model`)",
    ),
    Era(
        "0.29.0",
        "v2",
        "first in v0.29.0: config/vllm.py:645 VllmConfig.use_v2_model_runner drops the architecture test — V2 "
        "wherever Triton imports and no unsupported feature is asked for (ROCm keeps a V1 list); v0.28.0 "
        ":691-712 still the v2_dense era's test. Holds at v0.34.0, which removed the V1 model runner: "
        "v1/worker/gpu_worker.py:579-587 _make_model_runner always builds v1/worker/gpu/model_runner.py's "
        "GPUModelRunner (v1/worker/gpu_model_runner.py gone), platforms/interface.py:1481-1490 refuses "
        "VLLM_USE_V2_MODEL_RUNNER other than 1, config/vllm.py:3123-3137 tests no speculative method "
        "(spec_methods.V1_ONLY_METHOD_ERAS empty from v0.34.0)",
    ),
))
# DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES (config/vllm.py, read in each wheel): in the v2_listed era the only classes V2
# runs; in the v2_dense era the MoE classes it runs on V2 all the same (v0.25.0 :68-74, v0.25.1 the same; v0.26.0 :68
# adds Inkling and LongcatFlashNgram; v0.27.0 :69 KimiK3; v0.28.0 :69 DeepseekV4).
DEFAULT_V2_ARCHITECTURES_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset({"Qwen3ForCausalLM"}), "v0.22.0 config/vllm.py:69 (v0.22.1 the same)"),
    Era("0.23.0", frozenset({"LlamaForCausalLM", "MistralForCausalLM", "Qwen3ForCausalLM"}),
        "v0.23.0 config/vllm.py:69-75"),
    Era("0.24.0", frozenset({
        "DeepseekV2ForCausalLM", "GraniteMoeForCausalLM", "LlamaForCausalLM", "MistralForCausalLM",
        "Qwen2MoeForCausalLM", "Qwen3ForCausalLM"}), "v0.24.0 config/vllm.py:68-77"),
    Era("0.25.0", frozenset({"DeepseekV2ForCausalLM", "Qwen2MoeForCausalLM", "GraniteMoeForCausalLM"}),
        "v0.25.0 config/vllm.py:68-74 (dense classes dropped: every dense model runs V2)"),
    Era("0.26.0", frozenset({
        "DeepseekV2ForCausalLM", "GraniteMoeForCausalLM", "InklingForCausalLM", "InklingForConditionalGeneration",
        "LongcatFlashNgramForCausalLM", "Qwen2MoeForCausalLM"}), "v0.26.0 config/vllm.py:68"),
    Era("0.27.0", frozenset({
        "DeepseekV2ForCausalLM", "GraniteMoeForCausalLM", "InklingForCausalLM", "InklingForConditionalGeneration",
        "KimiK3ForConditionalGeneration", "LongcatFlashNgramForCausalLM", "Qwen2MoeForCausalLM"}),
        "v0.27.0 config/vllm.py:69"),
    Era("0.28.0", frozenset({
        "DeepseekV2ForCausalLM", "DeepseekV4ForCausalLM", "GraniteMoeForCausalLM", "InklingForCausalLM",
        "InklingForConditionalGeneration", "KimiK3ForConditionalGeneration", "LongcatFlashNgramForCausalLM",
        "Qwen2MoeForCausalLM"}), "v0.28.0 config/vllm.py:69"),
))  # fmt: skip
# In the v2_listed era a listed class runs V2 only without experts and without a checkpoint quantization_config
# (ModelConfig.is_moe / is_quantized: `hf_config.quantization_config`, not `--quantization`), until v0.24.0.
LISTED_V2_DENSE_ONLY_ERAS: Eras[bool] = Eras((
    Era("", True, "v0.22.0 config/vllm.py:531, v0.23.0 :558 `return not model_config.is_moe and not "
        "model_config.is_quantized`"),
    Era("0.24.0", False, "v0.24.0 config/vllm.py:559-561: any listed class (MoE and quantized too)"),
))  # fmt: skip
# A hybrid (Mamba / linear-attention layers beside attention: vLLM's `is_hybrid`) of a listed class runs V2: before,
# any hybrid ran V1 (v0.26.0 :613 `if is_hybrid: return False`); v0.27.0 :651 `is_hybrid and not
# is_default_v2_architecture` (v0.28.0 :705 the same). An attention-free model runs V1 throughout (v0.25.0 :568).
LISTED_HYBRID_V2_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.25.0-v0.26.0 config/vllm.py _is_default_v2_model_runner_model: a hybrid → V1"),
    Era("0.27.0", True, "v0.27.0 config/vllm.py:651-654: a hybrid of a listed class → V2"),
))

model_runner = MODEL_RUNNER_ERAS.at

# VLLM_USE_V2_MODEL_RUNNER on the launch line (`NAME=VALUE vllm serve …`, `docker run -e NAME=VALUE …`; flags.py
# env_read), as each release reads it (read in the wheels' envs.py, config/vllm.py, v1/worker/gpu_worker.py)
RUNNER_ENV = "VLLM_USE_V2_MODEL_RUNNER"
RunnerEnv = Literal["absent", "opt_in", "override", "only_1"]
RUNNER_ENV_ERAS: Eras[RunnerEnv] = Eras((
    Era("", "absent", "no such variable: v0.11.2's envs.py (and v0.11.1's) has none"),
    Era("0.12.0", "opt_in",
        "first in v0.12.0: envs.py:1550-1552 `bool(int(os.getenv(…, '0')))` (v0.21.0 :1711-1713): any int but 0 builds "
        "the experimental v1/worker/gpu/model_runner.py (gpu_worker.py:104, :252-262 at v0.12.0), which kvtop does not "
        "model before v0.22.0; 0 the V1 runner, the default"),
    Era("0.22.0", "override",
        "v0.22.0 envs.py:1897-1899 `maybe_convert_bool(os.getenv(…, None))` (`bool(int(value))`, unset None; v0.24.0 "
        ":1830-1832, v0.29.0 :2035-2037): config/vllm.py:493-496 `use_v2_model_runner` returns it before the release's "
        "pick (v0.25.0 :519-522, v0.29.0 :645-648, v0.33.0 :748-750 after HiSparse and watermarking): 0 the V1 runner "
        "for any model, 1 V2, which `_validate_v2_model_runner` refuses for a feature V2 lacks (v0.22.0 :2057-2067: "
        "'VLLM_USE_V2_MODEL_RUNNER does not yet support: …'; v0.25.0 :2137-2146)"),
    Era("0.34.0", "only_1",
        "v0.34.0 platforms/interface.py:1481-1490 `validate_environ` (engine/arg_utils.py:2294): any value but '1' "
        "raises 'is no longer supported: Model Runner V1 has been removed'; '1' is redundant (V2 the only runner)"),
))  # fmt: skip
# Which models V2 refuses when forced (`_get_v2_model_runner_unsupported_features`, a model with inner state: a hybrid
# or attention-free one): any (v0.22.0), one with mamba_cache_mode 'align' (v0.23.0-v0.24.x), none from v0.25.0
ForcedStateRefused = Literal["any", "align", "none"]
FORCED_STATE_REFUSED_ERAS: Eras[ForcedStateRefused] = Eras((
    Era("", "any", "v0.22.0 config/vllm.py:1983-1984 `has_inner_state`: 'hybrid/mamba models'"),
    Era("0.23.0", "align", "v0.23.0 config/vllm.py:1988-1993, v0.24.0 :2000-2005: 'hybrid/mamba models with align "
                           "cache mode' (align: prefix caching on, hybrid.py)"),
    Era("0.25.0", "none", "v0.25.0 config/vllm.py:2042-2135 tests no inner state (v0.28.0, v0.33.0 alike)"),
))  # fmt: skip


def runner_env(settings: LaunchSettings | None) -> str | None:
    """The launch's VLLM_USE_V2_MODEL_RUNNER as written on its line; None where unset."""
    value = settings.flags.get(RUNNER_ENV) if settings is not None else None
    return None if value is None else str(value)


def _env_int(value: str, version: ResolvedVersion) -> int:
    """The value as envs.py reads it (`int(value)`); an InputError where int() refuses it (vLLM's start fails)."""
    try:
        return int(value)
    except ValueError:
        raise InputError(f"{RUNNER_ENV}={quoted(value)}: vLLM {version.label} reads it as bool(int(value)) (envs.py), which "
                         "refuses it at start", field=RUNNER_ENV) from None  # fmt: skip


def _refused_v2(version: ResolvedVersion, model: ModelSpec, settings: LaunchSettings) -> str | None:
    """What of the launch the release's V2 runner refuses when forced (`_validate_v2_model_runner`): a model with inner
    state (FORCED_STATE_REFUSED_ERAS) or speculative decoding V2 does not run (`keeps_v1_runner`); None where none."""
    inner = model.state is not None or model.attention_free
    state = FORCED_STATE_REFUSED_ERAS.era(version)
    if inner and (state.value == "any" or state.value == "align" and mamba_prefix_caching(model, settings, version)):
        return f"a model with Mamba / linear-attention state{' and prefix caching' * (state.value == 'align')} ({state.source})"
    return fallback_reason(version, model, settings)


def forced_runner(version: ResolvedVersion, model: ModelSpec, settings: LaunchSettings | None) -> bool | None:
    """Whether the launch's VLLM_USE_V2_MODEL_RUNNER makes vLLM run V2 (True) or V1 (False) whatever its own pick
    (RUNNER_ENV_ERAS); None where it decides nothing (unset, a release without it, v0.34.0's redundant '1'). Refused
    where the release refuses the value or its launch (an InputError), or runs a runner kvtop does not model (v0.12.0-
    v0.21.x's experimental V2)."""
    value = runner_env(settings)
    era = RUNNER_ENV_ERAS.era(version)
    if value is None or settings is None or era.value == "absent":
        return None
    if era.value == "only_1":
        if value != "1":  # os.environ's text, compared as text
            raise InputError(f"vLLM {version.label} refuses {RUNNER_ENV}={value}: Model Runner V1 has been removed "
                             "(platforms/interface.py:1481-1490 at v0.34.0); unset it", field=RUNNER_ENV)  # fmt: skip
        return None
    v2 = _env_int(value, version) != 0
    if not v2:
        check_v1(version, model, settings, f"{RUNNER_ENV}={value}")
        return False
    if era.value == "opt_in":
        raise UnsupportedModelError(f"vLLM {version.label} under {RUNNER_ENV}={value} runs its experimental V2 model "
                                    f"runner, which kvtop does not model ({era.source}); unset it to plan the V1 "
                                    "runner, or plan v0.22.0 or later", field=RUNNER_ENV)  # fmt: skip
    refused = _refused_v2(version, model, settings)
    if refused is not None:
        words = V2_REFUSAL_WORDS.era(version)
        raise InputError(f"vLLM {version.label} refuses {RUNNER_ENV}={value} with {refused}: its V2 model runner "
                         f"'does not yet support' it ('{words.value}', {words.source} _validate_v2_model_runner)",
                         field=RUNNER_ENV)  # fmt: skip
    return True


def runner_env_note(version: ResolvedVersion, model: ModelSpec, settings: LaunchSettings) -> str | None:
    """The plan's words where the launch line sets VLLM_USE_V2_MODEL_RUNNER: the runner it makes vLLM run, or that
    the release does not read it or runs V2 anyway; None where unset."""
    value = runner_env(settings)
    logged = logged_runner_note(version, model, settings)
    if logged is not None:
        return logged
    if value is None:
        return _fallback_note(version, model, settings)
    era = RUNNER_ENV_ERAS.era(version)
    if era.value == "absent":
        return f"{RUNNER_ENV}={value} on the launch line: vLLM {version.label} does not read it (first in v0.12.0)"
    forced = forced_runner(version, model, settings)
    if forced is None:
        return (f"{RUNNER_ENV}={value} on the launch line: redundant at vLLM {version.label}, V2 its only runner "
                "(platforms/interface.py:1481-1490 at v0.34.0)")
    runner = "V2" if forced else "V1"
    own = "V2" if _release_runs_v2(version, model, settings) else "V1"
    return (f"the {runner} model runner, from the launch's environment: {RUNNER_ENV}={value} on the launch line, which "
            f"vLLM {version.label} takes over its own pick for this model ({own}): config/vllm.py use_v2_model_runner "
            "returns the variable first (:493-496 at v0.22.0, :646 at v0.29.0, :748 at v0.33.0)")


def logged_runner_note(version: ResolvedVersion, model: ModelSpec, settings: LaunchSettings) -> str | None:
    """The words for a runner the log said ran (runner_refusals.logged_runner), beside the release's own pick for
    the launch; None where the log said none."""
    logged = logged_runner(settings)
    if logged is None:
        return None
    said = V2_LINE if logged else "…; using the V1 model runner instead."
    try:
        own = "V2" if _release_runs_v2(version, model, settings.model_copy(update={"logged_runner": None})) else "V1"
    except UnsupportedModelError as err:  # kvtop cannot say the release's pick: not vLLM's refusal
        own = f"not modelled: {err.detail}"
    except InputError:
        own = "refused"  # the release refuses the launch it did start: the log wins
    head = (f"the {'V2' if logged else 'V1'} model runner, measured: the log says '{said}' (v1/worker/gpu_worker.py, "
            f"config/vllm.py use_v2_model_runner); kvtop charges it (its graphs and compile)")
    if own.startswith("not modelled"):
        return f"{head}; vLLM {version.label}'s own pick for this launch is {own}"
    return head + (f", as vLLM {version.label} picks for this launch" if own == ("V2" if logged else "V1") else
                   f", not vLLM {version.label}'s own pick for this launch ({own})")


# vLLM's fallback warning (config/vllm.py use_v2_model_runner), %s the features: v0.22.x :507-512, from v0.23.0
# :535-539 (v0.29.0 :717 the same words)
FALLBACK_WORDS: Eras[str] = Eras((
    Era("", "Model runner v2 does not yet support %s; using the v1 model runner instead.",
        "config/vllm.py:507-512 at v0.22.0"),
    Era("0.23.0", "Model Runner V2 does not yet support %s; using the V1 model runner instead.",
        "config/vllm.py:535-539 at v0.23.0"),
))  # fmt: skip


def _fallback_note(version: ResolvedVersion, model: ModelSpec, settings: LaunchSettings) -> str | None:
    """The plan's words where the release would run V2 but the launch asks for what V2 lacks (`fallback_reason`, the
    answer the pick reads): vLLM's warning and the V1 runner it falls back to; None otherwise."""
    if model_runner(version) == "v1" or not _release_runs_v2(version, model, settings.model_copy(update={"flags": {}})):
        return None  # the release's class test keeps V1 before any launch feature is asked
    lacks = fallback_reason(version, model, settings)
    if lacks is None:
        return None
    words = FALLBACK_WORDS.era(version)
    return (f"the V1 model runner: vLLM {version.label} would run V2 but logs '{words.value}' ({words.source}) with %s: "
            f"{lacks}")


def _listed_runs_v2(version: ResolvedVersion, model: ModelSpec) -> bool:
    """The v2_listed era (v0.22.0-v0.24.x): V2 only for a listed class, without experts or a checkpoint quantization
    at v0.22.x-v0.23.x (no listed class is a hybrid or attention-free)."""
    if model.architecture not in DEFAULT_V2_ARCHITECTURES_ERAS.at(version):
        return False
    return not LISTED_V2_DENSE_ONLY_ERAS.at(version) or (model.moe is None and model.quant == NO_QUANT)


def runs_v2(version: ResolvedVersion, model: ModelSpec, settings: LaunchSettings | None = None) -> bool:
    """Whether `vllm serve` runs this generating model on the V2 model runner (VllmConfig.use_v2_model_runner): the
    runner the launch line's VLLM_USE_V2_MODEL_RUNNER forces (`forced_runner`; refused where the release refuses it),
    else the release's own pick (`_release_runs_v2`)."""
    if settings is not None:
        check_adaptive(version, settings)
    logged = logged_runner(settings)
    if logged is not None:
        if logged and model_runner(version) == "v1":
            raise UnsupportedModelError(f"the log says '{V2_LINE}': vLLM {version.label}'s experimental V2 model runner "
                                        f"({RUNNER_ENV_ERAS.era(version).source}), which kvtop does not model",
                                        field="log")  # fmt: skip
        if not logged and RUNNER_ENV_ERAS.at(version) == "only_1":
            raise InputError(f"the log says the V1 model runner ran, which vLLM {version.label} no longer has "
                             f"({RUNNER_ENV_ERAS.era(version).source}): the log is of an earlier release",
                             field="--engine-version")  # fmt: skip
        return logged
    forced = forced_runner(version, model, settings)
    if forced is not None:
        return forced
    v2 = _release_runs_v2(version, model, settings)
    if not v2 and settings is not None and model_runner(version) != "v1":
        check_v1(version, model, settings, "the release's pick for this launch")
    return v2


def _release_runs_v2(version: ResolvedVersion, model: ModelSpec, settings: LaunchSettings | None = None) -> bool:
    """The release's own pick, VLLM_USE_V2_MODEL_RUNNER unset. In the v2_dense era (v0.25.0-v0.28.x, `_is_default_v2_model_runner_model`): not
    attention-free, not a hybrid (a recurrent state beside attention: vLLM's `is_hybrid`) unless a listed class from
    v0.27.0, and a listed class or no experts; a dspark draft forces V2 before that test (v0.25.0 config/vllm.py
    :529-532, v0.28.0 :629-632). In either V2 era the launch's speculative decoding keeps V1 where V2 does not run it
    (`spec_methods.keeps_v1_runner`: n-gram and draft-model at v0.25.0-v0.28.x, …). `settings` None: no launch flags
    (no speculative decoding). A pooling runner (runner_type != "generate") runs V1 as well; kvtop plans generating
    models only."""
    runner = model_runner(version)
    if runner == "v1":
        return False
    method = stated_method(settings) if settings is not None else None
    if runner == "v2_dense" and forces_v2(version, settings):  # V2 forced, then validated: no fallback (:524-527)
        lacks = fallback_reason(version, model, settings) if settings else None
        if lacks is not None:
            raise InputError(f"vLLM {version.label} runs a {method} draft on its V2 model runner only (config/vllm.py "
                             f"use_v2_model_runner, :524-532 at v0.25.0, :639-643 at v0.28.0), which 'does not yet "
                             f"support' {lacks}",
                             field="--speculative-config")  # fmt: skip
        return True
    if runner == "v2_listed" and not _listed_runs_v2(version, model):
        return False  # the class keeps V1 whatever the launch: what V2 lacks is never asked (nor refused)
    if runner == "v2_dense" and not _dense_runs_v2(version, model):
        return False
    return settings is None or fallback_reason(version, model, settings) is None


def _dense_runs_v2(version: ResolvedVersion, model: ModelSpec) -> bool:
    """The v2_dense era's class test (v0.25.0-v0.28.x, `_is_default_v2_model_runner_model`): not attention-free, not
    a hybrid unless a listed class from v0.27.0, and a listed class or no experts."""
    listed = model.architecture in DEFAULT_V2_ARCHITECTURES_ERAS.at(version)
    if model.attention_free or model.state is not None and not (listed and LISTED_HYBRID_V2_ERAS.at(version)):
        return False
    return listed or model.moe is None
