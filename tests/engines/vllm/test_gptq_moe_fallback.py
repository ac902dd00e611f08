"""vLLM's MoE WNA16 experts where fused Marlin MoE refuses a GPTQ layer (engines/vllm/gptq_moe_fallback.py).

Expected figures, never kvtop's: vLLM 0.33.0's shapes as arithmetic (moe_wna16.py:266-390 create_weights; the run
log of Qwen3-30B-A3B-GPTQ-Int4 at TP 4 and 8: "Falling back to Moe WNA16 kernels", and A2's reading of the meta
build: uint8 w13_qweight [128, 384, 1024] and group-64 scales at TP 4). Qwen3-30B-A3B: 48 layers, hidden 2,048,
128 experts of 768, group 128, float16.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm.gptq_moe_fallback import wna16_group
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

QWEN3_MOE = DATA / "configs" / "quant" / "Qwen--Qwen3-30B-A3B-GPTQ-Int4.json"


def _row(layout: ParallelLayout, version: str = "0.33.0") -> int | None:
    model = model_from_config(json.loads(QWEN3_MOE.read_text()), source="qwen3")
    resolved = ResolvedVersion(text=version, source=VersionSource.FLAG)
    rows = engine_rules("vllm").weights_built(model, layout, range(model.num_layers), "H100", resolved)
    return next((row.bytes for row in rows if row.component == "gptq_moe_wna16"), None)


@pytest.mark.parametrize(("width", "group"), [(384, 128), (192, 64), (96, 32), (48, None)])
def test_group_halves_until_it_divides(width: int, group: int | None) -> None:
    assert wna16_group(128, width, 2048) == group


def test_tp4_experts_are_the_wna16_layout() -> None:
    """At TP 4 a rank holds 192 rows of each expert: WNA16 w13 [128, 384, 1,024] and w2 [128, 2,048, 96] uint8,
    scales [128, 384, 32] and [128, 2,048, 3] fp16, no zeros; the book's Marlin layout the same packed bytes,
    group-128 scales and int32-packed zeros (4 bits a group and row), w2's 1.5 groups a rank as split."""
    packed = 128 * (384 * 1024 + 2048 * 96)
    wna16 = packed + 128 * (384 * 32 + 2048 * 3) * 2
    marlin_book = packed + 128 * (384 * 16 + 2048 * 1.5) * (2 + 0.5)
    assert wna16 - marlin_book == 1_769_472
    assert _row(ParallelLayout(tp=4)) == 48 * 1_769_472


def test_tp8_groups_of_32() -> None:
    """96 rows: groups of 32; the book 0.75 of a group of 128 on w2."""
    packed = 128 * (192 * 1024 + 2048 * 48)
    wna16 = packed + 128 * (192 * 64 + 2048 * 3) * 2
    marlin_book = packed + 128 * (192 * 16 + 2048 * 0.75) * 2.5
    assert _row(ParallelLayout(tp=8)) == 48 * round(wna16 - marlin_book)


@pytest.mark.parametrize("layout", [ParallelLayout(tp=2), ParallelLayout(tp=4, ep=4)])
def test_whole_groups_stay_marlin(layout: ParallelLayout) -> None:
    """384 rows at TP 2, and whole experts of 768 under EP: Marlin MoE takes them, no row."""
    assert _row(layout) is None


def test_before_0_30_not_read() -> None:
    assert _row(ParallelLayout(tp=4), "0.29.0") is None
