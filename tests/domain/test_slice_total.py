"""A slice whose limit CUDA reports as the card's total (a HAMi memory limit; a MIG instance) is planned from that
limit with no driver gap taken (`gpu_total_is_cuda` in the corpus, `plan --gpu-memory` in the CLI). The expected
figures are the sources': the slice sizes their manifests and nvidia-smi gave, the capacities their engines printed
(tests/data/calibration/SOURCES.md, session 60)."""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import by_id
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.wording import GIB, MIB

RECORDS = by_id()

# (record, the slice's MiB as its source gives it, the tokens its engine printed)
SLICES = [
    # `nvidia.com/gpumem: 38000` (cluster/workers/sglang.yaml); 'KV Cache is allocated. … #tokens: 115299'
    ("markat1-course-assistant-qwen3-8b-hami38000-h100sxm-v0520", 38_000, 115_299),
    # `nvidia.com/gpumem-percentage: "50"` of an A100-SXM4-40GB's 40,960 MiB; '4,546 blocks = 72,736 tokens'
    ("nakulmanchanda-ai-analytics-poc-qwen3-0.6b-hami50pct-a100-40gb-v0110", 20_480, 72_736),
    # nvidia-smi's MIG table '33134MiB / 40192MiB'; '# GPU blocks: 9010' of 16 tokens
    ("file9907432117-mistral-7b-instruct-a100-mig-3g40gb-v033", 40_192, 144_160),
]


@pytest.mark.parametrize(("record_id", "slice_mib", "logged_tokens"), SLICES)
def test_a_slice_is_planned_from_its_limit_as_cudas_total(record_id: str, slice_mib: int, logged_tokens: int) -> None:
    record = RECORDS[record_id]
    assert record.total_is_cudas and record.gpu is None and record.tokens == logged_tokens
    assert record.host_measured().engine_total_given() == (slice_mib * MIB, "--gpu-memory")
    assert record.model is not None and record.gpu_total_bytes == slice_mib * MIB
    plan = planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes, gpu_name=None,
                            measured=record.host_measured())  # fmt: skip
    total = next(estimate for estimate in plan.estimate.terms if estimate.term is Term.CUDA_TOTAL)
    assert (total.bytes, total.source) == (slice_mib * MIB, "measured")
    # the committed fits plan each within 5 % of what its engine printed
    assert abs(plan.ledger.token_capacity / logged_tokens - 1) < 0.05


def test_the_hami_slice_leaves_an_ordinary_cuda_context_before_the_load() -> None:
    """SGLang printed 'Load weight begin. avail mem=36.60 GB' (GiB) inside the 38,000 MiB slice: 0.51 GiB held before
    the load, one process's CUDA context and communicators; taken as the slice less a whole card's driver gap, the
    total would leave some 0.07 GiB, less than any CUDA context."""
    record = RECORDS["markat1-course-assistant-qwen3-8b-hami38000-h100sxm-v0520"]
    held = 38_000 * MIB - record.figures["free_before_load"]
    assert round(held / GIB, 2) == 0.51
