"""TensorRT-LLM seen from outside: trtllm-serve's endpoints, the --extra_llm_api_options YAML, its MPI
workers' ranks, and its log prefixes.

The endpoint payloads are hand-made, following the public sources (no recorded trtllm-serve page is in
tests/data): the `/metrics` iteration-stats JSON is the example of trtllm-serve's documentation
(docs/source/commands/trtllm-serve, `kvCacheStats` …); the `/prometheus/metrics` page uses the metric
names and labels of `tensorrt_llm/metrics/collector.py` (MetricsCollector, `trtllm_` prefix,
`model_name`/`engine_type` labels).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from kvtop.domain.engines.stated_release import endpoint_release
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.observe import EndpointState, EngineRank, ProcessRole
from kvtop.sources.engine_http import fetch_engine_live
from kvtop.sources.engine_logs import parse_engine_log
from kvtop.sources.engines.trtllm.llm_api_options import complete_settings
from kvtop.sources.processes import ProcessRecord, attribute_node
from tests.conftest import CONFIGS
from tests.fakes.fake_process_table import FakeProcessTable, launched, two_engine_node

ITERATION_STATS = [  # trtllm-serve docs: `curl -X GET http://localhost:8000/metrics`
    {
        "gpuMemUsage": 76665782272,
        "iter": 153,
        "iterLatencyMS": 7.1,
        "kvCacheStats": {
            "allocNewBlocks": 3120,
            "allocTotalBlocks": 3120,
            "cacheHitRate": 0.00128,
            "freeNumBlocks": 101254,
            "maxNumBlocks": 101256,
            "missedBlocks": 3115,
            "reusedBlocks": 4,
            "tokensPerBlock": 32,
            "usedNumBlocks": 2,
        },
        "numActiveRequests": 1,
        "numQueuedRequests": 0,
    },
    {
        "gpuMemUsage": 76665782272,
        "iter": 154,
        "iterLatencyMS": 7.00688362121582,
        "kvCacheStats": {
            "allocNewBlocks": 3126,
            "allocTotalBlocks": 3126,
            "cacheHitRate": 0.00128,
            "freeNumBlocks": 101253,
            "maxNumBlocks": 101256,
            "missedBlocks": 3121,
            "reusedBlocks": 4,
            "tokensPerBlock": 32,
            "usedNumBlocks": 3,
        },
        "numActiveRequests": 1,
        "numQueuedRequests": 2,
    },
]
PROMETHEUS = """# HELP trtllm_kv_cache_max_blocks Maximum number of KV cache blocks
# TYPE trtllm_kv_cache_max_blocks gauge
trtllm_kv_cache_max_blocks{engine_type="undefined",model_name="undefined"} 101256.0
# HELP trtllm_kv_cache_used_blocks Number of used KV cache blocks
# TYPE trtllm_kv_cache_used_blocks gauge
trtllm_kv_cache_used_blocks{engine_type="undefined",model_name="undefined"} 25314.0
# HELP trtllm_kv_cache_tokens_per_block Number of tokens per KV cache block
# TYPE trtllm_kv_cache_tokens_per_block gauge
trtllm_kv_cache_tokens_per_block{engine_type="undefined",model_name="undefined"} 32.0
# HELP trtllm_num_requests_running Number of active requests
# TYPE trtllm_num_requests_running gauge
trtllm_num_requests_running{engine_type="undefined",model_name="undefined"} 12.0
# HELP trtllm_num_requests_waiting Number of queued requests
# TYPE trtllm_num_requests_waiting gauge
trtllm_num_requests_waiting{engine_type="undefined",model_name="undefined"} 3.0
"""
# 1.1.0rc5 (Dynamo's TensorRT-LLM page): request histograms only, nothing of the KV cache
PROMETHEUS_1_1 = """# HELP trtllm_request_success_total Count of successfully processed requests.
# TYPE trtllm_request_success_total counter
trtllm_request_success_total{engine_type="undefined",finished_reason="stop",model_name="undefined"} 7.0
"""


def _serving(pages: dict[str, tuple[int, str]]) -> httpx.Client:
    def answer(request: httpx.Request) -> httpx.Response:
        status, body = pages.get(request.url.path, (404, "not found"))
        return httpx.Response(status, text=body)

    return httpx.Client(transport=httpx.MockTransport(answer))


def _live(pages: dict[str, tuple[int, str]]):  # type: ignore[no-untyped-def]
    return fetch_engine_live("trtllm", "127.0.0.1", 8000, client=_serving(pages))


def test_prometheus_kv_gauges_give_capacity_usage_and_requests() -> None:
    live = _live({"/prometheus/metrics": (200, PROMETHEUS), "/version": (200, '{"version": "1.3.0rc4"}')})
    assert live.state is EndpointState.OK and live.version is not None and endpoint_release("trtllm", live.version).text == "1.3.0rc4"
    assert (live.num_gpu_blocks, live.block_size, live.token_capacity) == (101_256, 32, 101_256 * 32)
    assert live.used_tokens == 25_314 * 32 and live.kv_usage_fraction == pytest.approx(25_314 / 101_256)
    assert (live.running_requests, live.waiting_requests) == (12, 3)
    assert not any("/metrics hands out" in note for note in live.notes)  # the iteration queue was left alone


def test_without_kv_gauges_the_iteration_stats_are_read_and_the_drain_is_said() -> None:
    pages = {"/prometheus/metrics": (200, PROMETHEUS_1_1), "/metrics": (200, json.dumps(ITERATION_STATS))}
    live = _live(pages)
    assert live.state is EndpointState.OK
    assert (live.num_gpu_blocks, live.block_size, live.token_capacity) == (101_256, 32, 3_240_192)
    assert live.used_tokens == 3 * 32 and (live.running_requests, live.waiting_requests) == (
        1,
        2,
    )  # the newest stat
    assert any("/metrics hands out each iteration stat once" in note for note in live.notes)


def test_attention_dp_ranks_each_report_their_pool_and_the_tightest_is_the_capacity() -> None:
    stats = [
        {
            **ITERATION_STATS[1],
            "attentionDpRank": rank,
            "kvCacheStats": {**ITERATION_STATS[1]["kvCacheStats"], "maxNumBlocks": 100_000 - rank},
        }  # type: ignore[dict-item]
        for rank in range(4)
    ]
    live = _live({"/metrics": (200, json.dumps(stats))})
    assert [rank.dp_rank for rank in live.ranks] == [0, 1, 2, 3]
    assert live.token_capacity == 99_997 * 32 and live.running_requests == 4


@pytest.mark.parametrize(
    ("pages", "state"),
    [
        ({}, EndpointState.HTTP_ERROR),
        ({"/metrics": (200, "[]")}, EndpointState.BAD_PAYLOAD),  # no stats yet (enable_iter_perf_stats)
        ({"/metrics": (200, "<html>")}, EndpointState.BAD_PAYLOAD),
    ],
)
def test_an_endpoint_that_says_nothing_usable_is_a_named_state(
    pages: dict[str, tuple[int, str]], state: EndpointState
) -> None:
    live = _live(pages)
    assert live.state is state and live.message


# --- the --extra_llm_api_options YAML -----------------------------------------------------------


def test_the_yaml_a_launch_names_is_read_when_it_exists(tmp_path: Path) -> None:
    (tmp_path / "extra.yaml").write_text(
        "kv_cache_config:\n  free_gpu_memory_fraction: 0.8\n  dtype: fp8\n  max_tokens: 120000\n"
        "enable_attention_dp: true\n"
    )
    launch = parse_launch_command("trtllm-serve M --tp_size 4 --extra_llm_api_options extra.yaml")
    assert launch is not None
    read = complete_settings(launch, tmp_path)
    assert (read.free_gpu_memory_fraction, read.kv_cache_dtype, read.kv_cache_max_tokens) == (
        0.8,
        "fp8",
        120_000,
    )
    assert (read.enable_dp_attention, read.dp) == (True, 4)
    assert complete_settings(launch, None) == launch  # a running server's relative path: its cwd is not ours
    missing = launch.model_copy(update={"extra_llm_api_options": str(tmp_path / "gone.yaml")})
    assert complete_settings(missing, tmp_path) == missing  # a launch from a log: the file is elsewhere
    # typed by the operator (`plan`): a file that is not there is refused, not planned on the defaults
    # it would have changed (a review found a typo planned at fraction 0.9 where the file said 0.5)
    with pytest.raises(InputError, match="^--extra_llm_api_options: no such file .*: .*gone.yaml$"):
        complete_settings(missing, tmp_path, strict=True)


@pytest.mark.parametrize(
    ("text", "message"), [("kv_cache_config: [1, 2", "not valid YAML"), ("- a\n- b\n", "not a YAML mapping")]
)
def test_a_yaml_that_is_not_options_is_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "bad.yaml").write_text(text)
    settings = parse_flags("trtllm", ["--config", str(tmp_path / "bad.yaml")])
    with pytest.raises(InputError, match=f"--extra_llm_api_options: {message}"):
        complete_settings(settings, tmp_path)


def test_plan_reads_the_yaml_of_a_pasted_launch(tmp_path: Path) -> None:
    """`kvtop plan --cmd '…'` with the YAML beside it: its kv_cache_config.dtype fp8 halves the bytes per token."""
    (tmp_path / "extra.yaml").write_text("kv_cache_config:\n  dtype: fp8\n  free_gpu_memory_fraction: 0.85\n")
    command = "trtllm-serve M --tp_size 2 --extra_llm_api_options extra.yaml"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kvtop",
            "plan",
            "--cmd",
            command,
            "--model",
            str(CONFIGS / "Qwen--Qwen3-8B.json"),
            "--gpu",
            "H100",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PYTHONPATH": str(Path(__file__).resolve().parents[2]), "HF_HUB_OFFLINE": "1", "PATH": ""},
    )
    assert result.returncode == 0, result.stderr[-400:]
    out = json.loads(result.stdout)
    assert out["kv_bytes_per_token"] == 36 * 4 * 128 * 2 * 1 == 36_864  # 8 KV heads over TP 2, FP8
    assert out["memory_fraction"]["value"] == pytest.approx(0.85, abs=1e-7)


# --- ranks of untitled MPI workers, and log prefixes ----------------------------------------------


def _trtllm_node(cuda_visible: str | None):  # type: ignore[no-untyped-def]
    """The A100 node of tests/fakes with its GPU 0 and GPU 1 pids as trtllm-serve's MPI workers (hand-made:
    the recorded listing is an SGLang one; only the process table differs)."""
    node, _ = two_engine_node()
    server = 4100
    workers = [
        ProcessRecord(
            pid=pid,
            parent_pid=server,
            name="python3",
            user="root",
            cmdline=("python3", "-m", "mpi4py.futures.server"),
            cuda_visible_devices=cuda_visible,
        )
        for pid in (2160317, 2159821)
    ]
    table = FakeProcessTable.of(
        [launched(server, ["trtllm-serve", "Qwen/Qwen3-8B", "--tp_size", "2"]), *workers]
    )
    return attribute_node(node, table)


def test_an_mpi_worker_is_ranked_by_its_gpus_place_among_those_it_sees() -> None:
    """TensorRT-LLM workers bind `rank % gpus_per_node`: GPU 0 is TP0, GPU 1 is TP1 with every GPU visible;
    with CUDA_VISIBLE_DEVICES=1,0 GPU 1 is the first device, so TP0."""
    ranks = {p.pid: (p.role, p.engine_id, p.rank) for g in _trtllm_node(None).gpus for p in g.processes}
    assert ranks[2160317] == (ProcessRole.ENGINE_WORKER, "trtllm:4100", EngineRank(tp=0))
    assert ranks[2159821] == (ProcessRole.ENGINE_WORKER, "trtllm:4100", EngineRank(tp=1))
    swapped = {p.pid: p.rank for g in _trtllm_node("1,0").gpus for p in g.processes}
    assert (swapped[2160317], swapped[2159821]) == (EngineRank(tp=1), EngineRank(tp=0))


def test_python_lines_carry_the_mpi_rank_and_cpp_lines_none() -> None:
    text = (
        "[10/21/2025-23:25:18] [TRT-LLM] [RANK 3] [I] Memory used after loading model weights (inside torch) "
        "in memory usage profiling: 63.52 GiB\n"
        "[TensorRT-LLM][INFO] Number of tokens per block: 32.\n"
    )
    log = parse_engine_log(text)
    assert log.engine == "trtllm" and log.first_date == "2025-10-21"
    assert [(r.rank.worker, r.rank.label) for r in log.records] == [(None, "unranked"), (3, "rank=3")]
