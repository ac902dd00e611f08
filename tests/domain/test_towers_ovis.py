"""Ovis2's AIMv2 visual tokenizer and visual embedding table (kvtop.domain.architectures.towers_ovis).

Oracle: vLLM 0.33.0's meta build of AIDC-AI/Ovis2-34B (tests/data/configs/heldout/wave2), listed by
`benchmarks/engine_diff/registry_sweep.py --engine vllm --params AIDC-AI--Ovis2-34B --tps 1,2` and kept as the
registry rows (tests/data/engine_diff/registry/vllm-0.33.0.json; SGLang 0.5.23 registers no `Ovis` class):
  visual_tokenizer 3,546,980,332 B at TP 1, 2,313,854,956 B a rank at TP 2; vte 671,088,640 B at both
By hand from the config (AIMv2 width 2048, SwiGLU 5632, 24 blocks, image 448, patch 14, no biases; hidden_stride 2,
vocab_size 65536; the language model 5120 wide; bf16): below.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import CONFIGS
from tests.domain.tower_book import first_stage_vision_row

OVIS2 = "AIDC-AI--Ovis2-34B"
CONFIG = CONFIGS / "heldout" / "wave2" / f"{OVIS2}.json"
ENGINE_TOWER_BYTES = {1: (3_546_980_332, 671_088_640), 2: (2_313_854_956, 671_088_640)}


def test_the_engines_bytes_are_the_configs_arithmetic() -> None:
    """The patch (Conv2d 3 × 14² → 2048 with bias, an RMSNorm), 1,024 positions, 24 blocks of two RMSNorms, qkv 3 ×
    2048², proj 2048², fc13 2 × 2048 × 5632 and fc2 5632 × 2048 (split at TP 2); the head 2048 × 4 → 65,531 and its
    LayerNorm; vte 65,536 × 5,120."""
    w, m = 2048, 5632
    blocks = 24 * (3 * w * w + w * w + 3 * w * m)
    whole = 3 * 14 * 14 * w + 2 * w + 1024 * w + 24 * 2 * w + w * 4 * 65531 + 2 * 65531
    assert 2 * (whole + blocks) == ENGINE_TOWER_BYTES[1][0]
    assert 2 * (whole + blocks // 2) == ENGINE_TOWER_BYTES[2][0]
    assert ENGINE_TOWER_BYTES[1][1] == 2 * 65536 * 5120


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", OVIS2, tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["visual_tokenizer"], parts["vte"]) == ENGINE_TOWER_BYTES[tp]
    model = model_from_config(json.loads(CONFIG.read_text()))
    vision = first_stage_vision_row(model, tp, TOWER_SPLIT)
    assert int(vision.bytes) == sum(ENGINE_TOWER_BYTES[tp])


def test_a_siglip_backbone_keeps_the_note() -> None:
    """Ovis1.6's SigLIP visual tokenizer: no engine figure here, not read."""
    config = json.loads(CONFIG.read_text())
    config["visual_tokenizer_config"]["model_type"] = "siglip_visual_tokenizer"
    config["visual_tokenizer_config"]["backbone_config"]["model_type"] = "siglip_vision_model"
    model = model_from_config(config)
    assert model.tower is None and any("vision tower" in note for note in model.not_modelled)
