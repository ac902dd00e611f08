"""The Sarvam entries (sarvam_moe: Sarvam-30B, sarvam_mla: Sarvam-105B) against the engines' own classes.

Expected figures are the arithmetic of the parameter shapes vLLM 0.33.0 (models/sarvam.py, bailing_moe.py) and
SGLang 0.5.23 (models/sarvam_moe.py, bailing_moe.py) build on the meta device for the reconstructed configs
tests/data/configs/recon/recon--sarvamai--sarvam-{30b,105b}.json (sources in SOURCES.md there), and the totals the
registry sweep recorded for them (tests/data/engine_diff/registry/{vllm-0.33.0,sglang-0.5.23}.json): Sarvam-30B
64,305,305,344 B at TP 1 and 32,162,256,640 B at TP 2 in SGLang (vLLM 4,864 B more: its q/k LayerNorm biases);
Sarvam-105B 212,063,542,784 B and 106,123,812,352 B in both; SGLang's cells 19,456 B (30B, TP 1) and 36,864 B (105B).
"""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.kv import kv_book
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

RECON = DATA / "configs" / "recon"
SARVAM_30B = RECON / "recon--sarvamai--sarvam-30b.json"
SARVAM_105B = RECON / "recon--sarvamai--sarvam-105b.json"
BF16, FP32 = 2, 4
VOCAB, HIDDEN = 262144, 4096
VLLM_0_33 = ResolvedVersion(text="0.33.0", source=VersionSource.FLAG)


def _config(path: Path) -> dict[str, object]:
    return dict(json.loads(path.read_text()))


def _sglang_cell(model: ModelSpec) -> int:
    """KV bytes per token of a TP 1 rank under SGLang 0.5.23's storage (its cell)."""
    book = kv_book(model, ParallelLayout(), range(model.num_layers), "bf16", engine_rules("sglang").kv_storage)
    return sum(pool.bytes_per_token for pool in book.pools)


def test_sarvam_30b_book_is_the_engines_build() -> None:
    """TP 1, bfloat16: word_embeddings and lm_head [262144, 4096] (untied); each of 19 layers query_key_value
    [(64 + 2 × 4) × 64, 4096], dense [4096, 4096], two norms [4096], query/key_layernorm [64]; layer 0 a dense MLP
    (gate_up [2 × 8192, 4096], down [4096, 8192]); layers 1-18 gate [128, 4096], expert_bias [128] in float32,
    experts w13 [128, 2 × 1024, 4096] and w2 [128, 4096, 1024], one shared expert (gate_up [2 × 1024, 4096], down
    [4096, 1024]); the final norm [4096]."""
    attention = 4608 * HIDDEN + HIDDEN * HIDDEN + 2 * HIDDEN + 2 * 64
    dense = 2 * 8192 * HIDDEN + HIDDEN * 8192
    moe = 128 * HIDDEN + 128 * 2 * 1024 * HIDDEN + 128 * HIDDEN * 1024 + 2 * 1024 * HIDDEN + HIDDEN * 1024
    expected = (2 * VOCAB * HIDDEN + 19 * attention + dense + 18 * moe + HIDDEN) * BF16 + 18 * 128 * FP32
    assert expected == 64_305_305_344
    m = model_from_config(_config(SARVAM_30B), source="Sarvam-30B")
    assert m.moe is not None and m.moe.router_bias and m.moe.shared_intermediate_size == 1024
    for tp, total in ((1, expected), (2, 32_162_256_640)):
        book = weights_book(m, ParallelLayout(tp=tp), range(m.num_layers), first_stage=True, last_stage=True)
        assert book.total_bytes == total
    # SGLang's cell: 19 layers × K and V × 4 KV heads × 64 × 2 B
    assert _sglang_cell(m) == 19 * 2 * 4 * 64 * BF16 == 19_456


def test_vllm_builds_sarvam_30b_qk_norms_as_layernorms() -> None:
    """vLLM's SarvamMoEForCausalLM subclasses BailingMoeForCausalLM: nn.LayerNorm(head_dim) q/k norms where
    use_rmsnorm is unstated, a bias [64] beside each on 19 layers: 19 × 2 × 64 × 2 B = 4,864 B on every rank (the
    sweep's vLLM totals 64,305,310,208 B at TP 1 and 32,162,261,504 B at TP 2 are SGLang's plus this)."""
    m = model_from_config(_config(SARVAM_30B), source="Sarvam-30B")
    for tp in (1, 2):
        rows = engine_rules("vllm").weights_built(m, ParallelLayout(tp=tp), range(19), "H100", VLLM_0_33)
        assert sum(r.bytes for r in rows) == 19 * 2 * 64 * BF16 == 4_864


def test_sarvam_105b_book_is_the_engines_build() -> None:
    """TP 1, bfloat16: word_embeddings and lm_head [262144, 4096]; each of 32 layers q_proj [64 × 192, 4096]
    (q_lora_rank None), kv_a_proj_with_mqa [512 + 64, 4096], kv_a_layernorm [512], kv_b_proj [64 × (128 + 128), 512],
    o_proj [4096, 64 × 128], two norms [4096]; layer 0 a dense MLP (gate_up [2 × 16384, 4096], down [4096, 16384]);
    layers 1-31 gate [128, 4096], e_score_correction_bias [128] in float32, experts [128, 2 × 2048, 4096] and
    [128, 4096, 2048], one shared expert (gate_up [2 × 2048, 4096], down [4096, 2048]); the final norm [4096]."""
    attention = 64 * 192 * HIDDEN + 576 * HIDDEN + 512 + 64 * 256 * 512 + HIDDEN * 64 * 128 + 2 * HIDDEN
    dense = 2 * 16384 * HIDDEN + HIDDEN * 16384
    moe = 128 * HIDDEN + 128 * 2 * 2048 * HIDDEN + 128 * HIDDEN * 2048 + 2 * 2048 * HIDDEN + HIDDEN * 2048
    expected = (2 * VOCAB * HIDDEN + 32 * attention + dense + 31 * moe + HIDDEN) * BF16 + 31 * 128 * FP32
    assert expected == 212_063_542_784
    m = model_from_config(_config(SARVAM_105B), source="Sarvam-105B")
    for tp, total in ((1, expected), (2, 106_123_812_352)):
        book = weights_book(m, ParallelLayout(tp=tp), range(m.num_layers), first_stage=True, last_stage=True)
        assert book.total_bytes == total
    # SGLang's cell: one latent of 512 + 64 per layer, 32 layers × 576 × 2 B, whatever the TP
    assert _sglang_cell(m) == 32 * 576 * BF16 == 36_864


def test_sarvam_105b_expert_bias_follows_its_flag() -> None:
    """moe_router_enable_expert_bias false: vLLM's SarvamMLAMoE leaves e_score_correction_bias None (31 × 128 × 4 B
    fewer); unstated, vLLM's getattr default (true) keeps it."""
    data = _config(SARVAM_105B)
    off = model_from_config({**data, "moe_router_enable_expert_bias": False}, source="Sarvam-105B")
    unstated = model_from_config({k: v for k, v in data.items() if k != "moe_router_enable_expert_bias"},
                                 source="Sarvam-105B")  # fmt: skip
    assert off.moe is not None and not off.moe.router_bias
    assert unstated.moe is not None and unstated.moe.router_bias
