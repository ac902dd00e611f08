"""Jet-Nemotron-2B and -4B (JetNemotronForCausalLM, model_type jet_nemotron), read by the `jet_nemotron` entry
(architectures/table_hybrid.py, state_rules.JetBlockState), against SGLang 0.5.23's code (issue #26).

The configs are the model repository's own (tests/data/configs/heldout/wave7/jet-ai--Jet-Nemotron-2B.json, -4B.json;
heldout/wave7/SOURCES.md). Expected bytes: SGLang 0.5.23's code arithmetic, done by hand below (models/jet_nemotron.py,
configs/jet_nemotron.py, configs/mamba_utils.py), which equal its meta builds (tests/data/engine_diff/registry/
sglang-0.5.23.json, the configs' rows: `model` 3,929,612,992 / 1,964,901,056 B and cell 4,096 / 2,048 B for 2B at TP 1
/ 2). vLLM 0.33.0 registers no Jet-Nemotron class.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_judge import kvtop_answer
from benchmarks.engine_diff.registry_sweep import load_rows
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import LayerKind, StateKind
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.data_paths import CONFIGS

BUDGET = MeasuredInputs(free_before_load_bytes=80 * GIB, free_after_load_bytes=60 * GIB)
BF16, FP32 = 2, 4


def _config(size: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CONFIGS / "heldout" / "wave7" / f"jet-ai--Jet-Nemotron-{size}.json").read_text())
    return data


def _plan(size: str, tp: int, engine: str = "sglang", version: str = "0.5.23") -> Any:
    model = model_from_config(_config(size), source=f"jet-nemotron-{size}")
    settings = parse_flags(engine, ["--tp", str(tp), "--engine-version", version, "--max-model-len", "8192"])
    return predict(model, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=BUDGET)


def _cell(size: str, tp: int) -> tuple[int, int]:
    """kvtop's SGLang cell for the meta build's row, and the row's own cell_size."""
    row = next(
        r
        for r in load_rows("sglang", "0.5.23")
        if r["config"] == f"jet-ai--Jet-Nemotron-{size}" and r["tp"] == tp
    )
    return int(kvtop_answer("sglang", "0.5.23", row)["cell_bytes"]), int(row["cell_size"])


def jet_layer(tp: int) -> int:
    """One 2B JetBlock's bytes (jet_nemotron.py JetBlock.__init__; 12 heads, head_k 96, head_v int(96 × 2.6666666667)
    = 256, so K = 1,152, V = 3,072; hidden 1,536; conv_size 4; dconv_generator_reduction 8): qkvabz_proj
    [(2 × 1,152 + 2 × 3,072 + 2 × 12) ÷ tp, 1,536], o_proj [1,536, 3,072 ÷ tp], A_log [12] fp32 and dt_bias [12]
    (whole), kernel_generator w1 [384 ÷ tp, 1,536], w2 [12,288 ÷ tp, 384] + bias [12,288 ÷ tp], o_norm [256]."""
    bf16 = (8472 * 1536 + 1536 * 3072 + 384 * 1536 + 12288 * 384 + 12288) // tp + 12 + 256
    return bf16 * BF16 + 12 * FP32


def test_layers_and_jet_state_as_the_config_writes_them() -> None:
    """layer_types: "jet" a JetBlock, "attn" full attention, "swa" the 1,152-token window; the state Mamba2's shape
    (configs/jet_nemotron.py mamba2_cache_params: intermediate V, n_groups = heads, state_size head_k)."""
    m = model_from_config(_config("2B"), source="jet-nemotron-2B")
    kinds = m.layer_attention
    assert kinds.count(LayerKind.LINEAR) == 24 and kinds.count(LayerKind.SLIDING) == 2
    assert [i for i, k in enumerate(kinds) if k is LayerKind.FULL] == [14, 19]
    assert m.state is not None and m.state.kind is StateKind.JET
    assert (m.state.num_heads, m.state.head_dim, m.state.state_size, m.state.conv_dim) == (
        12,
        256,
        96,
        3072 + 2304,
    )


@pytest.mark.parametrize("tp", [1, 2])
def test_2b_weights_cell_and_state_are_sglangs(tp: int) -> None:
    """Weights: 24 JetBlocks; 4 attention layers (QKVParallelLinear with bias: q 12 × 128, k and v 2 × 128, a KV head
    a rank at TP 2; o_proj [1,536, 1,536]); Qwen2MLP of 8,960 on all 28; 2 norms a layer and the final one; the
    embedding tied (151,936 × 1,536). Cell: SGLang's one token pool holds the 2 attn and the 2 swa layers
    (JetNemotronForCausalLM is no hybrid-SWA class): 4 × 2 × 2 ÷ tp × 128 × 2 B. State per request
    (Mamba2StateShape.create): conv (3,072 + 2 × 12 × 96) ÷ tp × 3 in bf16 and temporal 12 ÷ tp × 256 × 96 in
    fp32 (mamba2_state_dtype's defaults), a JetBlock each."""
    qkv = (12 + 2 + 2) // tp * 128  # q, k, v rows of the rank (2 KV heads: one each a rank at TP 2)
    attention = (qkv * 1536 + qkv + 1536 * 1536 // tp) * BF16
    mlp = 3 * 1536 * 8960 // tp * BF16
    expected = (
        24 * jet_layer(tp)
        + 4 * attention
        + 28 * mlp
        + (28 * 2 + 1) * 1536 * BF16
        + 151936 * 1536 // tp * BF16
    )
    rank = _plan("2B", tp).ranks[0]
    assert rank.weights.total_bytes == expected == {1: 3_929_612_992, 2: 1_964_901_056}[tp]
    assert rank.kv.state_bytes_per_request == 24 * (5376 // tp * 3 * BF16 + 12 // tp * 256 * 96 * FP32)
    assert rank.kv.state_bytes_per_request == {1: 29_085_696, 2: 14_542_848}[tp]
    assert _cell("2B", tp) == (4 * 2 * 2 // tp * 128 * BF16,) * 2


def test_4b_cell_holds_every_attention_layer() -> None:
    """4B: 3 attn and 7 swa layers in SGLang's one pool, 2 KV heads of 128 (the meta build's cell_size 10,240 B at TP
    1, 5,120 at TP 2); its JetBlocks 16 heads, head_k 128, head_v 256: conv (4,096 + 4,096) × 3 × 2 B and temporal
    16 × 256 × 128 × 4 B each, 26 of them."""
    for tp, cell in ((1, 10_240), (2, 5_120)):
        plan = _plan("4B", tp)
        assert _cell("4B", tp) == (10 * 2 * 2 // tp * 128 * BF16, cell)
        assert plan.ranks[0].kv.state_bytes_per_request == 26 * (
            8192 // tp * 3 * BF16 + 16 // tp * 256 * 128 * FP32
        )
    assert _plan("4B", 1).ranks[0].weights.total_bytes == 7_920_850_368


def test_vllm_refuses_it() -> None:
    """vLLM 0.33.0 registers no JetNemotronForCausalLM (its sweep row: both refuse)."""
    with pytest.raises(UnsupportedModelError):
        _plan("2B", 1, "vllm", "0.33.0")
