"""Quantized weights carry their scales: FP4 is not half of FP8, and spared modules keep their dtype."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.conftest import CONFIGS


def rows(name: str, quant: str | None = None) -> dict:
    cfg = json.loads((CONFIGS / name).read_text())
    hq = json.loads((CONFIGS / quant).read_text()) if quant else None
    model = model_from_config(cfg, source=name, hf_quant_config=hq)
    book = weights_book(
        model, ParallelLayout(tp=8), range(model.num_layers), first_stage=True, last_stage=True
    )
    return {row.component: row for row in book.rows}


def test_nvfp4_experts_are_half_of_fp8_plus_one_scale_per_16() -> None:
    nvfp4 = rows("nvidia--Qwen3-235B-A22B-NVFP4.json", "nvidia--Qwen3-235B-A22B-NVFP4.hf_quant_config.json")
    fp8 = rows("Qwen--Qwen3-235B-A22B-FP8.json")
    assert nvfp4["routed_experts"].params == fp8["routed_experts"].params
    # +12.5 % over 4 bits, and each expert's gate, up and down an fp32 weight_scale_2 and input_scale (vLLM
    # ModelOptNvFp4FusedMoE: w13_weight_scale_2 [E, 2], w2_weight_scale_2 [E], w13/w2_input_scale): 94 layers
    # × 3 × 128 experts × 8 B on each TP8 rank
    experts = nvfp4["routed_experts"]
    assert experts.bytes == round(experts.params * (0.5 + 1 / 16)) + 94 * 3 * 128 * 8
    assert fp8["routed_experts"].bytes_per_param == pytest.approx(1 + 4 / (128 * 128), rel=1e-3)
    assert nvfp4["router"].bytes_per_param == 2.0  # the excluded gates stay bf16
    assert nvfp4["lm_head"].bytes_per_param == 2.0


def test_mxfp4_experts_add_one_scale_per_32_and_attention_stays_bf16() -> None:
    oss = rows("openai--gpt-oss-120b.json")
    expert_matrices = 128 * 36 * 3 * 2880 * 2880 // 8  # 128 experts, 36 layers, gate/up/down, over TP8
    # plus expert biases: w13's split over TP8, w2's hidden-wide one whole on every rank (the engines' meta-built
    # w2_weight_bias [128, 2880] at TP 2 as at TP 8: a RowParallel bias is not split)
    biases = 128 * 36 * (2 * 2880 // 8 + 2880)
    assert oss["routed_experts"].params == expert_matrices + biases
    matrix_bytes = expert_matrices * (0.5 + 1 / 32)  # +6.25 % over 4 bits
    bias_bytes = biases * 2
    assert oss["routed_experts"].bytes == round(matrix_bytes + bias_bytes)
    assert oss["attention"].bytes_per_param == 2.0  # modules_to_not_convert: self_attn
