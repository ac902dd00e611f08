"""Laguna (poolside, held-out wave 2): per-layer query heads, a gate per head, FP8 experts with a bf16 router.

Expected bytes are vLLM 0.33.0's meta build of poolside/Laguna-XS.2-FP8 at TP 1 (`registry_sweep.py --params
poolside--Laguna-XS.2-FP8 --engine vllm`, models/laguna.py), written out per tensor below; kvtop's book is
recomputed from the config.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.conftest import CONFIGS

WAVE2 = CONFIGS / "heldout" / "wave2"

# vLLM 0.33.0 meta build, TP 1 (bf16 = 2 B, fp8 = 1 B, fp32 = 4 B):
#   full layers (10): qkv_proj [8192, 2048], o_proj [2048, 6144], g_proj [48, 2048], bf16 (48 query heads)
#   sliding layers (30): qkv_proj [10240, 2048], o_proj [2048, 8192], g_proj [64, 2048], bf16 (64 query heads)
ATTENTION = 10 * (8192 * 2048 + 2048 * 6144 + 48 * 2048) * 2 + 30 * (10240 * 2048 + 2048 * 8192 + 64 * 2048) * 2
#   39 MoE layers: w13 [256, 1024, 2048] and w2 [256, 2048, 512] fp8, their block scales [256, 8, 16] and
#   [256, 16, 4] fp32
ROUTED = 39 * (256 * 1024 * 2048 + 256 * 2048 * 512 + (256 * 8 * 16 + 256 * 16 * 4) * 4)
#   the router: gate [256, 2048] bf16 and e_score_correction_bias [256] fp32 on the 39 MoE layers
ROUTER = 39 * (256 * 2048 * 2 + 256 * 4)


def _laguna(name: str) -> dict:  # type: ignore[type-arg]
    return json.loads((WAVE2 / f"{name}.json").read_text())


def test_laguna_xs_attention_experts_and_router_are_vllms_meta_build() -> None:
    model = model_from_config(_laguna("poolside--Laguna-XS.2-FP8"))
    book = weights_book(model, ParallelLayout(), range(model.num_layers), first_stage=True, last_stage=True)
    rows = {row.component: row.bytes for row in book.rows}
    assert rows["attention"] == ATTENTION == 2_861_957_120
    assert rows["routed_experts"] == ROUTED == 31_414_616_064
    assert rows["router"] == ROUTER == 40_934_400


def test_laguna_heads_per_layer_and_gate_per_head() -> None:
    model = model_from_config(_laguna("poolside--Laguna-S-2.1-FP8"))  # gating "per-head": the same g_proj
    assert model.body.head_gate
    assert [g.heads for g in model.layer_geometry[:4]] == [48, 72, 72, 72]
    assert {g.kv_heads for g in model.layer_geometry} == {8}


def test_laguna_per_element_gate_is_refused_by_name() -> None:
    config = _laguna("poolside--Laguna-XS.2-FP8")
    config["gating"] = "per-element"  # vLLM's g_proj heads × head_dim wide: not read
    with pytest.raises(UnsupportedModelError) as refused:
        model_from_config(config)
    assert refused.value.field == "gating"
