"""A GPU model sold in two memory sizes: `--gpu` names the table's card (the RTX 2060 of 6 GB, the RTX 2080 Ti of 11),
and a --gpu-memory above its figure is a larger variant of it, nvidia-smi's total of that card: the plan keeps the
card's SMs and capability and estimates CUDA's total from the given one, as it does from the table's, not the model's
fit of the smaller card (kvtop/domain/gpus.py `is_larger_variant`).

The figures: four 22 GB (memory-modified) RTX 2080 Ti under vLLM 0.8.5 (search-index ids 38730122894, 39687024550;
tests/data/calibration/vllm.jsonl `file38730122894-*-4x2080ti22g-tp4-v085`): driver 550.144.03, nvidia-smi's
22,528 MiB, 'the current vLLM instance can use total_gpu_memory (21.66GiB) x gpu_memory_utilization (0.93)', 'the rest
of the memory reserved for KV Cache is 4.30GiB'. The V100's 32 GB variant: the corpus's V100-32GB starts printed
31.74 GiB on average (`cuda_total.V100-32GB`, three sources), where the 16 GB V100's fit is 15.77.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS, cuda_total_estimate
from kvtop.domain.gpu_total_origin import GpuTotalOrigin, given_total_origin
from kvtop.domain.gpus import is_larger_variant
from kvtop.domain.wording import GIB, MIB
from tests.data_paths import CONFIGS

QWEN3_30B = str(CONFIGS / "Qwen--Qwen3-30B-A3B.json")
FLAGS_32K = ["--engine", "vllm", "--engine-version", "0.8.5", "--tensor-parallel-size", "4", "--dtype", "half",
             "--max-model-len", "32768", "--max-num-batched-tokens", "4096", "--gpu-memory-utilization", "0.93",
             "--block-size", "32", "--enable-chunked-prefill", "--swap-space", "16", "--disable-custom-all-reduce"]  # fmt: skip


def test_a_total_above_the_cards_is_a_larger_variant_and_a_smaller_one_may_be_a_slice() -> None:
    assert is_larger_variant("RTX2060", 12288 * MIB)  # the 12 GB RTX 2060 against the table's 6,144 MiB
    assert is_larger_variant("NVIDIA GeForce RTX 2080 Ti", 22528 * MIB)
    assert not is_larger_variant("RTX2060", 6144 * MIB)  # the table's own card
    assert not is_larger_variant("A100-80GB", 80 * 10**9)  # '80GB' typed for the 81,920 MiB card: the same card
    assert not is_larger_variant("H100", 24 * GIB)  # below the card: a slice reports its limit as CUDA's total
    assert not is_larger_variant("NO-SUCH-GPU", 48 * GIB)
    # the one decision plan and explain read: a variant's total is nvidia-smi's, any other the engine's
    assert given_total_origin("RTX2060", 12288 * MIB) is GpuTotalOrigin.VARIANT
    assert given_total_origin("H100", 24 * GIB) is GpuTotalOrigin.GIVEN and given_total_origin(None, GIB) is GpuTotalOrigin.GIVEN
    # table, given, variant, NVML, WSL2 (the card's figure, CUDA's whole-card total estimated from it: calibrated)
    assert [origin.is_engines_total for origin in GpuTotalOrigin] == [False, True, False, True, False]


def test_a_larger_variant_takes_the_fitted_gap_not_the_smaller_cards_fit() -> None:
    v100_32 = cuda_total_estimate("V100", 32768 * MIB, CUDA_TOTAL_FITS)
    assert abs(v100_32.bytes - 31.74 * GIB) <= v100_32.error_bytes  # the V100-32GB starts' mean, not 15.77
    rtx2080ti_22 = cuda_total_estimate("RTX2080-TI", 22528 * MIB, CUDA_TOTAL_FITS)
    assert abs(rtx2080ti_22.bytes - 21.66 * GIB) <= rtx2080ti_22.error_bytes  # the start's total_gpu_memory


def test_the_22gb_2080ti_start_is_planned_from_nvidia_smis_total(capsys: pytest.CaptureFixture[str]) -> None:
    """Read as CUDA's total, the 22.00 GiB planned 4.74 GiB of KV a rank (+10.3 %); from nvidia-smi's total less the
    fitted gap (21.61 GiB) within 5 % of the 4.30 GiB the log printed."""
    assert main(["plan", "--model", QWEN3_30B, *FLAGS_32K, "--gpu", "RTX2080-TI", "--gpu-memory", "22528MiB",
                 "--json"]) == 0  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert out["gpu"]["total_is"] == "--gpu-memory" and out["gpu"]["name"] == "RTX2080-TI"
    pool = out["ranks"][0]["kv_pool_bytes"]
    assert abs(pool - 4.30 * GIB) / (4.30 * GIB) < 0.05
