"""`kvtop explain` over LMDeploy's real logs (tests/data/cases/lmdeploy, docs/engines/lmdeploy.md §8): each
case's worked check — the geometry against the printed block size, the count when the free memory (or,
for v0.1.0, the total) is given, and the named reason when the log does not allow a match."""

from __future__ import annotations

import pytest

from kvtop.commands.explain import settings_typed_for_log
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.lmdeploy.eras import resolve_version
from kvtop.domain.engines.versions import VersionSource
from kvtop.domain.explain import Explanation, explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.wording import GIB
from kvtop.sources.engine_logs import parse_engine_log, read_engine_log
from kvtop.sources.hub import load_model
from tests.cli_in_process import run_kvtop
from tests.conftest import CASES, CONFIGS

MIB = 1 << 20
CASE_1703 = "lmdeploy-1703-internlm-chat-20b-w4-3090-v042"
CASE_3411 = "lmdeploy-3411-internvl25-8b-a100-80g"
CASE_3950 = "lmdeploy-3950-gptoss20b-int4kv-2080maxq"
CASE_4285 = "lmdeploy-4285-internvl3-78b-tp8-a800"
TUTORIAL = "lmdeploy-tutorial-v010-internlm-chat-7b-vgpu"
CONFIG = {
    CASE_1703: "internlm--internlm-20b.json",
    # InternVL2.5-8B's language model is InternLM2.5-7B: 32 layers, 8 KV heads × 128 — Llama-3.1-8B's KV geometry
    CASE_3411: "meta-llama--Llama-3.1-8B.json",
    CASE_3950: "openai--gpt-oss-20b.json",
    CASE_4285: "Qwen--Qwen2.5-72B.json",  # InternVL3-78B's language model (case.json config_note)
    # internlm-chat-7b: 32 layers, 32 heads (MHA) × 128 — Llama-2-7B's KV geometry (no InternLM-7B config here)
    TUTORIAL: "meta-llama--Llama-2-7b-hf.json",
}


def _explain(case: str, *flags: str, free: int | None = None, gpu_total: int | None = None) -> Explanation:
    """As `kvtop explain LOG --model CONFIG FLAGS [--free-after-load F]` reads it: the log's printed config,
    its version (a flag wins), then the flags."""
    log = read_engine_log(CASES / "lmdeploy" / case / "engine.log")
    printed = {**log.server_args, **dict(decision.split("=", 1) for decision in log.decisions)}
    settings = settings_typed_for_log(printed, "lmdeploy", list(flags), str(CONFIGS / CONFIG[case]))[0]
    if settings.engine_version is None:
        settings = settings.model_copy(update={"engine_version": resolve_version(log).text})
    model = load_model(str(CONFIGS / CONFIG[case]))
    return explain(ExplainRequest(
        log=log, model=model, settings=settings, gpu_total_bytes=gpu_total,
        given=MeasuredInputs(free_after_load_bytes=free),
    ))


def _block_check(result: Explanation) -> tuple[str, int, bool]:
    check = result.pool_checks[0]
    return check.logged_text, check.predicted_bytes, check.within_rounding


@pytest.mark.parametrize(
    ("case", "text", "block_bytes", "blocks", "tokens", "free_mib"),
    [
        (CASE_1703, "75", 78_643_200, 118, 7_552, (11_062.5, 11_156.25)),
        (CASE_3411, "8.000", 8_388_608, 6_214, 397_696, (62_140, 62_150)),
        (CASE_3950, "0.844", 884_736, 1_740, 111_360, (1.79214 * 1024, 1.79318 * 1024)),
    ],
)
def test_without_the_free_memory_the_log_allows_no_match_and_says_what_the_count_implies(
    case: str, text: str, block_bytes: int, blocks: int, tokens: int, free_mib: tuple[float, float]
) -> None:
    """TurboMind prints no free memory before v0.15 (§2.4): the geometry is checked, the count is not."""
    result = _explain(case)
    assert (result.logged.num_gpu_blocks, result.logged.token_capacity) == (blocks, tokens)
    assert _block_check(result) == (text, block_bytes, True)
    assert result.verdict == "insufficient" and "--free-after-load" in result.missing[0]
    implied = next(note for note in result.notes if "imply" in note)
    low, high = (float(part) for part in implied.split("imply ")[1].split(" GiB")[0].split("–"))
    assert free_mib[0] / 1024 - 0.005 <= low <= high <= free_mib[1] / 1024 + 0.005


@pytest.mark.parametrize(
    ("case", "free", "blocks"),
    [
        (CASE_1703, 11_100 * MIB, 118),  # case.json: free ∈ [11,062.5, 11,156.25) MiB
        (CASE_3411, 62_145 * MIB, 6_214),  # free ∈ [62,140, 62,150) MiB
        (CASE_3950, int(1.7925 * GIB), 1_740),  # free ∈ [1.7921, 1.7932) GiB
    ],
)
def test_with_the_free_memory_the_count_matches(case: str, free: int, blocks: int) -> None:
    """§2.2: size_t(free × 0.8) // block_bytes, the free memory given as --free-after-load."""
    result = _explain(case, free=free)
    assert result.verdict == "match" and result.logged.num_gpu_blocks == blocks
    assert result.ledger is not None and result.ledger.engine.num_blocks == blocks


def test_3950_truncated_session_length_is_the_block_count() -> None:
    """The log's `session_len` truncation to 111,360 = 1,740 × 64 (§2.3); int4 from the printed quant_policy=4."""
    result = _explain(CASE_3950)
    assert "the log truncates session_len 131,072 → 111,360 = the blocks × block length" in result.notes
    assert result.kv_bytes_per_token == 24 * 8 * 2 * 36


def test_4285_block_size_says_tp_8_the_log_never_prints() -> None:
    """At TP 1 the 80-layer block would be 20 MiB, not the printed 2.500: TP 8 (1 KV head per rank) rebuilds it."""
    result = _explain(CASE_4285)
    assert result.verdict == "mismatch" and _block_check(result)[1:] == (20_971_520, False)
    assert result.cause is not None and result.cause.startswith("TP 8 (not 1): with it kvtop rebuilds the logged pool sizes")
    at_tp8 = _explain(CASE_4285, "--tp", "8")
    assert at_tp8.verdict == "insufficient" and _block_check(at_tp8) == ("2.500", 2_621_440, True)
    assert at_tp8.logged.ranks_seen == 2  # the excerpt keeps two of the eight per-thread triples
    matched = _explain(CASE_4285, "--tp", "8", free=61_223 * MIB)  # free ∈ [61,221.9, 61,225.0) MiB
    assert matched.verdict == "match" and matched.token_capacity == 19_591 * 64


def test_tutorial_v0_1_0_matches_from_the_total_memory() -> None:
    """v0.1.0 (the tutorial's `lmdeploy[all]==v0.1.0`): size_t(20,470 MiB × 0.5) // 64 MiB = 159 blocks of 128."""
    result = _explain(TUTORIAL, "--engine-version", "0.1.0", gpu_total=20_470 * MIB)
    assert result.verdict == "match" and result.token_capacity == 159 * 128 == result.logged.token_capacity
    assert _block_check(result) == ("64", 67_108_864, True)
    no_total = _explain(TUTORIAL, "--engine-version", "0.1.0")
    assert no_total.verdict == "insufficient" and "total memory" in no_total.missing[0]


def test_tutorial_without_its_version_names_both_readings_it_allows() -> None:
    """Its lines only bound the release (integer MiB print: before v0.8.0); at v0.7.3's 64-token blocks the
    printed 64 MB cannot be; 128-token blocks, or v0.1.0–v0.2.1 (whose default they are), rebuild it."""
    result = _explain(TUTORIAL)
    assert result.verdict == "mismatch" and (result.cause or "").startswith("cause not settled:")
    assert "block length 128" in (result.cause or "") and "v0.1.0–v0.2.1" in (result.cause or "")


@pytest.mark.parametrize(
    ("case", "label", "source"),
    [
        (CASE_1703, "~0.4.2", VersionSource.LOG_DATES),  # 2024-06-05: 0.4.2 (2024-05-27) was out
        (CASE_3950, "~0.10.0", VersionSource.LOG_DATES),  # 2025-09-09: v0.10.0's day
        (CASE_4285, "~0.11.1", VersionSource.LOG_DATES),  # 2026-02-02: 0.11.1 (2025-12-24)
        (CASE_3411, "~0.14.0", VersionSource.LOG),  # no date; '%.3f MB' (v0.8.0+), no v0.15 object cache
        (TUTORIAL, "~0.7.3", VersionSource.LOG),  # no date; integer 'MB' (before v0.8.0)
    ],
)
def test_version_from_the_logs_dates_or_lines(case: str, label: str, source: VersionSource) -> None:
    version = resolve_version(read_engine_log(CASES / "lmdeploy" / case / "engine.log"))
    assert (version.label, version.source) == (label, source)


def test_a_date_the_lines_rule_out_gives_way_to_the_lines() -> None:
    """Dated 2025-01-01 (→ 0.6.5) but printing '%.3f MB' (v0.8.0+, commit 63b13e834): the lines win."""
    log = parse_engine_log(
        "2025-01-01 10:00:00,000 - lmdeploy - INFO - start\n[TM][INFO] [BlockManager] block_size = 8.000 MB\n"
        "[TM][INFO] [BlockManager] max_block_count = 10\n"
    )
    assert resolve_version(log).label == "~0.14.0"


def test_the_cli_explains_a_case_and_exits_0() -> None:
    result = run_kvtop("explain", str(CASES / "lmdeploy" / CASE_3950 / "engine.log"),
                       "--model", str(CONFIGS / CONFIG[CASE_3950]), "--free-after-load", "1.7925GiB")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "rules of ~0.10.0" in result.stdout and "block size: logged 0.844 MiB" in result.stdout
    assert result.stdout.splitlines()[-2].startswith("verdict: MATCH")


def test_flags_read_from_the_printed_engine_config() -> None:
    """3950's `TurbomindEngineConfig(…)`: quant_policy=4, cache_block_seq_len=64, max_batch_size=128, 0.8."""
    log = read_engine_log(CASES / "lmdeploy" / CASE_3950 / "engine.log")
    printed = {**log.server_args, **dict(decision.split("=", 1) for decision in log.decisions)}
    settings = settings_typed_for_log(printed, "lmdeploy", [], None)[0]
    assert (settings.backend, settings.kv_cache_dtype, settings.page_size) == ("turbomind", "4", 64)
    assert (settings.max_running_requests, settings.cache_max_entry_count, settings.cache_chunk_size) == (128, 0.8, -1)
    assert settings.to_flags() == [
        "--backend", "turbomind", "--cache-max-entry-count", "0.8", "--max-batch-size", "128",
        "--cache-block-seq-len", "64", "--max-prefill-token-num", "8192", "--quant-policy", "4",
    ]  # fmt: skip


def test_an_implied_free_memory_narrower_than_a_hundredth_of_a_gib_keeps_both_ends_apart() -> None:
    """lmdeploy#4285 (case.json `implied_free`): 19,591 blocks of 2.5 MiB at 0.8 put the free memory in
    [61,221.9, 61,225.0) MiB, i.e. 59.787–59.790 GiB: written with a third decimal, not '59.79 GiB – 59.79 GiB'."""
    from kvtop.domain.engines.lmdeploy.explain import _implied_free

    assert _implied_free(19_591, 2_621_440, 0.8) == (
        "19,591 blocks of 2,621,440 B at ratio 0.8 imply 59.787–59.790 GiB free after the weights (least over the ranks)"
    )
