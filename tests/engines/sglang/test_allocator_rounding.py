"""SGLang's weights as it measures them: the caching allocator's segments, not the tensors' bytes
(kvtop/domain/torch_segments.py, engines/sglang/weights_held.py `allocator_rounding`; docs/engines/sglang.md §20.2).

Expected figures: PyTorch's allocator rules worked by hand (c10/cuda/CUDACachingAllocator.cpp: requests rounded to
512 B; at most 1 MiB from 2 MiB small segments; under 10 MiB from shared 20 MiB segments; else a segment of the
request rounded up to 2 MiB; a free block's rest kept above 1 MiB), and the `mem usage` SGLang printed
(tests/data/calibration/sglang.jsonl). Never kvtop's own figures.
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import load
from benchmarks.calibration.evaluate import weights_term
from kvtop.domain.engines.sglang.weights_held import allocator_rounding, rope_cache
from kvtop.domain.torch_segments import reserved_bytes
from kvtop.domain.wording import GIB, MIB

RECORDS = {record.id: record for record in load("sglang")}
QWQ_TP4 = "file47376055009-qwq-32b-4xl4-tp4"


def test_a_large_tensor_gets_its_size_rounded_up_to_2_mib() -> None:
    """Qwen2.5-32B's layer at TP 4 in bf16: qkv_proj (40 + 8 + 8) ÷ 4 heads × 128 × 5,120 × 2 B = 18,350,080 B
    (17.5 MiB → an 18 MiB segment), o_proj 1,280 × 5,120 × 2 B = 13,107,200 (12.5 → 14; its 1.5 MiB rest stays
    free, and nothing of 1–1.5 MiB comes to take it), gate_up 2 × 6,912 × 5,120 × 2 B = 141,557,760 (135 → 136),
    down 70,778,880 (67.5 → 68): 236 MiB reserved for 232.5 MiB."""
    assert reserved_bytes([18_350_080, 13_107_200, 141_557_760, 70_778_880]) == 236 * MIB


def test_tensors_under_10_mib_share_20_mib_segments_best_fit() -> None:
    """8 MiB opens a 20 MiB segment (12 free); 4 MiB takes the 12 (8 left); 12 MiB finds no free 12 and opens a
    12 MiB segment; 6 MiB takes the 8 (2 left, kept: above 1 MiB); the next 8 MiB opens another 20: 52 MiB."""
    assert reserved_bytes([8 * MIB, 4 * MIB, 12 * MIB, 6 * MIB, 8 * MIB]) == 52 * MIB


def test_small_tensors_share_2_mib_segments() -> None:
    """Three 100 KiB norms: one 2 MiB small-pool segment; 1,000 B is rounded to 1,024 B."""
    assert reserved_bytes([100 * 1024] * 3) == 2 * MIB
    assert reserved_bytes([1_000] * 2048) == 2 * MIB  # 2,048 × 1,024 B fill one segment exactly


def test_qwq_32b_at_tp4_rounding_by_hand() -> None:
    """QwQ-32B (Qwen2.5-32B's geometry) at TP 4: 64 layers × 3.5 MiB (the test above) = 234,881,024 B; the
    embedding and the untied LM head's shards, 152,064 ÷ 4 × 5,120 × 2 B = 389,283,840 B (371.25 MiB → 372) each:
    1,572,864 B; the small pool: per layer the q|k|v bias 1,792 × 2 B = 3,584 B and the two norms 2 × 5,120 × 2 B =
    20,480 B, × 64, and the final norm 10,240 B: 1,550,336 B in one 2 MiB segment, 546,816 B unused; the rope cache
    (32,768 × 128 × 4 B = 16 MiB) is a whole number of 2 MiB. In all 237,000,704 B."""
    inputs = RECORDS[QWQ_TP4].inputs()
    rope = rope_cache(inputs)
    assert rope is not None and rope[0] == 16 * MIB
    found = allocator_rounding(inputs, [rope[0]])
    assert found is not None and found[0] == 234_881_024 + 1_572_864 + 546_816 == 237_000_704


@pytest.mark.parametrize(
    ("record", "logged_gib", "short_before_gib"),
    [
        (QWQ_TP4, 15.54, 0.26),  # 'Load weight end … mem usage=15.54 GB' (GiB), 0.4.3.post4 on 4 × L4
        ("file55390610462-qwen3-32b-4x5090-tp4", 15.50, 0.22),  # 0.5.13.post1 on 4 × RTX 5090
        ("file55529353766-qwen3-14b-4x4090-tp4", 7.08, 0.18),  # 0.5.13 on 4 × RTX 4090
    ],
)
def test_tp4_weights_meet_the_logged_mem_usage(record: str, logged_gib: float, short_before_gib: float) -> None:
    """At TP 4 on PCIe cards the three starts printed 0.18–0.27 GiB more than the book and the rope cache: each
    rank's matrices are no longer whole numbers of 2 MiB. With the allocator's segments the weights term lands
    within 0.05 GiB of what SGLang printed (the printed figure stands for ± 0.005 GiB)."""
    estimate = weights_term(RECORDS[record])
    assert estimate is not None
    inputs = RECORDS[record].inputs()
    rope = rope_cache(inputs)
    rounding = allocator_rounding(inputs, [rope[0]] if rope else [])
    assert rounding is not None
    assert logged_gib - (estimate.bytes - rounding[0]) / GIB > short_before_gib
    assert abs(logged_gib - estimate.bytes / GIB) < 0.05


def test_whole_2_mib_matrices_add_only_the_small_pool() -> None:
    """Qwen3-32B at TP 1 (0.5.19 on an H100, `mem usage` 61.07 GiB): every matrix is a whole number of 2 MiB (qkv
    (64 + 8 + 8) × 128 × 5,120 × 2 B = 100 MiB, o 80, gate_up 500, down 250, embedding and head 151,936 × 5,120 × 2 B
    = 1,483.75 MiB → 1,484 each), so the rounding is the two embedding shards' 0.25 MiB and the small pool's tail:
    under 2 MiB; the term stays within 0.03 GiB of the log."""
    record = RECORDS["file70687021461-qwen3-32b-h100"]
    inputs = record.inputs()
    rope = rope_cache(inputs)
    rounding = allocator_rounding(inputs, [rope[0]] if rope else [])
    assert rounding is not None and rounding[0] < 2 * MIB
    estimate = weights_term(record)
    assert estimate is not None and abs(61.07 - estimate.bytes / GIB) < 0.03
