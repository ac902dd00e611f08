"""`CapacityPlan.interval_kind`: the one case `plan`'s Interval line and the planner's fresh-start line both read.

The verdicts on a GB10 (T = 128,527,106,048 B, the DGX Spark start's 119.70 GiB; the host assumed to hold
round(0.2934 × T) = 37,709,852,914 B ± round(0.2351 × T) = 30,216,722,632 B) are worked by hand in
tests/test_cli_plan_host.py: vLLM at 0.92 may leave the host T − ceil(0.92 × T) = 10,282,168,483 B (below the centre,
above the low end 7,493,130,282 B), at 0.70 38,558,131,814 B (above the centre, below the high end 67,926,575,546 B),
at 0.96 5,141,084,241 B (below the low end, 6,053,626,694 B since session 68's span), at 0.30 T − ceil(0.30 × T) = 89,968,974,233 B (above the high end).
"""

from __future__ import annotations

import pytest

from kvtop.commands.render_ledger import interval_line
from kvtop.domain.calibration.estimate import CapacityPlan, IntervalKind, planned_capacity
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_model
from kvtop.ui.widgets.plan_result import interval_line as pane_interval_line
from tests.conftest import CONFIGS

LLAMA = "llama-3.1-8b"


def _plan(engine: str, gpu: str, *flags: str, measured: MeasuredInputs | None = None) -> CapacityPlan:
    settings = parse_flags(engine, ["--model", LLAMA, *flags])
    return planned_capacity(load_model(LLAMA), settings, gpu_total_bytes=gpu_total_bytes(gpu), gpu_name=gpu,
                            measured=measured)  # fmt: skip


@pytest.mark.parametrize(
    ("fraction", "kind"),
    [
        ("0.92", IntervalKind.REFUSED_AT_CENTRE),
        ("0.85", IntervalKind.REFUSED_AT_HIGH_END),
        ("0.96", IntervalKind.REFUSED_ACROSS_SPAN),
        ("0.3", IntervalKind.SPREAD),
    ],
)
def test_a_vllm_gb10_start_verdict_is_the_interval_kind(fraction: str, kind: IntervalKind) -> None:
    # the start check is 0.33.0's (v0.34.0 skips it under the extensible KV cache, v1/worker/utils.py:783-797): pinned
    plan = _plan("vllm", "GB10", "--gpu-memory-utilization", fraction, "--engine-version", "0.33.0")
    assert plan.interval_kind is kind
    # each view words the same case: an assumed share is no refusal, so both state the bound of 'may not start'
    text, pane = interval_line(plan), pane_interval_line(plan).plain
    if kind is IntervalKind.REFUSED_AT_CENTRE:  # T − ceil(0.92 × T) = 10,282,168,483 B = 9.58 GiB
        assert "(0: may not start where the host holds more than 9.58 GiB)" in text
        assert "(0: may not start where the host holds more than 9.58 GiB)" in pane and "refused" not in pane
    if kind is IntervalKind.REFUSED_AT_HIGH_END:  # T − ceil(0.85 × T) = 19,279,065,907 B = 17.96 GiB
        assert "may not start where the host holds more than 17.96 GiB" in text
        assert "may not start where the host holds more than 17.96 GiB" in pane
    if kind is IntervalKind.REFUSED_ACROSS_SPAN:
        assert text.startswith("0 tokens at both ends") and "0 at both ends" in pane


def test_a_card_of_its_own_spreads_and_a_measured_free_memory_is_zero_wide() -> None:
    """vLLM on an H100 asks no share free against a host: a spread of its calibrated terms. SGLang given the free
    memory after the load (60 GiB) still reads the weights: its reserve is the free memory before load × (1 − the
    fraction), and that is the one after the load + the weights (tests/test_cli_plan_intervals.py works it by hand);
    given the free memory before the load too, every input it reads is measured (the weights are their difference).
    LMDeploy sizes its cache from the free memory after the load alone: no estimated input moves it (± 0)."""
    assert _plan("vllm", "H100").interval_kind is IntervalKind.SPREAD
    after = _plan("sglang", "H100", measured=MeasuredInputs(free_after_load_bytes=60 << 30))
    assert after.interval_kind is IntervalKind.SPREAD and after.dominant is not None
    assert after.dominant.label == "weights"
    both = MeasuredInputs(free_before_load_bytes=78 << 30, free_after_load_bytes=60 << 30)
    assert _plan("sglang", "H100", measured=both).interval_kind is IntervalKind.EXACT
    zero = _plan("lmdeploy", "H100", measured=MeasuredInputs(free_after_load_bytes=60 << 30))
    assert zero.interval_kind is IntervalKind.ZERO_WIDE
    assert interval_line(zero).endswith("tokens at both ends (± 0): no estimated input moves it")


def test_llamacpp_words_a_context_fixed_by_c_in_both_views() -> None:
    """llama.cpp sizes its cache by -c: on a GB10 the assumed host share moves only whether it fits (it fits at both
    ends: tests/test_cli_plan_intervals.py), so both views say what fixes it, not a width of ± 0."""
    plan = _plan("llamacpp", "GB10")
    assert plan.interval_kind is IntervalKind.FIXED_BY_FLAG and plan.fixed_by == "-c" and plan.dominant is None
    assert "fixed by -c: not a memory budget" in interval_line(plan)
    assert "131,072, fixed by -c: not a memory budget" in pane_interval_line(plan).plain


@pytest.mark.parametrize(
    ("fraction", "kind"),
    [("0.92", IntervalKind.REFUSED_AT_CENTRE), ("0.85", IntervalKind.REFUSED_AT_HIGH_END),
     ("0.96", IntervalKind.REFUSED_ACROSS_SPAN), ("0.3", IntervalKind.REQUESTS)],
)  # fmt: skip
def test_an_attention_free_plan_on_gb10_takes_the_start_verdict(fraction: str, kind: IntervalKind) -> None:
    """Falcon-Mamba-7B under the same verdicts as Llama above (the host's share does not depend on the model): a
    refused start is the refusal's case, its refused ends 0 requests in both views; one that starts across the span
    is in requests (before: 'REQUESTS' whatever the verdict, the engine's cap at both ends)."""
    # the start check is 0.33.0's (v0.34.0 skips it under the extensible KV cache): pinned
    settings = parse_flags("vllm", ["--model", "falcon-mamba", "--gpu-memory-utilization", fraction,
                                    "--engine-version", "0.33.0"])  # fmt: skip
    plan = planned_capacity(load_model(str(CONFIGS / "tiiuae--falcon-mamba-7b.json")), settings,
                            gpu_total_bytes=gpu_total_bytes("GB10"), gpu_name="GB10")  # fmt: skip
    assert plan.interval_kind is kind and plan.requests is not None
    pane = pane_interval_line(plan).plain
    if kind is IntervalKind.REFUSED_AT_CENTRE:
        assert plan.requests.requests_min == 0 and "0 – " in pane and "requests at 0.92 (0: may not start where the host holds more" in pane
    if kind is IntervalKind.REFUSED_AT_HIGH_END:
        assert plan.requests.requests_min == 0 and "requests at 0.85 (0: may not start where the host holds more than" in pane
    if kind is IntervalKind.REFUSED_ACROSS_SPAN:
        assert plan.requests.requests_max == 0 and "0 at both ends: refused across the assumed host share" in pane
    if kind is IntervalKind.REQUESTS:
        assert plan.requests.requests_min > 0 and "requests" in pane
