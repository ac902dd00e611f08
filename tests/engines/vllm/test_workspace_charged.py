"""What vLLM's profile run leaves allocated, charged whole in the plan's activation peak (moe_workspace.with_stage_buffers)
and taken off the activation fit's logged rows (calibration.fit_offset).

Expected bytes are vLLM's code's arithmetic by hand: TritonExperts' two buffers (fused_moe/experts/triton_moe.py:197-212
at v0.27.1) and a later pipeline stage's intermediate tensors (`make_empty_intermediate_tensors(batch_size=
self.max_num_tokens)`, v1/worker/gpu_model_runner.py:6117-6127 at v0.27.1; models/utils.py:866-879: hidden_states and
residual, (tokens, hidden) each). The records are the kubesimplify post's v0.27.1 starts of Qwen3-235B-A22B-FP8 on four
RTX PRO 6000 (tests/data/calibration/vllm.jsonl): hidden 4,096, top-8, 8,192 batched tokens, bf16 activations.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.vllm import calibration
from kvtop.domain.engines.vllm.calibration_activation import activation_features
from kvtop.domain.engines.vllm.calibration_eras import activation_key
from kvtop.domain.engines.vllm.profile_run import intermediate_tensor_bytes

RECORDS = {record.id: record for record in load("vllm")}
TP4 = "kubesimplify-qwen3-235b-a22b-2507-fp8-4xrtxpro6000-tp4-v0271"
PP4 = "kubesimplify-qwen3-235b-a22b-2507-fp8-4xrtxpro6000-pp4-v0271"
LLAMA_PP2 = "llmd-v019-llama-3.1-8b-pp2"  # Llama-3.1-8B, hidden 4,096, H100 at v0.19.0: 8,192 batched tokens
WORKSPACE = 2 * 8192 * 8 * 4096 * 2  # both Triton buffers at max(N, K) = K = 4,096: 1,073,741,824 B
STAGE_BUFFER = 2 * 8192 * 4096 * 2  # hidden states and residual, bf16: 134,217,728 B


def test_the_workspace_is_an_offset_of_the_activation_fit_not_its_feature() -> None:
    inputs = RECORDS[TP4].inputs()
    assert inputs.model is not None
    assert calibration.fit_offset(activation_key(inputs), inputs) == WORKSPACE == 1_073_741_824
    assert activation_features(inputs, inputs.model)[3] == 0.0  # the MoE transient's feature: the workspace is it
    # a dense model's rows are not offset
    dense = RECORDS["file70682754770-llama-3.1-8b-a100-80gb-pcie-v0310"].inputs()
    assert calibration.fit_offset(activation_key(dense), dense) == 0


def test_the_plan_charges_the_workspace_whole() -> None:
    activation = _activation(TP4)
    assert "fused MoE's workspace, 1.00 GiB" in activation.basis
    assert activation.bytes >= WORKSPACE


def test_a_later_pipeline_stage_keeps_its_intermediate_tensors() -> None:
    assert intermediate_tensor_bytes(RECORDS[PP4].inputs()) == STAGE_BUFFER == 134_217_728
    assert intermediate_tensor_bytes(RECORDS[LLAMA_PP2].inputs()) == STAGE_BUFFER
    assert intermediate_tensor_bytes(RECORDS[TP4].inputs()) == 0  # no pipeline stages
    activation = _activation(PP4)
    assert "fused MoE's workspace, 1.00 GiB" in activation.basis and "intermediate tensors, 0.12 GiB" in activation.basis
    assert activation.bytes >= WORKSPACE + STAGE_BUFFER


def _activation(record_id: str):  # type: ignore[no-untyped-def]
    found = [term for term in calibration.terms(RECORDS[record_id].inputs()) if term.term is Term.ACTIVATION]
    assert len(found) == 1
    return found[0]
