"""Secrets planted in live processes never reach any surface kvtop has (issue 21).

The live path runs as on a node: the project's fake pynvml lists the GPU processes, a recorded
process table gives their command lines (each carrying secrets in the spellings people use), an
httpx MockTransport answers the engines' endpoints. Every surface is then searched for every
secret: `kvtop snapshot` and `kvtop diagnose` (text and --json, stdout and stderr), the
exporter's /metrics page, and the TUI's dashboard, findings, each GPU's rank ledger, the planner
and the probe dialog (their exported screenshots). A failure names the secret's label and the
surface, never the secret (results are held in variables, so pytest prints no text).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest
from prometheus_client import CollectorRegistry, generate_latest

from kvtop.cli import main
from kvtop.commands.node_source import LiveSource
from kvtop.domain.config_override import ConfigOverride
from kvtop.domain.errors import InputError
from kvtop.domain.model import ModelSpec
from kvtop.domain.observe import ProcessRole
from kvtop.sources.exporter import SnapshotCollector, default_findings
from kvtop.sources.hub import load_model
from kvtop.sources.nvml import NvmlSource
from kvtop.ui.app import KvtopApp
from kvtop.ui.screens.ledger import RankLedgerScreen
from kvtop.ui.widgets.gpu_list import GpuList
from tests.conftest import SAMPLES
from tests.fakes.fake_process_table import FakeProcessTable, launched, titled
from tests.fakes.fake_pynvml import FakePynvml, gpu_from_mib
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.fakes import FixedClock


def _secret(number: int) -> str:
    return f"Q{number:02d}xV7k{number:02d}pL"  # every window of 6 characters holds the number


#: label → planted secret (the label says where it was planted)
SECRETS: dict[str, str] = {
    label: _secret(number)
    for number, label in enumerate(
        [
            "vllm env HF_TOKEN=", "vllm env HFTOKEN=", "vllm --api-key", "vllm --openai-key", "vllm --api-keys=",
            "vllm -k", "vllm --model-loader-extra-config hf_token", "vllm --headers Authorization",
            "vllm --hf-token -dash", "sglang --api-key", "sglang --admin-api-key=", "sglang model URL password",
            "bash -c HF_TOKEN=", "bash -c --api-key", "bash -c redis://:pass@", "https://TOKEN@github.com",
            "HTTPS://user:pass@", "password with /", "user:pass@host", "curl X-Api-Key", "?sig=",
            "X-Amz-Signature", "?key=", "env GITHUB_PAT=", "env PGPASSWORD=", "env DB_PASS=",
            "python -c os.environ", "renamed process dict api_key", "renamed process --secret",
            "process name", "CUDA_VISIBLE_DEVICES", "endpoint error (proxy URL)", "model loader error",
        ],
        start=1,
    )
}  # fmt: skip
S = SECRETS

GIB_MIB = 1024
VLLM_SERVER, VLLM_CORE = 5100, 5101
SGLANG_SERVER, SGLANG_TP0, SGLANG_TP1 = 6100, 6101, 6102
CO_TENANTS = (7001, 7002, 7003, 7004, 7005, 7006)
ORPHAN = 7100
GPT_OSS = "openai/gpt-oss-120b"

VLLM_ARGV = [
    "env", f"HF_TOKEN={S['vllm env HF_TOKEN=']}", f"HFTOKEN={S['vllm env HFTOKEN=']}",
    "vllm", "serve", GPT_OSS, "--api-key", S["vllm --api-key"], "--openai-key", S["vllm --openai-key"],
    f"--api-keys={S['vllm --api-keys=']}", "-k", S["vllm -k"],
    "--model-loader-extra-config", f'{{"hf_token": "{S["vllm --model-loader-extra-config hf_token"]}"}}',
    f'--headers={{"Authorization": "Bearer {S["vllm --headers Authorization"]}"}}',
    "--hf-token", f"-{S['vllm --hf-token -dash']}",
    "--gpu-memory-utilization", "0.95", "--max-num-batched-tokens", "1024", "--port", "8000",
]  # fmt: skip
SGLANG_ARGV = [
    "python3", "-m", "sglang.launch_server",
    "--model-path", f"https://mirror:{S['sglang model URL password']}@models.internal/meta-llama/Meta-Llama-3-8B",
    "--tp", "2", "--api-key", S["sglang --api-key"], f"--admin-api-key={S['sglang --admin-api-key=']}",
    "--host", "0.0.0.0", "--port", "30000",
]  # fmt: skip
CO_TENANT_ARGV = {
    7001: ["bash", "-c", f"HF_TOKEN={S['bash -c HF_TOKEN=']} python train.py --api-key {S['bash -c --api-key']} "
                         f"--cache redis://:{S['bash -c redis://:pass@']}@cache:6379/0"],
    7002: ["python", "sync.py", f"https://{S['https://TOKEN@github.com']}@github.com/org/repo.git",
           f"HTTPS://user:{S['HTTPS://user:pass@']}@hub.example/x",
           f"postgres://app:pa/{S['password with /']}@db.internal/x", f"user:{S['user:pass@host']}@cache.internal:6379"],
    7003: ["curl", "-H", f"X-Api-Key: {S['curl X-Api-Key']}",
           f"https://acct.blob.core.windows.net/c?sv=2022&sig={S['?sig=']}&se=2030",
           f"https://b.s3.amazonaws.com/w?X-Amz-Signature={S['X-Amz-Signature']}",
           f"https://maps.example.com/api?key={S['?key=']}"],
    7004: ["env", f"GITHUB_PAT={S['env GITHUB_PAT=']}", f"PGPASSWORD={S['env PGPASSWORD=']}",
           f"DB_PASS={S['env DB_PASS=']}", "python", "-c",
           f"import os; os.environ['OPENAI_API_KEY'] = '{S['python -c os.environ']}'"],
    # setproctitle with spaces: the whole line is one argument
    7005: [f"python serve.py --config {{'api_key': '{S['renamed process dict api_key']}'}} "
           f"--secret {S['renamed process --secret']}"],
    7006: ["python", "worker.py"],
}  # fmt: skip


def planted_table() -> FakeProcessTable:
    records = [
        launched(VLLM_SERVER, VLLM_ARGV),
        titled(VLLM_CORE, "VLLM::EngineCore", VLLM_SERVER),
        launched(SGLANG_SERVER, SGLANG_ARGV),
        titled(SGLANG_TP0, "sglang::scheduler_TP0", SGLANG_SERVER),
        titled(SGLANG_TP1, "sglang::scheduler_TP1", SGLANG_SERVER),
        *(launched(pid, argv, user="ada") for pid, argv in CO_TENANT_ARGV.items()),
        titled(ORPHAN, "sglang::scheduler_TP3", parent_pid=1),
    ]
    table = FakeProcessTable.of(records)
    table.records[7006] = replace(table.records[7006], name=f"pw={S['process name']}")  # renamed itself
    table.records[7001] = replace(
        table.records[7001], cuda_visible_devices=f"0,token={S['CUDA_VISIBLE_DEVICES']}"
    )
    return table


def planted_nvml() -> NvmlSource:
    """4 × A100-80GB (samples/process_tables: 81920 MiB, 557 MiB reserved): vLLM on GPU 0 (its API
    server's own 500 MiB context beside the engine core), SGLang TP2 on GPUs 1-2, co-tenants and an
    orphan on GPU 3."""
    per_gpu: dict[int, list[tuple[int, int]]] = {
        0: [(VLLM_SERVER, 500), (VLLM_CORE, 74_000)],
        1: [(SGLANG_TP0, 9_752)],
        2: [(SGLANG_TP1, 9_752)],
        3: [(pid, 1_000 + 10 * index) for index, pid in enumerate(CO_TENANTS)] + [(ORPHAN, 2_000)],
    }
    gpus = [
        gpu_from_mib(
            "NVIDIA A100-SXM4-80GB", index, total_mib=81_920, reserved_mib=557,
            used_mib=sum(mib for _, mib in rows), bus_id=f"00000000:{0x07 + index:02X}:00.0",
            compute=[(pid, mib << 20) for pid, mib in rows],
        )
        for index, rows in per_gpu.items()
    ]  # fmt: skip
    return NvmlSource(nvml_module=FakePynvml(gpus), clock=lambda: 1_700_000_100.0)


def endpoints() -> httpx.Client:
    """vLLM answers with a recorded /metrics page; SGLang fails through a proxy whose URL holds a password."""
    page = (SAMPLES / "vllm_metrics/v1-nim-qwen3-vl-235b-awq-tp2-grep-fragment.txt").read_text()

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.port == 8000:
            return httpx.Response(200, text=page)
        proxy = f"http://proxy:{S['endpoint error (proxy URL)']}@proxy.internal:3128"
        raise httpx.ConnectError(f"connection refused by {proxy}", request=request)

    return httpx.Client(transport=httpx.MockTransport(answer))


def loader(ref: str, *, override: ConfigOverride | None = None) -> ModelSpec:
    """gpt-oss-120b from its preset; anything else fails the way a hub download does, naming a URL."""
    if ref == GPT_OSS:
        return load_model("gpt-oss-120b", override=override)
    url = f"https://hf:{S['model loader error']}@hub.internal/{ref}/config.json"
    raise InputError(f"could not fetch {url}: 404", field="--model")


def planted_source() -> LiveSource:
    return LiveSource(
        nvml=planted_nvml(), table=planted_table(), model_loader=loader, http_client=endpoints()
    )


def found_in(surface: str) -> list[str]:
    """Labels of the planted secrets any 6 characters of which appear in `surface`."""
    return [
        label
        for label, secret in SECRETS.items()
        if any(secret[i : i + 6] in surface for i in range(len(secret) - 5))
    ]


@pytest.fixture
def live_node(monkeypatch: pytest.MonkeyPatch) -> None:
    """`kvtop` commands read the planted node (a fresh live source per command, as on a node)."""
    monkeypatch.setattr("kvtop.commands.node_source.open_node_source", lambda *args, **kwargs: planted_source())


def test_the_planted_node_is_read_as_a_node_would_be() -> None:
    """The secrets test means something only if the planted processes are really shown."""
    snapshot = planted_source().collect()
    observation = snapshot.observation
    assert [engine.engine_id for engine in observation.engines] == [
        f"vllm:{VLLM_SERVER}",
        f"sglang:{SGLANG_SERVER}",
    ]
    assert [len(view.ranks) for view in snapshot.engines] == [1, 2]
    assert snapshot.engines[0].ledger is not None and snapshot.engines[1].ledger_error
    co_tenants = observation.processes_with_role(ProcessRole.CO_TENANT)
    assert sorted(process.pid for _, process in co_tenants) == list(CO_TENANTS)
    assert all(process.cmdline for _, process in co_tenants)
    assert snapshot.engines[1].engine.live.message  # the endpoint's failure is shown
    assert len(SECRETS) == 33


@pytest.mark.parametrize(
    "argv",
    [["snapshot"], ["snapshot", "--json"], ["diagnose"], ["diagnose", "--json"]],
    ids=["snapshot", "snapshot --json", "diagnose", "diagnose --json"],
)
def test_no_secret_reaches_the_commands(
    live_node: None, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    status = main(argv)
    out, err = capsys.readouterr()
    assert status in (0, 1) and out.strip(), "the command printed nothing: it did not read the planted node"
    leaks = {"stdout": found_in(out), "stderr": found_in(err)}  # labels only: never the text itself
    assert leaks == {"stdout": [], "stderr": []}


def test_no_secret_reaches_the_exporters_page() -> None:
    collector = SnapshotCollector(planted_source(), node="node-a", findings=default_findings())
    assert collector.refresh()
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    page = generate_latest(registry).decode()
    assert 'engine="vllm:5100"' in page
    leaks = found_in(page)
    assert leaks == []


def screen_text(app: KvtopApp) -> str:
    """What the terminal shows, from the exported SVG: the text of its <text> elements, entities decoded."""
    svg = app.export_screenshot()
    return html.unescape("".join(re.findall(r"<text[^>]*>(.*?)</text>", svg, re.DOTALL))).replace("\xa0", " ")


async def test_no_secret_reaches_any_screen_of_the_tui() -> None:
    app = KvtopApp(planted_source(), loader, interval_s=3600.0, clock=FixedClock(), theme="dark")
    shown: dict[str, str] = {}
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("tab")  # the findings pane
        shown["dashboard and findings"] = screen_text(app)
        for gpu in range(4):
            gpus = app.screen.query_one(GpuList)
            gpus.focus()
            gpus.selected = gpu
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, RankLedgerScreen))
            shown[f"rank ledger of GPU {gpu}"] = screen_text(app)
            await pilot.press("escape")
        for key in ("p", "P"):  # the planner and the probe dialog, of GPU 3 and then of GPU 0
            await pilot.press(key)
            await pilot.pause()
            shown[f"screen of {key}"] = screen_text(app)
            await pilot.press("escape")
    assert any("vllm" in text for text in shown.values())
    leaks = {surface: found_in(text) for surface, text in shown.items() if found_in(text)}
    assert leaks == {}


def _all_strings(value: object) -> Iterator[str]:
    """Every string inside a dumped value (keys and values)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _all_strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _all_strings(item)


def test_no_secret_is_held_by_any_value_kvtop_built() -> None:
    """Deeper than the surfaces: the snapshot itself, every field of every value, holds none."""
    snapshot = planted_source().collect()
    held = "\n".join(_all_strings(snapshot.model_dump(mode="json")))
    leaks = found_in(held)
    assert leaks == []


# --- error messages: what kvtop prints when something fails ------------------------------------

ERROR_SECRET = _secret(99)


class FailingSource:
    """A source that fails the way an HTTP client behind an authenticating proxy does."""

    label = "nvml"

    def collect(self) -> object:
        raise httpx.ConnectError(f"connection refused by http://proxy:{ERROR_SECRET}@proxy.internal:3128")


def test_no_secret_reaches_an_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", f"https://mirror:{ERROR_SECRET}@models.internal/m", "--gpu", "H100"]) == 2
    with pytest.raises(SystemExit):
        main(["snapshot", "--api-key", ERROR_SECRET])  # argparse's own error names the arguments
    out, err = capsys.readouterr()
    leaked = ERROR_SECRET[2:8] in out + err
    assert not leaked  # first: the lines below would print the text
    assert len(err.splitlines()) == 2 and err.splitlines()[0].endswith(": https://***@models.internal/m")
    assert "unrecognized arguments: --api-key ***" in err


def test_no_secret_reaches_the_exporters_or_the_tuis_failure_message(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from kvtop.ui.polling import failure_reason

    collector = SnapshotCollector(FailingSource(), node="node-a")  # type: ignore[arg-type]
    assert not collector.refresh()
    tui_reason = failure_reason(httpx.ConnectError(f"refused by http://proxy:{ERROR_SECRET}@proxy.internal"))
    err = capsys.readouterr().err
    leaked = ERROR_SECRET[2:8] in err + (collector.last_error or "") + tui_reason
    assert not leaked
    assert collector.last_error == "ConnectError: connection refused by http://***@proxy.internal:3128"
    assert f"collection failed: {collector.last_error}" in err
    assert tui_reason == "ConnectError: refused by http://***@proxy.internal"
