"""The default demo's header at 120 columns (session 54's trial): on a machine without a driver it named the scenario
twice ("demo:llama70b-tp8-sglang │ no NVIDIA driver (…): showing the demo node 'llama70b-tp8-sglang'") and its top
line wrapped. The scenario is named once, by the source, and the top line fits."""

from __future__ import annotations

import pynvml

from kvtop.commands.node_source import open_node_source
from kvtop.sources.nvml import NvmlSource
from kvtop.ui.widgets.node_header import NodeHeader
from tests.fakes.fake_pynvml import FakePynvml
from tests.ui.conftest import wait_for_snapshot


async def test_the_demo_header_names_its_scenario_once_and_fits_120_columns(make_app) -> None:
    nvml = NvmlSource(nvml_module=FakePynvml([], init_error=pynvml.NVMLError_LibraryNotFound))
    app = make_app(open_node_source(None, nvml=nvml, demo_without_driver=True))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_snapshot(pilot)
        header = app.screen.query_one(NodeHeader)
        top = header.header_content().plain.split("\n")[0]
        assert top.count("llama70b-tp8-sglang") == 1, top
        assert "no NVIDIA driver (NVML library not found): a demo node" in top
        assert len(top) <= header.content_size.width, (len(top), header.content_size.width, top)


async def test_a_narrow_header_breaks_between_its_parts_never_inside_one(make_app) -> None:
    """At 100 columns the top line broke between the marker '●' and 'simulated', at 80 inside the notice (session
    67's walk): a part that does not fit starts a line whole."""
    nvml = NvmlSource(nvml_module=FakePynvml([], init_error=pynvml.NVMLError_LibraryNotFound))
    app = make_app(open_node_source(None, nvml=nvml, demo_without_driver=True))
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for_snapshot(pilot)
        header = app.screen.query_one(NodeHeader)
        for columns, tops in ((100, 2), (80, 3)):
            await pilot.resize_terminal(columns, 40)
            await pilot.pause()
            lines = header.header_content().plain.split("\n")
            assert lines[:tops] == [
                *(["kvtop │ demo:llama70b-tp8-sglang", "no NVIDIA driver (NVML library not found): a demo node"]
                  if tops == 3 else  # fmt: skip
                  ["kvtop │ demo:llama70b-tp8-sglang │ no NVIDIA driver (NVML library not found): a demo node"]),
                "● simulated · every 3600 s",  # the test app polls once an hour
            ], lines
            assert all(len(line) <= header.content_size.width for line in lines[:tops])
