"""MOSS-Audio's encoder, adapter and deepstack mergers (`moss_audio`, below) and MOSS-Transcribe-Diarize's audio
encoder and adaptor (MossTranscribeDiarizeForConditionalGeneration, outer model_type
moss_transcribe_diarize), counted as vLLM 0.33.0 models/moss_transcribe_diarize.py builds them (SGLang registers no
such class).

- `whisper_encoder` (MossTranscribeDiarizeWhisperEncoder, vLLM's whisper.py WhisperEncoder over `audio_config`, a
  WhisperConfig: its class defaults where absent): conv1 num_mel_bins → d_model and conv2 d_model → d_model, kernel 3,
  biased; embed_positions, max_source_positions × d_model (an nn.Embedding filled with sinusoids); encoder_layers
  layers of WhisperAttention — qkv_proj a QKVParallelLinear with bias=True (a K bias the checkpoint lacks:
  load_weights makes a zero one; `TowerSpec.k_bias_params`), out_proj RowParallelLinear biased; it asserts
  encoder_attention_heads divide by TP — two LayerNorms, fc1 ColumnParallelLinear and fc2 RowParallelLinear, biased;
  then layer_norm. Column layers and their biases and Row weights split over TP (`TowerSplit.blocks["WhisperEncoder"]`),
  a Row bias, the norms, the convs and the position table whole.
- `vq_adaptor` (MossTranscribeDiarizeVQAdaptor): nn.Linear adaptor_input_dim → text width and text → text, biased,
  and a LayerNorm of the text width (weight, bias): whole.
The language model is Qwen3ForCausalLM over `text_config` (nesting.FIXED_TEXT). The MOSS-Transcribe-Diarize
reconstruction (tests/data/configs/recon): whisper_encoder 614,481,920 B at TP 1, 312,320,000 B a rank at TP 2;
vq_adaptor 10,493,952 B (tests/domain/test_towers_moss.py).
"""

from __future__ import annotations

from pydantic import Field

from kvtop.domain.architectures.towers_audio import WhisperEncoderFields, whisper_encoder
from kvtop.domain.config_types import ConfigSection, Dim, Heads
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "MossTranscribeDiarizeConfig (audio_config: WhisperConfig)"
SOURCE = (
    "vLLM 0.33.0 models/moss_transcribe_diarize.py, models/whisper.py, models/moss_audio.py, "
    "transformers_utils/configs/moss_transcribe_diarize.py"
)
ENCODER = "WhisperEncoder"  # the block class vLLM's TowerSplit.blocks names (whisper.py)


class MossWhisperFields(ConfigSection):
    """WhisperConfig's head count (its class default 6 where absent)."""

    encoder_attention_heads: Heads = 6


class MossOuterFields(ConfigSection):
    """MossTranscribeDiarizeConfig's adaptor fields (its class defaults: audio_merge_size 4; adaptor_input_dim
    d_model × audio_merge_size where absent)."""

    audio_merge_size: Dim = 4
    adaptor_input_dim: Dim | None = Field(default=None)


def moss_transcribe_diarize(
    sizes: WhisperEncoderFields, heads: MossWhisperFields, outer: MossOuterFields, text_hidden: int
) -> TowerSpec:
    """The Whisper encoder and the VQ adaptor as vLLM builds them (module docstring)."""
    d, ffn, layers = sizes.d_model, sizes.encoder_ffn_dim, sizes.encoder_layers
    mlp = layers * (d * ffn + ffn + ffn * d)  # fc1 with its bias, fc2's weight
    blocks = layers * (3 * d * d + 2 * d + d * d) + mlp  # q, k, v with q's and v's biases, out_proj's weight
    adaptor_in = outer.adaptor_input_dim or d * outer.audio_merge_size
    adaptor = (
        adaptor_in * text_hidden + text_hidden + text_hidden * text_hidden + text_hidden + 2 * text_hidden
    )
    return TowerSpec(params=whisper_encoder(sizes) + adaptor, tp_split_params=0, config_class=CONFIG_CLASS,
                     source=SOURCE, head_split_params=blocks, head_split_mlp_params=mlp,
                     heads=heads.encoder_attention_heads, block_mlp_width=ffn, block_class=ENCODER,
                     k_bias_params=layers * d)  # fmt: skip


# MOSS-Audio (MossAudioModel, outer model_type moss_audio): vLLM 0.33.0 models/moss_audio.py builds, from
# `audio_config` (its MossAudioEncoderConfig dataclass: the defaults below where absent), MossAudioEncoder — three
# Conv2d 3 × 3 (1 → downsample_hidden_size, then → itself, biased), stem_proj (ReplicatedLinear downsample_hidden_size ×
# ⌈num_mel_bins ÷ 8⌉ → d_model, biased), a sinusoid buffer, encoder_layers layers of q (Column, biased), k (Column),
# v (Column, biased), out_proj (Row, biased), two LayerNorms, fc1 (Column) and fc2 (Row), biased, then layer_norm and
# out_proj (ReplicatedLinear d_model → output_dim, unbiased) only where they differ; it raises unless
# encoder_attention_heads divide by TP. Then audio_adapter and one deepstack merger per deepstack_encoder_layer_indexes
# entry (at most deepstack_num_inject_layers): GatedMLP output_dim → 2 × adapter_hidden_size (MergedColumn) → the text
# width (Row), unbiased, split. The language model: Qwen3 over `language_config` (MossQwen3ForCausalLM).
MOSS_AUDIO_ENCODER = "MossAudioEncoder"  # the block class vLLM's TowerSplit.blocks names


class MossAudioEncoderFields(ConfigSection):
    """MossAudioEncoderConfig's fields (vLLM 0.33.0 moss_audio.py: its defaults where absent)."""

    d_model: Dim = 1280
    output_dim: Dim = 1280
    num_mel_bins: Dim = 128
    encoder_layers: Dim = 32
    encoder_attention_heads: Heads = 20
    encoder_ffn_dim: Dim = 5120
    downsample_hidden_size: Dim = 480
    deepstack_encoder_layer_indexes: tuple[int, ...] = (8, 16, 24)


class MossAudioOuterFields(ConfigSection):
    """MossAudioConfig's adapter fields (its defaults: adapter_hidden_size 8192, deepstack_num_inject_layers None)."""

    adapter_hidden_size: Dim = 8192
    deepstack_num_inject_layers: int | None = Field(default=None, ge=0)


def moss_audio(audio: MossAudioEncoderFields, outer: MossAudioOuterFields, text_hidden: int) -> TowerSpec:
    """MOSS-Audio's encoder, adapter and deepstack mergers as vLLM builds them (the comment above)."""
    d, ffn, layers, stem = (
        audio.d_model,
        audio.encoder_ffn_dim,
        audio.encoder_layers,
        audio.downsample_hidden_size,
    )
    convs = stem * 9 + stem + 2 * (stem * stem * 9 + stem)
    whole = convs + stem * ((audio.num_mel_bins + 7) // 8) * d + d  # stem_proj
    whole += (
        layers * (d + 2 * 2 * d + d) + 2 * d
    )  # out_proj's and fc2's biases, two LayerNorms; the final LayerNorm
    whole += d * audio.output_dim if audio.output_dim != d else 0
    mlp = layers * (d * ffn + ffn + ffn * d)  # fc1 with its bias, fc2's weight
    blocks = (
        layers * (d * d + d + d * d + d * d + d + d * d) + mlp
    )  # q, k, v (q and v biased), out_proj's weight
    mergers = len(audio.deepstack_encoder_layer_indexes)
    if outer.deepstack_num_inject_layers is not None:
        mergers = min(mergers, outer.deepstack_num_inject_layers)
    adapters = (1 + mergers) * (
        audio.output_dim * 2 * outer.adapter_hidden_size + outer.adapter_hidden_size * text_hidden
    )
    return TowerSpec(params=whole + blocks + adapters, tp_split_params=adapters, config_class="MossAudioEncoderConfig",
                     source=SOURCE, head_split_params=blocks, head_split_mlp_params=mlp,
                     heads=audio.encoder_attention_heads, block_mlp_width=ffn, block_class=MOSS_AUDIO_ENCODER)  # fmt: skip
