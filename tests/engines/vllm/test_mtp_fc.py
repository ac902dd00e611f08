"""The Qwen3.5 MTP layer's `fc` by engine (engines/vllm/mtp_build.py): vLLM's ColumnParallelLinear(2 × hidden, hidden,
gather_output=True, quant_config=…) (qwen3_5_mtp.py v0.17.1 :78 – v0.34.0 :100) holds hidden ÷ TP output rows in the
checkpoint's format; SGLang's nn.Linear(2 × hidden, hidden) (qwen3_5_mtp.py 0.5.14 :87) holds it whole in bf16. The
expected bytes are the config's arithmetic: Qwen3.6-27B-FP8 (hidden 5,120; 128 × 128 FP8 blocks, a float32 scale
each; `mtp.fc` not excluded) at TP 2, Qwen3.5-27B (bf16) at TP 2."""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.domain.engines.catalogue import EngineId
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.conftest import DATA

FP8 = DATA / "calibration/configs/Qwen--Qwen3.6-27B-FP8.RECONSTRUCTED.json"
BF16 = DATA / "engine_diff/configs/Qwen--Qwen3.5-27B.json"
HIDDEN, TP = 5120, 2
WHOLE_BF16 = 2 * HIDDEN * HIDDEN * 2  # SGLang's fc: 104,857,600 B on every rank


def _mtp(engine: EngineId, version: str, model: ModelSpec) -> int:
    layers = range(model.num_layers)
    parts = engine_rules(engine).stage_parts(model, 0, 1, ResolvedVersion(text=version))
    book = weights_book(model, ParallelLayout(tp=TP), layers, first_stage=True, last_stage=True, load_mtp=True,
                        parts=parts)  # fmt: skip
    return next(row.bytes for row in book.rows if row.component == "mtp")


def _model(path: Path) -> ModelSpec:
    return model_from_config(json.loads(path.read_text()), source=path.name)


def test_vllm_splits_and_quantizes_the_fp8_checkpoints_fc_where_sglang_holds_it_whole_in_bf16() -> None:
    model = _model(FP8)
    assert (model.hidden_size, model.mtp_layers, model.quant.block) == (HIDDEN, 1, (128, 128))
    rows = HIDDEN // TP  # 2,560 output rows a rank, 2 × 5,120 inputs
    split_fp8 = rows * 2 * HIDDEN + (rows // 128) * (2 * HIDDEN // 128) * 4  # 26,214,400 B + 6,400 B of scales
    assert _mtp("sglang", "0.5.14", model) - _mtp("vllm", "0.19.0", model) == WHOLE_BF16 - split_fp8 == 78_636_800


def test_vllm_splits_the_bf16_checkpoints_fc_over_tp() -> None:
    model = _model(BF16)
    assert model.mtp_layers == 1 and not model.quant.quantized
    assert _mtp("sglang", "0.5.14", model) - _mtp("vllm", "0.19.0", model) == WHOLE_BF16 - WHOLE_BF16 // TP
