"""Kimi-K3's MoonViT and patchmergerv2 projector (kvtop.domain.architectures.towers_moon.kimi_k3).

Oracle: the engines' meta builds of moonshotai--Kimi-K3 (tests/data/configs/heldout), listed by
`benchmarks/engine_diff/registry_sweep.py --engine <e> --params moonshotai--Kimi-K3 --tps 1,2` and kept as the
registry rows (tests/data/engine_diff/registry/<engine>-<version>.json, `param_bytes` of `vision_tower` and
`mm_projector`):
  vLLM 0.33.0 (kimi_k3/nvidia/model.py over kimi_k25_vit.py): vision_tower 802,428,928 B at TP 1, 406,067,200 B
                a rank at TP 2 (wqkv, wo, fc0, fc1 split: 12 heads divide by 2); mm_projector 92,289,024 B at both
  SGLang 0.5.23 (kimi_k3_vl.py, every linear nn.Linear): vision_tower 802,428,928 B and mm_projector
                92,289,024 B at TP 1 and TP 2
By hand from the config (width 1024, MLP 4096, 27 blocks, qkv 1536, patch 14, a 64 × 64 table, merge 2 × 2, text
7168; RMSNorms, no biases; bf16): the tower 3 × 14² × 1024 + 64² × 1024 + 27 × (2 × 1024 + 1024 × 4608 + 1536 ×
1024 + 2 × 1024 × 4096) + 1024 parameters, the projector 4096² + 4096 × 7168 + 7168.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import CONFIGS
from tests.domain.tower_book import first_stage_vision_row

K3 = "moonshotai--Kimi-K3"
ENGINE_TOWER_BYTES = {
    ("vllm", 1): (802_428_928, 92_289_024), ("vllm", 2): (406_067_200, 92_289_024),
    ("sglang", 1): (802_428_928, 92_289_024), ("sglang", 2): (802_428_928, 92_289_024),
}  # fmt: skip
ENGINES = {"vllm": ("0.33.0", VLLM_SPLIT), "sglang": ("0.5.23", SGLANG_SPLIT)}


def test_the_engines_bytes_are_the_configs_arithmetic() -> None:
    width, mlp, depth, qkv, text = 1024, 4096, 27, 1536, 7168
    blocks = depth * (width * 3 * qkv + qkv * width + 2 * width * mlp)
    whole = 3 * 14**2 * width + 64 * 64 * width + depth * 2 * width + width
    assert 2 * (whole + blocks) == ENGINE_TOWER_BYTES[("vllm", 1)][0]
    assert 2 * (whole + blocks // 2) == ENGINE_TOWER_BYTES[("vllm", 2)][0]
    assert 2 * (4096 * 4096 + 4096 * text + text) == ENGINE_TOWER_BYTES[("vllm", 1)][1]


@pytest.mark.parametrize(("engine", "tp"), sorted(ENGINE_TOWER_BYTES))
def test_tower_bytes_equal_the_engines_meta_build(engine: str, tp: int) -> None:
    version, split = ENGINES[engine]
    row = row_of(engine, version, K3, tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["vision_tower"], parts["mm_projector"]) == ENGINE_TOWER_BYTES[(engine, tp)]
    model = model_from_config(json.loads((CONFIGS / "heldout" / f"{K3}.json").read_text()))
    vision = first_stage_vision_row(model, tp, split)
    assert int(vision.bytes) == sum(ENGINE_TOWER_BYTES[(engine, tp)])


@pytest.mark.parametrize(
    ("field", "value"),
    [("mm_projector_type", "patchmerger"), ("norm_type", "layernorm"), ("mm_hidden_size", 1152),
     ("text_hidden_size", 2304)],
)  # fmt: skip
def test_a_config_the_engines_build_apart_keeps_the_note(field: str, value: object) -> None:
    """vLLM reads the K2.5 projector for `patchmerger`, SGLang's K3 projector always; SGLang sizes the projector
    by `mm_hidden_size` and `text_hidden_size`, vLLM by the tower's and the text model's width."""
    config = json.loads((CONFIGS / "heldout" / f"{K3}.json").read_text())
    config["vision_config"][field] = value
    model = model_from_config(config)
    assert model.tower is None and any("vision tower" in note for note in model.not_modelled)
