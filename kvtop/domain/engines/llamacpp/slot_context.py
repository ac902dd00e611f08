"""The context one llama-server slot (one request) may fill, by build (docs/engines/llamacpp.md §1, §4).

Before b6925 the server gives each slot `n_ctx / n_parallel`, uncapped; from b6925 the slot is `n_ctx_seq`
capped at the training context `n_ctx_train`; from b10662 `--kv-unified-per-slot N` caps it at N first (PR
#24124: `n_ctx_slot()` is `min(n_ctx_seq, N, n_ctx_train)`); PR #28030 lets YaRN flags raise `n_ctx_train` to
`n_ctx_orig_yarn / rope_freq_scale` (read at b10754; its first build is not read: `SLOT_CAP_ERAS`).
kvtop's `n_ctx_train` is the model's `max_position_embeddings`: the GGUF's `context_length` when the model
is a GGUF file, config.json's positions otherwise, which a GGUF converted from it carries.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from kvtop.domain.deployment_flags import flag_float, flag_int, flag_text
from kvtop.domain.engines.llamacpp.cells import CacheCells, per_slot_cap
from kvtop.domain.engines.llamacpp.eras import SLOT_CAP_ERAS, build_release
from kvtop.domain.engines.llamacpp.flags import flag_value
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec

# the flags read (common/arg.cpp): `--rope-scaling {none,linear,yarn}`, `--rope-scale N` (rope_freq_scale = 1/N),
# `--rope-freq-scale N`, `--yarn-orig-ctx N` (0: the model's)
_FLT_MIN, _FLT_MAX = 1.1754943508222875e-38, 3.4028234663852886e38  # a C float's normal range (std::stof's)
_INT_MAX = 2**31 - 1  # std::stoi's
_UNSCALED_ROPE = ("", "default", "llama3")  # config.json rope types whose GGUF keeps rope_freq_scale_train = 1


@dataclass(frozen=True)
class SlotContext:
    """The slot's context in tokens, the rule that gave it, and what kvtop could not read about it."""

    tokens: int
    source: str
    said: tuple[str, ...] = ()  # assumptions the figure rests on, for the plan's notes
    not_modelled: str | None = None  # a rule kvtop has not read for this launch (the figure keeps the cap)


def _f32(value: float) -> float:
    """`value` as a C `float` (rope_freq_scale is one)."""
    return float(struct.unpack("f", struct.pack("f", value))[0])


def _scale(settings: LaunchSettings, name: str) -> float | None:
    """A RoPE scale flag: a finite number above 0, or 0 (llama.cpp's "the model's"); anything else names it."""
    text = flag_text(settings, name)
    try:
        if text is not None and float(text) == 0.0:
            return 0.0
    except ValueError:
        pass  # flag_float names the flag
    value = flag_float(settings, name)
    if value is not None and not _FLT_MIN <= value <= _FLT_MAX:  # std::stof throws out_of_range: no server
        raise InputError(f"expected a number a C float holds, got {text!r:.40}", field=f"--{name}")
    return value


def _yarn_train(model: ModelSpec, settings: LaunchSettings, n_ctx_train: int) -> tuple[int | None, str | None]:
    """`n_ctx_train` as `llama_init_from_model` re-adjusts it under YaRN flags (PR #28030): `n_ctx_orig_yarn /
    rope_freq_scale` when the scaling is YaRN and the scale differs from the model's; (None, why) where a figure
    this needs is the GGUF's and not in hand; (n_ctx_train, None) where nothing is re-adjusted."""
    rope_scale = _scale(settings, "rope-scale")
    freq_scale = _scale(settings, "rope-freq-scale")
    if rope_scale is None and freq_scale is None:
        return n_ctx_train, None  # rope_freq_scale stays the model's: nothing re-adjusted
    scaling = str(flag_value(settings, ("rope-scaling",)) or "").lower()
    if model.rope_type not in _UNSCALED_ROPE:
        return None, f"the model's own RoPE scaling ({model.rope_type}) sets the GGUF's rope_freq_scale_train"
    if scaling != "yarn":
        return n_ctx_train, None  # not YaRN: n_ctx_train is left as it is
    scale = _f32(freq_scale) if freq_scale is not None else _f32(1.0 / _f32(rope_scale or 1.0))
    if scale <= 0 or scale == 1.0:
        return n_ctx_train, None
    orig = flag_int(settings, "yarn-orig-ctx", least=0)
    if orig is not None and orig > _INT_MAX:
        raise InputError(f"expected a whole number ≤ {_INT_MAX}, got {orig}", field="--yarn-orig-ctx")
    n_ctx_orig_yarn = orig if orig else n_ctx_train  # 0 / unset: the GGUF's, which is n_ctx_train unscaled
    if n_ctx_orig_yarn / scale > _FLT_MAX:
        return None, "n_ctx_orig_yarn / rope_freq_scale overflows a C float (the server's n_ctx_train is undefined)"
    return int(_f32(n_ctx_orig_yarn / scale)), None


def slot_context(model: ModelSpec, settings: LaunchSettings, cells: CacheCells, build: int | None) -> SlotContext:
    """The context one slot may fill at `build` (None: the latest rules) for the cells llama.cpp allocates."""
    era = SLOT_CAP_ERAS.era(build_release(build))
    if era.value == "none":
        return SlotContext(tokens=cells.n_ctx // cells.n_seq_max, source=era.source)
    per_slot = per_slot_cap(settings, build)
    n_ctx_seq = cells.n_ctx_seq if per_slot is None else min(cells.n_ctx_seq, per_slot)
    said: tuple[str, ...] = ()
    if n_ctx_seq < cells.n_ctx_seq:
        said = (f"--kv-unified-per-slot caps the slot's n_ctx_seq {cells.n_ctx_seq:,} at {per_slot:,} "
                "(tools/server/server-context.cpp `n_ctx_slot()`, PR #24124)",)  # fmt: skip
    n_ctx_train = model.max_position_embeddings
    if not n_ctx_train:
        return SlotContext(tokens=n_ctx_seq, source=era.source, said=said,
                           not_modelled="the training context is unknown")  # fmt: skip
    not_modelled = None
    cap = n_ctx_train
    if era.value != "train":  # PR #28030 may lift the cap: what it would make of these flags
        lifted, why = _yarn_train(model, settings, n_ctx_train)
        if lifted is None or (era.value == "yarn_unread" and lifted != n_ctx_train):
            at = "" if build is None else f" at b{build}"
            reason = why or "PR #28030's first build is not read"
            not_modelled = (f"whether the YaRN flags lift the slot's cap of n_ctx_train {n_ctx_train:,}{at} "
                            f"({reason}): the plan keeps the cap")  # fmt: skip
        elif lifted != n_ctx_train:
            cap = lifted
            said = (*said, f"YaRN flags re-adjust n_ctx_train {n_ctx_train:,} to {lifted:,} (n_ctx_orig_yarn / "
                    "rope_freq_scale, src/llama-context.cpp, PR #28030)",)  # fmt: skip
    if n_ctx_seq > cap:
        said = (*said, f"the slot's n_ctx_seq {n_ctx_seq:,} is capped at n_ctx_train {cap:,} (the model's "
                "max_position_embeddings, assumed equal to the GGUF's context_length)")  # fmt: skip
    return SlotContext(tokens=min(n_ctx_seq, cap), source=era.source, said=said, not_modelled=not_modelled)
