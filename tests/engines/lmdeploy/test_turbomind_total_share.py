"""TurboMind v0.1.0 – v0.2.1 gives `cache_max_entry_count` of CUDA's *total* to KV blocks:
`BlockManager::GetBlockCount` calls `cudaMemGetInfo(&free, &total)` and returns `size_t(total × ratio) / block_size`
(src/turbomind/models/llama/BlockManager.cc:84-89 at tags v0.1.0 and v0.2.1). That total is CUDA's, not
nvidia-smi's: on an A100 80GB torch's OOM message prints `a total capacity of 79.15 GiB` beside nvidia-smi's
`81920MiB` (tests/data/calibration/gpus.jsonl `file12686617020-a100-80gb-oom`). kvtop's step read nvidia-smi's
80 GiB, labelled "cudaMemGetInfo total", while its own pre-start table said 79.15 GiB.

The block is printed `[BlockManager] block_size = 64 MB` (`block_size_ >> 20`: MiB, though it says MB).
"""

from __future__ import annotations

import json
import re

import pytest

from kvtop.cli import main
from kvtop.domain.wording import GIB
from tests.conftest import CASES, CONFIGS

MIB = 1 << 20
LLAMA2_7B = str(CONFIGS / "meta-llama--Llama-2-7b-hf.json")  # 32 layers × 32 KV heads × 128: 524,288 B a token
TUTORIAL = CASES / "lmdeploy" / "lmdeploy-tutorial-v010-internlm-chat-7b-vgpu" / "engine.log"
# CUDA's total on an A100-SXM4-80GB as logs printed it (2 decimals): torch's `total capacity of 79.15 GiB`
# (gpus.jsonl `file12686617020-a100-80gb-oom`) and vLLM 0.26.1's 79.25 GiB (calibration record
# `autoscientists-qwen3-coder-30b-a3b-a100-80gb-v0261`; the driver's reservation differs by 0.1 GiB)
A100_CUDA_TOTALS = (round(79.15 * GIB), round(79.25 * GIB))
BLOCK = 128 * 524_288  # v0.1.0's 128-token block of Llama-2-7B (the tutorial log: `block_size = 64 MB`)
V010 = ("--model", LLAMA2_7B, "--engine", "lmdeploy", "--engine-version", "0.1.0", "--turbomind-workspace")


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> dict:  # type: ignore[type-arg]
    assert main(["plan", "--json", *V010, *args]) == 0
    return json.loads(capsys.readouterr().out)


def _step(out: dict, role: str) -> dict:  # type: ignore[type-arg]
    (step,) = [step for step in out["steps"] if step["role"] == role]
    return step


def test_v010_shares_cudas_total_not_nvidia_smis(capsys: pytest.CaptureFixture[str]) -> None:
    """A100-80GB, ratio 0.5 (v0.1.0's default): size_t(79.15 GiB × 0.5) // 64 MiB = 40,524.8 MiB // 64 = 633
    blocks = 81,024 tokens, and at 79.25 GiB 40,576 MiB // 64 = 634 (nvidia-smi's 80 GiB would give 640 = 81,920):
    the total kvtop shares is CUDA's, between the two logged."""
    out = _plan(capsys, "--gpu", "A100-80GB")
    total = _step(out, "cuda_total")  # CUDA's own total in place of the table's: its role says so
    assert min(A100_CUDA_TOTALS) - GIB // 200 <= total["bytes"] <= max(A100_CUDA_TOTALS) + GIB // 200  # 2 decimals
    assert total["label"].startswith("total (cudaMemGetInfo)") and "nvidia-smi" not in total["label"]
    assert "BlockManager.cc:84-89" in total["note"]
    assert out["num_blocks"] == int(total["bytes"] * 0.5) // BLOCK
    assert 633 <= out["num_blocks"] <= 634 and out["token_capacity"] == out["num_blocks"] * 128
    # neither the context nor the weights move a share of the total: CUDA's total is the one term
    assert [term["term"] for term in out["terms"]] == ["cuda_total"]
    (term,) = out["terms"]
    moved = round(out["interval_scale"] * term["error_bytes"])  # one term: the root of squares is itself
    low, high = total["bytes"] - moved, total["bytes"] + moved
    assert out["token_capacity_min"] == int(low * 0.5) // BLOCK * 128
    assert out["token_capacity_max"] == int(high * 0.5) // BLOCK * 128


def test_a_given_total_is_the_one_shared(capsys: pytest.CaptureFixture[str]) -> None:
    """The tutorial's vGPU (VGPU-SMI `20470MiB` in its log): 10,235 MiB // 64 MiB = 159 blocks, the log's
    `max_block_count = 159`, and the block's note prints as the log does."""
    smi = re.search(r"\| +\d+MiB / (\d+)MiB", TUTORIAL.read_text())
    printed = re.search(r"\[BlockManager\] block_size = (\d+ MB)", TUTORIAL.read_text())
    logged = re.search(r"max_block_count = (\d+)", TUTORIAL.read_text())
    assert smi is not None and printed is not None and logged is not None
    out = _plan(capsys, "--gpu-memory", f"{smi.group(1)}MiB")
    total = _step(out, "gpu_total")
    assert (total["label"], total["bytes"], total["measured"]) == ("total (cudaMemGetInfo)", 20470 * MIB, True)
    assert out["num_blocks"] == int(logged.group(1))
    (block,) = [step for step in out["steps"] if step["label"].startswith("bytes per block")]
    assert f"'block_size = {printed.group(1)}'" in block["note"] and "MiB" in block["note"]
    assert out["token_capacity_min"] == out["token_capacity_max"] == 159 * 128


def test_from_v022_the_share_is_of_free_memory_and_reads_every_term(capsys: pytest.CaptureFixture[str]) -> None:
    """v0.2.2's GetBlockCount takes `get_free_size()` (BlockManager.cc:101-104 at v0.2.2): the context and the
    weights are terms again."""
    assert main(["plan", "--json", "--model", LLAMA2_7B, "--engine", "lmdeploy", "--engine-version", "0.2.2",
                 "--turbomind-workspace", "--gpu", "A100-80GB"]) == 0  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert {"cuda_total", "context", "weights"} <= {term["term"] for term in out["terms"]}
