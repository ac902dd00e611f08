"""DeepSeek-OCR's vision encoders and projector (DeepseekOCRForCausalLM, outer model_type deepseek_vl_v2), counted
as SGLang 0.5.23 and vLLM 0.33.0 deepseek_ocr.py build them.

Both engines build the two encoders from constants in their code, not from `vision_config`:
- SAM ViT-B (`build_sam_vit_b`: SGLang deepseek_ocr.py, vLLM deepencoder.py): a 16×16 Conv2d patch embedding
  3 → 768 with bias, a 64×64×768 position table, 12 blocks (two LayerNorms, qkv 768 → 3 × 768 and proj with biases,
  relative position tables of (2 × 14 − 1) × 64 rows each, 64 in the global blocks 2, 5, 8 and 11, MLP 768 → 3072
  → 768 with biases), a neck (1×1 Conv2d 768 → 256, LayerNorm2d, 3×3 Conv2d 256 → 256, LayerNorm2d) and two 3×3
  Conv2d 256 → 512 → 1024, no biases: all nn.Linear / nn.Conv2d, whole on every rank.
- CLIP-L/14 at 224 (SGLang `build_clip_l`, vLLM `DeepCLIPVisionTransformer` over a CLIPVisionConfig of the same
  sizes): a class embedding, a 14×14 Conv2d patch embedding 3 → 1024 without bias, 257 positions, a pre-LayerNorm
  and 24 blocks (two LayerNorms, qkv and out projections with biases, MLP 1024 → 4096 → 1024 with biases).
  SGLang builds its blocks from nn.Linear (NoTPAttention, NoTPFeedForward: whole, `TowerSplit.whole_blocks`);
  vLLM from clip.py's CLIPEncoder (QKVParallelLinear, RowParallelLinear, ColumnParallelLinear: qkv with its bias,
  out_proj's weight, fc1 with its bias and fc2's weight split over TP with the 16 heads).
- The projector (`MlpProjector` of `projector_config`): "linear" is one nn.Linear input_dim → n_embed with bias
  (whole); and two n_embed parameters, `image_newline` and `view_seperator` (tile_tag "2D").
SGLang 0.5.23's meta build of deepseek-ai/DeepSeek-OCR (`registry_sweep.py --params deepseek-ai--DeepSeek-OCR`):
802,744,320 B of tower and projector in bfloat16 at TP 1 and a rank at TP 2. vLLM 0.33.0's build of the config is
not measured here (the harness cannot build it: its processor asks the tokenizer a config folder lacks).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.architectures.towers_vit import vit_blocks
from kvtop.domain.config_types import ConfigSection, Hidden, Name
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "VisionEncoderConfig"  # SGLang 0.5.23 configs/deepseek_ocr.py: the vision_config class
SOURCE = "SGLang 0.5.23 models/deepseek_ocr.py; vLLM 0.33.0 models/deepseek_ocr.py, deepencoder.py"
CLASS_NAME = "DeepseekOCRForCausalLM"  # the engines build these encoders for this class only

# SAM ViT-B (build_sam_vit_b) and CLIP-L/14-224 (build_clip_l): the engines' constants
SAM_WIDTH, SAM_DEPTH, SAM_HEADS, SAM_MLP, SAM_PATCH, SAM_IMAGE = 768, 12, 12, 3072, 16, 1024
SAM_WINDOW, SAM_GLOBAL_BLOCKS, SAM_NECK, SAM_NET_2, SAM_NET_3 = 14, (2, 5, 8, 11), 256, 512, 1024
CLIP_WIDTH, CLIP_DEPTH, CLIP_HEADS, CLIP_MLP, CLIP_PATCH, CLIP_IMAGE = 1024, 24, 16, 4096, 14, 224


class DeepseekOCRProjectorFields(ConfigSection):
    """`projector_config` (SGLang 0.5.23 configs/deepseek_ocr.py MlpProjectorConfig: its defaults where absent)."""

    projector_type: Name = "downsample_mlp_gelu"
    input_dim: Hidden = 1152
    n_embed: Hidden = 2048


def sam_vit_b() -> int:
    """SAM ViT-B's parameters: patch embedding, position table, 12 blocks, neck and the two downsampling convs."""
    width, grid, head_dim = SAM_WIDTH, SAM_IMAGE // SAM_PATCH, SAM_WIDTH // SAM_HEADS
    params = 3 * SAM_PATCH**2 * width + width + grid * grid * width
    for block in range(SAM_DEPTH):
        span = (
            grid if block in SAM_GLOBAL_BLOCKS else SAM_WINDOW
        )  # relative positions: 2 × span − 1 rows, h and w
        params += 2 * 2 * width + 3 * width * width + 3 * width + width * width + width
        params += 2 * (2 * span - 1) * head_dim + width * SAM_MLP + SAM_MLP + SAM_MLP * width + width
    params += (
        width * SAM_NECK + 2 * SAM_NECK + SAM_NECK * SAM_NECK * 9 + 2 * SAM_NECK
    )  # neck: convs, LayerNorm2d
    return params + SAM_NECK * SAM_NET_2 * 9 + SAM_NET_2 * SAM_NET_3 * 9


def clip_l_split() -> int:
    """CLIP-L's block parameters vLLM splits over TP: qkv with its bias, out_proj's weight, fc1 with its bias, fc2's
    weight."""
    return vit_blocks(CLIP_DEPTH, CLIP_WIDTH, CLIP_MLP)[1]


def clip_l() -> int:
    """CLIP-L's parameters: class embedding, patch embedding, positions, pre-LayerNorm and 24 blocks."""
    width, positions = CLIP_WIDTH, (CLIP_IMAGE // CLIP_PATCH) ** 2 + 1
    whole = width + 3 * CLIP_PATCH**2 * width + positions * width + 2 * width
    blocks_whole, blocks_split = vit_blocks(CLIP_DEPTH, width, CLIP_MLP)
    return whole + blocks_whole + blocks_split


def deepseek_ocr(outer: Mapping[str, Any], projector: DeepseekOCRProjectorFields) -> TowerSpec | None:
    """The encoders and projector (whole model); None for another class over deepseek_vl_v2 (DeepSeek-VL2's SigLIP
    is not this kind) or a projector other than "linear" (the note stays)."""
    if CLASS_NAME not in (outer.get("architectures") or ()) or projector.projector_type != "linear":
        return None
    head = projector.input_dim * projector.n_embed + projector.n_embed + 2 * projector.n_embed
    return TowerSpec(params=sam_vit_b() + clip_l() + head, tp_split_params=0, config_class=CONFIG_CLASS,
                     source=SOURCE, head_split_params=clip_l_split(), heads=CLIP_HEADS)  # fmt: skip
