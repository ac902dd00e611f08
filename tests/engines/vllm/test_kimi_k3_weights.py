"""Kimi-K3 (moonshotai--Kimi-K3, held out) as vLLM 0.33.0 builds it on the meta device (issue #26).

Expected figures: the engine's own. The rank totals are the registry sweep's rows (tests/data/engine_diff/registry/
vllm-0.33.0.json: `named_parameters()` bytes of `language_model`); the per-module figures are the shapes
`python benchmarks/engine_diff/registry_sweep.py --engine vllm --params moonshotai--Kimi-K3 --tps 1` listed,
quoted in each test. Never kvtop's own figures.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_judge import kvtop_answer
from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import WeightsBook, weights_book
from tests.data_paths import CONFIGS

K3 = "moonshotai--Kimi-K3"
BF16 = 2
MOE_LAYERS = 92
# the meta build's language_model at TP 1 and TP 2 (the registry rows' param_bytes["language_model"])
ENGINE_LANGUAGE_MODEL = {1: 1_559_965_580_416, 2: 785_731_856_576}


def _row(tp: int) -> dict[str, Any]:
    return row_of("vllm", "0.33.0", K3, tp)


def _book(version: str) -> WeightsBook:
    model = model_from_config(json.loads((CONFIGS / "heldout" / f"{K3}.json").read_text()), source=K3)
    resolved = ResolvedVersion(text=version, source=VersionSource.FLAG)
    parts = engine_rules("vllm").stage_parts(model, 0, 1, resolved)
    return weights_book(model, ParallelLayout(tp=1), range(model.num_layers), first_stage=True, last_stage=True,
                        parts=parts)  # fmt: skip


def _routed(book: WeightsBook) -> int:
    return next(r.bytes for r in book.rows if r.component == "routed_experts")


@pytest.mark.parametrize("tp", [1, 2])
def test_rank_weights_are_the_engines(tp: int) -> None:
    """The rank's language model equals the meta build's at TP 1 and TP 2 (was 6,942,752,768 B short at TP 1: the
    latent projections booked MXFP4); the rank's whole weights add the meta build's MoonViT and projector
    (vision_tower 802,428,928 B at TP 1, 406,067,200 B a rank at TP 2: its blocks split with the 12 heads;
    mm_projector 92,289,024 B, ReplicatedLinear, whole)."""
    row = _row(tp)
    assert row["status"] == "ok"
    assert row["stages"][0]["param_bytes"]["language_model"] == ENGINE_LANGUAGE_MODEL[tp]
    plan = kvtop_answer("vllm", "0.33.0", row)
    assert plan["status"] == "ok"
    tower = row["stages"][0]["param_bytes"]["vision_tower"] + row["stages"][0]["param_bytes"]["mm_projector"]
    assert tower == {1: 802_428_928, 2: 406_067_200}[tp] + 92_289_024
    assert [stage["weights_bytes"] for stage in plan["stages"]] == [ENGINE_LANGUAGE_MODEL[tp] + tower]


def test_latent_projections_are_bf16_from_0_33_0() -> None:
    """Each of the 92 MoE layers at TP 1 (the --params listing): routed_experts w13_weight [896, 6144, 1792],
    w13_weight_scale [896, 6144, 112], w2_weight [896, 3584, 1536], w2_weight_scale [896, 3584, 96] uint8, no
    expert biases (Mxfp4MoEMethod, unlike SGLang's); routed_expert_down_proj [3584, 7168] and routed_expert_up_proj
    [7168, 3584] bf16 (4,726,980,608 B each over the model): Mxfp4Config builds no linear quantized."""
    experts = 896 * 6144 * (1792 + 112) + 896 * 3584 * (1536 + 96)
    latent = 2 * 3584 * 7168 * BF16
    assert MOE_LAYERS * 3584 * 7168 * BF16 == 4_726_980_608
    assert _routed(_book("0.33.0")) == MOE_LAYERS * (experts + latent)
    # 0.13.0 has no Kimi-K3 class: the checkpoint's compressed-tensors config stands, the latent projections in
    # MXFP4 (0.5 B + one uint8 scale per 32 weights); the difference is the 6,942,752,768 B the sweep showed
    mxfp4_latent = 2 * 3584 * 7168 * 17 // 32
    assert _routed(_book("0.13.0")) == MOE_LAYERS * (experts + mxfp4_latent)
    assert MOE_LAYERS * (latent - mxfp4_latent) == 6_942_752_768
