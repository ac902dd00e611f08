"""What one pid holds over every GPU NVML lists it on (`NodeObservation.held_by`, `held_total`): the engine tree and
the signal dialog read this one figure. LMDeploy's TurboMind drives all four GPUs of the TP 4 demo from pid 23000."""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource
from kvtop.domain.observe import held_total
from kvtop.sources.scenario import load_scenario

PER_GPU = 76_308_380_825  # NVML's figure for pid 23000 on each GPU of the demo (its process rows)


def test_one_pid_over_four_gpus_sums_nvml_figures() -> None:
    observation = DemoSource(load_scenario("llama70b-tp4-lmdeploy")).collect_at(0).observation
    held = observation.held_by(23000)
    assert held == tuple((gpu, PER_GPU) for gpu in range(4))
    assert held_total(held) == 305_233_523_300  # 4 × 76,308,380,825 B


def test_a_gpu_without_a_figure_leaves_the_total_unknown() -> None:
    assert held_total(((0, PER_GPU), (1, None))) is None  # never the partial 76 GB read as the whole
    assert held_total(((3, 6 << 30),)) == 6_442_450_944
