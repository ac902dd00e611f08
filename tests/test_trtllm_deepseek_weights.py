"""TensorRT-LLM's PyTorch backend on DeepSeek-V3-class models (docs/engines/trtllm.md §25): the vocab embedding
whole on every rank and MLA's decomposed kv_b_proj copies, held in torch beside the checkpoint's tensors.

Expected values: the modules' own arithmetic (modeling_deepseekv3.py `Embedding(vocab, hidden)` with no mapping;
modules/attention.py `MLA.create_weights`, hand-computed below) and the starts' own lines (zufayu/ClaudeSkillsE2EPerf,
tests/data/calibration/trtllm.jsonl: 'Memory used after loading model weights (inside torch)' / 'Model weights
(torch)').
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load_all, resolve
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.trtllm.calibration import terms
from kvtop.domain.engines.trtllm.deepseek_weights import held_beside

CORPUS = load_all()
TRTLLM = {record.id: record for record in CORPUS["trtllm"]}
GIB = 1 << 30
NVFP4_TP4 = "zufayu-e2eperf-dsr1-0528-nvfp4-b200-tp4-ep4-trtllm-130rc10"
NVFP4_TP8 = "zufayu-e2eperf-dsr1-0528-nvfp4-b200-tp8-ep8-trtllm-120rc6post2"
FP8_TP8 = "zufayu-e2eperf-dsr1-0528-fp8-b200-tp8-trtllm-120rc6post3"
NVFP4_TP2 = "zufayu-e2eperf-dsr1-0528-nvfp4-b300-tp2-trtllm-130rc10"
EMBEDDING = 129_280 * 7_168 * 2  # DeepSeek-R1's vocab × hidden in bf16: 1,853,358,080 B, whole on every rank


def _held(record_id: str, gpu: str | None = None) -> int:
    raw = dict(TRTLLM[record_id].raw)
    if gpu is not None:
        raw["gpu"] = gpu
    inputs = resolve(raw).inputs()
    found = held_beside(inputs.model, inputs.layout, inputs.gpu_name)
    return found[0] if found else 0


def test_nvfp4_v2_holds_the_embedding_whole_and_a_bf16_k_b_proj_trans() -> None:
    """NVFP4-v2 leaves kv_b_proj unquantized (hf_quant_config's exclude_modules), so k_b_proj_trans is bf16:
    [128 / TP heads, 512, 128] × 2 B on each of 61 layers. TP 4: the embedding's other 3/4, 1,390,018,560 B, and
    61 × 32 × 512 × 128 × 2 = 255,852,544 B: 1,645,871,104 B. TP 2: 926,679,040 + 511,705,088 = 1,438,384,128 B."""
    assert _held(NVFP4_TP4) == EMBEDDING * 3 // 4 + 61 * 32 * 512 * 128 * 2 == 1_645_871_104
    assert _held(NVFP4_TP2) == EMBEDDING // 2 + 61 * 64 * 512 * 128 * 2 == 1_438_384_128


def test_fp8_block_scales_keep_an_fp8_copy_and_on_sm100_bf16_dequantized_k_and_v() -> None:
    """DeepSeek-R1's FP8 block-scaled kv_b_proj at TP 8 (16 heads a rank): k_b_proj_trans in float8_e4m3fn,
    61 × 16 × 512 × 128 = 63,963,136 B, its fp32 scale 61 × 16 × (512 / 128) × (128 / 128) × 4 = 15,616 B; on a
    B200 (sm_100) the BF16 k_b_proj_trans_dequant and v_b_proj_dequant, 61 × 2 × 16 × 512 × 128 × 2 = 255,852,544 B;
    the embedding's other 7/8, 1,621,688,320 B. On an H100 (sm_90) no dequantized copies."""
    fp8 = 61 * 16 * 512 * 128 + 61 * 16 * 4 * 1 * 4
    assert _held(FP8_TP8) == EMBEDDING * 7 // 8 + fp8 + 61 * 2 * 16 * 512 * 128 * 2 == 1_941_519_616
    assert _held(FP8_TP8, gpu="H100") == EMBEDDING * 7 // 8 + fp8 == 1_685_667_072


def test_other_classes_hold_nothing_beside_the_book() -> None:
    """gpt-oss-120b is no DeepseekV3Model: nothing added (its MXFP4 padding is moe_weights.py's)."""
    assert _held("zufayu-e2eperf-gpt-oss-120b-b200-tp1-trtllm-130rc10") == 0


def test_the_weights_term_moves_toward_the_logged_torch_memory() -> None:
    """The starts' torch memory after the load against the book (session 53's plans): TP 4 / EP 4 93.90 against
    91.40 GiB, TP 8 / EP 8 49.13 against 46.66, FP8 TP 8 81.86 against 79.29, TP 2 (CUTLASS, B300) 185.48 against
    180.88. With the rule the term lands 0.97, 0.84, 0.76 and 3.26 GiB short (the rest is not found: §25), each
    closer than the book alone and none above the log; the TP 2 CUTLASS start 1.50 GiB short with §26's cached MoE
    workspace (1.76 GiB, moe_workspace.py)."""
    for record_id, logged, book, short in ((NVFP4_TP4, 93.90, 91.40, 0.98), (NVFP4_TP8, 49.13, 46.66, 0.85),
                                           (FP8_TP8, 81.86, 79.29, 0.77), (NVFP4_TP2, 185.48, 180.88, 1.51)):
        weights = next(t for t in terms(TRTLLM[record_id].inputs()) if t.term is Term.WEIGHTS)
        gib = weights.bytes / GIB
        assert book < gib < logged and logged - gib < short, (record_id, gib)
        assert "DeepseekV3Model" in weights.basis


def test_the_all_reduce_fusion_workspace_is_4_x_64_mib_per_tp_rank_outside_torch() -> None:
    """`allocate_allreduce_fusion_workspace(mapping, 64 MiB)` on each rank: IPC buffers 64 MiB × TP, barriers 256 B ×
    TP, Lamport buffers 3 × 64 MiB × TP. TP 4: 268,435,456 + 1,024 + 805,306,368 = 1,073,742,848 B; TP 2:
    536,871,424 B; TP 1: none. Added to the non-torch term with its error unchanged (1.3.0rc10 is past PR #9145); at
    1.2.0rc2 the 8 / 16 MB workspace is left in the NCCL term's error."""
    from kvtop.domain.engines.trtllm.allreduce_workspace import fusion_workspace_bytes

    assert fusion_workspace_bytes(TRTLLM[NVFP4_TP4].inputs()) == 4 * 64 * 2**20 * 4 + 256 * 4 == 1_073_742_848
    assert fusion_workspace_bytes(TRTLLM[NVFP4_TP2].inputs()) == 4 * 64 * 2**20 * 2 + 256 * 2 == 536_871_424
    assert fusion_workspace_bytes(TRTLLM["zufayu-e2eperf-gpt-oss-120b-b200-tp1-trtllm-130rc10"].inputs()) == 0
    raw = dict(TRTLLM[NVFP4_TP4].raw)
    raw["version"] = "1.2.0rc2"
    assert fusion_workspace_bytes(resolve(raw).inputs()) == 0
    non_torch = next(t for t in terms(TRTLLM[NVFP4_TP4].inputs()) if t.term is Term.NON_TORCH)
    assert abs(non_torch.bytes / GIB - (1.95 + 0.75 * 2 + 1.0)) < 0.01 and "fusion workspace" in non_torch.basis
