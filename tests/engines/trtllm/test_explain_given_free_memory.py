"""A flag the estimate reads is never said unused (an operator trial, session 48): `kvtop explain` of
TensorRT-LLM#224 (`Using 10718 tokens in paged KV cache.` alone, no budget line) with `--free-after-load` printed
both "free memory: from --free-after-load, not the log" and "--free-after-load not used: the log states the memory
the pool was sized from". The log states no memory: the flag is what the pool is rebuilt from. A log that prints
its budget line (TensorRT-LLM#4275, v0.19 C++: `Memory usage when calculating max tokens in paged kv cache: total:
31.84 GiB, available: …`) still says the flag is unused."""

from __future__ import annotations

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.explain import explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.wording import GIB
from kvtop.sources.engine_logs import read_engine_log
from kvtop.sources.hub import load_model
from tests.conftest import CASES, CONFIGS

UNUSED = "--free-after-load not used: the log states the memory the pool was sized from"


def test_a_log_without_its_budget_line_reads_the_given_free_memory_and_says_it_once() -> None:
    log = read_engine_log(CASES / "trtllm/trtllm-224-llama2-7b-a10-fraction/engine.log")
    model = load_model(str(CONFIGS / "meta-llama--Llama-2-7b-hf.json"))
    settings = parse_flags("trtllm", ["--kv_cache_free_gpu_mem_fraction", "0.95", "--tokens_per_block", "16"])
    result = explain(ExplainRequest(log=log, model=model, settings=settings, gpu_total_bytes=gpu_total_bytes("A10"),
                                    gpu_name="A10", given=MeasuredInputs(free_after_load_bytes=10 * GIB)))  # fmt: skip
    assert "free memory: from --free-after-load, not the log" in result.notes
    assert UNUSED not in result.notes
    # Llama-2-7B in fp16: 32 layers × 2 (K, V) × 4,096 × 2 B = 524,288 B a token; 10 GiB × 0.95 as the C++ float
    # 0.949999988 = 10,200,547,200 B ÷ 524,288 = 19,455.99 → 19,455 max tokens, the C++ ceilDiv to blocks of 16:
    # 1,216 blocks = 19,456 tokens
    assert result.ledger is not None and result.ledger.token_capacity == 19_456


def test_a_log_with_its_budget_line_says_the_flag_unused() -> None:
    log = read_engine_log(CASES / "trtllm/trtllm-4275-llama31-8b-fp8kv-rtx5090-v019/engine.log")
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
    result = explain(ExplainRequest(log=log, model=model, settings=parse_flags("trtllm", []),
                                    given=MeasuredInputs(free_after_load_bytes=10 * GIB)))  # fmt: skip
    assert UNUSED in result.notes
    assert not any(note.startswith("free memory: from") for note in result.notes)
