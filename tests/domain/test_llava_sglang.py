"""SGLang's own LLaVA classes (LlavaLlamaForCausalLM, LlavaQwenForCausalLM; held-out wave 4a): the language model
the class builds from the config's top level, and the image_newline vector an "unpad" merge adds to it.

Expected bytes are SGLang 0.5.23's meta builds as the registry sweep recorded them
(tests/data/engine_diff/registry/sglang-0.5.23.json, the `language_model` child at TP 1 and 2), and the tensors
`registry_sweep.py --engine sglang --params lmms-lab--llava-onevision-qwen2-7b-ov --tps 1` lists: each of the 28
layers' `self_attn.qkv_proj.bias` [4608] and `language_model.model.image_newline` [3584], torch.float16.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_sweep import load_rows, row_of
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import CONFIGS

QWEN = "lmms-lab--llava-onevision-qwen2-7b-ov"
VICUNA = "liuhaotian--llava-v1.6-vicuna-7b"
FP16 = 2


def _model(name: str) -> ModelSpec:
    config: dict[str, Any] = json.loads((CONFIGS / "heldout" / "wave4a" / f"{name}.json").read_text())
    return model_from_config(config, source=name)


def _language_model_bytes(model: ModelSpec, tp: int, version: str = "0.5.23") -> int:
    layout, layers = ParallelLayout(tp=tp), range(model.num_layers)
    book = weights_book(model, layout, layers, first_stage=True, last_stage=True)
    built = engine_rules("sglang").weights_built(model, layout, layers, "H100",
                                                 ResolvedVersion(text=version, source=VersionSource.FLAG))  # fmt: skip
    tower = sum(row.bytes for row in book.rows if row.component == "vision")  # the named tower: test_towers_named
    return book.total_bytes - tower + sum(row.bytes for row in built)


def test_llava_qwen_reads_its_language_model_as_qwen2() -> None:
    # LlavaQwenForCausalLM builds Qwen2ForCausalLM(config) (models/llava.py): q/k/v with biases, 28 × 4,608 of them
    model = _model(QWEN)
    assert model.model_type == "qwen2" and model.attention_bias
    assert _model(VICUNA).model_type == "llama" and not _model(VICUNA).attention_bias


@pytest.mark.parametrize(("name", "hidden"), [(QWEN, 3584), (VICUNA, 4096)])
def test_unpad_llava_classes_add_a_float16_image_newline(name: str, hidden: int) -> None:
    model = _model(name)
    assert model.mm_patch_merge_type == "spatial_unpad"
    rows = engine_rules("sglang").weights_built(model, ParallelLayout(tp=2), range(model.num_layers), "H100",
                                                ResolvedVersion(text="0.5.23", source=VersionSource.FLAG))  # fmt: skip
    assert {row.component: row.bytes for row in rows}["image_newline"] == hidden * FP16


def test_flat_merge_adds_no_image_newline() -> None:
    config: dict[str, Any] = json.loads((CONFIGS / "heldout" / "wave4a" / f"{VICUNA}.json").read_text())
    model = model_from_config({**config, "mm_patch_merge_type": "flat"}, source=VICUNA)
    rows = engine_rules("sglang").weights_built(model, ParallelLayout(), range(model.num_layers), "H100",
                                                ResolvedVersion(text="0.5.23", source=VersionSource.FLAG))  # fmt: skip
    assert "image_newline" not in {row.component for row in rows}


@pytest.mark.parametrize(
    ("name", "tp", "engine_bytes"),
    [
        (QWEN, 1, 15_231_240_192),
        (QWEN, 2, 7_615_827_968),
        (VICUNA, 1, 13_476_839_424),
        (VICUNA, 2, 6_738_690_048),
    ],
)
def test_language_model_per_rank_is_sglangs_meta_build(name: str, tp: int, engine_bytes: int) -> None:
    row = row_of("sglang", "0.5.23", name, tp)
    assert row["stages"][0]["param_bytes"]["language_model"] == engine_bytes
    assert _language_model_bytes(_model(name), tp) == engine_bytes


@pytest.mark.parametrize(("name", "projector"), [(QWEN, 33_961_984), (VICUNA, 41_959_424)])
def test_named_tower_class_builds_the_projector_as_sglang(name: str, projector: int) -> None:
    # SGLang 0.5.23's meta build holds `multi_modal_projector` beside the language model (the sweep's rows, TP 1 and
    # 2 alike): linear_1 [hidden, mm_hidden_size] and linear_2 [hidden, hidden] with biases, float16; the vision
    # tower named by `mm_vision_tower` (models/llava.py load_weights) is tests/domain/test_towers_named.py's
    for row in (r for r in load_rows("sglang", "0.5.23") if r["config"] == name):
        assert row["stages"][0]["param_bytes"]["multi_modal_projector"] == projector
    config: dict[str, Any] = json.loads((CONFIGS / "heldout" / "wave4a" / f"{name}.json").read_text())
    hidden, mm_hidden = config["hidden_size"], config["mm_hidden_size"]
    assert projector == (hidden * mm_hidden + hidden + hidden * hidden + hidden) * FP16
    model = _model(name)
    assert model.multimodal and model.tower is not None
    assert not any("vision tower" in note for note in model.not_modelled)
