"""Which models llama.cpp serves, by build: not read yet, so every build is "not checked".

llama.cpp does not load a model by config.json's class: its GGUF loader takes the file's
`general.architecture` string (`llama`, `gemma2`, `qwen3moe`…) and looks it up in `LLM_ARCH_NAMES`
(src/llama-arch.cpp; `llm_arch_from_string`), stopping with "unknown model architecture: '…'" where the
build has no entry. kvtop has not read that table at any build (its builds are numbered, `b6980`, and a
GGUF names no Hugging Face class to check against), so it refuses no llama.cpp launch for its model.
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
    "llama.cpp", (), lambda architecture, found: "",
    not_read="kvtop has not read llama.cpp's LLM_ARCH_NAMES (src/llama-arch.cpp) at any build",
)  # fmt: skip


# llama.cpp loads a vision tower from a separate mmproj file (not in the weights book): nothing to split.
TOWER_SPLIT = TowerSplit()


def check(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> ArchitectureCheck:
    """Not checked at any build (see the module docstring)."""
    return TABLE.check_class(model.architecture, version, custom_code=bool(model.auto_map_models))
