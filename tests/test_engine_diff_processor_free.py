"""vLLM 0.33.0 builds Ovis2.5 once its processing info is built without the checkpoint's image processor
(benchmarks/engine_diff/vllm_input_standins.PROCESSOR_FREE_INFOS: ovis2_5.py Ovis2_5ProcessingInfo.__init__ loads
Ovis2_5Processor, whose preprocessor_config.json a config folder lacks; ModelConfig reads only its
get_supported_mm_limits, a constant). Before, the registry sweep's rows said "Can't load image processor".

Engine figures: tests/data/engine_diff/registry/vllm-0.33.0.json, `registry_sweep.py --engine vllm --set real
--only AIDC-AI--Ovis2.5-9B` (meta build, TP 1 and 2). The expected bytes are the published config's own arithmetic
(its llm_config, a Qwen3 model: untied head, q/k norms, no biases), never kvtop's figures.
"""

from __future__ import annotations

import json

from benchmarks.engine_diff.registry_sweep import load_rows
from tests.conftest import CONFIGS

OVIS = "AIDC-AI--Ovis2.5-9B"
BF16 = 2


def _qwen3_params(text: dict[str, int]) -> int:
    hidden, heads, kv, head = (
        text["hidden_size"],
        text["num_attention_heads"],
        text["num_key_value_heads"],
        128,
    )
    assert text["head_dim"] == head
    attention = hidden * heads * head * 2 + hidden * kv * head * 2 + 2 * head  # q, o, k, v; q/k norms
    layer = attention + 3 * hidden * text["intermediate_size"] + 2 * hidden  # gate/up/down; two norms
    return (
        text["num_hidden_layers"] * layer + 2 * text["vocab_size"] * hidden + hidden
    )  # embed, lm_head, norm


def test_ovis2_5_language_model_equals_its_config_arithmetic() -> None:
    text = json.loads((CONFIGS / "heldout" / "wave4b" / f"{OVIS}.json").read_text())["llm_config"]
    total = _qwen3_params(text) * BF16
    assert total == 16_381_470_720
    rows = {r["tp"]: r for r in load_rows("vllm", "0.33.0") if r["config"] == OVIS}
    assert sorted(rows) == [1, 2] and {r["status"] for r in rows.values()} == {"ok"}
    assert rows[1]["stages"][0]["param_bytes"]["llm"] == total
    # TP 2: the embedding and head split by vocabulary, every projection by heads / intermediate; norms replicated
    hidden, layers = text["hidden_size"], text["num_hidden_layers"]
    replicated = (layers * (2 * 128 + 2 * hidden) + hidden) * BF16
    assert rows[2]["stages"][0]["param_bytes"]["llm"] == (total - replicated) // 2 + replicated
