"""The loop every long-lived source worker runs, and what it hands the event loop.

A worker thread reads (collects a snapshot, queries Prometheus…), turns the answer or the
failure into a message, posts it, and waits an interval or its cancellation. Threads only post
messages; handlers on the event loop assign reactives.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import get_current_worker

from kvtop.domain.errors import KvtopError
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.secret_text import redact_text


def failure_reason(err: Exception) -> str:
    """A KvtopError's own message; any other failure named by its type (never a traceback, never a secret)."""
    return redact_text(str(err) if isinstance(err, KvtopError) else f"{type(err).__name__}: {err}")


def diagnose_quietly(snapshot: NodeSnapshot) -> tuple[object, ...]:
    """The findings of a snapshot; a rule that fails never costs the snapshot itself."""
    from kvtop.domain.diagnose import diagnose

    try:
        return tuple(diagnose(snapshot))
    except KvtopError:
        return ()


def poll(
    target: MessagePump,
    read: Callable[[], Message],
    failed: Callable[[Exception], Message],
    busy: threading.Event,
    interval_s: float,
) -> None:
    """Run in a thread worker: `read()` (or `failed(error)`, which words it: `failure_reason`), post to `target`,
    wait, until cancelled.

    `busy` is set while a read is in flight, so `r` does not start a second one.
    """
    worker = get_current_worker()
    while not worker.is_cancelled:
        busy.set()
        try:
            message = read()
        except Exception as err:  # any failure of an outside source is shown as a marker, never a crash
            message = failed(err)
        finally:
            busy.clear()
        if worker.is_cancelled:
            break
        target.post_message(message)
        worker.cancelled_event.wait(interval_s)
