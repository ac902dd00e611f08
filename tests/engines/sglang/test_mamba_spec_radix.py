"""SGLang 0.5.10 … 0.5.13 refuse a linear-attention hybrid under speculative decoding with the radix cache on
(engines/sglang/mamba_spec_radix.py): `_handle_mamba_radix_cache` raises ValueError, 0.5.13 server_args.py:2752-2757
("Speculative decoding for Qwen3_5ForConditionalGeneration is not compatible with radix cache when using
--mamba-scheduler-strategy no_buffer."), `auto` being no_buffer there (:1225-1228). 0.5.9 turned the radix cache off
instead (:1760-1764), 0.5.14 validates no_buffer or picks extra_buffer without the raise (:4380-4399). The launch: the
Oxcart start (Qwen3.6-27B-FP8, EAGLE D 4) from tests/data/calibration/sglang.jsonl, its release restated."""

from __future__ import annotations

import json

import pytest

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_key
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

OXCART = "file67494338468-qwen3.6-27b-fp8-rtxpro6000maxq-eagle-nightly"


def _plan(release: str, *, radix_off: bool = False) -> int:
    record = next(r for r in load("sglang") if r.id == OXCART)
    assert record.model is not None and record.gpu_total_bytes is not None
    settings = record.settings.model_copy(update={"engine_version": release, "disable_radix_cache": radix_off})
    plan = planned_capacity(record.model, settings, gpu_total_bytes=record.gpu_total_bytes,
                            gpu_name=gpu_key(record.gpu), measured=MeasuredInputs())  # fmt: skip
    return plan.ledger.token_capacity


@pytest.mark.parametrize("release", ["0.5.10", "0.5.12", "0.5.13"])
def test_the_radix_cache_under_speculation_is_refused(release: str) -> None:
    with pytest.raises(InputError, match="not compatible with radix cache"):
        _plan(release)


@pytest.mark.parametrize("release", ["0.5.9", "0.5.14"])
def test_the_releases_around_it_start(release: str) -> None:
    assert _plan(release) > 0


def test_the_radix_cache_off_starts() -> None:
    assert _plan("0.5.13", radix_off=True) > 0


def _state_pool(release: str, typed_requests: bool = True) -> tuple[int, tuple[str, ...]]:
    record = next(r for r in load("sglang") if r.id == OXCART)
    assert record.model is not None and record.gpu_total_bytes is not None
    update: dict[str, object] = {"engine_version": release}
    if not typed_requests:
        update["max_running_requests"] = None
    settings = record.settings.model_copy(update=update)
    plan = planned_capacity(record.model, settings, gpu_total_bytes=record.gpu_total_bytes,
                            gpu_name=gpu_key(record.gpu), measured=MeasuredInputs())  # fmt: skip
    return plan.ledger.ranks[0].state_pool_bytes, plan.ledger.engine.notes


@pytest.mark.parametrize(("typed", "slots"), [(True, 4), (False, 48)])
def test_059_turns_the_radix_cache_off_under_speculation(typed: bool, slots: int) -> None:
    """0.5.9 server_args.py:1760-1764 sets disable_radix_cache; handle_max_mamba_cache then takes
    --max-running-requests as the slots (4 typed, else the speculative hook's 48), one a request; the pool holds them
    and its padding slot, (slots + 1) × 153,944,064 B (test_mamba_spec.py's per-request state), and the 4 draft
    tokens' intermediate states of the running requests and one more (0.5.9 mem_cache/memory_pool.py:270-285
    `[layers, spec_state_size + 1, D, …]`, model_runner_kv_cache_mixin.py:463 `mamba_spec_state_size=max_num_reqs`)."""
    pool, notes = _state_pool("0.5.9", typed)
    assert pool == (slots + 1) * 153_944_064 + (slots + 1) * 4 * 153_944_064
    assert any("turns it off" in note for note in notes)


@pytest.mark.parametrize("release", ["0.5.8", "0.5.13"])
def test_kimi_linear_runs_radix_off_through_0513(release: str) -> None:
    """SGLang turns Kimi-Linear's radix cache off, 'not yet supported', with or without speculation (0.5.8
    server_args.py:1411-1415, 0.5.13 :2459-2463 `support_mamba_cache=False`); `_calculate_mamba_ratio` is then 1
    (0.5.13 model_runner_kv_cache_mixin.py), so the requests are capped at the slots themselves, not a third."""
    path = DATA / "configs" / "heldout" / "wave5" / "moonshotai--Kimi-Linear-48B-A3B-Instruct.json"
    model = model_from_config(json.loads(path.read_text()), source=path.name)
    settings = parse_flags("sglang", ["--tp", "2"]).model_copy(update={"engine_version": release})
    engine = predict(model, settings, gpu_total_bytes=80 << 30, gpu_name="H100").engine
    assert engine.state_slots_per_request == 1 and engine.max_running_requests == engine.state_slots > 0
    assert any("not yet supported" in note for note in engine.notes)
