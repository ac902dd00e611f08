"""What SGLang does with `--ep-size` on a model without routed experts, by release (`EngineRules.expert_parallel_without_experts`).

A size that does not divide `--tp-size` is refused before this (flags.py `check_parallel`). Read in the wheels:

* 0.4.6.post5 (and, not read, the releases before 0.4.10.post2): `ModelRunner.initialize` builds the expert-location
  metadata for every model; a class without `get_model_config_for_expert_location` counts one dummy logical expert
  (managers/expert_location.py `ModelConfigForExpertLocation.init_dummy`), and `_init_common` asserts
  `num_physical_experts % ep_size == 0`: 1 % ep fails, a bare AssertionError at start.
* 0.4.10.post2 on (read 0.4.10.post2, 0.5.3, 0.5.9, 0.5.23): such a class has no metadata (eplb/expert_location.py
  `from_model_config` returns None), and EP only shapes the MoE communicator groups
  (distributed/parallel_state.py `initialize_model_parallel`). At ep == tp they cost what ep 1 costs: 0.4.10.post2
  builds a moe_ep group of all tp ranks and moe_tp groups of one rank where ep 1 builds the reverse; from 0.5.2
  `_MOE_EP = _TP` (0.5.9 :1801, 0.5.23 :2894 on CUDA) with one-rank moe_tp groups, where ep 1 has `_MOE_TP = _TP`
  and one-rank moe_ep groups. A one-rank group opens no communicator (`GroupCoordinator`: pynccl and custom
  all-reduce only where world_size > 1). At 1 < ep < tp both groups span several ranks, as on a model with experts:
  moe_groups.py says by release what they open before the weights (one or two pynccl communicators more than ep 1,
  custom all-reduce buffers from 0.5.2: not modelled; nothing from 0.5.11: planned as EP off, with both notes).
"""

from __future__ import annotations

from kvtop.domain.engines.sglang.moe_groups import ep_inside_tp, extra_groups_note
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import LayoutError
from kvtop.domain.launch import LaunchSettings

# True: the release asserts on any ep > 1 without experts; False: it starts (ep == tp holds nothing more)
REFUSES_ERAS: Eras[bool] = Eras((
    Era("", True, "managers/expert_location.py:170 _init_common `assert num_physical_experts % ep_size == 0` over "
        "init_dummy's one logical expert (0.4.6.post5 wheel)"),
    Era("0.4.10.post2", False, "eplb/expert_location.py from_model_config: None for a class without experts "
        "(0.4.10.post2, 0.5.3, 0.5.9, 0.5.23 wheels)"),
))  # fmt: skip

GROUPS_SOURCE = "srt/distributed/parallel_state.py initialize_model_parallel (0.5.9 :1801 `_MOE_EP = _TP`)"


def expert_parallel_without_experts(settings: LaunchSettings, version: ResolvedVersion) -> str:
    """The plan's note where this release starts `--ep-size` on a model without experts and EP holds nothing;
    LayoutError where it fails at start, or where what it builds (1 < ep < tp, moe_groups.py) is not modelled."""
    era = REFUSES_ERAS.era(version)
    ep = settings.ep
    if era.value:
        raise LayoutError(
            f"SGLang {version.label} fails at start with --ep-size {ep} on a model without experts: an AssertionError "
            f"at {era.source}",
            field="--ep",
        )
    head = f"--ep-size {ep} on a model without experts: planned as EP off; "
    # LayoutError where the release opens communicators, else its note (moe_groups.py)
    if ep_inside_tp(settings):
        return head + extra_groups_note(settings, version)
    return head + (
        f"SGLang {version.label} makes its MoE-EP group the TP group at ep == tp ({GROUPS_SOURCE}), so it holds no memory"
    )
