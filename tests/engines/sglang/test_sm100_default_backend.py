"""Which GPUs take SGLang's Blackwell attention backends, by compute capability as SGLang reads it, not by a card list.

Expected values are SGLang's own code, read in its wheels:
- the defaults (DeepSeek-V3's trtllm_mla, from v0.5.3.post2; trtllm_mha for MHA models, from v0.5.6.post1) are set
  under `is_sm100_supported()`, capability major 10 only (utils/common.py:244-249 at v0.5.6; server_args.py:1016-1025
  and :1175 at v0.5.6; `get_platform().is_sm100`, arg_groups/model_overrides/deepseek_v2.py:179 at v0.5.23), so a
  B300 named as NVML prints it (10.3) takes trtllm_mla's page of 64 and an SM120 card (RTX PRO 6000, RTX 5090) keeps
  the generic default and page 1;
- a named trtllm_mla runs on `is_sm100_supported` to v0.5.4 (server_args.py:895-899 at v0.5.3), on
  `is_blackwell_supported` (majors 10 and 12) from v0.5.5 (utils/common.py:201-206), 10, 11 and 12 from v0.5.9;
  a named trtllm_mha on SM100 only at v0.5.6 (server_args.py:1391), on any GPU from v0.5.10.
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.engines.sglang.attention_backends import check_attention_backend
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from tests.conftest import CONFIGS
from tests.engines.measured_flags import plan_json

DSV3 = str(CONFIGS / "deepseek-ai--DeepSeek-V3.json")
LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
SGLANG = ("--engine", "sglang")


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


@pytest.mark.parametrize(("gpu", "page"), [
    ("B200", 64), ("NVIDIA B300 SXM6 AC", 64), ("GB300-DGX-STATION", 64),  # SM 10.0 / 10.3: trtllm_mla
    ("RTX PRO 6000", 1), ("RTX5090", 1), ("H200", 1),  # SM 12.0 (and Hopper): not is_sm100_supported
])  # fmt: skip
def test_deepseek_v3s_default_backend_pages_by_64_on_sm100_only(
    capsys: pytest.CaptureFixture[str], gpu: str, page: int
) -> None:
    plan = plan_json(capsys, SGLANG, "--model", DSV3, "--tp", "8", "--gpu", gpu, "--engine-version", "0.5.6.post2")
    assert plan["page_size"] == page


# SM120 at 0.5.7: 0.5.6.post1/.post2 pick trtllm_mha there too and raise (test_sm120_default_mha.py)
@pytest.mark.parametrize(("gpu", "release", "page"), [
    ("B200", "0.5.6.post2", 64), ("B200", "0.5.7", 64), ("RTX PRO 6000", "0.5.7", 1), ("RTX5090", "0.5.7", 1),
])  # fmt: skip
def test_the_mha_default_trtllm_mha_is_sm100s_too(
    capsys: pytest.CaptureFixture[str], gpu: str, release: str, page: int
) -> None:
    plan = plan_json(capsys, SGLANG, "--model", LLAMA_8B, "--gpu", gpu, "--engine-version", release)
    assert plan["page_size"] == page


def test_the_default_trtllm_mla_kv_dtype_check_follows_sm100(capsys: pytest.CaptureFixture[str]) -> None:
    """trtllm_mla raises on fp8_e5m2; SGLang picks it by default on SM100 only, so an SM120 card is not refused."""
    launch = ["--model", DSV3, "--tp", "8", "--kv-cache-dtype", "fp8_e5m2", "--engine-version", "0.5.23"]
    assert main(["plan", "--engine", "sglang", *launch, "--gpu", "NVIDIA B300 SXM6 AC"]) != 0
    assert "runs trtllm_mla with --kv-cache-dtype" in capsys.readouterr().err
    assert plan_json(capsys, SGLANG, *launch, "--gpu", "RTX PRO 6000")["page_size"] == 1


def _check(backend: str, gpu: str, version: str) -> None:
    settings = LaunchSettings(engine="sglang", flags={"attention-backend": backend})
    check_attention_backend(settings, gpu, ResolvedVersion(text=version))


@pytest.mark.parametrize(("backend", "version", "taken"), [
    ("trtllm_mla", "0.5.4", False), ("trtllm_mla", "0.5.5", True), ("trtllm_mla", "0.5.23", True),
    ("trtllm_mha", "0.5.6.post2", False), ("trtllm_mha", "0.5.10", True),
])  # fmt: skip
def test_a_named_blackwell_backend_on_an_sm120_card_by_release(backend: str, version: str, taken: bool) -> None:
    if taken:
        _check(backend, "RTX PRO 6000", version)
    else:
        with pytest.raises(InputError, match=r"Blackwell GPUs only \(got RTX PRO 6000: SM 12\.0, not SM10x"):
            _check(backend, "RTX PRO 6000", version)
    _check(backend, "NVIDIA B300 SXM6 AC", version)  # SM 10.3 at every release
    if backend == "trtllm_mla" or not taken:
        with pytest.raises(InputError, match="Blackwell GPUs only"):
            _check(backend, "H100", version)
