"""Step1 (Step1ForCausalLM, model_type step1: Step-Audio-EditX's language model), read generically.

Input: the registry sweep's default config of the class (tests/data/engine_diff/registry/configs: vLLM's later
Step1Config __init__ defaults, SOURCES.md there). Oracles: vLLM 0.33.0's answers on it. At its default attention
backend (FLASH_ATTN on sm90) vLLM refuses the launch: step1.py passes use_alibi_sqrt to Attention, which only
TRITON_ATTN takes ("use_alibi_sqrt is not supported by backend FLASH_ATTN", the rows in
tests/data/engine_diff/registry/vllm-0.33.0.json; vLLM's own tests run Step1 with TRITON_ATTN). With
`--attention-backend TRITON_ATTN` its meta build (param_shapes_runner on the same case with that flag) is
6,600,136,704 B at TP 1 and 3,300,268,032 B a rank at TP 2, which kvtop's weights book equals. kvtop reads the
flag: it refuses the default launch as vLLM does and plans the TRITON_ATTN one
(tests/engines/vllm/test_alibi_sqrt_backend.py; docs/fidelity_registry.md: both refuse).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book

REGISTRY = Path(__file__).resolve().parents[1] / "data" / "engine_diff" / "registry"
DEFAULT = REGISTRY / "configs" / "Step1ForCausalLM.json"


def test_vllm_refuses_the_default_backend() -> None:
    rows = json.loads((REGISTRY / "vllm-0.33.0.json").read_text())["rows"]
    engine = [r for r in rows if r["config"] == "default--Step1ForCausalLM"]
    assert {r["tp"] for r in engine} == {1, 2}
    assert all(r["status"] == "refused" and "use_alibi_sqrt" in r["message"] for r in engine)


@pytest.mark.parametrize(("tp", "expected"), [(1, 6_600_136_704), (2, 3_300_268_032)])
def test_weights_equal_vllms_triton_build_by_hand(tp: int, expected: int) -> None:
    """Per layer, vLLM step1.py: qkv 3072 → 48 × 64 + 2 × 4 × 64 (num_attention_groups 4), o 3072 → 3072, gate_up
    3072 → 2 × 8192, down 8192 → 3072, no biases (attention_bias unset), two RMSNorms; the tied embedding (vocab
    split over TP) and the final norm."""
    split = 32 * (3072 * 3584 + 3072 * 3072 + 3072 * 16384 + 8192 * 3072) + 74752 * 3072
    whole = 32 * 2 * 3072 + 3072
    assert 2 * (split // tp + whole) == expected
    m = model_from_config(json.loads(DEFAULT.read_text()), source="default")
    assert (m.num_kv_heads, m.head_dim) == (4, 64)
    book = weights_book(m, ParallelLayout(tp=tp), range(m.num_layers), first_stage=True, last_stage=True)
    assert book.total_bytes == expected
