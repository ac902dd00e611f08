"""Model configs from a path, a checkpoint folder, a built-in preset, or the Hugging Face cache/hub.

With hub_download.py (the files fetched once the hub has answered), the only importer of huggingface_hub.
Offline first: the local cache is tried before the network, and `HF_HUB_OFFLINE=1` is honoured. A hub that cannot
be reached is known within `HUB_REACH_DEADLINE_S` (one HEAD request, on a daemon thread so that not even a DNS lookup can
hold the answer, and no retries), and the error names the preset of that model (same family and
size, if one is bundled), a local config path and HF_HUB_OFFLINE=1. With the hub reachable, the checkpoint's exact bytes come from its
safetensors headers over HTTP range requests (huggingface_hub's `get_safetensors_metadata`),
never from the weights; a local checkpoint folder's headers are read from disk (the 8-byte
length and the JSON header only). Every header is validated (`domain.safetensors_header`).
"""

from __future__ import annotations

import copy
import os
import re
import struct
import threading
import time
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

from kvtop.bundled import bundled_dir
from kvtop.domain.config_override import ConfigOverride
from kvtop.domain.errors import InputError
from kvtop.domain.mistral_params import model_from_params
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.processor_config import image_pixels
from kvtop.domain.redact import shown_cut
from kvtop.domain.safetensors_header import MAX_HEADER_BYTES, header_bytes
from kvtop.sources.engines.registry import model_file_reader
from kvtop.sources.hub_download import MISTRAL_PARAMS, download_config, hub_safetensors_bytes
from kvtop.sources.json_file import parse_json_object, read_json_object

T = TypeVar("T")

PRESET_DIR_ENV = "KVTOP_PRESETS"
HUB_REACH_DEADLINE_S = 2.0  # a hub that has not answered one HEAD by then is "unreachable"
HUB_DEADLINE_S = 30.0  # the whole read of one model from the hub (`--timeout` of plan and explain)


def preset_dir() -> Path:
    """examples/models, as shipped with this kvtop (or $KVTOP_PRESETS)."""
    override = os.environ.get(PRESET_DIR_ENV)
    if override:
        return Path(override)
    return bundled_dir("examples", "models")


@lru_cache(maxsize=1)
def _named_text_configs_read() -> Mapping[str, Mapping[str, Any]]:
    """The named configs as read once (never handed out: a caller gets its own copy)."""
    folder = bundled_dir("examples", "models", "named")
    return MappingProxyType({
        path.stem.replace("--", "/", 1): read_json_object(path, "config", field="text_model_id")
        for path in sorted(folder.glob("*.json"))
    })  # fmt: skip


def named_text_configs() -> Mapping[str, Mapping[str, Any]]:
    """The published configs kvtop holds of checkpoints a config names by Hub id (Ultravox's text_model_id:
    domain/architectures/named_text.py), by id: examples/models/named/<owner>--<name>.json (sources in
    examples/models/README.md). Package data, not presets. Each call gets its own deep copy of the cached
    read, so a caller that edits a nested dict cannot change what the next caller reads."""
    return MappingProxyType(copy.deepcopy(dict(_named_text_configs_read())))


def preset_names() -> list[str]:
    folder = preset_dir()
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []


def _sibling_quant_config(config_path: Path) -> tuple[dict[str, Any], str] | None:
    """ModelOpt's hf_quant_config.json beside config.json (or `<stem>.hf_quant_config.json`)."""
    for candidate in (
        config_path.parent / "hf_quant_config.json",
        config_path.with_name(config_path.stem + ".hf_quant_config.json"),
    ):
        if candidate.is_file():
            return read_json_object(candidate, "hf_quant_config", field="--model"), str(candidate)
    return None


def _with_processor(spec: ModelSpec, config_path: Path) -> ModelSpec:
    """The spec with its image processor's pixel bounds from the checkpoint's preprocessor_config.json beside its
    config.json (else `<stem>.preprocessor_config.json` beside any config), said in its notes; unchanged where there is
    none or it states no bounds."""
    folder = config_path.parent / "preprocessor_config.json" if config_path.name == "config.json" else None
    for candidate in (folder, config_path.with_name(config_path.stem + ".preprocessor_config.json")):
        if candidate is None or not candidate.is_file():
            continue
        pixels = image_pixels(read_json_object(candidate, "preprocessor", field="--model"), str(candidate))
        if pixels is not None:
            said = f"image processor sizes {pixels[0]:,} – {pixels[1]:,} px from {candidate.name}"
            return spec.model_copy(update={"image_pixels": pixels, "read_from": (*spec.read_from, said)})
    return spec


def safetensors_bytes(folder: Path) -> int | None:
    """Total tensor bytes of a checkpoint folder from its safetensors headers (None if none)."""
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        return None
    return sum(_local_header_bytes(file) for file in files)


def _local_header_bytes(file: Path) -> int:
    source = str(file)
    try:
        if not file.is_file():
            raise InputError("not a regular file", source=source)
        size = file.stat().st_size
        with file.open("rb") as handle:
            head = handle.read(8)
            if len(head) != 8:
                raise InputError("truncated safetensors file (no 8-byte header length)", source=source)
            (length,) = struct.unpack("<Q", head)
            if length > min(MAX_HEADER_BYTES, size - 8):
                raise InputError(
                    f"safetensors header length {length:,} exceeds the file or the format's limit",
                    source=source,
                )
            raw = handle.read(length)
    except OSError as err:
        raise InputError(f"cannot read safetensors header: {err.__class__.__name__}", source=source) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("safetensors header is not UTF-8 JSON", source=source) from None
    return header_bytes(parse_json_object(text, "safetensors header", source=source), source=source)


def _model_name(path: Path) -> str:
    """A config file's model name: its stem ('meta-llama--Llama-3.1-8B'), or for a checkpoint's own
    `config.json` (or Mistral's `params.json`) the folder holding it ('Llama-3.1-8B/config.json' names Llama-3.1-8B,
    not 'config')."""
    if path.stem in ("config", "params") and path.resolve().parent.name:
        return path.resolve().parent.name
    return path.stem


NO_FOLDER_CONFIG = "has no config.json (nor Mistral's params.json)"
NO_CONFIG = f"{NO_FOLDER_CONFIG} on the hub"
CONFIG_NOT_FOUND = "config file not found"


def load_params_file(path: Path, name: str | None = None, *, family: str | None = None) -> ModelSpec:
    """A Mistral-format `params.json`, read the way vLLM maps it (`domain.mistral_params`)."""
    params = read_json_object(path, "params", field="--model")
    return model_from_params(params, source=str(path), name=name or _model_name(path), family=family)


def load_config_file(
    path: Path, name: str | None = None, *, family: str | None = None, override: ConfigOverride | None = None
) -> ModelSpec:
    if path.name == MISTRAL_PARAMS:
        _no_override(override, "a Mistral params.json")
        return load_params_file(path, name, family=family)
    config = read_json_object(path, "config", field="--model")
    quant = _sibling_quant_config(path)
    spec = model_from_config(
        config,
        source=str(path),
        name=name or _model_name(path),
        hf_quant_config=quant[0] if quant else None,
        hf_source=quant[1] if quant else "hf_quant_config.json",
        family=family,
        named_configs=named_text_configs(),
        override=override,
    )
    return _with_processor(spec, path)


def _no_override(override: ConfigOverride | None, what: str) -> None:
    """A launch's config override is merged into a Hugging Face config: refused by name on another model file."""
    if override is not None:
        raise InputError(f"kvtop merges it into a Hugging Face config.json, not {what}", field=override.flag)


def load_model(
    ref: str, *, family: str | None = None, deadline_s: float = HUB_DEADLINE_S, override: ConfigOverride | None = None
) -> ModelSpec:
    """Resolve a model reference: a config path, a checkpoint folder, a preset, or a hub id.

    `family` forces the modelled family the config is read as (`--model-family`); a hub read takes
    at most `deadline_s` (the config, else an InputError; the checkpoint's size, else unknown). `override`: the
    launch's override of the config (SGLang's --json-model-override-args), merged in before it is read.
    """
    try:
        path = Path(ref).expanduser()
        is_dir, exists = path.is_dir(), path.exists()
    except (RuntimeError, OSError) as err:  # `~name/…` with no such user; a name longer than the OS allows
        reason = (
            "no such user's home" if isinstance(err, RuntimeError) else err.strerror or type(err).__name__
        )
        raise InputError(f"not a path kvtop can read ({reason})", field="--model", source=shown_cut(ref, 200), value_is_file=True) from None
    if is_dir:
        config = path / "config.json"
        if not config.exists() and (path / MISTRAL_PARAMS).is_file():  # a Mistral-format checkpoint folder
            config = path / MISTRAL_PARAMS
        elif not config.exists():  # said as the folder it is, with both files kvtop reads (not '…/config.json')
            raise InputError(f"the checkpoint folder {NO_FOLDER_CONFIG}", field="--model", source=str(path), value_is_file=True)
        spec = load_config_file(config, name=path.name, family=family, override=override)
        return spec.model_copy(update={"checkpoint_bytes": safetensors_bytes(path)})
    if exists:
        reader = model_file_reader(path)  # an engine's own model file (llama.cpp's .gguf)
        if reader is not None:
            _no_override(override, "an engine's own model file")
            return reader(path, family)
        return load_config_file(path, family=family, override=override)
    preset = preset_dir() / f"{ref.lower()}.json"
    if "/" not in ref and preset.is_file():
        return load_config_file(preset, name=ref, family=family, override=override)
    if ref.endswith(".json") or ref.startswith((".", "/", "~")):
        raise InputError(CONFIG_NOT_FOUND, field="--model", source=ref, value_is_file=True)
    if ref.count("/") == 1:
        return _from_hub(ref, family, time.monotonic() + deadline_s, override)
    raise InputError(
        f"not a file, folder, preset or hub id (presets: {', '.join(preset_names()) or 'none found'})",
        field="--model",
        source=ref,
        value_is_file=True,
    )


_SIZE_PART = re.compile(r"\d+(?:x\d+)?[bm]")  # a name part that states a size: 235b, 8b, 8x7b, 500m


def _family_and_size(parts: list[str]) -> tuple[list[str], str | None]:
    """A name's parts before its size part, and that part (None, with all the parts, when none states a size)."""
    at = next((n for n, part in enumerate(parts) if _SIZE_PART.fullmatch(part)), None)
    return (parts, None) if at is None else (parts[:at], parts[at])


def nearest_preset(repo_id: str) -> str | None:
    """The preset of the repo's own family and size (Qwen/Qwen3-235B-A22B-2507 → qwen3-235b-a22b), else None.

    Parts are the name split at - _ . ; a preset counts only when it states the repo's size and the repo's
    parts before its size end with the preset's (Meta-Llama-3-70B → llama-3-70b; Llama-3.1-70B, another
    release, gets none), or, when neither states a size, every preset part is the repo's (deepseek-v3).
    Qwen/Qwen3-32B gets no preset rather than qwen3-235b-a22b (another size, another architecture). Among
    those that count, the one sharing most parts, then with fewest parts the repo lacks.
    """
    ours = re.split(r"[-_.]", repo_id.rsplit("/", 1)[-1].lower())
    family, size = _family_and_size(ours)
    best: tuple[int, int, str] | None = None
    for preset in preset_names():
        theirs = re.split(r"[-_.]", preset)
        their_family, their_size = _family_and_size(theirs)
        if their_size != size:
            continue
        same = set(theirs) <= set(ours) if size is None else family[len(family) - len(their_family) :] == their_family
        if not same or not their_family:
            continue
        score = (len(set(ours) & set(theirs)), -len(set(theirs) - set(ours)), preset)
        best = score if best is None or score > best else best
    return best[2] if best else None


def _offline_hints(repo_id: str, *, offline: bool = False) -> str:
    """What to use instead: the preset of the same family and size (if one is bundled), a local config,
    and (unless set) HF_HUB_OFFLINE=1; a preset of another model is never offered."""
    preset = nearest_preset(repo_id)
    local = f"--model ./{repo_id.rsplit('/', 1)[-1]}/config.json"
    if preset is None:
        if offline:
            return f"use a local config ({local}), or fetch it once with network"
        return f"use a local config ({local}), or HF_HUB_OFFLINE=1 to read only the cache"
    nearest = f"--model {preset} (the preset of that model)"
    if offline:
        return f"use {nearest} or a local config ({local}), or fetch it once with network"
    return f"use {nearest}, a local config ({local}), or HF_HUB_OFFLINE=1 to read only the cache"


class _Late(Exception):
    """A hub step did not finish before the command's deadline."""


def _within(ends_at: float, step: Callable[[], T]) -> T:
    """`step()`'s result, run on a daemon thread so that nothing (not even DNS) outlives `ends_at`
    (a `time.monotonic()` instant); `_Late` when it has not finished by then."""
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, step()))
        except BaseException as err:  # noqa: BLE001 - handed back to the caller's thread below
            outcome.append((False, err))

    worker = threading.Thread(target=run, name="kvtop-hub", daemon=True)
    worker.start()
    worker.join(max(0.0, ends_at - time.monotonic()))
    if not outcome:
        raise _Late
    done, value = outcome[0]
    if not done:
        raise value
    result: T = value
    return result


def _from_hub(repo_id: str, family: str | None, ends_at: float, override: ConfigOverride | None = None) -> ModelSpec:
    import huggingface_hub as hf
    from huggingface_hub import constants
    from huggingface_hub.errors import HFValidationError

    offline = constants.HF_HUB_OFFLINE or os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes")
    try:
        cached = hf.try_to_load_from_cache(repo_id, "config.json")
    except HFValidationError:
        raise InputError("not a valid Hugging Face repo id", field="--model", source=repo_id, value_is_file=True) from None
    if not isinstance(cached, str):  # a Mistral-format repo: params.json and no config.json
        cached = hf.try_to_load_from_cache(repo_id, MISTRAL_PARAMS)
    if isinstance(cached, str):
        config_path = Path(cached)
        quant_path = hf.try_to_load_from_cache(repo_id, "hf_quant_config.json")
        quant_file = Path(quant_path) if isinstance(quant_path, str) else None
        reachable = not offline and _reach_error(repo_id) is None
        where = "HF cache"
    elif offline:
        raise InputError(
            f"{repo_id} is not in the Hugging Face cache and HF_HUB_OFFLINE is set; "
            f"{_offline_hints(repo_id, offline=True)}",
            field="--model",
        )
    else:
        unreachable = _reach_error(repo_id)
        if (
            unreachable is not None
            and NO_CONFIG in str(unreachable)
            and _reach_error(repo_id, MISTRAL_PARAMS) is None
        ):
            unreachable = None  # a Mistral-format repo: its params.json is there
        if unreachable is not None:
            raise unreachable
        try:
            config_path, quant_file = _within(ends_at, lambda: download_config(repo_id))
        except _Late:
            raise InputError(
                f"the Hugging Face hub did not hand over {repo_id}'s config.json within --timeout; "
                f"{_offline_hints(repo_id)}",
                field="--model",
            ) from None
        reachable, where = True, "Hugging Face hub"
    quant = read_json_object(quant_file, "hf_quant_config", field="--model") if quant_file else None
    if config_path.name == MISTRAL_PARAMS:
        _no_override(override, "a Mistral params.json")
        params = read_json_object(config_path, "params", field="--model")
        spec = model_from_params(
            params, source=f"{repo_id} ({where}, params.json)", name=repo_id, family=family
        )
    else:
        spec = model_from_config(
            read_json_object(config_path, "config", field="--model"),
            source=f"{repo_id} ({where})",
            name=repo_id,
            hf_quant_config=quant,
            hf_source=f"{repo_id}/hf_quant_config.json",
            family=family,
            named_configs=named_text_configs(),
            override=override,
        )
    if not reachable:
        return spec
    try:
        checkpoint = _within(ends_at, lambda: hub_safetensors_bytes(repo_id))
    except _Late:  # the config is read: the plan stands, without the checkpoint's measured size
        return spec.model_copy(update={"source": f"{spec.source}; checkpoint size not read within --timeout"})
    return spec.model_copy(update={"checkpoint_bytes": checkpoint})


def _reach_error(repo_id: str, file: str = "config.json") -> InputError | None:
    """None if the hub answers a HEAD for the repo's config.json (or `file`) within the deadline, else the error."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        RepositoryNotFoundError,
    )

    outcome: list[BaseException | None] = []

    def probe() -> None:
        try:
            get_hf_file_metadata(hf_hub_url(repo_id, file), timeout=HUB_REACH_DEADLINE_S)
            outcome.append(None)
        except Exception as err:  # noqa: BLE001 - any failure of the probe is reported, by kind, below
            outcome.append(err)

    worker = threading.Thread(target=probe, name="kvtop-hub-probe", daemon=True)
    worker.start()
    worker.join(HUB_REACH_DEADLINE_S)
    if not outcome:
        return InputError(
            f"the Hugging Face hub did not answer within {HUB_REACH_DEADLINE_S:g} s for {repo_id}; "
            f"{_offline_hints(repo_id)}",
            field="--model",
        )
    err = outcome[0]
    if err is None:
        return None
    if isinstance(err, GatedRepoError):
        why = "is gated: accept its licence on the hub and set HF_TOKEN, or pass a local config"
    elif isinstance(err, RepositoryNotFoundError):
        why = "is not on the hub (or is private: set HF_TOKEN)"
    elif isinstance(err, EntryNotFoundError):
        why = NO_CONFIG
    elif isinstance(err, HfHubHTTPError):
        status = err.response.status_code if err.response is not None else "an error"
        why = f"could not be read: the hub answered {status}"
    else:
        detail = shown_cut(str(err).splitlines()[0], 120) if str(err) else ""
        return InputError(
            f"cannot reach the Hugging Face hub for {repo_id} ({err.__class__.__name__}: {detail}); "
            f"{_offline_hints(repo_id)}",
            field="--model",
        )
    return InputError(f"{repo_id} {why}", field="--model")
