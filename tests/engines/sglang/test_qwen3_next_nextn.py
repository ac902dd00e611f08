"""SGLang's Qwen3-Next NEXTN draft: one MTP layer (`Qwen3NextForCausalLMMTP`, srt/models/qwen3_next_mtp.py, read in
the 0.5.9 wheel): an nn.Linear fc of 2 × hidden → hidden with no bias (:56, a plain Linear the quant config does not
reach: BF16, whole on every rank), pre_fc_norm_embedding / pre_fc_norm_hidden (:58-61), and a Qwen3NextModel of
`num_hidden_layers = 1` with `full_attention_interval = 1` (:62-66): one full-attention decoder layer (its 512-expert
MoE) and the final norm; its own embedding and LM head (:67-73) are the target's rows, a term of their own.

Counted by hand for Qwen3-Next-80B-A3B-Instruct-FP8 (tests/data/calibration/configs, the published
modules_to_not_convert) on one TP-2 rank: block-FP8 128 × 128 projections with a float32 scale a block, the router
gate, shared-expert gate and norms BF16.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.deployment import Feature
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

CONFIG = DATA / "calibration" / "configs" / "Qwen--Qwen3-Next-80B-A3B-Instruct-FP8.RECONSTRUCTED.json"
H200 = 143771 << 20  # nvidia-smi's total (tests/data/samples/nvidia_smi)
TP, HIDDEN = 2, 2048


def _fp8(rows: int, cols: int) -> int:
    """A block-FP8 matrix on the rank: a byte a weight and a float32 scale per 128 × 128 block."""
    return rows * cols + -(-rows // 128) * -(-cols // 128) * 4


def _mtp_layer_bytes() -> int:
    """One rank's MTP layer: attention of 16 / 2 heads of 256 over TP 2 (q doubled by the output gate: 8 × 256 × 2
    rows, k and v one head each), q/k norms; 512 experts and the shared expert of 512 ÷ 2 rows (gate/up, down); the
    router 512 × hidden and shared-expert gate 1 × hidden in BF16; the layer's two norms, the model's final norm; the
    fc and its two norms."""
    attention = _fp8(8 * 256 * 2 + 2 * 256, HIDDEN) + _fp8(HIDDEN, 8 * 256) + 2 * 256 * 2
    expert = _fp8(2 * 512 // TP, HIDDEN) + _fp8(HIDDEN, 512 // TP)
    moe = 512 * expert + expert + 512 * HIDDEN * 2 + HIDDEN * 2
    return attention + moe + 3 * HIDDEN * 2 + 2 * HIDDEN * HIDDEN * 2 + 2 * HIDDEN * 2


@pytest.mark.parametrize(("release", "label"), [("0.5.9", "draft weights: 1 MTP layer, loaded after the pool"),
                                                ("0.5.23", "draft weights: 1 MTP layer, in the weights book")])  # fmt: skip
def test_the_nextn_draft_books_one_mtp_layer_of_sglangs_build(release: str, label: str) -> None:
    model = model_from_config(json.loads(CONFIG.read_text()), source=str(CONFIG))
    flags = ["--tp-size", str(TP), "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
             "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4", "--engine-version", release]  # fmt: skip
    ledger = predict(model, parse_flags("sglang", flags, strict=True), gpu_total_bytes=H200, gpu_name="H200")
    terms = {t.label: t for t in ledger.ranks[0].terms if t.feature is Feature.SPECULATIVE}
    assert _mtp_layer_bytes() == 839_611_008
    assert terms[label].bytes == _mtp_layer_bytes()
    # the layer's KV: one full-attention layer of 1 KV head × 256 × K and V × 2 B on the rank
    kv = next(t for name, t in terms.items() if "draft" in name and "KV" in name)
    assert kv.bytes_per_token == 1 * 256 * 2 * 2
