"""`probe`'s bytes-per-token line gives both figures in bytes: it printed 'measured 131,138 B … · predicted 131,072',
the predicted figure without its unit beside the measured one with it (an operator trial, session 48)."""

from __future__ import annotations

from kvtop.commands.probe import render_probe_result
from kvtop.domain.probe import MeasuredPerToken, ProbeOutcome, ProbeResult


def test_the_predicted_bytes_per_token_carry_their_unit() -> None:
    # Llama-3.1-8B (tests/data/configs): 32 layers × 2 (K, V) × 8 KV heads × 128 × 2 B (bf16) = 131,072 B a token;
    # 4,297,113,600 B over 32,768 tokens is 131,137.5, shown whole as 131,138 B
    measured = MeasuredPerToken(total_bytes=4_297_113_600, tokens=32_768)
    result = ProbeResult(
        outcome=ProbeOutcome.OK, message="", device="cpu", tokens_allocated=32_768,
        bytes_allocated=4_297_113_600, bytes_per_token_predicted=131_072, measured=measured,
    )  # fmt: skip
    line = next(row for row in render_probe_result(result).splitlines() if "bytes/token" in row)
    assert line == (
        "  bytes/token    measured 131,138 B (4,297,113,600 B ÷ 32,768 tokens) · predicted 131,072 B "
        "(+0.05%, padding page included)"
    )


def test_the_fill_header_says_what_a_fill_does() -> None:
    """An operator trial: a fill's header read 'fill mode (fill)', the mode named twice and its target not at all."""
    result = ProbeResult(
        outcome=ProbeOutcome.OK, message="filled 8,192 tokens, keeping the reserve free", device="cpu",
        mode="fill", tokens_allocated=8192, bytes_allocated=8192 * 131_072, page_size=16,
    )  # fmt: skip
    header = render_probe_result(result).splitlines()[0]
    assert header == "kvtop probe · cpu · fill mode (as many tokens as fit above the reserve) · page 16"


def test_the_tokens_header_names_its_target() -> None:
    result = ProbeResult(
        outcome=ProbeOutcome.OK, message="", device="cpu", target_tokens=20_000, tokens_allocated=20_000,
        bytes_allocated=20_000 * 131_072, page_size=16,
    )  # fmt: skip
    header = render_probe_result(result).splitlines()[0]
    assert header == "kvtop probe · cpu · tokens mode (target 20,000) · page 16"
