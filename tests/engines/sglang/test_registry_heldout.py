"""Held-out real configs SGLang 0.5.23 builds differently from the checkpoint's tensors (issue #26).

Expected figures: the engine's classes built on the meta device by the registry sweep (benchmarks/engine_diff/
registry_sweep.py: each rank's `named_parameters()` bytes by top-level child and the KV cell `_cell_size`, in
tests/data/engine_diff/registry/sglang-0.5.23.json), and the shapes `registry_sweep.py --params` listed for them,
quoted in each test. Never kvtop's own figures.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_judge import kvtop_answer
from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.kv_format import resolve_kv_format
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.quant import quant_from_config
from tests.data_paths import CONFIGS

BF16, FP8, FP32 = 2, 1, 4
AT_0_5_23 = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
HELDOUT = CONFIGS / "heldout"
FALCON, GEMMA4, QWEN36 = (
    "tiiuae--Falcon-H1-0.5B",
    "nvidia--Gemma-4-26B-A4B-NVFP4",
    "nvidia--Qwen3.6-35B-A3B-NVFP4",
)


def _row(config: str, tp: int) -> dict[str, Any]:
    return row_of("sglang", "0.5.23", config, tp)


def _json(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((HELDOUT / name).read_text())
    return data


def _model(config: str) -> ModelSpec:
    beside = HELDOUT / f"{config}.hf_quant_config.json"
    return model_from_config(_json(f"{config}.json"), source=config,
                             hf_quant_config=json.loads(beside.read_text()) if beside.exists() else None)  # fmt: skip


def _built(config: str, tp: int) -> dict[str, int]:
    model = _model(config)
    rows = engine_rules("sglang").weights_built(model, ParallelLayout(tp=tp), range(model.num_layers), "H100",
                                                AT_0_5_23)  # fmt: skip
    return {row.component: row.bytes for row in rows}


@pytest.mark.parametrize("config", [FALCON, GEMMA4, QWEN36])
@pytest.mark.parametrize("tp", [1, 2])
def test_rank_weights_and_cell_are_the_engines(config: str, tp: int) -> None:
    """The rank's parameter bytes (every top-level child: language model, head, tower) and the cell."""
    row = _row(config, tp)
    plan = kvtop_answer("sglang", "0.5.23", row)
    assert plan["status"] == "ok" and row["status"] == "ok"
    assert [stage["weights_bytes"] for stage in plan["stages"]] == [
        sum(s["param_bytes"].values()) for s in row["stages"]
    ]
    assert plan["cell_bytes"] == row["cell_size"]


def test_falcon_h1_builds_unused_qk_norms_and_an_fp32_head() -> None:
    """Falcon-H1-0.5B at TP 1 (`registry_sweep.py --params`): q_norm.weight and k_norm.weight [64] bf16 on each of
    36 layers (4,608 B each kind), and lm_head.weight [32832, 1024] torch.float32 = 134,479,872 B, where the
    checkpoint's head is bf16 (half that). At TP 2 the head's rows split (lm_head 67,239,936 B), the norms do not."""
    assert _built(FALCON, 1) == {"unused_qk_norms": 2 * 4_608, "fp32_lm_head": 134_479_872 - 134_479_872 // 2}
    assert _built(FALCON, 2) == {"unused_qk_norms": 2 * 4_608, "fp32_lm_head": 67_239_936 - 67_239_936 // 2}


def test_falcon_h1_rule_holds_from_the_release_read() -> None:
    """falcon_h1.py of the 0.5.6.post2 wheel builds the same q_norm / k_norm and calls lm_head.float(); releases
    before it are not read, so the book stands there."""
    model = _model(FALCON)
    rules = engine_rules("sglang")
    read = ResolvedVersion(text="0.5.6.post2", source=VersionSource.FLAG)
    built = {row.component for row in rules.weights_built(model, ParallelLayout(), range(36), "H100", read)}
    assert built == {"unused_qk_norms", "fp32_lm_head"}
    before = ResolvedVersion(text="0.5.5", source=VersionSource.FLAG)
    assert rules.weights_built(model, ParallelLayout(), range(36), "H100", before) == ()


def test_gemma4_experts_beside_the_mlp_hold_swizzled_block_scales() -> None:
    """Gemma-4-26B-A4B-NVFP4 excludes `layers.N.mlp*` (its dense MLP) while its experts, beside the MLP, are NVFP4:
    the meta build holds moe.experts.w13_blockscale_swizzled [128, 1408, 176] and w2_blockscale_swizzled
    [128, 2816, 44] float8 on each of 30 layers (951,582,720 + 475,791,360 B), no expert's input scale held twice
    at TP 1 (every expert local)."""
    assert _built(GEMMA4, 1) == {"expert_scales": 30 * 128 * (1_408 * 176 + 2_816 * 44) * FP8}
    assert 30 * 128 * (1_408 * 176 + 2_816 * 44) == 951_582_720 + 475_791_360


def test_qwen36_mixed_checkpoint_kv_is_the_quant_files_fp8() -> None:
    """Qwen3.6-35B-A3B-NVFP4: config.json's MIXED_PRECISION block names no KV algorithm, hf_quant_config.json says
    FP8. SGLang 0.5.23's cell is 10,240 B at TP 1 (the sweep's `_cell_size`): 10 full-attention layers × 2 KV
    heads × 256 × (K, V) × 1 B, FP8; bf16 would be twice that. vLLM 0.33.0 reads config.json only (bf16)."""
    model = _model(QWEN36)
    assert model.quant.kv_cache_quant_algo is None and model.quant.quant_file_kv_cache_quant_algo == "FP8"
    assert _row(QWEN36, 1)["cell_size"] == 10 * 2 * 256 * 2 * FP8 == 10_240
    settings = LaunchSettings(engine="sglang")
    sglang = engine_rules("sglang").kv_storage_for(model, settings, AT_0_5_23)
    assert resolve_kv_format("auto", model, sglang, gpu_name="H100") == "fp8_e4m3"
    before = ResolvedVersion(text="0.5.6.post2", source=VersionSource.FLAG)
    older = engine_rules("sglang").kv_storage_for(model, settings, before)
    assert resolve_kv_format("auto", model, older, gpu_name="H100") == "bf16"
    vllm = engine_rules("vllm").kv_storage_for(model, LaunchSettings(engine="vllm"), ResolvedVersion(
        text="0.33.0", source=VersionSource.FLAG))  # fmt: skip
    assert resolve_kv_format("auto", model, vllm, gpu_name="H100") == "bf16"


def test_a_mixed_block_stating_its_kv_keeps_it() -> None:
    """`modelopt_mixed_config_incomplete` is false where config.json's block names its KV (here kv_cache_scheme
    8-bit float): SGLang reads that block, and the file's algorithm is not read."""
    block = _json(f"{QWEN36}.json")["quantization_config"]
    beside = _json(f"{QWEN36}.hf_quant_config.json")
    stated = quant_from_config({**block, "kv_cache_scheme": {"num_bits": 8, "type": "float"}}, beside)
    assert stated.kv_cache_quant_algo == "FP8" and stated.quant_file_kv_cache_quant_algo is None
    assert quant_from_config(block, None).quant_file_kv_cache_quant_algo is None  # no file beside
