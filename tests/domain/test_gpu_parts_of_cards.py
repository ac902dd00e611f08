"""Names the variant check let through (#27, session 63): the H20-3e read as the 96 GB H20, and NVML's MIG device names
('NVIDIA A100-SXM4-40GB MIG 3g.20gb') read as the whole card.

Expected values from the hosts' printouts, not from the table: nvidia-smi's 'NVIDIA H20-3e, 143771 MiB, 590.48.01'
(search-index id 56324297938) and 'NVIDIA H20-3e, 143771 MiB, driver 570.133.20' (61437380984), 'SM90a, 78 SM per GPU'
(60976242793); the H20's own 'NVIDIA H20, 97871 MiB' (tests/data/samples/nvidia_smi); NVML's MIG device names as
NVIDIA's tools print them ('NVIDIA A100-SXM4-40GB MIG 3g.20gb': search-index ids 7892059270, 61752392095) and
`nvidia-smi mig -lgip`'s 19.62 GiB of the A100 40 GB's 3g.20gb profile (41324772008); the A30 1g.6gb slice of
tests/data/samples/dcgm_metrics/mixed-rtx2000ada-a30mig-lowercase-hostname-fragment.txt (2,207 MiB free, 6 GiB).
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS, cuda_total_estimate
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import compute_capability, gpu_total_bytes, is_listed_card, sm_count, unlisted_board
from kvtop.domain.observe import GpuObservation
from kvtop.domain.predictor import mig_slice
from kvtop.sources.nvml import NvmlSource
from tests.conftest import CONFIGS
from tests.fakes.fake_pynvml import MIB, FakePynvml, gpu_from_mib

QWEN3_8B = str(CONFIGS / "Qwen--Qwen3-8B.json")


@pytest.mark.parametrize("name", ["NVIDIA H20-3e", "H20-3e", "H20-3E"])
def test_the_h20_3e_is_its_141_gb_board_not_the_96_gb_h20(name: str) -> None:
    assert gpu_total_bytes(name) == 143771 * MIB
    assert sm_count(name) == 78
    assert compute_capability(name) == (9, 0)
    assert gpu_total_bytes("NVIDIA H20") == 97871 * MIB  # the 96 GB board keeps its row


@pytest.mark.parametrize(
    ("name", "said", "capability"),
    [
        (
            "NVIDIA A100-SXM4-40GB MIG 3g.20gb",
            "a MIG 3g.20gb slice of the A100-40GB, not its row's 40,960 MiB card",
            (8, 0),
        ),
        (
            "NVIDIA H100 80GB HBM3 MIG 1g.10gb",
            "a MIG 1g.10gb slice of the H100, not its row's 81,559 MiB card",
            (9, 0),
        ),
        ("NVIDIA A30 MIG 1g.6gb", "a MIG 1g.6gb slice of the A30", (8, 0)),
        ("NVIDIA A100-SXM4-80GB MIG 1g.10gb+me", "a MIG 1g.10gb+me slice of the A100-80GB", (8, 0)),
    ],
)
def test_a_mig_slice_is_refused_by_name_not_read_as_its_card(
    name: str, said: str, capability: tuple[int, int]
) -> None:
    board = unlisted_board(name)
    assert board is not None and board.startswith(said)
    with pytest.raises(InputError, match=r"give --gpu-memory SIZE \(CUDA's total of this slice"):
        gpu_total_bytes(name)
    assert not is_listed_card(name)  # its total is the slice's, not a whole card's
    assert sm_count(name) is None  # a slice holds a part of the card's SMs
    assert compute_capability(name) == capability  # the card's architecture


def test_the_cli_refuses_a_mig_name_in_one_line_and_plans_it_with_the_slices_total(
    capsys: pytest.CaptureFixture[str],
) -> None:
    name = "NVIDIA A100-SXM4-40GB MIG 3g.20gb"
    assert main(["plan", "--model", QWEN3_8B, "--gpu", name, "--no-calibration-store"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"kvtop: error: --gpu: no row for '{name}': a MIG 3g.20gb slice of the A100-40GB")
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    argv = ["plan", "--model", QWEN3_8B, "--gpu", name, "--gpu-memory", "19.62GiB", "--no-calibration-store"]
    assert main(argv) == 0


def test_cudas_total_of_a_mig_slice_says_mig_slice() -> None:
    """A slice's total is CUDA's own, the one rule for a part of a card (HAMi's too: `gpus.SLICE_RESERVED_BYTES`):
    PyTorch's '39.25 GiB total capacity' on a MIG 3g.40gb slice nvidia-smi sized 40,192 MiB (search-index id
    67654601249, the corpus record file9907432117-mistral-7b-instruct-a100-mig-3g40gb-v033)."""
    term = cuda_total_estimate("NVIDIA A100 80GB PCIe MIG 3g.40gb", 40192 * MIB, CUDA_TOTAL_FITS)
    assert "MIG slice" in term.basis and "a MIG 3g.40gb slice of the A100-80GB" in term.basis
    assert term.bytes == round(39.25 * 2**30)


def test_cudas_total_of_a_slice_of_a_card_kvtop_lacks_names_the_slice_not_none() -> None:
    """A MIG slice of a card with no row keeps the one rule (NVML's total is CUDA's, as PyTorch's 39.25 GiB of 40,192
    MiB above) and its basis names the GPU as NVML does, never 'None'."""
    name = "NVIDIA A16 MIG 1g.4gb"  # a name of no row: the A16 is not in kvtop's table
    term = cuda_total_estimate(name, 4096 * MIB, CUDA_TOTAL_FITS)
    assert term.bytes == 4096 * MIB
    assert "None" not in term.basis and name in term.basis


def _a30(*free_mib: int) -> GpuObservation:
    """The A30 as NVML reads it through kvtop's source, its 1g.6gb slices with `free_mib` free each."""
    instances = [gpu_from_mib("NVIDIA A30 MIG 1g.6gb", 3 + i, total_mib=6144, reserved_mib=0, used_mib=6144 - free,
                              bus_id="00000000:CA:00.0") for i, free in enumerate(free_mib)]  # fmt: skip
    a30 = gpu_from_mib("NVIDIA A30", 2, total_mib=24576, reserved_mib=0, used_mib=sum(6144 - f for f in free_mib),
                       bus_id="00000000:CA:00.0", mig_instances=instances)  # fmt: skip
    return NvmlSource(nvml_module=FakePynvml([a30])).read().gpus[0]  # type: ignore[arg-type]


def test_a_live_mig_gpu_is_planned_from_its_slices_own_nvml_total() -> None:
    """The recorded A30 slice (2,207 MiB free of 6 GiB): the engine's GPU is the slice, its NVML name and total."""
    gpu = mig_slice(_a30(2207))
    assert not isinstance(gpu, str)
    assert gpu.total_bytes == 6144 * MIB and gpu.free_bytes == 2207 * MIB
    assert gpu.name == "NVIDIA A30 MIG 1g.6gb"


def test_a_card_split_into_several_slices_is_a_named_state_not_the_cards_total() -> None:
    said = mig_slice(_a30(2207, 4000))
    assert isinstance(said, str) and "split into 2 MIG slices" in said and "--gpu-memory" in said


def test_the_live_assembler_plans_a_mig_gpu_as_its_slice() -> None:
    """A node whose GPUs each hold one MIG slice: every ledger is of the slice (its NVML name), no crash."""
    from kvtop.commands.node_source import NodeSource
    from kvtop.domain.observe import MigInstance, NvmlState
    from kvtop.sources.demo import DemoObservations
    from kvtop.sources.scenario import load_scenario
    from tests.test_node_source import Replayed

    demo = DemoObservations(load_scenario("default"))
    observed = demo.observe_at(3)
    name = "NVIDIA H100 80GB HBM3 MIG 7g.80gb"

    def sliced(gpu: GpuObservation) -> GpuObservation:
        one = MigInstance(index=0, uuid=None, name=name, total_bytes=gpu.total_bytes, used_bytes=gpu.used_bytes,
                          free_bytes=gpu.free_bytes, reserved_bytes=gpu.reserved_bytes, memory_api=gpu.memory_api)  # fmt: skip
        return gpu.model_copy(update={"mig_instances": (one,)})

    node = observed.model_copy(
        update={"gpus": tuple(sliced(gpu) for gpu in observed.gpus), "nvml_state": NvmlState.OK}
    )
    snapshot = NodeSource(Replayed(node, demo)).collect()
    ledgers = [view.ledger for view in snapshot.engines if view.ledger is not None]
    assert ledgers and all(ledger.gpu_name == name for ledger in ledgers)
