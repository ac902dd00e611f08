"""Model configs from a path, a checkpoint folder, a built-in preset, or the Hugging Face cache/hub.

The only importer of huggingface_hub. Offline first: the local cache is tried before the
network, and `HF_HUB_OFFLINE=1` is honoured. Weight bytes of a local checkpoint come from its
safetensors headers (the 8-byte length and the JSON header only; no tensor is read).
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

from kvtop.bundled import bundled_dir
from kvtop.domain.errors import InputError
from kvtop.domain.model import ModelSpec, model_from_config
from kvtop.sources.json_file import read_json_object

PRESET_DIR_ENV = "KVTOP_PRESETS"
_SAFETENSORS_DTYPE_BYTES = {
    "F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2, "U16": 2,
    "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1, "I8": 1, "U8": 1, "BOOL": 1,
}  # fmt: skip


def preset_dir() -> Path:
    """examples/models, as shipped with this kvtop (or $KVTOP_PRESETS)."""
    override = os.environ.get(PRESET_DIR_ENV)
    if override:
        return Path(override)
    return bundled_dir("examples", "models")


def preset_names() -> list[str]:
    folder = preset_dir()
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []


def _sibling_quant_config(config_path: Path) -> dict[str, Any] | None:
    """ModelOpt's hf_quant_config.json beside config.json (or `<stem>.hf_quant_config.json`)."""
    for candidate in (
        config_path.parent / "hf_quant_config.json",
        config_path.with_name(config_path.stem + ".hf_quant_config.json"),
    ):
        if candidate.is_file():
            return read_json_object(candidate, "hf_quant_config")
    return None


def safetensors_bytes(folder: Path) -> int | None:
    """Total tensor bytes of a checkpoint folder from its safetensors headers (None if none)."""
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        return None
    total = 0
    for file in files:
        with file.open("rb") as handle:
            head = handle.read(8)
            if len(head) != 8:
                raise InputError("truncated safetensors header", source=str(file))
            (length,) = struct.unpack("<Q", head)
            try:
                header = json.loads(handle.read(length))
            except json.JSONDecodeError:
                raise InputError("malformed safetensors header", source=str(file)) from None
        for name, info in header.items():
            if name == "__metadata__":
                continue
            count = 1
            for dim in info["shape"]:
                count *= dim
            total += count * _SAFETENSORS_DTYPE_BYTES.get(info["dtype"], 2)
    return total


def load_config_file(path: Path, name: str | None = None) -> ModelSpec:
    config = read_json_object(path, "config")
    return model_from_config(
        config, source=str(path), name=name or path.stem, hf_quant_config=_sibling_quant_config(path)
    )


def load_model(ref: str) -> ModelSpec:
    """Resolve a model reference: a config path, a checkpoint folder, a preset, or a hub id."""
    path = Path(ref).expanduser()
    if path.is_file():
        return load_config_file(path)
    if path.is_dir():
        spec = load_config_file(path / "config.json", name=path.name)
        return spec.model_copy(update={"checkpoint_bytes": safetensors_bytes(path)})
    preset = preset_dir() / f"{ref.lower()}.json"
    if preset.is_file():
        return load_config_file(preset, name=ref)
    if ref.endswith(".json") or ref.startswith((".", "/", "~")):
        raise InputError("config file not found", field="--model", source=ref)
    if ref.count("/") == 1:
        return _from_hub(ref)
    raise InputError(
        f"not a file, folder, preset or hub id (presets: {', '.join(preset_names()) or 'none found'})",
        field="--model",
        source=ref,
    )


def _from_hub(repo_id: str) -> ModelSpec:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes")
    try:
        config_path = Path(hf_hub_download(repo_id, "config.json", local_files_only=True))
    except LocalEntryNotFoundError:
        if offline:
            raise InputError(
                "not in the Hugging Face cache and HF_HUB_OFFLINE is set", field="--model", source=repo_id
            ) from None
        try:
            config_path = Path(hf_hub_download(repo_id, "config.json"))
        except (HfHubHTTPError, LocalEntryNotFoundError, OSError) as err:
            raise InputError(
                f"cannot fetch config.json from the hub ({err.__class__.__name__})",
                field="--model",
                source=repo_id,
            ) from None
    except (HfHubHTTPError, OSError, ValueError) as err:
        raise InputError(
            f"cannot resolve on the hub ({err.__class__.__name__})", field="--model", source=repo_id
        ) from None
    quant = None
    try:
        quant = read_json_object(
            Path(hf_hub_download(repo_id, "hf_quant_config.json", local_files_only=True)), "hf_quant_config"
        )
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError):
        quant = None
    return model_from_config(
        read_json_object(config_path, "config"),
        source=f"{repo_id} (HF cache)",
        name=repo_id,
        hf_quant_config=quant,
    )
