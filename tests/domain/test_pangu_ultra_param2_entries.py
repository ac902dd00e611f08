"""The openPangu-Ultra-MoE (pangu_ultra_moe) and Param2 (param2moe) entries against vLLM 0.33.0's own classes.

Expected figures are the arithmetic of the parameter shapes vLLM 0.33.0 builds on the meta device (models/openpangu.py
PanguUltraMoEForCausalLM, models/param2moe.py Param2MoEForCausalLM; SGLang 0.5.23 registers neither) for
tests/data/configs/FreedomIntelligence--openPangu-Ultra-MoE-718B.json (the checkpoint's config.json, SOURCES.md there)
and tests/data/configs/recon/recon--bharatgenai--Param2-17B-A2.4B-Thinking.json (rebuilt from published sizes,
recon/SOURCES.md), and the totals the registry sweep recorded (tests/data/engine_diff/registry/vllm-0.33.0.json):
openPangu-Ultra-MoE-718B 1,438,187,535,360 B at TP 1 and 720,199,236,608 B at TP 2; Param2 34,307,758,336 B and
17,159,215,360 B.
"""

from __future__ import annotations

import json

from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

PANGU_ULTRA = DATA / "configs" / "FreedomIntelligence--openPangu-Ultra-MoE-718B.json"
PARAM2 = DATA / "configs" / "recon" / "recon--bharatgenai--Param2-17B-A2.4B-Thinking.json"
BF16, FP32 = 2, 4


def _total(config: dict[str, object], tp: int) -> int:
    m = model_from_config(config, source="test")
    return weights_book(m, ParallelLayout(tp=tp), range(m.num_layers), first_stage=True, last_stage=True).total_bytes


def test_openpangu_ultra_moe_book_is_vllms_build() -> None:
    """TP 1, bfloat16: embed_tokens and lm_head [153600, 7680]; each of 61 layers q_a_proj [1536, 7680],
    q_a_layernorm [1536], q_b_proj [128 × 192, 1536], kv_a_proj_with_mqa [512 + 64, 7680], kv_a_layernorm [512],
    kv_b_proj [128 × 256, 512], o_proj [7680, 128 × 128] and four norms [7680] (sandwich_norm: input,
    post-attention, pre- and post-MLP); layers 0-2 a dense MLP (gate_up [2 × 18432, 7680], down [7680, 18432]);
    layers 3-60 gate [256, 7680], experts [256, 2 × 2048, 7680] and [256, 7680, 2048], one shared expert
    (gate_up [2 × 2048, 7680], down [7680, 2048]), no score-correction bias (router_enable_expert_bias unstated);
    the final norm [7680]. The generic reading missed the two sandwich norms: 61 × 2 × 7680 × 2 B = 1,873,920 B."""
    hidden, vocab = 7680, 153600
    attention = (1536 * hidden + 1536 + 128 * 192 * 1536 + 576 * hidden + 512 + 128 * 256 * 512
                 + hidden * 128 * 128 + 4 * hidden)  # fmt: skip
    dense = 2 * 18432 * hidden + hidden * 18432
    moe = 256 * hidden + 256 * 2 * 2048 * hidden + 256 * hidden * 2048 + 2 * 2048 * hidden + hidden * 2048
    expected = (2 * vocab * hidden + 61 * attention + 3 * dense + 58 * moe + hidden) * BF16
    assert expected == 1_438_187_535_360
    config = json.loads(PANGU_ULTRA.read_text())
    assert _total(config, 1) == expected
    assert _total(config, 2) == 720_199_236_608
    # without sandwich_norm, OpenPanguDecoderLayer builds two norms a layer
    assert _total({**config, "sandwich_norm": False}, 1) == expected - 61 * 2 * hidden * BF16


def test_param2_book_is_vllms_build() -> None:
    """TP 1, bfloat16: embed_tokens [128064, 2048] tied with lm_head (vLLM pads 128,008 rows to a multiple of 64);
    each of 21 layers qkv_proj [(32 + 2 × 8) × 64, 2048], o_proj [2048, 2048], two norms [2048], q/k norms [64];
    layer 0 a dense MLP (gate_up [2 × 9216, 2048], down [2048, 9216]); layers 1-20 gate [64, 2048] and
    e_score_correction_bias [64] in float32 (GateLinear params_dtype float32), experts [64, 2 × 2048, 2048] and
    [64, 2048, 2048], shared experts 4,096 wide in all (gate_up [2 × 4096, 2048], down [2048, 4096]); the final norm.
    The generic reading booked the gate in bfloat16 without the bias: 20 × (64 × 2048 × 2 + 64 × 4) B short."""
    hidden = 2048
    attention = 3072 * hidden + hidden * hidden + 2 * hidden + 2 * 64
    dense = 2 * 9216 * hidden + hidden * 9216
    moe = 64 * 2 * 2048 * hidden + 64 * hidden * 2048 + 2 * 4096 * hidden + hidden * 4096
    expected = (128064 * hidden + 21 * attention + dense + 20 * moe + hidden) * BF16 + 20 * (64 * hidden + 64) * FP32
    assert expected == 34_307_758_336
    config = json.loads(PARAM2.read_text())
    assert _total(config, 1) == expected
    assert _total(config, 2) == 17_159_215_360
    # shared experts unstated in all: num_shared_experts × moe_intermediate_size (2 × 2048), the same width here
    unstated = {k: v for k, v in config.items() if k != "moe_shared_expert_intermediate_size"}
    assert _total(unstated, 1) == expected
