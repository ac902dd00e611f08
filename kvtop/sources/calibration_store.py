"""The local calibration store: what engine starts on this node measured, one JSON line per start.

`$XDG_STATE_HOME/kvtop/calibration.jsonl` (else `~/.local/state/kvtop/calibration.jsonl`). Written when
kvtop reads an engine's start (`kvtop explain`; a live node's `--engine-log` once it matches its engine), read by later plans of the same launch
(`kvtop.domain.calibration.node`). Each line holds counts and an architecture hash, never a path, host
or argument value; a store kvtop creates is its user's alone (0600 in a 0700 kvtop folder). `--no-calibration-store` (or `KVTOP_NO_CALIBRATION_STORE=1`) turns both off; a line
that does not read is skipped and the plan says so in one line; a store that cannot be written is a
one-line notice, never a failed command.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from kvtop.domain.calibration.node import STORE_SCHEMA, NodeMeasure
from kvtop.domain.wording import counted

STORE_NAME = "calibration.jsonl"
OFF_ENV = "KVTOP_NO_CALIBRATION_STORE"
MAX_STORE_BYTES = 4 << 20  # a store grown past this is read from its end (the newest starts)
STORE_FILE_MODE = 0o600  # a new store: read and written by its user only (the umask may narrow it further)
STORE_DIR_MODE = 0o700  # the kvtop folder kvtop creates for it (folders above it keep the system's default)


def store_path() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "kvtop" / STORE_NAME


def store_disabled(flag: bool = False) -> bool:
    """Whether the store is off (the flag, or the environment variable set to anything but 0/empty)."""
    return flag or os.environ.get(OFF_ENV, "") not in ("", "0")


@dataclass(frozen=True)
class StoreRead:
    """What the store held, and a one-line notice when part of it could not be read."""

    measures: tuple[NodeMeasure, ...] = ()
    notice: str | None = None


def read_store(path: Path | None = None) -> StoreRead:
    """Every readable start in the store (none when it does not exist)."""
    path = path or store_path()
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            start = handle.seek(max(0, size - MAX_STORE_BYTES - 1))  # the byte before: was a line cut?
            raw = handle.read()
    except FileNotFoundError:
        return StoreRead()
    except OSError as err:
        return StoreRead(notice=f"calibration store {path} not read ({err.strerror or err}): plans use the corpus's fits")
    if start > 0:  # up to the first newline: a line the window cut (older than it, not unreadable), else nothing
        raw = raw.partition(b"\n")[2]
    measures, bad, other_schema = [], 0, 0
    for line in raw.decode("utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            measure = NodeMeasure.model_validate(json.loads(line))
        except (ValueError, ValidationError):
            bad += 1
            continue
        if measure.schema_version != STORE_SCHEMA:  # another kvtop's line: its terms may mean something else
            other_schema += 1
            continue
        measures.append(measure)
    return StoreRead(measures=tuple(measures), notice=_notice(path, bad, other_schema))


def _notice(path: Path, bad: int, other_schema: int) -> str | None:
    """The one line a store with lines not used gives (None: every line was read)."""
    if not bad and not other_schema:
        return None
    why = f", {other_schema} of another store schema than {STORE_SCHEMA}" if other_schema else ""
    return f"calibration store {path}: {counted(bad + other_schema, 'unreadable line')} ignored{why} (delete the file to start afresh)"


def append_measure(measure: NodeMeasure, path: Path | None = None) -> str | None:
    """Add one start to the store, in place of a line of the same start (`NodeMeasure.start_key`: explaining
    a log again keeps one line); a one-line notice when it cannot be written (None: written). A store kvtop
    creates is the user's alone (file 0600, its kvtop folder 0700): it says which models and engines this node runs."""
    path = path or store_path()
    line = json.dumps(measure.model_dump(mode="json"), sort_keys=True) + "\n"
    try:
        path.parent.mkdir(mode=STORE_DIR_MODE, parents=True, exist_ok=True)
        kept = _other_starts(path, measure.start_key())
        if kept is None:  # no line of this start: appended
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, STORE_FILE_MODE)
            with os.fdopen(fd, "a", encoding="utf-8") as handle:
                handle.write(line)
        else:  # rewritten beside, then moved over it: a reader never sees half a store
            spare = path.with_name(f".{path.name}.{os.getpid()}")
            fd = os.open(spare, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, STORE_FILE_MODE)
            with os.fdopen(fd, "wb") as handle:
                handle.write(b"".join(kept) + line.encode())
            os.replace(spare, path)
    except OSError as err:
        return f"calibration store {path} not written ({err.strerror or err}); --no-calibration-store turns it off"
    return None


def _other_starts(path: Path, key: tuple[object, ...]) -> list[bytes] | None:
    """The store's lines less those of the start `key` (an unreadable line stays as it was); None where no line
    is of that start or there is no store."""
    try:
        lines = path.read_bytes().splitlines(keepends=True)
    except FileNotFoundError:
        return None
    kept = [line for line in lines if _key_of(line) != key]
    if len(kept) == len(lines):
        return None
    return [line if line.endswith(b"\n") else line + b"\n" for line in kept]


def _key_of(line: bytes) -> tuple[object, ...] | None:
    try:
        return NodeMeasure.model_validate(json.loads(line)).start_key()
    except (ValueError, ValidationError):
        return None
