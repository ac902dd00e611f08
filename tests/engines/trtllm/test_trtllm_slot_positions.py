"""The buffers a TensorRT engine's C++ runtime sizes by slot × sequence position (docs/engines/trtllm.md §29).

Expected values: the shapes read in the C++ runtime (decoderBuffers.cpp's cache indirection in and out, [slots, beam,
max_attention_window] int32; createBuffers' per-slot output ids and GptDecoderBatched's joint output ids, [slots,
beam, max_seq_len] int32) hand-multiplied, and shaamil-etched's 0.16.0 start's own lines (`Allocated 1013.01 MiB for
execution context memory`, `1.63 GB GPU memory for runtime buffers`, `3.30 GB GPU memory for decoder`; GB there are
GiB: MemoryCounters divides by 1024), tests/data/calibration/trtllm.jsonl.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load_all
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.trtllm.calibration import terms
from kvtop.domain.engines.trtllm.slot_positions import slot_position_bytes
from kvtop.domain.wording import GIB

CORPUS = load_all()
TRTLLM = {record.id: record for record in CORPUS["trtllm"]}
SHAAMIL = "shaamil-etched-llama-3.1-70b-fp8-8xh100-tp8-trtllm-0160-bench"  # 0.16.0, 2048 slots, max_seq_len 25,000
GPT_J_2024 = "file6161481015-trtllm-bench-gpt-j-6b-fp8-h100"  # 0.12.0.dev2024073000: the 2024 form


def _runtime(record_id: str):  # type: ignore[no-untyped-def]
    return next(t for t in terms(TRTLLM[record_id].inputs()) if t.term is Term.ACTIVATION)


def test_shaamil_etched_slots_hold_16_bytes_a_position() -> None:
    """2,048 slots × beam 1 × 25,000 positions × (2 cache-indirection + 2 output-id int32) × 4 B = 819,200,000 B."""
    inputs = TRTLLM[SHAAMIL].inputs()
    assert inputs.context_length == 25_000
    assert slot_position_bytes(inputs, 2048) == 2048 * 25_000 * 4 * 4 == 819_200_000


def test_the_0_16_runtime_lands_under_its_three_logged_lines() -> None:
    """The log's three lines: 1013.01 MiB + 1.63 GiB + 3.30 GiB = 5.92 GiB. The 0.15+ form charged 1 GiB of execution
    context (8,192 tokens) + 4 × 2,048 × 128,256 × 4 B = 4.91 GiB (1.01 under); with the positions 5.68 GiB, under the
    log by what the code read leaves out (log-probs, the sampling layers' scratch), and the error holds the log."""
    runtime = _runtime(SHAAMIL)
    logits = 2048 * 128_256 * 4
    assert runtime.bytes == GIB + 4 * logits + 819_200_000
    logged = 1013.01 / 1024 + 1.63 + 3.30
    assert 0 < logged - runtime.bytes / GIB < 0.3
    assert abs(logged - runtime.bytes / GIB) < runtime.error_bytes / GIB
    assert "max_seq_len 25,000" in runtime.basis and "§29" in runtime.basis


def test_the_2024_form_is_left_as_its_logs_read_it() -> None:
    """GPT-J-6B's 2024 engine (4,096 slots, max_seq_len 4,098): the seven logits buffers were read off logs that
    hold the per-position buffers already, so nothing is added: 1 GiB + 7 × 4,096 × 50,400 × 4 B."""
    runtime = _runtime(GPT_J_2024)
    assert runtime.bytes == GIB + 7 * 4096 * 50_400 * 4
    assert "§29" not in runtime.basis
