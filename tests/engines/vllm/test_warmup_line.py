"""vLLM 0.34.0's 'Memory after warmup' line (v1/worker/extensible_kv_cache.py:693-708, each figure format_gib:
round(bytes / GiB, 2), utils/mem_utils.py:31-32) is read, and a sized log without it is read as a release before 0.34.0
(its default extensible KV cache prints the line whenever it sizes the cache)."""

from __future__ import annotations

import pytest

from kvtop.domain.engine_log import Measured
from kvtop.domain.engines.versions import VersionSource
from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.domain.engines.vllm.release_calendar import resolve_version
from kvtop.sources.engine_logs import parse_engine_log

# the wheel's format string, filled in: 70.5 GiB free, 60.25 committed, 1.5 kept (1.5 peak, 0.25 growth);
# 3856 blocks of 16 MiB = 60.25 GiB, requested 79.1 GiB, torch limit 12.0 GiB
WARMUP = (
    "(EngineCore pid=1) INFO 12-01 10:00:05 [extensible_kv_cache.py:693] Memory after warmup: 70.5 GiB free, 60.25 GiB "
    "committed to the KV cache, 1.5 GiB kept for transient activations (1.5 GiB allocated at peak, 0.25 GiB of torch "
    "reservation growth); 3856 KV cache blocks (60.25 GiB) fit within the requested 79.1 GiB. Torch may reserve up "
    "to 12.0 GiB.\n"
)
SIZED = (
    "(EngineCore pid=1) INFO 12-01 10:00:04 [gpu_worker.py:795] Available KV cache memory: 58.0 GiB\n"
    "(EngineCore pid=1) INFO 12-01 10:00:06 [kv_cache_utils.py:1168] GPU KV cache size: 246,784 tokens\n"
)


def test_the_warmup_line_is_read_with_its_blocks_and_sizes() -> None:
    (rank,) = parse_engine_log(SIZED + WARMUP).ranks(VllmRankLog)
    (sizing,) = rank.warmup_sizings
    assert sizing.num_blocks == 3_856 and sizing.kv_cache == Measured.from_text("60.25", unit="GiB", decimals=2)
    assert (sizing.free.text, sizing.committed.text, sizing.requested.text) == ("70.5", "60.25", "79.1")
    assert 3_856 * (16 << 20) == 60.25 * 2**30  # the blocks' GiB is blocks × bytes per block


def test_a_sized_log_without_it_is_read_as_0_33_and_one_with_it_is_not() -> None:
    before = resolve_version(parse_engine_log(SIZED))
    assert (before.text, before.approximate, before.source) == ("0.33.0", True, VersionSource.LOG)
    assert "no 'Memory after warmup' line" in before.detail
    assert resolve_version(parse_engine_log(SIZED + WARMUP)).text is None  # 0.34.0 or later: the newest rules
    cut = resolve_version(parse_engine_log(SIZED.splitlines(keepends=True)[0]))  # not yet sized: no evidence
    assert cut.text is None


def _args(transfer: str) -> str:
    """vLLM's `non-default args:` line with the KVTransferConfig repr it prints (config/kv_transfer.py)."""
    return ("(APIServer pid=1) INFO 12-01 10:00:00 [utils.py:253] non-default args: {'model': 'm', 'kv_transfer_config': "
            f"KVTransferConfig(kv_connector={transfer}, engine_id='a', kv_role='kv_both', "
            "kv_connector_module_path=None)}\n")  # fmt: skip


@pytest.mark.parametrize(("transfer", "dated"), [
    # in-process and RDMA-registering connectors keep v0.34.0's cache on (kv_cache_access IN_PROCESS / REGISTERS):
    # it would have printed the line, so its absence dates the log before v0.34.0
    ("'OffloadingConnector', kv_buffer_device='cuda'", True),
    ("'MooncakeConnector', kv_buffer_device='cuda'", True),
    ("'NixlConnector', kv_buffer_device='cpu'", True),
    # legacy CUDA IPC, a custom_mem_pool, NIXL's FABRIC export (no IMEX channel assumed) turn it off: no evidence
    ("'LMCacheMPConnector', kv_buffer_device='cuda'", False),
    ("'OffloadingConnector', kv_buffer_device='cuda', kv_connector_extra_config={'custom_mem_pool': True}", False),
    ("'NixlConnector', kv_buffer_device='cuda'", False),
    # a MultiConnector's children print as a list kvtop does not read: they may turn it off
    ("'MultiConnector', kv_connector_extra_config={'connectors': [{'kv_connector': 'LMCacheMPConnector'}]}", False),
])  # fmt: skip
def test_a_connector_that_keeps_the_cache_on_still_dates_the_log(transfer: str, dated: bool) -> None:
    found = resolve_version(parse_engine_log(_args(transfer) + SIZED))
    assert (found.text == "0.33.0") is dated and (found.text is None) is not dated
