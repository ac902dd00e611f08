"""The 8 GB RTX 4070 laptop card as kvtop's GPU table reads it: its own row (RTX4070-LAPTOP), not the 12 GB desktop
RTX 4070 its NVML name used to read to.

Expected values from public printouts, not from the table: '8,188 MiB reported by `nvidia-smi` / 8.0 GiB reported by
PyTorch' beside 'NVIDIA GeForce RTX 4070 Laptop GPU, compute capability 8.9' (search-index id 63151070773), llama.cpp's
'Device 0: NVIDIA GeForce RTX 4070 Laptop GPU, compute capability 8.9, VMM: yes, VRAM: 8187 MiB' (68711858341), and
'one RTX 4070 Laptop GPU (36 SMs, sm_89)' (60826839834); Sanssssssssssssssss/vllm-infra-lab's vLLM 0.17.1 sweep rows
under WSL2: 'gpu_name' 'NVIDIA GeForce RTX 4070 Laptop GPU', 'vram_total_mb' 8188 (the corpus's sanss-infra-lab-*).
"""

from __future__ import annotations

import pytest

from kvtop.domain.gpus import compute_capability, gpu_model_key, gpu_total_bytes, is_listed_card, sm_count

MIB = 2**20


@pytest.mark.parametrize(
    "name", ["NVIDIA GeForce RTX 4070 Laptop GPU", "RTX 4070 Laptop GPU", "RTX 4070 Mobile", "RTX4070-LAPTOP"]
)
def test_the_laptop_card_reads_to_its_key_and_the_figures_its_printouts_give(name: str) -> None:
    assert gpu_model_key(name) == "RTX4070-LAPTOP"
    assert is_listed_card(name)
    assert gpu_total_bytes(name) == 8188 * MIB
    assert compute_capability(name) == (8, 9)
    assert sm_count(name) == 36


def test_the_desktop_cards_keep_their_rows() -> None:
    """The desktop RTX 4070 (12 GB) and its Ti and SUPER stay themselves."""
    assert gpu_model_key("NVIDIA GeForce RTX 4070") == "RTX4070"
    assert gpu_model_key("NVIDIA GeForce RTX 4070 Ti") == "RTX4070-TI"
    assert gpu_model_key("NVIDIA GeForce RTX 4070 SUPER") == "RTX4070-SUPER"
    assert gpu_total_bytes("NVIDIA GeForce RTX 4070") > 8188 * MIB
