"""An engine startup log's token capacity, given to the running engine it belongs to.

`--engine-log PATH` (snapshot, diagnose, export, the TUI): where an engine's endpoints report no token
capacity, the one its own startup log printed is used, once the log is shown to be of that engine (its
kind, its model path, the KV pools its model gives).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from kvtop.domain.capacity import CapacitySource
from kvtop.domain.capacity_assumption import CapacityAssumption, assumption_words
from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.registry import EngineId, engine_rules
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import KvtopError
from kvtop.domain.ledger import Ledger
from kvtop.domain.observe import EngineInstance, NodeObservation, NvmlState


def logged_token_capacity(log: EngineLog, ledger: Ledger | str | None = None) -> int | None:
    """The token capacity a startup log states (by its engine's own lines), or None: read as `kvtop explain` reads
    it (the engine's `logged_figures`) with the settings of the engine's `ledger` and the block its rules give
    them (a V0 vLLM log states blocks); with no ledger, from the log alone (`logged_token_capacity`)."""
    return _reading(log, ledger)[0]


def _reading(log: EngineLog, ledger: Ledger | str | None) -> tuple[int | None, CapacityAssumption | None]:
    """(the capacity the log states, the assumption that reading rests on — `Logged.capacity_assumption`, the
    field explain prints: TensorRT-LLM's primary-pool blocks × a release's default tokens per block)."""
    if log.engine is None:
        return None, None
    explainer = engine_rules(log.engine).explainer
    if not isinstance(ledger, Ledger) or ledger.settings.engine != log.engine:
        return explainer.logged_token_capacity(log), None
    # the ledger's release and how it was found (the log's own, where the node took it from the log)
    launched, version = ledger.settings, ledger.version
    if launched.page_size is not None:
        logged = explainer.logged_figures(log, launched, version)
        return logged.token_capacity, logged.capacity_assumption
    tokens = explainer.logged_figures(log, launched.model_copy(update={"page_size": ledger.engine.page_size}), version)
    # the block the rules give is itself the release's default: whether reading by it is an assumption, the
    # launch as given says (no block set)
    as_launched = explainer.logged_figures(log, launched, version)
    same = as_launched.token_capacity == tokens.token_capacity
    return tokens.token_capacity, as_launched.capacity_assumption if same else None


def log_candidates(node: NodeObservation, log: EngineLog) -> list[EngineInstance]:
    """The running engines a startup log may be of: those of its kind, narrowed by its model path when several
    are (one: the engine the log is offered to)."""
    candidates = [engine for engine in node.engines if engine.kind == log.engine]
    if len(candidates) > 1 and log.model_path:
        by_model = [e for e in candidates if e.model and Path(e.model).name == Path(log.model_path).name]
        candidates = by_model or candidates
    return candidates


def log_offered_to(node: NodeObservation, log: EngineLog) -> EngineInstance | None:
    """The one engine the log may be attached to, by what needs no ledger (`with_logged_capacity`'s checks before its
    pool sizes): the only candidate, the log a startup log, the engine reporting no token capacity of its own. None:
    the log is not attached whatever the engine's ledger says, so its release is offered to no engine."""
    candidates = log_candidates(node, log)
    if len(candidates) != 1 or log.no_startup_lines is not None or candidates[0].live.token_capacity is not None:
        return None
    return candidates[0]


def _owner(engine: EngineId, release: ResolvedVersion | None) -> str:
    """Whose log it is, in words: 'vLLM 0.4.1's' (its engine and `release`, the one the log states as its engine's
    `resolve_version` read it; '~0.5.3' where only its dates imply one), 'vLLM's' where it states none."""
    name = engine_rules(engine).display_name
    if release is None or (release.text is None and release.build is None):  # 'latest' is no release it states
        return f"{name}'s"
    return f"{name} {release.label}'s"


def with_logged_capacity(
    node: NodeObservation,
    log: EngineLog,
    ledgers: Mapping[str, Ledger | str],
    release: ResolvedVersion | None,
) -> tuple[NodeObservation, str | None]:
    """Give the log's token capacity to the engine it belongs to when its endpoints report none.

    The engine is the only one of the log's kind (narrowed by the log's model path when several
    are), and the KV pools the log printed must be what that engine's model gives (its predicted
    `ledgers`): a log of another model is not attached. Returns the node and a notice when the log
    matched no engine, several, or another model, or is not used (the engine reports its own capacity);
    `release` is the one the log states (read once by the caller), named where the log is not used.
    """
    candidates = log_candidates(node, log)
    ledger = ledgers.get(candidates[0].engine_id) if len(candidates) == 1 else None
    if not candidates and log.engine is not None:  # said first: "matches 0 running vllm engines" read oddly
        name = engine_rules(log.engine).display_name
        return node, (
            f"the engine log {log.source} is {_owner(log.engine, release)}, and no {name} engine runs on this node: "
            "not attached"
        )
    if log.no_startup_lines is not None:  # a binary or foreign file: in explain's words
        return node, f"the engine log {log.source} has {log.no_startup_lines}: not attached"
    capacity, assumption = _reading(log, ledger)
    if capacity is None:
        return node, f"the engine log {log.source} states no token capacity"
    if len(candidates) != 1 and log.engine is not None:  # a capacity read: the log's engine is known
        return (
            node,
            f"the engine log {log.source} matches {len(candidates)} running {engine_rules(log.engine).display_name} "
            f"engines ({', '.join(e.engine_id for e in candidates)}) and its model path does not tell them apart: "
            f"not attached (read it alone: kvtop explain {log.source} --engine {log.engine})",
        )
    target = candidates[0]
    if target.live.token_capacity is not None:  # its endpoint's figure is the live one: the log is not needed
        # who states it, by the one rule every view reads (`CapacitySource.of_reading`): a demo node's figure is its
        # scenario's, a figure an earlier log gave is that log's, never an engine's report
        stated_by = CapacitySource.of_reading(target.live.token_capacity_logged, node.nvml_state is NvmlState.DEMO)
        held = f"{target.engine_id} reports its own token capacity"
        if stated_by is not CapacitySource.LIVE:
            held = f"{stated_by.stated} {target.engine_id}'s token capacity"
        return node, (
            f"the engine log {log.source} ({_owner(target.kind, release)}) is not used: {held} "
            f"({target.live.token_capacity:,})"
        )
    if isinstance(ledger, Ledger):
        try:
            checks = engine_rules(ledger.settings.engine).explainer.pool_size_checks(
                log, ledger.model, ledger.settings, ledger.load_mtp
            )
        except KvtopError as error:  # the geometry cannot be rebuilt for these settings: not checked
            return node, f"the engine log {log.source} could not be checked against {target.engine_id} ({error}): not attached"
        differ = [check.name for check in checks if not check.within_rounding]
        if differ:  # 'a KV block size', 'a KV K/V size', 'a KV size' (a whole pool's check: not 'a KV KV')
            what = "/".join(differ) if differ[0].whole_pool else f"KV {'/'.join(differ)}"
            return node, (
                f"the engine log {log.source} printed a {what} size that {ledger.model.name} "
                f"does not give ({target.engine_id}): a log of another model or layout, not attached"
            )
    read = f"token capacity from the engine log {log.source}" + (
        f" ({assumption_words(assumption)})" if assumption else ""
    )
    live = target.live.model_copy(update={
        "token_capacity": capacity, "token_capacity_logged": True, "notes": (*target.live.notes, read),
    })  # fmt: skip
    engines = tuple(e.model_copy(update={"live": live}) if e is target else e for e in node.engines)
    # attached; an assumed reading is said where explain says it (an estimate is never a fact)
    return node.model_copy(update={"engines": engines}), (f"{target.engine_id}: {read}" if assumption else None)
