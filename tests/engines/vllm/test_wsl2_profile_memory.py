"""vLLM under WSL2: CUDA's total is the whole card, and what the plan misses is memory beside weights and KV, not the
total (session 64, docs/calibration_history.md).

The RTX 4080 Laptop sweep (search-index 69415599131: vllm/vllm-openai:v0.23.0, Qwen2.5-1.5B-Instruct at 4096 tokens and
64 seqs, eight --gpu-memory-utilization values, each start's 'KV 예산 (토큰)' read from its log) grows by 44,912 tokens
per 0.1 of utilization: 0.1 × the card's 12,282 MiB ÷ 28,672 B a token (28 layers × 2 × 2 KV heads × 128 × 2 B) is
44,917.6, cut to blocks of 16. A plan with the whole card as CUDA's total grows the same; the start leaves one constant
more beside weights and KV at every utilization. What moves that memory under WSL2 is the desktop during vLLM's profile
(its budget reads the device's free memory: `host_memory.DESKTOP_DURING_PROFILE`), which a WSL2 plan names.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import Record, load
from kvtop.domain.calibration.estimate import CapacityPlan, planned_capacity
from kvtop.domain.calibration.host_memory import DESKTOP_DURING_PROFILE, DESKTOP_PROFILE_BYTES
from kvtop.domain.gpus import gpu_key

RECORDS = {record.id: record for record in load("vllm")}
SWEEP = "file69415599131-qwen2.5-1.5b-instruct-rtx4080laptop-wsl2-v0230-u0"
# the bf16 starts' logged capacities by utilization (the study's table §2; the fp8 start of §3 is another model size)
LOGGED = {0.33: 10_144, 0.36: 23_616, 0.40: 41_584, 0.45: 64_048, 0.55: 108_960, 0.65: 153_872, 0.75: 198_784,
          0.85: 243_696}  # fmt: skip
BLOCK = 16


def _plan(record: Record) -> CapacityPlan:
    assert record.model is not None and record.gpu_total_bytes is not None
    return planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes,
                            gpu_name=gpu_key(record.gpu), measured=record.host_measured())  # fmt: skip


def _sweep() -> dict[float, Record]:
    starts = {record.util: record for key, record in RECORDS.items() if key.startswith(SWEEP)}
    assert {util: record.tokens for util, record in starts.items()} == LOGGED
    return {util: record for util, record in starts.items() if util is not None}


def test_the_log_grows_by_the_whole_cards_share_per_utilization() -> None:
    """Independent of kvtop: the logged steps are the share of 12,282 MiB over 28,672 B a token, to a block."""
    utils = sorted(LOGGED)
    for low, high in zip(utils, utils[1:], strict=False):
        expected = (high - low) * 12_282 * 2**20 / 28_672
        assert abs(LOGGED[high] - LOGGED[low] - expected) <= BLOCK


def test_the_wsl2_plan_grows_as_the_log_does() -> None:
    """Planned with `--wsl2` (CUDA's total the whole card), the plan's excess over each start's log is one constant, to
    a block: the total is right and what is off is memory beside weights and KV, the same at every utilization."""
    excess = {util: _plan(record).ledger.token_capacity - LOGGED[util] for util, record in _sweep().items()}
    assert max(excess.values()) - min(excess.values()) <= BLOCK


def test_a_wsl2_plan_names_what_the_desktop_takes_during_the_profile() -> None:
    """vLLM sizes from the total, so a desktop's memory before the start is not in its budget, but what it takes while
    vLLM profiles is: the plan says so, and takes nothing for it before the load; its low end's runtime memory takes
    the measured span (`DESKTOP_PROFILE_BYTES`: tests/engines/vllm/test_desktop_profile_span.py)."""
    record = _sweep()[0.45]
    plan = _plan(record)
    desktop = plan.estimate.desktop
    assert desktop is not None and DESKTOP_DURING_PROFILE in desktop.note
    assert desktop.low_end_bytes == 0 and desktop.profile_bytes == DESKTOP_PROFILE_BYTES
