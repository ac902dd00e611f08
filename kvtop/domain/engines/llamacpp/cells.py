"""How many KV cells llama.cpp allocates, and in how many streams (docs/engines/llamacpp.md §1).

llama.cpp does not size its cache from free memory: it allocates `-c` cells (all slots together),
padded, in one stream shared by the slots (`--kv-unified`) or one stream per slot:

    n_ctx      = GGML_PAD(-c or the model's training context, 256)
    unified    n_ctx_seq = n_ctx                                  one stream of n_ctx cells
    otherwise  n_ctx_seq = GGML_PAD(n_ctx / -np, 256)             -np streams of n_ctx_seq cells
               n_ctx     = n_ctx_seq × -np
    SWA cache  per stream GGML_PAD(min(n_ctx_seq, n_swa × (unified ? -np : 1) + n_ubatch), 256)
               (n_ctx_seq with --swa-full)

Sources: src/llama-context.cpp (`llama_context::llama_context`), src/llama-kv-cache-iswa.cpp,
src/llama-kv-cache.cpp (`ggml_new_tensor_3d(ctx, type_k, n_embd_k_gqa, kv_size, n_stream)`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.engines.llamacpp.eras import (
    AUTO_PARALLEL_SLOTS,
    CTX_PAD_256_ERAS,
    DEFAULT_CTX_ERAS,
    DEFAULT_PARALLEL_ERAS,
    DEFAULT_UBATCH,
    PER_SLOT_CAP_ERAS,
    build_release,
)
from kvtop.domain.engines.llamacpp.flags import (
    NO_UNIFIED_FLAGS,
    PER_SLOT_FLAGS,
    SWA_FULL_FLAGS,
    UBATCH_FLAGS,
    UNIFIED_FLAGS,
    flag_on,
    flag_value,
)
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import LayerKind, ModelSpec
from kvtop.domain.redact import quoted
from kvtop.domain.rounding import round_up
from kvtop.domain.wording import counted

CELL_PAD = 256


def pad(value: int, to: int) -> int:
    """`GGML_PAD(value, to)`: up to the next multiple of `to`."""
    return round_up(value, to)


@dataclass(frozen=True)
class CacheCells:
    """The cells of one launch: per stream, the streams, and what each figure rests on."""

    requested_ctx: int  # -c, or the default it took
    n_ctx: int  # every stream's cells together (the log's `n_ctx`)
    n_ctx_seq: int  # cells one slot can use (the log's `n_ctx_seq`)
    n_seq_max: int  # slots (-np)
    unified: bool
    n_stream: int  # 1 when unified, else one per slot
    swa_cells: int | None  # cells per stream of the sliding-window cache (None: no such layers)
    said: tuple[str, ...]  # where each input came from, in words
    setting: str  # the capacity knob as llama-server takes it and what it came to (`-c 0 (training context 131,072)`)

    @property
    def kv_size(self) -> int:
        """Cells per stream of the full-attention cache (the log's `N cells`)."""
        return self.n_ctx_seq

    @property
    def total_cells(self) -> int:
        return self.kv_size * self.n_stream

    @property
    def total_swa_cells(self) -> int:
        return (self.swa_cells or 0) * self.n_stream


def _int_flag(settings: LaunchSettings, names: tuple[str, ...], flag: str) -> int | None:
    value = flag_value(settings, names)
    if value is None or value is True:
        return None
    try:
        number = int(str(value).strip())
    except ValueError:
        raise InputError(f"expected a whole number, got {quoted(value)}", field=flag) from None
    if number < 1:
        raise InputError(f"must be at least 1 (got {number})", field=flag)
    return number


def per_slot_cap(settings: LaunchSettings, build: int | None) -> int | None:
    """`--kv-unified-per-slot N` (PR #24124): the tokens each slot is capped at, None when not given; refused at
    a build before the flag's first (`PER_SLOT_CAP_ERAS`), where llama-server stops on it as an unknown argument."""
    cap = _int_flag(settings, PER_SLOT_FLAGS, "--kv-unified-per-slot")
    era = PER_SLOT_CAP_ERAS.era(build_release(build))
    if cap is not None and not era.value:
        first = PER_SLOT_CAP_ERAS[-1].since
        raise InputError(f"llama-server b{build} has no --kv-unified-per-slot: the flag came with PR #24124, from "
                         f"build {first}", field="--kv-unified-per-slot")  # fmt: skip
    return cap


def cache_cells(model: ModelSpec, settings: LaunchSettings, build: int | None) -> CacheCells:
    """The cells llama.cpp allocates for this launch at `build` (None: the latest rules)."""
    said: list[str] = []
    requested = settings.context_length
    version = build_release(build)
    came_to = ""  # what -c came to where it is not the cells asked for
    if requested is None:
        era = DEFAULT_CTX_ERAS.era(version)
        requested = era.value
        said.append(f"-c not given: the default {era.value or 'of 0 (the training context)'} ({era.source})")
    slots = settings.max_running_requests
    auto = slots is None or slots == -1
    if auto:
        era_np = DEFAULT_PARALLEL_ERAS.era(version)
        slots = AUTO_PARALLEL_SLOTS if era_np.value == -1 else era_np.value
        said.append(f"-np not given: {counted(slots, 'slot')} ({era_np.source})")
    assert slots is not None
    knob = requested  # -c as given, or its default
    per_slot = per_slot_cap(settings, build)
    if per_slot is not None and settings.context_length is None and requested == 0:
        requested = slots * per_slot  # no -c: the pool is sized from the cap (tools/server/server.cpp, PR #24124)
        came_to = f"{slots} slots × --kv-unified-per-slot {per_slot} ="
        said.append(f"-c not given with --kv-unified-per-slot {per_slot}: the pool is n_parallel × {per_slot} = "
                    f"{requested:,} (PR #24124)")  # fmt: skip
    if requested == 0:
        requested = model.max_position_embeddings
        came_to = "training context"
    unified_flag = flag_on(settings, UNIFIED_FLAGS)
    if flag_on(settings, NO_UNIFIED_FLAGS):
        unified = False
    elif unified_flag is not None:
        unified = unified_flag
    else:
        unified = auto and DEFAULT_PARALLEL_ERAS.at(version) == -1
    padded = CTX_PAD_256_ERAS.at(version)
    n_ctx = pad(requested, CELL_PAD) if padded else requested
    if unified or slots == 1:
        n_ctx_seq = n_ctx
    else:
        n_ctx_seq = pad(n_ctx // slots, CELL_PAD) if padded else n_ctx // slots
        if n_ctx_seq == 0:
            raise InputError(f"-c {requested} over {slots} slots leaves no cells per slot (n_ctx_seq == 0)", field="-c")
        n_ctx = n_ctx_seq * slots
    streams = 1 if unified else slots
    swa = None
    if LayerKind.SLIDING in model.layer_attention:
        if flag_on(settings, SWA_FULL_FLAGS):
            swa = n_ctx_seq
        else:
            window = model.sliding_window or 0
            ubatch = _int_flag(settings, UBATCH_FLAGS, "-ub") or DEFAULT_UBATCH
            swa = pad(min(n_ctx_seq, window * (slots if unified else 1) + ubatch), CELL_PAD)
    return CacheCells(
        requested_ctx=requested, n_ctx=n_ctx, n_ctx_seq=n_ctx_seq, n_seq_max=slots, unified=unified,
        n_stream=streams, swa_cells=swa, said=tuple(said),
        setting=f"-c {knob}" + (f" ({came_to} {requested:,})" if came_to else ""),
    )  # fmt: skip
