"""Gemma-4's audio encoder and its embedder (an `audio_config` checkpoint: E2B, E4B), booked beside the vision tower.

Both engines build it wherever the config has an `audio_config`, every release with Gemma-4: vLLM gemma4_mm.py
`AutoModel.from_config(config.audio_config)` and `embed_audio = Gemma4MultimodalEmbedder(...)` (v0.19.0 :896-902,
v0.21.0 :967-973, v0.28.0 :1084-1090, v0.30.0 :1130-1136, v0.33.0 :1122-1128, v0.34.0 :1141-1147), its nn.Linear
layers made ReplicatedLinear (`recursive_replace_linear`: whole on every rank); SGLang gemma4_mm.py
`Gemma4AudioEncoder` (0.5.11 :193-198, 0.5.23 :213-223), its linears Column/Row/QKV-parallel and the light conv's
depthwise Conv1d and conv_norm built over hidden ÷ TP channels (gemma4_audio.py 0.5.11 :663-674, 0.5.23 :660-671):
split over TP (`TowerSpec.replicated_params`, as the vision blocks').

transformers' Gemma4AudioModel (models/gemma4/modeling_gemma4.py), every linear unbiased but output_proj:
- subsample_conv_projection: two Conv2d 3 × 3 (unbiased, 1 → c0 → c1 channels), each with a LayerNorm's weight,
  then input_proj_linear (c0 ÷ 4 × c1 → hidden);
- num_hidden_layers Conformer layers: two feed-forwards (ffw_layer_1 h → 4h, ffw_layer_2 back, two RMSNorms), an
  attention (q, k, v, post h → h; relative_k_proj h → h; per_dim_scale of head_dim), a light conv (linear_start
  h → 2h, a depthwise Conv1d of conv_kernel_size, linear_end h → h, two RMSNorms) and three RMSNorms;
  `use_clipped_linears` gives each of the ten clippable linears four scalar bounds (input/output min/max);
- output_proj (hidden → output_proj_dims, biased); embed_audio's embedding_projection (output_proj_dims → text
  hidden; its norm has no weight).
google/gemma-4-E2B's (hidden 1,024, 12 layers, channels 128/32, output 1,536, text 1,536): 307,184,384
parameters, 614,368,768 B in BF16 — the QAT checkpoint's header keeps 0.614 GB of audio tensors in BF16
(tests/data/calibration/SOURCES.md, session 67 helper G).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.config_schema import validated
from kvtop.domain.config_types import ConfigSection, Dim, Flag, Heads, Hidden, Layers
from kvtop.domain.tower_spec import TowerSpec

CLIPPED_LINEARS = 10  # a layer's Gemma4ClippableLinear: ffw_layer_1/2 twice, q, k, v, post, linear_start/end


class Gemma4AudioFields(ConfigSection):
    """Gemma4AudioConfig's fields the book reads (transformers models/gemma4/configuration_gemma4.py defaults)."""

    hidden_size: Hidden = 1024
    num_hidden_layers: Layers = 12
    num_attention_heads: Heads = 8
    subsampling_conv_channels: tuple[Dim, Dim] = (128, 32)
    conv_kernel_size: Dim = 5
    output_proj_dims: Dim = 1536
    use_clipped_linears: Flag = True


def audio_params(audio: Gemma4AudioFields, text_hidden: int) -> tuple[int, int]:
    """(the encoder's and embedder's parameters, of them what SGLang splits over TP: the linears but the
    embedder's, the light conv's depthwise conv and conv_norm)."""
    h, (c0, c1) = audio.hidden_size, audio.subsampling_conv_channels
    stem = 1 * c0 * 9 + c0 + c0 * c1 * 9 + c1  # two unbiased 3 × 3 convs and their LayerNorms' weights
    projection = c0 // 4 * c1 * h  # input_proj_linear
    layer_linears = 2 * 8 * h * h + 5 * h * h + 3 * h * h  # feed-forwards; q, k, v, post, relative_k; light conv
    bounds = 4 * CLIPPED_LINEARS if audio.use_clipped_linears else 0
    layer_split = layer_linears + h * audio.conv_kernel_size + h  # … and the depthwise conv, conv_norm
    layer_whole = 2 * 2 * h + h // audio.num_attention_heads + h + 3 * h + bounds  # norms, per_dim_scale
    output = h * audio.output_proj_dims
    split = projection + audio.num_hidden_layers * layer_split + output
    whole = stem + audio.num_hidden_layers * layer_whole + audio.output_proj_dims + audio.output_proj_dims * text_hidden
    return whole + split, split


def with_audio(vision: TowerSpec, outer: Mapping[str, Any], text_hidden: int, source: str) -> TowerSpec:
    """The vision tower's spec, with the audio encoder and its embedder joined where the config has `audio_config`."""
    section = outer.get("audio_config")
    if not isinstance(section, dict):
        return vision
    audio = validated(Gemma4AudioFields, section, source=source, prefix="audio_config.")
    params, split = audio_params(audio, text_hidden)
    # the row's words and kind are the tower's `vision_audio` (config_reader, towers_fields.ROW_WORDS)
    return vision.model_copy(update={"params": vision.params + params,
                                     "replicated_params": vision.replicated_params + split,
                                     "audio_params": params, "audio_replicated_params": split})  # fmt: skip
