"""A board of a listed model that kvtop has no row for (a laptop card, a Max-Q design, another memory size) is refused
by name, never planned as the desktop card its name starts with; the RTX 5090 and RTX 4080 laptop cards have rows.

Why: `--gpu RTX5090-LAPTOP` and NVML's 'NVIDIA GeForce RTX 5090 Laptop GPU' read by prefix as the 32 GB desktop RTX 5090
planned 221,440 KV tokens where the engine logged 161,280 (+37.3 %; search-index id 67306615881, #27, session 63).

Expected values from the hosts' printouts, not from the table: nvidia-smi's 'NVIDIA GeForce RTX 5090 ... 24463MiB' under
'GPU Info: Nvidia 5090 laptop' (search-index id 67306615881; GB203, 12.0 in NVIDIA's CUDA GPU list) and 'NVIDIA GeForce RTX
4080 Laptop, 12,282 MiB' with its sm89 FP8 kernels (search-index ids 69415599131 / 69701526975); the RTX 4090 laptop card is 16 GB (AD103), the desktop's row 24 GB
(AD102), the A800 40GB half the A800 row's 80 GB (NVML's 'NVIDIA A800-SXM4-40GB'); the RTX PRO 6000 Max-Q prints the
row's 97,887 MiB (search-index ids 56138566301, 65890345886).
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS, cuda_total_estimate
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import (
    compute_capability,
    gpu_model_key,
    gpu_total_bytes,
    is_listed_card,
    sm_count,
    unlisted_board,
)
from tests.conftest import CONFIGS

MIB = 2**20
QWEN3_8B = str(CONFIGS / "Qwen--Qwen3-8B.json")


@pytest.mark.parametrize(
    ("name", "key", "mib", "capability"),
    [
        ("NVIDIA GeForce RTX 5090 Laptop GPU", "RTX5090-LAPTOP", 24463, (12, 0)),
        ("RTX5090-LAPTOP", "RTX5090-LAPTOP", 24463, (12, 0)),
        ("RTX 5090 Mobile", "RTX5090-LAPTOP", 24463, (12, 0)),
        ("NVIDIA GeForce RTX 4080 Laptop GPU", "RTX4080-LAPTOP", 12282, (8, 9)),
        ("RTX4080-LAPTOP", "RTX4080-LAPTOP", 12282, (8, 9)),
    ],
)
def test_the_two_laptop_cards_read_to_their_rows(name: str, key: str, mib: int, capability: tuple[int, int]) -> None:
    assert gpu_model_key(name) == key
    assert is_listed_card(name)
    assert gpu_total_bytes(name) == mib * MIB
    assert compute_capability(name) == capability
    assert sm_count(name) is None  # no printout of their SMs read: unknown, not the desktop card's 170 / 76


def test_the_desktop_cards_keep_their_rows() -> None:
    assert gpu_total_bytes("NVIDIA GeForce RTX 5090") == 32607 * MIB
    assert gpu_total_bytes("NVIDIA GeForce RTX 4080") == 16376 * MIB
    assert sm_count("NVIDIA GeForce RTX 5090") == 170


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("NVIDIA GeForce RTX 4090 Laptop GPU", "a Laptop board of the RTX4090, not its row's 24,564 MiB card"),
        ("RTX4090-LAPTOP", "a Laptop board of the RTX4090"),
        ("RTX 5080 Mobile", "a Mobile board of the RTX5080"),
        ("NVIDIA GeForce RTX 3080 Laptop GPU", "a Laptop board of the RTX3080"),
        ("RTX 4060 Max-Q", "a Max-Q board of the RTX4060"),
        ("NVIDIA A800-SXM4-40GB", "a 40 GB board of the A800, not its row's 81,920 MiB card"),
        ("NVIDIA GH200 144G HBM3e", "a 144 GB board of the GH200"),
    ],
)
def test_an_unlisted_board_is_refused_by_name(name: str, said: str) -> None:
    assert (unlisted_board(name) or "").startswith(said)
    assert not is_listed_card(name)
    assert sm_count(name) is None  # not the desktop card's
    with pytest.raises(InputError, match=r"no row for .*give --gpu-memory SIZE \(CUDA's total of this card"):
        gpu_total_bytes(name)


@pytest.mark.parametrize(
    ("name", "said"),
    [
        # NVIDIA's GeForce RTX 20-series laptop specifications: the RTX 2080 SUPER Max-Q's 3,072 CUDA cores are 48
        # Turing SMs of 64, not the RTX 2080 Max-Q's 2,944 (46): a board of the SUPER, never of the plain RTX 2080
        ("RTX 2080 Super Max-Q", "a Max-Q board of the RTX2080-SUPER"),
        ("RTX 2080 Ti Max-Q", "a Max-Q board of the RTX2080-TI"),
    ],
)
def test_a_ti_or_super_board_is_never_the_plain_numbers_row(name: str, said: str) -> None:
    assert (unlisted_board(name) or "").startswith(said)
    assert sm_count(name) is None
    with pytest.raises(InputError, match="no row for"):
        gpu_total_bytes(name)


def test_a_ti_or_super_card_kvtop_lacks_is_unknown_not_the_plain_number() -> None:
    """No row holds an RTX 5080 SUPER: refused with the names kvtop knows, not read as the 16 GB RTX 5080."""
    assert not is_listed_card("RTX 5080 Super")
    with pytest.raises(InputError, match="unknown GPU 'RTX 5080 Super'"):
        gpu_total_bytes("RTX 5080 Super")


def test_an_unlisted_laptop_board_keeps_its_architecture() -> None:
    """A model number's boards share one architecture (the RTX 4090 laptop card's AD103 is Ada, 8.9, as the desktop's)."""
    assert compute_capability("NVIDIA GeForce RTX 4090 Laptop GPU") == (8, 9)


@pytest.mark.parametrize(
    ("name", "mib"),
    [
        ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", 97887),  # the row's, printed by the Max-Q
        ("NVIDIA GH200 480GB", 97871),  # 480 GB is the Grace CPU's memory
        ("NVIDIA A100-SXM4-40GB", 40960),  # its own row
        ("NVIDIA H100 80GB HBM3", 81559),
        ("NVIDIA GeForce RTX 3050 6GB Laptop GPU", 6144),
        ("GeForce RTX 2080 Max-Q", 8192),  # TU104 with the desktop's 46 SMs and 8 GB
        ("NVIDIA GeForce RTX 4060 Ti 16GB", 16380),
    ],
)
def test_boards_a_row_holds_are_not_refused(name: str, mib: int) -> None:
    assert unlisted_board(name) is None
    assert gpu_total_bytes(name) == mib * MIB


def test_the_cli_refuses_an_unlisted_board_in_one_line_and_plans_it_with_its_total(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["plan", "--model", QWEN3_8B, "--gpu", "RTX4090-LAPTOP", "--no-calibration-store"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kvtop: error: --gpu: no row for 'RTX4090-LAPTOP': a Laptop board of the RTX4090")
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    # the operator's fix, as the message says: nvidia-smi's total of the card (16,376 MiB on the 16 GB laptop card)
    argv = ["plan", "--model", QWEN3_8B, "--gpu", "RTX4090-LAPTOP", "--gpu-memory", "16376MiB", "--no-calibration-store"]
    assert main(argv) == 0


def test_the_live_path_names_the_board_in_cudas_total() -> None:
    """On a live node NVML's total stands; CUDA's total below it is the gap's, and says which card it is."""
    term = cuda_total_estimate("NVIDIA GeForce RTX 4090 Laptop GPU", 16376 * MIB, CUDA_TOTAL_FITS)
    assert "is a Laptop board of the RTX4090" in term.basis
    assert term.bytes < 16376 * MIB


def test_a_live_node_of_an_unlisted_laptop_board_is_planned_from_nvmls_total() -> None:
    """The live assembler on a node whose NVML names an unlisted laptop card: a ledger from NVML's total, no crash."""
    from kvtop.commands.node_source import NodeSource
    from kvtop.domain.observe import NvmlState
    from kvtop.sources.demo import DemoObservations
    from kvtop.sources.scenario import load_scenario
    from tests.test_node_source import Replayed

    demo = DemoObservations(load_scenario("default"))
    observed = demo.observe_at(3)
    gpus = tuple(gpu.model_copy(update={"name": "NVIDIA GeForce RTX 4090 Laptop GPU"}) for gpu in observed.gpus)
    node = observed.model_copy(update={"gpus": gpus, "nvml_state": NvmlState.OK})
    snapshot = NodeSource(Replayed(node, demo)).collect()
    ledgers = [view.ledger for view in snapshot.engines if view.ledger is not None]
    assert ledgers and all(ledger.gpu_name == "NVIDIA GeForce RTX 4090 Laptop GPU" for ledger in ledgers)
