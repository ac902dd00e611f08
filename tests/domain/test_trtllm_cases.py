"""`kvtop explain` over the TensorRT-LLM cases in tests/data/cases/trtllm, each as its case.json's
`worked_check` says: a match from the memory the log printed, or the reason the log allows none —
with the pool sizes the log prints checked against the bytes per token either way."""

from __future__ import annotations

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import VersionSource
from kvtop.domain.explain import Explanation, explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.launch import parse_flags
from kvtop.domain.wording import GIB
from kvtop.sources.engine_logs import parse_engine_log, read_engine_log
from kvtop.sources.hub import load_model
from tests.conftest import CASES, CONFIGS


def _explain(case: str, config: str, *flags: str) -> tuple[Explanation, EngineLog]:
    """As `kvtop explain LOG --model CONFIG FLAGS` runs it: the log's version unless a flag gives one."""
    log = read_engine_log(CASES / "trtllm" / case / "engine.log")
    version = engine_rules("trtllm").resolve_version(log)
    settings = parse_flags("trtllm", list(flags)).model_copy(update={"engine_version": version.text})
    result = explain(ExplainRequest(
        log=log, model=load_model(str(CONFIGS / config)), settings=settings, version=version,
    ))
    return result, log


def test_dgxspark_1_1_0rc3_matches_from_its_profiled_budget_and_rounds_up() -> None:
    """worked_check: (119.70 − 113.65 + 0.56) × float32(0.9) = 5.949 → '5.95'; floor(5.95 GiB / 73,728)
    ∈ [86,580, 86,725]; ceil to 32 ∈ [86,592, 86,752] ∋ 86,720; the printed 86,711 rounds up to it."""
    result, _ = _explain("trtllm-dgxspark-gptoss120b-v110rc3", "openai--gpt-oss-120b.json")
    assert result.engine_version.text == "1.1.0rc3" and result.engine_version.source is VersionSource.LOG
    assert result.verdict == "match" and result.logged.token_capacity == 86_720
    assert (result.token_capacity_min, result.token_capacity_max) == (86_592, 86_752)
    assert result.kv_bytes_per_token == 36 * 8 * 64 * 2 * 2 == 73_728
    assert [(c.logged_text, c.tokens, c.within_rounding) for c in result.pool_checks] == [
        ("5.95", 86_720, True),
        ("0.56", 8_224, True),
    ]  # the real pool first, then the profiling run's
    notes = " | ".join(result.notes)
    assert "kv size per token 73,728 B = kvtop's estimator cost 73,728 B" in notes
    assert "logged 8,224 tokens = kvtop's 8,224" in notes
    assert "max_tokens 86,711: ceil → 86,720, floor → 86,688; logged 86,720: the engine rounds up" in notes


def test_4275_engine_0_19_matches_with_its_fp8_kv() -> None:
    """worked_check: 32 × 8 × 128 × 2 × 1 = 65,536 B; available 17.83 GiB → maxTokens ∈ [262,840, 262,987]
    → ceil to 32: [262,848, 263,008] ∋ 263,008 (8,219 blocks)."""
    result, _ = _explain(
        "trtllm-4275-llama31-8b-fp8kv-rtx5090-v019",
        "meta-llama--Llama-3.1-8B-Instruct.json",
        "--kv_cache_dtype",
        "fp8",
    )
    assert result.engine_version.label == "~0.19.0" and result.engine_version.approximate
    assert result.verdict == "match"
    assert (result.token_capacity_min, result.token_capacity_max) == (262_848, 263_008)
    assert result.pool_checks[0].predicted_bytes_per_token == 65_536 and result.pool_checks[0].within_rounding
    # the fraction as the launch states it (trtllm-serve's default 0.9, case.json), the C++ float the engine
    # multiplies (0.9f = 0.89999997615814208984375) noted once beside it: it printed "0.899999976"
    assert result.ledger is not None
    (step,) = [step for step in result.ledger.engine.steps if "free_gpu_memory_fraction" in step.label]
    assert (step.label, step.note) == (
        "× free_gpu_memory_fraction 0.9, default (not in the log)", "the engine multiplies it as a C++ float, 0.899999976"
    )


def test_4275_without_its_kv_dtype_names_what_would_rebuild_it_and_that_the_log_cannot_tell() -> None:
    """BF16 KV would give 131,072 B/token: half the tokens. FP8 KV and TP 2 each rebuild the log's
    figures; a single-rank C++ log states neither. Each is said as TensorRT-LLM 0.19 takes it: the log's C++ runtime
    serves a built TensorRT engine, whose KV dtype and block are the build's (quantize.py `--kv_cache_dtype`,
    trtllm-build `--tokens_per_block`), and TP is serve's `--tp_size`; never kvtop's `--kv_cache_config.dtype`, an
    option trtllm-serve does not declare."""
    result, _ = _explain(
        "trtllm-4275-llama31-8b-fp8kv-rtx5090-v019", "meta-llama--Llama-3.1-8B-Instruct.json"
    )
    assert result.verdict == "mismatch" and result.cause_flags is None
    cause = result.cause or ""
    assert cause.startswith("cause not settled: ")
    # each build flag by its tool: the case's own build ran `quantize.py --qformat fp8 --kv_cache_dtype fp8` (case.json)
    assert ("KV dtype fp8 (not auto) (the engine's build: quantize.py --kv_cache_dtype fp8; trtllm-build "
            "--tokens_per_block 32)") in cause
    assert "TP 2 (not 1) (--tp_size 2 · the engine's build: trtllm-build --tokens_per_block 32)" in cause
    assert "--kv_cache_config." not in cause


def test_docs_memory_md_4060_blocks_matches_with_the_inferred_fp8_geometry() -> None:
    """worked_check: int(0.9f × 70.48 GiB / 262,144) ∈ [259,799, 259,835] → ceil(/64) = 4,060 for the
    whole interval → 259,840 tokens (floor would give 4,059)."""
    result, log = _explain(
        "trtllm-docs-memory-md-4060-blocks", "meta-llama--Llama-2-7b-hf.json", "--kv_cache_dtype", "fp8"
    )
    assert result.verdict == "match"
    assert result.token_capacity_min == result.token_capacity_max == 259_840 == 4_060 * 64
    assert (
        result.ledger is not None and result.ledger.engine.page_size == 64
    )  # `Number of tokens per block: 64.`
    assert (
        result.pool_checks[0].predicted_bytes == 259_840 * 262_144
        and result.pool_checks[0].logged_text == "63.44"
    )


def test_kimi_k25_pool_is_the_fp8_mla_latent_and_the_budget_lines_were_cut() -> None:
    """worked_check: 61 × (512 + 64) × 1 B = 35,136 B; 5,073,376 × 35,136 B = 166.016 GiB → '166.02';
    no budget line in the excerpt: geometry only."""
    result, _ = _explain(
        "trtllm-kimi-k25-mla-fp8-test-output",
        "moonshotai--Kimi-K2-Instruct.json",
        "--kv_cache_config.dtype",
        "fp8",
    )
    assert result.verdict == "insufficient" and "available KV cache memory" in result.missing[0]
    check = result.pool_checks[0]
    assert (check.tokens, check.predicted_bytes_per_token, check.within_rounding) == (5_073_376, 35_136, True)


def test_kimi_k25_without_a_kv_dtype_names_fp8_from_the_pool_size() -> None:
    """BF16 would be 332 GiB for the same tokens; of the single changes only FP8 KV prints '166.02'."""
    result, _ = _explain("trtllm-kimi-k25-mla-fp8-test-output", "moonshotai--Kimi-K2-Instruct.json")
    assert result.verdict == "mismatch"
    flags = " ".join(result.cause_flags or ())
    assert "--kv_cache_config.dtype fp8" in flags and (result.cause or "").startswith(
        "KV dtype fp8 (not auto)"
    )


def test_qwen3_8b_1_2_0rc2_reads_the_last_pool_and_checks_the_estimation_pool() -> None:
    """worked_check: the first `Allocated` (8,224 = ceil(8,193 / 32) × 32) is the profiling run's; the
    capacity is the last (1,444 × 32 = 46,208); 36 × 8 × 128 × 2 × 1 = 73,728 B for both; no budget line."""
    result, _ = _explain(
        "trtllm-qwen3-8b-fp8-v120rc2-estimation", "Qwen--Qwen3-8B.json", "--kv_cache_config.dtype", "fp8"
    )
    assert result.engine_version.text == "1.2.0rc2"  # `TensorRT LLM version:` (no hyphen)
    assert result.logged.token_capacity == 46_208 and result.verdict == "insufficient"
    assert [(c.logged_text, c.tokens, c.within_rounding) for c in result.pool_checks] == [
        ("3.17", 46_208, True),
        ("0.56", 8_224, True),
    ]
    assert any("logged 8,224 tokens = kvtop's 8,224" in note for note in result.notes)


def test_1400_v0_8_pool_bytes_are_exact_and_the_free_memory_is_not_printed() -> None:
    """worked_check: 69,524,783,104 / 132,608 = 524,288 B/token exactly (32 × 32 × 128 × 2 × 2)."""
    result, _ = _explain("trtllm-1400-llama7b-sq-beam5-v08", "meta-llama--Llama-2-7b-hf.json")
    assert result.engine_version.label == "~0.8.0"
    assert result.verdict == "insufficient" and "≤ v0.8 prints none" in result.missing[0]
    check = result.pool_checks[0]
    assert (check.logged_bytes, check.predicted_bytes, check.within_rounding) == (69_524_783_104,) * 2 + (
        True,
    )


def test_a_multi_rank_log_is_sized_from_its_least_budget_and_dated_in_its_own_format() -> None:
    """Hand-made from the 1.1.0rc3 wording (§7) with `[RANK n]` prefixes as trtllm-serve prints them under
    MPI: the least `available` (RANK 1) sizes every rank; with no version line the date (MM/DD/YYYY)
    maps to the release on PyPI then."""
    line = (
        "[12/20/2025-04:21:51] [TRT-LLM] [RANK {rank}] [I] Peak memory during memory usage profiling "
        "(torch + non-torch): 60.00 GiB, available KV cache memory when calculating max tokens: {a} GiB, "
        "fraction is set 0.8999999761581421, kv size is 131072. device total memory 79.65 GiB, , tmp kv_mem 1.00 GiB"
    )
    text = "\n".join(
        [
            line.format(rank=0, a="15.00"),
            line.format(rank=1, a="14.00"),
            "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 14.00 GiB for max tokens in paged KV cache (114688).",
        ]
    )
    log = parse_engine_log(text)
    version = engine_rules("trtllm").resolve_version(log)
    assert (version.text, version.source) == ("1.1.0", VersionSource.LOG_DATES)  # 1.1.0: 2025-12-19 on PyPI
    settings = parse_flags("trtllm", ["--tp_size", "2"]).model_copy(update={"engine_version": version.text})
    result = explain(ExplainRequest(
        log=log, model=load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")), settings=settings,
        version=version,
    ))
    assert result.logged.available_kv_rank == "rank=1" and result.logged.available_kv_bytes == 14 * GIB
    # 14 GiB / (32 × 4 × 128 × 2 × 2 = 65,536 B at TP 2) = 229,376 tokens: the log's 114,688 is half that
    assert result.verdict == "mismatch" and result.token_capacity == 229_376


def test_the_logs_inferred_max_seq_len_is_the_one_context_the_ledger_and_the_pool_note_read() -> None:
    """One truth: `max_seq_len is not specified, using inferred value N` is the context the ledger runs with
    (its full-context figures) and the one the temporary-pool note sizes its dummy requests with. The DGX Spark
    log, its inferred 131,072 edited to 4,096 (gpt-oss-120b's config says 131,072: the two would differ): dummy
    requests of min(8,192, 4,096 − 1) = 4,095 tokens, 4,095 + 4,095 + 2, each + 2 (1 generated, + 1 overlap
    scheduler, mid-2025 `_get_token_num_for_estimation`) rounded up to 32-token blocks: 129 + 129 + 1 = 259 blocks
    = 8,288 tokens (the log's 8,224 was sized at 131,072: one request of 8,192 → 257 blocks)."""
    text = (CASES / "trtllm" / "trtllm-dgxspark-gptoss120b-v110rc3" / "engine.log").read_text()
    log = parse_engine_log(text.replace("using inferred value 131072", "using inferred value 4096"))
    version = engine_rules("trtllm").resolve_version(log)
    settings = parse_flags("trtllm", []).model_copy(update={"engine_version": version.text})
    model = load_model(str(CONFIGS / "openai--gpt-oss-120b.json"))
    result = explain(ExplainRequest(log=log, model=model, settings=settings, version=version))
    assert model.max_position_embeddings == 131_072
    assert result.ledger is not None and result.ledger.context_length == 4_096
    assert any("logged 8,224 tokens ≠ kvtop's 8,288" in note for note in result.notes)
