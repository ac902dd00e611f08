"""A cpu probe larger than the host can spare is refused in GiB, naming the part kept free (no torch imported).

The sizes are chosen by hand: a 64 GiB --memory-limit on a host with 8 GiB available, and one with 64 GiB and
256 MiB available, which fits the probe but not the 512 MiB the worker keeps free (HOST_KEEP_FREE_BYTES).
"""

from __future__ import annotations

import pytest

from kvtop.domain.probe import ProbeOutcome, ProbeRequest, mha_buffers
from kvtop.sources import probe_worker

GIB, MIB = 2**30, 2**20
BUFFERS = mha_buffers(28, 4, 128, "bfloat16")  # Qwen2.5-7B at TP1: 28 layers, 4 KV heads of 128


def _fill_64_gib() -> ProbeRequest:
    """A cpu fill probe with a 64 GiB --memory-limit and no reserve."""
    fields = {"device": "cpu", "buffers": BUFFERS, "memory_limit_bytes": 64 * GIB, "fill": True}
    return ProbeRequest.model_validate({**fields, "chunk_tokens": 4096, "timeout_s": 60.0})


@pytest.mark.parametrize(("available", "said"), [
    (8 * GIB, "this host has 8.00 GiB available"),
    (64 * GIB + 256 * MIB, "this host has 64.25 GiB available"),  # above the probe, not above it and the margin
])  # fmt: skip
def test_a_cpu_probe_the_host_cannot_spare_is_refused_in_gib(
    monkeypatch: pytest.MonkeyPatch, available: int, said: str
) -> None:
    monkeypatch.setattr(probe_worker, "_host_available_bytes", lambda: available)
    result = probe_worker._host_refusal(_fill_64_gib())
    assert result is not None and result.outcome is ProbeOutcome.REFUSED
    assert result.message == (
        f"the cpu probe would take 64.00 GiB but {said}, of which 512 MiB stays free; lower --memory-limit or --tokens"
    )


def test_a_cpu_probe_inside_what_the_host_spares_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe_worker, "_host_available_bytes", lambda: 64 * GIB + 512 * MIB)
    assert probe_worker._host_refusal(_fill_64_gib()) is None
