"""What V0 before v0.3.1 charged as its profile's peak (docs/engines/vllm.md §2, "Before v0.6.0").

vllm/worker/worker.py `profile_num_available_blocks` (`determine_num_available_blocks` from v0.4.1) sizes the pool as
(total × gpu_memory_utilization − peak) // block bytes after `profile_run` over max(max_model_len, 2048) tokens and
256 seqs (EngineArgs and SchedulerConfig, unchanged v0.2.0–v0.5.5), block 16, 4 GiB of CPU swap. What `peak` is
changed twice, read in the wheels of every release from v0.2.0 to v0.6.3:

- v0.2.0–v0.2.4: `torch.cuda.max_memory_allocated()` after `reset_peak_memory_stats` (v0.2.0 worker.py:79-80,
  119-125; v0.2.4 :93): torch's allocations only, the weights and the profile's tensors. The CUDA context, library
  workspaces, NCCL and torch's reserved-but-free pool are not charged: non-torch memory is 0 by the code.
- v0.2.5–v0.3.0: total − free from `torch.cuda.mem_get_info()` after the profile (v0.2.5 worker.py:91-92; v0.3.0
  :121-122), with no `empty_cache` between: the device's whole used memory, so the CUDA context (and NCCL, and any
  other process on the GPU) is charged beside V0's growth: the growth assumed (no fit measures it:
  `calibration_eras.NOT_FITTED`) plus the context fit. At TP > 1 in v0.2.5 the
  all-reduce's inputs torch still held (record_stream, until vllm#2151 in v0.2.6) are charged too: a growth with no
  form kvtop can state, so such a plan is refused by name (`ALL_REDUCE_HELD_ERAS`, `context_charged`).
- v0.3.1–v0.6.3: init_gpu_memory − free, init_gpu_memory read after set_device and `empty_cache` (v0.3.1
  worker.py:88-89, 131-134; v0.5.5 :169-170, 227-230; v0.6.3 :171, 228-231): the context outside, the form the v06
  fit measures (`calibration_eras.NON_TORCH_ERAS`, which holds from here on).

V1 brought the device-wide form back for three releases: v0.8.0–v0.9.0's `determine_available_memory`
(v1/worker/gpu_worker.py, v0.8.0 :139-186, v0.8.5.post1 :165-212, v0.9.0 :167-214) adds `total − free − torch's
allocated bytes` after the profile and `empty_cache` to torch's peak, so the CUDA context and the TP group's NCCL and
custom all-reduce are charged; v0.9.1 (:201-224) charges `memory_profiling`'s growth from the init snapshot. Below
compute capability 8.0 those releases run V0, which charges the growth (`profile_charge`'s engine). The V1 that
VLLM_USE_V1=1 opts into at v0.6.5–v0.7.3 charges v0.8.0's form (v1_opt_in.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.engines.versions import Era, Eras, ReleaseDate, ResolvedVersion
from kvtop.domain.engines.vllm.v0_backends import backend_runs_v0
from kvtop.domain.engines.vllm.v1_opt_in import V1_OPT_IN_ERAS, use_v1_env
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.wording import gib

ProfileCharge = Literal["torch_peak", "device_used", "baseline"]
PROFILE_CHARGE_ERAS: Eras[ProfileCharge] = Eras((
    Era("", "torch_peak", "v0.2.0 vllm/worker/worker.py:79-80, 119-125: peak = torch.cuda.max_memory_allocated()"),
    Era("0.2.5", "device_used", "v0.2.5 vllm/worker/worker.py:91-92 (v0.3.0 :121-122): peak = total − free after "
        "the profile, the CUDA context inside"),
    Era("0.3.1", "baseline", "v0.3.1 vllm/worker/worker.py:88-89, 131-134 (through v0.6.3 :171, 228-231): peak = "
        "init_gpu_memory − free, the CUDA context outside"),
    Era("0.8.0", "device_used", "V1 v0.8.0 vllm/v1/worker/gpu_worker.py:139-186 (v0.8.5.post1 :165-212, v0.9.0 "
        ":167-214): peak = torch's allocated peak + (total − free − torch's allocated bytes) after the profile and "
        "empty_cache, the CUDA context inside"),
    Era("0.9.1", "baseline", "v0.9.1 vllm/v1/worker/gpu_worker.py:201-224: memory_profiling's growth from the "
        "worker's init snapshot, the CUDA context outside"),
))  # fmt: skip
# V0, run below compute capability 8.0 by v0.8.0–v0.10.1.1 ('Compute Capability < 8.0 is not supported by the
# V1 Engine. Falling back to V0': engine/arg_utils.py:1475 at v0.8.0, :1350-1356 at v0.8.5.post1, :1248-1252 at
# v0.9.0, :1400-1405 at v0.10.1.1), measures the growth from its baseline snapshot (worker/worker.py's
# memory_profiling).
V1_FROM_CAPABILITY = (8, 0)
# The releases whose V1 default still falls back to V0 below compute capability 8.0: v0.8.0 to v0.10.1.1 (vLLM
# 0.10.1.1 prints the fallback on T4s: search-index id 70080757471; the oracle's check at :1400-1405 of the PyPI wheel
# vllm-0.10.1.1-cp38-abi3-manylinux1_x86_64's engine/arg_utils.py). v0.10.2 dropped the check: its `_is_v1_supported_oracle` (PyPI wheel
# vllm-0.10.2-cp38-abi3-manylinux1_x86_64, engine/arg_utils.py:1431-1570) asks no compute capability, so a T4 runs V1
# ('Initializing a V1 LLM engine (v0.10.2)', `kyaushev-…-t4-v0102`); v0.11.0 removed the V0 engine (vllm#25033 "[V0
# Deprecation] Remove LLMEngine"; huggingface/optimum-neuron#1027).
V0_FALLBACK_ERAS: Eras[bool] = Eras((
    Era("", False, "before v0.8.0 V0 is the default engine on every GPU"),
    Era("0.8.0", True, "engine/arg_utils.py `_is_v1_supported_oracle`: 'Compute Capability < 8.0 is not supported by "
                       "the V1 Engine. Falling back to V0' (:1475 at v0.8.0, :1350-1356 at v0.8.5.post1, "
                       ":1400-1405 at v0.10.1.1)"),
    Era("0.10.2", False, "v0.10.2 engine/arg_utils.py:1431-1570: `_is_v1_supported_oracle` asks no compute capability"),
))  # fmt: skip
# `VLLM_USE_V1=0` on the launch turns V1 off in the releases that still hold V0 (v0.10.2 engine/arg_utils.py:1121-1136
# `create_engine_config`: try_v1 = envs.VLLM_USE_V1 or not set; envs.py:745-746 `bool(int(os.getenv("VLLM_USE_V1",
# "1")))`): `cnubigdata-…-v0102-v0` sets it in its notebook and starts 'a V0 LLM engine (v0.10.2)' on a T4.
V0_OPT_OUT_ERAS: Eras[bool] = Eras((
    Era("", False, "before v0.8.0 V0 is the default engine; VLLM_USE_V1=0 changes nothing"),
    Era("0.8.0", True, "engine/arg_utils.py create_engine_config: VLLM_USE_V1=0 disables V1 (v0.10.2 :1121-1136)"),
    Era("0.11.0", False, "vllm#25033: the V0 engine removed"),
))  # fmt: skip


def falls_back_to_v0(
    version: ResolvedVersion, capability: tuple[int, int] | None, flags: Mapping[str, object] | None = None
) -> bool:
    """Whether a V1-era release runs V0: below compute capability 8.0 where the release still falls back
    (`V0_FALLBACK_ERAS`), or where the launch sets VLLM_USE_V1=0 (`V0_OPT_OUT_ERAS`, `flags`: the launch's settings
    flags, which hold its leading NAME=VALUE assignments), or where its VLLM_ATTENTION_BACKEND names a backend the
    release's V1 does not take (`v0_backends.backend_runs_v0`; a name not modelled there counts as V1's, and
    refusals.py refuses it). V0's scheduler defaults (`_set_default_args_v0`), profile run and memory profiling then
    hold, not V1's. An unknown GPU and no opt-out: no."""
    if V0_OPT_OUT_ERAS.at(version) and use_v1_env(flags) == 0:
        return True
    if backend_runs_v0(version, flags) is True:
        return True
    return capability is not None and capability < V1_FROM_CAPABILITY and V0_FALLBACK_ERAS.at(version)


def profile_charge(version: ResolvedVersion, engine: str | None = None) -> Era[ProfileCharge]:
    """The form of the profile's charge at `version` for the engine the start runs (`engine`: `batching.engine_era`'s
    "v0" or "v1", None the release's own): the opt-in V1 of v0.6.5–v0.7.3 charges v0.8.0's form, a V1-era start that
    runs V0 (`falls_back_to_v0`) V0's growth from its baseline."""
    era = PROFILE_CHARGE_ERAS.era(version)
    if engine == "v1" and V1_OPT_IN_ERAS.at(version) == "planned":  # VLLM_USE_V1=1 at v0.6.5–v0.7.3 (v1_opt_in.py)
        v1 = PROFILE_CHARGE_ERAS.era(ResolvedVersion(text="0.8.0"))
        return Era(v1.since, v1.value, f"{v1.source}; the same statements in the opt-in V1 of {version.label} "
                   f"({V1_OPT_IN_ERAS.era(version).source})")
    if era.since == "0.8.0" and engine == "v0":
        return Era("0.8.0", "baseline", "V0 below compute capability 8.0 (engine/arg_utils.py:1350-1356 at "
                   "v0.8.5.post1), under VLLM_USE_V1=0 or a VLLM_ATTENTION_BACKEND V1 does not take (v0_backends.py): "
                   "worker/worker.py's memory_profiling, the growth from a baseline snapshot")
    return era
# The TP group's custom all-reduce (its IPC buffers: most of non-torch memory's growth at TP > 1) exists from v0.3.0.
CUSTOM_ALL_REDUCE_ERAS: Eras[bool] = Eras((
    Era("", False, "no custom all-reduce: vllm/model_executor/parallel_utils/custom_all_reduce.py absent from the "
        "v0.2.7 wheel; NCCL alone"),
    Era("0.3.0", True, "v0.3.0 vllm/worker/worker.py:86-87 init_custom_ar (parallel_utils/custom_all_reduce.py)"),
))  # fmt: skip
has_custom_all_reduce = CUSTOM_ALL_REDUCE_ERAS.at
# Before v0.2.6 `torch.distributed.all_reduce` (record_stream) kept each all-reduce's input reserved until the stream
# synchronised, so at TP > 1 the profile's pool grew with the layers; `total − free` (v0.2.5) charges that growth,
# which kvtop does not count. vllm#2151 (v0.2.6 worker.py:50-56, TORCH_NCCL_AVOID_RECORD_STREAMS=1 with torch 2.1.2
# pinned) cut Llama-70B's peak at TP 8 from 25.5 to 19.5 GiB; vllm#2031's Llama-2-70B TP 4 start at v0.2.5 left 13.1 GiB a
# rank beyond torch's peak. The growth has no form kvtop can state: a plan there is refused by name.
ALL_REDUCE_HELD_ERAS: Eras[bool] = Eras((
    Era("", True, "torch.distributed.all_reduce's record_stream holds its inputs until the stream synchronises"),
    Era("0.2.6", False, "vllm#2151: v0.2.6 vllm/worker/worker.py:50-56 sets TORCH_NCCL_AVOID_RECORD_STREAMS=1"),
))  # fmt: skip

# The releases before v0.6.0 and the day each was first on PyPI (UTC; PyPI's upload_time; each wheel's
# vllm/worker/worker.py is stamped within a day of it, 0.1.5's 2023-09-07 23:17 against its 09-08 upload: review R7
# E4-3; v0.1.0 – v0.1.3 are sdists only). v0.2.1 was yanked ("A bug in tensor parallelism
# support"); v0.2.1.post1 replaced it.
CALENDAR_BEFORE_06: tuple[ReleaseDate, ...] = ReleaseDate.table("""
0.1.0 2023-06-20 0.1.1 2023-06-22 0.1.2 2023-07-05 0.1.3 2023-08-02 0.1.4 2023-08-25 0.1.5 2023-09-08
0.1.6 2023-09-08 0.1.7 2023-09-11 0.2.0 2023-09-28 0.2.1 2023-10-16 0.2.1.post1 2023-10-17 0.2.2 2023-11-19
0.2.3 2023-12-03 0.2.4 2023-12-11 0.2.5 2023-12-14 0.2.6 2023-12-17 0.2.7 2024-01-04 0.3.0 2024-01-31
0.3.1 2024-02-16 0.3.2 2024-02-21 0.3.3 2024-03-01 0.4.0 2024-03-30 0.4.0.post1 2024-04-02 0.4.1 2024-04-24
0.4.2 2024-05-05 0.4.3 2024-06-01
0.5.0 2024-06-11 0.5.0.post1 2024-06-14 0.5.1 2024-07-05 0.5.2 2024-07-15 0.5.3 2024-07-23 0.5.3.post1 2024-07-23
0.5.4 2024-08-05 0.5.5 2024-08-23
""")

NON_TORCH_LABEL = "vLLM's non-torch memory"


def not_charged(era: Era[ProfileCharge]) -> TermEstimate:
    """Non-torch memory where the profile charges torch's allocated peak alone: 0 by the code, not a fit."""
    return TermEstimate(
        term=Term.NON_TORCH, label=NON_TORCH_LABEL, bytes=0, error_bytes=0, source="assumed",
        basis=f"not charged before v0.2.5 ({era.source}: torch's allocations only; the CUDA context, NCCL and "
              "torch's reserved pool stay outside the budget)",
    )  # fmt: skip


def context_charged(
    estimate: TermEstimate, context: TermEstimate, era: Era[ProfileCharge], version: ResolvedVersion, tp: int
) -> TermEstimate:
    """The growth with the worker's context added, where the profile charges the device's whole used memory
    (v0.2.5–v0.3.0, V1's v0.8.0–v0.9.0); at TP > 1 before v0.2.6 the all-reduce's held inputs are charged too: not modelled, refused by name."""
    if tp > 1 and ALL_REDUCE_HELD_ERAS.at(version):
        raise UnsupportedModelError(
            f"vLLM {version.label} at TP {tp} charges the all-reduce inputs torch still holds (record_stream, until "
            "vllm#2151 in v0.2.6) with the profile's total − free; that growth is not modelled (Llama-2-70B at TP 4 "
            "left 13.1 GiB a rank beyond torch's peak, vllm#2031): plan at v0.2.6 or later, or TP 1",
            field="--engine-version",
        )
    return estimate.plus(context.bytes, context.error_bytes,  # independent errors
                         why=f"+ {gib(context.bytes)} of CUDA context and NCCL ({context.basis}), which "
                             f"{version.label} charges ({era.source})")  # fmt: skip
