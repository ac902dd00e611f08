"""THE model as the engine holds it after the launch's cast at load: one served model every book reads.

A launch may re-cast a checkpoint as it loads: `--dtype float32` builds every unquantized tensor in
4 bytes (the checkpoint's tensors copied into it), `--quantization fp8` on a 16-bit checkpoint holds each
linear matrix in FP8. The weights book, the KV `auto` dtype (the model dtype, `kv_format.resolve_kv_format`),
the ledger (`ledger.predict` serves the model before it solves) and the calibration's weights term all
read the model this returns, so no view derives its own. Which spellings cast, and how, is each
engine's `LoadCasts` (its `flags.py`). A cast the engine's table does not have (bitsandbytes at load,
a dtype kvtop does not know) leaves the checkpoint's model and is named by `not_modelled_cast`. A class
that builds no tower at this launch (`tower_unbuilt`, by the engine's `LoadCasts.towers`: SGLang's Llama-4 without
`--enable-multimodal`, vLLM's read classes under `--language-model-only` or with every modality's
`--limit-mm-per-prompt` at 0) is served without it, so no book counts a
tower the engine never loads, and no engine rule profiles its encoder. A lightning-attention state an engine
reads at another width than the config's head_dim (vLLM 0.33.0 reading Ling-2.5 through transformers'
BailingHybridConfig: qk_rope_head_dim, `LoadCasts.state_width_from_rope`) is served at that width, so the weights
and state books both hold the engine's.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Literal

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.registry import engine_flags
from kvtop.domain.engines.stated_release import stated_release
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.load_casts import LoadCasts
from kvtop.domain.memo import Memo
from kvtop.domain.model import ModelSpec
from kvtop.domain.quant import QuantSpec
from kvtop.domain.tower_parts import without_part
from kvtop.domain.tower_spec import TowerPart


class LoadCast(BaseModel):
    """What a launch's flags do to one checkpoint's model as it loads."""

    model_config = ConfigDict(frozen=True)

    dtype_bytes: int | None = None  # every unquantized tensor's width after the cast; None: unchanged
    quant: QuantSpec | None = None  # the linear weights as quantized at load; None: unchanged
    applied: tuple[str, ...] = ()  # each cast in words
    not_modelled: str | None = None  # the flag that re-casts in a way kvtop does not model
    tower_unbuilt: bool = False  # the class builds no tower at this launch: the tower kvtop counts dropped (text-only)
    tower_part_unbuilt: TowerPart | None = None  # the part of a `vision_audio` tower it leaves unbuilt (tower_parts)
    state_width: int | None = None  # the lightning state's width as the engine's config class reads it; None: unchanged
    half_dtype: Literal["bf16", "fp16"] | None = None  # the 16-bit dtype `--dtype` names, where not the config's


# `--dtype` values that name a 16-bit dtype: what a 2-byte KV under `auto` is then called
HALF_FLAG_NAMES: dict[str, Literal["bf16", "fp16"]] = {
    "bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "half": "fp16", "fp16": "fp16",
}  # fmt: skip


def _casts(settings: LaunchSettings) -> LoadCasts:
    return engine_flags(settings.engine).load_casts


def _dtype(settings: LaunchSettings) -> str:
    """`--dtype` as the tables spell it: lower case, without the `torch.` a log's engine config prints
    (vLLM's `Initializing a V1 LLM engine … dtype=torch.float32`)."""
    return (settings.dtype or "").strip().lower().removeprefix("torch.")


def _version(settings: LaunchSettings, version: ResolvedVersion | None) -> ResolvedVersion:
    if version is not None:
        return version
    return stated_release(settings)


def tower_unbuilt(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion | None = None) -> bool:
    """THE answer to whether this multimodal model's tower is left unbuilt, and so unprofiled, at this launch: its
    release's class builds none (the engine's `LoadCasts.towers`). The weights book drops the tower on it
    (`load_cast`); the engines' rules read it for the encoder's profile and the plan's note. True on the served
    model too (its `multimodal` and architecture are the checkpoint's)."""
    towers = _casts(settings).towers
    if towers is None or not model.multimodal:
        return False
    return towers.builds_no_tower(model.architecture, settings.flags, _version(settings, version))


def _part_unbuilt(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion | None) -> TowerPart | None:
    """The part of the counted `vision_audio` tower the engine leaves unbuilt at this launch (its `LoadCasts.towers`)."""
    towers = _casts(settings).towers
    if towers is None or model.tower is None or not model.tower.audio_params:
        return None
    return towers.unbuilt_part(model.architecture, settings.flags, _version(settings, version))


def load_cast(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion | None = None) -> LoadCast:
    """The casts `settings` make to `model` at load, by the engine's table (none on a model already served);
    `version`: the release whose table applies (default: `settings.engine_version`'s)."""
    casts = _casts(settings)
    quant, dtype_bytes, applied, missed = None, None, [], None
    if casts.ignores_unclaimed_modelopt and model.quant.modelopt_unclaimed:  # the engine serves it unquantized
        quant = QuantSpec(ignored=casts.ignores_unclaimed_modelopt, source=model.quant.source,
                          from_quant_file=model.quant.from_quant_file)
        applied.append(casts.ignores_unclaimed_modelopt)
    method = (settings.quantization or "").strip().lower()
    if method and not model.quant.quantized:
        online = dict(casts.online_quant).get(method)
        if online is None:
            missed = f"{casts.quantization_flag} {settings.quantization}"
        else:
            quant = online
            applied.append(f"{casts.quantization_flag} {method}: each linear matrix quantized {casts.when} ({online.method})")
    dtype = _dtype(settings)
    if dtype:
        widths = dict(casts.dtypes)
        if dtype not in widths:
            missed = missed or f"--dtype {settings.dtype}"
        elif widths[dtype] is not None and widths[dtype] != model.dtype_bytes:
            dtype_bytes = widths[dtype]
            applied.append(f"--dtype {dtype}: every unquantized tensor in {dtype_bytes} bytes")
    half = HALF_FLAG_NAMES.get(dtype) if dtype in dict(casts.dtypes) else None
    unbuilt = model.tower is not None and tower_unbuilt(model, settings, version)  # a tower kvtop counts, dropped
    if unbuilt:
        applied.append(f"no vision tower: {model.architecture} is served text-only")
    part = _part_unbuilt(model, settings, version) if not unbuilt else None
    if part is not None:
        applied.append(f"no {part} tower: {model.architecture} builds it for no modality the launch leaves on")
    return LoadCast(dtype_bytes=dtype_bytes, quant=quant, applied=tuple(applied), not_modelled=missed,
                    tower_unbuilt=unbuilt, tower_part_unbuilt=part, state_width=state_width(model, settings, version),
                    half_dtype=half if half != model.half_dtype else None)  # fmt: skip


def state_width(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion | None = None) -> int | None:
    """The lightning state's width where this release reads the config through a class that replaces head_dim with
    qk_rope_head_dim (`LoadCasts.state_width_from_rope`); None where it keeps the config's head_dim."""
    rule, state = _casts(settings).state_width_from_rope, model.state
    if rule is None or state is None or not state.rope_head_dim or state.rope_head_dim == state.head_dim:
        return None
    return state.rope_head_dim if model.architecture in rule.at(_version(settings, version)) else None


def served_model(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion | None = None) -> ModelSpec:
    """`model` as the engine holds it after `settings`' casts at load; the checkpoint's model itself where
    none applies. A model this function served is re-served from its checkpoint, so a what-if of other
    settings (`--dtype auto` after `float32`) casts the checkpoint, never a cast twice; the same settings
    give the same object back (the ledger's memo keeps its identity)."""
    checkpoint = _checkpoint_of(model)
    cast = load_cast(checkpoint, settings, version)
    said = _unmodelled_note(cast.not_modelled)
    if cast.dtype_bytes is None and cast.quant is None and said is None and not cast.tower_unbuilt and (
        cast.tower_part_unbuilt is None and cast.state_width is None and cast.half_dtype is None
    ):
        return checkpoint
    key = (id(checkpoint), settings.engine, _dtype(settings), (settings.quantization or "").strip().lower(),
           cast.tower_unbuilt, cast.tower_part_unbuilt, cast.state_width)  # fmt: skip
    return _SERVED.get(key, checkpoint, lambda: _cast(checkpoint, cast, said))


def _checkpoint_of(model: ModelSpec) -> ModelSpec:
    """The checkpoint's model `model` was served from (itself where it was not)."""
    with _LOCK:
        entry = _ORIGINS.get(id(model))
    return entry[1] if entry is not None and entry[0] is model else model


def _unmodelled_note(flag: str | None) -> str | None:
    """The model's `not_modelled` line for a cast kvtop does not model (plan prints it, `--json` lists it)."""
    return f"{flag} at load: the books count the checkpoint's bytes" if flag else None


def _cast(model: ModelSpec, cast: LoadCast, said: str | None) -> ModelSpec:
    update: dict[str, object] = {}
    if said is not None and said not in model.not_modelled:
        update["not_modelled"] = (*model.not_modelled, said)
    if cast.dtype_bytes is not None:
        update["dtype_bytes"] = cast.dtype_bytes
    if cast.half_dtype is not None:
        update["half_dtype"] = cast.half_dtype
    if cast.tower_unbuilt:  # the engine's rules still read its architecture (and `vision`) to know it text-only
        update["tower"] = None
    elif cast.tower_part_unbuilt is not None and model.tower is not None:
        update["tower"] = without_part(model.tower, cast.tower_part_unbuilt)
    if cast.state_width is not None and model.state is not None:  # every book reads the engine's width
        width, state = cast.state_width, model.state
        # a conv over q, k and v (Ling-3's KDA: 3 × heads × head_dim) narrows with them; lightning attention has none
        conv_dim = state.conv_dim * width // state.head_dim
        update["state"] = state.model_copy(
            update={"head_dim": width, "state_size": width, "inner_size": state.num_heads * width, "conv_dim": conv_dim}
        )
    # config.json's quant_method as written stays the checkpoint's whatever the cast (SGLang's server arguments read
    # that literal: nvfp4_runner.py), not the rebuilt spec's None (which reads as 'config.json states no block')
    written: dict[str, object] = {"config_quant_method": model.quant.config_quant_method}
    if cast.quant is not None and cast.quant.ignored:  # nor its KV dtype: the format is not applied at all
        update["quant"] = cast.quant.model_copy(update=written)
    elif cast.quant is not None:
        kv = {"kv_cache_quant_algo": model.quant.kv_cache_quant_algo,
              "quant_file_kv_cache_quant_algo": model.quant.quant_file_kv_cache_quant_algo}  # fmt: skip
        update["quant"] = cast.quant.model_copy(update=kv | written)
    served = model.model_copy(update=update)
    with _LOCK:
        _ORIGINS[id(served)] = (served, model)
        while len(_ORIGINS) > _ORIGINS_KEPT:
            _ORIGINS.popitem(last=False)
    return served


_SERVED: Memo[ModelSpec] = Memo(size=64)
# served model's id → (it, the checkpoint's model): held while it may still be re-served (a what-if)
_ORIGINS: OrderedDict[int, tuple[ModelSpec, ModelSpec]] = OrderedDict()
_ORIGINS_KEPT = 256
_LOCK = threading.Lock()


def not_modelled_cast(model: ModelSpec | None, settings: LaunchSettings) -> str | None:
    """The flag with which the engine re-casts or quantizes the weights at load in a way kvtop does not
    model (the books then count the checkpoint's bytes), or None. Without a model (a corpus record with
    no config) every cast is one: any `--quantization`, any `--dtype` that is not 16-bit or the checkpoint's."""
    if model is not None:
        return load_cast(model, settings).not_modelled
    if settings.quantization:
        return f"{_casts(settings).quantization_flag} {settings.quantization}"
    dtype = _dtype(settings)
    if dtype and dict(_casts(settings).dtypes).get(dtype, 0) not in (None, 2):
        return f"--dtype {settings.dtype}"
    return None


def cast_when(settings: LaunchSettings) -> str:
    """When the engine's casts happen, in words ('at load'; a TensorRT engine's 'at build')."""
    return _casts(settings).when


def served_casts(model: ModelSpec, settings: LaunchSettings) -> str:
    """The launch's flags whose cast the served `model` carries, as typed ('' where none): the words its
    book cites."""
    casts, words = _casts(settings), []
    method = (settings.quantization or "").strip().lower()
    online = dict(casts.online_quant).get(method)
    if online is not None and model.quant.source == online.source:
        words.append(f"{casts.quantization_flag} {settings.quantization}")
    dtype = _dtype(settings)
    width = dict(casts.dtypes).get(dtype)
    if width is not None and width == model.dtype_bytes and width != 2:
        words.append(f"--dtype {settings.dtype}")
    return ", ".join(words)
