"""Solar's sliding_window, which no layer pattern names: vLLM windows every layer with it, SGLang keeps every token.

Oracle: the engines' meta builds (tests/data/engine_diff/registry/{vllm-0.33.0,sglang-0.5.23}.json, registry_sweep.py
`--set classes`) of two composed SolarConfig configs (tests/data/engine_diff/registry/configs/, SOURCES.md beside them):
the class's defaults (2,048 positions) and the same with 4,096 (Solar Pro Preview's published context), beyond the
window of 2,047; the figures below are written out from the engines' code, never from kvtop.

- vLLM 0.33.0 solar.py 162-170 passes no per-layer window, so `Attention.__init__` (layers/attention/attention.py
  265-273) gives every layer CacheConfig's sliding_window, the config's (config/model.py 1625-1627): 32
  SlidingWindowSpec layers of window 2,047 at any context (docs/engines/vllm.md §3.4).
- SGLang 0.5.23 solar.py 161-169 passes no window to RadixAttention, and is_hybrid_swa_model (configs/model_config.py
  2651-2697) lists no Solar: one full pool, the cell every layer's K and V.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_configs import (
    REGISTRY_DATA,
    config_for_class,
    default_configs,
    variant_configs,
)
from benchmarks.engine_diff.registry_judge import configs_by_name, judge, kvtop_answer
from benchmarks.engine_diff.registry_sweep import load_rows, row_of
from kvtop.domain.model import LayerKind
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB

VERSIONS = {"vllm": "0.33.0", "sglang": "0.5.23"}
CONFIGS = {2048: "default--SolarForCausalLM", 4096: "default--SolarForCausalLM--positions-4096"}
BF16, BLOCK, LAYERS, WINDOW = 2, 16, 32, 2047
# vLLM 0.33.0 on sm90: async scheduling's 2 batches × max_num_batched_tokens, 8,192 (docs/engines/vllm.md §3)
IN_FLIGHT = 2 * 8192


def _row(engine: str, positions: int, tp: int) -> dict[str, Any]:
    rows = load_rows(engine, VERSIONS[engine])
    return next(r for r in rows if r["config"] == CONFIGS[positions] and r["tp"] == tp)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@pytest.mark.parametrize("positions", [2048, 4096])
@pytest.mark.parametrize("tp", [1, 2])
def test_vllm_windows_every_solar_layer_beyond_the_window_and_kvtop_counts_its_blocks(
    positions: int, tp: int
) -> None:
    row = _row("vllm", positions, tp)
    assert row["status"] == "ok" and row["max_model_len"] == positions
    (spec,) = row["stages"][0]["layer_specs"]
    page = BLOCK * 2 * (32 // tp) * 128 * BF16  # K and V of 32 KV heads × 128 a block (TP 1: 262,144 B)
    assert (spec["kind"], spec["layers"], spec["sliding_window"], spec["page_size_bytes"]) == (
        "SlidingWindowSpec", LAYERS, WINDOW, page)  # fmt: skip
    plan = kvtop_answer("vllm", "0.33.0", row)
    assert plan["config_sliding_window"] == spec["sliding_window"]
    # the sweep's fixed budget, 40 GiB of KV (cases.VLLM_KV_BYTES): 5,120 blocks at TP 1, 10,240 at TP 2
    blocks = 40 * GIB // (LAYERS * page)
    assert plan["num_blocks"] == blocks
    # v1/kv_cache_interface.py SlidingWindowSpec.max_memory_usage_bytes: cdiv(min(window − 1 + in flight, L), 16) + 1
    # blocks a request (129 at 2,048; 257 at 4,096, one more than full attention's 256: the in-flight tokens already
    # reach past the request); v1/core/kv_cache_utils.py 1061-1128: tokens = int(blocks ÷ per request × L)
    per_request = _cdiv(min(WINDOW - 1 + IN_FLIGHT, positions), BLOCK) + 1
    assert plan["tokens"] == int(blocks / per_request * positions)  # TP 1: 81,284 at 2,048, 81,601 at 4,096
    assert judge("vllm", "0.33.0", row).verdict == "equal"


@pytest.mark.parametrize("positions", [2048, 4096])
@pytest.mark.parametrize("tp", [1, 2])
def test_sglang_keeps_every_solar_token_in_one_full_pool(positions: int, tp: int) -> None:
    row = _row("sglang", positions, tp)
    cell = LAYERS * 2 * (32 // tp) * 128 * BF16  # TP 1: 524,288 B a token, every layer
    assert row["status"] == "ok" and row["cell_size"] == cell
    plan = kvtop_answer("sglang", "0.5.23", row)
    assert [p["name"] for p in plan["stages"][0]["kv_pools"]] == ["full"] and plan["cell_bytes"] == cell
    assert judge("sglang", "0.5.23", row).verdict == "equal"


def test_solar_reads_through_its_entry_with_the_window_its_class_defaults() -> None:
    """SolarConfig's __init__ sets sliding_window 2,047 where the file leaves it out, so vLLM windows such a config
    too: kvtop reads the class default, not a full-attention generic decoder."""
    config = json.loads((REGISTRY_DATA / "configs" / "SolarForCausalLM.json").read_text())
    del config["sliding_window"]
    model = model_from_config(config)
    assert model.model_type == "solar" and model.unchecked_class is None
    assert set(model.layer_attention) == {LayerKind.FULL} and model.config_sliding_window == WINDOW
    assert not any("generic reading" in note for note in model.not_modelled)


@pytest.mark.parametrize(("positions", "tokens"), [(2048, (81442, 162885)), (8192, (81800, 163600))])
@pytest.mark.parametrize("tp", [1, 2])
def test_exaone4_5_read_generically_holds_its_windows_beyond_the_window(
    positions: int, tokens: tuple[int, int], tp: int
) -> None:
    """EXAONE-4.5 (read generically: its text_config's layer_types, 3 sliding : 1 full, window 4,096) at its class
    default's 2,048 positions and at 8,192 (a variant, beyond the window). vLLM 0.33.0 builds 24 SlidingWindowSpec
    layers of window 4,096 and 8 full ones at both; its groups: 8 layers a group (1 full, 3 windowed), the sweep's
    40 GiB ÷ (8 × page) blocks; a request holds cdiv(L, 16) full blocks plus 3 × (cdiv(min(4,095 + 16,384, L), 16) + 1):
    at 8,192, 512 + 3 × 513 = 2,051 (at 2,048: 128 + 3 × 129 = 515); tokens int(blocks ÷ per request × L)."""
    name = {2048: "default--Exaone4_5_ForConditionalGeneration",
            8192: "default--Exaone4_5_ForConditionalGeneration--positions-8192"}[positions]  # fmt: skip
    row = row_of("vllm", "0.33.0", name, tp)
    page = BLOCK * 2 * (32 // tp) * 128 * BF16  # K and V of 32 KV heads × 128 a block (TP 1: 262,144 B)
    kinds = {
        (s["kind"], s.get("sliding_window"), s["page_size_bytes"]) for s in row["stages"][0]["layer_specs"]
    }
    assert kinds == {("SlidingWindowSpec", 4096, page), ("FullAttentionSpec", None, page)}
    assert sum(s["layers"] for s in row["stages"][0]["layer_specs"] if s["kind"] == "SlidingWindowSpec") == 24
    blocks = 40 * GIB // (8 * page)
    per_request = _cdiv(positions, BLOCK) + 3 * (_cdiv(min(4096 - 1 + IN_FLIGHT, positions), BLOCK) + 1)
    plan = kvtop_answer("vllm", "0.33.0", row)
    assert (
        plan["num_blocks"] == blocks
        and plan["tokens"] == int(blocks / per_request * positions) == tokens[tp - 1]
    )
    assert judge("vllm", "0.33.0", row).verdict == "equal"


def test_a_variant_config_is_judged_with_its_class_but_never_chosen_for_it() -> None:
    """`<Class>--<what>.json` under the composed configs: read as the class's, swept beside its config."""
    chosen = config_for_class(default_configs())
    assert chosen["SolarForCausalLM"].name == CONFIGS[2048]
    variants = {c.name: c.architecture for c in variant_configs()}
    assert variants[CONFIGS[4096]] == "SolarForCausalLM"
    assert (
        configs_by_name()[CONFIGS[4096]].context() == 4096
        and configs_by_name()[CONFIGS[2048]].context() == 2048
    )
