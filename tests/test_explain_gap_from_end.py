"""A MISMATCH's figure says it is counted from the interval's nearer end, not from the plan's centre (session 69).

`kvtop explain` printed "MISMATCH by +131,488 tokens", which an operator read as kvtop's error: it is the distance to
the interval's edge. The verdict line and `--json` ("gap", its fields named) now say which end, with the plan's centre
and the log's figure beside it, from one domain value (`CapacityGap`).

Expected figures from the inputs: trtllm#2268 logs 631 primary-pool blocks; at 32 tokens a block (the engine build's
default kvtop assumes at ~0.19.0) that is 20,192 tokens. case.json's worked check: max tokens (int)(0.9 × free ÷
524,288) at free 21.885–21.895 GiB is 40,338–40,357, in 32-token blocks ceil(40,338 ÷ 32) × 32 = 40,352 at the low end.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.commands.explain import verdict_line
from kvtop.domain.capacity_gap import CapacityGap
from kvtop.domain.explanation import Explanation, Logged, capacity_gap
from tests.conftest import CASES, CONFIGS

LOG = CASES / "trtllm" / "trtllm-2268-qwen15-7b-primary-pool" / "engine.log"
LLAMA2_7B = CONFIGS / "meta-llama--Llama-2-7b-hf.json"  # Qwen1.5-7B's geometry: 524,288 B a token in fp16
LOGGED, LOW_END = 631 * 32, 1_261 * 32  # 20,192; 40,352


def test_the_gap_names_the_end_and_the_centre_beside_it() -> None:
    # the brief's reading: a log of 1,431,488 tokens against an interval 1,200,000–1,300,000 about a plan of 1,250,000
    gap = CapacityGap(
        logged_tokens=1_431_488, plan_tokens=1_250_000, low_tokens=1_200_000, high_tokens=1_300_000
    )
    assert (gap.end, gap.end_tokens, gap.beyond_end_tokens, gap.from_plan_tokens) == (
        "high",
        1_300_000,
        131_488,
        181_488,
    )
    assert gap.words() == ("+131,488 tokens from the interval's high end (log 1,431,488, interval 1,200,000–1,300,000; "
                           "from the plan's 1,250,000 the log is +181,488)")  # fmt: skip


def test_explain_text_and_json_say_the_same_gap(capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")
    assert main(["explain", str(LOG), "--model", str(LLAMA2_7B), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    gap = out["gap"]
    assert (
        gap["logged_tokens"] == LOGGED
        and gap["interval_end"] == "low"
        and gap["interval_end_tokens"] == LOW_END
    )
    # the figure is written once: the top-level "gap_tokens" (test_explain_cases' contract); "gap" names its end
    assert "tokens_beyond_interval" not in gap and out["gap_tokens"] == LOGGED - LOW_END
    assert gap["tokens_from_plan"] == LOGGED - out["predicted"]["token_capacity"]
    assert main(["explain", str(LOG), "--model", str(LLAMA2_7B)]) == 0
    verdict = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("verdict:"))
    assert verdict.startswith(f"verdict: MISMATCH by {gap['words']}; that gap is ")
    assert gap["words"].startswith("−20,160 tokens from the interval's low end (log 20,192, interval 40,352–")


def test_the_verdict_reads_the_judged_gap_never_a_second_computation() -> None:
    # judge's gap (log 20,192 below the interval 40,352–40,384) carried on the result; a later copy whose interval
    # fields differ (a reader that widened them) once made the recomputed figure disagree, and the verdict line fell
    # through to "the logged KV pool is 0 B larger than predicted"
    judged = CapacityGap(logged_tokens=LOGGED, plan_tokens=40_368, low_tokens=LOW_END, high_tokens=40_384)
    result = Explanation(engine="trtllm", logged=Logged(token_capacity=LOGGED), token_capacity=40_368,
                         token_capacity_min=30_000, token_capacity_max=40_384, kv_bytes_per_token=524_288,
                         verdict="mismatch", gap=judged, gap_tokens=LOGGED - LOW_END,
                         gap_bytes=(LOGGED - LOW_END) * 524_288, cause="c")  # fmt: skip
    assert capacity_gap(result) is judged
    line = verdict_line(result)
    assert line.startswith("verdict: MISMATCH by −20,160 tokens from the interval's low end (log 20,192, interval "
                           "40,352–40,384;") and "0 B larger" not in line  # fmt: skip
