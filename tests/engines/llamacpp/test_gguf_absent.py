"""Without the optional `gguf` package a .gguf model is a named one-line error, never a traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kvtop.cli import main


def test_no_gguf_package_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setitem(sys.modules, "gguf", None)  # `import gguf` raises ImportError
    assert main(["plan", "--engine", "llamacpp", "--model", str(model), "--cmd", "llama-server -c 4096"]) != 0
    err = capsys.readouterr().err
    assert "pip install 'kvtop-ledger[gguf]'" in err and "Traceback" not in err


def test_a_file_that_is_not_gguf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("gguf")
    model = tmp_path / "m.gguf"
    model.write_bytes(b"not a gguf file at all")
    assert main(["plan", "--engine", "llamacpp", "--model", str(model), "--cmd", "llama-server -c 4096"]) != 0
    err = capsys.readouterr().err
    assert "--model" in err and "Traceback" not in err
