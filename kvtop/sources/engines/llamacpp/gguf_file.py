"""A llama.cpp GGUF model file as kvtop's model: its metadata through the `gguf` package (llama.cpp's own
Python reader), its tensors' bytes as the checkpoint's (docs/engines/llamacpp.md §6).

`gguf` is an optional extra (`pip install 'kvtop-ledger[gguf]'`): without it, a .gguf given as --model
is an InputError saying so, never a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kvtop.domain.engines.llamacpp.gguf_metadata import config_from_gguf
from kvtop.domain.errors import InputError
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.redact import shown_cut

MODEL_FILE_SUFFIXES = (".gguf",)
NO_GGUF_PACKAGE = "reading a .gguf file needs the gguf package: pip install 'kvtop-ledger[gguf]'"


def _value(field: Any) -> Any:
    """A reader field's value: `contents()` (a scalar, a string, or a list of them)."""
    return field.contents()


def read_metadata(path: Path) -> tuple[dict[str, Any], frozenset[str], int]:
    """(metadata without the tokenizer's long arrays, tensor names, the tensors' bytes)."""
    try:
        from gguf import GGUFReader  # the optional extra
    except ImportError:
        raise InputError(NO_GGUF_PACKAGE, field="--model", source=str(path), value_is_file=True) from None
    try:
        reader = GGUFReader(str(path), "r")
    except (OSError, ValueError, IndexError, KeyError) as err:
        raise InputError(f"not a GGUF file kvtop can read ({type(err).__name__}: {shown_cut(str(err), 120)})",
                         field="--model", source=str(path), value_is_file=True) from None  # fmt: skip
    metadata: dict[str, Any] = {}
    for name, field in reader.fields.items():
        if name in ("tokenizer.ggml.merges", "tokenizer.ggml.token_type", "tokenizer.ggml.scores"):
            continue
        try:
            metadata[name] = _value(field)
        except (ValueError, IndexError, UnicodeDecodeError):
            continue  # a field kvtop does not read
    names = frozenset(tensor.name for tensor in reader.tensors)
    return metadata, names, sum(int(tensor.n_bytes) for tensor in reader.tensors)


def read_model_file(path: Path, family: str | None = None) -> ModelSpec:
    """The model a GGUF file describes, its tensors' bytes as the checkpoint's."""
    metadata, names, tensor_bytes = read_metadata(path)
    config = config_from_gguf(metadata, tensor_names=names, source=str(path))
    name = metadata.get("general.name")
    spec = model_from_config(config, source=str(path), name=name if isinstance(name, str) else path.stem, family=family)
    # llama.cpp loads it by `general.architecture`, not a config class: that name is its architecture
    # (kvtop.domain.engines.llamacpp.architectures checks it against the build's LLM_ARCH_NAMES)
    return spec.model_copy(update={
        "checkpoint_bytes": tensor_bytes or None, "weights_as_stored": bool(tensor_bytes),
        "architecture": metadata["general.architecture"],
    })  # fmt: skip
