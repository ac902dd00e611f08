"""TensorRT-LLM seen from outside: trtllm-serve's endpoints (`endpoint`) and the LLM-API options YAML its
launch names (`llm_api_options`). Everything pure it knows (log lines, demo behaviour, identity and the
rank of an untitled MPI worker) is `kvtop.domain.engines.trtllm`."""

from __future__ import annotations

from pathlib import Path

from kvtop.domain.launch import LaunchSettings


def complete_settings(
    settings: LaunchSettings, base_dir: Path | None, *, strict: bool = False
) -> LaunchSettings:
    """The settings with the --extra_llm_api_options YAML the launch names (PyYAML imported only then)."""
    if not settings.extra_llm_api_options:
        return settings
    from kvtop.sources.engines.trtllm.llm_api_options import complete_settings as complete

    return complete(settings, base_dir, strict=strict)


__all__ = ["complete_settings"]
