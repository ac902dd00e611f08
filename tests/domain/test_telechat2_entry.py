"""TeleChat2 (TeleChat2ForCausalLM, model_type telechat), read by its entry (table_dense_more.py).

Inputs: the registry sweep's default config of the class (tests/data/engine_diff/registry/configs: the published
Telechat2Config's __init__ defaults, SOURCES.md there) and, for the weights, that config with num_key_value_heads
and seq_length stated (a variant written here, as every TeleChat2 checkpoint that vLLM starts states them).
Oracles: vLLM 0.33.0's own answers. The default's rows (tests/data/engine_diff/registry/vllm-0.33.0.json): refused
at ModelConfig ("total_num_kv_heads: Input should be a valid integer", the class leaving the field None). The
variant's meta build (`registry_sweep.py --engine vllm --params default--TeleChat2ForCausalLM --tps 1` / `--tps 2`
on the variant): qkv_proj [6144, 4096], o_proj [4096, 4096] with a bias [4096], gate_up_proj [24576, 4096],
down_proj [4096, 12288] with a bias [4096], two norms a layer, 30 layers, the embedding [160256, 4096] tied (no
lm_head), the final norm: 12,890,087,424 B at TP 1, 6,445,539,328 B a rank at TP 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book

REGISTRY = Path(__file__).resolve().parents[1] / "data" / "engine_diff" / "registry"
DEFAULT = REGISTRY / "configs" / "TeleChat2ForCausalLM.json"


def _variant() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DEFAULT.read_text())
    return {**data, "num_key_value_heads": 8, "seq_length": 8192}


def test_the_class_defaults_are_refused_as_vllm_refuses_them() -> None:
    """No num_key_value_heads: vLLM 0.33.0 refuses the launch, kvtop names the field."""
    rows = json.loads((REGISTRY / "vllm-0.33.0.json").read_text())["rows"]
    engine = [r for r in rows if r["config"] == "default--TeleChat2ForCausalLM"]
    assert {r["tp"] for r in engine} == {1, 2} and {r["status"] for r in engine} == {"refused"}
    with pytest.raises(InputError, match="num_key_value_heads"):
        model_from_config(json.loads(DEFAULT.read_text()), source="default")


@pytest.mark.parametrize(("tp", "expected"), [(1, 12_890_087_424), (2, 6_445_539_328)])
def test_weights_equal_vllms_build_by_hand(tp: int, expected: int) -> None:
    """Per layer, vLLM telechat2.py over llama.py: qkv 4096 → 32 × 128 + 2 × 8 × 128 and gate_up 4096 → 2 × 12288
    (column, no bias: TeleChat2Model drops both biases), o_proj 4096 → 4096 and down 12288 → 4096 (row, their biases
    whole), two RMSNorms; the tied embedding (vocab split over TP) and the final norm."""
    split = 30 * (4096 * 6144 + 4096 * 4096 + 4096 * 24576 + 12288 * 4096) + 160256 * 4096
    whole = 30 * (4096 + 4096 + 2 * 4096) + 4096
    assert 2 * (split // tp + whole) == expected
    m = model_from_config(_variant(), source="variant")
    book = weights_book(m, ParallelLayout(tp=tp), range(m.num_layers), first_stage=True, last_stage=True)
    assert book.total_bytes == expected


def test_kv_per_token() -> None:
    """30 layers × K and V × 8 KV heads × 128 × 2 B (bf16): 122,880 B a token; 61,440 B a rank at TP 2."""
    m = model_from_config(_variant(), source="variant")
    assert (m.num_layers, m.num_kv_heads, m.head_dim, m.max_position_embeddings) == (30, 8, 128, 8192)
    assert m.num_layers * 2 * m.num_kv_heads * m.head_dim * 2 == 122_880
