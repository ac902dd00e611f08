"""diagnose() on a TensorRT-LLM node: causes priced by its rules (the least free GPU sizes every rank,
docs/engines/trtllm.md §5), fixes spelled in its own flags and YAML keys.

The node is Meta-Llama-3-70B at TP8 on eight H100s, as in test_diagnose, served by trtllm-serve
(TensorRT-LLM 1.1.0); its workers hold the ledger's weights, KV pool and context. Token figures are
re-solved with predict() and checked against the budget's hand arithmetic.
"""

from __future__ import annotations

import struct

from kvtop.domain.diagnose import Severity, diagnose, diagnose_ledger
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.node import NodeSnapshot, build_snapshot
from kvtop.domain.observe import (
    EndpointState,
    EngineInstance,
    EngineLive,
    EngineRank,
    GpuObservation,
    GpuProcess,
    NodeObservation,
    ProcessRole,
)
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS
from tests.diagnose_node import CLEAN, CONTEXT, H100, LLAMA_70B, RESERVED, co_tenant, only, problems

SERVER = 4300
F32_09 = struct.unpack("f", struct.pack("f", 0.9))[0]


def plan(*flags: str, config: str = LLAMA_70B) -> Ledger:
    settings = parse_flags("trtllm", ["--tp_size", "8", "--engine-version", "1.1.0", *flags])
    return predict(load_model(str(CONFIGS / config)), settings, gpu_total_bytes=H100)


def capacity(ledger: Ledger, free_before_load: int, **settings: object) -> int:
    """The planner's capacity with a measured pre-load free memory (min over ranks)."""
    measured = MeasuredInputs(free_before_load_bytes=free_before_load)
    changed = ledger.settings.model_copy(update=settings)
    return predict(ledger.model, changed, gpu_total_bytes=H100, measured=measured).token_capacity


def trtllm_node(ledger: Ledger, others: dict[int, tuple[GpuProcess, ...]] | None = None) -> NodeSnapshot:
    engine_id = f"trtllm:{SERVER}"
    gpus = []
    for row in ledger.ranks:
        held = row.weights_bytes + row.kv_pool_bytes + row.reserve_bytes + CONTEXT - RESERVED - 2 * GIB
        worker = GpuProcess(
            pid=SERVER + 10 + row.gpu_index,
            used_bytes=held,
            name="python3",
            role=ProcessRole.ENGINE_WORKER,
            engine_id=engine_id,
            engine_kind="trtllm",
            rank=EngineRank(tp=row.tp_rank),
        )
        processes = (worker, *(others or {}).get(row.gpu_index, ()))
        used = sum(p.used_bytes or 0 for p in processes)
        gpus.append(
            GpuObservation(
                index=row.gpu_index,
                total_bytes=H100,
                used_bytes=used,
                reserved_bytes=RESERVED,
                free_bytes=H100 - used - RESERVED,
                processes=processes,
            )
        )
    live = EngineLive(state=EndpointState.OK, token_capacity=ledger.token_capacity)
    engine = EngineInstance(
        engine_id=engine_id,
        kind="trtllm",
        server_pid=SERVER,
        settings=ledger.settings,
        host="127.0.0.1",
        port=8000,
        live=live,
    )
    return build_snapshot(
        NodeObservation(taken_at=0.0, gpus=tuple(gpus), engines=(engine,)), {engine_id: ledger}, source="test"
    )


def test_healthy_node_has_only_the_fp8_advice_spelled_as_tensorrt_llms_yaml_key() -> None:
    """The fix is what trtllm-serve takes: serve declares no `--kv_cache_config.*` option (tensorrt_llm/commands/
    serve.py's @click.option list, engines/trtllm/serve_launch.SERVE_OPTIONS), so FP8 KV is the `--extra_llm_api_options`
    YAML's `kv_cache_config: {dtype: fp8}` (KvCacheConfig.dtype, llmapi/llm_args.py), as the copied launch writes it."""
    found = diagnose(trtllm_node(plan()))
    assert problems(found) == set()
    advice = only(found, "bf16_kv_where_fp8_supported")
    assert advice.fix == (
        "--extra_llm_api_options extra_llm_api_options.yaml · extra_llm_api_options.yaml: {kv_cache_config: {dtype: fp8}}"
    )
    assert advice.fix_settings is not None and advice.fix_settings.kv_cache_dtype == "fp8"


def test_a_co_tenant_on_one_gpu_costs_every_rank_the_fraction_of_its_bytes() -> None:
    """MIN over ranks (§5): 6 GiB on GPU 3 shrink every rank's budget by float32(0.9) × 6 GiB, i.e.
    6 GiB × 0.9 ÷ 40,960 B ≈ 141,558 tokens (± one 32-token block)."""
    ledger = plan()
    found = diagnose(trtllm_node(ledger, {3: (co_tenant(9001, 6 * GIB),)}))
    finding = only(found, "co_tenant")
    expected = capacity(ledger, CLEAN) - capacity(ledger, CLEAN - 6 * GIB)
    assert finding.tokens == finding.gain_tokens == expected
    assert abs(expected - 6 * GIB * F32_09 / 40_960) <= 32
    assert finding.ranks == tuple(f"trtllm:{SERVER}/tp{i}" for i in range(8))
    assert "TensorRT-LLM MIN-reduces max_tokens over every rank" in " ".join(finding.evidence)


def test_a_restart_with_a_huge_co_tenant_leaves_no_kv_memory() -> None:
    found = diagnose(trtllm_node(plan(), {0: (co_tenant(9002, 62 * GIB),)}))
    restart = only(found, "restart_will_not_fit")
    assert restart.severity is Severity.CRITICAL and restart.gpus == (0,)
    assert restart.fix.startswith("free 62.00 GiB on GPU 0")


def test_a_fraction_below_the_default_names_the_flag_and_its_gain() -> None:
    ledger = plan("--kv_cache_free_gpu_memory_fraction", "0.7")
    finding = only(diagnose_ledger(ledger), "reserve_larger_than_expected")
    assert finding.fix == "--kv_cache_free_gpu_memory_fraction 0.9"
    gain = (
        predict(
            ledger.model,
            ledger.settings.model_copy(update={"free_gpu_memory_fraction": 0.9}),
            gpu_total_bytes=H100,
        ).token_capacity
        - ledger.token_capacity
    )
    assert finding.gain_tokens == gain > 0


def test_a_max_tokens_cap_that_binds_is_advice_naming_the_yaml_key() -> None:
    ledger = plan("--kv_cache_config.max_tokens", "300000")
    assert ledger.token_capacity == 300_000
    finding = only(diagnose_ledger(ledger), "kv_cap_binds")
    assert finding.severity is Severity.INFO and "kv_cache_config.max_tokens" in finding.fix
    assert finding.gain_tokens == plan().token_capacity - 300_000


def test_mla_under_attention_tp_recommends_enable_attention_dp() -> None:
    """DeepSeek-V3 at TP8 (FP8 checkpoint, H200): every rank holds the whole 576-wide latent; attention DP
    (each rank its own pool) is TensorRT-LLM's `enable_attention_dp: true`."""
    ledger = predict(
        load_model(str(CONFIGS / "deepseek-ai--DeepSeek-V3.json")),
        parse_flags("trtllm", ["--tp_size", "8", "--ep_size", "8", "--engine-version", "1.1.0"]),
        gpu_total_bytes=143_771 << 20,
    )
    finding = only(diagnose_ledger(ledger), "mla_under_attention_tp")
    # the layout as trtllm-serve takes it: serve's --tp_size / --ep_size, and `enable_attention_dp: true` in the YAML
    # (TorchLlmArgs.enable_attention_dp; serve declares no --enable_attention_dp), never kvtop's `--dp 8`
    assert finding.fix == (
        "--tp_size 8 --ep_size 8 --extra_llm_api_options extra_llm_api_options.yaml · "
        "extra_llm_api_options.yaml: {enable_attention_dp: true}"
    )
    assert finding.fix_settings is not None and finding.fix_settings.enable_dp_attention
