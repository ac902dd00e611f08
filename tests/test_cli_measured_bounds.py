"""A measured amount of one GPU's memory that the GPU cannot hold is refused, naming the flag.

Before, `kvtop plan --free-memory 100TiB` on the assumed H100 was solved as *measured* and planned
2,179,265,220 tokens per rank; an H200 log's `avail mem=137.29 GB` typed without `--gpu H200` was
planned on an H100. The totals come from nvidia-smi (tests/data/samples/nvidia_smi: an H100 80GB
HBM3 has 81559 MiB) and SGLang's own log line (tests/data/cases/sglang/C04: `Load weight begin.
avail mem=137.29 GB`, SGLang's GB being GiB, on an H200 of 143771 MiB).
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.cli_in_process import run_kvtop
from tests.conftest import CONFIGS, SAMPLES

LLAMA = str(CONFIGS / "meta-llama--Meta-Llama-3-70B.json")
H100_TOTAL_MIB = 81559  # nvidia-smi's `memory.total` of an H100 80GB HBM3 (the sample below)


def test_the_h100_total_is_the_sample_s() -> None:
    sample = SAMPLES / "nvidia_smi" / "query-gpu-csv-noheader-h100sxm-index-name-total-used-free.txt"
    assert f"NVIDIA H100 80GB HBM3, {H100_TOTAL_MIB} MiB" in sample.read_text()


@pytest.mark.parametrize(
    ("flags", "field"),
    [
        (["--free-memory", "100TiB"], "--free-memory"),
        (["--free-memory", "137.29GiB"], "--free-memory"),  # an H200 log's figure, the GPU not given
        (["--gpu-memory", f"{H100_TOTAL_MIB}MiB", "--free-memory", f"{H100_TOTAL_MIB + 1}MiB"], "--free-memory"),
        (["--gpu", "H100", "--weights-memory", "200GiB"], "--weights-memory"),
        (["--gpu", "H100", "--non-kv-memory", "100GiB"], "--non-kv-memory"),  # was planned: 1,210,059 tokens
        (["--gpu", "H100", "--free-after-load", "80GiB"], "--free-after-load"),  # 81920 MiB > 81559
        (["--free-memory", "40GiB", "--free-after-load", "63.72GiB"], "--free-after-load"),  # the two swapped
    ],
)
def test_more_memory_than_the_gpu_holds_is_refused(
    capsys: pytest.CaptureFixture[str], flags: list[str], field: str
) -> None:
    assert main(["plan", "--model", LLAMA, "--tp", "8", *flags]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"kvtop: error: {field}: ") and captured.err.count("\n") == 1


def test_the_h200_log_s_figure_is_planned_on_the_h200(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", LLAMA, "--tp", "8", "--gpu", "H200", "--free-memory", "137.29GiB"]) == 0
    assert main(["plan", "--model", LLAMA, "--tp", "8", "--gpu-memory", f"{H100_TOTAL_MIB}MiB",
                 "--free-memory", f"{H100_TOTAL_MIB}MiB"]) == 0  # fmt: skip
    capsys.readouterr()


def test_explain_refuses_it_too_without_a_traceback() -> None:
    log = CONFIGS.parent / "cases" / "sglang" / "C04" / "engine.log"
    result = run_kvtop("explain", str(log), "--model", LLAMA, "--gpu", "H100",
                       "--free-memory", "137.29GiB")  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("kvtop: error: --free-memory: 137.29 GiB is more than the GPU's 79.65 GiB")


def test_the_probe_s_plan_is_checked_too(capsys: pytest.CaptureFixture[str]) -> None:
    """The probe's --gpu is an index: its plan assumes an H100 unless --gpu-memory names the GPU."""
    cpu = ["probe", "--model", LLAMA, "--device", "cpu", "--memory-limit", "1GiB", "--tokens", "1"]
    assert main([*cpu, "--free-memory", "137.29GiB"]) == 2
    assert capsys.readouterr().err.startswith("kvtop: error: --free-memory: 137.29 GiB is more than the GPU's 79.65 GiB")


def test_the_hint_offers_what_the_command_takes(capsys: pytest.CaptureFixture[str]) -> None:
    """What to give instead is what the command accepts: plan's --gpu names a model, the probe's is an index (was
    '…; give the GPU with --gpu MODEL or --gpu-memory SIZE (probe: --gpu-memory)' from both)."""
    over = "kvtop: error: --free-memory: 137.29 GiB is more than the GPU's 79.65 GiB (an H100, assumed); "
    assert main(["plan", "--model", LLAMA, "--free-memory", "137.29GiB"]) == 2
    assert capsys.readouterr().err == over + "give the GPU with --gpu MODEL or --gpu-memory SIZE\n"
    cpu = ["probe", "--model", LLAMA, "--device", "cpu", "--memory-limit", "1GiB", "--tokens", "1"]
    assert main([*cpu, "--free-memory", "137.29GiB"]) == 2
    assert capsys.readouterr().err == over + "give the GPU's memory with --gpu-memory SIZE (the probe's --gpu is its index)\n"
    assert main(["plan", "--model", LLAMA, "--gpu", "H100", "--free-memory", "137.29GiB"]) == 2
    assert capsys.readouterr().err.endswith("79.65 GiB (--gpu H100) (GB is 10^9 bytes, GiB 2^30)\n")
