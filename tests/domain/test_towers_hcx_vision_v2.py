"""HyperCLOVA X SEED Think's vision side (HCXVisionV2ForCausalLM): Qwen2.5-VL's vision transformer and the
mm_projector (towers_catalog.HCX_VISION_V2: the Qwen ViT kind with `text_projector`).

Oracle: vLLM 0.33.0's meta build of the composed config tests/data/engine_diff/registry/configs/
HCXVisionV2ForCausalLM.json (transformers 5.20.2 HyperCLOVAXVisionV2Config's defaults: vision_config
Qwen2_5_VLVisionConfig(), text_config HyperCLOVAXConfig(); SOURCES.md beside it), by
`benchmarks/engine_diff/registry_sweep.py --engine vllm --set classes --only default--HCXVisionV2ForCausalLM` and kept
as the registry rows (tests/data/engine_diff/registry/vllm-0.33.0.json; SGLang 0.5.23 registers no such class):
  visual 6,166,050,304 B at TP 1, 3,087,705,856 B a rank at TP 2; mm_projector 29,368,320 B at both.
By hand from vLLM 0.33.0 hyperclovax_vision_v2.py HCXVisionV2ForCausalLM.__init__ (:432 Qwen2_5_VisionTransformer
of vision_config; :438 mm_projector nn.Linear(out_hidden_size, text_config.hidden_size), biased, replicated) and
qwen2_5_vl.py (:554 Conv3d patch unbiased; per block :492-501 two RMSNorms, :378 qkv QKVParallelLinear biased, :389
proj RowParallelLinear with its bias whole, :327 gate_up MergedColumnParallelLinear biased, :336 down
RowParallelLinear, its bias whole; the merger :591-593, RMSNorm ln_q, mlp.0 Column biased, mlp.2 Row, its bias whole), width 3584, MLP 3420, depth 32, patch 14, temporal 2, merge 2,
out 3584, text width 4096, bf16.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA
from tests.domain.tower_book import first_stage_vision_row

NAME = "HCXVisionV2ForCausalLM"
CONFIG = DATA / "engine_diff" / "registry" / "configs" / f"{NAME}.json"
ENGINE_BYTES = {1: (6_166_050_304, 29_368_320), 2: (3_087_705_856, 29_368_320)}  # visual, mm_projector


def test_the_engines_bytes_are_the_configs_arithmetic() -> None:
    w, m, merged, out, text = 3584, 3420, 4 * 3584, 3584, 4096
    split = 32 * ((w * 3 * w + 3 * w) + w * w + 2 * (w * m + m) + m * w) + (merged * merged + merged) + merged * out
    whole = 3 * 2 * 14 * 14 * w + 32 * (2 * w + w + w) + w + out  # patch; norms, proj and down biases; ln_q, mlp.2 bias
    projector = out * text + text
    assert 2 * (whole + split) == ENGINE_BYTES[1][0]
    assert 2 * (whole + split // 2) == ENGINE_BYTES[2][0]
    assert 2 * projector == ENGINE_BYTES[1][1] == ENGINE_BYTES[2][1]


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", f"default--{NAME}", tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["visual"], parts["mm_projector"]) == ENGINE_BYTES[tp]
    model = model_from_config(json.loads(CONFIG.read_text()))
    vision = first_stage_vision_row(model, tp, TOWER_SPLIT)
    assert int(vision.bytes) == sum(ENGINE_BYTES[tp])
