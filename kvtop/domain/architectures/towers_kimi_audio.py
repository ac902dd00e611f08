"""Kimi-Audio's Whisper encoder and VQ adaptor (MoonshotKimiaForCausalLM, model_type `moonshot_kimia`), counted as
vLLM 0.33.0 models/kimi_audio.py builds them (SGLang 0.5.23 registers no such class).

- `audio_tower` KimiAudioWhisperEncoder: vLLM's whisper.py WhisperEncoder over the WhisperConfig it reads from the
  checkpoint's `whisper-large-v3/config.json` subfolder (`HFWhisperConfig.from_pretrained(model, subfolder=…)`), not
  from config.json. kvtop cannot read that file: the tower is sized as openai/whisper-large-v3's published config
  (d_model 1280, 32 encoder layers, 20 heads, FFN 5120, 128 mel bins, 1500 positions;
  tests/data/configs/families/SOURCES.md), which the subfolder's name says it is, and the row says so
  (`Tower.absent_words`). The modules are MOSS-Transcribe-Diarize's (towers_moss): conv1, conv2, a position table,
  QKVParallelLinear with a K bias the checkpoint lacks, Row out_proj, Column fc1 / Row fc2 split over TP
  (`TowerSplit.blocks["WhisperEncoder"]`: it asserts the heads divide), norms and Row biases whole.
- `multi_modal_projector` KimiAudioMultiModalProjector: nn.Linear kimia_adaptor_input_dim (default 5120) → hidden
  and hidden → hidden, biased, and a LayerNorm of the hidden width: whole (towers_moss's VQ adaptor, its input
  width kimia_adaptor_input_dim).
The language model is Qwen2ForCausalLM over config.json itself (table_dense_more `moonshot_kimia`); the checkpoint's
MIMO branch (kimia_mimo_layers, mimo_output) is not built (kimi_audio.py's weights mapper drops `mimo_*`).
"""

from __future__ import annotations

from kvtop.domain.architectures.towers_audio import WhisperEncoderFields
from kvtop.domain.architectures.towers_fields import Tower
from kvtop.domain.architectures.towers_moss import MossOuterFields, MossWhisperFields, moss_transcribe_diarize
from kvtop.domain.config_types import ConfigSection, Dim
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "WhisperConfig (the checkpoint's whisper-large-v3/config.json)"
SOURCE = "vLLM 0.33.0 models/kimi_audio.py (KimiAudioWhisperEncoder, KimiAudioMultiModalProjector), models/whisper.py"
OUTER_TYPE = "moonshot_kimia"
# openai/whisper-large-v3's encoder sizes (tests/data/configs/families/openai--whisper-large-v3.json)
WHISPER_LARGE_V3 = {"d_model": 1280, "encoder_layers": 32, "encoder_attention_heads": 20, "encoder_ffn_dim": 5120,
                    "num_mel_bins": 128, "max_source_positions": 1500}  # fmt: skip
ABSENT_WORDS = (
    "the engine sizes its Whisper encoder from the checkpoint's whisper-large-v3/config.json, which kvtop does not "
    "read: openai/whisper-large-v3's published sizes assumed"
)


class KimiAudioOuterFields(ConfigSection):
    """KimiAudioConfig's `kimia_adaptor_input_dim` (its class default 5120): the VQ adaptor's input width."""

    kimia_adaptor_input_dim: Dim = 5120


def kimi_audio(sizes: WhisperEncoderFields, heads: MossWhisperFields, outer: KimiAudioOuterFields,
               text_hidden: int) -> TowerSpec:  # fmt: skip
    """The Whisper encoder and the VQ adaptor as vLLM builds them (module docstring)."""
    adaptor = MossOuterFields(adaptor_input_dim=outer.kimia_adaptor_input_dim)
    spec = moss_transcribe_diarize(sizes, heads, adaptor, text_hidden)
    return spec.model_copy(update={"config_class": CONFIG_CLASS, "source": SOURCE})


# The section kvtop reads it from is never in config.json: the Whisper sizes above stand in for the subfolder's file
TOWER = Tower(CONFIG_CLASS, SOURCE, WHISPER_LARGE_V3, kind="kimi_audio", section="whisper-large-v3",
              audio_counted=True, absent_default=WHISPER_LARGE_V3, absent_words=ABSENT_WORDS)  # fmt: skip
