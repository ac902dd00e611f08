"""One assembler for the live node and the demo (kvtop.commands.node_source): the demo only reports
what a node would (GPUs, processes, endpoints); predicting and joining is the live node's own path."""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource, NodeSource
from kvtop.domain.capacity import CapacitySource
from kvtop.domain.config_override import ConfigOverride
from kvtop.domain.model import ModelSpec
from kvtop.domain.observe import NodeObservation, NvmlState
from kvtop.sources.demo import DemoObservations
from kvtop.sources.scenario import load_scenario


class Replayed:
    """A node that reports one fixed observation, as the live node's observer would (label 'nvml')."""

    label = "nvml"
    notice: str | None = None

    def __init__(self, observation: NodeObservation, demo: DemoObservations) -> None:
        self._observation = observation
        self._demo = demo

    def observe(self) -> NodeObservation:
        return self._observation

    def load_model(self, ref: str, *, override: ConfigOverride | None = None) -> ModelSpec:
        """The `ModelLoader` port: the launch's config override (SGLang's --json-model-override-args) passed on."""
        return self._demo.load_model(ref, override=override)

    def close(self) -> None:
        pass


def test_a_demo_node_is_the_live_assembly_of_its_observations() -> None:
    """The demo's snapshot is what the live node's assembler makes of the very same observation: every
    figure (ledgers, waterfalls, the explained capacity) comes from the assembler, none from the demo."""
    scenario = load_scenario("llama70b-tp8-foreign-gpu3")
    demo = DemoSource(scenario)
    shown = demo.collect_at(7)
    observed = DemoObservations(scenario).observe_at(7)
    as_live = NodeSource(Replayed(observed.model_copy(update={"nvml_state": NvmlState.OK}), demo.demo)).collect()
    assert shown.source == "demo:llama70b-tp8-foreign-gpu3" and as_live.source == "nvml"
    assert shown.observation.nvml_state is NvmlState.DEMO  # a demo is never presented as a real node
    [engine], [live_engine] = shown.engines, as_live.engines
    assert engine.ledger == live_engine.ledger and engine.explained == live_engine.explained
    # the one difference: who states the engine's figure — the scenario on the demo, the endpoint on a real node
    assert {r.capacity.actual_source for r in engine.ranks if r.capacity} == {CapacitySource.SIMULATED}
    assert {r.capacity.actual_source for r in live_engine.ranks if r.capacity} == {CapacitySource.LIVE}
    as_stated = [
        r.model_copy(update={"capacity": r.capacity.model_copy(update={"actual_source": CapacitySource.LIVE})})
        if r.capacity else r for r in engine.ranks
    ]
    assert as_stated == list(live_engine.ranks)
    # GPU 3's co-tenant (the scenario's 6 GiB process, there before the engine) costs every SGLang rank tokens
    assert engine.explained is not None and engine.ledger is not None
    assert engine.explained.token_capacity < engine.ledger.token_capacity


def test_a_node_nvml_cannot_read_has_no_prediction_and_says_why() -> None:
    scenario = load_scenario("default")
    demo = DemoObservations(scenario)
    failed = demo.observe_at(0).model_copy(update={"nvml_state": NvmlState.NO_PERMISSION, "nvml_message": "NVML: no permission"})
    snapshot = NodeSource(Replayed(failed, demo)).collect()
    assert snapshot.notice == "NVML: no permission"
    assert all(view.ledger is None for view in snapshot.engines)
