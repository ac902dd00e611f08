"""`--disable-custom-all-reduce` and `--trust-remote-code` typed to `kvtop plan --engine vllm` failed "not a flag of
vLLM that kvtop knows" (an operator trial, session 48). The first turns the TP group's custom all-reduce off
(vLLM ParallelConfig.disable_custom_all_reduce; custom_all_reduce.py never builds it), which the non-torch fit's
part reads (calibration_non_torch.custom_all_reduce_on); the second only lets a config's own code load
(ModelConfig.trust_remote_code): accepted, no memory of its own. Both are EngineArgs bool fields, argparse's
BooleanOptionalAction (vllm/engine/arg_utils.py, read at v0.33.0), so their `--no-` spellings are accepted too."""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.engines.vllm.calibration import FITS
from tests.data_paths import CONFIGS

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")


def _plan(capsys: pytest.CaptureFixture[str], engine: str, *flags: str) -> list[str]:
    assert main(["plan", "--model", LLAMA_8B, "--engine", engine, "--gpu", "H100", *flags]) == 0
    return capsys.readouterr().out.splitlines()


def _non_torch_gib(lines: list[str]) -> float:
    row = next(line for line in lines if line.lstrip().startswith("vLLM's non-torch memory"))
    return float(row.split("memory", 1)[1].split("GiB", 1)[0])


def _tokens(lines: list[str]) -> int:
    return int(next(line for line in lines if line.startswith("Token capacity")).split()[2].replace(",", ""))


def test_disable_custom_all_reduce_takes_the_all_reduce_part_off(capsys: pytest.CaptureFixture[str]) -> None:
    on = _plan(capsys, "vllm", "--tp", "2")
    off = _plan(capsys, "vllm", "--tp", "2", "--disable-custom-all-reduce")
    part = FITS["vllm.non_torch.v18"].coefficients[1]  # the fit's GiB when the custom all-reduce runs: 0.379
    assert round(_non_torch_gib(on) - _non_torch_gib(off), 2) == round(part, 2)  # 1.14 − 0.76 GiB
    assert _tokens(off) > _tokens(on)  # 1,028,304 against 1,022,096: the freed part holds KV
    assert any("custom all-reduce off (--disable-custom-all-reduce)" in line for line in off)
    assert off[-1] == "engine flags: --tensor-parallel-size 2 --disable-custom-all-reduce"  # written back
    assert _tokens(_plan(capsys, "vllm", "--tp", "2", "--no-disable-custom-all-reduce")) == _tokens(on)


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_trust_remote_code_is_accepted_and_changes_no_memory(capsys: pytest.CaptureFixture[str], engine: str) -> None:
    assert _tokens(_plan(capsys, engine, "--trust-remote-code")) == _tokens(_plan(capsys, engine))
