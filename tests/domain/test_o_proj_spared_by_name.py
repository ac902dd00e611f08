"""A checkpoint that spares o_proj alone (MiMo-V2.5-Pro's block-FP8 `ignored_layers`: every layer's
`model.layers.N.self_attn.o_proj`, held-out wave 5): the engines skip the module its prefix names (vLLM 0.33.0
`is_layer_skipped`), so o_proj stays in the model dtype. vLLM 0.33.0's meta build of the config (its MiMoV2Config
is the checkpoint's own code: built with a PretrainedConfig stand-in registered for `mimo_v2`, as
benchmarks/engine_diff/checkpoint_configs.py does for other checkpoint classes) holds
`model.layers.N.self_attn.o_proj.weight` [6144, 16384] bfloat16 on all 70 layers (14,092,861,440 B) with no
weight_scale_inv beside it; kvtop had it in FP8 blocks, 7,044,710,400 B short.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book

CONFIG = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "configs"
    / "heldout"
    / "wave5"
    / "XiaomiMiMo--MiMo-V2.5-Pro.json"
)
VLLM = ResolvedVersion(text="0.33.0", source=VersionSource.FLAG)
FP8, BF16, FP32 = 1, 2, 4


def attention_bytes(config: dict[str, object]) -> int:
    m = model_from_config(config, source=CONFIG.stem)
    rules = engine_rules("vllm")
    book = weights_book(m, ParallelLayout(tp=1), range(m.num_layers), first_stage=True, last_stage=True,
                        tower_split=rules.architectures.TOWER_SPLIT, parts=rules.stage_parts(m, 0, 1, VLLM))  # fmt: skip
    return sum(r.bytes for r in book.rows if r.component == "attention")


def test_o_proj_named_in_ignored_layers_stays_bf16() -> None:
    config = json.loads(CONFIG.read_text())
    spared = attention_bytes(config)
    quantization = dict(config["quantization_config"])  # type: ignore[arg-type]
    quantization["ignored_layers"] = []
    blocks = attention_bytes({**config, "quantization_config": quantization})
    # o_proj [6144, 16384]: bf16 where spared, else fp8 with an fp32 scale per 128 × 128 block ([48, 128])
    per_layer = 6144 * 16384 * BF16 - (6144 * 16384 * FP8 + 48 * 128 * FP32)
    assert spared - blocks == 70 * per_layer == 7_044_710_400
    assert 70 * 6144 * 16384 * BF16 == 14_092_861_440
