"""OLMo-Hybrid (OlmoHybridForCausalLM, vLLM only), read by the `olmo_hybrid` entry, against vLLM 0.33.0's meta build.

The config is the registry sweep's default (tests/data/engine_diff/registry/configs/OlmoHybridForCausalLM.json,
transformers 5.20.2's OlmoHybridConfig) cut to its first 4 layers (three gated delta nets, one full attention);
vLLM's named parameters and KV cache specs of it at TP 1 and 2 (`registry_sweep.parameters`) are quoted below.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import LayerKind
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB

DEFAULT = Path(__file__).resolve().parents[1] / "data" / "engine_diff" / "registry" / "configs"
BUDGET = MeasuredInputs(free_before_load_bytes=80 * GIB, free_after_load_bytes=60 * GIB)


def four_layers() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DEFAULT / "OlmoHybridForCausalLM.json").read_text())
    data.update(num_hidden_layers=4, layer_types=data["layer_types"][:4])
    return data


def plan(tp: int) -> Any:
    m = model_from_config(four_layers(), source="olmo-hybrid-4")
    settings = parse_flags("vllm", ["--tp", str(tp), "--engine-version", "0.33.0", "--max-model-len", "8192"])
    return predict(m, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=BUDGET)


def test_gated_delta_nets_and_olmo_attention() -> None:
    """vLLM 0.33.0 at TP 1: embed_tokens and lm_head [100352, 3840]; layers 0-2 linear_attn in_proj_qkvg
    [17280, 3840], b_proj and a_proj [30, 3840], conv1d [11520, 1, 4], dt_bias and A_log [30] (bf16), o_norm [192],
    o_proj [3840, 5760], input_layernorm and post_attention_layernorm [3840]; layer 3 qkv_proj [11520, 3840], q_norm
    and k_norm [3840] (over all heads), o_proj [3840, 3840], post_attention_layernorm and post_feedforward_layernorm
    [3840]; every layer gate_up_proj [22016, 3840] and down_proj [3840, 11008]; model.norm [3840]:
    3,206,455,272 B; at TP 2 1,603,270,452 B."""
    h = 3840
    gdn = 17280 * h + 2 * 30 * h + 11520 * 4 + 2 * 30 + 192 + h * 5760 + 2 * h
    full = 11520 * h + 2 * h + h * h + 2 * h
    expected = (2 * 100352 * h + 3 * gdn + full + 4 * 3 * 11008 * h + h) * 2
    assert plan(1).ranks[0].weights.total_bytes == expected == 3_206_455_272
    assert plan(2).ranks[0].weights.total_bytes == 1_603_270_452
    m = model_from_config(four_layers(), source="olmo-hybrid-4")
    assert m.layer_attention == (LayerKind.LINEAR,) * 3 + (LayerKind.FULL,)


def test_the_state_page_is_not_aligned_for_flashinfer_checkpoints() -> None:
    """vLLM's KV cache spec at TP 1: the attention block grows to 80 tokens (a multiple of 16) so its page (80 × 2 ×
    30 heads × 128 × 2 B = 1,228,800 B) covers one GDN layer's state (conv 11,520 × 3 + SSM 30 × 192 × 96, bf16:
    1,175,040 B). OLMo's GDN layer runs FLA and exports no prefill checkpoints, so no 64-token alignment (which
    would make it 128)."""
    ledger = plan(1)
    assert ledger.engine.page_size == 80
    assert any(step.label == "blocks of 80 tokens (1,228,800 B each)" for step in ledger.engine.steps)
