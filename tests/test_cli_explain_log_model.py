"""The model a log names, when kvtop cannot read it here, is said as the log's (session 49, F2 #2 and #3).

`kvtop explain tests/data/cases/sglang/C01/engine.log` said "--model: config file not found in
/path/to/Qwen3-235B-A22B-FP8" with no --model given (the path is the launch line pasted into the log); the vLLM
blog log of Qwen/Qwen3-32B offered "--model qwen3-235b-a22b (the nearest preset)", another size and architecture.
"""

from __future__ import annotations

import pytest
from huggingface_hub import constants

from kvtop.cli import main
from kvtop.sources.hub import nearest_preset
from tests.conftest import DATA

SGLANG_C01 = DATA / "cases" / "sglang" / "C01" / "engine.log"
VLLM_QWEN3_32B = DATA / "cases" / "vllm" / "blog-v0271-qwen3-32b-pp2-rtxpro6000" / "engine.log"


def test_a_log_path_not_on_this_machine_is_the_logs_not_a_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(SGLANG_C01), "--no-calibration-store"]) == 2
    out, err = capsys.readouterr()
    assert err.strip() == (
        f"kvtop: error: log: {SGLANG_C01} names the model /path/to/Qwen3-235B-A22B-FP8, which is not on this "
        "machine: pass --model with its folder or config.json here, a preset (qwen3-235b-a22b: that family and "
        "size), or its hub id"
    )  # the log first (session 54): "… or its hub id in tests/data/…/engine.log" read as a hub id inside the log
    assert out == ""


def test_a_given_model_path_is_still_named_as_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["explain", str(SGLANG_C01), "--model", "/nowhere/config.json", "--no-calibration-store"]) == 2
    )
    assert (
        capsys.readouterr().err.strip()
        == "kvtop: error: --model: config file not found: /nowhere/config.json"
    )


def test_a_hub_id_out_of_reach_offers_no_preset_of_another_model(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    assert main(["explain", str(VLLM_QWEN3_32B), "--no-calibration-store"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kvtop: error: log: {VLLM_QWEN3_32B} names the model Qwen/Qwen3-32B: ")
    assert err.rstrip().endswith("or fetch it once with network")  # no "… with network in LOG" (session 54)
    assert "preset" not in err and "--model ./Qwen3-32B/config.json" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("repo_id", "preset"),
    [
        ("Qwen/Qwen3-32B", None),  # the vLLM blog log above: dense 32B, no bundled preset
        ("/path/to/Qwen3-235B-A22B-FP8", "qwen3-235b-a22b"),  # SGLang C01's launch line
        ("Qwen/Qwen3-30B-A3B", None),  # another MoE size of the family
        ("meta-llama/Meta-Llama-3-70B-Instruct", "llama-3-70b"),
        ("meta-llama/Llama-3.1-70B-Instruct", None),  # another release (its context and RoPE differ)
        ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("openai/gpt-oss-20b", None),
        ("deepseek-ai/DeepSeek-V3-0324", "deepseek-v3"),
        ("deepseek-ai/DeepSeek-R1", None),
        ("Qwen/Qwen2.5-72B-Instruct", None),
    ],
)
def test_the_preset_offered_is_of_the_same_family_and_size(repo_id: str, preset: str | None) -> None:
    assert nearest_preset(repo_id) == preset


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--gpu", "Z999"], "kvtop: error: --gpu: unknown GPU 'Z999'"),
        (["--gpu-memory", "abc"], "kvtop: error: --gpu-memory: not a size: 'abc' (write e.g. 80GiB, 81.5GB or 512MiB)"),
        (["--free-memory", "80"], "kvtop: error: --free-memory: '80' has no unit (it would read as bytes); write e.g. 80GiB"),
    ],
)
def test_a_bad_figure_is_said_before_the_model_the_log_lacks(
    capsys: pytest.CaptureFixture[str], flags: list[str], said: str
) -> None:
    """An operator trial (session 50): SGLang C13's log names no model, and a bad --gpu or size was said only after
    --model was given; the figures are checked first, so the first error names the flag that is wrong."""
    c13 = DATA / "cases" / "sglang" / "C13" / "engine.log"
    assert main(["explain", str(c13), *flags, "--no-calibration-store"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(said) and len(err.splitlines()) == 1


def test_a_log_that_names_no_model_is_said_so(capsys: pytest.CaptureFixture[str]) -> None:
    """C13's lines name no model path (no `model_path=`), so there is nothing to resolve: the error said 'the log names
    no model that resolves here', as if a name were read and not found."""
    c13 = DATA / "cases" / "sglang" / "C13" / "engine.log"
    assert "model_path" not in c13.read_text()
    assert main(["explain", str(c13), "--no-calibration-store"]) == 2
    assert capsys.readouterr().err == (
        "kvtop: error: --model: the log names no model (no model path in its lines): pass --model PATH|PRESET|HUB_ID\n"
    )
