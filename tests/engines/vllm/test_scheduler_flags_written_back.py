"""vLLM's scheduler switches are read by kvtop's rules, so the plan's "engine flags:" line writes them back (#27, session
70 operator pass).

`--enable-prefix-caching` gives a GDN hybrid mamba_cache_mode 'align' (2 state blocks a request, hybrid.py), which the
hybrid's default at v0.25.0 (off, before v0.28.0) does not: the Qwen3.6-35B-A3B plan at 32,768 tokens on an H100 holds
1,365,045 tokens with it and 1,482,049 without. Before this the line dropped the switch, so the flags an operator
copied planned the second figure (and launched vLLM without prefix caching); `plan --help` listed the three switches
as "accepted, not modelled". Expected: the line carries what was typed, and planned again gives the same figure.
"""

from __future__ import annotations

import shlex

import pytest

from kvtop.domain.launch import engine_flags
from tests.data_paths import DATA
from tests.engines.measured_flags import plan_json

QWEN36 = str(DATA / "calibration" / "configs" / "Qwen--Qwen3.6-35B-A3B-FP8.RECONSTRUCTED.json")
BASE = ("--model", QWEN36, "--engine", "vllm", "--engine-version", "0.25.0", "--gpu", "H100")


@pytest.mark.parametrize("switches", [
    ("--enable-prefix-caching",),
    ("--no-enable-prefix-caching", "--no-enable-chunked-prefill", "--async-scheduling"),
])  # fmt: skip
def test_the_copied_flags_plan_the_same_launch(capsys: pytest.CaptureFixture[str], switches: tuple[str, ...]) -> None:
    typed = plan_json(capsys, BASE, "--max-model-len", "32768", *switches)
    assert all(switch in typed["engine_flags"] for switch in switches)
    again = plan_json(capsys, BASE, *typed["engine_flags"])
    assert again["token_capacity"] == typed["token_capacity"]


def test_prefix_caching_on_the_hybrid_is_the_line_s_figure(capsys: pytest.CaptureFixture[str]) -> None:
    """The two figures the line must keep apart (hybrid.py's mamba_cache_mode: 'align' with the switch, 'none' without
    at v0.25.0): the copied line gives the first, not the second."""
    on = plan_json(capsys, BASE, "--max-model-len", "32768", "--enable-prefix-caching")
    off = plan_json(capsys, BASE, "--max-model-len", "32768")
    # 1,364,183 and 1,481,113 after session 70's refit (1,365,045 / 1,482,049 before): 'align' keeps a state per
    # request beside the pages, so the switch must lower the figure, and the copied line must keep it
    assert on["token_capacity"] < off["token_capacity"]
    assert shlex.join(on["engine_flags"]) == "--max-model-len 32768 --enable-prefix-caching"


def test_help_says_the_switches_are_read() -> None:
    flags = engine_flags("vllm")
    assert {"--enable-prefix-caching", "--no-enable-chunked-prefill", "--async-scheduling"} <= flags.read_by_rules


LLAMA = str(DATA / "configs" / "meta-llama--Llama-3.1-8B-Instruct.json")


def test_the_typed_settings_are_written_back(capsys: pytest.CaptureFixture[str]) -> None:
    """Session 71: the line dropped --quantization, --dtype, --enforce-eager, --num-gpu-blocks-override and
    --disable-hybrid-kv-cache-manager. Llama-3.1-8B on an H100 at v0.11.0 plans more tokens with online fp8 weights
    (8 GB less weights: bf16 16.1 GB, fp8 about half) than without, so a copied line without `--quantization fp8`
    plans (and launches) the other figure; copied with it, planned again, the same."""
    base = ("--model", LLAMA, "--engine", "vllm", "--engine-version", "0.11.0", "--gpu", "H100")
    typed = ("--quantization", "fp8", "--dtype", "bfloat16", "--enforce-eager")
    fp8 = plan_json(capsys, base, *typed)
    assert fp8["engine_flags"] == ["--quantization", "fp8", "--dtype", "bfloat16", "--enforce-eager"]
    assert plan_json(capsys, base, *fp8["engine_flags"])["token_capacity"] == fp8["token_capacity"]
    assert plan_json(capsys, base)["token_capacity"] < fp8["token_capacity"]  # the figure the dropped line planned
    blocks = plan_json(capsys, base, "--num-gpu-blocks-override", "1000", "--disable-hybrid-kv-cache-manager")
    assert blocks["engine_flags"] == ["--num-gpu-blocks-override", "1000", "--disable-hybrid-kv-cache-manager"]
