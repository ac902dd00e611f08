"""vLLM's `--no-enable-chunked-prefill` and `--no-enable-prefix-caching` (EngineArgs.add_cli_args): kvtop takes
them and sizes the pool as vLLM does. Expected figures are vLLM 0.33.0's own, for the same launch
(tests/data/engine_diff/vllm-0.33.0.flags.json); the 0.13.0 figures are its code's arithmetic, written here."""

from __future__ import annotations

import pytest

from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_check import launch_refusals
from tests.domain.vllm_engine_cases import engine_figures, figures, flag_plan, flag_row

MISTRAL = "mistralai--Mistral-7B-v0.1"  # sliding window 4,096 over every layer
SCOUT = "meta-llama--Llama-4-Scout-17B-16E-Instruct"  # chunked local attention (8,192)
GPT_OSS = "openai--gpt-oss-20b"  # alternating sliding-window (128) and full layers
NEMOTRON_H = "nvidia--Nemotron-H-56B-Base-8K"  # Mamba2 hybrid
QWEN3_NEXT = "Qwen--Qwen3-Next-80B-A3B-Thinking"  # gated-delta-net hybrid
FALCON_H1 = "tiiuae--Falcon-H1-0.5B"  # Mamba2 hybrid


@pytest.mark.parametrize("config", [MISTRAL, SCOUT, GPT_OSS])
def test_chunked_prefill_off_batches_a_whole_context_for_windowed_layers(config: str) -> None:
    """max_num_batched_tokens = max(max_model_len 32,768, 8,192) = 32,768; two batches in flight (async
    scheduling) = 65,536 tokens a windowed group holds blocks for: fewer requests fit, num_blocks unchanged."""
    row = flag_row("no-chunked-prefill", config)
    assert (row["max_num_batched_tokens"], row["max_in_flight_tokens"]) == (32768, 65536)
    ledger = flag_plan("no-chunked-prefill", config)
    assert figures(ledger) == engine_figures(row)
    assert any("max_num_batched_tokens 32,768" in step.label for step in ledger.engine.steps)


def test_mistral_with_chunked_prefill_off_prints_vllms_655040_tokens() -> None:
    """By hand: 40,960 blocks of 16; one request of 32,768 tokens takes cdiv(min(4,095 + 65,536, 32,768), 16)
    + 1 = 2,049 blocks; int(40,960 / 2,049 × 32,768) = 655,040 (1,047,757 with chunked prefill on)."""
    ledger = flag_plan("no-chunked-prefill", MISTRAL)
    assert (ledger.engine.num_blocks, ledger.engine.token_capacity) == (40960, int(40960 / 2049 * 32768))
    assert ledger.engine.token_capacity == 655040


@pytest.mark.parametrize("config", [NEMOTRON_H, QWEN3_NEXT])
def test_prefix_caching_off_gives_a_hybrid_one_mamba_block_per_request(config: str) -> None:
    """mamba_cache_mode 'none' (MambaModelConfig.verify_and_update_config): vLLM's own block size and counts."""
    row = flag_row("no-prefix-cache", config)
    assert figures(flag_plan("no-prefix-cache", config)) == engine_figures(row)


@pytest.mark.parametrize("config", [NEMOTRON_H, QWEN3_NEXT])
def test_prefix_caching_at_a_false_word_is_its_no_spelling(config: str) -> None:
    """`--enable-prefix-caching false` (a value on kvtop's line) is off, as `--enable-chunked-prefill false` and
    `--async-scheduling 0` are (span.flag_switch): vLLM's own figures for `--no-enable-prefix-caching`."""
    assert flag_row("no-prefix-cache", config)["flags"] == ["--no-enable-prefix-caching"]
    ledger = flag_plan("no-prefix-cache", config, flags=["--enable-prefix-caching", "false"])
    assert figures(ledger) == engine_figures(flag_row("no-prefix-cache", config))


@pytest.mark.parametrize("config", [FALCON_H1, NEMOTRON_H, QWEN3_NEXT])
def test_chunked_prefill_off_on_a_hybrid_with_prefix_caching_is_refused_as_vllm_does(config: str) -> None:
    """vLLM 0.33.0 refuses it ('Chunked prefill is required for Mamba prefix caching.'); kvtop names the flag."""
    assert flag_row("no-chunked-prefill", config)["status"] == "refused"
    (refusal,) = launch_refusals(flag_plan("no-chunked-prefill", config))
    assert refusal.field == "--no-enable-chunked-prefill"
    assert "Chunked prefill is required for Mamba prefix caching." in refusal.message


def test_vllm_0_13_takes_chunked_prefill_off_on_a_hybrid() -> None:
    """v0.13.0 keeps prefix caching off for hybrids (is_prefix_caching_supported), so nothing asserts."""
    assert launch_refusals(flag_plan("no-chunked-prefill", FALCON_H1, version="0.13.0")) == ()


def test_mistral_with_chunked_prefill_off_under_vllm_0_13() -> None:
    """v0.13.0 has the same raise (max(32,768, 8,192)) but async scheduling off: one batch of 32,768 in
    flight, cdiv(min(4,095 + 32,768, 32,768), 16) + 1 = 2,049 blocks a request, as in 0.33's two."""
    ledger = flag_plan("no-chunked-prefill", MISTRAL, version="0.13.0")
    assert any(step.label == "tokens in flight: 1 × max_num_batched_tokens 32,768" for step in ledger.engine.steps)


def test_the_flags_are_vllms_and_take_the_no_spelling() -> None:
    settings = parse_flags("vllm", ["--no-enable-chunked-prefill", "--no-enable-prefix-caching"], strict=True)
    assert settings.flags == {"no-enable-chunked-prefill": True, "no-enable-prefix-caching": True}
    assert settings.unknown_flags == ()


def test_the_profiling_batch_follows_chunked_prefill_off() -> None:
    """vLLM profiles the activation peak on max_num_batched_tokens: max(32,768, 8,192) with chunked prefill off
    (the same EngineArgs rule), 8,192 on H100 with it on."""
    from kvtop.domain.calibration.inputs import CalibrationInputs
    from kvtop.domain.engines.versions import ResolvedVersion
    from kvtop.domain.engines.vllm.profile_run import batch_limits
    from kvtop.domain.layout import ParallelLayout

    def tokens(*flags: str) -> int:
        settings = parse_flags("vllm", ["--max-model-len", "32768", *flags], strict=True)
        inputs = CalibrationInputs(
            model=None, settings=settings, layout=ParallelLayout(), gpu_name="H100", gpu_total_bytes=80 << 30,
            version=ResolvedVersion(text="0.33.0"), weights_bytes=0, context_length=32768,
        )  # fmt: skip
        return batch_limits(inputs)[0]

    assert tokens("--no-enable-chunked-prefill") == 32768
    assert tokens() == 8192
    assert tokens("--no-enable-chunked-prefill", "--max-num-batched-tokens", "4096") == 4096
