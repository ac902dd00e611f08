"""SGLang 0.5.23's fp32 LM head by class (weights_classes.FP32_HEAD): Ling-2.5's only when untied.

bailing_moe_linear.py BailingMoeV2_5ForCausalLM.__init__: `if config.tie_word_embeddings: self.lm_head =
self.model.word_embeddings` (the model dtype), else `ParallelLMHead(..., params_dtype=torch.float32)`. The untied
case is tests/domain/test_lightning_entries.py's meta build; here the same reconstructed Ring-V2.5 config with
tie_word_embeddings true holds one bf16 [157,184, 2,048] matrix and no fp32 head.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB

CONFIG = Path(__file__).resolve().parents[2] / "data" / "configs" / "recon" / "recon--inclusionAI--Ring-V2.5-class.json"
# the untied build at TP 1 (test_lightning_entries: SGLang 0.5.23's meta build): `model` 32,249,220,096 B and an fp32
# lm_head of 157,184 × 2,048 × 4 = 1,287,651,328 B; tied, the head is the embedding already in `model`
MODEL_BYTES, UNTIED_HEAD_BYTES = 32_249_220_096, 157_184 * 2_048 * 4


def _weights(tied: bool) -> int:
    config = {**json.loads(CONFIG.read_text()), "tie_word_embeddings": tied}
    model = model_from_config(config, source="ring-v2.5-class")
    settings = parse_flags("sglang", ["--tp", "1", "--engine-version", "0.5.23", "--max-model-len", "8192"])
    budget = MeasuredInputs(free_before_load_bytes=80 * GIB, free_after_load_bytes=60 * GIB)
    ledger = predict(model, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=budget)
    rows = {row.component for row in ledger.ranks[0].weights.rows}
    assert ("fp32_lm_head" in rows) is not tied
    return int(ledger.ranks[0].weights.total_bytes)


def test_an_untied_ling_25_head_is_fp32() -> None:
    assert _weights(tied=False) == MODEL_BYTES + UNTIED_HEAD_BYTES


def test_a_tied_ling_25_head_is_the_embedding_in_bf16() -> None:
    assert _weights(tied=True) == MODEL_BYTES
