"""NVLM-D's vision tower (held-out wave 4b): InternViT-6B with vLLM's 7 dummy heads, and NVLM-D's own mlp1.

Expected bytes are vLLM 0.33.0's meta build of nvidia/NVLM-D-72B (models/nvlm_d.py, intern_vit.py), printed by
`registry_sweep.py --engine vllm --params nvidia--NVLM-D-72B --tps 1` and written out per tensor below, and the
towers per rank at TP 1 and 2 as the registry sweep recorded them (tests/data/engine_diff/registry/
vllm-0.33.0.json: `vision_model` + `mlp1`); kvtop's tower is recomputed from the config.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.errors import InputError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import CONFIGS

NVLM = "nvidia--NVLM-D-72B"
BF16 = 2
# vLLM 0.33.0 meta build, TP 1, bf16: 45 blocks of width 3,200, 25 heads + 7 dummy heads of 128 (dummy_dim 4,096)
EMBEDDINGS = (
    3200 + 1025 * 3200 + 3200 * 3 * 14 * 14 + 3200
) * BF16  # class, positions, patch weight and bias
HEADS_SPLIT = 45 * (12288 * 3200 + 3200 * 4096) * BF16  # qkv [12288, 3200] (no bias), proj [3200, 4096]
SPLIT = 45 * (12800 * 3200 + 12800 + 3200 * 12800) * BF16  # fc1 with its bias, fc2
# per block whole: norm1, norm2, proj bias, ls1, ls2, fc2 bias [3200]; q_norm, k_norm [4096]
BLOCKS_WHOLE = 45 * (6 * 3200 + 2 * 4096) * BF16
# mlp1: LayerNorm [12800] weight and bias, Linear [29568, 12800], Linear [8192, 29568] (no biases)
MLP1 = (2 * 12800 + 29568 * 12800 + 8192 * 29568) * BF16


def _config() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CONFIGS / "heldout" / "wave4b" / f"{NVLM}.json").read_text())
    return loaded


def _model(config: dict[str, Any] | None = None) -> ModelSpec:
    return model_from_config(config or _config(), source=NVLM)


def _vision_bytes(model: ModelSpec, tp: int) -> int:
    book = weights_book(
        model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True
    )
    return sum(row.bytes for row in book.rows if row.component == "vision")


def test_nvlm_tower_is_vllms_meta_build_tensor_by_tensor() -> None:
    assert MLP1 == 1_241_434_112  # the sweep's mlp1 child at TP 1 and 2
    assert (
        _vision_bytes(_model(), 1) == EMBEDDINGS + HEADS_SPLIT + SPLIT + BLOCKS_WHOLE + MLP1 == 13_346_779_392
    )


@pytest.mark.parametrize(("tp", "engine_bytes"), [(1, 13_346_779_392), (2, 7_300_507_392)])
def test_nvlm_tower_per_rank_is_vllms(tp: int, engine_bytes: int) -> None:
    row = row_of("vllm", "0.33.0", NVLM, tp)
    children = row["stages"][0]["param_bytes"]
    assert int(children["vision_model"]) + int(children["mlp1"]) == engine_bytes
    # TP 2: 32 heads divide, so qkv, proj, fc1 and fc2 split; the rest (and mlp1) whole on every rank
    assert tp == 1 or engine_bytes == EMBEDDINGS + BLOCKS_WHOLE + MLP1 + (HEADS_SPLIT + SPLIT) // 2
    assert _vision_bytes(_model(), tp) == engine_bytes


def test_nvlm_mlp1_needs_the_language_models_width() -> None:
    config = _config()
    llm = {key: value for key, value in config["llm_config"].items() if key != "intermediate_size"}
    with pytest.raises(InputError, match="llm_config.intermediate_size"):
        _model({**config, "llm_config": llm})
