"""An operator's pass over the planner (session 59): the speculative field says the method the engine's rule decides
at the edited release, and a layout over several nodes is planned and copied with each node's flags."""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

from kvtop.commands.node_source import DemoSource
from kvtop.domain.engines.registry import engine_rules
from tests.conftest import CONFIGS
from tests.ui.fakes import FakeSource
from tests.ui.helpers import open_planner, retype, shown


def _spec_node(tmp_path: Path) -> FakeSource:
    """Two H100s under vLLM 0.28.0 with a draft launched without a method, named '/…/draft' (its name says no
    method): its config's class MuseGlimmerAssistantModel is what vLLM's detection reads (config/speculative.py
    SpeculativeConfig.__post_init__ 'Automatically detect the method', v0.28.0 :934-957: dflash; v0.27.1 has no such
    test: draft_model). The draft is Mistral-7B's config with that class and one layer."""
    config = json.loads((CONFIGS / "mistralai--Mistral-7B-v0.1.json").read_text())
    draft = tmp_path / "draft"
    draft.mkdir()
    (draft / "config.json").write_text(json.dumps({**config, "architectures": ["MuseGlimmerAssistantModel"],
                                                   "num_hidden_layers": 1}))  # fmt: skip
    spec = json.dumps({"model": str(draft), "num_speculative_tokens": 3})
    engine = {"model": str(CONFIGS / "mistralai--Mistral-7B-v0.1.json"), "server_pid": 5000, "version": "0.28.0",
              "command": f"vllm serve mistralai/Mistral-7B-v0.1 --tensor-parallel-size 2 --speculative-config '{spec}'"}
    scenario = {"description": "vLLM with a draft", "seed": 1, "engines": [engine],
                "gpu": {"model": "H100", "count": 2, "name": "NVIDIA H100 80GB HBM3"}}  # fmt: skip
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(scenario))
    return FakeSource(DemoSource.open(str(path)).collect_at(0), label="demo:spec")


async def test_the_speculative_field_follows_the_rule_at_the_edited_release(make_app, tmp_path):
    """The field said 'dflash' (0.28.0's decision) after the version was edited to 0.27.1, and the edit wrote
    method dflash into the launch and dropped its draft: `--speculative-config '{"method": "dflash",
    "num_speculative_tokens": 3}'`, a launch vLLM refuses (dflash needs a draft model)."""
    app = make_app(_spec_node(tmp_path))
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await open_planner(pilot)
        field = screen.query_one("#plan-spec_method")
        assert field.value == "dflash"  # 0.28.0: decided from the draft's config class
        await retype(pilot, "#plan-engine_version", "0.27.1")
        assert field.value == "draft_model"
        after = screen.outcome.after
        assert engine_rules("vllm").deployment.setup(after.settings).spec_method == "draft_model"
        flags = shown(screen, "#plan-flags")
        assert '"method": "draft_model"' in flags and '/draft"' in flags  # what 0.27.1 decides, its draft kept
        await retype(pilot, "#plan-engine_version", "0.28.0")
        assert field.value == "dflash"
        await retype(pilot, "#plan-spec_method", "eagle3")  # typed: the operator's method, written as typed
        await retype(pilot, "#plan-engine_version", "0.27.1")
        assert field.value == "eagle3" and '"method": "eagle3"' in shown(screen, "#plan-flags")


def _vllm_node_flags(line: str) -> tuple[int, int, str, bool]:
    """A copied line as vLLM parses it (vllm/engine/arg_utils.py: `--nnodes`/`--node-rank` int, `--master-addr` str,
    default 127.0.0.1, `--headless` a switch): (nnodes, node_rank, master_addr, headless)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--nnodes", "-n", type=int, default=1)
    parser.add_argument("--node-rank", "-r", type=int, default=0)
    parser.add_argument("--master-addr", type=str, default="127.0.0.1")
    parser.add_argument("--headless", action="store_true")
    parsed, _ = parser.parse_known_args(shlex.split(line))
    return parsed.nnodes, parsed.node_rank, parsed.master_addr, parsed.headless


async def test_a_live_engine_over_two_nodes_is_copyable_one_line_per_node(make_app):
    """examples/scenarios/llama70b-pp2-vllm-node0.json: node 0 of `vllm serve … --tensor-parallel-size 8
    --pipeline-parallel-size 2 --nnodes 2 --node-rank 0 --master-addr 10.0.2.10`, 8 GPUs a node. The planner said
    '✗ needs 16 GPUs, the node has 8: not copyable' of the very launch that runs (its size check ignored the other
    node). Each node now holds its 8 ranks; `c` copies each node's whole line (vLLM's docs,
    serving/parallelism_scaling.md: node 1 adds `--node-rank 1 --master-addr HEAD --headless`)."""
    node = DemoSource.open("llama70b-pp2-vllm-node0").collect_at(0)
    app = make_app(FakeSource(node, label="demo:llama70b-pp2-vllm-node0"))
    copied: list[str] = []
    app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await open_planner(pilot)
        assert shown(screen, "#plan-error").startswith("✓ valid over 2 nodes")
        assert "not copyable" not in shown(screen, "#plan-flags")
        await pilot.click("#plan-copy")
        await pilot.pause()
        (text,) = copied
        first, second = text.splitlines()
        assert _vllm_node_flags(first) == (2, 0, "10.0.2.10", False)
        assert _vllm_node_flags(second) == (2, 1, "10.0.2.10", True)
        assert first.startswith("--tensor-parallel-size 8 --pipeline-parallel-size 2")


async def test_an_edit_past_one_node_names_its_node_count_and_each_node_s_flags(make_app, healthy_snapshot):
    """The demo node's SGLang (TP8 on 8 H100s) edited to TP16: 16 ranks over nodes of 8 GPUs are 2 nodes. The edit
    wrote no `--nnodes` and said 'not copyable'; SGLang takes `--nnodes 2 --node-rank i --dist-init-addr HOST:PORT` on
    each node (python/sglang/srt/server_args.py; docs.sglang.io multi_node.html), the address node rank 0's: the
    placeholder the operator fills."""
    app = make_app(healthy_snapshot)
    copied: list[str] = []
    app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await open_planner(pilot)
        await retype(pilot, "#plan-tp", "16")
        assert shown(screen, "#plan-error").startswith("✓ valid over 2 nodes")
        await pilot.click("#plan-copy")
        await pilot.pause()
        parser = argparse.ArgumentParser()
        parser.add_argument("--tp-size", "--tp", type=int, default=1)
        parser.add_argument("--nnodes", type=int, default=1)
        parser.add_argument("--node-rank", type=int, default=0)
        parser.add_argument("--dist-init-addr", "--nccl-init-addr", type=str, default=None)
        lines = [parser.parse_known_args(shlex.split(line))[0] for line in copied[0].splitlines()]
        assert [(p.tp_size, p.nnodes, p.node_rank, p.dist_init_addr) for p in lines] == [
            (16, 2, 0, "HOST:PORT"), (16, 2, 1, "HOST:PORT")]
        await retype(pilot, "#plan-tp", "8")  # back on one node: no node flag
        assert "nnodes" not in shown(screen, "#plan-flags")
