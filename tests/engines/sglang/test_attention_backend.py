"""SGLang's `--attention-backend`, typed: the release's choices, and the page a named backend sets.

Expected values are SGLang's own code, read in its wheels:
- choices: server_args.py `--attention-backend` choices=["flashinfer", "triton", "torch_native"] (v0.4.0:602-607);
  ["flashinfer", "triton", "torch_native", "fa3", "flashmla"] (v0.4.6:824-829);
- FlashMLA: `self.page_size = 64` whatever --page-size said ("FlashMLA only supports a page_size of 64",
  v0.5.6.post2 server_args.py:1427-1434);
- TensorRT-LLM MHA: a page outside 16/32/64 becomes 64, and only on Blackwell (v0.5.6.post2 server_args.py:1465-1479);
  v0.5.23 takes 128 too (arg_groups/overrides.py:1174-1187) and checks no GPU;
- a named backend leaves `page_size` None to `_handle_page_size`: 1, where Blackwell's default (trtllm_mha) pages by
  64 (eras.default_page_size).
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.engines.sglang.attention_backends import check_attention_backend
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from tests.conftest import CONFIGS

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
DSV3 = str(CONFIGS / "deepseek-ai--DeepSeek-V3.json")


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> dict:  # type: ignore[type-arg]
    assert main(["plan", "--json", "--engine", "sglang", *args]) == 0
    return json.loads(capsys.readouterr().out)


def _refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["plan", "--engine", "sglang", *args]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("kvtop: error: --attention-backend: ")
    return err


def test_each_release_takes_its_own_choices(capsys: pytest.CaptureFixture[str]) -> None:
    err = _refused(capsys, "--model", LLAMA_8B, "--engine-version", "0.4.0", "--attention-backend", "fa3")
    assert "takes one of flashinfer, triton, torch_native (got 'fa3'" in err and "v0.4.0" in err
    assert _plan(capsys, "--model", LLAMA_8B, "--engine-version", "0.4.6", "--attention-backend", "fa3")["fits"]


@pytest.mark.parametrize("page", [[], ["--page-size", "1"]])
def test_flashmla_pages_by_64_whatever_page_size_says(capsys: pytest.CaptureFixture[str], page: list[str]) -> None:
    launch = ["--model", DSV3, "--tp", "8", "--gpu", "H200", "--engine-version", "0.5.6.post2"]
    named = _plan(capsys, *launch, "--attention-backend", "flashmla", *page)
    assert named["page_size"] == 64
    assert any("--attention-backend flashmla pages by 64" in note for note in named["notes"])


def test_trtllm_mha_is_blackwells_at_0562_and_pages_by_64(capsys: pytest.CaptureFixture[str]) -> None:
    launch = ["--model", LLAMA_8B, "--engine-version", "0.5.6.post2", "--attention-backend", "trtllm_mha"]
    assert "Blackwell GPUs only (got H100" in _refused(capsys, *launch, "--gpu", "H100")
    assert _plan(capsys, *launch, "--gpu", "B200", "--page-size", "128")["page_size"] == 64
    assert _plan(capsys, *launch, "--gpu", "B200", "--page-size", "32")["page_size"] == 32


def test_trtllm_mha_takes_128_at_0523_on_any_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    launch = ["--model", LLAMA_8B, "--engine-version", "0.5.23", "--attention-backend", "trtllm_mha", "--gpu", "H100"]
    assert _plan(capsys, *launch, "--page-size", "128")["page_size"] == 128
    assert _plan(capsys, *launch)["page_size"] == 64


def test_a_named_backend_replaces_blackwells_default_page(capsys: pytest.CaptureFixture[str]) -> None:
    launch = ["--model", LLAMA_8B, "--engine-version", "0.5.23", "--gpu", "B200"]
    assert _plan(capsys, *launch)["page_size"] == 64  # trtllm_mha, the default MHA backend on Blackwell
    assert _plan(capsys, *launch, "--attention-backend", "triton")["page_size"] == 1


def test_a_backend_whose_budget_kvtop_does_not_follow_is_named_not_modelled(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = _refused(capsys, "--model", LLAMA_8B, "--attention-backend", "aiter")
    assert "mem_fraction_static by 0.85" in err and err.rstrip().endswith("not modelled")


def test_fa3_from_0442_and_an_estimated_release_is_not_checked() -> None:
    """fa3 joins the choices at v0.4.4.post2 (server_args.py:776-781; v0.4.4.post1:723-728 lists flashinfer, triton,
    torch_native). A release estimated from a log's lines (the corpus's SGLang#4760 start, ~0.4.4.post1 by its
    printed fields) is not checked: the log's own arguments say the engine took the backend."""
    fa3 = LaunchSettings(engine="sglang", flags={"attention-backend": "fa3"})
    check_attention_backend(fa3, "H100", ResolvedVersion(text="0.4.4.post2"))
    with pytest.raises(InputError, match="torch_native \\(got 'fa3'"):
        check_attention_backend(fa3, "H100", ResolvedVersion(text="0.4.4.post1"))
    check_attention_backend(fa3, "H100", ResolvedVersion(text="0.4.4.post1", approximate=True))


def _phase_refused(capsys: pytest.CaptureFixture[str], flag: str, *args: str) -> str:
    assert main(["plan", "--engine", "sglang", *args]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and err.startswith(f"kvtop: error: {flag}: ")
    return err


def test_the_phase_flags_are_v0495s_and_take_its_choices(capsys: pytest.CaptureFixture[str]) -> None:
    """`--prefill-attention-backend` / `--decode-attention-backend` first appear in v0.4.9.post5's server_args.py
    (:1229-1255, choices flashinfer, triton, torch_native, fa3, flashmla, cutlass_mla; v0.4.9.post4 has neither) and
    take --attention-backend's choices from v0.5.0rc2 (choices=ATTN_BACKENDS, :1353-1365)."""
    flag = "--decode-attention-backend"
    err = _phase_refused(capsys, flag, "--model", LLAMA_8B, "--engine-version", "0.4.9.post4", flag, "triton")
    assert "SGLang 0.4.9.post4 has no --decode-attention-backend" in err
    err = _phase_refused(capsys, flag, "--model", DSV3, "--engine-version", "0.4.9.post5", flag, "trtllm_mla")
    assert "cutlass_mla (got 'trtllm_mla'" in err
    launch = ["--model", DSV3, "--tp", "8", "--gpu", "B200", "--engine-version", "0.5.0rc2"]
    assert _plan(capsys, *launch, flag, "trtllm_mla")["page_size"] == 64


def test_a_phase_flag_before_v0495_is_refused_naming_the_flag_and_its_first_release(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """PHASE_CHOICE_ERAS' first row (None): before v0.4.9.post5 neither phase flag exists (v0.4.6 server_args.py:824-829
    has --attention-backend only), so SGLang's argparse stops on it; the refusal names the flag and v0.4.9.post5."""
    for flag in ("--prefill-attention-backend", "--decode-attention-backend"):
        err = _phase_refused(capsys, flag, "--model", LLAMA_8B, "--engine-version", "0.4.6", flag, "fa3")
        assert f"SGLang 0.4.6 has no {flag} (first in v0.4.9.post5: srt/server_args.py:1229-1255" in err


def test_flashmla_pages_by_64_as_the_decode_backend_not_as_the_prefill_one(capsys: pytest.CaptureFixture[str]) -> None:
    """v0.4.9.post5 server_args.py:392-399: `attention_backend == "flashmla" or decode_attention_backend ==
    "flashmla"` sets page_size 64; the prefill backend is not read (page 1, `if self.page_size is None`)."""
    launch = ["--model", DSV3, "--tp", "8", "--gpu", "H200", "--engine-version", "0.4.9.post5"]
    decode = _plan(capsys, *launch, "--decode-attention-backend", "flashmla")
    assert decode["page_size"] == 64
    assert any("--decode-attention-backend flashmla pages by 64" in note for note in decode["notes"])
    assert _plan(capsys, *launch, "--prefill-attention-backend", "flashmla")["page_size"] == 1


def test_trtllm_mha_as_the_prefill_backend_is_blackwells_and_pages_by_64(capsys: pytest.CaptureFixture[str]) -> None:
    """v0.5.6.post2 server_args.py:1465-1479 reads trtllm_mha as either phase's backend: Blackwell only, a page
    outside 16/32/64 becomes 64."""
    flag = "--prefill-attention-backend"
    launch = ["--model", LLAMA_8B, "--engine-version", "0.5.6.post2", flag, "trtllm_mha", "--decode-attention-backend",
              "triton"]  # fmt: skip
    assert "Blackwell GPUs only (got H100" in _phase_refused(capsys, flag, *launch, "--gpu", "H100")
    assert _plan(capsys, *launch, "--gpu", "B200", "--page-size", "128")["page_size"] == 64


def test_one_backend_for_both_phases_is_the_attention_backend_from_0562(capsys: pytest.CaptureFixture[str]) -> None:
    """v0.5.23 arg_groups/overrides.py:1128-1131: the same prefill and decode backend becomes attention_backend, so
    Blackwell's default trtllm_mha (page 64) is not picked; two different ones leave SGLang its default."""
    launch = ["--model", LLAMA_8B, "--engine-version", "0.5.23", "--gpu", "B200"]
    same = ["--prefill-attention-backend", "triton", "--decode-attention-backend", "triton"]
    assert _plan(capsys, *launch, *same)["page_size"] == 1
    differ = ["--prefill-attention-backend", "flashinfer", "--decode-attention-backend", "triton"]
    assert _plan(capsys, *launch, *differ)["page_size"] == 64


def test_a_decode_backends_page_under_the_generic_mla_default_stays(capsys: pytest.CaptureFixture[str]) -> None:
    """v0.5.16 arg_groups/overrides.py:1697-1698: cutlass_mla (decode) sets 128. DeepSeek-V3's trtllm_mla override
    is skipped where a per-phase backend is named (:405-413, all three backends None), and the generic MLA default
    on SM100 is flashinfer (server_args.py:4933-4938 `_get_default_attn_backend`), which sets no page: 128 on
    B200 as on H200."""
    decode = ["--decode-attention-backend", "cutlass_mla", "--engine-version", "0.5.16", "--model", DSV3, "--tp", "8"]
    assert _plan(capsys, *decode, "--gpu", "B200")["page_size"] == 128
    assert _plan(capsys, *decode, "--gpu", "H200")["page_size"] == 128


@pytest.mark.parametrize(("version", "page"), [("0.5.13", 64), ("0.5.23", 128)])
def test_the_generic_mha_default_pages_beside_a_decode_backend(capsys: pytest.CaptureFixture[str], version: str,
                                                                page: int) -> None:
    """0.5.13 server_args.py: with only --decode-attention-backend named, `_get_default_attn_backend` still sets
    attention_backend trtllm_mha on SM100 (:2796-2804, :2842-2845), whose page rule (:2965-2997: `attention_backend
    == "trtllm_mha" or …`) turns --page-size 128 into 64; 0.5.23 takes 128 (arg_groups/overrides.py:1174-1187), so
    the page stays. A page trtllm_mha takes (16) stays at 0.5.13 too, and an H100 has no such default."""
    launch = ["--model", LLAMA_8B, "--engine-version", version, "--decode-attention-backend", "flashinfer"]
    assert _plan(capsys, *launch, "--gpu", "B200", "--page-size", "128")["page_size"] == page
    assert _plan(capsys, *launch, "--gpu", "B200", "--page-size", "16")["page_size"] == 16
    assert _plan(capsys, *launch, "--gpu", "H100", "--page-size", "128")["page_size"] == 128


@pytest.mark.parametrize(("version", "page"), [("0.5.3", 64), ("0.5.3.post1", 1)])
def test_gpt_oss_override_under_per_phase_backends_until_0531(capsys: pytest.CaptureFixture[str], version: str,
                                                               page: int) -> None:
    """GPT-OSS on SM100 with two different per-phase backends: to 0.5.3 its override asks only `attention_backend is
    None` (server_args.py 0.5.3:734-735) and sets trtllm_mha, whose rule pages by 64 (:461-475 at 0.5.0rc2); from
    0.5.3.post1 it asks all three unset (:769-774) and is skipped, and no generic MHA default exists before
    0.5.6.post1: `_handle_page_size` leaves 1 (default_mha.PHASES_SKIP_OVERRIDES)."""
    phases = ["--prefill-attention-backend", "flashinfer", "--decode-attention-backend", "triton"]
    gpt_oss = str(CONFIGS / "openai--gpt-oss-20b.json")
    assert _plan(capsys, "--model", gpt_oss, "--engine-version", version, "--gpu", "B200", *phases)["page_size"] == page
