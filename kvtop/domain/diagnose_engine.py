"""One engine as the node's findings see it (`EngineOnNode`): its ranks by GPU, what else each GPU holds,
what a restart would find free, the waterfall's term of a cause, and how a finding of it is labelled.

The rules that read it are `diagnose.py`'s, `diagnose_pressure.py`'s and `keep_running.py`'s, and each engine
package's `diagnosis` module (`EngineNodeDiagnosis`, typed here beside the value it takes, so the engines'
protocols below never name it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol, cast

from kvtop.domain.calibration.start_overhead import start_overhead
from kvtop.domain.capacity import CapacityCause, CapacityTerm
from kvtop.domain.diagnose_findings import Finding, Thresholds, beside_engine_figure
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.catalogue import engine_module
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.node import EngineView, NodeSnapshot
from kvtop.domain.observe import GpuObservation, ProcessRole
from kvtop.domain.whatif import Replay


class EngineNodeDiagnosis(Protocol):
    """What an engine's `diagnosis` module prices on a live node, beside its rules over a plan alone
    (`kvtop.domain.engines.protocols.EngineDiagnosis`): its reserve and a restart, by its own rules."""

    def reserve_finding(self, engine: EngineOnNode, thresholds: Thresholds) -> Finding | None: ...

    def restart_finding(self, engine: EngineOnNode) -> Finding | None: ...


@dataclass(frozen=True)
class Cost:
    """What a cause costs each rank now (tokens), what its fix gains, and the waterfall term it is."""

    tokens: int
    gain_tokens: int
    cause: CapacityCause | None
    term_tokens: int | None

    def fields(self) -> dict[str, object]:
        return {
            "tokens": self.tokens,
            "gain_tokens": self.gain_tokens,
            "cause": self.cause,
            "term_tokens": self.term_tokens,
        }


NO_COST = Cost(tokens=0, gain_tokens=0, cause=None, term_tokens=None)


class EngineOnNode:
    """One engine as the node rules see it: its ranks by GPU, what else each GPU holds, the planner,
    and its own rules (`kvtop.domain.engines.<engine>`), which price causes and spell fixes."""

    def __init__(self, snapshot: NodeSnapshot, view: EngineView) -> None:
        self.view, self.id, self.ledger = view, view.engine.engine_id, view.ledger
        self.rules = engine_rules(view.engine.kind)
        self.replay = Replay(view.ledger) if view.ledger else None
        self.settings = view.engine.settings or (view.ledger.settings if view.ledger else None)
        self.ranks = {rank.gpu_index: rank for rank in view.ranks}
        starts = [p.start_time for _, p in snapshot.observation.engine_processes(self.id) if p.start_time]
        self.started_at = min(starts) if starts else None  # when the engine's first process started
        self.gpus: dict[int, GpuObservation] = {
            g: gpu for g in self.ranks if (gpu := snapshot.observation.gpu(g))
        }
        self.clean: dict[int, int] = {}  # free at a restart if nothing but this engine were on the GPU
        for g, gpu in self.gpus.items():
            self.clean[g] = self._clean_free(gpu)

    def _clean_free(self, gpu: GpuObservation) -> int:
        """Free before load at a restart with no other process on `gpu`.

        Where the engine's budget reads that figure (`sizes_every_rank_from_least_free`: SGLang, LMDeploy,
        TensorRT-LLM) it is the ledger's own pre-load free (the one its waterfall's "clean", the explained ledger
        and every advice are solved on: measured where the engine logged it, else CUDA's calibrated total less the
        context), less what NVML counts used beyond the driver's reserve, this rank's worker and other engines' and
        tenants' processes (the engine's own extra processes, memory no process lists). NVML's
        reserve is not CUDA's: free + processes − context put a restart 2,083,060 B (41 tokens) above the same
        launch's explained pool on the demo H100 (NVML reserved 491,194,941 B against the calibrated 493,278,001 B),
        two figures for one restart as launched. Elsewhere (vLLM's start check) NVML's free stays the fact."""
        ledger = self.view.ledger
        total = ledger.gpu_total_bytes if ledger else 0
        if ledger is not None and self.replay is not None and self.rules.sizes_every_rank_from_least_free:
            if gpu.free_bytes is None or gpu.total_bytes is None:
                return self.replay.free_before_load_bytes
            reserve = gpu.reserved_bytes if gpu.reserved_bytes is not None else start_overhead(ledger).driver_bytes
            mine = self.ranks[gpu.index].observed.process_bytes or 0
            held = gpu.total_bytes - gpu.free_bytes - reserve - mine - self.outside(gpu.index)
            return self.replay.free_before_load_bytes - max(0, held)
        # what a restart takes before its weights (the calibrated estimate: the driver's share and the
        # engine's CUDA context and NCCL by TP and GPU); NVML's free memory, where read, stays measured
        overhead = start_overhead(ledger) if ledger else None
        driver = overhead.driver_bytes if overhead else 0  # no ledger: no restart is priced (no replay)
        context = overhead.context_bytes if overhead else MeasuredInputs().context_before_load(total)
        if gpu.free_bytes is None:
            return (gpu.total_bytes or total) - driver - context
        mine = self.ranks[gpu.index].observed.process_bytes or 0
        return gpu.free_bytes + mine + self.outside(gpu.index) - context

    @property
    def node_diagnosis(self) -> EngineNodeDiagnosis:
        """The engine's `diagnosis` module, as the live-node rules ask it (by the engine's id)."""
        return cast("EngineNodeDiagnosis", engine_module(self.view.engine.kind, "diagnosis"))

    def outside(self, g: int, roles: tuple[ProcessRole, ...] | None = None) -> int:
        """Bytes on GPU g held by processes not of this engine (of `roles`, when given)."""
        gpu = self.gpus.get(g)
        procs = gpu.processes if gpu else ()
        return sum(p.used_bytes or 0 for p in procs if p.engine_id != self.id and (roles is None or p.role in roles))  # fmt: skip

    def now(self) -> dict[int, int]:
        """Free at a restart with the GPUs as they are (the engine's own workers gone)."""
        return {g: free - self.outside(g) for g, free in self.clean.items()}

    def label(self, g: int) -> str:
        rank, s = self.ranks[g].rank, self.settings
        parts = ([f"dp{rank.dp}"] if s and s.dp > 1 else []) + ([f"pp{rank.pp}"] if s and s.pp > 1 else [])
        return f"{self.id}/" + "/".join([*parts, f"tp{rank.tp}"])

    def labels(self, gpus: Iterable[int] | None = None) -> tuple[str, ...]:
        return tuple(self.label(g) for g in sorted(self.ranks if gpus is None else gpus) if g in self.ranks)

    def relabel(self, finding: Finding) -> Finding:
        """A ledger-only finding placed on this engine's real GPUs and ranks; a capacity change it prices on the plan
        says beside it the figure the engine stated (live, or its startup log's), read from the rank's waterfall."""
        update = {
            "engine_id": self.id,
            "gpus": tuple(sorted(self.ranks)) or finding.gpus,
            "ranks": self.labels() or finding.ranks,
        }
        waterfall = next((r.capacity for r in self.view.ranks if r.capacity is not None), None)
        placed = finding.model_copy(update=update)
        if waterfall is None:
            return placed
        return beside_engine_figure(placed, waterfall.actual_tokens, waterfall.actual_source)

    def restart_words(self, *, costs_now: bool) -> str:
        """What a fix that frees memory must add: the KV pool is sized at start, so a running engine wins
        nothing back until it restarts (and a process that costs nothing yet must go before it does)."""
        return f", then restart {self.id}" if costs_now else f", before {self.id} restarts"

    def finding(self, **fields: object) -> Finding:
        """A finding of this engine (every rank unless `ranks` says otherwise)."""
        return Finding.model_validate({"engine_id": self.id, "gpus": tuple(sorted(self.ranks)), "ranks": self.labels(), **fields})  # fmt: skip

    # --- the planner at a restart -------------------------------------------------------------

    def restart_capacity(self, free: Mapping[int, int]) -> int:
        """Tokens per rank a restart gets with `free` bytes free on each GPU, by the engine's own rule."""
        if self.replay is None or not free:
            return 0
        return self.rules.diagnosis.restart_capacity(self.replay, free)

    def price(self, freed: Mapping[int, int]) -> tuple[int, int]:
        """(tokens the cause costs on its own, tokens freeing it gains now) for `freed` bytes per GPU."""
        clean, now = self.clean, self.now()
        alone = {g: free - freed.get(g, 0) for g, free in clean.items()}
        without = {g: free + freed.get(g, 0) for g, free in now.items()}
        cost = self.restart_capacity(clean) - self.restart_capacity(alone)
        return max(0, cost), max(0, self.restart_capacity(without) - self.restart_capacity(now))

    def spread_evidence(self, tokens: int) -> str:
        if self.ledger is None:
            return f"no prediction for {self.id}: {self.view.ledger_error}"
        return self.rules.diagnosis.spread_evidence(self.ledger, tokens, self.ranks_words())

    def ranks_words(self) -> str:
        """'8 ranks', or '16 ranks (8 on this node)' where the engine's world (TP × PP) spans nodes: an engine that
        sizes every rank by the least free GPU of its world takes the loss on the ranks of the other nodes too."""
        here = len(self.ranks)
        world = max(here, self.settings.tp * self.settings.pp) if self.settings else here
        return f"{world} ranks" if world == here else f"{world} ranks ({here} on this node)"

    # --- rules ---------------------------------------------------------------------------------

    def term(self, cause: CapacityCause, gpu: int | None = None) -> CapacityTerm | None:
        """The waterfall's term of `cause` (on `gpu`, when given): every rank shares the engine's terms."""
        waterfall = next((r.capacity for r in self.view.ranks if r.capacity is not None), None)
        found = waterfall.term(cause) if waterfall else None
        return found if found is not None and (gpu is None or found.gpu_index == gpu) else None

    def costed(self, cause: CapacityCause, gpu: int | None, freed: Mapping[int, int]) -> Cost:
        """A finding's cost: the waterfall's term where the cause is one (its tokens, as a cost; the fix
        gains them back), else nothing now and what freeing the bytes gains at a restart."""
        term = self.term(cause, gpu)
        if term is not None:
            return Cost(tokens=-term.tokens, gain_tokens=-term.tokens, cause=cause, term_tokens=term.tokens)
        return Cost(tokens=0, gain_tokens=self.price(freed)[1], cause=cause, term_tokens=None)

    def waterfall_evidence(self) -> str | None:
        """'tokens per rank: clean 1,255,785 → other processes −128,660 (GPU 3, pid 4242) → 1,127,125 live'."""
        waterfall = next((r.capacity for r in self.view.ranks if r.capacity is not None), None)
        return None if waterfall is None else "tokens per rank: " + waterfall.describe()
