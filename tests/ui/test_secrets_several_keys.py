"""Two keys after one flag reach no surface (session 56 operator QA).

vLLM's `--api-key` is list-typed (`FrontendArgs.api_key: list[str] | None`, vllm/entrypoints/openai/cli_args.py,
vllm-project/vllm@00522333) and LMDeploy's `--api-keys` takes `nargs='*'` (lmdeploy/cli/utils.py,
InternLM/lmdeploy@00948ee2): `--api-key k1 k2` gives the server both keys. QA found the second shown in the
process panel (X), the terminate dialog (T), `kvtop snapshot --demo SCN --json` and the actions log. A demo node
with such co-tenants (the QA's scenario, /tmp/d56/secret_scn.json, rebuilt here) is read on every one of them.
"""

from __future__ import annotations

import json

from kvtop.cli import main
from kvtop.commands.node_source import DemoSource
from kvtop.sources.signals import ActionLog, SimulatedSignalSender
from kvtop.ui.screens.signal_confirm import SignalScreen
from tests.ui.conftest import wait_for
from tests.ui.helpers import open_node_table, select, text

KEYS = ("alphaLEAK1", "bravoLEAK2", "charlieLEAK3", "deltaLEAK4", "echoLEAK5")
LMDEPLOY_PID, VLLM_PID = 4242, 4343
LMDEPLOY_ARGV = ["/usr/bin/python3", "-m", "lmdeploy", "serve", "api_server", "internlm/internlm2_5-7b-chat",
                 "--api-keys", KEYS[0], KEYS[1], "--server-port", "23333"]  # fmt: skip
VLLM_ARGV = ["env", f"HF_TOKEN={KEYS[4]}", "/usr/bin/vllm", "serve", "Qwen/Qwen3-8B",
             "--api-key", KEYS[2], KEYS[3], "--port", "9000"]  # fmt: skip
LMDEPLOY_SHOWN = [*LMDEPLOY_ARGV[:7], "***", "***", "--server-port", "23333"]
VLLM_SHOWN = ["env", "HF_TOKEN=***", *VLLM_ARGV[2:6], "***", "***", "--port", "9000"]


def scenario(tmp_path) -> str:
    """A demo node: SGLang TP4 on GPUs 0-3 serving, the two co-tenants on GPUs 4 and 5."""
    doc = {
        "description": "two keys after one flag",
        "seed": 5,
        "gpu": {"model": "H100", "count": 8, "name": "NVIDIA H100 80GB HBM3", "driver_version": "550.90.07"},
        "engines": [{
            "model": "llama-3-70b", "gpus": [0, 1, 2, 3], "server_pid": 41000, "version": "0.5.9",
            "command": "python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3-70B-Instruct --tp 4 "
                       "--port 30000",
        }],
        "foreign_processes": [
            {"gpu": 4, "pid": LMDEPLOY_PID, "used": "20GiB", "cmdline": LMDEPLOY_ARGV, "user": "ada"},
            {"gpu": 5, "pid": VLLM_PID, "used": "10GiB", "cmdline": VLLM_ARGV, "user": "bob"},
        ],
    }  # fmt: skip
    path = tmp_path / "two_keys.json"
    path.write_text(json.dumps(doc))
    return str(path)


def leaked(*texts: str) -> list[str]:
    """The keys found in `texts` (named by their index, never printed)."""
    return [f"key {index}" for index, key in enumerate(KEYS) if any(key in text for text in texts)]


def test_snapshot_json_shows_neither_key_and_keeps_the_model_and_next_flag(tmp_path, capsys):
    assert main(["snapshot", "--demo", scenario(tmp_path), "--json"]) == 0
    out, err = capsys.readouterr()
    assert leaked(out, err) == []
    processes = {p["pid"]: p for gpu in json.loads(out)["gpus"] for p in gpu["processes"]}
    assert processes[LMDEPLOY_PID]["cmdline"] == LMDEPLOY_SHOWN
    assert processes[VLLM_PID]["cmdline"] == VLLM_SHOWN


def test_snapshot_text_shows_neither_key(tmp_path, capsys):
    assert main(["snapshot", "--demo", scenario(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert leaked(out, err) == []


async def test_the_panel_the_dialog_and_the_actions_log_show_neither_key(make_app, tmp_path):
    log = tmp_path / "actions.log"
    source = DemoSource.open(scenario(tmp_path))
    sender = SimulatedSignalSender(ActionLog(log), "demo:two-keys")  # the demo's: sends nothing, logs all
    app = make_app(source.collect_at(0), signal_sender=sender)
    async with app.run_test(size=(160, 40)) as pilot:
        panel = await open_node_table(pilot)
        for pid, shown in ((LMDEPLOY_PID, LMDEPLOY_SHOWN), (VLLM_PID, VLLM_SHOWN)):
            await select(pilot, panel, pid)
            detail = text(panel, "#processes-detail")
            assert leaked(detail, *(row.command for row in panel._rows)) == []
            assert detail == "command " + " ".join(shown)
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(app.screen, SignalScreen))
        dialog = text(app.screen, "#signal-text")
        assert leaked(dialog) == [] and " ".join(VLLM_SHOWN) in dialog
        assert "REFUSED: pid 4343 is engine server of vllm:4343" in dialog  # a serving vLLM: F sends it
        await pilot.press("F")
        await wait_for(pilot, lambda: log.exists() and log.read_text().strip() != "")
    (line,) = [json.loads(row) for row in log.read_text().splitlines()]
    assert leaked(log.read_text()) == []
    assert line["command"] == " ".join(VLLM_SHOWN)
