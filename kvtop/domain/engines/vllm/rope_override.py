"""A RoPE scaling the launch line gives vLLM, and the max length vLLM derives from it (docs/engines/vllm.md §3.7).

Two spellings replace config.json's rope scaling before `_get_and_verify_max_len` (vllm/config) derives the longest
`--max-model-len` it accepts:
- `--rope-scaling JSON` (EngineArgs.rope_scaling, `json.loads`): from before v0.6.3.post1 (read there) through v0.11.0
  (v0.11.0 config/model.py:398-404 moves it into hf_overrides and warns to use `--hf-overrides` instead); gone from
  v0.11.1's arg_utils.py, whose argparse then rejects it.
- `--hf-overrides JSON` (first in v0.6.4's arg_utils.py; v0.6.3.post1 has none): its `rope_scaling` key is merged
  into the config before `patch_rope_scaling` through v0.11.0 (transformers_utils/config.py `config.update`), set
  after it from v0.11.1 (config/model.py `_apply_dict_overrides`, a dict value); `_get_and_verify_max_len` reads
  `hf_config.rope_scaling` through v0.11.2 (v0.11.2 config/model.py:2080), `rope_parameters` from v0.12.0 (v0.12.0
  :2200, v0.13.0 :2116), which `patch_rope_parameters` fills from config.json before the dict override is set: from
  v0.12.0 through v0.19.0 (transformers < 5) an override's `rope_scaling` does not reach the derived length, its
  `rope_parameters` does. From v0.19.1 the wheel admits transformers 5.5.1 on (from v0.24.0 it asks for >= 5.5.3),
  whose `PreTrainedConfig.rope_scaling` is a property setting `rope_parameters`: the `setattr` of either key reaches
  the length, the last one the override names winning (`DERIVED_KEYS_ERAS`).

The derived length (v0.10.0 config.py:3527-3550, v0.13.0 config/model.py:2116-2140, read alike at v0.29.0): the
config's positions, then, unless the model type names gemma3 (its positions are scaled already), for each rope whose
type is not su, longrope or llama3: yarn takes its `original_max_position_embeddings` as the length, and the length
is multiplied by its `factor` (1.0 where none); from v0.30.0 the yarn variants are left out too (`YARN_UNSCALED_ERAS`,
config.json's rope or a launch's; the rope cache's rows still count it, weights_held.py). The rope in effect is the
launch's where one reaches the length, else config.json's (`derived_length`). Other `--hf-overrides` keys change
the config kvtop reads from config.json (a layer count, a width): not modelled, refused by name where typed or on a
launch line (`refuse_unmodelled_keys`, flags.py `refuse`); a log's printed overrides are read for their rope alone.
The same rope keys under `text_config` (a multimodal config's language model: Qwen3.5/3.6) reach the length from
v0.11.1, merged into config.json's rope (`NESTED_OVERRIDE_ERAS`); its other keys are refused as `text_config.<key>`.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.engines.vllm.rope_rows import DYNAMIC_SCALED_ERAS, LONGROPE_TYPES
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.redact import quoted

ROPE_SCALING_FLAG = "--rope-scaling"
HF_OVERRIDES_FLAG = "--hf-overrides"
FLAGS = frozenset({ROPE_SCALING_FLAG, HF_OVERRIDES_FLAG})
UNSCALED_TYPES = ("su", "longrope", "llama3")  # _get_and_verify_max_len leaves their factor out
THETA_KEY = "rope_theta"  # a rope's base frequency: no memory, no length
YARN_TYPES = frozenset({"yarn", "deepseek_yarn", "deepseek_llama_scaling"})
# whether `_get_and_verify_max_len` leaves a yarn rope's factor out of the derived length (config.json's rope and a
# launch's alike, `derived_length`; `derived_max_len` alone still scales it: the rope cache's rows, weights_held.py)
YARN_UNSCALED_ERAS: Eras[bool] = Eras((
    Era("", False, "yarn: original_max_position_embeddings × factor; other types but su, longrope, llama3: positions "
                   "× factor (v0.8.5 config.py:3048-3072, v0.11.0 config/model.py:1839-1863, v0.24.0 :2147-2177, "
                   "v0.29.0 :2445-2469)"),
    Era("0.30.0", True, "yarn, deepseek_yarn and deepseek_llama_scaling left out with su, longrope, llama3: 'YaRN "
                        "variants leave max_position_embeddings already scaled' (v0.30.0 config/model.py:2461-2492, "
                        "v0.34.0 :2643-2678)"),
))  # fmt: skip

ROPE_SCALING_FLAG_ERAS: Eras[bool] = Eras((
    Era("", True, "EngineArgs.rope_scaling (--rope-scaling, json.loads): read at v0.6.3.post1, v0.8.0, v0.10.0, v0.11.0"),
    Era("0.11.1", False, "v0.11.1 engine/arg_utils.py has no --rope-scaling (v0.11.0 config/model.py:398-404 already "
                         "warned: 'Please instead use `--hf-overrides …`')"),
))  # fmt: skip
HF_OVERRIDES_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.6.3.post1 engine/arg_utils.py has no --hf-overrides"),
    Era("0.6.4", True, "first in v0.6.4's engine/arg_utils.py (--hf-overrides, json.loads)"),
))  # fmt: skip
# the `--hf-overrides` keys whose dict reaches the rope `_get_and_verify_max_len` reads (the last one named wins:
# `_apply_dict_overrides` sets them in the override's order)
DERIVED_KEYS_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset({"rope_scaling"}),
        "_get_and_verify_max_len reads hf_config.rope_scaling (v0.10.0 config.py:3527, v0.11.2 config/model.py:2080)"),
    Era("0.12.0", frozenset({"rope_parameters"}),
        "_get_and_verify_max_len reads hf_config.rope_parameters (v0.12.0 config/model.py:2200, v0.13.0 :2116), which "
        "patch_rope_parameters fills from rope_scaling under transformers < 5 (v0.12.0 transformers_utils/config.py:"
        "301-310) before _apply_dict_overrides sets a dict override (v0.12.0 config/model.py:510, v0.19.0 :428, :508); "
        "the wheels through v0.19.0 ask for transformers < 5 (METADATA 'transformers<5,>=4.56.0')"),
    Era("0.19.1", frozenset({"rope_scaling", "rope_parameters"}),
        "the v0.19.1 wheel admits transformers 5.5.1 on ('!=5.0.*, …, !=5.5.0, >=4.56.0'; v0.24.0 '>=5.5.3'), whose "
        "PreTrainedConfig.rope_scaling is a property setting rope_parameters (transformers 5.5.1 and 5.5.3 "
        "configuration_utils.py:471-477): _apply_dict_overrides' setattr of rope_scaling (v0.24.0 config/model.py:"
        "441-456, after get_config's patch_rope_parameters, transformers_utils/config.py:759-768, and :546) reaches "
        "the rope_parameters _get_and_verify_max_len reads (:2145-2177); an environment kept at transformers 4.x "
        "through v0.23.x would not (not modelled: a fresh install resolves 5.x)"),
))  # fmt: skip
ROPE_KEYS = frozenset({"rope_scaling", "rope_parameters", THETA_KEY})
TEXT_CONFIG_KEY = "text_config"  # a multimodal config's language model section (Qwen3.5/3.6 nest their rope there)
# whether an `--hf-overrides` `text_config` object is merged into the text model's config (its rope keys then reach
# the length as a top-level one does: `_get_and_verify_max_len` reads `hf_text_config`), not replacing the section
NESTED_OVERRIDE_ERAS: Eras[bool] = Eras((
    Era("", False, "get_config's `config.update(hf_overrides_kw)` sets text_config to the plain dict, replacing the "
                   "section (v0.11.0 transformers_utils/config.py:631-633)"),
    Era("0.11.1", True, "_apply_dict_overrides recurses into a nested PretrainedConfig (_update_nested: a dict value "
                        "merged key by key into the dict it names, the section's other keys kept), then "
                        "hf_text_config = get_hf_text_config(hf_config), which _get_and_verify_max_len reads (v0.11.1 "
                        "config/model.py:368-411, :514-515, :1737; v0.27.1 :457-500, :593-594, :1874; v0.34.0 "
                        ":542-585, :709-710, :2205)"),
))  # fmt: skip
# whether, with no --max-model-len, a longrope rope in effect makes the default length the config's top-level
# original_max_position_embeddings (`getattr(hf_config, …, derived)`: 'to avoid performance degradation for shorter
# sequences')
LONGROPE_DEFAULT_ERAS: Eras[bool] = Eras((
    Era("", False, "_get_and_verify_max_len: the derived length is the default whatever the rope type (v0.11.0 "
                   "config/model.py:1870-1871)"),
    Era("0.11.1", True, "_get_and_verify_max_len: 'For LongRoPE, default to original_max_position_embeddings' "
                        "(v0.11.1 and v0.11.2 config/model.py:2112-2120 on rope_scaling; v0.12.0 :2231-2240, v0.13.0 "
                        ":2147-2157, v0.34.0 :2687-2693 on rope_parameters)"),
))  # fmt: skip


def json_object(text: object, flag: str) -> dict[str, object]:
    """The flag's JSON object, or the Python dict a log's `non-default args` prints for it ({'rope_type': 'yarn'})."""
    if not isinstance(text, str):
        raise InputError("needs a JSON object", field=flag)
    try:
        value = json.loads(text)
    except ValueError:
        value = _printed_dict(text)
        if value is None:
            raise InputError(f"is not JSON (got {quoted(text, 60)})", field=flag) from None
    if not isinstance(value, dict):
        raise InputError(f"must be a JSON object (got {quoted(text, 60)})", field=flag)
    return value


def _printed_dict(text: str) -> object:
    """A Python literal as vLLM's log prints an argument (`{'factor': 4.0}`), or None; bounded, literals only."""
    if len(text) > 4000 or not text.lstrip().startswith("{"):
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _ropes(value: object, flag: str) -> tuple[dict[str, object], ...]:
    """The rope dict(s): one, or one per layer type (a dict of dicts, v0.12.0 on); each names its rope_type."""
    if not isinstance(value, dict):
        raise InputError("must be a JSON object", field=flag)
    nested = bool(value) and all(isinstance(inner, dict) for inner in value.values())
    ropes = tuple(value.values()) if nested else (value,)
    for rope in ropes:
        kind = rope.get("rope_type", rope.get("type"))
        if not isinstance(kind, str):
            raise InputError("needs a rope_type (e.g. yarn)", field=flag)
        factor = rope.get("factor")
        if factor is not None and (not isinstance(factor, (int, float)) or isinstance(factor, bool) or factor <= 0):
            raise InputError(f"factor must be a positive number (got {factor!r})", field=flag)
        original = rope.get("original_max_position_embeddings")
        if kind == "yarn" and (not isinstance(original, int) or isinstance(original, bool) or original < 1):
            raise InputError("yarn needs original_max_position_embeddings, a whole number (vLLM reads it)", field=flag)
    return ropes


def refuse_unmodelled_keys(value: object) -> None:
    """An `--hf-overrides` typed to kvtop or on a launch line names only keys kvtop reads (the rope keys, at the top
    level or under `text_config`); any other changes the config kvtop reads from config.json (a layer count, a
    width): InputError naming it, `text_config.num_hidden_layers` where nested (a log's printed overrides, what ran,
    are read for their rope alone)."""
    given = json_object(value, HF_OVERRIDES_FLAG)
    nested = given.get(TEXT_CONFIG_KEY, {})
    if not isinstance(nested, dict):
        raise InputError(f"{TEXT_CONFIG_KEY} must be a JSON object", field=HF_OVERRIDES_FLAG)
    other = sorted(set(given) - ROPE_KEYS - {TEXT_CONFIG_KEY}) or sorted(f"{TEXT_CONFIG_KEY}.{key}" for key in set(nested) - ROPE_KEYS)
    if other:
        raise InputError(f"key {other[0]!r} is not modelled by kvtop (it changes the config kvtop reads from "
                         "config.json: write it there); kvtop reads rope_scaling, rope_parameters and rope_theta, "
                         f"at the top level or under {TEXT_CONFIG_KEY}",
                         field=HF_OVERRIDES_FLAG)  # fmt: skip


def _config_rope(model: ModelSpec | None) -> dict[str, object]:
    """config.json's rope block as kvtop reads it (type, factor, original positions, whether it states
    mrope_section): what a `text_config` override's rope is merged into (`_update_nested` keeps the keys it does not
    name). A rope nested by layer type, which kvtop does not read, counts as none (its keys are not kept)."""
    if model is None or not model.rope_type:
        return {}
    base: dict[str, object] = {"rope_type": model.rope_type, "factor": model.rope_factor}
    if model.rope_original_positions:
        base["original_max_position_embeddings"] = model.rope_original_positions
    if model.mrope:
        base["mrope_section"] = "config.json's"
    return base


def _override_items(
    given: Mapping[str, object], version: ResolvedVersion, model: ModelSpec | None
) -> list[tuple[str, object, str]]:
    """(rope key, its value, the spelling) in the override's order: a top-level rope key as given, a `text_config`
    one merged into config.json's rope (`_config_rope`, `NESTED_OVERRIDE_ERAS`; none without the model); InputError for a `text_config`
    override at a release that replaces the whole section with it."""
    items: list[tuple[str, object, str]] = []
    for name, value in given.items():
        if name != TEXT_CONFIG_KEY:
            items.append((name, value, f"{HF_OVERRIDES_FLAG} {name}"))
            continue
        era = era_for(NESTED_OVERRIDE_ERAS, version)
        if not era.value:
            raise InputError(f"{TEXT_CONFIG_KEY} is not modelled by kvtop at vLLM {version.label} ({era.source})",
                             field=HF_OVERRIDES_FLAG)  # fmt: skip
        if not isinstance(value, dict):
            raise InputError(f"{TEXT_CONFIG_KEY} must be a JSON object", field=HF_OVERRIDES_FLAG)
        if model is not None and model.text_section != TEXT_CONFIG_KEY:
            raise InputError(f"{TEXT_CONFIG_KEY}: this config has no {TEXT_CONFIG_KEY} section (vLLM sets the plain "
                             "dict there and get_hf_text_config refuses it: 'does not have `num_attention_heads`', "
                             "v0.27.1 transformers_utils/config.py:1053-1065, config/model.py:494-499)",
                             field=HF_OVERRIDES_FLAG)  # fmt: skip
        for key, inner in value.items():
            if model is None:  # the merge needs config.json's rope: read where the plan has the model
                continue
            merged = {**_config_rope(model), **inner} if isinstance(inner, dict) else inner
            items.append((key, merged, f"{HF_OVERRIDES_FLAG} {TEXT_CONFIG_KEY}.{key}"))
    return items


def launch_ropes(
    settings: LaunchSettings, version: ResolvedVersion, model: ModelSpec | None = None
) -> tuple[tuple[dict[str, object], ...], str] | None:
    """(the rope dict(s) the launch gives `_get_and_verify_max_len`, the spelling) or None where it gives none; a
    `text_config` rope merged into the model's own (`_override_items`; without a model, as given).

    Raises InputError for a malformed value or `--rope-scaling` at a release without it."""
    flags: Mapping[str, object] = settings.flags
    scaling, overrides = flags.get(ROPE_SCALING_FLAG[2:]), flags.get(HF_OVERRIDES_FLAG[2:])
    found: tuple[tuple[dict[str, object], ...], str] | None = None
    if overrides is not None:
        if not era_for(HF_OVERRIDES_ERAS, version).value:
            raise InputError(f"vLLM {version.label} has no such flag ({era_for(HF_OVERRIDES_ERAS, version).source})",
                             field=HF_OVERRIDES_FLAG)  # fmt: skip
        given = json_object(overrides, HF_OVERRIDES_FLAG)
        keys = era_for(DERIVED_KEYS_ERAS, version).value
        for name, value, spelling in _override_items(given, version, model):  # in order: the last that reaches wins
            if name in ("rope_scaling", "rope_parameters"):
                ropes = _ropes(value, spelling)
                if name in keys:
                    found = ropes, spelling
    if scaling is not None:
        era = era_for(ROPE_SCALING_FLAG_ERAS, version)
        if not era.value:
            raise InputError(f"vLLM {version.label} has no such flag ({era.source}): give "
                             f"{HF_OVERRIDES_FLAG} '{{\"{_reaching_key(version)}\": …}}'",
                             field=ROPE_SCALING_FLAG)  # fmt: skip
        found = _ropes(json_object(scaling, ROPE_SCALING_FLAG), ROPE_SCALING_FLAG), ROPE_SCALING_FLAG
    return found


def derived_max_len(
    model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion, unscaled: frozenset[str] = frozenset(UNSCALED_TYPES)
) -> tuple[int, str] | None:
    """(the max length vLLM derives from the config's positions under the launch's rope scaling, whose) or None where
    the launch gives no rope scaling that reaches it (the config's positions then stand). A config that names no
    position field is scaled too: `_get_and_verify_max_len` takes its 2,048 default (kvtop's nominal positions,
    `ModelSpec.positions_nominal`) and multiplies it as any other (v0.10.1 config/__init__.py:2882-2898, :2900-2924), where no
    --max-model-len is given (a given one it returns as it is, :2883-2885: `refusals.context_above_positions`)."""
    given = launch_ropes(settings, version, model)
    scaled = _scaled(model, given[0], unscaled) if given else None
    if given is None or scaled is None:
        return None
    derived, length, factor = scaled
    whose = "its default where the config names no position field" if model.positions_nominal else "positions"
    return derived, f"{given[1]}: {length:,} {whose} × factor {factor:g} (_get_and_verify_max_len)"


def _scaled(
    model: ModelSpec, ropes: Sequence[Mapping[str, object]], unscaled: frozenset[str]
) -> tuple[int, int, float] | None:
    """`_get_and_verify_max_len`'s scaling, the one rule a launch's rope and config.json's take: (the derived length,
    the length scaled, its factor), or None where no rope scales it. None for a gemma3 model (its positions are scaled
    already); a rope whose type is in `unscaled` is left out; yarn takes its original_max_position_embeddings as the
    length; the length times the (last stated) factor, 1.0 where none (v0.10.0 config.py:3527-3550, v0.13.0
    config/model.py:2116-2140)."""
    if "gemma3" in (model.config_model_type or model.model_type):
        return None
    length: int = model.max_position_embeddings
    factor = 1.0
    scaled = False
    for rope in ropes:
        kind = rope.get("rope_type", rope.get("type"))
        if kind in unscaled:
            continue
        scaled = True
        stated = rope.get("factor")
        factor = float(stated) if isinstance(stated, (int, float)) else factor
        original = rope.get("original_max_position_embeddings")
        # `rope_type == "yarn"` only: deepseek_yarn scales the positions, though its cache is original × factor rows
        # (rope_rows.YARN), in every release read
        if kind == "yarn" and isinstance(original, int):
            length = original
    return (int(length * factor), length, factor) if scaled else None


def launch_rope_rows(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> tuple[int, str] | None:
    """(the rows the launch's rope builds its cos/sin cache for, why), or None where the launch gives no rope that
    scales the length (the config's own rope's rows stand: rope_rows.config_rope_rows): the derived length (linear,
    YaRN; dynamic NTK through v0.21.0), but a dynamic NTK rope's cache is the positions long from v0.22.0, its factor
    left out (rope_rows.DYNAMIC_SCALED_ERAS)."""
    derived = derived_max_len(model, settings, version)
    given = launch_ropes(settings, version, model)
    era = era_for(DYNAMIC_SCALED_ERAS, version)
    if derived is None or given is None or era.value or derived[0] == model.max_position_embeddings:
        return derived
    if {rope.get("rope_type", rope.get("type")) for rope in given[0]} - set(UNSCALED_TYPES) != {"dynamic"}:
        return derived
    positions = model.max_position_embeddings
    return positions, f"{given[1]}: dynamic rope: {positions:,} positions, its factor left out ({era.source})"


def unread_override(settings: LaunchSettings, version: ResolvedVersion) -> str | None:
    """Why an `--hf-overrides` rope the release does not derive the length from leaves it unscaled ('…rope_scaling
    is set after…'), or None where the launch gives none such."""
    overrides = settings.flags.get(HF_OVERRIDES_FLAG[2:])
    if overrides is None:
        return None
    keys = era_for(DERIVED_KEYS_ERAS, version)
    named = json_object(overrides, HF_OVERRIDES_FLAG)
    nested = named.get(TEXT_CONFIG_KEY)
    given = (set(named) | set(nested if isinstance(nested, dict) else ())) & {"rope_scaling", "rope_parameters"}
    if not given or keys.value & given:
        return None
    other = given.pop()
    return (f"max_position_embeddings: {HF_OVERRIDES_FLAG}' {other} does not reach the derived length at this release "
            f"({keys.source}): give {_reaching_key(version)}")


def _reaching_key(version: ResolvedVersion) -> str:
    """The `--hf-overrides` key to name where a rope must reach the derived length: rope_parameters where it does."""
    keys = era_for(DERIVED_KEYS_ERAS, version).value
    return "rope_parameters" if "rope_parameters" in keys else "rope_scaling"



def longrope_default(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> tuple[int, str] | None:
    """(the length vLLM starts at, why) where no --max-model-len is given and the rope in effect (the launch's where it
    reaches the derived length, else config.json's) is longrope: the config's original_max_position_embeddings
    (`LONGROPE_DEFAULT_ERAS`); None elsewhere, or where the config states none (vLLM's `getattr` then falls back to a
    config class's default or the derived length: not read, the derived length stands)."""
    era = era_for(LONGROPE_DEFAULT_ERAS, version)
    if settings.context_length or not era.value:
        return None
    given = launch_ropes(settings, version, model)
    kinds = {rope.get("rope_type", rope.get("type")) for rope in given[0]} if given else {model.rope_type}
    original = model.rope_original_positions
    if not kinds & LONGROPE_TYPES or not original:
        return None
    return original, f"the config's original_max_position_embeddings {original:,}, a longrope config's default ({era.source})"


def max_model_len(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> int:
    """§3.7: the launch's --max-model-len, else the length `_get_and_verify_max_len` defaults to: a longrope config's
    original positions (`longrope_default`), else the config's positions scaled by the rope in effect
    (`derived_or_positions`)."""
    if settings.context_length:
        return settings.context_length
    default = longrope_default(model, settings, version)
    return default[0] if default else derived_or_positions(model, settings, version)


def config_derived(model: ModelSpec, version: ResolvedVersion) -> tuple[int, str] | None:
    """(the length vLLM derives from config.json's own rope, whose) or None where it is the positions: the same rule
    as a launch's rope (`derived_max_len`), with the yarn variants left out from v0.30.0 (`YARN_UNSCALED_ERAS`). A
    rope nested by layer type (kvtop reads no type for it) is not read: the positions stand."""
    kind = model.rope_type
    era = era_for(YARN_UNSCALED_ERAS, version)
    original = {"original_max_position_embeddings": model.rope_original_positions} if model.rope_original_positions else {}
    unscaled = frozenset(UNSCALED_TYPES) | (YARN_TYPES if era.value else set())
    scaled = _scaled(model, ({"rope_type": kind, "factor": model.rope_factor, **original},), unscaled) if kind else None
    if scaled is None or scaled[0] == model.max_position_embeddings:
        return None
    derived, length, factor = scaled
    whose = "original_max_position_embeddings" if length != model.max_position_embeddings else "positions"
    return derived, f"config.json's {kind} rope: {length:,} {whose} × factor {factor:g} (_get_and_verify_max_len, {era.source})"


def derived_length(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> tuple[int, str] | None:
    """(the length `_get_and_verify_max_len` derives, whose) where it is not the config's positions: the launch's
    rope where one reaches it (`derived_max_len`; it replaces config.json's), else config.json's (`config_derived`)."""
    if launch_ropes(settings, version, model) is None:
        return config_derived(model, version)
    yarn_unscaled = era_for(YARN_UNSCALED_ERAS, version).value
    return derived_max_len(model, settings, version, frozenset(UNSCALED_TYPES) | (YARN_TYPES if yarn_unscaled else set()))


def derived_or_positions(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> int:
    """The length vLLM derives from the config (its positions, scaled by the rope in effect: the launch's, else
    config.json's): the default where no longrope default applies, and the most --max-model-len may ask of a
    longrope config."""
    derived = derived_length(model, settings, version)
    return derived[0] if derived else model.max_position_embeddings
