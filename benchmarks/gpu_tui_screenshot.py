"""The TUI on this node's live GPUs, headless: an SVG screenshot and the screen's text, for a person to look at.

`python benchmarks/gpu_tui_screenshot.py OUT.svg OUT.txt` builds the source `kvtop` itself builds with no
options (NVML, the processes, engines found on the node), runs the app under Textual's test driver for a few
refreshes, moves to the GPU list's first row and saves what it drew. Run by gpu_device_run.sh on a GPU machine.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from kvtop.commands.tui import build_source
from kvtop.sources.hub import load_model
from kvtop.ui.app import KvtopApp


async def _shoot(svg: Path, text: Path) -> None:
    source = build_source(argparse.Namespace(demo=None, engine_log=None, no_calibration_store=True))
    app = KvtopApp(source, load_model, read_only=True, interval_s=1.0)
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.pause(4.0)
        svg.write_text(app.export_screenshot())
        text.write_text(_screen_text(app))


def _screen_text(app: KvtopApp) -> str:
    """The screen's characters, row by row (what tmux's capture-pane would show)."""
    strips = app.screen._compositor.render_strips()  # noqa: SLF001 - a debugging aid, not product code
    return "\n".join("".join(segment.text for segment in strip) for strip in strips)


if __name__ == "__main__":
    asyncio.run(_shoot(Path(sys.argv[1]), Path(sys.argv[2])))
