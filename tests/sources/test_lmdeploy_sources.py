"""LMDeploy from outside: its launch commands, its log lines beyond the real cases (hand-made after the
lines docs/engines/lmdeploy.md §2.4, §3 and §4.4 quote from the engine's source), its /metrics (hand-made
pages with the names and labels of `lmdeploy/metrics/loggers.py`; no recorded page is public), how its
processes become ranks, and its demo node."""

from __future__ import annotations

import httpx
import pytest

from kvtop.commands.node_source import DemoSource
from kvtop.domain.diagnose import diagnose
from kvtop.domain.engines.lmdeploy.log_records import LmdeployRankLog
from kvtop.domain.errors import InputError
from kvtop.domain.explain import explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.observe import EndpointState, EngineRank, ProcessRole
from kvtop.sources.engine_http import fetch_engine_live
from kvtop.sources.engine_logs import parse_engine_log
from kvtop.sources.hub import load_model
from kvtop.sources.nvml import NvmlSource
from kvtop.sources.processes import ProcessRecord, attribute_node
from kvtop.sources.scenario import load_scenario
from tests.conftest import CONFIGS
from tests.fakes.fake_process_table import FakeProcessTable, launched
from tests.fakes.fake_pynvml import MIB, FakePynvml, gpu_from_mib

# --- launch commands --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "model"),
    [
        ("lmdeploy serve api_server internlm/internlm2_5-7b-chat --tp 2", "internlm/internlm2_5-7b-chat"),
        ("python3 -m lmdeploy serve api_server /models/qwen --tp 2", "/models/qwen"),
        ("/opt/conda/bin/lmdeploy serve gradio ./workspace --tp 2", "./workspace"),
    ],
)
def test_launch_commands_are_lmdeploys(command: str, model: str) -> None:
    settings = parse_launch_command(command)
    assert settings is not None and (settings.engine, settings.model, settings.tp) == ("lmdeploy", model, 2)


@pytest.mark.parametrize("command", ["lmdeploy serve proxy --server-port 8000", "lmdeploy chat internlm/x", "lmdeploy lite auto_awq m"])
def test_lmdeploy_commands_that_serve_no_model_are_no_engine(command: str) -> None:
    assert parse_launch_command(command) is None


def test_api_server_flags_map_to_settings_and_back() -> None:
    """`lmdeploy serve api_server` spellings (lmdeploy/cli/utils.py ArgumentHelper)."""
    settings = parse_launch_command(
        "lmdeploy serve api_server m --backend pytorch --tp 4 --cache-max-entry-count 0.5 --session-len 8192 "
        "--max-batch-size 64 --quant-policy int8 --cache-block-seq-len 128 --max-prefill-token-num 4096 "
        "--server-name 0.0.0.0 --server-port 9000 --enable-prefix-caching"
    )
    assert settings is not None
    assert (settings.backend, settings.tp, settings.cache_max_entry_count, settings.context_length) == ("pytorch", 4, 0.5, 8192)
    assert (settings.max_running_requests, settings.kv_cache_dtype, settings.page_size) == (64, "int8", 128)
    assert (settings.max_prefill_tokens, settings.host, settings.port) == (4096, "0.0.0.0", 9000)
    assert settings.flags == {"enable-prefix-caching": True}  # kept verbatim: not a sizing knob kvtop models
    assert settings.to_flags() == [
        "--backend", "pytorch", "--tp", "4", "--cache-max-entry-count", "0.5", "--session-len", "8192",
        "--max-batch-size", "64", "--cache-block-seq-len", "128", "--max-prefill-token-num", "4096",
        "--quant-policy", "8",
    ]  # fmt: skip


def test_num_gpu_blocks_0_is_the_pytorch_engines_automatic_size() -> None:
    """PytorchEngineConfig.num_gpu_blocks = 0 (its printed default) sizes from memory; a negative one is an error."""
    assert parse_flags("lmdeploy", ["--num-gpu-blocks", "0"]).num_gpu_blocks_override == 0
    with pytest.raises(InputError, match="--num-gpu-blocks: must be at least 1, or 0 sizes the pool from free memory"):
        parse_flags("lmdeploy", ["--num-gpu-blocks", "-3"])


# --- log lines ---------------------------------------------------------------------------------------


def _rank(text: str) -> LmdeployRankLog:
    return parse_engine_log(text).ranks(LmdeployRankLog)[0]


def test_v0_12_and_v0_13_turbomind_lines() -> None:
    """§2.4: v0.12+ prints `max cached tokens` and the new truncation; v0.13 adds a logger prefix."""
    log = parse_engine_log(
        "[TM][INFO][2026-05-20 10:00:00.123][BlockManager.cc:51] block_size = 2.500 MB\n"
        "[TM][INFO][2026-05-20 10:00:00.124][BlockManager.cc:52] max_block_count = 19591\n"
        "[TM][INFO][2026-05-20 10:00:00.125][BlockManager.cc:53] chunk_size = 19591\n"
        "[TM][INFO] max cached tokens: 1253824\n"
        "[TM][WARNING] `session_len` truncated to 1253824 due to limited KV cache memory\n"
    )
    rank = log.ranks(LmdeployRankLog)[0]
    assert (rank.block_sizes[0].text, rank.max_block_counts, rank.chunk_sizes) == ("2.500", (19591,), (19591,))
    assert rank.max_cached_tokens == (1_253_824,)
    assert (rank.session_truncations[0].truncated, rank.session_truncations[0].wording) == (1_253_824, "limited_memory")
    assert log.engine == "lmdeploy" and log.decisions == ("backend=turbomind",)


@pytest.mark.parametrize(
    ("line", "workspace"),
    [
        # InternLM/lmdeploy#2724 (v0.6.2, a Llama-3.1-70B from the hub): `logger.info(f'model_source: {model_source}')`
        ("2024-11-07 12:04:20,439 - lmdeploy - INFO - turbomind.py:301 - model_source: hf_model", False),
        ("2024-06-05 18:11:20,000 - lmdeploy - INFO - model_source: workspace", True),
    ],
)
def test_the_model_source_line_says_a_converted_workspace(line: str, workspace: bool) -> None:
    """§15.1: a workspace (`ModelSource.WORKSPACE`) stages nothing through torch: read as --turbomind-workspace."""
    log = parse_engine_log(line + "\n[TM][INFO] [BlockManager] max_block_count = 118\n")
    assert ("turbomind_workspace=True" in log.decisions) is workspace


def test_v0_15_object_cache_budget_line() -> None:
    """§3: `Object cache budget: C MB from free F MB and ratio R` (`%.2f` MiB)."""
    budget = _rank("[TM][INFO] Object cache budget: 49152.00 MB from free 61440.00 MB and ratio 0.800\n").object_cache_budgets[0]
    assert (budget.budget.value_bytes, budget.free.value_bytes, budget.ratio) == (49152 * MIB, 61440 * MIB, 0.8)
    assert budget.free.low_bytes <= 61440 * MIB - MIB // 200 and budget.free.contains(61440 * MIB + MIB // 300)


PYTORCH_LOG = """\
2026-06-01 10:00:00,000 - lmdeploy - INFO - updated backend_config=PytorchEngineConfig(dtype='auto', tp=1, dp=1, session_len=None, max_batch_size=128, cache_max_entry_count=0.8, block_size=64, num_gpu_blocks=0, max_prefill_token_num=8192, quant_policy=<QuantPolicy.INT8: 8>, device_type='cuda')
2026-06-01 10:00:05,000 - lmdeploy - DEBUG - minimal free gpu memory: 61440 mb
2026-06-01 10:00:05,001 - lmdeploy - DEBUG - estimated max runtime memory: 2066 mb
2026-06-01 10:00:05,002 - lmdeploy - INFO - Building CacheEngine with config: CacheConfig(max_batches=128, block_size=64, num_cpu_blocks=0, num_gpu_blocks={blocks}, window_size=-1, cache_max_entry_count=0.8, max_prefill_token_num=8192)
"""


def test_pytorch_engine_lines_and_enum_values() -> None:
    """§4.4: `PytorchEngineConfig(… quant_policy=<QuantPolicy.INT8: 8> …)`, the DEBUG free/runtime lines (`>> 20`)
    and `CacheConfig(…)`."""
    log = parse_engine_log(PYTORCH_LOG.format(blocks=11_000))
    rank = log.ranks(LmdeployRankLog)[0]
    assert log.server_args["quant_policy"] == 8 and log.server_args["num_gpu_blocks"] == 0
    assert (rank.free_memory[0].low_bytes, rank.free_memory[0].high_bytes) == (61440 * MIB, 61441 * MIB - 1)
    assert rank.runtime_memory[0].value_bytes == 2066 * MIB
    config = rank.cache_configs[0]
    assert (config.num_gpu_blocks, config.block_size, config.max_batches, config.cache_max_entry_count) == (11_000, 64, 128, 0.8)
    assert "backend=pytorch" in log.decisions


def test_pytorch_engine_debug_log_is_rebuilt_to_the_block() -> None:
    """v0.13+: int((free − runtime) × 0.8) // block, free = 61,440 MiB (floored), runtime =
    (8,192 + 2 × 128) × 128,256 × 2 B; Llama-3.1-8B int8 block = 32 × 64 × 8 × (128 + 128 + 2 + 2) × ... per §4.1."""
    block = 32 * (64 * 8 * 128 * 2 + 2 * 64 * 8 * 2 * 2)  # K, V uint8 + K, V scale-zero (block, heads, 2) bf16
    runtime = (8192 + 2 * 128) * 128_256 * 2
    low = int((61440 * MIB - runtime) * 0.8) // block
    high = int((61441 * MIB - 1 - runtime) * 0.8) // block
    assert runtime >> 20 == 2066  # the DEBUG line's estimate
    log = parse_engine_log(PYTORCH_LOG.format(blocks=low))
    settings = parse_flags("lmdeploy", ["--backend", "pytorch", "--quant-policy", "8", "--max-batch-size", "128",
                                        "--engine-version", "0.13.0"])  # fmt: skip
    result = explain(ExplainRequest(
        log=log, model=load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")), settings=settings,
    ))
    assert result.verdict == "match" and result.logged.num_gpu_blocks == low
    assert (result.token_capacity_min, result.token_capacity_max) == (low * 64, high * 64)
    other = explain(ExplainRequest(
        log=parse_engine_log(PYTORCH_LOG.format(blocks=high + 40)),
        model=load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")), settings=settings,
    ))  # fmt: skip
    assert other.verdict == "mismatch" and other.gap_tokens == 40 * 64


def test_refused_start_in_lmdeploys_words() -> None:
    log = parse_engine_log("[TM][INFO] [BlockManager] block_size = 8.000 MB\nRuntimeError: No enough gpu memory for kv cache.\n")
    assert log.startup_error == "RuntimeError: No enough gpu memory for kv cache."
    result = explain(ExplainRequest(
        log=log, model=load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B.json")),
        settings=parse_flags("lmdeploy", []),
    ))
    assert result.verdict == "failed_start"


# --- /metrics ----------------------------------------------------------------------------------------

# Names and labels as `lmdeploy/metrics/loggers.py` (PrometheusStatLogger) declares them: hand-made pages.
METRICS_TWO_DP = """\
# HELP lmdeploy:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.
# TYPE lmdeploy:gpu_cache_usage_perc gauge
lmdeploy:gpu_cache_usage_perc{engine="0",model_name="internlm2_5-7b-chat"} 0.25
lmdeploy:gpu_cache_usage_perc{engine="1",model_name="internlm2_5-7b-chat"} 0.5
# HELP lmdeploy:num_requests_running Number of requests in model execution batches.
# TYPE lmdeploy:num_requests_running gauge
lmdeploy:num_requests_running{engine="0",model_name="internlm2_5-7b-chat"} 3.0
lmdeploy:num_requests_running{engine="1",model_name="internlm2_5-7b-chat"} 4.0
# HELP lmdeploy:num_requests_waiting Number of requests waiting to be processed.
# TYPE lmdeploy:num_requests_waiting gauge
lmdeploy:num_requests_waiting{engine="0",model_name="internlm2_5-7b-chat"} 1.0
# HELP lmdeploy:generation_tokens_total Number of generation tokens processed.
# TYPE lmdeploy:generation_tokens_total counter
lmdeploy:generation_tokens_total{engine="0",model_name="internlm2_5-7b-chat"} 1234.0
"""


def _live(pages: dict[str, tuple[int, str]]):
    def answer(request: httpx.Request) -> httpx.Response:
        status, body = pages.get(request.url.path, (404, "Not Found"))
        return httpx.Response(status, text=body)

    return fetch_engine_live("lmdeploy", "127.0.0.1", 23333, client=httpx.Client(transport=httpx.MockTransport(answer)))


def test_metrics_give_usage_and_requests_per_dp_engine_and_no_capacity() -> None:
    live = _live({"/metrics": (200, METRICS_TWO_DP)})
    assert live.state is EndpointState.OK and live.base_url == "http://127.0.0.1:23333"
    assert (live.kv_usage_fraction, live.running_requests, live.waiting_requests) == (0.5, 7, 1)
    assert [(rank.engine_index, rank.kv_usage_fraction) for rank in live.ranks] == [("0", 0.25), ("1", 0.5)]
    assert live.token_capacity is None  # the page states none: the plan or a log does


def test_a_server_without_metrics_says_how_to_turn_them_on() -> None:
    live = _live({})
    assert live.state is EndpointState.HTTP_ERROR
    assert "404" in (live.message or "") and "--enable-metrics" in (live.message or "")


def test_a_metrics_page_of_another_program_is_a_bad_payload() -> None:
    live = _live({"/metrics": (200, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1.0\n")})
    assert live.state is EndpointState.BAD_PAYLOAD and "lmdeploy:" in (live.message or "")


# --- processes → ranks -------------------------------------------------------------------------------

SERVER = 9000
LAUNCH = ["lmdeploy", "serve", "api_server", "internlm/internlm2_5-20b-chat", "--tp", "2"]


def _node(visible: str | None, *, worker: int | None = None):
    """Two A100s: TurboMind's server on both (its rank threads), or the PyTorch engine's server on GPU 0
    and a spawned worker (`worker`) on GPU 1."""
    on_gpu1 = worker or SERVER
    gpus = [
        gpu_from_mib("NVIDIA A100-SXM4-80GB", 0, total_mib=81920, reserved_mib=557, used_mib=70000,
                     bus_id="00000000:07:00.0", compute=[(SERVER, 70000 * MIB)]),
        gpu_from_mib("NVIDIA A100-SXM4-80GB", 1, total_mib=81920, reserved_mib=557, used_mib=70000,
                     bus_id="00000000:08:00.0", compute=[(on_gpu1, 70000 * MIB)]),
    ]  # fmt: skip
    node = NvmlSource(nvml_module=FakePynvml(gpus), clock=lambda: 1_700_000_100.0).read()
    server = launched(SERVER, LAUNCH)
    records = [ProcessRecord(**{**server.__dict__, "cuda_visible_devices": visible})]
    if worker:
        records.append(ProcessRecord(pid=worker, parent_pid=SERVER, name="python",
                                     cmdline=("python", "-c", "from multiprocessing.spawn import spawn_main"), user="root"))  # fmt: skip
    return attribute_node(node, FakeProcessTable.of(records))


def _ranks(node) -> list[tuple[int, int, ProcessRole, EngineRank | None]]:
    return [(gpu.index, p.pid, p.role, p.rank) for gpu, p in node.engine_processes(f"lmdeploy:{SERVER}")]


def test_turbomind_ranks_are_the_servers_gpus_in_order() -> None:
    """One process, a thread per GPU, no rank in any title: the rank is the GPU's position."""
    assert _ranks(_node(None)) == [
        (0, SERVER, ProcessRole.ENGINE_WORKER, EngineRank(tp=0)),
        (1, SERVER, ProcessRole.ENGINE_WORKER, EngineRank(tp=1)),
    ]


def test_turbomind_ranks_follow_cuda_visible_devices() -> None:
    assert _ranks(_node("1,0"))[0][3] == EngineRank(tp=1)  # GPU 0 is the second visible device


def test_pytorch_engine_server_and_spawned_worker_are_ranks_0_and_1() -> None:
    assert _ranks(_node(None, worker=9100)) == [
        (0, SERVER, ProcessRole.ENGINE_WORKER, EngineRank(tp=0)),
        (1, 9100, ProcessRole.ENGINE_WORKER, EngineRank(tp=1)),
    ]


# --- the demo node -----------------------------------------------------------------------------------


def test_the_lmdeploy_demo_node() -> None:
    """examples/scenarios/llama70b-tp4-lmdeploy.json: TurboMind's one process on GPUs 0–3, the PyTorch engine's
    server + spawned worker on GPUs 4–5; the endpoint gives usage, not capacity."""
    snapshot = DemoSource(load_scenario("llama70b-tp4-lmdeploy")).collect_at(0)
    turbomind, pytorch = snapshot.engines
    assert [(rank.gpu_index, rank.pid, rank.rank.tp) for rank in turbomind.ranks] == [
        (0, 23000, 0), (1, 23000, 1), (2, 23000, 2), (3, 23000, 3)
    ]  # fmt: skip
    assert [(rank.gpu_index, rank.pid, rank.rank.tp) for rank in pytorch.ranks] == [(4, 23400, 0), (5, 23411, 1)]
    assert turbomind.ledger is not None and turbomind.ledger.kv_format == "int8"
    assert turbomind.engine.live.token_capacity is None and turbomind.engine.live.kv_usage_fraction is not None


def test_the_demo_notebook_costs_every_turbomind_rank_its_share() -> None:
    """GPU 1's 4 GiB notebook: LMDeploy sizes all ranks from the least free memory, so a restart without it
    gains 4 GiB × 0.9 of KV on every rank: 3,865,470,566 B ÷ (64 × 42,240 B int8 blocks) = 1,429.9 blocks.

    Clean, on the A100-SXM4-80GB (keyed as the A100-80GB, whose CUDA total the corpus measured: 79.15 GiB
    = 84,986,665,370 B; less the context assumed at TP 4, 0.75 + 0.75 × 2
    = 2.25 GiB, as LMDeploy's is not fitted, and the 35,278,831,616 B of weights a rank holds):
    int(47,291,914,650 × 0.9) // 2,703,360 =
    15,744 blocks = 1,007,616 tokens; with the notebook int(42,996,947,354 × 0.9) // 2,703,360 = 14,314 blocks =
    916,096 tokens, 1,430 blocks fewer."""
    findings = diagnose(DemoSource(load_scenario("llama70b-tp4-lmdeploy")).collect_at(0))
    co_tenant = next(f for f in findings if f.rule == "co_tenant")
    assert co_tenant.gpus == (1,) and co_tenant.tokens in (1429 * 64, 1430 * 64)
    assert any("LMDeploy sizes every rank by the least free GPU" in line for line in co_tenant.evidence)
    # the finding is the waterfall's term; LMDeploy's endpoint states no capacity, so the rank's
    # actual figure is the prediction with that term
    assert co_tenant.term_tokens == -co_tenant.tokens
    assert co_tenant.evidence[-1] == (
        f"tokens per rank: clean 1,007,616 → other processes −{co_tenant.tokens:,} (GPU 1, pid 4711) → 916,096 predicted"
    )
