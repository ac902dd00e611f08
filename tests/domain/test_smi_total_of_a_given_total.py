"""nvidia-smi's total of a card planned from a --gpu-memory (CUDA's total): the named card's table figure where the
total is a whole card's, else the total given, assumed (`gpu_total_origin.smi_total`). Whole cards' CUDA totals from
the corpus's logs (tests/data/calibration/*.jsonl `logged.cuda_total`): an H100's 79.19 GiB (85,029,615,043 B), the
least an A100 80GB printed, 79.14 GiB, the least an H200 printed, 139.72 GiB; nvidia-smi's tables
(kvtop/domain/gpus.py, nvidia-smi samples): H100 81,559 MiB, A100 80GB 81,920, H200 143,771. A part of a card: the
corpus's HAMi slices of 38,000 MiB of an H100 SXM (markat1-course-assistant-*-hami38000), and a 40 GiB H100."""

from __future__ import annotations

import pytest

from kvtop.domain.gpu_total_origin import GpuTotalOrigin, SmiTotal, smi_total, smi_total_note

MIB = 1 << 20
GIVEN = GpuTotalOrigin.GIVEN


@pytest.mark.parametrize(("name", "total", "smi_mib"), [
    ("H100", 85_029_615_043, 81_559),
    ("A100-80GB", round(79.14 * 2**30), 81_920),
    ("H200", round(139.72 * 2**30), 143_771),
])  # fmt: skip
def test_a_whole_cards_cuda_total_reads_as_the_tables_nvidia_smi_total(name: str, total: int, smi_mib: int) -> None:
    found = smi_total(name, total, GIVEN)
    assert found.bytes == smi_mib * MIB and found.assumed_why is None


@pytest.mark.parametrize(("name", "total"), [("H100-SXM", 38_000 * MIB), ("H100", 40 << 30)])
def test_a_part_of_a_card_keeps_the_total_given_and_says_it_is_assumed(name: str, total: int) -> None:
    found = smi_total(name, total, GIVEN)
    assert found.bytes == total
    assert found.assumed_why is not None and "a part of the card" in found.assumed_why
    assert smi_total_note(name, total, GIVEN) == found.assumed_why


def test_totals_that_are_nvidia_smis_already_are_kept() -> None:
    # the table's own figure, NVML's (nvidia-smi's own reading), and a given total above the card's table figure (a
    # larger memory variant's: the H100 NVL's 95,830 MiB, kvtop/domain/gpus.py)
    assert smi_total("H100", 81_559 * MIB, GpuTotalOrigin.TABLE).bytes == 81_559 * MIB
    assert smi_total("H100", 40 << 30, GpuTotalOrigin.NVML) == SmiTotal(40 << 30)
    assert smi_total("H100", 95_830 * MIB, GIVEN) == SmiTotal(95_830 * MIB)
    assert smi_total(None, 40 << 30, GIVEN).bytes == 40 << 30
