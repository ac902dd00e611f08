"""MiDashengLM's Dasheng audio transformer and subsampling projector (MiDashengLMModel, outer model_type
`midashenglm`), counted as vLLM 0.33.0 and SGLang 0.5.23 models/midashenglm.py build them from
`audio_encoder_config` (a DashengConfig: its class defaults where a field or the section is absent).

DashengAudioTransformer (both engines the same modules):
- `front_end` DashengFrontend: a Hann window and mel filter bank, buffers (no parameter);
- `init_bn` BatchNorm2d(n_mels): weight and bias (its running statistics are buffers);
- `patch_embed.proj` Conv2dLayer(input_channels → embed_dim, kernel patch_size, stride patch_stride), biased;
- `time_pos_embed` (embed_dim × the time grid, target_length ÷ patch_stride[1]) and `freq_pos_embed` (embed_dim ×
  the frequency grid, n_mels ÷ patch_stride[0]): parameters;
- `depth` DashengBlocks: norm1 and norm2 LayerNorms; the attention's fused qkv (3 × embed_dim², biased by
  qkv_bias) and its output projection (biased): vLLM DashengAttention QKVParallelLinear / RowParallelLinear (it
  asserts num_heads divide by TP), SGLang VisionAttention(use_qkv_parallel=True) the same split; the MLP fc1
  ColumnParallelLinear embed_dim → int(embed_dim × mlp_ratio) and fc2 RowParallelLinear back, biased; LayerScale
  gammas (embed_dim each, two a block) only where init_values is set;
- `norm` LayerNorm.
Column layers with their biases and Row weights split over TP (`TowerSplit.blocks["DashengAudioTransformer"]`, both
engines "always": their attention asserts the heads divide); a Row bias, the norms, the conv, the BatchNorm and
the position tables whole.
AudioProjectorSubsample: net.0 ColumnParallelLinear (embed_dim × subsample_factor → text width) and net.2
RowParallelLinear (text → text). vLLM 0.33.0 builds both with their default bias=True (net.0's bias split, net.2's
whole): `TowerSpec.projector_bias_*`, built where `TowerSplit.projector_bias` names the tower; SGLang 0.5.23 passes
bias=False. The language model is Qwen2ForCausalLM over `text_config` (nesting.FIXED_TEXT): vLLM's child
`decoder`, SGLang's `language_model`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from kvtop.domain.architectures.towers_fields import Tower
from kvtop.domain.config_types import ConfigSection, Dim, Flag, Heads, Hidden, Layers
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "DashengConfig"
SOURCE = "vLLM 0.33.0 / SGLang 0.5.23 models/midashenglm.py; vLLM 0.33.0 transformers_utils/configs/midashenglm.py"
OUTER_TYPE = "midashenglm"
ENCODER = "DashengAudioTransformer"  # the block class each engine's TowerSplit.blocks names (both: split always)

# an int, or [frequency, time] (midashenglm.py _resolve_tuple2 asserts two)
Pair = Dim | Annotated[list[Dim], Field(min_length=2, max_length=2)]


class DashengFields(ConfigSection):
    """DashengConfig's fields that size the encoder (vLLM 0.33.0 configs/midashenglm.py: its class defaults)."""

    embed_dim: Hidden = 768
    depth: Layers = 12
    num_heads: Heads = 12
    mlp_ratio: float = Field(default=4.0, gt=0, le=64)
    qkv_bias: Flag = True
    init_values: float | None = Field(default=None, ge=0, le=1e6)
    patch_size: Pair = 16
    patch_stride: Pair = 16
    input_channels: Dim = 1
    target_length: Dim = 1012
    n_mels: Dim = 64


class MiDashengOuterFields(ConfigSection):
    """MiDashengLMConfig's `subsample_factor` (its class default 5): the projector's input is that many frames."""

    subsample_factor: Dim = 5


def _pair(value: int | list[int]) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else (value[0], value[1])


def midashenglm(dasheng: DashengFields, outer: MiDashengOuterFields, text_hidden: int) -> TowerSpec:
    """The Dasheng audio transformer and the projector as the engines build them (module docstring)."""
    d, layers = dasheng.embed_dim, dasheng.depth
    ffn = int(d * dasheng.mlp_ratio)
    (patch_f, patch_t), (stride_f, stride_t) = _pair(dasheng.patch_size), _pair(dasheng.patch_stride)
    qkv_bias = 3 * d if dasheng.qkv_bias else 0
    mlp = layers * (d * ffn + ffn + ffn * d)  # fc1 with its bias, fc2's weight
    blocks = layers * (3 * d * d + qkv_bias + d * d) + mlp  # qkv (its bias), proj's weight
    whole = 2 * dasheng.n_mels + dasheng.input_channels * patch_f * patch_t * d + d  # init_bn, patch_embed.proj
    whole += d * (dasheng.target_length // stride_t) + d * (dasheng.n_mels // stride_f)  # time, freq position tables
    scales = 2 * d if dasheng.init_values else 0  # ls1, ls2
    whole += layers * (2 * 2 * d + d + d + scales) + 2 * d  # norm1, norm2, proj's and fc2's biases; the final norm
    projector = d * outer.subsample_factor * text_hidden + text_hidden * text_hidden  # net.0, net.2 (weights)
    return TowerSpec(params=whole + blocks + projector, tp_split_params=projector, config_class=CONFIG_CLASS,
                     source=SOURCE, head_split_params=blocks, head_split_mlp_params=mlp, heads=dasheng.num_heads,
                     block_mlp_width=ffn, block_class=ENCODER, projector_bias_split_params=text_hidden,
                     projector_bias_whole_params=text_hidden)  # fmt: skip


# DashengConfig's class defaults where audio_encoder_config leaves a field out, and where the file has none
# (MiDashengLMConfig: DashengConfig(**(audio_encoder_config or {})))
TOWER = Tower(CONFIG_CLASS, SOURCE, kind="dasheng", section="audio_encoder_config", audio_counted=True,
              absent_default={})  # fmt: skip
