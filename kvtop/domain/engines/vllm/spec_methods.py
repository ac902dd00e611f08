"""The `method` values of `--speculative-config` each vLLM release accepts (docs/engines/vllm.md §14).

`SpeculativeConfig` is a pydantic dataclass (`@config`, config/utils.py) whose `method` is the `SpeculativeMethod`
Literal of config/speculative.py: any other value stops the launch in validation. Read in the v0.13.0 and v0.33.0
wheels; releases between them were not read, so they accept either list's methods (a launch is never refused for
a method one of them has), and releases before v0.13.0 are checked against v0.13.0's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kvtop.domain.deployment_flags import flag_int, flag_json
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.span import flag_text

EAGLE3 = "eagle3"  # SpeculativeMethod's EAGLE-3 head, the one spelling every vLLM rule compares a method with
_MTP_0_13 = ("deepseek_mtp", "mimo_mtp", "glm4_moe_mtp", "ernie_mtp", "qwen3_next_mtp", "longcat_flash_mtp", "mtp",
             "pangu_ultra_moe_mtp")  # fmt: skip
V0_13 = ("ngram", "medusa", "mlp_speculator", "draft_model", "suffix", "eagle", EAGLE3, *_MTP_0_13)
_MTP_0_33 = (
    "deepseek_mtp", "dots3_note_mtp", "mimo_mtp", "mimo_v2_mtp", "glm4_moe_mtp", "glm4_moe_lite_mtp", "glm_ocr_mtp",
    "ernie_mtp", "nemotron_h_mtp", "exaone_moe_mtp", "exaone4_5_mtp", "qwen3_next_mtp", "qwen4_exp_mtp",
    "qwen3_5_mtp", "longcat_flash_mtp", "bailing_hybrid_v3_mtp", "minimax_m3_mtp", "bailing_hybrid_mtp", "mtp",
    "kimi_k3_mtp", "pangu_ultra_moe_mtp", "step3p5_mtp", "step5_mtp", "hy_v3_mtp", "hy_v4_mtp", "gemma4_mtp",
    "inkling_mtp", "glm5_next_mtp",
)  # fmt: skip
# v0.33.0 dropped medusa and mlp_speculator, added custom_class, extract_hidden_states, dflash, ngram_gpu, dspark
V0_33 = ("ngram", "draft_model", "suffix", "custom_class", "eagle", EAGLE3, "extract_hidden_states", *_MTP_0_33,
         "dflash", "ngram_gpu", "dspark")  # fmt: skip
# v0.34.0 config/speculative.py:53-97: custom_class gone (a registered custom method's name instead, :1359-1367),
# nemotron3_5_transcribe_mtp added to MTPModelTypes (:63)
V0_34 = tuple(method for method in V0_33 if method != "custom_class") + ("nemotron3_5_transcribe_mtp",)
_SOURCE = "config/speculative.py SpeculativeMethod"
METHOD_ERAS: Eras[tuple[str, ...]] = Eras((
    Era("", V0_13, f"{_SOURCE} (read at v0.13.0; earlier releases not read)"),
    Era("0.13.1", tuple(dict.fromkeys((*V0_13, *V0_33))),
        f"{_SOURCE}: releases after v0.13.0 and before v0.33.0 not read, either one's methods"),
    Era("0.33.0", V0_33, f"{_SOURCE} (read at v0.33.0)"),
    Era("0.34.0", V0_34, f"{_SOURCE} (read at v0.34.0: :53-97)"),
))  # fmt: skip


# How SpeculativeConfig.__post_init__ names the method of a draft launched without one (method None → draft_model,
# then "Automatically detect the method"): the first (method, words in the draft's lowercased name, draft config
# architectures) that matches, else draft_model. Read in the v0.11.0, v0.13.0, v0.14.0 and v0.20.2–v0.33.0 wheels;
# the medusa / mlp_speculator / mtp tests read the draft's model_type and the DSparkDraftModel test (v0.29.0 on)
# needs model_type "qwen3" too: not modelled here (kvtop has the draft's architecture, not its model_type).
DetectRule = tuple[str, tuple[str, ...], frozenset[str]]
_EAGLE: tuple[DetectRule, ...] = (("eagle", ("eagle-",), frozenset()), (EAGLE3, ("eagle3",), frozenset()))
_DFLASH: DetectRule = ("dflash", ("dflash",), frozenset())
_DFLASH_0_28: DetectRule = ("dflash", ("dflash",), frozenset({"MuseGlimmerAssistantModel"}))
_DSPARK_0_25 = frozenset({"Qwen3DSparkModel"})
_DSPARK_0_26 = _DSPARK_0_25 | {"Gemma4DSparkModel"}
_DSPARK_0_29 = _DSPARK_0_26 | {"Qwen3OmniDSparkModel"}
_DETECT_SOURCE = "config/speculative.py SpeculativeConfig.__post_init__ 'Automatically detect the method'"
DETECTION_ERAS: Eras[tuple[DetectRule, ...]] = Eras((
    Era("", _EAGLE, f"{_DETECT_SOURCE} (v0.11.0 :320-323, v0.13.0 :350-353, v0.14.0 :359-362): 'eagle-', 'eagle3'"),
    Era("0.20.2", (*_EAGLE, _DFLASH),
        f"{_DETECT_SOURCE} (v0.20.2 :580-592 ... v0.24.0 :735-747): + 'dflash' in the name (v0.14.1-v0.20.1 not read)"),
    Era("0.25.0", (*_EAGLE, _DFLASH, ("dspark", ("dspark",), _DSPARK_0_25)),
        f"{_DETECT_SOURCE} (v0.25.0 :834-852): + 'dspark' in the name or a Qwen3DSparkModel draft"),
    Era("0.26.0", (*_EAGLE, _DFLASH, ("dspark", ("dspark",), _DSPARK_0_26)),
        f"{_DETECT_SOURCE} (v0.26.0 :868-887, v0.27.1 :879-898): + a Gemma4DSparkModel draft"),
    Era("0.28.0", (*_EAGLE, _DFLASH_0_28, ("dspark", ("dspark",), _DSPARK_0_26)),
        f"{_DETECT_SOURCE} (v0.28.0 :934-957): + a MuseGlimmerAssistantModel draft is dflash"),
    Era("0.29.0", (*_EAGLE, _DFLASH_0_28, ("dspark", ("dspark",), _DSPARK_0_29)),
        f"{_DETECT_SOURCE} (v0.29.0 :1275-1304 ... v0.32.0 :1326-1355): + a Qwen3OmniDSparkModel draft"),
    Era("0.33.0", (*_EAGLE, _DFLASH_0_28, ("dspark", ("dspark",), _DSPARK_0_29 | {"MuseSparkDSparkModel"})),
        f"{_DETECT_SOURCE} (v0.33.0 :1432-1468): + a MuseSparkDSparkModel draft"),
))  # fmt: skip


# the methods that propose without a draft model, so with no draft weights, KV or graphs of their own
# (config/speculative.py SpeculativeMethod: n-gram lookup on the CPU or GPU, suffix decoding)
NO_DRAFT_METHODS = frozenset({"ngram", "ngram_gpu", "suffix"})


def is_mtp(method: str) -> bool:
    """Whether the method is an MTP one: "mtp" or a model's `*_mtp` name, which SpeculativeConfig.__post_init__ runs
    as "mtp" (config/speculative.py at v0.13.0 and v0.33.0)."""
    return method == "mtp" or method.endswith("_mtp")


def detected_method(draft: str, architectures: Iterable[str], version: ResolvedVersion) -> str:
    """The method vLLM at `version` gives a draft launched without one: from its name (`draft`, as passed) or its
    config's `architectures` (DETECTION_ERAS), else draft_model."""
    name, archs = draft.lower(), set(architectures)
    for method, words, named_archs in DETECTION_ERAS.at(version):
        if any(word in name for word in words) or archs & named_archs:
            return method
    return "draft_model"


# `--spec-method` / `--spec-model` / `--spec-tokens`: SpeculativeConfig's method, model and num_speculative_tokens
# as flags of their own, merged into --speculative-config (EngineArgs.create_speculative_config: "… and
# --speculative-config['…'] are mutually exclusive"); first in v0.22.0 (engine/arg_utils.py:1463-1466, 1668-1680;
# absent from v0.21.0), :1501-1504 at v0.24.0, :1900-1903 at v0.34.0
SPLIT_FIELDS = (("spec-method", "method"), ("spec-model", "model"), ("spec-tokens", "num_speculative_tokens"))


@dataclass(frozen=True)
class SpecConfig:
    """The fields of `--speculative-config` kvtop reads, the split flags merged in (`spec_config`)."""

    method: str | None  # `method` as text; None where unset or empty
    model: str | None  # the draft's `model` as text; None where unset or empty
    num_speculative_tokens: int | None  # a whole number ≥ 1 (anything else refused); None where unset
    parallel_drafting: bool  # `parallel_drafting` is true


def spec_config(settings: LaunchSettings) -> SpecConfig:
    """`--speculative-config`'s object with the split flags' fields merged in, as vLLM merges them; an InputError
    where a field is given both ways (vLLM's ValueError), or where num_speculative_tokens is not a whole number ≥ 1:
    SpeculativeConfig refuses 0 ('Expected num_speculative_tokens to be greater than zero', config/speculative.py
    v0.11.0:526, v0.22.0:80 `Field(gt=0)` and :987, v0.34.0:455 and :1660), which kvtop had read as unset."""
    spec = dict(flag_json(settings, "speculative-config"))
    for flag, key in SPLIT_FIELDS:
        value: object = flag_int(settings, flag, least=1) if key == "num_speculative_tokens" else flag_text(settings, flag)
        if value is None:
            continue
        if key in spec:
            raise InputError(f"--{flag} and --speculative-config['{key}'] are mutually exclusive (vLLM refuses)",
                             field=f"--{flag}")  # fmt: skip
        spec[key] = value
    model, tokens = spec.get("model"), spec.get("num_speculative_tokens")
    if tokens is not None and (not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1):
        raise InputError(f"num_speculative_tokens must be a whole number ≥ 1 (got {tokens!r})",
                         field="--speculative-config")  # fmt: skip
    return SpecConfig(
        method=str(spec.get("method") or "") or None,
        model=str(model) if model else None,
        num_speculative_tokens=tokens,
        parallel_drafting=spec.get("parallel_drafting") is True,
    )


def draft_tokens(settings: LaunchSettings) -> int | None:
    """num_speculative_tokens the launch states (`--speculative-config`'s or --spec-tokens, else
    --num-speculative-tokens); None where none. An InputError for a value vLLM refuses (not a whole number ≥ 1)."""
    tokens = spec_config(settings).num_speculative_tokens
    return tokens if tokens is not None else flag_int(settings, "num-speculative-tokens", least=1)


def stated_draft(settings: LaunchSettings) -> str | None:
    """The draft model the launch names: `--speculative-config`'s `model` (or --spec-model), else the older
    --speculative-model; None where none."""
    return spec_config(settings).model or flag_text(settings, "speculative-model")


def stated_method(settings: LaunchSettings) -> str | None:
    """The speculative method the launch runs: `--speculative-config`'s `method`; without one, or draft_model (which
    the detection also rewrites: it runs for any method but eagle/eagle3/dflash/dspark), the one vLLM detects from the
    draft's name or config architectures at the launch's release (`detected_method`); None without speculative
    decoding. The architectures are `settings.draft_architectures`: the draft config's where kvtop read it
    (`deployment.with_draft_config`), else none (the name alone decides)."""
    method = spec_config(settings).method
    draft = stated_draft(settings)
    if method not in (None, "draft_model") or draft is None:
        return method
    return detected_method(draft, settings.draft_architectures, ResolvedVersion(text=settings.engine_version))


# The methods VllmConfig's V2 model runner does not run (`_get_v2_model_runner_unsupported_features`, read in each
# wheel): a launch that sets one runs the V1 runner ('Model Runner V2 does not yet support …; using the V1 model runner
# instead', `use_v2_model_runner`). The `*_mtp` methods run as "mtp" (SpeculativeConfig.__post_init__), which V2 runs.
_V1_ONLY_0_25 = ("ngram", "ngram_gpu", "draft_model", "suffix", "medusa", "mlp_speculator", "custom_class",
                 "extract_hidden_states")  # fmt: skip
V1_ONLY_METHOD_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "no V2 model runner by default before v0.22.0 (runner_eras.MODEL_RUNNER_ERAS)"),
    Era("0.22.0", frozenset({*_V1_ONLY_0_25, "dflash"}),
        "config/vllm.py `_get_v2_model_runner_unsupported_features` (v0.22.0 :1998-2013, v0.23.0 :2007-2022): "
        "ngram/ngram_gpu, and any method but eagle, eagle3, mtp (dflash too)"),
    Era("0.24.0", frozenset(_V1_ONLY_0_25),
        "v0.24.0 config/vllm.py:2027-2049: dflash joins eagle, eagle3, mtp on V2"),
    Era("0.25.0", frozenset(_V1_ONLY_0_25),
        "config/vllm.py `_get_v2_model_runner_unsupported_features` (v0.25.0 :2068-2079, v0.26.0 :2154-2165, v0.27.1 "
        ":2193-2204, v0.28.0 :2396-2407): ngram/ngram_gpu, and any method but eagle, eagle3, mtp, dflash, dspark"),
    Era("0.29.0", frozenset(_V1_ONLY_0_25) - {"extract_hidden_states"},
        "v0.29.0 config/vllm.py:2563-2574 adds extract_hidden_states to V2's methods; v0.30.0 :2839-2850 lists "
        "the V1 ones (ngram, ngram_gpu, draft_model (PR #43091), suffix, medusa, mlp_speculator, custom_class)"),
    Era("0.31.0", frozenset({"ngram", "ngram_gpu", "suffix", "medusa", "mlp_speculator", "custom_class"}),
        "v0.31.0 config/vllm.py:3075-3084: draft_model runs on V2"),
    Era("0.32.0", frozenset({"suffix", "medusa", "mlp_speculator", "custom_class"}),
        "v0.32.0 config/vllm.py:2928-2935: ngram and ngram_gpu run on V2"),
    Era("0.33.0", frozenset({"suffix", "custom_class"}),
        "v0.33.0 config/vllm.py:3066-3068 (medusa and mlp_speculator no longer methods)"),
    Era("0.34.0", frozenset(),
        "v0.34.0 has no V1 model runner (v1/worker/gpu_worker.py:579-587): every method runs on V2, suffix by "
        "v1/worker/gpu/spec_decode/suffix/; config/vllm.py:3123-3137 tests no speculative method"),
))  # fmt: skip


EAGLE3_PP_ON_V2: Eras[bool] = Eras((
    Era("", False, "v0.22.0 config/vllm.py:2009-2013 ... v0.29.0 :2585-2589: 'EAGLE3 with pipeline parallelism'"),
    Era("0.30.0", True, "v0.30.0 config/vllm.py `_get_v2_model_runner_unsupported_features`: no EAGLE3/PP test"),
))


def keeps_v1_runner(method: str | None, settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """Why the launch's speculative decoding keeps the V1 model runner where the release would run V2, None where it
    does not: a method V2 does not run (`V1_ONLY_METHOD_ERAS`), `parallel_drafting` (v0.22.0 :2006-2007 on; but for
    dflash from v0.24.0 :2039-2043, dspark from v0.25.0 :2081-2088, to v0.33.0), EAGLE3 at PP > 1 (v0.22.0 :2009-2013
    to v0.29.0 :2585-2589; gone at v0.30.0). `method`: the launch's `stated_method`, which the caller has read."""
    if method is None:
        return None
    era = V1_ONLY_METHOD_ERAS.era(version)
    if not era.value:
        return None
    if method in era.value:
        return f"speculative method '{method}' ({era.source})"
    if spec_config(settings).parallel_drafting and method not in ("dflash", "dspark"):
        return "parallel drafting for speculative decoding (config/vllm.py, v0.22.0 on)"
    if method == EAGLE3 and settings.pp > 1 and not EAGLE3_PP_ON_V2.at(version):
        return "EAGLE3 with pipeline parallelism (config/vllm.py, v0.22.0-v0.29.0)"
    return None

