"""AWS's A10G (g5 instances) as kvtop's GPU table reads it: its own card beside the A10, not a refusal.

Expected values from public printouts, not from the table: nvidia-smi's 'NVIDIA A10G, 23028 MiB' (search-index ids
27636968701, 57510727102, 66686965076, 62036504885, 71642959660), a vLLM host's 'GPU: 21,291 MiB / 23,028 MiB'
(59672764378), and 'A10G (80 SMs, sm_86)' (53246938969, 55444537300). Two held-out vLLM starts on g5 instances were
refused by name before the card was added (#27, session 57).
"""

from __future__ import annotations

import pytest

from kvtop.domain.gpus import compute_capability, gpu_model_key, gpu_total_bytes, is_listed_card, sm_count

MIB = 2**20


@pytest.mark.parametrize("name", ["NVIDIA A10G", "A10G", "a10g"])
def test_the_a10g_reads_to_its_key_and_the_total_nvidia_smi_printed(name: str) -> None:
    assert gpu_model_key(name) == "A10G"
    assert is_listed_card(name)
    assert gpu_total_bytes(name) == 23028 * MIB
    assert compute_capability(name) == (8, 6)
    assert sm_count(name) == 80


def test_the_a10_stays_its_own_card_with_72_sms() -> None:
    # the A10's 9,216 CUDA cores (NVIDIA's datasheet) are 72 SMs of 128: the same memory, a different chip count
    assert gpu_model_key("NVIDIA A10") == "A10"
    assert sm_count("NVIDIA A10") == 9216 // 128
