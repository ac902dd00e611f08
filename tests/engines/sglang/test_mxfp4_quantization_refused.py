"""gpt-oss's MXFP4 checkpoint launched with `--quantization` on SGLang: refused where the engine upcasts the experts
to bf16, which kvtop does not model (engines/sglang/mxfp4_held.check_quantization_upcast).

Expected from SGLang's code, read in the wheels of 0.5.10.post1 and 0.5.23: the auto MoE runner of an MXFP4
GptOssForCausalLM is `flashinfer_mxfp4` on SM 10.x and the SM 12.x branch's own (triton_kernel at 0.5.10.post1,
flashinfer_mxfp4 at 0.5.23), both tested before `--quantization`; elsewhere triton_kernel only with `quantization is
None` (server_args.py 0.5.10.post1 :1768-1771; 0.5.23 arg_groups/model_overrides/gpt_oss.py:102-105), else the runner
stays auto and `Mxfp4MoEMethod.process_weights_after_loading` takes its upcast branch (quantization/mxfp4.py
0.5.10.post1 :719-739, 0.5.23 :1115-1135). `is_sm100_supported` / `is_sm120_supported` test majors 10 and 12 only
(0.5.10.post1 utils/common.py:254-263), so SM 8.x (A100) and 9.x (H100, H200) upcast.
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

GPT_OSS_20B = str(CONFIGS / "openai--gpt-oss-20b.json")
GPT_OSS_120B = str(CONFIGS / "openai--gpt-oss-120b.json")
LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
ACTION = "drop --quantization: SGLang's auto path keeps the MXFP4 experts"


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


def _plan(model: str, gpu: str, version: str, *flags: str) -> int:
    return main(["plan", "--engine", "sglang", "--model", model, "--gpu", gpu, "--engine-version", version, *flags])


@pytest.mark.parametrize(("model", "gpu", "version"), [
    (GPT_OSS_20B, "H100-PCIE", "0.5.10.post1"),
    (GPT_OSS_120B, "H200", "0.5.23"),
    (GPT_OSS_20B, "A100-80GB", "0.5.23"),
])  # fmt: skip
def test_hopper_and_ampere_upcast_refused(capsys: pytest.CaptureFixture[str], model: str, gpu: str,
                                          version: str) -> None:
    assert _plan(model, gpu, version, "--quantization", "mxfp4") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("kvtop: error: --quantization: ") and err.rstrip().endswith(ACTION)
    assert f"SGLang {version} upcasts gpt-oss's MXFP4 experts to bf16 on {gpu}" in err


@pytest.mark.parametrize(("gpu", "version"), [
    ("B200", "0.5.10.post1"), ("B200", "0.5.23"),  # SM 10.x: flashinfer_mxfp4, before the --quantization test
    ("RTX5090", "0.5.10.post1"), ("RTX5090", "0.5.23"),  # SM 12.x: its own branch, before it too
    ("H100", "0.5.2"),  # before 0.5.3rc0: not read, nothing charged or refused
])  # fmt: skip
def test_other_runners_and_releases_plan(capsys: pytest.CaptureFixture[str], gpu: str, version: str) -> None:
    assert _plan(GPT_OSS_20B, gpu, version, "--quantization", "mxfp4") == 0
    assert ACTION not in capsys.readouterr().err


def test_without_the_flag_or_another_model_plans(capsys: pytest.CaptureFixture[str]) -> None:
    assert _plan(GPT_OSS_20B, "H100", "0.5.23") == 0  # the auto path: triton_kernels, modelled (mxfp4_held)
    assert _plan(LLAMA_8B, "H100", "0.5.23", "--quantization", "fp8") == 0  # not an MXFP4 gpt-oss
    assert ACTION not in capsys.readouterr().err


EP_ACTION = "plan it at EP 1 (drop --ep-size): SGLang's auto path keeps the MXFP4 experts there"


@pytest.mark.parametrize(("gpu", "version"), [("H100", "0.5.12"), ("A100-80GB", "0.5.17"), ("H200", "0.5.23")])
def test_ep_above_1_upcasts_too_and_is_refused(capsys: pytest.CaptureFixture[str], gpu: str, version: str) -> None:
    # the triton_kernel override's test is `ep_size == 1 and … quantization is None` (0.5.12 server_args.py:2098-2102,
    # 0.5.17 arg_groups/overrides.py:949-953, 0.5.23 model_overrides/gpt_oss.py:102-107): at EP 2 the runner stays
    # auto, and process_weights_after_loading's `else` upcasts (0.5.12 mxfp4.py:852-870, 0.5.23 :1115-1135)
    assert _plan(GPT_OSS_120B, gpu, version, "--tp", "2", "--ep-size", "2") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("kvtop: error: --ep-size: ") and err.rstrip().endswith(EP_ACTION)
    assert f"SGLang {version} upcasts gpt-oss's MXFP4 experts to bf16 on {gpu} at EP 2" in err


@pytest.mark.parametrize(("gpu", "flags"), [
    ("H100", ("--ep-size", "1")),  # EP 1: triton_kernels, modelled
    ("B200", ("--ep-size", "2")),  # SM 10.x: flashinfer_mxfp4 before the EP test
])  # fmt: skip
def test_ep_1_and_blackwell_plan(capsys: pytest.CaptureFixture[str], gpu: str, flags: tuple[str, ...]) -> None:
    assert _plan(GPT_OSS_120B, gpu, "0.5.23", "--tp", "2", *flags) == 0
    assert EP_ACTION not in capsys.readouterr().err


@pytest.mark.parametrize(("version", "backend"), [("0.5.12", "deepep"), ("0.5.23", "deepep"), ("0.5.23", "pplx")])
def test_ep_above_1_with_an_all_to_all_backend_is_refused(capsys: pytest.CaptureFixture[str], version: str,
                                                          backend: str) -> None:  # fmt: skip
    # `deepep` leaves the runner auto (0.5.12 and 0.5.17 resolve it nowhere; 0.5.23 moe_hook.py:362-398 sets no
    # runner), so mxfp4.py's `else` upcasts as without one (0.5.23 :1115-1135); 0.5.23 takes deep_gemm for pplx
    # (moe_hook.py:603-609), whose kept bytes kvtop has not read: neither plans (was: any backend planned, at MXFP4)
    assert _plan(GPT_OSS_120B, "H100", version, "--tp", "2", "--ep-size", "2", "--moe-a2a-backend", backend) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kvtop: error: --moe-a2a-backend: ")
    assert f"at EP 2 with --moe-a2a-backend {backend} is not read by kvtop" in err
    assert err.rstrip().endswith(EP_ACTION.replace("(drop --ep-size)", "(drop --ep-size and --moe-a2a-backend)"))


@pytest.mark.parametrize("version", ["0.5.12", "0.5.23"])
def test_an_all_to_all_backend_spans_ep_over_tp_without_ep_size(capsys: pytest.CaptureFixture[str], version: str) -> None:
    """SGLang sets `ep_size = tp_size` under deepep whatever `--ep-size` says (0.5.12 server_args.py:3215-3219;
    0.5.23 arg_groups/overrides.py:1611-1619): `--tp 2 --moe-a2a-backend deepep` runs the experts at EP 2, refused
    as the typed `--ep-size 2` is (the final review of session 69 found it planned at MXFP4)."""
    assert _plan(GPT_OSS_120B, "H100", version, "--tp", "2", "--moe-a2a-backend", "deepep") == 2
    err = capsys.readouterr().err
    assert err.startswith("kvtop: error: --moe-a2a-backend: ") and "at EP 2 with --moe-a2a-backend deepep" in err
