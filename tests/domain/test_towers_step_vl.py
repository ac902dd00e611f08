"""Step3-VL-10B's StepVLForConditionalGeneration (issue 26): Qwen3 over `text_config`, and the PerceptionEncoder and
vit_large_projector (towers_step, by class: towers_catalog.STEP_VL) that vLLM 0.33.0 step_vl.py and SGLang 0.5.23
step3_vl_10b.py both build.

Config: the composed registry config (tests/data/engine_diff/registry/configs/StepVLForConditionalGeneration.json:
SGLang's Step3p7VisionEncoderConfig() defaults, transformers' Qwen3Config() text model, projector_bias false).
Expected bytes are the engines' code arithmetic by hand (vLLM 0.33.0 step_vl.py PerceptionEncoder.__init__: conv1
Conv2dLayer(3 → width, kernel 14, no bias) :373, ln_pre :381, (728 ÷ 14)² = 2,704 positions :413, no class token;
per block QKVParallelLinear(width → 3 × width, bias) :207, out_proj RowParallelLinear(bias) :216, ln_1, ln_2
:288-289, ls_1 / ls_2 gammas :278-283, fc1 / fc2 (int(width × 8960 ÷ 1536) = 8,960, biases) :158-167;
vit_downsampler1 / 2 Conv2d 3×3 width → 2w → 4w with biases :399-402; vit_large_projector ColumnParallelLinear(4w →
4,096, no bias) :515), checked against both engines' meta builds as the
registry sweep recorded them (vllm-0.33.0.json and sglang-0.5.23.json: the same bytes in both).
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

CONFIG = DATA / "engine_diff" / "registry" / "configs" / "StepVLForConditionalGeneration.json"
NAME = "default--StepVLForConditionalGeneration"
BF16 = 2
W, LAYERS, MLP = 1536, 47, 8960
WHOLE = 3 * 14 * 14 * W + 2 * W + 2704 * W  # conv1, ln_pre (weight, bias), the position table
# per block whole: out_proj's bias, ln_1 and ln_2 (weight, bias), the two gammas, fc2's bias
BLOCK_WHOLE = W + 4 * W + 2 * W + W
BLOCK_SPLIT = (
    W * 3 * W + 3 * W + W * W + W * MLP + MLP + MLP * W
)  # qkv with its bias, out_proj, fc1 with its bias, fc2
DOWNSAMPLERS = W * 2 * W * 9 + 2 * W + 2 * W * 4 * W * 9 + 4 * W
PROJECTOR = 4 * W * 4096  # the text model's width, no bias


def _config() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(CONFIG.read_text())
    return loaded


def _model() -> ModelSpec:
    return model_from_config(_config(), source=NAME)


def _bytes(model: ModelSpec, tp: int, component: str | None) -> int:
    book = weights_book(
        model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True
    )
    return sum(row.bytes for row in book.rows if (row.component == "vision") == (component == "vision"))


def test_step_vl_tower_is_the_engines_arithmetic() -> None:
    at_tp1 = (WHOLE + LAYERS * (BLOCK_WHOLE + BLOCK_SPLIT) + DOWNSAMPLERS + PROJECTOR) * BF16
    assert at_tp1 == 3_911_697_920 + 50_331_648  # vision_model + vit_large_projector in both engines, TP 1
    assert _bytes(_model(), 1, "vision") == at_tp1


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize("tp", [1, 2])
def test_step_vl_per_rank_is_the_engines(engine: str, tp: int) -> None:
    version = "0.33.0" if engine == "vllm" else "0.5.23"
    row = row_of(engine, version, NAME, tp)
    children = row["stages"][0]["param_bytes"]
    tower = int(children["vision_model"]) + int(children["vit_large_projector"])
    # the blocks' split parts and the projector split over TP; the patch, norms, table, gammas, biases of the
    # row-parallel layers and the downsamplers whole
    split = LAYERS * BLOCK_SPLIT + PROJECTOR
    assert tower == (WHOLE + LAYERS * BLOCK_WHOLE + DOWNSAMPLERS + split // tp) * BF16
    model = _model()
    assert _bytes(model, tp, "vision") == tower
    # the language model: Qwen3Config() (32 layers, 4,096 wide, 32 heads of 128 and 32 KV heads, MLP 22,016,
    # vocabulary 151,936, untied), as the engines' language_model child
    assert _bytes(model, tp, None) == int(children["language_model"])


def test_step_vl_is_a_wrapper_read_through_its_text_section() -> None:
    assert verdict("StepVLForConditionalGeneration")[0] == "wrapper"
