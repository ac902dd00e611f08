"""A key inside a flag kvtop keeps verbatim reaches no output of `kvtop plan`.

vLLM's `--kv-transfer-config` JSON is kept whole (its rules read the connector from it) and written back on the
plan's `engine flags:` line and in `--json`'s `"engine_flags"`: a connector's credentials in its
`kv_connector_extra_config` (`"api_key"`, `"auth"`) were printed as typed, because values the operator types are not
redacted when built and the output's last mask knows issuers' shapes and URL passwords only. `LaunchSettings.to_flags`
now redacts what it writes (`redact_argv`); the JSON stays JSON with the key's value `"***"`.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.data_paths import CONFIGS

KEY = "Q7vXk2pLm9"  # no issuer's shape: only the name it is given gives it away
QWEN2_7B = str(CONFIGS / "Qwen--Qwen2.5-7B.json")


def _transfer(name: str) -> str:
    return json.dumps({"kv_connector": "NixlConnector", "kv_role": "kv_both",
                       "kv_connector_extra_config": {name: KEY}})  # fmt: skip


@pytest.mark.parametrize("name", ["api_key", "auth"])
@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["text", "json"])
def test_a_typed_kv_transfer_config_shows_no_key(
    capsys: pytest.CaptureFixture[str], name: str, json_flag: list[str]
) -> None:
    argv = ["plan", "--model", QWEN2_7B, "--engine", "vllm", "--engine-version", "0.10.0", "--gpu", "H100",
            "--no-calibration-store", "--kv-transfer-config", _transfer(name), *json_flag]  # fmt: skip
    assert main(argv) == 0
    out, err = capsys.readouterr()
    leaked = KEY[:5] in out + err
    assert not leaked
    shown = f'"kv_connector_extra_config": {{"{name}": "***"}}'
    if json_flag:
        flags = json.loads(out)["engine_flags"]
        assert flags[flags.index("--kv-transfer-config") + 1].endswith(shown + "}")  # still JSON, still the connector
        assert json.loads(flags[flags.index("--kv-transfer-config") + 1])["kv_connector"] == "NixlConnector"
    else:
        assert shown in out


def test_a_pasted_launch_line_s_kv_transfer_key_is_not_written_back(capsys: pytest.CaptureFixture[str]) -> None:
    command = f"vllm serve {QWEN2_7B} --api-key={KEY} --kv-transfer-config '{_transfer('api_key')}'"
    argv = ["plan", "--cmd", command, "--engine-version", "0.10.0", "--gpu", "H100", "--no-calibration-store"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    leaked = KEY[:5] in out + err
    assert not leaked
    line = next(line for line in out.splitlines() if line.startswith("engine flags:"))
    assert '"kv_connector_extra_config": {"api_key": "***"}' in line
