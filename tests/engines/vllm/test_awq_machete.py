"""vLLM's Machete kernel (compute capability 9.0, from v0.19.0) keeps an AWQ checkpoint's zero points as 16-bit
values, where the book counts them packed in 4 bits; Marlin, on every other GPU and before v0.19.0, keeps the packed
size (engines/vllm/awq_linear.py).

Expected figures, never kvtop's: vLLM's own shapes as arithmetic — `MacheteLinearKernel.process_weights_after_loading`
`transform_w_zp` (kernels/linear/mixed_precision/machete.py:117-118 at v0.19.0, the same at v0.30.0) stores
`-w_s * zeros` in the scales' dtype, [input per partition ÷ 128, output per partition], where the checkpoint's
`qzeros` are int32 [groups, output ÷ 8] — and the log: case-study2's Qwen2.5-72B-Instruct-AWQ start on an H200 at
v0.30.0 ('Using MacheteLinearKernel for AutoAWQMarlinLinearMethod', 'Model loading took 39.56 GiB memory';
tests/data/calibration/vllm.jsonl). Qwen2.5-72B-Instruct-AWQ: hidden 8,192, 64 heads of 128 (8 KV heads),
intermediate 29,696, 80 layers, group 128.
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
from kvtop.domain.wording import GIB
from tests.data_paths import DATA

QWEN72 = DATA / "calibration" / "configs" / "Qwen--Qwen2.5-72B-Instruct-AWQ.RECONSTRUCTED.json"
LOGGED_WEIGHTS = 39.56 * GIB  # case-study2: 'Model loading took 39.56 GiB memory' (two decimals: ± 0.005 GiB)


def _extra(rows_in: int, cols_out: int) -> float:
    """Machete's zeros (2 B per group and output) less the checkpoint's packed ones (int32 per 8 outputs)."""
    groups = rows_in // 128
    return groups * cols_out * 2 - groups * (cols_out // 8) * 4


# per layer at TP 1: qkv_proj [8,192 → 8,192 + 2 × 1,024], o_proj [8,192 → 8,192], gate_up_proj [8,192 → 2 × 29,696],
# down_proj [29,696 → 8,192]
QWEN72_EXTRA = 80 * (_extra(8192, 10240) + _extra(8192, 8192) + _extra(8192, 2 * 29696) + _extra(29696, 8192))


def _model() -> ModelSpec:
    return model_from_config(json.loads(QWEN72.read_text()), source=QWEN72.name)


def _rows(gpu: str | None, version: str, quantization: str | None = None, tp: int = 1) -> list[Any]:
    model = _model()
    resolved = ResolvedVersion(text=version, source=VersionSource.FLAG)
    rows = engine_rules("vllm").weights_built(model, ParallelLayout(tp=tp), range(model.num_layers), gpu, resolved,
                                              quantization=quantization)  # fmt: skip
    return [row for row in rows if row.component == "awq_zero_points"]


def test_machete_zeros_on_h200_at_v0_30() -> None:
    (row,) = _rows("H200", "0.30.0")
    assert row.bytes == QWEN72_EXTRA == 825_753_600


def test_book_with_machete_zeros_meets_the_logged_load() -> None:
    """The book plus Machete's zeros lands within 0.2 % of the log's 39.56 GiB (the book alone: 2.1 % short)."""
    model = _model()
    book = weights_book(model, ParallelLayout(), range(model.num_layers), first_stage=True, last_stage=True)
    assert book.total_bytes / LOGGED_WEIGHTS - 1 < -0.015
    assert abs((book.total_bytes + QWEN72_EXTRA) / LOGGED_WEIGHTS - 1) < 0.002


def test_tp2_splits_the_columns_and_the_row_parallel_inputs() -> None:
    per_layer = _extra(8192, 10240 // 2) + _extra(8192 // 2, 8192) + _extra(8192, 29696) + _extra(29696 // 2, 8192)
    (row,) = _rows("H100", "0.30.0", tp=2)
    assert row.bytes == 80 * per_layer


@pytest.mark.parametrize("gpu", ["A100-80GB", "L40S", "RTXPRO6000", "B200"])
def test_marlin_elsewhere_keeps_the_packed_size(gpu: str) -> None:
    assert _rows(gpu, "0.30.0") == []


def test_before_v0_19_awq_marlin_repacks_for_marlin_itself() -> None:
    assert _rows("H100", "0.18.1") == []
    assert len(_rows("H100", "0.19.0")) == 1


def test_explicit_awq_forces_the_legacy_kernel_until_v0_24() -> None:
    assert _rows("H100", "0.19.1", quantization="awq") == []
    assert len(_rows("H100", "0.19.1", quantization="awq_marlin")) == 1
    assert len(_rows("H100", "0.24.0", quantization="awq")) == 1


def test_unnamed_gpu_is_taken_as_hopper() -> None:
    (row,) = _rows(None, "0.30.0")
    assert "assumed" in row.note


def test_the_note_names_the_engine_s_source_and_releases() -> None:
    """The row says compute capability 9.0, vLLM's own file and line (v0.19.0 machete.py:117, `transform_w_zp`) and
    where `--quantization awq` avoids it (v0.19-v0.23: awq_marlin.py:248-255 forces AWQConfig); no kvtop file."""
    (row,) = _rows("H100", "0.19.1", quantization="awq_marlin")
    assert "H100: compute capability 9.0" in row.note and "from v0.19.0" in row.note
    assert "kernels/linear/mixed_precision/machete.py:117 transform_w_zp" in row.note
    assert "--quantization awq avoids it on 0.19-0.23" in row.note and "awq_linear.py" not in row.note
    (later,) = _rows("H100", "0.30.0")
    assert "--quantization awq" not in later.note  # from v0.24.0 every AWQ name reaches AutoAWQConfig's Machete
