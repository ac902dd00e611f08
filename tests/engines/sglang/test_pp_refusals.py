"""SGLang 0.5.23 refuses PP for classes that cannot pipeline (S14, S18), and kvtop's plan says so.

Expected: the engine's own runs at PP 2 and 4 (tests/data/engine_diff/sglang-0.5.23.flags.json: status
"refused" with the engine's error), and the same launch at TP only, which the engine sized.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.kvtop_side import kvtop_plan
from tests.data_paths import DATA


def _row(config: str, variant: str) -> dict[str, Any]:
    rows = json.loads((DATA / "engine_diff" / "sglang-0.5.23.flags.json").read_text())["results"]
    return next(r for r in rows if r["config"] == config and r.get("variant") == variant and r["kv_dtype"] == "auto")


@pytest.mark.parametrize(
    ("config", "engine_error", "why"),
    [
        ("meta-llama--Llama-4-Scout-17B-16E-Instruct", "Pipeline Parallel is not compatible", "pp_proxy_tensors"),
        ("google--gemma-3-27b-it", "Pipeline Parallel is not compatible", "pp_proxy_tensors"),
        # models/mimo.py MiMoForCausalLM.forward(input_ids, positions, forward_batch, input_embeds, get_embedding)
        ("XiaomiMiMo--MiMo-7B-Base", "Pipeline Parallel is not compatible", "pp_proxy_tensors"),
        ("Qwen--Qwen3-Next-80B-A3B-Thinking", "AssertionError", "asserts a single stage"),
        ("tiiuae--Falcon-H1-0.5B", "AssertionError", "asserts a single stage"),
    ],
)
@pytest.mark.parametrize("variant", ["pp2", "pp4"])
def test_kvtop_refuses_the_pp_the_engine_refuses(config: str, engine_error: str, why: str, variant: str) -> None:
    row = _row(config, variant)
    assert row["status"] == "refused" and engine_error in json.dumps(row)
    plan = kvtop_plan("sglang", "0.5.23", row)
    assert plan["status"] == "refused" and plan["message"].startswith("--pp-size:") and why in plan["message"]


def test_without_pp_it_plans() -> None:
    assert kvtop_plan("sglang", "0.5.23", _row("google--gemma-3-27b-it", "mrr64"))["status"] == "ok"
