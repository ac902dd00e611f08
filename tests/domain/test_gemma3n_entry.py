"""Gemma-3n's text model (Gemma3nForCausalLM), read by the `gemma3n_text` entry, against both engines' meta builds.

The expected figures are the engines' own: the parameter shapes and dtypes SGLang 0.5.23 and vLLM 0.33.0 build on
the meta device for the registry sweep's default config (tests/data/engine_diff/registry/configs/
Gemma3nForCausalLM.json, transformers 5.20.2's Gemma3nTextConfig defaults; `registry_sweep.py --params
default--Gemma3nForCausalLM`, TP 1 and 2; the shapes are quoted in each test) and SGLang's `_cell_size`. vLLM's
GeluAndMulSparse calls `.item()` on a meta tensor where `activation_sparsity_pattern` is non-zero (a harness limit,
not the engine's: the weights do not depend on it), so vLLM was built from the same config with the pattern zeroed.
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


def default_config() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DEFAULT / "Gemma3nForCausalLM.json").read_text())
    return data


def plan(engine: str, version: str, tp: int) -> Any:
    m = model_from_config(default_config(), source="default--Gemma3nForCausalLM")
    flags = ["--tp", str(tp), "--engine-version", version]
    flags += ["--context-length" if engine == "sglang" else "--max-model-len", "8192"]
    settings = parse_flags(engine, flags)
    return predict(m, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=BUDGET)


H = 2048
LAYERS = 35
# per layer, both engines: o_proj [2048, 2048], q_norm [256], gate_up_proj [32768, 2048], down_proj [2048, 16384],
# four norms [2048]; AltUp: correction_coefs [4, 4], prediction_coefs [16, 4], modality_router [4, 2048],
# router_norm [2048] (bf16) and correct_output_scale [2048] (fp32, below); laurel: linear_left [64, 2048],
# linear_right [2048, 64], post_laurel_norm [2048]; per_layer_input_gate [256, 2048], per_layer_projection
# [2048, 256], post_per_layer_input_norm [2048]
COMMON = (
    H * H
    + 256
    + 2 * 16384 * H
    + H * 16384
    + 4 * H
    + (16 + 64 + 4 * H + H)
    + (2 * 64 * H + H)
    + 2 * 256 * H
    + H
)
# the model: embed_tokens [262400, 2048] (tied head), norm [2048], embed_tokens_per_layer [262144, 8960],
# per_layer_model_projection [8960, 2048], per_layer_projection_norm [256], altup_projections and
# altup_unembed_projections 3 × [2048, 2048] each
AROUND = 262400 * H + H + 262144 * 8960 + 8960 * H + 256 + 6 * H * H


def test_sglang_builds_every_layers_kv_projections_and_pool() -> None:
    """SGLang 0.5.23 at TP 1: qkv_proj [3072, 2048] and k_norm [256] on all 35 layers (the 15 KV-shared ones too):
    13,733,536,736 B; at TP 2 9,790,628,832 B (embed_tokens and embed_tokens_per_layer whole, plain nn.Embedding;
    per_layer_model_projection [4480, 2048] and altup projections [1024, 2048] split). Its cell counts every layer
    (no KV sharing in its pool): 35 × 2 KV heads × 256 × 2 (K, V) × 2 B = 71,680 B at TP 1, 35,840 at TP 2."""
    tp1 = plan("sglang", "0.5.23", 1)
    expected = (AROUND + LAYERS * (COMMON + 3072 * H + 256)) * 2 + LAYERS * H * 4
    assert tp1.ranks[0].weights.total_bytes == expected == 13_733_536_736
    assert plan("sglang", "0.5.23", 2).ranks[0].weights.total_bytes == 9_790_628_832
    for tp, cell in ((1, 71_680), (2, 35_840)):
        step = next(s for s in plan("sglang", "0.5.23", tp).engine.steps if s.label.startswith("cell"))
        assert (step.value if step.value is not None else step.bytes) == cell


def test_the_last_fifteen_layers_read_earlier_kv() -> None:
    """num_kv_shared_layers 15 of 35: layers 20-34 keep no KV of their own (vLLM 0.33.0 gemma3n.py
    kv_sharing_target_layer_name; q_proj alone on them, no k_norm)."""
    m = model_from_config(default_config(), source="default--Gemma3nForCausalLM")
    assert m.layer_attention[20:] == (LayerKind.SHARED,) * 15
    assert LayerKind.SHARED not in m.layer_attention[:20]


def test_vllm_builds_q_alone_on_kv_shared_layers() -> None:
    """vLLM 0.33.0 at TP 1 (the pattern-zeroed build): qkv_proj [3072, 2048] and k_norm [256] on the first 20 layers,
    q_proj [2048, 2048] alone on the 15 KV-shared ones; embed_tokens and embed_tokens_per_layer vocab-parallel:
    13,670,614,496 B; at TP 2 6,872,958,432 B."""
    own, shared = 20 * (3072 * H + 256), 15 * (2048 * H)
    expected = (AROUND + LAYERS * COMMON + own + shared) * 2 + LAYERS * H * 4
    assert plan("vllm", "0.33.0", 1).ranks[0].weights.total_bytes == expected == 13_670_614_496
    assert plan("vllm", "0.33.0", 2).ranks[0].weights.total_bytes == 6_872_958_432
