"""The operator pass's formatting leftovers (session 63), each as the CLI prints it from a real input.

The expected figures come from the inputs, not from kvtop: a case's log lines and its case.json worked check, or
the model's geometry by hand (layers × KV heads × head size × 2 × bytes × tokens per block).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.commands.probe import render_probe_result
from kvtop.domain.probe import MeasuredPerToken, ProbeOutcome, ProbeResult
from kvtop.domain.wording import spread
from kvtop.units import GIB, MIB, fmt_both_or_binary

DATA = Path(__file__).parent / "data"
CASES, CONFIGS = DATA / "cases", DATA / "configs"
LLAMA2_7B = CONFIGS / "meta-llama--Llama-2-7b-hf.json"  # 32 layers × 32 KV heads × 128, fp16: 524,288 B a token


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


def _out(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def _line(text: str, start: str) -> str:
    return next(line.strip() for line in text.splitlines() if line.lstrip().startswith(start))


def test_a_mismatch_gap_carries_the_typographic_minus(capsys: pytest.CaptureFixture[str]) -> None:
    # trtllm#2268: 631 primary-pool blocks × 32 = 20,192 logged; case.json's worked check: 40,338..40,357 tokens at
    # free 21.89 GiB, in 32-token blocks 40,352: 20,192 − 40,352 = −20,160
    log = CASES / "trtllm" / "trtllm-2268-qwen15-7b-primary-pool" / "engine.log"
    verdict = _line(_out(capsys, "explain", str(log), "--model", str(LLAMA2_7B)), "verdict:")
    assert verdict.startswith("verdict: MISMATCH by −20,160 tokens from the interval's low end (log 20,192, interval 40,352–")


def test_an_interval_side_of_zero_carries_no_sign(capsys: pytest.CaptureFixture[str]) -> None:
    assert spread(0, 167_840) == "0 / +167,840" and spread(45_056, 27_520) == "−45,056 / +27,520"
    # Gemma-3-27B on an H100 under vLLM v0.33.0 (utilization 0.9) does not fit at the centre: the interval's low end is
    # 0 tokens, its high end above it (v0.34.0's utilization 1.0 fits it, so the release is pinned)
    out = _out(
        capsys, "plan", "--model", str(CONFIGS / "google--gemma-3-27b-it.json"), "--engine", "vllm",
        "--engine-version", "0.33.0",
    )
    interval = _line(out, "Interval")
    assert interval.startswith("Interval            0 – ") and " tokens (0 / +" in interval and "−0" not in interval


def test_a_zero_runtime_reserve_is_not_a_step(capsys: pytest.CaptureFixture[str]) -> None:
    # LMDeploy sizes its pool from free memory alone (cache_max_entry_count of it): no reserve beside the pool
    out = _out(capsys, "plan", "--model", str(LLAMA2_7B), "--engine", "lmdeploy")
    pool = _line(out, "KV pool")
    assert pool.endswith(" per rank") and "runtime reserve" not in pool and "0.00 GB" not in pool


def test_the_probe_counts_one_chunk_and_one_padding_row() -> None:
    # 1 GiB at 40,960 B a token (Llama-3-70B at TP 8): 26,213 tokens and one padding page, in one allocation
    allocated = 26_214 * 40_960
    result = ProbeResult(
        outcome=ProbeOutcome.OK, message="filled 26,213 tokens", device="GPU 0", mode="fill",
        tokens_allocated=26_213, padding_rows=1, bytes_allocated=allocated, bytes_per_token_predicted=40_960,
        measured=MeasuredPerToken(total_bytes=allocated, tokens=26_213), reserve_bytes=2 * GIB, budget_bytes=GIB,
        free_before_bytes=3 * GIB, chunks=1, touched=True, seconds=0.5, released=True, release_check="process exited",
    )  # fmt: skip
    text = render_probe_result(result)
    assert "  tokens         26,213 allocated (+1 padding row) in 1 chunk, every page touched" in text


def test_an_exbibyte_host_tier_keeps_its_columns(capsys: pytest.CaptureFixture[str]) -> None:
    # 1 EiB (2**60 B) at 524,288 B a token: 2,199,023,255,552 tokens, less the pool's rounding; 2**60 B is
    # 1,152,921,504.61 GB: the figure is wider than its column and still stands apart from the label
    out = _out(capsys, "plan", "--model", str(LLAMA2_7B), "--engine", "vllm", "--host-cache", "1EiB")
    # the label wraps within its column (`render_deployment.term_rows`), the figure on its last line
    assert _line(out, "host KV tier").endswith("2,199,019,520,000 tokens per rank")
    # the multiple of the GPU pool, whose size the calibration moves
    tier = next(line.strip() for line in out.splitlines() if "× the GPU pool)" in line)
    assert "× the GPU pool)  " in tier and "  1,152," in tier and "GB (1,073," in tier
    multiple = tier.split("(", 1)[1].split("×", 1)[0]
    assert re.fullmatch(r"\d{1,3}(,\d{3})+\.\d", multiple)  # e.g. '16,876,070.7', not '16876070.7'
    assert _line(out, "over 1 rank").startswith("over 1 rank ")  # not 'over 1 ranks'


def test_vllm_budget_labels_group_thousands(capsys: pytest.CaptureFixture[str]) -> None:
    # Gemma-3-27B at 131,072 positions in blocks of 64 on an H200, 62 layers in groups of 10 (a 5,242,880 B block
    # ÷ 64 tokens ÷ (K and V × 16 KV heads × 128 × 2 B) = 10 layers): the full group's 131,072 ÷ 64 = 2,048 blocks, and six
    # sliding groups of cdiv(1,024 − 1 + 16,384 tokens in flight, 64) + 1 = 273 each: 2,048 + 6 × 273 = 3,686 a
    # request; Nemotron-3-Nano's Mamba state 2,134,016 B in 64 × 1,024 B pages: 2,112 tokens
    gemma = _out(capsys, "plan", "--model", str(CONFIGS / "google--gemma-3-27b-it.json"), "--engine", "vllm",
                 "--gpu", "H200")  # fmt: skip
    assert _line(gemma, "tokens: int(blocks").startswith("tokens: int(blocks ÷ 3,686 × 131,072)")
    nano = CONFIGS / "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json"
    out = _out(capsys, "plan", "--model", str(nano), "--engine", "vllm", "--gpu", "H200")
    assert _line(out, "blocks of").startswith("blocks of 2,112 tokens (12,976,128 B each)")


def test_trtllm_profile_note_states_its_unit(capsys: pytest.CaptureFixture[str]) -> None:
    # the DGX Spark log: `device total memory 119.70 GiB`, `Peak memory … 113.65 GiB`, temporary pool 0.56 GiB,
    # fraction 0.9 (a C++ float), `available … 5.95 GiB`: (119.70 − 113.65 + 0.56) × 0.9 = 5.949
    log = CASES / "trtllm" / "trtllm-dgxspark-gptoss120b-v110rc3" / "engine.log"
    out = _out(capsys, "explain", str(log), "--model", str(CONFIGS / "openai--gpt-oss-120b.json"))
    assert ("note: (total 119.70 GiB − peak 113.65 GiB + temporary pool 0.56 GiB) × 0.899999976 = 5.949 GiB; "
            "the log prints 5.95 GiB") in out  # fmt: skip


def test_a_block_gap_of_megabytes_reads_in_mib(capsys: pytest.CaptureFixture[str]) -> None:
    # LMDeploy's `block_size = 8.000 MB` (MiB) against Llama-2-7B's 64 × 524,288 B = 32 MiB: 24 MiB smaller, which
    # two decimals of GB read '0.03 GB (0.02 GiB)'
    assert fmt_both_or_binary(17 * MIB + MIB // 2) == "17.50 MiB"
    log = CASES / "lmdeploy" / "lmdeploy-3411-internvl25-8b-a100-80g" / "engine.log"
    verdict = _line(_out(capsys, "explain", str(log), "--engine", "lmdeploy", "--model", str(LLAMA2_7B)), "verdict:")
    assert verdict.startswith("verdict: MISMATCH — the logged block is 24.00 MiB smaller than predicted.")
