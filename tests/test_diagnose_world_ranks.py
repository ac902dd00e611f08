"""A loss on one GPU spreads over every rank of the engine's world, on every node (session 54's trial).

dsv3-tp16-sglang-node1 is node rank 1 of a TP 16 SGLang start over two nodes of 8 GPUs (examples/scenarios). SGLang
takes the least free GPU of its whole world before the weights load (`get_available_gpu_memory(distributed=True)`:
an all_reduce(MIN) over the world's CPU group; docs/engines/sglang.md §2 and "Memory across nodes"), so the co-tenant
on this node's GPU 3 costs all 16 ranks, the 8 on node 0 included. The finding said "on each of 8 ranks".
"""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource
from kvtop.domain.diagnose import diagnose


def _evidence(scenario: str) -> list[str]:
    findings = diagnose(DemoSource.open(scenario).collect_at(0))
    return [line for finding in findings for line in finding.evidence if "tokens on each of" in line]


def test_a_tp16_start_over_two_nodes_says_every_rank_of_its_world_takes_the_loss() -> None:
    (line,) = _evidence("dsv3-tp16-sglang-node1")
    assert "on each of 16 ranks (8 on this node); the reserve pre-load" in line
    assert "on each of 8 ranks" not in line


def test_a_start_on_one_node_names_its_ranks_alone() -> None:
    lines = _evidence("llama70b-tp8-foreign-gpu3")
    assert lines and all("on each of 8 ranks; the reserve pre-load" in line for line in lines)
