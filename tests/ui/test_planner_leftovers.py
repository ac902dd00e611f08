"""Three planner and dashboard defects of an operator trial (session 45): an edited layout kept the launch's
multi-node flags, the planner said '—' beside the model where `plan` lists SGLang's multimodal reserve, and a
finding's wrapped line started at column 0 at 100 columns instead of under its text."""

from __future__ import annotations

import json

from kvtop.commands.node_source import DemoSource
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from kvtop.ui.planning import PlanOutcome
from kvtop.ui.widgets.findings import FindingItem, FindingsPane
from kvtop.ui.widgets.plan_result import outcome_table
from tests.conftest import CONFIGS
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.fakes import FakeSource
from tests.ui.helpers import open_planner, retype, shown

MIB = 1 << 20
H100 = 81559 * MIB  # nvidia-smi's total (tests/data/samples/nvidia_smi)
# examples/scenarios/llama70b-pp2-vllm-node0.json: node 0 of `vllm serve … --tensor-parallel-size 8
# --pipeline-parallel-size 2 --nnodes 2 --node-rank 0 --master-addr 10.0.2.10 --max-model-len 32768`, 8 GPUs a node
NODE_FLAGS = ("--nnodes", "--node-rank", "--master-addr")


async def test_an_edit_to_one_node_drops_the_launchs_multi_node_flags(make_app):
    node = DemoSource.open("llama70b-pp2-vllm-node0").collect_at(0)
    app = make_app(FakeSource(node, label="demo:llama70b-pp2-vllm-node0"))
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await open_planner(pilot)
        before = shown(screen, "#plan-flags").splitlines()[0]  # the per-node line under it says each node's own
        # the line every node's launch shares: the node count, not node 0's rank or the head's address
        assert before.endswith("--max-model-len 32768 --nnodes 2") and "--node-rank" not in before
        await retype(pilot, "#plan-pp", "4")  # TP8 PP4: 32 GPUs at 8 a node, 4 nodes
        assert shown(screen, "#plan-flags").splitlines()[0].endswith("--max-model-len 32768 --nnodes 4")
        await retype(pilot, "#plan-pp", "1")
        await retype(pilot, "#plan-tp", "1")  # TP1 PP1: one GPU, one node
        after = shown(screen, "#plan-flags")
        assert after == "engine flags: --max-model-len 32768"
        assert not any(flag in after for flag in NODE_FLAGS)


def test_sglangs_multimodal_reserve_is_beside_the_model_as_plan_lists_it():
    """SGLang ≥ 0.5.18 keeps `SGLANG_VLM_CACHE_SIZE_MB` (100 MiB by default) off a multimodal model's KV budget
    (mm_runtime_reservation_gb); `kvtop plan --model gemma-3-27b --enable-multimodal` lists it under Beside the
    model as 'multimodal reserve: encoder cache and feature pools  104.86 MB (0.10 GiB)  engine's reserve'. The
    planner's row said '—' (it summed only the terms held before the pool)."""
    gemma = model_from_config(json.loads((CONFIGS / "google--gemma-3-27b-it.json").read_text()), source="gemma")
    settings = parse_flags("sglang", ["--enable-multimodal"], strict=True)
    ledger = predict(gemma, settings, gpu_total_bytes=H100, gpu_name="H100")
    text = outcome_table(PlanOutcome(before=ledger, after=ledger, settings=settings), None).plain
    (beside,) = [line for line in text.splitlines() if line.startswith("beside the model")]
    assert beside.split("→")[1].strip() == "0.10 GiB"  # 100 MiB = 104,857,600 B ÷ 2^30 = 0.098 GiB
    assert "multimodal reserve: encoder cache and feature pools: 0.10 GiB, engine's reserve (assumed)" in text


async def test_a_findings_wrapped_lines_continue_under_their_text_at_100_columns(make_app, co_tenant_snapshot):
    """The co-tenant node's `co_tenant` finding: its evidence and its 'or:' line are wider than the pane at 100
    columns; each wrapped line starts under its line's text (2 cells in; 7 under 'or:  '), never at column 0."""
    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_snapshot(pilot)
        pane = app.screen.query_one(FindingsPane)
        await wait_for(pilot, lambda: len(pane.query(FindingItem)) == 2)
        await pilot.pause()
        item = pane.query(FindingItem).first()
        drawn = ["".join(s.text for s in item.render_line(y)).rstrip() for y in range(item.size.height)]
        assert len(drawn) > len(item.render().plain.splitlines())  # some lines wrapped at this width
        assert all(line.startswith("  ") for line in drawn[1:])  # nothing from column 0 but the head
        alternative = next(i for i, line in enumerate(drawn) if line.startswith("  or:  "))
        assert drawn[alternative + 1].startswith(" " * 7) and drawn[alternative + 1][7] != " "
