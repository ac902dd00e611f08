"""Older and newer log dialects kvtop reads (issue 28, causes 3, 4, 5), on real logs.

TensorRT-LLM: the PyTorch backend's insufficient-memory failure (1.0), the ≤ v0.8 Triton backend's
`Using N total tokens …` line, and its parameter spelling `kv_cache_free_gpu_mem_fraction`; LMDeploy v0.12+'s
`max cached tokens: N`; vLLM's pipeline stage of a process from its own `… is assigned as …` line.
"""

from __future__ import annotations

import json

import pytest

from kvtop.commands.explain import explanation_json, explanation_text
from kvtop.domain.capacity_assumption import CapacityAssumption, OtherReading, ReleaseSpan
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import VersionSource, from_flag
from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.domain.explain import explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.launch import parse_flags
from kvtop.sources.engine_logs import parse_engine_log, read_engine_log
from kvtop.sources.hub import load_model
from tests.conftest import CASES, CONFIGS


def _explain(case: str, config: str, *flags: str, **kwargs):
    engine = case.split("/")[0]
    log = read_engine_log(CASES / case / "engine.log")
    settings = parse_flags(engine, list(flags))  # type: ignore[arg-type]
    return explain(ExplainRequest(
        log=log, model=load_model(str(CONFIGS / config)), settings=settings, **kwargs,
    ))


def test_pytorch_backend_insufficient_memory_is_a_trtllm_failed_start() -> None:
    """TensorRT-LLM#5872 (1.0.0rc): the only prefixed line is the executor's error; the component and the
    free memory follow unprefixed. Before, the log had 'no startup lines' (exit 2)."""
    log = read_engine_log(CASES / "trtllm/trtllm-5872-qwen3-235b-kv-not-created/engine.log")
    assert log.engine == "trtllm"
    assert log.startup_error == "Executor creation failed due to insufficient GPU memory."
    assert log.startup_failures[0].rank.worker == 1  # `[RANK 1]`
    result = _explain(
        "trtllm/trtllm-5872-qwen3-235b-kv-not-created", "Qwen--Qwen3-235B-A22B-FP8.json",
        "--tp_size", "8", "--ep_size", "8",
    )  # fmt: skip
    assert result.verdict == "failed_start" and result.capacity_verdict is None
    assert "the executor could not create its KV cache with 108.86 GiB free of 140.06 GiB" in result.notes


def test_pytorch_backend_model_line_is_the_measured_weights() -> None:
    """TensorRT-LLM#5872's creation summary: `Model: 139.55 / 110.70` (free GiB before / after the model was built,
    pyexecutor's `_ExecutorMemoryMonitor`, `.2f`), so the weights took 139.55 − 110.70 = 28.85 GiB on the rank,
    within ± 0.01 GiB of the two roundings. The log has no profile line; the summary's figure is read as measured."""
    result = _explain(
        "trtllm/trtllm-5872-qwen3-235b-kv-not-created", "Qwen--Qwen3-235B-A22B-FP8.json",
        "--tp_size", "8", "--ep_size", "8",
    )  # fmt: skip
    assert result.logged.weights_bytes == round(139.55 * 2**30) - round(110.70 * 2**30)
    assert round(result.logged.weights_bytes / 2**30, 2) == 28.85


def test_pytorch_backend_lowercase_model_stage_is_not_read_as_weights() -> None:
    """Later releases print the summary's stages as `ExecutorMemoryType` values (virtual_memory.py:
    MODEL_ENGINE_MAIN = "model", beside a MODEL_WEIGHTS_MAIN "model_weights" stage of its own), so `model: B / A` is
    not the `Model:` stage whose B − A is the weights: left unread, no weights figure, rather than a wrong one."""
    text = (CASES / "trtllm/trtllm-5872-qwen3-235b-kv-not-created/engine.log").read_text()
    log = parse_engine_log(text.replace("Model: 139.55 / 110.70", "model: 139.55 / 110.70"), source="later.log")
    assert log.engine == "trtllm"
    settings = parse_flags("trtllm", ["--tp_size", "8", "--ep_size", "8"])
    result = explain(ExplainRequest(
        log=log, model=load_model(str(CONFIGS / "Qwen--Qwen3-235B-A22B-FP8.json")), settings=settings,
    ))  # type: ignore[arg-type]
    assert result.verdict == "failed_start" and result.logged.weights_bytes is None


def test_triton_total_tokens_line_and_its_pool_bytes() -> None:
    """tensorrtllm_backend#309: `Allocate 3657433088 bytes` / `Using 13952 total tokens in paged KV cache, and
    24 blocks per sequence` on each of two TP ranks: 3,657,433,088 ÷ 13,952 = 262,144 B = 32 layers × (32 ÷ 2)
    heads × 128 × 2 × 2 B, a Llama-2-7B geometry at TP 2."""
    assert 3_657_433_088 == 13_952 * (32 * (32 // 2) * 128 * 2 * 2)
    result = _explain(
        "trtllm/trtllmbackend-309-tp2-total-tokens", "meta-llama--Llama-2-7b-hf.json", "--tp_size", "2"
    )
    assert result.logged.token_capacity == 13_952
    assert result.pool_checks and all(check.within_rounding for check in result.pool_checks)
    assert result.pool_checks[0].predicted_bytes == 3_657_433_088
    assert result.startup_error is None  # `successfully loaded 'tensorrt_llm'`: it started


def test_triton_parameter_spelling_is_the_free_memory_fraction() -> None:
    """TensorRT-LLM#224 ran the Triton backend with `kv_cache_free_gpu_mem_fraction` 0.95: the backend's own
    name for the executor's free_gpu_memory_fraction, refused before as an unknown flag."""
    settings = parse_flags("trtllm", ["--kv_cache_free_gpu_mem_fraction", "0.95"])
    assert settings.free_gpu_memory_fraction == 0.95
    assert parse_flags("trtllm", ["--max_tokens_in_paged_kv_cache", "2560"]).kv_cache_max_tokens == 2560


def test_lmdeploy_max_cached_tokens_is_the_capacity() -> None:
    """lmdeploy#4367 (TurboMind, TP4): only `max cached tokens: 42880` and the truncation, four times. The
    engine's figure is max_block_count × cache_block_seq_len × attn_cp_size (docs/engines/lmdeploy.md §2.3):
    42,880 = 335 × 128 × 1. Before, the log's capacity was read as absent."""
    result = _explain(
        "lmdeploy/lmdeploy-4367-glm47-flash-max-cached-tokens", "meta-llama--Llama-3.1-8B.json",
        "--cache-block-seq-len", "128",
    )  # fmt: skip
    assert result.logged.token_capacity == 42_880
    assert result.logged.num_gpu_blocks == 42_880 // 128 == 335
    assert result.logged.ranks_seen == 4
    assert result.verdict == "insufficient"  # TurboMind before v0.15 prints no free memory
    assert not any("max_block_count" in missing for missing in result.missing)


def test_a_vllm_process_states_its_pipeline_stage() -> None:
    """vLLM's `rank N in world size W is assigned as DP rank d, PP rank p, …` (the source build's line): a
    `VllmWorker rank=N` process without PP tags is placed on its stage from it (docs/engines/vllm.md §4)."""
    log = read_engine_log(CASES / "vllm/srcbuild-dev15312-qwen3-vl-8b-init-failed/engine.log")
    assert log.first(VllmRankLog, lambda r: r.pipeline_stages or None) == (0,)


def test_vllm_workers_without_pp_tags_are_placed_by_their_global_rank() -> None:
    """`(VllmWorker rank=N pid=…)` names no stage: vLLM numbers its workers TP-fastest (rank = stage × TP +
    TP rank), so at PP2 × TP2 ranks 0–1 are stage 0 and 2–3 stage 1, and each stage's KV memory is its own
    least. The lines are hand-made in vLLM's V1 worker format (no public PP log of this naming was found)."""
    from kvtop.domain.engines.vllm.worker_figures import least_by_stage

    lines = [
        f"(VllmWorker rank={rank} pid={100 + rank}) INFO 05-01 10:00:00 [gpu_worker.py:227] "
        f"Available KV cache memory: {memory} GiB"
        for rank, memory in ((0, "6.10"), (1, "6.05"), (2, "7.40"), (3, "7.35"))
    ]
    log = parse_engine_log("\n".join(lines))
    stages = least_by_stage(log, stages=2, tp=2)
    assert stages is not None
    assert [stage.value.text for stage in stages] == ["6.05", "7.35"]
    assert [stage.rank.worker for stage in stages] == [1, 3]


def test_the_primary_pool_of_a_dev_build_is_rebuilt_with_its_eras_block() -> None:
    """#2268 (0.13.0.dev2024082000): `available: 21.89 GiB`, `Number of blocks in KV cache primary pool: 631`.
    The C++ runtime (docs/engines/trtllm.md §4.2): maxTokens = (int)(0.9f × free / 524,288 B), free in
    [21.885, 21.895] GiB → 40,338 … 40,357 tokens; ceilDiv(·, 64) = 631 blocks at both ends → 631 × 64 =
    40,384 tokens (the engine prints no `Allocated … (N)` line, so the blocks × tokens per block is its figure)."""
    per_token = 32 * 32 * 128 * 2 * 2  # Qwen1.5-7B = Llama-2-7B geometry, fp16 KV
    low = int(float.fromhex("0x1.ccccccp-1") * 21.885 * 2**30 / per_token)  # 0.9f as the float32 it is
    high = int(float.fromhex("0x1.ccccccp-1") * 21.895 * 2**30 / per_token)
    assert (low, high) == (40_338, 40_356)
    assert -(-low // 64) == -(-high // 64) == 631
    result = _explain(
        "trtllm/trtllm-2268-qwen15-7b-primary-pool", "meta-llama--Llama-2-7b-hf.json",
        "--engine-version", "0.13.0.dev2024082000",
    )  # fmt: skip
    assert result.logged.num_gpu_blocks == 631
    assert result.logged.token_capacity == 631 * 64 == 40_384
    assert result.verdict == "match" and result.token_capacity == 40_384


def test_the_primary_pool_without_a_release_names_the_reading_it_took() -> None:
    """#2268's log states neither its release nor its tokens per block; its wording (`primary pool`, v0.9–v0.19)
    is read as ~0.19.0, whose engine build takes 32 tokens a block, where the thread's 0.13 dev build took 64
    (case.json: 631 blocks, worked check 631 × 64 = 40,384). The capacity is then an assumption, said."""
    case = json.loads((CASES / "trtllm/trtllm-2268-qwen15-7b-primary-pool/case.json").read_text())
    blocks = case["logged"]["primary_blocks"]
    log = read_engine_log(CASES / "trtllm/trtllm-2268-qwen15-7b-primary-pool/engine.log")
    version = engine_rules("trtllm").resolve_version(log)
    settings = parse_flags("trtllm", []).model_copy(update={"engine_version": version.text})
    result = explain(ExplainRequest(
        log=log, model=load_model(str(CONFIGS / "meta-llama--Llama-2-7b-hf.json")), settings=settings,
        version=version,
    ))  # fmt: skip
    assert result.logged.token_capacity == blocks * 32 == 20_192
    # a typed value across the seam: the blocks, the default taken and the release it rests on, the other reading
    assumption = result.logged.capacity_assumption
    assert assumption == CapacityAssumption(
        blocks=631, tokens_per_block=32, release="~0.19.0", release_source=VersionSource.LOG,
        others=(OtherReading(tokens_per_block=64, releases=ReleaseSpan(first=None, next="0.19.0"), tokens=631 * 64),),
        settle_flags=("--engine-version", "--kv_cache_config.tokens_per_block"),
    )  # fmt: skip
    assert assumption.tokens == blocks * 32 == result.logged.token_capacity
    # JSON says it as data; the text view words it
    said = explanation_json(result)["logged"]["capacity_assumption"]
    assert (said["kind"], said["blocks"], said["tokens_per_block"], said["others"][0]["tokens"]) == (
        "primary_pool_tokens_per_block", 631, 32, 40_384,
    )
    text = explanation_text(result, (), "engine.log")
    assert f"(assumed: {blocks} primary-pool blocks × 32 tokens per block" in text
    assert f"builds before 0.19.0 took 64: {blocks} × 64 = 40,384" in text
    # the release given: the engine's own figure, no assumption
    given = _explain(
        "trtllm/trtllm-2268-qwen15-7b-primary-pool", "meta-llama--Llama-2-7b-hf.json",
        "--engine-version", "0.13.0.dev2024082000", version=from_flag("0.13.0.dev2024082000"),
    )  # fmt: skip
    assert given.logged.token_capacity == blocks * 64 and given.logged.capacity_assumption is None


def test_a_release_span_is_two_release_labels_or_open_ends_never_a_word() -> None:
    # 'now' was the latest era's sentinel for "no next release": an open end is None, and a word is refused
    assert ReleaseSpan(first="0.19.0", next=None).next is None
    with pytest.raises(ValueError, match="not a release label: 'now'"):
        ReleaseSpan(first="0.19.0", next="now")
