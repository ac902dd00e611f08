"""SGLang 0.5.23's classes as built, where the checkpoint's tensors say otherwise (issue 26: A11, A17).

Expected figures: the engine's classes built on the meta device by benchmarks/engine_diff (each stage's
`named_parameters()` bytes, tests/data/engine_diff/sglang-0.5.23.flags.json, sm90) and the shapes those runs
listed (benchmarks/engine_diff/param_shapes.py), quoted in each test. Never kvtop's own figures.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.kvtop_side import kvtop_plan
from kvtop.cli import main
from tests.data_paths import DATA

SCOUT = "meta-llama--Llama-4-Scout-17B-16E-Instruct"
SUPER = "nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8"
SCOUT_CONFIG = str(DATA / "configs" / f"{SCOUT}.json")
FP8, BF16, FP32 = 1, 2, 4


def _row(config: str, variant: str) -> dict[str, Any]:
    rows = json.loads((DATA / "engine_diff" / "sglang-0.5.23.flags.json").read_text())["results"]
    return next(r for r in rows if r["config"] == config and r.get("variant") == variant and r["kv_dtype"] == "auto")


def _stage_delta(config: str, variant: str) -> list[int]:
    """kvtop's weights per stage less the engine's built parameters."""
    row = _row(config, variant)
    plan = kvtop_plan("sglang", "0.5.23", row)
    assert plan["status"] == "ok"
    return [s["weights_bytes"] - sum(e["param_bytes"].values()) for s, e in zip(plan["stages"], row["stages"], strict=True)]


@pytest.mark.parametrize("variant", ["ep", "ctx4k"])
def test_llama4_served_text_only_weighs_the_language_model(variant: str) -> None:
    """A11: Llama4ForConditionalGeneration at TP 2 (with and without EP 2) builds `language_model` alone,
    107,774,289,920 B a rank (mm_disabled_models; mllama4.py has_vision = ... and enable_multimodal)."""
    assert sum(_row(SCOUT, variant)["stages"][0]["param_bytes"].values()) == 107_774_289_920
    assert _stage_delta(SCOUT, variant) == [0]


def _plan(capsys: pytest.CaptureFixture[str], *extra: str, release: str = "0.5.23") -> dict[str, Any]:
    argv = ["plan", "--json", "--model", SCOUT_CONFIG, "--engine", "sglang", "--engine-version", release,
            "--tp", "2", "--ep", "2", "--gpu", "H200", *extra]  # fmt: skip
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _components(plan: dict[str, Any]) -> dict[str, int]:
    return {row["component"]: row["bytes"] for row in plan["ranks"][0]["weights"]}


def test_llama4_plan_says_the_tower_is_not_loaded(capsys: pytest.CaptureFixture[str]) -> None:
    """Without --enable-multimodal the plan holds no vision row and says why; with it, the tower is back (the
    class builds it where the launch enables multimodal) and the note is gone; 0.5.22 (not checked) keeps it."""
    text = _plan(capsys)
    assert "vision" not in _components(text)
    assert any("vision tower not loaded" in note and "--enable-multimodal" in note for note in text["notes"])
    vlm = _plan(capsys, "--enable-multimodal")
    assert _components(vlm)["vision"] > 0 and not any("vision tower not loaded" in n for n in vlm["notes"])
    assert vlm["weights_bytes"] - text["weights_bytes"] == _components(vlm)["vision"]
    older = _plan(capsys, release="0.5.22")
    assert "vision" in _components(older)


@pytest.mark.parametrize(("variant", "attention_layers"), [("ep", (8,)), ("ctx4k", (8,)), ("pp2", (4, 4)),
                                                           ("pp4", (2, 2, 2, 2))])  # fmt: skip
def test_nemotron_h_fp8_head_and_kv_scales(variant: str, attention_layers: tuple[int, ...]) -> None:
    """A17: Nemotron-3-Super-120B-A12B-FP8 (hf_quant_config.json: FP8, kv_cache_quant_algo FP8, nothing excluded).
    Engine shapes at TP 2: lm_head.weight [65536, 4096] float8_e4m3fn with weight_scale and input_scale fp32
    scalars (ModelOptFp8LinearMethod), k_scale and v_scale fp32 on each of the 8 attention layers'
    RadixAttention (ModelOptFp8KVCacheMethod). Before: kvtop's book held the head bf16 and no k/v scales, so the
    last stage was over by 65,536 × 4,096 × (2 − 1) − 8 less 8 B a layer; now every stage equals the engine's."""
    head_over = 65_536 * 4_096 * (BF16 - FP8) - 2 * FP32
    assert head_over - 8 * 2 * FP32 == 268_435_384  # docs/fidelity.md's A17 row before this rule (TP 2 + EP)
    assert len(_row(SUPER, variant)["stages"]) == len(attention_layers)
    assert _stage_delta(SUPER, variant) == [0] * len(attention_layers)
