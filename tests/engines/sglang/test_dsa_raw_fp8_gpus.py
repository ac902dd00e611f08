"""Which GPUs keep SGLang's FP8 DSA KV as the raw 576-B latent: capability major 10 and newer, SM120 included.

Expected values from SGLang's code, read in its wheels: the DSA backends default to trtllm for fp8_e4m3 KV where
`major >= 10` of `torch.cuda.get_device_capability()` (0.5.10 server_args.py:1465 _set_default_nsa_backends, 0.5.12
:1722; 0.5.23 arg_groups/overrides.py:714-720), and the pool keeps the raw row under a trtllm DSA decode backend
(0.5.10 model_executor/model_runner_kv_cache_mixin.py:240-257 calculate_mla_kv_cache_dim); elsewhere the row is
fp8 NoPE 512 + fp32 scale per 128 (4 × 4) + bf16 RoPE 64 × 2 = 656 B. DeepSeek-V3.2 (config): 61 layers, the
indexer's keys 128 + 128 // 128 × 4 = 132 B a layer; at 0.5.23 the cell is the pool's own width (0.5.17 on).
"""

from __future__ import annotations

import pytest

from tests.conftest import CONFIGS
from tests.engines.measured_flags import plan_json

DSV32 = str(CONFIGS / "deepseek-ai--DeepSeek-V3.2.json")
RAW, SCALED = 61 * 576 + 61 * 132, 61 * (512 + 16 + 128) + 61 * 132  # 43,188 B and 48,068 B


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


@pytest.mark.parametrize(("gpu", "cell"), [
    ("B200", RAW), ("NVIDIA B300 SXM6 AC", RAW),  # SM 10.0 / 10.3
    ("RTX PRO 6000", RAW), ("RTX5090", RAW),  # SM 12.0: major >= 10 too
    ("H200", SCALED),  # SM 9.0: flashmla_kv, the 656-B row
])  # fmt: skip
def test_fp8_dsa_rows_are_raw_on_every_gpu_of_major_10_and_newer(
    capsys: pytest.CaptureFixture[str], gpu: str, cell: int
) -> None:
    launch = ("--engine", "sglang")
    flags = ("--model", DSV32, "--tp", "8", "--kv-cache-dtype", "fp8_e4m3", "--gpu", gpu, "--engine-version", "0.5.23")
    assert plan_json(capsys, launch, *flags)["kv_bytes_per_token"] == cell
