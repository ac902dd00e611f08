"""vLLM 0.34.0's memory path (docs/engines/vllm.md §0.34.0), each figure from the wheel's own arithmetic.

- v1/worker/extensible_kv_cache.py:592-612 `measure_kv_cache_bytes`: available = min(requested − non_kv_used,
  headroom − max(1 GiB, 0.75 × peak)) − peak, headroom = free at init − non_kv_used (extensible_kv.py);
- config/cache.py:493-501: utilization 1.0 unstated with the extensible cache, 0.92 without; :185 the block 64;
- v1/worker/utils.py:783-797: no 'less than desired GPU memory utilization' refusal under the extensible cache;
- v1/worker/gpu_worker.py:579-587: the V1 model runner is gone (suffix decoding runs on V2).
"""

from __future__ import annotations

import math

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.versions import ResolvedVersion, from_flag
from kvtop.domain.engines.vllm.backends import block_size
from kvtop.domain.engines.vllm.extensible_kv import available_bytes, extensible, utilization_default
from kvtop.domain.engines.vllm.refusals import free_memory_refusal
from kvtop.domain.engines.vllm.release_calendar import CALENDAR
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

V033, V034 = ResolvedVersion(text="0.33.0"), ResolvedVersion(text="0.34.0")
MISTRAL = load_model(str(CONFIGS / "mistralai--Mistral-7B-v0.1.json"))


def test_measure_kv_cache_bytes_by_hand() -> None:
    """80 GiB total, 79.5 GiB free at init, 17.5 GiB resident after capture, a 2 GiB peak: utilization 1.0 asks the
    whole 80 GiB, so the headroom binds: 79.5 − 17.5 − max(1, 1.5) − 2 = 58.5 GiB; at 0.9 (ceil(72 GiB)) the request
    binds: 72 − 17.5 − 2 = 52.5 GiB; a 0.8 GiB peak keeps the 1 GiB floor: 79.5 − 17.5 − 1 − 0.8 = 60.2 GiB."""
    free, resident = int(79.5 * GIB), int(17.5 * GIB)
    assert available_bytes(requested_bytes=80 * GIB, free_at_start_bytes=free, resident_bytes=resident,
                           transient_peak_bytes=2 * GIB) == int(58.5 * GIB)  # fmt: skip
    assert available_bytes(requested_bytes=math.ceil(80 * GIB * 0.9), free_at_start_bytes=free,
                           resident_bytes=resident, transient_peak_bytes=2 * GIB) == int(52.5 * GIB)  # fmt: skip
    peak = int(0.8 * GIB)
    assert available_bytes(requested_bytes=80 * GIB, free_at_start_bytes=free, resident_bytes=resident,
                           transient_peak_bytes=peak) == free - resident - GIB - peak  # fmt: skip


def test_the_budget_sizes_from_the_free_memory_at_0_34() -> None:
    """Measured free memory and non-KV figure, no calibrated peak: KV = free − weights − non-KV − 1 GiB (the floor);
    at 0.33.0 the same launch takes ceil(total × 0.92) − weights − non-KV."""
    total, free, non_kv = 80 * GIB, 79 * GIB, 3 * GIB
    measured = MeasuredInputs(free_before_load_bytes=free, non_kv_bytes=non_kv)
    new = predict(MISTRAL, parse_flags("vllm", ["--engine-version", "0.34.0"]), gpu_total_bytes=total,
                  gpu_name="H100", measured=measured)  # fmt: skip
    old = predict(MISTRAL, parse_flags("vllm", ["--engine-version", "0.33.0"]), gpu_total_bytes=total,
                  gpu_name="H100", measured=measured)  # fmt: skip
    weights = new.weights_bytes
    assert new.engine.memory_fraction == 1.0 and old.engine.memory_fraction == 0.92
    assert new.engine.kv_budget_bytes == free - weights - non_kv - GIB
    assert old.engine.kv_budget_bytes == math.ceil(total * 0.92) - weights - non_kv
    # --no-enable-extensible-kv-cache: the profiling way at 0.92 (resolved_gpu_memory_utilization's fallback)
    off = predict(MISTRAL, parse_flags("vllm", ["--engine-version", "0.34.0", "--no-enable-extensible-kv-cache"]),
                  gpu_total_bytes=total, gpu_name="H100", measured=measured)  # fmt: skip
    assert off.engine.memory_fraction == 0.92 and off.engine.kv_budget_bytes == old.engine.kv_budget_bytes


def test_the_blocks_fit_each_layer_region_in_whole_2_mib_granules() -> None:
    """v0.34.0's `blocks_within` (v1/worker/extensible_kv_cache.py:304-318): the most blocks whose footprint, each
    layer's region (the default LBHNC layout's one segment a layer, `_segments`:134-180) rounded up to the VMM
    granule, fits the available bytes, which are themselves not rounded (`measure_kv_cache_bytes`, :592-612).
    Mistral-7B: 32 layers, a 64-token page of 64 × 8 heads × 128 × 2 (K, V) × 2 B = 262,144 B a layer, 8 a 2 MiB
    granule: blocks = ⌊available ÷ (32 × 2 MiB)⌋ × 8, where the profiling way takes ⌊available ÷ (32 × 262,144)⌋."""
    measured = MeasuredInputs(free_before_load_bytes=79 * GIB, non_kv_bytes=3 * GIB + 12_345_678)
    plan = predict(MISTRAL, parse_flags("vllm", ["--engine-version", "0.34.0"]), gpu_total_bytes=80 * GIB,
                   gpu_name="H100", measured=measured)  # fmt: skip
    available, page = plan.engine.kv_budget_bytes, 64 * 8 * 128 * 2 * 2
    assert plan.engine.num_blocks == available // (32 * 2 * 1024 * 1024) * 8
    assert plan.engine.num_blocks < available // (32 * page)  # up to 7 blocks a layer short of the plain division


@pytest.mark.parametrize(("flags", "on", "util"), [
    ((), True, 1.0),
    (("--kv-cache-memory-bytes", "20G"), False, 0.92),
    (("--num-gpu-blocks-override", "1000"), False, 0.92),
    (("--no-enable-extensible-kv-cache",), False, 0.92),
    # v0.34.0 _resolve_extensible_kv_cache by the connector's kv_cache_access (extensible_kv.connector_off_in):
    # NIXL exports FABRIC handles (no IMEX channel assumed) unless its buffer is on the CPU
    (("--kv-transfer-config", '{"kv_connector": "NixlConnector", "kv_role": "kv_both"}'), False, 0.92),
    (("--kv-transfer-config", '{"kv_connector": "NixlConnector", "kv_buffer_device": "cpu"}'), True, 1.0),
    (("--kv-transfer-config", '{"kv_connector": "NixlConnector"}', "--enable-extensible-kv-cache"), True, 1.0),
    # LMCacheMPConnector's legacy CUDA IPC, also as a MultiConnector child; a custom_mem_pool
    (("--kv-transfer-config", '{"kv_connector": "LMCacheMPConnector", "kv_role": "kv_both"}'), False, 0.92),
    (("--kv-transfer-config", '{"kv_connector": "MultiConnector", "kv_connector_extra_config": {"connectors": '
      '[{"kv_connector": "OffloadingConnector"}, {"kv_connector": "LMCacheMPConnector"}]}}'), False, 0.92),
    (("--kv-transfer-config", '{"kv_connector": "OffloadingConnector", "kv_connector_extra_config": '
      '{"custom_mem_pool": true}}'), False, 0.92),
    # in-process and RDMA-registering connectors keep it on
    (("--kv-transfer-config", '{"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"}'), True, 1.0),
    (("--kv-transfer-config", '{"kv_connector": "MooncakeConnector", "kv_role": "kv_producer"}'), True, 1.0),
    (("--kv-transfer-config", '{"kv_connector": "OffloadingConnector", "kv_role": "kv_both"}'), True, 1.0),
])  # fmt: skip
def test_when_the_cache_is_extensible(flags: tuple[str, ...], on: bool, util: float) -> None:
    settings = parse_flags("vllm", list(flags))
    assert extensible(settings, V034) is on and extensible(settings, V033) is False
    found = utilization_default(settings, V034)
    assert found is not None and found[0] == util and utilization_default(settings, V033) is None


def test_the_start_check_is_skipped_under_the_extensible_cache() -> None:
    """--free-memory 60 GiB of 80: below ceil(80 × 0.92) at 0.33.0 (refused); 0.34.0 sizes from what is free."""
    measured = MeasuredInputs(free_before_load_bytes=60 * GIB)
    for flags, refused in ((["--engine-version", "0.33.0"], True), (["--engine-version", "0.34.0"], False),
                           (["--engine-version", "0.34.0", "--no-enable-extensible-kv-cache"], True)):  # fmt: skip
        ledger = predict(MISTRAL, parse_flags("vllm", flags), gpu_total_bytes=80 * GIB, gpu_name="H100",
                         measured=measured)  # fmt: skip
        assert (free_memory_refusal(ledger) is not None) is refused


@pytest.mark.parametrize(("config", "gpu", "old", "new"), [
    ("mistralai--Mistral-7B-v0.1.json", "H100", 16, 64),  # FLASH_ATTN: multiples of 16, keeps the default
    ("deepseek-ai--DeepSeek-V3.json", "B200", 32, 64),  # FLASHINFER_MLA [32, 64]
    ("deepseek-ai--DeepSeek-V3.json", "H100", 16, 64),  # FLASH_ATTN_MLA: multiples of 16
])  # fmt: skip
def test_the_default_block_is_64(config: str, gpu: str, old: int, new: int) -> None:
    model = load_model(str(CONFIGS / config))
    assert block_size(model, False, gpu, V033)[0] == old and block_size(model, False, gpu, V034)[0] == new


def test_suffix_decoding_runs_v2_once_v1_is_gone() -> None:
    suffix = parse_flags("vllm", ["--speculative-config", '{"method": "suffix", "num_speculative_tokens": 3}'])
    assert runs_v2(V033, MISTRAL, suffix) is False and runs_v2(V034, MISTRAL, suffix) is True


def test_0_34_0_is_the_newest_release_and_its_flags_are_its_own() -> None:
    assert CALENDAR[-1].release == "0.34.0" and CALENDAR[-1].day.isoformat() == "2026-11-16"
    assert "newer than 0.34.0" in from_flag("0.35.0", CALENDAR).detail
    with pytest.raises(InputError, match="no --enable-extensible-kv-cache"):
        predict(MISTRAL, parse_flags("vllm", ["--engine-version", "0.33.0", "--enable-extensible-kv-cache"]),
                gpu_total_bytes=80 * GIB, gpu_name="H100")  # fmt: skip


def test_the_0_34_0_registry() -> None:
    """read_registries.py on the 0.34.0 wheel: Keye and Keye-VL-1.5 in `_PREVIOUSLY_SUPPORTED_MODELS` (until v0.33.0),
    Lfm3ForCausalLM new; ZayaForCausalLM registered (0.33.0 took it through transformers' own class)."""
    from kvtop.domain.engines.registry import engine_rules
    from kvtop.domain.engines.versions import VersionSource

    def check(architecture: str, release: str) -> tuple[str, object]:
        found = engine_rules("vllm").architectures.check(
            MISTRAL.model_copy(update={"architecture": architecture}), parse_flags("vllm", []),
            ResolvedVersion(text=release, source=VersionSource.FLAG))  # fmt: skip
        return found.state, found.engine_words

    assert check("KeyeForConditionalGeneration", "0.33.0")[0] == "registered"
    assert check("KeyeForConditionalGeneration", "0.34.0")[1] == (
        "Model architecture KeyeForConditionalGeneration was supported in vLLM until v0.33.0, and is not supported "
        "anymore."
    )
    assert check("Lfm3ForCausalLM", "0.34.0")[0] == "registered"
    assert check("Lfm3ForCausalLM", "0.33.0")[0] != "registered"
    assert check("ZayaForCausalLM", "0.34.0")[0] == "registered"


def test_a_plan_takes_the_free_memory_as_cuda_s_total_less_the_context() -> None:
    """No measurement: at 0.34.0 the calibrated free memory at the worker's start is CUDA's total less the context
    term (the vllm.context fit), and KV = that − weights − non-KV − the margin, within the request; 0.33.0 reads
    no context in its budget."""
    from kvtop.domain.calibration.estimate import calibrated_ledger

    total = 80 * GIB
    new = calibrated_ledger(MISTRAL, parse_flags("vllm", ["--engine-version", "0.34.0"]), gpu_total_bytes=total,
                            gpu_name="H100")  # fmt: skip
    figures = new.measured.calibrated
    assert figures is not None and figures.cuda_total_bytes and figures.context_bytes and figures.non_kv_bytes
    free = figures.cuda_total_bytes - figures.context_bytes
    assert figures.free_before_load_bytes == free and figures.activation_bytes is not None
    margin = max(GIB, int(figures.activation_bytes * 0.75))
    within = min(figures.cuda_total_bytes, free - margin) - new.weights_bytes - figures.non_kv_bytes
    assert new.engine.kv_budget_bytes == within
    old = calibrated_ledger(MISTRAL, parse_flags("vllm", ["--engine-version", "0.33.0"]), gpu_total_bytes=total,
                            gpu_name="H100")  # fmt: skip
    assert old.measured.calibrated is not None and old.measured.calibrated.free_before_load_bytes is None
