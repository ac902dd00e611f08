"""Kimi-K2.5's vision tower (MoonViT3d) and its patch-merger projector, counted as vLLM 0.33.0 builds and shards
them (towers.py picks this kind by the outer model_type `kimi_k25`, and for Kimi-VL's MoonViT, `kimi_vl`: vLLM
moonvit.py and kimi_vl.py hold the same parameters, the time table being a K2.5 buffer).

vLLM kimi_k25_vit.py: a Conv2d patch embedding with bias, a learned position table height × width × width (the
time table is a buffer), blocks of two LayerNorms, wqkv and wo with biases, fc0 and fc1 with biases, a final
LayerNorm; the projector (`patchmerger`) a LayerNorm over the width, linear_1 (width × merge² → the same) and
linear_2 (→ the language model's width), with biases, both ReplicatedLinear (whole). The blocks' wqkv (with its
bias) and fc0 (with its bias) are column-parallel, wo and fc1 row-parallel (their biases whole), all only where
the heads divide by TP (`is_vit_use_data_parallel(num_heads)`: else the tower runs whole on every rank).
SGLang 0.5.23's kimi_k25.py splits the attention alike (VisionAttention) but builds the MLP2 nn.Linear (whole):
`head_split_mlp_params`, kept whole where the engine's TowerSplit says `block_mlp_whole`; its kimi_vl.py (Kimi-VL's
MoonViT, kimi_vl_moonvit.py) splits that MLP with the heads (`use_tensor_parallel`), so Kimi-VL's has none.
Kimi-K3's variants (RMSNorms, no biases, a wider qkv, `patchmergerv2`) are not this reading: None, said; Kimi-K3's
own tower (`kimi_k3` below) reads them.

Kimi-K3 (`KimiK3VisionConfig`, vLLM 0.33.0 transformers_utils/configs/kimi_k3.py; its defaults where absent): vLLM
0.33.0 kimi_k3/nvidia/model.py builds kimi_k25_vit.py's MoonViT3dPretrainedModel from it — an unbiased Conv2d patch,
the height × width × width table, blocks of two RMSNorms (weight), wqkv width → 3 × qkv_hidden_size and wo back,
fc0 / fc1, biases by `attn_bias` / `linear_bias`, a final RMSNorm — its block linears QKV/Row/Column/Row-parallel
where the heads divide by TP (else whole); KimiK25MultiModalProjector's `patchmergerv2` two unbiased
ReplicatedLinears (width × merge² → the same → text) and a post RMSNorm over the text width, whole. SGLang 0.5.23
kimi_k3_vl.py (KimiK3VisionTower, KimiK3MultiModalProjector) builds the same tensors, every one nn.Linear: whole on
every rank (its TowerSplit.whole_blocks). moonshotai--Kimi-K3 meta-built: vision_tower 802,428,928 B and
mm_projector 92,289,024 B at TP 1 in both; at TP 2 vLLM's vision_tower 406,067,200 B a rank, SGLang's unchanged.
"""

from __future__ import annotations

from pydantic import AliasChoices, Field

from kvtop.domain.config_types import ConfigSection, Dim, Flag, Heads, Hidden, Intermediate, Layers, Name
from kvtop.domain.tower_spec import TowerSpec

_PAIR = Field(default=[2, 2], min_length=2, max_length=2)


class MoonVitFields(ConfigSection):
    """Kimi_K25VisionConfig's fields (`vt_*` in the checkpoints; the class's defaults where absent)."""

    hidden_size: Hidden = Field(default=1152, validation_alias=AliasChoices("vt_hidden_size", "hidden_size"))
    intermediate_size: Intermediate = Field(
        default=4304, validation_alias=AliasChoices("vt_intermediate_size", "intermediate_size")
    )
    heads: Heads = Field(default=16, validation_alias=AliasChoices("vt_num_attention_heads", "num_attention_heads"))
    depth: Layers = Field(default=27, validation_alias=AliasChoices("vt_num_hidden_layers", "num_hidden_layers"))
    patch_size: Dim = 14
    pos_height: Dim = Field(default=64, validation_alias=AliasChoices("init_pos_emb_height", "pos_emb_height"))
    pos_width: Dim = Field(default=64, validation_alias=AliasChoices("init_pos_emb_width", "pos_emb_width"))
    merge_kernel_size: list[Dim] = _PAIR
    mm_projector_type: Name = "patchmerger"
    norm_type: Name = "layernorm"
    attn_bias: Flag = True
    linear_bias: Flag = True
    patch_embed_proj_bias: Flag = True
    qkv_hidden_size: Hidden | None = None


def moon_vit(
    fields: MoonVitFields,
    text_hidden: int,
    config_class: str,
    source: str,
    *,
    mlp_split_everywhere: bool = False,
) -> TowerSpec | None:
    """The tower and projector's parameters (None where the config is one of Kimi-K3's variants); the block MLPs
    split with the heads in every engine where `mlp_split_everywhere` (Kimi-VL's MoonViT)."""
    k3 = (fields.mm_projector_type != "patchmerger" or fields.norm_type != "layernorm" or not fields.attn_bias
          or not fields.linear_bias or not fields.patch_embed_proj_bias or fields.qkv_hidden_size is not None)  # fmt: skip
    if k3:
        return None
    width, mlp, depth = fields.hidden_size, fields.intermediate_size, fields.depth
    merged = width * fields.merge_kernel_size[0] * fields.merge_kernel_size[1]
    whole = 3 * fields.patch_size**2 * width + width + fields.pos_height * fields.pos_width * width
    whole += depth * (2 * 2 * width + width + width) + 2 * width  # two LayerNorms, wo's and fc1's biases; final
    whole += 2 * width + merged * merged + merged + merged * text_hidden + text_hidden  # the projector
    mlps = depth * (width * mlp + mlp + mlp * width)  # fc0 (with its bias) and fc1
    blocks = depth * (3 * width * width + 3 * width + width * width) + mlps
    return TowerSpec(params=whole + blocks, tp_split_params=0, head_split_params=blocks, heads=fields.heads,
                     head_split_mlp_params=0 if mlp_split_everywhere else mlps, config_class=config_class, source=source)  # fmt: skip



class KimiK3VisionFields(ConfigSection):
    """KimiK3VisionConfig's fields (its class defaults where absent: vLLM 0.33.0 configs/kimi_k3.py)."""

    hidden_size: Hidden = Field(default=1024, validation_alias=AliasChoices("vt_hidden_size", "hidden_size"))
    intermediate_size: Intermediate = Field(
        default=4096, validation_alias=AliasChoices("vt_intermediate_size", "intermediate_size")
    )
    heads: Heads = Field(default=12, validation_alias=AliasChoices("vt_num_attention_heads", "num_attention_heads"))
    depth: Layers = Field(default=27, validation_alias=AliasChoices("vt_num_hidden_layers", "num_hidden_layers"))
    patch_size: Dim = 14
    pos_height: Dim = Field(default=64, validation_alias=AliasChoices("init_pos_emb_height", "pos_emb_height"))
    pos_width: Dim = Field(default=64, validation_alias=AliasChoices("init_pos_emb_width", "pos_emb_width"))
    merge_kernel_size: list[Dim] = _PAIR
    mm_projector_type: Name = "patchmergerv2"
    norm_type: Name = "rmsnorm"
    attn_bias: Flag = False
    linear_bias: Flag = False
    patch_embed_proj_bias: Flag = False
    qkv_hidden_size: Hidden = 1536
    mm_hidden_size: Hidden | None = None  # the projector's input width (None: the tower's)
    text_hidden_size: Hidden | None = None  # SGLang's projector output width (vLLM's: the text model's)


def kimi_k3(fields: KimiK3VisionFields, text_hidden: int, config_class: str, source: str) -> TowerSpec | None:
    """Kimi-K3's tower and projector; None (the note stays) where the engines would build them apart: a projector
    other than `patchmergerv2` or a norm other than RMSNorm (vLLM's K2.5 projector, SGLang's K3 one), a projector
    input other than the tower's width (SGLang reads `mm_hidden_size`, vLLM the tower's), or a `text_hidden_size`
    other than the text model's (SGLang's projector output, vLLM's the text model's)."""
    if fields.mm_projector_type != "patchmergerv2" or fields.norm_type != "rmsnorm":
        return None
    if fields.mm_hidden_size not in (None, fields.hidden_size):
        return None
    if fields.text_hidden_size not in (None, text_hidden):
        return None
    width, mlp, depth, qkv = fields.hidden_size, fields.intermediate_size, fields.depth, fields.qkv_hidden_size
    merged = width * fields.merge_kernel_size[0] * fields.merge_kernel_size[1]
    whole = 3 * fields.patch_size**2 * width + (width if fields.patch_embed_proj_bias else 0)
    whole += fields.pos_height * fields.pos_width * width + depth * 2 * width + width  # the table; RMSNorms
    attention = width * 3 * qkv + qkv * width + (3 * qkv if fields.attn_bias else 0)  # wqkv (bias split), wo
    whole += depth * (width if fields.attn_bias else 0)  # wo's bias
    mlps = depth * (width * mlp + mlp * width + (mlp if fields.linear_bias else 0))  # fc0 (bias split), fc1
    whole += depth * (width if fields.linear_bias else 0)  # fc1's bias
    whole += merged * merged + merged * text_hidden + text_hidden  # patchmergerv2 and its post RMSNorm
    blocks = depth * attention + mlps
    return TowerSpec(params=whole + blocks, tp_split_params=0, head_split_params=blocks, heads=fields.heads,
                     config_class=config_class, source=source)  # fmt: skip
