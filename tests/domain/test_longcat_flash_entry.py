"""LongCat-Flash (LongcatFlashForCausalLM), read by the `longcat_flash` entry, against both engines' meta builds.

The expected figures are the engines' own: the parameter shapes and dtypes vLLM 0.33.0 and SGLang 0.5.23 build on
the meta device (`benchmarks/engine_diff/registry_sweep.parameters`, the `--params` listing, run on the variant
below at TP 1 and 2; the shapes are quoted in each test) and SGLang's `_cell_size`. The variant is the registry
sweep's default config (tests/data/engine_diff/registry/configs/LongcatFlashForCausalLM.json, transformers 5.20.2's
LongcatFlashConfig defaults) with 2 layers and the fields a checkpoint's config.json states that the class
default lacks (mla_scale_q_lora, mla_scale_kv_lora, zero_expert_type, a rope_scaling with its rope_theta).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import predict
from kvtop.domain.model import LayerKind, MlpKind, ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from kvtop.domain.wording import GIB

DEFAULT = Path(__file__).resolve().parents[1] / "data" / "engine_diff" / "registry" / "configs"
BUDGET = MeasuredInputs(free_before_load_bytes=80 * GIB, free_after_load_bytes=60 * GIB)


def default_config() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DEFAULT / "LongcatFlashForCausalLM.json").read_text())
    return data


def checkpoint_shaped() -> dict[str, Any]:
    data = default_config()
    data.pop("rope_parameters")
    data.update(
        num_layers=2,
        zero_expert_type="identity",
        mla_scale_q_lora=True,
        mla_scale_kv_lora=True,
        rope_theta=10000000.0,
        rope_scaling={"rope_type": "default", "rope_theta": 10000000.0},
    )
    return data


def weights(m: ModelSpec, tp: int) -> int:
    book = weights_book(m, ParallelLayout(tp=tp), range(m.num_layers), first_stage=True, last_stage=True)
    return book.total_bytes


def plan(m: ModelSpec, engine: str, version: str, tp: int) -> Any:
    flags = ["--tp", str(tp), "--engine-version", version]
    flags += ["--context-length" if engine == "sglang" else "--max-model-len", "8192"]
    settings = parse_flags(engine, flags)
    return predict(m, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=BUDGET)


def test_two_latent_blocks_two_mlps_and_one_moe_a_layer() -> None:
    """Both engines at TP 1 (the same shapes, SGLang's q_a and kv_a fused as fused_qkv_a_proj_with_mqa, vLLM's as
    fused_qkv_a_proj): embed_tokens and lm_head [131072, 6144]; on each of 2 layers, two MLA blocks of [2112, 6144]
    (q_a + kv_a), q_a_layernorm [1536], q_b_proj [12288, 1536], kv_a_layernorm [512], kv_b_proj [16384, 512],
    o_proj [6144, 8192]; input_layernorm.N and post_attention_layernorm.N [6144] × 2 each; mlps.N gate_up_proj
    [24576, 6144] and down_proj [6144, 12288] × 2; the MoE's router classifier [768, 6144] and
    e_score_correction_bias [768], both fp32 (512 routed + 256 zero experts), w13 [512, 4096, 6144] and w2
    [512, 6144, 2048]; model.norm [6144]: 83,105,024,000 B. At TP 2 both build 41,623,357,440 B (the vocab, q_b,
    kv_b, o, the MLPs and the experts' width halved; q_a/kv_a, norms and router whole)."""
    m = model_from_config(checkpoint_shaped(), source="longcat-2")
    h = 6144
    mla = 2112 * h + 1536 + 12288 * 1536 + 512 + 16384 * 512 + h * 8192
    layer = 2 * mla + 4 * h + 2 * (24576 * h + h * 12288) + 512 * 4096 * h + 512 * h * 2048
    router = (768 * h + 768) * 4
    assert weights(m, 1) == (2 * 131072 * h + 2 * layer + h) * 2 + 2 * router == 83_105_024_000
    assert weights(m, 2) == 41_623_357_440
    assert m.num_layers == 4 and set(m.layer_attention) == {LayerKind.FULL}
    assert m.layer_mlp == (MlpKind.DENSE, MlpKind.MOE, MlpKind.DENSE, MlpKind.MOE)


def test_sglang_cell_holds_both_latent_blocks_of_each_layer() -> None:
    """SGLang 0.5.23's _cell_size for the variant: 4,608 B at TP 1 and 2 (num_attention_layers = 2 × 2 layers, each
    a 512 + 64 latent of 2 B, whole on every rank)."""
    m = model_from_config(checkpoint_shaped(), source="longcat-2")
    for tp in (1, 2):
        ledger = plan(m, "sglang", "0.5.23", tp)
        step = next(s for s in ledger.engine.steps if s.label.startswith("cell"))
        assert (step.value if step.value is not None else step.bytes) == 4 * 576 * 2


@pytest.mark.parametrize(
    ("engine", "version", "field"),
    [("vllm", "0.33.0", "mla_scale_q_lora"), ("sglang", "0.5.23", "rope_scaling.rope_theta")],
)
def test_the_class_default_is_refused_where_the_engine_fails(engine: str, version: str, field: str) -> None:
    """The class default config fails in both engines' builds (registry sweep, TP 1 and 2): vLLM 0.33.0
    "'LongcatFlashConfig' object has no attribute 'mla_scale_q_lora'" (transformers' class defines none), SGLang
    0.5.23 "argument of type 'NoneType' is not iterable" (its config class sets rope_parameters from rope_scaling,
    absent). kvtop refuses each naming the field. The registry default now states the published MLA fields
    (published_fields DERIVED_FIELDS); transformers' class default is it without them."""
    published = ("mla_scale_q_lora", "mla_scale_kv_lora", "zero_expert_type")
    m = model_from_config({k: v for k, v in default_config().items() if k not in published}, source="default")
    with pytest.raises(InputError) as refused:
        plan(m, engine, version, 1)
    assert refused.value.field == field
