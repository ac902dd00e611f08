"""The SM100 and SM90+ families by compute capability (kvtop/domain/gpus.py `CapabilityFamily`), at each engine use.

Each use stands for an engine check that reads `torch.cuda.get_device_capability()`, never a card name, so a card named
as NVML prints it ('NVIDIA B300 SXM6 AC', capability 10.3 in its printout, search-index id 59793277385) or the DGX
Station's GB300 ('compute capability 10.3', 61363111305) takes what a B200 (10.0) takes, and an SM120 card (RTX PRO 6000
Blackwell, 'compute cap 12.0', 69692196936) does not:
- SGLang `is_sm100_supported` (major 10; utils/common.py:244-249 at v0.5.6): fa4's page at 0.5.10rc0 … 0.5.14
  (server_args.py:4651-4659 at 0.5.14), GPT-OSS's trtllm_mha full pool at 0.5.8 … 0.5.9;
- SGLang's FP8 DSA trtllm backends' raw 576-B row from 0.5.10 (`_set_default_nsa_backends`, `major >= 10`): SM120 too;
- SGLang's `auto` DSA KV default, `fp8_e4m3 if major >= 10` (`_set_default_nsa_kv_cache_dtype`): SM120 too;
- LMDeploy `flash_mla_available` (major >= 9; lmdeploy/pytorch/configurations/utils.py): 64-token blocks for MLA.
The expected bytes per token are SGLang's own (tests/data/engine_diff/sglang-0.5.23.json, test_sglang_engine_rows.py S1).
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.gpus import SM90_AND_NEWER, SM100, SM100_AND_NEWER, gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from tests.data_paths import CONFIGS
from tests.domain.test_sglang_engine_rows import BUDGET, DSV32, GPT_OSS, engine_row, model

SM100_NAMES = ("B200", "NVIDIA B300 SXM6 AC", "GB300-DGX-STATION", "NVIDIA GB300")
SM120_NAMES = ("RTX PRO 6000", "NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX5090")


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


def test_the_families_read_the_capability_table() -> None:
    assert all(SM100.holds(name) for name in SM100_NAMES)
    assert not any(SM100.holds(name) for name in (*SM120_NAMES, "H100", "NVIDIA H100 80GB HBM3", "A100", None, "X9"))
    assert all(SM90_AND_NEWER.holds(name) for name in (*SM100_NAMES, *SM120_NAMES, "NVIDIA H100 80GB HBM3", "GH200"))
    assert all(SM100_AND_NEWER.holds(name) for name in (*SM100_NAMES, *SM120_NAMES))
    assert not any(SM100_AND_NEWER.holds(name) for name in ("NVIDIA H100 80GB HBM3", "GH200", None))
    assert not any(SM90_AND_NEWER.holds(name) for name in ("A100-80GB", "L40S", "RTX4090", None, "X9"))


def _sglang(version: str, config: str, kv: str, gpu: str) -> Ledger:
    """The harness's launch (test_sglang_engine_rows.plan) on a GPU named as the user or NVML names it."""
    tp = 8 if config == DSV32 else 4
    context = engine_row("0.5.23", config, tp, "auto" if kv == "auto" else "fp8", "sm100")["max_model_len"]
    argv = ["--tp", str(tp), "--kv-cache-dtype", kv, "--context-length", str(context),
            "--mem-fraction-static", "0.75", "--engine-version", version]  # fmt: skip
    settings = parse_flags("sglang", argv)
    total = gpu_total_bytes("B200")
    return predict(model(config), settings, gpu_total_bytes=total, gpu_name=gpu, measured=BUDGET)


@pytest.mark.parametrize("gpu", SM100_NAMES)
def test_fp8_dsa_keeps_the_raw_latent_on_every_sm100_name(gpu: str) -> None:
    """0.5.10: 43,188 B a token at TP 8 on SM100 (trtllm, raw 576 B), 48,068 B (656-B rows) before it."""
    assert _sglang("0.5.10", DSV32, "fp8_e4m3", gpu).kv_bytes_per_token == 43_188
    assert _sglang("0.5.9", DSV32, "fp8_e4m3", gpu).kv_bytes_per_token == 48_068
    assert _sglang("0.5.10", DSV32, "auto", gpu).kv_bytes_per_token == 43_188  # `auto` is FP8 for DSA on SM100


@pytest.mark.parametrize("gpu", SM120_NAMES)
def test_fp8_dsa_takes_the_raw_latent_on_sm120_too(gpu: str) -> None:
    """`_set_default_nsa_backends` sends FP8 to trtllm at `major >= 10` (0.5.10 server_args.py:1464-1467), SM120 too:
    raw 576-B rows there as on SM100 (eras.DSA_RAW_FP8_ERAS); 656-B rows before 0.5.10."""
    assert _sglang("0.5.10", DSV32, "fp8_e4m3", gpu).kv_bytes_per_token == 43_188
    assert _sglang("0.5.9", DSV32, "fp8_e4m3", gpu).kv_bytes_per_token == 48_068
    # `auto` is FP8 there too (SGLang's DSA default: major >= 10); bf16 below SM100
    assert _sglang("0.5.10", DSV32, "auto", gpu).kv_bytes_per_token == 43_188
    assert _sglang("0.5.10", DSV32, "auto", "H100").kv_bytes_per_token > 48_068


@pytest.mark.parametrize(("gpu", "full_pool"), [*((name, True) for name in SM100_NAMES), ("RTX PRO 6000", False),
                                                ("H100", False)])  # fmt: skip
def test_gpt_oss_full_pool_at_0_5_8_follows_sm100(gpu: str, full_pool: bool) -> None:
    assert (_sglang("0.5.8", GPT_OSS, "fp8_e4m3", gpu).engine.swa_token_capacity is None) is full_pool


QWEN3_8B = str(CONFIGS / "Qwen--Qwen3-8B.json")


@pytest.mark.parametrize(("gpu", "page"), [*((name, 128) for name in SM100_NAMES), ("RTX PRO 6000", 16)])
def test_fa4_pages_by_128_on_every_sm100_name(capsys: pytest.CaptureFixture[str], gpu: str, page: int) -> None:
    typed = ["plan", "--json", "--model", QWEN3_8B, "--engine", "sglang", "--engine-version", "0.5.14", "--gpu", gpu,
             "--page-size", "16", "--prefill-attention-backend", "fa4"]  # fmt: skip
    assert main(typed) == 0
    assert f'"page_size": {page}' in capsys.readouterr().out


DSV3 = str(CONFIGS / "deepseek-ai--DeepSeek-V3.json")


@pytest.mark.parametrize("gpu", [*SM100_NAMES, *SM120_NAMES, "NVIDIA H100 80GB HBM3"])
def test_lmdeploy_flash_mla_needs_64_token_blocks_from_sm90(capsys: pytest.CaptureFixture[str], gpu: str) -> None:
    typed = ["plan", "--model", DSV3, "--engine", "lmdeploy", "--tp", "8", "--cache-block-seq-len", "32", "--gpu", gpu]
    assert main(typed) != 0
    assert "--cache-block-seq-len 64" in capsys.readouterr().err


def test_lmdeploy_without_flash_mla_below_sm90_takes_32(capsys: pytest.CaptureFixture[str]) -> None:
    typed = ["plan", "--model", DSV3, "--engine", "lmdeploy", "--tp", "8", "--cache-block-seq-len", "32", "--gpu"]
    assert main([*typed, "A100-80GB"]) == 0


def test_vllm_families_by_major_not_by_name() -> None:
    """vLLM's two KV rules by capability (kv.py `KvStorage`): `auto` on a bf16 model is fp16 below sm80 from v0.9.0
    (dtype_fallback.py: CudaPlatform.supported_dtypes is [float16, float32] at sm6x-sm7x), and FP8 DSA KV is
    `fp8_ds_mla` on Hopper (SM90) alone in the backend era (backends.py). T4 7.5 and V100 7.0 lack bf16, an RTX 4090
    (8.9) and an A100 (8.0) have it; H100 and H200 are 9.0, a B200 10.0 (the capability table)."""
    from kvtop.domain.gpus import CapabilityFamily

    no_bf16, hopper = CapabilityFamily.below(8), CapabilityFamily.of_majors(frozenset({9}))
    assert [no_bf16.holds(g) for g in ("T4", "V100", "A100-80GB", "RTX4090", "H100")] == [True, True, False, False, False]
    assert [hopper.holds(g) for g in ("A100-80GB", "H100", "H200", "B200", "RTX5090")] == [False, True, True, False, False]
    assert not no_bf16.holds("a GPU kvtop does not know") and not hopper.holds(None)
    assert not CapabilityFamily.below(0).holds("T4") and not CapabilityFamily.of_majors(frozenset()).holds("H100")
    with pytest.raises(ValueError, match="not consecutive"):
        CapabilityFamily.of_majors(frozenset({8, 10}))
