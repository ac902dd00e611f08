"""Session 61's operator pass over the TUI: what a crash prints, and the filter's "no GPU matches" line.

A crash: Textual prints an unhandled error's traceback with every frame's local variables (rich's
`show_locals=True`), so a crash in a frame holding the cluster view's bearer token, a process's command line or a
typed `--api-key` printed it whole to the terminal (and into the issue it is pasted in). `KvtopBaseApp._fatal_error`
now reports the frames and lines without locals, every message and note its errors carry (an ExceptionGroup's too)
redacted.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from textual.binding import Binding

from kvtop.ui import base_app
from kvtop.ui.base_app import KvtopBaseApp
from kvtop.ui.widgets.gpu_list import GpuList
from tests.ui.conftest import wait_for, wait_for_snapshot

TOKEN = "Q7vXk2pLm9tok"  # no issuer's shape: a local's value, or a value under a secret's name
KEY = "Z3wRb8nYq4key"


class _Crashing(KvtopBaseApp):
    """An app whose `x` fails in a frame holding a token, with a message quoting a launch's key."""

    CSS_PATH = str(Path(base_app.__file__).with_name("kvtop.tcss"))  # beside kvtop's app, not this test
    BINDINGS = [Binding("x", "crash", "crash")]

    def action_crash(self) -> None:
        bearer_token = TOKEN  # what the frame holds (the cluster view's token, read from --token-file)
        raise RuntimeError(f"launch failed: vllm serve m --api-key {KEY} ({len(bearer_token)})")


async def test_a_crash_report_prints_no_local_and_no_key(capsys: pytest.CaptureFixture[str]) -> None:
    app = _Crashing(theme=None, interval_s=1.0)
    with pytest.raises(RuntimeError):
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("x")
            await pilot.pause()
    out, err = capsys.readouterr()  # Textual prints the report on stderr as the app exits
    printed = out + err
    local_shown = TOKEN in printed  # Textual's report lists `bearer_token = '…'` under the frame
    assert not local_shown
    assert "RuntimeError: launch failed: vllm serve m --api-key ***" in printed  # the error is still reported
    assert "action_crash" in printed  # with its frames


NOTED_KEY = "M5tHc1vWd6key"  # in a note the error carries (`add_note`)
GROUPED_KEY = "P2sNf7jKx3key"  # in an error an ExceptionGroup holds


class _CrashingWithNotes(KvtopBaseApp):
    """An app whose `x` fails with a note quoting a launch's key and an ExceptionGroup whose error quotes another."""

    CSS_PATH = _Crashing.CSS_PATH
    BINDINGS = [Binding("x", "crash", "crash")]

    def action_crash(self) -> None:
        if sys.version_info >= (3, 11):  # notes and exception groups are Python 3.11's
            inner = RuntimeError(f"launch failed: vllm serve m --api-key {GROUPED_KEY}")
            inner.add_note(f"ran: vllm serve m --api-key {NOTED_KEY}")
            group = ExceptionGroup("two launches failed", [inner])  # noqa: F821 (a builtin from 3.11, guarded above)
            group.add_note(f"first: sglang --api-key {NOTED_KEY}")
            raise group


@pytest.mark.skipif(sys.version_info < (3, 11), reason="notes and exception groups are Python 3.11's")
async def test_a_crash_report_redacts_notes_and_grouped_errors(capsys: pytest.CaptureFixture[str]) -> None:
    """Only the top error's message was redacted: a key in a note (`add_note`) or in an error inside an
    ExceptionGroup (a TaskGroup's failures) printed whole, where the CLI's `crash_report` redacts every line."""
    app = _CrashingWithNotes(theme=None, interval_s=1.0)
    with pytest.raises(Exception, match="two launches failed"):
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("x")
            await pilot.pause()
    out, err = capsys.readouterr()
    printed = out + err
    assert NOTED_KEY not in printed
    assert GROUPED_KEY not in printed
    assert "first: sglang --api-key ***" in printed  # the group's note is still reported
    assert "ran: vllm serve m --api-key ***" in printed  # and the grouped error's
    assert "launch failed: vllm serve m --api-key ***" in printed  # and its message


async def test_a_filter_matching_nothing_is_quoted_as_typed(make_app, healthy_snapshot) -> None:  # type: ignore[no-untyped-def]
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("slash", "z", "backslash", "enter")
        await wait_for(pilot, lambda: list(app.screen.query_one(GpuList).shown_gpus) == [])
        empty = app.screen.query_one("#empty")
        assert "no GPU matches 'z\\' (Esc clears the filter)" in str(empty.render())  # one backslash, not repr's two
