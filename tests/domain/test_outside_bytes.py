"""node.OutsideBytes: the one split of a GPU's other processes every view reads (the rank ledger's rows, the
memory bar's driver segment, the no-findings note)."""

from __future__ import annotations

from kvtop.domain.node import OutsideBytes, RankObserved
from kvtop.domain.wording import GIB


def test_used_by_no_process() -> None:
    """NVML used 80 GiB; the worker 70, a co-tenant 4, an orphan worker 2, a hidden pid 1, the engine's server
    0.5: 2.5 GiB is held by no process it lists."""
    outside = OutsideBytes(foreign=4 * GIB, orphan=2 * GIB, unattributed=GIB, server=GIB // 2)
    assert outside.others_bytes == 7 * GIB
    assert outside.used_by_no_process(80 * GIB, 70 * GIB) == 5 * GIB // 2


def test_a_rank_reads_back_the_split_it_was_given() -> None:
    """RankObserved keeps the split field by field; `outside` gives it back whole."""
    seen = RankObserved(process_bytes=70 * GIB, gpu_total_bytes=80 * GIB, gpu_used_bytes=80 * GIB,
                        gpu_reserved_bytes=None, gpu_free_bytes=0, foreign_bytes=4 * GIB, orphan_bytes=2 * GIB,
                        unattributed_bytes=GIB, server_bytes=GIB // 2)  # fmt: skip
    assert seen.outside == OutsideBytes(4 * GIB, 2 * GIB, GIB, GIB // 2)
