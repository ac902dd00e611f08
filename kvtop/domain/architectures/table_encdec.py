"""Encoder-decoders the engines serve: Whisper (WhisperForConditionalGeneration, model_type whisper).

Whisper's decoder is the entry's language model: decoder_layers layers of a self-attention (q, k, v and out_proj,
every head its own K and V: vLLM 0.33.0 whisper.py WhisperAttention's QKVParallelLinear with bias=True, SGLang
0.5.23 whisper.py's the same; the checkpoint's k_proj has no bias, the engines hold a zero one), an encoder_attn
over the encoder's states (`BodyShape.cross_attention`: q_proj, a merged k|v, out_proj, biased), three LayerNorms and
an ungated fc1 / fc2 MLP (decoder_ffn_dim), biased; embed_tokens a plain nn.Embedding (whole on every rank: each
engine's `TowerSplit.whole_embedding`), embed_positions a learned max_target_positions × d_model table, a final
LayerNorm. vLLM ties proj_out to embed_tokens; SGLang builds proj_out a ParallelLMHead of its own (padded, split:
engines/sglang/pp_parts.py). The encoder is the tower (towers_whisper, the top-level fields). Its KV each engine
keeps its own way (kv.py `KvStorage.encoder_decoder`): vLLM the cross-attention layers a group of their own, a request
holding max_num_encoder_input_tokens of them (engines/vllm/encdec.py); SGLang the encoder's and the cross-attention
layers more layers of the one token pool (`ModelSpec.encoder_layers`); another engine refuses by name.

Defaults: transformers v5.24.0 models/whisper/configuration_whisper.py WhisperConfig (the whisper-tiny sizes).
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.architectures import towers_whisper
from kvtop.domain.architectures.defaults import DefaultValue, tf
from kvtop.domain.architectures.description import Architecture, Attention, Geometry
from kvtop.domain.architectures.towers_fields import ROOT, Tower
from kvtop.domain.model import BodyShape

# WhisperConfig's class defaults (the decoder's; the encoder's are towers_audio.WhisperEncoderFields')
WHISPER_DEFAULTS: Mapping[str, DefaultValue] = {
    "vocab_size": 51865, "hidden_size": 384, "decoder_layers": 4, "decoder_attention_heads": 6,
    "decoder_ffn_dim": 1536, "max_target_positions": 448, "tie_word_embeddings": True, "encoder_layers": 4,
}  # fmt: skip

WHISPER_ENCODER = Tower(
    towers_whisper.CONFIG_CLASS, towers_whisper.SOURCE, kind="whisper", section=ROOT, audio_counted=True,
    words=towers_whisper.LABEL,
)  # fmt: skip

ENCODER_DECODER: tuple[Architecture, ...] = (
    Architecture(
        "whisper", "WhisperConfig", tf("whisper"), WHISPER_DEFAULTS, ("WhisperForConditionalGeneration",),
        geometry=Geometry(layers="decoder_layers", heads="decoder_attention_heads", kv_heads=None, head_dim=None,
                          intermediate="decoder_ffn_dim", positions="max_target_positions"),
        attention=Attention(qkv_bias=True), mlp_gated=False,
        body=BodyShape(norms_per_layer=3, norm_bias=True, mlp_bias=True, o_bias=True, learned_positions=True,
                       cross_attention=True),
        tower=WHISPER_ENCODER, encoder_layers_field="encoder_layers",
    ),
)  # fmt: skip
