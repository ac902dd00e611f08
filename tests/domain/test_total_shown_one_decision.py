"""What a GPU total is, said once for every view: the budget's first line (`EngineInputs.gpu_total_label`), the
text header (`render_ledger.gpu_shown`) and the JSON's `gpu.total_is` read `Ledger.shown_total_origin`. Before, a
ledger whose total came without its origin (a snapshot's, the TUI planner's) had its budget label inferred
('nvidia-smi's total') while the header and `total_is` said nothing. The H100's table figure is 81,559 MiB,
nvidia-smi's (`GPU_TOTAL_MIB`; NVIDIA's H100 SXM5 80 GB)."""

from __future__ import annotations

from kvtop.commands.render_ledger import gpu_shown, ledger_json, ledger_text, total_is
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpu_total_origin import GpuTotalOrigin
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

MIB = 1 << 20
H100_TABLE = 81_559 * MIB


def _ledger(total: int, measured: MeasuredInputs = MeasuredInputs()):  # type: ignore[no-untyped-def]
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
    return predict(model, parse_flags("sglang", []), gpu_total_bytes=total, gpu_name="H100", measured=measured)


def test_a_table_total_without_its_origin_is_nvidia_smis_in_every_view() -> None:
    ledger = _ledger(H100_TABLE)
    assert ledger.gpu_total_origin is None  # nobody said it
    first = ledger.engine.steps[0]
    assert first.role == "gpu_total" and first.label == "GPU memory (nvidia-smi's total)"
    assert total_is(ledger) == "nvidia-smi's total" == ledger_json(ledger)["gpu"]["total_is"]
    header = gpu_shown(ledger.gpu_name, ledger.gpu_total_bytes, ledger.shown_total_origin)
    assert header == "H100 (79.65 GiB, nvidia-smi's total)" and header in ledger_text(ledger)


def test_another_total_without_its_origin_is_a_given_one_in_every_view() -> None:
    ledger = _ledger(80 * 1024 * MIB)  # not the table's figure: a total given for the card
    assert ledger.engine.steps[0].label == "GPU memory (--gpu-memory)"
    assert total_is(ledger) == "--gpu-memory"
    assert "H100 (80.00 GiB, --gpu-memory)" in ledger_text(ledger)


def test_a_measured_total_no_chooser_described_is_said_plainly_everywhere() -> None:
    ledger = _ledger(H100_TABLE, MeasuredInputs(gpu_total_bytes=H100_TABLE))
    assert ledger.shown_total_origin is None and total_is(ledger) is None
    assert ledger.engine.steps[0].label == "GPU memory"
    assert "H100 (79.65 GiB)" in ledger_text(ledger)
    said = _ledger(H100_TABLE, MeasuredInputs(gpu_total_bytes=H100_TABLE, gpu_total_origin=GpuTotalOrigin.NVML))
    assert total_is(said) == "NVML's total" and said.engine.steps[0].label == "GPU memory"
