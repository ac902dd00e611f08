"""Real pipeline-parallel vLLM startups (issue #28, class 5): `kvtop explain` on logs of two stages.

Expected figures are the logs' own prints and vLLM's arithmetic on them (docs/engines/vllm.md §1 step 4:
the engine core takes the least block count over all workers; §4: each worker sizes its blocks from its
own memory and its own stage's layers), never kvtop's output.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.ledger import predict
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.cli_in_process import run_kvtop
from tests.conftest import CASES, CONFIGS

QWEN = "vllm/isambard-v0101dev-qwen3-30b-a3b-pp2-tp4-gh200"
DEEPSEEK = "vllm/lws-v083-deepseek-v25-pp2-tp8-a100-40g"
# Qwen3-30B-A3B at TP 4, PP 2: a stage's 24 of 48 layers × (4 KV heads / 4) × 128 × (K + V) × 2 B
QWEN_STAGE_BYTES_PER_TOKEN = 24 * 1 * 128 * 2 * 2
# DeepSeek-V2(.5) MLA at PP 2: a stage's 30 of 60 layers × (kv_lora_rank 512 + rope 64) × 2 B, no KV heads
DEEPSEEK_STAGE_BYTES_PER_TOKEN = 30 * (512 + 64) * 2


def explain_json(case: str, config: str, *flags: str) -> dict:
    result = run_kvtop("explain", str(CASES / case / "engine.log"), "--model",
                       str(CONFIGS / config), "--json", "--no-calibration-store", *flags)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_pp2_tp4_pool_is_the_least_of_the_eight_workers_prints() -> None:
    """v0.10.1 dev build: the engine core prints `GPU KV cache size` once per worker (6,654,432 × 4 for
    stage 0, 6,167,568 and 6,167,536 × 3 for stage 1), then every worker takes the least num_blocks."""
    out = explain_json(QWEN, "Qwen--Qwen3-30B-A3B.json")
    assert out["engine_version"] == "0.10.1.2.dev0+g1da94e673.d20250903"
    assert out["logged"]["token_capacity"] == 6_167_536 == 385_471 * 16
    assert out["logged"]["max_concurrency"] == 23.53  # printed with the least capacity, not stage 0's 25.38
    assert out["logged"]["context_length"] == 262_144
    # the least KV memory the log shows: stage 1's 70.58 GiB, not stage 0's 76.15
    assert 70.575 * GIB <= out["logged"]["available_kv_bytes"] <= 70.585 * GIB
    assert out["predicted"]["kv_bytes_per_token"] == QWEN_STAGE_BYTES_PER_TOKEN == 12_288
    low, high = out["predicted"]["token_capacity_min"], out["predicted"]["token_capacity_max"]
    assert low <= 6_167_536 <= high
    assert out["verdict"] == "match"


def test_a_stage_held_at_the_least_block_count_is_not_refused_on_a_stand_in_gpu() -> None:
    """Holding every stage at the tightest stage's blocks is not a `--num-gpu-blocks-override` that must fit
    the GPU: with the log's 76.15 GiB per stage and kvtop's 80 GiB stand-in (72 GiB requested), each stage
    keeps the blocks its own memory makes (before: 0 tokens, 'does not fit')."""
    available = 81_765_439_898  # 76.15 GiB as printed (its central value)
    settings = parse_flags("vllm", ["--tensor-parallel-size", "4", "--pipeline-parallel-size", "2",
                                    "--max-model-len", "262144", "--engine-version", "0.10.1"])  # fmt: skip
    ledger = predict(
        load_model(str(CONFIGS / "Qwen--Qwen3-30B-A3B.json")), settings, gpu_total_bytes=80 * GIB,
        measured=MeasuredInputs(available_kv_bytes=available),
    )  # fmt: skip
    blocks = available // (16 * QWEN_STAGE_BYTES_PER_TOKEN)
    assert ledger.engine.fits and ledger.engine.num_blocks == blocks == 415_880
    assert ledger.token_capacity == blocks * 16


def test_ray_folded_tighter_worker_is_estimated_within_its_bounds() -> None:
    """v0.8.3 (V0) PP2 × TP8 on A100-40GB: `# cuda blocks: 5302`, below what every KV figure shown gives
    (the least, 3.58 GiB, makes 6,951 blocks); Ray folded 14 workers' lines into one. The geometry is the
    engine's own: `# CPU blocks: 7767` = 4 GiB swap // (16 × 30 layers × 1,152 B). The hidden worker's KV
    memory is the estimated input (issue #28 item 7): the pool implies 5,302 × 552,960 B = 2.7305 GiB on it,
    inside [one 8,192-token request, the least shown] — a match with an estimated input, not 'insufficient'."""
    for gpu in ((), ("--gpu", "A100-40GB")):
        out = explain_json(DEEPSEEK, "cases/deepseek-ai--DeepSeek-V2.json", *gpu)
        assert out["engine_version"] == "0.8.3"
        assert out["predicted"]["kv_bytes_per_token"] == DEEPSEEK_STAGE_BYTES_PER_TOKEN == 34_560
        assert 4 * GIB // (16 * DEEPSEEK_STAGE_BYTES_PER_TOKEN) == 7_767
        assert out["logged"]["token_capacity"] == 5_302 * 16 == 84_832
        assert 3.575 * GIB <= out["logged"]["available_kv_bytes"] <= 3.585 * GIB
        assert out["verdict"] == "match" and out["missing"] == []
        estimated = out["estimated"]
        assert estimated["field"] == "available_kv_bytes" and estimated["source"] == "assumed"
        assert "14 workers" in estimated["basis"] and "[repeated Nx across cluster]" in estimated["basis"]
        pool = 5_302 * 16 * DEEPSEEK_STAGE_BYTES_PER_TOKEN
        assert pool == 2_931_793_920  # 2.7305 GiB
        assert pool <= estimated["implied_bytes"] < pool + (1 << 20)  # the first MiB that holds 5,302 blocks
        assert estimated["low_bytes"] == 8_192 * DEEPSEEK_STAGE_BYTES_PER_TOKEN  # one max_model_len request
        assert estimated["high_bytes"] == out["logged"]["available_kv_bytes"]
        assert out["predicted"]["token_capacity_min"] <= 84_832 <= out["predicted"]["token_capacity_max"]


def test_a_folded_pool_too_small_to_start_is_a_mismatch(tmp_path: Path) -> None:
    """The same log with a pool of 300 blocks (4,800 tokens): fewer than one 8,192-token request, which
    V0's `raise_if_cache_size_invalid` refuses, so no hidden worker explains it: a mismatch, not a match."""
    text = (CASES / DEEPSEEK / "engine.log").read_text().replace("# cuda blocks: 5302", "# cuda blocks: 300")
    log = tmp_path / "engine.log"
    log.write_text(text)
    result = run_kvtop("explain", str(log), "--model", str(CONFIGS / "cases/deepseek-ai--DeepSeek-V2.json"),
                       "--json", "--no-calibration-store")  # fmt: skip
    out = json.loads(result.stdout)
    assert out["logged"]["token_capacity"] == 4_800
    assert out["verdict"] == "mismatch" and out["estimated"]["field"] == "available_kv_bytes"
    assert out["estimated"]["low_bytes"] == 8_192 * DEEPSEEK_STAGE_BYTES_PER_TOKEN
    assert out["estimated"]["implied_bytes"] is None  # below one request's worth the engine refuses: no value gives it


def test_the_gpu_and_the_mla_backend_are_read_from_the_log() -> None:
    """No --gpu: the log's fused-MoE config path names NVIDIA_A100-SXM4-40GB and it says `Using Triton MLA
    backend.`, so blocks are 16 tokens (v0.8.3 cuda.py takes TRITON_MLA when block_size != 64), not the
    64 of kvtop's stand-in Hopper: the logged pool is 5,302 × 16 = 84,832 tokens (before: 339,328)."""
    from kvtop.domain.engines.vllm.log_hardware import log_attention_backend, log_gpu_name
    from kvtop.sources.engine_logs import read_engine_log

    log = read_engine_log(str(CASES / DEEPSEEK / "engine.log"))
    assert log_gpu_name(log) == "NVIDIA A100-SXM4-40GB"
    assert log_attention_backend(log) == "TRITON_MLA"
    out = explain_json(DEEPSEEK, "cases/deepseek-ai--DeepSeek-V2.json")
    assert out["logged"]["token_capacity"] == 84_832
    assert any("NVIDIA A100-SXM4-40GB" in note for note in out["notes"])


def test_pp2_on_two_rtx_pro_6000_from_the_first_stages_memory() -> None:
    """v0.27.1, Qwen3-32B at PP 2 (a blog's measured run): only Worker_PP0 prints `Available KV cache memory:
    6.92 GiB`; a stage's 32 layers × 8 KV heads × 128 × 2 × 2 B = 131,072 B per token, so 6.92 GiB holds
    3,540–3,545 blocks of 16, and the log's 56,640 tokens are int(3,540 / 2,048 × 32,768)."""
    out = explain_json("vllm/blog-v0271-qwen3-32b-pp2-rtxpro6000", "Qwen--Qwen3-32B.json", "--engine-version", "0.27.1")
    assert any(step["label"] == "requested: ceil(total × 0.426)" for step in out["steps"])  # the docker line's flag
    assert out["logged"]["token_capacity"] == 56_640 == int(3_540 / 2_048 * 32_768)
    assert out["predicted"]["kv_bytes_per_token"] == 32 * 8 * 128 * 2 * 2 == 131_072
    assert int(6.915 * GIB) // (16 * 131_072) == 3_540  # the low end of what prints as 6.92
    assert out["predicted"]["token_capacity_min"] <= 56_640 <= out["predicted"]["token_capacity_max"]
    assert out["verdict"] == "match"


def test_a_docker_run_of_the_vllm_image_is_a_vllm_launch() -> None:
    """The image's entry point is the server: what follows `vllm/vllm-openai:TAG` is its model and flags (the
    blog's `docker run … vllm/vllm-openai:latest Qwen/Qwen3-32B --pipeline-parallel-size 2 …`)."""
    command = (CASES / "vllm/blog-v0271-qwen3-32b-pp2-rtxpro6000/engine.log").read_text().splitlines()[0]
    settings = parse_launch_command(command.removeprefix("$ "))
    assert settings is not None and settings.engine == "vllm" and settings.model == "Qwen/Qwen3-32B"
    assert (settings.pp, settings.gpu_memory_utilization, settings.context_length) == (2, 0.426, 32_768)
