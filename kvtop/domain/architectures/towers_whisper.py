"""Whisper's audio encoder (WhisperForConditionalGeneration, model_type whisper): the encoder fields sit at the
config's top level beside the decoder's (the entry, table_encdec.py), and both engines build it the same way.

vLLM 0.33.0 models/whisper.py WhisperEncoder and SGLang 0.5.23 srt/models/whisper.py WhisperEncoder: conv1
num_mel_bins → d_model and conv2 d_model → d_model (nn.Conv1d, kernel 3, biased); embed_positions, an nn.Embedding
of max_source_positions × d_model; encoder_layers layers of an attention — qkv_proj a QKVParallelLinear with
bias=True (q, k and v biased: the checkpoint has no k_proj bias, so the engines hold one it does not fill:
`TowerSpec.k_bias_params`), out_proj a RowParallelLinear, biased; both assert encoder_attention_heads divide by TP —
two nn.LayerNorms, fc1 ColumnParallelLinear and fc2 RowParallelLinear, biased; then layer_norm. Column layers and
their biases and Row weights split over TP (each engine's `TowerSplit.blocks["WhisperEncoder"]`); a Row bias, the
norms, the convs and the position table whole. Measured (the engines' meta builds, registry sweep): whisper-small
176,326,656 B at TP 1, 91,327,488 B a rank at TP 2; whisper-large-v3 1,274,019,840 B and 644,587,520 B (both
engines' `encoder` bytes, tests/domain/test_whisper.py by hand).
"""

from __future__ import annotations

from kvtop.domain.architectures.towers_audio import WhisperEncoderFields, whisper_encoder
from kvtop.domain.config_types import ConfigSection, Heads
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "WhisperConfig (the encoder's fields)"
SOURCE = "vLLM 0.33.0 model_executor/models/whisper.py; SGLang 0.5.23 srt/models/whisper.py (WhisperEncoder)"
ENCODER = "WhisperEncoder"  # the block class each engine's TowerSplit.blocks names
LABEL = "the audio encoder (Whisper's, beside its decoder)"


class WhisperHeadFields(ConfigSection):
    """WhisperConfig's encoder head count (transformers models/whisper: its class default 6 where absent)."""

    encoder_attention_heads: Heads = 6


def whisper_tower(sizes: WhisperEncoderFields, heads: WhisperHeadFields) -> TowerSpec:
    """The encoder as both engines build it (module docstring): transformers' parameters, the K bias beside."""
    d, ffn, layers = sizes.d_model, sizes.encoder_ffn_dim, sizes.encoder_layers
    mlp = layers * (d * ffn + ffn + ffn * d)  # fc1 with its bias, fc2's weight
    blocks = layers * (3 * d * d + 2 * d + d * d) + mlp  # q, k, v with q's and v's biases, out_proj's weight
    return TowerSpec(params=whisper_encoder(sizes), tp_split_params=0, config_class=CONFIG_CLASS, source=SOURCE,
                     head_split_params=blocks, head_split_mlp_params=mlp, heads=heads.encoder_attention_heads,
                     block_mlp_width=ffn, block_class=ENCODER, k_bias_params=layers * d, label=LABEL,
                     kind="audio")  # fmt: skip
