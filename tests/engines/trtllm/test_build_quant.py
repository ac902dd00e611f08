"""A TensorRT engine built quantized: the weights book counts the engine's bytes, not the checkpoint's.

Expected values are the engines' own logs of Llama-2-7B engines (tests/data/cases/trtllm/):
- `trtllm-docs-memory-md-4060-blocks` (an FP8 engine, TensorRT-LLM's memory docs): `Loaded engine size:
  6695 MiB`;
- `trtllm-1400-llama7b-sq-beam5-v08` (a SmoothQuant INT8 engine, issue #1400): `TensorRT-managed
  allocation in IExecutionContext creation: CPU +0, GPU +0, now: CPU 0, GPU 6683 (MiB)` (the engine's
  weights, nothing else TensorRT-managed is allocated by then);
and the BF16 checkpoint's 6,738,415,616 parameters × 2 B (its safetensors index: 13,476,831,232 B).
"""

from __future__ import annotations

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_config_file
from tests.data_paths import CASES, CONFIGS

MIB = 1 << 20
H100_TOTAL = 81559 * MIB


def _weights(*flags: str) -> int:
    model = load_config_file(CONFIGS / "meta-llama--Llama-2-7b-hf.json")
    settings = parse_flags("trtllm", ["--backend", "tensorrt", *flags])
    return predict(model, settings, gpu_total_bytes=H100_TOTAL, gpu_name="H100").weights_bytes


def _logged_mib(case: str, prefix: str, suffix: str) -> int:
    for line in (CASES / "trtllm" / case / "engine.log").read_text().splitlines():
        if prefix in line:
            return int(line.split(prefix, 1)[1].split(suffix, 1)[0])
    raise AssertionError(f"{prefix!r} not in {case}")


def test_unquantized_engine_counts_the_checkpoint() -> None:
    assert _weights() == 13_476_831_232


@pytest.mark.parametrize(
    ("flags", "case", "prefix", "suffix"),
    [
        (("--qformat", "fp8"), "trtllm-docs-memory-md-4060-blocks", "Loaded engine size: ", " MiB"),
        (("--quantization.quant_algo", "FP8"), "trtllm-docs-memory-md-4060-blocks", "Loaded engine size: ", " MiB"),
        (("--qformat", "int8_sq"), "trtllm-1400-llama7b-sq-beam5-v08", "now: CPU 0, GPU ", " (MiB)"),
        (("--quantization.quant_algo", "W8A8_SQ_PER_CHANNEL"), "trtllm-1400-llama7b-sq-beam5-v08",
         "now: CPU 0, GPU ", " (MiB)"),
    ],
)  # fmt: skip
def test_quantized_engine_matches_the_logged_engine_size(flags: tuple[str, ...], case: str, prefix: str,
                                                         suffix: str) -> None:  # fmt: skip
    logged = _logged_mib(case, prefix, suffix) * MIB
    counted = _weights(*flags)
    # the engine also holds what the book does not count (activation scales, rotary tables): ≤ 0.5 %
    assert abs(counted / logged - 1) < 0.005, (counted / MIB, logged / MIB)


def test_int4_awq_engine_holds_a_quarter_of_the_linear_bytes() -> None:
    # format arithmetic: 6,476,005,376 linear parameters (32 layers × (4 × 4096² + 3 × 4096 × 11008)) at
    # 4 bits, a 2-byte scale per 128 inputs of each output row, the embedding and LM head (2 × 32000 × 4096)
    # and the norms (65 × 4096) at 2 bytes
    linear = 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008)
    scales = 32 * (4 * 4096 * 4096 // 128 + 2 * 11008 * 4096 // 128 + 4096 * 11008 // 128) * 2
    expected = linear // 2 + scales + 2 * 32000 * 4096 * 2 + 65 * 4096 * 2
    assert _weights("--qformat", "int4_awq") == expected


def test_unknown_build_format_is_refused_or_named() -> None:
    model = load_config_file(CONFIGS / "meta-llama--Llama-2-7b-hf.json")
    try:
        settings = parse_flags("trtllm", ["--backend", "tensorrt", "--qformat", "w4a16_gptq"])
    except InputError as error:  # a refusal names the flag
        assert "qformat" in str(error) or "quantization" in str(error)
        return
    ledger = predict(model, settings, gpu_total_bytes=H100_TOTAL, gpu_name="H100")
    assert any("w4a16_gptq" in note for note in ledger.model.not_modelled)
    assert ledger.weights_bytes == 13_476_831_232
