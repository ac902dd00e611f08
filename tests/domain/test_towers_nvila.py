"""NVILA's and NVILA-Lite's SigLIP and projector, Sarashina2-Vision's Qwen2-VL ViT and output norm
(kvtop.domain.architectures.towers_nvila).

Oracle: SGLang 0.5.23's meta build of the registry sweep's composed configs (tests/data/engine_diff/registry/configs,
SOURCES.md: NVILAConfig / NVILALiteConfig over SiglipVisionConfig() and Qwen2Config(); Sarashina2-Vision over
Qwen2VLVisionConfig() and LlamaConfig(); bf16), built by `benchmarks/engine_diff/registry_sweep.py --engine sglang
--set classes --only default--<class>` and kept as the registry rows (tests/data/engine_diff/registry/
sglang-0.5.23.json). vLLM 0.33.0 registers none of the three classes.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import load_rows, row_of
from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA
from tests.domain.tower_book import first_stage_vision_row

CONFIGS = DATA / "engine_diff" / "registry" / "configs"
# SiglipVisionModel(SiglipVisionConfig()): 768 wide, MLP 3072, 12 layers, 224 / 16 = 14² = 196 positions
_EMBED = 3 * 16 * 16 * 768 + 768 + 196 * 768  # the biased Conv2d patch embedding and the position table
_LAYER = (
    2 * 2 * 768 + 4 * (768 * 768 + 768) + (768 * 3072 + 3072) + (3072 * 768 + 768)
)  # LNs, q k v out, fc1, fc2
# SiglipMultiheadAttentionPoolingHead: probe, in_proj 3 × 768² + bias, out_proj, LayerNorm, MLP
_HEAD = 768 + (3 * 768 * 768 + 3 * 768) + (768 * 768 + 768) + 2 * 768 + (768 * 3072 + 3072 + 3072 * 768 + 768)
SIGLIP = _EMBED + 12 * _LAYER + 2 * 768 + _HEAD  # post_layernorm 2 × 768
# SGLang 0.5.23 nvila.py:89-97 over MM_HIDDEN_SIZE 3456 (line 31), text 4,096: LayerNorm(13,824), Linear 13,824 →
# 4,096, Linear 4,096 → 4,096, biased, all nn.Module (whole on every rank)
NVILA_PROJECTOR = 2 * 13_824 + (13_824 * 4096 + 4096) + (4096 * 4096 + 4096)
# nvila_lite.py:86-98 over MM_HIDDEN_SIZE 1152: LayerNorm(10,368), Linear 10,368 → 3,456, LayerNorm(3,456),
# Linear 3,456 → 4,096, Linear 4,096 → 4,096
NVILA_LITE_PROJECTOR = (2 * 10_368 + (10_368 * 3456 + 3456) + 2 * 3456 + (3456 * 4096 + 4096)
                        + (4096 * 4096 + 4096))  # fmt: skip
# qwen2_vl.py Qwen2VisionTransformer(Qwen2VLVisionConfig()): 1,280 wide, 16 heads, MLP 4 × 1,280, 32 blocks, merger
# to 3,584. Split over TP (Column / Row-parallel): qkv and fc1 with their biases, proj's and fc2's weights, the merger's
# two linears (the first's bias); whole: the unbiased Conv3d patch 3 × 2 × 14² → 1,280, the LayerNorms, proj's and
# fc2's biases, the merger's ln_q and last bias
_QWEN2_SPLIT = 32 * ((1280 * 3840 + 3840) + 1280 * 1280 + (1280 * 5120 + 5120) + 5120 * 1280) + (
    (5120 * 5120 + 5120) + 5120 * 3584
)
_QWEN2_WHOLE = 3 * 2 * 14 * 14 * 1280 + 32 * (2 * 2 * 1280 + 1280 + 1280) + 2 * 1280 + 3584
# the engine's rows (bf16): {class: {tp: {child: bytes}}}
ENGINE = {
    "NVILAForConditionalGeneration": {tp: {"vision_tower": 185_768_448, "mm_projector": 146_872_320} for tp in (1, 2)},
    "NVILALiteForConditionalGeneration": {
        tp: {"vision_tower": 185_768_448, "mm_projector": 133_608_192} for tp in (1, 2)
    },
    "Sarashina2VisionForCausalLM": {1: {"visual": 1_351_518_208, "norm": 16_384},
                                    2: {"visual": 677_516_288, "norm": 16_384}},
}  # fmt: skip


def test_the_parts_by_hand_are_the_engines_bytes() -> None:
    """transformers' SiglipVisionModel and each projector, whole at TP 1 and 2; Sarashina2-Vision's norm is
    nn.LayerNorm(4,096) (sarashina2_vision.py:72), weight and bias."""
    assert 2 * SIGLIP == 185_768_448
    assert 2 * NVILA_PROJECTOR == 146_872_320
    assert 2 * NVILA_LITE_PROJECTOR == 133_608_192
    assert 2 * (2 * 4096) == 16_384
    assert 2 * (_QWEN2_WHOLE + _QWEN2_SPLIT) == 1_351_518_208
    assert 2 * (_QWEN2_WHOLE + _QWEN2_SPLIT // 2) == 677_516_288


@pytest.mark.parametrize("name", sorted(ENGINE))
@pytest.mark.parametrize("tp", (1, 2))
def test_tower_bytes_equal_the_engines_meta_build(name: str, tp: int) -> None:
    row = row_of("sglang", "0.5.23", f"default--{name}", tp)
    built = row["stages"][0]["param_bytes"]
    assert {child: built[child] for child in ENGINE[name][tp]} == ENGINE[name][tp]
    model = model_from_config(json.loads((CONFIGS / f"{name}.json").read_text()))
    vision = first_stage_vision_row(model, tp, SGLANG_SPLIT)
    assert int(vision.bytes) == sum(ENGINE[name][tp].values())


def test_nvila_tower_is_siglip_and_projector_whole() -> None:
    """NVILA's tower reads the vision_config's SigLIP sizes; the projector follows the module constant, not them."""
    data = json.loads((CONFIGS / "NVILAForConditionalGeneration.json").read_text())
    base = model_from_config(data).tower
    data["vision_config"]["vision_use_head"] = False
    headless = model_from_config(data).tower
    assert base is not None and headless is not None
    assert (base.params, base.tp_split_params) == (SIGLIP + NVILA_PROJECTOR, 0)
    assert base.params - headless.params == _HEAD


def test_the_harness_counts_sarashinas_norm_with_its_towers() -> None:
    """SGLang's Sarashina2-Vision holds `llm`, `visual` and `norm` (sarashina2_vision.py:61-84): the top-level norm is
    the LayerNorm over the vision output, so the language model is `llm` alone (its row: 13,476,831,232 B at TP 1)."""
    from benchmarks.engine_diff.architectures import _language_bytes

    row = next(
        r
        for r in load_rows("sglang", "0.5.23")
        if (r["config"], r["tp"]) == ("default--Sarashina2VisionForCausalLM", 1)
    )
    assert _language_bytes(row["stages"][0]["param_bytes"]) == (13_476_831_232, 1_351_518_208 + 16_384)
