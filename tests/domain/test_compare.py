"""`kvtop plan --compare` in the domain: one launch under each engine's default rules, and every other
engine given the reference's KV budget per rank.

Expected values are hand arithmetic from the configs and docs/engines/*.md (each test says which
section) on the budgets `plan --engine X` plans for the same launch (`planned_capacity`, judged against the engines'
logs by the calibration corpus tests): every row, and the reference budget the same-budget rows aim at, is `plan`'s.
"""

from __future__ import annotations

import pytest

from kvtop.domain.calibration.estimate import CapacityPlan, planned_capacity
from kvtop.domain.compare import (
    Comparison,
    EngineRow,
    SameBudget,
    SameBudgetMethod,
    check_comparable,
    compare_engines,
    engines_named,
)
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import ENGINE_IDS, engine_rules
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings, parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

MIB = 1 << 20
H100 = 81_559 * MIB  # 85,520,809,984 B (kvtop's H100: NVML's total)
# KV per token per rank, every engine: 80 layers × (K, V) × 8 KV heads ÷ 4 × head_dim 128 × 2 B
LLAMA70_TP4_BPT = 80 * 2 * 2 * 128 * 2  # 81,920 B
# vLLM's latest release (0.34.0): blocks of 64 tokens (config/cache.py:185)
VLLM_BLOCK = 64
# v0.34.0 maps each of Llama-70B's 80 layer regions in whole 2 MiB VMM granules (v1/worker/extensible_kv_cache.py:304-318
# blocks_within): blocks = ⌊available ÷ (80 × 2 MiB)⌋ × 2 MiB ÷ (64 tokens × 1,024 B a layer a token at TP4)
VLLM_GRANULE = 2 * MIB


def vllm_granule_tokens(available: int) -> int:
    return available // (80 * VLLM_GRANULE) * VLLM_GRANULE // (VLLM_BLOCK * LLAMA70_TP4_BPT // 80) * VLLM_BLOCK
# SGLang's automatic fraction (sglang.md §5, the latest era): reserve 512 + 1.5 × chunked 8192 + tp 4 ÷ 8 × 1024
# + 2 × decode graph bs 512 + 8 × 58 prefill-graph sizes = 14,800 MiB; round((81,559 − 14,800) ÷ 81,559, 3) = 0.819.
SGLANG_FRACTION = 0.819


def _model(name: str) -> ModelSpec:
    return load_model(str(CONFIGS / name))


LLAMA70 = _model("meta-llama--Llama-3.1-70B.json")


def _compare(
    model: ModelSpec, engines: str, gpu: str = "H100", measured: MeasuredInputs | None = None, **fields: object
) -> Comparison:
    """The comparison of `engines` ('all' or a comma list), the launch spelled as the first engine's settings."""
    from kvtop.domain.gpus import gpu_total_bytes

    named = engines_named(engines)
    settings = LaunchSettings.model_validate({"engine": named[0], **fields})
    return compare_engines(
        model, settings, named, gpu_total_bytes=gpu_total_bytes(gpu), gpu_name=gpu, measured=measured
    )


def _rows(comparison: Comparison) -> dict[str, EngineRow]:
    return {row.engine: row for row in comparison.rows}


def _same(comparison: Comparison) -> dict[str, SameBudget]:
    return {same.engine: same for same in comparison.same_budget}


def _resolve(engine: str, flags: tuple[str, ...], **measured: int) -> CapacityPlan:
    """The flags a same-budget row prints, parsed as the engine spells them and planned again (`plan`'s solve)."""
    settings = parse_flags(engine, list(flags), strict=True)
    return planned_capacity(LLAMA70, settings, gpu_total_bytes=H100, gpu_name="H100", measured=MeasuredInputs(**measured))


def test_engines_are_named_by_id_or_all_and_a_wrong_name_lists_the_valid_ones() -> None:
    assert engines_named("all") == ENGINE_IDS == ("sglang", "vllm", "lmdeploy", "trtllm", "llamacpp")
    assert engines_named(" trtllm , vllm") == ("trtllm", "vllm")  # the order given: the first is the reference
    for bad, words in (
        ("sglang,tgi", "unknown engine 'tgi' (one of sglang, vllm, lmdeploy, trtllm, llamacpp, or all)"),
        ("vllm,vllm", "vllm is named twice"),
        ("vllm", "two engines or more"),
        ("sglang,,vllm", "an empty engine name"),
        ("vllm,all", "give it alone"),
    ):
        with pytest.raises(InputError, match=words.replace("(", r"\(").replace(")", r"\)")) as error:
            engines_named(bad)
        assert error.value.field == "--compare"


TP_ENGINES = tuple(engine for engine in ENGINE_IDS if engine != "llamacpp")  # llama.cpp has no TP ranks


def test_kv_bytes_per_token_per_rank_under_each_engine() -> None:
    # Llama-3.1-70B TP4: 2 KV heads per rank on every engine (sglang.md §6, vllm.md §3, trtllm.md §1.2,
    # lmdeploy.md §2.1): 80 × 2 × 2 × 128 × 2 = 81,920 B.
    rows = _rows(_compare(LLAMA70, "all", tp=4))
    assert {engine: rows[engine].kv_bytes_per_token for engine in TP_ENGINES} == dict.fromkeys(TP_ENGINES, LLAMA70_TP4_BPT)
    # llama.cpp refuses TP by name (its split modes are not modelled): a row with its reason, no figures
    assert rows["llamacpp"].kv_bytes_per_token is None and "--tp" in (rows["llamacpp"].error or "")
    # Qwen3-30B-A3B (48 layers, 4 KV heads of 128) at TP8: fewer KV heads than ranks, so each rank keeps one
    # whole head (SGLang and vLLM: max(1, 4 ÷ 8); TensorRT-LLM's manager: ceil(4 ÷ 8); TurboMind repeats the
    # heads to the TP size): 48 × 2 × 1 × 128 × 2 = 24,576 B everywhere.
    rows = _rows(_compare(_model("Qwen--Qwen3-30B-A3B.json"), "all", tp=8))
    assert {engine: rows[engine].kv_bytes_per_token for engine in TP_ENGINES} == dict.fromkeys(TP_ENGINES, 24_576)
    # DeepSeek-V3 (MLA, 61 layers) at TP8 on H200: one latent of kv_lora_rank 512 + rope 64 = 576 elements,
    # K only and not split by TP (trtllm.md §1.2; the PyTorch engine of LMDeploy, §4.1): 61 × 576 × 2 = 70,272 B.
    rows = _rows(_compare(_model("deepseek-ai--DeepSeek-V3.json"), "all", gpu="H200", tp=8))
    assert {engine: rows[engine].kv_bytes_per_token for engine in TP_ENGINES} == dict.fromkeys(TP_ENGINES, 70_272)


def _planned(engine: str, measured: MeasuredInputs | None = None, **fields: object) -> CapacityPlan:
    """`plan --engine ENGINE`'s solve of the launch on an H100 (`planned_capacity`, the path the calibration corpus
    judges against the engines' logs): the independent source of each row's budget, which `--compare` must read."""
    settings = LaunchSettings.model_validate({"engine": engine, "tp": 4, **fields})
    return planned_capacity(LLAMA70, settings, gpu_total_bytes=H100, gpu_name="H100", measured=measured)


def test_each_engines_tokens_per_rank_by_hand() -> None:
    rows = _rows(_compare(LLAMA70, "all", tp=4))
    sglang, vllm, lmdeploy, trtllm = (rows[engine] for engine in TP_ENGINES)
    # every row's budget and interval are `plan`'s for the same launch (one truth: the calibrated solve)
    for row in (sglang, vllm, lmdeploy, trtllm):
        plan = _planned(row.engine)
        assert row.kv_budget_bytes == plan.ledger.engine.kv_budget_bytes
        assert row.token_capacity == plan.ledger.token_capacity
        assert (row.token_capacity_min, row.token_capacity_max) == (plan.token_capacity_min, plan.token_capacity_max)
    # The budgets are calibrated (the corpus tests judge them against the engines' logs), so no figure of theirs is
    # written here: each engine's tokens follow from its budget by the engine's own arithmetic, done by hand below.
    # SGLang: the automatic fraction (sglang.md §5) and its tokens: the budget ÷ 81,920 B, page 1 (§4)
    assert sglang.memory_fraction == SGLANG_FRACTION
    assert sglang.token_capacity == (sglang.kv_budget_bytes or 0) // LLAMA70_TP4_BPT
    # vLLM 0.34.0: blocks of 64 tokens in whole 2 MiB granules a layer (extensible_kv_cache.py:304-318)
    assert vllm.token_capacity == vllm_granule_tokens(vllm.kv_budget_bytes or 0)
    # LMDeploy, TurboMind's object cache (lmdeploy.md §3): 64-token blocks
    assert lmdeploy.token_capacity == (lmdeploy.kv_budget_bytes or 0) // (64 * LLAMA70_TP4_BPT) * 64
    # TensorRT-LLM, PyTorch backend (trtllm.md §3, §4.1): ÷ 81,920 B, floored to 32-token blocks
    assert trtllm.token_capacity == (trtllm.kv_budget_bytes or 0) // LLAMA70_TP4_BPT // 32 * 32
    # the memory setting each engine's row names, in its own spelling, and what it is a share of
    assert [(row.memory_fraction_flag, row.memory_fraction) for row in (vllm, lmdeploy, trtllm)] == [
        ("--gpu-memory-utilization", 1.0),
        ("--cache-max-entry-count", 0.8),
        ("--kv_cache_free_gpu_memory_fraction", 0.9),
    ]
    assert "total GPU memory" in vllm.memory_fraction_of and "after the weights" in lmdeploy.memory_fraction_of


def test_same_budget_absolute_settings_land_within_one_block_when_re_solved() -> None:
    comparison = _compare(LLAMA70, "all", tp=4)
    target = comparison.target_kv_budget_bytes
    assert target == _planned("sglang").ledger.engine.kv_budget_bytes  # the reference's planned budget
    assert target is not None
    same = _same(comparison)
    assert list(same) == ["vllm", "lmdeploy", "trtllm"]  # the reference is not matched to itself
    # vLLM: --kv-cache-memory-bytes is the budget (vllm.md §2 Override): whole blocks of 64 × 81,920 B (0.34.0)
    vllm = same["vllm"]
    assert vllm.method is SameBudgetMethod.ABSOLUTE and vllm.reached
    assert vllm.flags == ("--tensor-parallel-size", "4", "--kv-cache-memory-bytes", str(target))
    block = VLLM_BLOCK * LLAMA70_TP4_BPT
    assert vllm.token_capacity == target // block * VLLM_BLOCK
    assert 0 <= target - vllm.kv_budget_bytes < block
    # TensorRT-LLM: kv_cache_config.max_gpu_total_bytes caps the profiled budget (trtllm.md §3 step 5)
    trtllm = same["trtllm"]
    assert trtllm.method is SameBudgetMethod.ABSOLUTE
    assert trtllm.flags == ("--tp_size", "4", "--kv_cache_config.max_gpu_total_bytes", str(target))
    # … which the row says as trtllm-serve takes it (`launch`): serve's --tp_size, the cap in the YAML the line names
    assert trtllm.launch is not None
    assert trtllm.launch.line == ("--tp_size", "4", "--extra_llm_api_options", "extra_llm_api_options.yaml")
    assert trtllm.launch.config == {"kv_cache_config": {"max_gpu_total_bytes": target}}
    assert trtllm.token_capacity == target // LLAMA70_TP4_BPT // 32 * 32
    assert 0 <= target - trtllm.kv_budget_bytes < 32 * LLAMA70_TP4_BPT
    # the flags are the engines' own: parsed back and planned, they give the same tokens and interval
    for row in (vllm, trtllm):
        plan = _resolve(row.engine, row.flags)
        assert (plan.ledger.token_capacity, plan.token_capacity_min, plan.token_capacity_max) == (
            row.token_capacity, row.token_capacity_min, row.token_capacity_max)  # fmt: skip


def test_same_budget_where_no_absolute_setting_exists_searches_the_share_to_three_decimals() -> None:
    # LMDeploy's latest TurboMind (v0.15+ object cache) takes only a share below 1 (lmdeploy.md §1, §3): the
    # largest share whose planned budget is not above the target, to 3 decimals
    comparison = _compare(LLAMA70, "all", tp=4)
    target = comparison.target_kv_budget_bytes or 0
    lmdeploy = _same(comparison)["lmdeploy"]
    assert lmdeploy.method is SameBudgetMethod.SHARE and lmdeploy.reached
    assert lmdeploy.flags[:3] == ("--tp", "4", "--cache-max-entry-count")
    share = float(lmdeploy.flags[3])
    assert round(share, 3) == share and 0 < share < 1  # to three decimals
    at, above = (_planned("lmdeploy", cache_max_entry_count=round(value, 3)).ledger.engine
                 for value in (share, share + 0.001))  # fmt: skip
    assert at.kv_budget_bytes <= target < above.kv_budget_bytes
    blocks = at.kv_budget_bytes // (64 * LLAMA70_TP4_BPT)
    assert lmdeploy.token_capacity == blocks * 64
    assert lmdeploy.kv_budget_bytes == blocks * 64 * LLAMA70_TP4_BPT  # the pool: below the budget by < a block
    assert _resolve("lmdeploy", lmdeploy.flags).ledger.token_capacity == lmdeploy.token_capacity


def test_sglang_takes_the_budget_as_max_total_tokens_a_cap_below_its_own() -> None:
    # With 16 GiB of measured non-KV memory, vLLM's planned budget (the reference) falls below SGLang's; SGLang
    # caps its tokens at that ÷ 81,920 (sglang.md §4), and its pool holds one padding page more (tokens + 1) ×
    # 81,920: within a page of the target.
    measured = MeasuredInputs(non_kv_bytes=16 * GIB)
    comparison = _compare(LLAMA70, "vllm,sglang", tp=4, measured=measured)
    target = _planned("vllm", measured).ledger.engine.kv_budget_bytes
    assert comparison.target_kv_budget_bytes == target
    sglang = _same(comparison)["sglang"]
    tokens = target // LLAMA70_TP4_BPT
    assert tokens < _planned("sglang", measured).ledger.token_capacity  # a cap below its own
    assert sglang.method is SameBudgetMethod.ABSOLUTE
    assert sglang.flags == ("--tp-size", "4", "--max-total-tokens", str(tokens))
    assert sglang.token_capacity == tokens
    assert sglang.kv_budget_bytes == (tokens + 1) * LLAMA70_TP4_BPT
    assert abs(sglang.kv_budget_bytes - target) < LLAMA70_TP4_BPT
    assert _resolve("sglang", sglang.flags, non_kv_bytes=16 * GIB).ledger.token_capacity == tokens


def test_an_engine_that_cannot_hold_the_budget_says_so_with_the_most_it_reaches() -> None:
    # 30 GiB of measured non-KV memory counts for vLLM and TensorRT-LLM, not for SGLang: even at a share of 1
    # their planned budgets are below SGLang's.
    measured = MeasuredInputs(non_kv_bytes=30 * GIB)
    comparison = _compare(LLAMA70, "sglang,vllm,trtllm", tp=4, measured=measured)
    same = _same(comparison)
    vllm = same["vllm"]
    most = _planned("vllm", measured, gpu_memory_utilization=1.0).ledger
    assert most.engine.kv_budget_bytes < (comparison.target_kv_budget_bytes or 0)
    assert vllm.method is SameBudgetMethod.MOST and not vllm.reached
    assert vllm.flags == ("--tensor-parallel-size", "4", "--gpu-memory-utilization", "1")
    assert vllm.token_capacity == vllm_granule_tokens(most.engine.kv_budget_bytes) == most.token_capacity
    # TensorRT-LLM at a fraction of 1: its whole planned free memory after the weights and the 30 GiB
    trtllm = same["trtllm"]
    top = _planned("trtllm", measured, free_gpu_memory_fraction=1.0).ledger
    assert not trtllm.reached and trtllm.kv_budget_bytes == top.engine.token_capacity * LLAMA70_TP4_BPT


def test_a_kv_dtype_carries_only_where_the_engine_has_it_else_that_row_says_why() -> None:
    comparison = _compare(LLAMA70, "all", tp=4, kv_cache_dtype="fp8_e4m3")
    rows = _rows(comparison)
    # SGLang and vLLM store FP8: 80 × 2 × 2 × 128 × 1 = 40,960 B per token per rank
    assert rows["sglang"].kv_bytes_per_token == rows["vllm"].kv_bytes_per_token == 40_960
    assert rows["sglang"].kv_cache_dtype == rows["vllm"].kv_cache_dtype == "fp8_e4m3"
    # TensorRT-LLM spells FP8 KV `fp8` (trtllm.md §2): no silent other number, the row names it
    assert rows["trtllm"].error == (
        "--kv_cache_config.dtype: TensorRT-LLM has no KV cache dtype 'fp8_e4m3' (one of auto, fp8, nvfp4)"
    )
    assert rows["trtllm"].token_capacity is None
    # LMDeploy takes fp8_e4m3 (quant_policy 16), but only its PyTorch engine stores it; Llama runs on TurboMind
    assert "TurboMind has no FP8 KV cache" in (rows["lmdeploy"].error or "")
    assert list(_same(comparison)) == ["vllm"]  # only engines with a plan are matched


def test_an_engine_that_does_not_model_the_launch_is_a_row_message_and_the_others_still_solve() -> None:
    comparison = _compare(_model("Qwen--Qwen3-Next-80B-A3B-Thinking.json"), "all", tp=4)
    rows = _rows(comparison)
    assert "not modelled" in (rows["trtllm"].error or "")
    assert rows["sglang"].fits and rows["lmdeploy"].fits and rows["vllm"].fits  # vLLM's hybrid layout: vllm.md §4.4
    # LMDeploy's PyTorch engine (Qwen3-Next is not TurboMind's) takes the budget as --num-gpu-blocks (§4.3)
    lmdeploy = _same(comparison)["lmdeploy"]
    assert lmdeploy.method is SameBudgetMethod.ABSOLUTE and "--num-gpu-blocks" in lmdeploy.flags


def test_a_reference_without_a_budget_matches_nothing() -> None:
    comparison = _compare(LLAMA70, "all")  # 70B in bf16 on one H100: no engine fits it
    assert not any(row.fits for row in comparison.rows)
    assert comparison.target_kv_budget_bytes is None and comparison.same_budget == ()


@pytest.mark.parametrize("engine", [e for e in ENGINE_IDS if engine_rules(e).memory_fraction_field is not None])
def test_the_engines_own_memory_setting_and_its_version_are_refused(engine: str) -> None:
    rules = engine_rules(engine)
    settings = LaunchSettings.model_validate({"engine": engine, "tp": 4, rules.memory_fraction_field: 0.5})
    with pytest.raises(InputError, match="solves every engine at its defaults") as error:
        check_comparable(settings)
    assert error.value.field == rules.memory_fraction_flag  # named as the engine spells it
    with pytest.raises(InputError, match="latest modelled rules") as error:
        check_comparable(LaunchSettings(engine=engine, engine_version="0.5.0"))
    assert error.value.field == "--engine-version"


def test_what_carries_is_accepted_and_flags_kvtop_does_not_model_are_reported_not_carried() -> None:
    flags = "--tensor-parallel-size 4 --max-model-len 8192 --max-num-seqs 64 --port 8001 --trust-remote-code"
    settings = parse_flags("vllm", flags.split())
    assert check_comparable(settings) == ("--trust-remote-code",)
    rows = _rows(_compare(LLAMA70, "vllm,sglang", tp=4, context_length=8192, max_running_requests=64))
    assert rows["sglang"].max_running_requests == rows["vllm"].max_running_requests == 64


def test_absolute_budget_follows_each_release() -> None:
    def ledger(engine: str, *flags: str, model: ModelSpec = LLAMA70) -> Ledger:
        return predict(model, parse_flags(engine, ["--tp", "4", *flags]), gpu_total_bytes=H100, gpu_name="H100")

    def absolute(solved: Ledger, kv_bytes: int) -> dict[str, int | float] | None:
        return engine_rules(solved.settings.engine).diagnosis.absolute_budget(solved, kv_bytes)

    gib20 = 20 * GIB
    # vLLM: --kv-cache-memory-bytes from v0.10.2 (PR #21489; the v0.10.2 wheel's engine/arg_utils.py:744, none in
    # v0.10.1.1's)
    assert absolute(ledger("vllm"), gib20) == {"kv_cache_memory_bytes": gib20}
    assert absolute(ledger("vllm", "--engine-version", "0.10.2"), gib20) == {"kv_cache_memory_bytes": gib20}
    assert absolute(ledger("vllm", "--engine-version", "0.10.1.1"), gib20) is None
    # TensorRT-LLM: max_gpu_total_bytes from 1.1 (PR #5933), a cap: only below its own budget
    trtllm = ledger("trtllm")
    assert absolute(trtllm, gib20) == {"max_gpu_total_bytes": gib20}
    assert absolute(trtllm, trtllm.engine.kv_budget_bytes + 1) is None
    assert absolute(ledger("trtllm", "--engine-version", "1.0.0"), gib20) is None
    # SGLang: --max-total-tokens, a cap on the tokens: 20 GiB ÷ 81,920 B = 262,144 tokens
    sglang = ledger("sglang")
    assert absolute(sglang, gib20) == {"max_total_tokens": 262_144}
    assert absolute(sglang, sglang.engine.kv_budget_bytes + 1) is None
    # LMDeploy TurboMind: a block count ≥ 1 before v0.15 (20 GiB ÷ (64 × 81,920 B) = 4,096 blocks), none after
    assert absolute(ledger("lmdeploy", "--engine-version", "0.14.0"), gib20) == {"cache_max_entry_count": 4096.0}
    assert absolute(ledger("lmdeploy"), gib20) is None
    # … and its PyTorch engine's --num-gpu-blocks: 64-token blocks of 80 × (K, V) × 2 heads × 128 × 2 B (each
    # descriptor a multiple of 256 B already) = 5,242,880 B → 4,096 blocks
    assert absolute(ledger("lmdeploy", "--backend", "pytorch"), gib20) == {"num_gpu_blocks_override": 4096}
    # … from 0.18.0 only, the first release whose CLI declares it (the 0.18.0 wheel's cli/utils.py:536-539; no
    # --num-gpu-blocks in the 0.17.0 wheel's cli/): before, no option sets a count
    assert absolute(ledger("lmdeploy", "--backend", "pytorch", "--engine-version", "0.18.0"), gib20) == {
        "num_gpu_blocks_override": 4096}
    assert absolute(ledger("lmdeploy", "--backend", "pytorch", "--engine-version", "0.17.0"), gib20) is None


WHISPER = _model("families/openai--whisper-large-v3.json")  # decoder max_target_positions 448, no context key


def test_the_header_context_is_the_reference_engines_even_where_it_cannot_plan() -> None:
    """One truth: `Comparison.context_length` is the reference engine's `context_length` rule. SGLang runs
    Whisper at 2,048 (0.5.23 get_context_length's fallback: WhisperConfig holds none of CONTEXT_LENGTH_KEYS);
    vLLM and TensorRT-LLM at the config's 448 positions. At TP 8 (20 heads ÷ 8) no engine plans the launch,
    and the header still says SGLang's 2,048, not the config's 448."""
    assert _compare(WHISPER, "sglang,vllm").context_length == 2048
    assert _compare(WHISPER, "vllm,sglang").context_length == 448
    failed = _compare(WHISPER, "sglang,trtllm", tp=8)
    assert all(row.error for row in failed.rows)
    assert failed.context_length == 2048
    # TensorRT-LLM models no encoder-decoder KV: its row fails, and the header is its 448, not SGLang's 2,048
    assert _compare(WHISPER, "trtllm,sglang").context_length == 448
