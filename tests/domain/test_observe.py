"""Observed values: redaction at construction and the derived per-GPU sums."""

from __future__ import annotations

import pytest

from kvtop.commands.node_source import DemoSource
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.node import outside_bytes
from kvtop.domain.observe import (
    EngineInstance,
    GpuObservation,
    GpuProcess,
    NodeObservation,
    ProcessRole,
)
from kvtop.sources.scenario import load_scenario

MIB = 1 << 20


def test_a_process_command_line_is_redacted_when_built() -> None:
    process = GpuProcess(pid=7, used_bytes=None, cmdline=("vllm", "serve", "m", "--api-key", "sk-1"))
    assert process.cmdline == ("vllm", "serve", "m", "--api-key", "***")


def test_engine_settings_flags_are_redacted_when_built() -> None:
    settings = parse_launch_command(["vllm", "serve", "m", "--api-key", "sk-1"])
    assert settings is not None and settings.flags["api-key"] == "sk-1"  # the parser keeps what it saw
    engine = EngineInstance(
        engine_id="vllm:1", kind="vllm", server_pid=1, settings=settings, host="127.0.0.1", port=8000
    )
    assert engine.settings is not None and engine.settings.flags["api-key"] == "***"


def test_unattributed_bytes_are_summed_per_gpu() -> None:
    """Bytes of samples/process_tables/mixed-enginecore-worker-python-processes-fragment.txt."""
    hidden = GpuProcess(pid=1328209, used_bytes=1706 * MIB, role=ProcessRole.UNATTRIBUTED)
    hidden_too = GpuProcess(pid=3632600, used_bytes=1706 * MIB, role=ProcessRole.UNATTRIBUTED)
    worker = GpuProcess(
        pid=1217466, used_bytes=23694 * MIB, role=ProcessRole.ENGINE_WORKER, engine_id="vllm:1"
    )
    node = NodeObservation(
        taken_at=0.0,
        gpus=(
            GpuObservation(index=1, processes=(hidden, hidden_too)),
            GpuObservation(index=2, processes=(worker,)),
        ),
    )
    assert node.unattributed_bytes_by_gpu() == {1: 3412 * MIB}
    assert [(gpu.index, p.pid) for gpu, p in node.engine_processes("vllm:1")] == [(2, 1217466)]
    assert node.gpus[0].process_bytes == 3412 * MIB


def test_outside_bytes_one_split_by_engine() -> None:
    """Another engine's worker and server are foreign to this engine; an orphan and a hidden pid keep
    their kinds; an engine's own server is its `server` bytes; with no engine asked about, an
    engine's own worker is nobody's co-tenant and any engine's server is its server's."""
    gib = 1 << 30
    gpu = GpuObservation(index=0, total_bytes=80 * gib, used_bytes=41 * gib, processes=(
        GpuProcess(pid=1, used_bytes=20 * gib, role=ProcessRole.ENGINE_WORKER, engine_id="sglang:10"),
        GpuProcess(pid=2, used_bytes=8 * gib, role=ProcessRole.ENGINE_WORKER, engine_id="vllm:20"),
        GpuProcess(pid=3, used_bytes=6 * gib, role=ProcessRole.CO_TENANT),
        GpuProcess(pid=4, used_bytes=4 * gib, role=ProcessRole.ORPHAN),
        GpuProcess(pid=5, used_bytes=2 * gib, role=ProcessRole.UNATTRIBUTED),
        GpuProcess(pid=20, used_bytes=1 * gib, role=ProcessRole.ENGINE_SERVER, engine_id="vllm:20"),
    ))  # fmt: skip
    assert outside_bytes(gpu, "sglang:10") == (15 * gib, 4 * gib, 2 * gib, 0)  # vLLM's 8 + 1, the co-tenant's 6
    assert outside_bytes(gpu, "vllm:20") == (26 * gib, 4 * gib, 2 * gib, 1 * gib)  # SGLang's 20 + 6; its server
    assert outside_bytes(gpu, None) == (6 * gib, 4 * gib, 2 * gib, 1 * gib)


def test_not_free_and_free_remainder_close_nvml_v2_books() -> None:
    """The SGLang TP 8 demo's GPU 0 as NVML v2 reads it: used 85,010,932,333 + reserved 491,194,941 + free
    18,682,710 = total 85,520,809,984. The remainder kvtop falls back on where free is missing is NVML's free."""
    gpu = GpuObservation(index=0, total_bytes=85_520_809_984, used_bytes=85_010_932_333, reserved_bytes=491_194_941)
    assert gpu.not_free_bytes == 85_502_127_274
    assert gpu.free_or_remainder_bytes == 18_682_710
    assert gpu.not_free_fraction == pytest.approx(85_502_127_274 / 85_520_809_984)
    assert gpu.model_copy(update={"free_bytes": 5}).free_or_remainder_bytes == 5  # NVML's own free first
    assert GpuObservation(index=1, total_bytes=100, used_bytes=120).free_or_remainder_bytes == 0  # never below 0
    assert GpuObservation(index=2).not_free_fraction is None


def test_node_used_sums_the_gpus_that_report_it() -> None:
    """The gpu5-lost demo: GPU 5 reads nothing; NVML used over the other seven (hand sum of their figures)."""
    observation = DemoSource(load_scenario("gpu5-lost")).collect_at(0).observation
    assert observation.gpu(5) is not None and observation.gpu(5).used_bytes is None  # type: ignore[union-attr]
    assert observation.used_bytes == 496_347_173_324
    assert NodeObservation(taken_at=0.0).used_bytes is None
