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
from kvtop.domain.wording import GIB

CORPUS = load_all()
TRTLLM = {record.id: record for record in CORPUS["trtllm"]}
NVFP4_TP4 = "zufayu-e2eperf-dsr1-0528-nvfp4-b200-tp4-ep4-trtllm-130rc10"
NVFP4_TP8 = "zufayu-e2eperf-dsr1-0528-nvfp4-b200-tp8-ep8-trtllm-120rc6post2"
FP8_TP8 = "zufayu-e2eperf-dsr1-0528-fp8-b200-tp8-trtllm-120rc6post3"
NVFP4_TP2 = "zufayu-e2eperf-dsr1-0528-nvfp4-b300-tp2-trtllm-130rc10"
EMBEDDING = 129_280 * 7_168 * 2  # DeepSeek-R1's vocab × hidden in bf16: 1,853,358,080 B, whole on every rank


def _held(record_id: str, gpu: str | None = None, **changes: object) -> int:
    raw = {**TRTLLM[record_id].raw, **changes}
    if gpu is not None:
        raw["gpu"] = gpu
    found = held_beside(resolve(raw).inputs())
    return found[0] if found else 0


def test_nvfp4_v2_holds_the_embedding_whole_and_a_bf16_k_b_proj_trans() -> None:
    """`MLA.create_weights` registers k_b_proj_trans as `float8_e4m3fn if has_fp8_block_scales else self.dtype`:
    kv_b_proj has no FP8 block scales in NVFP4-v2, so it is the model dtype, bf16: [128 / TP heads, 512, 128] × 2 B
    on each of 61 layers. TP 4: the embedding's other 3/4, 1,390,018,560 B, and
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


def test_the_dequantized_copies_follow_pr_6486_and_the_native_fp8_bmm() -> None:
    """The BF16 copies came with PR #6486 (merged 2025-08-01; 1.0.0rc5 assumed the first release with them): the FP8
    TP 8 start planned as 1.0.0rc4 keeps the FP8 copy and its scale alone, 1,685,667,072 B as on an H100. With the LLM
    API's `use_cute_dsl_blockscaling_bmm: true` create_weights skips them (`if is_sm_100f() and not
    self.use_cute_dsl_blockscaling_bmm`): the same 1,685,667,072 B."""
    without = EMBEDDING * 7 // 8 + 61 * 16 * 512 * 128 + 61 * 16 * 4 * 1 * 4
    assert _held(FP8_TP8, version="1.0.0rc4") == without == 1_685_667_072
    flags = [*TRTLLM[FP8_TP8].raw["flags"], "--use_cute_dsl_blockscaling_bmm", "true"]
    assert _held(FP8_TP8, flags=flags) == without


def test_kimi_k25_builds_a_deepseek_v3_language_model() -> None:
    """modeling_kimi_k25.py builds `self.llm = DeepseekV3ForCausalLM(text_model_config)`: Kimi-K2.5 at TP 8 holds its
    embedding whole, 163,840 × 7,168 × 2 B, 7/8 of it beyond the book: 2,055,208,960 B; its attention is bf16 (no FP8
    block scales), so k_b_proj_trans is 61 × (64 / 8) × 512 × 128 × 2 = 63,963,136 B."""
    kimi = {"config": "heldout/moonshotai--Kimi-K2.5.json", "model": "moonshotai/Kimi-K2.5"}
    assert _held(FP8_TP8, **kimi) == 163_840 * 7_168 * 2 * 7 // 8 + 61 * 8 * 512 * 128 * 2 == 2_119_172_096


def test_the_weights_term_moves_toward_the_logged_torch_memory() -> None:
    """The starts' torch memory after the load against the book (session 53's plans): TP 4 / EP 4 93.90 against
    91.40 GiB, TP 8 / EP 8 49.13 against 46.66, FP8 TP 8 81.86 against 79.29, TP 2 (CUTLASS, B300) 185.48 against
    180.88. With the rule (and, at TP 2, §26's cached CUTLASS workspace) each term lands between the book and the log:
    the rest is not found (§25)."""
    for record_id, logged, book in ((NVFP4_TP4, 93.90, 91.40), (NVFP4_TP8, 49.13, 46.66), (FP8_TP8, 81.86, 79.29),
                                    (NVFP4_TP2, 185.48, 180.88)):  # fmt: skip
        weights = next(t for t in terms(TRTLLM[record_id].inputs()) if t.term is Term.WEIGHTS)
        gib = weights.bytes / GIB
        assert book < gib < logged, (record_id, gib)
        assert "DeepseekV3Model" in weights.basis
