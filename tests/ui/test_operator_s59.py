"""An operator's pass over the planner (session 59): the speculative field says the method the engine's rule decides
at the edited release, and a layout over several nodes is planned and copied with each node's flags."""

from __future__ import annotations

import json
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
