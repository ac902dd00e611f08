"""Gemma-4's KV-shared layers in SGLang's pools (engines/sglang/__init__.py `shared_layers_keep_kv`, kv.py
`pooled_kinds`): SGLang sizes its SWA and full pools over every layer of `layer_types` (configs/model_config.py
get_hybrid_layer_ids, 0.5.11 … 0.5.23), the num_kv_shared_layers ones included.

Expected figures from the engine's own log: the DGX Spark's gemma-4-E4B-it start (SGLang 0.5.18-era, record
coralleicn-…-gemma-4-e4b-it-…) logged 'SWAKVPool mem usage: 79.94 GB, swa size: 798276, full size: 997846'. 42 layers
(5 sliding, 1 full) × 7, 2 KV heads, head_dim 256 sliding / 512 full, bf16 K and V: 7 × 2 × 512 × 2 × 2 = 28,672 B a
full token, 35 × 2 × 256 × 2 × 2 = 71,680 B a sliding one; 997,846 × 28,672 + 798,276 × 71,680 B = 79.94 GiB.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.vllm import RULES as VLLM
from kvtop.domain.gpus import gpu_key
from kvtop.domain.kv import pooled_kinds
from kvtop.domain.model_layers import LayerKind

E4B = "coralleicn-dgxspark-gemma-4-e4b-it-gb10-sglang0518dev-m085-len32768"
# the start's own load line: 'avail mem=97.30 GB, mem usage=15.56 GB' (GiB): free before the load 97.30 + 15.56
FREE_BEFORE_LOAD, FREE_AFTER_LOAD = round((97.30 + 15.56) * 2**30), round(97.30 * 2**30)


def _plan():  # type: ignore[no-untyped-def]
    record = next(r for r in load("sglang") if r.id == E4B)
    return planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes,
                            gpu_name=gpu_key(record.gpu),
                            measured=MeasuredInputs(free_before_load_bytes=FREE_BEFORE_LOAD,
                                                    free_after_load_bytes=FREE_AFTER_LOAD))  # fmt: skip


def test_the_logged_pool_arithmetic() -> None:
    assert round((997_846 * 28_672 + 798_276 * 71_680) / 2**30, 2) == 79.94


def test_sglang_pools_every_layer_of_layer_types() -> None:
    kv = _plan().ledger.ranks[0].kv
    full, swa = kv.pool("full"), kv.pool("swa")
    assert full is not None and swa is not None
    assert (full.layers, full.bytes_per_token) == (7, 28_672)
    assert (swa.layers, swa.bytes_per_token) == (35, 71_680)


def test_the_start_with_its_free_memory() -> None:
    """With the start's own free memory before and after the load, the full pool lands within 1 % of the logged
    997,846 (it was +61.5 % blind with the 24 layers that own KV)."""
    tokens = _plan().ledger.ranks[0].token_capacity
    assert abs(tokens - 997_846) / 997_846 < 0.01


def test_vllm_still_skips_the_shared_layers() -> None:
    """The config's 18 shared layers stay KV-less in vLLM's book (another engine's rule, not changed here): 4 full and
    20 sliding layers own KV."""
    record = next(r for r in load("sglang") if r.id == E4B)
    kinds = pooled_kinds(record.model, VLLM.kv_storage_for(record.model, record.settings, record.version))
    assert (kinds.count(LayerKind.SHARED), kinds.count(LayerKind.FULL), kinds.count(LayerKind.SLIDING)) == (
        18,
        4,
        20,
    )
