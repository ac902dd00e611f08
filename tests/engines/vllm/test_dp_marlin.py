"""vLLM 0.29.0's MXFP4 Marlin MoE layer on the DP-gathered batch (dp_marlin.py), against its code and a real start.

The code, read in the v0.29.0 wheel: without EP the experts split over TP × DP ranks (fused_moe/config.py:1121-1130),
Marlin rounds the rank's width up to 128 and the hidden size up to 256 (fused_moe/oracle/mxfp4.py:734-739); the
prepare all-gathers the padded hidden states and top-k over the DP group (prepare_finalize/naive_dp_ep.py:112-185);
`_fused_experts` asks the workspace for all gathered rows (modular_kernel.py:1314-1326): MarlinExperts'
(M × top-k, max(N, K)) beside M × top-k × max(2N, K) (experts/marlin_moe.py:704-734), the first shared with the
(M, K) output (modular_kernel.py:1170-1180). The start: akamaslabs/vllm-benchmark study 10's `dp4` smoke config,
gpt-oss-20b at DP 4 on four L4s, eager, 'GPU KV cache size: 438,932 tokens' on each core.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.calibration.estimate import CapacityPlan, planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.vllm.dp_marlin import marlin_layer_bytes, marlin_workspace_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.data_paths import CONFIGS

MIB = 1 << 20
L4 = 23034 * MIB  # the akamas log's DCGM 'memory.total 23034 MiB'
LOGGED_TOKENS = 438_932  # 'GPU KV cache size: 438,932 tokens' on each of the four engine cores
GPT_OSS_20B = model_from_config(json.loads((CONFIGS / "openai--gpt-oss-20b.json").read_text()),
                                source="openai--gpt-oss-20b.json")  # fmt: skip
# k8s/smoke_test.sh's `dp4` config as rendered, less its TP and EP flags (tests/data/calibration/vllm.jsonl, akamas-s10-gpt-oss-20b-l4-dp4-v0290)
DP4 = ["--max-model-len", "32768", "--gpu-memory-utilization", "0.85", "--max-num-seqs", "256",
       "--max-num-batched-tokens", "4096", "--kv-cache-dtype", "auto", "--performance-mode", "interactivity",
       "--optimization-level", "1", "--block-size", "16", "--enforce-eager", "--no-async-scheduling",
       "--data-parallel-size", "4", "--attention-backend", "TRITON_ATTN", "--no-enable-prefix-caching"]  # fmt: skip


def capacity(flags: list[str]) -> CapacityPlan:
    settings = parse_flags("vllm", flags, strict=True)
    return planned_capacity(GPT_OSS_20B, settings, gpu_total_bytes=L4, gpu_name="L4", measured=MeasuredInputs())


def dp_lines(plan: CapacityPlan) -> list[str]:
    return [line for line in plan.ledger.not_modelled if "DP ranks" in line]


def test_gpt_oss_20b_dp4_layer_by_the_code() -> None:
    """hidden 2,880 → 3,072; width 2,880 ÷ 4 = 720 → 768; 4 × 4,096 = 16,384 gathered rows, top-4."""
    layout = ParallelLayout(dp=4, experts_over_replicas=True)  # vLLM splits the experts over the DP ranks
    first = 16384 * 4 * max(768, 3072) * 2  # workspace1, larger than the (16,384, 3,072) output it shares
    second = 16384 * 4 * max(2 * 768, 3072) * 2
    assert marlin_workspace_bytes(GPT_OSS_20B, layout, 16384) == first + second == 805_306_368
    own = 2 * 4096 * 2880 * 2 + 4096 * 32 * 2 + 4096 * 4 * 8 + 3 * 4096 * 3072 * 2
    gathered = 16384 * 3072 * 2 + 16384 * 4 * 8
    assert marlin_layer_bytes(GPT_OSS_20B, layout, 4096) == own + gathered + first + second == 1_029_570_560


def test_akamas_dp4_start_priced_and_within_its_interval() -> None:
    """The layer sets the V2 profile's peak (above its counted 0.20 GiB plus the kept workspace), the gathered batch
    is no longer named unpriced, and the plan lands within 5 % of the tokens the start printed, inside its interval."""
    plan = capacity([*DP4, "--tensor-parallel-size", "1", "--no-enable-expert-parallel", "--engine-version", "0.29.0"])
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None and activation.bytes == 1_029_570_560
    assert not dp_lines(plan)
    tokens = plan.ledger.engine.token_capacity
    assert abs(tokens / LOGGED_TOKENS - 1) < 0.05
    assert plan.token_capacity_min <= LOGGED_TOKENS <= plan.token_capacity_max


@pytest.mark.parametrize("release", ["0.30.0", "0.31.0"])
def test_the_same_layer_at_0_30_and_0_31(release: str) -> None:
    """The v0.30.0 and v0.31.0 wheels hold the path as v0.29.0 (dp_marlin.MARLIN_DP_ERAS): the same layer prices the
    same launch (4 × 4,096 gathered rows, test_gpt_oss_20b_dp4_layer_by_the_code)."""
    plan = capacity([*DP4, "--tensor-parallel-size", "1", "--no-enable-expert-parallel", "--engine-version", release])
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None and activation.bytes == 1_029_570_560
    assert not dp_lines(plan)


def test_v0_32_reduce_scatters_into_the_output() -> None:
    """v0.32.0's finalize reduce-scatters into the layer's output (prepare_finalize/naive_dp_ep.py:241-245,
    cuda_communicator.py:538-583; NCCL symmetric memory off by default, VLLM_USE_NCCL_SYMM_MEM '0'): the layer of
    test_gpt_oss_20b_dp4_layer_by_the_code less one (4,096, 3,072) bf16 tensor of the rank's own rows."""
    layer = 1_029_570_560 - 4096 * 3072 * 2
    assert marlin_layer_bytes(GPT_OSS_20B, ParallelLayout(dp=4, experts_over_replicas=True), 4096,
                              scatter_rows=False) == layer == 1_004_404_736  # fmt: skip
    plan = capacity([*DP4, "--tensor-parallel-size", "1", "--no-enable-expert-parallel", "--engine-version", "0.32.0"])
    activation = plan.estimate.term(Term.ACTIVATION)  # the larger: the layer, or the counted peak + its workspace
    assert activation is not None and activation.bytes >= layer
    assert f"(4 × 4,096 tokens: {layer / GIB:.2f} GiB, its workspace 0.75 GiB kept" in activation.basis
    assert not dp_lines(plan)


def test_unread_launches_stay_named() -> None:
    """Expert parallelism (experts not split over the DP ranks) and TP 2 (the EP group's gather not read) keep the
    not-modelled line."""
    for flags in ([*DP4, "--enable-expert-parallel", "--engine-version", "0.29.0"],
                  [*DP4, "--tensor-parallel-size", "2", "--engine-version", "0.33.0"]):  # fmt: skip
        plan = capacity(flags)
        assert len(dp_lines(plan)) == 1, flags


@pytest.mark.parametrize(("release", "said"), [
    ("0.28.0", "not read before v0.29.0"),
])  # fmt: skip
def test_mxfp4_dp_outside_the_marlin_eras_says_why_by_that_era(release: str, said: str) -> None:
    """The MXFP4 experts' DP layer outside the releases read for it: the line cites dp_marlin's era for the release
    (what was or was not read of that layer), not the unquantized experts' era of dp_gather."""
    plan = capacity([*DP4, "--tensor-parallel-size", "1", "--no-enable-expert-parallel", "--engine-version", release])
    (line,) = dp_lines(plan)
    assert "MXFP4 experts' DP layer" in line and said in line


@pytest.mark.parametrize("release", ["0.33.0", "0.34.0"])
def test_v0_33_and_v0_34_hold_v0_32s_layer(release: str) -> None:
    """v0.33.0 and v0.34.0 (dp_marlin.MARLIN_DP_ERAS): MarlinExperts.workspace_shapes, the Marlin rounding and the
    finalize's combine_into_output as at v0.32.0, so the same layer: 1,029,570,560 B less one (4,096, 3,072) bf16
    tensor of the rank's own rows."""
    plan = capacity([*DP4, "--tensor-parallel-size", "1", "--no-enable-expert-parallel", "--engine-version", release])
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None and activation.bytes >= 1_029_570_560 - 4096 * 3072 * 2
    assert f"(4 × 4,096 tokens: {(1_029_570_560 - 4096 * 3072 * 2) / GIB:.2f} GiB" in activation.basis
    assert not dp_lines(plan)
