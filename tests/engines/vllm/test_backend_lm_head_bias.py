"""phi-1_5 in vLLM 0.33.0's registry sweep: the engine's meta build holds no lm_head bias, kvtop's book does, and
the harness reads the difference as the build's, not kvtop's (arch_readings A21).

Expected figures, never kvtop's: the engine's parameter bytes (tests/data/engine_diff/registry/vllm-0.33.0.json, the
PhiForCausalLM rows of microsoft--phi-1_5.RECONSTRUCTED, built on meta by vLLM's own Transformers-backend class) and
the checkpoint's shapes as arithmetic (config: vocab_size 51,200, hidden_size 2,048, float16): lm_head.weight
51,200 × 2,048 × 2 B = 209,715,200 B at TP 1, half a rank at TP 2, and lm_head.bias 51,200 × 2 B = 102,400 B, which
transformers' PhiForCausalLM stores (nn.Linear(hidden, vocab, bias=True)) and vLLM 0.33.0's CausalMixin.load_weights
registers on loading (models/transformers/causal.py:68-85, `_register_bias`: vocab per rank in the model dtype) —
the meta build never loads.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.arch_readings import arch_reading
from benchmarks.engine_diff.registry_judge import judge, kvtop_answer
from benchmarks.engine_diff.stage_check import StageCheck
from tests.data_paths import DATA

PHI = "microsoft--phi-1_5.RECONSTRUCTED"
VOCAB, HIDDEN, HALF = 51_200, 2_048, 2


def _row(tp: int) -> dict[str, Any]:
    rows = json.loads((DATA / "engine_diff" / "registry" / "vllm-0.33.0.json").read_text())["rows"]
    return next(r for r in rows if r["config"] == PHI and r["tp"] == tp and r.get("variant", "default") == "default")


@pytest.mark.parametrize("tp", [1, 2])
def test_the_meta_build_lacks_exactly_the_bias(tp: int) -> None:
    row = _row(tp)
    assert row["stages"][0]["param_bytes"]["lm_head"] == VOCAB * HIDDEN * HALF // tp  # the weight alone
    engine = sum(row["stages"][0]["param_bytes"].values())
    plan = kvtop_answer("vllm", "0.33.0", row)
    delta = plan["stages"][0]["weights_bytes"] - engine
    assert delta == VOCAB * HALF // tp  # 102,400 B at TP 1, 51,200 B at TP 2
    text = f"stage 0 weights: kvtop {engine + delta:,} B, engine {engine:,} B ({delta:+,})"
    check = StageCheck("vllm", "0.33.0", PHI, f"TP{tp}", (text,), 0, 0, (0, 24), "sm90")
    assert arch_reading("PhiForCausalLM", check, text).startswith("A21 harness:")
    other = text.replace(f"({delta:+,})", "").replace(f"{engine + delta:,}", f"{engine + delta + 2:,}")
    assert arch_reading("PhiForCausalLM", check, other) == "? unexplained"  # two bytes more: not the bias


@pytest.mark.parametrize("tp", [1, 2])
def test_the_registry_row_is_equal(tp: int) -> None:
    """With the build's missing bias read as the harness's, the row's verdict is equal."""
    assert judge("vllm", "0.33.0", _row(tp)).verdict == "equal"
