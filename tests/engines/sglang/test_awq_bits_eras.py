"""SGLang's AWQ widths by release (engines/sglang/awq_bits.py AWQ_BITS_ERAS): 4 (AWQConfig) and 8 (AWQMarlinConfig
TYPE_MAP) in every wheel read — 0.4.9 awq.py:46-50 `if self.weight_bits != 4: raise ValueError("Currently, only 4-bit
weight quantization is supported for AWQ, …")` with vLLM's awq_marlin; 0.5.10 awq.py:120 and :196 TYPE_MAP {4, 8}."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.engines.sglang.awq_bits import AWQ_BITS_ERAS
from kvtop.domain.engines.versions import from_flag
from tests.conftest import CONFIGS


def test_each_release_read_names_its_own_lines() -> None:
    assert "awq.py:46" in AWQ_BITS_ERAS.era(from_flag("0.4.9")).source
    assert ":120, :196 at 0.5.10" in AWQ_BITS_ERAS.era(from_flag("0.5.10")).source
    assert {era.value for era in AWQ_BITS_ERAS} == {(4, 8)}


def test_a_three_bit_awq_is_refused_at_0_5_10(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = json.loads((CONFIGS / "quant" / "Qwen--Qwen3-32B-AWQ.json").read_text())
    config["quantization_config"]["bits"] = 3
    path = tmp_path / "awq3.json"
    path.write_text(json.dumps(config))
    assert main(["plan", "--model", str(path), "--engine", "sglang", "--engine-version", "0.5.10", "--gpu", "H100"]) == 2
    err = capsys.readouterr().err
    assert "SGLang 0.5.10 loads AWQ at 4 bits (8 through Marlin), not 3" in err
