"""vLLM keeps prefix caching opt-in for hybrids at v0.26.0-v0.27.1 (engine/arg_utils.py:2602-2606 at v0.27.1:
`default_prefix_caching = is_prefix_caching_supported and not is_hybrid`) and turns it on from v0.28.0
(:2650), so a launch that names neither flag runs mamba_cache_mode 'none' there and 'align' after
(hybrid.HYBRID_PREFIX_CACHING_DEFAULT_ERAS).

The record: Qwen3.8-27B-FP8 (16 attention + 48 Gated DeltaNet layers: one attention group and three GDN groups) on
one H100 at vLLM 0.27.1, no prefix-caching flag, max_model_len 8,192; its log printed 'GPU KV cache size: 485,083
tokens' and 'Maximum concurrency for 8,192 tokens per request: 59.21x' = int(829 / 14 × 8,192): 14 blocks a request,
11 attention (cdiv(8,192, 784)) + 3 GDN groups × 1 state block ('none': MambaSpec.max_memory_usage_bytes
page × 1, v1/kv_cache_interface.py:738 at v0.27.1). With prefix caching on ('align': page × 2, :736) a request takes
11 + 3 × 2 = 17.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.data_paths import DATA

CONFIG = str(DATA / "calibration" / "configs" / "Qwen--Qwen3.6-27B-FP8.RECONSTRUCTED.json")
LAUNCH = "vllm serve Qwen/Qwen3.8-27B-FP8 --max-model-len 8192 --max-num-seqs 256 --gpu-memory-utilization 0.90"


def _steps(capsys: pytest.CaptureFixture[str], version: str, extra: str = "") -> dict[str, str]:
    args = ["plan", "--model", CONFIG, "--engine", "vllm", "--engine-version", version, "--gpu", "H100",
            "--cmd", f"{LAUNCH} {extra}".strip(), "--json"]  # fmt: skip
    assert main(args) == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    return {step["label"].split(" (")[0]: step["note"] for step in steps}


@pytest.mark.parametrize(
    ("version", "extra", "per_request", "mode"),
    [
        ("0.27.1", "", 14, "none"),  # the log: 485,083 = int(829 / 14 × 8,192)
        ("0.27.1", "--enable-prefix-caching", 17, "align"),
        ("0.26.0", "", 14, "none"),  # engine/arg_utils.py:2518-2522 at v0.26.0, the same opt-in
        ("0.28.0", "", 17, "align"),  # on by default from v0.28.0
        ("0.28.0", "--no-enable-prefix-caching", 14, "none"),
    ],
)
def test_a_hybrid_request_takes_one_state_block_a_group_without_prefix_caching(
    capsys: pytest.CaptureFixture[str], version: str, extra: str, per_request: int, mode: str
) -> None:
    steps = _steps(capsys, version, extra)
    assert f"tokens: int(blocks ÷ {per_request} × 8,192)" in steps
    assert steps["blocks of 784 tokens"].endswith(f"(mamba_cache_mode {mode})")
