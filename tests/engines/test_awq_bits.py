"""An AWQ config with `bits: 3` is refused by name on vLLM and SGLang, as their AWQ configs refuse it (before, it
planned 0.394 B/param). Expected words from the engines' code: vLLM v0.33.0 and v0.27.1 auto_awq.py:204 "Unsupported
num_bits = 3. Supported: 4.", v0.18.0 and v0.20.0 (:53) awq.py:51 and SGLang 0.5.23 awq/awq.py:86 "Currently, only 4-bit weight quantization is
supported for AWQ, but got 3 bits." The config is Qwen/Qwen3-32B-AWQ's (tests/data/configs/quant) with its `bits` set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

AWQ = CONFIGS / "quant" / "Qwen--Qwen3-32B-AWQ.json"


def _with_bits(tmp_path: Path, bits: int) -> str:
    config = json.loads(AWQ.read_text())
    config["quantization_config"]["bits"] = bits
    path = tmp_path / f"awq{bits}.json"
    path.write_text(json.dumps(config))
    return str(path)


@pytest.mark.parametrize(("engine", "release", "said"), [
    ("vllm", "0.33.0", "vLLM 0.33.0 loads AWQ at 4 bits only, not 3 ('Unsupported num_bits = 3. Supported: 4.')"),
    ("vllm", "0.27.1", "vLLM 0.27.1 loads AWQ at 4 bits only, not 3 ('Unsupported num_bits = 3. Supported: 4.')"),
    ("vllm", "0.20.0", "('Currently, only 4-bit weight quantization is supported for AWQ, but got 3 bits.')"),
    ("vllm", "0.18.0", "('Currently, only 4-bit weight quantization is supported for AWQ, but got 3 bits.')"),
    ("sglang", "0.5.23", "SGLang 0.5.23 loads AWQ at 4 bits (8 through Marlin), not 3 ('Currently, only 4-bit weight "
                         "quantization is supported for AWQ, but got 3 bits.')"),
])  # fmt: skip
def test_three_bit_awq_is_refused_by_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str, release: str, said: str
) -> None:
    argv = ["plan", "--model", _with_bits(tmp_path, 3), "--engine", engine, "--engine-version", release, "--gpu", "H100"]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("kvtop: error: quantization_config.bits: ") and said in err


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_four_bit_awq_is_planned(capsys: pytest.CaptureFixture[str], engine: str) -> None:
    assert main(["plan", "--model", str(AWQ), "--engine", engine, "--gpu", "H100"]) == 0
    capsys.readouterr()
