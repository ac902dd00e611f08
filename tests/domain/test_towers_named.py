"""Vision towers a LLaVA-NeXT config names by checkpoint id (`mm_vision_tower`; towers_named.py): SGLang 0.5.23's
models/llava.py loads transformers' CLIPVisionModel / SiglipVisionModel whole, in float16, beside the projector.

Expected bytes: the tower's by hand from the checkpoint's published config (tests/data/configs/towers_named/
SOURCES.md writes the sum out: CLIP-L/336 607,014,912 B, SigLIP-so400m/384 856,451,200 B), which SGLang 0.5.23's
meta build (the registry sweep's rows, `vision_tower` at TP 1 and 2: tests/data/engine_diff/registry/
sglang-0.5.23.json) also holds; the projector's by hand from the config (hidden × mm_hidden + hidden + hidden² +
hidden, float16).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.architectures.towers_named import NAMED_TOWERS
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import CONFIGS

QWEN = "lmms-lab--llava-onevision-qwen2-7b-ov"
VICUNA = "liuhaotian--llava-v1.6-vicuna-7b"
CLIP_L_336 = 607_014_912  # 303,507,456 parameters × 2 B (SOURCES.md)
SIGLIP_SO400M = 856_451_200  # 428,225,600 parameters × 2 B (SOURCES.md)
VICUNA_PROJECTOR = (4096 * 1024 + 4096 + 4096 * 4096 + 4096) * 2  # 41,959,424
QWEN_PROJECTOR = (3584 * 1152 + 3584 + 3584 * 3584 + 3584) * 2  # 33,961,984


def _config(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CONFIGS / "heldout" / "wave4a" / f"{name}.json").read_text())
    return data


@pytest.mark.parametrize("checkpoint", sorted(NAMED_TOWERS))
def test_named_tower_table_is_the_published_config(checkpoint: str) -> None:
    published = json.loads((CONFIGS / "towers_named" / f"{checkpoint.replace('/', '--')}.json").read_text())
    vision = published["vision_config"]
    values = NAMED_TOWERS[checkpoint]
    assert (values["model_type"], values["hidden_size"], values["intermediate_size"], values["depth"],
            values["image_size"], values["patch_size"]) == (
        vision["model_type"], vision["hidden_size"], vision["intermediate_size"], vision["num_hidden_layers"],
        vision["image_size"], vision["patch_size"])  # fmt: skip
    assert values["in_channels"] == vision.get("num_channels", 3)  # SiglipVisionConfig's default 3


@pytest.mark.parametrize(
    ("name", "tower", "projector"), [(VICUNA, CLIP_L_336, VICUNA_PROJECTOR), (QWEN, SIGLIP_SO400M, QWEN_PROJECTOR)]
)
@pytest.mark.parametrize("tp", [1, 2])
def test_named_tower_and_projector_whole_on_every_rank(name: str, tower: int, projector: int, tp: int) -> None:
    model = model_from_config(_config(name), source=name)
    book = weights_book(model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True)
    vision = next(row for row in book.rows if row.component == "vision")
    assert vision.bytes == tower + projector
    row = row_of("sglang", "0.5.23", name, tp)
    built = row["stages"][0]["param_bytes"]
    assert (built["vision_tower"], built["multi_modal_projector"]) == (tower, projector)


def test_an_unknown_named_tower_stays_not_modelled() -> None:
    config = {**_config(VICUNA), "mm_vision_tower": "openai/clip-vit-base-patch32"}
    model = model_from_config(config, source=VICUNA)
    assert model.tower is None and any("vision tower" in note for note in model.not_modelled)


def test_a_projector_wider_than_the_named_tower_is_refused() -> None:
    from kvtop.domain.errors import InputError

    with pytest.raises(InputError, match="mm_hidden_size"):
        model_from_config({**_config(VICUNA), "mm_hidden_size": 1152}, source=VICUNA)
