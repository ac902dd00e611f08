"""xLLM (XllmForCausalLM, model_type xllm), read by the `xllm` entry (architectures/table_moe.py), against SGLang's
own code and meta builds.

The config is composed (tests/data/engine_diff/registry/configs/XllmForCausalLM.json, its SOURCES.md): an xLLM
K2MoE-375B test's stated fields (61 layers of hidden 6,144, 48 query / 8 KV heads of 128, rope_head_dim 64, 192
experts, mlp_only_layers [0, 1, 2]), the rest IFM/K2-Horizon-375B-A23B's, whose every stated field is the same:
layers 0-2 dense MLPs of 16,384, layers 3-60 192 experts of 1,792 and one shared, a router bias (moe_gate_bias),
vocab 250,624, untied; no MoVA value experts (num_values), no attention gate (apply_attn_gate), no q/k norms. The
expected bytes are SGLang 0.5.23 models/xllm.py's arithmetic, done by hand below, and equal its meta builds
(tests/data/engine_diff/registry/sglang-0.5.23.json, default--XllmForCausalLM's rows).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import MlpKind
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.conftest import DATA

CONFIG = DATA / "engine_diff" / "registry" / "configs" / "XllmForCausalLM.json"
BUDGET = MeasuredInputs(free_before_load_bytes=140 * GIB, free_after_load_bytes=120 * GIB)
H, V, LAYERS = 6144, 250_624, 61


def config() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CONFIG.read_text())
    return data


def total(tp: int) -> int:
    """SGLang 0.5.23 models/xllm.py, bf16 (B), split over TP where the module is parallel:
    - XllmAttention (line 1062): qkv_proj [(48 + 2 × 8) × 128, 6,144] and o_proj [6,144, 48 × 128], no biases
      (attention_bias false), no q/k norms (query_key_norm false), no gate (apply_attn_gate absent);
    - two norms a layer and the final one, [6,144] each (_make_norm, line 547: RMSNorm where layernorm_num_groups 1);
    - layers 0-2 (mlp_only_layers, line 1513) XllmMLP gate_up [2 × 16,384, 6,144], down [6,144, 16,384];
    - layers 3-60 XllmSparseMoeBlock (line 901): 192 experts and the shared XllmMLP (1 × 1,792, line 952) of
      3 × 6,144 × 1,792 each; XllmMoEGate (line 869) weight [192, 6,144] (torch.empty: the model dtype, replicated)
      and bias [192] in float32 (moe_gate_bias);
    - embed_tokens and the untied lm_head [250,624, 6,144] each (line 1672), split by vocabulary."""
    attention = (64 * 128 * H + H * 48 * 128) // tp * 2
    norms = (2 * H * LAYERS + H) * 2
    dense = 3 * (3 * H * 16_384 // tp * 2)
    moe = 58 * (193 * 3 * H * 1792 // tp * 2 + 192 * H * 2 + 192 * 4)
    return LAYERS * attention + norms + dense + moe + 2 * (V // tp) * H * 2


def test_read_by_its_own_entry() -> None:
    m = model_from_config(config(), source="xllm-375b")
    assert m.unchecked_class is None
    assert m.layer_mlp == (MlpKind.DENSE,) * 3 + (MlpKind.MOE,) * 58
    assert m.moe is not None and m.moe.router_bias and not m.moe.router_fp32
    assert (m.moe.num_routed_experts, m.moe.shared_intermediate_size) == (192, 1792)


@pytest.mark.parametrize("tp", [1, 2])
def test_sglang_0_5_23_weights_and_kv(tp: int) -> None:
    """The meta builds: 755,254,672,896 B of `model` + 3,079,667,712 of lm_head at TP 1; 377,696,534,016 +
    1,539,833,856 at TP 2. The cell: 61 layers × K and V × 8 KV heads (4 a rank at TP 2) × 128 × 2 B."""
    m = model_from_config(config(), source="xllm-375b")
    settings = parse_flags(
        "sglang", ["--tp", str(tp), "--engine-version", "0.5.23", "--context-length", "8192"]
    )
    rank = predict(
        m, settings, gpu_total_bytes=gpu_total_bytes("H200"), gpu_name="H200", measured=BUDGET
    ).ranks[0]
    built = {1: 755_254_672_896 + 3_079_667_712, 2: 377_696_534_016 + 1_539_833_856}[tp]
    assert rank.weights.total_bytes == total(tp) == built
    assert rank.kv.full_bytes_per_token == LAYERS * 2 * (8 // tp) * 128 * 2 == {1: 249_856, 2: 124_928}[tp]


@pytest.mark.parametrize(
    ("field", "value"), [("num_values", 64), ("apply_attn_gate", True), ("query_key_norm", True)]
)
def test_what_no_entry_reads_is_refused_by_name(field: str, value: Any) -> None:
    """xllm.py's spellings: MoVA value experts (num_values: XllmMoVAAttention), the attention gate (apply_attn_gate:
    XllmGatedAttention) and per-head q/k norms: not read, refused by the field."""
    with pytest.raises(UnsupportedModelError) as refused:
        model_from_config(config() | {field: value}, source=f"xllm-{field}")
    assert refused.value.field == field
