"""What vLLM's AWQ-Marlin path holds of an AWQ checkpoint (quantization/awq_marlin.py, read at v0.8.5.post1).

`AWQMarlinLinearMethod.create_weights` registers the checkpoint's qweight (int32, in × out ÷ 8), qzeros (int32, in ÷
group × out ÷ 8) and scales (fp16, in ÷ group × out); `process_weights_after_loading` (awq_marlin.py:258-297) repacks
qweight, permutes scales and converts qzeros through `replace_parameter`, which copies each new tensor into the
registered storage when the bytes match (utils/layer_utils.py:8-17, 22-30: `update_tensor_inplace`), so nothing is
kept beside the checkpoint's tensors. It adds a Marlin workspace per linear (utils/marlin_utils.py:167-175:
out ÷ 64 × 16 int32 = `out` bytes) and two empty g_idx tensors: 86,016 B a Qwen2.5-72B layer, 6.9 MB over 80 layers
(0.02 % of the weights), which the book does not count.

Expected figures: the shapes of Qwen/Qwen2.5-72B-Instruct-AWQ's config (hidden 8,192, intermediate 29,696, 64 heads,
8 KV heads of 128, vocab 152,064 untied, 80 layers, group 128) counted by hand, and the weights two AWQ-Marlin starts
printed ('Model loading took … GiB', tests/data/calibration/vllm.jsonl). Never kvtop's own figures.
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import Record, load
from benchmarks.calibration.evaluate import weights_term
from kvtop.domain.wording import GIB

L20_72B = "file55204797650-qwen2.5-72b-awq-l20-v085"


def _record(record_id: str) -> Record:
    return next(record for record in load("vllm") if record.id == record_id)


def test_qwen25_72b_awq_holds_its_checkpoint_tensors_and_the_rope_cache() -> None:
    """The L20 start at v0.8.5.post1 (`--quantization awq_marlin --dtype half`): its weights term is the hand count."""
    hidden, inner, layers, vocab, group = 8_192, 29_696, 80, 152_064, 128
    linear = hidden * (64 + 2 * 8) * 128 + 64 * 128 * hidden + hidden * 2 * inner + inner * hidden  # qkv, o, gate_up, down
    assert linear == 880_803_840
    qweight, scales, qzeros = linear // 2, linear // group * 2, linear // group // 8 * 4
    biases, norms = (64 + 2 * 8) * 128 * 2, 2 * hidden * 2  # the fp16 qkv bias, two RMSNorm weights a layer
    embeddings = 2 * vocab * hidden * 2  # embed_tokens and lm_head, fp16, untied (152,064 is a multiple of 64: no pad)
    rope = 32_768 * 128 * 2  # max_position_embeddings × head_dim, fp16 (rotary_embedding.py's cos/sin cache)
    hand = layers * (qweight + scales + qzeros + biases + norms) + hidden * 2 + embeddings + rope
    assert hand == 41_603_907_584  # 38.747 GiB
    term = weights_term(_record(L20_72B))
    assert term is not None and term.bytes == hand


@pytest.mark.parametrize(("record_id", "logged_gib"), [
    ("file10876549642-llama-3-70b-awq-2xl40s-tp2-v0160", 18.55),  # Llama-3-70B-AWQ, TP 2 on 2 x L40S, v0.16.0
    ("file67587108858-qwen3-8b-awq-t4-v0200", 5.71),  # Qwen3-8B-AWQ on a T4, v0.20.0
])  # fmt: skip
def test_the_book_is_what_awq_marlin_starts_printed(record_id: str, logged_gib: float) -> None:
    """Within 0.4 % of 'Model loading took' (printed to 0.01 GiB): no repack copy is held beside the weights."""
    record = _record(record_id)
    assert record.figures["weights"] == round(logged_gib * GIB)
    term = weights_term(record)
    assert term is not None
    assert abs(term.bytes / (logged_gib * GIB) - 1) < 0.004
