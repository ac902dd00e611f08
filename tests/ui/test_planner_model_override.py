"""The planner's model under SGLang's `--json-model-override-args`: SGLang merges the object into the Hugging Face
config before it sizes anything (`ModelConfig.__init__` → `get_config`, engines/sglang/model_override.py), so a launch
that carries it (live, or as edited) is planned with the overridden config, through the loader's `override` (the one
merge, `model_config.model_from_config`, that `kvtop plan` uses)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_model import launch_override
from kvtop.domain.ledger import Ledger
from kvtop.domain.observe import EngineInstance, GpuObservation
from kvtop.domain.predictor import EnginePredictor
from kvtop.sources.hub import load_model
from tests.conftest import DATA

CONFIG = DATA / "calibration" / "configs" / "deepseek-ai--DeepSeek-R1-Distill-Qwen-1.5B.RECONSTRUCTED.json"


def test_a_launch_s_override_makes_the_planner_s_model_the_overridden_one() -> None:
    stock = json.loads(CONFIG.read_text())["num_hidden_layers"]  # 28: the config as its file says
    settings = parse_flags("sglang", ["--tp-size", "1", "--json-model-override-args", '{"num_hidden_layers": 14}'],
                           strict=True).model_copy(update={"engine_version": "0.5.9"})  # fmt: skip
    override = launch_override(settings)
    assert override is not None and override.values == {"num_hidden_layers": 14}
    planned = load_model(str(CONFIG), override=override)
    assert (stock, planned.num_layers) == (28, 14)
    assert any("--json-model-override-args" in line for line in planned.read_from)  # said in the model's notes
    assert load_model(str(CONFIG), override=launch_override(parse_flags("sglang", ["--tp-size", "1"]))).num_layers == 28


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


def _sglang_engine(flags: list[str], model: str) -> EngineInstance:
    settings = parse_flags("sglang", ["--model-path", model, "--tp-size", "1", *flags],
                           strict=True).model_copy(update={"engine_version": "0.5.9"})  # fmt: skip
    return EngineInstance(engine_id="sglang:30000", kind="sglang", server_pid=30000, settings=settings,
                          host="127.0.0.1", port=30000)  # fmt: skip


def test_the_live_prediction_sizes_the_config_the_launch_overrode() -> None:
    """The live node's ledger (the dashboard's predicted figure and the planner's "before") is of the config SGLang
    sized: the launch's override merged in, as `kvtop plan` merges it (on the old code the live model was the file's)."""
    gpu = GpuObservation(index=0, name="NVIDIA H100 80GB HBM3", total_bytes=85_520_809_984)
    override = ["--json-model-override-args", '{"num_hidden_layers": 14}']
    overridden = EnginePredictor(load_model).ledger(_sglang_engine(override, str(CONFIG)), [gpu])
    stock = EnginePredictor(load_model).ledger(_sglang_engine([], str(CONFIG)), [gpu])
    assert isinstance(overridden, Ledger) and isinstance(stock, Ledger), (overridden, stock)
    assert (stock.model.num_layers, overridden.model.num_layers) == (28, 14)  # the file's 28, the flag's 14
    assert any("--json-model-override-args" in line for line in overridden.model.read_from)


def test_a_demo_s_engine_under_an_override_gets_a_reason_not_the_file_s_figure() -> None:
    """A loader that cannot merge the override (a demo scenario's models) says so by the flag's name, never a
    prediction of the un-overridden config."""
    from kvtop.sources.demo import DemoObservations
    from kvtop.sources.scenario import load_scenario

    source = DemoObservations(load_scenario("llama70b-tp4-lmdeploy"))
    gpu = GpuObservation(index=0, name="NVIDIA H100 80GB HBM3", total_bytes=85_520_809_984)
    override = ["--json-model-override-args", '{"num_hidden_layers": 2}']
    reason = EnginePredictor(source.load_model).ledger(_sglang_engine(override, "x"), [gpu])
    assert isinstance(reason, str) and "--json-model-override-args" in reason


def test_a_preset_takes_the_launch_s_override() -> None:
    """A preset is a Hugging Face config.json (examples/models): the override is merged into it as into a file."""
    preset = json.loads((Path(__file__).parents[2] / "examples" / "models" / "llama-3.1-8b.json").read_text())
    override = launch_override(parse_flags("sglang", ["--json-model-override-args", '{"num_hidden_layers": 3}']))
    assert override is not None
    model = load_model("llama-3.1-8b", override=override)
    assert (preset["num_hidden_layers"], load_model("llama-3.1-8b").num_layers, model.num_layers) == (32, 32, 3)
    assert any("--json-model-override-args" in line for line in model.read_from)


def test_an_edit_that_does_not_solve_keeps_the_overridden_model() -> None:
    """A field typed wrong leaves the edit unsolved (no settings): the planner keeps the model it holds, loaded with the
    launch's override, instead of reloading it without one (the plan then showed the file's config for a moment once
    the field was fixed, until the override's reload came back)."""
    from types import SimpleNamespace

    from kvtop.ui.screens.planner import PlannerScreen

    settings = parse_flags("sglang", ["--json-model-override-args", '{"num_hidden_layers": 14}'])
    held = launch_override(settings)
    loads: list[str] = []
    screen = SimpleNamespace(_model_override=held, _override_asked=held, _model_ref=str(CONFIG), _load=loads.append)
    PlannerScreen._follow_override(screen, None)  # type: ignore[arg-type]
    PlannerScreen._follow_override(screen, settings)  # the same override: nothing to reload
    assert loads == []
    PlannerScreen._follow_override(screen, parse_flags("sglang", ["--tp-size", "1"]))  # the flag taken off: reload
    assert loads == [str(CONFIG)]
