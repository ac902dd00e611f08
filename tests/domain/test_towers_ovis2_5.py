"""Ovis2.5's SigLIP2-NaViT visual tokenizer and visual embedding table (kvtop.domain.architectures.towers_ovis2_5).

Oracle: vLLM 0.33.0's meta build of AIDC-AI/Ovis2.5-9B (tests/data/configs/heldout/wave4b), listed by
`benchmarks/engine_diff/registry_sweep.py --engine vllm --params AIDC-AI--Ovis2.5-9B --tps 1` and kept as the
registry rows (tests/data/engine_diff/registry/vllm-0.33.0.json; SGLang 0.5.23 registers no `Ovis2_5` class):
  visual_tokenizer 1,431,273,936 B at TP 1, 1,019,993,952 B a rank at TP 2; vte 536,870,912 B at both
By hand from the config (SigLIP2-NaViT width 1152, MLP 4304, 27 blocks, image 512, patch 16, 3 channels,
num_patches -1, preserve_original_pe; hidden_stride 2, visual_vocab_size 65536; the outer hidden_size 4096; bf16):
below, the parameter list the --params run printed (head [65532, 4608] and its LayerNorm [65532]).
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import CONFIGS
from tests.domain.tower_book import first_stage_vision_row

OVIS2_5 = "AIDC-AI--Ovis2.5-9B"
CONFIG = CONFIGS / "heldout" / "wave4b" / f"{OVIS2_5}.json"
ENGINE_TOWER_BYTES = {1: (1_431_273_936, 536_870_912), 2: (1_019_993_952, 536_870_912)}


def test_the_engines_bytes_are_the_configs_arithmetic() -> None:
    """The patch (Conv2d 3 × 16² → 1152 with bias), 1,024 positions, 27 blocks of two LayerNorms, qkv 3 × 1152²
    with bias, out_proj 1152² (bias whole), fc1 1152 × 4304 with bias, fc2 4304 × 1152 (bias whole), split at TP 2;
    the post LayerNorm; the head 1152 × 4 → 65,532 and its LayerNorm; vte 65,536 × 4,096."""
    w, m = 1152, 4304
    blocks = 27 * (3 * w * w + 3 * w + w * w + w * m + m + m * w)
    whole = 3 * 16 * 16 * w + w + 1024 * w + 27 * (4 * w + 2 * w) + 2 * w + w * 4 * 65532 + 2 * 65532
    assert 2 * (whole + blocks) == ENGINE_TOWER_BYTES[1][0]
    assert 2 * (whole + blocks // 2) == ENGINE_TOWER_BYTES[2][0]
    assert ENGINE_TOWER_BYTES[1][1] == 2 * 65536 * 4096


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", OVIS2_5, tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["visual_tokenizer"], parts["vte"]) == ENGINE_TOWER_BYTES[tp]
    model = model_from_config(json.loads(CONFIG.read_text()))
    vision = first_stage_vision_row(model, tp, TOWER_SPLIT)
    assert int(vision.bytes) == sum(ENGINE_TOWER_BYTES[tp])


def test_another_backbone_keeps_the_note() -> None:
    """vLLM refuses a vit_config other than siglip2_navit ("Unsupported visual tokenizer model_type"): not read."""
    config = json.loads(CONFIG.read_text())
    config["vit_config"]["model_type"] = "aimv2"
    model = model_from_config(config)
    assert model.tower is None and any("vision tower" in note for note in model.not_modelled)
