"""The seams the UI and the commands are handed (implemented in `kvtop.sources`)."""

from __future__ import annotations

from enum import Enum
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from kvtop.domain.cluster import ClusterView
from kvtop.domain.config_override import ConfigOverride
from kvtop.domain.model import ModelSpec
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.observe import NodeObservation
from kvtop.domain.preferences import Preferences
from kvtop.domain.process_identity import ProcessIdentity
from kvtop.domain.redact import RedactedModel, RedactedStr


class SnapshotSource(Protocol):
    """Collects the whole node, blocking; called from a worker thread, never the event loop."""

    label: str  # "nvml", "demo:llama-70b-tp8-healthy", …

    def collect(self) -> NodeSnapshot: ...


class NodeObserver(Protocol):
    """What a node reports before anything is predicted: GPUs as NVML gives them, processes attributed to
    engine ranks, the engines' endpoints. The live node and the demo are both one; the assembler
    (`kvtop.commands.node_source.NodeSource`) predicts and joins for either, the same way."""

    label: str  # "nvml", "demo:<scenario>": a demo is never presented as a real node
    notice: str | None  # said with every snapshot of this node (the demo shown for want of a driver)

    def observe(self) -> NodeObservation: ...

    def load_model(self, ref: str, *, override: ConfigOverride | None = None) -> ModelSpec: ...

    def close(self) -> None: ...


class ModelLoader(Protocol):
    """Resolves a model reference (path, preset, hub id) to its facts, a launch's override of its config merged in
    (`model_config.model_from_config`); raises InputError."""

    def __call__(self, ref: str, *, override: ConfigOverride | None = None) -> ModelSpec: ...


class ClusterReaderPort(Protocol):
    """Reads the whole cluster once, blocking (a Prometheus server); raises a KvtopError naming why not."""

    def read(self) -> ClusterView: ...


class ProcessSignal(str, Enum):
    """The signals kvtop sends from its process panel (nvitop's T, K, I)."""

    TERMINATE = "SIGTERM"  # ask the process to exit (it may clean up, or ignore it)
    KILL = "SIGKILL"  # end it now; the driver frees its GPU memory once it is gone
    INTERRUPT = "SIGINT"  # as Ctrl-C would


class SignalRequest(RedactedModel):
    """One signal to one named process, with what the operator was shown when confirming it.

    `identity` is the process as the snapshot named it (pid, start, user id, executable): a sender
    names the pid again before sending and refuses when it now names another process. A process
    kvtop could not name has no identity, so no request can be made for it.
    """

    model_config = ConfigDict(frozen=True)  # RedactedModel's: its copies are validated, so redacted

    identity: ProcessIdentity
    signal: ProcessSignal
    gpu_index: int | None = None
    used_bytes: int | None = None  # what NVML said the process held on that GPU
    command: RedactedStr = ""  # its command line, redacted when the request is built (the action log keeps it)
    forced: bool = False  # the operator overrode the refusal to signal an engine's own process

    @property
    def pid(self) -> int:
        return self.identity.pid


class SignalState(str, Enum):
    """What became of a signal request."""

    SENT = "sent"
    SIMULATED = "simulated"  # a demo node: its pids are not this machine's, nothing was sent
    NO_SUCH_PROCESS = "no_such_process"  # gone already
    PID_REUSED = "pid_reused"  # the pid now names a process started at another time: not sent
    IDENTITY_CHANGED = "identity_changed"  # same start, another user id or executable: not sent
    ACCESS_DENIED = "access_denied"  # another user's process, and kvtop is not allowed to signal it
    ERROR = "error"


class SignalOutcome(BaseModel):
    """The answer of a `SignalSender`: a state, one line a person can act on, and where it was logged."""

    model_config = ConfigDict(frozen=True)

    request: SignalRequest
    state: SignalState
    message: str
    log_path: str | None = None  # the action log the line went to (None: it could not be written)
    log_error: str | None = None  # why the action log could not be written


class SignalSender(Protocol):
    """Sends a signal to a process and records it in kvtop's action log, blocking; never raises for an
    outside failure (each is a `SignalState`)."""

    def send(self, request: SignalRequest) -> SignalOutcome: ...


class PreferencesStore(Protocol):
    """Where the terminal UI keeps what the operator chose (a TOML file in the XDG config directory)."""

    @property
    def location(self) -> str:
        """Where it keeps them, for a person (a path)."""
        ...

    def save(self, preferences: Preferences) -> str | None:
        """Keep `preferences`; None when saved, else one line saying why not (the UI shows it)."""
        ...
