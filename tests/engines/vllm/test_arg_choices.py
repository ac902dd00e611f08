"""`--dtype` and `--quantization` words vLLM refuses (kvtop/domain/engines/vllm/arg_choices.py).

Expected values read off vLLM's own code, not kvtop's: v0.13.0 engine/arg_utils.py and config/model.py:77 `ModelDType =
Literal["auto", "half", "float16", "bfloat16", "float", "float32"]` (v0.33.0 `get_kwargs(ModelConfig)["dtype"]` run on
the wheel gives these six as argparse choices); v0.8.0 model_executor/layers/quantization/__init__.py
QUANTIZATION_METHODS lists "nvfp4" and "qqq", v0.9.0 drops "nvfp4"; v0.33.0's QuantizationMethods has no "gguf" and
ModelConfig._verify_quantization raises "Unknown quantization method" for a word outside it (config/model.py:1467).
v0.14.1-v0.32.0: each wheel's QuantizationMethods and DEPRECATED_QUANTIZATION_METHODS as
benchmarks/engine_registries/vllm_quantization.py reads them (session 58, PyPI x86_64 wheels).
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
    ("0.20.0", "nonsense", True),
    # each edge of v0.14.1-v0.32.0, read off the wheel's QuantizationMethods (quantization/__init__.py:12)
    ("0.14.1", "tpu_int8", True), ("0.15.1", "modelopt_mxfp8", True), ("0.16.0", "modelopt_mxfp8", False),
    ("0.16.0", "modelopt_mixed", True), ("0.17.0", "modelopt_mixed", False), ("0.18.1", "mxfp8", True),
    ("0.19.0", "mxfp8", False), ("0.19.1", "humming", True), ("0.20.0", "humming", False), ("0.21.0", "auto_gptq", True),
    ("0.22.0", "auto_gptq", False), ("0.22.1", "cpu_awq", False), ("0.23.0", "cpu_awq", True), ("0.23.0", "gguf", False),
    ("0.24.0", "gguf", True), ("0.25.1", "nvfp4_per_token", True), ("0.26.0", "nvfp4_per_token", False),
    ("0.27.1", "bitsandbytes", False), ("0.28.0", "bitsandbytes", True), ("0.32.0", "bitsandbytes", True),
    ("0.32.0", "fp8", False), ("0.15.0", "hqq", True), ("0.19.0", "ptpc_fp8", True), ("0.20.0", "petit_nvfp4", True),
])  # fmt: skip
def test_quantization_by_release(version: str, word: str, refused: bool) -> None:
    message = refusal("--quantization", word, "--engine-version", version)
    assert (message is not None) is refused
    if refused:
        assert (
            message is not None and "--quantization" in message and "Unknown quantization method" in message
        )


@pytest.mark.parametrize(("version", "word", "refused"), [
    ("0.13.0", "fbgemm_fp8", False), ("0.14.0", "fbgemm_fp8", True), ("0.14.1", "hqq", True),
    ("0.18.1", "ptpc_fp8", True), ("0.19.1", "experts_int8", True), ("0.20.0", "experts_int8", False),
    ("0.32.0", "fp_quant", True), ("0.33.0", "fbgemm_fp8", True),
])  # fmt: skip
def test_deprecated_quantization_by_release(version: str, word: str, refused: bool) -> None:
    """From v0.14.0 ModelConfig._verify_quantization raises "The quantization method X is deprecated ... To bypass,
    set `--allow-deprecated-quantization`" for DEPRECATED_QUANTIZATION_METHODS (config/model.py:950 at v0.14.0, :1472
    at v0.33.0; quantization/__init__.py:45 at v0.14.0 lists hqq and fbgemm_fp8, :49 at v0.20.0 no experts_int8)."""
    message = refusal("--quantization", word, "--engine-version", version)
    assert (message is not None) is refused
    if refused:
        assert message is not None and "is deprecated" in message and "--allow-deprecated-quantization" in message


def test_allow_deprecated_quantization_lets_a_deprecated_method_through() -> None:
    """With the bypass vLLM only warns (config/model.py:963-969 at v0.15.1): a launch line carrying it (the flag read
    from v0.15.1, engine/arg_utils.py:996 at v0.33.0) is not refused for the method."""
    assert refusal("--quantization", "fbgemm_fp8", "--allow-deprecated-quantization", "--engine-version", "0.15.1") is None
    assert refusal("--quantization", "fbgemm_fp8", "--engine-version", "0.15.1") is not None


def test_plan_refuses_a_dtype_vllm_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", "--model", LLAMA_8B, "--engine", "vllm", "--engine-version", "0.13.0", "--gpu", "H100",
                 "--dtype", "float128"])  # fmt: skip
    assert code != 0 and "--dtype" in capsys.readouterr().err


def test_a_logs_resolved_dtype_is_not_refused() -> None:
    # vLLM's config line prints the resolved dtype as torch's (`dtype=torch.bfloat16`): explain reads it as it ran
    assert refusal("--dtype", "torch.bfloat16") is None


def test_v0320_and_v0330_take_the_same_methods() -> None:
    """Read off each wheel: v0.32.0's QuantizationMethods (the v0.28.0 row grown release by release) is v0.33.0's,
    listed whole from its wheel; a word of the one is a word of the other."""
    for word in ("bitsandbytes", "gguf", "humming", "nvfp4_per_token", "online", "quark"):
        assert (refusal("--quantization", word, "--engine-version", "0.32.0") is None) is (
            refusal("--quantization", word, "--engine-version", "0.33.0") is None)
