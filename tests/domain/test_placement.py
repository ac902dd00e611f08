"""Ranks over nodes (`kvtop.domain.placement`), against the engines' own placement arithmetic written out
here by hand: SGLang's `_calculate_rank_ranges` (python/sglang/srt/entrypoints/engine.py) and vLLM's
`global_start_rank = local_world_size × node_rank` (vllm/v1/executor/multiproc_executor.py)."""

from __future__ import annotations

import pytest

from kvtop.domain.errors import LayoutError
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.placement import place
from kvtop.domain.span import ranks_per_node
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

H100 = 81559 << 20
LLAMA = str(CONFIGS / "meta-llama--Meta-Llama-3-70B.json")
DEEPSEEK = str(CONFIGS / "deepseek-ai--DeepSeek-V3.json")


def ledger(engine: str, model: str, *flags: str) -> Ledger:
    return predict(load_model(model), parse_flags(engine, list(flags)), gpu_total_bytes=H100, gpu_name="H100")


def sglang_ranges(tp: int, pp: int, nnodes: int, node_rank: int) -> tuple[range, range]:
    """SGLang's `_calculate_rank_ranges`, transcribed."""
    pp_size_per_node = max(pp // nnodes, 1)
    nnodes_per_pp_rank = max(nnodes // pp, 1)
    pp_range = range(pp_size_per_node * (node_rank // nnodes_per_pp_rank),
                     pp_size_per_node * (node_rank // nnodes_per_pp_rank + 1))  # fmt: skip
    tp_size_per_node = tp // nnodes_per_pp_rank
    tp_range = range(tp_size_per_node * (node_rank % nnodes_per_pp_rank),
                     tp_size_per_node * (node_rank % nnodes_per_pp_rank + 1))  # fmt: skip
    return pp_range, tp_range


@pytest.mark.parametrize(("tp", "pp", "nodes"), [(16, 1, 2), (8, 2, 2), (16, 2, 4), (4, 4, 2), (8, 4, 4)])
def test_sglang_nodes_hold_the_ranks_its_own_arithmetic_gives(tp: int, pp: int, nodes: int) -> None:
    solved = ledger("sglang", DEEPSEEK if tp * pp >= 16 else LLAMA, "--tp", str(tp), "--pp", str(pp))
    placement = place(solved, nodes)
    for node in placement.by_node:
        pp_range, tp_range = sglang_ranges(tp, pp, nodes, node.node)
        held = {(solved.ranks[i].pp_rank, solved.ranks[i].tp_rank) for i in node.ranks}
        assert held == {(p, t) for p in pp_range for t in tp_range}


def test_vllm_tp8_pp2_over_two_nodes_puts_one_stage_on_each() -> None:
    solved = ledger("vllm", LLAMA, "--tensor-parallel-size", "8", "--pipeline-parallel-size", "2")
    placement = place(solved, 2, 8)
    local_world_size = 16 // 2
    for node in placement.by_node:
        start = local_world_size * node.node  # global_start_rank
        assert node.ranks == tuple(range(start, start + local_world_size))
        assert {solved.ranks[i].pp_rank for i in node.ranks} == {node.node}
    assert [n.label for n in placement.by_node] == ["PP0 TP0–TP7", "PP1 TP0–TP7"]


def test_layouts_the_engines_cannot_lay_over_the_nodes_name_the_flag() -> None:
    solved = ledger("sglang", LLAMA, "--tp", "8")
    with pytest.raises(LayoutError) as three:
        place(solved, 3)
    assert three.value.field == "--nodes"
    with pytest.raises(LayoutError) as small:
        place(ledger("sglang", DEEPSEEK, "--tp", "16"), 2, 4)  # 8 ranks per node on 4-GPU nodes
    assert small.value.field == "--gpus-per-node"
    with pytest.raises(LayoutError) as stages:  # pp 3 over 2 nodes: neither divides the other
        place(ledger("sglang", LLAMA, "--tp", "2", "--pp", "3"), 2)
    assert "pp 3" in str(stages.value)
    with pytest.raises(LayoutError, match="not modelled"):
        place(ledger("lmdeploy", LLAMA, "--tp", "8"), 2)


def test_dp_replicas_fill_their_own_nodes() -> None:
    solved = ledger("sglang", LLAMA, "--tp", "8", "--dp", "4")
    placement = place(solved, 4, 8)
    assert [n.label for n in placement.by_node] == [f"DP{d} TP0–TP7" for d in range(4)]


def test_nodes_per_replica_divide_among_independent_replicas() -> None:
    """DP 4 × TP 8 without DP attention: four engines of 8 GPUs; on 8 nodes each spans 8 // 4 = 2, on 4 nodes
    one each, on 2 nodes two replicas share a node (still one). With DP attention the replicas are one engine."""
    layout = ParallelLayout(tp=8, dp=4)
    assert [layout.nodes_per_replica(n) for n in (8, 4, 2)] == [2, 1, 1]
    assert ParallelLayout(tp=8, dp=4, dp_attention=True).nodes_per_replica(4) == 4


def test_an_edit_counts_the_nodes_of_its_gpus() -> None:
    """A launch of TP 8 × PP 2 over 2 nodes holds 16 ÷ 2 = 8 GPUs a node; an edit to TP 8 × PP 3 (24 GPUs) needs
    24 ÷ 8 = 3 nodes, TP 4 × PP 2 (8 GPUs) one, TP 6 × PP 2 (12 GPUs) two (the second node half full). A node count
    the GPUs do not split evenly over is the engines' one refusal (every engine gives each node the same number of
    ranks), whoever asks: the placement, the engines' span checks, the planner (`_on_its_nodes` then leaves the
    edit's `--nnodes`)."""
    per_node = ranks_per_node(ParallelLayout(tp=8, pp=2), 2)
    assert per_node == 8
    edits = (ParallelLayout(tp=8, pp=3), ParallelLayout(tp=4, pp=2), ParallelLayout(tp=6, pp=2))
    assert [layout.nodes_needed(per_node) for layout in edits] == [3, 1, 2]
    assert ParallelLayout(tp=2).nodes_needed(1) == 2
    with pytest.raises(LayoutError, match="runs 2 GPUs, which do not split evenly over 4 nodes"):
        ranks_per_node(ParallelLayout(tp=2), 4)
