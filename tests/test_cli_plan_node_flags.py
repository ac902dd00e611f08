"""The plan's engine-flags line over several nodes: it printed "Nodes: 2 nodes × 1 GPUs" but dropped SGLang's
`--nnodes 2`, so the line an operator copies launched another layout. The line now carries the flags every node's
launch shares (the node count), and a line under "Nodes:" says what each node adds (its rank, the head's address),
in the engine's own spelling, never inventing an address.

Each engine's flags are read back here by an argparse declared with the engine's own names and types (SGLang's
python/sglang/srt/server_args.py `--nnodes`/`--node-rank`/`--dist-init-addr`, int/int/str, defaults 1/0/None;
vLLM's vllm/engine/arg_utils.py ParallelConfig flags `--nnodes`/`--node-rank`/`--master-addr`/`--headless`,
`--data-parallel-size-local`): what the engine would parse from the copied line, not what kvtop wrote."""

from __future__ import annotations

import argparse
import json
import shlex

import pytest

from kvtop.cli import main
from kvtop.domain.launch import parse_flags
from kvtop.ui.plan_nodes import copied_lines, node_launch, on_its_nodes
from kvtop.ui.planning import engine_flag_list
from tests.conftest import DATA

# sglang.jsonl file52582238866…: SGLang 0.5.9, DeepSeek-R1-Distill-Qwen-1.5B over two L20 nodes, one GPU each; the
# report's command: `--tp-size 2 --ep-size 2 --nnodes 2 --node-rank <0|1> --dist-init-addr 7.6.16.150:28030`
CONFIG = str(DATA / "calibration" / "configs" / "deepseek-ai--DeepSeek-R1-Distill-Qwen-1.5B.RECONSTRUCTED.json")
BASE = ["plan", "--model", CONFIG, "--no-calibration-store"]


def plan_text(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    assert main([*BASE, *args]) == 0
    return capsys.readouterr().out.splitlines()


def flags_line(lines: list[str]) -> list[str]:
    return shlex.split(next(row for row in lines if row.startswith("engine flags: ")).removeprefix("engine flags: "))


def sglang_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nnodes", type=int, default=1)
    parser.add_argument("--node-rank", type=int, default=0)
    parser.add_argument("--dist-init-addr", "--nccl-init-addr", type=str, default=None)
    return parser


def vllm_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nnodes", "-n", type=int, default=1)
    parser.add_argument("--node-rank", "-r", type=int, default=0)
    parser.add_argument("--master-addr", type=str, default="127.0.0.1")
    parser.add_argument("--headless", action="store_true")
    parser.add_argument("--data-parallel-size-local", "-dpl", type=int, default=None)
    parser.add_argument("--data-parallel-start-rank", "-dpr", type=int, default=None)
    return parser


def test_the_l20_pair_s_line_carries_its_node_count_and_says_each_node_s_rank(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = plan_text(capsys, "--engine", "sglang", "--engine-version", "0.5.9", "--gpu", "L20", "--tp-size", "2",
                      "--nnodes", "2", "--node-rank", "0", "--dist-init-addr", "7.6.16.150:28030")  # fmt: skip
    assert lines[1].startswith("Nodes: 2 nodes × 1 GPU ")
    parsed, _ = sglang_parser().parse_known_args(flags_line(lines))
    assert (parsed.nnodes, parsed.node_rank, parsed.dist_init_addr) == (2, 0, None)  # the shared line: no node's own
    per_node = next(row for row in lines if "on node i of 2" in row)
    assert "--node-rank i --dist-init-addr 7.6.16.150:28030" in per_node  # the address as typed, the rank per node


def test_nodes_asked_of_kvtop_name_sglang_s_node_count_and_no_made_up_address(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = plan_text(capsys, "--engine", "sglang", "--engine-version", "0.5.9", "--gpu", "H100", "--tp-size", "4",
                      "--nodes", "2")  # fmt: skip
    assert sglang_parser().parse_known_args(flags_line(lines))[0].nnodes == 1  # the launch typed no --nnodes
    per_node = next(row for row in lines if "on node i of 2" in row)
    assert "--nnodes 2 --node-rank i --dist-init-addr HOST:PORT" in per_node


def test_vllm_s_line_is_every_node_s_and_node_1_s_own_flags_are_said_apart(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """vLLM's docs (serving/parallelism_scaling.md) launch node 1 with `--nnodes 2 --node-rank 1 --master-addr HEAD
    --headless`: the line copied to node 0 must not make it a headless rank 1."""
    lines = plan_text(capsys, "--engine", "vllm", "--engine-version", "0.11.2", "--gpu", "H100",
                      "--tensor-parallel-size", "2", "--pipeline-parallel-size", "2", "--nnodes", "2", "--node-rank",
                      "1", "--master-addr", "10.0.0.1", "--headless")  # fmt: skip
    parsed, _ = vllm_parser().parse_known_args(flags_line(lines))
    assert (parsed.nnodes, parsed.node_rank, parsed.headless, parsed.master_addr) == (2, 0, False, "127.0.0.1")
    per_node = next(row for row in lines if "on node i of 2" in row)
    assert "--node-rank i --master-addr 10.0.0.1" in per_node and "--headless on node ranks ≥ 1" in per_node


def test_vllm_data_parallel_over_nodes_keeps_its_local_count(capsys: pytest.CaptureFixture[str]) -> None:
    lines = plan_text(capsys, "--engine", "vllm", "--engine-version", "0.11.2", "--gpu", "H100",
                      "--data-parallel-size", "4", "--data-parallel-size-local", "2", "--data-parallel-start-rank",
                      "2", "--data-parallel-address", "10.0.0.1", "--headless")  # fmt: skip
    parsed, _ = vllm_parser().parse_known_args(flags_line(lines))
    assert (parsed.data_parallel_size_local, parsed.data_parallel_start_rank, parsed.headless) == (2, None, False)
    assert any("--data-parallel-start-rank i × 2 --data-parallel-address 10.0.0.1" in row for row in lines)


def test_trtllm_has_no_node_flag_and_says_its_mpi_world(capsys: pytest.CaptureFixture[str]) -> None:
    """trtllm-serve's options name no node count: one MPI world over the nodes (srun/mpirun, NVIDIA Dynamo's
    multinode examples), tp 4 over 2 nodes = 2 tasks a node."""
    lines = plan_text(capsys, "--engine", "trtllm", "--gpu", "H100", "--tp_size", "4", "--nodes", "2")
    assert flags_line(lines) == ["--tp_size", "4"]
    assert any("srun -N 2 --ntasks-per-node 2 trtllm-llmapi-launch trtllm-serve" in row for row in lines)


def test_the_json_says_the_same_per_node_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, "--engine", "sglang", "--gpu", "H100", "--tp-size", "4", "--nodes", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sglang_parser().parse_known_args(out["engine_flags"])[0].nnodes == 1
    assert "--nnodes 2 --node-rank i --dist-init-addr HOST:PORT" in out["per_node"]


def test_one_node_says_nothing_per_node(capsys: pytest.CaptureFixture[str]) -> None:
    lines = plan_text(capsys, "--engine", "sglang", "--gpu", "H100", "--tp-size", "2")
    assert not any("on node i" in row for row in lines)


def test_the_planner_says_each_node_s_flags_under_its_line() -> None:
    """The TUI planner's `c` copies the same line; the note under it is the span rule's, from the launch's flags."""
    settings = parse_flags("sglang", ["--tp-size", "2", "--nnodes", "2", "--node-rank", "1",
                                      "--dist-init-addr", "7.6.16.150:28030"], strict=True)  # fmt: skip
    assert sglang_parser().parse_known_args(settings.to_flags())[0].nnodes == 2
    launch = node_launch(settings)
    assert launch is not None and "--node-rank i --dist-init-addr 7.6.16.150:28030" in launch.said
    assert node_launch(parse_flags("sglang", ["--tp-size", "2"], strict=True)) is None


def test_vllm_before_0_11_1_spans_nodes_through_a_ray_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM's --nnodes/--node-rank/--master-addr came with PR #23691, first in v0.11.1; before it multi-node serving
    "requires Ray" (docs/serving/distributed_serving.md): `ray start --head`, `ray start --address=HEAD:6379`, the
    line run once on the head. v0.10.2's parser has no --nnodes: a line with it would not start."""
    lines = plan_text(capsys, "--engine", "vllm", "--engine-version", "0.10.2", "--gpu", "H100",
                      "--tensor-parallel-size", "4", "--nodes", "2")  # fmt: skip
    per_node = next(row for row in lines if "spans nodes only with Ray" in row)
    assert "ray start --head" in per_node and "ray start --address=HEAD:6379" in per_node
    assert "--node-rank" not in flags_line(lines) and not any("on node i of 2" in row for row in lines)
    newer = plan_text(capsys, "--engine", "vllm", "--engine-version", "0.11.1", "--gpu", "H100",
                      "--tensor-parallel-size", "4", "--nodes", "2")  # fmt: skip
    assert any("--nnodes 2 --node-rank i --master-addr HEAD" in row for row in newer)


def test_the_planner_grown_past_a_node_at_vllm_0_10_2_copies_one_line_without_nnodes() -> None:
    """The planner's edit of a TP8 vLLM 0.10.2 to TP16 over nodes of 8 GPUs: the same NodeLaunch (Ray), and the
    copied line as v0.10.2's parser takes it (no --nnodes, which it lacks: argparse would stop the start)."""
    base = parse_flags("vllm", ["--tensor-parallel-size", "8"], strict=True).model_copy(
        update={"engine_version": "0.10.2"})
    grown = on_its_nodes(base, base.model_copy(update={"tp": 16}), 8)
    launch = node_launch(grown)
    assert launch is not None and launch.nodes == 2 and "spans nodes only with Ray" in launch.said
    line = copied_lines(engine_flag_list(grown, with_model=False, launch=launch), launch)
    assert shlex.split(line) == ["--tensor-parallel-size", "16"]
    newer = on_its_nodes(base.model_copy(update={"engine_version": "0.11.1"}),
                         base.model_copy(update={"tp": 16, "engine_version": "0.11.1"}), 8)  # fmt: skip
    newer_launch = node_launch(newer)
    assert "--nnodes" in copied_lines(engine_flag_list(newer, with_model=False, launch=newer_launch), newer_launch)
