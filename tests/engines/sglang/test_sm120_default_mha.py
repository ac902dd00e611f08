"""SGLang 0.5.6.post1/.post2 do not start an MHA model on an SM120 card with no attention backend named.

Expected behaviour from SGLang's code, read in the wheels: `_handle_attention_backend_compatibility` picks trtllm_mha
for an MHA model on `is_blackwell()` (capability major in [10, 12]: utils/common.py 0.5.6.post2:221-224;
server_args.py 0.5.6.post1:1352-1353, 0.5.6.post2:1382-1383), then raises "TRTLLM MHA backend is only supported on
Blackwell GPUs (SM100). Please use a different backend." where `is_sm100_supported()` (major 10) is false
(0.5.6.post1:1440-1443, 0.5.6.post2:1470-1473). 0.5.6 has no Blackwell MHA default; 0.5.7 picks trtllm_mha on SM100
only (0.5.7:1534-1542). GPT-OSS's override picks triton before that (0.5.6.post2:1115-1126). The same ValueError on an
RTX 5090 with trtllm_mha named: sgl-project/sglang#9140.
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


def _code(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["plan", "--engine", "sglang", "--model", LLAMA_8B, *args])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("release", ["0.5.6.post1", "0.5.6.post2"])
@pytest.mark.parametrize("gpu", ["RTX PRO 6000", "RTX5090"])
def test_default_trtllm_mha_raises_on_sm120(capsys: pytest.CaptureFixture[str], release: str, gpu: str) -> None:
    code, err = _code(capsys, "--gpu", gpu, "--engine-version", release)
    assert code != 0 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("kvtop: error: --attention-backend: ")
    assert "TRTLLM MHA backend is only supported on Blackwell GPUs (SM100)" in err and "SM 12.0" in err
    assert "--attention-backend flashinfer" in err


@pytest.mark.parametrize(
    "args",
    [
        ["--gpu", "RTX PRO 6000", "--engine-version", "0.5.6"],  # no Blackwell MHA default yet
        ["--gpu", "RTX PRO 6000", "--engine-version", "0.5.7"],  # the default on SM100 only
        ["--gpu", "B200", "--engine-version", "0.5.6.post2"],  # SM100 runs trtllm_mha
        ["--gpu", "H100", "--engine-version", "0.5.6.post2"],
        ["--gpu", "RTX PRO 6000", "--engine-version", "0.5.6.post2", "--attention-backend", "flashinfer"],
        ["--gpu", "RTX PRO 6000", "--engine-version", "0.5.6.post2", "--prefill-attention-backend", "triton",
         "--decode-attention-backend", "triton"],  # one backend for both phases is the attention backend
        ["--gpu", "RTX5090", "--engine-version", "0.5.6.post1", "--prefill-attention-backend", "flashinfer",
         "--decode-attention-backend", "flashinfer"],  # the same rule at 0.5.6.post1 (server_args.py:1324-1327)
    ],
)
def test_it_plans_where_sglang_starts(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    code, err = _code(capsys, *args)
    assert code == 0, err


def test_one_phase_named_still_meets_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    """Only --decode-attention-backend named: SGLang still picks the attention default, trtllm_mha, and raises."""
    code, err = _code(capsys, "--gpu", "RTX5090", "--engine-version", "0.5.6.post2", "--decode-attention-backend",
                      "flashinfer")
    assert code != 0 and "TRTLLM MHA backend is only supported" in err


def test_gpt_oss_takes_its_own_override_first(capsys: pytest.CaptureFixture[str]) -> None:
    """GPT-OSS's override picks triton off SM100 and SM90 before the default (0.5.6.post2 server_args.py:1115-1126)."""
    code = main(["plan", "--engine", "sglang", "--model", str(CONFIGS / "openai--gpt-oss-20b.json"), "--gpu",
                 "RTX PRO 6000", "--engine-version", "0.5.6.post2"])
    err = capsys.readouterr().err
    assert "TRTLLM MHA backend is only supported" not in err and code == 0, err
