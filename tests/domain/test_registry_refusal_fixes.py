"""Launches the engines refuse that kvtop planned (docs/fidelity_registry.md, "engine refuses"): each refusal
against the engine's own recorded answer for the same real config (the registry sweep's rows in
tests/data/engine_diff/registry/, the engine's class built on the meta device by registry_sweep.py)."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import ModelSpec
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS
from tests.data_paths import DATA

REGISTRY = DATA / "engine_diff" / "registry"
H100 = 81559 << 20
SUPER_NVFP4 = CONFIGS / "heldout" / "nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4.json"
SUPER_FP8 = CONFIGS / "heldout" / "nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8.json"


def engine_rows(engine: str, version: str, config: str) -> list[dict]:
    rows = json.loads((REGISTRY / f"{engine}-{version}.json").read_text())["rows"]
    return [row for row in rows if row["config"] == config]


def plan(model: ModelSpec, engine: str, version: str, flags: tuple[str, ...] = ()):
    settings = parse_flags(engine, ["--engine-version", version, *flags])
    return predict(model, settings, gpu_total_bytes=H100, gpu_name="H100")


def test_sglang_refuses_a_nested_nvfp4_quant_config_that_states_no_group_size() -> None:
    """AIC's hf_quant_config.json of Nemotron-3-Super-120B-A12B-NVFP4 holds only `quantization: {quant_algo
    NVFP4, kv_cache_quant_algo FP8}`. SGLang 0.5.23 (ModelOptFp4Config.from_config, nested format) reads the
    group size with common_group_size, which raises, re-raised as "Cannot find 'quant_algo' …": the sweep's
    SGLang rows of the config (TP 1 and 2) are that refusal. vLLM 0.33.0 builds it (NVFP4's 16): its rows ok."""
    model = load_model(str(SUPER_NVFP4))
    assert model.quant.method == "nvfp4" and model.quant.nested_group_size_missing
    engine = engine_rows("sglang", "0.5.23", SUPER_NVFP4.stem)
    assert len(engine) == 2 and {row["status"] for row in engine} == {"refused"}
    with pytest.raises(InputError) as refused:
        plan(model, "sglang", "0.5.23")
    assert refused.value.field == "quantization.group_size"
    assert all(row["message"].startswith("Cannot find 'quant_algo'") for row in engine)
    assert "Cannot find 'quant_algo' in the model's quantization config" in str(refused.value)
    assert {row["status"] for row in engine_rows("vllm", "0.33.0", SUPER_NVFP4.stem)} == {"ok"}
    plan(model, "vllm", "0.33.0")  # planned, as vLLM builds it
    # FP8 (ModelOptFp8Config) reads no group size: built by SGLang and planned
    fp8 = load_model(str(SUPER_FP8))
    assert not fp8.quant.nested_group_size_missing
    assert {row["status"] for row in engine_rows("sglang", "0.5.23", SUPER_FP8.stem)} == {"ok"}
    plan(fp8, "sglang", "0.5.23")
