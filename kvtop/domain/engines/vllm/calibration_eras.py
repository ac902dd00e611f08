"""vLLM's calibration eras: which fit of each term a release's profile is measured by (docs/calibration.md).

The activation peak and the non-torch growth change what they hold at named releases (V1 at v0.8.0, the sampler's
fewer copies at v0.17.0, PR #12126's growth at v0.7.0, FlashInfer's fusion workspace at v0.18.0); each era is one
fit, keyed `vllm.<term>.<era>`. Kept apart from the terms so the fits' table (calibration.py) and the term
functions read one selection.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras, era_for

# The profiled activation peak is mostly the sampler's copies of its float32 logits; their number fell
# in v0.17.0 (a 60 % lower peak at the same batch: llm-d-planner's version sweep, docs/calibration.md).
ACTIVATION_ERAS: Eras[str] = Eras((
    Era("", "v0", "V0: profile_run over max_num_batched_tokens, the sampler over max_num_seqs"),
    Era("0.8.0", "v1", "V1's _dummy_run and _dummy_sampler_run"),
    Era("0.17.0", "v17", "V1 from v0.17.0: the sampler's profile keeps fewer copies of its logits"),
))
# What `non_torch_memory` counts: at v0.6.4 (vllm#9352, until #10511) the whole device's used memory (every process on
# the GPU) less this process's torch-allocated bytes: the CUDA context, library handles, torch's pool left reserved (V0's
# FlashInfer workspace is a torch tensor, never in it); v0.4.x and v0.6.5-v0.6.6 against a baseline, the context
# outside (docs/engines/vllm.md, the non-torch bullet); from v0.7.0 its growth while profiling (PR #12126), in V1 before
# v0.11.0 with the TP group's NCCL and custom all-reduce init inside it (`calibration_snapshot.py`); from v0.18.0
# FlashInfer's all-reduce fusion workspace too (`fusion_workspace.py`: 1.5 GiB per rank at TP 2–8 on Hopper up to
# v0.21, each buffer at the 2 MiB allocation granularity from v0.22.0; counted apart from the fit).
NON_TORCH_ERAS: Eras[str] = Eras((
    Era("", "v06", "before v0.7: the device's used memory less this process's torch allocations (v0.6.4), or its "
                   "growth from a baseline (v0.4.x, v0.6.5-v0.6.6)"),
    Era("0.7.0", "v0", "PR #12126: the growth of non-torch memory while profiling"),
    Era("0.8.0", "v1", "V1: from v0.9.1 memory_profiling's growth from the worker's init snapshot (before v0.11.0 "
                       "with the TP group's NCCL init inside, counted apart: calibration_snapshot.py); v0.8.0–v0.9.0 "
                       "charge the device's used memory, the context inside (v0_charge.py), not fitted"),
    Era("0.18.0", "v18", "V1 from v0.18.0: the growth less FlashInfer's all-reduce fusion workspace"),
))
# The fit that stands in for an era's remainder where the corpus holds too few logs of the era to fit it: v0.18's
# growth less the workspace is V1's (NCCL's channels connected by the profile's first large all-reduces, CUDA's
# lazily loaded kernels): 0.55 GiB at TP 2 on H100 at v0.11.0, 0.57 at v0.19.0 once the workspace is taken off.
NON_TORCH_STAND_IN = {"vllm.non_torch.v18": "vllm.non_torch.v1"}
# The fits whose rows are the growth after the TP group's NCCL init: a start whose worker snapshots before that init
# (V1 before v0.11.0, `calibration_snapshot.py`) at TP × PP > 1 is judged, not fitted, and planned as the fit plus the
# init the context fit measures beyond one rank (`init_inside`). V0's fits keep the init in (their rows hold it alike).
INIT_APART = frozenset({"vllm.non_torch.v1"})


def activation_key(inputs: CalibrationInputs) -> str:
    return f"vllm.activation.{era_for(ACTIVATION_ERAS, inputs.version).value}"


def non_torch_key(inputs: CalibrationInputs) -> str:
    return f"vllm.non_torch.{era_for(NON_TORCH_ERAS, inputs.version).value}"
