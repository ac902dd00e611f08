"""A float32 KV cache (stop 37): `--dtype float32` (or a float32 checkpoint served as stored) makes the KV cell
and the weights 4 bytes an element. Its first fix is a 16-bit `--dtype`, which halves both with no FP8 trade-off;
before, the rule for FP8 KV fired on it and offered `--kv-cache-dtype fp8_e4m3` alone.

Expected figures are vLLM's arithmetic by hand (docs/engines/vllm.md §2) on Llama-3.1-8B-Instruct
(tests/data/configs): its checkpoint holds 16,060,522,496 B in bf16 (model.safetensors.index.json
`total_size`), so 32,121,044,992 B in float32; its KV cell is 32 layers × 2 × 8 KV heads × 128 × the width.
With 80 GiB given, `--gpu-memory-utilization 0.9` and 2 GiB of non-KV memory measured:
    available = 80 GiB × 0.9 − weights − 2 GiB;  blocks = available ÷ (16 × cell);  tokens = blocks × 16
"""

from __future__ import annotations

from kvtop.domain.diagnose import Severity, diagnose_ledger
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

MEASURED = MeasuredInputs(gpu_total_bytes=80 * GIB, non_kv_bytes=2 * GIB)
BF16_WEIGHTS = 16_060_522_496


def _tokens(weights: int, cell: int) -> int:
    available = 80 * GIB * 9 // 10 - weights - 2 * GIB
    return available // (16 * cell) * 16


def _plan(*flags: str) -> Ledger:
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
    # the finding's rule is release-independent; its figures are 0.33.0's (the share of the total, blocks of 16)
    settings = parse_flags("vllm", ["--gpu-memory-utilization", "0.9", "--engine-version", "0.33.0", *flags])
    return predict(model, settings, gpu_total_bytes=80 * GIB, measured=MEASURED)


def test_a_float32_kv_cache_is_told_to_serve_in_16_bits_with_its_gain() -> None:
    plan = _plan("--dtype", "float32")
    cell32, cell16 = 32 * 2 * 8 * 128 * 4, 32 * 2 * 8 * 128 * 2
    assert plan.kv_format == "fp32" and plan.kv_bytes_per_token == cell32 == 262_144
    assert plan.weights_bytes == 2 * BF16_WEIGHTS
    before, after = _tokens(2 * BF16_WEIGHTS, cell32), _tokens(BF16_WEIGHTS, cell16)
    assert (before, after) == (164_176, 450_896)
    findings = diagnose_ledger(plan)
    rules = [f.rule for f in findings]
    assert "fp32_kv_cache" in rules and "bf16_kv_where_fp8_supported" not in rules
    (finding,) = [f for f in findings if f.rule == "fp32_kv_cache"]
    assert plan.token_capacity == before
    assert finding.gain_tokens == finding.tokens == after - before == 286_720
    assert finding.fix == "--dtype bfloat16" and finding.severity is Severity.WARNING
    assert finding.bytes == (cell32 - cell16) * before
    assert finding.fix_settings is not None and finding.fix_settings.dtype == "bfloat16"


def test_a_16_bit_kv_cache_keeps_the_fp8_advice_and_gets_no_dtype_advice() -> None:
    rules = [f.rule for f in diagnose_ledger(_plan())]
    assert "bf16_kv_where_fp8_supported" in rules and "fp32_kv_cache" not in rules
