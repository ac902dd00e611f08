"""The cards kvtop's GPU table gained in session 49 read from the names NVML prints to the totals nvidia-smi printed.

Expected values are the public nvidia-smi / torch printouts compiled in
tests/data/samples/nvidia_smi/nvml-names-totals-session49.csv (one row per card, its sources' search-index ids),
not the table itself: a GB300 start was unjudgeable (#27, session 49 hunt) only because the table lacked the card.
"""

from __future__ import annotations

import csv

import pytest

from kvtop.domain.gpus import compute_capability, gpu_model_key, gpu_total_bytes, sm_count
from tests.data_paths import SAMPLES

MIB = 2**20
#: The compiled printouts, one row per card with its sources' search-index ids: session 49's (this file's cards) and
#: session 52's consumer and workstation cards (tests/domain/test_gpu_table_consumer_cards.py reads their names).
PRINTOUTS = ("nvml-names-totals-session49.csv", "nvml-names-totals-session52.csv")


def _rows(printout: str) -> list[dict[str, str]]:
    return list(csv.DictReader((SAMPLES / "nvidia_smi" / printout).open(encoding="utf-8")))


ROWS = _rows(PRINTOUTS[0])
# the DGX Station's GB300 is named 'NVIDIA GB300' as the rack's is: its total is reached by its own key only
BY_NAME = [row for row in ROWS if row["kvtop_key"] != "GB300-DGX-STATION"]


@pytest.mark.parametrize("row", BY_NAME, ids=lambda row: row["name_as_nvml_prints"])
def test_an_nvml_name_reads_to_its_key_and_the_total_nvidia_smi_printed(row: dict[str, str]) -> None:
    name = row["name_as_nvml_prints"]
    assert gpu_model_key(name) == row["kvtop_key"]
    assert gpu_total_bytes(name) == gpu_total_bytes(row["kvtop_key"]) == int(row["total_mib"]) * MIB


@pytest.mark.parametrize("row", [
    pytest.param(row, id=f"{printout.removeprefix('nvml-names-totals-').removesuffix('.csv')}:{row['kvtop_key']}")
    for printout in PRINTOUTS for row in _rows(printout) if row["compute_cap"]
])  # fmt: skip
def test_the_capability_and_sms_are_the_printed_ones(row: dict[str, str]) -> None:
    """The compute capability (and SM count, where one was printed) of every card of both printouts."""
    major, minor = (int(part) for part in row["compute_cap"].split("."))
    assert compute_capability(row["name_as_nvml_prints"]) == (major, minor)
    if row["sms"]:
        assert sm_count(row["name_as_nvml_prints"]) == int(row["sms"])


def test_the_dgx_stations_gb300_is_its_own_key_and_the_rack_keeps_the_name() -> None:
    """NVML names both 'NVIDIA GB300': the name reads to the NVL72 tray's 284,208 MiB (the 4-GPU nodes operators
    serve from); the station's 256,703 MiB is `--gpu GB300-DGX-STATION`, still a GB300 for capability."""
    station = next(row for row in ROWS if row["kvtop_key"] == "GB300-DGX-STATION")
    assert gpu_model_key(station["name_as_nvml_prints"]) == "GB300"
    assert gpu_total_bytes("GB300-DGX-STATION") == int(station["total_mib"]) * MIB == 256_703 * MIB
    assert compute_capability("GB300-DGX-STATION") == (10, 3)


def test_the_names_operators_type_read_too() -> None:
    """`--gpu` as an operator writes it: 'RTX PRO 6000', 'rtx 6000 ada', 'gb300'."""
    assert gpu_total_bytes("RTX PRO 6000") == gpu_total_bytes("rtxpro6000") == 97_887 * MIB
    assert gpu_model_key("RTX 6000 Ada") == "RTX6000-ADA"
    assert gpu_total_bytes("gb300") == 284_208 * MIB
