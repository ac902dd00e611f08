"""A memory-neutral flag typed at a release whose argparse lacks it is refused (flag_releases.check_neutral_flag_releases):
SGLang stops on it ('unrecognized arguments') before it sizes anything. Expected values are the wheels, read by hand:
`--bf16-gemm-backend` is in none of 0.5.14's srt/*.py and is declared from 0.5.15 (arg_groups/fields/exec_.py:291 at
0.5.23); `--stream-output` is at 0.5.19 server_args.py:3855 and in none of 0.5.20's server_args.py / arg_groups/fields.
No record of the SGLang corpus (tests/data/calibration/sglang.jsonl, 43 records typing a neutral flag) is refused,
estimated releases taken as exact included (session 61)."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.engines.sglang.flag_releases import check_neutral_flag_releases
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import InputError
from tests.conftest import CONFIGS

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


def _run(capsys: pytest.CaptureFixture[str], version: str, *flags: str) -> tuple[int, str]:
    code = main(["plan", "--json", "--engine", "sglang", "--model", LLAMA_8B, "--gpu", "H100",
                 "--engine-version", version, *flags])  # fmt: skip
    out = capsys.readouterr()
    return code, out.out if code == 0 else out.err


@pytest.mark.parametrize(("version", "flags", "refused"), [
    ("0.5.14", ("--bf16-gemm-backend", "cutlass"), "has no --bf16-gemm-backend (first in v0.5.15"),
    ("0.5.15", ("--bf16-gemm-backend", "cutlass"), None),
    ("0.5.19", ("--stream-output",), None),
    ("0.5.20", ("--stream-output",), "has no --stream-output (last in v0.5.19, none in v0.5.20"),
    ("0.4.0", ("--enable-metrics",), None),
])  # fmt: skip
def test_a_neutral_flag_is_refused_where_its_release_has_none(
    capsys: pytest.CaptureFixture[str], version: str, flags: tuple[str, ...], refused: str | None
) -> None:
    code, text = _run(capsys, version, *flags)
    if refused is None:
        assert code == 0
        assert json.loads(text)["token_capacity"] == json.loads(_run(capsys, version)[1])["token_capacity"]  # neutral: same plan
    else:
        assert code != 0 and refused in text and text.startswith(f"kvtop: error: {flags[0]}: ")


def test_an_estimated_release_is_not_checked() -> None:
    """A release estimated from a log's lines: the log says the engine took the flag."""
    flags = {"bf16-gemm-backend": "cutlass"}
    check_neutral_flag_releases(flags, ResolvedVersion(text="0.5.14", approximate=True))
    with pytest.raises(InputError, match="first in v0.5.15"):
        check_neutral_flag_releases(flags, ResolvedVersion(text="0.5.14"))
