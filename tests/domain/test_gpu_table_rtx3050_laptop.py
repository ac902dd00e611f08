"""The 4 GB RTX 3050 laptop card as kvtop's GPU table reads it: its own row (RTX3050-LAPTOP), not a refusal.

Expected values from public printouts, not from the table: nvidia-smi's 'NVIDIA GeForce RTX 3050 Laptop GPU, 4096 MiB'
(search-index ids 66301028439, 70940246336, 69398712653, 58578691390, 57442593401), CUDA's device properties'
'NVIDIA GeForce RTX 3050 Laptop GPU (16 SMs, 4.0 GiB)' (68998871265, 69331096017) and '(16 SMs, compute capability
8.6)' (54700343983); its 2,048 CUDA cores at 128 a GA10x SM (bithardware.top's spec listing of the card). The corpus's
WSL2 start on it (file68393499563, vLLM 0.11.0) was planned from nvidia-smi's total with no card before (#27, session 58).
"""

from __future__ import annotations

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.gpus import (
    compute_capability,
    gpu_model_key,
    gpu_total_bytes,
    is_listed_card,
    nearest_gpus,
    resident_threads,
    sm_count,
)
from tests.corpus_records import RECORDS

MIB = 2**20
THREADS_PER_GA10X_SM = 1536  # CUDA C++ Programming Guide, compute capability 8.6: resident threads per SM


@pytest.mark.parametrize(
    "name",
    ["NVIDIA GeForce RTX 3050 Laptop GPU", "RTX 3050 Laptop GPU", "RTX 3050 Mobile", "rtx3050 laptop",
     "RTX 3050 4GB Laptop GPU", "RTX3050-LAPTOP"],
)  # fmt: skip
def test_the_laptop_card_reads_to_its_key_and_the_figures_its_printouts_give(name: str) -> None:
    assert gpu_model_key(name) == "RTX3050-LAPTOP"
    assert is_listed_card(name)
    assert gpu_total_bytes(name) == 4096 * MIB
    assert compute_capability(name) == (8, 6)
    assert sm_count(name) == 2048 // 128 == 16
    assert resident_threads(name) == 16 * THREADS_PER_GA10X_SM


def test_the_other_3050s_keep_their_own_names() -> None:
    # the '6GB Laptop GPU' is its own row (6,144 MiB); the 3050 Ti laptop card (20 SMs) and the desktop 8 GB RTX 3050
    # (GA106) are not this card: refused by name, the 3050 rows offered
    assert gpu_model_key("NVIDIA GeForce RTX 3050 6GB Laptop GPU") == "RTX3050-6GB"
    for other in ("NVIDIA GeForce RTX 3050 Ti Laptop GPU", "NVIDIA GeForce RTX 3050"):
        assert sm_count(other) is None
        with pytest.raises(InputError):
            gpu_total_bytes(other)
    assert "RTX3050-LAPTOP" in nearest_gpus("RTX 3050")


def test_the_wsl2_record_names_the_card_whose_total_it_printed() -> None:
    record = RECORDS["file68393499563-qwen2.5-3b-awq-rtx3050-4gb-wsl2-v0110"]
    assert gpu_model_key(record["gpu"]) == "RTX3050-LAPTOP"
    # its nvidia-smi's '0MiB / 4096MiB' is the row's total
    assert gpu_total_bytes(record["gpu"]) == int(record["gpu_total_mib"]) * MIB
