"""Whether a vLLM launch runs async scheduling (docs/engines/vllm.md §3): the flag, else the release's default, which
`VllmConfig.__post_init__` turns off where the launch is incompatible with it (config/vllm.py, every wheel
v0.13.0-v0.33.0 read). The answer sets the batches in flight (`batching.concurrent_batches`) and, for a MoE's DP
group, where the DP padding synchronizes (`dp_gather.padding_on_nccl`, through disable_nccl_for_dp_synchronization).

The default path (`scheduler_config.async_scheduling is None`, from v0.14.0; False before) turns it off, in order:
- a pooling model (`runner_type == "pooling"`, from v0.20.0: config/vllm.py:798-809 at v0.20.0);
- speculative decoding of a method not EAGLE-type (`EagleModelTypes`: eagle, eagle3, extract_hidden_states and the
  MTP types, config/speculative.py:31-41 at v0.13.0, :33-49 at v0.17.1; dflash wherever it exists, `_eagle_type`),
  less the methods later releases also keep: ngram_gpu (`NgramGPUTypes`, v0.18.0), dspark (v0.25.0), draft_model
  (v0.28.0), dflash named (v0.31.0);
- `disable_padded_drafter_batch` in --speculative-config;
- an executor that does not support it (`ASYNC_EXECUTORS`: `mp`, `uni`, `external_launcher` by name to v0.18.x; from
  v0.19.0 `Executor.supports_async_scheduling()`: Ray's RayDistributedExecutor keeps Executor's False through
  v0.20.x, RayExecutorV2, a MultiprocExecutor, says True and is `ray` from v0.21.0 (by default) and alone from
  v0.33.0; `VLLM_USE_RAY_V2_EXECUTOR_BACKEND` on the launch line (flags.py env_read) picks between the two where
  the release reads it, v0.20.0-v0.32.x (`RAY_V2_ENV_ERAS`); a backend given as a class is not read);
- v0.16.0 only: Mamba prefix caching (`mamba_cache_mode != "none"`, config/vllm.py:678 at v0.16.0; kvtop plans
  hybrids without it before v0.26.0: hybrid.mamba_prefix_caching);
- pipeline parallelism: PP > 1 at v0.14.0-v0.14.1 (config/vllm.py:590-596 at v0.14.0); not at v0.15.0-v0.30.x (the
  check is gone, config/vllm.py:589 at v0.15.0: the multiproc executor then keeps pp batches in flight); at PP > 1
  under the V1 model runner from v0.31.0 (config/vllm.py:1625-1633 at v0.31.0).
From v0.33.0 the speculative and PP checks apply under the V1 model runner only (`v1_async_sched_incompat`,
config/vllm.py:1651-1665). ROCm's DeepEP high-throughput DBO (v0.25.0 on) is not a GPU kvtop plans.
An explicit --async-scheduling where vLLM raises instead (PP > 1 at v0.10.0-v0.14.1: engine/arg_utils.py
create_engine_config to v0.11.0, config/vllm.py from v0.11.1, :563-567 at v0.14.0; the V1
model runner at PP > 1 from v0.31.0 (its `_validate_v1_model_runner`), :1676-1680 at v0.33.0; an executor that does not support it from v0.11.1, the same
branch's `if not executor_supports_async_sched: raise ValueError`; a speculative method it does not take, or
disable_padded_drafter_batch, `EXPLICIT_SPEC_ERAS`: any --speculative-config at v0.10.0-v0.11.0, the EAGLE-type
methods plus a list that grows by release from v0.11.1, the V1 model runner's alone at v0.33.0, none at v0.34.0)
is refused as vLLM refuses it, in its words and order.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from kvtop.domain.deployment_flags import flag_json
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.engines.vllm.eras import ASYNC_SCHEDULING_ERAS
from kvtop.domain.engines.vllm.hybrid import mamba_prefix_caching
from kvtop.domain.engines.vllm.pooling_runner import pooling_runner
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.engines.vllm.spec_methods import EAGLE3, is_mtp, stated_method
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.launch_tokens import switch_in
from kvtop.domain.model import ModelSpec
from kvtop.domain.redact import quoted
from kvtop.domain.span import flag_text

# PP > 1 turns the default off: always, never, under the V1 model runner
PpRule = Literal["off", "kept", "v1_runner"]


class AsyncOff(NamedTuple):
    """What turns a release's default async scheduling off (module docstring)."""

    pp: PpRule
    spec_kept: frozenset[str]  # speculative methods beyond the EAGLE-type ones that keep it on
    v1_runner_only: bool  # the speculative and PP checks apply under the V1 model runner only
    pooling: bool  # a pooling model turns it off
    mamba_prefix: bool  # Mamba prefix caching turns it off


_MP = frozenset({"mp", "uni", "external_launcher"})
_V014 = AsyncOff("off", frozenset(), False, False, False)
ASYNC_OFF_ERAS: Eras[AsyncOff | None] = Eras((
    Era("", None, "v0.13.0: async scheduling off unless asked (config/scheduler.py:133)"),
    Era("0.14.0", _V014, "config/vllm.py:588-628 at v0.14.0 (v0.14.1 the same)"),
    Era("0.15.0", _V014._replace(pp="kept"), "config/vllm.py:589-622 at v0.15.0: no PP check (v0.15.1 the same)"),
    Era("0.16.0", _V014._replace(pp="kept", mamba_prefix=True), "config/vllm.py:647-687 at v0.16.0: Mamba prefix "
                                                                "caching turns it off"),
    Era("0.17.0", _V014._replace(pp="kept"), "config/vllm.py:712-745 at v0.17.0: the Mamba check gone (v0.17.1 alike)"),
    Era("0.18.0", _V014._replace(pp="kept", spec_kept=frozenset({"ngram_gpu"})),
        "config/vllm.py:718-752 at v0.18.0: NgramGPUTypes (ngram_gpu) kept"),
    Era("0.19.0", _V014._replace(pp="kept", spec_kept=frozenset({"ngram_gpu"})),
        "config/vllm.py:729 at v0.19.0: executor_class.supports_async_scheduling() (ASYNC_EXECUTORS)"),
    Era("0.20.0", AsyncOff("kept", frozenset({"ngram_gpu"}), False, True, False),
        "config/vllm.py:798-809 at v0.20.0: a pooling model turns it off (v0.20.0-v0.24.0 alike)"),
    Era("0.25.0", AsyncOff("kept", frozenset({"ngram_gpu", "dspark"}), False, True, False),
        "config/vllm.py:992-1040 at v0.25.0: dspark kept (v0.25.0-v0.27.1 alike)"),
    Era("0.28.0", AsyncOff("kept", frozenset({"ngram_gpu", "dspark", "draft_model"}), False, True, False),
        "config/vllm.py:1185-1234 at v0.28.0: draft_model kept (v0.28.0-v0.30.0 alike)"),
    Era("0.31.0", AsyncOff("v1_runner", frozenset({"ngram_gpu", "dspark", "draft_model", "dflash"}), False, True,
                           False),
        "config/vllm.py:1576-1635 at v0.31.0: dflash kept; PP > 1 under the V1 model runner turns it off "
        "(v0.32.0 alike)"),
    Era("0.33.0", AsyncOff("v1_runner", frozenset({"ngram_gpu", "dspark", "draft_model", "dflash"}), True, True,
                           False),
        "config/vllm.py:1651-1719 at v0.33.0: v1_async_sched_incompat, the V1 model runner's alone; v0.34.0 "
        ":1598-1637 has no V1 runner (every launch runs V2: pooling, the executor and ROCm DeepEP DBO turn it off)"),
))  # fmt: skip
# The executor backends that keep async scheduling on (default or asked), and whether the executor class decides (a
# backend given as a class then not read); None: not read
_NAMED_BACKENDS = frozenset({"mp", "uni", "external_launcher", "ray"})
_WITH_RAY = _MP | {"ray"}
ASYNC_EXECUTORS: Eras[tuple[frozenset[str], bool] | None] = Eras((
    Era("", None, "not read before v0.11.1"),
    Era("0.11.1", (_MP, False), "config/vllm.py:364-398 at v0.11.1 (v0.11.2 alike), :523-557 at v0.12.0, :535-569 at "
                                "v0.13.0, :555-586 at v0.14.0, :685-716 at v0.18.0: executor_backend in mp, uni, "
                                "external_launcher"),
    Era("0.19.0", (_MP, True), "config/vllm.py:727-729 at v0.19.0: executor_class.supports_async_scheduling(); ray "
                               "is v1/executor/ray_executor.py RayDistributedExecutor, which keeps Executor's False "
                               "(abstract.py:357-361); v0.20.0 and v0.20.1 alike (abstract.py:60-68: "
                               "VLLM_USE_RAY_V2_EXECUTOR_BACKEND, envs.py default 0 through v0.20.2)"),
    Era("0.21.0", (_WITH_RAY, True), "v0.21.0 envs.py VLLM_USE_RAY_V2_EXECUTOR_BACKEND default 1 (unset; the launch "
                                     "line's value: RAY_V2_ENV_ERAS): ray is ray_executor_v2.py:205 RayExecutorV2, a "
                                     "MultiprocExecutor (supports_async_scheduling True, multiproc_executor.py:497-498); "
                                     "v0.22.0, v0.24.0, v0.29.0-v0.32.0 alike"),
    Era("0.33.0", (_WITH_RAY, True), "v0.33.0 v1/executor/abstract.py:77-79: ray is RayExecutorV2 alone (v0.34.0 "
                                     ":78-80 alike)"),
))  # fmt: skip
# `VLLM_USE_RAY_V2_EXECUTOR_BACKEND` (envs.py `bool(int(os.getenv(...)))`): `ray` is RayExecutorV2 where true,
# RayDistributedExecutor where false (v1/executor/abstract.py:61-66 `Executor.get_class`); by release its default
# (None: no file reads it, `ray` the table's alone)
RAY_V2_ENV = "VLLM_USE_RAY_V2_EXECUTOR_BACKEND"
RAY_V2_ENV_ERAS: Eras[bool | None] = Eras((
    Era("", None, "not in envs.py before v0.20.0 (v0.19.0, v0.19.1 wheels): ray is RayDistributedExecutor"),
    Era("0.20.0", False, "envs.py default '0' at v0.20.0-v0.20.2; abstract.py:61-66 at v0.20.0"),
    Era("0.21.0", True, "envs.py default '1' at v0.21.0-v0.32.0 (wheels read); abstract.py:61-66 at v0.26.0, v0.27.1"),
    Era("0.33.0", None, "v0.33.0 envs.py no longer defines it: abstract.py:77-79 RayExecutorV2 alone"),
))  # fmt: skip
# Where an explicit --async-scheduling at PP > 1 stops vLLM (ValueError): always, or under the V1 model runner
EXPLICIT_PP_REFUSED: Eras[PpRule] = Eras((
    Era("", "kept", "no --async-scheduling before v0.10.0 (v0.9.2 engine/arg_utils.py has no async_scheduling)"),
    Era("0.10.0", "off", "engine/arg_utils.py:1144-1146 at v0.10.0, :1216-1218 at v0.10.1, :1291-1293 at v0.10.2, "
                         ":1295-1297 at v0.11.0 (create_engine_config): 'Async scheduling is not supported with "
                         "pipeline-parallel-size > 1.'"),
    Era("0.11.1", "off", "config/vllm.py:532-536 at v0.12.0, :544-547 at v0.13.0, :563-567 at v0.14.0 (v0.11.1-"
                         "v0.14.1 alike): 'Async scheduling is not yet compatible with pipeline_parallel_size > 1'"),
    Era("0.15.0", "kept", "config/vllm.py:567-587 at v0.15.0: no PP check"),
    Era("0.31.0", "v1_runner", "config/vllm.py:3117-3124 at v0.31.0, :2967-2974 at v0.32.0 "
                               "(_get_v1_model_runner_unsupported_features, vllm#45014): 'Model Runner V1 does not "
                               "support: pipeline parallelism with async scheduling' (_validate_v1_model_runner, "
                               ":2054 at v0.31.0)"),
    Era("0.33.0", "v1_runner", "config/vllm.py:1676-1680 at v0.33.0: 'not supported by the V1 model runner with "
                               "pipeline parallelism'"),
    Era("0.34.0", "kept", "config/vllm.py:1598-1609 at v0.34.0: no PP check"),
))  # fmt: skip


class ExplicitSpec(NamedTuple):
    """What an explicit --async-scheduling takes beside --speculative-config at a release (vLLM's ValueError words)."""

    taken: frozenset[str] | None  # the methods beyond the EAGLE-type ones it takes; None: no method (any refused)
    refusal: str  # vLLM's words refusing the method ({method}: the launch's)
    padded: str | None  # vLLM's words refusing disable_padded_drafter_batch=True; None: not checked
    v1_runner_only: bool  # checked under the V1 model runner only, before PP (v1_async_sched_incompat)


_ONLY = "Currently, async scheduling is only supported with EAGLE/MTP{} kind of speculative decoding"
_PADDED = "Async scheduling is not compatible with disable_padded_drafter_batch=True."
_V1 = "Async scheduling is not supported by the V1 model runner with {}."
# An explicit --async-scheduling with a --speculative-config, by release (None: no check). The taken methods differ
# from the default's (`AsyncOff.spec_kept`): draft_model from v0.16.0 here, v0.28.0 there. Read in every wheel
# v0.11.1-v0.34.0 (config/vllm.py, the `if self.scheduler_config.async_scheduling:` branch, hashed per release).
EXPLICIT_SPEC_ERAS: Eras[ExplicitSpec | None] = Eras((
    Era("", None, "no --async-scheduling before v0.10.0"),
    Era("0.10.0", ExplicitSpec(None, "Currently, speculative decoding is not supported with async scheduling.", None,
                               False),
        "engine/arg_utils.py:1148-1153 at v0.10.0, :1220-1225 at v0.10.1, :1295-1300 at v0.10.2, :1299-1304 at "
        "v0.11.0 (EngineArgs.create_engine_config: any speculative_config)"),
    Era("0.11.1", ExplicitSpec(frozenset(), _ONLY.format(""), "async scheduling for EAGLE/MTP kind of speculative "
                               "decoding is enabled, but disable_padded_drafter_batch=True disable_padded_drafter_batch"
                               "=True is not supported for this situation now. please set disable_padded_drafter_batch"
                               "=Fasle", False),
        "config/vllm.py:380-393 at v0.11.1 (v0.11.2 alike), :539-552 at v0.12.0, :551-564 at v0.13.0: EagleModelTypes "
        "only"),
    Era("0.14.0", ExplicitSpec(frozenset(), _ONLY.format("") + ".", _PADDED, False),
        "config/vllm.py:571-581 at v0.14.0 (v0.14.1 alike), :572-582 at v0.15.0 (v0.15.1 alike): EagleModelTypes only"),
    Era("0.16.0", ExplicitSpec(frozenset({"draft_model"}), _ONLY.format("/Draft Model") + ".", _PADDED, False),
        "config/vllm.py:622-635 at v0.16.0, :692-705 at v0.17.0 (v0.17.1 alike): + draft_model"),
    Era("0.18.0", ExplicitSpec(frozenset({"draft_model", "ngram_gpu"}), _ONLY.format("/Draft Model/NGram GPU"),
                               _PADDED, False),
        "config/vllm.py:696-711 at v0.18.0, :717-732 at v0.18.1, :735-750 at v0.19.0, :778-793 at v0.20.0, :824-839 "
        "at v0.21.0, :915-930 at v0.22.0, :944-959 at v0.24.0 (v0.18.0-v0.24.0 alike): + NgramGPUTypes"),
    Era("0.25.0", ExplicitSpec(frozenset({"draft_model", "ngram_gpu", "dspark"}),
                               _ONLY.format("/Draft Model/NGram GPU/DSpark"), _PADDED, False),
        "config/vllm.py:971-987 at v0.25.0, :1038-1054 at v0.26.0, :1164-1180 at v0.28.0, :1417-1433 at v0.30.0 "
        "(v0.25.0-v0.30.0 alike): + dspark"),
    Era("0.31.0", ExplicitSpec(frozenset({"draft_model", "ngram_gpu", "dspark", "dflash"}),
                               _ONLY.format("/Draft Model/NGram GPU/DSpark/DFlash"), _PADDED, False),
        "config/vllm.py:1554-1571 at v0.31.0, :1563-1580 at v0.32.0: + dflash (in the words; EAGLE-type already: "
        "_eagle_type)"),
    Era("0.33.0", ExplicitSpec(frozenset({"draft_model", "ngram_gpu", "dspark", "dflash"}),
                               _V1.format("{method}-based speculative decoding"),
                               _V1.format("disable_padded_drafter_batch=True"), True),
        "config/vllm.py:1651-1666, :1676-1680 at v0.33.0: v1_async_sched_incompat, the V1 model runner's alone, "
        "before its PP check"),
    Era("0.34.0", None, "config/vllm.py:1598-1609 at v0.34.0: no speculative check"),
))  # fmt: skip


def _eagle_type(method: str) -> bool:
    """EagleModelTypes: eagle, eagle3, extract_hidden_states, the MTP types (`mtp`, `*_mtp`) and dflash
    (DFlashModelTypes, in EagleModelTypes wherever the method exists: config/speculative.py:55-58 at v0.22.0, :68-72
    at v0.32.0, read v0.20.2-v0.34.0; no release before v0.17.1's has dflash)."""
    return method in ("eagle", EAGLE3, "extract_hidden_states", "dflash") or is_mtp(method)


def _pp_blocks(rule: PpRule, pp: int, v2: bool) -> bool:
    return pp > 1 and (rule == "off" or rule == "v1_runner" and not v2)


def _turned_off(rules: AsyncOff, settings: LaunchSettings, version: ResolvedVersion,
                model: ModelSpec | None) -> str | None:  # fmt: skip
    """Why vLLM turns the default off for this launch (None: it stays on)."""

    v2 = model is not None and runs_v2(version, model, settings)
    checked = not (rules.v1_runner_only and v2)
    if rules.pooling and pooling_runner(settings.flags, model, version):
        return "a pooling model"
    method = stated_method(settings)
    if checked and method is not None and not _eagle_type(method) and method not in rules.spec_kept:
        return f"{method}-based speculative decoding"
    if checked and method is not None and _padded_off(settings):
        return "disable_padded_drafter_batch"
    backend = _backend(settings)
    if not _executor_keeps(backend, version, settings):
        return f"the {backend} executor{_ray_v2_note(settings, version)}"
    if rules.mamba_prefix and model is not None and mamba_prefix_caching(model, settings, version):
        return "Mamba prefix caching"
    if _pp_blocks(rules.pp, settings.pp, v2):
        return "pipeline parallelism" + (" under the V1 model runner" if rules.pp == "v1_runner" else "")
    return None


def _backend(settings: LaunchSettings) -> str:
    return (flag_text(settings, "distributed-executor-backend") or "mp").lower()


def _executor_keeps(backend: str, version: ResolvedVersion, settings: LaunchSettings) -> bool:
    """Whether the executor `backend` keeps async scheduling at this release (`ASYNC_EXECUTORS`; True where not
    read; `ray` as the launch's VLLM_USE_RAY_V2_EXECUTOR_BACKEND picks its class); a backend given as a class where
    the class decides is not read: UnsupportedModelError."""
    read = ASYNC_EXECUTORS.at(version)
    if read is None:
        return True
    ray_v2 = _ray_v2_stated(settings, version)
    if backend == "ray" and ray_v2 is not None:
        return ray_v2  # RayExecutorV2 says True, RayDistributedExecutor Executor's False
    keeps, by_class = read
    if by_class and backend not in _NAMED_BACKENDS:
        raise UnsupportedModelError(f"vLLM {version.label}'s async scheduling under the executor class {backend} "
                                    "(Executor.supports_async_scheduling) is not read", field="--async-scheduling")
    return backend in keeps


def _ray_v2_note(settings: LaunchSettings, version: ResolvedVersion) -> str:
    """Where the launch's VLLM_USE_RAY_V2_EXECUTOR_BACKEND picked `ray`'s class: its value and the release's reading."""
    if _ray_v2_stated(settings, version) is None:
        return ""
    return f"; {RAY_V2_ENV}={settings.flags.get(RAY_V2_ENV)} in the launch: {RAY_V2_ENV_ERAS.era(version).source}"


def _ray_v2_stated(settings: LaunchSettings, version: ResolvedVersion) -> bool | None:
    """Whether the launch's VLLM_USE_RAY_V2_EXECUTOR_BACKEND makes `ray` RayExecutorV2 (None: unset, or a release
    that does not read it); vLLM reads it `bool(int(value))`: any other value stops it (InputError)."""
    value = settings.flags.get(RAY_V2_ENV)
    if value is None or RAY_V2_ENV_ERAS.at(version) is None:
        return None
    try:
        return bool(int(str(value).strip()))
    except ValueError:
        raise InputError(f"vLLM {version.label} reads it as a whole number (envs.py bool(int(value))), got "
                         f"{quoted(value)}", field=RAY_V2_ENV) from None


def _padded_off(settings: LaunchSettings) -> bool:
    return flag_json(settings, "speculative-config").get("disable_padded_drafter_batch") is True


def _refuse_spec(spec: Era[ExplicitSpec | None], settings: LaunchSettings, version: ResolvedVersion,
                v2: bool) -> None:  # fmt: skip
    """Raise vLLM's refusal where an explicit --async-scheduling does not take the launch's speculative decoding
    (`EXPLICIT_SPEC_ERAS`; `v2`: the launch runs the V2 model runner)."""
    rule = spec.value
    if rule is None or settings.flags.get("speculative-config") is None or rule.v1_runner_only and v2:
        return
    method = stated_method(settings)
    if rule.taken is None:
        words = rule.refusal
    elif method is not None and not _eagle_type(method) and method not in rule.taken:
        words = rule.refusal.format(method=method)
    elif method is not None and rule.padded is not None and _padded_off(settings):
        words = rule.padded
    else:
        return
    named = f" method {method}" if method is not None else ""
    raise InputError(f"vLLM {version.label} refuses --async-scheduling with --speculative-config{named}: '{words}' "
                     f"({spec.source})", field="--async-scheduling")


def async_scheduling(settings: LaunchSettings, version: ResolvedVersion,
                     model: ModelSpec | None = None) -> tuple[bool, str]:  # fmt: skip
    """(on, why): `--async-scheduling` / `--no-async-scheduling`, else the release's default less where vLLM turns it
    off for this launch (`ASYNC_OFF_ERAS`). `model`: the launch's model (pooling, hybrid, model runner); None reads
    the launch alone."""
    given = switch_in(settings.flags, "async-scheduling")
    if given is not None:
        refuse_explicit_async(settings, version, model)
        return given
    era = ASYNC_SCHEDULING_ERAS.era(version)
    if not era.value:
        return False, f"off by default in vLLM {version.label}"
    rules = ASYNC_OFF_ERAS.era(version)
    off = _turned_off(rules.value, settings, version, model) if rules.value is not None else None
    if off is not None:
        return False, f"off: vLLM {version.label} turns its default off with {off} ({rules.source})"
    return True, f"on by default since v{era.since}"


def refuse_explicit_async(settings: LaunchSettings, version: ResolvedVersion, model: ModelSpec | None) -> None:
    """vLLM's refusals of an explicit --async-scheduling (PP, speculative method, executor), in vLLM's order; the
    budget calls it for every plan (the windowed specs and a MoE's DP group read `async_scheduling` anyway, other
    plans would pass it unread). `model` None: the launch alone (the V1 model runner's checks apply)."""
    given = switch_in(settings.flags, "async-scheduling")
    if given is None or not given[0]:
        return
    v2 = model is not None and runs_v2(version, model, settings)
    spec = EXPLICIT_SPEC_ERAS.era(version)
    if spec.value is not None and spec.value.v1_runner_only:
        _refuse_spec(spec, settings, version, v2)
    refused = EXPLICIT_PP_REFUSED.era(version)
    if _pp_blocks(refused.value, settings.pp, v2):
        raise InputError(f"vLLM {version.label} refuses --async-scheduling at pipeline parallel size "
                         f"{settings.pp} ({refused.source})", field="--async-scheduling")  # fmt: skip
    if spec.value is not None and not spec.value.v1_runner_only:
        _refuse_spec(spec, settings, version, v2)
    if not _executor_keeps(_backend(settings), version, settings):
        raise InputError(f"vLLM {version.label} refuses --async-scheduling under the {_backend(settings)} "
                         f"executor ({era_for(ASYNC_EXECUTORS, version).source}{_ray_v2_note(settings, version)})",
                         field="--async-scheduling")  # fmt: skip
