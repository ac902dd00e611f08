"""What an engine does to a checkpoint's weights as it loads them: its `--dtype` and online quantization.

Each engine package's `flags.py` states its own table (`LoadCasts`, with the releases and the engine
source it rests on); `kvtop.domain.served_model` applies it. Shared code holds no engine name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.versions import Eras, ResolvedVersion
from kvtop.domain.launch_tokens import switch_in
from kvtop.domain.quant import QuantSpec
from kvtop.domain.tower_spec import TowerPart


@runtime_checkable
class TowerRule(Protocol):
    """Which classes an engine builds without their tower at a launch: a `TowerSwitch`, or an engine's own rule where
    more than one flag decides it (vLLM's `--language-model-only` or every modality's limit at 0, tower_limits.py)."""

    def builds_no_tower(self, architecture: str, flags: Mapping[str, object], version: ResolvedVersion) -> bool:
        """Whether this release's class for `architecture` builds no tower at a launch with these flags."""
        ...

    def unbuilt_part(self, architecture: str, flags: Mapping[str, object], version: ResolvedVersion) -> TowerPart | None:
        """The part of a `vision_audio` tower this release's class leaves unbuilt alone at this launch, else None."""
        ...


class TowerSwitch(BaseModel):
    """The classes an engine builds without their tower (vision, or audio, and the projector) at a launch, by one
    flag: where it is set (vLLM's `--language-model-only`) or unless it is (SGLang's `--enable-multimodal`). The one
    rule `served_model.tower_unbuilt` reads; each engine package states its own, with its releases and source."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    classes: Eras[frozenset[str]]  # the architectures, by release, each era with its engine source
    flag: str  # the flag's key in `LaunchSettings.flags`, read as a switch (`launch_tokens.switch_in`: a false word unsets it)
    unbuilt_when_set: bool  # True: no tower where the launch sets `flag`; False: none unless it does

    def builds_no_tower(self, architecture: str, flags: Mapping[str, object], version: ResolvedVersion) -> bool:
        """Whether this release's class for `architecture` builds no tower at a launch with these flags."""
        flag_set = (switch_in(flags, self.flag) or (False, ""))[0]  # `--no-` or a false word: unset (span.flag_switch)
        return flag_set == self.unbuilt_when_set and architecture in self.classes.at(version)

    def unbuilt_part(self, architecture: str, flags: Mapping[str, object], version: ResolvedVersion) -> TowerPart | None:
        """None: one flag builds the whole tower or none of it."""
        return None


class LoadCasts(BaseModel):
    """One engine's casts at load: which `--dtype` spellings build the model in which width, and which
    `--quantization` methods quantize an unquantized checkpoint as it loads (what each then holds), and which
    classes build no tower at a launch (`towers`)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    # `--dtype` spelling (lower case) → bytes of each unquantized element; None: the checkpoint's own
    dtypes: tuple[tuple[str, int | None], ...] = ()
    # `--quantization` method (lower case) on an unquantized checkpoint → how its linear weights are held
    online_quant: tuple[tuple[str, QuantSpec], ...] = ()
    quantization_flag: str = "--quantization"  # how the engine's command line spells the method (notes cite it)
    when: str = "at load"  # when the cast happens: vLLM's and SGLang's as they load, a TensorRT engine's at build
    # ModelOpt fields nothing claims for ModelOpt (`QuantSpec.modelopt_unclaimed`): why the engine finds no
    # quantization method in them and serves the model unquantized, with its releases and source ('': it reads them)
    ignores_unclaimed_modelopt: str = ""
    # the classes that build no tower at a launch (the model served text-only); None: every class builds its own
    towers: TowerRule | None = None
    # architectures whose config class, as this engine reads it, replaces head_dim with qk_rope_head_dim, so the
    # lightning-attention state and projections are that wide (`StateSpec.rope_head_dim`), by release, each era
    # with its engine source
    state_width_from_rope: Eras[frozenset[str]] | None = None
    releases: str = ""  # the releases the table holds for, e.g. "vLLM 0.4.0 – 0.24.0"
    source: str = ""  # the engine code it comes from


NO_CASTS = LoadCasts(releases="every release kvtop knows", source="the engine has no flag that re-casts weights at load")

# `--quantization fp8` on a 16-bit checkpoint: each linear matrix in FP8 with one fp32 scale (per tensor,
# dynamic), its embedding, LM head, norms and router as they were (vLLM and SGLang `Fp8LinearMethod` /
# `Fp8MoEMethod.process_weights_after_loading` when the checkpoint is not FP8-serialized)
ONLINE_FP8 = QuantSpec(method="fp8", weight_bits=8, scale_bytes=4, per_tensor=True, scheme="fp8",
                       source="--quantization fp8 (quantized at load)")  # fmt: skip
