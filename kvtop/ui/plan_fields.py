"""The planner's form as values: its fields (key, label, how the text reads), and a field's reason for an invalid
edit, headed by the field the operator typed (kept apart from planning.py's arithmetic)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import get_args

from kvtop.domain.engines.base import CompileCacheState
from kvtop.domain.engines.registry import EngineId, engine_flags
from kvtop.domain.engines.versions import LATEST
from kvtop.domain.errors import InputError
from kvtop.domain.launch import check_values, spelling_of


class FieldKind(Enum):
    """How a field's text becomes a value (planning.py's parse): what it reads and what a blank means."""

    TEXT = "text"  # a model (preset, config path or hub id); never blank
    TEXT_OR_BLANK = "text?"  # free text, blank: not said
    COUNT = "int"  # a whole number of at least 1; never blank
    COUNT_OR_BLANK = "int?"  # a whole number of at least 1, blank: the engine's default
    COUNT_OR_ZERO = "int0"  # a whole number of at least 0, blank: 0
    SLOTS = "slots?"  # a count of at least 1, blank: off, 'default' (or 'on'): the engine's own count
    SHARE = "float?"  # a number above 0 and at most 1, blank: the engine's default
    GIB = "gib?"  # a size in GiB, or 'x2': a multiple of the GPU pool; blank: none
    SWITCH = "bool"  # on or off
    DTYPE = "dtype"  # one of the engine's KV cache dtypes
    CACHE = "cache"  # the compile cache's state (`CACHE_STATES`)

    @property
    def is_number(self) -> bool:
        """Whether its text is a number (a count, a share, a size; '32K', 'x2', 'auto' at most): no P or c in it."""
        return self in _NUMBERS

    @property
    def is_count(self) -> bool:
        """Whether it is a count an engine may read its own way ('32K': `engine_count`)."""
        return self in (FieldKind.COUNT, FieldKind.COUNT_OR_BLANK, FieldKind.COUNT_OR_ZERO)

    @property
    def may_be_blank(self) -> bool:
        """Whether a blank text is a value (the engine's default, off, none) rather than an error."""
        return self not in (FieldKind.TEXT, FieldKind.COUNT, FieldKind.SWITCH, FieldKind.DTYPE, FieldKind.CACHE)


_NUMBERS = frozenset({FieldKind.COUNT, FieldKind.COUNT_OR_BLANK, FieldKind.COUNT_OR_ZERO, FieldKind.SLOTS,
                      FieldKind.SHARE, FieldKind.GIB})  # fmt: skip


@dataclass(frozen=True)
class PlanField:
    """One editable setting: its input id, its label, and how its text becomes a value."""

    key: str  # input id suffix and key in the values mapping
    label: str
    kind: FieldKind


FIELDS: tuple[PlanField, ...] = (
    PlanField("model", "model", FieldKind.TEXT),
    PlanField("tp", "TP", FieldKind.COUNT),
    PlanField("pp", "PP", FieldKind.COUNT),
    PlanField("ep", "EP", FieldKind.COUNT),
    PlanField("dp", "DP", FieldKind.COUNT),
    PlanField("enable_dp_attention", "DP attention", FieldKind.SWITCH),
    PlanField("kv_cache_dtype", "KV dtype", FieldKind.DTYPE),
    PlanField("memory_fraction", "memory fraction", FieldKind.SHARE),
    PlanField("page_size", "page size", FieldKind.COUNT_OR_BLANK),
    PlanField("context_length", "context length", FieldKind.COUNT_OR_BLANK),
    PlanField("max_running_requests", "max requests", FieldKind.COUNT_OR_BLANK),
    # whose rules solve the after column (`--engine-version`; blank: the latest release's), e.g. an upgrade's
    PlanField("engine_version", "engine version", FieldKind.TEXT_OR_BLANK),
    # the deployment beside the model (kvtop.domain.deployment), written in the engine's own flags
    PlanField("spec_method", "speculative", FieldKind.TEXT_OR_BLANK),
    PlanField("redundant_experts", "redundant experts", FieldKind.COUNT_OR_ZERO),
    PlanField("lora_slots", "LoRA slots", FieldKind.SLOTS),
    PlanField("lora_rank", "LoRA rank", FieldKind.COUNT_OR_BLANK),
    PlanField("host_kv_gib", "host KV GiB", FieldKind.GIB),  # per rank, or "x2": twice the GPU pool (HiCache)
    # what shares the GPU beside the engine, as `plan --desktop` says it (`MeasuredInputs.desktop`)
    PlanField("desktop", "desktop", FieldKind.SWITCH),
    # torch.compile's cache on the node, as `plan --compile-cache` says it (`MeasuredInputs.compile_cache`): a what-if
    PlanField("compile_cache", "compile cache", FieldKind.CACHE),
)
#: Planner keys that are deployment settings (each engine's `deployment.with_setup` writes them as flags).
DEPLOYMENT_KEYS = frozenset({"spec_method", "redundant_experts", "lora_slots", "lora_rank", "host_kv_gib"})
#: Planner keys that are what the GPU holds beside the engine (`MeasuredInputs` fields of the same name), not flags.
MEASURED_KEYS = frozenset({"desktop", "compile_cache"})

#: The fields whose placeholder offers the engine's own pick as 'auto: 0.818' (the planner's hints): 'auto' typed there
#: reads as the blank it names (session 64's operator typed it and was told 'needs a number'); an engine that reads
#: 'auto' its own way (vLLM's --max-model-len auto: fit to memory) is read as the engine reads it (`engine_count`).
AUTO_KEYS = frozenset({"memory_fraction", "page_size", "context_length", "max_running_requests"})
AUTO = "auto"


def offers_auto(engine: EngineId, key: str, version: str | None) -> bool:
    """Whether the field's placeholder may offer the engine's pick as 'auto: …': 'auto' typed there reads as the
    blank (`AUTO_KEYS`), not as the engine's own 'auto' (vLLM's --max-model-len auto, auto-fit to memory from
    v0.14.0, which kvtop refuses as not modelled; before it a number is needed): that field says 'default: …'."""
    if key not in AUTO_KEYS:
        return False
    try:
        return engine_count(engine, key, AUTO, version) is None
    except InputError:  # the engine reads 'auto' its own way and kvtop refuses it, or the release refuses the word
        return False


def pick_hint(engine: EngineId, key: str, version: str | None, pick: str | None) -> str:
    """The placeholder of a blank field of `AUTO_KEYS`: the engine's pick, 'auto: 0.818' where 'auto' typed reads as
    the blank (`offers_auto`), else 'default: 131072' (vLLM's context length); 'no share' where the engine takes
    none (llama.cpp's memory fraction: `pick` None)."""
    if pick is None:
        return "no share"
    return f"{AUTO if offers_auto(engine, key, version) else 'default'}: {pick}"


#: The compile cache field's choices: "unsaid" is `plan` without --compile-cache (the domain plans a cold start)
CACHE_STATES: tuple[str, ...] = ("unsaid", *get_args(CompileCacheState))
FIELD_BY_KEY = {field.key: field for field in FIELDS}


@dataclass(frozen=True)
class FieldError:
    """One field's reason, worded with the field's own label ('PP: needs a whole number, got 'x''), whether
    the planner's parse or the engine's rules found it (they name it by flag: '--pp')."""

    key: str | None  # the planner field it names (None: no field, e.g. a layout kvtop cannot compute)
    message: str


def edited_field_error(error: FieldError, edited: frozenset[str]) -> FieldError:
    """`error` headed by the field the operator edited where the engine's rule named another one the edit left as it
    was: llama.cpp's '-c 8192 over 999999999 slots leaves no cells per slot' names -c (context length) when max
    requests was typed. Only where exactly one field was edited (else which one is a guess): the rule's own words,
    which name its flag, stay."""
    if error.key is None or error.key in edited or len(edited) != 1:
        return error
    (key,) = edited
    text = error.message.removeprefix(f"{FIELD_BY_KEY[error.key].label}: ")
    return FieldError(key, f"{FIELD_BY_KEY[key].label}: {text}")


def edited_keys(base: Mapping[str, str], texts: Mapping[str, str]) -> frozenset[str]:
    """The form's fields whose text differs from what `base` starts them with (the planner's fields only)."""
    return frozenset(field.key for field in FIELDS
                     if texts.get(field.key, "").strip() != base.get(field.key, "").strip())  # fmt: skip


def engine_count(engine: EngineId, key: str, text: str, version: str | None) -> int | None:
    """A count typed as the engine reads it where that is not Python's int() (vLLM's '32K' for context length at a
    release that takes it, as `kvtop plan --max-model-len 32K` reads it: `EngineFlags.read_int`), else None; a form
    the release refuses is an InputError naming the engine's flag. `version` None or 'latest': the latest."""
    raw = text.strip()
    if not raw or raw.isdigit():
        return None
    stated = None if version is None or version.strip().lower() in ("", LATEST) else version.strip()
    flag = spelling_of(engine, key)
    value = engine_flags(engine).read_int(key, raw, flag, stated)
    if value is not None:  # the engine's refusals of the value read, as `plan` says them ('auto': -1, not modelled)
        check_values(engine, {key: value}, {key: flag})
    return value
