"""An engine log's argument dump holds secrets; `kvtop explain` shows none and its calibration store keeps none.

vLLM logs its launch as `non-default args: {…}` (utils.py), the dict's repr: an API key given on the command
line is there as `'api_key': ['…']`, a loader's credentials inside its config. The log is
the recorded Isambard-AI run (tests/data/cases/vllm/isambard-v0101dev-qwen3-30b-a3b-pp2-tp4-gh200), its
dump extended with the fields vLLM's `EngineArgs` names for them. `explain` (text and --json) reads it; it
then writes the start to the local calibration store ($XDG_STATE_HOME/kvtop/calibration.jsonl), a file
that stays on the node long after: the store must hold no argument value, only counts, keys and words.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from tests.data_paths import CASES, CONFIGS

LOG = CASES / "vllm" / "isambard-v0101dev-qwen3-30b-a3b-pp2-tp4-gh200" / "engine.log"
DUMP_END = "'enable_lora': None}"

#: label → planted secret, each in the field vLLM's EngineArgs gives it
PLANTED = {
    "api_key": "Q01xV7k01pLzz",
    "hf_token": "Q02xV7k02pLzz",
    "model_loader_extra_config aws_secret_access_key": "Q03xV7k03pLzz",
    "hf_overrides password": "Q04xV7k04pLzz",
    "download_dir URL password": "Q05xV7k05pLzz",
}
FIELDS = (
    f"'api_key': ['{PLANTED['api_key']}'], 'hf_token': '{PLANTED['hf_token']}', "
    f"'model_loader_extra_config': {{'aws_secret_access_key': '{PLANTED['model_loader_extra_config aws_secret_access_key']}'}}, "
    f"'hf_overrides': {{'remote_auth': {{'password': '{PLANTED['hf_overrides password']}'}}}}, "
    f"'download_dir': 's3://reader:{PLANTED['download_dir URL password']}@bucket/cache'"
)


def found_in(text: str) -> list[str]:
    """The labels any 6 characters of whose secret are in `text` (labels only, never the text)."""
    return [label for label, secret in PLANTED.items() if any(secret[i : i + 6] in text for i in range(len(secret) - 5))]


@pytest.fixture
def planted_log(tmp_path: Path) -> Path:
    text = LOG.read_text()
    assert text.count(DUMP_END) == 1
    path = tmp_path / "engine.log"
    path.write_text(text.replace(DUMP_END, f"'enable_lora': None, {FIELDS}}}"))
    return path


def test_explain_shows_no_argument_secret_and_its_store_keeps_none(
    planted_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("KVTOP_NO_CALIBRATION_STORE", raising=False)
    base = ["explain", str(planted_log), "--model", str(CONFIGS / "Qwen--Qwen3-30B-A3B.json"), "--gpu", "H200",
            "--gpu-memory", "95GiB"]  # fmt: skip
    shown: dict[str, str] = {}
    for argv in (base, [*base, "--json"]):
        assert main(argv) == 0
        out, err = capsys.readouterr()
        shown[" ".join(argv[-1:])] = out + err
    assert "6,167,536" in shown["95GiB"]  # the log's capacity was read (its 'GPU KV cache size' line)
    store = tmp_path / "state" / "kvtop" / "calibration.jsonl"
    lines = store.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["engine"] == "vllm"  # a start is stored once, however often explained
    shown["calibration store"] = store.read_text()
    leaks = {surface: found_in(text) for surface, text in shown.items() if found_in(text)}
    assert leaks == {}
