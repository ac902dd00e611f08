"""SGLang's unquantized fused MoE builds the experts' biases in fp32 (held-out wave 5's bf16 gpt-oss-20b export).

Expected figures: SGLang 0.5.23's model class built on the meta device at TP 1 (`python
benchmarks/engine_diff/registry_sweep.py --engine sglang --params local--gpt-oss-20b-bf16 --tps 1`: its
named_parameters' shapes and dtypes), summed by hand below.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import WeightsBook, weights_book

DATA = Path(__file__).resolve().parents[1] / "data" / "configs"
SGLANG = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
BF16, FP32 = 2, 4


def model(path: Path) -> ModelSpec:
    return model_from_config(json.loads(path.read_text()), source=path.stem)


def sglang_book(m: ModelSpec) -> WeightsBook:
    """One TP-1 rank's book as kvtop's SGLang plan builds it: the stage parts and the engine rows."""
    rules = engine_rules("sglang")
    layout, layers = ParallelLayout(tp=1), range(m.num_layers)
    book = weights_book(m, layout, layers, first_stage=True, last_stage=True,
                        tower_split=rules.architectures.TOWER_SPLIT, parts=rules.stage_parts(m, 0, 1, SGLANG))  # fmt: skip
    return WeightsBook(rows=(*book.rows, *rules.weights_built(m, layout, layers, "H100", SGLANG)))


def test_sglang_builds_a_bf16_gpt_oss_expert_biases_in_fp32() -> None:
    """gpt-oss-20b in bf16 (no quantization_config): UnquantizedFusedMoEMethod's w13_weight_bias [32, 5760] and
    w2_weight_bias [32, 2880] float32 on 24 layers (26,542,080 B; kvtop had them bf16, 13,271,040 B short); the
    whole model 41,842,785,408 B as meta-built: embed_tokens and lm_head [201088, 2880], qkv_proj [5120, 2880] +
    bias, o_proj [2880, 4096] + bias, sinks [64], w13 [32, 5760, 2880], w2 [32, 2880, 2880], router [32, 2880] +
    bias, two norms a layer and the final norm, all bf16 but the two expert biases."""
    m = model(DATA / "heldout" / "wave5" / "local--gpt-oss-20b-bf16.json")
    layer = (5120 * 2880 + 5120 + 2880 * 4096 + 2880 + 64 + 32 * 5760 * 2880 + 32 * 2880 * 2880 + 32 * 2880 + 32
             + 2 * 2880) * BF16 + (32 * 5760 + 32 * 2880) * FP32  # fmt: skip
    assert 24 * (32 * 5760 + 32 * 2880) * FP32 == 17_694_720 + 8_847_360
    expected = 2 * 201088 * 2880 * BF16 + 2880 * BF16 + 24 * layer
    assert expected == 41_842_785_408
    assert sum(r.bytes for r in sglang_book(m).rows) == expected


def test_mxfp4_gpt_oss_keeps_its_expert_biases_in_the_model_dtype() -> None:
    """openai/gpt-oss-20b (MXFP4 experts): Mxfp4MoEMethod's biases are bf16 (the sweep's SGLang rows: equal)."""
    m = model(DATA / "openai--gpt-oss-20b.json")
    assert engine_rules("sglang").stage_parts(m, 0, 1, SGLANG).expert_bias_bytes is None
