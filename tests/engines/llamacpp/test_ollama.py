"""Ollama's launches of llama.cpp read as llama-server's (docs/engines/llamacpp.md §8): its runner is started
with `--ctx-size` = num_ctx × OLLAMA_NUM_PARALLEL (server/sched.go: `opts.NumCtx = origNumCtx * numParallel`)
and `--parallel` (llm/server.go), one `--kv-cache-type` (OLLAMA_KV_CACHE_TYPE) for K and V."""

from __future__ import annotations

from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

# llm/server.go's params, in its order: num_ctx 8192 × OLLAMA_NUM_PARALLEL 4 = --ctx-size 32768
RUNNER = ("/usr/lib/ollama/runners/cuda_v12/ollama_llama_server --model /root/.ollama/models/blobs/sha256-8eeb "
          "--ctx-size 32768 --batch-size 512 --n-gpu-layers 33 --threads 8 --flash-attn --parallel 4 --port 37529")  # fmt: skip


def test_the_runner_command_is_llamacpps() -> None:
    settings = parse_launch_command(RUNNER)
    assert settings is not None and settings.engine == "llamacpp"
    assert (settings.context_length, settings.max_running_requests, settings.port) == (32768, 4, 37529)
    ledger = predict(load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B.json")), settings, gpu_total_bytes=80 << 30)
    # 4 streams of GGML_PAD(32768 / 4, 256) = 8192 cells: each request gets num_ctx = 8192 of them
    assert ledger.engine.token_capacity == 32768 and ledger.engine.max_running_requests == 4


def test_one_kv_cache_type_for_k_and_v() -> None:
    settings = parse_launch_command("ollama runner --model /m --ctx-size 8192 --parallel 1 --kv-cache-type q8_0 --port 1")
    assert settings is not None and settings.engine == "llamacpp"
    ledger = predict(load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B.json")), settings, gpu_total_bytes=80 << 30)
    # 8192 cells × 32 layers × 2 rows of 1024 q8_0 elements (32 blocks × 34 B = 1088 B)
    assert ledger.engine.kv_pool_bytes == 8192 * 32 * 2 * 1088


def test_ollamas_own_engine_is_not_llamacpp() -> None:
    assert parse_launch_command("ollama runner --ollama-engine --model /m --ctx-size 8192 --port 1") is None
