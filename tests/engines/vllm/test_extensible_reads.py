"""What vLLM 0.34.0's extensible KV cache reads (docs/engines/vllm.md §0.34.0): the free memory at the worker's start
is its headroom (v0.34.0 v1/worker/extensible_kv_cache.py:592-612 `measure_kv_cache_bytes`: headroom = free at init −
non_kv_used), so a plan given --free-memory at that release does not say the figure goes unread; the profiling rule
(earlier releases, or the cache off) still does not read it (worker/gpu_worker.py determine_available_memory)."""

from __future__ import annotations

import math

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

TOTAL, NON_KV = 80 * GIB, 3 * GIB
MISTRAL = load_model(str(CONFIGS / "mistralai--Mistral-7B-v0.1.json"))


def _plan(free: int, *flags: str) -> Ledger:
    measured = MeasuredInputs(free_before_load_bytes=free, non_kv_bytes=NON_KV)
    return predict(MISTRAL, parse_flags("vllm", list(flags)), gpu_total_bytes=TOTAL, gpu_name="H100",
                   measured=measured)  # fmt: skip


def _unread(ledger: Ledger) -> set[str]:
    return {u.field for u in ledger.engine.inputs_not_read}


def test_0_34_0_reads_the_free_memory_it_sizes_from() -> None:
    """70 GiB and 75 GiB free at start: the cache is free − weights − non-KV − 1 GiB (the margin's floor, no peak
    given), so 5 GiB more free is 5 GiB more cache, and no note says the figure is not read."""
    low, high = _plan(70 * GIB, "--engine-version", "0.34.0"), _plan(75 * GIB, "--engine-version", "0.34.0")
    assert low.engine.kv_budget_bytes == 70 * GIB - low.weights_bytes - NON_KV - GIB
    assert high.engine.kv_budget_bytes - low.engine.kv_budget_bytes == 5 * GIB
    for ledger in (low, high):
        assert "free_before_load_bytes" not in _unread(ledger)
        assert not any(note.startswith("--free-memory not read") for note in ledger.engine.notes)


def test_the_profiling_rule_still_says_the_free_memory_is_not_read() -> None:
    """0.33.0, and 0.34.0 with --no-enable-extensible-kv-cache: ceil(80 GiB × 0.92) − weights − non-KV, whatever is
    free (70 GiB clears the start check), and the plan names --free-memory as not read."""
    for flags in (("--engine-version", "0.33.0"), ("--engine-version", "0.34.0", "--no-enable-extensible-kv-cache")):
        ledger = _plan(70 * GIB, *flags)
        assert ledger.engine.kv_budget_bytes == math.ceil(TOTAL * 0.92) - ledger.weights_bytes - NON_KV
        assert _unread(ledger) == {"free_before_load_bytes"}
        assert any(note.startswith("--free-memory not read by vLLM's rule") for note in ledger.engine.notes)


def test_what_the_share_is_of_follows_the_release() -> None:
    """0.34.0 under the extensible cache: the headroom binds at the unstated 1.0 (ceil(total) ≥ free at start), so
    the words name the free memory at start and the margin; before it (or with it off) the share of the total."""
    rules, on = engine_rules("vllm"), _plan(70 * GIB, "--engine-version", "0.34.0")
    off = _plan(70 * GIB, "--engine-version", "0.34.0", "--no-enable-extensible-kv-cache")
    old = _plan(70 * GIB, "--engine-version", "0.33.0")
    said = rules.memory_fraction_of_at(on.settings, on.version)
    assert "free memory at the worker's start" in said and "max(1 GiB, 0.75" in said
    assert rules.memory_fraction_of_at(off.settings, off.version) == rules.memory_fraction_of
    assert rules.memory_fraction_of_at(old.settings, old.version) == rules.memory_fraction_of
    assert "free memory" not in rules.memory_fraction_of


def test_other_engines_declare_the_same_at_0_34_0s_launch() -> None:
    """The release-aware declarations are vLLM's alone: another engine's words and unread figures are its one set."""
    version = _plan(70 * GIB, "--engine-version", "0.34.0").version
    for engine in ("sglang", "lmdeploy", "trtllm"):
        rules, settings = engine_rules(engine), parse_flags(engine, [])
        assert rules.memory_fraction_of_at(settings, version) == rules.memory_fraction_of
        assert rules.measured_not_read_at(settings, version) == rules.measured_not_read
