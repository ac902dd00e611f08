"""Messages the source worker posts to the app (the only way a thread talks to the UI)."""

from __future__ import annotations

from textual.message import Message

from kvtop.domain.node import NodeSnapshot


class SnapshotArrived(Message):
    """A fresh, frozen snapshot of the node; only the newest one matters."""

    def __init__(self, snapshot: NodeSnapshot, findings: tuple[object, ...] = ()) -> None:
        super().__init__()
        self.snapshot = snapshot
        self.findings = findings  # diagnosed in the worker thread, never on the event loop

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SnapshotArrived)


class SourceFailed(Message):
    """The source raised instead of answering; the UI keeps its last good snapshot."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason
