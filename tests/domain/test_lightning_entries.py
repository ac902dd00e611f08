"""Ling-2.5 (BailingMoeV2_5ForCausalLM, model_type bailing_hybrid), read by the `bailing_hybrid` entry
(architectures/table_lightning.py), against the engines' own code and meta builds.

The config is Ring-V2.5's configuration class defaults (tests/data/configs/recon/recon--inclusionAI--Ring-V2.5-class.json,
its SOURCES.md): 20 layers of hidden 2,048, 16 heads, head_dim 128, layer_group_size 5 (MLA on layers 4, 9, 14, 19,
lightning attention on the other 16), kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128, no q_lora; layer 0 a dense
MLP of 5,120, then 256 experts of 512 and one shared; vocab 157,184, untied. The expected bytes are the engines' code
arithmetic, done by hand below, and equal the engines' meta builds (tests/data/engine_diff/registry/
vllm-0.33.0.json and sglang-0.5.23.json, the config's rows).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvtop.domain.architectures.table_lightning import LING_3_BY_CLASS
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import LayerKind, StateKind
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB

CONFIG = Path(__file__).resolve().parents[1] / "data" / "configs" / "recon" / "recon--inclusionAI--Ring-V2.5-class.json"
BUDGET = MeasuredInputs(free_before_load_bytes=80 * GIB, free_after_load_bytes=60 * GIB)
VERSIONS = {"vllm": "0.33.0", "sglang": "0.5.23"}

H, V = 2048, 157_184
# both engines, bf16 (B): norms 2 × 2,048 a layer and the final 2,048; the MLA layer (vLLM bailing_moe_linear.py
# BailingMoeV25MLAAttention, SGLang DeepseekV2AttentionMLA): q_proj 16 × 192 × 2,048, kv_a_proj_with_mqa 576 × 2,048,
# kv_a_layernorm 512, kv_b_proj 16 × 256 × 512, o_proj 2,048 × 16 × 128
MLA = (16 * 192 * H + 576 * H + 512 + 16 * 256 * 512 + H * 16 * 128) * 2
DENSE = 3 * H * 5120 * 2  # layer 0: gate_up [10,240, 2,048] and down [2,048, 5,120]
# layers 1-19 (bailing_moe_linear.py BailingMoeV25 / BailingMoE): 256 experts and one shared of 3 × 2,048 × 512 in
# bf16, the gate [256, 2,048] in fp32 (router_dtype fp32) and its expert_bias [256] in fp32
MOE = (257 * 3 * H * 512) * 2 + 256 * H * 4 + 256 * 4
EMBEDDING = V * H * 2


def lightning(width: int) -> int:
    """One lightning layer's bytes at TP 1 (vLLM layers/mamba/linear/bailing_linear_attn.py, SGLang
    bailing_moe_linear.py BailingMoELinearAttention): query_key_value [3 × 16 × width, 2,048], query_layernorm and
    key_layernorm [width], g_proj [16 × width, 2,048], g_norm [16 × width], dense [2,048, 16 × width]."""
    inner = 16 * width
    return (3 * inner * H + 2 * width + inner * H + inner + H * inner) * 2


def body(width: int) -> int:
    return EMBEDDING + 20 * 2 * H * 2 + H * 2 + 4 * MLA + 16 * lightning(width) + DENSE + 19 * MOE


def config() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CONFIG.read_text())
    return data


def plan(engine: str, tp: int, data: dict[str, Any] | None = None) -> Any:
    m = model_from_config(data or config(), source="ring-v2.5-class")
    settings = parse_flags(engine, ["--tp", str(tp), "--engine-version", VERSIONS[engine], "--max-model-len", "8192"])
    return predict(m, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=BUDGET)


def test_layers_and_state_as_the_config_writes_them() -> None:
    """is_linear_layer (both engines): (i + 1) % layer_group_size != 0 is lightning; the state is the config's
    head_dim wide, qk_rope_head_dim kept for the engine that reads that instead."""
    m = model_from_config(config(), source="ring-v2.5-class")
    assert m.layer_attention == ((LayerKind.LINEAR,) * 4 + (LayerKind.FULL,)) * 4
    assert m.state is not None and m.state.kind is StateKind.LIGHTNING
    assert (m.state.num_heads, m.state.head_dim, m.state.rope_head_dim, m.state.conv_kernel) == (16, 128, 64, 1)


def test_vllm_reads_the_lightning_width_as_qk_rope_head_dim() -> None:
    """vLLM 0.33.0 reads bailing_hybrid through transformers 5.20.2's BailingHybridConfig (head_dim =
    qk_rope_head_dim = 64): meta build 31,913,638,912 B of `model` + 643,825,664 B of lm_head at TP 1; at TP 2
    15,981,558,784 + 321,912,832. State (linear_attention_state_shape (16, 64, 64), the model dtype): 16 × 64 × 64 ×
    2 B = 131,072 B a layer, 16 layers per request."""
    tp1, tp2 = plan("vllm", 1), plan("vllm", 2)
    expected = body(64) + EMBEDDING  # + lm_head [157,184, 2,048] bf16
    assert tp1.ranks[0].weights.total_bytes == expected == 31_913_638_912 + 643_825_664
    assert tp2.ranks[0].weights.total_bytes == 15_981_558_784 + 321_912_832
    assert tp1.ranks[0].kv.state_bytes_per_request == 16 * 16 * 64 * 64 * 2 == 2_097_152
    assert tp2.ranks[0].kv.state_bytes_per_request == 16 * 8 * 64 * 64 * 2
    # the MLA page of one token, 576 × 2 B, grows to a 128-token block (MLA's alignment) that covers the state:
    # 128 × 1,152 B = 147,456 B, the meta build's MambaSpec and MLAAttentionSpec page_size_bytes
    assert tp1.engine.page_size == 128
    assert tp1.ranks[0].kv.full_bytes_per_token == 4 * 576 * 2


def test_sglang_keeps_head_dim_and_holds_the_head_in_fp32() -> None:
    """SGLang 0.5.23 keeps head_dim 128 (its own BailingHybridConfig) and builds the untied LM head with
    params_dtype float32: meta build 32,249,220,096 B of `model` + 1,287,651,328 B of lm_head (157,184 × 2,048 × 4)
    at TP 1; at TP 2 16,149,351,424 + 643,825,664. State (mamba2_cache_params: Mamba2StateShape with no conv,
    temporal (16, 128, 128) in float32, mamba2_state_dtype's default): 16 × 128 × 128 × 4 B a layer."""
    tp1, tp2 = plan("sglang", 1), plan("sglang", 2)
    expected = body(128) + V * H * 4
    assert tp1.ranks[0].weights.total_bytes == expected == 32_249_220_096 + 1_287_651_328
    assert tp2.ranks[0].weights.total_bytes == 16_149_351_424 + 643_825_664
    assert tp1.ranks[0].kv.state_bytes_per_request == 16 * 16 * 128 * 128 * 4 == 16_777_216
    assert tp2.ranks[0].kv.state_bytes_per_request == 16 * 8 * 128 * 128 * 4
    assert tp1.ranks[0].kv.full_bytes_per_token == 4 * 576 * 2  # the meta build's cell_size, 4,608


def test_a_ling_3_config_naming_no_class_is_refused_by_its_kda_layers() -> None:
    """Ling-3 shares model_type bailing_hybrid; its KDA layers carry short_conv_kernel_size (SGLang 0.5.23
    configs/bailing_hybrid.py: use_kda = short_conv_kernel_size is not None). kvtop reads Ling-3 by its class
    (test_ling3_entry.py); a config naming none is refused by the field, saying so."""
    data = config()
    data.update(short_conv_kernel_size=4)
    del data["architectures"]
    with pytest.raises(UnsupportedModelError) as by_field:
        model_from_config(data, source="ling-3-shaped")
    assert by_field.value.field == "short_conv_kernel_size"
    assert LING_3_BY_CLASS in str(by_field.value)


def test_layers_past_the_last_group_are_lightning_in_vllm_and_refused_by_sglang() -> None:
    """22 layers in groups of 5: both engines' is_linear_layer ((i + 1) % 5 != 0) makes layers 20 and 21 lightning;
    vLLM 0.33.0 builds them so (bailing_moe_linear.py BailingMoeV2_5Model: no check), SGLang 0.5.23's
    BailingMoeV2_5Model asserts num_layers % layer_group_size == 0 (config_checks.WHOLE_GROUP_CLASSES_ERAS). The
    meta builds (recon--inclusionAI--Ring-V2.5-class-22-layers rows): vLLM 35,193,607,680 B of `model` + 643,825,664
    of lm_head at TP 1 (17,623,649,792 + 321,912,832 at TP 2), layers 20-21 a MambaSpec; SGLang's AssertionError
    "num_layers=22 must be divided by layer_group_size=5" at TP 1 and 2."""
    data = config()
    data.update(num_hidden_layers=22)
    vllm = plan("vllm", 1, data)
    # body(64) for 20 layers, plus two lightning MoE layers (norms 2 × 2,048 each), and the LM head
    expected = body(64) + 2 * (2 * H * 2 + lightning(64) + MOE) + EMBEDDING
    assert vllm.ranks[0].weights.total_bytes == expected == 35_193_607_680 + 643_825_664
    assert plan("vllm", 2, data).ranks[0].weights.total_bytes == 17_623_649_792 + 321_912_832
    assert vllm.ranks[0].kv.state_bytes_per_request == 18 * 16 * 64 * 64 * 2
    assert vllm.ranks[0].kv.full_bytes_per_token == 4 * 576 * 2
    with pytest.raises(InputError) as refused:
        plan("sglang", 1, data)
    assert refused.value.field == "layer_group_size" and "22 layers" in str(refused.value)


SALA = CONFIG.parent / "recon--openbmb--MiniCPM-SALA.json"


def sala_plan(tp: int) -> Any:
    m = model_from_config(json.loads(SALA.read_text()), source="minicpm-sala")
    settings = parse_flags("sglang", ["--tp", str(tp), "--engine-version", "0.5.23", "--context-length", "8192"])
    return predict(m, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=BUDGET)


def test_minicpm_sala_on_sglang() -> None:
    """MiniCPM-SALA (recon--openbmb--MiniCPM-SALA.json: 32 layers of 4,096, 8 minicpm4 and 24 lightning-attn by
    mixer_types, vocab 73,448, untied). SGLang 0.5.23 models/minicpm.py, bf16 (B): embed_tokens and lm_head padded
    to 73,472 rows (VocabParallelEmbedding's 64) × 4,096; every layer two norms of 4,096 and MiniCPMMLP gate_up
    [32,768, 4,096] and down [4,096, 16,384]; a minicpm4 layer (MiniCPMAttention) qkv_proj [(32 + 2 × 2) × 128,
    4,096], o_proj [4,096, 4,096] and o_gate [4,096, 4,096] (attn_use_output_gate); a lightning layer
    (MiniCPMLightningMixer) qkv_proj [3 × 4,096, 4,096], q_norm and k_norm [128], z_proj [4,096, 4,096]
    (use_output_gate), o_norm [4,096] (use_output_norm), o_proj [4,096, 4,096]; the final norm. The meta build:
    18,352,918,528 + 601,882,624 B at TP 1, 9,176,731,648 + 300,941,312 at TP 2; the GPTQModel run that printed the
    config logged "Pre-Quantized model size: 18076.38MB" (unpadded: 18,954,407,936 B = 18,076.39 MiB)."""
    h = 4096
    minicpm4 = (36 * 128 * h + h * h + h * h) * 2
    lightning = (3 * h * h + 2 * 128 + h * h + h + h * h) * 2
    expected = 2 * 73_472 * h * 2 + (32 * 2 * h + h) * 2 + 32 * 3 * h * 16_384 * 2 + 8 * minicpm4 + 24 * lightning
    tp1, tp2 = sala_plan(1), sala_plan(2)
    assert tp1.ranks[0].weights.total_bytes == expected == 18_352_918_528 + 601_882_624
    assert tp2.ranks[0].weights.total_bytes == 9_176_731_648 + 300_941_312
    # the cell (8 minicpm4 layers × K and V × 2 KV heads × 128 × 2 B; one head a rank at TP 2): the meta build's
    assert tp1.ranks[0].kv.full_bytes_per_token == 8 * 2 * 2 * 128 * 2 == 8_192
    assert tp2.ranks[0].kv.full_bytes_per_token == 4_096
    # MiniCPMHybridConfig.mamba2_cache_params: (lightning_nkv ÷ TP, 128, 128) float32, no conv, 24 layers
    assert tp1.ranks[0].kv.state_bytes_per_request == 24 * 32 * 128 * 128 * 4
    assert tp2.ranks[0].kv.state_bytes_per_request == 24 * 16 * 128 * 128 * 4
    assert any("sparse_config" in note for note in tp1.model.not_modelled)


def test_mixer_types_repeat_to_the_layer_count() -> None:
    """MiniCPMHybridConfig: `(mixer_types × repeats)[:num_hidden_layers]`, aliases read ("lightning" is
    lightning-attn); a list longer than the layers is refused, as the class raises ValueError."""
    data = json.loads(SALA.read_text())
    data.update(num_hidden_layers=5, mixer_types=["minicpm4", "lightning"])
    m = model_from_config(data, source="minicpm-sala-5")
    full, linear = LayerKind.FULL, LayerKind.LINEAR
    assert m.layer_attention == (full, linear, full, linear, full)
    data.update(mixer_types=["minicpm4"] * 6)
    with pytest.raises(Exception, match="mixer_types"):
        model_from_config(data, source="minicpm-sala-long")
