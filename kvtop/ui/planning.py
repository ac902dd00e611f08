"""The planner's arithmetic, free of widgets: text fields → edited `LaunchSettings` → before/after ledgers.

Every edit replaces values (`model_copy(update=...)`); nothing is mutated, and an invalid edit
comes back as a message naming the field, so the screen can show it inline and keep the text.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass

from kvtop.domain.calibration.estimate import CapacityPlan, calibrated_ledger, planned_capacity
from kvtop.domain.calibration.node import NodeMeasure
from kvtop.domain.deployment import DeploymentSetup, HostKvRequest
from kvtop.domain.engine_launch import env_words, yaml_flow
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import EngineId, display_name, engine_rules
from kvtop.domain.engines.registry import engine_flags as engine_flags_of
from kvtop.domain.engines.stated_release import stated_release
from kvtop.domain.engines.versions import LATEST, ResolvedVersion
from kvtop.domain.errors import InputError, KvtopError
from kvtop.domain.host_tier_fit import HostTierFit, host_tier_fit
from kvtop.domain.launch import LaunchSettings, model_args, release_names
from kvtop.domain.launch_change import build_words, options
from kvtop.domain.ledger import Ledger
from kvtop.domain.model import ModelSpec
from kvtop.domain.observe import HostMemory
from kvtop.domain.redact import quoted
from kvtop.domain.span import NodeLaunch
from kvtop.domain.wording import GIB, gib_setting
from kvtop.ui.plan_errors import FieldErrors, field_error, lost_edit
from kvtop.ui.plan_fields import (
    AUTO,
    AUTO_KEYS,
    CACHE_STATES,
    DEPLOYMENT_KEYS,
    FIELD_BY_KEY,
    FIELDS,
    MEASURED_KEYS,
    FieldError,
    FieldKind,
    PlanField,
    edited_field_error,
    edited_keys,
    engine_count,
)
from kvtop.ui.plan_nodes import node_launch, on_its_nodes


def memory_fraction_field(settings: LaunchSettings) -> str | None:
    """The engine's memory share: SGLang's `--mem-fraction-static`, vLLM's `--gpu-memory-utilization`
    (None: the engine takes no share, llama.cpp)."""
    return engine_rules(settings.engine).memory_fraction_field


def _deployment_texts(settings: LaunchSettings) -> dict[str, str]:
    """The deployment fields' texts from the launch's flags (blank where it turns a feature off, or where
    its flags cannot be read: the launch's own message says why)."""
    try:
        setup = engine_rules(settings.engine).deployment.setup(settings)
    except KvtopError:
        return dict.fromkeys(DEPLOYMENT_KEYS, "")
    request, host_text = setup.host_kv, ""
    if request is not None and request.ratio_to_gpu_pool:
        host_text = f"x{request.ratio_to_gpu_pool:g}"
    elif request is not None and request.bytes_per_rank:  # per rank: the engine's own share of a total it states
        host_text = gib_setting(request.bytes_per_rank)
    return {
        "spec_method": setup.spec_method or "",
        "redundant_experts": str(setup.redundant_experts),
        "lora_slots": str(setup.max_loras or "default") if setup.lora else "",
        "lora_rank": str(setup.max_lora_rank or "") if setup.lora else "",
        "host_kv_gib": host_text,
    }


def decided_spec_method(settings: LaunchSettings) -> str:
    """The speculative field's text for a launch: the method its engine's rule decides at its release (vLLM: from the
    draft's name and its config's class, `draft_architectures`), '' without speculative decoding."""
    return _deployment_texts(settings)["spec_method"]


def _with_deployment(settings: LaunchSettings, values: Mapping[str, object]) -> LaunchSettings:
    """The launch with the deployment fields' values, in the engine's own flags; a field not given keeps the launch's
    own flags (the speculative field the rule fills: the engine decides the method at the edited release)."""
    rules = engine_rules(settings.engine).deployment
    setup = rules.setup(settings)
    method = values.get("spec_method")
    slots, rank, host = values.get("lora_slots"), values.get("lora_rank"), values.get("host_kv_gib")
    spec = method if isinstance(method, str) and method.lower() != "none" else None
    parts: dict[str, dict[str, object]] = {  # each field's part of the setup
        # another method: the launch's draft was the old one's
        "spec_method": {"spec_method": spec, **({"draft_model": None} if spec != setup.spec_method else {})},
        "redundant_experts": {"redundant_experts": values.get("redundant_experts") or 0},
        "lora_slots": {"lora": slots is not None, "max_loras": slots if isinstance(slots, int) else None},
        "lora_rank": {"max_lora_rank": rank},
        "host_kv_gib": {"host_kv": _host_request(host)},
    }
    parts = {key: part for key, part in parts.items() if key in values}
    update = {name: value for part in parts.values() for name, value in part.items()}
    edited = rules.with_setup(settings, setup.model_copy(update=update))
    try:
        checked = rules.setup(edited)  # the engine's own checks of the flags the fields wrote
    except InputError as err:
        raise _deployment_error(err, settings, setup, parts) from None
    lost = lost_edit(values, checked)
    if lost is not None:  # the engine's own flags hold no place for it: said, not dropped while '✓ valid' shows
        raise InputError(f"not modelled for {display_name(settings.engine)} (no flag of its takes "
                         f"{quoted(str(values[lost]))})", field=FIELD_BY_KEY[lost].label)  # fmt: skip
    if checked.host_kv is None and update.get("host_kv") is not None:
        kind = "host KV sized as a share of the GPU pool" if isinstance(host, tuple) else "host KV tier kvtop models"
        raise InputError(f"{display_name(settings.engine)} has no {kind}", field="host KV GiB")
    return edited


def _deployment_error(
    err: InputError, settings: LaunchSettings, setup: DeploymentSetup, parts: Mapping[str, Mapping[str, object]]
) -> InputError:
    """The engine's refusal of a flag a deployment field wrote ('--speculative-algorithm: must be one of …'),
    named by that field's label, so the planner marks the field and words it like every other field's error;
    the field is the one whose part of the setup writes the flag the refusal names (unchanged where none does).
    The flag keeps its colon, as `kvtop plan` words it: a refusal need not start with 'must' ('this release has
    no speculative decoding', LMDeploy before v0.11.0)."""
    flag = (err.field or "").removeprefix("--")
    rules = engine_rules(settings.engine).deployment
    for key, part in parts.items():
        written = rules.with_setup(settings, setup.model_copy(update=dict(part))).flags
        if flag and flag in written and written[flag] != settings.flags.get(flag):
            return InputError(f"{err.field}: {err.detail}", field=FIELD_BY_KEY[key].label, source=err.source)
    return err


def _host_request(value: object) -> HostKvRequest | None:
    """The host field's value as a request: GiB per rank, or ('x', ratio) of the GPU pool."""
    if value is None:
        return None
    if isinstance(value, tuple):
        return HostKvRequest(connector="host cache", ratio_to_gpu_pool=float(value[1]))
    return HostKvRequest(connector="host cache", size_bytes=round(float(str(value)) * GIB))


def kv_dtype_options(engine: EngineId, engine_version: str | None = None) -> list[tuple[str, str]]:
    """The KV dtype list as (what a person reads, the value the engine takes) at that release (None: the latest):
    LMDeploy's `--quant-policy 8` reads '8 · int8' (its flags' `kv_cache_dtype_words`, the format `kvtop plan`'s
    header then names); a name that says itself ('fp8_e4m3') reads as it is."""
    flags = engine_flags_of(engine)
    words = flags.kv_cache_dtype_words(engine_version)
    return [(words.get(dtype, dtype), dtype) for dtype in flags.kv_cache_dtypes]


def edited_kv_dtype_options(
    engine: EngineId, settings: LaunchSettings | None, version_text: str
) -> list[tuple[str, str]] | None:
    """The KV dtype list at the release an edit names: an `engine version` before LMDeploy v0.4.0 turns
    `--quant-policy 4` from '4 · int4' into '4 · int8' (offline), as `kvtop plan` then solves it. The release is the
    edit's settings', or where the edit is refused (that release lacks the policy chosen) the field's text when it
    names one; None: it names none (a version half typed), the list stays as it is."""
    if settings is not None:
        return kv_dtype_options(engine, settings.engine_version)
    text = version_text.strip()
    version = None if text.lower() in ("", LATEST) else text
    if version is not None and not release_names(engine).names_one(version):
        return None
    return kv_dtype_options(engine, version)


def field_texts(settings: LaunchSettings, measured: MeasuredInputs | None = None) -> dict[str, str]:
    """The text each input starts with (blank: the engine's default; `measured`: what the GPU holds beside the
    engine, as the live plan has it)."""
    texts: dict[str, str] = _deployment_texts(settings)
    for key in MEASURED_KEYS:  # the desktop on or off, the compile cache's state ("unsaid" where not said)
        value = getattr(measured or MeasuredInputs(), key)
        texts[key] = ("on" if value else "off") if FIELD_BY_KEY[key].kind is FieldKind.SWITCH else value or CACHE_STATES[0]
    for field in FIELDS:
        if field.key in DEPLOYMENT_KEYS or field.key in MEASURED_KEYS:
            continue
        attribute = memory_fraction_field(settings) if field.key == "memory_fraction" else field.key
        value = getattr(settings, attribute) if attribute is not None else None
        if field.key == "ep":  # the EP the layout runs (an expert-parallel switch's tp × dp), as the layout row says
            value = settings.effective_ep
        texts[field.key] = (
            "" if value is None else ("on" if value is True else "off" if value is False else str(value))
        )
    return texts


#: The largest count a deployment field takes: the engines read them into a 32-bit int (C++'s int, torch's int32).
_MOST = (1 << 31) - 1


def _parse(field: PlanField, text: str) -> object:
    raw, kind = text.strip(), field.kind
    if field.key in AUTO_KEYS and raw.lower() == AUTO:  # as the placeholder offers it: the engine's own pick
        raw = ""
    if kind is FieldKind.TEXT:
        if not raw:
            raise InputError("give a model (preset, config path or hub id)", field=field.label)
        return raw
    if kind is FieldKind.SWITCH:
        return raw.lower() in ("on", "true", "yes", "1")
    if kind is FieldKind.CACHE:  # "unsaid" (or blank): not said, as `plan` without --compile-cache
        if raw.lower() not in CACHE_STATES and raw:
            raise InputError(f"needs one of {', '.join(CACHE_STATES)}, got {quoted(raw)}", field=field.label)
        return None if raw.lower() in ("", CACHE_STATES[0]) else raw.lower()
    if kind is FieldKind.DTYPE:  # the engine's own list is checked when the settings are built
        return raw
    if kind is FieldKind.TEXT_OR_BLANK:
        return raw or None
    if kind is FieldKind.COUNT_OR_ZERO and not raw:
        return 0
    if kind is FieldKind.SLOTS and raw.lower() in ("", "default", "on"):
        return raw.lower() or None  # blank: off; "default": on with the engine's own count
    if kind is FieldKind.GIB:
        if not raw:
            return None
        ratio = raw[:1].lower() in ("x", "×")
        try:
            size = float(raw[1:] if ratio else raw)
        except ValueError:
            size = float("nan")
        if not 0 < size < 1 << 20:  # '99999999999999999999' was told 'above 0': the bound it broke is said
            raise InputError(f"needs a size in GiB above 0 and under {1 << 20:,} (or x2: twice the GPU pool), got "
                             f"{quoted(raw)}", field=field.label)  # fmt: skip
        return ("x", size) if ratio else size
    if not raw:
        if kind.may_be_blank:
            return None
        raise InputError("needs a whole number", field=field.label)
    share = kind is FieldKind.SHARE  # else a count (COUNT, COUNT_OR_BLANK, COUNT_OR_ZERO, SLOTS)
    try:
        value: int | float = float(raw) if share else int(raw)
    except ValueError:
        wanted = "a number between 0 and 1" if share else "a whole number"
        # quoted as any text from outside (a key pasted into the wrong field is masked, '***')
        raise InputError(f"needs {wanted}, got {quoted(raw)}", field=field.label) from None
    if share and not 0 < value <= 1:
        raise InputError(f"must be above 0 and at most 1 (got {raw})", field=field.label)
    least = 0 if kind is FieldKind.COUNT_OR_ZERO else 1
    if not share and value < least:
        raise InputError(f"must be at least {least} (got {raw})", field=field.label)
    if field.key in DEPLOYMENT_KEYS and value > _MOST:  # 99999999999999999999 LoRA slots was taken (layout counts:
        # the model's own bound says more, 'PP: 9,999,999,999 pipeline stages exceed the model's 80 layers')
        raise InputError(f"must be at most {_MOST:,} (got {raw})", field=field.label)
    return value


def apply_edits(
    base: LaunchSettings, texts: Mapping[str, str], node_gpus: int | None = None, model: ModelSpec | None = None
) -> LaunchSettings:
    """The base settings with every field replaced by its text; `FieldErrors` (an InputError) names every bad
    field, each with its reason, in the form's order. Its node flags follow its layout over nodes of `node_gpus`
    GPUs, read with the `model` planned (`plan_nodes.on_its_nodes`)."""
    update: dict[str, object] = {}
    deployment: dict[str, object] = {}
    errors: list[FieldError] = []
    for key, text in texts.items():
        field = FIELD_BY_KEY[key]
        if key in MEASURED_KEYS:  # not a setting: `measured_edits` reads it
            continue
        attribute = memory_fraction_field(base) if key == "memory_fraction" else key
        try:
            if key in DEPLOYMENT_KEYS:
                deployment[key] = _parse(field, text)
            elif attribute is not None:
                version = texts.get("engine_version", base.engine_version or "")
                counted = engine_count(base.engine, key, text, version) if field.kind.is_count else None
                update[attribute] = counted if counted is not None else _parse(field, text)
            elif text.strip():
                raise InputError(f"{display_name(base.engine)} takes no share of memory", field=field.label)
        except InputError as err:
            errors.append(field_error(err, base.engine))
    if deployment.get("lora_rank") is not None and deployment.get("lora_slots") is None:
        # with LoRA off the setup writes no LoRA flag, the rank's neither: the edit is said, not dropped unseen
        errors.append(FieldError("lora_rank", "LoRA rank: no effect while LoRA slots is off (give it a count or "
                                 "'default')"))  # fmt: skip
    dtype = update.get("kv_cache_dtype")
    accepted = engine_flags_of(base.engine).kv_cache_dtypes
    if isinstance(dtype, str) and dtype not in accepted:
        name = display_name(base.engine)
        errors.append(FieldError("kv_cache_dtype", f"KV dtype: {name} has no KV cache dtype {quoted(dtype)} (one of "
                                 f"{', '.join(accepted)})"))  # fmt: skip
    if errors:
        order = [field.key for field in FIELDS]
        raise FieldErrors(tuple(sorted(errors, key=lambda e: order.index(e.key) if e.key in order else len(order))))
    edited = base.model_copy(update=_expert_switch(base, update))
    return on_its_nodes(base, _with_deployment(edited, deployment) if deployment else edited, node_gpus, model)


def _expert_switch(base: LaunchSettings, update: dict[str, object]) -> dict[str, object]:
    """The EP field against a launch that spreads experts by a switch (`enable_expert_parallel`, ep 1: EP is
    tp × dp): the EP it showed keeps the switch (so it follows a TP or DP edit), 1 turns it off, any other
    count is written as that EP (the engine's own check says whether it may be)."""
    if not (base.enable_expert_parallel and base.ep == 1) or "ep" not in update:
        return update
    if update["ep"] == base.effective_ep:
        return {**update, "ep": 1}
    if update["ep"] == 1:
        return {**update, "enable_expert_parallel": False}
    return update


def measured_edits(measured: MeasuredInputs | None, texts: Mapping[str, str]) -> MeasuredInputs | None:
    """`measured` with what the fields say of the node beside the engine (the desktop, torch.compile's cache), as
    `plan --desktop` / `--compile-cache` set them; unchanged where no such field is given."""
    update = {key: _parse(FIELD_BY_KEY[key], texts[key]) for key in MEASURED_KEYS if key in texts}
    if not update:
        return measured
    return (measured or MeasuredInputs()).model_copy(update=update)


def compile_cache_unread(settings: LaunchSettings, version: ResolvedVersion | None = None) -> str | None:
    """Why the engine's rule does not read torch.compile's cache at the launch's release (`measured_not_read_at`,
    the declaration `plan --compile-cache` notes by; `version` None: the release its settings state), or None
    where it does (vLLM): the planner's field is off where there is a why."""
    release = version if version is not None else stated_release(settings)
    return engine_rules(settings.engine).measured_not_read_at(settings, release).get("compile_cache")


def desktop_fact_note(measured: MeasuredInputs | None) -> str:
    """' · Windows desktop under WSL2, read from /proc/version: 5.15.167.4-microsoft-standard-WSL2' (the domain's
    `HostDesktop.cited`) where the node itself showed the desktop the field starts with (`MeasuredInputs.desktop_seen`),
    so the operator sees the fact is measured, not typed; '' otherwise."""
    seen = measured.desktop_seen if measured is not None and measured.desktop else None
    return f" · {seen.cited}" if seen is not None else ""


def engine_flag_list(settings: LaunchSettings, *, with_model: bool, launch: NodeLaunch | None) -> list[str]:
    """The flags to paste into the engine's launch command, the model first as the engine takes it
    (a flag, or positionally: `trtllm-serve MODEL …`, `lmdeploy serve api_server MODEL …`); without the node flags
    the release's parser lacks (`NodeLaunch.unread_flags`: vLLM before v0.11.1 spans nodes through Ray). `launch`:
    the settings' `node_launch`, read once per edit by the caller (`PlanOutcome.nodes`)."""
    if launch is not None and launch.unread_flags:
        kept = {key: value for key, value in settings.flags.items() if f"--{key}" not in launch.unread_flags}
        settings = settings.model_copy(update={"flags": kept})
    flags = list(settings.engine_launch().line)  # the engine's own options (TensorRT-LLM: trtllm-serve's alone)
    if with_model and settings.model:
        flags = [*model_args(settings.engine, settings.model), *flags]
    return flags


def launch_beside(settings: LaunchSettings) -> str:
    """What the copied line needs beside it and `c` does not copy: the environment the launch set that a rule read
    (`SGLANG_MAMBA_SSM_DTYPE=bfloat16`: it goes before the server's command, where the copied flags cannot), the config
    file it names, on one line (TensorRT-LLM's `extra_llm_api_options.yaml: {kv_cache_config: {dtype: fp8}}`), and
    the build step's flags by the tool that takes each (`build_words`, as `launch_words` says them); '' where the
    line is the whole launch (vLLM, SGLang, LMDeploy, llama.cpp, no variable)."""
    launch = settings.engine_launch()
    said = [f"environment (not copied; set it before the server's command): {' '.join(env_words(launch.env))}"]
    said = said if launch.env and not launch.line_said else []  # no server's command to set it before
    if launch.config:
        said.append(f"{launch.config_file} (not copied; kvtop's keys: merge into your file before the line runs): "
                    f"{yaml_flow(launch.config)}")
    if launch.line_said:
        said.insert(0, f"no line to copy: {launch.line_said}")
    if launch.config_said:
        said.append(launch.config_said)
    if launch.build:  # by the tool that takes each flag, as `launch_words` and the fix say it: one spelling
        said.append(build_words(tuple(options(launch.build).values()), launch.build_tools, launch.build_said,
                                "the engine's build"))  # fmt: skip
    return " · ".join(said)


def engine_flags(settings: LaunchSettings, *, with_model: bool, launch: NodeLaunch | None) -> str:
    """`engine_flag_list` as one shell line."""
    return shlex.join(engine_flag_list(settings, with_model=with_model, launch=launch))


@dataclass(frozen=True)
class PlanOutcome:
    """Before (the live settings) and after (the edit), on the same GPUs; `error` when the edit is invalid."""

    before: Ledger | None
    after: Ledger | None
    settings: LaunchSettings | None
    errors: tuple[FieldError, ...] = ()  # every field's reason the edit is invalid, in the form's order
    before_error: str | None = None
    # what a fresh start of the edit would log, as `kvtop plan` plans it: the interval around `after` (the
    # same calibrated estimate as before/after and the dashboard, so an unchanged edit changes nothing)
    after_plan: CapacityPlan | None = None
    # whether the edit plans the live model (the before column's): where it plans another, the live engine's
    # own figures (its reported tokens) belong to the before column alone, and the views say so
    live_model_planned: bool = True
    # what each node's launch adds over nodes (`plan_nodes.node_launch` of `settings`, None on one node): read once
    # per edit here, so the status, the flags line and `c` do not each ask the engine's span rule again
    nodes: NodeLaunch | None = None

    @property
    def error(self) -> str | None:
        """Every reason on one line (None: the edit is valid)."""
        return "; ".join(error.message for error in self.errors) or None

    @property
    def error_field(self) -> str | None:
        """The key of the first field an error names."""
        return next((error.key for error in self.errors if error.key is not None), None)


def _predict(
    model: ModelSpec,
    settings: LaunchSettings,
    gpu_total_bytes: int,
    gpu_name: str | None,
    measured: MeasuredInputs | None,
    draft: ModelSpec | None = None,
    node_measures: tuple[NodeMeasure, ...] = (),
    version: ResolvedVersion | None = None,
) -> Ledger:
    """The clean prediction of `settings` on these GPUs: what the GPUs measure now, every other pre-load
    term calibrated (this node's own earlier start of the same launch first), as `kvtop plan` has it.
    `version`: how the live engine's release was found (its log, its endpoint, a flag), the basis ledger's own;
    `calibrated_ledger` keeps it where `settings` names that release and reads an edited release from the flag."""
    try:
        return calibrated_ledger(model, settings, gpu_total_bytes=gpu_total_bytes, gpu_name=gpu_name,
                                 measured=measured, draft=draft, node_measures=node_measures,
                                 version=version)  # fmt: skip
    except (ArithmeticError, ValueError) as err:  # a combination the domain did not foresee: say so, inline
        raise InputError(f"cannot compute this layout ({type(err).__name__}: {err})") from None


def _fresh_start(
    model: ModelSpec, settings: LaunchSettings, gpu_total_bytes: int, gpu_name: str | None,
    measured: MeasuredInputs | None, draft: ModelSpec | None, node_measures: tuple[NodeMeasure, ...],
) -> CapacityPlan | None:  # fmt: skip
    """What a fresh start of the edited launch would log, as `kvtop plan` plans it: the GPUs' measured memory,
    every other term calibrated, and the interval (None where it cannot be computed: the table says why)."""
    try:
        return planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes, gpu_name=gpu_name, measured=measured,
                                draft=draft, node_measures=node_measures)  # fmt: skip
    except (KvtopError, ArithmeticError, ValueError):
        return None


def plan(
    model: ModelSpec | None,
    live: LaunchSettings,
    texts: Mapping[str, str],
    *,
    gpu_total_bytes: int,
    gpu_name: str | None,
    base: LaunchSettings | None = None,
    measured: MeasuredInputs | None = None,
    after_model: ModelSpec | None = None,
    draft: ModelSpec | None = None,
    node_measures: tuple[NodeMeasure, ...] = (),
    version: ResolvedVersion | None = None,
    node_gpus: int | None = None,
) -> PlanOutcome:
    """Predict the live settings and the edited ones (about a millisecond each).

    `model` is the live model (None: not loaded, so no "before"); `after_model` the one the
    edit plans with (default: the live one). The edits replace values of `base` (default:
    `live`), so a start such as a finding's fix keeps the settings no field shows. `measured`
    holds what the GPUs measure now (e.g. the free memory a restart would find), for both sides;
    `draft` the launch's speculative draft as the live ledger was solved with it (an edit that turns
    speculative decoding off leaves it unused); `node_measures` what this node's earlier starts measured
    (the local calibration store); `version` how the live release was found (the basis ledger's, `_predict`);
    `node_gpus` the GPUs a node has, which the edit's node count follows (`plan_nodes.on_its_nodes`).
    """
    before: Ledger | None = None
    before_error: str | None = "the live model is not loaded"
    # another model loaded in the model field; an unloaded live model cannot be told equal to it
    live_planned = after_model is None or after_model is model or (model is not None and after_model == model)
    if model is not None:
        try:
            before, before_error = _predict(model, live, gpu_total_bytes, gpu_name, measured, draft, node_measures,
                                          version), None
        except KvtopError as err:
            before_error = str(err)
    try:
        planned = after_model or model
        settings = apply_edits(base or live, texts, node_gpus, planned)  # a bad field is said before a missing model
        if planned is None:
            raise InputError("no model to plan with yet", field="model")
        edited = measured_edits(measured, texts)
        after = _predict(planned, settings, gpu_total_bytes, gpu_name, edited, draft, node_measures, version)
    except KvtopError as err:
        engine = (base or live).engine
        if isinstance(err, FieldErrors):
            errors = err.errors
        else:  # a rule of the engine's: headed by the field typed where it named one left as it was
            typed = edited_keys(field_texts(base or live, measured), texts)
            errors = (edited_field_error(field_error(err, engine), typed),)
        return PlanOutcome(before=before, after=None, settings=None, errors=errors, before_error=before_error,
                           live_model_planned=live_planned)  # fmt: skip
    return PlanOutcome(before=before, after=after, settings=settings, before_error=before_error,
                       live_model_planned=live_planned, nodes=node_launch(settings), after_plan=_fresh_start(planned, settings, gpu_total_bytes, gpu_name, edited, draft,
                                               node_measures))  # fmt: skip


def edited_host_fit(
    outcome: PlanOutcome | None, host: HostMemory | None, node_gpus: int | None, host_origin: str
) -> HostTierFit | None:
    """The edit's host KV tier against the node's host memory (`host_tier_fit`; None: no tier asked for): the engine's
    ranks on this node those of the edit the node holds, the live tier given back at a restart before it asks."""
    after = outcome.after if outcome is not None else None
    if outcome is None or after is None or after.host_tier is None:
        return None
    live = outcome.before.host_tier if outcome.before is not None else None
    return host_tier_fit(after.host_tier, host, ranks_on_node=node_gpus, host_origin=host_origin, live_tier=live)
