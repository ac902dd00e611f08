"""The demo scenario `modern-deployment` (issue 30): every deployment term shows in the ledger, the
waterfall, the rank ledger and the pressure line, and the preempting engine gets its finding."""

from __future__ import annotations

import pytest

from kvtop.commands.node_source import DemoSource
from kvtop.domain.capacity import CapacityCause
from kvtop.domain.deployment import Basis, Charge, Feature
from kvtop.domain.diagnose import diagnose
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.pressure import pressure_of
from kvtop.sources.scenario import load_scenario
from kvtop.ui.ledger_rows import rank_ledger

TICK = 600  # ten minutes in: the counters have a minute of history


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
    assert [t.cause for t in waterfall.terms] == [CapacityCause.SPECULATIVE, CapacityCause.EXPERT_PARALLEL]
    assert waterfall.clean_tokens + sum(t.tokens for t in waterfall.terms) == waterfall.actual_tokens


def test_vllm_engine_shows_lora_ngram_and_offloading(snapshot: NodeSnapshot) -> None:
    view = _view(snapshot, "vllm")
    assert view.ledger is not None
    features = {t.feature for t in view.ledger.terms}
    assert features == {Feature.SPECULATIVE, Feature.LORA}
    host = view.ledger.host_tier
    assert host is not None and host.connector == "OffloadingConnector"
    assert host.bytes_per_rank == (200 << 30) // 4  # --kv-offloading-size 200 over TP4
    waterfall = view.ranks[0].capacity
    assert waterfall is not None and [t.cause for t in waterfall.terms] == [CapacityCause.LORA]


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
    assert weights.predicted_bytes + sum(r.predicted_bytes or 0 for r in items) == worker.predicted_bytes


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
    # the scenario's 2 TiB less what both host tiers pin (HiCache 4 ranks, offloading 200 GiB) and 5% for the OS
    pinned = sum(v.ledger.host_tier.total_bytes for v in snapshot.engines if v.ledger and v.ledger.host_tier)
    assert host.available_bytes == (2 << 40) - pinned - (2 << 40) // 20
    assert not [f for f in diagnose(snapshot) if f.rule == "host_tier_would_not_fit"]


def test_hicache_that_would_not_start_again_is_critical() -> None:
    scenario = load_scenario("modern-deployment").model_copy(update={"host_memory": 260 << 30})
    small = DemoSource(scenario).collect_at(TICK)
    host = small.observation.host_memory
    assert host is not None and host.available_bytes < 10 << 30  # HostKVCache keeps 10 GiB free
    (finding,) = [f for f in diagnose(small) if f.rule == "host_tier_would_not_fit"]
    assert finding.engine_id == "sglang:43000" and finding.severity == "critical"
