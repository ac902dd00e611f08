"""How often a refresh of a node solves a ledger (`kvtop.domain.ledger.predict`): the clean prediction
once per engine while its launch and GPUs stay the same, and each what-if of its waterfall once per
distinct question, not again on the next tick when nothing it depends on moved."""

from __future__ import annotations

import sys
from typing import Any

import pytest

import kvtop.domain.ledger as ledger_module
from kvtop.commands.node_source import DemoSource
from kvtop.sources.scenario import load_scenario


def counted_predict(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Count every call of `predict`, whichever module bound it by name."""
    calls: list[str] = []
    real = ledger_module.predict

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(str(args[1].engine))
        return real(*args, **kwargs)

    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("kvtop") and getattr(module, "predict", None) is real:
            monkeypatch.setattr(module, "predict", counting)
    return calls


@pytest.mark.parametrize(
    ("scenario", "first", "engines"),
    [
        # the clean prediction is `calibrated_ledger`: one solve with the launch's estimates, one with them
        # calibrated (2 per engine); SGLang's waterfall then asks one question of its own, the co-tenant
        # GPU 3 held before the engine started (what every rank loses to it: free memory less 6 GiB)
        ("llama70b-tp8-foreign-gpu3", 2 + 1, 1),
        ("default", 2, 1),  # a healthy node: nothing to explain, no what-if
        ("llama70b-tp4-lmdeploy", 2 * 2 + 1, 2),  # two engines; the first shares its GPUs with a 4 GiB co-tenant
    ],
)
def test_one_refresh_predicts_each_engine_once_and_a_later_tick_not_again(
    monkeypatch: pytest.MonkeyPatch, scenario: str, first: int, engines: int
) -> None:
    source = DemoSource(load_scenario(scenario))  # the demo's own simulated solves happen here, not counted
    calls = counted_predict(monkeypatch)
    source.collect_at(0)
    assert len(calls) == first
    calls.clear()
    for tick in (1, 2, 3):  # usage and bytes move; launches, GPUs and who held memory first do not
        snapshot = source.collect_at(tick)
        assert len(snapshot.engines) == engines
    assert calls == []
