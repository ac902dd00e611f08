"""The workstation cards read from the spellings operators and public threads use ('A4000', 'A6000 Ada', 'RTX 6000
Pro'), and a memory size written with a space or a bare G ('V100 32 GB', 'A800-80G') reads as its own card.

Expected values: the card each public spelling stands for, as its source says (search-index ids and URLs beside
each; the 'A6000 Ada' is the Ada card by a public name map, 24622200256, '"A6000 Ada": "RTX 6000Ada"'), and that
card's total as nvidia-smi printed it under its NVML name (tests/data/samples/nvidia_smi/nvml-names-totals-session49
/-session52.csv), never the table itself. TensorRT-LLM#1188's 'A4000' record could not be planned (#27, session 52).
"""

from __future__ import annotations

import csv

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.gpus import (
    compute_capability,
    gpu_key,
    gpu_model_key,
    gpu_total_bytes,
    is_listed_card,
    sm_count,
)
from tests.data_paths import SAMPLES

MIB = 2**20
PRINTED = {
    row["name_as_nvml_prints"]: row
    for session in ("session49", "session52")
    for row in csv.DictReader(
        (SAMPLES / "nvidia_smi" / f"nvml-names-totals-{session}.csv").open(encoding="utf-8")
    )
}

# a spelling as written in public, the NVML name of the card it means, where it was written
SPELLINGS = {
    "A4000": ("NVIDIA RTX A4000", "trtllm.jsonl's record of NVIDIA/TensorRT-LLM#1188"),
    "Quadro A4000": ("NVIDIA RTX A4000", "NVIDIA/TensorRT-LLM#1188 'Quadro A4000(16GB VRAM)'; 3983341379"),
    "A4500": ("NVIDIA RTX A4500", "the A-series name without 'RTX', as 'A4000' is written"),
    "A5000": ("NVIDIA RTX A5000", "55895336877 '2x A5000 (SM 8.6)'"),
    "Quadro A5000": ("NVIDIA RTX A5000", "3983341379 'Quadro A5000'"),
    "A6000": ("NVIDIA RTX A6000", "allenai/open-instruct#163 'My GPU is A6000', 47.53 GiB total capacity"),
    "RTX A6000": ("NVIDIA RTX A6000", "NVML's name less 'NVIDIA'"),
    "A6000 Ada": ("NVIDIA RTX 6000 Ada Generation", "1390724130, 32669552730; 24622200256 maps it to 'RTX 6000Ada'"),
    "RTX A6000 Ada": ("NVIDIA RTX 6000 Ada Generation", "58593744030 'RTX A6000 Ada (48GB)'"),
    "NVIDIA RTX A6000 ADA": ("NVIDIA RTX 6000 Ada Generation", "9942704176 (a GPU table's entry, Ada, 568 tensor cores)"),
    "6000 Ada": ("NVIDIA RTX 6000 Ada Generation", "the task's operator spelling; 24622200256's 'RTX 6000Ada'"),
    "RTX 6000Ada": ("NVIDIA RTX 6000 Ada Generation", "24622200256"),
    "RTX6000Ada": ("NVIDIA RTX 6000 Ada Generation", "vllm.jsonl's file62880914643 record"),
    "RTX 6000 Ada": ("NVIDIA RTX 6000 Ada Generation", "60889502712 'one RTX 6000 Ada card'"),
    "PRO 6000": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "the product name less 'RTX'"),
    "RTX 6000 Pro": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "44065675637 'NVIDIA RTX 6000 Pro'"),
    "RTX 6000 PRO Blackwell": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "7254390752 (sm_120, 96 GB)"),
    "RTX Pro 6000 Blackwell": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "bigstack-oss/cubecos#312"),
}  # fmt: skip


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_public_spelling_reads_as_the_card_it_names(spelling: str) -> None:
    nvml_name, _source = SPELLINGS[spelling]
    printed = PRINTED[nvml_name]
    assert gpu_total_bytes(spelling) == int(printed["total_mib"]) * MIB
    assert gpu_model_key(spelling) == printed["kvtop_key"]
    assert is_listed_card(spelling)
    assert compute_capability(spelling) == compute_capability(nvml_name) is not None
    assert sm_count(spelling) == sm_count(nvml_name) is not None


def test_a_records_spelling_is_its_key_to_a_lookup_by_key() -> None:
    """The corpus and `explain` look a card up by `gpu_key` (no prefix reading): the records' 'A4000' and
    'RTX6000Ada' are the table's keys there, as NVML's 'NVIDIA B200' is the 'B200'; a name with more words stays."""
    assert (gpu_key("A4000"), gpu_key("RTX6000Ada"), gpu_key("NVIDIA B200")) == (
        "RTXA4000",
        "RTX6000-ADA",
        "B200",
    )
    assert gpu_key("RTX 6000 PRO Blackwell") == "RTX-6000-PRO-BLACKWELL"


def test_the_ada_card_is_not_the_ampere_a6000() -> None:
    """'A6000 Ada' shares the RTX A6000's 49,140 MiB but not its chip: 8.9 and 142 SMs (41092802240 '142 SMs ... CC
    8.9'), against GA102's 8.6 and 84 (NVIDIA's 10,752 cores / 128). Read as the A6000 by its prefix before."""
    assert compute_capability("A6000 Ada") == (8, 9) and sm_count("A6000 Ada") == 142
    assert compute_capability("A6000") == (8, 6) and sm_count("A6000") == 10_752 // 128


@pytest.mark.parametrize("name", ["6000", "RTX 6000", "Quadro RTX 6000"])
def test_a_bare_6000_is_no_card_and_the_error_names_the_three(name: str) -> None:
    """'RTX 6000' is also the Turing Quadro RTX 6000 (24 GB), which kvtop does not list."""
    with pytest.raises(InputError) as raised:
        gpu_total_bytes(name)
    message = str(raised.value)
    assert message.startswith(f"--gpu: unknown GPU {name!r}")
    assert "did you mean RTXPRO6000, RTXA6000, RTX6000-ADA, RTX6000D?" in message and "--gpu-memory" in message
    assert not is_listed_card(name) and compute_capability(name) is None


@pytest.mark.parametrize(
    "name", ["NVIDIA RTX 6000D", "RTX PRO 6000D", "NVIDIA RTX PRO 6000D Blackwell Workstation Edition"]
)
def test_the_china_6000d_is_its_own_card_not_the_pro_6000(name: str) -> None:
    """'NVIDIA RTX PRO 6000D Blackwell Workstation Edition' is an 84 GB card (Datura-ai/lium-io#1198); NVML names it
    'NVIDIA RTX 6000D', nvidia-smi's total 85,651 MiB and capability 12.0 (search-index ids 69755146969,
    54533173895), not the RTX PRO 6000's 97,887 MiB. Its SM count is printed nowhere read: unknown."""
    assert gpu_total_bytes(name) == 85_651 * 2**20
    assert compute_capability(name) == (12, 0) and sm_count(name) is None


def test_the_titan_rtx_is_read_from_its_nvml_name() -> None:
    """'NVIDIA TITAN RTX, 24576 MiB' (nvidia-smi --query-gpu, 57512902144), 'compute capability 7.5' (61502112780),
    '72 SMs' (58289094730: the full TU102)."""
    assert gpu_total_bytes("NVIDIA TITAN RTX") == 24_576 * 2**20 == gpu_total_bytes("TITAN RTX")
    assert compute_capability("NVIDIA TITAN RTX") == (7, 5) and sm_count("NVIDIA TITAN RTX") == 72


@pytest.mark.parametrize(
    ("spelling", "nvml_name"),
    [
        ("V100 32 GB", None),  # lmdeploy case 4367 '4x V100 32 GB': was the 16 GB V100 by its prefix
        ("A800-80G", "NVIDIA A800-SXM4-80GB"),  # lmdeploy case 4285 '8 x A800-80G (SM80)'
        ("A100 40G", None),  # was the 80 GB A100 by its prefix
        ("A100 80 GB", None),
    ],
)
def test_a_size_written_apart_reads_as_the_sized_card(spelling: str, nvml_name: str | None) -> None:
    expected = {
        "V100 32 GB": 32_768,
        "A100 40G": 40_960,
        "A100 80 GB": 81_920,
    }  # NVIDIA's 32 / 40 / 80 GiB boards
    total = int(PRINTED[nvml_name]["total_mib"]) if nvml_name else expected[spelling]
    assert gpu_total_bytes(spelling) == total * MIB


def test_the_rtx_pro_4000_blackwell_is_read_from_its_nvml_name() -> None:
    """'NVIDIA RTX PRO 4000 Blackwell, 24467 MiB' (nvidia-smi --query-gpu, search-index id 58724219395; a RunPod pod's
    the same, 59744527679) and 'compute capability 12.0' (69887719960): a 24 GB card, not the 32 GB PRO 4500."""
    assert gpu_total_bytes("NVIDIA RTX PRO 4000 Blackwell") == 24_467 * 2**20 == gpu_total_bytes("RTX PRO 4000")
    assert compute_capability("NVIDIA RTX PRO 4000 Blackwell") == (12, 0)
    assert gpu_total_bytes("NVIDIA RTX PRO 4500 Blackwell") == 32_623 * 2**20


def test_the_gtx_1650_is_read_from_its_nvml_name() -> None:
    """'NVIDIA GeForce GTX 1650, 4096MiB' (torch's device line, search-index id 7073759465; 'GPU: NVIDIA GeForce GTX
    1650, 4096 MiB', 63085462638) and 'TU117, compute capability 7.5' (66719803893): a 4 GB Turing card, not the 6 GB
    GTX 1660 SUPER the 'GTX16' prefix also begins."""
    assert gpu_total_bytes("NVIDIA GeForce GTX 1650") == 4_096 * 2**20 == gpu_total_bytes("GTX 1650")
    assert compute_capability("NVIDIA GeForce GTX 1650") == (7, 5)
    assert gpu_total_bytes("NVIDIA GeForce GTX 1660 SUPER") == 6_144 * 2**20
