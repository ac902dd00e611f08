"""SGLang 0.5.23 splits a sliding-window pool only for the classes `is_hybrid_swa_model` lists
(configs/model_config.py; engines/sglang/hybrid_swa.py HYBRID_SWA_ARCHS_ERAS).

Expected figures: the KV cell (`_cell_size`) of the classes' default configs as SGLang 0.5.23 built them on the
meta device (the registry sweep's rows, tests/data/engine_diff/registry/sglang-0.5.23.json), and the arithmetic of
their configs quoted in each test. Never kvtop's own figures.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.engine_diff.registry_judge import kvtop_answer
from benchmarks.engine_diff.registry_sweep import row_of


def _row(config: str, tp: int) -> dict[str, Any]:
    return row_of("sglang", "0.5.23", config, tp)


@pytest.mark.parametrize(
    ("config", "cell"),
    [
        # 40 layers (30 sliding, 10 full) × 64 KV heads × 128 × (K, V) × 2 B: every layer in the one pool
        ("default--Cohere2ForCausalLM", 40 * 64 * 128 * 2 * 2),
        ("default--Cohere2MoeForCausalLM", 40 * 64 * 128 * 2 * 2),
        # 48 layers (36 chunked) × 8 KV heads × 128 × 2 × 2 B: the text-only class is not Llama4ForConditionalGeneration
        ("default--Llama4ForCausalLM", 48 * 8 * 128 * 2 * 2),
    ],
)
def test_unlisted_classes_keep_sliding_layers_in_the_full_pool(config: str, cell: int) -> None:
    row = _row(config, 1)
    assert row["cell_size"] == cell
    plan = kvtop_answer("sglang", "0.5.23", row)
    assert plan["status"] == "ok" and plan["cell_bytes"] == cell


def test_listed_classes_still_split() -> None:
    """gpt-oss-20b (SWA_SINK_ARCHS): 12 of 24 layers full, 8 KV heads × 64 × 2 × 2 B each, the 12 sliding ones in
    their own pool scaled by the swa ratio: the engine's cell 44,236 B at TP 1, less than 24 layers' 49,152."""
    row = _row("openai--gpt-oss-20b", 1)
    plan = kvtop_answer("sglang", "0.5.23", row)
    assert plan["cell_bytes"] == row["cell_size"] == 44_236 < 24 * 8 * 64 * 2 * 2
