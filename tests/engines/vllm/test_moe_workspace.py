"""The fused MoE's workspace vLLM's profile run leaves allocated (moe_workspace.py).

Expected bytes are TritonExperts' arithmetic by hand (fused_moe/experts/triton_moe.py:197-212 at v0.27.1, each buffer
rounded to 256 B by WorkspaceManager.get_simultaneous, v1/worker/workspace.py:92-117); the GiB the workspace stands
beside come from the kubesimplify post's v0.27.1 startup line (tests/data/calibration/vllm.jsonl, its record's note).
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.engines.vllm.moe_workspace import fused_moe_workspace, triton_workspace_bytes
from kvtop.units import GIB

RECORDS = {record.id: record for record in load("vllm")}
TP4 = "kubesimplify-qwen3-235b-a22b-2507-fp8-4xrtxpro6000-tp4-v0271"
TP4_EP = "kubesimplify-qwen3-235b-a22b-2507-fp8-4xrtxpro6000-tp4-ep-v0271"
PP4 = "kubesimplify-qwen3-235b-a22b-2507-fp8-4xrtxpro6000-pp4-v0271"
# Qwen3-235B-A22B: hidden 4,096, top-8, expert intermediate 1,536; the profile's 8,192 tokens; bf16 activations.
# At TP 4 a rank's gate-up is 2 × 1,536 ÷ 4 = 768: buffers 8,192 × 8 × max(384, 4,096) × 2 B and
# 8,192 × 8 × max(768, 4,096) × 2 B = 536,870,912 B each (multiples of 256): 1,073,741,824 B, 1.000 GiB.
QWEN3_235B_WORKSPACE = 2 * 8192 * 8 * 4096 * 2


def test_the_triton_buffers_by_hand() -> None:
    assert triton_workspace_bytes(8192, 8, 768, 4096, 2) == QWEN3_235B_WORKSPACE == 1_073_741_824
    # the second buffer takes the gate-up width where it is wider than the hidden size (Mixtral at TP 1: 28,672)
    assert triton_workspace_bytes(8192, 2, 28672, 4096, 2) == 8192 * 2 * 14336 * 2 + 8192 * 2 * 28672 * 2
    assert triton_workspace_bytes(3, 1, 1, 1, 2) == 256 + 256  # 6 B each, rounded to 256


def test_the_rtx_pro_6000_starts_hold_one_gib_whatever_the_split() -> None:
    # TP 4 (gate-up 768), TP 4 + EP (whole experts: 3,072) and PP 4 (3,072): every width under the hidden 4,096
    for record_id in (TP4, TP4_EP, PP4):
        found = fused_moe_workspace(RECORDS[record_id].inputs())
        assert found.modelled and found.bytes == QWEN3_235B_WORKSPACE, record_id


def test_the_workspace_is_most_of_the_v0_27_consumed_figure_beyond_the_weights() -> None:
    """'Actual usage is 56.89 GiB for consumed memory (weights + non-torch)' and 'Model loading took 55.19 GiB':
    1.70 GiB beside the weights, of which the workspace is 1.00; a TP 1 start of v0.31.0 prints 0.26 (15.26 − 15.0,
    the A100 record), leaving 0.44 GiB for what TP 4 adds over PCIe (NCCL's channels: no custom all-reduce above two
    PCIe GPUs, no symmetric memory at compute capability 12.0, no FlashInfer fusion outside 9.0 and 10.x)."""
    record = RECORDS[TP4]
    beside = record.figures["non_torch"] / GIB
    tp1 = RECORDS["file70682754770-llama-3.1-8b-a100-80gb-pcie-v0310"].figures["non_torch"] / GIB
    workspace = fused_moe_workspace(record.inputs()).bytes / GIB
    assert round(beside, 2) == 1.70 and workspace == 1.0 and round(tp1, 2) == 0.26
    assert round(beside - workspace - tp1, 2) == 0.44


def test_other_backends_are_not_sized() -> None:
    dense = fused_moe_workspace(RECORDS["file70682754770-llama-3.1-8b-a100-80gb-pcie-v0310"].inputs())
    assert not dense.modelled and dense.bytes == 0
    # a bf16 MoE on an A100 (v0.26.1): the unquantized oracle's backend is not read
    bf16 = fused_moe_workspace(RECORDS["autoscientists-qwen3-coder-30b-a3b-a100-80gb-v0261"].inputs())
    assert not bf16.modelled
    # FP8 block on H100 at TP 4 (v0.19.0, MiniMax-M2.5: hidden 3,072, gate-up 2 × 1,536 ÷ 4): Triton, by hand
    minimax = fused_moe_workspace(RECORDS["file58113078588-minimax-m2.5-fp8-4xh100-tp4-v0190"].inputs())
    assert minimax.modelled and minimax.bytes == 2 * 8192 * 8 * 3072 * 2 == 805_306_368
