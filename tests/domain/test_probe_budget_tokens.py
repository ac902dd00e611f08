"""ProbeResult.budget_tokens and gib_per_second: the tokens a probe's budget holds at the predicted bytes per token (the
ledger's planned figure for a fill) and the allocation rate both probe views show."""

from __future__ import annotations

from kvtop.domain.probe import ProbeOutcome, ProbeResult
from kvtop.domain.wording import GIB

# Llama-3-8B's KV per token in BF16: 32 layers × 8 KV heads × 128 dims × (K + V) × 2 B (its config.json)
LLAMA3_8B_BYTES_PER_TOKEN = 32 * 8 * 128 * 2 * 2


def _fill(budget_bytes: int | None, per_token: int) -> ProbeResult:
    return ProbeResult(outcome=ProbeOutcome.OK, message="", device="cuda:0", mode="fill",
                       bytes_per_token_predicted=per_token, budget_bytes=budget_bytes)  # fmt: skip


def test_a_gib_of_llama3_8b() -> None:
    """1 GiB at 131,072 B a token holds 8,192 tokens; a byte less holds one token fewer."""
    assert _fill(GIB, LLAMA3_8B_BYTES_PER_TOKEN).budget_tokens == 8192
    assert _fill(GIB - 1, LLAMA3_8B_BYTES_PER_TOKEN).budget_tokens == 8191


def test_no_figure_without_a_budget_or_a_prediction() -> None:
    """A budget spent below zero holds no token; no budget or no predicted bytes per token gives no figure."""
    assert _fill(-GIB, LLAMA3_8B_BYTES_PER_TOKEN).budget_tokens == 0
    assert _fill(None, LLAMA3_8B_BYTES_PER_TOKEN).budget_tokens is None
    assert _fill(GIB, 0).budget_tokens is None


def test_gib_per_second() -> None:
    """4 GiB allocated and touched in 0.5 s: 8 GiB/s (0.125 s a GiB); nothing allocated gives no rate."""
    done = _fill(GIB, LLAMA3_8B_BYTES_PER_TOKEN).model_copy(update={"bytes_allocated": 4 * GIB, "seconds": 0.5})
    assert done.gib_per_second == 8.0
    assert _fill(GIB, LLAMA3_8B_BYTES_PER_TOKEN).gib_per_second is None
