"""Every engine's capacity cap shows as the waterfall's cap term (issue 29): clean is the launch without the
cap, solved by the engine's own rules, and the cap term is the typed cap less that (hand arithmetic).

Before each engine declared its `cap_fields`, the waterfall cleared SGLang's and vLLM's only: a TensorRT-LLM
`max_tokens` of 100,000 showed clean = 100,000 with no cap term, and so did TurboMind's block count."""

from __future__ import annotations

import json

from kvtop.domain.capacity import CapacityCause, CapacitySource
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from kvtop.domain.waterfall import RankActual, engine_capacity
from tests.conftest import CONFIGS

H100 = 81559 << 20
LLAMA8B = model_from_config(
    json.loads((CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json").read_text()), source="llama-3.1-8b"
)
_ACTUAL = [RankActual(gpu_index=0, tokens=None, source=CapacitySource.PREDICTED)]


def _tokens(engine: str, flags: list[str]) -> int:
    settings = parse_flags(engine, flags, strict=True)
    return predict(LLAMA8B, settings, gpu_total_bytes=H100, gpu_name="H100").token_capacity


def _cap_waterfall(engine: str, base: list[str], cap: list[str]):  # type: ignore[no-untyped-def]
    settings = parse_flags(engine, base + cap, strict=True)
    ledger = predict(LLAMA8B, settings, gpu_total_bytes=H100, gpu_name="H100")
    return engine_capacity(ledger, [], f"{engine}:1", _ACTUAL).waterfalls[0]


def test_a_trtllm_max_tokens_is_a_cap_term() -> None:
    base = ["--kv_cache_free_gpu_memory_fraction", "0.9", "--engine-version", "1.1.0"]
    uncapped = _tokens("trtllm", base)
    assert uncapped > 100_000  # the fraction alone gives more than the cap on an H100 (8B, FP16 KV)
    waterfall = _cap_waterfall("trtllm", base, ["--kv_cache_config.max_tokens", "100000"])
    assert waterfall.clean_tokens == uncapped
    assert [t.cause for t in waterfall.terms] == [CapacityCause.CAP]
    assert waterfall.terms[0].tokens == 100_000 - uncapped
    assert waterfall.actual_tokens == 100_000


def test_an_sglang_max_total_tokens_is_a_cap_term() -> None:
    base = ["--mem-fraction-static", "0.85", "--engine-version", "0.5.9"]
    uncapped = _tokens("sglang", base)
    waterfall = _cap_waterfall("sglang", base, ["--max-total-tokens", "100000"])
    assert waterfall.clean_tokens == uncapped
    assert [(t.cause, t.tokens) for t in waterfall.terms] == [(CapacityCause.CAP, 100_000 - uncapped)]


def test_lmdeploy_pytorch_num_gpu_blocks_is_a_cap_term() -> None:
    """The PyTorch engine's --num-gpu-blocks sets the block count, memory aside (docs/engines/lmdeploy.md §4):
    500 blocks of 64 tokens are 32,000 tokens."""
    base = ["--backend", "pytorch", "--engine-version", "0.10.0"]
    uncapped = _tokens("lmdeploy", base)
    waterfall = _cap_waterfall("lmdeploy", base, ["--num-gpu-blocks", "500"])
    assert waterfall.clean_tokens == uncapped
    assert [(t.cause, t.tokens) for t in waterfall.terms] == [(CapacityCause.CAP, 500 * 64 - uncapped)]
    assert waterfall.actual_tokens == 32_000


def test_a_turbomind_block_count_is_a_cap_term() -> None:
    """TurboMind reads a --cache-max-entry-count ≥ 1 as a block count (§1, v0.2.2–v0.14): 500 blocks of 64
    tokens; uncapped is the default share (0.8 of the memory free after the weights)."""
    base = ["--backend", "turbomind", "--engine-version", "0.10.0"]
    uncapped = _tokens("lmdeploy", base)
    waterfall = _cap_waterfall("lmdeploy", base, ["--cache-max-entry-count", "500"])
    assert waterfall.clean_tokens == uncapped
    assert [(t.cause, t.tokens) for t in waterfall.terms] == [(CapacityCause.CAP, 500 * 64 - uncapped)]
    assert waterfall.actual_tokens == 32_000
