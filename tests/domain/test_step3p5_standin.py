"""Step-3.5 (Step3p5ForCausalLM) as vLLM 0.33.0 and SGLang 0.5.23 build the registry's stand-in (issue #26).

The stand-in is transformers' Step3p7TextConfig default with the published fields derived from the real
stepfun-ai--Step-3.7-Flash config (benchmarks/engine_diff/published_fields._step3p5_published). Expected figures:
the engines' own, the meta builds' `named_parameters()` as `python benchmarks/engine_diff/registry_sweep.py
--engine vllm|sglang --params default--Step3p5ForCausalLM --tps 1` listed them (quoted below) and the registry
rows' totals. Never kvtop's own figures.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_configs import DEFAULT_CONFIGS
from benchmarks.engine_diff.registry_judge import kvtop_answer
from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import WeightsBook, weights_book

CONFIG = "default--Step3p5ForCausalLM"
BF16, FP32 = 2, 4
MOE_LAYERS, DENSE_LAYERS, LAYERS, HIDDEN, EXPERTS = 42, 3, 45, 4096, 288
VERSIONS = {"vllm": "0.33.0", "sglang": "0.5.23"}


def _book(engine: str) -> WeightsBook:
    model = model_from_config(
        json.loads((DEFAULT_CONFIGS / "Step3p5ForCausalLM.json").read_text()), source=CONFIG
    )
    resolved = ResolvedVersion(text=VERSIONS[engine], source=VersionSource.FLAG)
    parts = engine_rules(engine).stage_parts(model, 0, 1, resolved)
    return weights_book(model, ParallelLayout(tp=1), range(model.num_layers), first_stage=True, last_stage=True,
                        parts=parts)  # fmt: skip


def _bytes(book: WeightsBook, component: str) -> int:
    return next(r.bytes for r in book.rows if r.component == component)


def _row(engine: str, tp: int) -> dict[str, Any]:
    return row_of(engine, VERSIONS[engine], CONFIG, tp)


def test_experts_shared_expert_and_dense_layers_are_the_engines() -> None:
    """Both meta builds: routed experts w13 [288, 2560, 4096] and w2 [288, 4096, 1280] bf16 on 42 layers (the
    stand-in's mlp_layer_types: 3 dense, then sparse; transformers' field n_routed_experts); share_expert gate_up
    [2560, 4096] and down [4096, 1280] on each (n_shared_experts not stated: one shared expert all the same); the
    dense mlp gate_up [22528, 4096] and down [4096, 11264] on 3 layers."""
    book = _book("vllm")
    assert _bytes(book, "routed_experts") == MOE_LAYERS * EXPERTS * (2560 * HIDDEN + HIDDEN * 1280) * BF16
    assert _bytes(book, "shared_experts") == MOE_LAYERS * (2560 * HIDDEN + HIDDEN * 1280) * BF16
    assert _bytes(book, "mlp") == DENSE_LAYERS * (22528 * HIDDEN + HIDDEN * 11264) * BF16


def test_router_is_fp32_in_vllm_and_bf16_in_sglang() -> None:
    """vLLM 0.33.0: moe.gate.weight [288, 4096] float32 and moe.router_bias [288] float32 on 42 layers
    (198,180,864 + 48,384 B); SGLang 0.5.23: moe.gate.weight [288, 4096] bfloat16 (99,090,432 B), router_bias fp32."""
    assert (
        _bytes(_book("vllm"), "router") == 198_180_864 + 48_384 == MOE_LAYERS * EXPERTS * (HIDDEN + 1) * FP32
    )
    assert _bytes(_book("sglang"), "router") == 99_090_432 + 48_384


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize("tp", [1, 2])
def test_rank_weights_are_the_engines(engine: str, tp: int) -> None:
    """The rank's parameters equal the meta build's at TP 1 and TP 2 (TP 1 totals: vLLM 391,763,490,560 B,
    SGLang 391,664,400,128 B, the --params listings)."""
    row = _row(engine, tp)
    assert row["status"] == "ok"
    engine_bytes = sum(row["stages"][0]["param_bytes"].values())
    if tp == 1:
        assert engine_bytes == {"vllm": 391_763_490_560, "sglang": 391_664_400_128}[engine]
    plan = kvtop_answer(engine, VERSIONS[engine], row)
    assert plan["status"] == "ok"
    assert [stage["weights_bytes"] for stage in plan["stages"]] == [engine_bytes]


def _variant_book(tp: int, **changes: Any) -> WeightsBook:
    data = json.loads((DEFAULT_CONFIGS / "Step3p5ForCausalLM.json").read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key)
        else:
            data[key] = value
    model = model_from_config(data, source=CONFIG)
    parts = engine_rules("vllm").stage_parts(
        model, 0, 1, ResolvedVersion(text="0.33.0", source=VersionSource.FLAG)
    )
    return weights_book(model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True,
                        parts=parts)  # fmt: skip


def test_head_wise_gate_is_a_g_proj_per_layer_split_with_the_heads() -> None:
    """The stand-in with use_head_wise_attn_gate true, meta-built by vLLM 0.33.0 at TP 2 (--params --tps 2 on a
    copy of the stand-in so changed): self_attn.g_proj.weight [32, 4096] bf16 on 45 layers (11,796,480 B), the
    rank 195,993,040,640 B in all (the stand-in's row at TP 2 plus the gates)."""
    assert _variant_book(2, use_head_wise_attn_gate=True).total_bytes == 195_993_040_640
    assert 45 * 32 * HIDDEN * BF16 == 11_796_480


def test_sliding_layers_read_their_heads_from_attention_other_setting() -> None:
    """A copy of the stand-in with attention_other_setting num_attention_heads 96 (Step-3.5-Flash's published
    form; num_sliding_attention_heads dropped) and the head-wise gate, meta-built by vLLM 0.33.0 at TP 1: the 33
    sliding layers qkv_proj [14336, 4096], o_proj [4096, 12288], g_proj [96, 4096]; the 12 full layers [10240,
    4096], [4096, 8192], [64, 4096]; 394,010,326,784 B in all."""
    setting = {"attention_type": "sliding_attention", "num_attention_heads": 96, "num_attention_groups": 8,
               "head_dim": 128}  # fmt: skip
    book = _variant_book(1, attention_other_setting=setting, num_sliding_attention_heads=None,
                         use_head_wise_attn_gate=True)  # fmt: skip
    assert book.total_bytes == 394_010_326_784
    full = (10240 * HIDDEN + HIDDEN * 8192 + 64 * HIDDEN) * BF16
    sliding = (14336 * HIDDEN + HIDDEN * 12288 + 96 * HIDDEN) * BF16
    assert _bytes(book, "attention") == 12 * full + 33 * sliding  # the q/k norms are booked with the norms


def test_moe_layers_come_from_the_published_enum_string() -> None:
    """A copy of the stand-in with mlp_layer_types dropped and moe_layers_enum "4,5,…,44" (the published form),
    meta-built by vLLM 0.33.0 at TP 1: routed_experts w13 [288, 2560, 4096] on 41 layers (247,631,708,160 B), dense
    MLPs on layers 0-3; 382,944,440,960 B in all."""
    enum = ",".join(str(i) for i in range(4, LAYERS))
    book = _variant_book(1, mlp_layer_types=None, moe_layers_enum=enum)
    assert book.total_bytes == 382_944_440_960
    assert _bytes(book, "routed_experts") == 41 * EXPERTS * (2560 * HIDDEN + HIDDEN * 1280) * BF16
