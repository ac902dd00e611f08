"""Options written before the command that the command takes too (`kvtop --token-file F cluster …`): an operator
trial found argparse wrote the command's defaults over them, so the token and CA bundle given before `cluster`
were dropped without a word (and `kvtop --no-calibration-store plan` used the store). Each must reach the command."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import pytest

from kvtop.cli import main


def _seen(monkeypatch: pytest.MonkeyPatch, module: str, argv: list[str]) -> argparse.Namespace:
    """The arguments the command's handler is given (the handler replaced: nothing is read or sent)."""
    seen: list[argparse.Namespace] = []

    def handler(args: argparse.Namespace, extra: Sequence[str]) -> int:
        seen.append(args)
        return 0

    monkeypatch.setattr(f"kvtop.commands.{module}.run", handler)
    assert main(argv) == 0
    return seen[0]


def test_token_and_ca_given_before_cluster_reach_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("secret-token\n")
    ca = tmp_path / "certs"  # a folder of hashed certificates (OpenSSL's capath), as --ca-file takes
    ca.mkdir()
    url = ["--prometheus", "https://prometheus.test:9090"]
    args = _seen(monkeypatch, "cluster", ["--token-file", str(token), "--ca-file", str(ca), "cluster", *url])
    assert (args.token_file, args.ca_file) == (str(token), str(ca))
    # the command's own option is the nearer: it wins over one given before the command
    other = tmp_path / "other"
    other.write_text("other-token\n")
    args = _seen(monkeypatch, "cluster", ["--token-file", str(token), "cluster", "--token-file", str(other), *url])
    assert args.token_file == str(other)


def test_no_calibration_store_before_plan_reaches_it(monkeypatch: pytest.MonkeyPatch) -> None:
    args = _seen(monkeypatch, "plan", ["--no-calibration-store", "plan", "--model", "llama-3-8b"])
    assert args.no_calibration_store is True
    assert _seen(monkeypatch, "plan", ["plan", "--model", "llama-3-8b"]).no_calibration_store is False
