"""The demo scenario `modern-deployment` (issue 30): every deployment term shows in the ledger, the
waterfall, the rank ledger and the pressure line, and the preempting engine gets its finding."""

from __future__ import annotations

import pytest

from kvtop.commands.node_source import DemoSource
from kvtop.domain.calibration.estimate import calibrated_ledger
from kvtop.domain.capacity import CapacityCause
from kvtop.domain.deployment import Basis, Charge, Feature
from kvtop.domain.diagnose import diagnose
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.pressure import pressure_of
from kvtop.domain.wording import GIB
from kvtop.sources.demo_plan import NodePlan
from kvtop.sources.hub import load_model
from kvtop.sources.scenario import load_scenario
from kvtop.ui.ledger_rows import rank_ledger
from tests.calibrated_figures import (
    LLAMA_70B_CHECKPOINT_BYTES,
    sglang_context_bytes,
    vllm_tokens,
    vllm_v21_runtime_bytes,
)
from tests.corpus_records import logged_bytes, logged_gib

TICK = 600  # ten minutes in: the counters have a minute of history
MIB = 1 << 20
# What the node's engines measured (examples/measured/starts.json), from the corpus: CUDA's H200 total
# 139.81 GiB (file20903468563-deepseek-r1-h200-tp8); a TP 4 group's 1.55 GiB before the weights (79.19 − 77.64 GiB,
# and vLLM's runtime 1.97 + 2.21 + 1.70 GiB: activation, non-torch, CUDA graphs; all of llmd-v019's Llama-3.3-70B at
# TP 4 on H100), its non-torch moved to the node's v0.33.0: v0.19.0's FlashInfer fusion workspace, three buffers at the
# 512 MiB multicast granularity, out, and v0.33.0's, mnnvl's one McastGPUBuffer (3 × 4 MiB: 128 tokens × hidden
# 8,192 at TP 4) at the same 512 MiB granularity, in
TP4 = "llmd-v019-llama-3.3-70b-fp8dyn-tp4"
H200_TOTAL = logged_bytes("file20903468563-deepseek-r1-h200-tp8:cuda_total")
TP4_CONTEXT = round((logged_gib(f"{TP4}:cuda_total") - logged_gib(f"{TP4}:free_before_load")) * GIB)
VLLM_RUNTIME = (
    round(sum(logged_gib(f"{TP4}:{term}") for term in ("activation", "non_torch", "cuda_graphs")) * GIB)
    - 3 * 512 * MIB + 512 * MIB
)


@pytest.fixture(scope="module")
def snapshot() -> NodeSnapshot:
    return DemoSource(load_scenario("modern-deployment")).collect_at(TICK)


def _view(snapshot: NodeSnapshot, kind: str):  # type: ignore[no-untyped-def]
    return next(view for view in snapshot.engines if view.engine.kind == kind)


def test_sglang_engine_shows_its_draft_experts_deepep_and_hicache(snapshot: NodeSnapshot) -> None:
    view = _view(snapshot, "sglang")
    assert view.ledger is not None
    terms = {(t.feature, t.charge): t for t in view.ledger.terms}
    draft = terms[(Feature.SPECULATIVE, Charge.RESIDENT)]
    assert draft.basis is Basis.COMPUTED and draft.bytes > 0  # the EAGLE-3 head as SGLang builds it (eagle3.py)
    assert terms[(Feature.SPECULATIVE, Charge.KV_CELL)].bytes_per_token == 512  # 1 KV head × 128 × 2 × bf16
    # 8 redundant experts over EP4: 2 more per rank of 94 MoE layers × 3 matrices of 1536 × 4096, bf16
    assert terms[(Feature.EXPERT_PARALLEL, Charge.RESIDENT)].bytes == 2 * 94 * 3 * 1536 * 4096 * 2
    assert terms[(Feature.EXPERT_PARALLEL, Charge.RESERVE)].bytes == 2048 << 20  # SGLang 0.5.23's DeepEP reserve
    host = view.ledger.host_tier
    assert host is not None and host.connector == "HiCache"
    waterfall = view.ranks[0].capacity
    assert waterfall is not None
    causes = [CapacityCause.SPECULATIVE, CapacityCause.EXPERT_PARALLEL, CapacityCause.ENGINE_VS_PREDICTION]
    assert [t.cause for t in waterfall.terms] == causes
    assert waterfall.clean_tokens + sum(t.tokens for t in waterfall.terms) == waterfall.actual_tokens
    # SGLang sized its pool from what it measured, H200_TOTAL − TP4_CONTEXT free before its weights; kvtop's clean
    # prediction is the same rule from its own pre-load: CUDA's total as the demo's NVML v2 reports it (its total less
    # its reserve, `gpu_total_origin.engine_visible_total`: the logged H200_TOTAL, no longer the fit's) less SGLang's TP 4 context
    # fit (tests/calibrated_figures.py; at the fits of da524f1c and the fitted total 117,647 tokens): the gap, the
    # context measured against the fit, is the waterfall's unexplained term
    draft = load_model("qwen3-235b-a22b-eagle3")

    def solved(free: int) -> int:
        return calibrated_ledger(view.ledger.model, view.ledger.settings, gpu_total_bytes=gpu_total_bytes("H200"),
                                 gpu_name="NVIDIA H200", measured=MeasuredInputs(free_before_load_bytes=free),
                                 draft=draft).token_capacity  # fmt: skip

    # at a share of 0.883, 116,376 tokens (116,440 before SGLang's weights counted the unused tails of the segments PyTorch's caching
    # allocator opens, c10/cuda/CUDACachingAllocator.cpp, by hand: the embedding and LM head shards, 151,936 × 4,096
    # × 2 B ÷ 4 = 296.75 MiB each, in 298 MiB segments, 2 × 1,310,720 B; the small tensors, 94 routers of 128 × 4,096
    # × 2 B and the norms (94 × (2 × 8,192 + 2 × 256) + 8,192 B), 100,162,560 B in 48 segments of 2 MiB, 500,736 B:
    # 3,122,176 B, 64.2 cells of 48,640 B; every other matrix and the 20 MiB rope cache are whole 2 MiB multiples)
    # SGLang 0.5.23 keeps 1 GiB more where its breakable prefill graphs run beside DeepEP (memory_hook.py:391-397),
    # before the 10 GiB floor: the reserve 512 + 1.5 × 8,192 + 4 ÷ 8 × 1,024 + 2 × 512 decode graphs + 8 × 58 prefill
    # sizes = 14,800 MiB, + 1,024 = 15,824 (above the floor), + 2,048 DeepEP = 17,872 MiB (16,848 without it), of the
    # H200's 143,771 MiB: round(125,899 ÷ 143,771, 3) = 0.876 (0.883). The pool loses 0.007 × the pre-load,
    # 0.007 × 148,455,544,586 B = 1,039,188,812 B, 21,364.90 cells of 48,640 B: 116,376 − 21,364.90 = 95,011.10, and
    # 116,376's own remainder (under a cell) floors it to 95,011 or 95,012
    before, lost_cells = 116_376, 0.007 * (H200_TOTAL - TP4_CONTEXT) / 48_640
    assert round(lost_cells, 2) == 21_364.90
    sized = solved(H200_TOTAL - TP4_CONTEXT)
    assert int(before - lost_cells) <= sized <= int(before - lost_cells) + 1
    assert waterfall.actual_tokens == sized == 95_011
    predicted = solved(H200_TOTAL - sglang_context_bytes(4))
    assert view.ledger.token_capacity == predicted
    assert waterfall.terms[-1].tokens == 95_011 - predicted


def test_vllm_engine_shows_lora_ngram_and_offloading(snapshot: NodeSnapshot) -> None:
    view = _view(snapshot, "vllm")
    assert view.ledger is not None
    features = {t.feature for t in view.ledger.terms}
    assert features == {Feature.SPECULATIVE, Feature.LORA}
    host = view.ledger.host_tier
    assert host is not None and host.connector == "OffloadingConnector"
    assert host.bytes_per_rank == (200 << 30) // 4  # --kv-offloading-size 200 over TP4
    waterfall = view.ranks[0].capacity
    # the n-gram drafter's 4 tokens add v0.29.0's uniform decode sizes n × 5 (5, 10, 20, 280 … 480 beside the default
    # ones: 57 capture sizes, graph_keys.SPEC_DECODE_SIZES, config/vllm.py:2030-2091), so speculative decoding costs
    # the graphs of six more sizes (session 61); since session 69 what stands beside V2's profile is the cold compile's
    # copy of the embedding table (compile_benchmark.py), not the V1 graph figure on those sizes, and V2's own form
    # counts the PIECEWISE graphs as one capture (v2_graphs.V2_PIECEWISE_UNCOUNTED): kvtop charges the drafter's sizes
    # nothing, though V2 captures and measures a PIECEWISE graph at each of the six (cudagraph_utils.py:416-431 at
    # v0.30.0): that part of its estimate is not modelled, in the term's error (its FULL keys stay 51 either way)
    causes = [CapacityCause.LORA, CapacityCause.ENGINE_VS_PREDICTION]
    assert waterfall is not None and [t.cause for t in waterfall.terms] == causes
    # vLLM sized its share of the CUDA total it measured, less its measured runtime
    measured = MeasuredInputs(gpu_total_bytes=H200_TOTAL, free_before_load_bytes=H200_TOTAL - TP4_CONTEXT,
                              non_kv_bytes=VLLM_RUNTIME)  # fmt: skip
    sized = calibrated_ledger(view.ledger.model, view.ledger.settings, gpu_total_bytes=H200_TOTAL,
                              gpu_name="NVIDIA H200", measured=measured)  # fmt: skip
    # by hand: ceil(150,119,844,413 × 0.92) = 138,110,256,860 B, less the weights 35,283,025,920, the LoRA slots
    # 3,418,357,760 and the runtime 5,239,860,101 (5.88 GiB − 1,536 MiB + 512 MiB): 94,169,013,079 B ÷ 1,310,720 B a
    # block of 16 = 71,845 blocks, 1,149,520 tokens (with v0.19.0's workspace in the runtime it was 1,136,416; with
    # trtllm's 38 MiB, before session 65 read v0.33.0's mnnvl default, 1,155,584)
    assert VLLM_RUNTIME == 5_239_860_101
    assert waterfall.actual_tokens == sized.token_capacity == 1_149_520
    # kvtop's clean prediction is the same rule on the fits (tests/calibrated_figures.py, by hand; 1,156,800 tokens at
    # the fits of 92ecbd45 and the fitted total): CUDA's total as the demo's NVML v2 reports it (H200_TOTAL, its total
    # less its reserve, as on a live node), vllm serve's defaults on a GPU of 70 GiB and more (1,024 seqs, 8,192
    # tokens; the dummy run's hidden states 8,192 × 8,192 bf16), Llama-3-70B's MLP at TP 4 (3 × 28,672 ÷ 4 + 8,192
    # wide, dense), the custom all-reduce on (NVLink), FlashInfer's fusion workspace at v0.33.0 (mnnvl's 512 MiB,
    # fusion_workspace.py) and the CUDA-graph estimate on 57 PIECEWISE + 51 FULL graphs (the first capture and 56 + 50
    # beyond each mode's first × 80 layers ÷ 1000; the 51 default sizes to 512 and six of the n-gram's n × 5 not among
    # them, the FULL decode keys those sizes rounded up to multiples of 5, 51) for what V2's profile holds beside its peak, with V2's own measured
    # graphs beside it (every PIECEWISE graph measured, FULL alone extrapolated: the first capture and 50 beyond it × 80
    # ÷ 1000; v2_graphs.py, since
    # 3ea961bd: this line charged the V1 figure twice before, 1,126,592 tokens at the fits of a7014c84). Since session 69
    # the memory beside V2's profile is the cold compile's copy of the rank's embedding table, 128,256 ÷ 4 × 8,192 × 2 B
    # = 525,336,576 B (compile_benchmark.py), charged whole: with LoRA V2's peak is not counted, so nothing hides it
    # (v2_graphs.profile_peak), as the V1 figure was before (graph_nodes 0, the copy added). The LoRA slots by hand: 4 slots × 80 layers × rank 64 × the A and B widths a TP 4
    # rank holds, q 8,192 + 2,048, k and v 8,192 + 256 each, o 2,048 + 8,192, gate and up 8,192 + 7,168 each, down
    # 7,168 + 8,192 (83,456) × 2 B
    lora = 4 * 80 * 64 * 83_456 * 2
    assert lora == 3_418_357_760
    runtime = vllm_v21_runtime_bytes(seqs=1_024, vocab=128_256, tokens=8_192, hidden=8_192,
                                     mlp_width=3 * 28_672 / 4 + 8_192, moe=False, all_reduce=True, workspace=512 * MIB,
                                     graph_nodes=0.0, v2_beside=True,
                                     v2_graph_nodes=(1 + 50) * 80 / 1000) + 128_256 // 4 * 8_192 * 2  # fmt: skip
    # the weights as the by-hand line above counts them (35,283,025,920 B): the rank's bf16 checkpoint and 4 MiB beside it
    weights = LLAMA_70B_CHECKPOINT_BYTES[4] + 4 * MIB
    predicted = vllm_tokens(total=H200_TOTAL, weights=weights + lora, runtime=runtime,
                            block_bytes=1_310_720, block_tokens=16, util=0.92)  # fmt: skip
    assert view.ledger.token_capacity == predicted
    # what is left is the runtime vLLM measured against kvtop's fits (CUDA's total is the same measured 139.81 GiB)
    assert waterfall.terms[-1].tokens == 1_149_520 - predicted


def test_the_rank_ledger_lists_the_resident_terms_and_still_adds_up(snapshot: NodeSnapshot) -> None:
    view = _view(snapshot, "vllm")
    ledger = rank_ledger(snapshot, view.ranks[0].gpu_index)
    assert ledger is not None
    labels = [row.label for row in ledger.rows]
    assert "LoRA slots: 4 × rank 64" in labels
    worker = next(row for row in ledger.rows if row.label.startswith("= worker"))
    parts = ledger.rows[: ledger.rows.index(worker)]
    items = [r for r in parts if r.kind == "item" and not r.label.startswith("weights ·")]
    weights = next(r for r in parts if r.label == "weights")
    assert (weights.predicted_bytes or 0) + sum(r.predicted_bytes or 0 for r in items) == worker.predicted_bytes


def test_pressure_and_its_finding(snapshot: NodeSnapshot) -> None:
    vllm = pressure_of(_view(snapshot, "vllm").engine.live)
    assert vllm is not None and vllm.preemptions_per_min == pytest.approx(14.0, abs=1.0) and vllm.pool_full
    sglang = pressure_of(_view(snapshot, "sglang").engine.live)
    assert sglang is not None and sglang.spec_acceptance == 0.68 and not sglang.preempting
    findings = [f for f in diagnose(snapshot) if f.rule == "preempting_with_room"]
    assert len(findings) == 1 and findings[0].engine_id == "vllm:53000"
    assert findings[0].gain_tokens > 0 and findings[0].fix.startswith("--gpu-memory-utilization 0.")


def test_host_memory_beside_the_host_tiers(snapshot: NodeSnapshot) -> None:
    host = snapshot.observation.host_memory
    assert host is not None and host.total_bytes == 2 << 40
    # the scenario's 2 TiB less what both host tiers pin as the engines sized them (HiCache: --hicache-ratio 2 × the
    # pool SGLang sized on 4 ranks, 95,011 tokens each, not kvtop's clean prediction; offloading 200 GiB) and 5% for the OS
    engines = NodePlan(load_scenario("modern-deployment"), "test", opened_at=0).engines
    tiers = [engine.truth.host_tier for engine in engines if engine.truth.host_tier is not None]
    assert [tier.connector for tier in tiers] == ["HiCache", "OffloadingConnector"]
    predicted = _view(snapshot, "sglang").ledger
    assert tiers[0].bytes_per_rank // 95_011 == predicted.host_tier.bytes_per_rank // predicted.token_capacity
    assert tiers[1].total_bytes == 200 << 30
    pinned = sum(tier.total_bytes for tier in tiers)
    assert host.available_bytes == (2 << 40) - pinned - (2 << 40) // 20
    assert not [f for f in diagnose(snapshot) if f.rule == "host_tier_would_not_fit"]


def test_hicache_that_would_not_start_again_is_critical() -> None:
    # by hand: HiCache pins 4 ranks × (2 × 95,011 + 1 page) tokens × 48,128 B (94 layers × 1 KV head × 128 × 2 × bf16)
    # = 36,581,707,776 B, offloading 200 GiB: of 256 GiB less 5 % for the OS, 9,803,939,021 B stay available (was 260 GiB
    # before SGLang's 1 GiB breakable-DeepEP reserve shrank the pool and its host tier)
    hicache = 4 * (2 * 95_011 + 1) * 48_128
    assert hicache == 36_581_707_776
    scenario = load_scenario("modern-deployment").model_copy(update={"host_memory": 256 << 30})
    small = DemoSource(scenario).collect_at(TICK)
    host = small.observation.host_memory
    assert host is not None and host.available_bytes == (256 << 30) - hicache - (200 << 30) - (256 << 30) // 20
    assert host.available_bytes == 9_803_939_021 < 10 << 30  # HostKVCache keeps 10 GiB free
    (finding,) = [f for f in diagnose(small) if f.rule == "host_tier_would_not_fit"]
    assert finding.engine_id == "sglang:43000" and finding.severity == "critical"
