"""MLA's attention workspaces in TensorRT-LLM's PyTorch backend (docs/engines/trtllm.md §32).

Expected values: the lines zufayu/ClaudeSkillsE2EPerf's DeepSeek-R1-0528-NVFP4 starts on B200 print (repository
fetched at f655ecbe, `results/b200_dsr_fp4/…/server_*.log`; the corpus records in tests/data/calibration/trtllm.jsonl):
`Attention workspace size is not enough, increase the size from 0 bytes to N bytes`, N = 470,115,328 (TP 4, chat c4,
max_num_tokens 8,192, 1.3.0rc10), 476,932,096 (TP 4, summarize c4, max_num_tokens 8,320, max_seq_len 10,240,
1.3.0rc10), 380,108,800 (the CUDA-graph warm-up: TP 4 at 1.3.0rc10, TP 8 at 1.2.0rc6.post2 and 1.3.0rc10), each
start at max_batch_size 2,048. Each docstring spells the code's arithmetic (attentionOp.cpp, stored copy id
190937516) that gives the logged figure.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load_all, resolve
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.trtllm.calibration import terms
from kvtop.domain.engines.trtllm.mla_workspace import (
    READ_REST_WORKSPACE_BYTES,
    context_bytes,
    generation_bytes,
    held_in_torch,
)

TRTLLM = {record.id: record for record in load_all()["trtllm"]}
TP4_EP4 = "zufayu-e2eperf-dsr1-0528-nvfp4-b200-tp4-ep4-trtllm-130rc10"
TP8_EP8 = "zufayu-e2eperf-dsr1-0528-nvfp4-b200-tp8-ep8-trtllm-120rc6post2"
B200_SMS = 148


def _inputs(record_id: str, extra: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    raw = dict(TRTLLM[record_id].raw)
    raw["flags"] = list(raw["flags"]) + list(extra)
    return resolve(raw).inputs()


def _mla(record_id: str):  # type: ignore[no-untyped-def]
    model = _inputs(record_id).model
    assert model is not None and model.mla is not None
    return model.mla


def test_the_context_workspace_of_deepseek_r1_at_tp4_is_the_logged_one() -> None:
    """32 heads a rank, head size 512 + 64 = 576, FP8 context MLA (B200, FP8 KV), 8,192 tokens, 2,048 requests:
    cuBLAS 33,554,432 + Q 2 × 8,192 × 32 × 576 = 301,989,888 + FP8 Q and K 8,192 × 32 × 192 = 50,331,648 each + FP8 V
    8,192 × 32 × 128 = 33,554,432 + tokens' info 8 × 8,192 = 65,536 + rotary 4 × 2,048 × 32 = 262,144 + three
    cu_seqlens 4 × 2,049 = 8,196 → 8,448 each + the tile counter 256 = 470,115,328 (the log's)."""
    mla = _mla(TP4_EP4)
    assert context_bytes(mla, 32, 8192, 2048, fp8_context_mla=True) == 470_115_328


def test_the_context_workspace_grows_with_max_num_tokens_as_logged() -> None:
    """The summarize start, max_num_tokens 8,320: cuBLAS 33,554,432 + Q and FP8 Q, K, V 8,320 × 32 × (1,152 + 192 +
    192 + 128) = 443,023,360 + tokens' info 8 × 8,320 = 66,560 + 287,744 of small buffers = 476,932,096 (the log's)."""
    mla = _mla(TP4_EP4)
    assert context_bytes(mla, 32, 8320, 2048, fp8_context_mla=True) == 476_932_096


def test_the_cuda_graph_workspace_at_tp4_and_tp8_is_the_logged_one() -> None:
    """2,048 requests × heads × 576 × 2 B × tile + two float rows of 2,048 × heads × tile, tile = ⌈148 SMs ÷
    heads⌉: TP 4 32 × 5, TP 8 16 × 10, both 160: 377,487,360 + 2 × 1,310,720 = 380,108,800 (the logs', at
    max_seq_len 8,192 and 10,240: the window's shared-memory minimum stays 1)."""
    mla = _mla(TP4_EP4)
    assert generation_bytes(mla, 32, 2048, 8192, B200_SMS) == 380_108_800
    assert generation_bytes(mla, 16, 2048, 8192, B200_SMS) == 380_108_800
    assert generation_bytes(mla, 32, 2048, 10240, B200_SMS) == 380_108_800


def test_the_tp4_plan_holds_both_beyond_the_read_rest() -> None:
    """The record's plan charges the two workspaces beside the weights, less the dense start's 41,960,448 B the read
    rest already holds (faradawn's log): 470,115,328 + 380,108,800 − 41,960,448 = 808,263,680 B."""
    found = held_in_torch(_inputs(TP4_EP4))
    assert found is not None
    assert found[0] == 470_115_328 + 380_108_800 - READ_REST_WORKSPACE_BYTES == 808_263_680
    weights = next(t for t in terms(_inputs(TP4_EP4)) if t.term is Term.WEIGHTS)
    assert "MLA attention workspaces" in weights.basis


def test_without_fp8_kv_no_fp8_buffers_and_a_tp8_rank_holds_half_the_heads() -> None:
    """TP 8 (16 heads): the FP8 Q/K/V buffers go with FP8 context MLA; a bf16 KV cache leaves cuBLAS 33,554,432 +
    Q 2 × 8,192 × 16 × 576 = 150,994,944 + 65,536 + 287,744 = 184,902,656."""
    mla = _mla(TP8_EP8)
    assert context_bytes(mla, 16, 8192, 2048, fp8_context_mla=False) == 184_902_656


def test_a_model_without_mla_holds_none() -> None:
    """Llama-3.1-8B (no MLA) on the PyTorch backend: nothing beyond the read rest."""
    record = next(r for r in TRTLLM.values() if "issue6294" in r.id)
    assert held_in_torch(record.inputs()) is None
