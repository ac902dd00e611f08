"""Engines across nodes, read back through Prometheus: each node's `kvtop export` page (the demo scenarios
of examples/scenarios, rendered by the exporter itself), scraped by the fake server, joined by the reader.

The expected figures come from each node's own snapshot (its domain waterfall and its engine's live
figures, computed on that node alone), never from the join under test; the disaggregated finding's
arithmetic is written out here.
"""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from kvtop.commands.node_source import DemoSource
from kvtop.domain.calibration.estimate import calibrated_ledger
from kvtop.domain.capacity import CapacityCause, CapacitySource
from kvtop.domain.cluster import ClusterView
from kvtop.domain.cluster_engines import JoinedEngine
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.span import ServingRole
from kvtop.sources.exporter import SnapshotCollector
from kvtop.sources.prometheus import ClusterReader, PrometheusClient
from tests.corpus_records import GIB, logged_bytes
from tests.sources.fake_prometheus import NOW, FakePrometheus, Target

URL = "http://prometheus.test:9090"
TICK = 1_750_000_000.0


def snapshot_and_page(scenario: str, node: str) -> tuple[NodeSnapshot, str]:
    source = DemoSource.open(scenario, clock=lambda: TICK)
    collector = SnapshotCollector(source, node=node, clock=lambda: NOW)
    collector.refresh()
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return source.collect(), generate_latest(registry).decode()


def read(pages: dict[str, str]) -> ClusterView:
    targets = [Target("kvtop", f"10.0.9.{i}:9401", page) for i, page in enumerate(pages.values())]
    client = PrometheusClient(URL, transport=FakePrometheus(targets).transport())
    return ClusterReader(client, clock=lambda: NOW).read()


@pytest.fixture(scope="module")
def dsv3() -> tuple[NodeSnapshot, NodeSnapshot, ClusterView]:
    head, head_page = snapshot_and_page("dsv3-tp16-sglang-node0", "h20-a")
    other, other_page = snapshot_and_page("dsv3-tp16-sglang-node1", "h20-b")
    return head, other, read({"h20-a": head_page, "h20-b": other_page})


def only(view: ClusterView) -> JoinedEngine:
    (engine,) = view.engines
    return engine


def test_a_tp16_sglang_engine_on_two_nodes_is_one_engine(dsv3: tuple[NodeSnapshot, NodeSnapshot, ClusterView]) -> None:
    _, _, view = dsv3
    engine = only(view)
    assert engine.nodes == ("h20-a", "h20-b") and engine.pieces[0].layout == "TP16"
    assert [(p.ranks_label, p.ranks_here, p.span.serves_api) for p in engine.pieces] == [
        ("TP0–TP7", 8, True), ("TP8–TP15", 8, False),
    ]  # fmt: skip
    assert engine.span.rendezvous == "10.0.1.10:5000" and engine.missing_node_ranks == ()


def test_the_tightest_rank_is_named_with_its_node_and_its_cause_explains_the_other_nodes_loss(
    dsv3: tuple[NodeSnapshot, NodeSnapshot, ClusterView],
) -> None:
    """Node 0 alone cannot explain why its ranks hold fewer tokens (its own waterfall says "unexplained");
    node 1 holds the co-tenant that SGLang's world-wide least-free sizing spread to every rank."""
    head, other, view = dsv3
    engine = only(view)
    head_fall = head.engines[0].ranks[0].capacity
    other_fall = next(r for r in other.engines[0].ranks if r.gpu_index == 3).capacity
    assert head_fall is not None and other_fall is not None
    lost = head_fall.term(CapacityCause.ENGINE_VS_PREDICTION)
    assert lost is not None and lost.tokens < 0  # what node 0's exporter could not explain
    co_tenant = other_fall.term(CapacityCause.OTHER_PROCESSES)
    assert co_tenant is not None and co_tenant.gpu_index == 3 and co_tenant.pid == 4242
    tightest = engine.tightest
    assert tightest is not None and (tightest.node, tightest.gpu, tightest.clear) == ("h20-b", "3", True)
    assert engine.clean_tokens == other_fall.clean_tokens
    assert engine.actual == (head.engines[0].engine.live.token_capacity, CapacitySource.SIMULATED)  # a demo's
    # What SGLang measured (examples/measured/starts.json): 93.56 GiB free before its weights, as a TP 8
    # start on an H20 printed it (file54684172587-dsv4-flash-h20-tp8), less node 1's 6 GiB: 482,413 tokens a rank;
    # 557,773 without the co-tenant, above kvtop's prediction by a gap no cause names. Both 2,851 tokens (of 70,272 B)
    # under the 485,264 and 560,624 before SGLang's weights counted the unused tails of the segments PyTorch's caching
    # allocator opens (c10/cuda/CUDACachingAllocator.cpp), 200,361,024 B a rank: of them by hand, 61 tensors of
    # 10.5 MiB in 12 MiB segments (61 × 1,572,864), the embedding and LM head shards, 129,280 × 7,168 × 2 B ÷ 16 =
    # 110.47 MiB, in 112 MiB ones (2 × 1,605,632) and 3 of 15.75 MiB in 16 MiB ones (3 × 262,144): 99,942,400 B; the
    # rest, 100,418,624 B, the 1–10 MiB tensors sharing 20 MiB segments and the small ones' 2 MiB segments, is
    # kvtop's replay of the allocator (torch_segments.reserved_bytes), not worked by hand here. Since session 52
    # SGLang also holds MLA's w_kc and w_vc, copied from kv_b_proj at the load (engines/sglang/mla_split.py,
    # models/deepseek_v2.py post_load_weights): by hand, 61 layers × 2 copies × 8 heads (128 ÷ TP 16) × 128 × 512 × 2 B
    # (bf16) = 127,926,272 B a rank, 1,820.4 cells of 70,272 B: 480,592 and 555,952 tokens, 1,821 fewer each
    ledger = head.engines[0].ledger
    assert ledger is not None
    free = logged_bytes("file54684172587-dsv4-flash-h20-tp8:free_before_load")

    def sized(free_before_load: int) -> int:
        measured = MeasuredInputs(free_before_load_bytes=free_before_load)
        return calibrated_ledger(ledger.model, ledger.settings, gpu_total_bytes=ledger.gpu_total_bytes,
                                 gpu_name=ledger.gpu_name, measured=measured).token_capacity  # fmt: skip

    assert engine.actual[0] == sized(free - 6 * GIB) == 480_592 and sized(free) == 555_952
    gap = sized(free) - engine.clean_tokens
    assert [(t.cause, t.tokens, t.node, t.gpu) for t in engine.terms] == [
        (CapacityCause.OTHER_PROCESSES, co_tenant.tokens, "h20-b", "3"), (CapacityCause.ENGINE_VS_PREDICTION, gap, None, None)
    ]
    assert co_tenant.tokens == sized(free - 6 * GIB) - sized(free)
    assert engine.clean_tokens + sum(t.tokens for t in engine.terms) == engine.actual[0]
    assert co_tenant.tokens + gap == lost.tokens  # the same loss, now with its cause and node, and the gap


def test_a_node_whose_exporter_is_missing_is_named(dsv3: tuple[NodeSnapshot, NodeSnapshot, ClusterView]) -> None:
    _, page = snapshot_and_page("dsv3-tp16-sglang-node0", "h20-a")
    engine = only(read({"h20-a": page}))
    assert engine.missing_node_ranks == (1,)


def test_a_pp2_vllm_engine_over_two_nodes() -> None:
    head, head_page = snapshot_and_page("llama70b-pp2-vllm-node0", "pp-a")
    other, other_page = snapshot_and_page("llama70b-pp2-vllm-node1", "pp-b")
    engine = only(read({"pp-a": head_page, "pp-b": other_page}))
    assert [p.ranks_label for p in engine.pieces] == ["PP0 TP0–TP7", "PP1 TP0–TP7"]
    assert engine.pieces[0].layout == "TP8 PP2"
    # the headless node serves no API: the engine's figure is the head's, which every stage shares
    assert other.engines[0].engine.live.token_capacity is None
    assert engine.actual == (head.engines[0].engine.live.token_capacity, CapacitySource.SIMULATED)  # a demo's
    explained = {p.node: p.explained_tokens for p in engine.pieces}
    assert engine.tightest is not None and engine.tightest.tokens == min(explained.values())


def test_a_dynamo_style_prefill_decode_pair_and_its_decode_finding() -> None:
    prefill, prefill_page = snapshot_and_page("llama70b-dynamo-prefill", "pd-prefill")
    decode, decode_page = snapshot_and_page("llama70b-dynamo-decode", "pd-decode")
    view = read({"pd-prefill": prefill_page, "pd-decode": decode_page})
    assert {e.span.role for e in view.engines} == {ServingRole.PREFILL, ServingRole.DECODE}
    (group,) = view.disaggregated
    assert (group.served_model, group.transfer) == ("llama-3-70b", ("NIXL",))
    context = 32768  # --context-length of both launches
    decode_tokens = decode.engines[0].engine.live.token_capacity
    prefill_tokens = prefill.engines[0].engine.live.token_capacity
    assert decode_tokens is not None and prefill_tokens is not None
    finding = group.finding
    assert finding is not None
    assert finding.decode_requests == pytest.approx(decode_tokens / context)
    assert finding.prefill_requests == pytest.approx(prefill_tokens / context)
    assert finding.tokens_short == int((prefill_tokens / context - decode_tokens / context) * context)
    assert "decode limits concurrency" in finding.message


def test_one_node_engines_of_different_nodes_stay_apart() -> None:
    _, a = snapshot_and_page("llama70b-tp8-sglang", "node-a")
    _, b = snapshot_and_page("llama70b-tp8-sglang", "node-b")
    view = read({"node-a": a, "node-b": b})
    assert sorted(e.nodes for e in view.engines) == [("node-a",), ("node-b",)]
    assert view.disaggregated == ()
