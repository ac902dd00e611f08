"""Ling-3 (BailingMoeV3ForCausalLM; config model_type bailing_hybrid, read by class as kvtop's bailing_moe_v3): KDA
layers between MLA layers, both engines (issue 26).

Expected bytes by hand from the engines' code (vLLM 0.33.0 and SGLang 0.5.23 models/bailing_moe_v3.py), bf16 with
the fp32 parts named; the engines' meta builds of the same configs (tests/data/engine_diff/registry/, the rows of
recon--inclusionAI--Ling-3.0-tiny*) agree with them. Ling-3.0-tiny: hidden 1,536, 24 layers (MLA on every 4th,
KDA on the 18 others), 16 heads of 128, q_lora 256, kv_lora 512, rope 64, 128 experts of 512 and one shared of 512
from layer 1, a dense MLP of 4,608 on layer 0, vocabulary 157,184 untied.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import StateKind
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.conftest import CONFIGS
from tests.data_paths import DATA

RECON = CONFIGS / "recon"
TINY = "recon--inclusionAI--Ling-3.0-tiny"
FLOAT_BOUND = f"{TINY}-float-bound"  # kda_lower_bound -5.0 (vLLM's strict class takes it)
LOADABLE = f"{TINY}-float-bound-no-bias"  # … and use_bias false, which vLLM's BailingMoeV3MLP reads
LORA = f"{TINY}-kda-lora"  # LOADABLE with no_kda_lora false (use_kda_lora true): a variant, not a published config
BUDGET = MeasuredInputs(free_before_load_bytes=80 * GIB, free_after_load_bytes=60 * GIB)
H, V, HEADS = 1536, 157_184, 16


def mla(tp: int) -> int:
    """One MLA layer (BailingMoeV3MLAAttention / SGLang DsV3MLA): fused_qkv_a_proj [256 + 576, 1,536] and the
    q_a / kv_a layernorms [256], [512] whole; q_b_proj [16 × 192, 256], kv_b_proj [16 × 256, 512], dense
    [1,536, 16 × 128] and the head-wise g_proj [16, 1,536] split over TP."""
    whole = 256 * H + 576 * H + 256 + 512
    split = HEADS * 192 * 256 + HEADS * 256 * 512 + H * HEADS * 128 + HEADS * H
    return (whole + split // tp) * 2


def kda(tp: int, width: int) -> int:
    """One KDA layer (BailingMoeV3KimiDeltaAttention / SGLang BailingKDA, no_kda_lora): qkvb_proj [3 × 16 × width +
    16, 1,536], f_proj, g_proj [16 × width, 1,536], o_proj [1,536, 16 × width] split, o_norm [width] whole; fp32:
    q/k/v_conv1d [16 × width, 1, 4] each, A_log [16], dt_bias [16 × width], split."""
    inner = HEADS * width
    bf16 = ((3 * inner + HEADS) * H + 3 * inner * H) // tp + width
    fp32 = (3 * inner * 4 + HEADS + inner) // tp
    return bf16 * 2 + fp32 * 4


def kda_lora(tp: int) -> int:
    """One KDA layer with low-rank gates (SGLang 0.5.23 kimi_linear.py KimiDeltaAttention, no_kda_lora False and no
    quantization: its do_fuse_qkvbfg branch): fused_qkvbfg_a_proj (MergedColumnParallelRepeatedLinear) = q, k, v, b
    [3 × 2,048 + 16, 1,536] split + f_a, g_a [128, 1,536] each repeated whole (linear.py:1884-1885; kimi_linear.py:309); fused_fg_b_proj
    (ColumnParallelBatchedLinear) [2, 2,048 ÷ TP, 128] (linear.py:1944; kimi_linear.py:322), the model dtype; the rest as kda()."""
    inner = HEADS * 128
    bf16 = ((3 * inner + HEADS) * H + 2 * inner * 128 + inner * H) // tp + 2 * 128 * H + 128
    fp32 = (3 * inner * 4 + HEADS + inner) // tp
    return bf16 * 2 + fp32 * 4


def moe(tp: int) -> int:
    """Layers 1-23: 128 experts and one shared of 3 × 512 × 1,536 split over TP; the router [128, 1,536] and its
    expert_bias [128] fp32, whole."""
    return (129 * 3 * 512 * H // tp) * 2 + 128 * H * 4 + 128 * 4


def total(tp: int, width: int, low_rank: bool = False) -> int:
    """Embedding and untied LM head (vocab-parallel: 157,184 rows divide), 49 hidden-wide norms, 6 MLA, 18 KDA,
    layer 0's dense MLP [2 × 4,608 + 4,608 over 1,536], 23 MoE layers."""
    norms = (24 * 2 + 1) * H * 2
    linear = 18 * (kda_lora(tp) if low_rank else kda(tp, width))
    return 2 * V * H * 2 // tp + norms + 6 * mla(tp) + linear + 3 * 4608 * H * 2 // tp + 23 * moe(tp)


def model(name: str) -> Any:
    return model_from_config(json.loads((RECON / f"{name}.json").read_text()), source=name)


def plan(name: str, engine: str, version: str, tp: int) -> Any:
    settings = parse_flags(engine, ["--tp", str(tp), "--engine-version", version, "--max-model-len", "8192"])
    return predict(model(name), settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=BUDGET)


def rows(engine: str, version: str, name: str) -> dict[int, dict[str, Any]]:
    fixture = json.loads((DATA / "engine_diff" / "registry" / f"{engine}-{version}.json").read_text())
    return {int(row["tp"]): row for row in fixture["rows"] if row["config"] == name}


def test_ling_3_is_read_by_its_class() -> None:
    m = model(TINY)
    assert m.model_type == "bailing_moe_v3" and m.state is not None and m.state.kind is StateKind.KIMI_DELTA
    assert (m.state.num_heads, m.state.head_dim, m.state.conv_kernel, m.state.rope_head_dim) == (16, 128, 4, 64)
    assert m.state.full_rank_gate and m.state.full_rank_forget and m.body.latent_head_gate


@pytest.mark.parametrize("tp", [1, 2])
def test_sglang_0_5_23_weights_kv_and_state(tp: int) -> None:
    """SGLang keeps head_dim 128 (its own BailingHybridConfig). Its state (configs/mamba_utils.py
    KimiLinearStateShape): conv (3, 3 × 2,048 ÷ TP) in bf16, temporal (16 ÷ TP, 128, 128) in fp32, per KDA layer."""
    expected = total(tp, 128)
    assert expected == {1: 15_796_794_496, 2: 7_915_196_992}[tp]
    built = rows("sglang", "0.5.23", TINY)[tp]
    assert sum(built["stages"][0]["param_bytes"].values()) == expected
    assert built["cell_size"] == 6 * 576 * 2  # six MLA layers' latent, 6,912 B a token
    rank = plan(TINY, "sglang", "0.5.23", tp).ranks[0]
    assert rank.weights.total_bytes == expected
    assert rank.kv.full_bytes_per_token == 6_912
    assert rank.kv.state_bytes_per_request == 18 * (3 * 3 * 2048 * 2 + 16 * 128 * 128 * 4) // tp


@pytest.mark.parametrize("tp", [1, 2])
def test_vllm_0_33_0_builds_kda_at_qk_rope_head_dim(tp: int) -> None:
    """vLLM reads bailing_hybrid through transformers 5.20.2's BailingHybridConfig, whose __post_init__ sets head_dim
    = qk_rope_head_dim (64): its KDA projections, convs and state are 16 × 64 wide (mamba_utils kda_state_shape:
    conv (3, 3 × 1,024 ÷ TP) bf16, recurrent (16 ÷ TP, 64, 64) fp32)."""
    expected = total(tp, 64)
    assert expected == {1: 15_456_095_104, 2: 7_744_846_144}[tp]
    built = rows("vllm", "0.33.0", LOADABLE)[tp]
    assert sum(built["stages"][0]["param_bytes"].values()) == expected
    rank = plan(LOADABLE, "vllm", "0.33.0", tp).ranks[0]
    assert rank.weights.total_bytes == expected
    assert rank.kv.state_bytes_per_request == 18 * (3 * 3 * 1024 * 2 + 16 * 64 * 64 * 4) // tp


def test_vllm_0_33_0_refuses_ling_3_tiny_as_published() -> None:
    """Its config states kda_lower_bound -5, an int that the @strict BailingHybridConfig (float) refuses; with -5.0
    it fails on use_bias, which the class does not define and BailingMoeV3MLP reads (the sweep's rows: refused)."""
    for name, field in ((TINY, "kda_lower_bound"), (FLOAT_BOUND, "use_bias")):
        with pytest.raises(InputError) as refused:
            plan(name, "vllm", "0.33.0", 1)
        assert refused.value.field == field
        assert {row["status"] for row in rows("vllm", "0.33.0", name).values()} == {"refused"}
    assert plan(FLOAT_BOUND, "sglang", "0.5.23", 1).ranks[0].weights.total_bytes == total(1, 128)


@pytest.mark.parametrize("tp", [1, 2])
def test_sglang_0_5_23_low_rank_kda_gates(tp: int) -> None:
    """no_kda_lora false: SGLang builds Kimi-Linear's low-rank f / g gates (f_a, g_a whole; f_b, g_b split); the
    state is unchanged (the gates are weights only)."""
    expected = total(tp, 128, low_rank=True)
    assert expected == {1: 15_603_332_224, 2: 7_825_543_744}[tp]
    built = rows("sglang", "0.5.23", LORA)[tp]
    assert sum(built["stages"][0]["param_bytes"].values()) == expected and built["cell_size"] == 6_912
    m = model(LORA)
    assert m.state is not None and not (m.state.full_rank_gate or m.state.full_rank_forget)
    rank = plan(LORA, "sglang", "0.5.23", tp).ranks[0]
    assert rank.weights.total_bytes == expected
    assert rank.kv.state_bytes_per_request == 18 * (3 * 3 * 2048 * 2 + 16 * 128 * 128 * 4) // tp


def test_vllm_0_33_0_refuses_low_rank_kda_gates() -> None:
    """vLLM 0.33.0 bailing_moe_v3.py:686-687: "BailingMoeV3 KDA currently expects no_kda_lora=True" (ValueError in
    BailingMoeV3KimiDeltaAttention.__init__); the sweep's rows: refused at TP 1 and 2."""
    with pytest.raises(InputError) as refused:
        plan(LORA, "vllm", "0.33.0", 1)
    assert refused.value.field == "no_kda_lora" and "expects no_kda_lora=True" in str(refused.value)
    assert {row["status"] for row in rows("vllm", "0.33.0", LORA).values()} == {"refused"}


def test_layers_past_the_last_group_are_refused() -> None:
    """SGLang 0.5.23 bailing_moe_v3.py asserts num_layers % layer_group_size == 0; vLLM 0.33.0 _is_kda_layer makes
    the remainder MLA: neither read, refused by name."""
    data = json.loads((RECON / f"{TINY}.json").read_text())
    data["num_hidden_layers"] = 26
    with pytest.raises(UnsupportedModelError) as refused:
        model_from_config(data, source="ling-3-26-layers")
    assert refused.value.field == "layer_group_size" and "26 layers in groups of 4" in str(refused.value)
