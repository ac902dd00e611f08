"""Attention-free decoders as data: every layer a Mamba (or Mamba2) mixer and one RMSNorm, no attention and no MLP
(transformers models/mamba, falcon_mamba, mamba2; vLLM 0.33.0 models/mamba.py, mamba2.py; SGLang 0.5.23
models/mamba.py, falcon_mamba.py, mamba2.py). Each request holds one fixed state per layer (conv + SSM: the KV book's
state pool) and no KV per token.

The config classes name no attention heads and no positions: `num_attention_heads` 1 is a nominal head no book
reads (no layer attends), `max_position_embeddings` 2,048 kvtop's nominal positions (`defaults.NOMINAL_POSITIONS`:
vLLM's and SGLang's figure where a config names no position field; the registry sweep built both engines at it), a
state-only model's length being bounded by no memory of kvtop's books.
"""

from __future__ import annotations

from kvtop.domain.architectures.defaults import NOMINAL_POSITIONS, NOMINAL_POSITIONS_SAID, DefaultValue, tf
from kvtop.domain.architectures.description import Architecture, Geometry
from kvtop.domain.architectures.fields import Fields
from kvtop.domain.architectures.layer_rules import LayerRule
from kvtop.domain.architectures.state_rules import Mamba1State, Mamba2State, StateRule
from kvtop.domain.model import BodyShape, LayerKind, MlpKind

_NO_ATTENTION: dict[str, DefaultValue] = {"num_attention_heads": 1, **NOMINAL_POSITIONS}
# neither is a field of the config classes: what each is, as a plan states it where the file leaves it out
_OWN_DEFAULTS = (
    ("num_attention_heads", "kvtop's nominal head (no layer attends; no book reads it)"),
    NOMINAL_POSITIONS_SAID,
)
# MambaConfig / FalconMambaConfig — models/mamba, models/falcon_mamba (intermediate_size = expand × hidden,
# written by the class; time_step_rank "auto" = ceil(hidden ÷ 16))
MAMBA: dict[str, DefaultValue] = {
    "vocab_size": 50280, "hidden_size": 768, "state_size": 16, "num_hidden_layers": 32, "expand": 2,
    "conv_kernel": 4, "time_step_rank": "auto", "tie_word_embeddings": True, "use_bias": False, **_NO_ATTENTION,
}  # fmt: skip
# Mamba2Config — models/mamba2
MAMBA2: dict[str, DefaultValue] = {
    "num_heads": 128, "head_dim": 64, "vocab_size": 32768, "hidden_size": 4096, "state_size": 128,
    "num_hidden_layers": 64, "expand": 2, "conv_kernel": 4, "n_groups": 8, "tie_word_embeddings": False,
    "use_bias": False, **_NO_ATTENTION,
}  # fmt: skip
_BIAS = (("use_bias", "biased in_proj / out_proj (use_bias)"),)


class EveryLayerState(LayerRule):
    """Every layer a state mixer and no MLP (MambaDecoderLayer: norm, mixer)."""

    reads_layer_types = False

    def attention(self, f: Fields, layers: int) -> tuple[LayerKind, ...]:
        return (LayerKind.LINEAR,) * layers

    def mlp(self, f: Fields, layers: int) -> tuple[MlpKind, ...] | None:
        return (MlpKind.NONE,) * layers


_MAMBA1 = Mamba1State(inner_field="intermediate_size", state_field="state_size", kernel_field="conv_kernel",
                      dt_rank_field="time_step_rank", dt_bc_norms=False)  # fmt: skip
_MAMBA2 = Mamba2State(heads_field="num_heads", head_dim_field="head_dim", groups_field="n_groups",
                      state_field="state_size", kernel_field="conv_kernel", ssm_dtype_field=None)  # fmt: skip


def _state_only(model_type: str, config_class: str, defaults: dict[str, DefaultValue], name: str,
                state: StateRule, engine_read: tuple[str, ...] = ()) -> Architecture:  # fmt: skip
    """An entry whose every layer is `state`'s mixer and one RMSNorm; biased projections refused by name."""
    geometry = Geometry(kv_heads=None, head_dim=None, intermediate=None, intermediate_default_factor=4)
    return Architecture(model_type, config_class, tf(model_type), defaults, (name,), geometry=geometry,
                        layers=EveryLayerState(), state=state, body=BodyShape(norms_per_layer=1),
                        refused_when=_BIAS, engine_read_fields=engine_read, own_defaults=_OWN_DEFAULTS)  # fmt: skip


STATE_ONLY: tuple[Architecture, ...] = (
    _state_only("mamba", "MambaConfig", MAMBA, "MambaForCausalLM", _MAMBA1),
    _state_only("falcon_mamba", "FalconMambaConfig", MAMBA, "FalconMambaForCausalLM", _MAMBA1),
    # SGLang 0.5.23's Mamba2Config reads intermediate_size, which transformers' class never sets (config_checks)
    _state_only("mamba2", "Mamba2Config", MAMBA2, "Mamba2ForCausalLM", _MAMBA2, engine_read=("intermediate_size",)),
)
