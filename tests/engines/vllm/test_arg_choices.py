"""`--dtype` and `--quantization` words vLLM refuses (kvtop/domain/engines/vllm/arg_choices.py).

Expected values read off vLLM's own code, not kvtop's: v0.13.0 engine/arg_utils.py and config/model.py:77 `ModelDType =
Literal["auto", "half", "float16", "bfloat16", "float", "float32"]` (v0.33.0 `get_kwargs(ModelConfig)["dtype"]` run on
the wheel gives these six as argparse choices); v0.8.0 model_executor/layers/quantization/__init__.py
QUANTIZATION_METHODS lists "nvfp4" and "qqq", v0.9.0 drops "nvfp4"; v0.33.0's QuantizationMethods has no "gguf" and
ModelConfig._verify_quantization raises "Unknown quantization method" for a word outside it (config/model.py:1467).
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.errors import InputError
from kvtop.domain.launch import check_parallel, parse_flags
from tests.conftest import CONFIGS

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")


def refusal(*flags: str) -> str | None:
    try:
        check_parallel(parse_flags("vllm", list(flags)))  # as `kvtop plan` checks a stated release
    except InputError as error:
        return str(error)
    return None


@pytest.mark.parametrize("word", ["float128", "fp8", "int4"])
def test_dtype_outside_vllms_six_words_is_refused_naming_the_flag(word: str) -> None:
    message = refusal("--dtype", word, "--engine-version", "0.13.0")
    assert message is not None and "--dtype" in message and "invalid choice" in message


@pytest.mark.parametrize("word", ["auto", "half", "float16", "bfloat16", "float", "float32"])
def test_vllms_own_dtype_words_pass(word: str) -> None:
    assert refusal("--dtype", word, "--engine-version", "0.13.0") is None


@pytest.mark.parametrize(("version", "word", "refused"), [
    ("0.8.0", "nvfp4", False), ("0.9.0", "nvfp4", True), ("0.8.0", "nonsense", True), ("0.13.0", "gguf", False),
    ("0.33.0", "gguf", True), ("0.33.0", "fp8", False), ("0.6.3.post1", "hqq", True), ("0.6.5", "hqq", False),
    ("0.20.0", "nonsense", False),  # v0.14.1-v0.32.x not read: nothing refused
])  # fmt: skip
def test_quantization_by_release(version: str, word: str, refused: bool) -> None:
    message = refusal("--quantization", word, "--engine-version", version)
    assert (message is not None) is refused
    if refused:
        assert (
            message is not None and "--quantization" in message and "Unknown quantization method" in message
        )


def test_plan_refuses_a_dtype_vllm_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", "--model", LLAMA_8B, "--engine", "vllm", "--engine-version", "0.13.0", "--gpu", "H100",
                 "--dtype", "float128"])  # fmt: skip
    assert code != 0 and "--dtype" in capsys.readouterr().err


def test_a_logs_resolved_dtype_is_not_refused() -> None:
    # vLLM's config line prints the resolved dtype as torch's (`dtype=torch.bfloat16`): explain reads it as it ran
    assert refusal("--dtype", "torch.bfloat16") is None
