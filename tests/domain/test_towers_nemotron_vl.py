"""Llama-Nemotron-Nano-VL (issue 26): its Llama language model, its projector `mlp1` counted, and its C-RADIO
vision model (the checkpoint's own code) named "not modelled" beside it. The config is the registry sweep's composed
one (tests/data/engine_diff/registry/configs/Llama_Nemotron_Nano_VL.json, SOURCES.md beside it).

Expected bytes are vLLM's code arithmetic done by hand (0.33.0 models/nemotron_vl.py _init_mlp1, lines 179-202;
Llama-3.1-8B's layers), checked against vLLM 0.33.0's meta build as the registry sweep recorded it
(tests/data/engine_diff/registry/vllm-0.33.0.json: its vision model an empty stand-in, the checkpoint's own code).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_judge import PART_NOT_MODELLED, judge
from benchmarks.engine_diff.registry_sweep import load_rows
from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.architectures.towers_coverage import tower_verdict
from kvtop.domain.architectures.towers_nemotron_vl import VISION_MODEL_NOT_MODELLED
from kvtop.domain.errors import InputError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

CONFIG = DATA / "engine_diff" / "registry" / "configs" / "Llama_Nemotron_Nano_VL.json"
BF16 = 2
# mlp1 (nemotron_vl.py:179-202), vit_hidden_size 1,280, downsample_ratio 0.5 (int(1 / 0.5) = 2: 1,280 × 2² = 5,120),
# projector_hidden_size 4,096, llm_config.hidden_size 4,096: LayerNorm(5,120) weight and bias 10,240; Linear
# [4,096, 5,120] + bias 4,096 = 20,975,616; Linear [4,096, 4,096] + bias 4,096 = 16,781,312: 37,767,168 parameters,
# 75,534,336 B in bf16, whole on every rank (plain nn modules)
MLP1 = 75_534_336


def _config() -> dict[str, Any]:
    return dict(json.loads(CONFIG.read_text()))


def test_mlp1_by_hand() -> None:
    assert (2 * 5120 + (5120 * 4096 + 4096) + (4096 * 4096 + 4096)) * BF16 == MLP1


def test_the_class_is_a_wrapper_whose_tower_row_is_mlp1_and_whose_vision_model_is_named() -> None:
    assert verdict("Llama_Nemotron_Nano_VL")[0] == "wrapper"
    kind, why = tower_verdict("Llama_Nemotron_Nano_VL")
    assert kind == "tower" and "_init_mlp1" in why
    model = model_from_config(_config())
    assert model.model_type == "llama" and model.multimodal and model.tower is not None
    assert model.not_modelled == (VISION_MODEL_NOT_MODELLED,)  # replaces "vision tower weights … not modelled"
    assert "C-RADIO" in model.tower.label and "mlp1" in model.tower.label


@pytest.mark.parametrize("tp", (1, 2))
def test_language_model_and_mlp1_equal_vllms_build(tp: int) -> None:
    """Llama-3.1-8B by hand: embed_tokens and lm_head 2 × 128,256 × 4,096 = 1,050,673,152; a layer q/o 2 × 4,096²,
    k/v 2 × 1,024 × 4,096, gate/up/down 3 × 14,336 × 4,096, two norms 2 × 4,096 = 218,112,000, × 32 =
    6,979,584,000; the final norm 4,096: 8,030,261,248 parameters, split by TP but for the norms (2 × 32 + 1 of
    4,096); KV 32 layers × 2 × 8 heads × 128 × 2 B = 131,072 B a token. vLLM 0.33.0's meta build (registry row)
    holds language_model 16,060,522,496 B at TP 1 and 8,030,527,488 B at TP 2, and mlp1 75,534,336 B at both."""
    row = next(
        r for r in load_rows("vllm", "0.33.0") if (r["config"], r["tp"]) == ("default--Llama_Nemotron_Nano_VL", tp)
    )  # fmt: skip
    norms = (2 * 32 + 1) * 4096
    language = 8_030_261_248 if tp == 1 else (8_030_261_248 - norms) // 2 + norms
    assert row["stages"][0]["param_bytes"] == {"language_model": language * BF16, "mlp1": MLP1}
    model = model_from_config(_config())
    book = weights_book(model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True)
    (vision,) = [r for r in book.rows if r.component == "vision"]
    assert vision.bytes == MLP1 and vision.shards == 1
    assert book.total_bytes == language * BF16 + MLP1
    assert model.num_layers * 2 * model.num_kv_heads * model.head_dim * BF16 == 131_072


@pytest.mark.parametrize("tp", (1, 2))
def test_the_judge_compares_mlp1_and_keeps_the_vision_model_named(tp: int) -> None:
    # the language model and mlp1 equal on both sides, the C-RADIO vision model compared on neither: not plain equal
    row = next(
        r for r in load_rows("vllm", "0.33.0") if (r["config"], r["tp"]) == ("default--Llama_Nemotron_Nano_VL", tp)
    )  # fmt: skip
    judged = judge("vllm", "0.33.0", row)
    assert judged.verdict == PART_NOT_MODELLED and "vision model of Llama_Nemotron_Nano_VL" in judged.detail


def test_a_config_without_the_projectors_width_is_refused_by_name() -> None:
    # vLLM reads config.projector_hidden_size with no fallback: a config without it does not build
    data = {key: value for key, value in _config().items() if key != "projector_hidden_size"}
    with pytest.raises(InputError, match="projector_hidden_size"):
        model_from_config(data)
