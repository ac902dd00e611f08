"""An unquantized MoE's fused-experts workspace, charged whole in the v0.14.0-v0.16.x activation peak
(moe_workspace.UNQUANTIZED_CHARGED_ERAS).

From v0.14.0 the unquantized method runs FusedMoEModularKernel(MoEPrepareAndFinalizeNoEP, TritonExperts)
(unquantized_fused_moe_method.py:281-287 at v0.14.0; oracle/unquantized.py:160-167 at v0.15.0), whose buffers come
from the process-wide WorkspaceManager (modular_kernel.py:963-978 at v0.15.0: one chunk, a common buffer of
max(M × top-k × max(N/2, K), M × K) and M × top-k × max(N, K), each rounded to 256 B; workspace.py:74-101, grow-only),
so they stay allocated through `_dummy_sampler_run` (gpu_model_runner.py:4981 at v0.15.0). Up to v0.13.0 the
unquantized method calls fused_experts, whose caches are freed when the layer returns (fused_moe.py:1838-1843).

The record: telco-rag's Qwen3-30B-A3B-Instruct-2507 on an H200 at v0.15.0 (tests/data/calibration/vllm.jsonl; the
start's own banner): hidden K 2,048, expert intermediate 768 (N = 1,536), top-8, 8,192 batched tokens, bf16. By hand:
M × top-k × max(N/2, K) × 2 B = 8,192 × 8 × 2,048 × 2 = 268,435,456 B, and the same for max(N, K) = 2,048.
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm import calibration
from kvtop.domain.engines.vllm.calibration_activation import activation_features
from kvtop.domain.engines.vllm.calibration_eras import activation_key
from kvtop.domain.engines.vllm.moe_workspace import fused_moe_workspace, kept_workspace

RECORDS = {record.id: record for record in load("vllm")}
TELCO = "telco-rag-qwen3-30b-a3b-2507-h200-v0150-u05"
WORKSPACE = 8192 * 8 * 2048 * 2 + 8192 * 8 * 2048 * 2  # 536,870,912 B: 0.50 GiB


def test_the_v015_start_charges_the_kept_workspace_whole() -> None:
    inputs = RECORDS[TELCO].inputs()
    assert inputs.model is not None
    found = fused_moe_workspace(inputs)
    assert found.modelled and found.unquantized and found.bytes == WORKSPACE == 536_870_912
    assert kept_workspace(inputs).bytes == WORKSPACE  # the one count the sampler's and the split's read
    assert calibration.fit_offset(activation_key(inputs), inputs) == WORKSPACE  # off a v1 fit row, were it logged
    assert activation_features(inputs, inputs.model)[3] == 0.0  # not the fit's MoE feature too
    activation = [term for term in calibration.terms(inputs) if term.term is Term.ACTIVATION][0]
    assert "fused MoE's workspace, 0.50 GiB" in activation.basis


@pytest.mark.parametrize(("release", "charged"), [
    ("0.13.0", False),  # fused_experts_impl's caches, freed with the layer: the v1 fit's rows
    ("0.14.0", True),
    ("0.14.1", True),
    ("0.16.0", True),
    ("0.17.0", False),  # counted under the sampler (sampler_peak.py), the v17 fit's rows hold it
    ("0.19.0", False),
])  # fmt: skip
def test_charged_whole_from_v014_to_v016(release: str, charged: bool) -> None:
    inputs = RECORDS[TELCO].inputs().model_copy(update={"version": ResolvedVersion(text=release)})
    found = fused_moe_workspace(inputs)
    assert found.modelled is charged
    assert found.bytes == (WORKSPACE if charged else 0)
    assert calibration.fit_offset(activation_key(inputs), inputs) == found.bytes


def test_dp_replicas_leave_it_to_the_gathered_batch() -> None:
    inputs = RECORDS[TELCO].inputs()
    dp = inputs.model_copy(update={"layout": inputs.layout.model_copy(update={"dp": 2})})
    found = fused_moe_workspace(dp)
    assert not found.modelled and "gathered" in found.why


def test_a_quantized_moe_at_v015_is_not_charged_so() -> None:
    inputs = RECORDS["llmd-v011-gpt-oss-20b"].inputs()  # MXFP4 experts, ~v0.14.0 by date
    assert inputs.model is not None and inputs.model.quant.method == "mxfp4"
    assert not fused_moe_workspace(inputs).modelled


RTXPRO_TP4 = "kubesimplify-qwen3-235b-a22b-2507-fp8-4xrtxpro6000-tp4-v0271"  # Qwen3-235B-A22B FP8 128 × 128 blocks
FP8_WORKSPACE = 2 * 8192 * 8 * 4096 * 2  # hidden K 4,096 ≥ N = 2 × 1,536 ÷ 4: both buffers M × top-8 × K, bf16


@pytest.mark.parametrize(("release", "charged"), [
    ("0.13.0", False),
    ("0.14.0", True),  # oracle/fp8.py:51-150 at v0.14.0: TRITON on 12.x, its buffers from the WorkspaceManager
    ("0.14.1", True),
    ("0.15.0", False),  # TritonOrDeepGemmExperts first in the oracle's order: not read
    ("0.18.0", False),
    ("0.19.0", True),
])  # fmt: skip
def test_fp8_block_experts_on_12x_run_triton_over_the_manager_at_v014(release: str, charged: bool) -> None:
    inputs = RECORDS[RTXPRO_TP4].inputs().model_copy(update={"version": ResolvedVersion(text=release)})
    found = fused_moe_workspace(inputs)
    assert found.modelled is charged and found.bytes == (FP8_WORKSPACE if charged else 0)


def test_fp8_block_experts_on_an_h100_at_v014_are_the_installs() -> None:
    """On 9.0 v0.14.0 takes DeepGEMM where the deep_gemm package is installed (and the experts' TP is below 8), else
    Triton (oracle/fp8.py:111-150): not read, whatever v0.19.0 reads there."""
    inputs = RECORDS[RTXPRO_TP4].inputs().model_copy(update={"version": ResolvedVersion(text="0.14.0"),
                                                             "gpu_name": "NVIDIA H100 80GB HBM3"})  # fmt: skip
    assert not fused_moe_workspace(inputs).modelled
    later = inputs.model_copy(update={"version": ResolvedVersion(text="0.19.0")})
    assert fused_moe_workspace(later).modelled and fused_moe_workspace(later).bytes == FP8_WORKSPACE
