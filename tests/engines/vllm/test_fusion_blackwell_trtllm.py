"""FlashInfer's all-reduce + RMSNorm workspace on Blackwell at vLLM 0.19.0-0.24.x: trtllm on one node
(fusion_blackwell_trtllm.py).

Expected figures by hand from vLLM 0.21.0's code (allreduce_rms_fusion.py:66-82 FI_ALLREDUCE_FUSION_MAX_SIZE_MB: 10.3 →
64 MiB at TP 4; :793-797 max_token_num = min(max size ÷ (hidden × 2 B), max_num_batched_tokens);
flashinfer_all_reduce.py `_resolve_fi_ar_backend`: trtllm on one node) and flashinfer's trtllm buffers (one-shot
TP × tokens × hidden × 2 B, flags TP × 256 × 4 B, Lamport 3 × the one-shot), each rounded to the 512 MiB multicast
granularity up to flashinfer 0.6.8, each with its 2,048 B signal pad to 2 MiB from 0.6.11. The logs: the GB300 v0.21.0
starts print 'Initialized FlashInfer Allreduce norm fusion workspace with backend=trtllm' at TP 4.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm import fusion_workspace as fw

MIB = 1 << 20
RECORDS = {record.id: record for record in load("vllm")}
MINIMAX_TP4 = "prathmesh-mm25-nvfp4-gb300-tp4-ep-v0210"  # hidden 3,072, 8,192 batched tokens
MINIMAX_TP1 = "prathmesh-mm25-nvfp4-gb300-tp1-nixl-v0210"
KIMI_TP4 = "prathmesh-kimi-k25-nvfp4-gb300-tp4-v0210"  # hidden 7,168


def _inputs(record_id: str, **update: object):  # type: ignore[no-untyped-def]
    return RECORDS[record_id].inputs().model_copy(update=update)


def test_the_gb300_tp4_start_holds_two_gib_of_trtllm_buffers() -> None:
    """min(64 MiB ÷ 6,144 B = 10,922, 8,192) = 8,192 tokens: one-shot 4 × 8,192 × 3,072 × 2 B = 192 MiB → 512,
    flags 4 KiB → 512, Lamport 576 MiB → 1,024: 2,048 MiB."""
    found = fw.fusion_workspace(_inputs(MINIMAX_TP4), 8192)
    assert found is not None and found.modelled and found.bytes == 2048 * MIB and "trtllm" in found.why


def test_kimi_s_wider_hidden_holds_the_same() -> None:
    """64 MiB ÷ (7,168 × 2 B) = 4,681 tokens: one-shot 4 × 4,681 × 7,168 × 2 B = 255.97 MiB → 512, flags → 512,
    Lamport 767.9 MiB → 1,024: 2,048 MiB (the MiniMax and Kimi TP 4 logs leave the same ~4.5 GiB unplanned before)."""
    found = fw.fusion_workspace(_inputs(KIMI_TP4), 8192)
    assert found is not None and found.bytes == 2048 * MIB


def test_from_flashinfer_0_6_11_each_buffer_is_held_at_two_mib() -> None:
    """v0.22.0 (flashinfer 0.6.11.post2): 192 MiB + 2,048 B → 194, 4,096 + 2,048 B → 2, 576 MiB + 2,048 B → 578:
    774 MiB."""
    found = fw.fusion_workspace(_inputs(MINIMAX_TP4, version=ResolvedVersion(text="0.22.0")), 8192)
    assert found is not None and found.bytes == 774 * MIB


def test_b200_takes_capability_10_0_s_max_size() -> None:
    """10.0 at TP 4: 32 MiB ÷ 6,144 B = 5,461 tokens; one-shot 4 × 5,461 × 3,072 × 2 B = 128 MiB less 8 KiB → 512,
    flags → 512, Lamport → 512: 1,536 MiB at v0.21.0."""
    found = fw.fusion_workspace(_inputs(MINIMAX_TP4, gpu_name="B200"), 8192)
    assert found is not None and found.bytes == 1536 * MIB


def test_tp1_and_the_mnnvl_era_are_not_this_rule_s() -> None:
    assert fw.fusion_workspace(_inputs(MINIMAX_TP1), 8192) is None  # TP 1: no all-reduce, no pass
    found = fw.fusion_workspace(_inputs(MINIMAX_TP4, version=ResolvedVersion(text="0.25.0")), 8192)
    assert found is not None and "mnnvl" in found.why


def test_across_nodes_vllm_picks_mnnvl_which_is_not_modelled() -> None:
    """_resolve_fi_ar_backend (flashinfer_all_reduce.py:92-110 at v0.19.0, :95-113 at v0.24.0): get_node_count() > 1
    → mnnvl. A span over two nodes (--nnodes 2), or TP 8 on the GB300's 4-GPU trays, is said not modelled, not
    trtllm's 2,048 MiB; a B200 TP 8 (one 8-GPU node) keeps trtllm: 10.0 at TP 8, 1 MiB ÷ 6,144 B = 170 tokens, each
    buffer under 512 MiB → 3 × 512 = 1,536 MiB."""
    from kvtop.domain.layout import ParallelLayout

    record = RECORDS[MINIMAX_TP4].inputs()
    flags = {**record.settings.flags, "nnodes": "2", "node-rank": "0", "master-addr": "10.0.0.1"}
    two_nodes = record.model_copy(update={"settings": record.settings.model_copy(update={"flags": flags})})
    for inputs in (two_nodes, _inputs(MINIMAX_TP4, layout=ParallelLayout(tp=8))):
        found = fw.fusion_workspace(inputs, 8192)
        assert found is not None and not found.modelled and found.bytes == 0 and "mnnvl" in found.why
    found = fw.fusion_workspace(_inputs(MINIMAX_TP4, layout=ParallelLayout(tp=8), gpu_name="B200"), 8192)
    assert found is not None and found.modelled and found.bytes == 1536 * MIB
