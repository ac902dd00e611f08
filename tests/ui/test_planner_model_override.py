"""The planner's model under SGLang's `--json-model-override-args`: SGLang merges the object into the Hugging Face
config before it sizes anything (`ModelConfig.__init__` → `get_config`, engines/sglang/model_override.py), so a launch
that carries it (live, or as edited) is planned with the overridden config, through the loader's `override` (the one
merge, `model_config.model_from_config`, that `kvtop plan` uses)."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_model
from kvtop.ui.plan_model import launch_override, load_planned
from tests.conftest import DATA

CONFIG = DATA / "calibration" / "configs" / "deepseek-ai--DeepSeek-R1-Distill-Qwen-1.5B.RECONSTRUCTED.json"


def test_a_launch_s_override_makes_the_planner_s_model_the_overridden_one() -> None:
    stock = json.loads(CONFIG.read_text())["num_hidden_layers"]  # 28: the config as its file says
    settings = parse_flags("sglang", ["--tp-size", "1", "--json-model-override-args", '{"num_hidden_layers": 14}'],
                           strict=True).model_copy(update={"engine_version": "0.5.9"})  # fmt: skip
    override = launch_override(settings)
    assert override is not None and override.values == {"num_hidden_layers": 14}
    planned = load_planned(load_model, str(CONFIG), override)
    assert (stock, planned.num_layers) == (28, 14)
    assert any("--json-model-override-args" in line for line in planned.read_from)  # said in the model's notes
    assert load_planned(load_model, str(CONFIG), launch_override(parse_flags("sglang", ["--tp-size", "1"]))).num_layers == 28


def test_no_override_where_the_launch_gives_none_or_the_engine_reads_none() -> None:
    assert launch_override(None) is None
    assert launch_override(parse_flags("sglang", ["--json-model-override-args", "{}"])) is None  # SGLang's default
    assert launch_override(parse_flags("vllm", ["--tensor-parallel-size", "2"])) is None  # vLLM has no hook's flag
    assert launch_override(parse_flags("sglang", ["--json-model-override-args", "[1]"])) is None  # the check says why


def test_a_demo_scenario_s_model_refuses_an_override_by_name() -> None:
    from kvtop.sources.demo import DemoObservations
    from kvtop.sources.scenario import load_scenario

    source = DemoObservations(load_scenario("llama70b-tp4-lmdeploy"))
    override = launch_override(parse_flags("sglang", ["--json-model-override-args", '{"num_hidden_layers": 2}']))
    assert override is not None
    with pytest.raises(InputError) as raised:
        source.load_model("x", override=override)
    assert raised.value.field == "--json-model-override-args"
