"""A refusal wins over a printed capacity, for every engine (issue 28, cause 1), on real logs.

Each engine prints the KV capacity it sized and only then checks that one request fits: vLLM V0's
`raise_if_cache_size_invalid` after `# GPU blocks: N`, vLLM V1's engine core failing after `GPU KV cache
size`, TensorRT-LLM ≤ v0.8's `maxTokensInPagedKvCache must be large enough …` after `Using N tokens`.
The verdict is `failed_start`; how the printed capacity rebuilds is kept apart (`capacity_verdict`).
"""

from __future__ import annotations

import json

from kvtop.domain.explain import explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.launch import parse_flags
from kvtop.sources.engine_logs import parse_engine_log, read_engine_log
from kvtop.sources.hub import load_model
from tests.cli_in_process import run_kvtop
from tests.conftest import CASES, CONFIGS


def _explain(case: str, config: str, *flags: str):
    engine = case.split("/")[0]
    log = read_engine_log(CASES / case / "engine.log")
    return explain(ExplainRequest(
        log=log, model=load_model(str(CONFIGS / config)), settings=parse_flags(engine, list(flags)),
    ))  # type: ignore[arg-type]


def test_v0_refusal_after_its_blocks_is_a_failed_start_whose_blocks_rebuild() -> None:
    """vllm#11230: kv_cache_size 0.39 GiB, `# GPU blocks: 80`, then the engine's refusal (no exception name).
    Block = 80 layers × 8 KV heads × 128 × 2 × 2 B × 16 = 5,242,880 B; 0.39 GiB prints [0.385, 0.395] GiB →
    78 … 80 blocks → 1,248 … 1,280 tokens; the refusal says 1,280 (= 80 × 16) < max_model_len 8,192."""
    block = 80 * 8 * 128 * 2 * 2 * 16
    assert (int(0.385 * 2**30) // block, int(0.395 * 2**30) // block) == (78, 80)
    result = _explain(
        "vllm/vllm-11230-qwen25-72b-gptq-v064-refusal", "Qwen--Qwen2.5-72B.json",
        "--max-model-len", "8192", "--gpu-memory-utilization", "0.95", "--engine-version", "0.33.0",
    )  # fmt: skip  # a v0.6 log's blocks under the block of 16 (pinned: 0.34.0's default is 64)
    assert result.verdict == "failed_start"
    assert result.startup_error is not None and result.startup_error.startswith(
        "The model's max seq len (8192) is larger than the maximum number of tokens that can be stored in KV cache (1280)"
    )
    assert result.logged.token_capacity == 80 * 16 == 1_280
    assert (result.token_capacity_min, result.token_capacity_max) == (78 * 16, 80 * 16)
    assert result.capacity_verdict == "match"
    assert not result.missing


def test_a_workers_refusal_without_an_exception_name_is_read() -> None:
    """vllm#8933: TP4, `# GPU blocks: 5402`, a worker's `Exception in worker … initialize_cache: The model's max
    seq len (131072) is larger than … (86432)`: 5,402 × 16 = 86,432, the pool the engine sized."""
    log = read_engine_log(CASES / "vllm/vllm-8933-tp4-v062-worker-refusal/engine.log")
    assert log.startup_error is not None
    assert log.startup_error.startswith("The model's max seq len (131072) is larger than the maximum number")
    assert "Traceback" not in log.startup_error
    result = _explain(
        "vllm/vllm-8933-tp4-v062-worker-refusal", "meta-llama--Llama-3.1-8B.json",
        "--tensor-parallel-size", "4", "--max-model-len", "131072", "--engine-version", "0.33.0",
    )  # fmt: skip  # a v0.6 log's blocks under the block of 16 (pinned: 0.34.0's default is 64)
    assert result.verdict == "failed_start"
    assert result.logged.num_gpu_blocks == 5_402 and result.logged.token_capacity == 5_402 * 16 == 86_432
    assert result.capacity_verdict == "insufficient"  # no KV-memory line: the blocks cannot be rebuilt
    assert any("not rebuilt; that needs `Available KV cache memory" in note for note in result.notes)


def test_an_engine_core_that_failed_after_printing_its_capacity_did_not_start() -> None:
    """The vLLM source build's log prints `GPU KV cache size: 163,568 tokens`, then `RuntimeError: Engine core
    initialization failed` (its KV connector): whatever matched before, the engine did not start."""
    log = read_engine_log(CASES / "vllm/srcbuild-dev15312-qwen3-vl-8b-init-failed/engine.log")
    model = load_model(str(CASES / "vllm/srcbuild-dev15312-qwen3-vl-8b-init-failed/config.json"))
    result = explain(ExplainRequest(log=log, model=model, settings=parse_flags("vllm", [])))
    assert result.verdict == "failed_start"
    assert result.startup_error == (
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"
    )
    assert result.logged.token_capacity == 163_568
    assert result.capacity_verdict in ("match", "mismatch")  # rebuilt either way, never "insufficient"


def test_trtllm_triton_refusal_after_its_tokens_is_a_failed_start() -> None:
    """TensorRT-LLM#494: `Using 693 tokens in paged KV cache.`, then Triton's `maxTokensInPagedKvCache must be
    large enough to process at least 1 sequence to completion` — a refusal in the runtime's words."""
    result = _explain(
        "trtllm/trtllm-494-llama2-7b-triton-refusal", "meta-llama--Llama-2-7b-hf.json",
        "--kv_cache_free_gpu_mem_fraction", "0.2",
    )  # fmt: skip
    assert result.verdict == "failed_start"
    assert result.logged.token_capacity == 693
    assert result.startup_error is not None and result.startup_error.startswith(
        "maxTokensInPagedKvCache must be large enough to process at least 1 sequence to completion"
    )


def test_a_pool_of_zero_tokens_is_a_failed_start_even_without_its_error() -> None:
    """vllm#13882: `# cuda blocks: 0` and a traceback cut before its message: no engine starts with no blocks."""
    result = _explain("vllm/vllm-13882-qwen2.5-7b-rtx4060-v0-negative", "Qwen--Qwen2.5-7B-Instruct.json")
    assert result.verdict == "failed_start" and result.logged.token_capacity == 0
    assert any("0 tokens" in note for note in result.notes)


def test_the_cli_says_the_refusal_first_and_the_rebuild_in_the_verdict() -> None:
    completed = run_kvtop("explain", str(CASES / "vllm/vllm-11230-qwen25-72b-gptq-v064-refusal/engine.log"),
                          "--model", str(CONFIGS / "Qwen--Qwen2.5-72B.json"), "--max-model-len", "8192",
                          "--gpu-memory-utilization", "0.95")  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[1].startswith("  the engine refused to start: The model's max seq len (8192)")
    verdict = next(line for line in lines if line.startswith("verdict:"))
    assert verdict == (
        "verdict: FAILED START — the engine refused to start after sizing its KV pool at 1,280 tokens; "
        "kvtop rebuilds it (inside the predicted interval)"
    )
    as_json = run_kvtop("explain", str(CASES / "vllm/vllm-11230-qwen25-72b-gptq-v064-refusal/engine.log"),
                        "--model", str(CONFIGS / "Qwen--Qwen2.5-72B.json"), "--max-model-len", "8192", "--json")  # fmt: skip
    out = json.loads(as_json.stdout)
    assert out["verdict"] == "failed_start" and out["capacity_verdict"] in ("match", "mismatch")


def test_an_error_after_the_server_is_up_is_not_a_refused_start() -> None:
    """tensorrtllm_backend#309 loads both ranks' pools and says `successfully loaded 'tensorrt_llm'`: an
    out-of-memory error a request hits afterwards (a line as TensorRT-LLM prints it) is not a refused start."""
    text = (CASES / "trtllm/trtllmbackend-309-tp2-total-tokens/engine.log").read_text()
    later = "[TensorRT-LLM][ERROR] Encountered an error in forward function: CUDA out of memory.\n"
    assert parse_engine_log(text).startup_error is None
    assert parse_engine_log(text + later).startup_error is None
    assert parse_engine_log(later + text).startup_error is not None  # before it, the same line is a refusal
