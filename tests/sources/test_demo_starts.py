"""The demo's engines measure data, not kvtop's fits (examples/measured/starts.json).

Each figure of the table is checked against the corpus records it names (tests/data/calibration/*.jsonl, the
figures as the starts printed them); every shipped scenario's engines find their row; and a refit of every fitted
constant moves kvtop's prediction of a demo node but not what its engines measured."""

from __future__ import annotations

from decimal import Decimal
from importlib import import_module

import pytest

from kvtop.commands.node_source import DemoSource
from kvtop.domain.calibration.estimate import calibrated_ledger, start_overhead
from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import ENGINE_IDS
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_launch_command
from kvtop.domain.node import NodeSnapshot
from kvtop.sources.demo_starts import StartFigure, start_table
from kvtop.sources.scenario import load_scenario, scenario_names
from tests.corpus_records import RECORDS, logged_gib

GIB = 1 << 30


def _figures() -> list[tuple[str, StartFigure]]:
    table = start_table()
    found = [(f"{row.gpu} cuda_total", row.cuda_total) for row in table.gpus]
    for row in table.starts:
        name = f"{row.engine} {row.model} {row.gpu} TP{row.tp} PP{row.pp} DP{row.dp}"
        found += [(f"{name} {key}", figure) for key in ("free_before_load", "context", "non_kv")
                  if (figure := getattr(row, key)) is not None]  # fmt: skip
    return found


@pytest.mark.parametrize(("name", "figure"), _figures(), ids=[name for name, _ in _figures()])
def test_every_figure_is_what_its_records_printed(name: str, figure: StartFigure) -> None:
    if figure.choice is not None:
        assert "own" in figure.choice  # said to be the scenario's own choice, and why
        return
    total = Decimal(0)
    for reference in figure.of:
        sign, rest = reference[0], reference[1:]
        assert sign in "+-", reference
        total += logged_gib(rest) if sign == "+" else -logged_gib(rest)
    assert Decimal(figure.gib) == total, name
    assert figure.bytes == round(total * GIB)


def test_the_record_behind_the_default_node_is_a_start_of_its_shape() -> None:
    # the default node (SGLang, TP 8, H100) measures what SGLang 0.5.2rc2 printed at TP 8 on an H100
    record = RECORDS["file45518106035-grok-2-fp8-h100-tp8"]
    assert (record["engine"], record["gpu"], record["tp"]) == ("sglang", "H100", 8)
    row = start_table().start("sglang", "llama-3-70b", "H100", tp=8, pp=1, dp=1)
    assert row is not None and row.free_before_load is not None
    assert row.free_before_load.bytes == round(Decimal("77.43") * GIB)


@pytest.mark.parametrize("name", scenario_names())
def test_every_shipped_engine_measures_a_row_of_the_table(name: str) -> None:
    scenario = load_scenario(name)
    table = start_table()
    assert table.cuda_total(scenario.gpu.model) is not None
    for engine in scenario.engines:
        settings = parse_launch_command(engine.command)
        assert settings is not None
        row = table.start(settings.engine, engine.model, scenario.gpu.model, tp=settings.tp, pp=settings.pp,
                          dp=settings.dp)  # fmt: skip
        assert row is not None, (name, engine.model)


def _measured(snapshot: NodeSnapshot) -> list[object]:
    """What the demo's engines and NVML report: each rank's capacity as its endpoint says it, each process's
    bytes, each GPU's reserve."""
    figures: list[object] = [
        rank.token_capacity for view in snapshot.engines for rank in view.engine.live.ranks
    ]
    for gpu in snapshot.observation.gpus:
        figures += [gpu.reserved_bytes, *(process.used_bytes for process in gpu.processes)]
    return figures


def _refit(monkeypatch: pytest.MonkeyPatch) -> int:
    """Every fitted constant moved, as a refit could move it: CUDA's totals by 0.25 GiB, every engine's terms by
    0.1 GiB (their first coefficient; not by the same figure, or SGLang's free memory, the total less the context,
    would not move)."""
    moved = 0
    fits = [(CUDA_TOTAL_FITS, 0.25)]
    for engine in ENGINE_IDS:
        module = import_module(f"kvtop.domain.engines.{engine}.calibration")
        fits += [(module.FITS, 0.1)] if hasattr(module, "FITS") else []
    for table, shift in fits:
        for key, term in list(table.items()):
            assert isinstance(term, LinearTerm)
            shifted = (term.coefficients[0] + shift, *term.coefficients[1:])
            monkeypatch.setitem(table, key, term.model_copy(update={"coefficients": shifted}))
            moved += 1
    return moved


@pytest.mark.parametrize("name", scenario_names())
def test_a_refit_moves_the_prediction_not_what_the_engines_measured(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = load_scenario(name)
    before = DemoSource(scenario).collect_at(0)
    assert _refit(monkeypatch) > 10
    after = DemoSource(scenario).collect_at(0)
    assert _measured(after) == _measured(before)
    predicted = [(view.ledger.token_capacity if view.ledger else None) for view in before.engines]
    refitted = [(view.ledger.token_capacity if view.ledger else None) for view in after.engines]
    # llama.cpp's cache is its -c: no fit moves it
    if any(view.engine.kind != "llamacpp" for view in before.engines):
        assert refitted != predicted, name


def test_a_shape_the_table_lacks_measures_the_context_the_prediction_expects() -> None:
    """A scenario's own engine of a shape the table holds no start for: its ranks hold what kvtop's clean
    prediction expects before their weights (the context fit); CUDA's total is still the GPU's row."""
    scenario = load_scenario("default")
    command = (
        "python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --tp 2 --port 30000"
    )
    engine = scenario.engines[0].model_copy(
        update={"model": "llama-3.1-8b", "command": command, "gpus": (0, 1)}
    )
    node = scenario.model_copy(
        update={"gpu": scenario.gpu.model_copy(update={"count": 2}), "engines": (engine,)}
    )
    assert start_table().start("sglang", "llama-3.1-8b", "H100", tp=2, pp=1, dp=1) is None
    view = DemoSource(node).collect_at(0).engines[0]
    assert view.ledger is not None
    # SGLang sizes from the free memory before load: H100's 79.19 GiB as vLLM 0.19 printed it, less the context
    free = (
        round(logged_gib("llmd-v019-llama-3.3-70b-fp8dyn-tp4:cuda_total") * GIB)
        - start_overhead(view.ledger).context_bytes
    )
    solved = calibrated_ledger(view.ledger.model, view.ledger.settings, gpu_total_bytes=gpu_total_bytes("H100"),
                               measured=MeasuredInputs(free_before_load_bytes=free))  # fmt: skip
    assert {rank.observed.token_capacity for rank in view.ranks} == {solved.token_capacity}
