"""Secrets known by their shape alone never reach a surface (issue 25, item 4).

Tokens of real issuers' forms (tests/domain/redact_corpus.py) are planted where no secret name gives
them away: a process's positional argument and its title, a Prometheus label value, a quoted line of
an engine log, an endpoint's error and a model loader's error. `snapshot`, `diagnose`, `explain` and
`cluster` (text and --json, stdout and stderr) and the TUI's screens must show none of them. A
failure names the issuer, never the token.
"""

from __future__ import annotations

import json
from dataclasses import replace
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from kvtop.cli import main
from kvtop.commands.node_source import LiveSource
from kvtop.domain.config_override import ConfigOverride
from kvtop.domain.errors import InputError
from kvtop.domain.model import ModelSpec
from kvtop.sources.hub import load_model
from kvtop.sources.nvml import NvmlSource
from kvtop.sources.prometheus import ALL_QUERIES
from kvtop.ui.app import KvtopApp
from kvtop.ui.screens.processes import ProcessScreen
from tests.data_paths import CASES
from tests.domain.redact_corpus import TOKENS
from tests.fakes.fake_process_table import FakeProcessTable, launched, titled
from tests.fakes.fake_pynvml import FakePynvml, gpu_from_mib
from tests.local_http import serving
from tests.test_terminal_injection import drawn_text
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.fakes import FixedClock

T = TOKENS
SERVER, TP0, CO_TENANT, RENAMED = 6100, 6101, 7001, 7002


def found_in(surface: str) -> list[str]:
    """The issuers any 12 characters of whose planted token appear in `surface`."""
    return [issuer for issuer, token in T.items() if any(token[i : i + 12] in surface for i in range(len(token) - 11))]


def table() -> FakeProcessTable:
    records = FakeProcessTable.of([
        launched(SERVER, ["python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Meta-Llama-3-8B",
                          "--port", "30000", "--served-model-name", T["NVIDIA API key"]]),
        titled(TP0, "sglang::scheduler_TP0", SERVER),
        launched(CO_TENANT, ["python", "upload.py", T["Hugging Face user token"], T["AWS access key id"],
                             f"https://api.example.com/v1/{T['OpenAI project key']}/x", T["JSON Web Token"]], user="ada"),
        titled(RENAMED, f"sync {T['GitHub classic PAT']} {T['Anthropic key']}", parent_pid=1, user="bob"),
    ])  # fmt: skip
    records.records[RENAMED] = replace(records.records[RENAMED], name=T["Groq key"][:15])
    return records


def nvml() -> NvmlSource:
    gpu = gpu_from_mib("NVIDIA A100-SXM4-80GB", 0, total_mib=81_920, reserved_mib=557, used_mib=12_000,
                       bus_id="00000000:07:00.0", compute=[(TP0, 9_000 << 20), (CO_TENANT, 1_000 << 20), (RENAMED, 2_000 << 20)])  # fmt: skip
    return NvmlSource(nvml_module=FakePynvml([gpu]), clock=lambda: 1_700_000_100.0)


def endpoints() -> httpx.Client:
    def answer(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"refused by https://proxy.internal/{T['Slack bot']}/ ({T['Stripe live secret']})", request=request)

    return httpx.Client(transport=httpx.MockTransport(answer))


def loader(ref: str, *, override: ConfigOverride | None = None) -> ModelSpec:
    if ref == "meta-llama/Meta-Llama-3-8B":
        return load_model("llama-3.1-8b", override=override)
    raise InputError(f"could not fetch https://hub.internal/{T['GitLab PAT']}/{ref}: 404", field="--model")


def source() -> LiveSource:
    return LiveSource(nvml=nvml(), table=table(), model_loader=loader, http_client=endpoints())


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("kvtop.commands.node_source.open_node_source", lambda *args, **kwargs: source())


@pytest.mark.parametrize("argv", [["snapshot"], ["snapshot", "--json"], ["diagnose"], ["diagnose", "--json"]])
def test_no_shaped_secret_reaches_the_node_commands(planted: None, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert main(argv) in (0, 1)
    out, err = capsys.readouterr()
    assert "upload.py" in out or "7001" in out  # the planted co-tenant is shown
    assert {"stdout": found_in(out), "stderr": found_in(err)} == {"stdout": [], "stderr": []}


def test_no_shaped_secret_reaches_explain_from_a_quoted_log_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = (CASES / "sglang" / "C01" / "engine.log").read_text()
    path = tmp_path / "engine.log"
    path.write_text(
        log.replace("--trust-remote-code", f"--trust-remote-code --api-key {T['Hugging Face user token']}")
        + f"[2025-07-22 10:00:00] RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
        f"headers={{'Authorization': 'x {T['Hugging Face user token']}'}} url=https://hub/{T['GitHub OAuth']}\n"
    )
    for argv in (["explain", str(path), "--model", "qwen3-235b-a22b", "--gpu", "H100"],
                 ["explain", str(path), "--model", "qwen3-235b-a22b", "--gpu", "H100", "--json"]):  # fmt: skip
        main(argv)
        out, err = capsys.readouterr()
        assert out.strip() and (found_in(out), found_in(err)) == ([], [])


def labelled(handler: BaseHTTPRequestHandler) -> None:
    """A Prometheus whose series carry tokens in their label values."""
    query = parse_qs(urlsplit(handler.path).query)["query"][0]
    key = next(k for k, expr in ALL_QUERIES.items() if expr == query)
    instance = "10.0.0.1:9400"
    labels = {
        "up": {"__name__": "up", "job": "dcgm", "instance": instance, "note": T["Google API key"]},
        "dcgm": {"__name__": "DCGM_FI_DEV_FB_USED", "gpu": "0", "modelName": f"H100 {T['npm token']}",
                 "Hostname": f"node-{T['Databricks token']}", "instance": instance, "pod": T["Vault service token"],
                 "api_key": "plain-word-value"},
        "dcgm_gpus": {"Hostname": f"node-{T['Databricks token']}", "instance": instance, "hostname": T["npm token"]},
    }.get(key)  # fmt: skip
    result = [] if labels is None else [{"metric": labels, "value": [1_750_000_000.0, "1000"]}]
    body = json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}}).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def test_no_shaped_secret_reaches_cluster_from_prometheus_labels(capsys: pytest.CaptureFixture[str]) -> None:
    with serving(labelled) as url:
        # each twice: the second read finds its labels remembered (sources/prometheus.py `_shown_label`)
        for argv in 2 * (["cluster", "--prometheus", url], ["cluster", "--prometheus", url, "--json"],
                         ["cluster", "--prometheus", url, "--gpus"]):  # fmt: skip
            assert main(argv) == 0
            out, err = capsys.readouterr()
            assert "node-" in out and (found_in(out), found_in(err)) == ([], [])


async def test_no_shaped_secret_reaches_the_tui() -> None:
    app = KvtopApp(source(), loader, interval_s=3600.0, clock=FixedClock(), theme="dark")
    drawn: dict[str, str] = {}
    async with app.run_test(size=(220, 50)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("tab")
        drawn["dashboard"] = drawn_text(app)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ProcessScreen))
        screen = app.screen
        assert isinstance(screen, ProcessScreen)
        for row in range(len(screen._rows)):
            screen.query_one("DataTable").move_cursor(row=row)
            await pilot.pause()
            drawn[f"processes row {row}"] = drawn_text(app)
    assert any("upload.py" in text for text in drawn.values())
    assert {surface: found_in(text) for surface, text in drawn.items() if found_in(text)} == {}
