"""SGLang's default trtllm_mla beyond DeepSeek-V3: the classes it sends to the MLA kernels on SM100, by release.

Expected values are SGLang's own code and one log:
- the list of classes (`model_arch in [...]` before the trtllm_mla default, server_args.py to 0.5.14, then
  arg_groups/overrides.py and arg_groups/model_overrides/deepseek_v2.py), each class's first release bisected in the
  wheels: MistralLarge3ForCausalLM / PixtralForConditionalGeneration from 0.5.6.post1 (server_args.py:959-962; 0.5.6
  :939 has DeepSeek-V3 only), KimiK25ForConditionalGeneration from 0.5.9 (:1197-1203; 0.5.8.post1 :1104 without),
  LongcatFlashForCausalLM from 0.5.16 (arg_groups/overrides.py:323-331; 0.5.15.post1 :309-316 without);
- trtllm_mla's own rules: a page of 32 or 64, 64 over any other (0.5.13 server_args.py:2906-2910), and its KV dtypes
  (fp8_e5m2 raises, 0.5.13 :2912-2915);
- the log: nvidia/Kimi-K2.5-NVFP4 on 4 GB300 at 0.5.13 with --page-size 256 prints `attention_backend='trtllm_mla',
  page_size=64` and `#tokens: 2655616` (a multiple of 64, not of 256) — the corpus record
  prathmesh-mtinferencex-kimi-k2.5-nvfp4-gb300-tp4-v0513 (tests/data/calibration/sglang.jsonl).
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS
from tests.engines.measured_flags import plan_json

KIMI_K25 = str(CONFIGS / "heldout" / "nvidia--Kimi-K2.5-NVFP4.json")
MISTRAL_LARGE_3 = str(CONFIGS / "recon" / "recon--mistralai--Mistral-Large-3-675B-Instruct-2512" / "params.json")
PIXTRAL_12B = str(CONFIGS / "recon" / "recon--mistralai--Pixtral-12B-2409" / "params.json")
LONGCAT = str(CONFIGS.parent / "engine_diff" / "registry" / "configs" / "LongcatFlashForCausalLM.json")
SGLANG = ("--engine", "sglang")


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


def test_kimi_k25_on_gb300_pages_by_trtllm_mlas_64_over_page_size_256(capsys: pytest.CaptureFixture[str]) -> None:
    """The log's launch: SGLang 0.5.13 sets trtllm_mla for KimiK25ForConditionalGeneration and page_size=64."""
    launch = ("--model", KIMI_K25, "--gpu", "GB300", "--tp", "4", "--trust-remote-code", "--context-length", "262144",
              "--max-running-requests", "128", "--cuda-graph-max-bs", "128")  # fmt: skip
    plan = plan_json(capsys, SGLANG, *launch, "--page-size", "256", "--engine-version", "0.5.13")
    assert plan["page_size"] == 64
    assert plan_json(capsys, SGLANG, *launch, "--page-size", "256", "--engine-version", "0.5.8")["page_size"] == 256
    assert plan_json(capsys, SGLANG, *launch, "--page-size", "32", "--engine-version", "0.5.13")["page_size"] == 32


@pytest.mark.parametrize(("model", "before", "first"), [
    (KIMI_K25, "0.5.8", "0.5.9"),
    (MISTRAL_LARGE_3, "0.5.6", "0.5.6.post1"),
    (LONGCAT, "0.5.15.post1", "0.5.16"),
])  # fmt: skip
def test_each_class_pages_by_64_on_b200_from_the_release_it_joined(
    capsys: pytest.CaptureFixture[str], model: str, before: str, first: str
) -> None:
    """No --page-size: page 1 (MLA keeps SGLang's generic default) before the class joined the list, 64 after; an
    SM120 card is not `is_sm100` and keeps page 1 at the later release too. Mistral-Large-3's class joined the list
    with its first release (mistral_large_3.py, 0.5.6.post1: class_releases.py): at 0.5.6 the plan is refused."""
    launch = ("--model", model, "--tp", "8", "--trust-remote-code")
    if model == MISTRAL_LARGE_3:
        assert main(["plan", *SGLANG, *launch, "--gpu", "B200", "--engine-version", before]) == 2
        assert "has no MistralLarge3ForCausalLM (added in 0.5.6.post1)" in capsys.readouterr().err
    else:
        assert plan_json(capsys, SGLANG, *launch, "--gpu", "B200", "--engine-version", before)["page_size"] == 1
    assert plan_json(capsys, SGLANG, *launch, "--gpu", "B200", "--engine-version", first)["page_size"] == 64
    assert plan_json(capsys, SGLANG, *launch, "--gpu", "RTX PRO 6000", "--engine-version", first)["page_size"] == 1


def test_the_kv_dtype_check_follows_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    """fp8_e5m2 is not one of trtllm_mla's KV dtypes: refused where SGLang picks it (Kimi-K2.5 at 0.5.9 on B200),
    not before the class joined the list (0.5.8) nor where a named backend replaces the default."""
    launch = ["plan", "--engine", "sglang", "--model", KIMI_K25, "--tp", "8", "--gpu", "B200", "--trust-remote-code",
              "--kv-cache-dtype", "fp8_e5m2"]  # fmt: skip
    assert main([*launch, "--engine-version", "0.5.9"]) != 0
    assert "runs trtllm_mla with --kv-cache-dtype" in capsys.readouterr().err
    assert plan_json(capsys, SGLANG, *launch[3:], "--engine-version", "0.5.8")["page_size"] == 1
    named = plan_json(capsys, SGLANG, *launch[3:], "--engine-version", "0.5.9", "--attention-backend", "flashinfer")
    assert named["page_size"] == 1


def test_a_listed_class_without_mla_is_not_modelled_on_sm100(capsys: pytest.CaptureFixture[str]) -> None:
    """Pixtral-12B's params.json reads as PixtralForConditionalGeneration over an MHA model; SGLang sets trtllm_mla
    by the class all the same from 0.5.6.post1: refused by name; a named backend plans. 0.5.6 has no such class
    (pixtral.py's first release is 0.5.6.post1: class_releases.py): refused as such."""
    launch = ("--model", PIXTRAL_12B, "--gpu", "B200")
    assert main(["plan", *SGLANG, *launch, "--engine-version", "0.5.6.post1"]) != 0
    assert "sets --attention-backend trtllm_mla for PixtralForConditionalGeneration" in capsys.readouterr().err
    assert main(["plan", *SGLANG, *launch, "--engine-version", "0.5.6"]) == 2
    assert "has no PixtralForConditionalGeneration (added in 0.5.6.post1)" in capsys.readouterr().err
    named = plan_json(capsys, SGLANG, *launch, "--engine-version", "0.5.6.post1", "--attention-backend", "triton")
    assert named["page_size"] == 1
