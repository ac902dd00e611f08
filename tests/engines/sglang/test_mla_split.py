"""SGLang's MLA split (engines/sglang/mla_split.py; docs/engines/sglang.md §20.3): DeepSeek's classes copy kv_b_proj's
W_UK and W_UV halves to `w_kc` / `w_vc` at the load (models/deepseek_v2.py `post_load_weights`, read from 0.3.6 to
0.5.23) and keep kv_b_proj, so the load's `mem usage` holds them beside the checkpoint.

Expected figures by hand from DeepSeek-R1's config (tests/data/configs/deepseek-ai--DeepSeek-R1.json: 128 heads,
qk_nope 128, v_head 128, kv_lora_rank 512, 61 layers, block-FP8 128 × 128) and the `mem usage` SGLang printed
(tests/data/calibration/sglang.jsonl). Never kvtop's own figures.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from benchmarks.calibration.evaluate import weights_term
from kvtop.domain.engines.sglang.mla_split import split_copies, split_tensors
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.wording import GIB, MIB

RECORDS = {record.id: record for record in load("sglang")}
R1_B200_TP8 = "file9615030885-deepseek-r1-0528-b200-tp8"  # SGLang 0.4.10.post1 (by date)
R1_H100_TP16 = ("slurmv4-deepseek-r1-16xh100-tp16-2nodes-pd-prefill-v058",
                "slurmv4-deepseek-r1-16xh100-tp16-2nodes-pd-decode-v058post1")  # fmt: skip


def test_block_fp8_r1_at_tp8_holds_244_mib_of_bf16_copies_from_0_4_6_post5() -> None:
    """TP 8: 16 heads a rank; w_kc 16 × 128 × 512 and w_vc 16 × 128 × 512, dequantized to bf16 (128 × 128 blocks on
    CUDA: `block_quant_dequant`, 0.4.6.post5 on): 2,097,152 B each, × 2 × 61 layers = 255,852,544 B (244 MiB)."""
    inputs = RECORDS[R1_B200_TP8].inputs()
    assert split_tensors(inputs) == (2_097_152,) * 122
    found = split_copies(inputs)
    assert found is not None and found[0] == 255_852_544 == 244 * MIB


def test_before_0_4_6_post5_block_fp8_is_requantized_to_one_byte() -> None:
    """0.4.3.post4's `post_load_weights` re-quantizes a block-FP8 kv_b_proj per tensor (`block_quant_to_tensor_quant`)
    before the split: the copies are FP8, 1,048,576 B each, 127,926,272 B in all; before 0.3.6 nothing is read."""
    inputs = RECORDS[R1_B200_TP8].inputs()
    older = inputs.model_copy(update={"version": ResolvedVersion(text="0.4.3.post4")})
    found = split_copies(older)
    assert found is not None and found[0] == 127_926_272
    assert split_copies(inputs.model_copy(update={"version": ResolvedVersion(text="0.3.5")})) is None


def test_a_model_without_mla_or_of_another_class_copies_nothing() -> None:
    """Qwen3-8B has no latent attention: no split."""
    assert split_copies(RECORDS["file52132052242-qwen3-8b-b200"].inputs()) is None


def test_r1_at_tp16_weights_meet_the_logged_mem_usage_closer() -> None:
    """SGLang 0.5.8.post1 on 16 × H100 printed 'mem usage=40.62 GB' (GiB) for DeepSeek-R1's block-FP8 checkpoint at
    TP 16: 8 heads a rank, 61 × 2 × 8 × 128 × 512 × 2 B = 127,926,272 B (122 MiB) of copies, which bring the weights
    term within 0.3 % of it (the book and the rope cache alone were 0.54 % short)."""
    for record_id in R1_H100_TP16:
        record = RECORDS[record_id]
        found = split_copies(record.inputs())
        assert found is not None and found[0] == 127_926_272
        estimate = weights_term(record)
        assert estimate is not None and abs(estimate.bytes / GIB - 40.62) / 40.62 < 0.003
