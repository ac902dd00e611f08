"""vLLM keeps a symmetric GPTQ checkpoint's linear `qzeros` (and, before v0.30.0, `g_idx`) where its Machete kernel
serves the layer: compute capability 9.0 (engines/vllm/gptq_linear.py). Marlin, on every other GPU, empties them.

Expected figures, never kvtop's: the engine's meta build of each config (benchmarks/engine_diff registry rows,
tests/data/engine_diff/registry/vllm-0.33.0.json, sm90: each stage's `named_parameters()` bytes), and vLLM's own
shapes as arithmetic: `AutoGPTQLinearMethod.create_weights` (v0.33.0 auto_gptq.py:389-429) registers
qzeros int32 [input per partition ÷ group, output per partition ÷ 8] on qkv_proj, o_proj, gate_up_proj and
down_proj; `GPTQMarlinLinearMethod` (v0.13.0 gptq_marlin.py, auto_gptq.py to v0.29.0) also g_idx int32 [input per
partition]. Qwen1.5-7B-Chat: hidden 4,096, 32 heads of 128 (32 KV heads), intermediate 11,008, 32 layers, group 128.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

QWEN15 = "Qwen--Qwen1.5-7B-Chat-GPTQ-Int4.RECONSTRUCTED"
QWEN25 = "Qwen--Qwen2.5-7B-Instruct-GPTQ-Int4.RECONSTRUCTED"
CONFIG_FILES = {QWEN15: DATA / "calibration" / "configs" / f"{QWEN15}.json",
                QWEN25: DATA / "configs" / "heldout" / "calib48" / f"{QWEN25}.json"}  # fmt: skip
AT_0_33 = ResolvedVersion(text="0.33.0", source=VersionSource.FLAG)


def _qzeros(rows_in: int, cols_out: int) -> int:
    """int32 [rows_in ÷ 128, cols_out ÷ 8]."""
    return rows_in // 128 * (cols_out // 8) * 4


# Qwen1.5-7B per layer and rank: qkv_proj [4,096 → 3 × 4,096 ÷ TP], o_proj [4,096 ÷ TP → 4,096],
# gate_up_proj [4,096 → 2 × 11,008 ÷ TP], down_proj [11,008 ÷ TP → 4,096]
QWEN15_ZEROS = {tp: 32 * (_qzeros(4096, 3 * 4096 // tp) + _qzeros(4096 // tp, 4096) + _qzeros(4096, 2 * 11008 // tp)
                          + _qzeros(11008 // tp, 4096)) for tp in (1, 2)}  # fmt: skip
QWEN15_G_IDX = {tp: 32 * 4 * (4096 + 4096 // tp + 4096 + 11008 // tp) for tp in (1, 2)}


def _registry_row(config: str, tp: int) -> dict[str, Any]:
    rows = json.loads((DATA / "engine_diff" / "registry" / "vllm-0.33.0.json").read_text())["rows"]
    return next(r for r in rows if r["config"] == config and r["tp"] == tp)


def _model(config: str) -> ModelSpec:
    return model_from_config(json.loads(CONFIG_FILES[config].read_text()), source=config)


def _zero_rows(config: str, tp: int, gpu: str | None, version: str = "0.33.0") -> list[Any]:
    model = _model(config)
    resolved = ResolvedVersion(text=version, source=VersionSource.FLAG)
    rows = engine_rules("vllm").weights_built(model, ParallelLayout(tp=tp), range(model.num_layers), gpu, resolved)
    return [row for row in rows if row.component == "gptq_zero_points"]


def test_qzeros_arithmetic() -> None:
    """The figures the engine_diff harness found kvtop short by at TP 1 (docs/fidelity_registry.md)."""
    assert QWEN15_ZEROS[1] == 25_296_896
    assert QWEN15_ZEROS[2] == 12_648_448


@pytest.mark.parametrize("config", [QWEN15, QWEN25])
@pytest.mark.parametrize("tp", [1, 2])
def test_sm90_weights_equal_the_engine_build(config: str, tp: int) -> None:
    """At sm90 the two 7B configs' ranks weigh what vLLM 0.33.0 builds (short by the qzeros before)."""
    row = _registry_row(config, tp)
    assert row["gpu"] == "sm90" and len(row["stages"]) == 1
    model, layout = _model(config), ParallelLayout(tp=tp)
    rules, layers = engine_rules("vllm"), range(model.num_layers)
    parts = rules.stage_parts(model, 0, 1, AT_0_33)  # as the ledger builds a stage (ledger.py predict)
    book = weights_book(model, layout, layers, first_stage=True, last_stage=True, parts=parts).total_bytes
    built = sum(r.bytes for r in rules.weights_built(model, layout, layers, "H100", AT_0_33))
    assert book + built == sum(row["stages"][0]["param_bytes"].values())


@pytest.mark.parametrize("tp", [1, 2])
def test_hopper_row_is_the_qzeros(tp: int) -> None:
    (row,) = _zero_rows(QWEN15, tp, "H100")
    assert row.bytes == QWEN15_ZEROS[tp]
    assert "9.0" in row.note and "g_idx" not in row.note


@pytest.mark.parametrize("gpu", ["A100", "L40S", "B200"])
def test_marlin_gpus_hold_none(gpu: str) -> None:
    """SM 8.0, 8.9, 10.0: Machete refuses (is_device_capability(90)); Marlin empties the zeros."""
    assert _zero_rows(QWEN15, 1, gpu) == []


def test_unknown_gpu_says_hopper_is_assumed() -> None:
    (row,) = _zero_rows(QWEN15, 1, None)
    assert row.bytes == QWEN15_ZEROS[1]
    assert "GPU not stated: compute capability 9.0 assumed" in row.note


@pytest.mark.parametrize(("version", "gpu", "expected"), [
    ("0.6.1", "H100", None),  # gptq_marlin runs Marlin itself: not modelled
    ("0.8.0", "B200", QWEN15_ZEROS[1] + QWEN15_G_IDX[1]),  # get_min_capability 90 alone: Blackwell too
    ("0.13.0", "B200", None),  # exactly 9.0 from v0.10.0
    ("0.22.0", "H100", QWEN15_ZEROS[1] + QWEN15_G_IDX[1]),  # g_idx registered and kept
    ("0.29.0", "H200", QWEN15_ZEROS[1] + QWEN15_G_IDX[1]),
    ("0.30.0", "H100", QWEN15_ZEROS[1]),  # no g_idx from v0.30.0
])  # fmt: skip
def test_eras(version: str, gpu: str, expected: int | None) -> None:
    rows = _zero_rows(QWEN15, 1, gpu, version)
    assert (rows[0].bytes if rows else None) == expected


def test_asymmetric_gptq_has_no_row() -> None:
    """sym=false: the book counts the zero points already (QuantSpec.zero_point_bits); Machete transforms them."""
    data = json.loads(CONFIG_FILES[QWEN15].read_text())
    data["quantization_config"] = {**data["quantization_config"], "sym": False}
    model = model_from_config(data, source="asym")
    resolved = ResolvedVersion(text="0.33.0", source=VersionSource.FLAG)
    rows = engine_rules("vllm").weights_built(model, ParallelLayout(tp=1), range(model.num_layers), "H100", resolved)
    assert [row for row in rows if row.component == "gptq_zero_points"] == []


QWEN3_MOE = "Qwen--Qwen3-30B-A3B-GPTQ-Int4"
READING_CONFIGS = {**CONFIG_FILES, QWEN3_MOE: DATA / "configs" / "quant" / f"{QWEN3_MOE}.json"}


def _read(config: str, gpu: str, tp: int, kvtop: int, engine: int) -> tuple[bool, bool]:
    """(A20 reads it, A18 reads it): the harness readings of one weights difference, the engine's meta build
    (create_weights: the same bytes on every GPU) against kvtop's rank on `gpu`."""
    from unittest import mock

    from benchmarks.engine_diff import quant_readings, stage_check

    layers = json.loads(READING_CONFIGS[config].read_text())["num_hidden_layers"]
    check = stage_check.StageCheck("vllm", "0.33.0", config, f"TP{tp}", (), 0, 0, (0, layers), gpu)
    text = f"stage 0 weights: kvtop {kvtop:,} B, engine {engine:,} B ({kvtop - engine:+,})"
    with mock.patch.object(stage_check, "config_path", lambda name: READING_CONFIGS[name]):
        return quant_readings.vllm_gptq_dense_unloaded(check, text), quant_readings.vllm_gptq_moe_unloaded(check, text)


@pytest.mark.parametrize("tp", [1, 2])
def test_harness_reads_the_qzeros_marlin_empties_off_sm90(tp: int) -> None:
    """At sm80 kvtop books no zeros and the meta build (never loaded) holds them: A20, to the byte; at sm90 the two
    are equal (no difference to read), and a difference of the old size is no longer A20's."""
    engine = sum(_registry_row(QWEN15, tp)["stages"][0]["param_bytes"].values())
    assert _read(QWEN15, "sm80", tp, engine - QWEN15_ZEROS[tp], engine) == (True, False)
    assert _read(QWEN15, "sm90", tp, engine - QWEN15_ZEROS[tp], engine) == (False, False)


@pytest.mark.parametrize(("tp", "gpu", "unheld"), [
    (1, "sm90", 25_411_584), (2, "sm90", 15_974_400), (1, "sm80", 28_950_528), (2, "sm80", 17_743_872),
])  # fmt: skip
def test_a18_by_gpu(tp: int, gpu: str, unheld: int) -> None:
    """Qwen3-30B-A3B-GPTQ: the meta build's unloaded expert biases and quantized gate (25,411,584 B at TP 1), and
    off sm90 the linear qzeros too (+3,538,944 B; test_quant_engine_parts.test_vllm_gptq_experts_keep_their_zero_points)."""
    engine = sum(_registry_row(QWEN3_MOE, tp)["stages"][0]["param_bytes"].values())
    assert _read(QWEN3_MOE, gpu, tp, engine - unheld, engine) == (False, True)


@pytest.mark.parametrize(("tp", "unheld"), [(1, 25_411_584), (2, 15_974_400)])
def test_qwen3_moe_sm90_rank_is_the_build_less_a18(tp: int, unheld: int) -> None:
    """kvtop's sm90 rank of Qwen3-30B-A3B-GPTQ equals the engine's meta build less what A18 reads there."""
    model = model_from_config(json.loads(READING_CONFIGS[QWEN3_MOE].read_text()), source=QWEN3_MOE)
    layout, rules, layers = ParallelLayout(tp=tp), engine_rules("vllm"), range(model.num_layers)
    parts = rules.stage_parts(model, 0, 1, AT_0_33)
    book = weights_book(model, layout, layers, first_stage=True, last_stage=True, parts=parts).total_bytes
    built = sum(r.bytes for r in rules.weights_built(model, layout, layers, "H100", AT_0_33))
    assert book + built == sum(_registry_row(QWEN3_MOE, tp)["stages"][0]["param_bytes"].values()) - unheld
