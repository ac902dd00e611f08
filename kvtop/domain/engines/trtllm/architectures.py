"""Which model classes TensorRT-LLM serves, by release: not read yet, so every release is "not checked".

Its PyTorch backend registers a class per `@register_auto_model("…")` in tensorrt_llm/_torch/models/ and
its TensorRT backend names them in `MODEL_MAP` (tensorrt_llm/models/__init__.py); kvtop has read neither at
a release (no wheel at hand, docs/engines/architectures.md), so it refuses no TensorRT-LLM launch for its class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engine_architectures import ArchitectureCheck, RegistryTable
from kvtop.domain.model import TowerSplit

if TYPE_CHECKING:
    from kvtop.domain.engines.versions import ResolvedVersion
    from kvtop.domain.launch import LaunchSettings
    from kvtop.domain.model import ModelSpec

TABLE = RegistryTable(
    "TensorRT-LLM", (), lambda architecture, found: "",
    not_read="kvtop has not read its @register_auto_model classes or MODEL_MAP at any release",
)  # fmt: skip


# TensorRT-LLM's tower sharding is not read: assumed as vLLM's (docs/engines/architectures.md).
TOWER_SPLIT = TowerSplit()


def check(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> ArchitectureCheck:
    """Not checked at any release (see the module docstring)."""
    return TABLE.check_class(model.architecture, version, custom_code=bool(model.auto_map_models))
