"""The demo's engines measure data, not kvtop's fits (examples/measured/starts.json).

Each figure of the table is checked against the corpus records it names (tests/data/calibration/*.jsonl, the
figures as the starts printed them) and the terms it moves to the demo engine's release (`sized`: vLLM's FlashInfer
fusion workspace, its bytes by hand from flashinfer's buffers); every shipped scenario's engines find their row; every
vLLM demo engine's runtime holds its own release's workspace; and a refit of every fitted constant moves kvtop's
prediction of a demo node but not what its engines measured."""

from __future__ import annotations

from decimal import Decimal
from importlib import import_module

import pytest

from benchmarks.calibration.corpus import load
from kvtop.commands.node_source import DemoSource
from kvtop.domain.calibration.estimate import calibrated_ledger, calibration_inputs
from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.start_overhead import start_overhead
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import ENGINE_IDS
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.fusion_workspace import fusion_workspace
from kvtop.domain.engines.vllm.profile_run import batch_limits
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.wording import GIB
from kvtop.sources.demo_starts import StartFigure, start_table
from kvtop.sources.scenario import load_scenario, scenario_names
from tests.corpus_records import RECORDS, logged_gib

MIB = 1 << 20
VLLM_STARTS = {record.id: record for record in load("vllm")}
TP4 = "llmd-v019-llama-3.3-70b-fp8dyn-tp4"


def _workspace_bytes(inputs: CalibrationInputs) -> int:
    found = fusion_workspace(inputs, batch_limits(inputs)[0])
    return found.bytes if found is not None else 0


def _sized_bytes(reference: str) -> int:
    """A `sized` term: FlashInfer's fusion workspace vLLM's code sizes for a record's start (`id:fusion_workspace`),
    or for the same start at another release (`id:fusion_workspace@version`)."""
    record_id, term = reference.split(":")
    term, _, version = term.partition("@")
    assert term == "fusion_workspace", reference  # the one term the table moves
    inputs = VLLM_STARTS[record_id].inputs()
    if version:
        inputs = inputs.model_copy(update={"version": ResolvedVersion(text=version)})
    return _workspace_bytes(inputs)


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
    for reference in figure.sized:
        sign, rest = reference[0], reference[1:]
        assert sign in "+-", reference
        total += (1 if sign == "+" else -1) * Decimal(_sized_bytes(rest)) / GIB
    assert Decimal(figure.gib) == total, name
    assert figure.bytes == round(total * GIB)


def test_the_sized_terms_are_flashinfer_s_buffers_by_hand() -> None:
    # v0.19.0 (flashinfer 0.6.8): the three buffers, each held at the 512 MiB multicast granularity (the record's own
    # non-torch, 2.21 GiB, holds them: v0.11.0's TP 2 non-torch was 0.55 GiB with no workspace)
    assert _sized_bytes(f"{TP4}:fusion_workspace") == 3 * 512 * MIB
    # v0.22.0-v0.24.x at the 2 MiB allocation granularity: 2 MiB ÷ (8,192 × 2 B) = 128 tokens at TP 4; one-shot
    # 4 × 128 × 8,192 × 2 B = 8 MiB (+ 2,048 B signal pad -> 10 MiB), flags 4 × 256 × 4 B (-> 2 MiB), Lamport
    # 3 × 8 MiB = 24 MiB (-> 26 MiB)
    assert _sized_bytes(f"{TP4}:fusion_workspace@0.24.0") == (10 + 2 + 26) * MIB
    # v0.33.0 picks mnnvl on one node (flashinfer_all_reduce.py:162-163): three Lamport copies of the two-shot buffer
    # 2 × ceil(128 ÷ 4) × 4 × 8,192 × 2 B = 4 MiB, 12 MiB + the pad, one McastGPUBuffer at the 512 MiB granularity
    assert _sized_bytes(f"{TP4}:fusion_workspace@0.33.0") == 512 * MIB


@pytest.mark.parametrize("name", scenario_names())
def test_every_vllm_engine_s_runtime_holds_its_own_release_s_workspace(name: str) -> None:
    """A vLLM row's non-KV figure takes from each record's non-torch the fusion workspace that start held and adds the
    one the demo engine's own launch holds (its release, layout and GPU), so the demo shows no gap of another
    release's workspace."""
    scenario = load_scenario(name)
    snapshot = DemoSource(scenario).collect_at(0)
    for engine in scenario.engines:
        settings = parse_launch_command(engine.command)
        if settings is None or settings.engine != "vllm":
            continue
        row = start_table().start("vllm", engine.model, scenario.gpu.model, tp=settings.tp, pp=settings.pp,
                                  dp=settings.dp)  # fmt: skip
        assert row is not None and row.non_kv is not None
        view = next(view for view in snapshot.engines if view.engine.server_pid == engine.server_pid)
        assert view.ledger is not None
        taken = {reference[1:] for reference in row.non_kv.sized if reference[0] == "-"}
        for reference in row.non_kv.of:
            record_id, field = reference[1:].split(":")
            if field == "non_torch" and _sized_bytes(f"{record_id}:fusion_workspace"):
                assert f"{record_id}:fusion_workspace" in taken, (name, reference)
        added = [reference[1:] for reference in row.non_kv.sized if reference[0] == "+"]
        assert all(reference.endswith(f"@{view.ledger.version.text}") for reference in added), name
        assert sum(_sized_bytes(reference) for reference in added) == _workspace_bytes(calibration_inputs(view.ledger))


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
    # llama.cpp's cache is its -c: no fit moves it. CUDA's total is measured on the demo's GPUs as on a live one (NVML
    # v2's total less its reserve, `gpu_total_origin.engine_visible_total`), so its fit moves no prediction: an engine with no
    # fit of its own (LMDeploy's FITS is empty: its context is assumed) is not moved by a refit either
    assert all(view.ledger is None or view.ledger.engine_total_source == "measured" for view in before.engines)
    if any(view.engine.kind != "llamacpp" and _fits_of(view.engine.kind) for view in before.engines):
        assert refitted != predicted, name


def _fits_of(engine: str) -> bool:
    return bool(getattr(import_module(f"kvtop.domain.engines.{engine}.calibration"), "FITS", None))


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
