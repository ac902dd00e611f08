"""Ultravox's Whisper encoder and feed-forward projector (UltravoxModel, outer model_type `ultravox`), counted as
vLLM 0.33.0 models/ultravox.py builds them (SGLang 0.5.23 registers no such class).

- `audio_tower` UltravoxWhisperEncoder: vLLM's whisper.py WhisperEncoder (enable_pp False: every layer) over
  `audio_config` (a WhisperConfig: its class defaults where a field is absent; vLLM's UltravoxConfig reads the
  section inline, or from the Hub where `audio_model_id` names a checkpoint, which kvtop cannot read): conv1, conv2,
  embed_positions (nn.Embedding, the model's dtype), QKVParallelLinear with a K bias the checkpoint lacks
  (`TowerSpec.k_bias_params`), Row out_proj, Column fc1 / Row fc2 split over TP (`TowerSplit.blocks
  ["WhisperEncoder"]`: it asserts the heads divide); norms, convs, Row biases and the position table whole —
  towers_whisper.whisper_tower's count.
- `multi_modal_projector` UltravoxFeedForwardProjector (num_projector_layers 0): ln_pre RMSNorm(d × stack_factor),
  linear_1 ReplicatedLinear(d × stack_factor → hidden_size, unbiased), SwiGLU halving it (projector_act `swiglu`;
  another activation keeps hidden_size), ln_mid RMSNorm of that width where projector_ln_mid, else ln_post
  RMSNorm(text width) after linear_2 ReplicatedLinear(→ the text width, unbiased): whole on every rank.
  UltravoxTransformerProjector (num_projector_layers > 0: Whisper encoder layers inside the projector) is not read.
- `language_model`: the config `text_model_id` names (named_text) or the inline `text_config`.
"""

from __future__ import annotations

from pydantic import Field

from kvtop.domain.architectures.towers_audio import WhisperEncoderFields
from kvtop.domain.architectures.towers_fields import Tower
from kvtop.domain.architectures.towers_whisper import WhisperHeadFields, whisper_tower
from kvtop.domain.config_types import ConfigSection, Dim, Flag, Hidden, Name
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "WhisperConfig (UltravoxConfig.audio_config)"
SOURCE = "vLLM 0.33.0 model_executor/models/ultravox.py, whisper.py; transformers_utils/configs/ultravox.py"
OUTER_TYPE = "ultravox"
LABEL = "the audio encoder (Ultravox's Whisper encoder) and its projector"


class UltravoxOuterFields(ConfigSection):
    """UltravoxConfig's projector fields (vLLM 0.33.0 configs/ultravox.py: its class defaults)."""

    hidden_size: Hidden = 4096
    stack_factor: Dim = 8
    projector_act: Name = "swiglu"
    projector_ln_mid: Flag = False
    num_projector_layers: int = Field(default=0, ge=0, le=1024)


def ultravox(sizes: WhisperEncoderFields, heads: WhisperHeadFields, outer: UltravoxOuterFields, text_hidden: int,
             source: str) -> TowerSpec:  # fmt: skip
    """The encoder and projector as vLLM builds them (module docstring)."""
    if outer.num_projector_layers:
        raise UnsupportedModelError(
            "Ultravox's transformer projector (UltravoxTransformerProjector: Whisper encoder layers inside the "
            "projector, vLLM 0.33.0 ultravox.py) is not modelled",
            field="num_projector_layers",
            source=source,
        )
    encoder = whisper_tower(sizes, heads)
    dim_in = sizes.d_model * outer.stack_factor
    dim_mid = outer.hidden_size // 2 if outer.projector_act == "swiglu" else outer.hidden_size
    norm = dim_mid if outer.projector_ln_mid else text_hidden  # ln_mid, else ln_post
    projector = dim_in + dim_in * outer.hidden_size + dim_mid * text_hidden + norm  # ln_pre, linear_1, linear_2
    return encoder.model_copy(update={"params": encoder.params + projector, "config_class": CONFIG_CLASS,
                                      "source": SOURCE, "label": LABEL})  # fmt: skip


# WhisperConfig's class defaults where audio_config leaves a field out (WhisperEncoderFields'); no section in the
# file (audio_model_id names a Hub checkpoint vLLM fetches): not modelled (absent_default None)
TOWER = Tower(CONFIG_CLASS, SOURCE, kind="ultravox", section="audio_config", audio_counted=True)
