"""Nemotron Nano VL V2's C-RADIO tower and mlp1 (issue 26): the composed registry config
(tests/data/engine_diff/registry/configs/NemotronH_Nano_VL_V2.json: args.model vit_huge_patch16_224, no registers,
no teachers, the config class's projector defaults, SGLang's NemotronHConfig() text model).

Expected bytes are the engines' code arithmetic done by hand below (vLLM 0.33.0 transformers_utils/configs/radio.py
VIT_TIMM_DIM_BY_NAME "vit_huge_patch16_224": (1280, 32, 16, 5120); radio.py ViTPatchGenerator / ClsToken /
ViTPatchLinear; intern_vit.py InternVisionEncoderLayer; nano_nemotron_vl.py NemotronH_Nano_VL_V2.__init__ mlp1),
checked against both engines' meta builds as the registry sweep recorded them (tests/data/engine_diff/registry/
vllm-0.33.0.json and sglang-0.5.23.json: `vision_model` and `mlp1`, the same at TP 1 and 2 in both engines).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

CONFIG = DATA / "engine_diff" / "registry" / "configs" / "NemotronH_Nano_VL_V2.json"
NAME = "default--NemotronH_Nano_VL_V2"
BF16 = 2
W, DEPTH, MLP = 1280, 32, 5120  # vit_huge_patch16_224: width, depth, MLP width (16 heads)
# patch generator: embedder Linear(3*16*16 -> 1280, no bias); pos_embed (2048 // 16)^2 = 16,384 rows (cpe_max_size
# 2048); ClsToken: 1 token, no registers (register_multiple None)
PATCH_GENERATOR = (768 * W + 16_384 * W + 1 * W) * BF16
HEADS_SPLIT = DEPTH * (3 * W * W + 3 * W + W * W) * BF16  # qkv [3840, 1280] with bias, proj [1280, 1280]
SPLIT = DEPTH * (MLP * W + MLP + W * MLP) * BF16  # fc1 [5120, 1280] with bias, fc2 [1280, 5120]
# per block whole: norm1, norm2 (weight, bias); ls1, ls2; the biases of proj and fc2
BLOCKS_WHOLE = DEPTH * (4 * W + 2 * W + 2 * W) * BF16
# mlp1: RMSNorm [1280 * 2^2 = 5120], Linear [4096, 5120], Linear [4096 (text hidden), 4096], no biases
MLP1 = (5120 + 4096 * 5120 + 4096 * 4096) * BF16


def _config() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(CONFIG.read_text())
    return loaded


def _model(config: dict[str, Any] | None = None) -> ModelSpec:
    return model_from_config(config or _config(), source=NAME)


def _vision_bytes(model: ModelSpec, tp: int) -> int:
    book = weights_book(
        model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True
    )
    return sum(row.bytes for row in book.rows if row.component == "vision")


def test_radio_tower_is_the_engines_arithmetic() -> None:
    assert MLP1 == 75_507_712  # both engines' mlp1 child, TP 1 and 2
    assert PATCH_GENERATOR + HEADS_SPLIT + SPLIT + BLOCKS_WHOLE == 1_303_431_680  # vision_model at TP 1
    assert _vision_bytes(_model(), 1) == 1_303_431_680 + MLP1


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize(("tp", "engine_bytes"), [(1, 1_378_939_392), (2, 749_507_072)])
def test_radio_tower_per_rank_is_the_engines(engine: str, tp: int, engine_bytes: int) -> None:
    version = "0.33.0" if engine == "vllm" else "0.5.23"
    row = row_of(engine, version, NAME, tp)
    children = row["stages"][0]["param_bytes"]
    assert int(children["vision_model"]) + int(children["mlp1"]) == engine_bytes
    # TP 2: 16 heads divide, so qkv, proj, fc1 and fc2 split; the patch generator, the rest and mlp1 whole
    assert tp == 1 or engine_bytes == PATCH_GENERATOR + BLOCKS_WHOLE + MLP1 + (HEADS_SPLIT + SPLIT) // 2
    assert _vision_bytes(_model(), tp) == engine_bytes


def test_registers_and_teachers_size_the_class_tokens() -> None:
    # register_multiple 8, four teachers with cls_token_per_teacher: vLLM 4 class tokens + (8 - 4 % 8) = 4
    # registers, SGLang 1 + 7: 8 rows either way (radio.py ClsToken), 7 more than the config above
    args = {"model": "vit_huge_patch16_224", "register_multiple": 8, "cls_token_per_teacher": True,
            "teachers": [{"name": n} for n in ("clip", "siglip", "dino_v2", "sam")]}  # fmt: skip
    config = {**_config(), "vision_config": {"args": args}}
    assert _vision_bytes(_model(config), 1) == 1_303_431_680 + MLP1 + 7 * W * BF16


@pytest.mark.parametrize(
    "change",
    [
        {
            "vision_config": {
                "args": {
                    "model": "vit_huge_patch16_224",
                    "cls_token_per_teacher": True,
                    "teachers": [{"name": "a"}, {"name": "b"}],
                }
            }
        },  # fmt: skip
        {"vision_config": {"args": {"model": "vit_so400m_patch16_224"}}},  # SGLang's table lacks it
        {"vision_config": {"args": {"model": "vit_huge_patch16_224", "cpe_max_size": 1024}}},  # vLLM's only
        {"sound_config": {"model_type": "parakeet"}},  # a sound encoder beside the tower
    ],
)
def test_where_the_engines_part_the_tower_is_not_modelled(change: dict[str, Any]) -> None:
    assert _vision_bytes(_model({**_config(), **change}), 1) == 0


def test_nemotron_parse_is_named_not_modelled() -> None:
    # vLLM nemotron_parse3_5.py MBartDecoderNoPos under RadioWithNeck: no entry reads the decoder section
    kind, why = verdict("RadioMBartPrefixForCausalLM")
    assert kind == "not_modelled" and "MBart decoder" in why and "config" in why
