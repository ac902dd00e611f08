"""DeepSeek-VL2's vision tower and projector (DeepseekVL2ForCausalLM in SGLang, DeepseekVLV2ForCausalLM in vLLM;
outer model_type deepseek_vl_v2, the tower kind DeepSeek-OCR shares), counted as SGLang 0.5.23 and vLLM 0.33.0
deepseek_vl2.py build them.

Both engines build the vision model from a constant, not from `vision_config`: `timm.create_model(
"vit_so400m_patch14_siglip_384.webli", num_classes=0, dynamic_img_size=True, dynamic_img_pad=True)` (SGLang
deepseek_vl2.py:231, vLLM deepseek_vl2.py:469): SigLIP so400m/14 at 384, width 1152, 27 blocks of 16 heads, MLP
int(1152 × 3.7362) = 4304, no class token, 27² learned positions, a final LayerNorm and timm's attention-pooling
head (`global_pool="map"`: a latent, q, kv and proj linears with biases, a LayerNorm and an MLP); num_classes=0 drops
only the classifier. SGLang keeps timm's nn.Linear (whole on every rank); vLLM at TP > 1 swaps every timm Mlp's fc1
for a ColumnParallelLinear and fc2 for a RowParallelLinear (`patch_vit_for_tp`, deepseek_vl2.py:426-447): fc1 with
its bias and fc2's weight split over TP (the 28 MLPs, 4304 = 16 × 269 wide, divide where the 16 heads do), fc2's
bias whole. The projector (`MlpProjector` of `projector_config`) is nn.Linear in vLLM and ReplicatedLinear in
SGLang, whole in both: "downsample_mlp_gelu" is input_dim·ratio² → n_embed·mlp_ratio, depth − 2 hidden layers,
then → n_embed, each with a bias; "linear" is input_dim → n_embed; and two n_embed vectors, `image_newline` and
`view_seperator` (tile_tag "2D"). Another projector type, or token_pooling (vLLM asserts it off), keeps the note.
SGLang 0.5.23's meta build of the registry default (`registry_sweep.py --set classes --only
default--DeepseekVL2ForCausalLM`, timm 1.0.29 installed --no-deps: benchmarks/engine_diff/engines.py TIMM):
vision 856,451,200 B, projector 27,271,168 B, image_newline and view_seperator 4,096 B each, at TP 1 and 2.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.architectures.towers_vit import siglip_pooling_head, vit_blocks
from kvtop.domain.config_types import ConfigSection, Hidden, Name
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "VisionEncoderConfig"  # vLLM 0.33.0 transformers_utils/configs/deepseek_vl2.py: the vision_config class
SOURCE = "SGLang 0.5.23 models/deepseek_vl2.py; vLLM 0.33.0 models/deepseek_vl2.py (timm vit_so400m_patch14_siglip_384)"
CLASS_NAMES = ("DeepseekVL2ForCausalLM", "DeepseekVLV2ForCausalLM")  # SGLang's, vLLM's

# timm's vit_so400m_patch14_siglip_384 (timm 1.0.29 vision_transformer.py): the engines' constant
WIDTH, DEPTH, HEADS, MLP, PATCH, IMAGE = 1152, 27, 16, 4304, 14, 384


class DeepseekVL2ProjectorFields(ConfigSection):
    """`projector_config` (SGLang 0.5.23 configs/deepseekvl2.py DeepseekVL2MlpProjectorConfig: its defaults)."""

    projector_type: Name = "downsample_mlp_gelu"
    input_dim: Hidden = 1152
    n_embed: Hidden = 2048
    depth: int = 2
    mlp_ratio: int = 1
    downsample_ratio: int = 2
    token_pooling: bool = False


def siglip() -> tuple[int, int]:
    """SigLIP so400m's parameters and those vLLM splits at TP > 1 (its 28 MLPs': 27 blocks and the pooling head)."""
    mlp_split = WIDTH * MLP + MLP + MLP * WIDTH  # one timm Mlp's fc1 with its bias and fc2's weight (vLLM's split)
    blocks = sum(vit_blocks(DEPTH, WIDTH, MLP))  # two LayerNorms, qkv / proj and fc1 / fc2 with biases
    embeddings = 3 * PATCH * PATCH * WIDTH + WIDTH + (IMAGE // PATCH) ** 2 * WIDTH
    pool = siglip_pooling_head(WIDTH, MLP)  # the latent, q / kv / proj with biases, its LayerNorm and MLP
    return embeddings + blocks + 2 * WIDTH + pool, (DEPTH + 1) * mlp_split


def projector(fields: DeepseekVL2ProjectorFields) -> int | None:
    """The MlpProjector's parameters (whole in both engines); None for a type or pooling not modelled."""
    if fields.token_pooling:
        return None
    if fields.projector_type == "linear":
        return fields.input_dim * fields.n_embed + fields.n_embed
    if fields.projector_type != "downsample_mlp_gelu":
        return None
    hidden = fields.n_embed * fields.mlp_ratio
    first = fields.input_dim * fields.downsample_ratio**2 * hidden + hidden
    middle = max(fields.depth - 2, 0) * (hidden * hidden + hidden)
    return first + middle + hidden * fields.n_embed + fields.n_embed


def deepseek_vl2(outer: Mapping[str, Any], fields: DeepseekVL2ProjectorFields) -> TowerSpec | None:
    """The SigLIP, the projector and the two separator vectors; None for another class over deepseek_vl_v2 or a
    projector not modelled (the note stays)."""
    if not set(CLASS_NAMES) & set(outer.get("architectures") or ()):
        return None
    head = projector(fields)
    if head is None:
        return None
    whole, mlp_split = siglip()
    return TowerSpec(params=whole + head + 2 * fields.n_embed, tp_split_params=0, config_class=CONFIG_CLASS,
                     source=SOURCE, head_split_params=mlp_split, heads=HEADS)  # fmt: skip
