"""The seams the UI and the commands are handed (implemented in `kvtop.sources`)."""

from __future__ import annotations

from typing import Protocol

from kvtop.domain.cluster import ClusterView
from kvtop.domain.model import ModelSpec
from kvtop.domain.node import NodeSnapshot


class SnapshotSource(Protocol):
    """Collects the whole node, blocking; called from a worker thread, never the event loop."""

    label: str  # "nvml", "demo:llama-70b-tp8-healthy", …

    def collect(self) -> NodeSnapshot: ...


class ModelLoader(Protocol):
    """Resolves a model reference (path, preset, hub id) to its facts; raises InputError."""

    def __call__(self, ref: str) -> ModelSpec: ...


class ClusterReaderPort(Protocol):
    """Reads the whole cluster once, blocking (a Prometheus server); raises a KvtopError naming why not."""

    def read(self) -> ClusterView: ...
