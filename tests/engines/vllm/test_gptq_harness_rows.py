"""The engine_diff harness's vLLM 0.33.0 rows of the three symmetric GPTQ configs (default grid, KV auto, TP 1/2/4/8,
sm90, sm80 and sm100): kvtop's rank against the engine's meta build, by GPU (engines/vllm/gptq_linear.py, vllm.md §3.8).

Expected figures, never kvtop's: the engine's parameter bytes (tests/data/engine_diff/vllm-0.33.0.json, each row's
stage 0 `param_bytes`, built on meta by vLLM's own model class: `create_weights` registers qzeros whatever the
kernel, so every GPU builds the same bytes) and the shapes vLLM registers, as arithmetic:
qzeros int32 [input per partition ÷ 128, output per partition ÷ 8] on qkv_proj, o_proj, gate_up_proj, down_proj
(v0.33.0 auto_gptq.py:389-429). The run's log named the kernel: sm90 "Using MacheteLinearKernel for
AutoGPTQLinearMethod", sm80 and sm100 "Using MarlinLinearKernel for AutoGPTQLinearMethod" (auto_gptq.py:352), whose
process_weights_after_loading empties the qzeros (marlin.py:172) — which a meta build never runs.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.arch_readings import arch_reading
from benchmarks.engine_diff.kvtop_side import kvtop_plan
from benchmarks.engine_diff.quant_readings import marlin_emptied_qzeros
from benchmarks.engine_diff.stage_check import StageCheck
from tests.data_paths import DATA

QWEN15 = "Qwen--Qwen1.5-7B-Chat-GPTQ-Int4.RECONSTRUCTED"
QWEN25 = "Qwen--Qwen2.5-7B-Instruct-GPTQ-Int4.RECONSTRUCTED"
QWEN3_MOE = "Qwen--Qwen3-30B-A3B-GPTQ-Int4"


def _qzeros(rows_in: int, cols_out: int) -> int:
    return rows_in // 128 * (cols_out // 8) * 4


def _linear_qzeros(layers: int, hidden: int, heads: int, kv_heads: int, mlp: int, tp: int) -> int:
    """Every layer's linear qzeros on one rank (head_dim 128; `mlp` 0 for a MoE layer's experts, counted apart)."""
    q, kv, o_in = heads // tp * 128, 2 * max(kv_heads // tp, 1) * 128, heads // tp * 128  # KV heads replicated past TP
    per_layer = _qzeros(hidden, q + kv) + _qzeros(o_in, hidden)
    if mlp:
        per_layer += _qzeros(hidden, 2 * mlp // tp) + _qzeros(mlp // tp, hidden)
    return layers * per_layer


def _moe_unloaded(tp: int) -> int:
    """Qwen3-30B-A3B (48 layers, hidden 2,048, 128 experts of 768, fp16): per layer the experts' biases w13
    [128, 2 × 768 ÷ TP] and w2 [128, 2,048], and the quantized gate (qweight [2,048 ÷ 8, 128] and qzeros
    [16, 128 ÷ 8] int32, scales [16, 128] fp16) less the fp16 gate [128, 2,048] kvtop books (A18)."""
    bias = (128 * 2 * 768 // tp + 128 * 2048) * 2
    gate = 2048 // 8 * 128 * 4 + 16 * 128 // 8 * 4 + 16 * 128 * 2 - 128 * 2048 * 2
    return 48 * (bias + gate)


# kvtop's rank less the engine's meta build, by (config, TP, GPU)
SHORT_BY = {
    **{(QWEN15, tp, "sm80"): -_linear_qzeros(32, 4096, 32, 32, 11008, tp) for tp in (1, 2)},
    **{(QWEN25, tp, "sm80"): -_linear_qzeros(28, 3584, 28, 4, 18944, tp) for tp in (1, 2)},
    **{(name, tp, "sm90"): 0 for name in (QWEN15, QWEN25) for tp in (1, 2)},
    **{(QWEN3_MOE, tp, "sm90"): -_moe_unloaded(tp) for tp in (1, 2)},
    **{(QWEN3_MOE, tp, "sm80"): -_moe_unloaded(tp) - _linear_qzeros(48, 2048, 32, 4, 0, tp) for tp in (1, 2)},
}


def _qwen15_marlin_emptied(tp: int, modules: tuple[str, ...]) -> int:
    """Qwen1.5-7B's qzeros, by module, that Marlin empties at TP 4 and 8: qkv_proj [4,096 → 3 × 4,096 ÷ TP],
    o_proj [4,096 ÷ TP → 4,096], gate_up_proj [4,096 → 2 × 11,008 ÷ TP]. down_proj (11,008 ÷ TP rows: 21.5 or 10.75
    groups) is Exllama's, which keeps its 21 or 10 groups (exllama.py:72-103), as the meta build counts them."""
    by_module = {"qkv": _qzeros(4096, 3 * 4096 // tp), "o": _qzeros(4096 // tp, 4096), "gate_up": _qzeros(4096, 2 * 11008 // tp)}
    return 32 * sum(by_module[name] for name in modules)


# TP 4 and 8, by the kernels the run's log names (.cache/engine_diff/runs/vllm-0.33.0/sm*.log): on sm90 Machete
# takes every module at TP 4 and qkv_proj and o_proj at TP 8 (gate_up_proj's 2,752 columns are not whole 128-column
# blocks: Marlin; down_proj's 1,376 rows not whole 64-row blocks nor whole groups: Exllama); on sm80 and sm100
# Marlin takes all but down_proj, Exllama's. Qwen2.5-7B at TP 4: whole groups and blocks everywhere (o_proj 896
# rows, down_proj 4,736), so Machete on sm90 and Marlin elsewhere.
SHORT_BY.update({
    (QWEN15, 4, "sm90"): 0,
    (QWEN15, 8, "sm90"): -_qwen15_marlin_emptied(8, ("gate_up",)),
    **{(QWEN15, tp, "sm80"): -_qwen15_marlin_emptied(tp, ("qkv", "o", "gate_up")) for tp in (4, 8)},
    (QWEN25, 4, "sm90"): 0,
    (QWEN25, 4, "sm80"): -_linear_qzeros(28, 3584, 28, 4, 18944, 4),
})  # fmt: skip
# Qwen3-30B-A3B at TP 4 and 8: 192 or 96 expert rows a rank are not whole groups of 128, so vLLM builds the MoE
# WNA16 experts (the run log's "Falling back to Moe WNA16 kernels"; kvtop's row gptq_moe_wna16), without expert
# biases: the build is kvtop's rank but for the quantized gate the config-only build makes (A18's gate term, here
# kvtop's fp16 gate the larger) and, off sm90, the linear qzeros Marlin empties.
_GATE_OVER_BUILD = -48 * (2048 // 8 * 128 * 4 + 16 * 128 // 8 * 4 + 16 * 128 * 2 - 128 * 2048 * 2)
SHORT_BY.update({
    **{(QWEN3_MOE, tp, "sm90"): _GATE_OVER_BUILD for tp in (4, 8)},
    **{(QWEN3_MOE, tp, "sm80"): _GATE_OVER_BUILD - _linear_qzeros(48, 2048, 32, 4, 0, tp) for tp in (4, 8)},
})  # fmt: skip
SHORT_BY.update({(config, tp, "sm100"): short for (config, tp, gpu), short in list(SHORT_BY.items()) if gpu == "sm80"})


def _row(config: str, tp: int, gpu: str) -> dict[str, Any]:
    rows = json.loads((DATA / "engine_diff" / "vllm-0.33.0.json").read_text())["results"]
    return next(
        r for r in rows
        if (r["config"], r["tp"], r["gpu"], r["kv_dtype"], r.get("variant", "default")) == (config, tp, gpu, "auto", "default")
    )  # fmt: skip


def test_the_arithmetic_is_the_figures_the_readings_name() -> None:
    assert [SHORT_BY[(QWEN15, tp, "sm80")] for tp in (1, 2)] == [-25_296_896, -12_648_448]
    assert [SHORT_BY[(QWEN25, tp, "sm80")] for tp in (1, 2)] == [-25_489_408, -12_744_704]
    assert [SHORT_BY[(QWEN3_MOE, tp, "sm90")] for tp in (1, 2)] == [-25_411_584, -15_974_400]
    assert [SHORT_BY[(QWEN3_MOE, tp, "sm80")] for tp in (1, 2)] == [-28_950_528, -17_743_872]
    # Qwen1.5 at TP 8 on sm90: before whole groups and Exllama, kvtop was +196,608 (scales) - 655,360 (Exllama's
    # qzeros, 10 groups × 512 int32 × 32 layers) off this, the harness's -1,867,776
    assert SHORT_BY[(QWEN15, 8, "sm90")] == -1_409_024 == -1_867_776 - 196_608 + 655_360
    assert [SHORT_BY[(QWEN15, tp, "sm80")] for tp in (4, 8)] == [-4_915_200, -2_457_600]
    assert SHORT_BY[(QWEN25, 4, "sm80")] == -6_372_352
    # Qwen3-30B-A3B at TP 4: was -66,306,048 on sm90 (48 × -1,381,376: the WNA16 experts' group-64 scales over the
    # book's Marlin layout, 1,769,472 B a layer, less the gate's 388,096)
    assert SHORT_BY[(QWEN3_MOE, 4, "sm90")] == 18_628_608 == -66_306_048 + 48 * 1_769_472
    assert [SHORT_BY[(QWEN3_MOE, tp, "sm80")] for tp in (4, 8)] == [17_743_872, 18_137_088]


@pytest.mark.parametrize("config", [QWEN15, QWEN25, QWEN3_MOE])
@pytest.mark.parametrize("tp", [1, 2, 4])
def test_the_meta_build_is_the_same_on_both_gpus(config: str, tp: int) -> None:
    built = {gpu: sum(_row(config, tp, gpu)["stages"][0]["param_bytes"].values()) for gpu in ("sm80", "sm90", "sm100")}
    assert built["sm80"] == built["sm90"] == built["sm100"]


@pytest.mark.parametrize(("config", "tp", "gpu"), sorted(SHORT_BY))
def test_kvtop_rank_is_the_build_less_what_the_gpu_kernel_drops(config: str, tp: int, gpu: str) -> None:
    row = _row(config, tp, gpu)
    assert row["status"] == "ok" and len(row["stages"]) == 1
    plan = kvtop_plan("vllm", "0.33.0", row)  # `kvtop plan` as the harness runs it (the config found under tests/data)
    engine = sum(row["stages"][0]["param_bytes"].values())
    assert plan["stages"][0]["weights_bytes"] - engine == SHORT_BY[(config, tp, gpu)]


# The harness's readings (benchmarks/engine_diff/quant_readings.py, arch_readings.py A18/A20) of every row that
# differs: each names the rule whose arithmetic gives the expected difference to the byte, and a byte more is
# "? unexplained".
DIFFERING = sorted(key for key, short in SHORT_BY.items() if short)
LAYERS = {QWEN15: 32, QWEN25: 28, QWEN3_MOE: 48}
ARCH = {QWEN15: "Qwen2ForCausalLM", QWEN25: "Qwen2ForCausalLM", QWEN3_MOE: "Qwen3MoeForCausalLM"}


def _check(config: str, tp: int, gpu: str, delta: int) -> tuple[StageCheck, str]:
    engine = sum(_row(config, tp, gpu)["stages"][0]["param_bytes"].values())
    text = f"stage 0 weights: kvtop {engine + delta:,} B, engine {engine:,} B ({delta:+,})"
    return StageCheck("vllm", "0.33.0", config, f"TP{tp}", (text,), 0, 0, (0, LAYERS[config]), gpu), text


@pytest.mark.parametrize(("config", "tp", "gpu"), DIFFERING)
def test_the_harness_reads_each_gptq_row_to_the_byte(config: str, tp: int, gpu: str) -> None:
    check, text = _check(config, tp, gpu, SHORT_BY[(config, tp, gpu)])
    assert arch_reading(ARCH[config], check, text).split(" ", 1)[0] == ("A18" if config == QWEN3_MOE else "A20")
    check, text = _check(config, tp, gpu, SHORT_BY[(config, tp, gpu)] + 4)
    assert arch_reading(ARCH[config], check, text) == "? unexplained"


def test_the_harness_names_the_modules_marlin_empties() -> None:
    """Qwen1.5-7B at TP 8: on sm90 gate_up_proj alone (2,752 columns, not whole Machete blocks); on sm80 all but
    down_proj (Exllama's: 1,376 rows, not whole groups)."""
    sm90, _ = _check(QWEN15, 8, "sm90", 0)
    sm80, _ = _check(QWEN15, 8, "sm80", 0)
    assert marlin_emptied_qzeros(sm90, 11008)[1] == ["gate_up_proj"]
    assert marlin_emptied_qzeros(sm80, 11008)[1] == ["qkv_proj", "o_proj", "gate_up_proj"]
    assert 32 * marlin_emptied_qzeros(sm90, 11008)[0] == 1_409_024
