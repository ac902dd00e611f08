"""llama.cpp's `llama-server` seen from outside: its startup-log lines (`log_lines`), its `/metrics`,
`/slots` and `/props` (`endpoint`), its GGUF model files (`gguf_file`) and how it behaves on a demo
node (`demo`)."""

from __future__ import annotations

from pathlib import Path

from kvtop.domain.engines.llamacpp.eras import DEFAULT_PORT
from kvtop.domain.launch import LaunchSettings

# llama-server is one process with no title of its own: the prefix matches no `prefix::role` title,
# and its one GPU is its rank.
TITLE_PREFIX = "llama-server"
RANKS_BY_GPU_ORDER = True
MODEL_FILE_MODULE = "gguf_file"  # its model files (.gguf) are read by `gguf_file.read_model_file`


def complete_settings(
    settings: LaunchSettings, base_dir: Path | None, *, strict: bool = False
) -> LaunchSettings:
    """Its launch names no file kvtop reads for the settings (the GGUF is the model: `gguf_file`)."""
    return settings


def rank_of_device(settings: LaunchSettings, position: int) -> dict[str, int] | None:
    return None


__all__ = ["DEFAULT_PORT", "MODEL_FILE_MODULE", "RANKS_BY_GPU_ORDER", "TITLE_PREFIX", "complete_settings", "rank_of_device"]
