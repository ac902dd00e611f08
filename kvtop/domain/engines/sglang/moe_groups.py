"""What SGLang's MoE communicator groups hold before the weights load at 1 < `--ep-size` < `--tp-size`, beyond what
ep 1 builds, by release: with or without routed experts (dense_ep.py, budget.py), `initialize_model_parallel` builds
the same groups (srt/distributed/parallel_state.py).

Read in the wheels 0.4.3, 0.4.6.post5, 0.4.9.post6, 0.4.10, 0.4.10.post1, 0.4.10.post2, 0.5.1, 0.5.1.post3, 0.5.2,
0.5.3, 0.5.9, 0.5.10, 0.5.10.post1, 0.5.11, 0.5.12, 0.5.15, 0.5.15.post1, 0.5.16 – 0.5.19, 0.5.22, 0.5.23:

* before 0.4.10: no MoE group; EP shapes no communicator.
* 0.4.10 – 0.5.1.post3: `moe_ep` (ranks strided by tp ÷ ep) and `moe_tp` (tp ÷ ep consecutive ranks) groups always
  built, `use_custom_allreduce=False`, pynccl on. ep 1 builds one pynccl communicator more than the TP group's (moe_tp
  of all tp ranks; moe_ep of one rank opens none: `GroupCoordinator` makes pynccl and the custom all-reduce only where
  world_size > 1), ep == tp the same count (moe_ep of all tp ranks), 1 < ep < tp two: one more than ep 1.
* 0.5.2 – 0.5.10.post1: `_MOE_EP = _TP` at ep == tp, `_MOE_TP = _TP` at ep 1 (0.5.9 :1801, :1826); at 1 < ep < tp
  both groups are new, pynccl and the custom all-reduce by default: two pynccl communicators (`PyNcclCommunicator`:
  `ncclCommInitRank` and a warm-up all-reduce at construction) and two custom all-reduces (`CustomAllreduce`: 8 MiB
  meta + buffer + rank data, peer-mapped) that ep 1 does not build.
* from 0.5.11: both groups `use_pynccl=False, use_custom_allreduce=False` (0.5.11 parallel_state.py :1985, :2013;
  0.5.23 :2909, :2939). What is left is torch's process group, whose NCCL communicator torch forms at the first
  collective on it (`init_process_group` is called without `device_id`, the switch that makes it eager: torch
  distributed_c10d.py's `init_process_group` docstring, read in torch 2.13); the first is the MoE layers' forward
  all-reduce (communication_op.py `moe_tensor_model_parallel_all_reduce` / `moe_expert_parallel_all_reduce`), after
  `init_memory_pool` sized the pool (model_runner.py `initialize`; the `--pre-warm-nccl` warm-up all-reduce runs on
  the TP group only, 0.5.11 :1195-1205). The pool is what ep 1 gets; the communicators come out of the reserve.

Why the two middle eras are not modelled: kvtop prices SGLang's TP group's communicators only inside the calibrated
pre-load context (calibration.py `sglang.context`: a fitted part per doubling of TP on NVLink GPUs, 48 logs, no
per-communicator constant), and NCCL's memory per communicator depends on its release (torch's pin), its channels and
NVLS on NVSwitch boards (vllm/nvls_buffers.py: 1.1 – 2.25 GiB at TP 8, set up at first use from NCCL 2.22): a
group of 2 or 4 ranks is not a TP group the fit saw, and no SGLang log at 1 < ep < tp is in the corpus to calibrate
it. Only the custom all-reduce's 3 × 8 MiB a group is fixed by the code. The default `--moe-a2a-backend none` is what
was read; `--moe-dp-size` (further groups) is not read by kvtop.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import LayoutError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec

# What the release opens before the weights at 1 < ep < tp beyond ep 1: None where nothing, else what it opens
EXTRA_GROUPS_ERAS: Eras[str | None] = Eras((
    Era("", None, "srt/distributed/parallel_state.py initialize_model_parallel builds no MoE group (0.4.3, "
        "0.4.6.post5, 0.4.9.post6 wheels)"),
    Era("0.4.10", "one more pynccl communicator than ep 1 (moe_ep of ep ranks and moe_tp of tp ÷ ep ranks, where ep 1 "
        "builds moe_tp of all tp ranks)",
        "srt/distributed/parallel_state.py initialize_model_parallel: moe groups always built, use_custom_allreduce=False "
        "(0.4.10, 0.4.10.post1, 0.4.10.post2, 0.5.1, 0.5.1.post3 wheels)"),
    Era("0.5.2", "two pynccl communicators and two custom all-reduces' buffers (moe_ep of ep ranks, moe_tp of tp ÷ ep "
        "ranks) that ep 1 does not build",
        "srt/distributed/parallel_state.py initialize_model_parallel: `_MOE_TP = _TP` at ep 1, `_MOE_EP = _TP` at ep == tp, "
        "else new groups with pynccl and custom all-reduce (0.5.2, 0.5.3, 0.5.9 :1801-1848, 0.5.10.post1 wheels)"),
    Era("0.5.11", None, "srt/distributed/parallel_state.py initialize_model_parallel: moe_ep and moe_tp with "
        "use_pynccl=False, use_custom_allreduce=False (0.5.11 :1985, :2013; 0.5.23 :2909, :2939); torch's NCCL "
        "communicator forms at their first collective, in the forward after the KV pool"),
))  # fmt: skip


def ep_inside_tp(settings: LaunchSettings) -> bool:
    """Whether both MoE groups span several ranks: 1 < ep < tp."""
    return 1 < settings.ep < settings.tp


def extra_groups_note(settings: LaunchSettings, version: ResolvedVersion) -> str:
    """The plan's note at 1 < ep < tp where the release's MoE groups hold nothing before the KV pool is sized;
    LayoutError ("not modelled") where they open communicators before the weights that ep 1 does not."""
    era = EXTRA_GROUPS_ERAS.era(version)
    ep, tp = settings.ep, settings.tp
    if era.value is not None:
        raise LayoutError(
            f"not modelled: at ep {ep} inside tp {tp} SGLang {version.label} opens {era.value} before the weights "
            f"load ({era.source}); kvtop prices the TP group's communicators only inside its calibrated context "
            f"(a part per doubling of TP), with no per-communicator constant and no log at 1 < ep < tp to fit one "
            f"(kvtop.domain.engines.sglang.moe_groups); at --ep-size 1 or {tp} it opens none of these",
            field="--ep",
        )
    return (
        f"--ep-size {ep} inside --tp-size {tp}: SGLang {version.label}'s MoE groups open no communicator before the "
        f"KV pool is sized ({era.source}): the pool is ep 1's"
    )


def moe_groups_note(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """`extra_groups_note` for a model with routed experts at 1 < ep < tp; None otherwise (a model without experts
    takes it through dense_ep.py)."""
    if model.moe is None or not ep_inside_tp(settings):
        return None
    return extra_groups_note(settings, version)
