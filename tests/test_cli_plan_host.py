"""`kvtop plan` on hosts whose GPU memory is not the card's own: a unified-memory GB10, a desktop sharing the card.

vLLM's GB10 start verdicts are 0.33.0's (the start check on the requested share; v0.34.0 skips it under the
extensible KV cache, v1/worker/utils.py:783-797): those plans are pinned to 0.33.0.

Before this, `--gpu GB10` was an unknown GPU and a desktop was not said at all (#27). The figures are the
DGX Spark start's (case-trtllm-dgxspark-gpt-oss-120b: `device total memory 119.70 GiB`).
"""

from __future__ import annotations

import json
import math

import pytest

from kvtop.cli import main
from kvtop.domain.calibration.host_estimate import StartVerdict
from kvtop.domain.calibration.host_memory import (
    DESKTOP_GIVEN_BACK_BYTES,
    DESKTOP_HELD_BYTES,
    DESKTOP_PROFILE_BYTES,
)
from kvtop.domain.engines.vllm.calibration import FITS as VLLM_FITS
from kvtop.domain.wording import GIB
from tests.calibrated_figures import fitted_bytes
from tests.conftest import CONFIGS

QWEN = str(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json")


def plan_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["plan", "--json", "--no-calibration-store", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_gb10_plan_states_what_the_host_is_assumed_to_leave(capsys: pytest.CaptureFixture[str]) -> None:
    out = plan_json(capsys, "--model", QWEN, "--engine", "sglang", "--gpu", "GB10")
    unified = out["host_memory"]["unified"]
    assert unified["note"].split(" is assumed ")[0] == "unified memory: what the host leaves to the GPU"
    # SGLang from 0.5.4 reads psutil's available memory on a GB10 (srt/utils/common.py:461-467 at 0.5.4), the page
    # cache free: 119.70 GiB less round(0.1173 × T) = 15,076,229,539 B (14.04 GiB) leaves 105.66 GiB; round(0.0702 ×
    # T) = 9,022,602,845 B = 8.40 GiB
    assert "assumed 105.66 GiB ± 8.40 GiB of 119.70 GiB (the page cache free" in unified["note"]
    assert out["host_memory"]["desktop"] is None
    # the assumed share, 11.73 % ± 7.02 % of the 119.70 GiB the DGX Spark start printed, in the budget (4.72 – 18.74 %:
    # a 0.27.1 start's 121.69 − 115.95 GiB to 22.8 of 121.69 GiB, host_memory.py)
    assert abs(unified["held_bytes"] / GIB - 0.1173 * 119.70) < 0.01
    assert abs(unified["error_bytes"] / GIB - 0.0702 * 119.70) < 0.01
    assert unified["page_cache_free"] is True
    assert unified["charged"] is True and unified["start_verdict"] is None
    host = next(term for term in out["terms"] if term["term"] == "host")
    assert host["source"] == "assumed" and host["error_bytes"] > 0
    assert out["interval_term"] == "host"


def test_a_desktop_is_said_in_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    out = plan_json(capsys, "--model", QWEN, "--engine", "sglang", "--gpu", "RTX3090", "--desktop")
    plain = plan_json(capsys, "--model", QWEN, "--engine", "sglang", "--gpu", "RTX3090")
    desktop = out["host_memory"]["desktop"]
    assert desktop["note"].startswith("memory the desktop holds (not modelled)")
    assert desktop["low_end_bytes"] == DESKTOP_HELD_BYTES  # the WSL2 start's ~0.37 GiB beyond Linux (test_host_memory)
    assert plain["host_memory"] == {"unified": None, "desktop": None}
    assert out["token_capacity"] == plain["token_capacity"]
    assert out["token_capacity_min"] < plain["token_capacity_min"]


def test_a_vllm_desktop_plan_gives_its_figures_typed(capsys: pytest.CaptureFixture[str]) -> None:
    """`host_memory.desktop` of a vLLM plan: both ends' figures and the start verdict, typed. An RTX 4090 under WSL2
    (23.99 GiB) at 0.90: vLLM's `request_memory` asks ceil(0.90 × total) free at its first snapshot, and the desktop
    may hold the rest less this rank's CUDA context (`ranks[0].context_bytes`); the verdict is against the most the
    corpus's desktops held beyond Linux."""
    out = plan_json(capsys, "--model", QWEN, "--engine", "vllm", "--engine-version", "0.23.0", "--gpu-memory",
                    "23.99GiB", "--gpu-memory-utilization", "0.9", "--desktop")  # fmt: skip
    desktop, total = out["host_memory"]["desktop"], out["gpu"]["total_bytes"]
    ints = ("low_end_bytes", "profile_bytes", "given_back_bytes", "start_needs_bytes", "most_held_bytes",
            "held_span_bytes")  # fmt: skip
    assert all(type(desktop[key]) is int for key in ints)
    assert desktop["profile_bytes"] == DESKTOP_PROFILE_BYTES and desktop["given_back_bytes"] == DESKTOP_GIVEN_BACK_BYTES
    assert desktop["start_needs_bytes"] == math.ceil(0.9 * total)
    assert desktop["most_held_bytes"] == total - desktop["start_needs_bytes"] - out["ranks"][0]["context_bytes"]
    assert desktop["held_span_bytes"] == DESKTOP_HELD_BYTES < desktop["most_held_bytes"]
    assert desktop["start_verdict"] == StartVerdict.STARTED_ACROSS_SPAN.value
    # the desktop's span (1.45 GiB from session 70's refit) is below the activation peak's error here (1.81 GiB, and
    # on the V1 runner at v0.23.0 the cold compile's copy of the table above the count joins it, compile_benchmark.py)
    assert out["interval_term"] == "activation"


def test_a_vllm_desktop_plan_names_the_desktop_where_its_span_is_the_widest(capsys: pytest.CaptureFixture[str]) -> None:
    """The same launch at v0.11.0 (no combo-kernel default yet, so no cold compile's copy of the table widens the
    activation: compile_benchmark.COMBO_DEFAULT), where every term's error is below the desktop's span: the plan names
    the desktop. Its low end's KV budget lies the whole span below the plan's without the desktop, its high end the
    whole give-back above (both ends' figures linear, not root-summed with the terms' errors), and that plan names a
    term of its own."""
    launch = ("--model", QWEN, "--engine", "vllm", "--engine-version", "0.11.0", "--gpu-memory", "23.99GiB",
              "--gpu-memory-utilization", "0.9")  # fmt: skip
    out, plain = plan_json(capsys, *launch, "--desktop"), plan_json(capsys, *launch)
    assert max(term["error_bytes"] for term in out["terms"]) * out["interval_scale"] < DESKTOP_PROFILE_BYTES
    assert out["interval_term"] == "desktop" and plain["interval_term"] == "activation"
    assert out["kv_budget_bytes"] == plain["kv_budget_bytes"]
    assert plain["kv_budget_min_bytes"] - out["kv_budget_min_bytes"] == DESKTOP_PROFILE_BYTES
    assert out["kv_budget_max_bytes"] - plain["kv_budget_max_bytes"] == DESKTOP_GIVEN_BACK_BYTES


def test_a_vllm_gb10_plan_gives_the_start_verdict_typed(capsys: pytest.CaptureFixture[str]) -> None:
    """`Free memory on device cuda:0 (56.65/119.7 GiB) on startup is less than desired GPU memory utilization (0.92,
    110.12 GiB)` (search-index id 59813453928): at 0.92 the host may hold at most 119.7 − 110.12 = 9.58 GiB, below
    the assumed centre 0.1173 × 119.7 = 14.0 GiB (v0.33.0 reads psutil's available memory where is_integrated) but
    above its low end (0.1173 − 0.0702) × 119.7 = 5.6 GiB."""
    out = plan_json(capsys, "--model", QWEN, "--engine", "vllm", "--engine-version", "0.33.0", "--gpu", "GB10", "--gpu-memory-utilization", "0.92")
    unified = out["host_memory"]["unified"]
    assert abs(unified["most_held_bytes"] / GIB - (119.7 - 110.12)) < 0.01
    assert abs(unified["start_needs_bytes"] / GIB - 110.12) < 0.01
    assert unified["start_verdict"] == "refused_at_centre" and unified["charged"] is False


def test_the_text_plan_prints_the_host_note(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--no-calibration-store", "--model", QWEN, "--engine", "vllm", "--engine-version", "0.33.0", "--gpu", "GB10"]) == 0
    text = capsys.readouterr().out
    assert "unified memory: what the host leaves to the GPU is assumed" in text
    assert "starts only where the host leaves what it asks free" in text


def test_a_jetson_orin_takes_its_total_from_the_operator(capsys: pytest.CaptureFixture[str]) -> None:
    """kvtop holds no log of an Orin's total: `--gpu` alone is refused and names --gpu-memory; given it, the plan
    is a unified-memory plan of that total."""
    assert (
        main(
            [
                "plan",
                "--no-calibration-store",
                "--model",
                QWEN,
                "--engine",
                "sglang",
                "--gpu",
                "Jetson-AGX-Orin-64GB",
            ]
        )
        != 0
    )
    assert "--gpu-memory" in capsys.readouterr().err
    out = plan_json(
        capsys,
        "--model",
        QWEN,
        "--engine",
        "sglang",
        "--gpu",
        "Jetson-AGX-Orin-64GB",
        "--gpu-memory",
        "61GiB",
    )
    assert "GiB of 61.00 GiB " in out["host_memory"]["unified"]["note"]


# Llama-3.1-8B under vLLM on a GB10, as `plan --json` lists its inputs: CUDA's total T = 128,527,106,048 B (119.70 GiB,
# the DGX Spark start's `device total memory`), the weights 16,094,076,928 B, 131,072 B a token, blocks of 16 tokens
# (2,097,152 B), and the runtime terms by hand from the committed fits (tests/calibrated_figures.py) and V2's code:
# the activation on 2,048 tokens and 256 seqs × 128,256 float32 logits (a GB10's small batch row, session 65): the
# larger of the sampler's side (below) and the forward's MLP transient 2,048 × (3 × 14,336 + 4,096) × 2 B =
# 192,937,984 B beside the residual and normed input, 2 × 2,048 × 4,096 × 2 B; non-torch memory `vllm.non_torch.v18` at TP 1 and V2's sampler state; the CUDA-graph fit over 51 PIECEWISE + 35 FULL sizes (vLLM's 256-seq grid, below), (50 + 34) × 32 layers ÷ 1000
# (figures of sessions before 65 took the large row's 8,192 tokens and 1,024 seqs). The
# host is assumed to hold round(0.1173 × T) = 15,076,229,539 B ± round(0.0702 × T) = 9,022,602,845 B (v0.33.0 reads
# psutil's available memory where is_integrated, mem_utils.py: the page cache free), so it leaves
# T − 15,076,229,539 = 113,450,876,509 B (105.66 GiB) at the centre.
GB10_T = 128_527_106_048
GB10_HELD = 15_076_229_539
GB10_ERROR = 9_022_602_845
# vLLM's batch on a GB10: 256 seqs and 2,048 tokens (v0.33.0 engine/arg_utils.py:2963, :2984-2986 keep compute
# capability 12.1 on the small row; docs/engines/vllm.md §3)
_LOGITS = 256 * 128_256 * 4
# V2's sampler keeps 1,024 seqs × 128,256 int32 token counts and two bitmasks of ⌈128,256 ÷ 32⌉ = 4,008 int32 words a
# seq on the GPU, which the budget's total_consumed charges from v0.27.0 (v2_sampler_state.py, penalties.py:32-40)
_SAMPLER_STATE = 256 * 128_256 * 4 + 2 * 256 * 4_008 * 4
(_PER_GRAPH_NODE,) = VLLM_FITS["vllm.cuda_graphs"].coefficients  # per graph counted × layer ÷ 1000: the first capture too
# the V1 graph figure beside V2's profile is read at vLLM's 256-seq default grid (v2_graphs.stand_in, from v0.29.0 too
# since session 62): vLLM's own "Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35 (largest=256)" at
# 256 seqs (the 0.19.1 A100-40GB start's line, vllm.jsonl file57978845466-qwen3-8b-a100-40gb-v0191), so 50 + 34 graphs
# beyond the first, not the launch's 50 + 50 at 1,024 seqs
# session 69: what stands beside V2's profile is the cold compile's combo-kernel benchmark copy of the embedding table
# (compile_benchmark.py): config.json's vocab 128,256 × hidden 4,096 × 2 B, no longer the V1 graph figure above
_TABLE = 128_256 * 4_096 * 2
LLAMA_WEIGHTS = 16_094_076_928
# the latest release runs Llama on V2's runner, which from v0.29.0 takes its measured graphs off beside what its profile
# held (gpu_worker.py:606-610 at v0.29.0): the V1 graph figure stands for what the profile held, and V2's measured graphs
# come on top in V2's own form, every PIECEWISE graph measured and FULL alone extrapolated (cudagraph_utils.py:718-831 at
# v0.29.0; v2_graphs.py since 3ea961bd): the fit on the 50 FULL graphs beyond the first × 32 layers ÷ 1000
_V2_GRAPHS = fitted_bytes(_PER_GRAPH_NODE * (1 + 34) * 32 / 1000)
# from v0.33.0 V2's dummy sampler run samples twice, the second with `for_sampler_warmup()` (model_runner.py:1008-1014 at
# v0.33.0): the peak is the larger pass, the warm-up's on FlashInfer's path with a per-row top-k (session 65,
# v2_profile.warmup_pass): the dummy run's 2,048 × 4,096 bf16 hidden states, the 256 gathered rows, the bf16 logits and
# three float32 copies of them (the float32 cast, FlashInfer's masked copy and its softmax: sampling.py:1795-1796 at
# FlashInfer 0.7.2.post1); what that sampler side holds above the forward is V2's lead, which the graphs measured beside
# the profile took off first (session 59); session 66: the whole counted peak hides the figure (the compile
# ends before the compiled forward runs: piecewise_backend.py:189-190, decorators.py:674-681 at v0.29.0), so only the
# figure above the larger of forward and sampler is charged, and V2's measured graphs on top
_SAMPLER_SIDE = 2_048 * 4_096 * 2 + 256 * 4_096 * 2 + _LOGITS // 2 + 3 * _LOGITS
_FORWARD = 2_048 * (3 * 14_336 + 4_096) * 2 + 2 * 2_048 * 4_096 * 2
_PEAK = max(_SAMPLER_SIDE, _FORWARD)
# (what the host's processes take while the worker loads and profiles, in v0.33.0's non-torch memory on a unified
# device, is in the term's error only: unified_start.py)
LLAMA_RUNTIME = (_PEAK + fitted_bytes(VLLM_FITS["vllm.non_torch.v18"].coefficients[0])
                 + _SAMPLER_STATE + _V2_GRAPHS + max(_TABLE - _PEAK, 0))  # fmt: skip
# what a start at 0.87 holds: ceil(0.87 × T) = 111,818,582,262 less the weights and the runtime, in whole blocks
AT_087_TOKENS = (111_818_582_262 - LLAMA_WEIGHTS - LLAMA_RUNTIME) // 2_097_152 * 16
# and at 0.88: ceil(0.88 × T) = 113,103,853,323
AT_088_TOKENS = (113_103_853_323 - LLAMA_WEIGHTS - LLAMA_RUNTIME) // 2_097_152 * 16


def vllm_gb10(capsys: pytest.CaptureFixture[str], *flags: str) -> dict:
    return plan_json(capsys, "--model", "llama-3.1-8b", "--engine", "vllm", "--engine-version", "0.33.0", "--gpu", "GB10", *flags)


def test_a_vllm_gb10_plan_refused_at_the_assumed_share_says_so_once(capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM asks ceil(0.92 × T) = 118,244,937,565 B free (§2.2 request_memory), more than the 113,450,876,509 B left:
    refused at the centre, not across the span (the host may hold T − 118,244,937,565 = 10,282,168,483 B, above the
    span's low end 15,076,229,539 − 9,022,602,845 = 6,053,626,694 B). The largest hundredth that starts there:
    ceil(0.88 × T) = 113,103,853,323 ≤ 113,450,876,509 < ceil(0.89 × T) = 114,389,124,383, so 0.88 (0.87 at the
    session-67 span, 12.29 % ± 6.45 %); at it (113,103,853,323 − 16,094,076,928 − the runtime) // 2,097,152 blocks × 16
    tokens (AT_088_TOKENS; at 0.70 with the
    span that held the page cache, before session 67, AT_070_TOKENS: 548,096 at the
    fits of 53c086c0, 546,528 before; 540,528 since V2's graphs from v0.29.0 are charged beside its profile; 538,576
    at the fits of a7014c84 with V2's graphs in V2's own form, 536,160 there had they stayed the V1 figure; 549,184
    since session 65 reads vLLM's batch on a GB10 as 256 seqs and 2,048 tokens, 533,424 at the large row's; 551,328
    since session 65 counts V2's sampler warm-up pass from v0.33.0, whose lead over the forward the graphs take off)."""
    out = vllm_gb10(capsys)
    start = out["start"]
    assert start["state"] == "refused_at_centre" and start["starts_at_assumed_share"] is False
    assert start["needs_bytes"] == 118_244_937_565 and start["left_bytes"] == GB10_T - GB10_HELD
    assert start["most_held_bytes"] == GB10_T - 118_244_937_565
    assert start["starting_fraction"] == 0.88 and start["starting_tokens"] == AT_088_TOKENS
    assert start["fraction_flag"] == "--gpu-memory-utilization"
    # the interval holds the refusal: 0 where the host holds more than it may, the high end where it holds least
    assert out["token_capacity_min"] == 0 and out["token_capacity_max"] > out["token_capacity"]
    assert out["interval_term"] == "host"
    # one truth: the suggested share planned on its own gives the same tokens
    assert vllm_gb10(capsys, "--gpu-memory-utilization", "0.88")["token_capacity"] == AT_088_TOKENS
    assert main(["plan", "--no-calibration-store", "--model", "llama-3.1-8b", "--engine", "vllm", "--engine-version", "0.33.0", "--gpu", "GB10"]) == 0
    text = capsys.readouterr().out
    # an assumed share is no refusal (the span's low end leaves what 0.92 asks): the headline is the capacity
    headline = next(line for line in text.splitlines() if line.startswith("Token capacity"))
    assert headline.split(None, 2)[2] == f"{out['token_capacity']:,} tokens per rank"
    # said once in full, in the start verdict, every GiB at two decimals: T − 118,244,937,565 = 10,282,168,483 B =
    # 9.58 GiB, the centre 15,076,229,539 B = 14.04 GiB ± 9,022,602,845 B = 8.40 GiB (5.64 – 22.44 GiB), leaving
    # 113,450,876,509 B = 105.66 GiB
    verdict = " ".join(line.strip() for line in text.split("start verdict: ", 1)[1].split("\n\n")[0].splitlines()[:4])
    assert verdict.startswith("may not start: vLLM needs 110.12 GiB free at its start (0.92 × 119.70 GiB), so the host "
                              "may hold at most 9.58 GiB; the host share assumed 14.04 GiB ± 8.40 GiB (5.64 GiB – "
                              "22.44 GiB): it starts at the low end, not at the centre (which leaves 105.66 GiB); "
                              f"--gpu-memory-utilization 0.88 starts at its centre: {AT_088_TOKENS:,} tokens per rank")
    # the interval and the host note name it briefly: the interval its bound, the note its case
    interval = next(line for line in text.splitlines() if line.startswith("Interval"))
    assert interval.split(None, 1)[1].startswith("0 – ")
    assert "(0: may not start where the host holds more than 9.58 GiB)" in interval and "refused" not in interval
    note = " ".join(text.split("unified memory: what the host leaves", 1)[1].split("\n  ")[0].split())
    assert "(at 0.92 × the total: may not start: it starts at the assumed low end, not at the centre, as" in note
    assert "110.1" not in note and "9.58" not in note and "refused" not in text
    assert "KV pool" in text  # a start that may pass shows its pool


def test_a_share_that_starts_at_the_centre_keeps_its_capacity_and_its_refusal_at_the_high_end(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """At 0.87 the host may hold T − 111,818,582,262 = 16,708,523,786 B: above the centre 15,076,229,539, below the
    high end 15,076,229,539 + 9,022,602,845 = 24,098,832,384: it starts, and the interval's low end is a refusal."""
    out = vllm_gb10(capsys, "--gpu-memory-utilization", "0.87")
    assert out["start"]["state"] == "refused_at_high_end" and out["start"]["starting_fraction"] is None
    assert out["start"]["most_held_bytes"] == GB10_T - 111_818_582_262
    assert out["token_capacity"] == AT_087_TOKENS and out["token_capacity_min"] == 0
    # the headline is the capacity, so the verdict is said in full before the start; the interval gives its bound:
    # 16,708,523,786 B = 15.56 GiB, and 0.87 × T asks 111,818,582,262 B = 104.14 GiB
    args = ["plan", "--no-calibration-store", "--model", "llama-3.1-8b", "--engine", "vllm", "--engine-version", "0.33.0", "--gpu", "GB10"]
    assert main([*args, "--gpu-memory-utilization", "0.87"]) == 0
    lines = capsys.readouterr().out.splitlines()
    verdict = [line.strip() for line in lines if line.strip().startswith("start verdict:")]
    assert verdict == ["start verdict: may not start: vLLM needs 104.14 GiB free at its start (0.87 × 119.70 GiB), "
                       "so the host may hold at most 15.56 GiB; the host share assumed 14.04 GiB ± 8.40 GiB (5.64 GiB "
                       "– 22.44 GiB): it starts at the centre, not at the high end"]  # fmt: skip
    interval = next(line for line in lines if line.startswith("Interval"))
    assert "at --gpu-memory-utilization 0.87 (0: may not start where the host holds more than 15.56 GiB)" in interval


def test_a_share_refused_across_the_span_is_zero_at_both_ends(capsys: pytest.CaptureFixture[str]) -> None:
    """At 0.96 the host may hold T − ceil(0.96 × T) = 5,141,084,241 B, below the span's low end 6,053,626,694 B (at 0.95,
    6,426,355,302 B, above it since session 68's span)."""
    out = vllm_gb10(capsys, "--gpu-memory-utilization", "0.96")
    assert out["start"]["state"] == "refused_across_span" and out["start"]["starting_fraction"] == 0.88
    assert out["token_capacity_min"] == out["token_capacity_max"] == 0


def test_an_engine_that_sizes_from_the_free_memory_has_no_start_check(capsys: pytest.CaptureFixture[str]) -> None:
    """SGLang charges the host's share to its budget (host_memory.py): no start verdict, an interval of tokens."""
    out = plan_json(capsys, "--model", "llama-3.1-8b", "--engine", "sglang", "--gpu", "GB10")
    assert out["start"] is None and out["interval_term"] == "host"
    assert 0 < out["token_capacity_min"] < out["token_capacity"] < out["token_capacity_max"]
    assert plan_json(capsys, "--model", "llama-3.1-8b", "--engine", "vllm", "--gpu", "H100")["start"] is None


@pytest.mark.parametrize("gpu", ["GB10", "H100"])
def test_a_measured_free_memory_after_load_names_the_weights(capsys: pytest.CaptureFixture[str], gpu: str) -> None:
    """SGLang sizes its pool from the free memory after the load: given, the host's share is held in it (not the
    interval's term any more: before, 'mostly what the host holds'), and no extrapolation widens it; the weights,
    which its reserve still reads, name the interval (worked by hand in tests/test_cli_plan_intervals.py)."""
    out = plan_json(capsys, "--model", "llama-3.1-8b", "--engine", "sglang", "--gpu", gpu, "--free-after-load", "60GiB")
    assert out["token_capacity_min"] < out["token_capacity"] < out["token_capacity_max"]
    assert out["interval_term"] == "weights" and out["beyond_support"] == []
    args = ["plan", "--no-calibration-store", "--model", "llama-3.1-8b", "--engine", "sglang", "--gpu", gpu]
    assert main([*args, "--free-after-load", "60GiB"]) == 0
    interval = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Interval"))
    assert interval.endswith("mostly weights (calibrated)")


def test_vllm_says_it_does_not_read_free_memory_after_load(capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM 0.33.0 worker/gpu_worker.py determine_available_memory: requested (total × gpu_memory_utilization) less
    the profiled non-KV peak; the free memory after the load is not read. Given, the plan says so (before: nothing
    said, and 10 GiB free after load still planned 457,200 tokens on an H100 as if it were read)."""
    args = ("--model", "llama-3.1-8b", "--engine", "vllm", "--gpu", "H100", "--engine-version", "0.33.0")
    low = plan_json(capsys, *args, "--free-after-load", "10GiB")
    assert any(note.startswith("--free-after-load not read by vLLM's rule: the pool is total") for note in low["notes"])
    assert not any("--free-after-load" in note for note in plan_json(capsys, *args)["notes"])
    # 0.34.0's extensible KV cache reads the free memory at start, still not the free memory after load
    new = plan_json(capsys, *args[:-1], "0.34.0", "--free-after-load", "10GiB")["notes"]
    assert any(note.startswith("--free-after-load not read by vLLM's rule: the extensible KV cache") for note in new)


def test_adadrags_095_start_that_ran_is_a_may_not_start_not_a_refusal(capsys: pytest.CaptureFixture[str]) -> None:
    """adadrag/qwen3.5-dgx-spark's README (286a9ea3, record adadrag-qwen3.5-35b-a3b-bf16-gb10-nightly-u095-len1048576):
    Qwen3.5-35B-A3B at --gpu-memory-utilization 0.95 on a DGX Spark started, 'Model weights: 65.53 GiB', 'Available KV
    cache: 44.47 GiB', 'KV cache capacity: 581,856 tokens'. 0.95 asks ceil(0.95 × T) = 122,100,750,746 B = 113.72 GiB
    free, so the host may hold at most T − that = 6,426,355,302 B = 5.99 GiB: above the assumed span's low end
    15,076,229,539 − 9,022,602,845 = 6,053,626,694 B, below its centre. Before, the plan said 'refused at the
    assumed host share' of a start that ran; now it may not start, its headline the capacity, its interval 0 – a high
    end that holds the logged 581,856."""
    model = str(CONFIGS / "heldout" / "Qwen--Qwen3.5-35B-A3B.json")
    args = ["--model", model, "--engine", "vllm", "--engine-version", "0.17.0", "--gpu", "GB10", "--cmd",
            "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve Qwen/Qwen3.5-35B-A3B --max-model-len 1048576 "
            "--gpu-memory-utilization 0.95"]  # fmt: skip
    out = plan_json(capsys, *args)
    start = out["start"]
    assert start["needs_bytes"] == math.ceil(0.95 * GB10_T) == 122_100_750_746
    assert start["most_held_bytes"] == GB10_T - 122_100_750_746 == 6_426_355_302
    assert GB10_HELD - GB10_ERROR == 6_053_626_694 < start["most_held_bytes"] < GB10_HELD
    assert start["state"] == StartVerdict.REFUSED_AT_CENTRE.value and out["interval_kind"] == "refused_at_centre"
    assert out["token_capacity"] > 0 and out["token_capacity_min"] == 0 < 581_856 <= out["token_capacity_max"]
    assert start["reason"].startswith("may not start: vLLM needs 113.72 GiB free at its start (0.95 × 119.70 GiB), so "
                                      "the host may hold at most 5.99 GiB; the host share assumed 14.04 GiB ± 8.40 GiB "
                                      "(5.64 GiB – 22.44 GiB): it starts at the low end, not at the centre")  # fmt: skip
    assert main(["plan", "--no-calibration-store", *args]) == 0
    text = capsys.readouterr().out
    assert "refused" not in text and "Token capacity      refused" not in text
    headline = next(line for line in text.splitlines() if line.startswith("Token capacity"))
    assert headline.split(None, 2)[2] == f"{out['token_capacity']:,} tokens per rank"


@pytest.mark.parametrize("engine", ["sglang", "lmdeploy"])
def test_a_gb10_free_memory_given_names_the_context_row_as_the_host_and_the_context(
    capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    """`--free-memory 100GiB` on a GB10: CUDA's total (119.70 GiB) less it is 19.70 GiB, which holds what the host
    held (the OS, its page cache) with the CUDA context, not a context of 19.70 GiB (FR2 #7): the term (and LMDeploy's
    budget row) are named as both."""
    out = plan_json(capsys, "--model", QWEN, "--engine", engine, "--gpu", "GB10", "--free-memory", "100GiB")
    context = next(term for term in out["terms"] if term["term"] == "context")
    assert context["label"] == "what the host held and the CUDA context (measured: total − free before load)"
    assert context["bytes"] == out["gpu"]["total_bytes"] - 100 * GIB == 21_152_923_648  # 119.70 − 100 GiB
    assert not any(step["label"] == "− CUDA context, NCCL" for step in out["steps"])
    if engine == "lmdeploy":
        row = next(step for step in out["steps"] if step["label"].startswith("− what the host held"))
        assert row["bytes"] == -context["bytes"]
