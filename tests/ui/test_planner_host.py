"""The planner on hosts that hold part of the GPU's memory (#27): a unified-memory GB10 where vLLM's start is refused
at the assumed host share, said as `kvtop plan` says it; and the `desktop` setting, what `kvtop plan --desktop` says,
as a what-if field.

A desktop sharing the card (Windows, WSL2) holds up to DESKTOP_HELD_BYTES (about 0.38 GiB) beyond a Linux server's before the engine starts
(host_memory.py `DESKTOP_HELD_BYTES`: the RTX 3090 WSL2 SGLang start's 0.82 GiB held less the 0.45 GiB context fit). kvtop does not model it: the plan's
low end takes it, its centre does not. The fake node is SGLang 0.5.9 serving Llama-3-70B at TP8 on H100s (fakes.py).
"""

from __future__ import annotations

import json

import pytest
from textual.widgets import Select

from kvtop.cli import main
from kvtop.domain.calibration.host_memory import DESKTOP_HELD_BYTES
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_model
from kvtop.ui.planning import field_texts, plan
from kvtop.ui.widgets.plan_result import outcome_table
from tests.calibrated_figures import llama_70b_tokens
from tests.test_cli_plan_host import AT_088_TOKENS
from tests.ui.fakes import LLAMA_70B_CONFIG
from tests.ui.helpers import shown

TP8_TOKENS = llama_70b_tokens(8)  # the fake node's SGLang TP8 plan (tests/calibrated_figures.py)

DESKTOP_BYTES = DESKTOP_HELD_BYTES  # fitted by run.py: 380–389 MiB in session 51
TOKEN_BYTES = 40_960  # Llama-3-70B at TP8: 80 layers × 2 × 1 KV head × 128 × 2 B


def cli_low_end(capsys: pytest.CaptureFixture[str], *flags: str) -> int:
    args = ["plan", "--json", "--no-calibration-store", "--model", str(LLAMA_70B_CONFIG), "--engine", "sglang",
            "--tp-size", "8", "--engine-version", "0.5.9", "--gpu", "H100", *flags]  # fmt: skip
    assert main(args) == 0
    return int(json.loads(capsys.readouterr().out)["token_capacity_min"])


async def test_the_desktop_field_moves_the_low_end_as_plan_desktop_does(
    planner_on, capsys: pytest.CaptureFixture[str]
) -> None:
    """SGLang's pool is the free memory before the load × its fraction (0.818 at TP8 on an H100) less the weights
    (docs/engines/sglang.md §4), so DESKTOP_HELD_BYTES less free is 0.818 × it ÷ 40,960 B (≈ 7,958 tokens at 380 MiB) fewer at
    the low end; the centre (what the engine gives where no desktop takes more) stays."""
    async with planner_on(size=(120, 50)) as (_, pilot, screen):
        assert screen.query_one("#plan-desktop", Select).value == "off"
        plain = screen.outcome.after_plan
        assert plain is not None and plain.estimate.desktop is None
        screen.query_one("#plan-desktop", Select).value = "on"
        await pilot.pause()
        desktop = screen.outcome.after_plan
        assert desktop is not None and desktop.estimate.desktop is not None
        assert desktop.ledger.token_capacity == plain.ledger.token_capacity == TP8_TOKENS
        moved = plain.token_capacity_min - desktop.token_capacity_min
        assert abs(moved - 0.818 * DESKTOP_BYTES / TOKEN_BYTES) <= 2
        assert desktop.token_capacity_max == plain.token_capacity_max
        result = shown(screen, "#plan-result")
        assert f"{desktop.token_capacity_min:,} – {desktop.token_capacity_max:,}" in result
        assert "memory the desktop holds (not modelled)" in result
        assert "--desktop" not in shown(screen, "#plan-flags")  # said to kvtop, not a flag of the engine's
        screen.query_one("#plan-desktop", Select).value = "off"
        await pilot.pause()
        assert screen.outcome.after_plan.token_capacity_min == plain.token_capacity_min
    # the same settings through the CLI (after the app: it holds stdout while it runs): the same low ends
    assert cli_low_end(capsys, "--desktop") == desktop.token_capacity_min
    assert cli_low_end(capsys) == plain.token_capacity_min


def test_the_planner_says_a_start_that_may_not_pass_at_the_assumed_host_share() -> None:
    """Llama-3.1-8B under vLLM on a GB10 (119.70 GiB = 128,527,106,048 B): 0.92 asks ceil(0.92 × T) =
    118,244,937,565 B free, the host is assumed to leave T − round(0.1173 × T) = 113,450,876,509 B (v0.33.0 reads the
    kernel's available memory, the page cache free), but the share's low end (T − 6,053,626,694 B held) leaves more
    than it asks: an assumed share is no refusal, so 'may not start', the fits row the plan's; 0.88 asks
    113,103,853,323 B and starts at the centre (the CLI's figures: tests/test_cli_plan_host.py, AT_088_TOKENS by
    hand)."""
    # 0.33.0's start check, pinned (0.34.0's extensible KV cache skips it: v1/worker/utils.py:783-797)
    settings = parse_flags("vllm", ["--model", "llama-3.1-8b"]).model_copy(update={"engine_version": "0.33.0"})
    total = 128_527_106_048
    outcome = plan(load_model("llama-3.1-8b"), settings, field_texts(settings), gpu_total_bytes=total, gpu_name="GB10")
    assert outcome.after_plan is not None and not outcome.after_plan.start_refused
    table = outcome_table(outcome, None).plain
    assert "start: may not start: vLLM needs 110.12 GiB free at its start (0.92 × 119.70 GiB)" in table
    assert f"--gpu-memory-utilization 0.88 starts at its centre: {AT_088_TOKENS:,} tokens per rank" in table
    fits = next(line for line in table.splitlines() if line.startswith("fits"))
    assert fits.split()[-1] != "refused" and "✗" not in table
    fresh = next(line for line in table.splitlines() if line.startswith("fresh start"))
    assert "so the host may hold at most 9.58 GiB; the host share assumed 14.04 GiB ± 8.40 GiB (5.64 GiB – 22.44 GiB)" in table
    # the start line states it in full; the fresh-start line gives its bound (T − 118,244,937,565 B = 9.58 GiB)
    assert fresh.split(None, 2)[2].startswith("0 – ") and "at 0.92 (0: may not start where the host holds more than 9.58 GiB)" in fresh
