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

from benchmarks.engine_diff.registry_sweep import load_rows
from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.architectures.towers_coverage import tower_verdict
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
    row = next(r for r in load_rows(engine, version) if r["config"] == NAME and r["tp"] == tp)
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


def test_llama_nemotron_vl_plans_its_language_model_and_names_its_tower_not_modelled() -> None:
    # vLLM nemotron_vl.py: the language model is init_vllm_registered_model(llm_config), a Llama; the vision model
    # AutoModel.from_config from the checkpoint's own C-RADIO code, which towers_radio (vLLM's RadioModel) is not
    assert verdict("Llama_Nemotron_Nano_VL")[0] == "wrapper"
    kind, why = tower_verdict("Llama_Nemotron_Nano_VL")
    assert kind == "no_tower" and "checkpoint's own C-RADIO code" in why and "mlp1" in why


@pytest.mark.parametrize("tp", (1, 2))
def test_llama_nemotron_vl_language_model_is_the_llama_of_its_llm_config(tp: int) -> None:
    """The registry sweep's composed config (tests/data/engine_diff/registry/configs/Llama_Nemotron_Nano_VL.json,
    SOURCES.md: Llama-3.1-8B-Instruct's config.json as llm_config; no published config at hand). Llama-3.1-8B by hand:
    embed_tokens and lm_head 2 × 128,256 × 4,096 = 1,050,673,152; a layer q/o 2 × 4,096², k/v 2 × 1,024 × 4,096,
    gate/up/down 3 × 14,336 × 4,096, two norms 2 × 4,096 = 218,112,000, × 32 = 6,979,584,000; the final norm 4,096:
    8,030,261,248 parameters, split by TP but for the norms (2 × 32 + 1 of 4,096); KV 32 layers × 2 × 8 heads × 128
    × 2 B = 131,072 B a token. vLLM 0.33.0's meta build of it (registry row; its C-RADIO an empty stand-in, the
    checkpoint's own code) holds language_model 16,060,522,496 B at TP 1 and 8,030,527,488 B at TP 2, and mlp1
    (nemotron_vl.py:179-202: LayerNorm(5,120), Linear 5,120 → 4,096, Linear 4,096 → 4,096, biased, whole)
    75,534,336 B at both, which kvtop does not count: the tower is named."""
    row = next(
        r for r in load_rows("vllm", "0.33.0") if (r["config"], r["tp"]) == ("default--Llama_Nemotron_Nano_VL", tp)
    )  # fmt: skip
    norms = (2 * 32 + 1) * 4096
    language = 8_030_261_248 if tp == 1 else (8_030_261_248 - norms) // 2 + norms
    mlp1 = 2 * 5120 + (5120 * 4096 + 4096) + (4096 * 4096 + 4096)
    assert row["stages"][0]["param_bytes"] == {"language_model": language * BF16, "mlp1": mlp1 * BF16}
    model = model_from_config(json.loads((DATA / "engine_diff" / "registry" / "configs" /
                                          "Llama_Nemotron_Nano_VL.json").read_text()))  # fmt: skip
    assert model.model_type == "llama" and model.tower is None and model.multimodal
    assert any(note.startswith("vision tower weights") for note in model.not_modelled)
    book = weights_book(model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True)
    assert book.total_bytes == language * BF16 and not any(row.component == "vision" for row in book.rows)
    assert model.num_layers * 2 * model.num_kv_heads * model.head_dim * BF16 == 131_072
