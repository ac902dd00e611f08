"""The demo node: every shipped scenario, the figures it derives from predict(), movement over
time, and scenario files that are wrong in one field."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from kvtop.commands.node_source import DemoSource
from kvtop.domain.calibration.estimate import calibrated_ledger
from kvtop.domain.capacity import CapacityCause
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.observe import EndpointState, EngineRank, GpuState, ProcessRole
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from kvtop.sources.scenario import (
    DEFAULT_SCENARIO,
    load_scenario,
    parse_scenario,
    scenario_dir,
    scenario_names,
)
from tests.calibrated_figures import (
    DEMO_H100_CUDA_TOTAL_BYTES,
    demo_llama_70b_tokens,
    llama_70b_weights_bytes,
    sglang_context_bytes,
    vllm_v1_runtime_bytes,
)
from tests.corpus_records import logged_bytes, logged_gib

MIB = 1 << 20
HEALTHY = ("llama70b-tp8-sglang", "dsv3-dp-attention-vllm", "orphan-vllm-worker", "gpu5-lost")
# The clean prediction's pre-load terms on an H100 come from the committed fits, by hand in tests/calibrated_figures.py
# (CUDA's total the mean of the H100 totals the corpus's logs printed; SGLang's CUDA context and NCCL before the weights
# a constant and a part per doubling of TP on NVLink GPUs): at the fits of da524f1c 79.18806 GiB (85,027,531,983 B)
# and 0.570448 + 0.521322 × 3 GiB at TP 8 (2,291,809,582 B). A scenario that sets neither the driver's reserve nor the
# context gets these, so its engines measure what the prediction expects.
SGLANG_TP8_CONTEXT = sglang_context_bytes(8)
# What the default node's SGLang measured is data (examples/measured/starts.json), never these fits: the
# 77.43 GiB free before its weights that SGLang 0.5.2rc2 printed at TP 8 on an H100 (corpus record
# file45518106035-grok-2-fp8-h100-tp8), 83,139,829,432 B.
SGLANG_TP8_FREE = logged_bytes("file45518106035-grok-2-fp8-h100-tp8:free_before_load")
LLAMA_TP8 = "python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3-70B-Instruct --tp 8 --host 0.0.0.0 --port 30000 --enable-metrics --engine-version 0.5.9"  # the scenarios' SGLang


def collect(name: str, tick: int = 0):
    return DemoSource(load_scenario(name)).collect_at(tick)


def test_the_five_named_scenarios_ship() -> None:
    assert set(scenario_names()) >= {*HEALTHY, "llama70b-tp8-foreign-gpu3"}
    assert load_scenario("default").name == DEFAULT_SCENARIO == "llama70b-tp8-sglang"


@pytest.mark.parametrize("name", scenario_names())
def test_every_scenario_collects_with_a_ledger_for_every_engine(name: str) -> None:
    scenario = load_scenario(name)
    snapshot = DemoSource(scenario).collect_at(0)
    assert snapshot.source == f"demo:{name}"
    assert len(snapshot.observation.gpus) == scenario.gpu.count
    assert len(snapshot.engines) == len(scenario.engines)
    for view in snapshot.engines:
        assert view.ledger is not None, view.ledger_error
        assert view.ranks and all(rank.predicted is not None for rank in view.ranks)
        # a worker node of a multi-node engine serves no API: it is not asked, and says why
        worker_node = " runs no API server" in (view.engine.live.message or "")
        assert view.engine.live.state is (EndpointState.NOT_QUERIED if worker_node else EndpointState.OK)
    for gpu in snapshot.observation.gpus:
        if gpu.state is GpuState.OK:  # NVML v2: total = used + reserved + free, nothing negative
            assert gpu.used_bytes + gpu.reserved_bytes + gpu.free_bytes == gpu.total_bytes
            assert gpu.free_bytes >= 0


@pytest.mark.parametrize("name", HEALTHY)
def test_healthy_ranks_are_explained_within_a_gib(name: str) -> None:
    for view in collect(name).engines:
        for rank in view.ranks:
            assert abs(rank.unexplained_bytes) < GIB, (rank.gpu_index, rank.unexplained_bytes)


def test_default_node_predicts_llama70b_tp8_and_reports_what_sglang_solved() -> None:
    view = collect("default").engines[0]
    assert view.engine.engine_id == "sglang:41000"
    assert [rank.rank for rank in view.ranks] == [EngineRank(tp=tp) for tp in range(8)]
    assert view.ledger.kv_bytes_per_token == 40_960
    # from the launch command alone (SGLang 0.5.9, docs/engines/sglang.md §4-§5; tests/calibrated_figures.py): pre-load
    # = CUDA's H100 total less SGLang's TP 8 context, at the fits of da524f1c 85,027,531,983 − 2,291,809,582 =
    # 82,735,722,401 B; KV budget = pre-load − the weights − pre-load × (1 − 0.818) // 40,960 B (1,221,506 tokens there,
    # before the allocator's tails). The weights, 17,666,408,448 B: the checkpoint's 17,640,734,720, the float32 rope
    # cos/sin cache SGLang holds on every rank (8,192 positions × 128 dims × 4 B = 4,194,304) and the unused tails of
    # the segments PyTorch's caching allocator opened for them, 21,479,424 B (SGLANG_LLAMA_70B_SEGMENT_TAILS[8])
    clean = demo_llama_70b_tokens(8)
    assert view.ledger.weights_bytes == llama_70b_weights_bytes(8) == 17_666_408_448
    assert view.ledger.token_capacity == clean
    # kvtop's prediction rests on CUDA's total as the demo's NVML v2 reports it (its total less its reserve: the
    # logged start's, DEMO_H100_CUDA_TOTAL_BYTES) less SGLang's TP 8 context fit, the weights the calibrated term
    # (the book and the rope cache).
    settings = parse_launch_command(LLAMA_TP8)
    free = DEMO_H100_CUDA_TOTAL_BYTES - SGLANG_TP8_CONTEXT
    solved = calibrated_ledger(load_model("llama-3-70b"), settings, gpu_total_bytes=gpu_total_bytes("H100"),
                               measured=MeasuredInputs(free_before_load_bytes=free))  # fmt: skip
    assert solved.token_capacity == clean
    # The engine solved with what it measured, SGLANG_TP8_FREE: 83,139,829,432 − the weights 17,666,408,448 −
    # 83,139,829,432 × (1 − 0.818) 15,131,448,957 = 50,341,972,027 B // 40,960 B = 1,229,052 tokens (1,229,576 before
    # the allocator's tails); 8,070 more than predicted at the fits of da524f1c (the start left 1.76 GiB of CUDA's 79.19 taken before its weights, the
    # fit says 2.13): the gap the waterfall shows, as no cause of kvtop's explains it
    measured = calibrated_ledger(load_model("llama-3-70b"), settings, gpu_total_bytes=gpu_total_bytes("H100"),
                                 measured=MeasuredInputs(free_before_load_bytes=SGLANG_TP8_FREE))  # fmt: skip
    assert measured.token_capacity == demo_llama_70b_tokens(8, SGLANG_TP8_FREE) == 1_229_052
    assert {rank.observed.token_capacity for rank in view.ranks} == {1_229_052}
    assert {rank.capacity.change_tokens for rank in view.ranks} == {1_229_052 - clean}
    assert {tuple(term.cause for term in rank.capacity.terms) for rank in view.ranks} == {(CapacityCause.ENGINE_VS_PREDICTION,)}


def test_foreign_process_on_gpu3_shrinks_every_rank_by_the_tightest_one() -> None:
    healthy, foreign = collect("llama70b-tp8-sglang"), collect("llama70b-tp8-foreign-gpu3")
    gpu3 = foreign.observation.gpu(3)
    [(pid, role, used)] = [
        (p.pid, p.role, p.used_bytes) for p in gpu3.processes if p.role is not ProcessRole.ENGINE_WORKER
    ]
    assert (pid, role, used) == (4242, ProcessRole.CO_TENANT, 6 * GIB)
    view = foreign.engines[0]
    assert view.ranks[3].observed.foreign_bytes == 6 * GIB
    assert [r.observed.foreign_bytes for r in view.ranks].count(0) == 7
    # The calibrated prediction (weights with the rope cache) with the least free memory over the ranks (GPU 3's)
    # gives the pools kvtop explains; SGLang sized them from what it measured, SGLANG_TP8_FREE less GPU 3's 6 GiB.
    settings = parse_launch_command(LLAMA_TP8)
    total = gpu_total_bytes("H100")
    tightest = calibrated_ledger(load_model("llama-3-70b"), settings, gpu_total_bytes=total,
                                 measured=MeasuredInputs(free_before_load_bytes=DEMO_H100_CUDA_TOTAL_BYTES - SGLANG_TP8_CONTEXT - 6 * GIB))  # fmt: skip
    clean, squeezed = demo_llama_70b_tokens(8), demo_llama_70b_tokens(8, DEMO_H100_CUDA_TOTAL_BYTES - SGLANG_TP8_CONTEXT - 6 * GIB)
    assert tightest.token_capacity == squeezed  # 1,092,845 at the fits of da524f1c
    sized = calibrated_ledger(load_model("llama-3-70b"), settings, gpu_total_bytes=total,
                              measured=MeasuredInputs(free_before_load_bytes=SGLANG_TP8_FREE - 6 * GIB))  # fmt: skip
    assert sized.token_capacity == 1_100_391
    assert {rank.observed.token_capacity for rank in view.ranks} == {1_100_391}
    # 6 GiB × mfs 0.818 ÷ 40,960 B = 128,660.3 tokens; each pool is floored to whole tokens (1,229,052.05 measured
    # clean, 1,100,391.78 with the co-tenant), so the two pools are 128,661 tokens apart
    assert healthy.engines[0].ranks[0].observed.token_capacity - 1_100_391 == 128_661
    # the waterfall names the co-tenant on every rank (kvtop's own pools' floors: 1,221,506.15 and 1,092,845.87 at the
    # fits of da524f1c, before the allocator's tails, 128,661 apart), and beside it, unexplained, what SGLang sized
    # against kvtop's explained pool (8,071 there, as 1,100,916 − 1,092,845, before the tails)
    for rank in view.ranks:
        cotenant, gap = rank.capacity.terms
        assert (cotenant.cause.value, cotenant.tokens, cotenant.gpu_index, cotenant.pid) == ("other_processes", squeezed - clean, 3, 4242)
        assert (gap.cause, gap.tokens) == (CapacityCause.ENGINE_VS_PREDICTION, 1_100_391 - squeezed)
    # The prediction from the launch command is unchanged; the co-tenant explains the ~6 GiB shrink.
    assert view.ledger.token_capacity == healthy.engines[0].ledger.token_capacity == clean
    for before, after in zip(healthy.engines[0].ranks, view.ranks, strict=True):
        assert 5.9 * GIB < before.observed.process_bytes - after.observed.process_bytes < 6.1 * GIB
        # one byte view: the rank's predicted row is the explained ledger's, the pool SGLang sized from GPU 3
        assert after.predicted.token_capacity == squeezed
        assert after.predicted.kv_pool_bytes == tightest.ranks[after.gpu_index].kv_pool_bytes
        assert before.predicted.kv_pool_bytes - after.predicted.kv_pool_bytes == (clean - squeezed) * 40_960
        assert abs(after.unexplained_bytes) < GIB


def test_dsv3_dp_attention_runs_eight_engine_cores_each_with_its_own_pool() -> None:
    view = collect("dsv3-dp-attention-vllm").engines[0]
    assert view.engine.kind == "vllm" and view.ledger.layout.dp == 8 and view.ledger.layout.ep == 8
    assert [(rank.rank.dp, rank.gpu_index) for rank in view.ranks] == [(dp, dp) for dp in range(8)]
    assert len({rank.pid for rank in view.ranks}) == 8
    assert {rank.predicted.kv_bytes_per_token for rank in view.ranks} == {
        70_272
    }  # MLA latent, whole on each rank
    # the endpoint reports vLLM 0.11.0, whose default utilisation is 0.9 (0.92 only since v0.21)
    assert view.ledger.engine.memory_fraction == 0.9
    # the engines measured what real starts printed (examples/measured/starts.json): CUDA's H200 total
    # 139.81 GiB (file20903468563-deepseek-r1-h200-tp8) = 150,119,844,413 B, and a runtime of 6.50 GiB (that start's
    # activation peak 6.37 and the 0.13 GiB non-torch of a TP 1 rank on v0.11.0, llmd-v011-llama-3.1-8b) =
    # 6,979,321,856 B: ceil(0.9 × 150,119,844,413) − the weights 100,840,747,360 and the rope's cos/sin cache vLLM
    # holds beside them (yarn: 4,096 × 40 = 163,840 positions × 64 rope dims × 2 B = 20,971,520) − 6,979,321,856 =
    # 27,266,819,236 B of KV, 6,062 blocks of 64 tokens (4,497,408 B each, forced for FlashMLA on Hopper). kvtop's
    # prediction is the other figure the demo shows.
    assert view.ledger.weights_bytes == 100_840_747_360 + 163_840 * 64 * 2
    total = logged_bytes("file20903468563-deepseek-r1-h200-tp8:cuda_total")
    runtime = round((logged_gib("file20903468563-deepseek-r1-h200-tp8:activation") + logged_gib("llmd-v011-llama-3.1-8b:non_torch")) * GIB)
    budget = math.ceil(0.9 * total) - view.ledger.weights_bytes - runtime
    assert {rank.observed.token_capacity for rank in view.ranks} == {budget // 4_497_408 * 64} == {6_062 * 64}
    # kvtop predicts from CUDA's total as the demo's NVML v2 reports it (the logged total above) and its fits
    # (tests/calibrated_figures.py, vLLM V1's arithmetic by hand):
    # the profile's peak on the dummy run's 8,192 × 7,168 bf16 hidden states, 1,024 seqs × the vocabulary 129,280 of
    # float32 logits and the MoE transient of 8,192 tokens
    # (8 routed experts × (3 × 2,048 ÷ EP 8 + 7,168) + the shared expert's 3 × 2,048, × 2 B), with non-torch growth
    # and no custom all-reduce (TP 1): 6,471 blocks at the fits of da524f1c (a runtime of 4.90 GiB)
    runtime = vllm_v1_runtime_bytes(seqs=1_024, vocab=129_280, tokens=8_192, hidden=7_168,
                                    mlp_width=8 * (3 * 2_048 / 8 + 7_168) + 3 * 2_048, moe=True,
                                    all_reduce=False)  # fmt: skip
    assert view.ledger.measured.calibrated.non_kv_bytes == runtime
    predicted = math.ceil(0.9 * total) - view.ledger.weights_bytes - runtime  # CUDA's total as its NVML v2 says it
    assert view.ledger.token_capacity == predicted // 4_497_408 * 64
    assert [rank.engine_index for rank in view.engine.live.ranks] == [str(dp) for dp in range(8)]


def test_orphan_worker_holds_70_gib_next_to_a_healthy_engine() -> None:
    snapshot = collect("orphan-vllm-worker")
    [(gpu, orphan)] = snapshot.observation.processes_with_role(ProcessRole.ORPHAN)
    assert (gpu.index, orphan.pid, orphan.title, orphan.rank) == (
        1,
        2753461,
        "VLLM::Worker_TP1",
        EngineRank(tp=1),
    )
    assert orphan.used_bytes == 72_090 * MIB and orphan.engine_kind == "vllm"
    view = snapshot.engines[0]
    assert [rank.gpu_index for rank in view.ranks] == [0]
    # vLLM 0.11.0 as a real start of this shape measured (examples/measured/starts.json): utilisation 0.9
    # of CUDA's 79.19 GiB (not nvidia-smi's 79.65; llmd-v019-llama-3.3-70b-fp8dyn-tp4), less the weights and the
    # activation peak and non-torch memory Llama-3.1-8B's start on v0.11.0 printed (4.76 + 0.13 GiB,
    # llmd-v011-llama-3.1-8b), in blocks of 16 tokens: ceil(0.9 × 85,029,615,043) − 16,094,076,928 − 5,250,597,519 =
    # 55,181,979,092 B // 2,097,152 B = 26,312 blocks; the weights hold the rope's float32 cos/sin cache (131,072
    # positions × 64 dims × 4 B) beside the checkpoint
    assert view.ledger.measured.calibrated.weights_extra_bytes == 131_072 * 64 * 4
    total = logged_bytes("llmd-v019-llama-3.3-70b-fp8dyn-tp4:cuda_total")
    runtime = round((logged_gib("llmd-v011-llama-3.1-8b:activation") + logged_gib("llmd-v011-llama-3.1-8b:non_torch")) * GIB)
    budget = math.ceil(total * 0.9) - view.ledger.weights_bytes - runtime
    assert view.ranks[0].observed.token_capacity == budget // 2_097_152 * 16 == 420_992
    # kvtop predicts from CUDA's total as the demo's NVML v2 reports it (the logged total above, no longer the fit's
    # 79.18806 GiB) and its fits (tests/calibrated_figures.py, vLLM V1's arithmetic by hand):
    # the profile's peak on the dummy run's 8,192 × 4,096 bf16 hidden states, 1,024 seqs × the vocabulary 128,256 of
    # float32 logits and the dense MLP transient of 8,192 tokens ((3 × 14,336 + 4,096) × 2 B), with non-torch growth
    # and no custom all-reduce (TP 1): at the fits of da524f1c 79.18806 GiB and a runtime of 4.90 GiB, 420,896 tokens,
    # 96 fewer than the engine's
    runtime = vllm_v1_runtime_bytes(seqs=1_024, vocab=128_256, tokens=8_192, hidden=4_096, mlp_width=3 * 14_336 + 4_096,
                                    moe=False, all_reduce=False)  # fmt: skip
    assert view.ledger.measured.calibrated.non_kv_bytes == runtime
    predicted = math.ceil(total * 0.9) - view.ledger.weights_bytes - runtime  # CUDA's total as its NVML v2 says it
    assert view.ledger.token_capacity == predicted // 2_097_152 * 16


def test_gpu5_lost_names_the_state_and_the_other_gpus_keep_running() -> None:
    snapshot = collect("gpu5-lost")
    lost = snapshot.observation.gpu(5)
    assert lost.state is GpuState.LOST and "Xid 79" in lost.state_message and lost.total_bytes is None
    assert all(gpu.state is GpuState.OK for gpu in snapshot.observation.gpus if gpu.index != 5)
    assert [[rank.gpu_index for rank in view.ranks] for view in snapshot.engines] == [[0, 1, 2, 3], [6, 7]]


def test_extra_bytes_are_budgeted_around_by_the_engine() -> None:
    scenario = load_scenario("default")
    engine = scenario.engines[0].model_copy(update={"extra_bytes": {2: 2 * GIB}})
    view = DemoSource(scenario.model_copy(update={"engines": (engine,)})).collect_at(0).engines[0]
    held = [rank.observed.process_bytes for rank in view.ranks]
    assert 1.95 * GIB < held[2] - held[0] < 2.05 * GIB
    # every rank sized by GPU 2: 2 GiB × 0.818 ÷ 40,960 B = 42,886.8 tokens, each pool floored to whole tokens
    # (1,229,052.05 as measured clean, SGLANG_TP8_FREE; 1,186,165.29 with the 2 GiB): 42,887 fewer
    assert view.ranks[0].observed.token_capacity == 1_229_052 - 42_887


def test_a_tick_is_deterministic_and_values_move_between_ticks() -> None:
    source = DemoSource(load_scenario("default"))
    assert source.collect_at(7) == source.collect_at(7)
    moved = [source.collect_at(tick).engines[0].ranks[0].observed for tick in range(5)]
    assert len({o.kv_usage_fraction for o in moved}) > 1 and len({o.process_bytes for o in moved}) > 1
    assert all(0.0 <= o.kv_usage_fraction <= 1.0 for o in moved)


def test_the_clock_picks_the_tick() -> None:
    source = DemoSource(load_scenario("default"), clock=lambda: 125.5, period_s=2.0)
    assert source.tick() == 62
    assert source.collect().observation.taken_at == 125.5
    assert source.collect().engines == source.collect_at(62).engines


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data))
    return path


def default_data() -> dict:
    return json.loads((scenario_dir() / "llama70b-tp8-sglang.json").read_text())


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (lambda d: d["engines"][0].update(gpus="all"), "engines[0].gpus", "tuple"),
        (
            lambda d: d.update(foreign_processes=[{"gpu": 3, "pid": 4242, "used": "6 potatoes"}]),
            "foreign_processes[0].used",
            "not a size",
        ),
        (lambda d: d["gpu"].pop("count"), "gpu.count", "required"),
        (lambda d: d["engines"][0].update(kv_usage=1.5), "engines[0].kv_usage", "less than or equal to 1"),
        (lambda d: d.update(colour="blue"), "colour", "not permitted"),
        (
            lambda d: d.update(orphans=[{"gpu": 1, "pid": 9, "title": "python3", "used": "1GiB"}]),
            "orphans[0].title",
            "VLLM::",
        ),
    ],
)
def test_a_bad_scenario_file_names_the_field_and_the_file(
    tmp_path: Path, change, field: str, words: str
) -> None:
    data = default_data()
    change(data)
    path = write(tmp_path, data)
    with pytest.raises(InputError) as caught:
        load_scenario(str(path))
    assert caught.value.field == field and caught.value.source == str(path)
    assert words in str(caught.value) and str(path) in str(caught.value)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d["engines"][0].update(command="python3 train.py --tp 8"), "engines[0].command"),
        (lambda d: d["engines"][0].update(model="llama-9"), "engines[0].model"),
        (lambda d: d["engines"][0].update(gpus=[0, 1, 2]), "engines[0].gpus"),
        (lambda d: d["engines"][0].update(gpus=[0, 1, 2, 3, 4, 5, 6, 8]), "engines[0].gpus"),
        (lambda d: d["gpu"].update(model="H900"), "gpu.model"),
        (lambda d: d.update(lost_gpus=[{"gpu": 8}]), "lost_gpus[0].gpu"),
    ],
)
def test_a_scenario_the_node_cannot_run_names_the_field(tmp_path: Path, change, field: str) -> None:
    data = default_data()
    change(data)
    path = write(tmp_path, data)
    with pytest.raises(InputError) as caught:
        DemoSource.open(str(path))
    assert caught.value.field == field and caught.value.source == str(path)


def test_malformed_json_says_where(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"gpu": {"model": "H100",, "count": 8}}')
    with pytest.raises(InputError, match="line 1, column 26"):
        load_scenario(str(path))


def test_an_unknown_scenario_name_lists_the_names() -> None:
    with pytest.raises(InputError, match="orphan-vllm-worker") as caught:
        load_scenario("no-such-node")
    assert caught.value.field == "--demo"


def test_sizes_may_be_text_or_bytes() -> None:
    scenario = parse_scenario({"gpu": {"model": "H100", "count": 1, "reserved": 344981504}, "noise": "4MiB"})
    assert (scenario.gpu.reserved, scenario.noise) == (329 * MIB, 4 * MIB)


def test_a_co_tenant_that_came_after_the_engine_leaves_the_other_ranks_fully_explained(tmp_path) -> None:
    """With the co-tenant started after start-up, no rank reads unexplained bytes: the driver's reserved
    bytes (NVML counts them apart from every process) are nobody's shortfall."""
    examples = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
    scenario = json.loads((examples / "llama70b-tp8-foreign-gpu3.json").read_text())
    for process in scenario["foreign_processes"]:
        process["started_before_engines"] = False
    path = tmp_path / "late-co-tenant.json"
    path.write_text(json.dumps(scenario))
    view = DemoSource.open(str(path)).collect_at(0).engines[0]
    assert {rank.unexplained_bytes for rank in view.ranks} == {0}  # was 0.33 GiB on the seven others


def test_a_node_of_a_two_node_engine_runs_that_nodes_ranks() -> None:
    """SGLang's `_calculate_rank_ranges` for TP16 over 2 nodes gives node rank 1 the TP ranks 8–15, on its
    GPUs 0–7 (gpu_id = base_gpu_id + tp_rank % tp_size_per_node); node rank 1 runs no HTTP API."""
    snapshot = DemoSource.open("dsv3-tp16-sglang-node1").collect_at(0)
    (view,) = snapshot.engines
    assert [(r.rank.tp, r.gpu_index) for r in view.ranks] == [(8 + gpu, gpu) for gpu in range(8)]
    assert view.ledger is not None and view.ledger.layout.tp == 16
    assert view.engine.live.message == "node rank 1 of 2 runs no API server: the engine's is on node rank 0"


def test_a_node_with_gpus_for_the_wrong_share_of_a_multi_node_engine_is_refused() -> None:
    data = json.loads((scenario_dir() / "dsv3-tp16-sglang-node1.json").read_text())
    data["engines"][0]["gpus"] = [0, 1, 2, 3]
    with pytest.raises(InputError) as error:
        DemoSource(parse_scenario(data))
    assert error.value.field == "engines[0].gpus" and "runs 8 ranks here" in str(error.value)


def test_lmdeploy_workers_are_the_explained_ledgers_less_the_driver_reserved() -> None:
    """One byte view (issue 29): a 4 GiB notebook started first on GPU 1 shrinks every TurboMind rank by
    LMDeploy's own arithmetic, not by the notebook's bytes: v0.10 sizes blocks as int(min free after weights ×
    0.9) // block bytes (docs/engines/lmdeploy.md §2.2), so 0.9 × 4 GiB = 3,865,470,566 B = 1,429.9 blocks of
    2,703,360 B (64 tokens × 42,240 B: 80 layers × K,V × 2 KV heads × (128 int8 + 4 B fp16 scale+zero)), 1,430
    whole blocks once each side is truncated. Its free memory
    is cudaMemGetInfo's (CUDA's total less the context): the driver's reserved bytes, which NVML counts in no
    process, are the rank's own figure (the GPU's total less CUDA's, NVML v2's), never in the worker's context.
    Before: the clean worker less the notebook's whole 4 GiB, 0.43 GiB of reserved left in."""
    view = collect("llama70b-tp4-lmdeploy").engines[0]
    assert view.engine.kind == "lmdeploy" and view.ledger.settings.cache_max_entry_count == 0.9
    clean = view.ledger.ranks[0]
    clean_resident = clean.weights_bytes + clean.kv_pool_bytes + clean.reserve_bytes + clean.context_bytes
    for rank in view.ranks:
        reserved = rank.observed.gpu_reserved_bytes
        assert clean.kv_pool_bytes - rank.predicted.kv_pool_bytes == 1_430 * 64 * 42_240
        assert rank.predicted.driver_reserved_bytes == clean.driver_reserved_bytes == reserved
        assert rank.worker_prediction.worker_bytes == clean_resident - 1_430 * 64 * 42_240
    # What the workers hold is what LMDeploy sized from what it measured (examples/measured/starts.json):
    # CUDA's A100 total 79.15 GiB (file12686617020-a100-80gb-oom) less a TP 4 group's 1.55 GiB before the weights
    # (79.19 − 77.64, llmd-v019-llama-3.3-70b-fp8dyn-tp4) and the notebook's 4 GiB, the context in the worker
    context = round((logged_gib("llmd-v019-llama-3.3-70b-fp8dyn-tp4:cuda_total") - logged_gib("llmd-v019-llama-3.3-70b-fp8dyn-tp4:free_before_load")) * GIB)
    free = logged_bytes("file12686617020-a100-80gb-oom:cuda_total") - context - 4 * GIB
    sized = calibrated_ledger(view.ledger.model, view.ledger.settings, gpu_total_bytes=view.ledger.gpu_total_bytes,
                              measured=MeasuredInputs(free_before_load_bytes=free)).ranks[0]  # fmt: skip
    held = sized.weights_bytes + sized.resident_terms_bytes + sized.kv_pool_bytes + sized.reserve_bytes + context
    # 0.70 GiB less context than kvtop assumed (2.25 GiB): 250 blocks more of 2,703,360 B (0.9 × 0.70 GiB)
    assert sized.kv_pool_bytes - view.ranks[0].predicted.kv_pool_bytes == 250 * 64 * 42_240
    for rank in view.ranks:
        assert abs(rank.observed.process_bytes - held) < 32 << 20  # the demo's noise
