"""vLLM's extract_hidden_states method caches the target's hidden states beside its KV (engines/vllm/hidden_states.py).

The real start: dcstang/eagle3-spec-dec `logs/run_all_20260627_160200.log` (tests/data/calibration/vllm.jsonl
`dcstang-eagle3-qwen3-8b-h100-v0200-extract-hidden-states`), vLLM 0.20.0, Qwen3-8B bf16 on an H100, the speculators
hidden-state extraction server with aux layers [2, 18, 33, 36]: 'Available KV cache memory: 52.48 GiB', 'GPU KV cache
size: 312,640 tokens', 180,239 B a token (52.48 GiB ÷ 312,640; 180,222–180,256 within the two decimals); kvtop
planned 368,400 (+17.8 %) with one target-shaped draft layer. vLLM's ExtractHiddenStatesModel holds one cache-only layer of 4 rows × hidden 4,096 × 2 B = 32,768 B a token in the
target's group: 147,456 (36 layers × 8 KV heads × 128 × 2 × 2 B) + 32,768 = 180,224.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.deployment import DeploymentSetup
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

QWEN3_8B = CONFIGS / "Qwen--Qwen3-8B.json"
EXTRACT = {"method": "extract_hidden_states", "num_speculative_tokens": 1,
           "draft_model_config": {"hf_config": {"eagle_aux_hidden_state_layer_ids": [2, 18, 33, 36]}}}  # fmt: skip
LOGGED_TOKENS, LOGGED_KV_GIB = 312_640, 52.48


def _plan(version: str, spec: dict[str, object], config: str = "Qwen--Qwen3-8B.json"):  # type: ignore[no-untyped-def]
    settings = parse_flags("vllm", ["--engine-version", version, "--dtype", "bfloat16",
                                    "--speculative-config", json.dumps(spec)])  # fmt: skip
    return planned_capacity(load_config_file(CONFIGS / config), settings, gpu_total_bytes=gpu_total_bytes("H100"),
                            gpu_name="H100")  # fmt: skip


def test_the_cache_only_layer_adds_four_hidden_rows_a_token() -> None:
    plan = _plan("0.20.0", EXTRACT)
    cell = plan.ledger.ranks[0].kv_bytes_per_token
    assert cell == 36 * 8 * 128 * 2 * 2 + 4 * 4096 * 2 == 180_224
    # the log's own figure: 52.48 GiB (two decimals) over 312,640 tokens, 180,239 B a token (docs say this one figure)
    assert round(LOGGED_KV_GIB * GIB / LOGGED_TOKENS) == 180_239
    assert abs(LOGGED_KV_GIB * GIB / LOGGED_TOKENS - cell) < 0.005 * GIB / LOGGED_TOKENS
    term = next(t for t in plan.ledger.terms if t.label.startswith("hidden-state cache"))
    assert term.bytes_per_token == 32_768
    assert plan.token_capacity_min <= LOGGED_TOKENS <= plan.token_capacity_max
    assert abs(plan.ledger.token_capacity / LOGGED_TOKENS - 1) < 0.05


def test_the_same_cell_at_0_24_0() -> None:
    assert _plan("0.24.0", EXTRACT).ledger.ranks[0].kv_bytes_per_token == 180_224


def test_without_the_aux_layer_ids_it_is_refused_by_name() -> None:
    bare = {"method": "extract_hidden_states", "num_speculative_tokens": 1}
    with pytest.raises(UnsupportedModelError, match="eagle_aux_hidden_state_layer_ids") as refused:
        _plan("0.20.0", bare)
    assert refused.value.field == "--speculative-config"


def test_a_release_before_0_20_0_is_refused() -> None:
    with pytest.raises(UnsupportedModelError, match="v0.20.0 on"):
        _plan("0.19.0", EXTRACT)


def test_beside_sliding_window_layers_it_is_refused() -> None:
    with pytest.raises(UnsupportedModelError, match="group of its own"):
        _plan("0.24.0", EXTRACT, "openai--gpt-oss-20b.json")


def test_the_cache_only_cell_is_vllms_rule_the_shared_setup_keeps_no_vllm_field() -> None:
    # the engine-neutral DeploymentSetup carries no vLLM-only field (session 70): vLLM's deployment rules price the
    # cache-only layer from its own flag, 4 aux layers × hidden 4,096 × 2 B = 32,768 B a token (the module docstring's
    # reading of extract_hidden_states.py), and every other engine's rules name none
    assert "hidden_states_cached" not in DeploymentSetup.model_fields
    assert not hasattr(DeploymentSetup, "hidden_state_cell")
    model = load_config_file(QWEN3_8B)
    settings = parse_flags("vllm", ["--engine-version", "0.20.0", "--speculative-config", json.dumps(EXTRACT)])
    vllm = engine_rules("vllm").deployment
    assert vllm.cache_only_cell(model, settings, vllm.setup(settings)) == 4 * 4096 * 2 == 32_768
    eagle = parse_flags("vllm", ["--speculative-config", json.dumps({"method": "eagle3", "model": "m",
                                                                    "num_speculative_tokens": 3})])  # fmt: skip
    assert vllm.cache_only_cell(model, eagle, vllm.setup(eagle)) is None
    for engine in ("sglang", "lmdeploy", "trtllm", "llamacpp"):
        rules = engine_rules(engine).deployment
        plain = parse_flags(engine, [])
        assert rules.cache_only_cell(model, plain, rules.setup(plain)) is None
