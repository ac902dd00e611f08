"""Kanana-V's vision tower (KananaVForConditionalGeneration, vLLM 0.33.0 only): the Qwen2-VL ViT less its patch
merger, and the DynamicCAbstractor projector built from timm RegNet stages.

vLLM 0.33.0 models/kanana_v.py:
- `vision_model` is CustomQwen2VLVE(vision_config) (kanana_v.py:265-284): qwen2_vl.py's Qwen2VisionTransformer (the
  qwen2_vl kind counts it and splits it over TP) with `del self.merger`: the merger's LayerNorm(embed_dim) and its
  two linears (embed_dim·merge² → embed_dim·merge² → hidden_size) are not built.
- `abstractor` is DynamicCAbstractor(projector_config, num_input_tokens=-1) (kanana_v.py:126-190, 600-604), plain
  torch and timm modules, whole on every rank: `pos_emb` (1 × pos_emb_size × encoder_hidden_size, where pos_emb;
  get_num_tokens() is -1, so pos_emb_size rows), then where depth > 0 two timm RegStage(depth, in, hidden_size,
  stride=1, dilation=1, act_layer=SiLU, norm_layer=LayerNorm2d) stages (in = encoder_hidden_size, then
  merge_size² · hidden_size after the weightless PatchMerge) and the readout MLP of mlp_depth biased Linears
  (hidden_size → output_hidden_size, then output_hidden_size → output_hidden_size); at depth 0 the PatchMerge
  alone and the readout from encoder_hidden_size.
- timm 1.0.29 models/regnet.py Bottleneck(in, out) with RegStage's defaults (bottle_ratio 1, group_size 1,
  se_ratio 0.25, downsample "conv1x1"): conv1 1×1 in → out, conv2 3×3 depthwise (groups = out), SEModule(out,
  rd_channels = round(in × 0.25)) of two biased 1×1 convs, conv3 1×1 out → out, each conv unbiased with a
  LayerNorm2d (weight and bias); a 1×1 conv and LayerNorm2d shortcut where in ≠ out.
Meta-built (registry sweep, vLLM 0.33.0, the composed KananaVForConditionalGeneration.json: KananaVConfig's
published defaults): vision_model 1,262,366,720 B at TP 1 and 632,934,400 B a rank at TP 2; abstractor
56,413,824 B at both (tests/domain/test_towers_kanana.py).
"""

from __future__ import annotations

from pydantic import Field

from kvtop.domain.architectures.towers_fields import Tower
from kvtop.domain.config_types import ConfigSection, Dim, Flag, Hidden
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "KananaVVisionConfig"  # the checkpoint's configuration.py (kakaocorp/kanana-1.5-v-3b-instruct)
SOURCE = "vLLM 0.33.0 models/kanana_v.py (CustomQwen2VLVE less its merger, DynamicCAbstractor); timm 1.0.29 regnet.py"
SE_RATIO = 0.25  # timm Bottleneck's se_ratio default, which RegStage passes on


class KananaProjectorFields(ConfigSection):
    """`projector_config` as DynamicCAbstractor reads it; absent: KananaVVisualProjectorConfig's published
    __init__ defaults (the class fills them in as it reads the file)."""

    depth: int = Field(default=2, ge=0, le=64)
    encoder_hidden_size: Hidden = 1280
    hidden_size: Hidden = 1024
    output_hidden_size: Hidden = 2048
    mlp_depth: int = Field(default=2, ge=1, le=64)
    merge_size: Dim = 2
    pos_emb: Flag = True
    pos_emb_size: int = Field(default=576, ge=0)


def bottleneck(chs_in: int, chs_out: int) -> int:
    """One timm RegNet Bottleneck's parameters (LayerNorm2d norms, SiLU, the defaults RegStage passes)."""
    squeeze = round(chs_in * SE_RATIO)
    params = chs_in * chs_out + 2 * chs_out  # conv1 1×1 and its norm
    params += chs_out * 9 + 2 * chs_out  # conv2 3×3 depthwise and its norm
    params += (chs_out * squeeze + squeeze) + (squeeze * chs_out + chs_out)  # SE fc1, fc2 (biased)
    params += chs_out * chs_out + 2 * chs_out  # conv3 1×1 and its norm
    return params + (chs_in * chs_out + 2 * chs_out if chs_in != chs_out else 0)  # the conv1x1 shortcut


def reg_stage(depth: int, chs_in: int, chs_out: int) -> int:
    """timm RegStage: `depth` bottlenecks, the first from chs_in."""
    return sum(bottleneck(chs_in if i == 0 else chs_out, chs_out) for i in range(depth))


def abstractor(proj: KananaProjectorFields) -> int:
    """DynamicCAbstractor's parameters (all whole)."""
    params = proj.pos_emb_size * proj.encoder_hidden_size if proj.pos_emb else 0
    readout_in = proj.hidden_size if proj.depth else proj.encoder_hidden_size
    if proj.depth:
        params += reg_stage(proj.depth, proj.encoder_hidden_size, proj.hidden_size)
        params += reg_stage(proj.depth, proj.merge_size**2 * proj.hidden_size, proj.hidden_size)
    out = proj.output_hidden_size
    return params + readout_in * out + out + (proj.mlp_depth - 1) * (out * out + out)


def kanana_v(qwen: TowerSpec, embed_dim: int, merge: int, merger_out: int, proj: KananaProjectorFields) -> TowerSpec:
    """The Qwen2-VL ViT as the qwen2_vl kind counts it less the merger vLLM deletes, and the abstractor."""
    merged = embed_dim * merge * merge
    merger_split = merged * merged + merged + merged * merger_out  # mlp.0 with its bias, mlp.2's weight
    merger_whole = 2 * embed_dim + merger_out  # ln_q, mlp.2's bias
    return qwen.model_copy(update={
        "params": qwen.params - merger_split - merger_whole + abstractor(proj),
        "tp_split_params": qwen.tp_split_params - merger_split, "config_class": CONFIG_CLASS, "source": SOURCE,
    })  # fmt: skip


# the qwen2_vl kind's switches (towers_catalog.QWEN2_VL: LayerNorms, an unbiased Conv3d patch, no position table);
# KananaVVisionConfig's published defaults where vision_config leaves a field out
TOWER = Tower(
    CONFIG_CLASS, SOURCE,
    {"depth": 32, "in_channels": 3, "patch_size": 14, "temporal_patch_size": 2, "spatial_merge_size": 2},
    kind="kanana_v", patch_bias=False, position_table=False,
)  # fmt: skip
BY_OUTER_TYPE = {"kanana-1.5-v": TOWER}
