"""Yi-VL's CLIP and projector (towers_named.SUBFOLDER_TOWERS): SGLang 0.5.23 models/yivl.py loads the CLIP from a
folder its own checkpoint ships (`mm_vision_tower` "./vit/clip-vit-H-14-laion2B-s32B-b79K-yi-vl-*-448"), whole,
in float16, beside YiVLMultiModalProjector (whole, the model's dtype).

Expected bytes by hand from the engine's code and the folder's published config (tests/data/configs/towers_named/
yi-vl--clip-vit-H-14-laion2B-s32B-b79K-yi-vl-34B-448.json: width 1280, MLP 5120, 32 layers, image 448, patch 14, 3
channels), the composed config's sizes (text hidden 4096, mm_hidden_size 1280):
- CLIP ViT-H/14-448, transformers' CLIPVisionModel as yivl.py:44 loads it (every layer: mm_vision_select_layer −2
  picks a hidden state, drops no layer; the post-LayerNorm): patch embedding Conv2d without bias 3 × 14² × 1280 =
  752,640; class embedding 1,280; positions ((448 ÷ 14)² + 1) × 1280 = 1,025 × 1280 = 1,312,000; pre-LayerNorm
  2,560; each of 32 layers q, k, v, out 4 × (1280² + 1280) = 6,558,720, two LayerNorms 5,120, fc1 1280 × 5120 + 5120
  = 6,558,720, fc2 5120 × 1280 + 1280 = 6,554,880: 19,677,440, so 629,678,080; post-LayerNorm 2,560: 631,749,120
  parameters × 2 B (float16) = 1,263,498,240 B.
- YiVLMultiModalProjector (yivl.py:96-108): linear_1 1280 × 4096 + 4096 = 5,246,976; ln_1 2 × 4096 = 8,192; linear_2
  4096² + 4096 = 16,781,312; ln_2 8,192: 22,044,672 parameters × 2 B (bfloat16) = 44,089,344 B.
Both whole on every rank (nn.Linear / transformers' class, no TP). SGLang 0.5.23's meta build of the composed config
(the registry sweep's rows, tests/data/engine_diff/registry/sglang-0.5.23.json) holds the same at TP 1 and 2.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.architectures.towers_named import YI_VL_CLIP_H14_448
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import CONFIGS, DATA

COMPOSED = DATA / "engine_diff" / "registry" / "configs" / "YiVLForCausalLM.json"
VIT = CONFIGS / "towers_named" / "yi-vl--clip-vit-H-14-laion2B-s32B-b79K-yi-vl-34B-448.json"
CLIP_H_448 = 1_263_498_240  # 631,749,120 parameters × 2 B (module docstring)
PROJECTOR = 44_089_344  # 22,044,672 parameters × 2 B


def _config() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(COMPOSED.read_text())
    return data


def test_the_tower_table_is_the_folders_published_config() -> None:
    vit = json.loads(VIT.read_text())
    values = YI_VL_CLIP_H14_448
    assert (values["model_type"], values["hidden_size"], values["intermediate_size"], values["depth"],
            values["image_size"], values["patch_size"], values["in_channels"]) == (
        vit["model_type"], vit["hidden_size"], vit["intermediate_size"], vit["num_hidden_layers"],
        vit["image_size"], vit["patch_size"], vit["num_channels"])  # fmt: skip


@pytest.mark.parametrize("tp", [1, 2])
def test_yi_vl_tower_and_projector_whole_on_every_rank(tp: int) -> None:
    model = model_from_config(_config(), source=COMPOSED.name)
    book = weights_book(model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True)
    vision = next(row for row in book.rows if row.component == "vision")
    assert vision.bytes == CLIP_H_448 + PROJECTOR
    assert model.tower is not None and "assumed" in model.tower.label  # the folder is not read: sizes assumed
    assert not any("vision tower" in note for note in model.not_modelled)
    row = row_of("sglang", "0.5.23", "default--YiVLForCausalLM", tp)
    built = row["stages"][0]["param_bytes"]
    assert (built["vision_tower"], built["multi_modal_projector"]) == (CLIP_H_448, PROJECTOR)


def test_a_projector_not_the_clips_width_is_refused() -> None:
    from kvtop.domain.errors import InputError

    with pytest.raises(InputError, match="mm_hidden_size"):
        model_from_config({**_config(), "mm_hidden_size": 1024}, source=COMPOSED.name)
