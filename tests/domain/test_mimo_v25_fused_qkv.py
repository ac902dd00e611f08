"""MiMo-V2.5 / -Pro (held-out wave 5): a block-FP8 q|k|v fused in K|V chunks (`attention_projection_layout:
fused_qkv`). vLLM 0.33.0 pads each chunk's K|V rows to whole 128-row scale blocks while a rank holds several
chunks (models/mimo_v2.py `_fused_qkv_kv_chunk_rows`). Expected figures: vLLM 0.33.0's meta build of each config
(`registry_sweep.py --engine vllm --params`; their MiMoV2Config is the checkpoint's own code, so the builds ran
with a PretrainedConfig stand-in registered for `mimo_v2` as benchmarks/engine_diff/checkpoint_configs.py does for
other checkpoint classes: a harness addition left to its owner).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.tower_spec import TOWER_KINDS
from kvtop.domain.weights import WeightsBook, weights_book

WAVE5 = Path(__file__).resolve().parents[1] / "data" / "configs" / "heldout" / "wave5"
VLLM = ResolvedVersion(text="0.33.0", source=VersionSource.FLAG)
OLDER = ResolvedVersion(text="0.13.0", source=VersionSource.FLAG)
FP8, BF16, FP32 = 1, 2, 4


def model(name: str) -> ModelSpec:
    path = WAVE5 / f"{name}.json"
    return model_from_config(json.loads(path.read_text()), source=path.stem)


def vllm_book(m: ModelSpec, tp: int, version: ResolvedVersion = VLLM) -> WeightsBook:
    rules = engine_rules("vllm")
    layout, layers = ParallelLayout(tp=tp), range(m.num_layers)
    book = weights_book(m, layout, layers, first_stage=True, last_stage=True,
                        tower_split=rules.architectures.TOWER_SPLIT, parts=rules.stage_parts(m, 0, 1, version))  # fmt: skip
    return WeightsBook(rows=(*book.rows, *rules.weights_built(m, layout, layers, "H100", version)))


def language(book: WeightsBook, component: str | None = None) -> int:
    return sum(r.bytes for r in book.rows if r.component not in TOWER_KINDS and component in (None, r.component))


def test_mimo_v25_pro_attention_as_meta_built() -> None:
    """TP 1, each of the 70 layers: qkv_proj [27648, 6144] float8 (128 × 192 Q rows, then 8 chunks of 192 K + 128
    V rows padded to 384) + weight_scale_inv [216, 48] fp32, o_proj [6144, 16384] bf16 (ignored_layers), the four
    bf16 q/k/v/prob scalars; attention_sink_bias [128] bf16 on the 60 sliding layers."""
    m = model("XiaomiMiMo--MiMo-V2.5-Pro")
    assert m.body.fused_qkv_chunks == 8
    assert 128 * 192 + 8 * 384 == 27648
    per_layer = 27648 * 6144 * FP8 + 216 * 48 * FP32 + 6144 * 16384 * BF16 + 4 * BF16
    expected = 70 * per_layer + 60 * 128 * BF16
    assert expected == 11_890_851_840 + 2_903_040 + 14_092_861_440 + 560 + 15_360
    assert language(vllm_book(m, 1), "attention") == expected
    # before v0.33.0 the rule is not read: the checkpoint's own 27,136 rows (12 + 8 scale blocks)
    assert language(vllm_book(m, 1), "attention") - language(vllm_book(m, 1, OLDER), "attention") == 70 * (
        512 * 6144 * FP8 + 4 * 48 * FP32
    )


@pytest.mark.parametrize(("name", "tp", "engine_bytes"), [
    ("XiaomiMiMo--MiMo-V2.5-Pro", 1, 1_874_853_888 + 1_029_251_250_224),  # lm_head + model
    ("XiaomiMiMo--MiMo-V2.5-Pro", 2, 937_426_944 + 514_952_127_536),
    ("XiaomiMiMo--MiMo-V2.5", 1, 311_871_696_128),  # language_model (its audio and vision towers beside)
    ("XiaomiMiMo--MiMo-V2.5", 2, 156_034_835_776),
])  # fmt: skip
def test_mimo_v25_language_model_as_meta_built(name: str, tp: int, engine_bytes: int) -> None:
    assert language(vllm_book(model(name), tp)) == engine_bytes
