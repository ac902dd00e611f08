"""A real process's /proc: its environment's secrets are never kept, its command line's never shown.

The other secrets tests plant command lines in a recorded process table; this one starts a real process
(an engine-like command line with `--api-key`, `--hf-token`, a URL with a password and an env assignment in
a `bash -c` script; an environment holding HF_TOKEN, AWS_SECRET_ACCESS_KEY, OPENAI_API_KEY, a *_PASSWORD)
and reads it the way a live node does (`PsutilProcessTable`, /proc/<pid>/cmdline and environ), listed on a
GPU by the project's fake NVML. kvtop keeps one variable of the environment (CUDA_VISIBLE_DEVICES, for the
rank's device); `kvtop snapshot` (text and --json) and every value it built must hold none of the secrets.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from kvtop.cli import main
from kvtop.commands.node_source import LiveSource
from kvtop.sources.nvml import NvmlSource
from kvtop.sources.processes import PsutilProcessTable
from tests.fakes.fake_pynvml import FakePynvml, gpu_from_mib

ARGV_SECRETS = {"--api-key": "Q01xV7k01pLzz", "--hf-token": "Q02xV7k02pLzz", "URL password": "Q03xV7k03pLzz",
                "an argument HF_TOKEN=": "Q04xV7k04pLzz"}  # fmt: skip
ENV_SECRETS = {"HF_TOKEN": "Q05xV7k05pLzz", "AWS_SECRET_ACCESS_KEY": "Q06xV7k06pLzz",
               "OPENAI_API_KEY": "Q07xV7k07pLzz", "PGPASSWORD": "Q08xV7k08pLzz"}  # fmt: skip
SECRETS = {**ARGV_SECRETS, **ENV_SECRETS}
ARGV = [sys.executable, "-c", "import time; time.sleep(60)", "--api-key", ARGV_SECRETS["--api-key"],
        "--hf-token", ARGV_SECRETS["--hf-token"], "--model-path",
        f"https://mirror:{ARGV_SECRETS['URL password']}@models.internal/m",
        "--on-exit", f"HF_TOKEN={ARGV_SECRETS['an argument HF_TOKEN=']} python upload.py"]  # fmt: skip


@pytest.fixture(scope="module")
def child() -> Iterator[int]:
    if not sys.platform.startswith("linux"):
        pytest.skip("/proc is Linux's")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "CUDA_VISIBLE_DEVICES": "0", **ENV_SECRETS}
    process = subprocess.Popen(ARGV, env=env)
    try:
        yield process.pid
    finally:
        process.kill()
        process.wait()


def found_in(text: str) -> list[str]:
    """The labels any 6 characters of whose secret are in `text` (labels only, never the text)."""
    return [label for label, secret in SECRETS.items() if any(secret[i : i + 6] in text for i in range(len(secret) - 5))]


def source(pid: int) -> LiveSource:
    gpu = gpu_from_mib("NVIDIA A100-SXM4-80GB", 0, total_mib=81_920, reserved_mib=557, used_mib=2_000,
                       bus_id="00000000:07:00.0", compute=[(pid, 2_000 << 20)])  # fmt: skip
    return LiveSource(nvml=NvmlSource(nvml_module=FakePynvml([gpu]), clock=lambda: 1_700_000_100.0),
                      table=PsutilProcessTable())  # fmt: skip


def test_the_environment_is_never_kept_but_its_device_list(child: int) -> None:
    record = PsutilProcessTable().lookup(child)
    assert record is not None and record.cuda_visible_devices == "0"
    kept = found_in(repr(record))
    assert kept == list(ARGV_SECRETS)  # the raw argv only: the environment's are not in the record at all


@pytest.mark.parametrize("argv", [["snapshot"], ["snapshot", "--json"]])
def test_no_secret_of_a_real_process_reaches_the_snapshot(
    child: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    monkeypatch.setattr("kvtop.commands.node_source.open_node_source", lambda *args, **kwargs: source(child))
    assert main(argv) in (0, 1)
    out, err = capsys.readouterr()
    assert str(child) in out  # the process is shown (the text names it; the JSON holds its masked command)
    assert "--json" not in argv or '"--api-key",\n' in out and '"***"' in out
    leaks = {"stdout": found_in(out), "stderr": found_in(err)}
    assert leaks == {"stdout": [], "stderr": []}


def test_no_secret_of_a_real_process_is_held_by_any_value(child: int) -> None:
    held = source(child).collect().model_dump_json()
    leaks = found_in(held)
    assert leaks == []
