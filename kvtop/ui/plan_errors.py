"""Planner field errors: which field an error or an engine flag names, and every bad field of an edit worded
with its own label, so the planner marks each field and keeps its text."""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.deployment import DeploymentSetup
from kvtop.domain.engines.registry import ENGINE_IDS, EngineId, engine_rules
from kvtop.domain.engines.registry import engine_flags as engine_flags_of
from kvtop.domain.errors import InputError, KvtopError
from kvtop.domain.launch import KVTOP_SPELLINGS
from kvtop.ui.plan_fields import FIELD_BY_KEY, FIELDS, FieldError

#: The planner keys that are `LaunchSettings` fields of the same name (the memory share is each engine's own).
_SETTING_KEYS = frozenset(
    {"model", "tp", "pp", "ep", "dp", "enable_dp_attention", "kv_cache_dtype", "page_size", "context_length",
     "max_running_requests", "engine_version"}
)  # fmt: skip


def field_of_flag(flag: str, engine: EngineId | None = None) -> str | None:
    """The planner field an engine flag sets ('--max-model-len' → 'context_length', LMDeploy's
    '--cache-block-seq-len' → 'page_size'), if any: read from the engine's own spellings (every engine's
    when `engine` is None), then kvtop's own."""
    for each in (engine,) if engine is not None else ENGINE_IDS:
        setting = engine_flags_of(each).spellings.get(flag)
        if setting is not None and setting == engine_rules(each).memory_fraction_field:
            return "memory_fraction"
        if setting in _SETTING_KEYS:
            return setting
    setting = KVTOP_SPELLINGS.get(flag)
    return setting if setting in _SETTING_KEYS else None


def named_field(err: KvtopError) -> str | None:
    """The field or flag an error names: an InputError's `field`; any other KvtopError names none."""
    return err.field if isinstance(err, InputError) else None


def field_of_error(err: KvtopError, engine: EngineId | None = None) -> str | None:
    """The planner field an error names (by label or by engine flag), if any."""
    name = named_field(err)
    if not name:
        return None
    by_label = next((field.key for field in FIELDS if field.label == name), None)
    by_flag = (field_of_flag(part, engine) for part in name.split("/"))  # '--tp-size/--tp': the engine's, kvtop's
    return by_label or next((key for key in by_flag if key), None)


class FieldErrors(InputError):
    """Every bad field of an edit, each with its own reason (the planner shows them all, not the first)."""

    def __init__(self, errors: tuple[FieldError, ...]) -> None:
        super().__init__("; ".join(error.message for error in errors))  # each message names its own field
        self.errors = errors
        self.field = next((FIELD_BY_KEY[e.key].label for e in errors if e.key is not None), None)


def field_error(err: KvtopError, engine: EngineId | None = None) -> FieldError:
    """`err` worded for the planner: the field it names by its label ('--pp: pp 999 exceeds…' → 'PP: …'). A form
    field's reason leaves out the model file it was found in ('… attention TP 3 in /home/…/llama-3-70b.json'): the
    model row above names the model, and the path only wrapped the line at 80 columns; the model field keeps it."""
    if isinstance(err, FieldErrors) and err.errors:
        return err.errors[0]
    key, text, name = field_of_error(err, engine), str(err), named_field(err)
    if key is None:
        return FieldError(None, text)
    if key != "model" and isinstance(err, InputError) and err.source:
        text = text.removesuffix(err.where)
    if name and text.startswith(f"{name}: "):
        text = text[len(name) + 2 :]
    return FieldError(key, f"{FIELD_BY_KEY[key].label}: {text}")


def model_load_error(ref: str, err: KvtopError | OSError) -> str:
    """The model loader's error as the model field says it: "model: 'REF': WHY" where it names the CLI's flag and
    the reference typed (the loader's own "--model: WHY in REF", whose flag the planner has no field of and whose
    trailing "in REF" read as part of the reason); a file it could not read as "model: cannot read 'REF': WHY"; any
    other error as the loader words it, after "model: "."""
    if isinstance(err, InputError) and err.field == "--model" and err.source == ref:
        return f"model: {ref!r}: {err.detail}"
    if isinstance(err, OSError):
        return f"model: cannot read {ref!r}: {err}"
    return f"model: {err}"


def lost_edit(values: Mapping[str, object], checked: DeploymentSetup) -> str | None:
    """The first deployment field whose value the engine's flags did not keep: its `with_setup` wrote no flag for it,
    so its `setup` reads the edited launch back without it (llama.cpp's speculative 'bogus' came out as no flag at
    all, TensorRT-LLM's redundant experts as none); None where every edit is in the launch. Each engine's own pair of
    rules decides, so no list of engines is kept here."""
    method, slots, rank = values.get("spec_method"), values.get("lora_slots"), values.get("lora_rank")
    spec = method if isinstance(method, str) and method.lower() != "none" else None
    kept = {
        "spec_method": (spec is None) == (checked.spec_method is None),
        "redundant_experts": (values.get("redundant_experts") or 0) == checked.redundant_experts,
        "lora_slots": checked.lora == (slots is not None)
        and (not isinstance(slots, int) or checked.max_loras == slots),
        "lora_rank": rank is None or checked.max_lora_rank == rank,
    }
    return next((key for key, ok in kept.items() if key in values and not ok), None)
