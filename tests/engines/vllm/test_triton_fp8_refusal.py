"""vLLM refuses an FP8 KV wherever it runs TRITON_ATTN below sm89 from v0.24.0 (`attention_select.check_triton_fp8`):
the selector's pick decides, not only the fallback (final reader 1, session 71).

Expected from vLLM's code, not kvtop's: v0.24.0 models/config.py:57-105 Gemma4Config forces TRITON_ATTN where FA4
does not run (sm86 is not sm9x-sm11x, flash_attn_interface.py:72-84); v1/attention/backends/triton_attn.py:471-481
(PR #43914, first in v0.24.0, absent from v0.23.0) raises "FP8 KV cache is not supported by the Triton attention
backend" below sm89. A named `--attention-backend TRITON_ATTN` is run as named. FLASHINFER takes an FP8 KV on sm86
(flashinfer.py:414-423), so an unnamed Qwen3-8B there is served.
"""

from __future__ import annotations

import pytest

from tests.cli_in_process import run_kvtop
from tests.conftest import CONFIGS

GEMMA4 = "tests/data/calibration/configs/RedHatAI--gemma-4-31B-it-FP8-block.RECONSTRUCTED.json"
QWEN3 = str(CONFIGS / "Qwen--Qwen3-8B.json")


def _plan(model: str, release: str, *flags: str, gpu: str = "RTX 3090"):
    return run_kvtop("plan", "--engine", "vllm", "--model", model, "--gpu", gpu, "--engine-version", release,
                     "--kv-cache-dtype", "fp8", *flags)  # fmt: skip


@pytest.mark.parametrize("release", ["0.24.0", "0.30.0"])
def test_gemma4_fp8_on_sm86_is_refused_where_gemma4config_forces_triton(release: str) -> None:
    result = _plan(GEMMA4, release, "--tp", "2")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"vLLM {release} refuses FP8 KV for this model on RTX 3090 (sm86): it runs TRITON_ATTN" in result.stderr
    assert "no FA4 on sm86" in result.stderr  # the pick's why


def test_gemma4_fp8_on_sm86_plans_before_the_triton_refusal() -> None:
    assert _plan(GEMMA4, "0.23.0", "--tp", "2").returncode == 0  # TRITON_ATTN there too, FP8 taken on any GPU


def test_a_named_triton_backend_with_fp8_on_sm86_is_refused() -> None:
    named = _plan(QWEN3, "0.24.0", "--", "--attention-backend", "TRITON_ATTN")
    assert named.returncode == 2 and "(named by --attention-backend)" in named.stderr
    assert _plan(QWEN3, "0.24.0").returncode == 0  # unnamed: FLASHINFER takes it
    assert _plan(QWEN3, "0.24.0", "--", "--attention-backend", "TRITON_ATTN", gpu="L40S").returncode == 0  # sm89
