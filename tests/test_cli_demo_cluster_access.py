"""`--demo-cluster` with `--token-file` or `--ca-file`: an operator trial found the token taken without a word,
though the demo cluster is read in this process and sends nothing anywhere (kvtop/commands/demo_cluster.py). A flag
that would not be used is refused by name, as `--demo-cluster --prometheus URL` already was."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.cli import main

REFUSAL = "a demo cluster is read in this process and sends no request: this option would not be used"


@pytest.fixture
def access(tmp_path: Path) -> dict[str, str]:
    token = tmp_path / "token"
    token.write_text("secret-token\n")
    ca = tmp_path / "certs"  # a folder of hashed certificates (OpenSSL's capath), as --ca-file takes
    ca.mkdir()
    return {"--token-file": str(token), "--ca-file": str(ca)}


@pytest.mark.parametrize("flag", ["--token-file", "--ca-file"])
@pytest.mark.parametrize("before", [False, True], ids=["after cluster", "before cluster"])
def test_the_cluster_command_refuses_an_access_flag_it_would_not_use(
    flag: str, before: bool, access: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    given = [flag, access[flag]]
    argv = [*given, "cluster", "--demo-cluster"] if before else ["cluster", "--demo-cluster", *given]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"kvtop: error: {flag}: {REFUSAL}\n")
    assert "secret-token" not in captured.err


def test_the_cluster_tui_refuses_the_token_before_it_starts(
    access: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--demo-cluster", "--token-file", access["--token-file"]]) == 2
    assert capsys.readouterr().err == f"kvtop: error: --token-file: {REFUSAL}\n"


def test_the_demo_cluster_alone_still_reads(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", "--demo-cluster", "--json"]) == 0
    assert '"nodes"' in capsys.readouterr().out
