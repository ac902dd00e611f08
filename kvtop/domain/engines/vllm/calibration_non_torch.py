"""vLLM's non-torch memory (`non_torch_increase`) and what a worker holds before its weights (docs/engines/vllm.md §2).

Non-torch memory grows while profiling with the TP group's custom all-reduce buffers: a constant, plus a part once
the custom all-reduce runs (TP > 1 on NVLink GPUs, unless disabled: vLLM's custom_all_reduce.py turns it off on more
than two GPUs joined only by PCIe, and on two where the P2P test fails, as on GeForce cards; `custom_all_reduce_on`).
From v0.18.0 FlashInfer's all-reduce fusion workspace joins it at TP > 1 on Hopper: its bytes come from the code
(`fusion_workspace.py`), the fit takes the rest (calibration.py `fit_offset`), and an era the corpus holds too few logs
of takes the previous era's fit (`NON_TORCH_STAND_IN`). Before V1 at TP 8 on H100/H200 it also holds NCCL's NVLS
buffers of two communicators (`nvls_buffers.py`). Before v0.11.0 the worker snapshots before the TP group's NCCL init,
which the growth then holds: a plan adds the context fit's part beyond one rank (`calibration_snapshot.py`), so the
context term (the CUDA context, NCCL's communicators, an MoE's all-to-all buffers) lives here beside it.
"""

from __future__ import annotations

from kvtop.domain.calibration.cuda_context import one_process_context
from kvtop.domain.calibration.features import (
    CONTEXT_LABEL,
    assumed_estimate,
    context_estimate,
    context_threads,
    fitted_estimate,
    sm_count_unknown,
)
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.calibration.unified_start import with_unified_start
from kvtop.domain.engines.versions import Era, Eras, era_for
from kvtop.domain.engines.vllm.calibration_eras import (
    CONTEXT_INSIDE,
    INIT_APART,
    NON_TORCH_ERAS,
    NON_TORCH_STAND_IN,
    THREADS_SCALED,
    TP_PART_STAND_IN,
    non_torch_key,
)
from kvtop.domain.engines.vllm.calibration_snapshot import init_inside
from kvtop.domain.engines.vllm.dp_gather import with_dp_communicators
from kvtop.domain.engines.vllm.fusion_workspace import fusion_workspace
from kvtop.domain.engines.vllm.nvls_buffers import nvls_buffers
from kvtop.domain.engines.vllm.profile_run import engine_era
from kvtop.domain.engines.vllm.unified_free import reads_available_memory
from kvtop.domain.engines.vllm.v0_charge import (
    context_charged,
    has_custom_all_reduce,
    not_charged,
    profile_charge,
)
from kvtop.domain.engines.vllm.v2_sampler_state import v2_sampler_state
from kvtop.domain.gpus import NVLINK_GPUS, gpu_model_key
from kvtop.domain.gpus_peer import peer_access
from kvtop.domain.wording import GIB, gib

# GPU names that cover a PCIe board too (A100 80GB/40GB PCIe, A800 PCIe): `custom_all_reduce_on` takes them as SXM4,
# but whether the custom all-reduce runs is the driver's P2P report's to decide, which a plan cannot see (vLLM
# 0.10.1.1 on two A100-80GB of one pod: 'Custom allreduce is disabled because your platform lacks GPU P2P capability or
# P2P test failed', dennislee22/vLLM-benchmarking; custom_all_reduce.py's P2P check, read at v0.9.2 and v0.33.0: every
# release with the custom all-reduce): the non-torch interval keeps both states (`_board_error`)
BOARD_NOT_NAMED = frozenset({"A100", "A100-80GB", "A100-40GB", "A800"})
# The TP sizes the custom all-reduce takes (`_SUPPORTED_WORLD_SIZES`); at any other it logs 'Custom allreduce is
# disabled due to an unsupported world size' and NCCL does the all-reduce (no buffers of its own).
SUPPORTED_WORLD_SIZES_ERAS: Eras[frozenset[int]] = Eras((
    Era("", frozenset({2, 4, 6, 8}), "v0.3.0 vllm/model_executor/parallel_utils/custom_all_reduce.py:23 (v0.4.0 :24; "
        "v0.6.4.post1 distributed/device_communicators/custom_all_reduce.py:50, v0.16.0 and v0.26.0 :52)"),
    Era("0.27.0", frozenset({2, 4, 6, 8, 16}), "first in v0.27.0: device_communicators/custom_all_reduce.py:57 "
        "CustomAllreduce._SUPPORTED_WORLD_SIZES adds 16 (v0.33.0 :118, checked at :211)"),
))  # fmt: skip


def non_torch_features(inputs: CalibrationInputs, key: str | None = None) -> tuple[float, ...] | None:
    """(1, the custom all-reduce runs); for a fit on the GPU's resident threads (`THREADS_SCALED`: v0.3.1–v0.6.3,
    `key` the fit's, else the era's) (resident threads ÷ 204,800, the custom all-reduce runs), None where kvtop does not
    know the GPU's SM count."""
    reduce = 1.0 if custom_all_reduce_on(inputs) else 0.0
    if (key or non_torch_key(inputs)) not in THREADS_SCALED:
        return (1.0, reduce)
    threads = context_threads(inputs.gpu_name)
    return None if threads is None else (threads, reduce)


def custom_all_reduce_on(inputs: CalibrationInputs) -> bool:
    """Whether the TP group's all-reduce buffers (most of non-torch memory's growth at TP > 1) are held: TP > 1,
    not `--disable-custom-all-reduce`, a TP size the release supports (`SUPPORTED_WORLD_SIZES_ERAS`: TP 3, 5 or 7
    is off on any GPU), and GPUs joined by NVLink. vLLM's custom_all_reduce.py (read at v0.13.0
    and v0.33.0) turns the custom all-reduce off on more than two GPUs joined only by PCIe ("not supported on
    more than two PCIe-only GPUs", as 4 x L40S at v0.19.0 printed) and on two where `_can_p2p` fails ("lacks
    GPU P2P capability or P2P test failed": GeForce cards, most cloud VMs), and its symmetric-memory
    all-reduce needs compute capability 9.0 or later (symm_mem.py). Two PCIe GPUs whose P2P test passes keep
    the custom all-reduce (`custom_all_reduce_said`), which kvtop cannot see; no start in the corpus shows the
    growth there (2 x L40S at v0.16.0 ran it and lands at +0.01 % without it), while two do without it: 2 x RTX 4090 at vLLM 0.7.2 printed 0.25 GiB of non-torch memory at TP 2 (vllm#13061),
    and 2 x L4 at v0.28.0 charged 0.76 GiB beside weights and KV at TP 2 (search-index id 59672298265), where
    the H100 runs add 1.8 GiB at TP > 1 (1.5 of it FlashInfer's fusion workspace before v0.22.0,
    `fusion_workspace.py`). An
    unnamed GPU keeps vLLM's rule on TP alone."""
    tp = inputs.layout.tp
    if tp <= 1 or inputs.settings.flags.get("disable-custom-all-reduce") not in (None, False):
        return False
    if not has_custom_all_reduce(inputs.version):  # before v0.3.0 (`v0_charge.py`)
        return False
    if tp not in SUPPORTED_WORLD_SIZES_ERAS.at(inputs.version):
        return False
    if inputs.gpu_name is None:
        return tp <= 2
    return gpu_model_key(inputs.gpu_name) in NVLINK_GPUS


def custom_all_reduce_said(inputs: CalibrationInputs) -> str:
    """Whether vLLM runs its custom all-reduce here, by vLLM's rule (custom_all_reduce.py, read at v0.4.0, v0.16.0
    and v0.33.0: off above two GPUs unless fully NVLink-connected, and where `_can_p2p` fails), said apart from
    the NVLink part the fit charges (`custom_all_reduce_on`): two PCIe GPUs whose P2P test passes run it (2 x L40S
    at v0.16.0 logged 'custom_all_reduce.py:216 Registering 13685 cuda graph addresses', search-index id
    10876549642) and add none of that part (its plan without it: +0.01 %)."""
    tp = inputs.layout.tp
    if tp <= 1:
        return "no all-reduce"
    if inputs.settings.flags.get("disable-custom-all-reduce") not in (None, False):
        return "custom all-reduce off (--disable-custom-all-reduce)"
    if not has_custom_all_reduce(inputs.version):
        return "no custom all-reduce in this release"
    sizes = SUPPORTED_WORLD_SIZES_ERAS.at(inputs.version)
    if tp not in sizes:
        listed = ", ".join(str(n) for n in sorted(sizes))
        return f"custom all-reduce off (TP {tp}: vLLM {inputs.version.label} supports world sizes {listed})"
    if custom_all_reduce_on(inputs):
        return "custom all-reduce on (NVLink: its part charged)"
    if inputs.gpu_name is None:
        return "custom all-reduce on if the GPUs are NVLink-connected (no GPU named: its part not charged)"
    if peer_access(inputs.gpu_name) is False:
        return "custom all-reduce off (GeForce: no peer access, vLLM's P2P test fails)"
    if tp == 2:
        return ("custom all-reduce on where the P2P test passes (two PCIe GPUs; not GeForce cards or most VMs): "
                "no NVLink part charged")  # fmt: skip
    return "custom all-reduce off (more than two PCIe-only GPUs)"


def context_features(inputs: CalibrationInputs) -> tuple[float, ...] | None:
    """(1, several ranks, MoE across TP ranks) as the corpus's logs measured them (the fit's features); None where the
    model is not known and TP > 1. A plan prices them through `priced_context_features`."""
    layout = inputs.layout
    if inputs.model is None and layout.tp > 1:
        return None
    moe = inputs.model is not None and inputs.model.moe is not None and layout.tp > 1
    return (1.0, 1.0 if layout.tp * layout.pp > 1 else 0.0, 1.0 if moe else 0.0)


def priced_context_features(inputs: CalibrationInputs) -> tuple[float, ...] | None:
    """`context_features` as a plan prices them: the one rule for `vllm.context`'s part beyond one rank wherever kvtop
    charges it (the context a restart needs free, `context_term`; v0.2.5–v0.3.0's and V1 v0.8.0–v0.9.0's charge of
    the worker's context; the TP group's init inside the growth before v0.11.0, `init_inside`). That several-ranks
    part is measured with peer access (llm-d's NVLink H100s): NCCL's P2P/NVLink connection buffers in device memory
    and the custom all-reduce's IPC buffers. GPUs without peer access (`gpus_peer.peer_access`: GeForce cards) hold
    neither, in every release that has them: `CustomAllreduce.__init__` returns before its buffers where `_can_p2p`
    fails (device_communicators/custom_all_reduce.py:141-150 at v0.8.4; v0.3.0's parallel_utils/custom_all_reduce.py
    `_can_p2p` asks `torch.cuda.can_device_access_peer`, search-index id 26655717674; the check read at v0.9.2 and
    v0.33.0, `BOARD_NOT_NAMED`), and NCCL joins the ranks of one host through its SHM transport, whose buffers are
    host memory. There the feature is 0 (NCCL's own device state,
    about 0.1-0.15 GiB beyond one rank, stays in the context fit's error). The MoE part (an all-to-all's buffers)
    stays. The fit keeps the measured features: no GeForce start at several ranks in the corpus logs its context."""
    values = context_features(inputs)
    if values is None or not values[1] or peer_access(inputs.gpu_name) is not False:
        return values
    return (values[0], 0.0, *values[2:])


def context_term(inputs: CalibrationInputs, fits: dict[str, LinearTerm]) -> TermEstimate:
    """What a worker holds before its weights load (not a term of vLLM's budget: a restart needs it free), its part
    beyond one rank as `priced_context_features` prices it."""
    estimate = context_estimate("vllm.context", CONTEXT_LABEL, fits, inputs, priced_context_features(inputs))
    why = _no_peer_part(inputs, fits)
    return estimate if why is None or estimate.source != "calibrated" else estimate.plus(why=why)


def _no_peer_part(inputs: CalibrationInputs, fits: dict[str, LinearTerm]) -> str | None:
    """What `priced_context_features` left out, in words; None where it left nothing out."""
    fit, measured, priced = fits.get("vllm.context"), context_features(inputs), priced_context_features(inputs)
    if fit is None or measured is None or priced is None or measured[1] == priced[1]:
        return None
    return (f"TP {inputs.layout.tp} without peer access (GeForce): no custom all-reduce, NCCL over host memory; "
            f"{fit.key}'s {gib(fit.coefficients[1] * measured[1] * GIB)} beyond one rank, measured with peer access, "
            "not charged")  # fmt: skip


def non_torch_estimate(inputs: CalibrationInputs, fits: dict[str, LinearTerm], tokens: int) -> TermEstimate:
    """What the release's profile charges beside torch's peak (`v0_charge.py`): nothing before v0.2.5, the growth and
    the worker's context in v0.2.5–v0.3.0 and in V1's v0.8.0–v0.9.0, the growth otherwise. Where the context is
    charged its multi-rank part (the TP group's NCCL init) is in it, so the growth does not add it again."""
    charge = profile_charge(inputs.version, engine_era(inputs))
    if charge.value == "torch_peak":
        return not_charged(charge)
    if charge.value == "device_used":
        # v0.2.5–v0.3.0's growth is not fitted (`NOT_FITTED`): assumed (V1's v0.8.0–v0.9.0 take V1's fit). The
        # resident-threads fit of v0.3.1 on would charge v0.2.5's Llama-2-7B start on an A100, with the context beside
        # it, 1.02 GiB beyond torch's peak where its blocks against v0.2.4's say 0.77 (vllm#2031: 98 blocks); the
        # context fitted on later releases' snapshots is the part not known for these, so the growth stays the
        # assumption that lands there (tests/engines/vllm/test_v0_charge.py)
        growth = _growth(inputs, fits, tokens, init_apart=False)
        context = v1_charged_context(inputs, fits) if engine_era(inputs) == "v1" else context_term(inputs, fits)
        return context_charged(growth, context, charge, inputs.version, inputs.layout.tp)
    # DP replicas of a MoE: the DP group's communicators, where priced (dp_gather.py)
    growth = with_dp_communicators(_context_inside(_growth(inputs, fits, tokens), inputs, fits), inputs, fits)
    # on a unified device the release that reads the kernel's available memory charges what the host takes meanwhile
    return with_unified_start(growth, inputs.gpu_name, reads_available_memory(inputs.version), fits)


def v1_charged_context(inputs: CalibrationInputs, fits: dict[str, LinearTerm]) -> TermEstimate:
    """The worker's context V1's v0.8.0–v0.9.0 charge holds (gpu_worker.py `determine_available_memory`, v0.8.0
    :139-186, v0.9.0 :167-214: `total − free − torch's allocated` after `empty_cache`): one process's CUDA context,
    which grows with the GPU's resident threads (the engine-neutral fit, `cuda_context.py`), plus `vllm.context`'s
    parts beyond one rank as `priced_context_features` prices them (the TP group's NCCL init where the GPUs have peer
    access; an MoE's all-to-all). `vllm.context`'s constant, fitted mostly on data-center cards, gives every GPU
    0.55 GiB, where an RTX 3090 (82 SMs of 1,536 threads) holds about 0.29 (its v0.6.4 start printed about 0.25,
    `_context_inside`). The interval is the wider of the two fits' errors at several ranks. Where either fit or the SM
    count is missing, `vllm.context` alone. v0.2.5–v0.3.0's charge keeps `vllm.context`: their growth is assumed to
    land with it (`non_torch_estimate`)."""
    context = context_term(inputs, fits)
    fit = fits.get("vllm.context")
    values = priced_context_features(inputs)
    one = one_process_context(inputs, fits, "one worker per GPU")
    if context.source != "calibrated" or fit is None or values is None or one.source != "calibrated":
        return context
    ranks = sum(c * v for c, v in zip(fit.coefficients[1:], values[1:], strict=True))
    several = inputs.layout.tp * inputs.layout.pp > 1
    error = max(one.error_bytes, context.error_bytes) if several else one.error_bytes
    said = [f"+ {gib(ranks * GIB)} beyond one rank ({fit.key}, TP {inputs.layout.tp})"] if ranks else []
    said += [why for why in (_no_peer_part(inputs, fits),) if why is not None]
    basis = "; ".join((one.basis, *said))
    return one.with_error(error, bytes=max(one.bytes + round(ranks * GIB), 0), basis=basis)


def _context_inside(growth: TermEstimate, inputs: CalibrationInputs, fits: dict[str, LinearTerm]) -> TermEstimate:
    """The growth with one process's CUDA context added where the release's figure holds the worker's context
    (`CONTEXT_INSIDE`: v0.6.4's device-wide form) and a stand-in measured the growth alone: the engine-neutral
    context by the GPU's SM count (`cuda_context.py`), its error added as independent errors add. At TP > 1 the
    stand-in's growth holds the TP group's NCCL and custom all-reduce (v0.6.5's baseline precedes them), so the
    context is one process's at any TP. An RTX 3090 at v0.6.4 (vllm#10517) printed 0.35 GiB with 0.10 of growth
    (the v0.6.6 start of search-index id 62352993850 on the same card): a context of about 0.25 GiB."""
    key = non_torch_key(inputs)
    if key not in CONTEXT_INSIDE or fits.get(key) is not None:
        return growth
    context = one_process_context(inputs, fits, f"TP {inputs.layout.tp}, one worker per GPU")
    return growth.plus(context.bytes, context.error_bytes,
                       why=f"+ {gib(context.bytes)} of {context.label} ({context.basis}), which "
                           f"{inputs.version.label} charges ({era_for(NON_TORCH_ERAS, inputs.version).source})")  # fmt: skip


def _growth(
    inputs: CalibrationInputs, fits: dict[str, LinearTerm], tokens: int, *, init_apart: bool = True
) -> TermEstimate:
    """The fitted growth (the era's fit, else its stand-in's, else 0.25 GiB assumed) plus what the code sizes: NCCL's
    NVLS buffers in V0 at TP 8 on H100/H200 (`nvls_buffers.py`) and FlashInfer's all-reduce fusion workspace
    (`fusion_workspace.py`); with the TP group's init (`init_inside`) where the fit leaves it apart and the context
    is not charged beside it (`init_apart`)."""
    key = non_torch_key(inputs)
    label, stand_in = "vLLM's non-torch memory", NON_TORCH_STAND_IN.get(key)
    fit = fits.get(key) or (fits.get(stand_in) if stand_in else None)
    basis = f"TP {inputs.layout.tp}, {custom_all_reduce_said(inputs)}"
    if fit is not None and fit.key != key:
        part = "the growth from the worker's init" if key in CONTEXT_INSIDE else "the growth beside the workspace"
        basis += f"; {key} has too few logs to fit: {fit.key} stands in for {part}"
    fit, basis = _tp_part_stood_in(fit, inputs, fits, basis)
    values = non_torch_features(inputs, fit.key) if fit is not None else None
    estimate = fitted_estimate(Term.NON_TORCH, label, fit, values, basis) or _assumed(inputs, fit, label)
    if init_apart and fit is not None and fit.key in INIT_APART and custom_all_reduce_on(inputs):
        estimate = init_inside(estimate, context_term(inputs, fits), fits, inputs, charged=not _board_open(inputs))
    nvls = nvls_buffers(inputs, tokens)
    if nvls is not None:
        estimate = estimate.plus(nvls.bytes, why=f"+ {nvls.why}")
    estimate = _board_error(estimate, inputs, fit)
    workspace = fusion_workspace(inputs, tokens)
    if workspace is not None:
        other = abs(workspace.other_bytes - workspace.bytes) if workspace.other_bytes else 0  # the one not taken
        estimate = estimate.plus(workspace.bytes, other, why=f"{'+ ' if workspace.modelled else ''}{workspace.why}")
    state = v2_sampler_state(inputs)
    if state is None:
        return estimate
    return estimate.plus(state[0], why=f"+ {state[1]}")


def _assumed(inputs: CalibrationInputs, fit: LinearTerm | None, label: str) -> TermEstimate:
    """0.25 GiB ± 0.50 assumed where no fit reaches: the era has too few logs, or its fit reads the GPU's resident
    threads and kvtop does not know the GPU's SM count (`THREADS_SCALED`)."""
    because = "not fitted for this era" if fit is None else sm_count_unknown(fit.key, inputs)
    return assumed_estimate(Term.NON_TORCH, label, GIB // 4, GIB // 2, f"0.25 GiB assumed: {because}")


def _tp_part_stood_in(
    fit: LinearTerm | None, inputs: CalibrationInputs, fits: dict[str, LinearTerm], basis: str
) -> tuple[LinearTerm | None, str]:
    """The fit with its TP > 1 coefficient taken from the era that holds the same growth (`TP_PART_STAND_IN`) where no
    source of its own measured it (`feature_sources` 0: its coefficient is 0 by default, not by measure) and the custom
    all-reduce runs: V1's growth at TP > 1 from v0.11.0 is the TP device group's torch NCCL communicator made at the
    profile's first collective, as beside v0.18.0's FlashInfer workspace (calibration_eras.py). The error stays the
    fit's: the plan widens it where a feature no record of the fit carried is used (`support.widened`: at least the
    part another era's fit of two sources or more measured, the stand-in's part itself), so it is not added twice."""
    if fit is None or not custom_all_reduce_on(inputs) or len(fit.feature_sources) < 2 or fit.feature_sources[1]:
        return fit, basis
    other = fits.get(TP_PART_STAND_IN.get(fit.key, ""))
    if other is None or len(other.feature_sources) < 2 or not other.feature_sources[1]:
        return fit, basis
    stood_in = fit.model_copy(update={"coefficients": (fit.coefficients[0], other.coefficients[1], *fit.coefficients[2:])})
    return stood_in, (f"{basis}; no log of {fit.key} at TP > 1 in its fit: {other.key}'s TP > 1 part "
                      f"({gib(other.coefficients[1] * GIB)}) stands in, the same growth")


def _board_open(inputs: CalibrationInputs) -> bool:
    """Whether the GPU's name covers PCIe boards too (`BOARD_NOT_NAMED`): the driver's P2P report decides."""
    return inputs.gpu_name is not None and gpu_model_key(inputs.gpu_name) in BOARD_NOT_NAMED


def _board_error(estimate: TermEstimate, inputs: CalibrationInputs, fit: LinearTerm | None) -> TermEstimate:
    """The non-torch estimate with the custom all-reduce's part kept in its interval where the GPU's name leaves the
    board open (`BOARD_NOT_NAMED`): the fit's own coefficient of the custom all-reduce's buffers, added to the error as
    independent errors add (as the sampler's path is, `_sampler_path_error`)."""
    if fit is None or not custom_all_reduce_on(inputs) or not _board_open(inputs):
        return estimate
    part = round(max(fit.coefficients[1], 0.0) * GIB)
    return estimate.plus(error_bytes=part, why=f"± {gib(part)}: the GPU's name covers PCIe boards too (the "
                                               "driver's P2P report decides)")  # fmt: skip
