"""Whether a vLLM launch runs async scheduling (docs/engines/vllm.md §3): the flag, else the release's default, which
`VllmConfig.__post_init__` turns off where the launch is incompatible with it (config/vllm.py, every wheel
v0.13.0-v0.33.0 read). The answer sets the batches in flight (`batching.concurrent_batches`) and, for a MoE's DP
group, where the DP padding synchronizes (`dp_gather.padding_on_nccl`, through disable_nccl_for_dp_synchronization).

The default path (`scheduler_config.async_scheduling is None`, from v0.14.0; False before) turns it off, in order:
- a pooling model (`runner_type == "pooling"`, from v0.20.0: config/vllm.py:798-809 at v0.20.0);
- speculative decoding of a method not EAGLE-type (`EagleModelTypes`: eagle, eagle3, extract_hidden_states and the
  MTP types, config/speculative.py:31-41 at v0.13.0, :33-49 at v0.17.1), less the methods later releases also keep:
  ngram_gpu (`NgramGPUTypes`, v0.18.0), dspark (v0.25.0), draft_model (v0.28.0), dflash (v0.31.0);
- `disable_padded_drafter_batch` in --speculative-config;
- an executor that does not support it (`mp`, `uni`, `external_launcher` only to v0.18.x; from v0.19.0
  `Executor.supports_async_scheduling()`, whose Ray executor was not read: named not modelled);
- v0.16.0 only: Mamba prefix caching (`mamba_cache_mode != "none"`, config/vllm.py:678 at v0.16.0; kvtop plans
  hybrids without it before v0.26.0: hybrid.mamba_prefix_caching);
- pipeline parallelism: PP > 1 at v0.14.0-v0.14.1 (config/vllm.py:590-596 at v0.14.0); not at v0.15.0-v0.30.x (the
  check is gone, config/vllm.py:589 at v0.15.0: the multiproc executor then keeps pp batches in flight); at PP > 1
  under the V1 model runner from v0.31.0 (config/vllm.py:1625-1633 at v0.31.0).
From v0.33.0 the speculative and PP checks apply under the V1 model runner only (`v1_async_sched_incompat`,
config/vllm.py:1651-1665). ROCm's DeepEP high-throughput DBO (v0.25.0 on) is not a GPU kvtop plans.
An explicit --async-scheduling where vLLM raises instead (PP > 1 at v0.11.1-v0.14.1, :563-567 at v0.14.0; the V1
model runner at PP > 1 from v0.33.0, :1675-1679) is refused as vLLM refuses it.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from kvtop.domain.deployment_flags import flag_json
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.eras import async_scheduling_default, runs_v2
from kvtop.domain.engines.vllm.hybrid import mamba_prefix_caching
from kvtop.domain.engines.vllm.pooling_runner import pooling_runner
from kvtop.domain.engines.vllm.spec_methods import is_mtp, stated_method
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.span import flag_text, switch_given

# PP > 1 turns the default off: always, never, under the V1 model runner
PpRule = Literal["off", "kept", "v1_runner"]


class AsyncOff(NamedTuple):
    """What turns a release's default async scheduling off (module docstring)."""

    pp: PpRule
    spec_kept: frozenset[str]  # speculative methods beyond the EAGLE-type ones that keep it on
    v1_runner_only: bool  # the speculative and PP checks apply under the V1 model runner only
    pooling: bool  # a pooling model turns it off
    mamba_prefix: bool  # Mamba prefix caching turns it off
    # the executor backends that keep it on; None: the executor class decides
    executors: frozenset[str] | None


_MP = frozenset({"mp", "uni", "external_launcher"})
_V014 = AsyncOff("off", frozenset(), False, False, False, _MP)
ASYNC_OFF_ERAS: Eras[AsyncOff | None] = Eras((
    Era("", None, "v0.13.0: async scheduling off unless asked (config/scheduler.py:133)"),
    Era("0.14.0", _V014, "config/vllm.py:588-628 at v0.14.0 (v0.14.1 the same)"),
    Era("0.15.0", _V014._replace(pp="kept"), "config/vllm.py:589-622 at v0.15.0: no PP check (v0.15.1 the same)"),
    Era("0.16.0", _V014._replace(pp="kept", mamba_prefix=True), "config/vllm.py:647-687 at v0.16.0: Mamba prefix "
                                                                "caching turns it off"),
    Era("0.17.0", _V014._replace(pp="kept"), "config/vllm.py:712-745 at v0.17.0: the Mamba check gone (v0.17.1 alike)"),
    Era("0.18.0", _V014._replace(pp="kept", spec_kept=frozenset({"ngram_gpu"})),
        "config/vllm.py:718-752 at v0.18.0: NgramGPUTypes (ngram_gpu) kept"),
    Era("0.19.0", _V014._replace(pp="kept", spec_kept=frozenset({"ngram_gpu"}), executors=None),
        "config/vllm.py:729 at v0.19.0: executor_class.supports_async_scheduling()"),
    Era("0.20.0", AsyncOff("kept", frozenset({"ngram_gpu"}), False, True, False, None),
        "config/vllm.py:798-809 at v0.20.0: a pooling model turns it off (v0.20.0-v0.24.0 alike)"),
    Era("0.25.0", AsyncOff("kept", frozenset({"ngram_gpu", "dspark"}), False, True, False, None),
        "config/vllm.py:992-1040 at v0.25.0: dspark kept (v0.25.0-v0.27.1 alike)"),
    Era("0.28.0", AsyncOff("kept", frozenset({"ngram_gpu", "dspark", "draft_model"}), False, True, False, None),
        "config/vllm.py:1185-1234 at v0.28.0: draft_model kept (v0.28.0-v0.30.0 alike)"),
    Era("0.31.0", AsyncOff("v1_runner", frozenset({"ngram_gpu", "dspark", "draft_model", "dflash"}), False, True,
                           False, None),
        "config/vllm.py:1576-1635 at v0.31.0: dflash kept; PP > 1 under the V1 model runner turns it off "
        "(v0.32.0 alike)"),
    Era("0.33.0", AsyncOff("v1_runner", frozenset({"ngram_gpu", "dspark", "draft_model", "dflash"}), True, True,
                           False, None),
        "config/vllm.py:1651-1719 at v0.33.0: v1_async_sched_incompat, the V1 model runner's alone; v0.34.0 "
        ":1598-1637 has no V1 runner (every launch runs V2: pooling, the executor and ROCm DeepEP DBO turn it off)"),
))  # fmt: skip
# Where an explicit --async-scheduling at PP > 1 stops vLLM (ValueError): always, or under the V1 model runner
EXPLICIT_PP_REFUSED: Eras[PpRule] = Eras((
    Era("", "kept", "not read before v0.11.1"),
    Era("0.11.1", "off", "config/vllm.py:532-536 at v0.12.0, :544-547 at v0.13.0, :563-567 at v0.14.0 (v0.11.1-"
                         "v0.14.1 alike): 'Async scheduling is not yet compatible with pipeline_parallel_size > 1'"),
    Era("0.15.0", "kept", "config/vllm.py:567-587 at v0.15.0: no PP check"),
    Era("0.33.0", "v1_runner", "config/vllm.py:1675-1679 at v0.33.0: 'not supported by the V1 model runner with "
                               "pipeline parallelism'; v0.34.0 :1598-1608 has no such check (no V1 runner)"),
))  # fmt: skip


def _eagle_type(method: str) -> bool:
    """EagleModelTypes: eagle, eagle3, extract_hidden_states and the MTP types (`mtp`, `*_mtp`)."""
    return method in ("eagle", "eagle3", "extract_hidden_states") or is_mtp(method)


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
    backend = (flag_text(settings, "distributed-executor-backend") or "mp").lower()
    if backend not in _MP:
        if rules.executors is None:
            raise UnsupportedModelError(f"vLLM {version.label}'s async scheduling under the {backend} executor "
                                        "(Executor.supports_async_scheduling) is not read", field="--async-scheduling")
        return f"the {backend} executor"
    if rules.mamba_prefix and model is not None and mamba_prefix_caching(model, settings, version):
        return "Mamba prefix caching"
    if _pp_blocks(rules.pp, settings.pp, v2):
        return "pipeline parallelism" + (" under the V1 model runner" if rules.pp == "v1_runner" else "")
    return None


def _padded_off(settings: LaunchSettings) -> bool:
    return flag_json(settings, "speculative-config").get("disable_padded_drafter_batch") is True


def async_scheduling(settings: LaunchSettings, version: ResolvedVersion,
                     model: ModelSpec | None = None) -> tuple[bool, str]:  # fmt: skip
    """(on, why): `--async-scheduling` / `--no-async-scheduling`, else the release's default less where vLLM turns it
    off for this launch (`ASYNC_OFF_ERAS`). `model`: the launch's model (pooling, hybrid, model runner); None reads
    the launch alone."""
    given = switch_given(settings, "async-scheduling")
    if given is not None:
        on, flag = given
        refused = EXPLICIT_PP_REFUSED.era(version)
        if on and _pp_blocks(refused.value, settings.pp, model is not None and runs_v2(version, model, settings)):
            raise InputError(f"vLLM {version.label} refuses --async-scheduling at pipeline parallel size "
                             f"{settings.pp} ({refused.source})", field="--async-scheduling")  # fmt: skip
        return on, flag
    era = async_scheduling_default(version)
    if not era.value:
        return False, f"off by default in vLLM {version.label}"
    rules = ASYNC_OFF_ERAS.era(version)
    off = _turned_off(rules.value, settings, version, model) if rules.value is not None else None
    if off is not None:
        return False, f"off: vLLM {version.label} turns its default off with {off} ({rules.source})"
    return True, f"on by default since v{era.since}"
