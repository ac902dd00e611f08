"""Voxtral's Whisper encoder and audio-language adapter (VoxtralForConditionalGeneration, outer model_type `voxtral`:
transformers' VoxtralConfig in config.json), counted as SGLang 0.5.23 srt/models/voxtral.py builds them.

- `audio_tower` VoxtralWhisperEncoder over `audio_config` (a VoxtralEncoderConfig: hidden_size, num_hidden_layers,
  intermediate_size, num_attention_heads, read as d_model, encoder_layers, encoder_ffn_dim, encoder_attention_heads
  through its attribute_map; its class defaults where a field is absent): conv1 num_mel_bins → d and conv2 d → d
  (nn.Conv1d, kernel 3, biased), embed_positions max_source_positions × d (nn.Embedding), `encoder_layers` layers of
  VoxtralWhisperAttention — qkv_proj a QKVParallelLinear with its default bias (q, k and v: a K bias the checkpoint
  lacks, `TowerSpec.k_bias_params`) and out_proj a RowParallelLinear, biased — two nn.LayerNorms, fc1
  ColumnParallelLinear and fc2 RowParallelLinear (biased), then layer_norm. Whisper's modules exactly
  (towers_audio.whisper_encoder) and split as SGLang's whisper.py splits them (`TowerSplit.blocks
  ["VoxtralWhisperEncoder"]`: Column layers, their biases and Row weights over TP; a Row bias, norms, convs and
  the position table whole).
- `multi_modal_projector` AudioLanguageAdapter: w_in nn.Linear(d × downsample_factor → the text width) and w_out
  nn.Linear(text → text), unbiased: whole. downsample_factor: audio_config's own where it states one, else
  intermediate_size ÷ hidden_size (voxtral.py: "Infer downsample_factor … for HF format"; 5120 ÷ 1280 = 4).
- `language_model` LlamaForCausalLM over `text_config` (nesting.FIXED_TEXT).

vLLM 0.33.0 voxtral.py builds the class from Mistral's params.json form only (`--config-format mistral`): it reads
`audio_config.downsample_factor`, which a transformers VoxtralEncoderConfig does not have, so a config.json is
refused there (engines/vllm/config_checks.PARAMS_JSON_ONLY_ERAS). From a params.json (kvtop: mistral_params, the
WhisperConfig _remap_mistral_audio_args makes, downsample_factor stated) it builds whisper.py's WhisperEncoder — the
same modules and split — with `init_in_fp32=True`: the position table in float32 (`float32_table_params`,
TowerSplit.float32_tables), and `whisper_encoder` / `audio_language_adapter` for the children's names.
"""

from __future__ import annotations

from pydantic import AliasChoices, Field

from kvtop.domain.architectures.towers_audio import WhisperEncoderFields, whisper_encoder
from kvtop.domain.architectures.towers_fields import Tower
from kvtop.domain.config_types import ConfigSection, Dim, Heads
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "VoxtralEncoderConfig"
SOURCE = "SGLang 0.5.23 srt/models/voxtral.py; transformers models/voxtral/configuration_voxtral.py"
OUTER_TYPE = "voxtral"
ENCODER = "VoxtralWhisperEncoder"  # the block class each engine's TowerSplit.blocks names
LABEL = "the audio encoder (Voxtral's Whisper encoder) and its adapter"
# VoxtralEncoderConfig's class defaults (transformers 5.19 configuration_voxtral.py), under towers_audio's names
DEFAULTS = {"d_model": 1280, "encoder_layers": 32, "encoder_ffn_dim": 5120, "num_mel_bins": 128,
            "max_source_positions": 1500}  # fmt: skip


class VoxtralEncoderHeads(ConfigSection):
    """VoxtralEncoderConfig's head count (num_attention_heads, default 20; the WhisperConfig vLLM makes of a
    params.json: encoder_attention_heads) and a stated downsample_factor."""

    num_attention_heads: Heads = Field(
        default=20, validation_alias=AliasChoices("num_attention_heads", "encoder_attention_heads")
    )
    downsample_factor: Dim | None = None


def voxtral(sizes: WhisperEncoderFields, heads: VoxtralEncoderHeads, text_hidden: int) -> TowerSpec:
    """The encoder and adapter as SGLang builds them (module docstring)."""
    d, ffn, layers = sizes.d_model, sizes.encoder_ffn_dim, sizes.encoder_layers
    factor = heads.downsample_factor or ffn // d
    mlp = layers * (d * ffn + ffn + ffn * d)  # fc1 with its bias, fc2's weight
    blocks = layers * (3 * d * d + 2 * d + d * d) + mlp  # q, k, v with q's and v's biases, out_proj's weight
    adapter = d * factor * text_hidden + text_hidden * text_hidden  # w_in, w_out (no bias)
    return TowerSpec(params=whisper_encoder(sizes) + adapter, tp_split_params=0, config_class=CONFIG_CLASS,
                     source=SOURCE, head_split_params=blocks, head_split_mlp_params=mlp,
                     heads=heads.num_attention_heads, block_mlp_width=ffn, block_class=ENCODER,
                     k_bias_params=layers * d, label=LABEL, kind="audio",
                     float32_table_params=sizes.max_source_positions * d)  # fmt: skip


# VoxtralConfig fills in VoxtralEncoderConfig() where the file has no audio_config
TOWER = Tower(CONFIG_CLASS, SOURCE, DEFAULTS, kind="voxtral", section="audio_config", audio_counted=True,
              absent_default={})  # fmt: skip
