"""K2-Horizon (K2HorizonForCausalLM, model_type k2_horizon), read by the `k2_horizon` entry
(architectures/table_moe.py), against the engines' own code and meta builds.

The config is IFM/K2-Horizon-375B-A23B's config.json (tests/data/configs/heldout, its SOURCES.md): 61 layers of
hidden 6,144, 48 query / 8 KV heads of 128, layers 0-2 dense MLPs of 16,384 (mlp_only_layers), layers 3-60 192
experts of 1,792 and one shared, a router bias (moe_gate_bias), vocab 250,624, untied; no MoVA value experts, no
attention gate, no q/k norms, one norm group. The expected bytes are SGLang 0.5.23 models/xllm.py's arithmetic, done
by hand below, and equal its meta builds (tests/data/engine_diff/registry/sglang-0.5.23.json, the config's rows).
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
from kvtop.domain.model import MlpKind
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.conftest import CONFIGS

CONFIG = CONFIGS / "heldout" / "IFM--K2-Horizon-375B-A23B.json"
BUDGET = MeasuredInputs(free_before_load_bytes=140 * GIB, free_after_load_bytes=120 * GIB)
H, V, LAYERS = 6144, 250_624, 61


def config() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CONFIG.read_text())
    return data


def plan(engine: str, version: str, tp: int, data: dict[str, Any] | None = None) -> Any:
    m = model_from_config(data or config(), source="k2-horizon-375b")
    settings = parse_flags(engine, ["--tp", str(tp), "--engine-version", version, "--context-length", "8192"])
    return predict(m, settings, gpu_total_bytes=gpu_total_bytes("H200"), gpu_name="H200", measured=BUDGET)


def total(tp: int) -> int:
    """SGLang 0.5.23 models/xllm.py, bf16 (B), split over TP where the module is parallel:
    - XllmAttention: qkv_proj [(48 + 2 × 8) × 128, 6,144] and o_proj [6,144, 48 × 128], no biases, no q/k norms;
    - two norms a layer and the final one, [6,144] each (_make_norm: RMSNorm where layernorm_num_groups is 1);
    - layers 0-2 (mlp_only_layers) XllmMLP gate_up [2 × 16,384, 6,144], down [6,144, 16,384];
    - layers 3-60 XllmSparseMoeBlock: 192 experts and the shared XllmMLP (1 × 1,792) of 3 × 6,144 × 1,792 each;
      XllmMoEGate weight [192, 6,144] (torch.empty: the model dtype, replicated) and bias [192] in float32;
    - embed_tokens and the untied lm_head [250,624, 6,144] each, split by vocabulary."""
    attention = (64 * 128 * H + H * 48 * 128) // tp * 2
    norms = (2 * H * LAYERS + H) * 2
    dense = 3 * (3 * H * 16_384 // tp * 2)
    moe = 58 * (193 * 3 * H * 1792 // tp * 2 + 192 * H * 2 + 192 * 4)
    return LAYERS * attention + norms + dense + moe + 2 * (V // tp) * H * 2


def test_layers_as_the_config_writes_them() -> None:
    m = model_from_config(config(), source="k2-horizon-375b")
    assert m.layer_mlp == (MlpKind.DENSE,) * 3 + (MlpKind.MOE,) * 58
    assert m.moe is not None and m.moe.router_bias and not m.moe.router_fp32
    assert (m.moe.num_routed_experts, m.moe.shared_intermediate_size) == (192, 1792)


@pytest.mark.parametrize("tp", [1, 2])
def test_sglang_0_5_23_weights_and_kv(tp: int) -> None:
    """The meta builds: 755,254,672,896 B of `model` + 3,079,667,712 of lm_head at TP 1; 377,696,534,016 +
    1,539,833,856 at TP 2. The cell: 61 layers × K and V × 8 KV heads (4 a rank at TP 2) × 128 × 2 B."""
    rank = plan("sglang", "0.5.23", tp).ranks[0]
    built = {1: 755_254_672_896 + 3_079_667_712, 2: 377_696_534_016 + 1_539_833_856}[tp]
    assert rank.weights.total_bytes == total(tp) == built
    assert rank.kv.full_bytes_per_token == LAYERS * 2 * (8 // tp) * 128 * 2 == {1: 249_856, 2: 124_928}[tp]


def test_vllm_0_33_0_cannot_read_the_model_type() -> None:
    """vLLM 0.33.0 registers models/k2_horizon.py but no config class, nor does transformers 5.20.2, and the
    config.json names no auto_map: "Transformers does not recognize this architecture" at TP 1 and 2 (the
    registry rows); kvtop refuses it so (engines/vllm/config_checks.UNKNOWN_MODEL_TYPES_ERAS). A config that ships
    its code (auto_map) is planned as SGLang's: vLLM's modules hold the same bytes (k2_horizon.py K2HorizonAttention
    qkv / o_proj, GateLinear in the model dtype — force_fp32_compute off — with its bias made float32,
    K2HorizonRMSNorm of hidden_size), by its code; no meta build checks it here (the harness runs no remote code)."""
    with pytest.raises(InputError) as refused:
        plan("vllm", "0.33.0", 1)
    assert refused.value.field == "model_type"
    code = {"AutoConfig": "configuration_k2_horizon.K2HorizonConfig",
            "AutoModelForCausalLM": "modeling_k2_horizon.K2HorizonForCausalLM"}  # fmt: skip
    with_code = config() | {"auto_map": code}
    assert plan("vllm", "0.33.0", 1, with_code).ranks[0].weights.total_bytes == total(1)


@pytest.mark.parametrize(
    ("field", "value"),
    [("mova_num_experts", 64), ("attention_gate_func", "softplus"), ("query_key_norm", True)],
)
def test_what_no_entry_reads_is_refused_by_name(field: str, value: Any) -> None:
    """MoVA value experts (vLLM 0.33.0 K2HorizonMoVAAttention: v_router and routed value projections), the
    attention gate (K2HorizonAttention gate_proj) and per-head q/k norms: not read, refused by the field."""
    data = config() | {field: value}
    with pytest.raises(UnsupportedModelError) as refused:
        model_from_config(data, source=f"k2-horizon-{field}")
    assert refused.value.field == field
