"""dots.vlm1 (DotsVLMForCausalLM, model_type dots_vlm): its language model read from the top level by the
deepseek_v2 entry (nesting.CLASS_TEXT: SGLang builds DeepseekV2ForCausalLM over it) and its vision transformer and
patch merger as tower data (towers_dots_vlm), against SGLang 0.5.23's meta builds.

The config is composed (tests/data/engine_diff/registry/configs/DotsVLMForCausalLM.json, its SOURCES.md): SGLang's
DotsVLMConfig passes every top-level field to its DeepseekV2Config (configs/deepseekvl2.py), whose defaults are 30
layers of hidden 4,096, MLA (kv_lora_rank 512, qk_rope_head_dim 64, q_lora_rank 1,536), dense MLPs of 11,008
(n_routed_experts None), vocab 102,400, untied; the vision_config DotsVisionConfig's defaults (configs/dots_vlm.py):
42 blocks of 1,536, 12 heads, SwiGLU of 4,224, patch 14 over 3 channels, merge 2, no biases, a post norm.
Expected bytes: SGLang 0.5.23's arithmetic, done by hand below; the meta builds
(tests/data/engine_diff/registry/sglang-0.5.23.json, default--DotsVLMForCausalLM) and, at TP 8,
`registry_sweep.py --engine sglang --params default--DotsVLMForCausalLM --tps 8` (total 3,835,525,120 B).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.conftest import DATA

CONFIG = DATA / "engine_diff" / "registry" / "configs" / "DotsVLMForCausalLM.json"
BUDGET = MeasuredInputs(free_before_load_bytes=140 * GIB, free_after_load_bytes=120 * GIB)
H, V, LAYERS = 4096, 102_400, 30


def config() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CONFIG.read_text())
    return data


def language(tp: int) -> int:
    """SGLang 0.5.23 models/deepseek_v2.py over DeepseekV2Config's defaults, bf16 (B):
    - MLA a layer: q_a_proj [1,536, 4,096] and kv_a_proj_with_mqa [512 + 64, 4,096] (replicated, fused), their
      norms [1,536] and [512]; q_b_proj [32 × 192, 1,536], kv_b_proj [32 × 256, 512] and o_proj [4,096, 32 × 128]
      split over TP;
    - a dense MLP a layer (n_routed_experts None): gate_up [2 × 11,008, 4,096] and down, split;
    - two norms a layer and the final one [4,096]; embed_tokens and the untied lm_head [102,400, 4,096], split."""
    whole = 1536 * H + 576 * H + 1536 + 512 + 2 * H
    split = 32 * 192 * 1536 + 32 * 256 * 512 + H * 32 * 128 + 3 * H * 11_008
    return (LAYERS * (whole + split // tp) + H + 2 * (V // tp) * H) * 2


def tower(tp: int) -> int:
    """SGLang 0.5.23 models/dots_vlm_vit.py (built by dots_vlm.py:81), bf16 (B): the patch Conv2dLayer [1,536, 3, 14,
    14] and its bias (:121), an RMSNorm (:127); 42 blocks (:216; DotsVisionBlock :164-178) of norm1, norm2 [1,536],
    fc1 / fc3 [4,224, 1,536] and fc2 (nn.Linear, whole: :103-105) and the attention (VisionAttention, :164):
    qkv_proj [3 × heads × 128, 1,536] and proj [1,536, heads × 128], the 12 heads padded to a multiple of TP with zero
    heads (_update_vision_config: 16 at TP 8) and split; post_trunk_norm (:224); the merger (:226; PatchMerger
    :53-59) LayerNorm [1,536] with its bias and nn.Linear 6,144 → 6,144 and 6,144 → 1,536 with biases (whole)."""
    heads = -(-12 // tp) * tp
    attention = 42 * (3 * heads * 128 * 1536 + 1536 * heads * 128) // tp
    blocks = 42 * (2 * 1536 + 3 * 4224 * 1536)
    patch = 1536 * 3 * 14 * 14 + 1536 + 1536
    merger = 2 * 1536 + 6144 * 6144 + 6144 + 6144 * 1536 + 1536
    return (attention + blocks + patch + 1536 + merger) * 2


def test_read_by_the_deepseek_v2_entry() -> None:
    m = model_from_config(config(), source="dots-vlm-composed")
    assert m.reading.startswith("architecture entry deepseek_v2") and m.moe is None and m.not_modelled == ()


def rank(tp: int) -> Any:
    m = model_from_config(config(), source="dots-vlm-composed")
    settings = parse_flags(
        "sglang", ["--tp", str(tp), "--engine-version", "0.5.23", "--context-length", "2048"]
    )
    return predict(
        m, settings, gpu_total_bytes=gpu_total_bytes("H200"), gpu_name="H200", measured=BUDGET
    ).ranks[0]


@pytest.mark.parametrize("tp", [1, 2, 8])
def test_sglang_0_5_23_weights_and_kv(tp: int) -> None:
    """The meta builds: language_model 12,137,889,792 B and vision_tower 2,524,182,528 B at TP 1; 6,328,778,752 and
    2,127,820,800 B at TP 2; 3,835,525,120 B in all at TP 8. The MLA cell: 30 layers × (512 + 64) × 2 B, at any TP."""
    built = {1: 12_137_889_792 + 2_524_182_528, 2: 6_328_778_752 + 2_127_820_800, 8: 3_835_525_120}[tp]
    assert tower(1) == 2_524_182_528 and tower(2) == 2_127_820_800
    assert rank(tp).weights.total_bytes == language(tp) + tower(tp) == built
    assert rank(tp).kv.full_bytes_per_token == LAYERS * (512 + 64) * 2 == 34_560


def test_no_vision_config_builds_the_class_defaults() -> None:
    """DotsVLMConfig builds DotsVisionConfig(**{}) where the file has no vision_config: the same tower."""
    data = {key: value for key, value in config().items() if key != "vision_config"}
    m = model_from_config(data, source="dots-vlm-no-vision-config")
    assert m.tower is not None and m.tower.params * 2 == tower(1)
