"""Idefics3's and SmolVLM's SigLIP and connector (kvtop.domain.architectures.towers_vit.idefics3_vision).

Oracle: vLLM 0.33.0's meta builds of the registry sweep's default configs (Idefics3VisionConfig's and
SmolVLMVisionConfig's defaults: width 1152, MLP 3072, 12 layers, image 224, patch 32; scale_factor 2; text 4096;
bf16), listed by `benchmarks/engine_diff/registry_sweep.py --engine vllm --params
default--Idefics3ForConditionalGeneration` and kept as the registry rows (tests/data/engine_diff/registry/
vllm-0.33.0.json): model.vision_model 304,791,552 B at TP 1 and 156,077,568 B at TP 2 (its listing at TP 2:
qkv_proj [1728, 1152], out_proj [1152, 576], fc1 [1536, 1152], fc2 [1152, 1536]; patch, positions [49, 1152],
norms and the row-parallel biases whole), model.connector 37,748,736 B at both (modality_projection [4096, 4608]).
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA
from tests.domain.tower_book import first_stage_vision_row

CONFIGS = DATA / "engine_diff" / "registry" / "configs"
ENGINE_TOWER_BYTES = {1: 304_791_552 + 37_748_736, 2: 156_077_568 + 37_748_736}


@pytest.mark.parametrize("name", ["Idefics3ForConditionalGeneration", "SmolVLMForConditionalGeneration"])
@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_vllms_meta_build(name: str, tp: int) -> None:
    row = row_of("vllm", "0.33.0", f"default--{name}", tp)
    children = row["stages"][0]["param_bytes"]
    assert children["model.vision_model"] + children["model.connector"] == ENGINE_TOWER_BYTES[tp]
    model = model_from_config(json.loads((CONFIGS / f"{name}.json").read_text()))
    vision = first_stage_vision_row(model, tp, VLLM_SPLIT)
    assert int(vision.bytes) == ENGINE_TOWER_BYTES[tp]


def test_the_connector_reads_scale_factor() -> None:
    # modality_projection is width × scale_factor² → text: at scale_factor 3, 1152 × 9 × 4096 (was × 4)
    config = json.loads((CONFIGS / "Idefics3ForConditionalGeneration.json").read_text())
    base = model_from_config(config).tower
    wider = model_from_config({**config, "scale_factor": 3}).tower
    assert base is not None and wider is not None
    assert wider.params - base.params == 1152 * (9 - 4) * 4096
