"""BLIP-2's vision model, Q-Former and projection, Granite-4.0-Vision's SigLIP and window Q-Former projectors
(kvtop.domain.architectures.towers_blip).

Oracle: vLLM 0.33.0's meta builds of the registry sweep's default configs (the config classes' defaults;
tests/data/engine_diff/registry/configs), listed by `benchmarks/engine_diff/registry_sweep.py --engine vllm
--params default--<class> --tps 1,2` and kept as the registry rows (tests/data/engine_diff/registry/
vllm-0.33.0.json, `param_bytes` by top-level module; SGLang 0.5.23 registers neither class):
  Blip2ForConditionalGeneration: vision_model 1,971,904,512 B at TP 1, 987,477,120 B at TP 2; qformer 210,275,328 B,
      query_tokens 49,152 B, language_projection 1,181,184 B at both
  Granite4VisionForConditionalGeneration: vision_tower 174,904,320 B at TP 1, 89,905,152 B at TP 2; image_newline
      8,192 B, layerwise_projectors and spatial_projectors 101,328,896 B each at both
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.architectures.towers_blip import qformer_params
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA
from tests.domain.tower_book import first_stage_vision_row

CONFIGS = DATA / "engine_diff" / "registry" / "configs"
ENGINE_TOWER_BYTES = {
    ("Blip2ForConditionalGeneration", 1): {"vision_model": 1_971_904_512, "qformer": 210_275_328,
                                           "query_tokens": 49_152, "language_projection": 1_181_184},
    ("Blip2ForConditionalGeneration", 2): {"vision_model": 987_477_120, "qformer": 210_275_328,
                                           "query_tokens": 49_152, "language_projection": 1_181_184},
    ("Granite4VisionForConditionalGeneration", 1): {"vision_tower": 174_904_320, "image_newline": 8_192,
                                                    "layerwise_projectors": 101_328_896,
                                                    "spatial_projectors": 101_328_896},
    ("Granite4VisionForConditionalGeneration", 2): {"vision_tower": 89_905_152, "image_newline": 8_192,
                                                    "layerwise_projectors": 101_328_896,
                                                    "spatial_projectors": 101_328_896},
}  # fmt: skip


@pytest.mark.parametrize(("name", "tp"), sorted(ENGINE_TOWER_BYTES))
def test_tower_bytes_equal_vllms_meta_build(name: str, tp: int) -> None:
    row = row_of("vllm", "0.33.0", f"default--{name}", tp)
    parts = row["stages"][0]["param_bytes"]
    assert {key: parts[key] for key in ENGINE_TOWER_BYTES[(name, tp)]} == ENGINE_TOWER_BYTES[(name, tp)]
    model = model_from_config(json.loads((CONFIGS / f"{name}.json").read_text()))
    vision = first_stage_vision_row(model, tp, TOWER_SPLIT)
    assert int(vision.bytes) == sum(ENGINE_TOWER_BYTES[(name, tp)].values())


def test_blip2_qformer_is_its_layers_by_hand() -> None:
    """Blip2QFormerConfig's defaults (width 768, MLP 3072, 12 layers, cross-attention every 2nd over the 1,408-wide
    vision output): 12 × (self-attention 4 × 768² + 6 × 768, query MLP 2 × 768 × 3072 + 3072 + 3 × 768) + 6 ×
    cross-attention (2 × 768² + 2 × 1408 × 768 + 6 × 768) + a final LayerNorm, in bf16 the engine's qformer."""
    self_attention = 4 * 768 * 768 + 6 * 768
    query_mlp = 2 * 768 * 3072 + 3072 + 3 * 768
    cross = 2 * 768 * 768 + 2 * 1408 * 768 + 6 * 768
    by_hand = 12 * (self_attention + query_mlp) + 6 * cross + 2 * 768
    assert 2 * by_hand == 210_275_328
    assert qformer_params(768, 1408, 3072, 12, 2) == by_hand


def test_granite_projector_is_its_parts_by_hand() -> None:
    """One WindowQFormerDownsampler of the default config (vision width 768, downsample_rate 4/8, text 4096): a
    one-layer Q-Former with cross-attention (qformer_params above), a LayerNorm, query 16 × 768, image_positions
    64 × 768, out_linear 768 × 4096 + 4096; the four of deepstack_layer_map make layerwise_projectors."""
    one = qformer_params(768, 768, 3072, 1, 1) + 2 * 768 + (16 + 64) * 768 + 768 * 4096 + 4096
    assert 4 * 2 * one == 101_328_896


def test_granite_without_projector_fields_keeps_the_note() -> None:
    """Granite4VisionConfig has no default downsample_rate: vLLM's WindowQFormerDownsampler cannot split None."""
    config = json.loads((CONFIGS / "Granite4VisionForConditionalGeneration.json").read_text())
    del config["downsample_rate"]
    model = model_from_config(config)
    assert model.tower is None and any("vision tower" in note for note in model.not_modelled)
