"""The registry sweep's configs: every real config at hand, once, and a config for each registered class.

Real configs: every JSON file under tests/data that is a model's config (it names `architectures` or a
`model_type`; not a ModelOpt `*.hf_quant_config.json`), deduplicated by content (the first path in sorted
order names it, a checkpoint's own file before a reconstructed one; a config and the ModelOpt file beside it
count as one content). A reconstructed config (`*.RECONSTRUCTED.json`, `recon--*`: rebuilt from a checkpoint's
published figures, not its file) is judged beside the real ones but left out of the held-out share. A class of the engines' registries is swept with the first real config naming it, else with
the default config of its transformers config class (registry_runner.py `defaults`, written once under
tests/data/engine_diff/registry/configs/ with its transformers version in SOURCES.md).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.engine_diff.cases import QUANT_SUFFIX
from benchmarks.engine_diff.engines import MAX_CONTEXT
from benchmarks.engine_diff.venvs import REPO

DATA = REPO / "tests" / "data"
REGISTRY_DATA = DATA / "engine_diff" / "registry"
DEFAULT_CONFIGS = REGISTRY_DATA / "configs"
REGISTRIES = DATA / "architectures" / "engine_registries.json"
REGISTRY_KEYS = {"vllm": ("vllm_text_generation", "vllm_multimodal"), "sglang": ("sglang",)}
NOT_CONFIGS = ("transformers_params.json",)
POSITION_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                 "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len")  # fmt: skip
NO_POSITIONS_CONTEXT = 2048  # vLLM's default_max_len where a config names none of them


# Speculative drafts among the real configs, and the target each is planned beside when judged as a draft
# (registry_judge): SpecForge names each Eagle-3 head after its target, and the head's hidden size and vocabulary
# are the target's (Llama-3.1-70B: 8,192 and 128,256; Qwen3-235B-A22B: 4,096 and 151,936).
DRAFT_TARGETS = {
    "sgl-project--SpecForge-llama3-70B-eagle3": "meta-llama--Llama-3.1-70B-Instruct",
    "sgl-project--SpecForge-qwen3-235B-A22B-eagle3": "Qwen--Qwen3-235B-A22B",
}


@dataclass(frozen=True)
class ConfigFile:
    """One config the sweep reads: its name (the engines' model folder), its file, and its class."""

    name: str
    path: Path
    architecture: str
    real: bool

    @property
    def source(self) -> str:
        return str(self.path.relative_to(REPO))

    @property
    def reconstructed(self) -> bool:
        """Rebuilt by kvtop's tests from a checkpoint's published figures (named so), not the checkpoint's own file."""
        return _reconstructed(self.path)

    def data(self) -> dict[str, Any]:
        return dict(json.loads(self.path.read_text()))

    def quant_file(self) -> Path | None:
        beside = self.path.with_name(self.path.name[: -len(".json")] + QUANT_SUFFIX)
        return beside if self.path.name != "config.json" and beside.exists() else None

    def context(self) -> int:
        """32,768 tokens, or the model's own length where smaller: the least of the fields vLLM derives it from
        (possible_keys, vllm/transformers_utils/model_arch_config_convertor.py, 0.33.0), else vLLM's 2,048."""
        data = self.data()
        text = data.get("text_config") or data.get("llm_config") or {}
        found = [v for v in (data.get(k) or text.get(k) for k in POSITION_KEYS) if isinstance(v, (int, float)) and v > 0]
        return int(min(MAX_CONTEXT, *found)) if found else NO_POSITIONS_CONTEXT


def _architecture(data: dict[str, Any]) -> str:
    names = data.get("architectures") or [data.get("model_type", "?")]
    return str(names[0])


def _reconstructed(path: Path) -> bool:
    return "RECONSTRUCTED" in path.name or path.name.startswith("recon--")


def real_configs() -> list[ConfigFile]:
    """Every real config under tests/data, once by content (with its ModelOpt file), named by its file (its folder
    for config.json); checkpoints' own files first, reconstructed ones after."""
    seen: set[str] = set()
    names: set[str] = set()
    out = []
    for path in sorted(DATA.rglob("*.json"), key=lambda p: (_reconstructed(p), p)):
        if path.name.endswith(QUANT_SUFFIX) or path.name in NOT_CONFIGS or DEFAULT_CONFIGS in path.parents:
            continue
        if REGISTRY_DATA in path.parents or "fixtures" in path.parts:
            continue
        try:
            data = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(data, dict) or not data.get("architectures") or not isinstance(data["architectures"], list):
            continue
        name = path.parent.name if path.name == "config.json" else path.name[: -len(".json")]
        config = ConfigFile(name, path, _architecture(data), True)
        quant = config.quant_file()
        digest = hashlib.sha256(path.read_bytes() + (quant.read_bytes() if quant else b"")).hexdigest()
        if digest in seen:
            continue
        seen.add(digest)
        if name in names:
            config = ConfigFile(f"{path.parent.name}--{name}", path, config.architecture, True)
        names.add(config.name)
        out.append(config)
    return out


def default_configs() -> list[ConfigFile]:
    return [ConfigFile(f"default--{p.stem}", p, p.stem, False) for p in sorted(DEFAULT_CONFIGS.glob("*.json"))]


def registered(engine: str) -> list[str]:
    data = json.loads(REGISTRIES.read_text())
    return sorted({name for key in REGISTRY_KEYS[engine] for name in data[key]})


def planned_classes(engine: str) -> list[tuple[str, str, str]]:
    """(class, kvtop's verdict, why) for each class of the engine's registry; the sweep builds those kvtop plans."""
    from kvtop.domain.architectures.coverage import verdict

    return [(name, *verdict(name)) for name in registered(engine)]


def config_for_class(configs: list[ConfigFile]) -> dict[str, ConfigFile]:
    """class -> the config the sweep builds it from: the first real one naming it, else its default."""
    out: dict[str, ConfigFile] = {}
    for config in [c for c in configs if c.real] + [c for c in configs if not c.real]:
        out.setdefault(config.architecture, config)
    return out
