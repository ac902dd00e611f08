"""vLLM v0.8.0–v0.9.0 run V0 below compute capability 8.0: such a start is planned (and fitted) with V0's fits.

The start: Qwen3-30B-A3B at TP 4 on four RTX 2080 Ti 22 GB with `vllm/vllm-openai:v0.8.5` (search-index id
39687024550, tests/data/calibration/SOURCES.md). Its log prints V0's worker.py lines, 'model weights take 14.25GiB;
non_torch_memory takes 0.20GiB; PyTorch activation peak memory takes 1.40GiB': V1 at v0.8.5 prints neither line and
charges the CUDA context and NCCL inside its non-torch figure (v0_charge.py). The expected figures are the log's.
"""

from __future__ import annotations

import json
import math

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

GIB = 1 << 30
QWEN3_30B = str(CONFIGS / "Qwen--Qwen3-30B-A3B.json")
LAUNCH = ("vllm serve /qwen/qwen3-30b-a3b --served-model-name coder --tensor-parallel-size 4 --dtype half "
          "--max-model-len 32768 --max-num-batched-tokens 4096 --gpu-memory-utilization 0.93 --block-size 32 "
          "--enable-chunked-prefill --swap-space 16 --tokenizer-pool-size 56 --disable-custom-all-reduce")  # fmt: skip
LOGGED_NON_KV_GIB = 0.20 + 1.40  # non_torch_memory + PyTorch activation peak, as the log printed them


def _plan(capsys: pytest.CaptureFixture[str], gpu: str) -> dict:  # type: ignore[type-arg]
    args = ["plan", "--json", "--no-calibration-store", "--model", QWEN3_30B, "--engine", "vllm",
            "--engine-version", "0.8.5", "--gpu", gpu, "--cmd", LAUNCH]  # fmt: skip
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


def _term(out: dict, name: str) -> dict:  # type: ignore[type-arg]
    return next(term for term in out["terms"] if term["term"] == name)


def test_a_turing_start_at_v085_takes_v0s_fits_and_lands_on_its_log(capsys: pytest.CaptureFixture[str]) -> None:
    out = _plan(capsys, "RTX2080TI")
    activation, non_torch = _term(out, "activation"), _term(out, "non_torch")
    assert activation["basis"].startswith("vllm.activation.v0")
    assert non_torch["fit_key"] == "vllm.non_torch.v0"
    planned = (activation["bytes"] + non_torch["bytes"]) / GIB
    error = math.hypot(activation["error_bytes"], non_torch["error_bytes"]) / GIB
    assert abs(planned - LOGGED_NON_KV_GIB) <= error


def test_the_same_launch_on_ampere_keeps_v1s_charge(capsys: pytest.CaptureFixture[str]) -> None:
    """An A100 runs V1 at v0.8.5: its non-torch figure holds the CUDA context and NCCL (v0_charge.py), far above
    the 0.20 GiB of growth the Turing start's V0 printed."""
    out = _plan(capsys, "A100-40GB")
    assert _term(out, "activation")["basis"].startswith("vllm.activation.v1")
    assert _term(out, "non_torch")["bytes"] > 1 * GIB
