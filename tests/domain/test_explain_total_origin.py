"""explain says where the GPU total came from as its chooser said it, never read back from its bytes (session 50, g).

An operator's `--gpu-memory 81559MiB` on an H100 is the H100 80GB HBM3's nvidia-smi total to the MiB (the GPU table's
`GPU_TOTAL_MIB`, from nvidia-smi captures), yet it is the operator's figure: the estimate of a log's missing free
memory must start from it (79.65 GiB, measured), not from the calibration's fitted CUDA total of the H100,
which `--gpu H100` alone stands on. SGLang C01 (vllm#21348, Qwen3-235B-A22B-FP8 at TP 4) prints no `Load weight`
lines, so the free memory before the load is estimated.
"""

from __future__ import annotations

import pytest

from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS
from tests.conftest import CASES, CONFIGS
from tests.explain_cli import explain_json

C01 = CASES / "sglang" / "C01" / "engine.log"
MODEL = str(CONFIGS / "Qwen--Qwen3-235B-A22B-FP8.json")
H100_NVIDIA_SMI_BYTES = 81_559 * 2**20  # 79.65 GiB: nvidia-smi's total of an H100 80GB HBM3


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


def _total_step(out: dict[str, object]) -> dict[str, object]:
    steps = out["steps"]
    assert isinstance(steps, list)
    (step,) = [s for s in steps if s["role"] == "gpu_total"]
    return dict(step)


def test_a_given_total_equal_to_the_tables_is_still_the_operators(capsys: pytest.CaptureFixture[str]) -> None:
    out = explain_json(capsys, C01, "--model", MODEL, "--gpu", "H100", "--gpu-memory", "81559MiB")
    step = _total_step(out)
    assert (step["label"], step["bytes"], step["source"]) == ("GPU memory", H100_NVIDIA_SMI_BYTES, "measured")
    estimated = out["estimated"]
    assert isinstance(estimated, dict)
    assert estimated["basis"].startswith("GPU memory as CUDA reports it 79.65 GiB (measured: --gpu-memory)")


def test_the_tables_total_is_said_as_nvidia_smis(capsys: pytest.CaptureFixture[str]) -> None:
    out = explain_json(capsys, C01, "--model", MODEL, "--gpu", "H100")
    step = _total_step(out)
    assert (step["label"], step["bytes"], step["source"]) == (
        "GPU memory (nvidia-smi's total)", H100_NVIDIA_SMI_BYTES, "assumed",
    )  # fmt: skip
    estimated = out["estimated"]
    assert isinstance(estimated, dict)
    fit = CUDA_TOTAL_FITS["cuda_total.H100"]  # the fitted figure, whatever the corpus makes it
    said = f"GPU memory as CUDA reports it {fit.coefficients[0]:.2f} ± {fit.error_bytes / 2**30:.2f} GiB (calibrated"
    assert estimated["basis"].startswith(said)


def test_a_stand_in_total_reads_assumed_for_every_engine(capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM's stand-in total (no --gpu, the log prints no total) said no source word where SGLang's said assumed."""
    log = CASES / "vllm" / "blog-v0271-qwen3-32b-pp2-rtxpro6000" / "engine.log"
    step = _total_step(explain_json(capsys, log, "--model", str(CONFIGS / "Qwen--Qwen3-32B.json")))
    assert (step["label"], step["bytes"], step["source"]) == ("GPU memory (a stand-in: pass --gpu)", 80 * 2**30, "assumed")
