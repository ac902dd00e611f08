"""What one engine start measured on this node, kept so that later plans of the same launch use it.

A line of the local calibration store (`kvtop/sources/calibration_store.py`): the engine, its release,
the GPU model, the layout, a key of the model's architecture (never its path), the settings the
runtime terms depend on, and the bytes of each term the start's log measured. Nothing in it is a
secret: no path, no host, no argument value besides those counts.
"""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.terms import Term
from kvtop.domain.gpus import gpu_key
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec

MIB = 1 << 20
NODE_REPEAT_ERROR_BYTES = 64 * MIB  # how far two starts of the same launch on one node differ (an assumption)
STORE_SCHEMA = 1


def model_key(model: ModelSpec) -> str:
    """A short hash of the model's architecture facts (not its name or path): equal for the same model
    wherever it is stored, different when any fact the books read differs."""
    facts = model.model_dump(exclude={"name", "source", "not_modelled", "defaults_used", "config_model_type"})
    return hashlib.sha256(json.dumps(facts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def runtime_settings(settings: LaunchSettings) -> dict[str, int | bool | str | None]:
    """The settings the runtime terms depend on (the batch the profile runs, eager mode, the KV dtype)."""
    return {
        "max_num_batched_tokens": settings.max_num_batched_tokens,
        "max_running_requests": settings.max_running_requests,
        "enforce_eager": settings.enforce_eager,
        "quantization": settings.quantization,
        "dtype": settings.dtype,
    }


class NodeMeasure(BaseModel):
    """One engine start on this node: when, what launch, and each term its log measured (bytes)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    schema_version: int = STORE_SCHEMA
    date: str  # ISO day of the start (the log's date, else the day kvtop read it)
    engine: str
    engine_version: str | None
    gpu: str  # the GPU model's key (`gpu_key`), e.g. 'H100'
    tp: int
    pp: int
    model_key: str
    model_type: str  # for a person reading the store: 'llama', 'qwen3_moe'
    settings: dict[str, int | bool | str | None]
    terms: dict[Term, int]

    def matches(self, engine: str, version: str | None, gpu_name: str | None, model: ModelSpec,
                settings: LaunchSettings) -> bool:  # fmt: skip
        """The same engine release, GPU model, layout and model: its context and totals apply."""
        return (
            self.engine == engine and self.engine_version == version and self.gpu == gpu_key(gpu_name)
            and self.tp == settings.tp and self.pp == settings.pp and self.model_key == model_key(model)
        )  # fmt: skip

    def same_runtime(self, settings: LaunchSettings) -> bool:
        """The runtime terms (activation, non-torch, graphs) apply only to the same profiled batch."""
        return self.settings == runtime_settings(settings)


def latest_match(
    measures: tuple[NodeMeasure, ...], engine: str, version: str | None, gpu_name: str | None, model: ModelSpec,
    settings: LaunchSettings,
) -> NodeMeasure | None:  # fmt: skip
    """The newest start of the same launch (None: this node never started it)."""
    found = [m for m in measures if m.matches(engine, version, gpu_name, model, settings)]
    return max(found, key=lambda m: m.date) if found else None
