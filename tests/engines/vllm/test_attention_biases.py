"""vLLM's PhiMoEAttention builds qkv_proj and o_proj biases whatever PhiMoEConfig's attention_bias says.

Engine figures: vLLM 0.33.0's meta build of the registry sweep's default PhiMoE config (tests/data/engine_diff/
registry/vllm-0.33.0.json; `registry_sweep.py --params default--PhiMoEForCausalLM`): self_attn.qkv_proj.bias [6144]
and o_proj.bias [4096], bfloat16, on each of 32 layers at TP 1 (655,360 B); the whole model 83,746,306,688 B at TP 1
and 41,875,914,048 B a rank at TP 2.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.vllm.attention_biases import attention_bias_rows
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

CONFIG = DATA / "engine_diff" / "registry" / "configs" / "PhiMoEForCausalLM.json"


@pytest.mark.parametrize(("tp", "engine_bytes"), [(1, 83_746_306_688), (2, 41_875_914_048)])
def test_vllm_phimoe_has_attention_biases(tp: int, engine_bytes: int) -> None:
    model = model_from_config(json.loads(CONFIG.read_text()), source="PhiMoEForCausalLM")
    layout, layers = ParallelLayout(tp=tp), range(model.num_layers)
    book = weights_book(model, layout, layers, first_stage=True, last_stage=True)
    rows = attention_bias_rows(model, layout, layers)
    assert sum(r.bytes for r in rows) == 32 * ((6144 // tp) + 4096) * 2
    assert book.total_bytes + sum(r.bytes for r in rows) == engine_bytes
