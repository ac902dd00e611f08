"""Build each rank's capacity waterfall (`kvtop.domain.capacity`) from one engine's clean ledger and
what its GPUs and endpoints say.

Each term re-solves the engine's own rules on top of the last (`Replay`), so a cause costs what the
engine's allocation really loses to it — nothing where the engine budgets a share of the total
(vLLM), every rank's share where the least free GPU sizes every rank (SGLang). Bytes others hold
count only if they were there before the engine's workers started: a process that came later shrank
nothing (a restart would feel it: that is the restart finding's, not the waterfall's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kvtop.domain.capacity import CapacityCause, CapacitySource, CapacityTerm, CapacityWaterfall
from kvtop.domain.deployment import GPU_FEATURES, Charge, Feature
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.ledger import Ledger
from kvtop.domain.observe import GpuObservation, GpuProcess, ProcessRole
from kvtop.domain.whatif import Replay

#: Weights reported above the prediction by less than this share are the engine's rounding, not a cause.
WEIGHTS_EXCESS_FRACTION = 0.03
_OTHER_ENGINE_ROLES = (ProcessRole.ENGINE_WORKER, ProcessRole.ENGINE_SERVER)


@dataclass(frozen=True)
class RankActual:
    """What the engine says one rank holds: its tokens and where the figure comes from (None: nothing)."""

    gpu_index: int
    tokens: int | None
    source: CapacitySource


@dataclass(frozen=True)
class EngineCapacity:
    """One engine's waterfalls (by GPU) and its explained state: the clean ledger with every measured
    cause applied — the planner's before, and the basis every fix is priced on."""

    explained: Ledger
    waterfalls: Mapping[int, CapacityWaterfall]


def _held(process: GpuProcess, engine_id: str) -> CapacityCause | None:
    """Which cause a process on the engine's GPU is, if it is one."""
    if process.role is ProcessRole.CO_TENANT or (
        process.role in _OTHER_ENGINE_ROLES and process.engine_id != engine_id
    ):
        return CapacityCause.OTHER_PROCESSES
    if process.role is ProcessRole.UNATTRIBUTED:
        return CapacityCause.HIDDEN_PROCESSES
    if process.role is ProcessRole.ORPHAN:
        return CapacityCause.ORPHANED_WORKERS
    return None


def held_before_start(process: GpuProcess, started_at: float | None) -> bool:
    """Whether a process held its memory before the engine started (unknown times: assume it did)."""
    return started_at is None or process.start_time is None or process.start_time <= started_at


_OUTSIDE_ORDER = (
    CapacityCause.OTHER_PROCESSES,
    CapacityCause.HIDDEN_PROCESSES,
    CapacityCause.ORPHANED_WORKERS,
)


def engine_capacity(
    clean: Ledger,
    gpus: Sequence[GpuObservation],
    engine_id: str,
    actuals: Sequence[RankActual],
    *,
    started_at: float | None = None,
    reported_weights_bytes: int | None = None,
    reported_kv_pool_bytes: int | None = None,
) -> EngineCapacity:
    """The waterfall of every rank of one engine (see module docstring)."""
    rules = engine_rules(clean.settings.engine)
    uncapped_settings = rules.uncapped(clean.settings)  # without the settings that cap its capacity
    replay = Replay(clean)
    uncapped = replay.solve(uncapped_settings) or clean
    steps: list[
        tuple[CapacityCause, int, int, int | None, int | None]
    ] = []  # cause, tokens after, bytes, gpu, pid
    bare_tokens, steps = _deployment_steps(replay, uncapped)
    replay = Replay(uncapped)
    level = uncapped.token_capacity
    held_by_gpu: dict[int, int] = {}
    free_shift = 0
    for cause in _OUTSIDE_ORDER:
        holders = [
            (gpu.index, process)
            for gpu in gpus
            for process in gpu.processes
            if _held(process, engine_id) is cause and held_before_start(process, started_at)
        ]
        if not holders:
            continue
        for index, process in holders:
            held_by_gpu[index] = held_by_gpu.get(index, 0) + (process.used_bytes or 0)
        worst = max(held_by_gpu, key=lambda g: held_by_gpu[g])  # the least free GPU sizes every rank
        on_worst = [process for index, process in holders if index == worst]
        pid = max(on_worst, key=lambda p: p.used_bytes or 0).pid if on_worst else None
        level = replay.capacity(free_shift=-held_by_gpu[worst])
        steps.append((cause, level, held_by_gpu[worst] - free_shift, worst, pid))
        free_shift = held_by_gpu[worst]
    weights_shift = 0
    predicted_weights = uncapped.weights_bytes
    if reported_weights_bytes and reported_weights_bytes > predicted_weights * (1 + WEIGHTS_EXCESS_FRACTION):
        weights_shift = reported_weights_bytes - predicted_weights
        level = replay.capacity(free_shift=-free_shift, weights_shift=weights_shift)
        steps.append((CapacityCause.WEIGHTS, level, weights_shift, None, None))
    kv_memory = rules.diagnosis.reported_kv_memory(uncapped, reported_kv_pool_bytes)
    if kv_memory is not None:
        level = replay.capacity(
            free_shift=-free_shift, weights_shift=weights_shift, available_kv_bytes=kv_memory
        )
        steps.append(
            (CapacityCause.RUNTIME_RESERVE, level, uncapped.engine.kv_budget_bytes - kv_memory, None, None)
        )
    explained = (
        replay.solve(
            clean.settings, free_shift=-free_shift, weights_shift=weights_shift, available_kv_bytes=kv_memory
        )
        or clean
    )
    if explained.token_capacity != level:
        steps.append((CapacityCause.CAP, explained.token_capacity, 0, None, None))
    terms: list[CapacityTerm] = []
    previous = bare_tokens
    for cause, after, held, gpu_index, pid in steps:
        if after != previous:
            terms.append(
                CapacityTerm(cause=cause, tokens=after - previous, bytes=held, gpu_index=gpu_index, pid=pid)
            )
        previous = after
    waterfalls: dict[int, CapacityWaterfall] = {}
    for actual in actuals:
        tokens, source = actual.tokens, actual.source
        if tokens is None:
            tokens, source = explained.token_capacity, CapacitySource.PREDICTED
        rank_terms = list(terms)
        if tokens != explained.token_capacity:
            rest = tokens - explained.token_capacity
            rank_terms.append(
                CapacityTerm(
                    cause=CapacityCause.ENGINE_VS_PREDICTION, tokens=rest, bytes=-rest * explained.kv_bytes_per_token
                )
            )
        waterfalls[actual.gpu_index] = CapacityWaterfall(
            clean_tokens=bare_tokens,
            terms=tuple(rank_terms),
            actual_tokens=tokens,
            actual_source=source,
        )
    return EngineCapacity(explained=explained, waterfalls=waterfalls)


def _deployment_steps(
    replay: Replay, uncapped: Ledger
) -> tuple[int, list[tuple[CapacityCause, int, int, int | None, int | None]]]:
    """The clean tokens (the launch without its deployment features) and one step per feature, each
    re-solved with it added back in waterfall order; the last step ends on `uncapped`."""
    deployment = engine_rules(uncapped.settings.engine).deployment
    features = [f for f in GPU_FEATURES if f in uncapped.setup.features]
    if not features:
        return uncapped.token_capacity, []
    bare = uncapped.settings
    for feature in features:
        bare = deployment.without(bare, feature)
    solved = replay.solve(bare)
    clean = solved.token_capacity if solved else uncapped.token_capacity
    steps: list[tuple[CapacityCause, int, int, int | None, int | None]] = []
    for index, feature in enumerate(features):
        settings = uncapped.settings
        for later in features[index + 1 :]:
            settings = deployment.without(settings, later)
        ledger = uncapped if index == len(features) - 1 else replay.solve(settings)
        level = ledger.token_capacity if ledger else 0
        steps.append((CapacityCause(feature.value), level, _feature_bytes(uncapped, feature), None, None))
    return clean, steps


def _feature_bytes(ledger: Ledger, feature: Feature) -> int:
    """What a feature's modelled terms hold on the tightest rank (the KV it adds per cached token included)."""
    return sum(t.bytes for t in ledger.terms if t.feature is feature and t.modelled and t.charge is not Charge.HOST)
