"""Why a node's latest read failed, worded once for every view that shows it (the node's header, its empty table,
the cluster app's node screen), as `cluster.ClusterFailure` words the cluster's."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NodeFailure:
    """The reason the node's source gave (a KvtopError's message, else 'TimeoutError: …'; never a traceback)."""

    reason: str

    @property
    def said(self) -> str:
        """The failure in one line: 'source failing: TimeoutError: gave up'."""
        return f"source failing: {self.reason}"
