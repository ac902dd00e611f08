"""Under attention DP SGLang splits a tower's VisionAttention over the attention-TP group and its MLPs and merger over
TP (srt/layers/attention/vision.py 0.5.0rc0:370 `get_attention_tp_size()`, 0.5.15:928 `get_parallel().attn_tp_size`;
0.5.15 qwen2_5_vl.py:97 Qwen2_5_VLMLP and :228 Qwen2_5_VisionPatchMerger `get_parallel().tp_size`); 0.4.10.post2's
VisionAttention took the TP world size (vision.py:368).

Expected figures from the configs by hand, never kvtop's:
- Qwen2.5-VL-7B (tests/data/configs/heldout/Qwen--Qwen2.5-VL-7B-Instruct.json: depth 32, hidden 1,280, 16 heads):
  per block qkv 1,280 × 3,840 + its bias 3,840, proj 1,280 × 1,280: 6,557,440, × 32 = 209,838,080 attention
  parameters. At TP 4 with --dp 2 --enable-dp-attention (attention TP 2) a rank holds 209,838,080 ÷ 2 of them
  where TP 4 alone holds ÷ 4: 52,459,520 more; the rest of the tower alike.
- MiMo-V2.5 (tests/data/configs/heldout/wave5/XiaomiMiMo--MiMo-V2.5.json, mimo_vl.py qk_channels = kv_channels = 64):
  per block qkv 1,280 × (32 + 2 × 8) × 64 + its bias 3,072, proj 2,048 × 1,280: 6,556,672, × 28 = 183,586,816; at
  TP 8 --dp 2 (attention TP 4) without --mm-enable-dp-encoder: 183,586,816 × (1/4 − 1/8) = 22,948,352 more a rank.
"""

from __future__ import annotations

import pytest

from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

H100 = 81_559 << 20
QWEN25_VL = CONFIGS / "heldout" / "Qwen--Qwen2.5-VL-7B-Instruct.json"
MIMO = CONFIGS / "heldout" / "wave5" / "XiaomiMiMo--MiMo-V2.5.json"


def _tower(config: str, version: str, tp: int, *flags: str) -> float:
    settings = parse_flags("sglang", ["--engine-version", version, "--tp", str(tp), *flags])
    ledger = predict(load_model(config), settings, gpu_total_bytes=H100, gpu_name="H100")
    return next(r.params for r in ledger.ranks[0].weights.rows if r.component in ("vision", "vision_audio"))


@pytest.mark.parametrize("version", ["0.5.15", "0.5.21"])
def test_qwen25_vl_attention_splits_over_attention_tp(version: str) -> None:
    dp_attention = _tower(str(QWEN25_VL), version, 4, "--dp", "2", "--enable-dp-attention")
    assert dp_attention - _tower(str(QWEN25_VL), version, 4) == pytest.approx(
        209_838_080 / 2 - 209_838_080 / 4
    )
    assert 209_838_080 / 2 - 209_838_080 / 4 == 52_459_520


def test_before_0_5_0_the_attention_splits_over_tp() -> None:
    assert _tower(str(QWEN25_VL), "0.4.10.post2", 4, "--dp", "2", "--enable-dp-attention") == pytest.approx(
        _tower(str(QWEN25_VL), "0.4.10.post2", 4)
    )


def test_mimo_v25_without_the_dp_encoder() -> None:
    dp_attention = _tower(str(MIMO), "0.5.15.post1", 8, "--dp", "2", "--enable-dp-attention")
    assert dp_attention - _tower(str(MIMO), "0.5.15.post1", 8) == pytest.approx(22_948_352)


QWEN3_VL = CONFIGS / "heldout" / "Qwen--Qwen3-VL-8B-Instruct.json"


def test_qwen3_vl_splits_its_whole_tower_over_attention_tp_from_0_5_9() -> None:
    """qwen3_vl.py 0.5.9:91 / :241 and 0.5.15:115 / :275 build the MLPs and mergers over `get_attention_tp_size()`,
    and the pos_embed VocabParallelEmbedding `use_attn_tp_group=is_dp_attention_enabled()` (0.5.15:347): at TP 4
    with attention TP 2 a rank holds what TP 2 holds."""
    dp_attention = _tower(str(QWEN3_VL), "0.5.15", 4, "--dp", "2", "--enable-dp-attention")
    assert dp_attention == pytest.approx(_tower(str(QWEN3_VL), "0.5.15", 2))


def test_qwen3_vl_at_0_5_8_splits_only_its_attention_over_attention_tp() -> None:
    """0.5.8 qwen3_vl.py :89 / :239 the MLPs and mergers over the TP world size; VisionAttention over attention TP.
    Qwen3-VL-8B's vision_config: depth 27, hidden 1,152: per block qkv 1,152 × 3,456 + 3,456, proj 1,152²:
    5,311,872, × 27 = 143,420,544; ÷ 2 − ÷ 4 = 35,855,136 more a rank than at TP 4 alone."""
    dp_attention = _tower(str(QWEN3_VL), "0.5.8", 4, "--dp", "2", "--enable-dp-attention")
    assert dp_attention - _tower(str(QWEN3_VL), "0.5.8", 4) == pytest.approx(35_855_136)
