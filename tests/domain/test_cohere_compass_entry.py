"""Cohere Compass (CohereCompassForConditionalGeneration), read by the `cohere_compass_text` entry and its Qwen3-VL
vision tower, against vLLM 0.33.0's meta build.

Oracle: vLLM 0.33.0's meta build of the registry sweep's default config
(tests/data/engine_diff/registry/configs/CohereCompassForConditionalGeneration.json: transformers 5.20.2's
CohereCompassConfig defaults, the top-level tie stated; bf16), kept as the registry rows
(tests/data/engine_diff/registry/vllm-0.33.0.json, `registry_sweep.py --engine vllm --set classes --only
default--CohereCompassForConditionalGeneration`): language_model 69,961,662,464 B at TP 1, 34,981,167,104 B at TP 2;
visual 1,133,898,208 B at TP 1, 571,604,848 B at TP 2. Before the entry kvtop read the language model generically,
two norms a layer: 655,360 B (40 × 8,192 × 2 B) over at TP 1.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

NAME = "CohereCompassForConditionalGeneration"
CONFIG = DATA / "engine_diff" / "registry" / "configs" / f"{NAME}.json"
ENGINE_BYTES = {1: (69_961_662_464, 1_133_898_208), 2: (34_981_167_104, 571_604_848)}  # (language_model, visual)


def test_the_engines_figures_by_hand() -> None:
    """cohere_compass.py at TP 1: each CohereCompassDecoderLayer holds qkv_proj 8192 → 3 × 64 × 128, o_proj
    8192 → 8192 (attention_bias false), CohereMLP gate_up 8192 → 2 × 22528 and down 22528 → 8192, and one
    LayerNorm (weight only, 8192); the model an embedding 256,000 × 8,192 (the head tied) and a final norm.
    Cohere_VisionTransformer (Qwen3-VL's): 27 blocks of two biased LayerNorms (1152), biased qkv 1152 → 3456,
    proj 1152 → 1152, fc1 1152 → 4304, fc2 4304 → 1152; a biased Conv3d patch (3 × 2 × 16 × 16 → 1152); a position
    table 2304 × 1152; a merger (LayerNorm 1152, fc1 4608 → 4608, fc2 4608 → 3584, biased) and three deepstack
    mergers (the same with a LayerNorm of 4608)."""
    layer = 8192 * 3 * 8192 + 8192 * 8192 + 8192 * 2 * 22528 + 22528 * 8192 + 8192
    text = 40 * layer + 256_000 * 8192 + 8192
    block = 2 * 2 * 1152 + (1152 * 3456 + 3456) + (1152 * 1152 + 1152) + (1152 * 4304 + 4304) + (4304 * 1152 + 1152)
    linears = (4608 * 4608 + 4608) + (4608 * 3584 + 3584)
    vision = 27 * block + (3 * 2 * 16 * 16 * 1152 + 1152) + 2304 * 1152 + (2 * 1152 + linears) + 3 * (2 * 4608 + linears)
    assert (2 * text, 2 * vision) == ENGINE_BYTES[1]


@pytest.mark.parametrize("tp", [1, 2])
def test_weights_equal_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", f"default--{NAME}", tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["language_model"], parts["visual"]) == ENGINE_BYTES[tp]
    model = model_from_config(json.loads(CONFIG.read_text()))
    book = weights_book(model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True,
                        tower_split=TOWER_SPLIT)  # fmt: skip
    vision = sum(int(r.bytes) for r in book.rows if r.component == "vision")
    assert (book.total_bytes - vision, vision) == ENGINE_BYTES[tp]


def test_one_norm_a_layer_and_an_entry() -> None:
    model = model_from_config(json.loads(CONFIG.read_text()))
    assert (model.body.norms_per_layer, model.num_layers) == (1, 40)
    assert verdict(NAME)[0] == "entry"
