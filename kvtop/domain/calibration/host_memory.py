"""What the host holds of a GPU's memory when the engine reads its free memory: unified-memory hosts and desktops.

On a unified-memory device (GB10 / DGX Spark, Jetson AGX Orin and Thor: `gpus.UNIFIED_TOTAL_MIB`) the GPU's memory
is the host's RAM. CUDA's total is the host's memory and its free memory is what the operating system, its services
and the page cache of files read leave. The engines read it so:

- vLLM from v0.11.1 takes psutil's available memory as the free memory on compute capabilities (8, 7), (11, 0),
  (12, 1) (`vllm/utils/mem_utils.py` `MemorySnapshot.measure`; v0.11.0 reads cudaMemGetInfo's free); from v0.20.0
  where torch's device properties say `is_integrated` (`CudaPlatform.is_integrated_gpu`; the releases and lines:
  engines/vllm/unified_free.py). It sizes from the total × `--gpu-memory-utilization`, so the host's share is not in
  its budget; its start checks that much is free (`request_memory`). What the host takes
  during the start shows in its non-torch memory (NVIDIA/xr-ai#462, vLLM 0.20): its span in that term's error where
  the release reads the kernel's available memory (`unified_start.py`); before v0.11.1 (the page cache of a cold load
  held) not modelled.
- SGLang takes psutil's available memory on SM 87, 110, 121 from 0.5.4 and where `is_integrated` from 0.5.9
  (`srt/utils/common.py` `get_available_gpu_memory`; engines/sglang/unified_free.py), and sizes from the free memory before and after the load.
- TensorRT-LLM's PyTorch backend reads `torch.cuda.mem_get_info()` with no integrated case
  (`_torch/pyexecutor/_util.py` `KvCacheCreator.configure_kv_cache_capacity`, the 1.1-era file: search-index id
  843526953), so the page cache counts as held: the 1.1.0rc3 DGX Spark start held 49.78 GiB outside torch after
  the load (case-trtllm-dgxspark-gpt-oss-120b).

What the host leaves is no property of the device: it is an ASSUMPTION, a share of the total spanning the readings
of such hosts (docs/engines/architectures.md "Unified-memory hosts"), of the kind the engine's release reads
(`EngineRules.reads_available_memory`): the kernel's available memory leaves the page cache free, cudaMemGetInfo's
free holds it. Every reading is CUDA's total less the free memory an engine read after its own CUDA context (and
NCCL) was made, so the share CONTAINS the engine's context: a plan charges the share whole and its context term lies
within it (`context_within_share`: error 0, not taken off the total again), one figure for what the host holds
(session 72). The readings are vLLM's, SGLang's and TensorRT-LLM's; LMDeploy printed none on such a host, so its plan
assumes its own context lies in the share as theirs did. It enters the budget of an engine that sizes from the free
memory before the load (one whose terms hold a context term); for one that sizes from the total it is said, not
charged. Where the free memory before the load was measured (given, or this node's store of an earlier start), the
share is in that figure and the host term is 0.

A card that also drives a desktop (Windows, or WSL2 under it) holds what the desktop takes before the engine starts:
kvtop does not model it, and a plan of such a host says so (`DESKTOP_NOTE`). That a desktop is there is said by the
operator (`--desktop`, the planner's field), proven by a log line (LMDeploy's Windows wheel), or, on a live node, read
from the node itself (a WSL2 kernel in /proc/version, `/dev/dxg`: `domain.host_desktop`); the sentence then says so.
"""

from __future__ import annotations

import re

from kvtop.domain.calibration.host_estimate import DesktopHost, StartVerdict, UnifiedHost
from kvtop.domain.calibration.terms import CONTEXT_WITHIN_HOST, Term, TermEstimate
from kvtop.domain.gpus import is_unified
from kvtop.domain.host_desktop import HostDesktop
from kvtop.domain.wording import gib

# What the host holds on a unified-memory device when the engine reads its free memory (its own CUDA context in it), as
# a share of CUDA's total: the centre and half-width of the span of the readings (total − free at the engine's start,
# after its context), each with its release. GB10, of 119.7
# GiB: 6.99, 9.18, 10.37 and 11.26 GiB (vLLM's `Free memory on device` lines, search-index ids 51928222181, 54322664375:
# the OS and its services), 58.65 GiB (27338917700, a `vllm/vllm-openai` 0.11-line start, v0.11.0 or v0.11.1: with the
# page cache of a checkpoint read before), 49.78 GiB outside torch after the load (TensorRT-LLM 1.1.0rc3,
# case-trtllm-dgxspark-gpt-oss-120b). Of 122.82 GiB (the Jetson AGX Thor's total, `gpus.UNIFIED_TOTAL_MIB`): 12.33 and
# 64.89 GiB (41839597356, 67046603230). The shares run from 5.84 % to 52.83 % (the Thor's 64.89 GiB): 29.34 % ± 23.51 %
# (the half-width rounded out so both ends hold). Left out, as in the span below (session 67): the 63.05 GiB of the
# `cuda:0 (56.65/119.7 GiB)` refusal (59813453928): its release reads the kernel's available memory, so the page cache
# was free there, and its source names ~40 GiB of k8s pods on the node: another tenant, not modelled. The span's ends
# are not its: 29.34 % ± 23.51 % before and after. Open (session 67, not settled): the Thor's 64.89 GiB (`cuda:0
# (57.93/122.82 GiB)`) has the same wording, v0.14.1's on (its source runs NGC's vLLM 0.24.0), a release that reads the
# kernel's available memory on (11, 0) and where `is_integrated`; its source blames a 24 GB checkpoint's page cache,
# which that reading leaves free. It sets this span's high end and is not in the one below; read as that one reads the
# 63.05 GiB, this span would be 5.84 % – 49.00 % (the 58.65 GiB its high end). Read after the span was set, and inside
# it: headless GB10 hosts of 121.69 GiB with the caches dropped, 19.5 – 20.4 GiB held (16.0 – 16.8 %;
# MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks#47), and 21.1 / 22.8 GiB with a raised `vm.min_free_kbytes`
# (tonyd2wild/GLM-5.3-Flash-NVFP4-DFlash2-2x-DGX-Spark#19).
HOST_HELD_SHARE = 0.2934
HOST_HELD_SHARE_ERROR = 0.2351
# What the host holds where the engine reads the kernel's available memory (psutil's `virtual_memory().available`: vLLM
# from v0.11.1, SGLang from 0.5.4, `EngineRules.reads_available_memory`), which counts the page cache it can reclaim as
# free: the OS and its services. The readings of that kind above: GB10's 6.99 – 11.26 GiB of 119.7, the Thor's 12.33 of
# 122.82, the headless 121.69 GiB GB10 hosts' 19.5 – 20.4 GiB with the caches dropped and 21.1 / 22.8 GiB with a raised
# `vm.min_free_kbytes` (which the kernel's available memory leaves out): 5.84 % to 18.74 %, 12.29 % ± 6.45 % (session
# 67). Those readings are mostly refusals (before v0.27.0 vLLM prints the free memory only when its start check fails),
# so they lean to hosts that held much. From v0.27.0 a start that came up prints it too (`Free memory on device
# (…/121.69 GiB) on startup. Desired GPU memory utilization is …`, v1/worker/gpu_worker.py:766-785 at v0.27.1, the
# worker's first snapshot): GB10 hosts of 121.69 GiB held 121.69 − 115.95 = 5.74 GiB (search-index id 58755311174),
# − 114.54 = 7.15 GiB (69198182448) and − 105.9 = 15.79 GiB (68531280425): 4.72 %, 5.88 %, 12.98 %. The first lies
# below the session-67 span, so the span is 4.72 % – 18.74 %: 11.73 % ± 7.02 % (session 68; the half-width rounded out
# so both ends hold). Inside it: SGLang 0.5.9's GB10 start (yukimaru77-qwen3.5-4b-gb10-v059-mf08), 119.70 − 110.63 = 9.07 GiB (7.58
# %). Not in it (nor in the span above): the 63.05 GiB of the `Free memory on device cuda:0 (56.65/119.7 GiB)` refusal,
# whose wording (the device named) is v0.14.1's on (v1/worker/utils.py:264 at v0.14.1, :414 at v0.17.1 – v0.20.0;
# v0.13.0's gpu_worker.py names none), so the available memory, held by another workload (its source names ~40 GiB of
# k8s pods on that node): another tenant is not modelled, as another process on a card of its own is not; nor the 58.65
# GiB of a `vllm/vllm-openai` 0.11-line start in a restart loop (27338917700: cudaMemGetInfo's free at v0.11.0, a
# previous instance at v0.11.1).
HOST_AVAILABLE_SHARE = 0.1173
HOST_AVAILABLE_SHARE_ERROR = 0.0702
# Every reading of both spans is CUDA's total less the free memory an engine read at its own start, after its CUDA
# context (and NCCL) was made: vLLM's `Free memory on device … on startup` is the worker's first snapshot after
# `init_device` (v1/worker/gpu_worker.py:341-342 at v0.24.0, the check at v1/worker/utils.py:405-420), SGLang's
# `pre_model_load_memory`, the free memory its budget starts from, is `get_available_gpu_memory` after the CUDA context
# and the parallel groups (srt/distributed/bootstrap.py:79-137 at 0.5.18; `Load weight begin. avail mem=`,
# srt/model_executor/model_runner.py:1051-1054; psutil's available memory where `props.is_integrated`,
# srt/utils/common.py:435-441), TensorRT-LLM's memory outside torch is after its load. On unified memory that context
# is host RAM, so the readings hold it: a budget charges the share whole and the plan's context term within it
# (`context_within_share`), not both (session 72). CoralLeiCN's idle DGX Spark (SGLang 0.5.18 dev, kernel
# 6.17.0-1031, 121.69 GiB): 'weight usage of 29.11 GB (114.09 to 84.98 GB free)', 7.60 GiB held with SGLang's context
# in it (6.25 %), inside the span. LMDeploy has no reading of its own here: its plan takes the span as holding its
# context as the others' held theirs (an assumption, said in the host term's basis).

HOST_LABEL = "what the host holds (unified memory)"  # the start of `CONTEXT_WITHIN_HOST` too

# What a desktop sharing the card (Windows' display, WSL2 under it) was seen to hold before the load beyond what a
# Linux start of the same launch holds, the most of the corpus's `host: desktop` starts, rounded up to the MiB:
# written by benchmarks/calibration/run.py --write (benchmarks/calibration/desktop.py) against the current fits. A
# start whose log printed the free memory before the load held CUDA's total less it, less the plan's context term (the
# per-SM context fit): the RTX 3090 SGLang start under WSL2 (my-deepseek-r1-distill-qwen-7b-3090) held 0.82 GiB where
# the fit gives 0.45 GiB, 379.9 MiB more (session 51). One that printed only its capacity held the most free memory less
# than the plan assumes that still gives its logged capacity: lmdeploy#1703's Windows start, 118 blocks of 64 tokens at
# 0.8 of the free memory, 167 MiB. Session 58, with CUDA's total under WSL2 the whole card (`gpu_totals`): the RTX 3090
# start held 24.00 − 22.76 GiB, 903 MiB beyond its plan's context; a start whose engine sizes from the total measures
# it where its source printed the free memory at the start, less one process's CUDA context (`cuda_context`): the RTX
# 5080's vLLM start under WSL2 (file60166145902, '~14.6 GiB is free at startup' of 15.92), 1,047 MiB. kvtop does not
# model the desktop; the low end of a plan that says one is there takes this (session 46: 246 MiB, hand-set then).
# BEGIN FITTED desktop
DESKTOP_HELD_BYTES = 1219493888  # 1163 MiB
DESKTOP_PROFILE_BYTES = 1529872384  # 1459 MiB
DESKTOP_GIVEN_BACK_BYTES = 1303379968  # 1243 MiB
# END FITTED
# the key the desktop's share takes among a corpus's fits (`plan_fits.committed_fits` holds DESKTOP_HELD_BYTES under
# it; the corpus's judgement refits it without the judged source, and a fold with no other desktop start has none)
DESKTOP_HELD_KEY = "desktop.held_beyond_linux"
DESKTOP_NOTE = (
    "memory the desktop holds (not modelled): a desktop (Windows, WSL2) shares this GPU and holds memory before the "
    "engine starts, which the plan leaves out"
)

# An engine that sizes from the total measures what it holds beside weights and KV as the device's memory in use, not
# its own: vLLM's non-torch increase is CUDA's total less cudaMemGetInfo's free less torch's reserve, from the worker's
# first snapshot to the profile's end (utils/mem_utils.py `MemorySnapshot.measure` :92-127 at v0.17.1, :96 at
# v0.23.0), and from v0.27.0 its budget takes the drop in free memory itself (`total_consumed`, mem_utils.py:314-326
# at v0.27.1 and v0.28.0); the worker says "we assume that the other processes using the same GPU did not change their
# memory usage during the profiling" (v1/worker/gpu_worker.py:397 at v0.17.1, :451 at v0.23.0, :534 at v0.27.1, :549
# at v0.28.0). No WSL2 branch of vLLM allocates on the GPU (`in_wsl` gates pinned host memory, NVML under fork and a
# CPU-offload warning: platforms/interface.py, utils/system_utils.py, platforms/cuda.py at those releases), so what a
# desktop takes or gives back meanwhile moves the KV cache (what the corpus's desktop starts showed, and why no constant
# is charged at the centre: docs/calibration_history.md, session 64).
DESKTOP_DURING_PROFILE = (
    "what the desktop takes while the engine profiles is not modelled either: the engine reads the device's free "
    "memory then, so it comes off the KV cache (as memory the engine measures beside the weights)"
)
# Session 64 (task d3): that state's span, measured as DESKTOP_HELD_BYTES is. Each desktop start of an engine that sizes
# from the total (vLLM's `host: desktop` records) left beside weights (the log's, else the book's) and KV (its logged
# tokens or GiB) more or less than its plan's runtime terms; the most of them, rounded up to the MiB, is what the low
# end of such a plan takes as runtime memory (`DESKTOP_PROFILE_BYTES`, written with DESKTOP_HELD_BYTES by run.py
# --write: benchmarks/calibration/desktop.py `profile_excess`). The centre is not moved (not modelled), nor the high
# end: a start that left less beside (the warm torch.compile cache's RTX 4090 mode) widens nothing. The corpus's
# judgement refits it without the judged source (`DESKTOP_PROFILE_KEY`; a fold with no other such start has none).
DESKTOP_PROFILE_KEY = "desktop.beside_during_profile"
# Session 68 (task e): the same state's other sign. vLLM's budget is the requested share less what the device's free
# memory fell by from its first snapshot to the profile's end (`memory_profiling`: `non_torch_increase` from
# `before_create`, utils/mem_utils.py:311 at v0.27.1, and `total_consumed = before_create.free − after_profile.free`
# :317-326; v1/worker/gpu_worker.py:544-548 at v0.27.1: requested − non_kv_cache_memory), so what a desktop gives back
# meanwhile lowers the non-KV memory and raises the KV cache: the RTX 3060 desktop start at 0.75 (v0.19.0) logged
# 0.75 × 11.63 − 1.12 − 8.03 = −0.43 GiB beside weights and KV, 1.19 GiB below its plan's runtime terms. vLLM bounds
# it only where the free memory after the profile exceeds the first snapshot's (the assert at gpu_worker.py:535-543 at
# v0.27.1: the start fails). The most any desktop start left below its plan's runtime terms, rounded up to the MiB, is
# what the high end gives back of its runtime memory (`DESKTOP_GIVEN_BACK_BYTES`, written with the two above by run.py
# --write: benchmarks/calibration/desktop.py `given_back_span`; refitted without the judged source under this key).
# The centre stays the plan's: the corpus's desktop starts' per-source medians centre at −23 MiB (58 starts, 24
# sources; −23 to −24 MiB with any one source left out, session 68), no shift to make.
DESKTOP_GIVEN_BACK_KEY = "desktop.given_back_during_profile"


def desktop_note(
    *, charged: bool, held_bytes: int, measured: bool = False, profile_bytes: int = 0, runtime_measured: bool = False,
    given_back_bytes: int = 0,
) -> str:
    """The plan's sentence for a desktop sharing the card: not modelled, and what it can do to this engine's plan
    (`measured`: the free memory was given, so what the desktop held at the start is in it and nothing is charged;
    `held_bytes`: what the low end takes, 0 where no desktop start measured it; `profile_bytes`: what the low end of
    an engine that sizes from the total takes as runtime memory for it, 0 where none was measured;
    `runtime_measured`: its runtime memory was given, so what the desktop took during that start's profile is in it;
    `given_back_bytes`: what the high end of such a plan gives back of its runtime memory, 0 where none was measured)."""
    if measured:
        return (f"{DESKTOP_NOTE.split(':')[0]}: a desktop (Windows, WSL2) shares this GPU; what it held before the "
                "engine started is in the free memory given, what it takes later is not")  # fmt: skip
    if charged and held_bytes > 0:
        return (f"{DESKTOP_NOTE}; its low end takes the most such starts held beyond Linux's "
                f"({gib(held_bytes)})")  # fmt: skip
    if charged:
        return f"{DESKTOP_NOTE}; no desktop start measured what it holds, so the low end takes nothing for it"
    span = ("; the runtime memory given holds what it took during that start's profile"
            if runtime_measured else f"; its low end takes the most such starts left beside weights and KV beyond their plans "
            f"({gib(profile_bytes)})" if profile_bytes > 0 else "; no desktop start measured it, so the low end "
            "takes nothing for it")  # fmt: skip
    if given_back_bytes > 0 and not runtime_measured:
        span += (f"; what it gives back then enters with its sign: its high end gives back the most such starts left "
                 f"beside weights and KV below their plans ({gib(given_back_bytes)})")  # fmt: skip
    return (f"{DESKTOP_NOTE}; the engine sizes from the total, so it starts only where the desktop leaves what it asks "
            f"free; {DESKTOP_DURING_PROFILE}{span}")  # fmt: skip


def host_held(total_bytes: int, *, available: bool = False) -> tuple[int, int]:
    """(bytes, error) the host is assumed to hold of a unified-memory device of `total_bytes` (`available`: as the
    kernel's available memory reads it, the page cache free; else as cudaMemGetInfo's free does, the page cache
    held)."""
    share, error = (HOST_AVAILABLE_SHARE, HOST_AVAILABLE_SHARE_ERROR) if available else (HOST_HELD_SHARE,
                                                                                         HOST_HELD_SHARE_ERROR)
    return round(share * total_bytes), round(error * total_bytes)


# what the host takes while the engine loads and profiles, by what its release reads as the free memory
_DURING_START_AVAILABLE = ("what the host takes during the start shows in its non-torch memory, whose error takes "
                           "its span (unified_start.py)")  # fmt: skip
_DURING_START_HELD = ("what the host takes during the start, a cold load's page cache, shows in its non-torch memory, "
                      "not modelled")  # fmt: skip

_VERDICT_WORDS = {
    StartVerdict.REFUSED_ACROSS_SPAN: "refused across the assumed span",
    StartVerdict.REFUSED_AT_CENTRE: "may not start: it starts at the assumed low end, not at the centre",
    StartVerdict.REFUSED_AT_HIGH_END: "may not start: it starts at the assumed centre, not at its high end",
    StartVerdict.STARTED_ACROSS_SPAN: "started across the assumed span",
}


def unified_host(
    total_bytes: int, *, charged: bool, fraction: float | None = None, needs_bytes: int | None = None,
    available: bool = False, measured_in: str | None = None,
) -> UnifiedHost:
    """A unified-memory host's assumption and the plan's sentence for it, and whether the budget reads it
    (`fraction`: the share of the total an engine that sizes from the total asks free at its start; `needs_bytes`:
    what that share asks free by the engine's own rule, `EngineRules.start_needs_bytes`; `available`: the engine
    reads the kernel's available memory, `EngineRules.reads_available_memory`; `measured_in`: the measured figure
    that holds what the host held, where the free memory before the load was given or stored: the share is not
    charged then, and the sentence says so)."""
    held, error = host_held(total_bytes, available=available)
    left = f"{gib(total_bytes - held)} ± {gib(error)} of {gib(total_bytes)}"
    left += " (the page cache free, as the engine reads the kernel's available memory)" if available else ""
    host = UnifiedHost(total_bytes=total_bytes, held_bytes=held, error_bytes=error, charged=charged,
                       page_cache_free=available, note="")  # fmt: skip
    if charged and measured_in:
        note = (f"unified memory: what the host held is in {measured_in}, not taken off again (where not measured, "
                f"what it leaves to the GPU is assumed {left})")  # fmt: skip
        return host.model_copy(update={"note": note})
    if charged:
        note = f"unified memory: what the host leaves to the GPU is assumed {left} (the engine sizes from the free memory)"
        return host.model_copy(update={"note": note})
    needed = ""
    if fraction and needs_bytes is not None:
        most, verdict = start_verdict(total_bytes, needs_bytes, available=available)
        host = host.model_copy(update={"start_needs_bytes": needs_bytes, "most_held_bytes": most,
                                       "start_verdict": verdict})  # fmt: skip
        # the verdict's figures are said once, in the plan's start verdict (`HostStart.reason`): named here
        needed = f" (at {fraction:g} × the total: {_VERDICT_WORDS[verdict]}, as the start verdict states)"
    note = (f"unified memory: what the host leaves to the GPU is assumed {left} (the engine sizes from the total, so "
            f"the host's share is not in its budget: it starts only where the host leaves what it asks free{needed}; "
            f"{_DURING_START_AVAILABLE if available else _DURING_START_HELD})")  # fmt: skip
    return host.model_copy(update={"note": note})


def start_verdict(total_bytes: int, needs_bytes: int, *, available: bool = False) -> tuple[int, StartVerdict]:
    """(the most the host may hold, the verdict): whether an engine that asks `needs_bytes` of the total free at its
    start (vLLM's `request_memory`: 'less than desired GPU memory utilization') starts where the host holds what it
    is assumed to, the most it may hold against the assumed span (`available`: as `host_held`)."""
    held, error = host_held(total_bytes, available=available)
    most = total_bytes - needs_bytes
    return most, span_verdict(most, held - error, held, held + error)


def span_verdict(most_bytes: int, low_bytes: int, centre_bytes: int, high_bytes: int) -> StartVerdict:
    """vLLM's start check against what the host (or a desktop) may hold: the most it may hold for the start to pass,
    against the span it is assumed or measured to hold (low end, centre, high end). The one rule a unified-memory
    host's verdict and a desktop's read."""
    return (StartVerdict.REFUSED_ACROSS_SPAN if most_bytes < low_bytes
            else StartVerdict.REFUSED_AT_CENTRE if most_bytes < centre_bytes
            else StartVerdict.REFUSED_AT_HIGH_END if most_bytes < high_bytes
            else StartVerdict.STARTED_ACROSS_SPAN)  # fmt: skip


def host_term(gpu_name: str | None, total_bytes: int, *, available: bool = False) -> TermEstimate | None:
    """The host's share of a unified-memory device as a term of the budget (taken from the free memory before the
    load), assumed, whole: its readings hold the engine's own CUDA context (the note below `HOST_AVAILABLE_SHARE`),
    so a plan's context term lies within it (`context_within_share`); None for a GPU of its own (`available`: as
    `host_held`)."""
    if not is_unified(gpu_name):
        return None
    held, error = host_held(total_bytes, available=available)
    basis = (f"assumed {HOST_AVAILABLE_SHARE:.2%} ± {HOST_AVAILABLE_SHARE_ERROR:.2%} of the total: the OS, its "
             "services, the page cache free as the engine reads the kernel's available memory, as GB10 and Jetson "
             "Thor hosts left it (4.72 % – 18.74 %; another workload on the host is not modelled)" if available else
             f"assumed {HOST_HELD_SHARE:.2%} ± {HOST_HELD_SHARE_ERROR:.2%} of the total: the OS, its services and the "
             "page cache, as GB10 and Jetson Thor starts left it (5.84 % – 52.83 %)")  # fmt: skip
    return TermEstimate(
        term=Term.HOST, label=HOST_LABEL, bytes=held, error_bytes=error, source="assumed",
        basis=f"{basis}; {_CONTEXT_IN_READINGS}",
    )  # fmt: skip


# why the share holds the engine's context: each reading was the free memory an engine read after its context was made
_CONTEXT_IN_READINGS = ("each reading was taken after the engine's CUDA context was made (vLLM's, SGLang's and "
                        "TensorRT-LLM's; LMDeploy's assumed alike), so this plan's context lies within it")  # fmt: skip


# what the assumed context's ± is, said after it ('± 1.25 GiB: how far …', features.context_estimate); inside a unified
# host's share its error is the share's span's (`context_within_share` rewords it)
CONTEXT_ERROR_WORDS = (
    "how far the context the engines' logs measured fell from this assumption (90th percentile, each source as one)"
)
# on a unified host, what the free memory before load measures the context term as: CUDA's total less it holds the
# host's share too (the OS, its page cache), not the CUDA context alone (FR2 #7: '19.70 GiB' read as a context)
HOST_AND_CONTEXT_MEASURED = "what the host held and the CUDA context (measured: total − free before load)"


def context_within_share(context: TermEstimate) -> TermEstimate:
    """The plan's context term where the host's assumed share holds it (`host_term`): its figure kept (each rank's
    context), its error 0 and not taken off the total again (`PreloadEstimate.context_in_host`): the share's span
    holds how far it may be off, and its basis says so (not '± 1.25 GiB: how far …' beside an error of 0)."""
    basis = re.sub(rf"; ± ([^;:]+): {re.escape(CONTEXT_ERROR_WORDS)}",
                   rf"; its error within the share's span (± \1 alone: {CONTEXT_ERROR_WORDS})", context.basis)  # fmt: skip
    return context.with_error(0, 0, 0, beside_error_bytes=0, beyond=None, within=CONTEXT_WITHIN_HOST, basis=basis)


def host_in_node(estimates: tuple[TermEstimate, ...], date: str) -> tuple[TermEstimate, ...]:
    """The estimates with a unified host's share measured 0 where this node's store (a start on `date`) gave the
    context: the stored context is CUDA's total less the free memory before the load that start measured
    (`node.measure_of_start`), which holds the host's share, so the share is not taken off again (as where that free
    memory is given: `estimate._with_measured`)."""
    context = next((e for e in estimates if e.term is Term.CONTEXT), None)
    if context is None or context.origin != "node":
        return estimates
    basis = f"measured on this node at a start on {date}: in the free memory before load it measured"
    return tuple(e.with_error(0, 0, 0, bytes=0, source="measured", basis=basis, beyond=None, origin="node", within=None)
                 if e.term is Term.HOST else e for e in estimates)  # fmt: skip


def host_measured_in(estimates: tuple[TermEstimate, ...], date: str | None) -> str | None:
    """The measured figure a unified host's share lies in, in words (its term measured 0: given, or this node's store
    of a start on `date`, `host_in_node`); None where the share is charged as assumed."""
    host = next((e for e in estimates if e.term is Term.HOST), None)
    if host is None or host.source != "measured" or host.bytes:
        return None
    if host.origin == "node" and date is not None:
        return f"the free memory before load this node measured at a start on {date}"
    return "the free memory before load given"


def desktop_host(
    *, charged: bool, free_measured: bool, held_bytes: int, seen: HostDesktop | None = None, profile_bytes: int = 0,
    runtime_measured: bool = False, given_back_bytes: int = 0, needs_bytes: int | None = None, total_bytes: int = 0,
    context_bytes: int = 0,
) -> DesktopHost:
    """A desktop sharing the card: its sentence and what the low end takes (`free_measured`: the free memory before
    or after the load was given, and holds what the desktop took before the start; `held_bytes`: the fits' desktop
    share, `DESKTOP_HELD_KEY`, 0 where they have none; `profile_bytes`: the fits' span of what such starts of an
    engine that sizes from the total left beside weights and KV, `DESKTOP_PROFILE_KEY`, taken only where not
    `charged` or `runtime_measured` (every runtime term given: what the desktop took then is in them), and
    `given_back_bytes` what its high end gives back of it, `DESKTOP_GIVEN_BACK_KEY`, likewise; `needs_bytes`: what
    the start asks free of `total_bytes` where the engine asks a share of the total (None: none), judged with this
    process's CUDA context (`context_bytes`) against `held_bytes` (`desktop_start`); `seen`: the node showed the
    desktop itself, a WSL2 kernel, and the sentence says where it was read)."""
    during = 0 if charged or runtime_measured else profile_bytes
    back = 0 if charged or runtime_measured else given_back_bytes
    note = desktop_note(charged=charged and not free_measured, measured=charged and free_measured,
                        held_bytes=held_bytes, profile_bytes=during, given_back_bytes=back,
                        runtime_measured=runtime_measured and not charged)  # fmt: skip
    if seen is not None:
        note = f"{note} ({seen.cited})"
    host = DesktopHost(low_end_bytes=held_bytes if charged and not free_measured else 0, note=note,
                       profile_bytes=during, given_back_bytes=back)  # fmt: skip
    return host if charged or needs_bytes is None else desktop_start(host, needs_bytes, total_bytes, context_bytes,
                                                                     held_bytes)  # fmt: skip


_DESKTOP_VERDICT_WORDS = {
    StartVerdict.REFUSED_ACROSS_SPAN: "it is refused even with no desktop",
    StartVerdict.REFUSED_AT_HIGH_END: "it starts where the desktop holds little, and is refused where it holds what the "
    "corpus's desktops held at most beyond a Linux start",
    StartVerdict.STARTED_ACROSS_SPAN: "it starts where the desktop holds as much as the corpus's desktops held at most "
    "beyond a Linux start",
}


def desktop_start(host: DesktopHost, needs_bytes: int, total_bytes: int, context_bytes: int, span_bytes: int) -> DesktopHost:
    """A desktop start's verdict against vLLM's start check: `request_memory` refuses a start whose free memory at its
    first snapshot is less than the total × --gpu-memory-utilization ('Free memory on device … is less than desired
    GPU memory utilization', v1/worker/utils.py:264 at v0.14.1, :414 at v0.17.1 – v0.20.0), and the desktop's share
    is in that free memory, with this process's CUDA context (`context_bytes`). The most it may hold is the total less
    both; against `span_bytes` (the most the corpus's desktops held beyond a Linux start, `DESKTOP_HELD_BYTES`), said,
    the interval unchanged: the RTX 4080 Laptop refused 0.90 with 10.79 of 11.99 GiB free (session 67)."""
    most = total_bytes - context_bytes - needs_bytes
    verdict = span_verdict(most, 0, 0, span_bytes)  # the span from no desktop (centre and low end) to the most held
    said = (f"; at start it asks {gib(needs_bytes)} of {gib(total_bytes)} free, so the desktop may hold at most "
            f"{gib(max(most, 0))} beyond this process's CUDA context ({gib(context_bytes)}): "
            f"{_DESKTOP_VERDICT_WORDS[verdict]} ({gib(span_bytes)})")  # fmt: skip
    return host.model_copy(update={"start_needs_bytes": needs_bytes, "most_held_bytes": most,
                                   "held_span_bytes": span_bytes, "start_verdict": verdict,
                                   "note": host.note + said})  # fmt: skip
