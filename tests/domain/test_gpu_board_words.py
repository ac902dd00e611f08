"""A word after a GPU's model number that kvtop does not know is refused by name, never read as a board of the row's
card; the China-market D cards have rows of their own.

Why: any trailing word passed as a board suffix, so 'RTX 4090 Laptp' planned as the desktop RTX 4090, 'RTX 4090 D' (114
SMs) as the RTX 4090 (128) and 'RTX 5090 D v2' (24 GB) as the 32 GB RTX 5090 (#27, session 63).

Expected values from the hosts' printouts, not from the table: nvidia-smi's 'NVIDIA GeForce RTX 4090 D, 24564 MiB'
(search-index ids 58195549105, 62204639427) and '4090D (114 SM)' (69448674091); 'NVIDIA GeForce RTX 5090 D, 32607 MiB'
(55792546225, 66628847283); 'RTX 5090 D v2, 24455 MiB' (54662711865, 70525343611) and its device query 'NVIDIA GeForce
RTX 5090 D v2 ... Compute Capability: 12.0 ... SM数量: 170' (68901312139). The NVML names are as nvidia-smi prints them
(tests/data/samples/nvidia_smi/, the cited printouts in kvtop/domain/gpus.py).
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import compute_capability, gpu_model_key, gpu_total_bytes, is_listed_card, sm_count
from tests.conftest import CONFIGS

MIB = 2**20
QWEN3_8B = str(CONFIGS / "Qwen--Qwen3-8B.json")


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("RTX 4090 Laptp", "the RTX4090 and 'Laptp', not a board word kvtop knows (did you mean 'LAPTOP'?)"),
        ("NVIDIA GeForce RTX 4090 OC", "the RTX4090 and 'OC', not a board word kvtop knows"),
        ("NVIDIA H100 PCle", "the H100 and 'PCle', not a board word kvtop knows (did you mean 'PCIE'?)"),
        ("NVIDIA A100-SXM4-XYZ-80GB", "the A100 and 'XYZ', not a board word kvtop knows"),  # between model and size
    ],
)
def test_an_unknown_word_is_refused_by_name(name: str, said: str) -> None:
    assert gpu_model_key(name) not in {"RTX4090", "H100", "A100", "A100-80GB"}
    assert not is_listed_card(name)
    assert sm_count(name) is None and compute_capability(name) is None
    with pytest.raises(InputError) as refused:
        gpu_total_bytes(name)
    assert f"no row for {name!r}: {said}" in str(refused.value)
    assert "give --gpu-memory SIZE" in str(refused.value)


@pytest.mark.parametrize(
    ("name", "key", "mib", "capability", "sms"),
    [
        ("NVIDIA GeForce RTX 4090 D", "RTX4090-D", 24564, (8, 9), 114),
        ("RTX 4090D", "RTX4090-D", 24564, (8, 9), 114),
        ("NVIDIA GeForce RTX 5090 D", "RTX5090-D", 32607, (12, 0), None),  # its SMs printed nowhere read: unknown
        ("NVIDIA GeForce RTX 5090 D v2", "RTX5090-D-V2", 24455, (12, 0), 170),
        ("RTX 5090D V2", "RTX5090-D-V2", 24455, (12, 0), 170),
    ],
)
def test_the_d_cards_read_to_their_rows(
    name: str, key: str, mib: int, capability: tuple[int, int], sms: int | None
) -> None:
    assert gpu_model_key(name) == key
    assert gpu_total_bytes(name) == mib * MIB
    assert compute_capability(name) == capability
    assert sm_count(name) == sms


def test_a_d_card_kvtop_lacks_is_unknown_not_the_plain_number() -> None:
    assert not is_listed_card("RTX 4080 D")
    with pytest.raises(InputError, match="unknown GPU 'RTX 4080 D'"):
        gpu_total_bytes("RTX 4080 D")


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("NVIDIA H100 80GB HBM3", "H100"),
        ("NVIDIA H100 PCIe", "H100-PCIE"),
        ("NVIDIA A100-SXM4-80GB", "A100-80GB"),
        ("NVIDIA A100-PCIE-40GB", "A100-40GB"),
        ("Tesla V100-SXM2-16GB", "V100"),
        ("NVIDIA B300 SXM6 AC", "B300"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTXPRO6000"),
        ("NVIDIA RTX 6000 Ada Generation", "RTX6000-ADA"),
        ("NVIDIA GeForce RTX 2080 with Max-Q Design", "RTX2080"),
        ("NVIDIA GeForce RTX 3050 Laptop GPU", "RTX3050-LAPTOP"),
        ("A10 (24 GB)", "A10"),  # an aside in brackets ends the name
        # a chip's revision: NVML's name of the TU102-300A RTX 2080 Ti (search-index id 37396047020; lspci's 'TU102
        # [GeForce RTX 2080 Ti Rev. A] [10de:1e07]', 3497140311), read as that card before the board words (a2ea36b6)
        ("NVIDIA GeForce RTX 2080 Ti Rev. A", "RTX2080-TI"),
    ],
)
def test_the_board_words_nvml_prints_keep_their_rows(name: str, key: str) -> None:
    assert gpu_model_key(name) == key


def test_the_cli_refuses_an_unknown_word_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", QWEN3_8B, "--gpu", "RTX 4090 Laptp", "--no-calibration-store"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kvtop: error: --gpu: no row for 'RTX 4090 Laptp': the RTX4090 and 'Laptp', not a board word")
    assert len(err.splitlines()) == 1 and "Traceback" not in err
