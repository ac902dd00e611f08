"""`explain --gpu`'s interval holds every estimated input's error, not only the one the log lacks (#27).

SGLang case C01 (vllm#21348: Qwen3-235B-A22B-FP8 at TP 4 on 4 × H100, `--mem-fraction-static 0.93`) prints its
capacity, 367,404 tokens, and K and V sizes of 8.23 GiB, but neither free-memory line nor its weights. Its rebuild
estimates the free memory before the load (CUDA's total less the context) and takes the weights from kvtop's book;
the interval held only the first's error (367,953 – 392,262) and missed the log by 549 tokens, though the book's
error (± 2.4 % of 55 GiB) moves the budget 1:1 (SGLang's KV = fraction × free before load − weights).

Expected values from the log and the engine's arithmetic, not from the function under test: the bytes a token costs
a rank are the log's (8.23 GiB of K for 367,404 + 1 tokens: 94 layers × 1 KV head × 128 × 2 B each of K and V =
48,128 B), and the weights' error is the committed calibration's (the book's relative error × the book), scaled by
SGLang's interval scale, as `plan` composes it.
"""

from __future__ import annotations

import math

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.sglang.calibration import INTERVAL_SCALE
from kvtop.domain.explain import explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.sources.engine_logs import read_engine_log
from kvtop.sources.hub import load_model
from tests.conftest import CASES, CONFIGS

LOGGED_TOKENS = 367_404  # `KV Cache is allocated. #tokens: 367404`
BYTES_PER_TOKEN = 94 * 1 * 128 * 2 * 2  # 48,128 B: the log's K size ÷ its rows, 8.23 GiB ÷ 367,405


def test_c01s_interval_holds_the_weights_books_error_and_the_log() -> None:
    model = load_model(str(CONFIGS / "Qwen--Qwen3-235B-A22B-FP8.json"))
    settings = parse_flags("sglang", ["--tp", "4", "--mem-fraction-static", "0.93"])
    h100 = gpu_total_bytes("H100")
    result = explain(ExplainRequest(
        log=read_engine_log(CASES / "sglang/C01/engine.log"), model=model, settings=settings,
        gpu_total_bytes=h100, gpu_name="H100",
    ))  # fmt: skip
    assert result.kv_bytes_per_token == BYTES_PER_TOKEN
    assert result.estimated is not None and result.estimated.field == "free_before_load_bytes"
    weights = next(term for term in result.estimated.others if term.term is Term.WEIGHTS)
    assert weights.source == "calibrated" and weights.error_bytes > 0
    assert result.token_capacity is not None and result.token_capacity_min is not None
    assert result.token_capacity_max is not None
    # the weights' error alone, in tokens: the interval's low side is at least that wide
    assert INTERVAL_SCALE is not None
    weights_tokens = INTERVAL_SCALE.factor * weights.error_bytes / BYTES_PER_TOKEN
    below = result.token_capacity - result.token_capacity_min
    assert below >= weights_tokens * 0.99
    # and no wider than it and the free memory's together (the root of their squares, each side)
    free = result.estimated
    free_tokens = 0.93 * (free.value_bytes - free.low_bytes) / BYTES_PER_TOKEN
    assert below <= math.hypot(weights_tokens, free_tokens) * 1.01 + 1
    assert result.token_capacity_min <= LOGGED_TOKENS <= result.token_capacity_max
    assert result.verdict == "match"


def test_c01s_interval_is_the_plans_for_the_same_launch() -> None:
    """Nothing in the log is measured but the capacity: the rebuild's interval is the plan's, to 0.5 % of a bound."""
    model = load_model(str(CONFIGS / "Qwen--Qwen3-235B-A22B-FP8.json"))
    settings = parse_flags("sglang", ["--tp", "4", "--mem-fraction-static", "0.93"])
    h100 = gpu_total_bytes("H100")
    result = explain(ExplainRequest(
        log=read_engine_log(CASES / "sglang/C01/engine.log"), model=model, settings=settings,
        gpu_total_bytes=h100, gpu_name="H100",
    ))  # fmt: skip
    plan = planned_capacity(model, settings, gpu_total_bytes=h100, gpu_name="H100")
    assert result.token_capacity_min is not None and result.token_capacity_max is not None
    assert abs(result.token_capacity_min - plan.token_capacity_min) / plan.token_capacity_min < 0.005
    assert abs(result.token_capacity_max - plan.token_capacity_max) / plan.token_capacity_max < 0.005
