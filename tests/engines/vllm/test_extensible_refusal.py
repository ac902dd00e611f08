"""`--enable-extensible-kv-cache` where the launch rules the cache out: vLLM 0.34.0 refuses to start.

`_resolve_extensible_kv_cache` (vllm/config/vllm.py:3180-3263 of the v0.34.0 wheel) collects the first `unsupported`
reason (kv_cache_memory_bytes, num_gpu_blocks_override, elastic EP, a connector's LEGACY_IPC kv_cache_access, a
custom_mem_pool) and, where the flag asked for the cache, raises ValueError(f"enable_extensible_kv_cache:
{unsupported}.") (:3262-3263). The quoted words below are the wheel's strings; unstated, the cache is turned off
silently and the launch starts.
"""

from __future__ import annotations

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.refusals import Refusal
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

MISTRAL = load_model(str(CONFIGS / "mistralai--Mistral-7B-v0.1.json"))
FLAG = "--enable-extensible-kv-cache"
LMCACHE_MP = '{"kv_connector": "LMCacheMPConnector", "kv_role": "kv_both"}'
POOLED = '{"kv_connector": "OffloadingConnector", "kv_connector_extra_config": {"custom_mem_pool": true}}'
MULTI = ('{"kv_connector": "MultiConnector", "kv_connector_extra_config": {"connectors": '
         '[{"kv_connector": "OffloadingConnector"}, {"kv_connector": "LMCacheMPConnector"}]}}')  # fmt: skip
IPC = ("enable_extensible_kv_cache: a KV connector (e.g. LMCacheMPConnector) shares the KV cache through legacy CUDA "
       "IPC, which cannot export driver-mapped memory.")  # fmt: skip
POOL = ("enable_extensible_kv_cache: custom_mem_pool allocates the KV cache from a connector's memory pool, which a "
        "driver-mapped cache cannot use.")  # fmt: skip


def _refusals(*flags: str) -> list[Refusal]:
    ledger = predict(MISTRAL, parse_flags("vllm", ["--engine-version", "0.34.0", *flags]), gpu_total_bytes=80 * GIB,
                     gpu_name="H100", measured=MeasuredInputs(free_before_load_bytes=79 * GIB))  # fmt: skip
    return [r for r in engine_rules("vllm").launch_refusals(ledger) if r.field == FLAG]


@pytest.mark.parametrize(("flags", "words", "named"), [
    (("--kv-transfer-config", LMCACHE_MP), IPC, "LMCacheMPConnector"),
    (("--kv-transfer-config", MULTI), IPC, "LMCacheMPConnector"),  # a MultiConnector child's access counts
    (("--kv-transfer-config", POOLED), POOL, "OffloadingConnector's custom_mem_pool"),
    (("--kv-cache-memory-bytes", "20G"), "enable_extensible_kv_cache: it sizes the KV cache from measured memory, "
     "which kv_cache_memory_bytes overrides.", "--kv-cache-memory-bytes"),
])  # fmt: skip
def test_asking_for_the_cache_where_it_is_ruled_out_is_refused_in_vllms_words(
    flags: tuple[str, ...], words: str, named: str
) -> None:
    (refusal,) = _refusals(FLAG, *flags)
    assert words in refusal.message and named in refusal.message and FLAG in refusal.message
    assert "config/vllm.py:3262-3263" in refusal.source
    assert _refusals(*flags) == []  # unstated: vLLM turns the cache off and starts


@pytest.mark.parametrize("flags", [
    (FLAG,),
    (FLAG, "--kv-transfer-config", '{"kv_connector": "NixlConnector", "kv_role": "kv_both"}'),  # FABRIC: a warning
    (FLAG, "--kv-transfer-config", '{"kv_connector": "OffloadingConnector", "kv_role": "kv_both"}'),
    ("--no-enable-extensible-kv-cache", "--kv-transfer-config", LMCACHE_MP),
])  # fmt: skip
def test_a_launch_the_cache_allows_is_not_refused(flags: tuple[str, ...]) -> None:
    assert _refusals(*flags) == []
