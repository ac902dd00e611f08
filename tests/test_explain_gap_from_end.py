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
from pydantic import ValidationError

from kvtop.cli import main
from kvtop.commands.explain import verdict_line
from kvtop.domain.capacity_gap import CapacityGap, ReversedInterval, capacity_gap_of
from kvtop.domain.errors import InputError, KvtopError
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


def test_a_reversed_interval_is_refused_by_name() -> None:
    # low 40,384 above high 40,352: no end is 'nearer', so no gap; refused as kvtop's named error (one line, which the
    # CLI prints without a traceback), not pydantic's raw ValidationError, however it is reached; kvtop's own
    # inconsistency, never bad input (final reader 2, LOW 11): it names no field
    said = r"^internal inconsistency: the plan's interval is reversed \(its low end 40,384 tokens above its high end 40,352\)"
    with pytest.raises(ReversedInterval, match=said) as refused:
        CapacityGap(logged_tokens=LOGGED, plan_tokens=40_368, low_tokens=40_384, high_tokens=LOW_END)
    assert isinstance(refused.value, KvtopError) and not isinstance(refused.value, ValidationError | InputError)
    assert "\n" not in str(refused.value)
    with pytest.raises(ReversedInterval, match=said):
        capacity_gap_of(LOGGED, 40_368, 40_384, LOW_END)
    with pytest.raises(ReversedInterval, match=said):  # an explanation's derived gap is the same refusal
        Explanation(engine="trtllm", logged=Logged(token_capacity=LOGGED), token_capacity=40_368,
                    token_capacity_min=40_384, token_capacity_max=LOW_END, verdict="mismatch", gap_tokens=-20_160)
    # equal ends are an interval of one figure, not reversed: the log's 20,192 is −20,160 from it
    assert CapacityGap(logged_tokens=LOGGED, plan_tokens=LOW_END, low_tokens=LOW_END,
                       high_tokens=LOW_END).beyond_end_tokens == -20_160  # fmt: skip


def test_a_log_within_the_interval_has_no_gap() -> None:
    # 40,360 lies within 40,352–40,384: a gap of zero is "within", refused as a gap (session 70)
    with pytest.raises(ValidationError, match="no capacity gap"):
        CapacityGap(logged_tokens=40_360, plan_tokens=40_368, low_tokens=LOW_END, high_tokens=40_384)
    assert capacity_gap_of(40_360, 40_368, LOW_END, 40_384) is None
    assert capacity_gap_of(LOW_END, 40_368, LOW_END, 40_384) is None  # an end itself is within


def test_the_gap_is_derived_from_the_interval_and_the_log_so_cannot_disagree() -> None:
    # the verdict's gap is the result's own log and interval, never a figure stored beside them: with the interval
    # 40,352–40,384 the log's 20,192 is 20,192 − 40,352 = −20,160 from the low end; a reader that widens the low end
    # to 30,000 moves the gap with it (20,192 − 30,000 = −9,808), and a result built with a gap_tokens that is not the
    # gap of its own fields is refused
    result = Explanation(engine="trtllm", logged=Logged(token_capacity=LOGGED), token_capacity=40_368,
                         token_capacity_min=LOW_END, token_capacity_max=40_384, kv_bytes_per_token=524_288,
                         verdict="mismatch", gap_tokens=-20_160, cause="c")  # fmt: skip
    gap = capacity_gap(result)
    assert gap is not None and (gap.end, gap.end_tokens, gap.beyond_end_tokens) == ("low", 40_352, -20_160)
    line = verdict_line(result)
    assert line.startswith("verdict: MISMATCH by −20,160 tokens from the interval's low end (log 20,192, interval "
                           "40,352–40,384;") and "0 B larger" not in line  # fmt: skip
    widened = result.model_copy(update={"token_capacity_min": 30_000, "gap_tokens": -9_808})
    assert widened.gap is not None and widened.gap.beyond_end_tokens == -9_808
    # its bytes are the tokens at the result's own cell, derived (session 71), under --json's old key
    assert (result.gap_bytes, widened.gap_bytes) == (-20_160 * 524_288, -9_808 * 524_288)
    assert widened.model_dump()["gap_bytes"] == -9_808 * 524_288
    with pytest.raises(ValueError, match="gap_bytes is gap_tokens × kv_bytes_per_token"):
        result.model_copy(update={"gap_bytes": 0})
    # a copy is checked as a built result is (pydantic's model_copy runs no validator): one that moves the low end but
    # keeps −20,160 would say −9,808 in its verdict line and −20,160 in --json's gap_tokens
    with pytest.raises(ValueError, match=r"gap_tokens -20,160 is not the log's gap to the interval \(-9,808\)"):
        result.model_copy(update={"token_capacity_min": 30_000})
    with pytest.raises(ValidationError, match="not the log's gap"):
        Explanation(engine="trtllm", logged=Logged(token_capacity=LOGGED), token_capacity=40_368,
                    token_capacity_min=30_000, token_capacity_max=40_384, verdict="mismatch", gap_tokens=-20_160)
    assert capacity_gap(result.model_copy(update={"verdict": "match"})) is None  # not a mismatch: no gap said


def test_a_mismatch_that_says_no_capacity_gap_prints_none() -> None:
    # ray_logs' `insufficient` (no geometry to estimate the folded workers with) keeps the interval the least figure
    # shown gives and sets gap_tokens None; where the printed pools then make it a geometry mismatch
    # (explain._geometry_mismatch keeps gap_tokens None), the derived gap (20,192 below 40,352) must not be said: the
    # verdict line would read "that gap is 0.00 GB (0.00 GiB) at kvtop's 0 B per token" beside --json's null
    result = Explanation(engine="vllm", logged=Logged(token_capacity=LOGGED), token_capacity=40_368,
                         token_capacity_min=LOW_END, token_capacity_max=40_384, verdict="mismatch", gap_tokens=None,
                         pool_gap_bytes=-4_096, cause="KV geometry")  # fmt: skip
    assert result.gap is not None and capacity_gap(result) is None
    assert "0.00 GB" not in verdict_line(result)



def test_gap_bytes_given_at_construction_is_refused_as_a_copy_refuses_it() -> None:
    # derived (gap_tokens × kv_bytes_per_token): a 1 B figure given beside a gap of 20,192 tokens × 4,096 B would be
    # dropped silently (the model ignores unknown fields) where `model_copy` refuses it (review R1, session 71)
    with pytest.raises(ValidationError, match="gap_bytes is gap_tokens"):
        Explanation(engine="vllm", logged=Logged(token_capacity=LOGGED), token_capacity=40_368, verdict="match",
                    gap_bytes=1)  # fmt: skip


def test_an_explanation_reads_its_own_dump_back() -> None:
    # model_dump() writes the computed gap_bytes (−20,160 × 524,288 B); reading the dump back must not refuse it
    # (review R5 C3-1, session 71), while a dump whose gap_bytes was edited away from the derived figure is refused
    result = Explanation(engine="trtllm", logged=Logged(token_capacity=LOGGED), token_capacity=40_368,
                         token_capacity_min=LOW_END, token_capacity_max=40_384, kv_bytes_per_token=524_288,
                         verdict="mismatch", gap_tokens=-20_160, cause="c")  # fmt: skip
    dumped = result.model_dump()
    assert dumped["gap_bytes"] == -10_569_646_080
    assert Explanation.model_validate(dumped) == result
    assert Explanation.model_validate_json(result.model_dump_json()) == result
    with pytest.raises(ValidationError, match="gap_bytes is gap_tokens"):
        Explanation.model_validate({**dumped, "gap_bytes": -1})
