"""vLLM's kernel for each symmetric GPTQ linear module, by the engine's checks in its order (engines/vllm/
gptq_kernels.py), and the scales of whole groups per partition (gptq_linear.py `gptq_scale_groups`).

Expected figures, never kvtop's: the kernels the vLLM 0.33.0 run logs name for Qwen1.5-7B-Chat-GPTQ-Int4
(.cache/engine_diff/runs/vllm-0.33.0/sm90.log: Machete, Marlin and Exllama at TP 8), the checks as arithmetic
(machete_utils.py: input % 64, output % 128; marlin.py:57-66: input per partition % group; v0.23.0
marlin_utils.py:167-199: output % 64, input % 128) and vLLM's shapes (auto_gptq.py:373: scales and qzeros
[input per partition // group, …]). Qwen1.5-7B: hidden 4,096, 32 heads of 128, intermediate 11,008, 32 layers,
group 128, float16.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm.gptq_kernels import GPTQ_KERNEL_ERAS, GptqModule, Kernel, kernel_for
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

QWEN15 = DATA / "calibration" / "configs" / "Qwen--Qwen1.5-7B-Chat-GPTQ-Int4.RECONSTRUCTED.json"


def _at(version: str) -> ResolvedVersion:
    return ResolvedVersion(text=version, source=VersionSource.FLAG)


def _model(act_order: bool = False) -> ModelSpec:
    data = json.loads(QWEN15.read_text())
    data["quantization_config"] = {**data["quantization_config"], "desc_act": act_order}
    return model_from_config(data, source="qwen15")


def _rows(tp: int, gpu: str, version: str = "0.33.0", act_order: bool = False) -> dict[str, int]:
    model = _model(act_order)
    rows = engine_rules("vllm").weights_built(model, ParallelLayout(tp=tp), range(model.num_layers), gpu, _at(version))
    return {row.component: row.bytes for row in rows}


def _qwen15_modules(tp: int) -> list[GptqModule]:
    fmt = _model().quant
    return [GptqModule(fmt, 4096, 3 * 4096 // tp, 4096, False, False),
            GptqModule(fmt, 4096 // tp, 4096, 4096, tp > 1, False),
            GptqModule(fmt, 4096, 2 * 11008 // tp, 4096, False, False),
            GptqModule(fmt, 11008 // tp, 4096, 11008, tp > 1, False)]  # fmt: skip


@pytest.mark.parametrize(("tp", "capability", "kernels"), [
    (8, (9, 0), [Kernel.MACHETE, Kernel.MACHETE, Kernel.MARLIN, Kernel.EXLLAMA]),  # the sm90 TP 8 log's three
    (4, (9, 0), [Kernel.MACHETE] * 4),
    (4, (8, 0), [Kernel.MARLIN, Kernel.MARLIN, Kernel.MARLIN, Kernel.EXLLAMA]),
    (8, (10, 0), [Kernel.MARLIN, Kernel.MARLIN, Kernel.MARLIN, Kernel.EXLLAMA]),
])  # fmt: skip
def test_kernels_in_vllm_order(tp: int, capability: tuple[int, int], kernels: list[Kernel]) -> None:
    rule = GPTQ_KERNEL_ERAS.at(_at("0.33.0"))
    assert rule is not None
    assert [kernel_for(module, rule, capability) for module in _qwen15_modules(tp)] == kernels


def test_marlin_needs_whole_tiles_before_0_24() -> None:
    """An output of 4,128 columns (not % 64) on an A100: v0.23.0's Marlin refuses (Exllama's), v0.33.0's pads."""
    module = GptqModule(_model().quant, 4096, 4128, 4096, False, False)
    old, new = GPTQ_KERNEL_ERAS.at(_at("0.23.0")), GPTQ_KERNEL_ERAS.at(_at("0.33.0"))
    assert old is not None and new is not None
    assert kernel_for(module, old, (8, 0)) is Kernel.EXLLAMA
    assert kernel_for(module, new, (8, 0)) is Kernel.MARLIN_PADDED


@pytest.mark.parametrize(("tp", "dropped"), [(4, 32 * 4096 * 2 // 2), (8, 32 * 4096 * 2 * 3 // 4)])
def test_whole_scale_groups(tp: int, dropped: int) -> None:
    """down_proj's 21.5 (10.75) groups a rank: vLLM builds 21 (10) — half (three quarters) a group of 4,096 fp16
    scales a layer less than the book's split: 131,072 B at TP 4, 196,608 B at TP 8, on every GPU."""
    for gpu in ("H100", "A100", "B200"):
        assert _rows(tp, gpu)["gptq_scale_groups"] == -dropped
    assert _rows(2, "H100").get("gptq_scale_groups") is None  # 43 whole groups at TP 2


def test_exllama_keeps_its_qzeros_off_hopper() -> None:
    """A100 at TP 8: Marlin empties qkv, o and gate_up; Exllama keeps down_proj's 10 groups × 512 int32 a layer."""
    assert _rows(8, "A100")["gptq_zero_points"] == 32 * 10 * 4096 // 8 * 4 == 655_360
    assert "gptq_zero_points" not in _rows(2, "A100")


def test_hopper_tp8_keeps_machete_and_exllama_zeros() -> None:
    """qkv_proj [4,096 → 1,536] and o_proj [512 → 4,096] (Machete) and down_proj (Exllama), gate_up's emptied."""
    qkv, o, down = 32 * 1536 // 8 * 4, 4 * 4096 // 8 * 4, 10 * 4096 // 8 * 4
    assert _rows(8, "H100")["gptq_zero_points"] == 32 * (qkv + o + down) == 1_703_936


def test_act_order_repeats_the_groups_and_marlin_keeps_sorted_g_idx() -> None:
    """desc_act at TP 2 on an A100 (v0.29.0: g_idx registered, desc_act taken): the row-parallel o_proj and down_proj
    hold every group of the whole input (v0.29.0 marlin_utils.py:440-446 marlin_repeat_scales_on_all_ranks), and
    Marlin, which takes all four modules (whole 128 × 64 tiles and groups), keeps g_idx and g_idx_sort_indices (int32
    [input per partition] each, marlin.py:175-185)."""
    o_extra = (4096 // 128 - 2048 // 128) * 4096 * 2  # 32 groups a rank, the book 16
    down_extra = (11008 // 128 - 5504 // 128) * 4096 * 2  # 86, the book 43
    rows = _rows(2, "A100", "0.29.0", act_order=True)
    assert rows["gptq_scale_groups"] == 32 * (o_extra + down_extra) == 15_466_496
    assert rows["gptq_zero_points"] == 32 * 2 * 4 * (4096 + 2048 + 4096 + 5504)
