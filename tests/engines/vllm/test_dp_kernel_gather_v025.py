"""vLLM 0.25.0-0.34.0's unquantized MoE layer on the DP-gathered batch (dp_kernel_gather.py), against its code's arithmetic.

Read in the v0.25.0-v0.34.0 wheels (PyPI), each against the one before (dp_eras.PRICED_ERAS): to v0.31.x v0.24.0's
bytes: the oracle keeps TritonExperts under DP on Hopper (oracle/unquantized.py:84 at v0.29.0), whose workspace_shapes
are (M, top-k, max(N/2, K)) sharing one buffer with the (M, K) output, beside (M, top-k, max(N, K))
(experts/triton_moe.py:218 at v0.29.0), asked of the workspace manager for all gathered rows at once
(modular_kernel.py:1174); the naive DP prepare all-gathers the hidden states and top-k (naive_dp_ep.py:112), the
finalize reduce-scatters into a new tensor of the own rows (:187). From v0.32.0 the finalize reduce-scatters into the
layer's output (`combine_into_output`, naive_dp_ep.py:241 at v0.32.0, :280 at v0.33.0 and v0.34.0): one (own rows, K)
tensor fewer. The V2 model runner (every model from v0.29.0; Qwen2-MoE from v0.24.0) profiles the same dummy batch
(`_dummy_run(self.max_num_tokens, skip_attn=True, is_profile=True)`, v1/worker/gpu/model_runner.py:851 at v0.29.0), each
rank's own count in the forward context (v1/worker/gpu/dp_utils.py), so the kernel gathers dp × 8,192 rows as on V1.
"""

from __future__ import annotations

import pytest

from kvtop.domain.calibration.estimate import CapacityPlan, planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.vllm.dp_kernel_gather import kernel_layer_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from tests.engines.vllm.test_dp_kernel_gather import FLAGS, GATHERED, H100, QWEN3_30B, WORKSPACE2, WORKSPACE13

# Qwen3-30B-A3B at DP 2, 8,192 tokens a rank (test_dp_kernel_gather.py): 16,384 gathered rows, the same workspace
WORKSPACE = WORKSPACE13 + WORKSPACE2  # 1 GiB, the output in the first
OWN_INPUTS = (2 * 8192 * 2048 * 2  # the decoder layer's residual and normed input (the MoE's input)
              + 8192 * 128 * 2  # the router logits of the own rows
              + 8192 * 8 * 8)  # select_experts' top-k of the own rows  # fmt: skip
OUTPUT = 8192 * 2048 * 2  # the kernel's output of the own rows (empty_like / new_empty)
SCATTERED = 8192 * 2048 * 2  # the reduce-scatter's new tensor of the own rows, to v0.31.x
LAYER_TO_V031 = OWN_INPUTS + OUTPUT + SCATTERED + GATHERED + WORKSPACE
LAYER_FROM_V032 = OWN_INPUTS + OUTPUT + GATHERED + WORKSPACE


def capacity(model: ModelSpec, flags: list[str]) -> CapacityPlan:
    settings = parse_flags("vllm", flags, strict=True)
    return planned_capacity(model, settings, gpu_total_bytes=H100, gpu_name="H100", measured=MeasuredInputs())


def priced_layer(model: ModelSpec, flags: list[str]) -> int:
    plan = capacity(model, flags)
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None and "dp_kernel_gather.py" in activation.basis
    assert not [line for line in plan.ledger.not_modelled if "DP ranks" in line]
    return activation.bytes


def test_layers_by_the_code() -> None:
    assert LAYER_TO_V031 == 1_278_738_432
    assert LAYER_FROM_V032 == 1_245_184_000
    layout = ParallelLayout(dp=2, ep=2)
    assert kernel_layer_bytes(QWEN3_30B, layout, 8192) == LAYER_TO_V031
    assert kernel_layer_bytes(QWEN3_30B, layout, 8192, scatter_rows=False) == LAYER_FROM_V032


@pytest.mark.parametrize("release", ["0.25.0", "0.26.0", "0.27.0", "0.28.0", "0.29.0", "0.30.0", "0.31.0"])
@pytest.mark.parametrize("ep", [["--enable-expert-parallel"], []])
def test_v025_to_v031_the_layer_sets_the_peak(release: str, ep: list[str]) -> None:
    """V1 runner to v0.28.x, V2 from v0.29.0: the same 1.19 GiB layer above the count plus the workspace's growth."""
    assert priced_layer(QWEN3_30B, [*FLAGS, *ep, "--engine-version", release]) == LAYER_TO_V031


@pytest.mark.parametrize("release", ["0.32.0", "0.33.0", "0.34.0"])
@pytest.mark.parametrize("ep", [["--enable-expert-parallel"], []])
def test_v032_on_scatters_into_the_output(release: str, ep: list[str]) -> None:
    assert priced_layer(QWEN3_30B, [*FLAGS, *ep, "--engine-version", release]) == LAYER_FROM_V032


@pytest.mark.parametrize(("release", "layer"), [("0.24.0", LAYER_TO_V031), ("0.28.0", LAYER_TO_V031),
                                                ("0.32.0", LAYER_FROM_V032)])  # fmt: skip
def test_v2_runner_class_priced(release: str, layer: int) -> None:
    """Qwen2-MoE runs on the V2 model runner from v0.24.0 (runner_eras.runs_v2, config/vllm.py:68-77): its profile's
    DP dummy batch is V1's, so the kernel-gathered layer is priced on it too."""
    qwen2_moe = QWEN3_30B.model_copy(update={"architecture": "Qwen2MoeForCausalLM"})
    flags = [*FLAGS, "--engine-version", release]
    assert priced_layer(qwen2_moe, flags) == layer
    activation = capacity(qwen2_moe, flags).estimate.term(Term.ACTIVATION)
    assert activation is not None and f"vLLM {release}'s V2 model runner" in activation.basis  # not V1's count


def test_fp8_experts_stay_named() -> None:
    """Only the unquantized experts' kernel is read: an FP8 MoE's DP batch stays a not-modelled line at v0.29.0."""
    fp8 = QWEN3_30B.model_copy(update={"quant": QWEN3_30B.quant.model_copy(update={"method": "fp8", "block": (128, 128)})})
    plan = capacity(fp8, [*FLAGS, "--engine-version", "0.29.0"])
    assert len([line for line in plan.ledger.not_modelled if "DP ranks" in line]) == 1
