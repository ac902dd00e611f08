"""Export the README's screenshots (SVG) from the real app on a demo scenario, headless.

Run: python docs/make_screenshots.py   (writes docs/screenshots/*.svg)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from kvtop.commands.node_source import DemoSource
from kvtop.sources.hub import load_model
from kvtop.ui.app import KvtopApp

OUT = Path(__file__).resolve().parent / "screenshots"


async def shoot() -> None:
    source = DemoSource.open("llama70b-tp8-foreign-gpu3", clock=lambda: 0.0)
    app = KvtopApp(source, load_model, interval_s=1.0, clock=lambda: 0.0)
    async with app.run_test(size=(140, 44)) as pilot:
        for _ in range(40):
            await pilot.pause(0.1)
            if app.node.snapshot is not None:
                break
        await pilot.pause(0.5)
        app.save_screenshot("dashboard.svg", str(OUT))
        await pilot.press("down", "down", "down", "enter")
        await pilot.pause(0.5)
        app.save_screenshot("ledger.svg", str(OUT))
        await pilot.press("escape", "p")
        await pilot.pause(0.5)
        app.save_screenshot("planner.svg", str(OUT))


if __name__ == "__main__":
    asyncio.run(shoot())
    print("\n".join(str(p) for p in sorted(OUT.glob("*.svg"))))
