"""vLLM 0.20.0-0.24.x's unquantized MoE layer on the DP-gathered batch (dp_kernel_gather.py), against its code's arithmetic.

The code, read in the v0.20.0 wheel (v0.20.2's path the same): the unquantized method holds its kernel, so the runner
no longer gathers (runner/moe_runner.py:619-622); it routes the rank's own rows (:462-476), the kernel takes an
`empty_like` output of them (modular_kernel.py:1372-1377, torch==2.11.0 disables in place), the naive DP prepare
all-gathers the hidden states and the top-k weights and ids (prepare_finalize/naive_dp_ep.py:103-143, with or without
EP: all2all_utils.py:110-127, :250), `_fused_experts` asks the workspace for all gathered rows at once
(modular_kernel.py:1203-1243): TritonExperts' workspace13 (M, top-k, max(N/2, K)) sharing one buffer with the (M, K)
output, beside workspace2 (M, top-k, max(N, K)) (modular_kernel.py:1041-1102, fused_moe.py:1968-1983), each part
rounded to 256 B (v1/worker/workspace.py:92-117); the finalize reduce-scatters the gathered output into a new tensor of
the own rows, then copies it into the output (naive_dp_ep.py:145-167). The v0.21.0, v0.22.0, v0.22.1, v0.23.0 and v0.24.0
wheels hold the same bytes (dp_gather.PRICED_ERAS); v0.25.0 is not read.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.calibration.estimate import CapacityPlan, planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.vllm.dp_kernel_gather import kernel_layer_bytes, kernel_workspace_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from tests.data_paths import CONFIGS

MIB = 1 << 20
H100 = 81559 * MIB  # nvidia-smi's total of an H100 80GB HBM3
QWEN3_30B = model_from_config(json.loads((CONFIGS / "Qwen--Qwen3-30B-A3B.json").read_text()),
                              source="Qwen--Qwen3-30B-A3B.json")  # bf16, hidden 2,048, 128 experts, top-8, I 768
FLAGS = ["-dp", "2", "--max-num-seqs", "8", "--max-num-batched-tokens", "8192"]
# Qwen3-30B-A3B at DP 2, 8,192 tokens a rank: 16,384 gathered rows. Under EP a rank holds whole experts (N = 2 × 768);
# without it the experts split over the two ranks (N = 2 × 384): either way K = 2,048 sets both workspace parts.
WORKSPACE13 = 16384 * 8 * max(768, 2048) * 2  # holds the (16,384, 2,048) output too
WORKSPACE2 = 16384 * 8 * max(1536, 2048) * 2
OWN = (2 * 8192 * 2048 * 2  # the decoder layer's residual and normed input (the MoE's input)
       + 8192 * 128 * 2  # the router logits of the own rows
       + 8192 * 8 * 8  # select_experts' float32 weights and int32 ids of the own rows
       + 2 * 8192 * 2048 * 2)  # the kernel's empty_like output and the reduce-scatter's new tensor  # fmt: skip
GATHERED = 16384 * 2048 * 2 + 16384 * 8 * 8  # all_gatherv'd hidden states and top-k
LAYER = OWN + GATHERED + WORKSPACE13 + WORKSPACE2
ONE_RANK_WORKSPACE = 2 * (8192 * 8 * 2048 * 2)  # what the sampler's count holds (sampler_peak.py), 8,192 rows


def capacity(flags: list[str]) -> CapacityPlan:
    settings = parse_flags("vllm", flags, strict=True)
    return planned_capacity(QWEN3_30B, settings, gpu_total_bytes=H100, gpu_name="H100", measured=MeasuredInputs())


def dp_lines(plan: CapacityPlan) -> list[str]:
    return [line for line in plan.ledger.not_modelled if "DP ranks" in line]


@pytest.mark.parametrize("layout", [ParallelLayout(dp=2, ep=2), ParallelLayout(dp=2, experts_over_replicas=True)])
def test_qwen3_30b_dp2_layer_by_the_code(layout: ParallelLayout) -> None:
    assert WORKSPACE13 + WORKSPACE2 == 1_073_741_824
    assert kernel_workspace_bytes(QWEN3_30B, layout, 8192) == WORKSPACE13 + WORKSPACE2
    assert LAYER == 1_278_738_432
    assert kernel_layer_bytes(QWEN3_30B, layout, 8192) == LAYER


@pytest.mark.parametrize("release", ["0.20.0", "0.20.2", "0.21.0", "0.22.0", "0.22.1", "0.23.0", "0.24.0"])
@pytest.mark.parametrize("ep", [["--enable-expert-parallel"], []])
def test_v020_dp2_priced_the_layer_sets_the_peak(release: str, ep: list[str]) -> None:
    """The layer (1.19 GiB) is above the counted peak plus the workspace's growth from the one rank's 0.50 GiB the
    sampler's count holds to the gathered 1.00 GiB; no unpriced DP line is left."""
    plan = capacity([*FLAGS, *ep, "--engine-version", release])
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None and activation.bytes == LAYER
    assert "dp_kernel_gather.py" in activation.basis
    assert not dp_lines(plan)
    unread = capacity([*FLAGS, *ep, "--engine-version", "0.25.0"])
    counted = unread.estimate.term(Term.ACTIVATION)
    assert counted is not None and counted.bytes + WORKSPACE13 + WORKSPACE2 - ONE_RANK_WORKSPACE < LAYER
    assert len(dp_lines(unread)) == 1 and "not read from v0.25.0" in dp_lines(unread)[0]


def test_v020_fp8_experts_stay_named() -> None:
    """Only the unquantized experts' kernel is read at v0.20.0-v0.24.x: an FP8 MoE's DP batch stays a not-modelled line."""
    fp8 = QWEN3_30B.model_copy(update={"quant": QWEN3_30B.quant.model_copy(update={"method": "fp8", "block": (128, 128)})})
    settings = parse_flags("vllm", [*FLAGS, "--engine-version", "0.20.0"], strict=True)
    plan = planned_capacity(fp8, settings, gpu_total_bytes=H100, gpu_name="H100", measured=MeasuredInputs())
    assert len(dp_lines(plan)) == 1


def test_v024_v2_runner_class_stays_named() -> None:
    """v0.24.0 runs Qwen2-MoE on the V2 model runner (runner_eras.runs_v2, config/vllm.py:68-77): its profile with the
    kernel-gathered layer is not read, so the DP batch stays a not-modelled line."""
    qwen2_moe = QWEN3_30B.model_copy(update={"architecture": "Qwen2MoeForCausalLM"})
    settings = parse_flags("vllm", [*FLAGS, "--engine-version", "0.24.0"], strict=True)
    plan = planned_capacity(qwen2_moe, settings, gpu_total_bytes=H100, gpu_name="H100", measured=MeasuredInputs())
    lines = dp_lines(plan)
    assert len(lines) == 1 and "V2 model runner" in lines[0]
