"""SGLang's default trtllm_mha over a --page-size it does not take: 64, as its default trtllm_mla does.

Expected values are SGLang's own code, read in its wheels: the MHA default is set before the page rule that reads
it, on SM100 (capability major 10) with no backend named —
- 0.5.6.post2 server_args.py `_handle_attention_backend_compatibility`: trtllm_mha at :1382-1383, then
  `if self.page_size not in [16, 32, 64]: … self.page_size = 64` at :1465-1477 (0.5.6 has no MHA default, :1293-1307);
- 0.5.13: `_get_default_attn_backend` :2795-2804 set at :2842-2845, the page rule :2965-2997;
- 0.5.23: arg_groups/overrides.py `_attention_backend_default` :1127-1141, then `_mla_backend_page_constraints`
  :1174-1187 (`page_size not in [16, 32, 64, 128]` → 64), in that order (arg_groups/attention_hook.py:120, :184);
- GPT-OSS's own override names trtllm_mha on SM100 (0.5.6.post2 :1115-1122), before the same rule.
A named backend replaces the default (its own page rule or none), and a Hopper card never takes trtllm_mha by default.
"""

from __future__ import annotations

import pytest

from tests.conftest import CONFIGS
from tests.engines.measured_flags import plan_json

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
GPT_OSS = str(CONFIGS / "openai--gpt-oss-20b.json")
SGLANG = ("--engine", "sglang")


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


@pytest.mark.parametrize(("version", "given", "page"), [
    ("0.5.6.post2", "128", 64), ("0.5.6.post2", "1", 64), ("0.5.6.post2", "16", 16), ("0.5.6.post2", "32", 32),
    ("0.5.13", "128", 64), ("0.5.13", "256", 64), ("0.5.13", "64", 64),
    ("0.5.23", "128", 128), ("0.5.23", "256", 64), ("0.5.23", "8", 64),
    ("0.5.6", "128", 128),  # no MHA default yet: --page-size stands
])  # fmt: skip
def test_the_mha_default_pages_by_64_over_a_page_it_does_not_take_on_b200(
    capsys: pytest.CaptureFixture[str], version: str, given: str, page: int
) -> None:
    launch = ("--model", LLAMA_8B, "--gpu", "B200", "--page-size", given, "--engine-version", version)
    assert plan_json(capsys, SGLANG, *launch)["page_size"] == page


def test_a_named_backend_or_a_hopper_card_keeps_the_given_page(capsys: pytest.CaptureFixture[str]) -> None:
    named = ("--model", LLAMA_8B, "--gpu", "B200", "--attention-backend", "flashinfer", "--page-size", "128")
    assert plan_json(capsys, SGLANG, *named, "--engine-version", "0.5.13")["page_size"] == 128
    hopper = ("--model", LLAMA_8B, "--gpu", "H200", "--page-size", "128", "--engine-version", "0.5.13")
    assert plan_json(capsys, SGLANG, *hopper)["page_size"] == 128


def test_gpt_oss_override_pages_by_64_before_the_generic_default(capsys: pytest.CaptureFixture[str]) -> None:
    """GPT-OSS takes trtllm_mha on SM100 from 0.5.0rc2 (its model override), before the MHA default's 0.5.6.post1."""
    launch = ("--model", GPT_OSS, "--gpu", "B200", "--page-size", "128")
    assert plan_json(capsys, SGLANG, *launch, "--engine-version", "0.5.3")["page_size"] == 64
    assert plan_json(capsys, SGLANG, "--model", LLAMA_8B, "--gpu", "B200", "--page-size", "128",
                     "--engine-version", "0.5.3")["page_size"] == 128  # fmt: skip
