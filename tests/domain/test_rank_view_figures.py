"""The figures the rank ledger, the dashboard row and the memory bar read from `RankView` (computed once): the demo's
Llama-3-70B TP 8 on SGLang, a co-tenant holding 6 GiB on GPU 3 (tests/ui/fakes.py's inputs)."""

from __future__ import annotations

from kvtop.domain.node import ObservedPool, RankView, WorkerSplit
from tests.ui.fakes import CO_TENANT_BYTES, DRIVER_RESERVED_BYTES, H100_TOTAL_BYTES, llama_snapshot

KV_BYTES_PER_TOKEN = 40_960  # 80 layers × 2 (K, V) × 1 KV head × 128 × 2 B on a TP 8 rank
LIVE_TOKENS = 1_127_125  # the fake engine's reported token capacity
WORKER_BYTES = 78_103_440_261  # NVML's figure for the rank's worker on GPU 3 (the fake's)
WEIGHTS_BYTES = 17_640_734_720  # the predicted weights (tests/ui/test_rendering.py)


def _rank() -> RankView:
    rank = llama_snapshot(co_tenant_gpu=3).rank_on_gpu(3)
    assert rank is not None and rank.worker_prediction is not None
    return rank


def test_predicted_used_is_the_predicted_worker_beside_what_others_hold() -> None:
    rank = _rank()
    worker = rank.worker_prediction.worker_bytes  # type: ignore[union-attr]
    assert rank.predicted_used_bytes == worker + CO_TENANT_BYTES
    # NVML's books: total = used + driver reserved + free, so the prediction leaves total − used − reserved free
    assert rank.predicted_free_bytes(H100_TOTAL_BYTES) == H100_TOTAL_BYTES - worker - CO_TENANT_BYTES - DRIVER_RESERVED_BYTES


def test_memory_no_process_holds_is_in_the_predicted_used_as_nvml_counts_it() -> None:
    """1 GiB NVML counts used that no listed process holds (the ledger's 'other used (no process)' row)."""
    rank = _rank()
    observed = rank.observed.model_copy(update={"gpu_used_bytes": rank.observed.gpu_used_bytes + (1 << 30)})
    more = rank.model_copy(update={"observed": observed})
    assert more.predicted_used_bytes == rank.predicted_used_bytes + (1 << 30)  # type: ignore[operator]


def test_the_live_pool_and_the_worker_split() -> None:
    """The engine reports tokens, not bytes: 1,127,125 × 40,960 B = 46,167,040,000 B; the worker's rest is
    78,103,440,261 − 17,640,734,720 − 46,167,040,000 = 14,295,665,541 B."""
    rank = _rank()
    assert rank.observed.process_bytes == WORKER_BYTES
    assert rank.observed_kv_pool == ObservedPool(LIVE_TOKENS * KV_BYTES_PER_TOKEN, derived=True)
    assert rank.worker_split == WorkerSplit(WEIGHTS_BYTES, 46_167_040_000, 14_295_665_541, split=True)
    reported = rank.model_copy(update={"observed": rank.observed.model_copy(update={"kv_pool_bytes": 5})})
    assert reported.observed_kv_pool == ObservedPool(5, derived=False)  # the engine's own figure first


def test_bytes_read_as_tokens_truncate_toward_zero() -> None:
    predicted = _rank().predicted
    assert predicted is not None and predicted.kv_bytes_per_token == KV_BYTES_PER_TOKEN
    assert predicted.tokens_in(CO_TENANT_BYTES) == 157_286  # 6 GiB ÷ 40,960 B = 157,286.4
    assert [predicted.tokens_in(b) for b in (-40_961, -40_960, -40_959)] == [-1, -1, 0]


def test_bytes_read_as_tokens_count_whole_pages() -> None:
    """Where the engine hands out pages of 16 tokens (vLLM's block), bytes read as whole pages: 6 GiB ÷ (40,960 B × 16)
    = 9,830.4 pages → 9,830 × 16 = 157,280 tokens; a gap one byte short of a page reads as none."""
    predicted = _rank().predicted
    assert predicted is not None
    paged = predicted.model_copy(update={"page_size": 16})
    assert paged.tokens_in(CO_TENANT_BYTES) == 157_280
    assert [paged.tokens_in(b) for b in (-655_360, -655_359, 655_359)] == [-16, 0, 0]


def test_the_predicted_split_is_the_gpu_the_free_figure_leaves() -> None:
    """The predicted bar's figures (`RankView.predicted_split`): the co-tenant's 6 GiB as NVML counts it now, the
    driver's reserved bytes apart, and the rest of the H100 the predicted free the ledger prints; the worker's rest is
    the ledger's reserve and context less the driver's reserved bytes (SGLang's context, 'total − free before load',
    holds them; NVML counts them apart from the process)."""
    rank = _rank()
    split, predicted, prediction = rank.predicted_split(H100_TOTAL_BYTES), rank.predicted, rank.worker_prediction
    assert split is not None and predicted is not None and prediction is not None
    worker = prediction.worker_bytes
    assert split.weights_bytes == WEIGHTS_BYTES
    assert split.runtime_bytes == predicted.reserve_bytes + predicted.context_bytes - DRIVER_RESERVED_BYTES
    assert (split.foreign_bytes, split.orphan_bytes, split.server_bytes) == (CO_TENANT_BYTES, 0, 0)
    assert split.driver_bytes == DRIVER_RESERVED_BYTES
    assert split.free_bytes == H100_TOTAL_BYTES - worker - CO_TENANT_BYTES - DRIVER_RESERVED_BYTES
    assert sum(split) == H100_TOTAL_BYTES
