"""TensorRT-LLM's rules (docs/engines/trtllm.md): bytes per token as its manager and its estimator count
them (§1), the profiled budget (§3) and the C++ engine budget (§4.2) against hand arithmetic, and each
rule that changed between releases, with the source the era cites."""

from __future__ import annotations

import math
import struct

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.trtllm.budget import estimation_tokens, estimator_bytes_per_token, round_blocks
from kvtop.domain.engines.trtllm.eras import (
    DEFAULT_BACKEND_ERAS,
    ENGINE_TOKEN_PRINT_ERAS,
    ENGINE_TOKENS_PER_BLOCK_ERAS,
    ESTIMATION_ERAS,
    ESTIMATOR_HEAD_ERAS,
    FRACTION_ERAS,
    PROFILE_ERAS,
    ROUNDING_ERAS,
    as_engine_fraction,
    caps_by_total_bytes,
    default_backend,
    engine_tokens_per_block,
    estimation_rule,
    profile_rule,
    rounding_rule,
)
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.kv import kv_book
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import Ledger, layout_from_settings, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

MIB = 1 << 20
H100_BYTES = 81_559 * MIB
F32_09 = struct.unpack("f", struct.pack("f", 0.9))[0]  # 0.8999999761581421, as the 1.1.0rc3 log prints it
LLAMA_8B = "meta-llama--Llama-3.1-8B-Instruct.json"


def _model(name: str) -> ModelSpec:
    return load_model(str(CONFIGS / name))


def _plan(config: str, flags: list[str], **measured: int) -> Ledger:
    from kvtop.domain.engines.base import MeasuredInputs

    return predict(
        _model(config),
        parse_flags("trtllm", flags),
        gpu_total_bytes=H100_BYTES,
        gpu_name="H100",
        measured=MeasuredInputs(**measured),
    )


def _release(text: str | None) -> ResolvedVersion:
    return ResolvedVersion(text=text)


# --- §1: bytes per token ------------------------------------------------------------------------


def test_manager_rounds_kv_heads_per_rank_up() -> None:
    """§1.2 `num_kv_heads_per_layer = (kv + tp − 1) // tp`: 12 KV heads over TP 8 store 2 heads per rank
    (kvtop's other engines keep 12 // 8 = 1)."""
    model = _model(LLAMA_8B).model_copy(update={"num_kv_heads": 12})
    layout = ParallelLayout(tp=8)
    trtllm = kv_book(model, layout, range(32), "bf16", predict_rules("trtllm").kv_storage)
    sglang = kv_book(model, layout, range(32), "bf16", predict_rules("sglang").kv_storage)
    assert (trtllm.kv_heads_per_rank, sglang.kv_heads_per_rank) == (2, 1)
    assert trtllm.full_bytes_per_token == 32 * 2 * 128 * 2 * 2 == 32_768


def predict_rules(engine: str):  # type: ignore[no-untyped-def]
    from kvtop.domain.engines.registry import engine_rules

    return engine_rules(engine)


def test_mla_latent_is_one_576_wide_entry_per_layer_in_fp8_not_split_by_tp() -> None:
    """§1.2, case kimi-k25: 61 layers × (512 + 64) × 1 B = 35,136 B/token on every rank, at TP 8 too."""
    ledger = _plan("moonshotai--Kimi-K2-Instruct.json", ["--tp_size", "8", "--kv_cache_config.dtype", "fp8"])
    assert ledger.kv_bytes_per_token == 61 * 576 * 1 == 35_136
    assert (
        estimator_bytes_per_token(ledger.model, ledger.layout, ledger.ranks[0].kv, _release("1.1.0"))
        == 35_136
    )


def test_nvfp4_kv_is_half_a_byte_plus_a_scale_per_16_elements() -> None:
    """§1.2 NVFP4: bytes = e/2 + e//16; Llama-3.1-8B: e = 2 × 32 × 8 × 128 = 65,536 → 32,768 + 4,096."""
    assert _plan(LLAMA_8B, ["--kv_cache_config.dtype", "nvfp4"]).kv_bytes_per_token == 36_864


def test_estimator_floors_the_head_product_when_tp_exceeds_kv_heads() -> None:
    """§1.1 `head_dim × kv_heads // tp`: 8 KV heads at TP 16 count 128 × 8 // 16 = 64 per layer (half a
    head), while the manager (§1.2) stores one whole head per rank: the budget is divided by less."""
    model = _model("meta-llama--Llama-3.1-405B.json")
    layout = ParallelLayout(tp=16)
    kv = kv_book(model, layout, range(model.num_layers), "bf16", predict_rules("trtllm").kv_storage)
    assert kv.full_bytes_per_token == 126 * 1 * 128 * 2 * 2 == 64_512
    assert estimator_bytes_per_token(model, layout, kv, _release("1.1.0")) == 2 * 126 * 64 * 2 == 32_256


def test_spring_2025_estimator_took_the_head_width_from_hidden_size() -> None:
    """ESTIMATOR_HEAD_ERAS: gpt-oss has head_dim 64 but hidden 2880 / 64 heads = 45: before 0.20 the
    estimator counted 36 × 8 × 45 × 2 × 2 = 51,840 B; from 0.20 36 × 8 × 64 × 2 × 2 = 73,728 B
    (= the 1.1.0rc3 log's `kv size is 73728`)."""
    assert ESTIMATOR_HEAD_ERAS[1].since == "0.20.0rc0"
    ledger = _plan("openai--gpt-oss-120b.json", [])
    kv = ledger.ranks[0].kv
    assert estimator_bytes_per_token(ledger.model, ledger.layout, kv, _release("0.19.0")) == 51_840
    assert estimator_bytes_per_token(ledger.model, ledger.layout, kv, _release("1.1.0rc3")) == 73_728


# --- §3/§4: the budget against hand arithmetic ---------------------------------------------------


def test_pytorch_budget_is_the_fraction_of_the_memory_free_at_the_profiled_peak() -> None:
    """§3 step 4, §4.1: 78 GiB free before load − 15 GiB weights − 3 GiB profiled peak = 60 GiB;
    × float32(0.9) = 57,982,056,960 B; ÷ 131,072 = 442,367 tokens; ceil to 32 (1.1) = 442,368."""
    ledger = _plan(
        LLAMA_8B,
        ["--engine-version", "1.1.0"],
        free_before_load_bytes=78 * GIB,
        weights_bytes=15 * GIB,
        non_kv_bytes=3 * GIB,
    )
    budget = int(60 * GIB * F32_09)
    assert ledger.engine.kv_budget_bytes == budget == 57_982_056_960
    assert ledger.token_capacity == math.ceil(budget // 131_072 / 32) * 32 == 442_368
    assert ledger.engine.kv_pool_bytes == 442_368 * 131_072


def test_max_tokens_and_max_gpu_total_bytes_cap_the_budget() -> None:
    """§3 step 5: max_tokens × estimator cost, and max_gpu_total_bytes (PR #5933, 1.1) cap the budget."""
    base = ["--engine-version", "1.1.0"]
    measured = {"free_before_load_bytes": 78 * GIB, "weights_bytes": 15 * GIB, "non_kv_bytes": 3 * GIB}
    capped = _plan(LLAMA_8B, [*base, "--kv_cache_config.max_tokens", "100000"], **measured)
    assert capped.token_capacity == math.ceil(100_000 / 32) * 32 == 100_000
    by_bytes = _plan(LLAMA_8B, [*base, "--kv_cache_config.max_gpu_total_bytes", str(10 * GIB)], **measured)
    assert by_bytes.token_capacity == 10 * GIB // 131_072 == 81_920
    before = _plan(
        LLAMA_8B,
        ["--engine-version", "1.0.0", "--kv_cache_config.max_gpu_total_bytes", str(10 * GIB)],
        **measured,
    )  # 1.0 has no max_gpu_total_bytes
    assert before.token_capacity == 442_368
    assert not caps_by_total_bytes(_release("1.0.0")) and caps_by_total_bytes(_release("1.1.0rc0"))


def test_engine_runtime_budget_is_the_fraction_of_free_memory_rounded_up_to_blocks() -> None:
    """§4.2, §10 case 4275: FP8 KV 65,536 B/token, free 17.83 GiB, 0.9f: int(0.9f × A / 65,536) tokens,
    ceil to 32-token blocks."""
    flags = ["--backend", "tensorrt", "--kv_cache_dtype", "fp8", "--tokens_per_block", "32"]
    free = round(17.83 * GIB)
    ledger = _plan(LLAMA_8B, flags, free_after_load_bytes=free)
    tokens = int(F32_09 * free / 65_536)
    assert ledger.kv_bytes_per_token == 32 * 8 * 128 * 2 * 1 == 65_536
    assert ledger.token_capacity == math.ceil(tokens / 32) * 32 == 262_944
    assert ledger.engine.num_blocks == 8_217


# --- each rule that changed, with its era's source ------------------------------------------------


def test_default_backend_by_release() -> None:
    """DEFAULT_BACKEND_ERAS: TensorRT engines before 1.0, the PyTorch backend from 1.0."""
    assert DEFAULT_BACKEND_ERAS[1].since == "1.0.0rc0" and "1.0" in DEFAULT_BACKEND_ERAS[1].source
    assert default_backend(_release("0.19.0")) == "tensorrt"
    assert default_backend(_release("1.1.0rc3")) == "pytorch"
    steps = [step.label for step in _plan(LLAMA_8B, ["--engine-version", "0.19.0"]).engine.steps]
    assert "− execution context, runtime buffers, decoder" in steps


def test_engine_tokens_per_block_by_release() -> None:
    """ENGINE_TOKENS_PER_BLOCK_ERAS: 64 in the 2023–2024 plugin config (docs case logs 64), 32 in 0.19
    (case 4275 logs 32); the PyTorch backend's KvCacheConfig is 32 in every release."""
    assert [era.value for era in ENGINE_TOKENS_PER_BLOCK_ERAS] == [64, 32]
    assert engine_tokens_per_block(_release("0.12.0")) == 64
    assert engine_tokens_per_block(_release("0.19.0")) == 32
    assert _plan(LLAMA_8B, ["--engine-version", "0.12.0"]).engine.page_size == 64
    assert _plan(LLAMA_8B, ["--engine-version", "1.1.0"]).engine.page_size == 32


def test_profile_adds_the_temporary_pool_back_from_mid_2025() -> None:
    """PROFILE_ERAS: spring 2025 `cal_max_tokens` took (total − peak) × F with the temporary pool still
    in the peak; mid-2025 adds it back. With the same measurements the budgets differ by F × the pool:
    8,224 tokens × 131,072 B (ceil(8,194 / 32) = 257 blocks with the overlap scheduler)."""
    assert PROFILE_ERAS[1].since == "0.20.0rc0" and "tmp kv_mem" in PROFILE_ERAS[1].source
    assert (profile_rule(_release("0.19.0")), profile_rule(_release("1.1.0"))) == (
        "peak",
        "peak_plus_temporary_pool",
    )
    measured = {"free_before_load_bytes": 78 * GIB, "weights_bytes": 15 * GIB, "non_kv_bytes": 3 * GIB}
    flags = ["--backend", "pytorch"]
    spring = _plan(LLAMA_8B, [*flags, "--engine-version", "0.19.0"], **measured).engine.kv_budget_bytes
    mid = _plan(LLAMA_8B, [*flags, "--engine-version", "0.20.0"], **measured).engine.kv_budget_bytes
    pool = 8_224 * 131_072
    assert mid == int(60 * GIB * F32_09)
    assert spring == int((60 * GIB - pool) * F32_09)


def test_final_rounding_is_ceil_through_1_1_and_not_pinned_after() -> None:
    """ROUNDING_ERAS: `math.ceil(max_tokens / tokens_per_block)` (mid-2025 tree; the 1.1.0rc3 log of case
    dgxspark rounds its printed 86,711 up to 86,720); the 2026 tree floors, release not pinned (§12)."""
    assert "86,720" in ROUNDING_ERAS[0].source and ROUNDING_ERAS[1].since == "1.2.0rc0"
    assert rounding_rule(_release("1.1.0rc3")) == "ceil"
    assert rounding_rule(_release("1.2.0rc2")) == "either"
    assert round_blocks(86_711, 32, "ceil") * 32 == 86_720
    assert round_blocks(86_711, 32, "floor") * 32 == 86_688
    measured = {"free_before_load_bytes": 78 * GIB, "weights_bytes": 15 * GIB, "non_kv_bytes": 3 * GIB + MIB}
    tokens = int((60 * GIB - MIB) * 0.9) // 131_072  # 1.2: a Python float fraction (FRACTION_ERAS)
    assert (
        tokens % 32
        and _plan(LLAMA_8B, ["--engine-version", "1.2.0rc2"], **measured).token_capacity == tokens // 32 * 32
    )
    assert (
        _plan(LLAMA_8B, ["--engine-version", "1.1.0"], **measured).token_capacity
        == math.ceil(int((60 * GIB - MIB) * F32_09) // 131_072 / 32) * 32
    )


def test_estimation_pool_by_release() -> None:
    """ESTIMATION_ERAS: mid-2025 Σ ceil((len + extra) / tpb): max_num_tokens 8,192 → 257 blocks = 8,224
    tokens (cases dgxspark 1.1.0rc3 and qwen3-8b 1.2.0rc2); the 2026 tree keeps at least max_batch_size
    blocks and the CUDA-graph warm-up (ceil((L + 1) / tpb) + graphs − 1)."""
    assert ESTIMATION_ERAS[1].since == "1.3.0rc0" and "1.2.0rc2" in ESTIMATION_ERAS[1].source
    settings = parse_flags("trtllm", [])
    assert estimation_rule(_release("1.2.0rc2")) == "dummy_requests"
    assert estimation_tokens(settings, 9_193, 32, _release("1.2.0rc2")) == 257 * 32 == 8_224
    assert estimation_tokens(settings, 131_072, 32, _release("1.1.0rc3")) == 8_224
    batch = parse_flags("trtllm", ["--max_batch_size", "64", "--cuda_graph_config.max_batch_size", "64"])
    assert estimation_tokens(batch, 131_072, 32, _release("1.3.0rc0")) == (4_097 + 64 - 1) * 32
    short = parse_flags("trtllm", ["--max_num_tokens", "8192"])  # requests of max_seq_len − 1 = 2,047 tokens
    assert estimation_tokens(short, 2_048, 32, _release("1.1.0")) == (4 * math.ceil(2_049 / 32) + 1) * 32


def test_fraction_is_a_cpp_float_through_1_1() -> None:
    """FRACTION_ERAS: the C++ KvCacheConfig float (the 1.1.0rc3 log prints 0.8999999761581421); the
    2026 tree's pydantic KvCacheConfig is a Python float (not pinned); TensorRT engines always a float."""
    assert "0.8999999761581421" in FRACTION_ERAS[0].source
    assert as_engine_fraction(0.9, _release("1.1.0rc3"), "pytorch") == 0.8999999761581421
    assert as_engine_fraction(0.9, _release("1.2.0rc2"), "pytorch") == 0.9
    assert as_engine_fraction(0.9, _release("1.2.0rc2"), "tensorrt") == 0.8999999761581421


def test_v0_8_engine_prints_tokens_before_block_rounding() -> None:
    """ENGINE_TOKEN_PRINT_ERAS: ≤ v0.8 `Using N tokens in paged KV cache` (case 1400); from v0.9 the
    `Allocated … (N)` line prints blocks × tokens per block."""
    assert ENGINE_TOKEN_PRINT_ERAS[1].since == "0.9.0"
    free = 71 * GIB
    flags = ["--backend", "tensorrt", "--tokens_per_block", "64"]
    old = _plan(
        "meta-llama--Llama-2-7b-hf.json", [*flags, "--engine-version", "0.8.0"], free_after_load_bytes=free
    )
    new = _plan(
        "meta-llama--Llama-2-7b-hf.json", [*flags, "--engine-version", "0.9.0"], free_after_load_bytes=free
    )
    tokens = int(F32_09 * free / 524_288)
    assert (
        (old.token_capacity, new.token_capacity)
        == (tokens, math.ceil(tokens / 64) * 64)
        == (130_867, 130_880)
    )


def test_pipeline_stages_give_the_remainder_to_the_first() -> None:
    """`Mapping.pp_layers`: torch.tensor_split — 'the first n ranks get one extra layer'."""
    ledger = _plan("Qwen--Qwen3-8B.json", ["--pp_size", "5"])  # 36 layers: 8, 7, 7, 7, 7
    assert [rank.layers for rank in ledger.ranks] == [(0, 8), (8, 15), (15, 22), (22, 29), (29, 36)]


def test_the_layout_kvtop_builds_keeps_tensorrt_llms_attention_dp() -> None:
    settings = parse_flags("trtllm", ["--tp_size", "8", "--enable_attention_dp", "--dp", "8"])
    assert layout_from_settings(settings).attn_tp == 1


def test_tp_above_the_kv_heads_is_bounded_by_what_the_pool_really_stores() -> None:
    """Qwen3-30B-A3B (48 layers, 4 KV heads of 128) at TP 8: the estimator counts 128 × 4 // 8 = 64
    elements per head term, 2 × 48 × 64 × 2 B = 12,288 B per token (§1.1), but the pool stores one
    whole head per rank, 2 × 48 × 1 × 128 × 2 B = 24,576 B (§1.2). The budget ÷ the estimator would
    hold twice what fits; §4.1 re-sizes at the pool's own cost from the memory free after the weights:
    int(0.9 × 70 GiB ÷ 24,576 B) = 2,752,512 tokens = 86,016 blocks of 32."""
    model = load_model(str(CONFIGS / "Qwen--Qwen3-30B-A3B.json"))
    settings = parse_flags("trtllm", ["--tp_size", "8"])
    ledger = predict(
        model, settings, gpu_total_bytes=80 * GIB, measured=MeasuredInputs(free_after_load_bytes=70 * GIB)
    )
    assert ledger.kv_bytes_per_token == 24_576
    assert ledger.token_capacity == 2_752_512
    assert ledger.engine.kv_pool_bytes <= int(0.9 * 70 * GIB)  # the pool fits what is free
