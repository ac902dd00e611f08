"""Session 61's operator pass over the TUI: what a crash prints, and the filter's "no GPU matches" line.

A crash: Textual prints an unhandled error's traceback with every frame's local variables (rich's
`show_locals=True`), so a crash in a frame holding the cluster view's bearer token, a process's command line or a
typed `--api-key` printed it whole to the terminal (and into the issue it is pasted in). `KvtopBaseApp._fatal_error`
now reports the frames and lines without locals, the error's message redacted.
"""

from __future__ import annotations

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


async def test_a_filter_matching_nothing_is_quoted_as_typed(make_app, healthy_snapshot) -> None:  # type: ignore[no-untyped-def]
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("slash", "z", "backslash", "enter")
        await wait_for(pilot, lambda: list(app.screen.query_one(GpuList).shown_gpus) == [])
        empty = app.screen.query_one("#empty")
        assert "no GPU matches 'z\\' (Esc clears the filter)" in str(empty.render())  # one backslash, not repr's two
