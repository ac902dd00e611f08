"""DeepSeek-VL2's timm SigLIP, MlpProjector and separators (kvtop.domain.architectures.towers_deepseek_vl2).

Oracle: SGLang 0.5.23's meta build of the registry default config (tests/data/engine_diff/registry/configs/
DeepseekVL2ForCausalLM.json), kept as its registry rows (sglang-0.5.23.json), the same at TP 1 and 2 (timm's
nn.Linear and ReplicatedLinear only): vision 856,451,200 B, projector 27,271,168 B, image_newline and view_seperator
4,096 B each. vLLM 0.33.0 refuses its default config (grouped top-k without num_expert_group), as kvtop does, so
vLLM's split of the SigLIP MLPs is read from its code (deepseek_vl2.py:426-447 patch_vit_for_tp) and checked here
by arithmetic; a vLLM 0.33.0 meta build of that default with language_config num_experts_per_tok 6, n_group 1,
topk_group 1 and moe_intermediate_size 1408 (`registry_sweep.py --params`, session 47, not kept as a fixture) held
883,730,560 B of tower at TP 1 and 605,950,400 B at TP 2 (fc1 [2152, 1152] and fc2 [1152, 2152] in all 28 MLPs).
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.tower_spec import TowerSplit
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

NAME = "default--DeepseekVL2ForCausalLM"
CONFIG = DATA / "engine_diff" / "registry" / "configs" / "DeepseekVL2ForCausalLM.json"
ENGINE_PARTS = {"vision": 856_451_200, "projector": 27_271_168, "image_newline": 4_096, "view_seperator": 4_096}
BF16 = 2
# timm 1.0.29 vit_so400m_patch14_siglip_384: width 1152, 27 blocks, MLP int(1152 × 3.7362) = 4304, patch 14 at 384
W, M = 1152, 4304
MLP = 2 * W * M + M + W  # fc1 and fc2 with biases: 9,921,872
MLP_SPLIT = W * M + M + M * W  # what vLLM's Column/RowParallelLinear split: fc1 with its bias, fc2's weight


def _vision_bytes(tp: int, split: TowerSplit) -> int:
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME)
    assert not any("vision" in note for note in model.not_modelled)
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 30), first_stage=True, last_stage=True,
                        tower_split=split)  # fmt: skip
    (vision,) = [r for r in book.rows if r.component == "vision"]
    return int(vision.bytes)


def test_the_engines_bytes_are_the_towers_arithmetic() -> None:
    """SigLIP: patch 3·14² → 1152 with bias, 27² positions, 27 blocks (two LayerNorms, qkv 1152 → 3·1152 and proj
    with biases, the MLP), a final LayerNorm and the MAP head (latent, q, kv, proj with biases, LayerNorm, MLP):
    428,225,600 parameters (timm's own count on the meta device). Projector (downsample_mlp_gelu, depth 2, ratio 2):
    1152·4 → 2048 and 2048 → 2048 with biases; the two separators are n_embed 2048 each."""
    block = 4 * W + 4 * W * W + 4 * W + MLP
    siglip = 3 * 196 * W + W + 27 * 27 * W + 27 * block + 2 * W + (W + 4 * W * W + 4 * W + 2 * W + MLP)
    assert siglip == 428_225_600
    assert BF16 * siglip == ENGINE_PARTS["vision"]
    assert ENGINE_PARTS["projector"] == BF16 * (4608 * 2048 + 2048 + 2048 * 2048 + 2048)
    assert ENGINE_PARTS["image_newline"] == ENGINE_PARTS["view_seperator"] == BF16 * 2048


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_sglangs_meta_build(tp: int) -> None:
    row = row_of("sglang", "0.5.23", NAME, tp)
    parts = row["stages"][0]["param_bytes"]
    assert {key: parts[key] for key in ENGINE_PARTS} == ENGINE_PARTS
    assert _vision_bytes(tp, SGLANG_SPLIT) == sum(ENGINE_PARTS.values()) == 883_730_560


def test_vllm_splits_every_timm_mlp_over_tp() -> None:
    """vLLM 0.33.0 patch_vit_for_tp: the 28 timm Mlps (27 blocks and the pooling head) get fc1 colwise (with its
    bias) and fc2 rowwise (its bias whole): at TP 2 a rank holds half of 28 × 9,920,720 parameters less."""
    assert MLP_SPLIT == 9_920_720
    assert _vision_bytes(2, VLLM_SPLIT) == 883_730_560 - BF16 * 28 * MLP_SPLIT // 2 == 605_950_400
    assert _vision_bytes(1, VLLM_SPLIT) == 883_730_560
