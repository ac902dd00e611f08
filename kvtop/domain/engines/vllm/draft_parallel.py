"""Parallel drafting for an EAGLE head (P-EAGLE): a draft whose depth the plan cannot assume (docs/engines/vllm.md §14).

`--speculative-config '{"method": "eagle3", …, "parallel_drafting": true}'` runs a head trained to draft every token in
one pass (SpeculativeConfig.parallel_drafting, config/speculative.py v0.16.0:123 … v0.26.0:165 … v0.33.0:511; its
slots `max_num_new_slots_for_drafting`, v0.26.0:1292-1305). Such a head is several layers deep, where kvtop's
one-layer EAGLE assumption holds for sequential heads (deployment.draft_kv_layers): amazon/GPT-OSS-20B-P-EAGLE's
start logs 'Add 4 padding layers, may waste at most 33.33% KV cache memory' (v1/core/kv_cache_utils.py:1227-1238 at
v0.26.0: its 4 draft layers join gpt-oss-20b's 12 full-attention ones, the sliding-window group padded to match).
The layers come from the draft's config alone, so without it the draft's KV is not sized: refused, naming
`--draft-model`. dflash / dspark draft in parallel by design and always read their config's depth (kvtop sizes them
as draft models). From v0.34.0 vLLM refuses the field for any other method (config/speculative.py:1688-1693:
'parallel_drafting is only supported by the dflash and dspark methods'). Before v0.16.0 SpeculativeConfig has no such
field (`FIELD_ERAS`): up to v0.9.0 vLLM refuses the key, from v0.9.1 it drops it and the head drafts one token a pass,
its layers (read from its config) still holding KV. For mtp and draft_model the refusal says what the method needs:
v0.16.0 runs the field in its EAGLE (eagle, eagle3, mtp) and draft_model proposers only, which need the draft's
`pard_token` or `ptd_token_id` (`PARD_TOKEN`). Every other method (ngram, ngram_gpu, suffix, medusa) takes the field
and builds nothing for it (`UNREAD_BY`): planned as without it, its term saying so (`unread_field`)."""

from __future__ import annotations

from enum import Enum

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.spec_methods import EAGLE3, is_mtp, spec_config
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.launch import LaunchSettings

PARALLEL_METHODS = frozenset({"dflash", "dspark"})  # parallel by design (config/speculative.py v0.26.0:963-964)
EAGLE_HEADS = frozenset({"eagle", EAGLE3})  # a head whose depth kvtop otherwise assumes one layer
# v0.16.0 runs the field in SpecDecodeBaseProposer, the base of its EAGLE (eagle, eagle3, mtp) and draft_model
# proposers, which needs the draft's `pard_token` or `ptd_token_id` (v1/spec_decode/eagle.py:89-101, :299-313)
PARD_TOKEN = ("v1/spec_decode/eagle.py v0.16.0:299-313: 'For parallel drafting, the draft model config must have "
              "`pard_token` or `ptd_token_id` specified in its config.json.'")  # fmt: skip
#: What vLLM builds for `parallel_drafting` under a method whose proposer does not read it (ngram, ngram_gpu, suffix,
#: medusa): no buffer, no layer, no refusal; only the scheduler's draft slots, never the profile or the KV pool. v0.16.0
#: reads the field in SpecDecodeBaseProposer alone (the EAGLE and draft_model proposers; gpu_model_runner.py :454-475).
#: v0.26.0 reserves (k − 1) slots a request from the scheduled tokens (`max_num_new_slots_for_drafting`,
#: config/speculative.py:1292-1305; config/vllm.py:1689-1733), v0.33.0 at each step's scheduling (config/speculative.py
#: :2057-2096, v1/core/sched/scheduler.py:721); the profile runs max_num_batched_tokens either way
#: (v1/worker/gpu_model_runner.py v0.26.0:504, v0.33.0:524), so the memory is the launch's without the field.
UNREAD_BY = ("config/speculative.py v0.26.0:1292-1305, v0.33.0:2057-2096 (the draft slots alone); "
             "v1/worker/gpu_model_runner.py v0.26.0:504, v0.33.0:524 (the profile's tokens)")  # fmt: skip

#: Where a draft's config can be given: `plan` alone takes one; `explain` (a log) and `probe` reach the same refusal
#: with no such option, so the refusal says which command can size it rather than a flag they lack.
DRAFT_CONFIG_GIVEN = ("`kvtop plan` sizes them given the draft's config (its --draft-model option); explain and probe "
                      "take no draft config, so they cannot")  # fmt: skip
#: Why a P-EAGLE head without its config is refused, in both eras that plan its layers (the field run or dropped)
UNSIZED_HEAD = ("is several layers deep (4 for amazon/GPT-OSS-20B-P-EAGLE), each holding KV beside the target's, and "
                "the draft's config is not known, so its layers are not sized (kvtop's one-layer EAGLE assumption "
                f"does not hold): {DRAFT_CONFIG_GIVEN}")  # fmt: skip


class ParallelField(str, Enum):
    """What a release does with `parallel_drafting` for a method outside PARALLEL_METHODS."""

    UNKNOWN_KEY = "unknown_key"  # no such field, the key refused: the engine does not start
    DROPPED = "dropped"  # no such field, the key dropped: the head drafts sequentially
    RUNS = "runs"  # the field runs
    REFUSED = "refused"  # the field refused for the method


FIELD_ERAS: Eras[ParallelField] = Eras((
    Era("", ParallelField.UNKNOWN_KEY, "config.py v0.9.0:14, :2269-2271 and :2395-2397: SpeculativeConfig is a "
        "standard dataclass, `cls(**dict_value)` raises TypeError on a key it has no field for"),
    Era("0.9.1", ParallelField.DROPPED, "config.py v0.9.1:27 and :2346-2348 … config/speculative.py v0.15.0:8 and "
        ":55-57: SpeculativeConfig is a pydantic dataclass, whose default extra='ignore' drops the key "
        "(engine/arg_utils.py v0.15.0:1342 `SpeculativeConfig(**self.speculative_config)`)"),
    Era("0.16.0", ParallelField.RUNS, "config/speculative.py `parallel_drafting: bool = False` (v0.16.0:123, "
        "v0.26.0:165, v0.33.0:511): any EAGLE or draft-model method"),
    Era("0.34.0", ParallelField.REFUSED, "config/speculative.py:1688-1693 (v0.34.0): ValueError for any method but "
        "dflash / dspark"),
))  # fmt: skip


def check_parallel_draft(settings: LaunchSettings, method: str | None, draft_known: bool,
                         version: ResolvedVersion) -> None:
    """Refuse a launch whose `parallel_drafting` head kvtop cannot size: an InputError where the release refuses
    the field (FIELD_ERAS), an UnsupportedModelError where the draft's config (its layer count) is not known."""
    if method is None or method in PARALLEL_METHODS or not spec_config(settings).parallel_drafting:
        return
    era = FIELD_ERAS.era(version)
    if era.value is ParallelField.UNKNOWN_KEY:
        raise InputError(f"vLLM {version.text} has no parallel_drafting field and refuses the key: the engine does "
                         f"not start ({era.source}); it runs from v0.16.0", field="--speculative-config")  # fmt: skip
    if era.value is ParallelField.REFUSED:
        raise InputError(f"vLLM refuses parallel_drafting with method '{method}' ({era.source})",
                         field="--speculative-config")  # fmt: skip
    if draft_known:
        return
    if era.value is ParallelField.DROPPED:
        if method in EAGLE_HEADS:
            raise UnsupportedModelError(
                f"parallel_drafting with method '{method}' at vLLM {version.text}: the release has no such field and "
                f"drops the key ({era.source}), so the head drafts one token a pass, but a head trained to draft in "
                f"parallel {UNSIZED_HEAD}", field="--speculative-config")  # fmt: skip
        return  # the key dropped: the launch runs as without it
    if is_mtp(method):
        raise UnsupportedModelError(
            f"parallel drafting with method '{method}': vLLM drafts the target's MTP layers in parallel only where "
            f"the target's config.json carries `pard_token` or `ptd_token_id`, else it does not start ({PARD_TOKEN}); "
            "kvtop does not model parallel MTP drafting: drop parallel_drafting to plan the MTP layers drafting one "
            "token a pass", field="--speculative-config")  # fmt: skip
    if method == "draft_model":
        raise UnsupportedModelError(
            "parallel drafting with method 'draft_model': a parallel draft model (PARD; vLLM needs `pard_token` or "
            f"`ptd_token_id` in its config.json, {PARD_TOKEN}) holds KV in each of its layers, counted from its "
            f"config, which is not known: {DRAFT_CONFIG_GIVEN}", field="--speculative-config")  # fmt: skip
    if method not in EAGLE_HEADS:
        return  # its proposer builds nothing for the field (UNREAD_BY): the memory is the launch's without it
    raise UnsupportedModelError(
        f"parallel drafting (P-EAGLE) with method '{method}': the draft head {UNSIZED_HEAD}",
        field="--speculative-config")  # fmt: skip


def unread_field(settings: LaunchSettings, method: str | None, version: ResolvedVersion) -> str:
    """What a draft-less method's term says of a `parallel_drafting` it was given: its proposer never reads the field
    (`UNREAD_BY`), or the release drops the key (`FIELD_ERAS`); "" where the field is unset or read."""
    if (method is None or method in PARALLEL_METHODS | EAGLE_HEADS or method == "draft_model" or is_mtp(method)
            or not spec_config(settings).parallel_drafting):  # fmt: skip
        return ""
    era = FIELD_ERAS.era(version)
    if era.value is ParallelField.RUNS:
        return (f"parallel_drafting is not read by vLLM's {method} proposer: only the scheduler's draft slots follow "
                f"it ({UNREAD_BY}), so the memory is the launch's without it")  # fmt: skip
    if era.value is ParallelField.DROPPED:
        return f"parallel_drafting: vLLM {version.text} has no such field and drops the key ({era.source})"
    return ""

