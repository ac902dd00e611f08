"""Every registered engine through every seam (issue 29): a new engine that forgets one fails here, not a user.

Each test runs once per id in the domain registry and asks only what shared code asks of an engine: its rules
and flags, its eras, its log dialect (on a startup log of its own from tests/data/cases), its demo behaviour,
its identity, its cap fields, its planner fields, its metric names, its calibration, explain and diagnosis,
and its outside readers. Expected values come from the engine's own declarations checked against
LaunchSettings, its flags and its endpoint's code, or from a real log's lines.
"""

from __future__ import annotations

import inspect
import json
from importlib import import_module
from pathlib import Path

import pytest

from kvtop.domain.calibration.estimate import calibration_inputs
from kvtop.domain.engine_simulation import StartFigures
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.measured_reads import MEASURED_FLAGS
from kvtop.domain.engines.registry import ENGINE_IDS, display_name, engine_flags, engine_rules, log_dialects
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource, from_flag
from kvtop.domain.errors import KvtopError
from kvtop.domain.kv import KvStorage
from kvtop.domain.launch import FIELD_TYPES, LaunchSettings, parse_flags, spelling_of
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model_config import model_from_config
from kvtop.sources.engine_logs import read_engine_log
from kvtop.sources.engines.registry import complete_settings, endpoint_reader
from kvtop.ui.plan_errors import field_of_flag
from tests.conftest import CONFIGS

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "data" / "cases"
H100 = 81559 << 20
LLAMA8B = model_from_config(
    json.loads((CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json").read_text()), source="llama-3.1-8b"
)
SETTING_FIELDS = set(LaunchSettings.model_fields)
engines = pytest.mark.parametrize("engine", ENGINE_IDS)


def _ledger(engine: str) -> Ledger:
    return predict(LLAMA8B, parse_flags(engine, [], strict=True), gpu_total_bytes=H100, gpu_name="H100")


def _first_case_log(engine: str) -> Path:
    return sorted((CASES / engine).glob("*/engine.log"))[0]


def test_every_engine_package_is_registered_and_every_registered_engine_has_both_packages() -> None:
    """A package without its registry line, or a registry line without its packages, fails here."""
    domain = {p.parent.name for p in (ROOT / "kvtop/domain/engines").glob("*/__init__.py")}
    sources = {p.parent.name for p in (ROOT / "kvtop/sources/engines").glob("*/__init__.py")}
    assert domain == sources == set(ENGINE_IDS)


@engines
def test_its_sources_package_holds_only_what_touches_the_outside(engine: str) -> None:
    """Everything pure is the domain package's: each module here reads HTTP or a file (httpx, yaml, a GGUF
    through the gguf package)."""
    for module in (ROOT / "kvtop/sources/engines" / engine).glob("*.py"):
        if module.name != "__init__.py":
            text = module.read_text()
            assert any(reader in text for reader in ("import httpx", "import yaml", "from gguf import")), module.name


@engines
def test_rules_state_who_they_are_and_what_their_share_is(engine: str) -> None:
    rules = engine_rules(engine)
    assert rules.id == engine and rules.display_name == display_name(engine)
    assert isinstance(rules.kv_storage, KvStorage)
    assert rules.pp_remainder in ("first", "last", "second_to_last")
    if rules.memory_fraction_field is None:  # it takes no share of memory: its flag is the setting that sizes it
        assert engine_flags(engine).spellings[rules.memory_fraction_flag] in SETTING_FIELDS
        assert rules.memory_fraction_of.startswith("no share of memory")
        return
    assert rules.memory_fraction_field in SETTING_FIELDS and FIELD_TYPES[rules.memory_fraction_field] is float
    assert engine_flags(engine).spellings[rules.memory_fraction_flag] == rules.memory_fraction_field
    assert rules.memory_fraction_of


@engines
def test_flags_name_settings_and_round_trip(engine: str) -> None:
    flags = engine_flags(engine)
    assert set(flags.spellings.values()) <= SETTING_FIELDS
    assert flags.kv_cache_dtypes and "auto" in flags.kv_cache_dtypes
    # TP where the engine has it (llama.cpp has no TP ranks: its context instead)
    field, value = ("tp", 2) if "tp" in flags.spellings.values() else ("context_length", 4096)
    settings = parse_flags(engine, [spelling_of(engine, field), str(value)])
    again = parse_flags(engine, flags.to_flags(settings))
    assert (getattr(again, field), again.engine) == (value, engine)


@engines
def test_eras_resolve_every_release_of_its_calendar(engine: str) -> None:
    """Its calendar is in release order; every release typed on the command line resolves to itself, and
    the newest plans (an older one plans too, or says it is not modelled: a named state, never a crash)."""
    calendar = engine_rules(engine).calendar
    if not calendar:  # releases that are build numbers (llama.cpp): its eras by build; a plan names no release
        assert _ledger(engine).version.release is None
        return
    assert calendar and [r.day for r in calendar] == sorted(r.day for r in calendar)
    for release in calendar:
        resolved = from_flag(release.release, calendar)
        assert resolved.text == release.release and resolved.source is VersionSource.FLAG
    for release in (calendar[0], calendar[-1]):
        settings = parse_flags(engine, ["--engine-version", release.release], strict=True)
        try:
            ledger = predict(LLAMA8B, settings, gpu_total_bytes=H100, gpu_name="H100")
        except KvtopError as err:
            assert release is calendar[0] and "not modelled" in str(err)
            continue
        assert ledger.version.text == release.release


@engines
def test_its_dialect_reads_a_startup_log_of_its_own(engine: str) -> None:
    rules = engine_rules(engine)
    dialect = rules.log_dialect
    assert dialect.engine == engine and dialect in log_dialects()
    assert dialect.launch_words and dialect.rank_handlers
    log = read_engine_log(_first_case_log(engine))
    assert log.engine == engine
    assert log.records and log.lines_by_engine[engine] > 0
    assert log.lines_by_engine[engine] == max(log.lines_by_engine.values())
    assert isinstance(rules.resolve_version(log), ResolvedVersion)


@engines
def test_explain_reads_its_log(engine: str) -> None:
    rules = engine_rules(engine)
    log = read_engine_log(_first_case_log(engine))
    settings = parse_flags(engine, [])
    logged = rules.explainer.logged_figures(log, settings)
    assert logged is not None
    assert isinstance(rules.explainer.missing_facts(log), tuple)
    empty = log.model_copy(update={"records": ()})
    assert rules.explainer.missing_facts(empty)  # a log of nothing misses its headline facts
    assert rules.explainer.logged_token_capacity(empty) is None


@engines
def test_demo_behaviour_names_and_sizes_its_workers(engine: str) -> None:
    sim = engine_rules(engine).simulation
    ledger = _ledger(engine)
    pid, parent, title = sim.worker_identity(4000, ledger.settings, ledger.ranks[0], 0)
    assert pid > 0 and parent > 0 and isinstance(title, str)
    assert isinstance(sim.parent_title(ledger.settings, 0), str)
    start = StartFigures(cuda_total_bytes=H100 - (1 << 29))  # a clean start's CUDA total: 0.5 GiB the driver's
    measured = sim.measured_for_truth(total_bytes=H100, taken_before_load={0: 1 << 30}, extra_bytes={}, start=start)
    assert isinstance(measured, MeasuredInputs)
    # what it measured before its weights is what was free then: the total less the 1 GiB taken
    assert measured.free_before_load_bytes in (None, H100 - (1 << 30))
    assert measured.gpu_total_bytes in (None, H100 - (1 << 29))  # CUDA's total, where it reads one
    assert sim.worker_own_bytes(500 << 20, 0, {}) == 500 << 20  # nothing extra: its CUDA context alone
    assert sim.evictions_counter is None or sim.evictions_counter.endswith("_total")
    assert isinstance(sim.reports_memory_bytes, bool) and isinstance(sim.reports_capacity, bool)


def test_identities_are_distinct() -> None:
    prefixes = [engine_rules(engine).title_prefix.upper() for engine in ENGINE_IDS]
    assert len(set(prefixes)) == len(prefixes) and all(prefixes)


@engines
def test_identity_port_and_rank_order(engine: str) -> None:
    rules = engine_rules(engine)
    assert 0 < rules.default_port < 65536
    settings = parse_flags(engine, [spelling_of(engine, "tp"), "2"])
    rank = rules.rank_of_device(settings, 1)
    assert rank is None or rank.get("tp") == 1  # the second GPU a TP2 worker sees is TP rank 1
    assert not (rules.ranks_by_gpu_order and rank is not None)  # one way to rank an untitled worker


@engines
def test_cap_fields_are_settings_the_waterfall_lifts(engine: str) -> None:
    rules = engine_rules(engine)
    if not rules.cap_fields:  # nothing caps what its budget solves (llama.cpp: -c is the capacity): nothing lifted
        settings = parse_flags(engine, [spelling_of(engine, "context_length"), "4096"])
        assert rules.uncapped(settings) == settings
        return
    assert set(rules.cap_fields) <= SETTING_FIELDS
    capped = LaunchSettings(engine=engine).model_copy(update=dict.fromkeys(rules.cap_fields, 1000))
    assert all(getattr(rules.uncapped(capped), name) is None for name in rules.cap_fields)
    for name in rules.cap_fields:  # each is a flag of the engine's, so a launch can set it
        assert name in engine_flags(engine).spellings.values()


@engines
def test_each_measured_figure_it_leaves_unread_says_why_with_its_source(engine: str) -> None:
    """What a plan names as not read by its rule (`measured_reads`): a figure an operator's flag gives, each with
    the mechanism's section of the engine's doc."""
    for field, why in engine_rules(engine).measured_not_read.items():
        assert field in MEASURED_FLAGS and f"docs/engines/{engine}.md §" in why


@engines
def test_planner_fields_read_its_spellings(engine: str) -> None:
    rules = engine_rules(engine)
    share = "memory_fraction" if rules.memory_fraction_field is not None else None  # none: not the planner's share
    assert (field_of_flag(rules.memory_fraction_flag, engine) == "memory_fraction") is (share is not None)
    spelled = set(engine_flags(engine).spellings.values())  # llama.cpp has no TP and no page (a cell is a token)
    for field in ("tp", "page_size", "context_length", "max_running_requests", "kv_cache_dtype"):
        if field in spelled:
            assert field_of_flag(spelling_of(engine, field), engine) == field


@engines
def test_metric_names_are_those_its_endpoint_reads(engine: str) -> None:
    rules = engine_rules(engine)
    assert rules.usage_metrics
    endpoint = inspect.getsource(import_module(f"kvtop.sources.engines.{engine}.endpoint"))
    for name in (*rules.usage_metrics, *rules.capacity_metrics):
        assert name.partition(":")[2] in endpoint or name in endpoint


@engines
def test_calibration_estimates_its_context(engine: str) -> None:
    calibration = engine_rules(engine).calibration
    assert all(key.startswith(f"{engine}.") for key in (*calibration.FITS, *calibration.FIT_TERMS))
    assert calibration.INTERVAL_SCALE is None or calibration.INTERVAL_SCALE.engine == engine
    context = calibration.context(calibration_inputs(_ledger(engine)))
    # a TP1 start's CUDA context and buffers before the weights: above nothing, below 4 GiB on any engine
    assert 0 < context.bytes < 4 << 30 and context.source in ("calibrated", "assumed")


@engines
def test_diagnosis_prices_a_plan(engine: str) -> None:
    diagnosis = engine_rules(engine).diagnosis
    ledger = _ledger(engine)
    assert isinstance(diagnosis.spread_evidence(ledger, 1000, 8), str)
    assert diagnosis.fp8_kv_dtype(ledger)
    assert all(callable(getattr(rule, "check", None)) or callable(rule) for rule in diagnosis.ledger_rules)


@engines
def test_span_and_deployment_answer(engine: str) -> None:
    rules = engine_rules(engine)
    settings = parse_flags(engine, [])
    assert rules.span_rule.span(settings) is not None
    assert rules.deployment.setup(settings).features == ()  # a bare launch turns nothing on
    assert all(flag.startswith("-") for flag in rules.deployment.flags)  # llama.cpp's short `-md` too


@engines
def test_outside_readers(engine: str) -> None:
    assert callable(endpoint_reader(engine))
    settings = LaunchSettings(engine=engine)
    assert complete_settings(settings, None) == settings  # a launch naming no file is as it was
